"""The proxy's HTTP/1.1 client (toolmend._upstream) against real loopback servers: chunked bodies read alike however
they are split, connections kept alive and reused, one closed by the upstream while idle replaced, a silent
upstream timed out, an unreachable one an error."""

from __future__ import annotations

import asyncio
import socket
from typing import Any, Awaitable, Callable

import pytest

from toolmend._upstream import Upstream, UpstreamError, _Dechunker

CHUNKED = b"5\r\nHello\r\n1;ext=1\r\n,\r\n7\r\n world!\r\n0\r\nx-trailer: 1\r\n\r\n"


@pytest.mark.parametrize("step", [1, 2, 3, 7, len(CHUNKED)])
def test_a_chunked_body_split_anywhere_is_read_alike(step: int) -> None:
    chunks = _Dechunker()
    got = b"".join(chunks.feed(CHUNKED[i : i + step]) for i in range(0, len(CHUNKED), step))
    assert got == b"Hello, world!" and chunks.done and chunks.rest == b""


@pytest.mark.parametrize("bad", [b"zz\r\nx\r\n", b"-1\r\nx\r\n", b"2\r\nabc\r\n"])
def test_a_malformed_chunked_body_is_refused(bad: bytes) -> None:
    with pytest.raises(ValueError):
        _Dechunker().feed(bad)


Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def _serve(handler: Handler, client: Callable[[str], Awaitable[Any]]) -> Any:
    """Runs ``client(url)`` against a loopback server whose connections ``handler`` serves."""

    async def main() -> Any:
        server = await asyncio.start_server(handler, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            return await asyncio.wait_for(client(f"http://127.0.0.1:{port}/v1"), 10)
        finally:
            server.close()

    return asyncio.run(main())


async def _read_request(reader: asyncio.StreamReader) -> bytes | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return head + await reader.readexactly(length)


def test_connections_are_kept_alive_and_one_the_upstream_closes_is_replaced() -> None:
    connections: list[int] = []
    seen: list[bytes] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        for n in range(4):  # the fourth request is not answered: the connection is closed, as an idle timeout would
            request = await _read_request(reader)
            if request is None or n == 3:
                break
            seen.append(request)
            body = b'{"n": %d}' % n
            chunked = n % 2 == 1
            head = b"HTTP/1.1 200 OK\r\n" + (b"transfer-encoding: chunked\r\n\r\n" if chunked else b"content-length: %d\r\n\r\n" % len(body))
            writer.write(head + (b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body) if chunked else body))
            await writer.drain()
        writer.close()

    async def client(url: str) -> list[bytes]:
        upstream = Upstream(url)
        bodies = []
        for i in range(5):
            reply = await upstream.request("POST", b"/chat/completions?x=%d" % i, [(b"content-type", b"application/json")], b'{"i": %d}' % i)
            assert reply.status_code == 200
            bodies.append(await reply.read())
        await upstream.aclose()
        return bodies

    bodies = _serve(handler, client)
    assert bodies == [b'{"n": 0}', b'{"n": 1}', b'{"n": 2}', b'{"n": 0}', b'{"n": 1}']
    assert len(connections) == 2  # five requests on two connections, the fourth sent again on the second
    first = seen[0].split(b"\r\n")
    assert first[0] == b"POST /v1/chat/completions?x=0 HTTP/1.1" and b"content-length: 8" in first
    assert seen[0].endswith(b'{"i": 0}')


def test_a_silent_upstream_times_out_and_an_absent_one_is_an_error() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        await asyncio.sleep(5)

    async def client(url: str) -> str:
        upstream = Upstream(url, read_timeout=0.2)
        try:
            with pytest.raises(UpstreamError, match="timed out"):
                await upstream.request("POST", b"/chat/completions", [], b"{}")
        finally:
            await upstream.aclose()
        return "ok"

    assert _serve(silent, client) == "ok"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]  # bound, never listening: connections are refused

        async def absent() -> None:
            with pytest.raises(UpstreamError, match="could not connect"):
                await Upstream(f"http://127.0.0.1:{closed}").request("GET", b"/", [], b"")

        asyncio.run(absent())


def test_only_http_urls_are_upstreams() -> None:
    with pytest.raises(ValueError):
        Upstream("ftp://127.0.0.1/")
