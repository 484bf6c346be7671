"""The client against hostile or broken servers and model text, over real HTTP on 127.0.0.1: nothing
unbounded (time, memory, a queue), nothing silent (every reply that is not a chat reply is a coded error),
nothing forged in the logs."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
import time
from typing import Any

import pytest

from ollama_server import Reply, ScriptedOllama, chat_reply, stream_lines
from toolmend import ToolRegistry
from toolmend.config import RetryConfig
from toolmend.errors import ModelHTTPError, RetryExhaustedError
from toolmend.ollama import Done, OllamaClient, TextDelta, ToolCallCompleted, ToolCallFailed

MESSAGES = [{"role": "user", "content": "Read test.txt"}]


@pytest.fixture
def registry() -> ToolRegistry:
    reg = ToolRegistry()
    reg.register("read_file", {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})
    return reg


async def _instant(_: float) -> None:
    return None


def chat(server: ScriptedOllama, registry: ToolRegistry | None, **config: Any) -> Any:
    async def go() -> Any:
        async with OllamaClient(server.url, "m", registry, RetryConfig(**config), sleep=_instant) as client:
            return await client.chat(MESSAGES)

    return asyncio.run(go())


def stream(server: ScriptedOllama, registry: ToolRegistry | None, events: list[Any] | None = None, **config: Any) -> list[Any]:
    out = [] if events is None else events

    async def go() -> list[Any]:
        async with OllamaClient(server.url, "m", registry, RetryConfig(**config), sleep=_instant) as client:
            async for event in client.chat_stream(MESSAGES):
                out.append(event)
        return out

    return asyncio.run(go())


def raw_line(obj: Any) -> bytes:
    """A line as Go's encoder writes it: non-ASCII characters, U+0085 and U+2028 included, left unescaped."""
    return json.dumps(obj, ensure_ascii=False).encode() + b"\n"


# ---- lines split on "\n" only -------------------------------------------------------------------------


@pytest.mark.parametrize("odd", ["\x85", "\u2028", "\u2029", "\x0b", "\x0c", "\x1c", "\r"])
def test_a_streamed_line_holding_a_raw_line_separator_keeps_its_call(registry: ToolRegistry, odd: str) -> None:
    path = f"a{odd}b.txt"
    lines = [raw_line(line) for line in stream_lines({"name": "read_file", "arguments": {"path": path}}, text=[f"x{odd}y "])]
    with ScriptedOllama([Reply(lines=lines, write_size=3)]) as server:
        events = stream(server, registry)
    done = events[-1]
    assert isinstance(done, Done) and [a.lane for a in done.result.attempts] == ["ok"]
    assert [c.arguments for c in done.result.tool_calls] == [{"path": path}]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == f"x{odd}y "


# ---- size caps --------------------------------------------------------------------------------------------


def test_a_reply_over_the_size_cap_is_refused_with_a_code(registry: ToolRegistry) -> None:
    huge = chat_reply({"name": "read_file", "arguments": {"path": "a"}}, content="x" * 300_000)
    with ScriptedOllama([huge]) as server, pytest.raises(ModelHTTPError) as excinfo:
        chat(server, registry, max_response_bytes=100_000)
    assert excinfo.value.code == "TLP-007" and "max_response_bytes" in str(excinfo.value)
    assert len(server.requests) == 1  # not retried: the same reply would come again


def test_a_stream_over_the_size_cap_stops_growing(registry: ToolRegistry) -> None:
    # Far more than the cap, as an endless stream would be; the client stops reading at the cap.
    lines = stream_lines(text=["y" * 1000] * 2000)
    with ScriptedOllama([Reply(lines=lines, write_size=65536)]) as server, pytest.raises(ModelHTTPError) as excinfo:
        stream(server, registry, max_response_bytes=200_000)
    assert excinfo.value.code == "TLP-007"


def test_a_reply_declaring_a_length_over_the_cap_is_refused_before_it_is_read(registry: ToolRegistry) -> None:
    body = json.dumps(chat_reply({"name": "read_file", "arguments": {"path": "a"}}, content="z" * 50_000).body)
    with ScriptedOllama([Reply(body=body)]) as server, pytest.raises(ModelHTTPError) as excinfo:
        chat(server, registry, max_response_bytes=10_000)
    assert excinfo.value.code == "TLP-007" and "50" in excinfo.value.message


# ---- replies that are not chat replies ----------------------------------------------------------------


def test_a_redirect_is_refused_and_its_call_never_runs(registry: ToolRegistry) -> None:
    redirect = chat_reply({"name": "read_file", "arguments": {"path": "/etc/passwd"}})
    redirect.status, redirect.headers = 302, {"location": "http://127.0.0.1:1/elsewhere"}
    with ScriptedOllama([redirect]) as server, pytest.raises(ModelHTTPError) as excinfo:
        chat(server, registry)
    assert (excinfo.value.code, excinfo.value.status) == ("TLP-009", 302)
    assert "redirected" in excinfo.value.message and "127.0.0.1:1/elsewhere" in excinfo.value.message


def test_a_redirect_in_a_stream_is_refused(registry: ToolRegistry) -> None:
    with ScriptedOllama([Reply(301, {"message": {"content": "moved"}}, {"location": "/v2"})]) as server:
        with pytest.raises(ModelHTTPError) as excinfo:
            stream(server, registry)
    assert (excinfo.value.code, excinfo.value.status) == ("TLP-009", 301)


@pytest.mark.parametrize(
    ("reply", "status"),
    [(Reply(204, b""), 204), (Reply(200, b"<html><body>Proxy login</body></html>"), 200), (Reply(200, b"[1, 2]"), 200)],
)
def test_no_content_and_bodies_that_are_not_a_reply_are_refused(registry: ToolRegistry, reply: Reply, status: int) -> None:
    with ScriptedOllama([reply]) as server, pytest.raises(ModelHTTPError) as excinfo:
        chat(server, registry)
    assert (excinfo.value.code, excinfo.value.status) == ("TLP-009", status)


def test_an_empty_200_is_a_transport_failure_and_retried(registry: ToolRegistry) -> None:
    script = [Reply(200, b""), chat_reply({"name": "read_file", "arguments": {"path": "a"}})]
    with ScriptedOllama(script) as server:
        result = chat(server, registry)
    assert [a.lane for a in result.attempts] == ["transport", "ok"]
    assert result.tool_calls[0].arguments == {"path": "a"}


# ---- the deadline bounds a reply sent slowly ---------------------------------------------------------


def test_the_deadline_bounds_a_body_sent_a_byte_at_a_time(registry: ToolRegistry) -> None:
    # 400 bytes at 50 ms each would take 20 s; every read is quick, so only the deadline can stop it.
    trickle = chat_reply({"name": "read_file", "arguments": {"path": "a"}})
    trickle.trickle_s = 0.05
    started = time.monotonic()
    with ScriptedOllama([trickle] * 3) as server, pytest.raises((RetryExhaustedError, ModelHTTPError)):
        chat(server, registry, deadline_s=1.0)
    assert time.monotonic() - started < 8.0


def test_cancelling_chats_queued_on_one_client_is_quick(registry: ToolRegistry) -> None:
    # httpcore's pool did work per queued request on each cancel: 1,000 queued behind 100 connections took
    # 12.8 s to cancel; queued on the client's own semaphore they take 0.1 s.
    n = 1000

    async def go(server: ScriptedOllama) -> float:
        async with OllamaClient(server.url, "m", registry, RetryConfig(max_connections=100)) as client:
            tasks = [asyncio.create_task(client.chat(MESSAGES)) for _ in range(n)]
            await asyncio.sleep(0.5)  # 100 chats hold the connections, the rest wait for one
            started = time.monotonic()
            for task in tasks:
                task.cancel()
            results = await asyncio.gather(*tasks, return_exceptions=True)
            took = time.monotonic() - started
            assert all(isinstance(r, asyncio.CancelledError) for r in results)
            return took

    slow = chat_reply({"name": "read_file", "arguments": {"path": "a"}})
    slow.delay_s = 2.0
    with ScriptedOllama(lambda _: slow) as server:
        took = asyncio.run(go(server))
    assert took < 3.0


# ---- a failed call is reflected in a stream as in chat ------------------------------------------------


def test_a_stream_reflects_a_failed_call_after_text_was_shown(registry: ToolRegistry) -> None:
    first = stream_lines(
        {"name": "read_file", "arguments": {"path": "ok.txt"}, "id": "good"},
        {"name": "read_file", "arguments": {"path": 5}, "id": "bad"},
        text=["Reading two files. "],
    )
    second = stream_lines({"name": "read_file", "arguments": {"path": "fixed.txt"}, "id": "again"}, text=["Fixed. "])
    with ScriptedOllama([Reply(lines=first), Reply(lines=second)]) as server:
        events = stream(server, registry)
    done = events[-1]
    assert isinstance(done, Done)
    assert [a.lane for a in done.result.attempts] == ["model", "ok"]
    assert not any(isinstance(e, ToolCallFailed) for e in events)  # the failed call was reflected, not shown
    completed = [e.call.id for e in events if isinstance(e, ToolCallCompleted)]
    assert completed == ["good", "again"]
    assert [c.id for c in done.result.tool_calls] == ["good", "again"]
    assert done.result.text == "Reading two files.\nFixed."
    reflected = server.requests[1]["json"]["messages"]
    assert any(m["role"] == "tool" and "/path" in m["content"] for m in reflected)


def test_a_stream_whose_calls_keep_failing_raises_like_chat(registry: ToolRegistry) -> None:
    bad = Reply(lines=stream_lines({"name": "read_file", "arguments": {"path": 5}}, text=["Trying. "]))
    events: list[Any] = []
    with ScriptedOllama([bad, bad]) as server, pytest.raises(RetryExhaustedError) as excinfo:
        stream(server, registry, events, max_retries=1)
    assert len(server.requests) == 2
    assert [a.lane for a in excinfo.value.attempts] == ["model", "model"]
    assert isinstance(events[-1], ToolCallFailed) and not any(isinstance(e, Done) for e in events)


# ---- logs cannot be forged --------------------------------------------------------------------------


def test_model_text_cannot_forge_or_flood_log_records(registry: ToolRegistry, caplog: pytest.LogCaptureFixture) -> None:
    forged = "evil\nWARNING toolmend: forged record"
    long_name = "n" * 100_000
    script = [chat_reply({"name": forged, "arguments": {}}), chat_reply({"name": long_name, "arguments": {}})] * 2
    with caplog.at_level(logging.DEBUG, logger="toolmend"), ScriptedOllama(script) as server:
        with pytest.raises(RetryExhaustedError):
            chat(server, registry, max_retries=3)
    records = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO]
    assert records
    assert all("\n" not in m for m in records)
    assert any("evil\\nWARNING" in m for m in records)
    assert max(len(m) for m in records) < 2000


def test_the_audit_file_is_private_and_never_follows_a_symlink(registry: ToolRegistry, tmp_path: Any) -> None:
    audit = tmp_path / "audit.jsonl"
    with ScriptedOllama([chat_reply({"name": "read_file", "arguments": {"path": "a"}})]) as server:
        chat(server, registry, audit_path=str(audit))
    assert stat.S_IMODE(os.stat(audit).st_mode) == 0o600
    assert json.loads(audit.read_text().splitlines()[0])["lane"] == "ok"

    target = tmp_path / "elsewhere"
    target.write_text("")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    with ScriptedOllama([chat_reply({"name": "read_file", "arguments": {"path": "a"}})]) as server, pytest.raises(OSError):
        chat(server, registry, audit_path=str(link))
    assert target.read_text() == ""
