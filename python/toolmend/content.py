"""A reply's content split around the calls written in it (seed 001's ``SplitContent``): the text before the
first call, the text after the last, the whole text without calls, and the calls.

The core reads the calls and cuts them out of the text (``parse_response``); it does not say where each call stood.
The text before the first call is where the content and its text without calls start alike, and the text after
the last where they end alike: a call's text is never part of the text, so the two part ways at the first call
and meet again after the last one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolmend._core import ToolCall, ToolCallError
from toolmend.response import TextCalls, parse_response, read_reply

__all__ = ["ParsedContent", "split_content"]


@dataclass(frozen=True)
class ParsedContent:
    """Content split around its calls: ``text_before`` the first call, ``text_after`` the last one (each
    trimmed), ``text`` (all the text without calls, as ``ParseResult.text``), ``calls`` and ``errors``."""

    text_before: str
    text_after: str
    text: str
    calls: tuple[ToolCall, ...]
    errors: tuple[ToolCallError, ...]

    @property
    def has_tool_calls(self) -> bool:
        """True when the content held a call (one that passed, or one that failed)."""
        return bool(self.calls or self.errors)


def split_content(
    content: str, registry: Any = None, *, text_calls: TextCalls = True, correlation_id: str | None = None, **limits: Any
) -> ParsedContent:
    """Splits a reply's content (the model's text) around the calls written in it. Content with no call is all
    ``text_before`` (as the seed's); the calls are read, checked and logged as ``parse_response`` does, with
    ``registry``, ``text_calls`` and the limits (``max_size``, ``max_depth``, ``timeout_ms``, ``repair``)."""
    options = {"text_calls": text_calls, **limits}
    result = parse_response(_message(content), registry, correlation_id=correlation_id, **options)
    text = result.text
    found = len(result.calls) + len(result.errors)
    if not found:
        return ParsedContent(text, "", text, result.calls, result.errors)
    body = content.strip()  # as the text is

    def holds_every_call(piece: str) -> bool:
        again = read_reply(_message(piece), registry, **options)
        return len(again.calls) + len(again.errors) == found

    # The two part ways at the first call's first character, unless the text after that call starts with the
    # same characters as the call ("<b>" after "<tool_call>"): then the rest from there no longer holds every
    # call, and the start steps back.
    start = _common_start(body, text)
    while start and not holds_every_call(body[start:]):
        start -= 1
    end = _common_end(body, text, len(text) - start)
    while end and not holds_every_call(body[: len(body) - end]):
        end -= 1
    return ParsedContent(
        text[:start].strip(), text[len(text) - end :].strip() if end else "", text, result.calls, result.errors
    )


def _message(content: str) -> dict[str, Any]:
    return {"message": {"role": "assistant", "content": content}}


def _common_start(a: str, b: str) -> int:
    """How many characters ``a`` and ``b`` start alike: a binary search over slices compared in C, not a loop
    over characters in Python."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_end(a: str, b: str, most: int) -> int:
    """How many characters ``a`` and ``b`` end alike, at most ``most`` (what the start left of ``b``)."""
    lo, hi = 0, min(len(a), len(b), most)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[len(a) - mid :] == b[len(b) - mid :]:
            lo = mid
        else:
            hi = mid - 1
    return lo
