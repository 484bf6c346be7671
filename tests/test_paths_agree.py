"""The same reply read on every path gives the same calls: parse_response of the whole body, and both clients'
chat and chat_stream (max_retries=0). Repeated calls of one reply are all kept, and integers are exact."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

import toolmend
from ollama_server import Reply, ScriptedOllama
from toolmend.client import TextDelta
from toolmend.config import RetryConfig
from wires import WIRES, Wire, read_file_registry

BIG = 2**64 + 1


def _run(wire: Wire, reply: Reply, registry: Any = None) -> Any:
    async def go() -> Any:
        with ScriptedOllama([reply]) as server:
            async with wire.client(server, registry, RetryConfig(max_retries=1)) as client:
                return await wire.turn(client)

    return asyncio.run(go())


@pytest.mark.parametrize("wire", WIRES, ids=str)
def test_repeated_calls_of_one_reply_are_all_kept(wire: Wire) -> None:
    call = {"name": "read_file", "arguments": {"path": "a.txt"}}
    reply = wire.calls(call, call)
    result = _run(wire, reply, read_file_registry())
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("read_file", {"path": "a.txt"})] * 2
    if not wire.streamed:
        parsed = toolmend.parse_response(reply.body, read_file_registry())
        assert [(c.name, c.arguments) for c in parsed.calls] == [(c.name, c.arguments) for c in result.tool_calls]


@pytest.mark.parametrize("wire", WIRES, ids=str)
def test_integers_past_64_bits_are_exact_on_every_path(wire: Wire) -> None:
    reply = wire.calls({"name": "count", "arguments": {"n": BIG, "m": -BIG}})
    result = _run(wire, reply)
    assert [c.arguments for c in result.tool_calls] == [{"n": BIG, "m": -BIG}]
    assert type(result.tool_calls[0].arguments["n"]) is int
    if not wire.streamed:
        import json

        parsed = toolmend.parse_response(json.dumps(reply.body), None)
        assert [c.arguments for c in parsed.calls] == [{"n": BIG, "m": -BIG}]


def test_integers_in_calls_written_in_text_are_exact() -> None:
    text = f'<tool_call>{{"name": "count", "arguments": {{"n": {BIG}, "f": 7.18e+20}}}}</tool_call>'
    parsed = toolmend.parse_response({"message": {"content": text}})
    assert [c.arguments for c in parsed.calls] == [{"n": BIG, "f": 7.18e20}]
    parser = toolmend.TextCallParser()
    items = parser.feed(text) + parser.flush()
    assert [c.arguments for c in items if isinstance(c, toolmend.ToolCall)] == [{"n": BIG, "f": 7.18e20}]
    bare = toolmend.parse_response({"message": {"content": f'{{"name": "count", "arguments": {{"n": {BIG}}}}}'}})
    assert [c.arguments for c in bare.calls] == [{"n": BIG}]
    pythonic = toolmend.parse_response({"message": {"content": f"[count(n={BIG})]"}})
    assert [c.arguments for c in pythonic.calls] == [{"n": BIG}]


@pytest.mark.parametrize("wire", WIRES, ids=str)
@pytest.mark.parametrize("bad", [b"\\ud800", b"\xff"], ids=["lone surrogate", "invalid byte"])
def test_one_bad_token_spoils_neither_the_reply_nor_its_calls(wire: Wire, bad: bytes) -> None:
    """A lone surrogate escape or a byte that is not UTF-8 in the text (orjson refuses both) is read as
    U+FFFD on every path, as parse_response reads the same bytes, and the call beside it is kept."""
    import json

    reply = wire.calls({"name": "read_file", "arguments": {"path": "a.txt"}}, text="BAD")
    if reply.lines is None:
        reply.body = json.dumps(reply.body).encode().replace(b"BAD", b"x" + bad + b"y")
        expected = toolmend.parse_response(reply.body, read_file_registry())
        assert expected.text == "x\ufffdy" and len(expected.calls) == 1
    else:
        encoded = [line if isinstance(line, bytes) else json.dumps(line).encode() + b"\n" for line in reply.lines]
        reply.lines = [line.replace(b"BAD", b"x" + bad + b"y") for line in encoded]
    result = _run(wire, reply, read_file_registry())
    assert result.text == "x\ufffdy"
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("read_file", {"path": "a.txt"})]


#: Calls written without a marker: the whole reply is the call, or (with a registry) JSON amid prose names a tool.
UNMARKED = [
    ('{"name": "read_file", "arguments": {"path": "a.txt"}}', None),
    ("[read_file(path='a.txt')]", None),
    ('```json\n{"name": "read_file", "arguments": {"path": "a.txt"}}\n```', None),
    ('I will read it: {"name": "read_file", "arguments": {"path": "a.txt"}} now.', "registry"),
]


@pytest.mark.parametrize("content, registry", UNMARKED)
@pytest.mark.parametrize("wire", WIRES, ids=str)
def test_calls_written_without_a_marker_are_found_on_every_path(wire: Wire, content: str, registry: Any) -> None:
    registry = read_file_registry() if registry else None
    whole = toolmend.parse_response({"message": {"content": content}}, registry)
    assert [(c.name, c.arguments) for c in whole.calls] == [("read_file", {"path": "a.txt"})]
    events: list[Any] = []

    async def go() -> Any:
        with ScriptedOllama([wire.calls(text=content)]) as server:
            async with wire.client(server, registry, RetryConfig(max_retries=0)) as client:
                return await wire.turn(client, events)

    result = asyncio.run(go())
    assert [(c.name, c.arguments, str(c.source)) for c in result.tool_calls] == [
        (c.name, c.arguments, str(c.source)) for c in whole.calls
    ]
    assert result.text == whole.text
    if wire.streamed:
        # What a consumer shows ends as the whole reply's text: text that went out holding the call is corrected
        # at the end (a fence that may be the whole reply is held instead), and the call follows.
        shown = ""
        for e in events:
            if isinstance(e, TextDelta):
                shown = e.text if e.revised else shown + e.text
        assert shown.strip() == whole.text
        kinds = [type(e).__name__ for e in events]
        assert kinds.count("ToolCallCompleted") == 1 and kinds[-2] == "ToolCallCompleted"


def test_the_text_parser_finds_unmarked_calls_once_the_text_ends() -> None:
    parser = toolmend.TextCallParser()
    text = "[read_file(path='a.txt'), read_file(path='b.txt')]"
    items = [item for ch in text for item in parser.feed(ch)]
    assert "".join(i for i in items if isinstance(i, str)) == text  # nothing is held while it may be prose
    end = parser.flush()
    assert isinstance(end[0], toolmend.TextWithoutCalls) and end[0].text == ""
    assert [(c.name, c.arguments, c.index) for c in end[1:]] == [
        ("read_file", {"path": "a.txt"}, 0),
        ("read_file", {"path": "b.txt"}, 1),
    ]
    # Prose with brackets that hold no call stays text, and nothing more comes at the end.
    parser.reset()
    prose = "Use a list [1, 2] or a dict {\"a\": 1}."
    assert parser.feed(prose) == [prose] and parser.flush() == []


def test_a_dict_with_lone_surrogates_reads_as_its_bytes_do() -> None:
    """A str may hold lone surrogates (json.loads of "\\ud800" makes one): a reply given as a dict holding them in
    its text, a call's name or its arguments text is read as the same reply's bytes are, each surrogate one
    U+FFFD, never a UnicodeEncodeError."""
    reply = {
        "message": {
            "content": "hi \ud800 there",
            "tool_calls": [
                {"function": {"name": "f", "arguments": '{"a": "\udc00"}'}},
                {"function": {"name": "g\ud800", "arguments": "{}"}},
            ],
        }
    }
    as_dict = toolmend.parse_response(reply)
    as_bytes = toolmend.parse_response(json.dumps(reply).encode())
    assert as_dict.text == as_bytes.text == "hi \ufffd there"
    assert [(c.name, c.arguments) for c in as_dict.calls] == [(c.name, c.arguments) for c in as_bytes.calls]
    assert [c.arguments for c in as_dict.calls] == [{"a": "\ufffd"}]
    assert [(e.code, e.tool_name) for e in as_dict.errors] == [(e.code, e.tool_name) for e in as_bytes.errors]
    assert [e.code for e in as_dict.errors] == ["TLP-003"]
    acc = toolmend.ToolCallAccumulator()
    acc.feed({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "c", "function": {"name": "f", "arguments": '{"a": "\udc00"}'}}]}}]})
    assert [c.arguments for c in acc.finish().calls] == [{"a": "\ufffd"}]


def test_a_refused_call_keeps_the_id_the_reply_gave_it() -> None:
    """An agent answers each call by id, the refused ones too: the whole reply and its stream give the error
    the reply's id, a call written in text (which has none) gives None, and a hand-built error keeps its own."""
    registry = read_file_registry()
    call = {"id": "call_9", "type": "function", "function": {"name": "read_file", "arguments": '{"path": 7}'}}
    whole = toolmend.parse_response({"choices": [{"message": {"tool_calls": [call]}}]}, registry)
    acc = toolmend.ToolCallAccumulator(registry)
    acc.feed({"choices": [{"delta": {"tool_calls": [{"index": 0, **call}]}}]})
    streamed = acc.finish()
    assert [(e.code, e.id) for e in whole.errors] == [(e.code, e.id) for e in streamed.errors] == [("TSR-004", "call_9")]
    text = toolmend.parse_response('<tool_call>{"name": "read_file", "arguments": {"path": 7}}</tool_call>', registry)
    assert [(e.code, e.id) for e in text.errors] == [("TSR-004", None)]
    made = toolmend.ToolCallError("TSR-002", "wrong type", id="call_1")
    assert made.id == "call_1" and made != toolmend.ToolCallError("TSR-002", "wrong type", id="call_2")
