"""OllamaClient.chat_stream over real HTTP: typed events, recovery before the first event, mid-stream errors."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ollama_server import Reply, ScriptedOllama, settled_task_count, stream_lines
from toolmend import ToolRegistry
from toolmend.config import RetryConfig
from toolmend.errors import MidStreamError
from toolmend.ollama import Done, OllamaClient, TextDelta, ToolCallArgumentsDelta, ToolCallCompleted, ToolCallStarted

MESSAGES = [{"role": "user", "content": "Read test.txt"}]


@pytest.fixture
def registry() -> ToolRegistry:
    reg = ToolRegistry()
    reg.register("read_file", {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})
    return reg


async def _instant(_: float) -> None:
    return None


def collect(server: ScriptedOllama, registry: ToolRegistry, **config: Any) -> list[Any]:
    async def go() -> list[Any]:
        async with OllamaClient(server.url, "m", registry, RetryConfig(**config), sleep=_instant) as client:
            return [event async for event in client.chat_stream(MESSAGES)]

    return asyncio.run(go())


def test_a_streamed_turn_as_typed_events(registry: ToolRegistry) -> None:
    lines = stream_lines({"name": "read_file", "arguments": {"path": "test.txt"}, "id": "call_1"}, text=["Let me ", "check. "])
    with ScriptedOllama([Reply(lines=lines)]) as server:
        events = collect(server, registry)
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["TextDelta", "TextDelta", "ToolCallStarted", "ToolCallArgumentsDelta", "ToolCallCompleted", "Done"]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Let me check. "
    started = next(e for e in events if isinstance(e, ToolCallStarted))
    assert (started.index, started.id, started.name) == (0, "call_1", "read_file")
    delta = next(e for e in events if isinstance(e, ToolCallArgumentsDelta))
    assert delta.partial == {"path": "test.txt"}
    done = events[-1]
    assert isinstance(done, Done) and [c.id for c in done.result.tool_calls] == ["call_1"]
    assert done.result.usage.total_tokens == 150 and server.requests[0]["json"]["stream"] is True


def test_calls_written_in_streamed_text_are_found_and_not_shown(registry: ToolRegistry) -> None:
    pieces = ["Sure. <tool", '_call>{"name": "read_file", ', '"arguments": {"path": "a.txt",}}</tool_call>', " Done."]
    with ScriptedOllama([Reply(lines=stream_lines(text=pieces))]) as server:
        events = collect(server, registry)
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert "tool_call" not in text and text.split() == ["Sure.", "Done."]
    (completed,) = [e for e in events if isinstance(e, ToolCallCompleted)]
    assert completed.call.arguments == {"path": "a.txt"} and completed.call.repairs


def test_failures_before_any_event_are_retried_transparently(registry: ToolRegistry) -> None:
    script = [
        Reply(503, {"error": "busy"}),
        Reply(lines=stream_lines({"name": "read_file", "arguments": {"path": 5}})),
        Reply(lines=[{"error": "error parsing tool call: raw='{\"path\": \"x\"', err=unexpected end of JSON input"}]),
    ]
    with ScriptedOllama(script) as server:
        events = collect(server, registry)
    done = events[-1]
    assert isinstance(done, Done)
    assert [a.lane for a in done.result.attempts] == ["transport", "model", "salvaged"]
    assert [c.arguments for c in done.result.tool_calls] == [{"path": "x"}]
    assert not any(type(e).__name__ == "ToolCallFailed" for e in events)  # the failed try never showed
    reflected = server.requests[2]["json"]["messages"]
    assert any(m["role"] == "tool" and "/path" in m["content"] for m in reflected)


def test_a_stream_cut_after_events_raises_with_what_was_received(registry: ToolRegistry) -> None:
    lines = stream_lines({"name": "read_file", "arguments": {"path": "a"}}, text=["Reading "], done=False)
    with ScriptedOllama([Reply(lines=lines)]) as server, pytest.raises(MidStreamError) as excinfo:
        collect(server, registry)
    assert len(server.requests) == 1  # never replayed
    assert [c.arguments for c in excinfo.value.received] == [{"path": "a"}]


def test_a_stall_after_events_hits_the_idle_timeout(registry: ToolRegistry) -> None:
    lines = stream_lines({"name": "read_file", "arguments": {"path": "a"}}, text=["Reading "])
    with ScriptedOllama([Reply(lines=lines, line_delay_s=0.5)]) as server, pytest.raises(MidStreamError):
        collect(server, registry, idle_timeout_s=0.1)


def test_breaking_out_early_closes_the_stream_and_the_client_goes_on(registry: ToolRegistry) -> None:
    slow = Reply(lines=stream_lines({"name": "read_file", "arguments": {"path": "a"}}, text=["a ", "b ", "c "]), line_delay_s=0.05)
    fast = Reply(lines=stream_lines({"name": "read_file", "arguments": {"path": "b"}}))

    async def go(server: ScriptedOllama) -> Any:
        async with OllamaClient(server.url, "m", registry, sleep=_instant) as client:
            stream = client.chat_stream(MESSAGES)
            async for event in stream:
                assert isinstance(event, TextDelta)
                break
            await stream.aclose()
            tasks_before = len(asyncio.all_tasks())
            events = [e async for e in client.chat_stream(MESSAGES)]
            assert await settled_task_count(tasks_before) == tasks_before
            return events[-1]

    with ScriptedOllama([slow, fast]) as server:
        done = asyncio.run(go(server))
    assert [c.arguments for c in done.result.tool_calls] == [{"path": "b"}]


def test_many_concurrent_streams_through_one_client(registry: ToolRegistry) -> None:
    n = 40
    script = [Reply(lines=stream_lines({"name": "read_file", "arguments": {"path": f"{i}"}}, text=[f"t{i} "])) for i in range(n)]

    async def go(server: ScriptedOllama) -> list[Any]:
        async with OllamaClient(server.url, "m", registry, sleep=_instant) as client:
            async def one() -> Any:
                return [e async for e in client.chat_stream(MESSAGES)][-1]

            return await asyncio.gather(*(one() for _ in range(n)))

    with ScriptedOllama(script) as server:
        results = asyncio.run(go(server))
    assert sorted(d.result.tool_calls[0].arguments["path"] for d in results) == sorted(str(i) for i in range(n))


def test_chat_command_streams(capsys: pytest.CaptureFixture[str]) -> None:
    from pathlib import Path

    from toolmend.cli import main

    tools = str(Path(__file__).parent.parent / "examples" / "tools.json")
    lines = stream_lines({"name": "read_file", "arguments": {"path": "notes.txt"}}, text=["Reading ", "now."])
    with ScriptedOllama([Reply(lines=lines)]) as server:
        status = main(["chat", "--stream", "--model", "m", "--message", "go", "--tools", tools, "--host", server.url])
    out = capsys.readouterr().out
    assert status == 0 and "Reading now." in out and '[call read_file {"path": "notes.txt"}]' in out
    assert "attempt 1: ok" in out


@pytest.mark.parametrize("write_size", [1, 2, 7, 64])
def test_writes_split_at_any_byte_give_the_same_events(registry: ToolRegistry, write_size: int) -> None:
    lines = stream_lines({"name": "read_file", "arguments": {"path": "é/∂.txt"}, "id": "c1"}, text=["Ünïcode ", "text "])
    with ScriptedOllama([Reply(lines=lines), Reply(lines=lines, write_size=write_size)]) as server:
        whole = collect(server, registry)
        split = collect(server, registry)
    shape = lambda events: [(type(e).__name__, getattr(e, "text", None)) for e in events]  # noqa: E731
    assert shape(split) == shape(whole)
    assert split[-1].result.tool_calls[0].arguments == {"path": "é/∂.txt"}


def test_cancelling_mid_stream_closes_the_connection(registry: ToolRegistry) -> None:
    slow = Reply(lines=stream_lines(text=["a "] * 50), line_delay_s=0.05)
    after = Reply(lines=stream_lines({"name": "read_file", "arguments": {"path": "z"}}))

    async def go(server: ScriptedOllama) -> Any:
        async with OllamaClient(server.url, "m", registry, sleep=_instant) as client:
            tasks_before = len(asyncio.all_tasks())

            async def consume() -> None:
                async for _ in client.chat_stream(MESSAGES):
                    pass

            task = asyncio.create_task(consume())
            await asyncio.sleep(0.2)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert await settled_task_count(tasks_before) == tasks_before
            done = [e async for e in client.chat_stream(MESSAGES)][-1]
        return done

    with ScriptedOllama([slow, after]) as server:
        done = asyncio.run(go(server))
        assert server.connections_after_close() == 0
    assert done.result.tool_calls[0].arguments == {"path": "z"}


def test_two_hundred_concurrent_streams_leave_nothing_behind(registry: ToolRegistry) -> None:
    n = 200
    script = [Reply(lines=stream_lines({"name": "read_file", "arguments": {"path": f"{i}"}})) for i in range(n)]

    async def go(server: ScriptedOllama) -> list[Any]:
        tasks_before = len(asyncio.all_tasks())
        async with OllamaClient(server.url, "m", registry, RetryConfig(max_connections=20), sleep=_instant) as client:

            async def one() -> Any:
                return [e async for e in client.chat_stream(MESSAGES)][-1]

            results = await asyncio.gather(*(one() for _ in range(n)))
        assert await settled_task_count(tasks_before) == tasks_before
        return results

    with ScriptedOllama(script) as server:
        results = asyncio.run(go(server))
        assert server.connections_after_close() == 0
    assert len({d.result.tool_calls[0].arguments["path"] for d in results}) == n


def test_breaker_opens_fails_fast_half_opens_and_closes(registry: ToolRegistry) -> None:
    from ollama_server import chat_reply
    from toolmend.errors import CircuitOpenError, RetryExhaustedError

    clock = [1000.0]
    bad = chat_reply({"name": "read_file", "arguments": "bad"})
    good = chat_reply({"name": "read_file", "arguments": {"path": "ok"}})
    script = [bad, bad, bad, bad, bad, bad, good]

    async def go(server: ScriptedOllama) -> None:
        cfg = RetryConfig(max_retries=1, breaker_threshold=2, breaker_reset_s=30)
        async with OllamaClient(server.url, "m", registry, cfg, clock=lambda: clock[0]) as client:
            for _ in range(2):
                with pytest.raises(RetryExhaustedError):
                    await client.chat(MESSAGES)
            with pytest.raises(CircuitOpenError, match="in 30.0s"):
                await client.chat(MESSAGES)
            clock[0] += 31  # cool-down over: one trial chat goes through, fails, the circuit reopens
            with pytest.raises(RetryExhaustedError):
                await client.chat(MESSAGES)
            with pytest.raises(CircuitOpenError):
                await client.chat(MESSAGES)
            clock[0] += 31  # the next trial succeeds and closes the circuit
            assert (await client.chat(MESSAGES)).tool_calls[0].arguments == {"path": "ok"}
            assert (await client.chat(MESSAGES)) is not None

    with ScriptedOllama(script + [good]) as server:
        asyncio.run(go(server))


def test_token_budget_is_a_typed_error(registry: ToolRegistry) -> None:
    from toolmend.errors import TokenBudgetError
    from ollama_server import chat_reply

    script = [chat_reply({"name": "read_file", "arguments": "bad"}, prompt_tokens=900, eval_tokens=200)] * 2

    async def go(server: ScriptedOllama) -> None:
        async with OllamaClient(server.url, "m", registry, RetryConfig(token_budget=1000)) as client:
            await client.chat(MESSAGES)

    with ScriptedOllama(script) as server, pytest.raises(TokenBudgetError) as excinfo:
        asyncio.run(go(server))
    assert excinfo.value.usage.total_tokens == 1100 and len(server.requests) == 1


def test_stream_honours_retry_after_like_chat(registry: ToolRegistry) -> None:
    delays: list[float] = []

    async def record(seconds: float) -> None:
        delays.append(seconds)

    script = [
        Reply(429, {"error": "slow down"}, {"Retry-After": "2"}),
        Reply(lines=stream_lines({"name": "read_file", "arguments": {"path": "a"}})),
    ]

    async def go(server: ScriptedOllama) -> Any:
        async with OllamaClient(server.url, "m", registry, sleep=record) as client:
            return [e async for e in client.chat_stream(MESSAGES)][-1]

    with ScriptedOllama(script) as server:
        done = asyncio.run(go(server))
    assert delays == [2.0]
    assert [a.lane for a in done.result.attempts] == ["transport", "ok"]
