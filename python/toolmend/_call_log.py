"""The seed's record of a tool call (seed 000, "Logging Fields Reference"): an INFO record for each call taken, a
WARNING for each call refused, each with the seed's thirteen fields as ``extra`` attributes under the seed's names.

The chats, ``parse_response`` / ``check_call`` and ``toolmend parse`` all write their records here, so that a
field means one thing wherever it comes from. A record above DEBUG carries names, ids, codes, JSON Pointers,
positions, counts and times, never an argument value: the repairs (kind and position) follow at DEBUG with
``log_repair_details``, the arguments at DEBUG only with ``log_argument_values`` (secret-looking keys masked), a
refused call's actual values at DEBUG only with ``include_actual_values``.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Any, Mapping

from toolmend._log import loggable, repair_details

logger = logging.getLogger("toolmend")

#: The seed's logging fields: every record written here has each of them as an attribute.
FIELDS = (
    "correlation_id",
    "tool_name",
    "tool_call_id",
    "parse_result",
    "repair_applied",
    "retry_count",
    "validation_errors",
    "parse_time_ms",
    "repair_time_ms",
    "retry_time_ms",
    "total_tokens",
    "error_code",
    "error_position",
)


@dataclass(frozen=True)
class Context:
    """What a record says beside the call itself: the chat (or parse) it belongs to, and what it has cost.

    ``parse_s`` is the reader's time over the reply that held the call: the core repairs in the same pass as it
    parses, so a repaired call's ``repair_time_ms`` is that pass's time (0 for a call that needed no repair).
    ``retry_s`` runs from the end of the chat's first attempt to the end of the one that held the call."""

    correlation_id: str
    retry_count: int = 0
    parse_s: float = 0.0
    retry_s: float = 0.0
    #: Tokens the chat used so far, retries included (None outside a chat: a reply read alone).
    total_tokens: int | None = None
    repair_details: bool = True
    argument_values: bool = False
    include_actual_values: bool = False


def new_correlation_id() -> str:
    """A fresh correlation id, as a chat makes its own: 16 hex digits."""
    return os.urandom(8).hex()


def validation_errors(error: Any) -> list[dict[str, str]]:
    """A refused call's schema errors as the records carry them: JSON Pointer and code each (never a value)."""
    return [{"pointer": f.path, "code": f.code} for f in (getattr(error, "validation", None) or ())]


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def call_fields(call: Any, ctx: Context) -> dict[str, Any]:
    """The seed's fields of a call taken: parse_result "retry" when it came after retries, else "repaired" when
    its arguments were repaired, else "success"."""
    repairs = [r.kind for r in call.repairs]
    return {
        "correlation_id": ctx.correlation_id,
        "tool_name": call.name,
        "tool_call_id": call.id,
        "parse_result": "retry" if ctx.retry_count else "repaired" if repairs else "success",
        "repair_applied": repairs,
        "retry_count": ctx.retry_count,
        "validation_errors": [],
        "parse_time_ms": _ms(ctx.parse_s),
        "repair_time_ms": _ms(ctx.parse_s) if repairs else 0.0,
        "retry_time_ms": _ms(ctx.retry_s),
        "total_tokens": ctx.total_tokens,
        "error_code": None,
        "error_position": None,
    }


def failure_fields(error: Any, ctx: Context, parse_result: str, ids: Mapping[int, str] | None = None) -> dict[str, Any]:
    """The seed's fields of a refused call: ``parse_result`` is "fail" (given up) or "retry" (asked again).
    ``ids``: the reply's call ids by index, when the error does not carry its call's. ``code`` stays beside
    ``error_code`` for the records' earlier readers."""
    return {
        "correlation_id": ctx.correlation_id,
        "tool_name": error.tool_name,
        "tool_call_id": getattr(error, "id", None) or (ids or {}).get(error.index),
        "parse_result": parse_result,
        "repair_applied": [],
        "retry_count": ctx.retry_count,
        "validation_errors": validation_errors(error),
        "parse_time_ms": _ms(ctx.parse_s),
        "repair_time_ms": 0.0,
        "retry_time_ms": _ms(ctx.retry_s),
        "total_tokens": ctx.total_tokens,
        "error_code": error.code,
        "error_position": error.position,
        "code": error.code,
    }


def taken(call: Any, ctx: Context) -> None:
    """The INFO record of a call taken, then (at DEBUG) its repairs and, when asked for, its arguments."""
    if not logger.isEnabledFor(logging.INFO):
        return
    fields = call_fields(call, ctx)
    logger.info(
        "Tool call parsed: %s (%s) parse_result=%s repair_applied=[%s] retry_count=%d correlation_id=%s",
        loggable(call.name), loggable(call.id, 80), fields["parse_result"], ", ".join(fields["repair_applied"]),
        ctx.retry_count, ctx.correlation_id, extra=fields,
    )
    if not logger.isEnabledFor(logging.DEBUG):
        return
    if ctx.repair_details and call.repairs:
        logger.debug(
            "Repair applied to %s (%s): %s", loggable(call.name), loggable(call.id, 80), repair_details(call.repairs),
            extra=fields,
        )
    if ctx.argument_values and isinstance(call.arguments, Mapping):
        from toolmend.client.ledger import mask_secrets

        logger.debug(
            "Arguments of %s (%s): %s", loggable(call.name), loggable(call.id, 80), loggable(mask_secrets(call.arguments), 2000),
            extra=fields,
        )


def refused(error: Any, ctx: Context, note: str = "", ids: Mapping[int, str] | None = None) -> None:
    """The WARNING record of a call refused (given up on), then its actual values at DEBUG when asked for."""
    if not logger.isEnabledFor(logging.WARNING):
        return
    fields = failure_fields(error, ctx, "fail", ids)
    logger.warning(
        "Tool call failed: %s (%s) parse_result=fail error_code=%s error_position=%s retry_count=%d correlation_id=%s: %s%s",
        loggable(error.tool_name or "?"), loggable(fields["tool_call_id"] or "-", 80), error.code, error.position,
        ctx.retry_count, ctx.correlation_id, loggable(error.message), note, extra=fields,
    )
    actual_values(error, ctx, fields)


def actual_values(error: Any, ctx: Context, fields: Mapping[str, Any]) -> None:
    """At DEBUG with ``include_actual_values``: each schema error's pointer, code and the (sanitised) value it got."""
    if not (ctx.include_actual_values and getattr(error, "validation", None) and logger.isEnabledFor(logging.DEBUG)):
        return
    shown = "; ".join(f"{f.path or '/'} {f.code} got {loggable(f.actual, 80)}" for f in error.validation[:10])
    logger.debug("Actual values of %s: %s", loggable(error.tool_name or "?"), shown, extra=dict(fields))


#: Records of one kind written for one reply at most; one more says how many were left out. A reply of ten
#: thousand bad calls is ten thousand values, not ten thousand WARNING records.
MAX_RECORDS = 50


def result(parsed: Any, ctx: Context, note: str = "") -> None:
    """The records of a reply read alone (``parse_response``, ``check_call``, ``toolmend parse``): one per call."""
    if not logger.isEnabledFor(logging.WARNING):
        return
    calls_taken(parsed.calls, ctx)
    calls_refused(parsed.errors, ctx, note)


def calls_taken(calls: Any, ctx: Context) -> None:
    for call in calls[:MAX_RECORDS]:
        taken(call, ctx)
    _left_out(logging.INFO, len(calls), "taken", ctx)


def calls_refused(errors: Any, ctx: Context, note: str = "", ids: Mapping[int, str] | None = None) -> None:
    for error in errors[:MAX_RECORDS]:
        refused(error, ctx, note, ids)
    _left_out(logging.WARNING, len(errors), "refused", ctx)


def _left_out(level: int, count: int, what: str, ctx: Context) -> None:
    if count > MAX_RECORDS and logger.isEnabledFor(level):
        logger.log(
            level, "%d more tool calls %s (correlation_id=%s): one record each for the first %d only",
            count - MAX_RECORDS, what, ctx.correlation_id, MAX_RECORDS, extra={"correlation_id": ctx.correlation_id},
        )
