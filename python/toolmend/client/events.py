"""What a turn hands out: the finished ChatResult, and the typed events of a streamed turn."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Union

from toolmend._core import ToolCall, ToolCallError
from toolmend.client.ledger import Attempt, Usage


@dataclass(frozen=True)
class ChatResult:
    """A finished turn: the assistant message (in the provider's form, ready to append to the history), its
    checked tool calls, the text without the calls, and the ledger of attempts."""

    message: dict[str, Any]
    tool_calls: tuple[ToolCall, ...]
    text: str
    usage: Usage
    attempts: tuple[Attempt, ...]
    correlation_id: str
    duration_s: float
    repairs: tuple[Any, ...] = field(default=())
    #: Why the last reply ended, as the server said it ("stop", "length", "tool_calls", ...; None if it did not).
    finish_reason: str | None = None
    #: The model's reasoning in the last reply (reasoning fields, think blocks): never in ``text``, never calls.
    reasoning: str = ""


@dataclass(frozen=True)
class TextDelta:
    """Text of the reply, as it arrives (calls written in the text are taken out). With ``revised``, at the end
    of the reply: the text shown held calls written without a marker (bare JSON, a pythonic list), which only the
    whole reply tells apart from prose; ``text`` is the reply's whole text without them, to show instead, and
    their calls follow."""

    text: str
    revised: bool = False


@dataclass(frozen=True)
class ReasoningDelta:
    """Reasoning, as it arrives: a reasoning field of the stream, or a think block in the text. With
    ``was_text``, a lone reasoning closer came (the reply began inside the block): ``text`` is all that
    came before it, and the text shown so far was reasoning, not the answer."""

    text: str
    was_text: bool = False


@dataclass(frozen=True)
class ToolCallStarted:
    """A call's name has arrived."""

    index: int
    id: str | None
    name: str


_UNREAD = object()


class ToolCallArgumentsDelta:
    """Arguments text appended to a call, ``path`` the JSON Pointer of the value it ended in ("" for the
    arguments object: Ollama sends each call whole), with the live ``partial`` view of the arguments so far.

    The view is built when ``partial`` is first read, not per chunk: a caller that never reads it pays nothing
    for it (one long string argument would otherwise be built again at every chunk). Read it while handling
    the event, before asking for the next one: it is the view as the stream stands then."""

    __slots__ = ("index", "path", "text", "_partial", "_view")
    __match_args__ = ("index", "path", "text", "partial")

    def __init__(self, index: int, path: str, text: str, partial: Any = None, *, view: Callable[[], Any] | None = None):
        self.index = index
        self.path = path
        self.text = text
        self._partial = _UNREAD if view is not None else partial
        self._view = view

    @property
    def partial(self) -> Any:
        if self._partial is _UNREAD:
            assert self._view is not None
            self._partial, self._view = self._view(), None
        return self._partial

    def __eq__(self, other: object) -> bool:
        if type(other) is not ToolCallArgumentsDelta:
            return NotImplemented
        return (self.index, self.path, self.text, self.partial) == (other.index, other.path, other.text, other.partial)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ToolCallArgumentsDelta(index={self.index!r}, path={self.path!r}, text={self.text!r}, partial={self.partial!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return ToolCallArgumentsDelta, (self.index, self.path, self.text, self.partial)


@dataclass(frozen=True)
class ToolCallCompleted:
    """A call passed every check: ready to run."""

    call: ToolCall


@dataclass(frozen=True)
class ToolCallFailed:
    """A call failed and will not be asked again (the last reflection was spent): only ever just before the
    RetryExhaustedError that ends the stream. ``error`` is a ToolCallError or a FailedCall."""

    index: int
    error: ToolCallError | Any


@dataclass(frozen=True)
class Done:
    """The turn is over: the same ChatResult ``chat`` returns."""

    result: ChatResult


#: What chat_stream yields (not toolmend.StreamEvent, which is the accumulator's).
ChatEvent = Union[TextDelta, ReasoningDelta, ToolCallStarted, ToolCallArgumentsDelta, ToolCallCompleted, ToolCallFailed, Done]
