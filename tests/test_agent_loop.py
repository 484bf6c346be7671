"""The agent loop (``client.run``) over real HTTP on 127.0.0.1, scripted turn by turn, for both providers and both
the async clients and their sync twins: the calls run, their results go back in the provider's form, failed calls
are reflected within their turn, and the loop ends at an answer or at max_turns."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from ollama_server import Reply, ScriptedOllama
from toolmend import RunResult, ToolRegistry
from toolmend.errors import RetryExhaustedError
from wires import PROVIDERS, Wire, instant

MESSAGES = [{"role": "user", "content": "What does notes.txt say?"}]
READ = {"name": "read_file", "arguments": {"path": "notes.txt"}, "id": "call_read"}
BAD = {"name": "read_file", "arguments": {"path": 5}, "id": "call_bad"}
FILES = {"notes.txt": "buy tea", "todo.txt": "call Ada"}


def registry(opened: list[str] | None = None) -> ToolRegistry:
    reg = ToolRegistry()

    @reg.tool
    def read_file(path: str) -> str:
        """Read a text file."""
        if opened is not None:
            opened.append(path)
        return FILES[path]  # a missing file raises KeyError: an error result, not the end of the loop

    return reg


SIDES = ["async", "sync"]


def run(wire: Wire, side: str, script: list[Reply], reg: Any, **request: Any) -> tuple[RunResult, ScriptedOllama]:
    """``client.run(MESSAGES, **request)`` on this wire's async client or its sync twin."""
    with ScriptedOllama(script) as server:
        if side == "sync":
            with wire.sync_client(server, reg) as client:
                return client.run(MESSAGES, **request), server

        async def go() -> RunResult:
            async with wire.client(server, reg, sleep=instant) as client:
                return await client.run(MESSAGES, **request)  # type: ignore[no-any-return]

        return asyncio.run(go()), server


def result_message(wire: Wire, call_id: str, name: str, content: str) -> dict[str, Any]:
    if wire.provider == "ollama":
        return {"role": "tool", "tool_name": name, "content": content}
    return {"role": "tool", "tool_call_id": call_id, "content": content}


@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("wire", PROVIDERS, ids=str)
def test_the_loop_runs_the_calls_and_ends_at_the_answer(wire: Wire, side: str) -> None:
    opened: list[str] = []
    script = [wire.calls(READ, text="Reading."), wire.calls(text="It says: buy tea.")]
    result, server = run(wire, side, script, registry(opened))
    assert result.finished and result.stop_reason == "answer" and result.answer == "It says: buy tea."
    assert opened == ["notes.txt"] and result.turns == 2 and len(server.requests) == 2
    assert [(r.name, r.output) for r in result.tool_results] == [("read_file", "buy tea")]
    assert result.usage.total_tokens == 300
    # The transcript: the caller's message, the assistant's call, its result, the answer; sent as it grew.
    user, assistant, tool, answer = result.messages
    assert user == MESSAGES[0] and assistant == result.chats[0].message and answer == result.chats[1].message
    assert tool == result_message(wire, "call_read", "read_file", "buy tea")
    (call,) = assistant["tool_calls"]
    assert call["id"] == "call_read"
    assert server.requests[1]["json"]["messages"] == result.messages[:3]
    assert MESSAGES == [{"role": "user", "content": "What does notes.txt say?"}]  # never modified


@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("wire", PROVIDERS, ids=str)
def test_a_failed_call_is_reflected_in_its_turn_and_only_the_good_call_runs(wire: Wire, side: str) -> None:
    opened: list[str] = []
    script = [wire.calls(BAD), wire.calls(READ), wire.calls(text="buy tea")]
    result, server = run(wire, side, script, registry(opened))
    assert result.finished and opened == ["notes.txt"] and result.turns == 2
    assert [a.lane for a in result.chats[0].attempts] == ["model", "ok"]
    prompts = [m["content"] for m in server.requests[1]["json"]["messages"] if m["role"] == "tool"]
    assert len(prompts) == 1 and "/path" in prompts[0]  # the reflection, inside the first turn
    # The transcript keeps the clean turn: the reflection is the chat's own business.
    assert [m["role"] for m in result.messages] == ["user", "assistant", "tool", "assistant"]


@pytest.mark.parametrize("wire", PROVIDERS, ids=str)
def test_a_tool_that_raises_goes_back_to_the_model_as_an_error(wire: Wire) -> None:
    missing = {**READ, "arguments": {"path": "gone.txt"}, "id": "call_gone"}
    script = [wire.calls(missing), wire.calls({**READ, "arguments": {"path": "todo.txt"}, "id": "c2"}), wire.calls(text="Call Ada.")]
    result, server = run(wire, "async", script, registry())
    assert result.finished and result.answer == "Call Ada." and result.turns == 3
    failed, ok = result.tool_results
    assert failed.error is not None and failed.error.type == "KeyError" and ok.output == "call Ada"
    sent = server.requests[1]["json"]["messages"][-1]
    assert sent == result_message(wire, "call_gone", "read_file", "Error: KeyError: 'gone.txt'")


@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("wire", PROVIDERS, ids=str)
def test_the_loop_stops_at_max_turns_with_the_last_results_in_the_transcript(wire: Wire, side: str) -> None:
    again = {**READ, "id": "call_again"}
    result, server = run(wire, side, [wire.calls(READ), wire.calls(again), wire.calls(text="unused")], registry(), max_turns=2)
    assert not result.finished and result.stop_reason == "max_turns" and result.turns == 2
    assert len(server.requests) == 2 and len(result.tool_results) == 2
    assert result.messages[-1] == result_message(wire, "call_again", "read_file", "buy tea")
    assert result.answer == ""


@pytest.mark.parametrize("wire", PROVIDERS, ids=str)
def test_request_keywords_go_with_every_turn(wire: Wire) -> None:
    request = {"options": {"temperature": 0}} if wire.provider == "ollama" else {"temperature": 0.0}
    result, server = run(wire, "async", [wire.calls(READ), wire.calls(text="done")], registry(), **request)
    assert result.finished
    for sent in server.requests:
        body = sent["json"]
        assert (body["options"] if wire.provider == "ollama" else body["temperature"]) in ({"temperature": 0}, 0.0)
        assert [t["function"]["name"] for t in body["tools"]] == ["read_file"]


@pytest.mark.parametrize("wire", PROVIDERS, ids=str)
def test_a_tool_with_no_function_is_an_error_result_and_exhaustion_ends_the_loop(wire: Wire) -> None:
    reg = ToolRegistry()
    reg.register("read_file", {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})
    result, server = run(wire, "async", [wire.calls(READ), wire.calls(text="I cannot read it.")], reg)
    (only,) = result.tool_results
    assert only.error is not None and only.error.type == "NotImplementedError"
    assert "no function" in json.dumps(server.requests[1]["json"]["messages"][-1])
    with pytest.raises(RetryExhaustedError):
        run(wire, "async", [wire.calls(BAD)] * 4, registry())


def test_run_needs_a_registry_and_a_turn() -> None:
    wire = PROVIDERS[0]
    with pytest.raises(ValueError, match="ToolRegistry"):
        run(wire, "async", [], None)
    with pytest.raises(ValueError, match="max_turns"):
        run(wire, "sync", [], registry(), max_turns=0)
