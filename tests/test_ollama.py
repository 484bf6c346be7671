"""OllamaClient over real HTTP against a scripted Ollama-protocol server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import copy
import logging
from pathlib import Path
from typing import Any

import pytest

from ollama_server import Reply, ScriptedOllama, chat_reply
from toolmend import ToolRegistry
from toolmend.config import RetryConfig
from toolmend.errors import ModelHTTPError, RetryExhaustedError
from toolmend.ollama import OllamaClient

READ_FILE = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
WRITE_FILE = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
    "required": ["path", "content"],
}
MESSAGES = [{"role": "user", "content": "Read test.txt"}]


@pytest.fixture
def registry() -> ToolRegistry:
    reg = ToolRegistry()
    reg.register("read_file", READ_FILE, description="Read a file")
    reg.register("write_file", WRITE_FILE, description="Write a file")
    return reg


class Sleeps:
    """An instant sleep that records the delays asked for."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def run_chat(server: ScriptedOllama, registry: ToolRegistry, sleeps: Sleeps | None = None, **config: Any) -> Any:
    async def go() -> Any:
        cfg = RetryConfig(**config)
        async with OllamaClient(server.url, "test-model", registry, cfg, sleep=sleeps or Sleeps(), rand=lambda: 0.5) as client:
            return await client.chat(MESSAGES)

    return asyncio.run(go())


def tool_messages(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in request["json"]["messages"] if m["role"] in ("tool", "user")][1:]


# ---- success and reflection ---------------------------------------------------------------------


def test_valid_calls_come_back_with_ids_and_tools_are_sent(registry: ToolRegistry) -> None:
    script = [chat_reply({"name": "read_file", "arguments": {"path": "test.txt"}, "id": "call_abc12345"})]
    with ScriptedOllama(script) as server:
        result = run_chat(server, registry)
    (call,) = result.tool_calls
    assert (call.id, call.name, call.arguments) == ("call_abc12345", "read_file", {"path": "test.txt"})
    assert [a.lane for a in result.attempts] == ["ok"]
    request = server.requests[0]
    assert request["path"] == "/api/chat" and request["json"]["stream"] is False
    assert {t["function"]["name"] for t in request["json"]["tools"]} == {"read_file", "write_file"}
    assert result.usage.total_tokens == 150


def test_trailing_comma_is_repaired_without_a_retry(registry: ToolRegistry) -> None:
    with ScriptedOllama([chat_reply({"name": "read_file", "arguments": '{"path": "test.txt",}'})]) as server:
        result = run_chat(server, registry)
    assert result.tool_calls[0].arguments == {"path": "test.txt"}
    assert [r.kind for r in result.repairs] == ["trailing_comma"]
    assert len(server.requests) == 1


def test_success_after_one_reflection_with_the_error_in_the_prompt(registry: ToolRegistry, caplog: pytest.LogCaptureFixture) -> None:
    script = [
        chat_reply({"name": "read_file", "arguments": "path: missing quote"}),
        chat_reply({"name": "read_file", "arguments": {"path": "test.txt"}}),
    ]
    messages_before = copy.deepcopy(MESSAGES)
    with caplog.at_level(logging.INFO, logger="toolmend"), ScriptedOllama(script) as server:
        result = run_chat(server, registry)
    assert result.tool_calls[0].arguments == {"path": "test.txt"}
    assert [a.lane for a in result.attempts] == ["model", "ok"]
    assert MESSAGES == messages_before  # the caller's list is untouched
    (prompt,) = tool_messages(server.requests[1])
    assert prompt["role"] == "tool" and prompt["tool_name"] == "read_file"
    assert "read_file" in prompt["content"] and "path: missing quote" in prompt["content"]
    assert "TLP-004" in prompt["content"] and "expected a JSON value" in prompt["content"]
    assert "Retry attempt 1" in caplog.text
    assert "missing quote" not in caplog.text  # argument values never at INFO


def test_validation_failure_is_reflected_with_path_expected_and_actual(registry: ToolRegistry) -> None:
    script = [
        chat_reply({"name": "read_file", "arguments": {"path": 12345}}),
        chat_reply({"name": "read_file", "arguments": {"path": "test.txt"}}),
    ]
    with ScriptedOllama(script) as server:
        result = run_chat(server, registry)
    assert result.tool_calls[0].arguments == {"path": "test.txt"}
    (prompt,) = tool_messages(server.requests[1])
    assert "/path" in prompt["content"] and "expected string, got integer" in prompt["content"]
    assert "read_file expects" in prompt["content"]


def test_only_failed_calls_are_asked_again(registry: ToolRegistry) -> None:
    script = [
        chat_reply(
            {"name": "read_file", "arguments": {"path": "a.txt"}},
            {"name": "write_file", "arguments": {"path": "b.txt"}},
        ),
        chat_reply({"name": "write_file", "arguments": {"path": "b.txt", "content": "hi"}}),
    ]
    with ScriptedOllama(script) as server:
        result = run_chat(server, registry)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [
        ("read_file", {"path": "a.txt"}),
        ("write_file", {"path": "b.txt", "content": "hi"}),
    ]
    prompts = tool_messages(server.requests[1])
    assert [p["tool_name"] for p in prompts] == ["write_file"]


def test_max_retries_is_respected_and_usage_is_summed(registry: ToolRegistry) -> None:
    script = [
        chat_reply({"name": "read_file", "arguments": "still invalid"}, prompt_tokens=p, eval_tokens=e)
        for p, e in [(100, 50), (200, 100), (300, 150)]
    ]
    with ScriptedOllama(script) as server, pytest.raises(RetryExhaustedError) as excinfo:
        run_chat(server, registry, max_retries=2)
    assert len(server.requests) == 1 + 2
    error = excinfo.value
    assert [a.lane for a in error.attempts] == ["model"] * 3
    assert error.last_error.code == "TLP-004"
    assert (error.usage.prompt_tokens, error.usage.completion_tokens) == (100 + 200 + 300, 50 + 100 + 150)
    assert error.correlation_id


# ---- Ollama's own parser refused the call -----------------------------------------------------------

RAW_500 = "error parsing tool call: raw='{\"path\": \"test.txt\",}', err=invalid character '}' looking for beginning of object key string"


def test_raw_call_in_a_500_is_salvaged_without_a_second_request(registry: ToolRegistry) -> None:
    with ScriptedOllama([Reply(500, {"error": RAW_500})]) as server:
        result = run_chat(server, registry)
    (call,) = result.tool_calls
    assert (call.name, call.arguments) == ("read_file", {"path": "test.txt"})
    assert [a.lane for a in result.attempts] == ["salvaged"]
    assert len(server.requests) == 1


def test_unsalvageable_raw_call_is_reflected_and_in_stream_errors_are_read(registry: ToolRegistry) -> None:
    old_style = {"error parsing tool call": "raw='{\"qq\": 1, \"zz\": [', err=unexpected end of JSON input"}
    script = [
        Reply(200, {"error": "error parsing tool call: raw='not json at all', err=invalid character 'o'"}),
        Reply(500, old_style),
        chat_reply({"name": "read_file", "arguments": {"path": "test.txt"}}),
    ]
    with ScriptedOllama(script) as server:
        result = run_chat(server, registry)
    assert [a.lane for a in result.attempts] == ["model", "model", "ok"]
    replayed = server.requests[1]["json"]["messages"]
    assert any("not json at all" in m["content"] for m in replayed)
    assert all("tool_calls" not in m for m in replayed)  # a failed call is never replayed as arguments


# ---- transport lane ---------------------------------------------------------------------------------


def test_503_and_dropped_connections_are_backed_off(registry: ToolRegistry) -> None:
    sleeps = Sleeps()
    script = [
        Reply(503, {"error": "server busy, please try again.  maximum pending requests exceeded"}),
        Reply(drop=True),
        chat_reply({"name": "read_file", "arguments": {"path": "test.txt"}}),
    ]
    with ScriptedOllama(script) as server:
        result = run_chat(server, registry, sleeps, retry_delay_ms=100)
    assert [a.lane for a in result.attempts] == ["transport", "transport", "ok"]
    # Full jitter at rand() = 0.5: half of 100 ms, then half of 200 ms.
    assert sleeps.delays == pytest.approx([0.05, 0.1])


def test_429_retry_after_is_honoured_and_too_long_fails_fast(registry: ToolRegistry) -> None:
    sleeps = Sleeps()
    script = [Reply(429, {"error": "slow down"}, {"Retry-After": "2"}), chat_reply({"name": "read_file", "arguments": {"path": "a"}})]
    with ScriptedOllama(script) as server:
        run_chat(server, registry, sleeps)
    assert sleeps.delays == [2.0]
    with ScriptedOllama([Reply(429, {"error": "slow down"}, {"retry-after-ms": "60000"})]) as server:
        with pytest.raises(ModelHTTPError) as excinfo:
            run_chat(server, registry, Sleeps(), backoff_cap_ms=10_000)
    assert excinfo.value.status == 429 and excinfo.value.retry_after_s == pytest.approx(60.0)
    assert len(server.requests) == 1


def test_transport_budget_runs_out(registry: ToolRegistry) -> None:
    script = [Reply(502, {"error": "bad gateway"})] * 3
    with ScriptedOllama(script) as server, pytest.raises(ModelHTTPError) as excinfo:
        run_chat(server, registry, Sleeps(), model_http_retries=2)
    assert excinfo.value.status == 502 and len(server.requests) == 3


# ---- fatal lane ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "error"),
    [(404, "model 'nope' not found"), (400, "test-model does not support tools"), (401, "unauthorized")],
)
def test_fatal_errors_raise_at_once(registry: ToolRegistry, status: int, error: str) -> None:
    with ScriptedOllama([Reply(status, {"error": error})]) as server, pytest.raises(ModelHTTPError) as excinfo:
        run_chat(server, registry)
    assert excinfo.value.status == status and error in str(excinfo.value)
    assert len(server.requests) == 1


# ---- concurrency and cancellation -------------------------------------------------------------------


def test_cancellation_during_a_backoff_sleep_leaves_the_client_usable(registry: ToolRegistry) -> None:
    never = asyncio.Event

    async def go(server: ScriptedOllama) -> Any:
        async def forever(_: float) -> None:
            await never().wait()

        async with OllamaClient(server.url, "m", registry, sleep=forever) as client:
            task = asyncio.create_task(client.chat(MESSAGES))
            while len(server.requests) < 1:
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.05)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            return await client.chat(MESSAGES)

    script = [Reply(503, {"error": "busy"}), chat_reply({"name": "read_file", "arguments": {"path": "x"}})]
    with ScriptedOllama(script) as server:
        result = asyncio.run(go(server))
    assert result.tool_calls[0].arguments == {"path": "x"}


def test_concurrent_chats_share_one_client(registry: ToolRegistry) -> None:
    script = [chat_reply({"name": "read_file", "arguments": {"path": f"{i}.txt"}}) for i in range(8)]

    async def go(server: ScriptedOllama) -> list[Any]:
        async with OllamaClient(server.url, "m", registry) as client:
            return await asyncio.gather(*(client.chat(MESSAGES) for _ in range(8)))

    with ScriptedOllama(script) as server:
        results = asyncio.run(go(server))
    paths = sorted(r.tool_calls[0].arguments["path"] for r in results)
    assert paths == sorted(f"{i}.txt" for i in range(8))
    assert len({r.correlation_id for r in results}) == 8


# ---- configuration --------------------------------------------------------------------------------


def test_retry_config_defaults_ranges_and_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = RetryConfig()
    assert (cfg.max_retries, cfg.retry_delay_ms, cfg.max_nesting_depth, cfg.max_argument_size) == (3, 100, 64, 1_048_576)
    with pytest.raises(ValueError, match="max_retries"):
        RetryConfig(max_retries=11)
    with pytest.raises(ValueError, match="no field 'max_retry'"):
        RetryConfig.load(max_retry=2)
    yml = tmp_path / "config.yml"
    yml.write_text("model:\n  providers:\n    ollama:\n      tool_call:\n        max_retries: 5\n        retry_delay_ms: 50\n")
    assert RetryConfig.load(yml).max_retries == 5
    monkeypatch.setenv("TOOLMEND_MAX_RETRIES", "7")
    assert RetryConfig.load(yml).max_retries == 7  # environment over file
    assert RetryConfig.load(yml, max_retries=2).max_retries == 2  # argument over environment
    assert RetryConfig.load(yml).retry_delay_ms == 50
    toml = tmp_path / "toolmend.toml"
    toml.write_text("[tool_call]\nmax_nesting_depth = 32\n")
    assert RetryConfig.load(toml).max_nesting_depth == 32
    with pytest.raises(ValueError):
        RetryConfig.load(toml, max_nesting_depth=0)


def test_chat_command_prints_calls_and_the_ledger(capsys: pytest.CaptureFixture[str]) -> None:
    from toolmend.cli import main

    tools = str(Path(__file__).parent.parent / "examples" / "tools.json")
    script = [
        chat_reply({"name": "read_file", "arguments": "nope"}),
        chat_reply({"name": "read_file", "arguments": '{"path": "notes.txt",}'}),
    ]
    with ScriptedOllama(script) as server:
        status = main(["chat", "--model", "m", "--message", "read notes", "--tools", tools, "--host", server.url])
    out = capsys.readouterr().out
    assert status == 0
    assert "call 0 read_file" in out and '"path": "notes.txt"' in out and "trailing_comma" in out
    assert "attempt 1: model HTTP 200 TLP-004" in out and "attempt 2: ok" in out


def test_slow_reply_times_out_into_the_transport_lane(registry: ToolRegistry) -> None:
    script = [chat_reply({"name": "read_file", "arguments": {"path": "late"}}), chat_reply({"name": "read_file", "arguments": {"path": "x"}})]
    script[0].delay_s = 1.0
    with ScriptedOllama(script) as server:
        result = run_chat(server, registry, Sleeps(), first_byte_timeout_s=0.2)
    assert [a.lane for a in result.attempts] == ["transport", "ok"]
    assert result.tool_calls[0].arguments == {"path": "x"}


def test_token_budget_stops_reflection(registry: ToolRegistry) -> None:
    script = [chat_reply({"name": "read_file", "arguments": "bad"}, prompt_tokens=900, eval_tokens=200)] * 3
    with ScriptedOllama(script) as server, pytest.raises(RetryExhaustedError):
        run_chat(server, registry, token_budget=1000)
    assert len(server.requests) == 1


def test_circuit_opens_after_repeated_exhaustion(registry: ToolRegistry) -> None:
    from toolmend.errors import CircuitOpenError

    script = [chat_reply({"name": "read_file", "arguments": "bad"})] * 4

    async def go(server: ScriptedOllama) -> None:
        cfg = RetryConfig(max_retries=1, breaker_threshold=2, breaker_reset_s=60)
        async with OllamaClient(server.url, "m", registry, cfg) as client:
            for _ in range(2):
                with pytest.raises(RetryExhaustedError):
                    await client.chat(MESSAGES)
            with pytest.raises(CircuitOpenError, match="circuit open"):
                await client.chat(MESSAGES)

    with ScriptedOllama(script) as server:
        asyncio.run(go(server))
    assert len(server.requests) == 4  # the third chat sent nothing


def test_stats_and_audit_lines_match_the_attempts(registry: ToolRegistry, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from toolmend.cli import main

    audit = tmp_path / "audit.jsonl"
    script = [
        Reply(503, {"error": "busy"}),
        chat_reply({"name": "read_file", "arguments": "bad"}),
        chat_reply({"name": "read_file", "arguments": '{"path": "a",}'}),
    ]

    async def go(server: ScriptedOllama) -> tuple[Any, dict[str, Any]]:
        cfg = RetryConfig(audit_path=str(audit))
        async with OllamaClient(server.url, "m", registry, cfg, sleep=Sleeps(), rand=lambda: 0.0) as client:
            result = await client.chat(MESSAGES)
            return result, client.stats()

    with ScriptedOllama(script) as server:
        result, stats = asyncio.run(go(server))
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    assert [(line["attempt"], line["lane"], line["code"]) for line in lines] == [
        (a.number, a.lane, a.error_code) for a in result.attempts
    ] == [(1, "transport", None), (2, "model", "TLP-004"), (3, "ok", None)]
    assert {line["correlation_id"] for line in lines} == {result.correlation_id}
    assert "bad" not in audit.read_text()
    assert (stats["attempts"], stats["backed_off"], stats["reflected"], stats["chats"]) == (3, 1, 1, 1)
    assert stats["calls_parsed"] == 1 and stats["repairs_by_kind"] == {"trailing_comma": 1}
    assert stats["failed_by_code"] == {"TLP-004": 1}
    assert sum(stats["attempt_latency"].values()) == 3
    assert main(["stats", str(audit)]) == 0
    out = capsys.readouterr().out
    assert "3 attempts in 1 chats" in out and "lane transport" in out and "code TLP-004" in out
