"""parse_response: Ollama and OpenAI-compatible replies, every TLP code, calls written in text."""

from __future__ import annotations

import json
import pickle
import logging
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolmend
from toolmend import ParseResult, ToolRegistry, parse_response

READ_FILE = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "encoding": {"enum": ["utf-8", "ascii"]}},
    "required": ["path"],
}


@pytest.fixture
def registry() -> ToolRegistry:
    reg = ToolRegistry()
    reg.register("read_file", READ_FILE, description="Read a file")
    reg.register("get_weather", {"type": "object", "properties": {"city": {"type": "string"}}}, description="Weather")
    return reg


def ollama(*calls: dict[str, Any], content: str = "") -> dict[str, Any]:
    return {"model": "qwen3", "message": {"role": "assistant", "content": content, "tool_calls": list(calls)}, "done": True}


def openai(*calls: dict[str, Any], content: str | None = None) -> dict[str, Any]:
    message = {"role": "assistant", "content": content, "tool_calls": list(calls)}
    return {"object": "chat.completion", "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]}


def call(name: Any, arguments: Any, **extra: Any) -> dict[str, Any]:
    return {"function": {"name": name, "arguments": arguments}, **extra}


# ---- reference scenarios --------------------------------------------------------------------------


def test_trailing_comma_is_repaired_and_reported() -> None:
    result = parse_response(ollama(call("read_file", '{"path": "test.txt",}')))
    assert result.ok and len(result.calls) == 1
    tool_call = result.calls[0]
    assert tool_call.arguments == {"path": "test.txt"}
    assert [r.kind for r in tool_call.repairs] == ["trailing_comma"]
    assert tool_call.raw_arguments == '{"path": "test.txt",}'


def test_five_calls_keep_their_order_and_ids() -> None:
    calls = [call("read_file", {"path": f"{i}.txt"}, id=f"id{i}") for i in range(5)]
    result = parse_response(ollama(*calls))
    assert [c.id for c in result.calls] == [f"id{i}" for i in range(5)]
    assert [c.arguments["path"] for c in result.calls] == [f"{i}.txt" for i in range(5)]
    assert [c.index for c in result.calls] == list(range(5))


def test_wrong_type_reports_path_expected_and_actual(registry: ToolRegistry) -> None:
    result = parse_response(ollama(call("read_file", {"path": 12345})), registry)
    assert not result.ok and result.calls == ()
    (error,) = result.errors
    assert (error.code, error.tool_name) == ("TSR-004", "read_file")
    (field,) = error.validation
    assert (field.path, field.expected, field.actual) == ("/path", "string", "integer")


def test_unknown_tool_is_rejected(registry: ToolRegistry) -> None:
    result = parse_response(ollama(call("unknown_tool", {"param": "value"})), registry)
    (error,) = result.errors
    assert error.code == "TSR-001" and "Unknown tool" in error.message
    assert error.tool_name == "unknown_tool"


def test_two_megabyte_arguments_are_refused_with_tlp_007() -> None:
    big = json.dumps({"path": "x" * 2_000_000})
    result = parse_response(openai(call("read_file", big)))
    (error,) = result.errors
    assert error.code == "TLP-007"
    # An object given by Ollama is held to the same limit.
    result = parse_response(ollama(call("read_file", {"path": "x" * 2_000_000})))
    assert result.errors[0].code == "TLP-007"


def test_missing_id_is_generated_unique() -> None:
    result = parse_response(ollama(call("read_file", {"path": "a"}), call("read_file", {"path": "b"})))
    ids = [c.id for c in result.calls]
    assert all(i.startswith("call_") and len(i) > 10 for i in ids)
    assert len(set(ids)) == 2


# ---- each code ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool_call", "code"),
    [
        ({"id": "call_123"}, "TLP-001"),
        ({"id": "call_123", "function": None}, "TLP-001"),
        (call("", "{}"), "TLP-002"),
        (call("   ", "{}"), "TLP-002"),
        ({"function": {"arguments": "{}"}}, "TLP-002"),
        (call("read-file", "{}"), "TLP-003"),
        (call("read file", "{}"), "TLP-003"),
        (call(42, "{}"), "TLP-003"),
        (call("just a plain string", "{}"), "TLP-003"),
        (call("read_file", "just a plain string"), "TLP-004"),
        (call("read_file", "[1, 2]"), "TLP-004"),
        (call("read_file", [1, 2]), "TLP-004"),
        (call("read_file_from_filesystem_with_error_handling_and_retry_logic_enabled", "{}"), "TLP-005"),
        (call("read_file", '{"a":' * 100 + "1" + "}" * 100), "TLP-008"),
    ],
)
def test_each_code(tool_call: dict[str, Any], code: str) -> None:
    result = parse_response(ollama(tool_call, call("read_file", {"path": "ok"})))
    assert [e.code for e in result.errors] == [code]
    assert [c.name for c in result.calls] == ["read_file"]  # one bad call spoils nothing else
    assert result.errors[0].index == 0 and result.calls[0].index == 1
    assert result.errors[0].message


def test_unparseable_arguments_carry_position_and_raw_text() -> None:
    result = parse_response(openai(call("read_file", "path: notes.txt")))
    (error,) = result.errors
    assert (error.code, error.position, error.tool_name) == ("TLP-004", 0, "read_file")
    assert error.raw_arguments == "path: notes.txt"
    assert "expected a JSON value" in error.message and error.suggestion


def test_repair_can_be_turned_off() -> None:
    result = parse_response(openai(call("read_file", '{"path": "a",}')), repair=False)
    assert [e.code for e in result.errors] == ["TLP-004"]


def test_openai_string_arguments_and_empty_arguments() -> None:
    result = parse_response(openai(call("read_file", '{"path": "a"}', id="call_abc"), call("now", "")))
    assert [(c.id, c.name, c.arguments) for c in result.calls][0] == ("call_abc", "read_file", {"path": "a"})
    assert result.calls[1].arguments == {}


def test_bytes_str_and_dict_bodies_agree() -> None:
    body = ollama(call("read_file", {"path": "a"}), content="Reading.")
    for form in (body, json.dumps(body), orjson.dumps(body)):
        result = parse_response(form)
        assert [(c.name, c.arguments) for c in result.calls] == [("read_file", {"path": "a"})]
        assert result.text == "Reading."


def test_missing_tool_calls_field_gives_no_calls() -> None:
    result = parse_response({"message": {"role": "assistant", "content": "Hello there."}})
    assert result.ok and result.calls == () and result.text == "Hello there."
    assert parse_response({"choices": []}).calls == ()


def test_caller_dict_is_not_mutated() -> None:
    body = openai(call("read_file", '{"path": "a",}'))
    before = json.dumps(body)
    parse_response(body)
    assert json.dumps(body) == before


def test_errors_are_logged_without_values(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="toolmend"):
        parse_response(ollama(call("read-file", {"path": "secret-value"})))
    assert "TLP-003" in caplog.text
    assert "secret-value" not in caplog.text


# ---- calls written in text ------------------------------------------------------------------------

TEXT_FORMATS = [
    ("hermes", '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'),
    ("hermes", '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}'),
    ("hermes", '<tool_call>{"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}</tool_call>'),
    ("fenced_tool_call", '```tool_call\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```'),
    ("mistral", '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}}]'),
    ("mistral", '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}'),
    ("llama3", '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}'),
    ("bare_json", '{"name": "get_weather", "parameters": {"city": "Paris"}}'),
    ("bare_json", '{"tool": "get_weather", "tool_input": {"city": "Paris"}}'),
    ("pythonic", "[get_weather(city='Paris')]"),
    ("llama4", "<|python_start|>[get_weather(city='Paris')]<|python_end|>"),
    ("lfm2", "<|tool_call_start|>[get_weather(city=\"Paris\")]<|tool_call_end|>"),
    ("olmo3", '<function_calls>get_weather(city="Paris")</function_calls>'),
    ("gemma4", '<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|>'),
    ("functiongemma", "<start_function_call>call:get_weather{city:<escape>Paris<escape>}<end_function_call>"),
    ("command_r", '<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Paris"}}]<|END_ACTION|>'),
    ("command_r", '\nAction: ```json\n[{"tool_name": "get_weather", "parameters": {"city": "Paris"}}]\n```'),
    ("deepseek", "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Paris\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"),
    ("deepseek", "<｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": \"Paris\"}<｜tool▁call▁end｜>"),
    ("granite", '<|tool_call|>[{"arguments": {"city": "Paris"}, "name": "get_weather"}]'),
    ("phi4", 'functools[{"name": "get_weather", "arguments": {"city": "Paris"}}]'),
    ("functionary", '<function=get_weather>{"city": "Paris"}</function>'),
    ("functionary", "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>"),
    ("kimi_k2", '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0 <|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|><|tool_calls_section_end|>'),
    ("gpt_oss", '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>'),
]


@pytest.mark.parametrize(("source", "content"), TEXT_FORMATS, ids=[f"{s}-{i}" for i, (s, _) in enumerate(TEXT_FORMATS)])
def test_text_formats(registry: ToolRegistry, source: str, content: str) -> None:
    result = parse_response({"message": {"role": "assistant", "content": "Checking. " + content}}, registry)
    assert result.ok, result.errors
    assert [(c.name, c.arguments) for c in result.calls] == [("get_weather", {"city": "Paris"})]
    assert result.calls[0].source == (source if source != "functionary" or "<tool_call>" not in content else "functionary")
    assert result.text == "Checking."


def test_fenced_json_call_is_a_call_only_as_the_whole_reply(registry: ToolRegistry) -> None:
    # A ```json fence amid prose is a sample the model shows; alone it is how small models call.
    fence = '```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```'
    result = parse_response({"message": {"role": "assistant", "content": fence}}, registry)
    assert [(c.name, c.arguments, c.source) for c in result.calls] == [("get_weather", {"city": "Paris"}, "fenced_json")]
    assert result.text == ""
    quoted = parse_response({"message": {"role": "assistant", "content": "Checking. " + fence}}, registry)
    assert quoted.calls == () and quoted.errors == () and quoted.text == "Checking. " + fence


def test_text_calls_follow_structured_calls_in_index(registry: ToolRegistry) -> None:
    body = ollama(
        call("read_file", {"path": "a"}),
        content='<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>',
    )
    result = parse_response(body, registry)
    assert [(c.name, c.index, c.source) for c in result.calls] == [("read_file", 0, "tool_calls"), ("get_weather", 1, "hermes")]


def test_several_llama_calls_separated_by_semicolons() -> None:
    content = '<|python_tag|>{"name": "a", "parameters": {"x": 1}}; {"name": "b", "parameters": {"y": 2}}'
    result = parse_response(content)
    assert [(c.name, c.arguments) for c in result.calls] == [("a", {"x": 1}), ("b", {"y": 2})]


def test_broken_json_in_a_text_call_is_repaired() -> None:
    result = parse_response("<tool_call>{'name': 'read_file', 'arguments': {'path': 'a.txt',}}")
    assert [(c.name, c.arguments) for c in result.calls] == [("read_file", {"path": "a.txt"})]
    assert result.calls[0].repairs


@pytest.mark.parametrize(
    "content",
    [
        '{"name": "my-app", "version": "1.0.0", "scripts": {"test": "pytest"}}',
        'Tool: {"name": "read_file", "description": "Read", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}',
        "```python\ndef f(x):\n    return {'a': x}\n```",
        "```json\n{\"temperature\": 21, \"unit\": \"C\"}\n```",
        "The set {1, 2, 3} has three elements.",
    ],
)
def test_json_looking_prose_yields_no_call(content: str) -> None:
    result = parse_response({"message": {"role": "assistant", "content": content}})
    assert result.calls == () and result.errors == ()
    assert result.text == content


def test_prose_object_naming_no_known_tool_stays_text(registry: ToolRegistry) -> None:
    content = 'Example: {"name": "other_tool", "arguments": {"a": 1}}'
    result = parse_response({"message": {"content": content}}, registry)
    assert result.calls == () and result.errors == () and result.text == content
    # Without a registry, JSON amid prose is a call only when the call site is lenient.
    assert parse_response({"message": {"content": content}}).calls == ()
    lenient = parse_response({"message": {"content": content}}, text_calls="lenient")
    assert [c.name for c in lenient.calls] == ["other_tool"]


def test_marked_call_to_unknown_tool_is_an_error(registry: ToolRegistry) -> None:
    result = parse_response('<tool_call>{"name": "other_tool", "arguments": {}}</tool_call>', registry)
    assert [e.code for e in result.errors] == ["TSR-001"]


def test_text_calls_can_be_turned_off() -> None:
    content = '<tool_call>{"name": "a", "arguments": {}}</tool_call>'
    result = parse_response({"message": {"content": content}}, text_calls=False)
    assert result.calls == () and result.text == content


def test_thinking_is_reasoning_and_not_searched() -> None:
    content = '<think>I could call {"name": "a", "arguments": {}}</think>No call needed.'
    result = parse_response({"message": {"content": content}})
    assert result.calls == () and result.text == "No call needed."
    assert result.reasoning == 'I could call {"name": "a", "arguments": {}}'


# ---- properties ---------------------------------------------------------------------------------

JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=200), st.binary(max_size=200), st.dictionaries(st.sampled_from(["message", "choices", "content", "tool_calls", "function"]), JSONISH, max_size=4)))
def test_any_body_gives_a_result(body: Any) -> None:
    result = parse_response(body)
    assert isinstance(result, ParseResult)
    assert result.ok == (result.errors == ())
    for error in result.errors:
        assert error.code.startswith(("TLP-", "TSR-")) and error.message


MARKERS = ["<tool_call>", "</tool_call>", "[TOOL_CALLS]", "<|python_tag|>", "```json", "```", "<function=", "{", "}", "[", "]", '"', "'", ";", "<think>", "</think>", '"name": "f"', '"arguments": {', "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(MARKERS) | st.text(max_size=5), max_size=40))
def test_marker_soup_gives_a_result(parts: list[str]) -> None:
    content = "".join(parts)
    result = parse_response({"message": {"content": content}})
    assert isinstance(result.text, str)
    for c in result.calls:
        assert isinstance(c.arguments, dict)
    assert toolmend.parse_response(content).ok in (True, False)


# ---- replies as they arrive -----------------------------------------------------------------------

ONE_CALL = {"message": {"role": "assistant", "content": "", "tool_calls": [call("read_file", {"path": "a"})]}}


def test_byte_order_mark_before_the_reply() -> None:
    result = parse_response(b"\xef\xbb\xbf" + orjson.dumps(ONE_CALL))
    assert [c.name for c in result.calls] == ["read_file"] and result.text == ""


def test_streamed_ollama_reply_is_read_as_one_message() -> None:
    lines = [
        {"message": {"role": "assistant", "content": "Reading "}, "done": False},
        {"message": {"role": "assistant", "content": "", "tool_calls": [call("read_file", {"path": "a"})]}, "done": False},
        {"message": {"role": "assistant", "content": "now."}, "done": False},
        {"message": {"role": "assistant", "content": "", "tool_calls": [call("read_file", {"path": "b"})]}, "done": False},
        {"message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop"},
    ]
    body = b"\n".join(orjson.dumps(line) for line in lines) + b"\n"
    result = parse_response(body)
    assert [c.arguments["path"] for c in result.calls] == ["a", "b"]
    assert result.text == "Reading now."
    # A stream cut off in its last line keeps what had arrived.
    assert [c.arguments["path"] for c in parse_response(body[:-20]).calls] == ["a", "b"]


def test_cut_off_reply_is_mended() -> None:
    body = orjson.dumps(ONE_CALL)[:-4]
    result = parse_response(body)
    assert [(c.name, c.arguments) for c in result.calls] == [("read_file", {"path": "a"})]


def test_call_left_in_content_as_well_runs_once() -> None:
    body = {
        "message": {
            "content": '<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>',
            "tool_calls": [call("read_file", {"path": "a"})],
        }
    }
    result = parse_response(body)
    assert [(c.name, c.source) for c in result.calls] == [("read_file", "tool_calls")]
    assert result.text == ""


def test_a_refused_call_returned_as_a_value_is_one_warning_record_with_its_code(caplog: pytest.LogCaptureFixture) -> None:
    body = {"message": {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "bad name!", "arguments": {}}}]}}
    with caplog.at_level(logging.DEBUG, logger="toolmend"):
        result = toolmend.parse_response(body)
    assert not result.ok and result.errors[0].code == "TLP-003"
    (record,) = caplog.records
    assert record.levelno == logging.WARNING and record.getMessage().startswith("Tool call failed: bad name! ")
    assert (record.error_code, record.code, record.parse_result) == ("TLP-003", "TLP-003", "fail")  # type: ignore[attr-defined]


def test_a_refused_call_keeps_the_id_the_reply_gave_it(registry: ToolRegistry) -> None:
    # A tool result or a reflection answers the refused call by this id.
    body = {"choices": [{"index": 0, "message": {"tool_calls": [
        {"id": "call_ok", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "a"}'}},
        {"id": "call_bad", "type": "function", "function": {"name": "read_file", "arguments": '{"path": 7}'}},
    ]}}]}
    result = parse_response(body, registry)
    assert [getattr(e, "id", None) for e in result.errors] == ["call_bad"]
    streamed = toolmend.ToolCallAccumulator(registry)
    streamed.feed({"choices": [{"index": 0, "delta": {"tool_calls": [
        {"index": 0, "id": "call_s", "type": "function", "function": {"name": "read_file", "arguments": '{"path": 7}'}},
    ]}}]})
    assert [getattr(e, "id", None) for e in streamed.finish().errors] == ["call_s"]


WRITTEN_BLOCKS = [
    '<tool_call>{"name": "read_file", "arguments": {"path": 7}}</tool_call>',
    '[TOOL_CALLS][{"name": "read_file", "arguments": {"path": 7}}]',
    '<tool_call>{"name": "read_file", "arguments": {"path": [}</tool_call>',
]


@pytest.mark.parametrize("block", WRITTEN_BLOCKS)
def test_a_refused_call_written_in_text_carries_that_text_on_every_path(block: str) -> None:
    """ToolCallError.written is the call as the model wrote it in the text (markers included), the same whole,
    streamed in chunks and token by token, so a reader that hands the reply on can put it back; None for an entry
    of the tool_calls field."""
    registry = ToolRegistry()
    registry.register("read_file", {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})
    content = "Let me look.\n" + block + "\nDone."
    whole = parse_response({"message": {"role": "assistant", "content": content}}, registry).errors
    acc = toolmend.ToolCallAccumulator(registry)
    for i in range(0, len(content), 5):
        acc.feed_data(orjson.dumps({"choices": [{"index": 0, "delta": {"content": content[i : i + 5]}, "finish_reason": None}]}))
    streamed = acc.finish().errors
    parser = toolmend.TextCallParser(registry)
    items = [item for i in range(0, len(content), 3) for item in parser.feed(content[i : i + 3])] + parser.flush()
    tokens = [item for item in items if isinstance(item, toolmend.ToolCallError)]
    for errors in (whole, streamed, tokens):
        assert [e.written for e in errors] == [block], errors
        assert pickle.loads(pickle.dumps(errors[0])) == errors[0]
    entry = {"message": {"tool_calls": [{"function": {"name": "read_file", "arguments": {"path": 7}}}]}}
    assert [e.written for e in parse_response(entry, registry).errors] == [None]
