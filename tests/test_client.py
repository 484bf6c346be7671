"""The turn engine over real HTTP on 127.0.0.1, every scenario four ways: the Ollama and the OpenAI-compatible
provider, each through ``chat`` and ``chat_stream`` (see wires.py). The same scripted faults must give the
same lanes, the same errors and the same results."""

from __future__ import annotations

import asyncio
import copy
import json
import time
from typing import Any

import pytest

from ollama_server import Reply, ScriptedOllama
from toolmend import ToolRegistry
from toolmend.client import TextDelta, ToolCallCompleted, ToolCallFailed
from toolmend.config import RetryConfig
from toolmend.errors import CircuitOpenError, MidStreamError, ModelHTTPError, RetryExhaustedError, TokenBudgetError
from wires import WIRES, Wire, arguments_of, instant, read_file_registry

GOOD = {"name": "read_file", "arguments": {"path": "test.txt"}, "id": "call_good"}
BAD = {"name": "read_file", "arguments": {"path": 5}, "id": "call_bad"}

pytestmark = pytest.mark.parametrize("wire", WIRES, ids=str)


@pytest.fixture
def registry() -> ToolRegistry:
    return read_file_registry()  # type: ignore[no-any-return]


class Sleeps:
    """An instant sleep that records the delays asked for."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def run(wire: Wire, script: list[Reply], registry: Any, events: list[Any] | None = None, sleeps: Any = None, **config: Any) -> tuple[Any, ScriptedOllama]:
    async def go(server: ScriptedOllama) -> Any:
        async with wire.client(server, registry, RetryConfig(**config), sleep=sleeps or instant, rand=lambda: 0.5) as client:
            return await wire.turn(client, events)

    with ScriptedOllama(script) as server:
        return asyncio.run(go(server)), server


def fails(wire: Wire, script: list[Reply], registry: Any, error: type[BaseException], events: list[Any] | None = None, **config: Any) -> tuple[Any, ScriptedOllama]:
    with ScriptedOllama(script) as server, pytest.raises(error) as excinfo:

        async def go() -> Any:
            async with wire.client(server, registry, RetryConfig(**config), rand=lambda: 0.5) as client:
                return await wire.turn(client, events)

        asyncio.run(go())
    return excinfo.value, server


# ---- success and reflection -------------------------------------------------------------------------


def test_valid_calls_come_back_with_ids_and_usage(wire: Wire, registry: ToolRegistry) -> None:
    result, server = run(wire, [wire.calls(GOOD, text="Reading. ")], registry)
    (call,) = result.tool_calls
    assert (call.id, call.name, call.arguments) == ("call_good", "read_file", {"path": "test.txt"})
    assert [a.lane for a in result.attempts] == ["ok"] and result.text.strip() == "Reading."
    assert result.usage.total_tokens == 150
    request = server.requests[0]
    assert request["path"] == wire.path and request["json"]["stream"] is wire.streamed
    assert [t["function"]["name"] for t in request["json"]["tools"]] == ["read_file"]
    # The result's message goes back into the history in the provider's own form.
    (sent,) = result.message["tool_calls"]
    arguments = sent["function"]["arguments"]
    assert (json.loads(arguments) if wire.provider == "openai" else arguments) == {"path": "test.txt"}


def test_a_failed_call_is_reflected_in_the_providers_form(wire: Wire, registry: ToolRegistry) -> None:
    script = [wire.calls(GOOD, BAD, text="Two files. "), wire.calls({**GOOD, "arguments": {"path": "b.txt"}, "id": "call_again"})]
    events: list[Any] = []
    result, server = run(wire, script, registry, events)
    assert [a.lane for a in result.attempts] == ["model", "ok"]
    assert [c.arguments for c in result.tool_calls] == [{"path": "test.txt"}, {"path": "b.txt"}]
    assert result.text.strip() == "Two files."
    (prompt,) = wire.prompts(server, 1)
    assert "/path" in prompt and "expected string, got integer" in prompt
    assistant = wire.sent(server, 1)[1]
    if wire.provider == "openai":
        # The failed call itself, with its id and its arguments as the model wrote them, then its result.
        (failed,) = assistant["tool_calls"]
        assert failed["id"] == "call_bad" and failed["function"] == {"name": "read_file", "arguments": '{"path": 5}'}
        assert wire.sent(server, 1)[2] == {"role": "tool", "tool_call_id": "call_bad", "content": prompt}
    else:
        assert "tool_calls" not in assistant and 'read_file({"path":5})' in assistant["content"]
    if wire.streamed:
        assert not wire.failed_events(events)
        assert [e.call.id for e in events if isinstance(e, ToolCallCompleted)] == ["call_good", "call_again"]


def test_calls_still_failing_raise_after_the_events_and_count_against_the_breaker(wire: Wire, registry: ToolRegistry) -> None:
    bad = wire.calls(BAD, text="Trying. ")

    async def go(server: ScriptedOllama, events: list[Any]) -> None:
        config = RetryConfig(max_retries=1, breaker_threshold=1, breaker_reset_s=60)
        async with wire.client(server, registry, config) as client:
            with pytest.raises(RetryExhaustedError) as excinfo:
                await wire.turn(client, events)
            error = excinfo.value
            assert [a.lane for a in error.attempts] == ["model", "model"]
            assert error.last_error.code == "TSR-004" and error.attempt == 2 and error.correlation_id
            assert error.response is not None
            with pytest.raises(CircuitOpenError) as opened:  # one exhausted chat opened the circuit
                await wire.turn(client)
            assert opened.value.correlation_id and opened.value.correlation_id != error.correlation_id
            stats = client.stats()
            assert (stats["chats"], stats["chats_failed"], stats["chats_exhausted"], stats["chats_refused"]) == (2, 2, 1, 1)

    events: list[Any] = []
    with ScriptedOllama([bad, bad]) as server:
        asyncio.run(go(server, events))
        assert len(server.requests) == 2
    if wire.streamed:
        assert isinstance(events[-1], ToolCallFailed) and events[-1].error.code == "TSR-004"
        assert [e.text for e in events if isinstance(e, TextDelta)] == ["Trying. ", "Trying. "]


def test_max_retries_zero_turns_reflection_off(wire: Wire, registry: ToolRegistry) -> None:
    error, server = fails(wire, [wire.calls(BAD), wire.calls(GOOD)], registry, RetryExhaustedError, max_retries=0)
    assert len(server.requests) == 1 and [a.lane for a in error.attempts] == ["model"]


def test_token_budget_stops_reflection(wire: Wire, registry: ToolRegistry) -> None:
    script = [wire.calls(BAD, prompt_tokens=900, eval_tokens=200)] * 2
    error, server = fails(wire, script, registry, TokenBudgetError, token_budget=1000)
    assert error.usage.total_tokens == 1100 and len(server.requests) == 1


# ---- repair and validation switches ------------------------------------------------------------------


def test_repair_off_reflects_what_repair_would_mend(wire: Wire, registry: ToolRegistry) -> None:
    comma = {"name": "read_file", "arguments": '{"path": "a.txt",}'}
    result, _ = run(wire, [wire.calls(comma)], registry)
    assert [r.kind for r in result.repairs] == ["trailing_comma"]
    events: list[Any] = []
    result, server = run(wire, [wire.calls(comma), wire.calls(GOOD)], registry, events, enable_auto_repair=False)
    assert [a.lane for a in result.attempts] == ["model", "ok"] and result.attempts[0].error_code == "TLP-004"
    assert [c.arguments for c in result.tool_calls] == [{"path": "test.txt"}] and not result.repairs
    assert "TLP-004" in wire.prompts(server, 1)[0]
    assert not any(isinstance(e, ToolCallCompleted) and e.call.repairs for e in events)


def test_repair_off_applies_to_calls_written_in_text(wire: Wire, registry: ToolRegistry) -> None:
    text = 'Sure. <tool_call>{"name": "read_file", "arguments": {"path": "a.txt",}}</tool_call>'
    result, _ = run(wire, [wire.calls(text=text), wire.calls(GOOD)], registry, enable_auto_repair=False)
    assert [a.lane for a in result.attempts] == ["model", "ok"]
    assert [c.arguments for c in result.tool_calls] == [{"path": "test.txt"}]


def test_strict_validation_off_accepts_properties_the_schema_does_not_list(wire: Wire, registry: ToolRegistry) -> None:
    extra = {"name": "read_file", "arguments": {"path": "a.txt", "encoding": "utf-8"}}
    result, _ = run(wire, [wire.calls(extra), wire.calls(GOOD)], registry)
    assert [a.lane for a in result.attempts] == ["model", "ok"]  # strict: the extra property is refused
    result, _ = run(wire, [wire.calls(extra)], registry, strict_validation=False)
    assert [a.lane for a in result.attempts] == ["ok"]
    assert result.tool_calls[0].arguments == {"path": "a.txt", "encoding": "utf-8"}
    # Types are still checked.
    result, _ = run(wire, [wire.calls(BAD), wire.calls(GOOD)], registry, strict_validation=False)
    assert [a.lane for a in result.attempts] == ["model", "ok"]


# ---- a reply cut off by the token limit ----------------------------------------------------------------


def test_a_call_cut_off_by_the_token_limit_is_never_handed_out(wire: Wire, registry: ToolRegistry) -> None:
    if wire.provider == "ollama":
        # Ollama hands back a call it could not finish parsing as content: here, cut inside a string.
        first = wire.calls(text='<tool_call>{"name": "read_file", "arguments": {"path": "/etc/pa', finish="length")
    else:
        first = wire.calls({"name": "read_file", "arguments": '{"path": "/etc/pa', "id": "call_cut"}, finish="length")
    events: list[Any] = []
    result, server = run(wire, [first, wire.calls(GOOD)], registry, events)
    assert [a.lane for a in result.attempts] == ["model", "ok"] and result.attempts[0].error_code == "TLP-010"
    assert [c.arguments for c in result.tool_calls] == [{"path": "test.txt"}]
    assert not any(isinstance(e, ToolCallCompleted) and e.call.arguments.get("path") == "/etc/pa" for e in events)
    (prompt,) = wire.prompts(server, 1)
    assert "cut off" in prompt and "TLP-010" in prompt


def test_a_whole_call_in_a_reply_cut_later_is_kept(wire: Wire, registry: ToolRegistry) -> None:
    result, _ = run(wire, [wire.calls(GOOD, text="Reading", finish="length")], registry)
    assert [a.lane for a in result.attempts] == ["ok"] and result.finish_reason == "length"
    assert [c.arguments for c in result.tool_calls] == [{"path": "test.txt"}]


# ---- the server's own parser, salvage ---------------------------------------------------------------

RAW_500 = "error parsing tool call: raw='{\"path\": \"test.txt\",}', err=invalid character '}' looking for beginning of object key string"


def test_a_raw_call_the_server_refused_is_salvaged(wire: Wire, registry: ToolRegistry) -> None:
    result, server = run(wire, [wire.error(500, RAW_500)], registry)
    assert [a.lane for a in result.attempts] == ["salvaged"] and len(server.requests) == 1
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("read_file", {"path": "test.txt"})]


def test_an_unsalvageable_raw_call_is_replayed_as_text(wire: Wire, registry: ToolRegistry) -> None:
    refused = "error parsing tool call: raw='not json at all', err=invalid character 'o'"
    result, server = run(wire, [wire.error(500, refused), wire.calls(GOOD)], registry)
    assert [a.lane for a in result.attempts] == ["model", "ok"]
    sent = wire.sent(server, 1)
    assert any("not json at all" in str(m["content"]) for m in sent) and all("tool_calls" not in m for m in sent)


# ---- transport lane -----------------------------------------------------------------------------------


def test_503_drops_and_empty_replies_are_backed_off(wire: Wire, registry: ToolRegistry) -> None:
    sleeps = Sleeps()
    script = [wire.error(503, "busy"), Reply(drop=True), Reply(200, b""), wire.calls(GOOD)]
    result, _ = run(wire, script, registry, sleeps=sleeps, retry_delay_ms=100, model_http_retries=3)
    assert [a.lane for a in result.attempts] == ["transport"] * 3 + ["ok"]
    assert sleeps.delays == pytest.approx([0.05, 0.1, 0.2])  # full jitter at rand() = 0.5


def test_retry_after_is_honoured_and_too_long_fails_fast(wire: Wire, registry: ToolRegistry) -> None:
    sleeps = Sleeps()
    run(wire, [wire.error(429, "slow down", {"Retry-After": "2"}), wire.calls(GOOD)], registry, sleeps=sleeps)
    assert sleeps.delays == [2.0]
    error, server = fails(wire, [wire.error(429, "slow down", {"retry-after-ms": "60000"})], registry, ModelHTTPError)
    assert error.status == 429 and error.retry_after_s == pytest.approx(60.0) and len(server.requests) == 1
    assert error.correlation_id and error.attempt == 1 and error.response is not None


def test_rate_limit_reset_headers_say_how_long_to_wait(wire: Wire, registry: ToolRegistry) -> None:
    sleeps = Sleeps()
    headers = {"x-ratelimit-remaining-requests": "5", "x-ratelimit-reset-requests": "1s",
               "x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "1.5s"}
    run(wire, [wire.error(429, "rate limited", headers), wire.calls(GOOD)], registry, sleeps=sleeps)
    assert sleeps.delays == [1.5]  # the limit that ran out: tokens
    error, _ = fails(wire, [wire.error(429, "rate limited", {"x-ratelimit-reset-tokens": "6m0s"})], registry, ModelHTTPError)
    assert error.retry_after_s == pytest.approx(360.0)


def test_the_transport_budget_runs_out(wire: Wire, registry: ToolRegistry) -> None:
    error, server = fails(wire, [wire.error(502, "bad gateway")] * 3, registry, ModelHTTPError, model_http_retries=2)
    assert error.status == 502 and len(server.requests) == 3 and error.attempt == 3


def test_a_slow_reply_times_out_into_the_transport_lane(wire: Wire, registry: ToolRegistry) -> None:
    late = wire.calls({"name": "read_file", "arguments": {"path": "late"}})
    late.delay_s = 1.0
    result, _ = run(wire, [late, wire.calls(GOOD)], registry, first_byte_timeout_s=0.2)
    assert [a.lane for a in result.attempts] == ["transport", "ok"]


def test_the_deadline_bounds_the_whole_chat(wire: Wire, registry: ToolRegistry) -> None:
    slow = wire.calls(GOOD)
    slow.delay_s = 0.6
    started = time.monotonic()
    fails(wire, [slow] * 5, registry, (RetryExhaustedError, ModelHTTPError), deadline_s=0.5, model_http_retries=5)
    assert time.monotonic() - started < 5.0


# ---- fatal lane -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("status", "message"), [(404, "model 'nope' not found"), (400, "does not support tools"), (401, "unauthorized")])
def test_fatal_statuses_raise_at_once_with_the_chat_attached(wire: Wire, registry: ToolRegistry, status: int, message: str) -> None:
    error, server = fails(wire, [wire.error(status, message)], registry, ModelHTTPError)
    assert error.status == status and message in str(error) and len(server.requests) == 1
    assert error.correlation_id and error.attempt == 1 and isinstance(error.response, dict)


# ---- a malformed tool call in the request ------------------------------------------------------------


def test_a_malformed_call_in_the_callers_history_is_sent_well_formed(wire: Wire, registry: ToolRegistry) -> None:
    history = [
        {"role": "user", "content": "Read a.txt and b.txt"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "a.txt",}'}},
            {"id": "c2", "type": "function", "function": {"name": "read_file", "arguments": "{path: b.txt"}},
            {"id": "c3", "type": "function", "function": {"name": "read_file", "arguments": "no json here"}},
        ]},
        {"role": "tool", "tool_call_id": "c1", "content": "A"},
        {"role": "tool", "tool_call_id": "c3", "content": "C"},
    ]
    before = copy.deepcopy(history)

    async def go(server: ScriptedOllama) -> Any:
        async with wire.client(server, registry) as client:
            return await wire.turn(client, messages=history)

    with ScriptedOllama([wire.calls(GOOD)]) as server:
        asyncio.run(go(server))
    assert history == before  # the caller's list is untouched
    sent = server.requests[0]["json"]["messages"]
    calls = sent[1]["tool_calls"]
    assert [(c["id"], arguments_of(c)) for c in calls] == [("c1", {"path": "a.txt"}), ("c2", {"path": "b.txt"})]
    for call in calls:  # each call in the provider's own form
        assert isinstance(call["function"]["arguments"], str if wire.provider == "openai" else dict)
    assert "read_file(no json here)" in sent[1]["content"]
    assert sent[3] == {"role": "user", "content": "[result of read_file]\nC"}


def test_a_400_refusing_a_malformed_call_is_reflected_then_raised(wire: Wire, registry: ToolRegistry) -> None:
    refusal = wire.error(400, "invalid tool call arguments")
    sleeps = Sleeps()
    result, server = run(wire, [refusal, wire.calls(GOOD)], registry, sleeps=sleeps)
    assert [a.lane for a in result.attempts] == ["model", "ok"] and result.attempts[0].status == 400
    asked = wire.sent(server, 1)[-1]
    assert asked["role"] == "user" and "not valid JSON" in asked["content"] and "reformulate" in asked["content"]
    assert sleeps.delays == [pytest.approx(0.05)]  # backed off like a transport retry
    error, server = fails(wire, [refusal] * 3, registry, ModelHTTPError, model_http_retries=2)
    assert error.status == 400 and len(server.requests) == 3 and "invalid tool call arguments" in str(error)


# ---- streams ------------------------------------------------------------------------------------------------


def test_a_stream_cut_after_events_raises_with_what_was_received(wire: Wire, registry: ToolRegistry) -> None:
    if not wire.streamed:
        pytest.skip("a reply read whole is never half handed out")
    events: list[Any] = []
    error, server = fails(wire, [wire.cut(GOOD, text="Reading ")], registry, MidStreamError, events)
    assert len(server.requests) == 1 and error.attempt == 1  # never replayed
    assert events and isinstance(events[0], TextDelta)
    # Ollama sends a call whole; an OpenAI call is whole only once the reply says it is over, which it never did.
    received = [c.arguments for c in error.received]
    assert received == ([{"path": "test.txt"}] if wire.provider == "ollama" else [])


def test_a_cut_reply_before_any_event_is_retried(wire: Wire, registry: ToolRegistry) -> None:
    # A stream that dies before its first event; for chat, a dropped connection.
    first = wire.cut() if wire.streamed else Reply(drop=True)
    result, _ = run(wire, [first, wire.calls(GOOD)], registry)
    assert [a.lane for a in result.attempts] == ["transport", "ok"]


# ---- cancellation and the breaker's half-open trial -----------------------------------------------------


def test_cancelling_during_a_backoff_leaves_the_client_usable(wire: Wire, registry: ToolRegistry) -> None:
    async def go(server: ScriptedOllama) -> Any:
        async def forever(_: float) -> None:
            await asyncio.Event().wait()

        async with wire.client(server, registry, sleep=forever) as client:
            task = asyncio.create_task(wire.turn(client))
            while len(server.requests) < 1:
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.05)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            result = await wire.turn(client)
            return result, client.stats()

    with ScriptedOllama([wire.error(503, "busy"), wire.calls(GOOD)]) as server:
        result, stats = asyncio.run(go(server))
    assert result.tool_calls[0].arguments == {"path": "test.txt"}
    assert (stats["chats_cancelled"], stats["chats"], stats["chats_ok"]) == (1, 1, 1)


def test_the_breaker_half_opens_and_closes(wire: Wire, registry: ToolRegistry) -> None:
    clock = [1000.0]
    bad, good = wire.calls(BAD), wire.calls(GOOD)

    async def go(server: ScriptedOllama) -> None:
        config = RetryConfig(max_retries=1, breaker_threshold=2, breaker_reset_s=30)
        async with wire.client(server, registry, config, clock=lambda: clock[0]) as client:
            for _ in range(2):
                with pytest.raises(RetryExhaustedError):
                    await wire.turn(client)
            with pytest.raises(CircuitOpenError, match="in 30.0s"):
                await wire.turn(client)
            clock[0] += 31  # the trial fails: open again
            with pytest.raises(RetryExhaustedError):
                await wire.turn(client)
            with pytest.raises(CircuitOpenError):
                await wire.turn(client)
            clock[0] += 31  # the next trial succeeds and closes the circuit
            assert (await wire.turn(client)).tool_calls[0].arguments == {"path": "test.txt"}
            assert (await wire.turn(client)).tool_calls

    with ScriptedOllama([bad] * 6 + [good, good]) as server:
        asyncio.run(go(server))


def test_a_server_refusing_the_raw_arguments_of_a_reflection_gets_them_as_text(wire: Wire, registry: ToolRegistry) -> None:
    # OpenAI's own API takes any arguments string back; a stricter server (Ollama's /v1) refuses the whole request.
    broken = {"name": "read_file", "arguments": "{path: x", "id": "call_broken"}
    script = [wire.calls(broken), wire.error(400, "invalid tool call arguments"), wire.calls(GOOD)]
    result, server = run(wire, script, registry, enable_auto_repair=False)
    assert [a.lane for a in result.attempts] == ["model", "model", "ok"]
    reflected, resent = wire.sent(server, 1), wire.sent(server, 2)
    if wire.provider == "openai":
        assert reflected[1]["tool_calls"][0]["function"]["arguments"] == "{path: x"
    for message in resent:  # every call left is well-formed; the broken one is text, its result a user message
        for call in message.get("tool_calls") or ():
            assert isinstance(arguments_of(call), dict)
    assert any("read_file({path: x)" in str(m["content"]) for m in resent if m["role"] == "assistant")
    assert resent[-1]["role"] == "user" and "not valid JSON" in resent[-1]["content"]
    assert not any(m["role"] == "tool" and m.get("tool_call_id") == "call_broken" for m in resent)
