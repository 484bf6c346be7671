"""The state of one chat, from its first request to its result or its error."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import orjson

from toolmend import _core
from toolmend._core import ToolCall
from toolmend.client.ledger import Attempt, Usage


@dataclass
class Turn:
    """What a chat sends, what it has spent, and what it has handed out so far."""

    #: The history sent: the caller's messages (copied, tool calls made well-formed) and the reflections.
    messages: list[dict[str, Any]]
    model: str
    deadline: float
    started: float = field(default_factory=time.monotonic)
    correlation_id: str = field(default_factory=lambda: os.urandom(8).hex())
    attempts: list[Attempt] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    #: Calls that passed in earlier attempts (only the failed ones are asked again).
    kept: list[ToolCall] = field(default_factory=list)
    #: Text of earlier attempts (shown already, when streaming).
    texts: list[str] = field(default_factory=list)
    reflections: int = 0
    #: Transport failures in a row, and 400s refusing a malformed tool call: each has its own budget.
    transport_failures: int = 0
    rejections: int = 0
    #: Events of the current attempt have reached the caller (a transport failure now cannot be retried).
    shown: bool = False
    #: What the last attempt brought back (an error's ``response``).
    last_response: Any = None
    #: The chat's OpenTelemetry span (None without opentelemetry), and how many attempts the hooks have seen.
    span: Any = None
    announced: int = 0
    finish_reason: str | None = None
    error: BaseException | None = None
    #: Replies read, and when the first one ended (a record's retry_time_ms runs from then).
    replies: int = 0
    first_end: float = 0.0

    def read(self) -> None:
        """A reply has been read."""
        self.replies += 1
        if self.replies == 1:
            self.first_end = time.monotonic()

    def retry_s(self) -> float:
        """Seconds since the first reply ended: the time spent in retries so far (0 on the first reply)."""
        return time.monotonic() - self.first_end if self.replies > 1 else 0.0

    @property
    def number(self) -> int:
        """The number of the attempt under way (or the last one)."""
        return len(self.attempts) or 1

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def text(self, last: str = "") -> str:
        """The text of every attempt, each trimmed as parse_response trims a reply's, one per line."""
        return "\n".join(t for t in (*self.texts, last) if t)


def merge(kept: Sequence[ToolCall], new: Sequence[ToolCall]) -> list[ToolCall]:
    """Calls kept from earlier attempts, then new ones that are not repeats of them. Calls of one reply are
    all kept, repeats included, as parse_response keeps them: the model asked for each."""
    if not kept:
        return list(new)  # nothing to compare (the common case: a first reply whose calls passed)
    seen = {_key(c) for c in kept}
    return [*kept, *(call for call in new if _key(call) not in seen)]


def _key(call: ToolCall) -> tuple[str, str]:
    """A call's name and arguments, equal for equal calls (keys sorted; integers of any size exact)."""
    try:
        return call.name, orjson.dumps(call.arguments, option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:  # an integer past 64 bits: orjson cannot write it
        return call.name, _core._json_text(call.arguments)
