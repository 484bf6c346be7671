"""toolmend.parse_response: a model's whole reply into checked tool calls, in one call into Rust."""

from __future__ import annotations

import logging
from typing import Any, Mapping, Union

from toolmend import _core
from toolmend._core import ParseResult, ToolCall, ToolCallError
from toolmend._log import loggable
from toolmend._limits import DEFAULT_LIMITS, check_max_depth
from toolmend.registry import ToolRegistry

__all__ = ["ParseResult", "ToolCall", "ToolCallError", "parse_response"]

logger = logging.getLogger("toolmend")

Body = Union[str, bytes, bytearray, Mapping[str, Any]]


def parse_response(
    body: Body,
    registry: ToolRegistry | None = None,
    *,
    repair: bool = True,
    text_calls: bool = True,
    max_size: int = DEFAULT_LIMITS["max_size"],
    max_depth: int = DEFAULT_LIMITS["max_depth"],
    timeout_ms: int = DEFAULT_LIMITS["timeout_ms"],
) -> ParseResult:
    """The tool calls of an Ollama ``/api/chat`` reply or an OpenAI-compatible chat completion.

    ``body`` is the reply as bytes, str or an already-parsed dict; text that is not a JSON reply
    is read as the message content itself. Calls come from ``tool_calls`` and, with
    ``text_calls``, from calls the model wrote in its content (Hermes ``<tool_call>``, Mistral
    ``[TOOL_CALLS]``, Llama ``<|python_tag|>``, fenced or bare JSON, pythonic lists, ...). Each
    call's name is checked, its arguments parsed (repaired when ``repair``) within the limits
    and, with a registry, validated against the tool's schema. A bad call becomes a
    ``ToolCallError`` with its code and does not spoil the others. Never raises for bad input;
    ``max_depth`` over ``MAX_DEPTH_CEILING`` is refused with ValueError.
    """
    check_max_depth(max_depth)
    result = _core.parse_response(
        body,
        registry,
        repair=repair,
        text_calls=text_calls,
        max_size=max_size,
        max_depth=max_depth,
        timeout_ms=timeout_ms,
    )
    if not result.ok and logger.isEnabledFor(logging.DEBUG):
        # DEBUG: the refusal is returned as a value, which the caller handles; a WARNING here would report
        # every model mistake twice. Codes and tool names only, never argument values.
        codes = [e.code for e in result.errors]
        logger.debug(
            "tool calls refused: %s",
            ", ".join(f"{e.code} ({loggable(e.tool_name or '?', 64)})" for e in result.errors[:20]),
            extra={"code": codes[0], "codes": codes, "tool_names": [e.tool_name for e in result.errors[:20]]},
        )
    return result
