"""The proxy's HTTP/1.1 client for its one upstream: a pool of keep-alive connections, each request written in
one piece, each response parsed by httptools (llhttp, the C parser uvicorn serves with): status line, headers,
``content-length``, ``chunked`` and keep-alive are its work, the pool, timeouts and size bounds this module's.

Why not httpx: on this project's 2-core machine an ``httpx.AsyncClient`` spends about 1 ms of CPU per request
(0.65 ms through its transport alone: URL parsing, header models, h11), more than all else the proxy does; this
client spends about 0.05 ms. The proxy only ever speaks to one origin with requests it already holds whole, so a
pool of asyncio streams is all it needs.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from typing import AsyncIterator, TypeVar
from urllib.parse import urlsplit

try:
    import httptools
except ImportError:  # no `proxy` extra: the CLI and its --help still load; an Upstream says what to install
    httptools = None  # type: ignore[assignment]

_T = TypeVar("_T")
#: A response's head larger than this is refused (llhttp sets no bound of its own).
_LIMIT = 1 << 20
#: A body read whole (``Reply.read``) larger than this is refused, so a runaway upstream cannot exhaust memory.
_MAX_BODY = 64 << 20
_READ = 65536
#: Methods whose request carries a ``content-length`` even when the body is empty.
_WITH_BODY = frozenset({"POST", "PUT", "PATCH"})


class UpstreamError(Exception):
    """The upstream could not be reached, closed the connection, timed out, or answered something not HTTP/1.1;
    ``code`` says which, for the proxy's 502: ``upstream_unreachable``, ``upstream_closed``,
    ``upstream_timeout``, ``upstream_malformed`` or ``upstream_too_large``."""

    def __init__(self, message: str, code: str = "upstream_closed") -> None:
        super().__init__(message)
        self.code = code


class _Conn:
    __slots__ = ("reader", "writer", "expired", "since")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.expired = False
        #: When the connection last made progress (the request written, or bytes of the reply read).
        self.since = time.monotonic()

    def expire(self) -> None:
        """The read timeout: the connection is cut, so the read waiting on it ends."""
        self.expired = True
        self.writer.transport.abort()

    def close(self) -> None:
        self.writer.transport.abort()


class Upstream:
    """Requests to the origin of ``url`` (``http`` or ``https``; its path is a prefix of every request's)."""

    def __init__(self, url: str, *, connect_timeout: float = 10.0, read_timeout: float = 600.0, max_idle: int = 256, max_body: int = _MAX_BODY) -> None:
        if httptools is None:
            raise ModuleNotFoundError("toolmend proxy needs its extra: pip install 'toolmend[proxy]' (httptools)")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("the upstream must be an http:// or https:// URL")
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.ssl = ssl.create_default_context() if parts.scheme == "https" else None
        self.prefix = parts.path.rstrip("/").encode()
        self.host_header = parts.netloc.rpartition("@")[2].encode()
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.max_idle = max_idle
        self.max_body = max_body
        self._idle: list[_Conn] = []
        self._busy: set[_Conn] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._watchdog: asyncio.Task[None] | None = None

    async def request(self, method: str, target: bytes, headers: list[tuple[bytes, bytes]], body: bytes) -> Reply:
        """Sends one request (``target`` is the path and query, after the URL's prefix) and returns the reply
        once its head is read; its body is read from the reply. A connection found closed by the upstream
        while it was idle (nothing of a reply read) is replaced once."""
        lines = [b"%s %s%s HTTP/1.1\r\nhost: %s\r\n" % (method.encode(), self.prefix, target, self.host_header)]
        lines.extend(b"%s: %s\r\n" % header for header in headers)
        if body or method in _WITH_BODY:
            lines.append(b"content-length: %d\r\n" % len(body))
        lines.append(b"\r\n")
        lines.append(body)
        data = b"".join(lines)
        for attempt in (0, 1):
            conn, reused = self._take()
            if conn is None:
                conn = await self._connect()
            self._busy.add(conn)
            conn.since = time.monotonic()
            try:
                conn.writer.write(data)
                message = await self._head(conn)
            except (OSError, asyncio.IncompleteReadError, ValueError, httptools.HttpParserError, httptools.HttpParserUpgrade) as e:
                self._drop(conn)
                stale = reused and not conn.expired and isinstance(e, (ConnectionError, asyncio.IncompleteReadError)) and not getattr(e, "partial", b"")
                if stale and attempt == 0:
                    continue
                raise _failed(conn, e) from e
            return Reply(self, conn, message, method)
        raise AssertionError("unreachable")  # pragma: no cover

    def _take(self) -> tuple[_Conn | None, bool]:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # connections belong to the loop that opened them
            self._idle = []
            self._busy = set()
            self._loop = loop
            self._watchdog = loop.create_task(self._watch())
        while self._idle:
            conn = self._idle.pop()
            if conn.reader.at_eof() or conn.writer.is_closing():
                conn.close()
                continue
            return conn, True
        return None, False

    async def _connect(self) -> _Conn:
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(self.host, self.port, ssl=self.ssl, limit=_LIMIT), self.connect_timeout
            )
        except (OSError, asyncio.TimeoutError) as e:
            raise UpstreamError(f"could not connect ({type(e).__name__})", "upstream_unreachable") from e
        return _Conn(reader, writer)

    async def _head(self, conn: _Conn) -> _Message:
        """The response on ``conn`` parsed up to the end of its head (interim 1xx responses skipped); what of its
        body came in the same reads waits in the message's ``pieces``."""
        message = _Message()
        reader = conn.reader
        size = 0
        while not message.status:
            data = await reader.read(_READ)
            if not data:  # partial: whether any of it came (a stale kept-alive connection sends nothing: sent again)
                raise asyncio.IncompleteReadError(b"x" if size else b"", None)
            conn.since = time.monotonic()
            size += len(data)
            message.feed(data)
            if not message.status and size > _LIMIT:
                raise ValueError("the response's head is too long")
        return message

    async def _watch(self) -> None:
        """The read timeout, for every connection at once: one that has made no progress for ``read_timeout``
        seconds is cut, so the read waiting on it ends (cheaper than a timer for each read of each chunk)."""
        tick = min(1.0, self.read_timeout / 4)
        while True:  # until aclose() or the loop's end cancels it
            await asyncio.sleep(tick)
            late = time.monotonic() - self.read_timeout
            for conn in [c for c in self._busy if c.since < late]:
                conn.expire()
                self._busy.discard(conn)

    def _release(self, conn: _Conn, keep: bool) -> None:
        self._busy.discard(conn)
        if keep and not conn.expired and len(self._idle) < self.max_idle and not conn.writer.is_closing():
            self._idle.append(conn)
        else:
            conn.close()

    def _drop(self, conn: _Conn) -> None:
        self._busy.discard(conn)
        conn.close()

    async def aclose(self) -> None:
        idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        self._loop = None


def _failed(conn: _Conn, e: BaseException) -> UpstreamError:
    """The error for a response that broke off: the parser's own words for a malformed one."""
    if conn.expired:
        return UpstreamError("timed out", "upstream_timeout")
    if isinstance(e, (httptools.HttpParserError, httptools.HttpParserUpgrade, ValueError)):
        return UpstreamError(f"a malformed response ({type(e).__name__}: {e})", "upstream_malformed")
    return UpstreamError(type(e).__name__, "upstream_closed")


class _Message:
    """httptools' callbacks for one response: its head, and its body's pieces as the parser hands them over."""

    __slots__ = ("parser", "headers", "status", "keep", "pieces", "complete", "extra")

    def __init__(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.headers: list[tuple[bytes, bytes]] = []
        self.status = 0  # set once the final (not 1xx) response's head is whole
        self.keep = False
        self.pieces: list[bytes] = []
        self.complete = False
        self.extra = False  # bytes after the response's end: the connection is out of step, not reused

    def feed(self, data: bytes) -> None:
        """Parses ``data``; bytes past a whole response mark it ``extra`` (its connection is not reused)."""
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            if not self.complete:
                raise
            self.extra = True

    def on_message_begin(self) -> None:
        if self.complete:
            self.extra = True
        self.headers = []  # an interim 1xx response's headers are not the reply's

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name.lower(), value))

    def on_headers_complete(self) -> None:
        status = self.parser.get_status_code()
        if not 100 <= status < 200 or status == 101:
            self.status = status
            self.keep = self.parser.should_keep_alive()  # read here: llhttp resets it once the message ends

    def on_body(self, body: bytes) -> None:
        self.pieces.append(body)

    def on_message_complete(self) -> None:
        if self.status:
            self.complete = True


class Reply:
    """An upstream response whose head is read: ``status_code``, ``headers`` (lower-cased names, as bytes),
    ``framing`` (``"length"``, ``"chunked"`` or ``"close"``, with ``length`` for the first); its body by
    ``read()`` or ``pieces()``."""

    def __init__(self, upstream: Upstream, conn: _Conn, message: _Message, method: str) -> None:
        self.upstream = upstream
        self.conn: _Conn | None = conn
        self.message = message
        self.status_code = status = message.status
        self.headers = message.headers
        self.length = -1
        if method == "HEAD" or status in (204, 304):
            # No body, whatever the head says (llhttp knows 204 and 304, not that the request was a HEAD).
            self.framing, self.length, message.complete = "length", 0, True
            if method == "HEAD" and message.pieces:
                message.extra = True
        else:
            self.framing = "close"
            for name, value in message.headers:
                if name == b"transfer-encoding":
                    self.framing = "chunked" if value.lower().endswith(b"chunked") else "close"
                    break
                if name == b"content-length":  # a valid number: llhttp refuses any other
                    self.framing, self.length = "length", int(value)
        self.keep = self.framing != "close"

    async def read(self) -> bytes:
        """The whole body (at most the upstream's ``max_body``); the connection then goes back to the pool."""
        if self.length > self.upstream.max_body:
            self.close()
            raise UpstreamError(f"the response is over {self.upstream.max_body} bytes", "upstream_too_large")
        message = self.message
        if message.complete:  # the whole body came with the head (most replies): no async generator's frames
            self._conn()
            body = message.pieces[0] if len(message.pieces) == 1 else b"".join(message.pieces)
            message.pieces.clear()
            if len(body) > self.upstream.max_body:
                self.close()
                raise UpstreamError(f"the response is over {self.upstream.max_body} bytes", "upstream_too_large")
            if message.extra or not message.keep:
                self.keep = False
            self._done()
            return body
        pieces: list[bytes] = []
        size = 0
        async for piece in self.pieces():
            size += len(piece)
            if size > self.upstream.max_body:
                self.close()
                raise UpstreamError(f"the response is over {self.upstream.max_body} bytes", "upstream_too_large")
            pieces.append(piece)
        return pieces[0] if len(pieces) == 1 else b"".join(pieces)

    async def pieces(self) -> AsyncIterator[bytes]:
        """The body as it arrives, one piece for each read of the connection (a chunked body's framing taken
        off, all the chunks that came in one read joined); the connection then goes back to the pool, or is cut
        if the body was left before its end."""
        conn = self._conn()
        message = self.message
        reader = conn.reader
        close = self.framing == "close"
        try:
            while True:
                if message.pieces:
                    piece = message.pieces[0] if len(message.pieces) == 1 else b"".join(message.pieces)
                    message.pieces.clear()
                    yield piece
                if message.complete:
                    break
                data = await reader.read(_READ)
                if not data:
                    if close:  # a body framed by the connection's close: its end
                        break
                    raise asyncio.IncompleteReadError(b"", None)
                conn.since = time.monotonic()
                message.feed(data)
        except (OSError, asyncio.IncompleteReadError, ValueError, httptools.HttpParserError) as e:
            self.close()
            raise _failed(conn, e) from e
        except BaseException:
            # Left before the end (the client went away, or cancelled): the rest is unread, so not reused.
            self.close()
            raise
        if message.extra or not message.keep:
            self.keep = False
        self._done()

    def _conn(self) -> _Conn:
        if self.conn is None:
            raise UpstreamError("the body was already read")
        return self.conn

    def _done(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            self.upstream._release(conn, self.keep)

    def close(self) -> None:
        """Lets go of the reply, unread: its connection is cut."""
        conn, self.conn = self.conn, None
        if conn is not None:
            self.upstream._drop(conn)
