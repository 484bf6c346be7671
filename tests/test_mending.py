"""What the model meant, kept: the classes of broken text where a reading used to lose data (a fence
or prose after an object left open, a string that runs into a fence, list markers, values that only
start like numbers, a quote inside a key or a path, arguments encoded twice)."""

from __future__ import annotations

import json
from typing import Any

import pytest

import toolmend

MEANT: list[tuple[str, Any, str]] = [
    # (text, value meant, the repair that says what happened)
    ('{"a": 1, "b": "x"\n```', {"a": 1, "b": "x"}, "markdown_fence"),
    ('{"a": 1, "b": "x"\nHope this helps!', {"a": 1, "b": "x"}, "surrounding_text"),
    ('{"a": {"b": 1}\n```\nDone.', {"a": {"b": 1}}, "markdown_fence"),
    ('{"a": [1, 2]\n\nLet me know if you need more.', {"a": [1, 2]}, "surrounding_text"),
    ('{"a": 1,\n```', {"a": 1}, "trailing_comma"),
    ('{"a": "value, value2"```', {"a": "value, value2"}, "markdown_fence"),
    ('{"a": "value}```', {"a": "value"}, "unclosed_string"),
    ('{"a": ["x", "y]\n```\n', {"a": ["x", "y"]}, "unclosed_string"),
    (' - {"a": 1}', {"a": 1}, "surrounding_text"),
    ('- {"a": 1}\n- {"b": 2}', [{"a": 1}, {"b": 2}], "concatenated_values"),
    ('1. {"a": 1}\n2. {"b": 2}', [{"a": 1}, {"b": 2}], "concatenated_values"),
    ('{"ratio": 1/3}', {"ratio": "1/3"}, "unquoted_string"),
    ('{"v": 0.0.1 2}', {"v": "0.0.1 2"}, "unquoted_string"),
    ('{"n": 12345/67890, "m": 2}', {"n": "12345/67890", "m": 2}, "unquoted_string"),
    ('{"key:"value"}', {"key": "value"}, "unescaped_quotes"),
    ('{"key:"value", "b": 1}', {"key": "value", "b": 1}, "unescaped_quotes"),
    ('{"cmd": "run "d:/x/v2.py""}', {"cmd": 'run "d:/x/v2.py"'}, "unescaped_quotes"),
    ('{"a": 1 \u201cb\u201d: 2}', {"a": 1, "b": 2}, "missing_comma"),
    ("{'point': (1, 2), 'ids': {3, 4}}", {"point": [1, 2], "ids": [3, 4]}, "python_container"),
    ("[(1, 'a'), ()]", [[1, "a"], []], "python_container"),
    ('{"json": "{"style": "modern", "size": 2}"}', {"json": '{"style": "modern", "size": 2}'}, "unescaped_quotes"),
    ('{"rows": "[["a", 1], ["b", 2]]", "n": 2}', {"rows": '[["a", 1], ["b", 2]]', "n": 2}, "unescaped_quotes"),
    ('{"path": "a", "mode', {"path": "a", "mode": None}, "truncated_string"),
    ('{"ids": [1, 2, 3 "limit": 4}', {"ids": [1, 2, 3], "limit": 4}, "missing_closing_bracket"),
    ('{"weight": 5 kg, "n": 1}', {"weight": "5 kg", "n": 1}, "unquoted_string"),
    ("{`a`: `b`}", {"a": "b"}, "special_quotes"),
    ('{"a": TRUE, "b": NULL}', {"a": True, "b": None}, "python_literal"),
    ('{\u00a0"a":\u3000 1}', {"a": 1}, "unexpected_character"),
]


@pytest.mark.parametrize("text, meant, kind", MEANT)
def test_the_reading_that_keeps_the_value(text: str, meant: Any, kind: str) -> None:
    result = toolmend.repair(text)
    assert result.ok, result.error
    assert json.loads(result.json) == meant
    assert kind in [r.kind for r in result.repairs]
    assert toolmend.loads(text) == meant


KEPT: list[tuple[str, Any]] = [
    # Readings that must not change: a missing comma, a comment, arrays, fences inside strings.
    ('{"a": 1 "b": 2}', {"a": 1, "b": 2}),
    ('{"a": 10 // ten\n}', {"a": 10}),
    ("[1 2]", [1, 2]),
    ('{"a": 1, "b": 2}', {"a": 1, "b": 2}),
    ('{"content": "```py\\nx = 1\\n```"}', {"content": "```py\nx = 1\n```"}),
    ('{"url": "http://x.org/a"}', {"url": "http://x.org/a"}),
    ('{"a:" 1}', {"a:": 1}),
    ("-1", -1),
    ('{"say": "say "hi""}', {"say": 'say "hi"'}),
    ('{"note": (see below)}', {"note": "(see below)"}),
    ('{1: "a", 2: "b"}', {"1": "a", "2": "b"}),
    ('{"open": "{", "b": tru', {"open": "{", "b": True}),
    ('{"code": "```py\n(1, 2)\n```"}', {"code": "```py\n(1, 2)\n```"}),
]


@pytest.mark.parametrize("text, value", KEPT)
def test_readings_that_stay(text: str, value: Any) -> None:
    assert toolmend.loads(text) == value


def test_a_forgotten_brace_before_prose_is_not_a_cut() -> None:
    content = 'I will read it.\n<tool_call>{"name": "read_file", "arguments": {"path": "a.txt"}\nLet me know if that works.'
    result = toolmend.parse_response({"message": {"role": "assistant", "content": content}})
    assert [(c.name, c.arguments) for c in result.calls] == [("read_file", {"path": "a.txt"})]


def test_a_string_into_a_fence_in_a_call_is_not_a_cut() -> None:
    body = {"message": {"tool_calls": [{"function": {"name": "f", "arguments": '{"path": "a.txt"```'}}]}}
    (call,) = toolmend.parse_response(body).calls
    assert call.arguments == {"path": "a.txt"}


def test_arguments_encoded_twice_are_decoded_where_an_object_is_required() -> None:
    twice = json.dumps(json.dumps({"path": "a.txt", "n": 1}))
    body = {"choices": [{"message": {"tool_calls": [{"id": "c", "function": {"name": "read_file", "arguments": twice}}]}}]}
    (call,) = toolmend.parse_response(body).calls
    assert call.arguments == {"path": "a.txt", "n": 1}
    assert "escaped_json" in [r.kind for r in call.repairs]
    # Not an object inside: still refused.
    words = {"choices": [{"message": {"tool_calls": [{"function": {"name": "read_file", "arguments": json.dumps("just words")}}]}}]}
    assert [e.code for e in toolmend.parse_response(words).errors] == ["TLP-004"]


def test_untyped_parameter_text_takes_the_schema_s_type() -> None:
    reg = toolmend.ToolRegistry()
    reg.register(
        "set_title",
        {
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "count": {"type": "integer"},
                "ratio": {"type": "number"},
                "mode": {"enum": ["1", "2"]},
                "tags": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["title"],
        },
    )
    content = (
        "<tool_call>\n<function=set_title>\n<parameter=title>\n42\n</parameter>\n<parameter=count>\n7\n</parameter>\n"
        "<parameter=ratio>\n3\n</parameter>\n<parameter=mode>\n2\n</parameter>\n<parameter=tags>\n[\"a\"]\n</parameter>\n"
        "</function>\n</tool_call>"
    )
    reply = {"message": {"role": "assistant", "content": content}}
    (call,) = toolmend.parse_response(reply, reg).calls
    assert call.arguments == {"title": "42", "count": 7, "ratio": 3, "mode": "2", "tags": ["a"]}
    # Without a registry the text is read as JSON where it is JSON.
    (untyped,) = toolmend.parse_response(reply).calls
    assert untyped.arguments["title"] == 42


def test_bare_words_of_pythonic_calls_take_the_schema_s_type() -> None:
    reg = toolmend.ToolRegistry()
    reg.register("set_title", {"type": "object", "properties": {"title": {"type": "string"}, "on": {"type": "boolean"}}})
    (call,) = toolmend.parse_response({"message": {"content": "[set_title(title=true, on=true)]"}}, reg).calls
    assert call.arguments == {"title": "true", "on": True}
    # Python's own literals keep their type: 42 for a string is an error, not a string.
    assert [e.code for e in toolmend.parse_response({"message": {"content": "[set_title(title=42)]"}}, reg).errors] == ["TSR-004"]
    # Without a registry a bare word is read as what it spells.
    (untyped,) = toolmend.parse_response({"message": {"content": "[set_title(title=true)]"}}).calls
    assert untyped.arguments == {"title": True}


def test_valid_json_is_never_coerced() -> None:
    reg = toolmend.ToolRegistry()
    reg.register("f", {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
    result = toolmend.parse_response({"message": {"tool_calls": [{"function": {"name": "f", "arguments": '{"n": "42"}'}}]}}, reg)
    assert [e.code for e in result.errors] == ["TSR-004"]


def test_a_near_miss_of_a_key_is_named_not_renamed() -> None:
    reg = toolmend.ToolRegistry()
    schema = {"type": "object", "properties": {"path": {"type": "string"}, "start_line": {"type": "integer"}}, "required": ["path"], "additionalProperties": False}
    reg.register("read_file", schema)
    errors = {e.path: e for e in reg.try_validate("read_file", {"pth": "a", "startLine": 2}).errors}
    assert errors["/pth"].suggestion.startswith("rename 'pth' to 'path'")
    assert errors["/startLine"].suggestion.startswith("rename 'startLine' to 'start_line'")
    assert errors["/path"].code == "TSR-003" and "rename 'pth'" in errors["/path"].suggestion
    # Far from every declared name: only removed.
    (far,) = reg.try_validate("read_file", {"path": "a", "colour": 1}).errors
    assert far.suggestion.startswith("remove 'colour'")
