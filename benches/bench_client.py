"""The client's cost over the wire it drives (pytest-benchmark): a chat whose first reply is valid, against a
bare ``httpx`` POST of the same request and ``orjson.loads`` of the same reply, both over one keep-alive
connection to the loopback server (tests/ollama_server.py) on 127.0.0.1, per provider.

Full run:         python -m pytest benches/bench_client.py --benchmark-only --benchmark-group-by=param:provider
Smoke pass (CI):  python -m pytest benches --benchmark-disable   (each benchmark once)

The ratios (client / bare, of the minimum and the median, per provider) are printed after a timed run (``-s``);
the target is 1.2x or less. On a busy machine the minimum is the steadier of the two. Both
sides pay the same server (a Python thread answering each request), so the ratio is what the client adds to a
round trip: building and checking the request, the attempt loop, the checked calls, the ledger.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any, Iterator

import httpx
import orjson
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from ollama_server import ScriptedOllama, chat_reply  # noqa: E402
from openai_server import completion  # noqa: E402
from toolmend import OllamaClient, OpenAICompatibleClient, RetryConfig, ToolRegistry  # noqa: E402

SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "lines": {"type": "integer", "minimum": 1}},
    "required": ["path"],
}
CALL = {"name": "read_file", "arguments": {"path": "src/toolmend/client/engine.py", "lines": 120}, "id": "call_1"}
MESSAGES = [
    {"role": "system", "content": "You are a coding agent. Use the tools to read files."},
    {"role": "user", "content": "Read the engine and tell me how the attempt loop ends."},
]
PROVIDERS = {
    "ollama": ("/api/chat", chat_reply(CALL).body),
    "openai": ("/v1/chat/completions", completion(CALL).body),
}
#: (min, median) of the timed runs, for the ratios printed at the end.
TIMES: dict[tuple[str, str], tuple[float, float]] = {}


@pytest.fixture(scope="module", autouse=True)
def ratio(request: pytest.FixtureRequest) -> Iterator[None]:
    """Prints client / bare per provider after a timed run (nothing when benchmarks were disabled)."""
    yield
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    for name in sorted(PROVIDERS):
        bare, client = TIMES.get((name, "bare")), TIMES.get((name, "client"))
        if bare and client and reporter is not None:
            reporter.write_line(
                f"{name}: client / bare httpx + orjson: min {client[0] * 1e6:.0f} / {bare[0] * 1e6:.0f} us = "
                f"{client[0] / bare[0]:.2f}x, median {client[1] * 1e6:.0f} / {bare[1] * 1e6:.0f} us = {client[1] / bare[1]:.2f}x"
            )


@pytest.fixture(scope="module")
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


@pytest.fixture(scope="module", params=sorted(PROVIDERS))
def provider(request: pytest.FixtureRequest) -> Iterator[tuple[str, ScriptedOllama]]:
    name = request.param
    body = PROVIDERS[name][1]
    from ollama_server import Reply

    with ScriptedOllama(lambda _: Reply(body=body), keep_alive=True) as server:
        yield name, server


def registry() -> ToolRegistry:
    reg = ToolRegistry()
    reg.register("read_file", SCHEMA, description="Read a file")
    return reg


def _timed(benchmark: Any, loop: asyncio.AbstractEventLoop, make: Any, key: tuple[str, str]) -> Any:
    result = benchmark(lambda: loop.run_until_complete(make()))
    stats = getattr(benchmark, "stats", None)
    if stats is not None and getattr(stats, "stats", None) is not None:
        TIMES[key] = (stats.stats.min, stats.stats.median)
    return result


def test_bare_httpx_post_and_orjson(benchmark: Any, loop: asyncio.AbstractEventLoop, provider: tuple[str, ScriptedOllama]) -> None:
    name, server = provider
    path = PROVIDERS[name][0]
    reg = registry()
    tools = [{"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.schema}} for t in reg.tools()]
    payload = {"model": "test-model", "messages": MESSAGES, "stream": False, "tools": tools}
    http = httpx.AsyncClient(base_url=server.url)

    async def once() -> Any:
        response = await http.post(path, content=orjson.dumps(payload), headers={"content-type": "application/json"})
        return orjson.loads(response.content)

    benchmark.group = f"client-{name}"
    reply = _timed(benchmark, loop, once, (name, "bare"))
    loop.run_until_complete(http.aclose())
    assert reply["model"] == "test-model"


def test_client_chat_first_reply_valid(benchmark: Any, loop: asyncio.AbstractEventLoop, provider: tuple[str, ScriptedOllama]) -> None:
    name, server = provider
    reg = registry()
    if name == "ollama":
        client: Any = OllamaClient(server.url, "test-model", reg, RetryConfig())
    else:
        client = OpenAICompatibleClient(server.url + "/v1", "test-model", None, reg, RetryConfig())

    benchmark.group = f"client-{name}"
    result = _timed(benchmark, loop, lambda: client.chat(MESSAGES), (name, "client"))
    loop.run_until_complete(client.aclose())
    assert [a.lane for a in result.attempts] == ["ok"] and result.tool_calls[0].arguments["lines"] == 120


# ---- interleaved: `python benches/bench_client.py [rounds] [chats]` -----------------------------------------
# The pytest-benchmark runs above time one side after the other, so a neighbour's burst of work lands on one
# side only. This alternates the two in short batches, many times, and compares the fastest batch of each:
# the steadiest figure on a shared machine.


def interleaved(rounds: int = 30, chats: int = 100) -> dict[str, tuple[float, float]]:
    import time

    from ollama_server import Reply

    out: dict[str, tuple[float, float]] = {}
    for name, (path, body) in sorted(PROVIDERS.items()):
        with ScriptedOllama(lambda _: Reply(body=body), keep_alive=True) as server:
            loop = asyncio.new_event_loop()
            reg = registry()
            if name == "ollama":
                client: Any = OllamaClient(server.url, "test-model", reg, RetryConfig())
            else:
                client = OpenAICompatibleClient(server.url + "/v1", "test-model", None, reg, RetryConfig())
            tools = [{"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.schema}} for t in reg.tools()]
            payload = {"model": "test-model", "messages": MESSAGES, "stream": False, "tools": tools}
            http = httpx.AsyncClient(base_url=server.url)

            async def bare_batch() -> None:
                for _ in range(chats):
                    response = await http.post(path, content=orjson.dumps(payload), headers={"content-type": "application/json"})
                    orjson.loads(response.content)

            async def client_batch() -> None:
                for _ in range(chats):
                    await client.chat(MESSAGES)

            best = {"bare": float("inf"), "client": float("inf")}
            for _ in range(rounds):
                for side, batch in (("bare", bare_batch), ("client", client_batch)):
                    start = time.perf_counter()
                    loop.run_until_complete(batch())
                    best[side] = min(best[side], (time.perf_counter() - start) / chats)
            loop.run_until_complete(http.aclose())
            loop.run_until_complete(client.aclose())
            loop.close()
            out[name] = (best["client"], best["bare"])
    return out


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:3]]
    for provider_name, (client_s, bare_s) in interleaved(*args).items():
        print(f"{provider_name}: client {client_s * 1e6:.0f} us, bare httpx + orjson {bare_s * 1e6:.0f} us: {client_s / bare_s:.2f}x")
