"""A reply's content split around the calls written in it (seed 001's ``SplitContent``): the text before the
first call, the text after the last, the whole text without calls, and the calls.

The core reads the calls once and cuts them out of the text (``parse_response``), noting where the first call and
the last one were cut: the text before the first and after the last are the text's two ends from there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolmend._core import ToolCall, ToolCallError
from toolmend.response import TextCalls, parse_response

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
    if result._calls_at is None:
        return ParsedContent(text, "", text, result.calls, result.errors)
    # Where the reader cut the first call and the last one out of the text.
    first, last = result._calls_at
    return ParsedContent(text[:first].strip(), text[last:].strip(), text, result.calls, result.errors)


def _message(content: str) -> dict[str, Any]:
    return {"message": {"role": "assistant", "content": content}}
