"""One attempt's reply made into checked calls, failures, text and events: the same checks whether the reply
was streamed or read whole, and whichever provider sent it.

A reply cut off by the token limit (finish reason "length") never hands out a cut-off call: the core's checks
refuse it with TLP-010 (``parse_response`` reads the reason from the body, the accumulator from its chunks, and
``finish``/``flush`` are told it). With ``enable_auto_repair=False`` a call that needed repair is a failure
(TLP-004), streamed or not, wherever it was written: each core reader is given ``repair``.
"""

from __future__ import annotations

import time
from functools import partial
from typing import Any, Mapping

from toolmend._core import ToolCall, ToolCallAccumulator
from toolmend._states import StreamEventKind as Kind
from toolmend.client.events import (
    ReasoningDelta,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallCompleted,
    ToolCallFailed,
    ToolCallStarted,
)
from toolmend._states import Code
from toolmend.errors import FailedCall
from toolmend.response import read_reply

#: Where the calls a reply sends in its structured field come from.
_WIRE = frozenset({"tool_calls", "stream"})


class Assembly:
    """Calls, failures and text of one attempt, for a streamed reply (``text``, ``chunk``, ``end``) or a whole one
    (``whole``)."""

    def __init__(self, registry: Any, limits: Mapping[str, Any], repair: bool, max_calls: int | None = None) -> None:
        self.registry = registry
        self.limits = limits
        self.repair = repair
        #: Calls taken from the reply at most (RetryConfig.max_concurrent_calls); the calls after them fail.
        self.max_calls = max_calls
        self.calls: list[ToolCall] = []
        self.errors: list[Any] = []
        self.text_parts: list[str] = []
        self.thinking_parts: list[str] = []
        #: Call ids by index, as the server sent them (a reflection names the failed calls by them).
        self.ids: dict[int, str] = {}
        #: Indexes of wire calls that failed (their Started/ArgumentsDelta events are not replayed).
        self.failed_wire: set[int] = set()
        self._acc: ToolCallAccumulator | None = None
        #: What the stream said besides calls and text: why it ended, its token counts, a provider's error.
        self.finish_reason: str | None = None
        self.usage: tuple[int, int] | None = None
        self.provider_error: str | None = None
        self.ended = False
        self._started: set[int] = set()
        #: Calls that had arguments events, and their views as the reply ended (see ``_view``).
        self._viewed: set[int] = set()
        self._last_views: dict[int, Any] = {}
        #: Seconds spent in the core's reader over this reply (parsing, repair and checks; the log's parse_time_ms).
        self.read_s = 0.0

    def ordered_calls(self) -> list[ToolCall]:
        """The calls in the order parse_response gives a whole reply's: the wire's by index, then those written
        in the text as they stood (a stream may complete them in another order)."""
        return sorted(self.calls, key=lambda c: (0, c.index) if c.source in _WIRE else (1, 0))

    @property
    def text(self) -> str:
        # As parse_response gives a whole reply's text: without the space around it.
        return "".join(self.text_parts).strip()

    @property
    def thinking(self) -> str:
        return "".join(self.thinking_parts).strip()

    # ---- a reply read whole ----------------------------------------------------------------------------

    def whole(self, body: Any, finish_reason: str | None) -> None:
        start = time.perf_counter()
        result = read_reply(body, self.registry, repair=self.repair, **self.limits)
        self.read_s += time.perf_counter() - start
        self.errors = list(result.errors)
        for call in result.calls:
            self._call(call)
        if result.text:
            self.text_parts.append(result.text)
        if result.reasoning:
            self.thinking_parts.append(result.reasoning)

    def whole_events(self) -> list[Any]:
        """The events of a reply read whole, for chat_stream when streaming is off: its reasoning, its text, each
        call (started, then completed) and each failure, in the order a stream of the same reply gives them."""
        out: list[Any] = []
        if self.thinking:
            out.append(ReasoningDelta(self.thinking))
        if self.text:
            out.append(TextDelta(self.text))
        for call in self.ordered_calls():
            out += [ToolCallStarted(call.index, call.id, call.name), ToolCallCompleted(call)]
        out += [ToolCallFailed(error.index, error) for error in self.errors]
        return out

    # ---- a streamed reply ------------------------------------------------------------------------------

    def data(self, payload: bytes) -> list[Any]:
        """One message of the stream (an SSE event's data, an NDJSON line) for the core's reader, which reads all
        of it: call fragments, text (and the calls written in it), reasoning, the finish reason, token counts and
        a provider's error (these last three are kept here for the client: ``finish_reason``, ``usage``,
        ``provider_error``)."""
        if self._acc is None:
            self._acc = ToolCallAccumulator(self.registry, repair=self.repair, **self.limits)
        acc = self._acc
        start = time.perf_counter()
        events, completed = acc.feed_data(payload), acc.completed()
        self.read_s += time.perf_counter() - start
        return self._events(events) + self._checked(completed)

    def end(self, finish_reason: str | None) -> list[Any]:
        """The end of the reply: text held back and calls still open, checked; cut-off calls are failures."""
        if self._acc is None:
            return []
        start = time.perf_counter()
        events, finished = self._acc.end(finish_reason), self._acc.finish(finish_reason)
        self.read_s += time.perf_counter() - start
        return self._events(events) + self._checked(finished)

    def _events(self, events: list[Any]) -> list[Any]:
        out: list[Any] = []
        for e in events:
            kind = e.kind
            if kind is Kind.TEXT:
                self.text_parts.append(e.text)
                out.append(TextDelta(e.text))
            elif kind is Kind.ARGUMENTS:
                self._viewed.add(e.index)
                out.append(ToolCallArgumentsDelta(e.index, e.path or "", e.text or "", view=partial(self._view, e.index)))
            elif kind is Kind.STARTED:
                if e.id is not None:
                    self.ids[e.index] = e.id
            elif kind is Kind.NAME:
                if e.index not in self._started:
                    self._started.add(e.index)
                    out.append(ToolCallStarted(e.index, e.id or self.ids.get(e.index), e.text or ""))
            elif kind is Kind.REASONING:
                self.thinking_parts.append(e.text)
                out.append(ReasoningDelta(e.text))
            elif kind is Kind.TEXT_WAS_REASONING:
                # The reply began inside a reasoning block: the text so far was reasoning.
                self.text_parts.clear()
                self.thinking_parts.append(e.text)
                out.append(ReasoningDelta(e.text, True))
            elif kind is Kind.TEXT_REVISED:
                # The text shown held calls written as bare JSON: the reply's text is this.
                self.text_parts[:] = [e.text]
                out.append(TextDelta(e.text, revised=True))
            elif kind is Kind.FINISH:
                self.finish_reason = e.text
            elif kind is Kind.ERROR:
                self.provider_error = e.message
            elif kind is Kind.USAGE:
                self.usage = self._acc.usage if self._acc is not None else None
            elif kind is Kind.END:
                self.ended = True
        return out

    def _view(self, index: int) -> Any:
        """The live view of call ``index``'s arguments as the stream stands; once the reply is read, as it
        ended. Events read it through the assembly, so that none keeps the accumulator alive."""
        if self._acc is None:
            return self._last_views.get(index)
        return self._acc.partial(index)

    def release(self) -> None:
        """Lets go of the accumulator once the reply is read. They belong to the thread that
        made them: an error's traceback keeps this object alive, and the garbage collector may free it on any
        thread, where dropping them fails."""
        if self._acc is not None:
            # Events not read yet read these: one view a call, built once.
            self._last_views = {index: self._acc.partial(index) for index in self._viewed}
        self._acc = None

    # ---- the checks ------------------------------------------------------------------------------------

    def _checked(self, result: Any) -> list[Any]:
        out = [self._call(call) for call in result.calls]
        for error in result.errors:
            self.errors.append(error)
            self.failed_wire.add(error.index)
            out.append(ToolCallFailed(error.index, error))
        return out

    def _call(self, call: ToolCall) -> Any:
        if self.max_calls is not None and len(self.calls) >= self.max_calls:
            return self._over_cap(call)
        self.calls.append(call)
        return ToolCallCompleted(call)

    def _over_cap(self, call: ToolCall) -> Any:
        """A call past ``max_calls``: not taken, a failure (TLP-006) that asks for it again in the next reply."""
        error = FailedCall(
            code=Code.CALL_CONSTRUCTION,
            message=f"the reply held more than {self.max_calls} tool calls (max_concurrent_calls): this one was not taken",
            tool_name=call.name,
            raw_arguments=call.raw_arguments,
            index=call.index,
            suggestion=f"make at most {self.max_calls} tool calls in one reply; make this one again in the next reply",
            id=call.id,
        )
        self.errors.append(error)
        self.failed_wire.add(call.index)
        return ToolCallFailed(call.index, error)
