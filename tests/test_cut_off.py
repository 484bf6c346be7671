"""No cut-off call is handed out as whole: arguments the reply ended inside are a TLP-010 error carrying
the mended part (in parse_response, TextCallParser.flush and ToolCallAccumulator.finish), a forgotten
closing brace is still mended, a reply stopped at the token limit makes any call mended at its end a
cut, and ``allow_truncated=True`` takes such calls marked ``truncated``."""

from __future__ import annotations

import json
import pickle
from typing import Any

import pytest

import toolmend
from toolmend import ToolCallAccumulator, ToolCallDelta, TextCallParser, parse_response

CUT = [
    ('{"path": "notes/a.t', {"path": "notes/a.t"}),  # inside a string
    ('{"path": "a", "force": tru', {"path": "a", "force": True}),  # inside a literal
    ('{"path": "a", "mode":', {"path": "a", "mode": None}),  # after a colon
    ('{"path": "a", "n": 1, "mode"', {"path": "a", "n": 1, "mode": None}),  # after a key
    ('{"path": "a",', {"path": "a"}),  # after a comma
    ('{"path": "a", "lines": [1,', {"path": "a", "lines": [1]}),  # after a comma in a list
    ("{'path': 'a', 'mode': 'app", {"path": "a", "mode": "app"}),  # broken and cut
]
FORGOTTEN = [
    ('{"path": "a"', {"path": "a"}),
    ('{"path": "a", "lines": [1, 2]', {"path": "a", "lines": [1, 2]}),
    ('{"path": "a", "n": 12', {"path": "a", "n": 12}),
]


def openai(arguments: str, finish_reason: str = "tool_calls") -> dict[str, Any]:
    call = {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": arguments}}
    return {"choices": [{"index": 0, "finish_reason": finish_reason, "message": {"role": "assistant", "tool_calls": [call]}}]}


@pytest.mark.parametrize("arguments, mended", CUT)
def test_a_call_cut_off_is_an_error_with_the_mended_part(arguments: str, mended: dict[str, Any]) -> None:
    result = parse_response(openai(arguments))
    assert not result.ok and result.calls == ()
    (error,) = result.errors
    assert (error.code, error.tool_name, error.arguments, error.raw_arguments) == ("TLP-010", "read_file", mended, arguments)
    assert "cut off" in error.message and "allow_truncated" in error.suggestion


@pytest.mark.parametrize("arguments, mended", CUT)
def test_allow_truncated_takes_it_marked(arguments: str, mended: dict[str, Any]) -> None:
    (call,) = parse_response(openai(arguments), allow_truncated=True).calls
    assert call.truncated and call.arguments == mended
    assert "truncated=True" in repr(call)
    assert pickle.loads(pickle.dumps(call)) == call
    assert call != toolmend.ToolCall(call.name, call.arguments, id=call.id)


@pytest.mark.parametrize("arguments, mended", FORGOTTEN)
def test_a_forgotten_brace_is_mended_unless_the_reply_hit_the_token_limit(arguments: str, mended: dict[str, Any]) -> None:
    (call,) = parse_response(openai(arguments)).calls
    assert call.arguments == mended and not call.truncated
    assert [e.code for e in parse_response(openai(arguments, "length")).errors] == ["TLP-010"]


def test_each_provider_says_it_stopped_at_the_limit_its_own_way() -> None:
    cut = '{"path": "a"'
    bodies = [
        openai(cut, "length"),
        {"message": {"role": "assistant", "tool_calls": [{"function": {"name": "read_file", "arguments": cut}}]}, "done": True, "done_reason": "length"},
        {"type": "message", "role": "assistant", "stop_reason": "max_tokens", "content": [{"type": "text", "text": f'<tool_call>{{"name": "read_file", "arguments": {cut}'}]},
        {"object": "response", "status": "incomplete", "output": [{"type": "function_call", "call_id": "c", "name": "read_file", "arguments": cut}]},
    ]
    for body in bodies:
        assert [e.code for e in parse_response(body).errors] == ["TLP-010"], body
    # Whole arguments stay whole at the limit.
    assert parse_response(openai('{"path": "a"}', "length")).ok


def test_only_the_call_the_text_ended_in_is_cut() -> None:
    content = 'Reading both.\n[TOOL_CALLS][{"name": "read_file", "arguments": {"path": "a"}}, {"name": "read_file", "arguments": {"path": "b'
    result = parse_response({"message": {"role": "assistant", "content": content}})
    assert [c.arguments for c in result.calls] == [{"path": "a"}]
    assert [(e.code, e.arguments) for e in result.errors] == [("TLP-010", {"path": "b"})]


def test_the_text_parser_refuses_a_block_cut_off_at_flush() -> None:
    for allow in (False, True):
        parser = TextCallParser(allow_truncated=allow)
        parser.feed('Sure. <tool_call>{"name": "read_file", "arguments": {"path": "notes/a.t')
        (item,) = [i for i in parser.flush() if i != ""]
        if allow:
            assert isinstance(item, toolmend.ToolCall) and item.truncated and item.arguments == {"path": "notes/a.t"}
        else:
            assert isinstance(item, toolmend.ToolCallError) and item.code == "TLP-010"


def test_the_accumulator_refuses_a_stream_cut_off_at_finish() -> None:
    for allow in (False, True):
        acc = ToolCallAccumulator(allow_truncated=allow)
        acc.feed(ToolCallDelta(0, id="c", name="read_file", arguments='{"path": "notes/'))
        # The live view is the same either way.
        assert acc.partial(0) == {"path": "notes/"}
        result = acc.finish()
        if allow:
            assert [(c.truncated, c.arguments) for c in result.calls] == [(True, {"path": "notes/"})]
        else:
            assert [(e.code, e.arguments) for e in result.errors] == [("TLP-010", {"path": "notes/"})]


def test_a_stream_that_stopped_at_the_limit_cuts_a_forgotten_brace() -> None:
    def run(finish_reason: str) -> list[str]:
        acc = ToolCallAccumulator()
        acc.feed({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "c", "function": {"name": "read_file", "arguments": '{"path": "a"'}}]}}]})
        acc.feed({"choices": [{"index": 0, "delta": {}, "finish_reason": finish_reason}]})
        result = acc.finish()
        return [e.code for e in result.errors] + ["call" for _ in result.calls]

    assert run("tool_calls") == ["call"]
    assert run("length") == ["TLP-010"]


def test_valid_arguments_are_never_cut() -> None:
    for arguments in ['{"path": "a"}', json.dumps({"path": "x" * 1000, "n": [1, 2, 3]})]:
        assert parse_response(openai(arguments)).ok


def test_ollama_and_anthropic_streams_say_they_stopped_at_the_limit() -> None:
    ollama = [
        {"message": {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "read_file", "arguments": {"path": "a"}}}]}, "done": False},
        {"message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "length"},
    ]
    acc = ToolCallAccumulator()
    for line in ollama:
        acc.feed(line)
    # Ollama's calls come whole, as objects: nothing was mended, so nothing was cut.
    assert [c.arguments for c in acc.finish().calls] == [{"path": "a"}]

    anthropic = [
        {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t", "name": "read_file", "input": {}}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": '{"path": "a"'}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "max_tokens"}, "usage": {"output_tokens": 1}},
        {"type": "message_stop"},
    ]
    acc = ToolCallAccumulator()
    for event in anthropic:
        acc.feed(event)
    assert [e.code for e in acc.finish().errors] == ["TLP-010"]
    acc = ToolCallAccumulator()
    for event in anthropic[:3] + [{"type": "message_delta", "delta": {"stop_reason": "tool_use"}}]:
        acc.feed(event)
    assert [c.arguments for c in acc.finish().calls] == [{"path": "a"}]


def test_a_tool_with_no_side_effects_may_take_its_cut_off_calls() -> None:
    reg = toolmend.ToolRegistry()
    reg.register("search", {"type": "object", "properties": {"query": {"type": "string"}}}, allow_truncated=True)
    reg.register("delete_file", {"type": "object", "properties": {"path": {"type": "string"}}})
    assert reg.get("search").allow_truncated and not reg.get("delete_file").allow_truncated
    body = {"message": {"tool_calls": [
        {"function": {"name": "search", "arguments": '{"query": "toolm'}},
        {"function": {"name": "delete_file", "arguments": '{"path": "/tm'}},
    ]}}
    result = parse_response(body, reg)
    assert [(c.name, c.truncated, c.arguments) for c in result.calls] == [("search", True, {"query": "toolm"})]
    assert [(e.tool_name, e.code) for e in result.errors] == [("delete_file", "TLP-010")]
    # The option is part of the definition: the same schema without it is another definition.
    with pytest.raises(toolmend.SchemaError) as taken:
        reg.register("search", {"type": "object", "properties": {"query": {"type": "string"}}})
    assert taken.value.code == "TSR-007"
    assert pickle.loads(pickle.dumps(reg.get("search"))).allow_truncated


def test_told_the_reply_hit_the_limit_the_last_call_mended_in_any_way_is_cut() -> None:
    # Single quotes needed mending: whole as far as the text shows, but the limit may have cut what the mending
    # closed. Only the last call is suspect; each reader is told the finish reason at its end.
    text = "<tool_call>{'name': 'read_file', 'arguments': {'path': 'a'}}</tool_call> <tool_call>{'name': 'read_file', 'arguments': {'path': 'b'}}"

    def flushed(finish_reason: str | None) -> list[Any]:
        parser = TextCallParser()
        items = parser.feed(text)
        return [i for i in items + parser.flush(finish_reason) if i != "" and not isinstance(i, str)]

    assert [(type(i).__name__, i.arguments) for i in flushed(None)] == [("ToolCall", {"path": "a"}), ("ToolCall", {"path": "b"})]
    cut = flushed("length")
    assert [(type(i).__name__, getattr(i, "code", None)) for i in cut] == [("ToolCall", None), ("ToolCallError", "TLP-010")]
    assert (cut[1].index, cut[1].tool_name, cut[1].arguments) == (1, "read_file", {"path": "b"})

    def finished(finish_reason: str | None, **options: Any) -> Any:
        acc = ToolCallAccumulator(**options)
        acc.feed(ToolCallDelta(0, id="c0", name="read_file", arguments="{'path': 'a'}"))
        acc.feed(ToolCallDelta(1, id="c1", name="read_file", arguments="{'path': 'b'}"))
        return acc.finish(finish_reason)

    assert [c.arguments for c in finished(None).calls] == [{"path": "a"}, {"path": "b"}]
    result = finished("max_tokens")
    assert [c.index for c in result.calls] == [0] and [(e.code, e.index) for e in result.errors] == [("TLP-010", 1)]
    taken = finished("length", allow_truncated=True)
    assert [(c.index, c.truncated) for c in taken.calls] == [(0, False), (1, True)] and taken.ok


def test_at_the_limit_arguments_not_readable_at_all_are_cut_off() -> None:
    body = openai("[[[", "stop")
    assert [e.code for e in parse_response(body).errors] == ["TLP-004"]
    assert [e.code for e in parse_response(openai("[[[", "length")).errors] == ["TLP-010"]


@pytest.mark.parametrize(
    ("arguments", "position"),
    [("}}}{{{ not json at all", 7), ("{not json at all", 1), ("{{{ not json", 4)],
)
def test_prose_in_braces_is_not_json_rather_than_cut_off(arguments: str, position: int) -> None:
    # Words with no colon where a key would be are a sentence: TLP-004 at the words, not a call's start.
    result = parse_response({"tool_calls": [{"function": {"name": "f", "arguments": arguments}}]})
    assert not result.calls
    (error,) = result.errors
    assert (error.code, error.position) == ("TLP-004", position)
    assert "a double-quoted key followed by ':'" in error.message
