"""One request and what came back, read within bounds: a size cap, the deadline, lines split on \\n only, and
replies that are not replies told apart from replies."""

from __future__ import annotations

import asyncio
import sys
import time
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, AsyncGenerator, Awaitable, TypeVar

import httpx
import orjson

from toolmend import _core
from toolmend._log import loggable
from toolmend.client.assembly import Assembly
from toolmend.client.decoding import Decoder, ReplyTooLarge, UnreadableReply
from toolmend.client.ledger import Usage
from toolmend.errors import ModelHTTPError
from toolmend._states import Code

T = TypeVar("T")


@dataclass
class Reply:
    """What one attempt brought back, whichever way it was read."""

    assembly: Assembly
    status: int | None = None
    headers: httpx.Headers | None = None
    #: The body, when it was read whole (a reply not streamed, or an error status).
    body: bytes = b""
    whole: bool = False
    #: The body read as JSON (None when it is not JSON).
    data: Any = None
    #: Why no usable reply came: a timeout, a dropped connection, an empty body, a stream cut short.
    failure: str | None = None
    #: The server's error message (an error object in the body or on a streamed line).
    error_text: str | None = None
    #: Why reading stopped: over the size cap, or an encoding not decoded (its error ends the chat).
    unreadable: UnreadableReply | None = None
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None
    #: A streamed reply reached its end (done, finish_reason or [DONE]).
    complete: bool = False
    duration_s: float = 0.0

    def response(self) -> Any:
        """What came back, for an error's ``response``: the JSON body, its text, or a streamed reply's text."""
        if self.data is not None:
            return self.data
        if self.whole:
            return body_text(self.body)
        return {"content": self.assembly.text, "finish_reason": self.finish_reason}


if sys.version_info >= (3, 11):

    async def within(awaitable: Awaitable[T], seconds: float) -> T:
        """``awaitable`` bounded by ``seconds`` (TimeoutError past them), without a task of its own."""
        async with asyncio.timeout(seconds):
            return await awaitable

else:  # pragma: no cover - Python 3.10

    async def within(awaitable: Awaitable[T], seconds: float) -> T:
        return await asyncio.wait_for(awaitable, seconds)


def left(deadline: float) -> float:
    """Seconds until the deadline (a little above zero, so a timeout fires rather than an error)."""
    return max(0.001, deadline - time.monotonic())


async def decoded(response: httpx.Response, limit: int) -> AsyncGenerator[bytes, None]:
    """The body as the server meant it: its raw bytes decoded here (never by httpx, which inflates a chunk whole),
    held to ``limit`` as sent and as decoded (ReplyTooLarge); an encoding not decoded is an UndecodableReply."""
    if response.is_stream_consumed:
        # Read whole before it reached us (a response made in memory, as httpx.MockTransport's are, or read by a
        # caller's event hook): httpx decoded it already, so it is only measured.
        if len(response.content) > limit:
            raise ReplyTooLarge(len(response.content), limit, response.status_code)
        yield response.content
        return
    decoder = Decoder(response.headers.get("content-encoding", ""), limit, response.status_code)
    raw = response.aiter_raw()
    try:
        async for piece in raw:
            for part in decoder.feed(piece):
                yield part
    finally:
        await raw.aclose()  # type: ignore[attr-defined]


async def read_body(response: httpx.Response, limit: int) -> bytes:
    """The whole body, refused as soon as it passes ``limit`` (a declared length is checked first)."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise ReplyTooLarge(int(declared), limit, response.status_code)
    parts: list[bytes] = []
    async with aclosing(decoded(response, limit)) as pieces:
        async for piece in pieces:
            parts.append(piece)
    return b"".join(parts)


async def lines(
    response: httpx.Response, limit: int, first_s: float, idle_s: float, deadline: float
) -> AsyncGenerator[bytes, None]:
    """A streamed body's lines as bytes, split on b"\\n" only: Go's encoder leaves U+0085 and U+2028 unescaped
    inside strings, and a text line reader that splits on them would cut a line (and lose its call). The first
    piece must come within ``first_s``, each next one within ``idle_s``, all before the deadline (TimeoutError);
    the stream as a whole is held to ``limit`` bytes, as sent and as decoded (ReplyTooLarge)."""
    pieces = decoded(response, limit)
    pending = b""
    wait = first_s
    try:
        while True:
            try:
                piece = await within(pieces.__anext__(), min(wait, left(deadline)))
            except StopAsyncIteration:
                break
            wait = idle_s
            if b"\n" not in piece:
                pending += piece
                continue
            *complete, pending = (pending + piece).split(b"\n")
            for line in complete:
                yield line
        if pending:
            yield pending
    finally:
        # Closed here, not left to the garbage collector (no stray task).
        await pieces.aclose()


#: Repairs that change how a text is encoded, never what it says: a body that needs only these is read.
_ENCODING_ONLY = frozenset({"invalid_escape", "invalid_utf8", "byte_order_mark"})


def read_json(body: bytes) -> tuple[Any, bytes]:
    """The body as JSON (None when it is not JSON), and the bytes it was read from. orjson refuses a lone
    surrogate escape (``\\ud800``) or a byte that is not UTF-8, which one bad token of a model's output puts
    in a whole reply: the core's repair pass reads them (U+FFFD), and a body that needs nothing else is taken
    as sent, its mended text given back for the core to read again."""
    if not body:
        return None, body
    try:
        return orjson.loads(body), body
    except orjson.JSONDecodeError:
        pass
    mended = _core.repair(body)
    if mended.ok and mended.repairs and all(r.kind in _ENCODING_ONLY for r in mended.repairs):
        text = mended.json.encode()
        return orjson.loads(text), text
    return None, body


def json_or_none(body: bytes) -> Any:
    return read_json(body)[0]


def body_text(body: bytes) -> str:
    return body.decode("utf-8", "replace")[:2000]


def not_a_reply(reply: Reply) -> ModelHTTPError | None:
    """Why a response read whole with a status below 400 is still not a chat reply (TLP-009), or None when it
    is one: a redirect (its JSON is some other page's), a status other than 200, a body that is not a JSON
    object (an HTML page from a proxy, say)."""
    status = reply.status
    if status is None or status >= 400 or not reply.whole:
        return None
    body = body_text(reply.body)
    if 300 <= status < 400:
        where = reply.headers.get("location", "?") if reply.headers is not None else "?"
        return ModelHTTPError(
            f"the server redirected the chat to {loggable(where)}: set the client's address to the final one",
            status=status,
            body=body,
            code=Code.REPLY_NOT_UNDERSTOOD,
        )
    if status != 200:
        return ModelHTTPError(f"HTTP {status} is not a chat reply", status=status, body=body, code=Code.REPLY_NOT_UNDERSTOOD)
    if not isinstance(reply.data, dict):
        return ModelHTTPError(f"the reply is not a JSON object: {loggable(body, 80)}", status=status, body=body, code=Code.REPLY_NOT_UNDERSTOOD)
    return None


def reason(value: Any) -> str | None:
    """A finish reason as the server wrote it, when it is text (any other type says nothing)."""
    return value if isinstance(value, str) else None
