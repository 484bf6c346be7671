"""The circuit breaker: a model whose chats keep exhausting their retries is refused for a while."""

from __future__ import annotations

import logging
from typing import Callable

from toolmend._log import loggable
from toolmend.errors import CircuitOpenError

logger = logging.getLogger("toolmend")


class CircuitBreaker:
    """Per model: closed lets every chat through; open refuses them until the cool-down ends; then half-open
    lets one trial chat through, whose outcome closes or reopens the circuit. Chats on one event loop use it
    in turn (no lock needed)."""

    def __init__(self, threshold: int, reset_s: float, clock: Callable[[], float]) -> None:
        self.threshold = threshold
        self.reset_s = reset_s
        self._clock = clock
        self._exhausted_in_a_row: dict[str, int] = {}
        self._open_until: dict[str, float] = {}
        # Half-open: when the trial chat started (a trial that ends some other way goes stale after the cool-down).
        self._trial: dict[str, float] = {}

    def admit(self, model: str, correlation_id: str) -> None:
        """Lets a chat through, or raises CircuitOpenError."""
        now = self._clock()
        until = self._open_until.get(model)
        if until is None:
            return
        trial_running = now - self._trial.get(model, -1e18) < self.reset_s
        if now < until or trial_running:
            wait = max(0.0, until - now)
            logger.warning(
                "circuit open for model %s (correlation: %s): %.1fs left", loggable(model), correlation_id, wait,
                extra={"correlation_id": correlation_id, "attempt": 0, "lane": None, "code": None, "model": model},
            )
            raise CircuitOpenError(
                f"circuit open for model {model!r} after {self.threshold} exhausted chats in a row; "
                + (f"it lets a trial chat through in {wait:.1f}s" if now < until else "a trial chat is running"),
                attempts=(),
                last_error="circuit open",
                correlation_id=correlation_id,
            )
        self._trial[model] = now  # half-open: this chat is the trial

    def succeeded(self, model: str) -> None:
        """A chat succeeded: the circuit closes."""
        self._exhausted_in_a_row[model] = 0
        self._open_until.pop(model, None)
        self._trial.pop(model, None)

    def exhausted(self, model: str, correlation_id: str | None = None) -> None:
        """A chat exhausted its retries: the circuit opens after ``threshold`` in a row, or when the trial failed."""
        count = self._exhausted_in_a_row.get(model, 0) + 1
        self._exhausted_in_a_row[model] = count
        if count >= self.threshold or model in self._trial:
            self._trial.pop(model, None)
            self._open_until[model] = self._clock() + self.reset_s
            self._exhausted_in_a_row[model] = 0
            logger.warning(
                "circuit opened for model %s after %d exhausted chats", loggable(model), count,
                extra={"correlation_id": correlation_id, "attempt": None, "lane": None, "code": None, "model": model},
            )
