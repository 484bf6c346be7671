"""Load with faults: many concurrent chats through one OllamaClient against the loopback server, which
injects faults at random with a fixed seed. Every session must end with valid tool calls or a typed toolmend
error; none hangs or is lost, and no task or connection is left behind.

CI runs 300 sessions (150 per provider and entry point); ``TOOLMEND_LOAD_SESSIONS=1000 python -m pytest
tests/test_load.py -s`` runs the full load: 1,000 concurrent chats through one client, per provider, through
``chat`` and ``chat_stream``. ``-m "not load"`` leaves them out.
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import threading
import time
from collections import Counter
from typing import Any

import pytest

from ollama_server import Reply, ScriptedOllama, chat_reply, settled_task_count
from toolmend import ToolmendError, ToolRegistry
from toolmend.config import RetryConfig
from toolmend.ollama import OllamaClient
from wires import WIRES

SESSIONS = int(os.environ.get("TOOLMEND_LOAD_SESSIONS", "300"))
SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string", "pattern": "^[a-z0-9_./]+$"}, "lines": {"type": "integer", "minimum": 1}},
    "required": ["path"],
}


def faulty(seed: int) -> Any:
    """Replies chosen at random (fixed seed): mostly valid calls, and every kind of fault."""
    rng = random.Random(seed)
    lock = threading.Lock()

    def reply(_: Any) -> Reply:
        with lock:
            roll = rng.random()
            n = rng.randrange(1000)
        if roll < 0.55:
            return chat_reply({"name": "read_file", "arguments": {"path": f"f{n}.txt", "lines": 1 + n % 50}})
        if roll < 0.62:
            return chat_reply({"name": "read_file", "arguments": "{'path': 'f%d.txt',}" % n})  # repaired
        if roll < 0.70:
            return chat_reply({"name": "read_file", "arguments": "path is f.txt"})  # unrepairable: reflect
        if roll < 0.77:
            return chat_reply({"name": "read_file", "arguments": {"path": "../etc/passwd", "lines": "12"}})
        if roll < 0.81:
            return Reply(429, {"error": "slow down"}, {"Retry-After": "0"})
        if roll < 0.85:
            return Reply(500, {"error": "model runner has unexpectedly stopped"})
        if roll < 0.89:
            return Reply(drop=True)
        if roll < 0.91:
            return Reply(400, {"error": "m does not support tools"})
        if roll < 0.94:
            raw = "error parsing tool call: raw='{\"path\": \"s%d.txt\"', err=unexpected end of JSON input" % n
            return Reply(500, {"error": raw})
        return Reply(body=chat_reply({"name": "read_file", "arguments": {"path": "slow.txt"}}).body, delay_s=0.05)

    return reply


async def _instant(_: float) -> None:
    return None


@pytest.mark.load
def test_sessions_under_faults_end_in_calls_or_typed_errors() -> None:
    registry = ToolRegistry()
    registry.register("read_file", SCHEMA, description="Read")
    outcomes: Counter[str] = Counter()
    latencies: list[float] = []

    async def run(server: ScriptedOllama) -> float:
        tasks_before = len(asyncio.all_tasks())
        config = RetryConfig(max_retries=3, model_http_retries=3, max_connections=50, deadline_s=60)
        async with OllamaClient(server.url, "m", registry, config, sleep=_instant) as client:

            async def session() -> None:
                t0 = time.perf_counter()
                try:
                    result = await client.chat([{"role": "user", "content": "read a file"}])
                except ToolmendError as e:
                    outcomes[type(e).__name__] += 1
                else:
                    outcomes["calls"] += 1
                    for call in result.tool_calls:  # nothing the schema forbids gets through
                        assert registry.try_validate(call.name, call.arguments).ok, call
                finally:
                    latencies.append(time.perf_counter() - t0)

            start = time.perf_counter()
            await asyncio.wait_for(asyncio.gather(*(session() for _ in range(SESSIONS))), timeout=120)
            elapsed = time.perf_counter() - start
        assert await settled_task_count(tasks_before) == tasks_before
        return elapsed

    with ScriptedOllama(faulty(seed=20261123)) as server:
        elapsed = asyncio.run(run(server))
        assert server.connections_after_close() == 0
    assert sum(outcomes.values()) == SESSIONS == len(latencies)  # none lost
    assert outcomes["calls"] > SESSIONS // 2
    assert set(outcomes) <= {"calls", "ModelHTTPError", "RetryExhaustedError"}
    q = statistics.quantiles(latencies, n=100)
    print(
        f"\n{SESSIONS} sessions in {elapsed:.2f}s ({SESSIONS / elapsed:.0f}/s); "
        f"p50 {q[49] * 1000:.1f} ms, p99 {q[98] * 1000:.1f} ms; outcomes {dict(outcomes)}"
    )


# ---- both providers, both entry points ---------------------------------------------------------------

#: Sessions per provider and entry point: a quick run by default, the full load with TOOLMEND_LOAD_SESSIONS=1000.
CLIENT_SESSIONS = int(os.environ.get("TOOLMEND_LOAD_SESSIONS", "150"))


def faulty_wire(wire: Any, seed: int) -> Any:
    """Replies of one provider's shape chosen at random (fixed seed), every lane among them."""
    rng = random.Random(seed)
    lock = threading.Lock()

    def reply(_: Any) -> Reply:
        with lock:
            roll = rng.random()
            n = rng.randrange(1000)
        if roll < 0.55:
            return wire.calls({"name": "read_file", "arguments": {"path": f"f{n}.txt", "lines": 1 + n % 50}})
        if roll < 0.62:
            return wire.calls({"name": "read_file", "arguments": "{'path': 'f%d.txt',}" % n})  # repaired
        if roll < 0.70:
            return wire.calls({"name": "read_file", "arguments": "path is f.txt"})  # unrepairable: reflect
        if roll < 0.77:
            return wire.calls({"name": "read_file", "arguments": {"path": "../etc/passwd", "lines": "12"}})
        if roll < 0.81:
            return wire.error(429, "slow down", {"Retry-After": "0"})
        if roll < 0.85:
            return wire.error(500, "model runner has unexpectedly stopped")
        if roll < 0.89:
            return Reply(drop=True)
        if roll < 0.91:
            return wire.error(400, "m does not support tools")
        if roll < 0.94:
            return wire.error(500, "error parsing tool call: raw='{\"path\": \"s%d.txt\"', err=unexpected end of JSON input" % n)
        slow = wire.calls({"name": "read_file", "arguments": {"path": "slow.txt"}})
        slow.delay_s = 0.05
        return slow

    return reply


@pytest.mark.load
@pytest.mark.parametrize("wire", WIRES, ids=str)
def test_concurrent_chats_per_provider_under_faults(wire: Any) -> None:
    registry = ToolRegistry()
    registry.register("read_file", SCHEMA, description="Read")
    outcomes: Counter[str] = Counter()

    async def run(server: ScriptedOllama) -> tuple[float, dict[str, Any]]:
        tasks_before = len(asyncio.all_tasks())
        config = RetryConfig(max_retries=3, model_http_retries=3, max_connections=50, deadline_s=60)
        async with wire.client(server, registry, config) as client:

            async def one() -> None:
                try:
                    result = await wire.turn(client, messages=[{"role": "user", "content": "read a file"}])
                except ToolmendError as e:
                    outcomes[type(e).__name__] += 1
                else:
                    outcomes["calls"] += 1
                    for call in result.tool_calls:
                        assert registry.try_validate(call.name, call.arguments).ok, call

            start = time.perf_counter()
            await asyncio.wait_for(asyncio.gather(*(one() for _ in range(CLIENT_SESSIONS))), timeout=300)
            elapsed = time.perf_counter() - start
            stats = client.stats()
        assert await settled_task_count(tasks_before) == tasks_before
        return elapsed, stats

    with ScriptedOllama(faulty_wire(wire, seed=20261124)) as server:
        elapsed, stats = asyncio.run(run(server))
        assert server.connections_after_close() == 0
    assert sum(outcomes.values()) == CLIENT_SESSIONS == stats["chats"]  # none lost
    assert outcomes["calls"] > CLIENT_SESSIONS // 2 and stats["chats_ok"] == outcomes["calls"]
    assert set(outcomes) <= {"calls", "ModelHTTPError", "RetryExhaustedError"}
    print(f"\n{wire}: {CLIENT_SESSIONS} chats in {elapsed:.2f}s ({CLIENT_SESSIONS / elapsed:.0f}/s); outcomes {dict(outcomes)}")
