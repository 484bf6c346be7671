"""toolmend.parse_response: a model's whole reply into checked tool calls, in one call into Rust."""

from __future__ import annotations

import logging
import time
from typing import Any, Collection, Mapping, Union

from toolmend import _call_log, _core
from toolmend._core import ParseResult, ToolCall, ToolCallError
from toolmend._limits import DEFAULT_LIMITS, MAX_DEPTH_CEILING, check_max_depth
from toolmend.registry import ToolRegistry
from toolmend.registry_metrics import correlation_id as current_correlation_id

__all__ = ["TEXT_FORMATS", "ParseResult", "TextCalls", "ToolCall", "ToolCallError", "check_call", "parse_response"]

#: A reply: text, a parsed dict, or an SDK's reply object (openai, ollama, anthropic, LangChain, LiteLLM).
_clock = time.perf_counter

Body = Union[str, bytes, bytearray, Mapping[str, Any], Any]

#: Which calls written in the content are read: True (the "default" preset), False (none), a
#: preset's name ("strict", "default", "lenient") or a collection of format names.
TextCalls = Union[bool, str, Collection[str]]

#: The format names each preset takes. "strict" takes only the marked formats (a model's own call
#: tokens and tags); "default" adds fenced JSON, a reply that is one JSON call, and pythonic lists;
#: "lenient" adds JSON calls amid prose. To deny a format, take a preset without it:
#: ``set(TEXT_FORMATS["default"]) - {"pythonic"}``.
TEXT_FORMATS: Mapping[str, tuple[str, ...]] = _core.TEXT_FORMATS


def parse_response(
    body: Body,
    registry: ToolRegistry | None = None,
    *,
    repair: bool = True,
    text_calls: TextCalls = True,
    max_size: int = DEFAULT_LIMITS["max_size"],
    max_depth: int = DEFAULT_LIMITS["max_depth"],
    timeout_ms: int = DEFAULT_LIMITS["timeout_ms"],
    allow_truncated: bool = False,
    correlation_id: str | None = None,
) -> ParseResult:
    """The tool calls of a model's reply: Ollama ``/api/chat``, an OpenAI-compatible chat completion
    (every choice), the Responses API, Anthropic Messages or a LangChain message.

    ``body`` is the reply as bytes, str, an already-parsed dict or the SDK's own object (openai,
    ollama, anthropic, LangChain and LiteLLM objects are read by their fields, not imported); text that is
    not a JSON reply is read as the message content itself. A provider's error body is one
    ``TLP-011`` error, an object that is no reply one ``TLP-009`` error: never ``ok`` with calls
    lost. Each call says which ``choice`` it came from; ``text`` is the first choice's.

    A call whose arguments were cut off (the reply ended inside a string or a literal, or after a
    key, ``:`` or ``,``; or, when the reply says it stopped at the token limit, any call that needed
    mending at its end) is a ``TLP-010`` error whose ``arguments`` hold the mended part; with
    ``allow_truncated`` it is taken as a ``ToolCall`` with ``truncated=True``. Arguments whose last
    member is whole and that only lack their closing braces are a forgotten brace and are mended. Calls come from ``tool_calls`` and, with
    ``text_calls``, from calls the model wrote in its content (Hermes ``<tool_call>``, Mistral
    ``[TOOL_CALLS]``, Llama ``<|python_tag|>``, fenced or bare JSON, pythonic lists, ...):
    ``text_calls`` is True, False, a preset of ``TEXT_FORMATS`` or the format names to read. JSON
    amid prose is a call only with "lenient" or when the registry knows its name. Each
    call's name is checked, its arguments parsed (repaired when ``repair``) within the limits
    and, with a registry, validated against the tool's schema. A bad call becomes a
    ``ToolCallError`` with its code and does not spoil the others. Never raises for bad input;
    ``max_depth`` over ``MAX_DEPTH_CEILING`` is refused with ValueError.

    Each call taken is an INFO record on the ``toolmend`` logger and each call refused a WARNING, with the
    seed's fields (docs/client.md, "Log records") under ``correlation_id``: the one given, else
    ``toolmend.registry_metrics.correlation_id``'s, else a fresh one.
    """
    # The hot path of every caller: read_reply's steps inline, the record's work only when a record is due.
    start = _clock()
    if max_depth > MAX_DEPTH_CEILING:
        check_max_depth(max_depth)
    result = _core.parse_response(
        body, registry, repair=repair, text_calls=text_calls,
        max_size=max_size, max_depth=max_depth, timeout_ms=timeout_ms, allow_truncated=allow_truncated,
    )
    if result.calls or result.errors:
        _log(result, registry, correlation_id, _clock() - start)
    return result


def read_reply(body: Body, registry: ToolRegistry | None = None, **options: Any) -> ParseResult:
    """``parse_response`` without its records: for the paths that write their own (the chats, ``toolmend parse``)."""
    check_max_depth(options.get("max_depth", DEFAULT_LIMITS["max_depth"]))
    return _core.parse_response(body, registry, **options)


def read_call(name: Any, arguments: Any, registry: ToolRegistry | None = None, **options: Any) -> ParseResult:
    """``check_call`` without its records."""
    check_max_depth(options.get("max_depth", DEFAULT_LIMITS["max_depth"]))
    return _core.check_call(name, arguments, registry, **options)


def check_call(
    name: Any,
    arguments: Any,
    registry: ToolRegistry | None = None,
    *,
    repair: bool = True,
    max_size: int = DEFAULT_LIMITS["max_size"],
    max_depth: int = DEFAULT_LIMITS["max_depth"],
    timeout_ms: int = DEFAULT_LIMITS["timeout_ms"],
    allow_truncated: bool = False,
    correlation_id: str | None = None,
) -> ParseResult:
    """One call given by its ``name`` and its ``arguments`` (JSON text, or an object as Ollama sends them),
    checked as ``parse_response`` checks a call of a reply: the name, the arguments parsed (repaired when
    ``repair``) within the limits and, with a registry, validated against the tool's schema. The ParseResult holds
    the call, or its ToolCallError; ``text`` is empty. Never raises for bad input. Its record is
    ``parse_response``'s."""
    start = _clock()
    result = read_call(
        name, arguments, registry, repair=repair, max_size=max_size, max_depth=max_depth, timeout_ms=timeout_ms,
        allow_truncated=allow_truncated,
    )
    _log(result, registry, correlation_id, _clock() - start)
    return result


def _log(result: ParseResult, registry: Any, correlation_id: str | None, seconds: float) -> None:
    logger = _call_log.logger
    if not (result.errors and logger.isEnabledFor(logging.WARNING)) and not (result.calls and logger.isEnabledFor(logging.INFO)):
        return  # no record to write: no correlation id made (the common case: calls taken, INFO off)
    correlation = correlation_id or current_correlation_id.get() or _call_log.new_correlation_id()
    metrics = getattr(registry, "metrics", None)
    actual = bool(getattr(metrics, "include_actual_values", False))
    _call_log.result(result, _call_log.Context(correlation, parse_s=seconds, include_actual_values=actual))
