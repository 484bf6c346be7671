"""Reasoning is a part of a reply, read alike on every path: parse_response, the TextCallParser, and both
clients' chat and chat_stream. It is never text and never a source of calls, wherever it arrives: a reasoning
field (Ollama's ``thinking``, ``reasoning_content``, ``reasoning``), a think block in the content in any of its
spellings, everything before a lone ``</think>`` (the reply began inside the block), or Magistral's thinking
parts in a content list."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import ollama_server as ol
import openai_server as oa
import toolmend
from ollama_server import Reply, ScriptedOllama
from toolmend.client import ReasoningDelta, TextDelta
from wires import MESSAGES, WIRES, Wire, read_file_registry

DELETE = '<tool_call>{"name": "read_file", "arguments": {"path": "/etc/shadow"}}</tool_call>'
READ = '<tool_call>{"name": "read_file", "arguments": {"path": "a.txt"}}</tool_call>'

#: Replies whose content holds reasoning with a call in it, and then the real call.
CONTENTS = {
    "lone closer": f"The user wants a file. I could read {DELETE} but no.</think>\n\n{READ}",
    "think": f"<think>I could read {DELETE} but no.</think>\n{READ}",
    "THINK": f"[THINK]I could read {DELETE} but no.[/THINK]{READ}",
    "thinking": f"<thinking>I could read {DELETE} but no.</thinking>{READ}",
    "kimi": f"◁think▷I could read {DELETE} but no.◁/think▷{READ}",
    "seed": f"<seed:think>I could read {DELETE} but no.</seed:think>{READ}",
    "harmony": (
        f"<|start|>assistant<|channel|>analysis<|message|>I could read {DELETE} but no.<|end|>"
        '<|start|>assistant<|channel|>commentary to=functions.read_file <|constrain|>json<|message|>{"path": "a.txt"}<|call|>'
    ),
}


@pytest.mark.parametrize("name", CONTENTS)
def test_parse_response_reads_reasoning_apart_and_takes_no_call_from_it(name: str) -> None:
    result = toolmend.parse_response({"message": {"role": "assistant", "content": CONTENTS[name]}}, read_file_registry())
    assert [(c.name, c.arguments) for c in result.calls] == [("read_file", {"path": "a.txt"})]
    assert result.ok and result.text == ""
    assert "I could read" in result.reasoning and result.reasoning.endswith("but no.")
    assert "/etc/shadow" not in result.text


@pytest.mark.parametrize("size", [1, 5, 64])
@pytest.mark.parametrize("name", CONTENTS)
def test_text_call_parser_agrees_with_parse_response(name: str, size: int) -> None:
    content = CONTENTS[name]
    whole = toolmend.parse_response({"message": {"content": content}}, read_file_registry())
    parser = toolmend.TextCallParser(read_file_registry())
    pieces = [content[i : i + size] for i in range(0, len(content), size)]
    text, reasoning, calls = "", "", []
    for item in [x for p in pieces for x in parser.feed(p)] + parser.flush():
        if isinstance(item, str):
            text += item
        elif isinstance(item, toolmend.Reasoning):
            if item.was_text:
                text, reasoning = "", ""
            reasoning += item.text
        else:
            calls.append((item.name, item.arguments))
    assert calls == [(c.name, c.arguments) for c in whole.calls]
    assert text.strip() == whole.text
    assert reasoning.strip() == whole.reasoning


def _content_reply(wire: Wire, content: str) -> Reply:
    """A reply whose content is ``content`` (streamed in pieces of 7 characters)."""
    if not wire.streamed:
        return wire.calls(text=content)
    pieces = [content[i : i + 7] for i in range(0, len(content), 7)]
    if wire.provider == "ollama":
        lines = ol.stream_lines(text=pieces)
        return Reply(lines=lines)
    return oa.streamed(text=pieces)


def _run(wire: Wire, replies: list[Reply]) -> tuple[Any, list[Any]]:
    events: list[Any] = []

    async def go() -> Any:
        with ScriptedOllama(replies) as server:
            async with wire.client(server, read_file_registry()) as client:
                return await wire.turn(client, events)

    return asyncio.run(go()), events


@pytest.mark.parametrize("wire", WIRES, ids=str)
@pytest.mark.parametrize("name", ["lone closer", "think", "harmony"])
def test_clients_read_reasoning_in_content_as_parse_response_does(wire: Wire, name: str) -> None:
    result, events = _run(wire, [_content_reply(wire, CONTENTS[name])])
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("read_file", {"path": "a.txt"})]
    assert result.text == "" and "/etc/shadow" not in result.text
    assert "I could read" in result.reasoning
    assert len(result.attempts) == 1
    if wire.streamed:
        said = [e for e in events if isinstance(e, ReasoningDelta)]
        assert said and "I could read" in "".join(e.text for e in said)
        if name == "lone closer":
            # The text shown before the closer is taken back by the event that says so.
            assert said[-1].was_text and said[-1].text.startswith("The user wants a file.")


def _field_reply(wire: Wire, reasoning: str) -> Reply:
    """A reply whose reasoning comes in the provider's reasoning field, then a call."""
    call = {"name": "read_file", "arguments": {"path": "a.txt"}}
    reply = wire.calls(call)
    if wire.provider == "ollama":
        if wire.streamed:
            assert reply.lines is not None
            reply.lines.insert(0, {"message": {"role": "assistant", "content": "", "thinking": reasoning[:5]}, "done": False})
            reply.lines.insert(1, {"message": {"role": "assistant", "content": "", "thinking": reasoning[5:]}, "done": False})
        else:
            reply.body["message"]["thinking"] = reasoning
        return reply
    if wire.streamed:
        assert reply.lines is not None
        reply.lines.insert(1, oa.event(oa.chunk({"reasoning_content": reasoning[:5]})))
        reply.lines.insert(2, oa.event(oa.chunk({"reasoning_content": reasoning[5:]})))
    else:
        reply.body["choices"][0]["message"]["reasoning_content"] = reasoning
    return reply


@pytest.mark.parametrize("wire", WIRES, ids=str)
def test_clients_read_reasoning_fields(wire: Wire) -> None:
    reasoning = f"Maybe {DELETE}, maybe not."
    result, events = _run(wire, [_field_reply(wire, reasoning)])
    assert [c.arguments for c in result.tool_calls] == [{"path": "a.txt"}]
    assert result.reasoning == reasoning
    assert "/etc/shadow" not in result.text
    if wire.streamed:
        assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == reasoning


@pytest.mark.parametrize("streamed", [False, True])
def test_content_as_a_list_of_parts_is_read_on_both_entry_points(streamed: bool) -> None:
    """Mistral's Magistral sends content as a list of typed parts: thinking parts are reasoning."""
    wire = Wire("openai", streamed)
    thinking = {"type": "thinking", "thinking": [{"type": "text", "text": "Let me see."}]}
    if streamed:
        lines = [
            oa.event(oa.chunk({"role": "assistant", "content": [thinking]})),
            oa.event(oa.chunk({"content": [{"type": "text", "text": "Hello"}]})),
            oa.event(oa.chunk({"content": [{"type": "text", "text": " there."}]})),
            oa.event(oa.chunk({}, "stop")),
            oa.event(b"[DONE]"),
        ]
        reply = Reply(lines=lines, content_type="text/event-stream")
    else:
        reply = oa.completion(content=None)
        reply.body["choices"][0]["message"]["content"] = [thinking, {"type": "text", "text": "Hello there."}]
    result, events = _run(wire, [reply])
    assert (result.text, result.reasoning) == ("Hello there.", "Let me see.")
    if streamed:
        assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello there."


@pytest.mark.parametrize(
    "delta",
    [
        {"content": 5},
        {"content": {"type": "text"}},
        {"content": [1, None, {"type": "text", "text": 3}]},
        {"reasoning_content": ["a", {"text": "b"}]},
        {"reasoning_content": {"deep": [1]}},
        {"thinking": True},
        {"content": "\ud800"},
    ],
)
def test_odd_field_types_in_a_delta_are_read_or_ignored_never_raised(delta: dict[str, Any]) -> None:
    acc = toolmend.ToolCallAccumulator()
    events = acc.feed({"choices": [{"index": 0, "delta": delta}]})
    result = acc.finish()
    assert isinstance(result.text, str) and isinstance(result.reasoning, str)
    assert all(isinstance(e.text, str) for e in events if e.kind in ("text", "reasoning"))


def test_fastapi_detail_is_a_provider_error_in_the_core() -> None:
    result = toolmend.parse_response({"detail": "Not Found"})
    assert [e.code for e in result.errors] == ["TLP-011"] and "Not Found" in result.errors[0].message
    listed = toolmend.parse_response({"detail": [{"loc": ["body", "model"], "msg": "field required", "type": "missing"}]})
    assert [e.code for e in listed.errors] == ["TLP-011"] and "field required" in listed.errors[0].message
