"""What `toolmend proxy` adds to a reply's latency, measured against the same upstream reached directly.

Three kinds of process on loopback, each as cheap as it can be so that what is measured is the proxy:

- an OpenAI-compatible upstream written on raw asyncio (uvloop where installed): a whole reply at once (or, for
  the "model-paced" row, after the 50-150 ms each request asks for, as a fast model would: the same seeded draws
  on both paths, each taken off its request's time), or a stream of 40 text chunks paced 1 ms
  apart, each stamped with the system's monotonic clock, then a call;
- the proxy, started as users start it: `toolmend proxy --upstream URL --workers N`;
- this script as the clients, on raw asyncio too (keep-alive HTTP/1.1 connections, one per concurrent client).

Direct and proxied requests alternate in rounds, so both meet the same load from the machine's other work.

- whole replies (each carries a broken call the proxy mends): the added latency (via the proxy minus direct)
  at p50 one at a time, and at p99 with 50 clients at once, each sending its next request as soon as its last
  reply is in (a closed loop against an upstream that answers at once: this saturates the proxy, so it
  measures its throughput: each request waits behind the others, about 50 x its CPU per reply / workers);
  the same 50 clients against the model-paced upstream; and per reply the proxy's CPU time and the time it
  waited, ready, for a CPU that other processes held (the kernel's schedstat, all its processes);
- streams: how long after the upstream sent it each chunk reaches the client, directly, through a bare TCP
  relay (no HTTP, no mending: what any process in the path costs on the machine) and through the proxy;
- 500 streams at once through the proxy: every chunk and every call arrives.

    python benches/proxy_latency.py [--requests 2000] [--workers 1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import subprocess
import sys
import time
from typing import Any

import httptools  # the chunked bodies read by the parser the proxy reads its upstream with

TOOLS = [{"type": "function", "function": {"name": "read_file", "description": "Read", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}]
CHUNKS = 40
WHOLE = json.dumps(
    {
        "id": "c", "object": "chat.completion", "model": "m",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{'path': 'a.txt',}"}}]}}],
    }
).encode()


def _run(main: Any) -> Any:
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main)
    return uvloop.run(main)


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# ---- the upstream ------------------------------------------------------------------------------------------


class _Upstream(asyncio.Protocol):
    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        self.buffer = b""

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while (end := self.buffer.find(b"\r\n\r\n")) >= 0:
            length = 0
            for line in self.buffer[:end].split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if len(self.buffer) < end + 4 + length:
                return
            body, self.buffer = self.buffer[end + 4 : end + 4 + length], self.buffer[end + 4 + length :]
            asked = json.loads(body)
            if asked.get("stream"):
                asyncio.get_running_loop().create_task(self.stream())
            elif asked.get("paced_ms"):
                asyncio.get_running_loop().call_later(asked["paced_ms"] / 1e3, self.whole)
            else:
                self.whole()

    def whole(self) -> None:
        if not self.transport.is_closing():
            self.transport.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(WHOLE), WHOLE))

    async def stream(self) -> None:
        write = self.transport.write
        write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")

        def event(data: Any) -> None:
            line = b"data: " + json.dumps(data).encode() + b"\n\n"
            write(b"%x\r\n%s\r\n" % (len(line), line))

        for _ in range(CHUNKS):
            event({"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": [{"index": 0, "delta": {"content": f"t{time.monotonic_ns()} "}, "finish_reason": None}]})
            await asyncio.sleep(0.001)
        call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{'path': 'a.txt',}"}}
        event({"id": "c", "choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}]})
        event({"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
        line = b"data: [DONE]\n\n"
        write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(line), line))


async def _serve_upstream(port: int) -> None:
    server = await asyncio.get_running_loop().create_server(_Upstream, "127.0.0.1", port, backlog=4096)
    await server.serve_forever()


async def _serve_relay(port: int, upstream: int) -> None:
    """A bare TCP relay to the upstream (no HTTP, no mending): what any process in the path costs here."""

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
        except OSError:
            pass
        writer.close()

    async def relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", upstream)
        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    server = await asyncio.start_server(relay, "127.0.0.1", port, backlog=4096)
    await server.serve_forever()


# ---- the clients -------------------------------------------------------------------------------------------


class _Client:
    """One keep-alive HTTP/1.1 connection."""

    def __init__(self, port: int) -> None:
        self.port = port

    async def open(self) -> _Client:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port, limit=1 << 20)
        return self

    def close(self) -> None:
        self.writer.close()

    def send(self, body: bytes) -> None:
        head = b"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1:%d\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n"
        self.writer.write(head % (self.port, len(body)) + body)

    async def head(self) -> tuple[int, bool, int]:
        self.raw = raw = await self.reader.readuntil(b"\r\n\r\n")
        length, chunked = -1, False
        for line in raw.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"transfer-encoding":
                chunked = b"chunked" in value.lower()
        return int(raw[9:12]), chunked, length

    async def whole(self, body: bytes) -> float:
        """One whole reply's time, in ms (on a new connection if the server had closed this one, as pools do)."""
        started = time.perf_counter_ns()
        self.send(body)
        try:
            status, chunked, length = await self.head()
        except (asyncio.IncompleteReadError, ConnectionError):
            self.close()
            await self.open()
            started = time.perf_counter_ns()
            self.send(body)
            status, chunked, length = await self.head()
        if chunked:
            async for _ in self.pieces():
                pass
        else:
            await self.reader.readexactly(length)
        elapsed = (time.perf_counter_ns() - started) / 1e6
        assert status == 200, status
        return elapsed

    async def pieces(self) -> Any:
        chunks = _Chunks()
        parser = httptools.HttpResponseParser(chunks)
        parser.feed_data(self.raw)  # the head read by head(), so that the parser frames the body after it
        while not chunks.done:
            data = await self.reader.read(65536)
            if not data:
                raise ConnectionError("the stream broke off")
            parser.feed_data(data)
            if chunks.pieces:
                piece = b"".join(chunks.pieces)
                chunks.pieces.clear()
                yield piece

    async def stream(self, body: bytes) -> tuple[list[float], int, int]:
        """One stream: each chunk's delay from the upstream's stamp to its arrival (ms), chunks, calls."""
        self.send(body)
        status, chunked, _ = await self.head()
        assert status == 200 and chunked, status
        delays: list[float] = []
        chunks = calls = 0
        buffer = b""
        async for piece in self.pieces():
            now = time.monotonic_ns()
            buffer += piece
            *events, buffer = buffer.split(b"\n\n")
            for event in events:
                if not event.startswith(b"data: {"):
                    continue
                choice = (json.loads(event[6:]).get("choices") or [{}])[0]
                delta = choice.get("delta") or {}
                for stamp in (delta.get("content") or "").split():
                    delays.append((now - int(stamp[1:])) / 1e6)
                    chunks += 1
                calls += len(delta.get("tool_calls") or [])
        return delays, chunks, calls


class _Chunks:
    """httptools' callbacks for a body read piece by piece."""

    def __init__(self) -> None:
        self.pieces: list[bytes] = []
        self.done = False

    def on_body(self, body: bytes) -> None:
        self.pieces.append(body)

    def on_message_complete(self) -> None:
        self.done = True


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _sched(pid: int) -> tuple[float, float]:
    """Seconds ``pid`` and its children (the proxy's workers) have so far run on a CPU, and waited for one while
    ready to run (the kernel's schedstat: the second is the time other processes held the cores)."""
    ran = waited = 0.0
    pending = [pid]
    while pending:
        p = pending.pop()
        try:
            with open(f"/proc/{p}/schedstat") as f:
                fields = f.read().split()
            ran += int(fields[0]) / 1e9
            waited += int(fields[1]) / 1e9
            with open(f"/proc/{p}/task/{p}/children") as f:
                pending.extend(int(c) for c in f.read().split())
        except OSError:
            continue
    return ran, waited


async def _wait(port: int) -> None:
    for _ in range(750):  # bounded: up to 15 s
        try:
            client = await _Client(port).open()
            await client.whole(json.dumps({"model": "m", "messages": [], "tools": TOOLS}).encode())
            client.close()
            return
        except (OSError, asyncio.IncompleteReadError):
            await asyncio.sleep(0.02)
    raise SystemExit(f"port {port} did not answer")


async def _closed_loop(clients: list[_Client], body: dict[str, Any], n: int, paced: bool) -> list[float]:
    """Each reply's time (ms) from the clients sending ``n`` requests in all; when ``paced``, each request asks
    the upstream to wait 50-150 ms (the same seeded draws on both paths) and that wait is taken off its time, so
    that only what the path adds is left."""
    concurrency = len(clients)
    times: list[float] = []
    plain = json.dumps(body).encode()

    async def one(client: _Client, draws: random.Random) -> None:
        for _ in range(n // concurrency):
            wait = draws.uniform(50, 150) if paced else 0.0
            times.append(await client.whole(json.dumps({**body, "paced_ms": wait}).encode() if paced else plain) - wait)

    await asyncio.gather(*(one(c, random.Random(i)) for i, c in enumerate(clients)))
    return times


async def _whole_rows(up: int, via: int, proxy_pid: int, requests: int) -> list[tuple[str, float, float, float, float, float]]:
    """Each row: its label, direct and proxied at its quantile, the proxy's CPU per reply and its wait for a
    CPU per reply (us), the added p50."""
    body = {"model": "m", "messages": [{"role": "user", "content": "read"}], "tools": TOOLS}
    rows = []
    for label, paced, concurrency, q, n in (
        ("one at a time, p50", False, 1, 0.5, requests),
        ("50 at once, p99", False, 50, 0.99, requests * 2),
        ("50 at once, model-paced, p99", True, 50, 0.99, 1000),
    ):
        # Each path's connections are opened once for the row and kept (as an SDK's pool keeps them).
        to_via = [await _Client(via).open() for _ in range(concurrency)]
        to_up = [await _Client(up).open() for _ in range(concurrency)]
        await _closed_loop(to_via, body, min(n, 500), paced)  # warm both paths
        await _closed_loop(to_up, body, min(n, 500), paced)
        direct: list[float] = []
        proxied: list[float] = []
        cpu = wait = 0.0
        rounds = 10
        for _ in range(rounds):
            direct += await _closed_loop(to_up, body, n // rounds, paced)
            ran, waited = _sched(proxy_pid)
            proxied += await _closed_loop(to_via, body, n // rounds, paced)
            cpu += _sched(proxy_pid)[0] - ran
            wait += _sched(proxy_pid)[1] - waited
        for c in to_via + to_up:
            c.close()
        rows.append((label, _pct(direct, q), _pct(proxied, q), cpu / len(proxied) * 1e6, wait / len(proxied) * 1e6, _pct(proxied, 0.5) - _pct(direct, 0.5)))
    return rows


async def main(requests: int, workers: int) -> None:
    up, via, hop = _port(), _port(), _port()
    upstream = subprocess.Popen([sys.executable, __file__, "--serve-upstream", str(up)])
    relay = subprocess.Popen([sys.executable, __file__, "--serve-relay", str(hop), str(up)])
    command = [sys.executable, "-c", "import sys; from toolmend.cli import main; sys.exit(main(sys.argv[1:]))"]
    options = ["proxy", "--upstream", f"http://127.0.0.1:{up}", "--port", str(via)] + (["--workers", str(workers)] if workers != 1 else [])
    proxy = subprocess.Popen(command + options)
    try:
        await _wait(up)
        await _wait(hop)
        await _wait(via)
        print(f"machine: {os.cpu_count()} cores, load average at start {' '.join(open('/proc/loadavg').read().split()[:3])}")
        try:
            import httptools, uvloop  # noqa: F401, E401

            print("uvicorn: httptools and uvloop (installed); proxy workers:", workers)
        except ImportError:
            print("uvicorn: h11 and asyncio (httptools or uvloop not installed); proxy workers:", workers)
        rows = await _whole_rows(up, via, proxy.pid, requests)
        print("whole replies (ms): direct, via proxy, added; the added p50; per reply (us) the proxy's CPU, and its wait for a CPU")
        for label, direct, proxied, cpu, wait, added_p50 in rows:
            print(f"  {label:<30} {direct:8.3f} {proxied:8.3f} {proxied - direct:8.3f}   p50 added {added_p50:7.3f}   cpu {cpu:5.0f} wait {wait:5.0f}")
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "read"}], "tools": TOOLS, "stream": True}).encode()
        delays: dict[str, list[float]] = {"direct": [], "bare relay": [], "via proxy": []}
        paths = {"direct": await _Client(up).open(), "bare relay": await _Client(hop).open(), "via proxy": await _Client(via).open()}
        for client in paths.values():
            await client.stream(body)  # warm each path
        cpu = wait = 0.0
        for _ in range(100):
            for name, client in paths.items():
                if name == "via proxy":
                    ran, waited = _sched(proxy.pid)
                delays[name] += (await client.stream(body))[0]
            cpu += _sched(proxy.pid)[0] - ran
            wait += _sched(proxy.pid)[1] - waited
        for client in paths.values():
            client.close()
        chunks = len(delays["via proxy"])
        print(f"streamed chunks, upstream send to client arrival (ms), {chunks} a path: p50 / p99, added to direct")
        for name, ds in delays.items():
            p50, p99 = _pct(ds, 0.5), _pct(ds, 0.99)
            added = f"  (added p50 {p50 - _pct(delays['direct'], 0.5):.3f}, p99 {p99 - _pct(delays['direct'], 0.99):.3f})" if name != "direct" else ""
            print(f"  {name:<11} {p50:.3f} / {p99:.3f}{added}")
        print(f"  per chunk the proxy's CPU {cpu / chunks * 1e6:.0f} us, its wait for a CPU {wait / chunks * 1e6:.0f} us")
        clients = [await _Client(via).open() for _ in range(500)]
        outcomes = await asyncio.gather(*(c.stream(body) for c in clients), return_exceptions=True)
        for c in clients:
            c.close()
        many = [o for o in outcomes if not isinstance(o, BaseException)]  # a stream that failed lost all it had
        lost_chunks = 500 * CHUNKS - sum(c for _, c, _ in many)
        lost_calls = 500 - sum(k for _, _, k in many)
        print(f"500 concurrent streams via proxy: {sum(c for _, c, _ in many)} chunks, {sum(k for _, _, k in many)} calls; lost {lost_chunks} chunks, {lost_calls} calls ({500 - len(many)} streams failed)")
        if many:
            print(f"  chunk delay under that load: p50 {_pct([x for ds, _, _ in many for x in ds], 0.5):.2f} ms")
        print(f"load average at end {' '.join(open('/proc/loadavg').read().split()[:3])}")
    finally:
        for process in (proxy, relay, upstream):
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000, help="whole replies per path and row (default 2000)")
    parser.add_argument("--workers", type=int, default=1, help="the proxy's worker processes (default 1)")
    parser.add_argument("--serve-upstream", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--serve-relay", type=int, nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_upstream:
        _run(_serve_upstream(args.serve_upstream))
    elif args.serve_relay:
        _run(_serve_relay(*args.serve_relay))
    else:
        _run(main(args.requests, args.workers))
