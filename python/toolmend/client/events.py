"""What a turn hands out: the finished ChatResult, and the typed events of a streamed turn."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from toolmend._core import ToolCall, ToolCallError
from toolmend.client.ledger import Attempt, Usage


@dataclass(frozen=True)
class ChatResult:
    """A finished turn: the assistant message, its checked tool calls, and the ledger of attempts."""

    message: dict[str, Any]
    tool_calls: tuple[ToolCall, ...]
    text: str
    usage: Usage
    attempts: tuple[Attempt, ...]
    correlation_id: str
    duration_s: float
    repairs: tuple[Any, ...] = field(default=())


# ---- streamed turns: typed events ---------------------------------------------------------------------


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ToolCallStarted:
    index: int
    id: str | None
    name: str


@dataclass(frozen=True)
class ToolCallArgumentsDelta:
    """Arguments text appended to a call, ``path`` the JSON Pointer of the value it ended in ("" for the
    arguments object: Ollama sends each call whole), with the live ``partial`` view of the arguments so far."""

    index: int
    path: str
    text: str
    partial: Any


@dataclass(frozen=True)
class ToolCallCompleted:
    call: ToolCall


@dataclass(frozen=True)
class ToolCallFailed:
    index: int
    error: ToolCallError


@dataclass(frozen=True)
class Done:
    result: ChatResult


#: What chat_stream yields (not toolmend.StreamEvent, which is the accumulator's).
ChatEvent = TextDelta | ToolCallStarted | ToolCallArgumentsDelta | ToolCallCompleted | ToolCallFailed | Done
