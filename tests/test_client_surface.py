"""What the clients expose besides a turn, for both providers: request options, configuration from the
environment, log records, stats, the audit file, replies that are not replies, and the public reflection."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
import threading
import time
from typing import Any

import pytest

import toolmend
from ollama_server import Reply, ScriptedOllama
from toolmend import ToolRegistry
from toolmend.client import ledger
from toolmend.config import RetryConfig
from toolmend.errors import ModelHTTPError, RetryExhaustedError
from wires import PROVIDERS, WIRES, Wire

READ_FILE = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
GOOD = {"name": "read_file", "arguments": {"path": "test.txt"}, "id": "call_good"}
BAD = {"name": "read_file", "arguments": {"path": 5}, "id": "call_bad"}


@pytest.fixture
def registry() -> ToolRegistry:
    reg = ToolRegistry()
    reg.register("read_file", READ_FILE, description="Read a file")
    return reg


def session(wire: Wire, server: ScriptedOllama, registry: Any, body: Any, config: RetryConfig | None = None, **client: Any) -> Any:
    """Runs ``body(client)`` on a client of this wire, closed afterwards."""

    async def go() -> Any:
        async with wire.client(server, registry, config, **client) as c:
            return await body(c)

    return asyncio.run(go())


# ---- request options ------------------------------------------------------------------------------------


@pytest.mark.parametrize("wire", WIRES, ids=str)
def test_request_options_reach_the_server(wire: Wire, registry: ToolRegistry) -> None:
    if wire.provider == "ollama":
        request = {"options": {"temperature": 0.1, "num_ctx": 8192}, "think": "low", "keep_alive": "5m", "format": "json"}
        expected = request
    else:
        request = {
            "tool_choice": {"type": "function", "function": {"name": "read_file"}},
            "parallel_tool_calls": False,
            "response_format": {"type": "json_object"},
            "max_tokens": 256,
            "temperature": 0.2,
            "extra_body": {"seed": 7, "top_k": 20},
        }
        expected = {**{k: v for k, v in request.items() if k != "extra_body"}, "seed": 7, "top_k": 20}
    with ScriptedOllama([wire.calls(GOOD)]) as server:
        session(wire, server, registry, lambda c: wire.turn(c, **request))
        sent = server.requests[0]["json"]
    assert {k: sent[k] for k in expected} == expected
    if wire.provider == "openai":
        assert ("stream_options" in sent) is wire.streamed
        assert "think" not in sent


def test_the_api_key_is_a_bearer_token_and_never_read_from_the_environment(registry: ToolRegistry, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")
    seen: list[dict[str, str]] = []
    import httpx

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(dict(request.headers))
        return httpx.Response(200, json=json.loads(json.dumps(Wire("openai", False).calls(GOOD).body)))

    async def go(api_key: str | None) -> None:
        async with toolmend.OpenAICompatibleClient(
            "http://model.test/v1", "m", api_key, registry, transport=httpx.MockTransport(handler)
        ) as client:
            await client.chat([{"role": "user", "content": "go"}])

    asyncio.run(go("sk-given"))
    asyncio.run(go(None))
    assert seen[0]["authorization"] == "Bearer sk-given" and "authorization" not in seen[1]


# ---- configuration ------------------------------------------------------------------------------------


@pytest.mark.parametrize("wire", PROVIDERS, ids=str)
def test_a_client_made_without_a_config_reads_the_environment(wire: Wire, registry: ToolRegistry, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLMEND_MAX_RETRIES", "0")
    monkeypatch.setenv("TOOLMEND_ENABLE_AUTO_REPAIR", "off")
    with ScriptedOllama([]) as server:
        client = session(wire, server, registry, lambda c: _return(c))
    assert client.config.max_retries == 0 and client.config.enable_auto_repair is False


async def _return(value: Any) -> Any:
    return value


@pytest.mark.parametrize(("text", "value"), [("1", True), ("0", False), ("TRUE", True), ("false", False), ("yes", True), ("No", False), ("on", True), ("off", False)])
def test_environment_booleans(monkeypatch: pytest.MonkeyPatch, text: str, value: bool) -> None:
    monkeypatch.setenv("TOOLMEND_STRICT_VALIDATION", text)
    assert RetryConfig.load().strict_validation is value


def test_environment_values_that_are_not_booleans_or_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLMEND_LOG_ARGUMENT_VALUES", "maybe")
    with pytest.raises(ValueError, match="log_argument_values"):
        RetryConfig.load()
    monkeypatch.delenv("TOOLMEND_LOG_ARGUMENT_VALUES")
    monkeypatch.setenv("TOOLMEND_TOKEN_BUDGET", "none")
    assert RetryConfig.load().token_budget is None
    monkeypatch.setenv("TOOLMEND_TOKEN_BUDGET", "5000")
    assert RetryConfig.load().token_budget == 5000
    assert RetryConfig(max_retries=0).max_retries == 0
    with pytest.raises(ValueError, match="max_retries"):
        RetryConfig(max_retries=-1)


# ---- logs, stats and the audit file -----------------------------------------------------------------


@pytest.mark.parametrize("wire", WIRES, ids=str)
def test_log_records_carry_the_chat_in_extra(wire: Wire, registry: ToolRegistry, caplog: pytest.LogCaptureFixture) -> None:
    script = [wire.error(503, "busy"), wire.calls(BAD), wire.calls(GOOD)]
    with caplog.at_level(logging.INFO, logger="toolmend"), ScriptedOllama(script) as server:
        result = session(wire, server, registry, wire.turn)
    retries = [r for r in caplog.records if r.getMessage().startswith("Retry attempt")]
    assert [(r.lane, r.attempt, r.code) for r in retries] == [("transport", 1, None), ("model", 2, "TSR-004")]  # type: ignore[attr-defined]
    assert {(r.correlation_id, r.model) for r in retries} == {(result.correlation_id, "test-model")}  # type: ignore[attr-defined]


@pytest.mark.parametrize("wire", WIRES, ids=str)
def test_stats_count_every_chat_per_model_and_reset(wire: Wire, registry: ToolRegistry) -> None:
    script = [wire.calls(BAD, prompt_tokens=10, eval_tokens=5), wire.calls(GOOD, prompt_tokens=20, eval_tokens=7), wire.error(404, "gone")]

    async def body(client: Any) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        fresh = client.stats()
        await wire.turn(client)
        with pytest.raises(ModelHTTPError):
            await wire.turn(client)
        counted = client.stats()
        client.stats.reset()
        return fresh, counted, client.stats()

    with ScriptedOllama(script) as server:
        fresh, counted, after = session(wire, server, registry, body)
    assert set(ledger.COUNTERS) <= set(fresh) and all(fresh[k] == 0 for k in ledger.COUNTERS)
    assert (counted["chats"], counted["chats_ok"], counted["chats_failed"], counted["attempts"]) == (2, 1, 1, 3)
    assert (counted["reflected"], counted["fatal"], counted["prompt_tokens"], counted["completion_tokens"]) == (1, 1, 30, 12)
    assert counted["by_model"] == {"test-model": {"chats": 2, "chats_failed": 1, "attempts": 3, "prompt_tokens": 30, "completion_tokens": 12}}
    assert counted["failed_by_code"] == {"TSR-004": 1}
    assert after == fresh


@pytest.mark.parametrize("wire", PROVIDERS, ids=str)
def test_the_audit_file_is_written_off_the_event_loop_private_and_never_through_a_symlink(
    wire: Wire, registry: ToolRegistry, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    writers: list[str] = []
    write_lines = ledger._write_lines

    def recorded(*args: Any) -> None:
        writers.append(threading.current_thread().name)
        write_lines(*args)

    monkeypatch.setattr(ledger, "_write_lines", recorded)
    audit = tmp_path / "audit.jsonl"
    with ScriptedOllama([wire.error(503, "busy"), wire.calls(GOOD)]) as server:
        result = session(wire, server, registry, wire.turn, RetryConfig(audit_path=str(audit)))
    assert writers == ["toolmend-audit"]
    assert stat.S_IMODE(os.stat(audit).st_mode) == 0o600
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    assert [(line["attempt"], line["lane"], line["correlation_id"]) for line in lines] == [
        (1, "transport", result.correlation_id), (2, "ok", result.correlation_id)
    ]
    target = tmp_path / "elsewhere"
    target.write_text("")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    with ScriptedOllama([wire.calls(GOOD)]) as server, pytest.raises(OSError):
        session(wire, server, registry, wire.turn, RetryConfig(audit_path=str(link)))
    assert target.read_text() == "" and not server.requests  # refused before anything was sent


# ---- replies that are not replies, size caps ------------------------------------------------------------


@pytest.mark.parametrize("wire", WIRES, ids=str)
@pytest.mark.parametrize(
    ("reply", "status"),
    [
        (Reply(302, {"choices": []}, {"location": "http://127.0.0.1:1/elsewhere"}), 302),
        (Reply(204, b""), 204),
        (Reply(201, {"message": {}}), 201),
    ],
    ids=["redirect", "no-content", "created"],
)
def test_responses_that_are_not_chat_replies_are_refused(wire: Wire, registry: ToolRegistry, reply: Reply, status: int) -> None:
    with ScriptedOllama([reply]) as server, pytest.raises(ModelHTTPError) as excinfo:
        session(wire, server, registry, wire.turn)
    assert (excinfo.value.code, excinfo.value.status, excinfo.value.attempt) == ("TLP-009", status, 1)


@pytest.mark.parametrize("wire", PROVIDERS, ids=str)
@pytest.mark.parametrize("body", [b"<html><body>Proxy login</body></html>", b"[1, 2]"], ids=["html", "array"])
def test_bodies_that_are_not_a_json_object_are_refused(wire: Wire, registry: ToolRegistry, body: bytes) -> None:
    with ScriptedOllama([Reply(200, body)]) as server, pytest.raises(ModelHTTPError) as excinfo:
        session(wire, server, registry, wire.turn)
    assert (excinfo.value.code, excinfo.value.status) == ("TLP-009", 200)


@pytest.mark.parametrize("wire", WIRES, ids=str)
def test_a_reply_over_the_size_cap_is_refused(wire: Wire, registry: ToolRegistry) -> None:
    huge = wire.calls(GOOD, text="x" * 300_000)
    with ScriptedOllama([huge]) as server, pytest.raises(ModelHTTPError) as excinfo:
        session(wire, server, registry, wire.turn, RetryConfig(max_response_bytes=100_000))
    assert excinfo.value.code == "TLP-007" and len(server.requests) == 1


@pytest.mark.parametrize("wire", PROVIDERS, ids=str)
def test_the_deadline_bounds_a_body_sent_a_byte_at_a_time(wire: Wire, registry: ToolRegistry) -> None:
    trickle = wire.calls(GOOD)
    trickle.trickle_s = 0.05
    started = time.monotonic()
    with ScriptedOllama([trickle] * 3) as server, pytest.raises((RetryExhaustedError, ModelHTTPError)):
        session(wire, server, registry, wire.turn, RetryConfig(deadline_s=1.0))
    assert time.monotonic() - started < 8.0


@pytest.mark.parametrize("wire", PROVIDERS, ids=str)
def test_cancelling_many_queued_chats_is_quick(wire: Wire, registry: ToolRegistry) -> None:
    slow = wire.calls(GOOD)
    slow.delay_s = 2.0

    async def body(client: Any) -> float:
        tasks = [asyncio.create_task(wire.turn(client)) for _ in range(500)]
        await asyncio.sleep(0.5)  # 50 chats hold the connections, the rest wait for one
        started = time.monotonic()
        for task in tasks:
            task.cancel()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        assert all(isinstance(r, asyncio.CancelledError) for r in results)
        return time.monotonic() - started

    with ScriptedOllama(lambda _: slow) as server:
        took = session(wire, server, registry, body, RetryConfig(max_connections=50))
    assert took < 3.0


# ---- reflection, public -------------------------------------------------------------------------------


def test_reflection_messages_for_each_provider(registry: ToolRegistry) -> None:
    body = {"message": {"tool_calls": [
        {"id": "c1", "function": {"name": "read_file", "arguments": '{"path": 5}'}},
        {"id": "c2", "function": {"name": "read_file", "arguments": "{path: "}},
    ]}}
    errors = toolmend.parse_response(body, registry, repair=False).errors
    ollama = toolmend.reflection_messages(errors, "ollama", text="Reading.", registry=registry)
    assert ollama[0] == {"role": "assistant", "content": 'Reading.\nread_file({"path": 5})\nread_file({path: )'}
    assert [m["role"] for m in ollama[1:]] == ["tool", "tool"] and "read_file expects" in ollama[1]["content"]

    openai = toolmend.reflection_messages(errors, "openai", text="Reading.", registry=registry, ids=["c1", "c2"])
    assert [c["id"] for c in openai[0]["tool_calls"]] == ["c1", "c2"]
    assert openai[0]["tool_calls"][1]["function"] == {"name": "read_file", "arguments": "{path: "}
    assert [(m["role"], m["tool_call_id"]) for m in openai[1:]] == [("tool", "c1"), ("tool", "c2")]
    assert "TSR-004" in openai[1]["content"] and "TLP-004" in openai[2]["content"]

    anthropic = toolmend.reflection_messages(errors, "anthropic", text="Reading.", registry=registry, ids=["toolu_1", None])
    assistant, user = anthropic
    assert assistant["content"][0] == {"type": "text", "text": "Reading.\nread_file({path: )"}  # not an object: text
    assert assistant["content"][1] == {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": 5}}
    result, replayed = user["content"]
    assert (result["type"], result["tool_use_id"], result["is_error"]) == ("tool_result", "toolu_1", True)
    assert replayed["type"] == "text" and "TLP-004" in replayed["text"]
    with pytest.raises(ValueError, match="provider"):
        toolmend.reflection_messages(errors, "cohere")  # type: ignore[arg-type]


def test_made_up_ids_are_unique_within_a_reflection(registry: ToolRegistry) -> None:
    body = {"message": {"tool_calls": [{"function": {"name": "read_file", "arguments": "{}"}}] * 3}}
    errors = toolmend.parse_response(body, registry).errors
    messages = toolmend.reflection_messages(errors, "openai", ids=["same", "same", None])
    ids = [c["id"] for c in messages[0]["tool_calls"]]
    assert len(set(ids)) == 3 and ids[0] == "same"
    assert [m["tool_call_id"] for m in messages[1:]] == ids


# ---- server-sent events, however they are framed and split -------------------------------------------


@pytest.mark.parametrize("write_size", [1, 3, 64])
@pytest.mark.parametrize("crlf", [False, True], ids=["lf", "crlf"])
def test_server_sent_events_split_anywhere_give_the_same_events(registry: ToolRegistry, write_size: int, crlf: bool) -> None:
    import openai_server as oa

    wire = Wire("openai", True)
    lines = oa.sse_lines({"name": "read_file", "arguments": {"path": "é/∂.txt"}, "id": "c1"}, text=["Ünïcode ", "text "])
    if crlf:
        lines = [line.replace(b"\n", b"\r\n") for line in lines]
    lines.insert(1, b"event: message\nid: 7\nretry: 1000\n\n")  # fields a chat server may send, ignored
    whole = Reply(lines=lines, content_type="text/event-stream")
    split = Reply(lines=lines, content_type="text/event-stream", write_size=write_size)

    def collect(server: ScriptedOllama) -> list[Any]:
        events: list[Any] = []
        session(wire, server, registry, lambda c: wire.turn(c, events))
        return events

    with ScriptedOllama([whole, split]) as server:
        first, second = collect(server), collect(server)
    shape = [(type(e).__name__, getattr(e, "text", None)) for e in first]
    assert shape == [(type(e).__name__, getattr(e, "text", None)) for e in second]
    assert shape[:2] == [("TextDelta", "Ünïcode "), ("TextDelta", "text ")]
    done = second[-1].result
    assert done.tool_calls[0].arguments == {"path": "é/∂.txt"} and done.usage.total_tokens == 150
    assert done.finish_reason == "tool_calls"
