"""ToolCallAccumulator: fragments assembled by (index, id), completion, limits, recorded streams."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolmend
from toolmend import MAX_DEPTH_CEILING, ParseError, ParseResult, TextCallParser, ToolCallAccumulator, ToolCallDelta, ToolRegistry

STREAMS = Path(__file__).parent / "data" / "streams"
RECORDED = sorted(STREAMS.glob("*.sse")) + sorted(STREAMS.glob("*.ndjson"))


def names_and_arguments(result: ParseResult) -> list[tuple[str, dict[str, Any]]]:
    return [(c.name, c.arguments) for c in result.calls]


# ---- reference cases ----------------------------------------------------------------------------


def test_fragments_in_order_and_nothing_complete_until_complete() -> None:
    acc = ToolCallAccumulator()
    for d in [
        ToolCallDelta(0, name="read"),
        ToolCallDelta(0, name="_file"),
        ToolCallDelta(0, arguments='{"pa'),
        ToolCallDelta(0, arguments='th": '),
        ToolCallDelta(0, arguments='"test.txt"}'),
    ]:
        acc.feed(d)
    assert acc.completed().calls == ()
    events = acc.feed(ToolCallDelta(0, complete=True))
    assert [e.kind for e in events] == ["completed"]
    (call,) = acc.completed().calls
    assert (call.name, call.arguments, call.raw_arguments) == ("read_file", {"path": "test.txt"}, '{"path": "test.txt"}')


def test_partial_name_and_arguments_in_one_delta() -> None:
    acc = ToolCallAccumulator()
    for part in ["exec", "ute_"]:
        acc.feed(ToolCallDelta(0, name=part))
    acc.feed(ToolCallDelta(0, name="command", arguments='{"cmd": "ls"}', complete=True))
    assert names_and_arguments(acc.completed()) == [("execute_command", {"cmd": "ls"})]


def test_two_interleaved_calls_by_index() -> None:
    acc = ToolCallAccumulator()
    acc.feed(ToolCallDelta(0, name="read_file"))
    acc.feed(ToolCallDelta(1, name="write_file"))
    acc.feed(ToolCallDelta(0, arguments='{"path": "a.txt"}'))
    acc.feed(ToolCallDelta(1, arguments='{"path": "b.txt", "content": "hi"}'))
    acc.feed(ToolCallDelta(1, complete=True))
    assert acc.completed().calls == ()  # call 0 is still open: calls come out in order
    acc.feed(ToolCallDelta(0, complete=True))
    result = acc.completed()
    assert [(c.index, c.name) for c in result.calls] == [(0, "read_file"), (1, "write_file")]


def test_finish_returns_the_rest_repaired_or_with_errors() -> None:
    acc = ToolCallAccumulator()
    acc.feed(ToolCallDelta(0, name="tool1", arguments="{}", complete=True))
    acc.feed(ToolCallDelta(1, name="tool2", arguments='{"a": [1, 2'))
    acc.feed(ToolCallDelta(2, name="tool3", arguments="not json at all"))
    result = acc.finish()
    assert names_and_arguments(result) == [("tool1", {}), ("tool2", {"a": [1, 2]})]
    assert [r.kind for r in result.calls[1].repairs] == ["missing_closing_bracket", "missing_closing_brace"]
    (error,) = result.errors
    assert (error.code, error.tool_name, error.index) == ("TLP-004", "tool3", 2)


# ---- completion, order, keys --------------------------------------------------------------------


def test_a_later_index_completes_an_earlier_whole_call() -> None:
    acc = ToolCallAccumulator()
    acc.feed(ToolCallDelta(0, name="a", arguments='{"x": "}"}'))
    events = acc.feed(ToolCallDelta(1, name="b", arguments="{"))
    assert [(e.kind, e.index) for e in events][:2] == [("completed", 0), ("started", 1)]
    assert [c.name for c in acc.completed().calls] == ["a"]


def test_out_of_order_fragments_are_placed_by_index() -> None:
    acc = ToolCallAccumulator()
    acc.feed(ToolCallDelta(2, name="c", arguments="{}"))
    acc.feed(ToolCallDelta(0, name="a", arguments='{"v": 0}'))
    acc.feed(ToolCallDelta(1, name="b", arguments="{}"))
    assert [(c.index, c.name) for c in acc.finish().calls] == [(0, "a"), (1, "b"), (2, "c")]


def test_reused_index_with_new_ids_are_separate_calls() -> None:
    acc = ToolCallAccumulator()
    acc.feed({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "a", "arguments": "{}"}}]}}]})
    acc.feed({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "c2", "function": {"name": "b", "arguments": "{}"}}]}}]})
    assert [(c.id, c.name) for c in acc.finish().calls] == [("c1", "a"), ("c2", "b")]


def test_fragment_for_a_completed_call_is_an_error_event_and_an_error() -> None:
    acc = ToolCallAccumulator()
    acc.feed(ToolCallDelta(0, name="a", arguments="{}", complete=True))
    (event,) = acc.feed(ToolCallDelta(0, arguments='"more"'))
    assert (event.kind, event.code) == ("failed", "TLP-006")
    # Not handed out yet: its arguments were not whole, so it is not run.
    result = acc.finish()
    assert result.calls == () and [(e.code, e.tool_name) for e in result.errors] == [("TLP-006", "a")]


def test_fragment_for_a_call_handed_out_is_among_the_errors_at_the_end() -> None:
    acc = ToolCallAccumulator()
    acc.feed(ToolCallDelta(0, name="a", arguments='{"x": 1}', complete=True))
    assert [c.name for c in acc.completed().calls] == ["a"]
    acc.feed(ToolCallDelta(0, arguments=', "y": 2}'))
    result = acc.finish()
    assert result.calls == () and [(e.code, e.index) for e in result.errors] == [("TLP-006", 0)]
    assert "handed out" in result.errors[0].message


def test_limits_fail_a_call_at_the_fragment_that_crosses_them() -> None:
    acc = ToolCallAccumulator(max_size=100)
    acc.feed(ToolCallDelta(0, name="big", arguments='{"content": "'))
    events = acc.feed(ToolCallDelta(0, arguments="x" * 200))
    assert [(e.kind, e.code) for e in events] == [("failed", "TLP-007")]
    acc.feed(ToolCallDelta(1, name="small", arguments="{}"))
    result = acc.finish()
    assert [c.name for c in result.calls] == ["small"]
    assert [(e.code, e.tool_name) for e in result.errors] == [("TLP-007", "big")]
    deep = ToolCallAccumulator(max_depth=5)
    assert deep.feed(ToolCallDelta(0, name="d", arguments="[" * 10))[-1].code == "TLP-008"


def test_registry_checks_completed_calls() -> None:
    reg = ToolRegistry()
    reg.register("read_file", {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})
    acc = ToolCallAccumulator(reg)
    acc.feed(ToolCallDelta(0, name="read_file", arguments='{"path": 7}', complete=True))
    acc.feed(ToolCallDelta(1, name="nope", arguments="{}", complete=True))
    result = acc.completed()
    assert [(e.code, e.index) for e in result.errors] == [("TSR-004", 0), ("TSR-001", 1)]
    assert result.errors[0].validation[0].path == "/path"


def test_partial_shows_arguments_as_they_stream() -> None:
    acc = ToolCallAccumulator()
    assert acc.partial(0) is None
    acc.feed(ToolCallDelta(0, name="write_file", arguments='{"path": "a.py", "content": "def f():\\n'))
    assert acc.partial(0) == {"path": "a.py", "content": "def f():\n"}
    acc.feed(ToolCallDelta(0, arguments='    return 1'))
    assert acc.partial(0) == {"path": "a.py", "content": "def f():\n    return 1"}
    acc.feed(ToolCallDelta(0, arguments='", "mode": "w"}'))
    assert acc.partial(0) == {"path": "a.py", "content": "def f():\n    return 1", "mode": "w"}


# ---- wire shapes and recorded streams ---------------------------------------------------------------


def test_ollama_lines_carry_whole_calls() -> None:
    acc = ToolCallAccumulator()
    lines = (STREAMS / "ollama_chat_two_calls.ndjson").read_text().splitlines()
    kinds: list[str] = []
    for line in lines:
        kinds += [e.kind for e in acc.feed(json.loads(line))]
    assert kinds.count("completed") == 2
    result = acc.completed()
    assert [(c.id, c.arguments) for c in result.calls] == [("call_4f1a9z0b", {"city": "New York"}), ("call_8k2m1x7q", {"city": "Paris"})]


def whole(path: Path) -> ParseResult:
    acc = ToolCallAccumulator()
    acc.feed(path.read_bytes())
    return acc.finish()


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.name)
def test_recorded_streams_give_their_calls(path: Path) -> None:
    result = whole(path)
    assert result.ok and result.calls
    for c in result.calls:
        assert c.name and isinstance(c.arguments, dict) and c.id


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.name)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_any_split_of_a_recorded_stream_gives_the_same_calls(path: Path, data: st.DataObject) -> None:
    raw = path.read_bytes()
    cuts = sorted(data.draw(st.lists(st.integers(0, len(raw)), max_size=40)))
    acc = ToolCallAccumulator()
    for start, end in zip([0, *cuts], [*cuts, len(raw)]):
        acc.feed(raw[start:end])
    expected = whole(path)
    result = acc.finish()
    assert [(c.id, c.name, c.arguments) for c in result.calls] == [(c.id, c.name, c.arguments) for c in expected.calls]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.text(max_size=6), st.booleans()), max_size=30))
def test_any_fragments_give_a_result(fragments: list[tuple[int, str, bool]]) -> None:
    acc = ToolCallAccumulator()
    for index, text, complete in fragments:
        events = acc.feed(ToolCallDelta(index, name="t" if complete else None, arguments=text, complete=complete))
        assert all(e.kind in {"started", "name", "arguments", "completed", "failed"} for e in events)
        acc.partial(index)
    result = acc.finish()
    for error in result.errors:
        assert error.code.startswith(("TLP-", "TSR-"))
    assert all(isinstance(c.arguments, dict) for c in result.calls)


# ---- raw bytes: lines, events, limits --------------------------------------------------------------


def openai_line(index: int, call_id: str, name: str, arguments: str) -> bytes:
    call = {"index": index, "id": call_id, "function": {"name": name, "arguments": arguments}}
    return b"data: " + json.dumps({"choices": [{"delta": {"tool_calls": [call]}}]}).encode() + b"\n\n"


def test_an_event_written_over_several_data_lines_is_read_joined() -> None:
    chunk = json.dumps({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "c", "function": {"name": "f", "arguments": "{}"}}]}}]}, indent=1)
    event = "".join(f"data: {line}\n" for line in chunk.splitlines()) + "\n"
    acc = ToolCallAccumulator()
    acc.feed(b": keep-alive\n" + event.encode() + b"data: [DONE]\n")
    assert [(c.id, c.name, c.arguments) for c in acc.finish().calls] == [("c", "f", {})]


def test_a_raw_line_too_long_fails_the_open_call_and_the_stream_goes_on() -> None:
    acc = ToolCallAccumulator(max_size=100)  # lines are read up to 6 x 100 bytes + 64 KiB
    acc.feed(openai_line(0, "c0", "big", '{"content": "').rstrip(b"\n"))
    acc.feed(b"\n\ndata: " + b"x" * 100)
    events = [e for _ in range(70) for e in acc.feed(b"x" * 1024)]
    assert [(e.kind, e.index, e.code) for e in events] == [("failed", 0, "TLP-007")]  # at once, not at its newline
    acc.feed(b"\n" + openai_line(1, "c1", "small", "{}") + b"data: [DONE]\n")
    result = acc.finish()
    assert [c.name for c in result.calls] == ["small"]
    assert [(e.code, e.tool_name, e.index) for e in result.errors] == [("TLP-007", "big", 0)]


def test_a_raw_line_too_long_with_no_call_open_is_reported_not_lost() -> None:
    def ollama_line(name: str) -> bytes:
        return json.dumps({"message": {"tool_calls": [{"function": {"name": name, "arguments": {}}}]}}).encode() + b"\n"

    acc = ToolCallAccumulator(max_size=100)
    huge = json.dumps({"message": {"tool_calls": [{"function": {"name": "lost", "arguments": {"a": "x" * 70_000}}}]}}).encode()
    events = acc.feed(ollama_line("a") + huge + b"\n" + ollama_line("c"))
    assert [(e.kind, e.index, e.code) for e in events if e.index == 1] == [("started", 1, None), ("failed", 1, "TLP-007")]
    result = acc.finish()
    assert [(c.index, c.name) for c in result.calls] == [(0, "a"), (2, "c")]
    (error,) = result.errors
    assert (error.code, error.index, error.tool_name) == ("TLP-007", 1, None)
    assert not result.ok


def test_a_long_raw_line_in_small_chunks_costs_time_linear_in_its_length() -> None:
    # The same bytes as sixteen short lines or one long one, fed in 1 KiB chunks. Searching the
    # pending line again on every chunk made the long line sixteen times as slow (a 16 MiB line
    # took minutes); each byte searched once makes them about equal.
    def fastest(line_len: int, lines: int) -> float:
        stream = (b"x" * line_len + b"\n") * lines
        chunks = [stream[i : i + 1024] for i in range(0, len(stream), 1024)]
        best = float("inf")
        for _ in range(3):
            acc = ToolCallAccumulator(max_size=1 << 20)
            start = time.perf_counter()
            for chunk in chunks:
                acc.feed(chunk)
            best = min(best, time.perf_counter() - start)
        return best

    ratio = fastest(1 << 22, 1) / fastest(1 << 18, 16)
    assert ratio < 8, f"one 4 MiB line took {ratio:.1f}x as long as sixteen 256 KiB lines"


# ---- partial(): the live view --------------------------------------------------------------------


def test_partial_is_a_live_view_that_keeps_complete_values() -> None:
    acc = ToolCallAccumulator()
    acc.feed(ToolCallDelta(0, name="w", arguments='{"items": [{"n": 1}, '))
    view = acc.partial(0)
    first_item = view["items"][0]
    acc.feed(ToolCallDelta(0, arguments='{"n": 2}], "note": "caf\\u00e9 \\ud83d'))
    again = acc.partial(0)
    assert again is view and again["items"][0] is first_item  # built once, kept
    assert again == {"items": [{"n": 1}, {"n": 2}], "note": "café "}
    acc.feed(ToolCallDelta(0, arguments='\\ude00", "big": 123456789012345678901234567890, "f": -1.5e2, "ok": true, "x": null}'))
    assert acc.partial(0) == {
        "items": [{"n": 1}, {"n": 2}],
        "note": "café 😀",
        "big": 123456789012345678901234567890,
        "f": -150.0,
        "ok": True,
        "x": None,
    }


def test_partial_of_text_that_is_not_strict_json_uses_the_repair_pass() -> None:
    acc = ToolCallAccumulator()
    acc.feed(ToolCallDelta(0, name="w", arguments="{'path': 'a.txt', 'n': [1, 2"))
    assert acc.partial(0) == {"path": "a.txt", "n": [1, 2]}


DOCUMENTS = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=5), DOCUMENTS, max_size=5), st.data())
def test_partial_after_any_split_ends_equal_to_the_document(document: dict[str, Any], data: st.DataObject) -> None:
    text = json.dumps(document, ensure_ascii=data.draw(st.booleans()))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=12)))
    acc = ToolCallAccumulator(max_depth=MAX_DEPTH_CEILING)
    for start, end in zip([0, *cuts], [*cuts, len(text)]):
        acc.feed(ToolCallDelta(0, name="t", arguments=text[start:end]))
        assert acc.partial(0) is None or isinstance(acc.partial(0), dict)
    assert acc.partial(0) == json.loads(text)


def test_extend_arguments_appends_and_returns_the_live_view() -> None:
    acc = ToolCallAccumulator()
    acc.feed(ToolCallDelta(0, name="write_file"))
    assert acc.extend_arguments(0, '{"path": "a.py", "content": "def f') == {"path": "a.py", "content": "def f"}
    view = acc.extend_arguments(0, '():\\n    return 1", "mode": ["w"')
    assert view == {"path": "a.py", "content": "def f():\n    return 1", "mode": ["w"]}
    assert acc.extend_arguments(0, "]}") is view
    (call,) = acc.finish().calls
    # Read whole and valid: the view is the call's arguments, the text stays the raw arguments.
    assert call.arguments is view
    assert call.raw_arguments == '{"path": "a.py", "content": "def f():\\n    return 1", "mode": ["w"]}'


def test_extend_arguments_refuses_text_for_a_completed_call() -> None:
    acc = ToolCallAccumulator()
    acc.feed(ToolCallDelta(0, name="f", arguments="{}", complete=True))
    with pytest.raises(ParseError) as caught:
        acc.extend_arguments(0, '{"late": 1}')
    assert caught.value.code == "TLP-006"
    assert acc.extend_arguments(1, "[1, 2") == [1]  # a new index is a new call; 2 may go on


def test_extend_arguments_fails_a_call_over_the_limit_at_completion() -> None:
    acc = ToolCallAccumulator(max_size=10)
    acc.feed(ToolCallDelta(0, name="f"))
    acc.extend_arguments(0, '{"a": "')
    assert acc.extend_arguments(0, "x" * 20) is None
    (error,) = acc.finish().errors
    assert error.code == "TLP-007"


def test_repaired_or_cut_off_arguments_are_read_again_not_taken_from_the_view() -> None:
    acc = ToolCallAccumulator()
    acc.feed(ToolCallDelta(0, name="f"))
    view = acc.extend_arguments(0, '{"a": [1, 2')
    (call,) = acc.finish().calls
    assert call.arguments == {"a": [1, 2]} and call.arguments is not view
    assert [r.kind for r in call.repairs] != []


@pytest.mark.parametrize("arguments", ['{"a": "x\u0001y"}', '{"a": "\\ud800"}', '{"a": "\\udc00 x"}'])
def test_text_the_strict_validator_refuses_is_repaired_not_taken_from_the_view(arguments: str) -> None:
    # Raw control characters and lone surrogates: the live view stops reading them as strict JSON,
    # so completion goes through the repair pass and logs what it mended.
    acc = ToolCallAccumulator()
    acc.feed(ToolCallDelta(0, name="f"))
    acc.extend_arguments(0, arguments)
    (call,) = acc.finish().calls
    assert call.repairs and call.raw_arguments == arguments
    assert list(call.arguments) == ["a"]


def test_an_int_python_will_not_convert_stops_the_view_without_raising() -> None:
    # Python refuses int() of more than 4,300 digits: the view stops, the stream goes on.
    acc = ToolCallAccumulator()
    acc.feed(ToolCallDelta(0, name="f"))
    events = acc.feed(ToolCallDelta(0, arguments='{"a": 1, "n": ' + "7" * 5000 + ', "b": 2'))
    assert [e.kind for e in events] == ["arguments"] and events[0].path is None
    acc.feed(ToolCallDelta(0, arguments="}"))
    result = acc.finish()
    assert len(result.calls) + len(result.errors) == 1


def test_a_view_taken_as_arguments_is_still_validated() -> None:
    registry = ToolRegistry()
    registry.register("f", {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
    acc = ToolCallAccumulator(registry)
    acc.feed(ToolCallDelta(0, name="f"))
    acc.extend_arguments(0, '{"n": "seven"}')
    (error,) = acc.finish().errors
    assert error.code == "TSR-004" and error.validation[0].path == "/n"


def test_arguments_that_are_one_string_show_as_it_grows() -> None:
    acc = ToolCallAccumulator()
    assert acc.extend_arguments(0, '"hel') == "hel"
    assert acc.extend_arguments(0, 'lo"') == "hello"


# ---- TextCallParser --------------------------------------------------------------------------------


def run_tokens(parser: TextCallParser, tokens: list[str]) -> tuple[str, list[Any]]:
    text, calls = "", []
    for item in [x for token in tokens for x in parser.feed(token)] + parser.flush():
        if isinstance(item, str):
            text += item
        elif not isinstance(item, toolmend.Reasoning):
            calls.append(item)
    return text, calls


@pytest.mark.parametrize("size", [1, 3, 7])
def test_text_call_parser_finds_calls_token_by_token(size: int) -> None:
    reply = 'Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris",}}\n</tool_call>\nDone.'
    tokens = [reply[i : i + size] for i in range(0, len(reply), size)]
    text, calls = run_tokens(TextCallParser(), tokens)
    assert [(c.name, c.arguments, c.source) for c in calls] == [("get_weather", {"city": "Paris"}, "hermes")]
    assert [r.kind for r in calls[0].repairs] == ["trailing_comma"]
    assert text.split() == ["Checking.", "Done."]


def test_text_call_parser_hands_plain_text_back_at_once() -> None:
    parser = TextCallParser()
    assert parser.feed("Hello ") == ["Hello "]
    assert parser.feed("<tool") == []  # may open a marker
    assert parser.feed("box>") == ["<toolbox>"]


def test_text_call_parser_validates_and_gives_back_what_is_not_a_call() -> None:
    reg = ToolRegistry()
    reg.register("get_weather", {"type": "object", "properties": {"city": {"type": "string"}}})
    parser = TextCallParser(reg, max_buffer=200)
    _, calls = run_tokens(parser, ['[TOOL_CALLS]get_weather[ARGS]{"city": 5}', " and ", "<tool_call>" + "x" * 300])
    assert [(type(c).__name__, c.code) for c in calls] == [("ToolCallError", "TSR-004")]
    parser.reset()
    text, calls = run_tokens(parser, ["<tool_call>", "x" * 300])
    assert calls == [] and text == "<tool_call>" + "x" * 300


def test_argument_events_carry_the_path_they_ended_in() -> None:
    acc = ToolCallAccumulator()
    acc.feed(ToolCallDelta(0, name="write_file"))
    pieces = ['{"path": "a.py", "con', 'tent": "line 1\\n', 'line 2", "opts": {"modes": ["r", "w', '"]}}']
    paths = [e.path for piece in pieces for e in acc.feed(ToolCallDelta(0, arguments=piece))]
    assert paths == ["", "/content", "/opts/modes/1", ""]
    assert acc.partial(0) == {"path": "a.py", "content": "line 1\nline 2", "opts": {"modes": ["r", "w"]}}
    loose = ToolCallAccumulator()
    (event,) = loose.feed(ToolCallDelta(0, arguments="{'a': 1"))[-1:]
    assert event.kind == "arguments" and event.path is None


def test_a_look_at_a_whole_value_with_more_after_it_shows_the_value() -> None:
    for text, shown in [('{"a": 1}{"b": 2}', {"a": 1}), ('{"a": 1}, {"b": 2}', {"a": 1}), ('"x" "y"', "x")]:
        acc = ToolCallAccumulator()
        acc.feed(ToolCallDelta(0, name="f", arguments=text))
        assert acc.partial(0) == shown, text
    acc = ToolCallAccumulator()
    acc.feed(ToolCallDelta(0, name="f", arguments="{'path': 'a.tx"))
    assert acc.partial(0) == {"path": "a.tx"}


def sse(chunk: object) -> bytes:
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


def test_raw_openai_lines_read_objects_only_and_skip_members_no_delta_uses() -> None:
    call = {"index": 0, "id": "call_1", "function": {"name": "f", "arguments": "{}"}}
    # An array where an object goes holds no call, whichever way the line is read.
    for chunk in ({"choices": [{"delta": {"tool_calls": [[0, "call_1", ["f", "{}"]]]}}]},
                  {"choices": [[{"tool_calls": [call]}, "stop", None, None, None]]}):
        assert ToolCallAccumulator().feed(sse(chunk)) == [] == ToolCallAccumulator().feed(chunk)
    # A member no delta uses may hold what a strict parser refuses: the line's call is still read.
    for created in ("1e400", "99999999999999999999"):
        line = b'data: {"created": ' + created.encode() + b', "choices": [{"delta": {"tool_calls": [' + json.dumps(call).encode() + b"]}}]}\n\n"
        acc = ToolCallAccumulator()
        assert [e.kind for e in acc.feed(line)] == ["started", "name", "arguments"]
        assert [(c.name, c.arguments) for c in acc.finish().calls] == [("f", {})]


def test_event_paths_escape_keys_as_json_pointer_tokens() -> None:
    acc = ToolCallAccumulator()
    pieces = ['{"a/b": {"c~d": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, {"": "x', '"}], "ключ": "', "значение"]
    events = [e for piece in pieces for e in acc.feed(ToolCallDelta(0, arguments=piece))]
    paths = [e.path for e in events if e.kind == "arguments"]
    assert paths == ["/a~1b/c~0d/11/", "/a~1b/ключ", "/a~1b/ключ"]
    assert acc.partial(0) == {"a/b": {"c~d": [*range(11), {"": "x"}], "ключ": "значение"}}


@pytest.mark.parametrize("size", [1, 4, 200])
def test_text_call_parser_takes_no_call_from_thinking(size: int) -> None:
    reply = (
        '<think>I could call <tool_call>{"name": "x", "arguments": {}}</tool_call> maybe</think>'
        'Answer <tool_call>{"name": "y", "arguments": {}}</tool_call>'
    )
    text, calls = run_tokens(TextCallParser(), [reply[i : i + size] for i in range(0, len(reply), size)])
    assert [c.name for c in calls] == ["y"]
    assert text == "Answer "
    reasoning = [i.text for i in TextCallParser().feed(reply) if isinstance(i, toolmend.Reasoning)]
    assert "".join(reasoning) == 'I could call <tool_call>{"name": "x", "arguments": {}}</tool_call> maybe'
