"""What a chat tells the outside while it runs: the caller's hooks, and OpenTelemetry spans and metrics.

Hooks (``on_attempt``, ``on_retry``, ``on_give_up``) may be plain functions or coroutine functions; a hook that
raises is logged and the chat goes on as if it had not been there.

OpenTelemetry is used only when ``opentelemetry-api`` is installed, and imported only when a client is made (a
program that never makes one pays nothing). Names follow the GenAI semantic conventions (``gen_ai.*``); what is
toolmend's own is under ``toolmend.*``. Argument values, prompts and replies are never recorded: only names,
counts, codes and times.
"""

from __future__ import annotations

import inspect
import logging
import time
from typing import Any, Awaitable, Callable, Union

from toolmend._states import Lane
from toolmend.client.ledger import Attempt

logger = logging.getLogger("toolmend")

#: A hook: a function or a coroutine function taking the Attempt (``on_give_up``: the Attempt and the error).
Hook = Callable[..., Union[None, Awaitable[None]]]

SCOPE = "toolmend"


class Observers:
    """The hooks and the telemetry of one client."""

    def __init__(
        self, provider: str, on_attempt: Hook | None, on_retry: Hook | None, on_give_up: Hook | None,
        tracer_provider: Any = None, meter_provider: Any = None,
    ) -> None:
        self.provider = provider
        self.on_attempt = on_attempt
        self.on_retry = on_retry
        self.on_give_up = on_give_up
        self.hooked = on_attempt is not None or on_retry is not None or on_give_up is not None
        self.telemetry = Telemetry.make(provider, tracer_provider, meter_provider)

    async def call(self, hook: Hook | None, attempt: Attempt | None, *more: Any) -> None:
        """Runs one hook; an exception in it is logged (with the chat's fields) and goes no further."""
        if hook is None or attempt is None:
            return
        try:
            result = hook(attempt, *more)
            if inspect.isawaitable(result):
                await result
        except Exception:  # a hook must never break the chat it watches
            name = getattr(hook, "__qualname__", None) or type(hook).__name__
            logger.exception(
                "hook %s raised (correlation: %s); the chat goes on", name, attempt.correlation_id,
                extra={"correlation_id": attempt.correlation_id, "attempt": attempt.number, "lane": attempt.lane,
                       "code": attempt.error_code, "error_code": attempt.error_code, "model": attempt.model},
            )


class Telemetry:
    """Spans and instruments over the opentelemetry API (whatever provider the program set up)."""

    def __init__(self, provider: str, trace: Any, metrics: Any, tracer_provider: Any = None, meter_provider: Any = None) -> None:
        from toolmend import __version__

        self.provider = provider
        self._trace = trace
        # None: the providers the program set globally (looked up on use, so one set later still counts).
        self.tracer = trace.get_tracer(SCOPE, __version__, tracer_provider)
        meter = metrics.get_meter(SCOPE, __version__, meter_provider)
        self.duration = meter.create_histogram(
            "gen_ai.client.operation.duration", unit="s", description="GenAI operation duration (a whole chat, retries included)"
        )
        self.tokens = meter.create_histogram(
            "gen_ai.client.token.usage", unit="{token}", description="Tokens used by a chat, all attempts"
        )
        self.attempts = meter.create_counter(
            "toolmend.client.attempts", unit="{attempt}", description="Requests sent, by the lane their outcome took"
        )

    @classmethod
    def make(cls, provider: str, tracer_provider: Any = None, meter_provider: Any = None) -> Telemetry | None:
        """Telemetry over opentelemetry-api, or None when it is not installed."""
        try:
            from opentelemetry import metrics, trace
        except ImportError:
            return None
        return cls(provider, trace, metrics, tracer_provider, meter_provider)

    def chat_started(self, model: str, correlation_id: str, stream: bool) -> Any:
        span = self.tracer.start_span(
            f"chat {model}",
            kind=self._trace.SpanKind.CLIENT,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.system": self.provider,
                "gen_ai.request.model": model,
                "toolmend.correlation_id": correlation_id,
                "toolmend.stream": stream,
            },
        )
        return span

    def attempt(self, chat_span: Any, model: str, attempt: Attempt) -> None:
        """A span for an attempt that has ended (started ``duration_s`` ago), a child of the chat's span."""
        lane = str(attempt.lane)
        self.attempts.add(1, {"gen_ai.system": self.provider, "gen_ai.request.model": model, "toolmend.lane": lane})
        if not chat_span.is_recording():  # no tracer provider set up (or this trace not sampled)
            return
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.system": self.provider,
            "gen_ai.request.model": model,
            "toolmend.correlation_id": attempt.correlation_id,
            "toolmend.attempt": attempt.number,
            "toolmend.lane": lane,
            "gen_ai.usage.input_tokens": attempt.usage.prompt_tokens,
            "gen_ai.usage.output_tokens": attempt.usage.completion_tokens,
        }
        if attempt.status is not None:
            attributes["http.response.status_code"] = attempt.status
        if attempt.error_code:
            attributes["toolmend.code"] = attempt.error_code
        if attempt.delay_s:
            attributes["toolmend.backoff_s"] = attempt.delay_s
        end = time.time_ns()
        context = self._trace.set_span_in_context(chat_span)
        span = self.tracer.start_span(
            f"attempt {attempt.number}", context=context, kind=self._trace.SpanKind.CLIENT,
            attributes=attributes, start_time=end - int(attempt.duration_s * 1e9),
        )
        if attempt.lane not in (Lane.OK, Lane.SALVAGED):
            span.set_attribute("error.type", attempt.error_code or lane)
        span.end(end_time=end)

    def chat_ended(
        self, span: Any, model: str, seconds: float, usage: Any, attempts: int,
        finish_reason: str | None = None, error: BaseException | None = None,
    ) -> None:
        if span.is_recording():
            self._close(span, usage, attempts, finish_reason, error)
        common = {"gen_ai.operation.name": "chat", "gen_ai.system": self.provider, "gen_ai.request.model": model}
        if error is not None:
            common["error.type"] = type(error).__name__
        self.duration.record(seconds, common)
        if usage.prompt_tokens:
            self.tokens.record(usage.prompt_tokens, {**common, "gen_ai.token.type": "input"})
        if usage.completion_tokens:
            self.tokens.record(usage.completion_tokens, {**common, "gen_ai.token.type": "output"})

    def _close(self, span: Any, usage: Any, attempts: int, finish_reason: str | None, error: BaseException | None) -> None:
        span.set_attribute("gen_ai.usage.input_tokens", usage.prompt_tokens)
        span.set_attribute("gen_ai.usage.output_tokens", usage.completion_tokens)
        span.set_attribute("toolmend.attempts", attempts)
        if finish_reason:
            span.set_attribute("gen_ai.response.finish_reasons", [finish_reason])
        if error is not None:
            kind = type(error).__name__
            code = getattr(error, "code", None)
            span.set_attribute("error.type", kind)
            if code:
                span.set_attribute("toolmend.code", str(code))
            span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, kind))
        span.end()
