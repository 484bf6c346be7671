"""Results out: a call in each provider's assistant-message form (checked with the SDKs' own types), value
equality, and pickling across processes."""

from __future__ import annotations

import pickle
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import pytest

import toolmend
from toolmend import ToolCall


def _calls() -> tuple[ToolCall, ...]:
    reply = {
        "message": {
            "role": "assistant",
            "tool_calls": [
                {"id": "call_7", "function": {"name": "write_file", "arguments": "{'path': 'a.txt', 'content': 'hi',}"}},
                {"function": {"name": "search", "arguments": {"query": "x", "limit": 3}}},
            ],
        }
    }
    return toolmend.parse_response(reply).calls


def test_a_call_in_openai_form_is_what_the_openai_sdk_reads() -> None:
    from openai.types.chat import ChatCompletionMessageToolCall

    call = _calls()[0]
    sdk = ChatCompletionMessageToolCall.model_validate(call.to_openai())
    assert (sdk.id, sdk.type, sdk.function.name) == ("call_7", "function", "write_file")
    assert toolmend.loads(sdk.function.arguments) == {"path": "a.txt", "content": "hi"}


def test_a_call_in_ollama_form_is_what_the_ollama_sdk_reads() -> None:
    import ollama

    call = _calls()[1]
    sdk = ollama.Message.ToolCall.model_validate(call.to_ollama())
    assert sdk.function.name == "search" and dict(sdk.function.arguments) == {"query": "x", "limit": 3}
    message = ollama.Message(role="assistant", tool_calls=[call.to_ollama()])
    assert message.tool_calls is not None and message.tool_calls[0].function.name == "search"


def test_a_call_in_anthropic_form_is_what_the_anthropic_sdk_reads() -> None:
    from anthropic.types import ToolUseBlock

    call = _calls()[0]
    block = ToolUseBlock.model_validate(call.to_anthropic())
    assert (block.type, block.id, block.name, block.input) == ("tool_use", "call_7", "write_file", call.arguments)


def test_as_dict_and_a_call_built_by_hand() -> None:
    call = _calls()[0]
    assert call.as_dict() == {"id": "call_7", "name": "write_file", "arguments": {"path": "a.txt", "content": "hi"}, "index": 0, "source": "tool_calls"}
    made = ToolCall("write_file", {"path": "a.txt", "content": "hi"}, id="call_7")
    assert made == call  # the repairs and the raw text are how it was found, not what it is
    assert ToolCall("f", {}).id.startswith("call_") and ToolCall("f", {}).id != ToolCall("f", {}).id
    assert made != ToolCall("write_file", {"path": "b.txt", "content": "hi"}, id="call_7")
    assert made != ToolCall("write_file", made.arguments, id="call_8")
    assert made != "write_file" and made.__hash__ is None  # arguments are a dict: not hashable


def _round_trip(value: Any) -> Any:
    return pickle.loads(pickle.dumps(value))


def test_results_pickle_and_come_back_equal() -> None:
    call = _calls()[0]
    back = _round_trip(call)
    assert back == call
    assert (back.raw_arguments, back.repairs, back.source) == (call.raw_arguments, call.repairs, call.source)
    registry = toolmend.ToolRegistry()
    registry.register("f", {"type": "object", "required": ["x"]})
    error = registry.try_validate("f", {}).errors[0]
    assert _round_trip(error) == error
    repaired = toolmend.repair("{'a': 1")
    assert _round_trip(repaired.repairs) == repaired.repairs
    failure = toolmend.repair("nope").error
    assert failure is not None and _round_trip(failure) == failure


def _name_and_arguments(call: ToolCall) -> tuple[str, dict[str, Any]]:
    return call.name, call.arguments


def test_a_call_crosses_a_process_pool() -> None:
    calls = _calls()
    with ProcessPoolExecutor(max_workers=1) as pool:
        back = list(pool.map(_round_trip, calls))
        names = list(pool.map(_name_and_arguments, calls))
    assert back == list(calls)
    assert names == [(c.name, c.arguments) for c in calls]


@pytest.mark.parametrize("source", ["tool_calls", "hermes", "stream"])
def test_source_is_kept_as_given(source: str) -> None:
    assert ToolCall("f", {}, source=source).source == source
