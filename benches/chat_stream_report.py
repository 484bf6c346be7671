"""chat_stream's cost as a stream grows, beside bare httpx line iteration of the same stream, over real HTTP to
the loopback server of tests/ollama_server.py (OpenAI-compatible SSE, 20-byte argument pieces).

    python benches/chat_stream_report.py          (release build: maturin develop --release)

Two shapes, each at 256 KB and 1 MB of arguments: one call whose one string argument is long (a file written),
and many small calls (code-edit records, one call each). For each: the seconds of a whole chat_stream turn
(events read as a caller reads them, ``partial`` never touched), the MB/s of arguments, the seconds of reading
the same response's lines with httpx alone, and the growth from 256 KB to 1 MB (4x the arguments; linear is
4x, the issue's bound 5x). Best of three turns each.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from ollama_server import Reply, ScriptedOllama  # noqa: E402
from openai_server import chunk, event  # noqa: E402
from toolmend import OpenAICompatibleClient, RetryConfig  # noqa: E402

PIECE = 20


def long_string(size: int) -> list[bytes]:
    arguments = json.dumps({"path": "notes.txt", "content": ("Line of text with \"quotes\" and é.\n" * size)[:size]})
    first = {"index": 0, "id": "call_0", "type": "function", "function": {"name": "write_file", "arguments": ""}}
    lines = [event(chunk({"role": "assistant", "tool_calls": [first]}))]
    for at in range(0, len(arguments), PIECE):
        lines.append(event(chunk({"tool_calls": [{"index": 0, "function": {"arguments": arguments[at : at + PIECE]}}]})))
    return lines + [event(chunk({}, "tool_calls")), event(b"[DONE]")]


def many_calls(size: int) -> list[bytes]:
    lines = [event(chunk({"role": "assistant"}))]
    total, i = 0, 0
    while total < size:
        arguments = json.dumps({"path": f"src/mod_{i}.py", "line": i % 997, "score": i / 7, "ok": i % 2 == 0, "old": "a\\tb", "new": "é"})
        first = {"index": i, "id": f"call_{i}", "type": "function", "function": {"name": "edit", "arguments": ""}}
        lines.append(event(chunk({"tool_calls": [first]})))
        for at in range(0, len(arguments), PIECE):
            lines.append(event(chunk({"tool_calls": [{"index": i, "function": {"arguments": arguments[at : at + PIECE]}}]})))
        total += len(arguments)
        i += 1
    return lines + [event(chunk({}, "tool_calls")), event(b"[DONE]")]


async def turn(url: str) -> float:
    async with OpenAICompatibleClient(url + "/v1", "m", config=RetryConfig(max_retries=0, max_size=8 << 20, max_response_bytes=256 << 20)) as client:
        start = time.perf_counter()
        async for _ in client.chat_stream([{"role": "user", "content": "go"}]):
            pass
        return time.perf_counter() - start


async def bare(url: str) -> float:
    async with httpx.AsyncClient() as client:
        start = time.perf_counter()
        async with client.stream("POST", url + "/v1/chat/completions", json={"stream": True}) as response:
            async for _ in response.aiter_lines():
                pass
        return time.perf_counter() - start


def measure(lines: list[bytes]) -> tuple[float, float]:
    body = b"".join(lines)
    with ScriptedOllama(lambda _: Reply(lines=[body], content_type="text/event-stream")) as server:
        client = min(asyncio.run(turn(server.url)) for _ in range(3))
        httpx_only = min(asyncio.run(bare(server.url)) for _ in range(3))
    return client, httpx_only


def main() -> None:
    for name, make in (("one long string", long_string), ("many calls", many_calls)):
        seconds: dict[int, float] = {}
        for size in (256 * 1024, 1024 * 1024):
            client, httpx_only = measure(make(size))
            seconds[size] = client
            print(
                f"{name}, {size // 1024} KB: chat_stream {client:.3f} s ({size / client / 1e6:.2f} MB/s), "
                f"httpx lines {httpx_only:.3f} s ({client / httpx_only:.1f}x)"
            )
        print(f"{name}: 4x the arguments cost {seconds[1024 * 1024] / seconds[256 * 1024]:.2f}x the time")


if __name__ == "__main__":
    main()
