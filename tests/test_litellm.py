"""LiteLLM's objects, whole and streamed, read by their fields: built with litellm's own classes, and handed over
by litellm.completion itself from the loopback OpenAI-compatible server (no network).

LiteLLM keeps most fields in pydantic's extras, where a reader of ``__dict__`` sees nothing: a whole reply gave
TLP-001 and a stream no call and no error before these were read."""

from __future__ import annotations

import copy
import json
import os
from typing import Any

import pytest

# Else importing litellm fetches a price list from the network.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
litellm = pytest.importorskip("litellm")
from litellm.types.utils import (  # noqa: E402
    ChatCompletionDeltaToolCall,
    ChatCompletionMessageToolCall,
    Choices,
    Delta,
    Function,
    Message,
    ModelResponse,
    ModelResponseStream,
    StreamingChoices,
)

import toolmend  # noqa: E402
from openai_server import ScriptedOpenAI, completion, streamed  # noqa: E402

ARGS = {"path": "notes.txt", "mode": "append"}


def registry() -> toolmend.ToolRegistry:
    reg = toolmend.ToolRegistry()
    reg.register(
        "write_file",
        {
            "type": "object",
            "properties": {"path": {"type": "string"}, "mode": {"enum": ["write", "append"]}},
            "required": ["path"],
        },
    )
    return reg


def whole(arguments: str, content: str | None = None) -> Any:
    call = ChatCompletionMessageToolCall(id="call_7", type="function", function=Function(name="write_file", arguments=arguments))
    message = Message(role="assistant", content=content, tool_calls=[call])
    return ModelResponse(model="m", choices=[Choices(index=0, finish_reason="tool_calls", message=message)])


def chunks(arguments: str, pieces: int = 3) -> list[Any]:
    first = ChatCompletionDeltaToolCall(id="call_7", index=0, type="function", function=Function(name="write_file", arguments=""))
    out = [ModelResponseStream(choices=[StreamingChoices(delta=Delta(content="Writing. ", tool_calls=[first]))])]
    step = -(-len(arguments) // pieces)
    for at in range(0, len(arguments), step):
        piece = ChatCompletionDeltaToolCall(index=0, function=Function(arguments=arguments[at : at + step]))
        out.append(ModelResponseStream(choices=[StreamingChoices(delta=Delta(tool_calls=[piece]))]))
    out.append(ModelResponseStream(choices=[StreamingChoices(delta=Delta(), finish_reason="tool_calls")]))
    return out


def test_litellm_keeps_its_fields_where_dict_readers_do_not_look() -> None:
    # The premise: without this, the test below would pass for the wrong reason.
    call = whole("{}").choices[0].message.tool_calls[0]
    assert vars(call) == {}
    assert set(call.__pydantic_extra__) >= {"id", "function"}


def test_a_whole_reply_gives_its_call_mended_with_its_id() -> None:
    reply = whole("{'path': 'notes.txt', 'mode': 'append',}")
    result = toolmend.parse_response(reply, registry())
    assert result.ok, result.errors
    (call,) = result.calls
    assert (call.id, call.name, call.arguments) == ("call_7", "write_file", ARGS)
    assert [r.kind for r in call.repairs] != []


def test_a_whole_reply_reads_as_its_dump_does() -> None:
    reply = whole('{"path": "notes.txt", "mode": "Append"}', content="Here.")
    by_fields = toolmend.parse_response(reply, registry())
    by_dump = toolmend.parse_response(reply.model_dump(), registry())
    assert by_fields == by_dump
    assert [e.code for e in by_fields.errors] == ["TSR-005"] and by_fields.text == "Here."


def test_a_call_written_in_the_content_of_a_litellm_message() -> None:
    message = Message(role="assistant", content='<tool_call>{"name": "write_file", "arguments": {"path": "a"}}</tool_call>')
    reply = ModelResponse(choices=[Choices(index=0, finish_reason="stop", message=message)])
    (call,) = toolmend.parse_response(reply, registry()).calls
    assert (call.name, call.arguments, call.source) == ("write_file", {"path": "a"}, "hermes")


def test_the_callers_object_is_not_changed() -> None:
    reply = whole("{'path': 'notes.txt',}")
    before = copy.deepcopy(reply.model_dump())
    toolmend.parse_response(reply, registry())
    assert reply.model_dump() == before
    assert vars(reply.choices[0].message.tool_calls[0]) == {}


def feed_all(acc: toolmend.ToolCallAccumulator, parts: list[Any]) -> str:
    text = ""
    for part in parts:
        text += "".join(e.text for e in acc.feed(part) if e.kind == "text")
    return text


def test_streamed_chunks_assemble_the_call_and_the_text() -> None:
    acc = toolmend.ToolCallAccumulator(registry())
    text = feed_all(acc, chunks("{'path': 'notes.txt', 'mode': 'append',}"))
    result = acc.finish()
    assert result.ok, result.errors
    (call,) = result.calls
    assert (call.id, call.name, call.arguments) == ("call_7", "write_file", ARGS)
    assert text == "Writing. " and acc.finish_reason == "tool_calls"


def test_streamed_chunks_read_as_their_dumps_do() -> None:
    parts = chunks('{"path": "notes.txt", "mode": "Append"}')
    by_fields, by_dump = toolmend.ToolCallAccumulator(registry()), toolmend.ToolCallAccumulator(registry())
    feed_all(by_fields, parts)
    feed_all(by_dump, [p.model_dump() for p in parts])
    assert by_fields.finish() == by_dump.finish()
    assert [e.code for e in by_fields.finish().errors] == []  # finish hands out once


def test_a_streamed_error_is_reported_not_dropped() -> None:
    acc = toolmend.ToolCallAccumulator(registry())
    feed_all(acc, chunks('{"path": "notes.txt", "mode": "Append"}'))
    assert [e.code for e in acc.finish().errors] == ["TSR-005"]


TOOLS = [{"type": "function", "function": {"name": "write_file", "parameters": registry().get("write_file").schema}}]


def test_litellm_completion_through_the_loopback_server_whole_and_streamed() -> None:
    broken = {"name": "write_file", "arguments": "{'path': 'notes.txt', 'mode': 'append',}", "id": "call_9"}
    with ScriptedOpenAI([completion(broken), streamed(broken)]) as server:
        common: dict[str, Any] = {
            "model": "openai/test-model",
            "api_base": server.url + "/v1",
            "api_key": "unused",
            "messages": [{"role": "user", "content": "Append"}],
            "tools": TOOLS,
        }
        reply = litellm.completion(**common)
        parts = list(litellm.completion(stream=True, **common))
    (call,) = toolmend.parse_response(reply, registry()).calls
    assert (call.id, call.arguments) == ("call_9", ARGS)
    acc = toolmend.ToolCallAccumulator(registry())
    feed_all(acc, parts)
    (call,) = acc.finish().calls
    assert (call.id, call.arguments) == ("call_9", ARGS)


def test_every_choice_and_the_reasoning_of_a_litellm_reply() -> None:
    def choice(n: int, arguments: str) -> Any:
        call = ChatCompletionMessageToolCall(id=f"call_{n}", type="function", function=Function(name="write_file", arguments=arguments))
        message = Message(role="assistant", content=f"choice {n}", tool_calls=[call], reasoning_content=f"thought {n}")
        return Choices(index=n, finish_reason="tool_calls", message=message)

    reply = ModelResponse(choices=[choice(0, '{"path": "a"}'), choice(1, '{"path": 7}')])
    result = toolmend.parse_response(reply, registry())
    assert result == toolmend.parse_response(reply.model_dump(), registry())
    assert [(c.choice, c.id, c.arguments) for c in result.calls] == [(0, "call_0", {"path": "a"})]
    assert [(e.choice, e.code) for e in result.errors] == [(1, "TSR-004")]
    assert (result.text, result.reasoning) == ("choice 0", "thought 0")
