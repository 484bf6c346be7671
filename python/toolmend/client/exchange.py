"""Reading replies within bounds: a size cap, lines split on \\n only, the deadline, replies that are not replies."""

from __future__ import annotations

import time
from typing import Any, AsyncIterator

import httpx
import orjson

from toolmend._log import loggable
from toolmend.errors import ModelHTTPError


def _json(body: bytes) -> Any:
    try:
        return orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        return None


def _text(body: bytes) -> str:
    return body.decode("utf-8", "replace")[:2000]


def _error_text(reply: Any) -> str | None:
    """Ollama's error message: {"error": "..."}, or older servers' {"error parsing tool call": "..."}."""
    if not isinstance(reply, dict) or "message" in reply or "choices" in reply:
        return None
    if isinstance(reply.get("error"), str):
        return reply["error"]
    for key, value in reply.items():
        if key.startswith("error"):
            return f"{key}: {value}"
    return None



class ReplyTooLarge(Exception):
    """A reply body passed ``max_response_bytes``; raised while reading, before it is all buffered."""

    def __init__(self, size: int, limit: int, status: int | None) -> None:
        super().__init__(size, limit)
        self.size = size
        self.limit = limit
        self.status = status

    def error(self) -> ModelHTTPError:
        return ModelHTTPError(
            f"the reply is over the size limit: {self.size} bytes read, max_response_bytes is {self.limit}",
            status=self.status,
            code="TLP-007",
        )


async def _read_body(response: httpx.Response, limit: int) -> bytes:
    """The whole body, refused as soon as it passes ``limit`` (a declared length is checked first)."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise ReplyTooLarge(int(declared), limit, response.status_code)
    parts: list[bytes] = []
    size = 0
    async for piece in response.aiter_bytes():
        size += len(piece)
        if size > limit:
            raise ReplyTooLarge(size, limit, response.status_code)
        parts.append(piece)
    return b"".join(parts)


async def _lines(response: httpx.Response, limit: int) -> AsyncIterator[bytes]:
    """NDJSON lines as bytes, split on b"\\n" only: Go's encoder leaves U+0085 and U+2028 unescaped inside
    strings, and a text line reader that splits on them would cut a line (and lose its call). Each byte is
    looked at once; the stream as a whole is held to ``limit``."""
    pending = b""
    size = 0
    async for piece in response.aiter_bytes():
        size += len(piece)
        if size > limit:
            raise ReplyTooLarge(size, limit, response.status_code)
        if b"\n" not in piece:
            pending += piece
            continue
        *lines, rest = (pending + piece).split(b"\n")
        pending = rest
        for line in lines:
            yield line
    if pending:
        yield pending


def _left(deadline: float) -> float:
    """Seconds until the deadline (a little above zero, so a timeout fires rather than an error)."""
    return max(0.001, deadline - time.monotonic())


def _not_a_reply(status: int | None, headers: httpx.Headers | None, reply: Any, body: bytes) -> ModelHTTPError | None:
    """Why a response that is not an error status is still not a chat reply (TLP-009), or None when it is
    one: a redirect (its JSON is some other page's), a status other than 200 below 400, a body that is not
    a JSON object (an HTML page from a proxy, say)."""
    if status is None or status >= 400:
        return None
    if 300 <= status < 400:
        where = headers.get("location", "?") if headers is not None else "?"
        return ModelHTTPError(
            f"the server redirected the chat to {loggable(where)}: set the client's host to the final address",
            status=status,
            body=_text(body),
            code="TLP-009",
        )
    if status != 200:
        return ModelHTTPError(f"HTTP {status} is not a chat reply", status=status, body=_text(body), code="TLP-009")
    if not isinstance(reply, dict):
        return ModelHTTPError(
            f"the reply is not a JSON object: {loggable(_text(body), 80)}", status=status, body=_text(body), code="TLP-009"
        )
    return None


