"""The sync clients over real HTTP on 127.0.0.1: the async engine on a private loop thread, the same results and
errors as the async clients, inside a running event loop too (a notebook), and no thread left after close."""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from typing import Any

import pytest

import toolmend
from ollama_server import ScriptedOllama
from toolmend import RetryConfig, SyncOllamaClient, SyncOpenAICompatibleClient, ToolRegistry
from toolmend.client import Done, TextDelta, ToolCallCompleted
from toolmend.errors import ModelHTTPError, RetryExhaustedError
from wires import MESSAGES, PROVIDERS, WIRES, Wire, instant, read_file_registry

GOOD = {"name": "read_file", "arguments": {"path": "test.txt"}, "id": "call_good"}
BAD = {"name": "read_file", "arguments": {"path": 5}, "id": "call_bad"}


def turn(wire: Wire, client: Any, events: list[Any] | None = None) -> Any:
    """One turn through this wire's entry point, as the sync client gives it."""
    if not wire.streamed:
        return client.chat(MESSAGES)
    seen = [] if events is None else events
    for event in client.chat_stream(MESSAGES):
        seen.append(event)
    assert isinstance(seen[-1], Done)
    return seen[-1].result


def loop_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("toolmend-")]


@pytest.mark.parametrize("wire", WIRES, ids=str)
def test_a_turn_gives_what_the_async_client_gives(wire: Wire) -> None:
    registry = read_file_registry()
    script = [wire.calls(GOOD, BAD, text="Two files. "), wire.calls({**GOOD, "arguments": {"path": "b.txt"}, "id": "c2"})]
    with ScriptedOllama(list(script)) as server:
        expected = wire.run(server, registry)
    events: list[Any] = []
    with ScriptedOllama(list(script)) as server, wire.sync_client(server, registry) as client:
        assert type(client) is (SyncOllamaClient if wire.provider == "ollama" else SyncOpenAICompatibleClient)
        result = turn(wire, client, events)
        stats = client.stats()
    assert [c.arguments for c in result.tool_calls] == [c.arguments for c in expected.tool_calls]
    assert [a.lane for a in result.attempts] == [a.lane for a in expected.attempts] == ["model", "ok"]
    assert result.message == expected.message and result.text == expected.text
    assert stats["chats"] == 1 and stats["chats_ok"] == 1
    if wire.streamed:
        assert [e.call.id for e in events if isinstance(e, ToolCallCompleted)] == ["call_good", "c2"]
        assert any(isinstance(e, TextDelta) for e in events)


@pytest.mark.parametrize("wire", PROVIDERS, ids=str)
def test_errors_reach_the_caller_as_they_are(wire: Wire) -> None:
    with ScriptedOllama([wire.calls(BAD), wire.calls(BAD)]) as server:
        with wire.sync_client(server, read_file_registry(), RetryConfig(max_retries=1)) as client:
            with pytest.raises(RetryExhaustedError) as excinfo:
                client.chat(MESSAGES)
    assert excinfo.value.last_error.code == "TSR-004"
    with ScriptedOllama([wire.error(400, "bad request")]) as server:
        with wire.sync_client(server, None) as client, pytest.raises(ModelHTTPError):
            client.chat(MESSAGES)


@pytest.mark.parametrize("wire", PROVIDERS, ids=str)
def test_it_works_inside_a_running_event_loop(wire: Wire) -> None:
    # A notebook cell: the caller's thread runs a loop; asyncio.run there would fail, the private loop does not.
    async def cell(server: ScriptedOllama) -> Any:
        assert asyncio.get_running_loop() is not None
        with wire.sync_client(server, read_file_registry()) as client:
            first = client.chat(MESSAGES)
            events = list(client.chat_stream(MESSAGES))
            return first, events

    streamed = Wire(wire.provider, True)
    with ScriptedOllama([wire.calls(GOOD), streamed.calls(GOOD)]) as server:
        first, events = asyncio.run(cell(server))
    assert [c.name for c in first.tool_calls] == ["read_file"]
    assert isinstance(events[-1], Done) and [c.name for c in events[-1].result.tool_calls] == ["read_file"]


@pytest.mark.parametrize("wire", PROVIDERS, ids=str)
def test_the_loop_thread_is_gone_after_close(wire: Wire) -> None:
    before = loop_threads()
    with ScriptedOllama([wire.calls(GOOD)]) as server:
        client = wire.sync_client(server, read_file_registry())
        (thread,) = [t for t in loop_threads() if t not in before]
        assert thread.is_alive() and thread is not threading.current_thread()
        client.chat(MESSAGES)
        client.close()
        assert not thread.is_alive() and loop_threads() == before and client.closed
        assert server.connections_after_close() == 0
        client.close()  # a second close is a no-op
        with pytest.raises(RuntimeError, match="closed"):
            client.chat(MESSAGES)


def test_a_client_never_closed_still_ends_its_thread() -> None:
    before = loop_threads()
    client = SyncOllamaClient("http://127.0.0.1:9", "m")
    (thread,) = [t for t in loop_threads() if t not in before]
    del client
    import gc

    gc.collect()
    thread.join(timeout=5)
    assert not thread.is_alive()


@pytest.mark.parametrize("wire", [w for w in WIRES if w.streamed], ids=str)
def test_a_stream_left_early_is_closed_and_its_connection_released(wire: Wire) -> None:
    whole = Wire(wire.provider, False)
    with ScriptedOllama([wire.calls(GOOD, text="Reading the file now. "), whole.calls(GOOD)]) as server:
        with wire.sync_client(server, read_file_registry()) as client:
            stream = client.chat_stream(MESSAGES)
            first = next(iter(stream))
            stream.close()  # type: ignore[attr-defined]
            assert not isinstance(first, Done)
            assert server.connections_after_close() == 0
            assert client.chat(MESSAGES).tool_calls  # the client goes on


def test_the_client_is_made_on_its_own_loop_and_shares_its_engine() -> None:
    registry = ToolRegistry()
    config = RetryConfig(max_retries=2)
    with SyncOpenAICompatibleClient("127.0.0.1:9/v1", "m", registry=registry, config=config) as client:
        assert client.registry is registry and client.config is config and client.model == "m"
        assert client.base_url == "http://127.0.0.1:9/v1"
    with SyncOllamaClient("127.0.0.1:9", "m") as ollama:
        assert ollama.host == "http://127.0.0.1:9"
    assert toolmend.SyncOllamaClient is SyncOllamaClient


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="needs POSIX signals")
def test_an_interrupt_while_waiting_cancels_the_chat_on_the_loop() -> None:
    # Ctrl-C in a script: the KeyboardInterrupt reaches the caller, and the chat it was waiting for is cancelled
    # on the client's loop rather than left running there.
    wire = PROVIDERS[0]
    slow = wire.calls(GOOD)
    slow.delay_s = 2.0
    assert threading.current_thread() is threading.main_thread()
    with ScriptedOllama([slow]) as server, wire.sync_client(server, read_file_registry()) as client:
        # A real SIGINT to the waiting thread, as Ctrl-C sends (interrupt_main would not wake a blocked wait).
        timer = threading.Timer(0.3, signal.pthread_kill, (threading.main_thread().ident, signal.SIGINT))
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            client.chat(MESSAGES)
        timer.join()
        for _ in range(100):
            if client.stats()["chats_cancelled"]:
                break
            time.sleep(0.01)
        assert client.stats()["chats_cancelled"] == 1
