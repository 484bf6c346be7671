"""How the engine settles an attempt that did not bring calls to check: its lane, the wait before the next
try, the error that ends the chat, and the ledger entry of every attempt."""

from __future__ import annotations

import logging
import time
from typing import Any, Callable, Mapping

from toolmend import _call_log
from toolmend._log import loggable
from toolmend._states import Code, Lane, Verdict
from toolmend.client import lanes
from toolmend.client.breaker import CircuitBreaker
from toolmend.client.exchange import Reply, body_text, not_a_reply
from toolmend.client.history import Form, well_formed
from toolmend.client.ledger import Attempt, AuditLog, Stats
from toolmend.client.observe import Observers
from toolmend.client.reflection import rejected_request_message
from toolmend.client.turn import Turn, merge
from toolmend._core import ToolCall
from toolmend.client.events import ChatResult
from toolmend.config import RetryConfig
from toolmend.errors import CircuitOpenError, MidStreamError, ModelHTTPError, RetryExhaustedError, TokenBudgetError, ToolmendError

logger = logging.getLogger("toolmend")


class Outcomes:
    """How the engine settles attempts: their lanes, the ledger, the chat's result or error. Holds what it
    shares with the engine (config, stats, audit file, breaker, observers) and the backoff, which only it uses."""

    def __init__(
        self,
        config: RetryConfig,
        provider: Form,
        limits: Mapping[str, Any],
        registry: Any,
        stats: Stats,
        audit: AuditLog | None,
        backoff: lanes.Backoff,
        breaker: CircuitBreaker,
        observers: Observers,
        result_message: Callable[[str, list[ToolCall], str], dict[str, Any]],
    ) -> None:
        self.config = config
        self.provider = provider
        self.limits = limits  # the repair limits, for the history made well-formed again after a rejection
        self.registry = registry  # its metrics (when it keeps them) count the calls checked
        self.stats = stats
        self.audit = audit
        self.backoff = backoff
        self.breaker = breaker
        self.observers = observers
        self.result_message = result_message  # the provider's assistant message of a result

    def lane(self, turn: Turn, reply: Reply) -> Lane | Verdict:
        """TRANSPORT, REJECTED, MODEL or REPLY; raises what ends the chat at once (a fatal status, a reply that
        is not one, one over the size cap or in an encoding not decoded, a stream that failed after its events
        were handed out)."""
        if reply.unreadable is not None:
            self.note(turn, lanes.FATAL, reply, reply.unreadable.code)
            raise reply.unreadable.error()
        lane = lanes.classify(reply.status, reply.failure, reply.error_text)
        if lane == lanes.TRANSPORT:
            if turn.shown:  # events are never replayed: what came is what the caller has
                self.note(turn, lanes.TRANSPORT, reply)
                why = reply.failure or f"HTTP {reply.status}"
                raise MidStreamError(
                    f"the stream failed after events were delivered: {why}",
                    attempts=tuple(turn.attempts),
                    last_error=why,
                    correlation_id=turn.correlation_id,
                    response=turn.text(reply.assembly.text),
                    usage=turn.usage,
                    received=tuple(merge(turn.kept, reply.assembly.calls)),
                )
            return lane
        refusal = not_a_reply(reply)
        if refusal is not None:
            self.note(turn, lanes.FATAL, reply, refusal.code)
            self.log(logging.WARNING, turn, "reply refused (correlation: %s): %s", turn.correlation_id,
                      loggable(refusal.message), lane=lanes.FATAL, code=refusal.code)
            raise refusal
        if lane == lanes.FATAL:
            self.note(turn, lanes.FATAL, reply)
            message = reply.error_text or body_text(reply.body)
            self.log(logging.WARNING, turn, "request refused (correlation: %s): HTTP %s %s", turn.correlation_id,
                      reply.status, loggable(message), lane=lanes.FATAL)
            raise ModelHTTPError(message, status=reply.status, body=body_text(reply.body))
        return lane

    def retry(self, turn: Turn, reply: Reply, lane: Lane | Verdict) -> float:
        """The wait before the attempt after a transport failure or a 400 refusing a malformed tool call;
        ModelHTTPError when that lane's budget (``model_http_retries``) is spent."""
        if lane == lanes.TRANSPORT:
            turn.transport_failures += 1
            why = reply.failure or f"HTTP {reply.status}: {reply.error_text or ''}".strip()
            try:
                delay = self.backoff.delay(
                    turn.transport_failures, why, reply.status, reply.headers, body_text(reply.body), turn.deadline
                )
            except ModelHTTPError:
                self.note(turn, lanes.TRANSPORT, reply)
                raise
            self.note(turn, lanes.TRANSPORT, reply, delay=delay)
            self.log(
                logging.INFO, turn, "Retry attempt %d/%d for %s (correlation: %s): transport, %s, waiting %.3fs",
                turn.transport_failures, self.config.model_http_retries, loggable(turn.model), turn.correlation_id,
                loggable(why), delay, lane=lanes.TRANSPORT,
            )
            return delay
        # The request's history held a tool call the server could not read: every call that is not strict
        # JSON is replayed as text from now on, and the model is asked to reformulate.
        turn.rejections += 1
        error_text = reply.error_text or ""
        if turn.rejections > self.config.model_http_retries:
            self.note(turn, lanes.FATAL, reply)
            raise ModelHTTPError(
                f"{error_text} (the request still held a tool call the server could not read after "
                f"{turn.rejections - 1} reformulations)",
                status=reply.status,
                body=body_text(reply.body),
            )
        delay = min(self.backoff.jitter(turn.rejections), max(0.0, turn.deadline - time.monotonic()))
        turn.messages = well_formed(turn.messages, self.provider, repair=False, limits=self.limits)
        turn.messages.append(rejected_request_message(error_text))
        self.note(turn, lanes.MODEL, reply, Code.UNPARSEABLE, delay)
        self.log(
            logging.INFO, turn, "Retry attempt %d/%d for %s (correlation: %s): model, the server refused a tool call "
            "in the request (%s), waiting %.3fs", turn.rejections, self.config.model_http_retries, loggable(turn.model),
            turn.correlation_id, loggable(error_text), delay, lane=lanes.MODEL, code=Code.UNPARSEABLE,
        )
        return delay

    def note(self, turn: Turn, lane: Lane, reply: Reply, code: str | None = None, delay: float = 0.0) -> None:
        """Adds an attempt to the chat's ledger, the client's stats and the audit file."""
        attempt = Attempt(
            len(turn.attempts) + 1, lane, reply.status, code, delay, reply.usage, reply.duration_s, turn.correlation_id, turn.model
        )
        turn.attempts.append(attempt)
        self.stats.attempt(turn.model, attempt)
        if turn.span is not None:
            self.observers.telemetry.attempt(turn.span, turn.model, attempt)
        if self.audit is not None:
            self.audit.write(
                {
                    "ts": time.time(),
                    "correlation_id": turn.correlation_id,
                    "model": turn.model,
                    "attempt": attempt.number,
                    "lane": attempt.lane,
                    "status": attempt.status,
                    "code": attempt.error_code,
                    "delay_ms": round(attempt.delay_s * 1000, 3),
                    "duration_ms": round(attempt.duration_s * 1000, 3),
                    "prompt_tokens": attempt.usage.prompt_tokens,
                    "completion_tokens": attempt.usage.completion_tokens,
                    # Kinds and counts of the repairs on this attempt's calls that passed (never values).
                    "repairs": _repair_kinds(reply.assembly.calls),
                    # Each call's name, id and repairs, each failure's name, id, code and position: the safe
                    # metadata the seed logs at INFO, for `toolmend debug tool-call` (never argument values).
                    "calls": [
                        {"tool_name": c.name, "tool_call_id": c.id, "repairs": [r.kind for r in c.repairs]}
                        for c in reply.assembly.calls[:_call_log.MAX_RECORDS]
                    ],
                    "failed": [
                        {"tool_name": e.tool_name, "tool_call_id": getattr(e, "id", None) or reply.assembly.ids.get(e.index),
                         "code": e.code, "position": e.position}
                        for e in reply.assembly.errors[:_call_log.MAX_RECORDS]
                    ],
                }
            )

    async def announce(self, turn: Turn, retry: bool = False) -> None:
        """Runs ``on_attempt`` for the attempts the hooks have not seen, then ``on_retry`` for the last one when
        another attempt follows."""
        observers = self.observers
        new = turn.attempts[turn.announced :]
        turn.announced = len(turn.attempts)
        for attempt in new:
            await observers.call(observers.on_attempt, attempt)
        if retry and new:
            await observers.call(observers.on_retry, new[-1])

    def count_validations(self, turn: Turn, calls: list[ToolCall], failures: list[Any]) -> None:
        """The registry's metrics and failure records (when it keeps them) learn of the calls checked here."""
        metrics = getattr(self.registry, "metrics", None)
        if metrics is None or not (metrics.enabled or metrics.level is not None):
            return
        for call in calls:
            metrics.count(call.name, (), None)
        for failure in failures:
            if failure.code.startswith("TSR"):  # a schema's verdict (not a call that could not be read)
                errors = getattr(failure, "validation", None) or [failure]
                metrics.count(failure.tool_name or "?", errors, None, turn.correlation_id)

    def reflection_delay(self, turn: Turn) -> float:
        """Seconds to wait before the next reflection: ``retry_delay_ms`` doubled for each reflection made
        (100, 200, 400 ms by default; 0 waits not at all), at most ``backoff_cap_ms`` and never past the deadline."""
        cfg = self.config
        if not cfg.retry_delay_ms:
            return 0.0
        ms = min(cfg.retry_delay_ms * 2**turn.reflections, cfg.backoff_cap_ms)
        return min(ms / 1000, max(0.0, turn.deadline - time.monotonic()))

    def over_budget(self, turn: Turn) -> bool:
        budget = self.config.token_budget
        return budget is not None and turn.usage.total_tokens >= budget

    def exhausted(self, turn: Turn, last_error: Any) -> None:
        """Raises the error of a chat whose calls still fail: TokenBudgetError when the budget ran out, else
        RetryExhaustedError (which counts against the model's circuit)."""
        if self.over_budget(turn):
            self.stats.count("chats_over_budget")
            raise TokenBudgetError(
                f"the chat used {turn.usage.total_tokens} tokens of its budget of {self.config.token_budget}",
                attempts=tuple(turn.attempts),
                last_error=last_error,
                correlation_id=turn.correlation_id,
                response=turn.last_response,
                usage=turn.usage,
            )
        self.stats.count("chats_exhausted")
        self.breaker.exhausted(turn.model, turn.correlation_id)
        code = getattr(last_error, "code", Code.UNPARSEABLE)
        retries = self.config.max_retries
        self.log(logging.WARNING, turn, "tool calls still failing after %d retries (correlation: %s): %s",
                  retries, turn.correlation_id, code, lane=lanes.MODEL, code=code)
        raise RetryExhaustedError(
            f"tool calls still failing after {retries} retries: {last_error}",
            attempts=tuple(turn.attempts),
            last_error=last_error,
            correlation_id=turn.correlation_id,
            response=turn.last_response,
            usage=turn.usage,
        )

    def check_deadline(self, turn: Turn) -> None:
        if time.monotonic() >= turn.deadline:
            raise RetryExhaustedError(
                f"the chat deadline of {self.config.deadline_s}s passed",
                attempts=tuple(turn.attempts),
                last_error="deadline",
                correlation_id=turn.correlation_id,
                response=turn.last_response,
                usage=turn.usage,
            )

    # ---- the seed's records of each call (toolmend._call_log) ---------------------------------------------

    def context(self, turn: Turn, reply: Reply) -> _call_log.Context:
        """What the records of this attempt's calls say beside each call."""
        cfg = self.config
        metrics = getattr(self.registry, "metrics", None)
        return _call_log.Context(
            turn.correlation_id, turn.reflections, reply.assembly.read_s, turn.retry_s(), turn.usage.total_tokens,
            cfg.log_repair_details, cfg.log_argument_values, bool(getattr(metrics, "include_actual_values", False)),
        )

    def taken(self, turn: Turn, reply: Reply, calls: list[ToolCall]) -> None:
        """INFO per call that passed in this attempt (and was not a repeat of one kept before)."""
        if calls and logger.isEnabledFor(logging.INFO):
            _call_log.calls_taken(calls, self.context(turn, reply))

    def given_up(self, turn: Turn, reply: Reply, failures: list[Any]) -> None:
        """WARNING per call still failing when the chat gives up on it."""
        if logger.isEnabledFor(logging.WARNING):
            _call_log.calls_refused(failures, self.context(turn, reply), ids=reply.assembly.ids)

    def retrying(self, turn: Turn, reply: Reply, failures: list[Any], delay: float) -> None:
        """INFO per failed call asked again (``retry_count``: this retry's number), with the seed's fields
        (parse_result "retry")."""
        if not logger.isEnabledFor(logging.INFO):
            return
        ctx = self.context(turn, reply)
        for failure in failures[: _call_log.MAX_RECORDS]:
            fields = _call_log.failure_fields(failure, ctx, "retry", reply.assembly.ids)
            logger.info(
                "Retry attempt %d/%d for %s (correlation: %s): model, %s, waiting %.3fs",
                turn.reflections, self.config.max_retries, loggable(failure.tool_name or "?"), turn.correlation_id,
                failure.code, delay, extra={**fields, "attempt": len(turn.attempts), "lane": lanes.MODEL, "model": turn.model},
            )
            _call_log.actual_values(failure, ctx, fields)

    def log(
        self, level: int, turn: Turn, message: str, *args: Any, lane: str | None = None, code: str | None = None,
        **fields: Any,
    ) -> None:
        """A record with the chat's fields in ``extra``: correlation_id, attempt, lane, code, model (and ``fields``)."""
        if logger.isEnabledFor(level):
            extra = {
                "correlation_id": turn.correlation_id,
                "attempt": len(turn.attempts),
                "lane": lane,
                "code": code,
                "error_code": code,
                "model": turn.model,
                **fields,
            }
            logger.log(level, message, *args, extra=extra)

    def succeed(self, turn: Turn, reply: Reply, calls: list[ToolCall]) -> ChatResult:
        """The chat's result: the calls kept from earlier attempts and this one's; the circuit closes."""
        merged = merge(turn.kept, calls)
        self.taken(turn, reply, merged[len(turn.kept) :])
        calls = merged
        text = turn.text(reply.assembly.text)
        self.breaker.succeeded(turn.model)
        seconds = turn.elapsed()
        self.stats.chat_ok(turn.model, calls, seconds)
        message = self.result_message(text, calls, reply.assembly.thinking)
        repairs = tuple(r for c in calls for r in c.repairs)
        return ChatResult(
            message, tuple(calls), text, turn.usage, tuple(turn.attempts), turn.correlation_id, seconds, repairs,
            reply.finish_reason, reply.assembly.thinking,
        )

    def failed(self, turn: Turn, error: ToolmendError) -> None:
        """A chat ends in ``error``: it carries the chat's correlation id, attempt number and last response."""
        for name, value in (
            ("correlation_id", turn.correlation_id),
            ("attempt", turn.attempts[-1].number if turn.attempts else None),
            ("response", turn.last_response),
        ):
            if getattr(error, name, None) is None:
                setattr(error, name, value)
        if isinstance(error, CircuitOpenError):
            self.stats.count("chats_refused")
        self.stats.chat_failed(turn.model, turn.elapsed())


def _repair_kinds(calls: Any) -> dict[str, int]:
    kinds: dict[str, int] = {}
    for call in calls:
        for r in call.repairs:
            kinds[r.kind] = kinds.get(r.kind, 0) + r.count
    return kinds
