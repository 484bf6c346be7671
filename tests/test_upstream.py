"""The proxy's HTTP/1.1 client (toolmend._upstream) against real loopback servers: chunked bodies read alike however
they are split, connections kept alive and reused, one closed by the upstream while idle replaced, a silent
upstream timed out, an unreachable one an error."""

from __future__ import annotations

import asyncio
import socket
from typing import Any, Awaitable, Callable

import pytest

from toolmend import _upstream
from toolmend._upstream import Upstream, UpstreamError

CHUNKED = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nHello\r\n1;ext=1\r\n,\r\n7\r\n world!\r\n0\r\nx-trailer: 1\r\n\r\n"


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


def _answering(response: bytes, step: int = 0, then_close: bool = True) -> Handler:
    """A server that answers each request with ``response``, written ``step`` bytes at a time (0: at once)."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await _read_request(reader) is not None:
            for i in range(0, len(response), step or len(response)):
                writer.write(response[i : i + (step or len(response))])
                await writer.drain()
                await asyncio.sleep(0.001 if step else 0)
            if then_close:
                break
        writer.close()

    return handler


@pytest.mark.parametrize("step", [1, 3, 7, 0])
def test_a_chunked_body_split_anywhere_is_read_alike_and_the_connection_kept(step: int) -> None:
    async def client(url: str) -> list[bytes]:
        upstream = Upstream(url)
        bodies = []
        for _ in range(2):
            reply = await upstream.request("GET", b"/x", [], b"")
            assert reply.framing == "chunked" and (b"transfer-encoding", b"chunked") in reply.headers
            bodies.append(await reply.read())
        assert len(upstream._idle) == 1  # the one connection, back in the pool
        await upstream.aclose()
        return bodies

    assert _serve(_answering(CHUNKED, step, then_close=False), client) == [b"Hello, world!"] * 2


# Each malformed response is refused with its code, within the test's few seconds (no hang), and its connection cut.
MALFORMED = {
    "bad status line": (b"HTTP/1.1 OK 200\r\ncontent-length: 2\r\n\r\n{}", "upstream_malformed"),
    "not HTTP": (b"SSH-2.0-OpenSSH_9.6\r\n\r\n", "upstream_malformed"),
    "bad chunk size": (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\nab\r\n0\r\n\r\n", "upstream_malformed"),
    "chunk longer than its size": (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n", "upstream_malformed"),
    "bad content-length": (b"HTTP/1.1 200 OK\r\ncontent-length: 1x\r\n\r\n{}", "upstream_malformed"),
    "truncated body": (b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n{}", "upstream_closed"),
    "truncated chunked body": (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nHel", "upstream_closed"),
    "truncated head": (b"HTTP/1.1 200 OK\r\ncontent-le", "upstream_closed"),
    "oversized headers": (b"HTTP/1.1 200 OK\r\n" + b"x-pad: %s\r\n" % (b"a" * 8192) * 200 + b"\r\n", "upstream_malformed"),
}


@pytest.mark.parametrize("name", list(MALFORMED))
def test_a_malformed_response_is_refused_with_its_code(name: str) -> None:
    response, code = MALFORMED[name]

    async def client(url: str) -> str:
        upstream = Upstream(url, read_timeout=5)
        try:
            with pytest.raises(UpstreamError) as refused:
                reply = await upstream.request("GET", b"/x", [], b"")
                await reply.read()
            assert not upstream._idle and not upstream._busy
            return refused.value.code
        finally:
            await upstream.aclose()

    assert _serve(_answering(response), client) == code


def test_a_body_over_the_bound_is_refused_before_it_is_read_whole() -> None:
    async def client(url: str) -> list[str]:
        codes = []
        upstream = Upstream(url, max_body=1000)
        for _ in range(2):
            with pytest.raises(UpstreamError) as refused:
                reply = await upstream.request("GET", b"/x", [], b"")
                await reply.read()
            codes.append(refused.value.code)
        await upstream.aclose()
        return codes

    replies = iter([b"HTTP/1.1 200 OK\r\ncontent-length: 2000\r\n\r\n" + b"a" * 2000, b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n" + (b"400\r\n" + b"a" * 1024 + b"\r\n") * 2 + b"0\r\n\r\n"])

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if await _read_request(reader) is not None:
            writer.write(next(replies))
            await writer.drain()
        writer.close()

    assert _serve(handler, client) == ["upstream_too_large", "upstream_too_large"]
    assert _upstream._LIMIT < 200 * 8192  # the oversized headers above are over the bound
