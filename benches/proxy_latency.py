"""What `toolmend proxy` adds to a reply's latency, measured against the same upstream reached directly.

Three processes on loopback: an OpenAI-compatible upstream (Starlette + uvicorn) that answers at once, or streams
chunks paced 1 ms apart, each stamped with the system's monotonic clock; the proxy (uvicorn) in front of it; and
this script as the client (httpx, asyncio).

- whole replies: the added latency (via the proxy minus direct) at p50 with one request at a time and at p99
  with 50 at once (each reply carries a broken call the proxy mends);
- streams: how long after the upstream sent it each chunk reaches the client, via the proxy and directly (p99);
- 500 streams at once through the proxy: every chunk and every call arrives.

    python benches/proxy_latency.py [--requests 400]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import socket
import statistics
import sys
import time
from typing import Any

import httpx

TOOLS = [{"type": "function", "function": {"name": "read_file", "description": "Read", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}]
CHUNKS = 40


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _upstream(port: int) -> None:
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response, StreamingResponse
    from starlette.routing import Route

    whole = {
        "id": "c", "object": "chat.completion", "model": "m",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{'path': 'a.txt',}"}}]}}],
    }

    async def chat(request: Request) -> Response:
        body = await request.json()
        if not body.get("stream"):
            return JSONResponse(whole)

        async def events() -> Any:
            for i in range(CHUNKS):
                chunk = {"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": [{"index": 0, "delta": {"content": f"t{time.monotonic_ns()} "}, "finish_reason": None}]}
                yield b"data: " + json.dumps(chunk).encode() + b"\n\n"
                await asyncio.sleep(0.001)
            call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{'path': 'a.txt',}"}}
            yield b"data: " + json.dumps({"id": "c", "choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}]}).encode() + b"\n\n"
            yield b"data: " + json.dumps({"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}).encode() + b"\n\n"
            yield b"data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    app = Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="error", backlog=2048, limit_concurrency=4096)


def _proxy(port: int, upstream: str) -> None:
    import uvicorn

    from toolmend import proxy

    uvicorn.run(proxy.app(upstream), host="127.0.0.1", port=port, log_level="error", backlog=2048, limit_concurrency=4096)


async def _wait(url: str) -> None:
    async with httpx.AsyncClient() as http:
        for _ in range(500):  # bounded: up to 10 s
            try:
                await http.post(url + "/v1/chat/completions", json={"model": "m", "messages": [], "tools": TOOLS})
                return
            except httpx.TransportError:
                await asyncio.sleep(0.02)
    raise SystemExit(f"{url} did not start")


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


async def _whole(http: httpx.AsyncClient, url: str, n: int, concurrency: int) -> list[float]:
    body = {"model": "m", "messages": [{"role": "user", "content": "read"}], "tools": TOOLS}
    times: list[float] = []

    async def one() -> None:
        for _ in range(n // concurrency):
            t = time.perf_counter()
            reply = await http.post(url + "/v1/chat/completions", json=body)
            times.append(time.perf_counter() - t)
            assert reply.status_code == 200

    await asyncio.gather(*(one() for _ in range(concurrency)))
    return times


async def _stream(http: httpx.AsyncClient, url: str) -> tuple[list[float], int, int]:
    body = {"model": "m", "messages": [{"role": "user", "content": "read"}], "tools": TOOLS, "stream": True}
    delays: list[float] = []
    chunks = calls = 0
    async with http.stream("POST", url + "/v1/chat/completions", json=body) as reply:
        async for line in reply.aiter_lines():
            if not line.startswith("data: {"):
                continue
            now = time.monotonic_ns()
            choice = (json.loads(line[6:]).get("choices") or [{}])[0]
            delta = choice.get("delta") or {}
            for stamp in (delta.get("content") or "").split():
                delays.append((now - int(stamp[1:])) / 1e6)
                chunks += 1
            calls += len(delta.get("tool_calls") or [])
    return delays, chunks, calls


async def main(requests: int) -> None:
    up_port, proxy_port = _port(), _port()
    upstream = f"http://127.0.0.1:{up_port}"
    via = f"http://127.0.0.1:{proxy_port}"
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_upstream, args=(up_port,), daemon=True), ctx.Process(target=_proxy, args=(proxy_port, upstream), daemon=True)]
    for p in procs:
        p.start()
    try:
        await _wait(upstream)
        await _wait(via)
        limits = httpx.Limits(max_connections=1000, max_keepalive_connections=1000)
        async with httpx.AsyncClient(limits=limits, timeout=60) as http:
            rows = []
            for concurrency in (1, 50):
                await _whole(http, via, 50, 1)  # warm both paths
                await _whole(http, upstream, 50, 1)
                direct = await _whole(http, upstream, requests, concurrency)
                proxied = await _whole(http, via, requests, concurrency)
                q = 0.5 if concurrency == 1 else 0.99
                rows.append((concurrency, q, _pct(direct, q) * 1e3, _pct(proxied, q) * 1e3))
            print("whole replies (ms): concurrency, quantile, direct, via proxy, added")
            for c, q, d, p in rows:
                print(f"  {c:>3}  p{int(q * 100):<3} {d:7.3f} {p:7.3f} {p - d:7.3f}")
            direct_d: list[float] = []
            proxied_d: list[float] = []
            for _ in range(20):
                direct_d += (await _stream(http, upstream))[0]
                proxied_d += (await _stream(http, via))[0]
            print("streamed chunks, upstream send to client arrival (ms): p50 / p99")
            print(f"  direct     {_pct(direct_d, 0.5):.3f} / {_pct(direct_d, 0.99):.3f}")
            print(f"  via proxy  {_pct(proxied_d, 0.5):.3f} / {_pct(proxied_d, 0.99):.3f}  (added p99 {_pct(proxied_d, 0.99) - _pct(direct_d, 0.99):.3f})")
            many = await asyncio.gather(*(_stream(http, via) for _ in range(500)))
            lost_chunks = sum(CHUNKS - c for _, c, _ in many)
            lost_calls = sum(1 - k for _, _, k in many)
            print(f"500 concurrent streams via proxy: {sum(c for _, c, _ in many)} chunks, {sum(k for _, _, k in many)} calls; lost {lost_chunks} chunks, {lost_calls} calls")
            print(f"  chunk delay under that load: p50 {statistics.median(d for ds, _, _ in many for d in ds):.2f} ms")
    finally:
        for p in procs:
            p.terminate()
            p.join(timeout=5)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=400)
    args = parser.parse_args()
    asyncio.run(main(args.requests))
    sys.exit(0)
