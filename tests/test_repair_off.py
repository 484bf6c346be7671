"""repair=False on every reader: a call that needed repair is refused with TLP-004, wherever it was written and
however it arrived (parse_response, check_call, ToolCallAccumulator, TextCallParser), and a call that is strict
JSON as sent passes. The rule lives once, in the core's pipeline."""

from __future__ import annotations

from typing import Any

import pytest

import toolmend

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


@pytest.fixture
def registry() -> toolmend.ToolRegistry:
    reg = toolmend.ToolRegistry()
    reg.register("read_file", SCHEMA)
    return reg


def _streamed(registry: Any, arguments: str, repair: bool) -> Any:
    acc = toolmend.ToolCallAccumulator(registry, repair=repair)
    chunk = {"index": 0, "id": "c1", "function": {"name": "read_file", "arguments": arguments}}
    acc.feed({"choices": [{"delta": {"tool_calls": [chunk]}}]})
    return acc.finish()


def _in_text(registry: Any, text: str, repair: bool) -> list[Any]:
    parser = toolmend.TextCallParser(registry, repair=repair)
    items = parser.feed(text) + parser.flush()
    return [item for item in items if not isinstance(item, (str, toolmend.TextWithoutCalls))]


@pytest.mark.parametrize("arguments", ['{"path": "a.txt",}', "{'path': 'a.txt'}", '{"path": "a.txt"'])
def test_wire_arguments_that_need_repair_are_refused_on_every_reader(registry: Any, arguments: str) -> None:
    whole = toolmend.parse_response(
        {"message": {"tool_calls": [{"function": {"name": "read_file", "arguments": arguments}}]}}, registry, repair=False
    )
    one = toolmend.check_call("read_file", arguments, registry, repair=False)
    streamed = _streamed(registry, arguments, repair=False)
    for result in (whole, one, streamed):
        assert not result.ok and [e.code for e in result.errors] == ["TLP-004"]
        assert result.errors[0].position is not None
    # The same position and message on each: one rule, read from the text as sent.
    assert len({(r.errors[0].position, r.errors[0].message) for r in (whole, one, streamed)}) == 1
    for result in (toolmend.check_call("read_file", arguments, registry), _streamed(registry, arguments, repair=True)):
        assert [c.arguments for c in result.calls] == [{"path": "a.txt"}] and result.calls[0].repairs


def test_strict_arguments_pass_with_repair_off(registry: Any) -> None:
    arguments = '{"path": "a.txt"}'
    assert toolmend.check_call("read_file", arguments, registry, repair=False).calls[0].arguments == {"path": "a.txt"}
    assert _streamed(registry, arguments, repair=False).calls[0].arguments == {"path": "a.txt"}
    text = '<tool_call>{"name": "read_file", "arguments": {"path": "a.txt"}}</tool_call>'
    assert [c.arguments for c in _in_text(registry, text, repair=False)] == [{"path": "a.txt"}]


@pytest.mark.parametrize(
    "text",
    [
        "<tool_call>{'name': 'read_file', 'arguments': {'path': 'a.txt'}}</tool_call>",
        '<tool_call>{"name": "read_file", "arguments": {"path": "a.txt",}}</tool_call>',
        "[read_file(path='a.txt')]",
    ],
)
def test_calls_written_in_text_that_needed_repair_are_refused(registry: Any, text: str) -> None:
    whole = toolmend.parse_response({"message": {"content": text}}, registry, repair=False)
    streamed = _in_text(registry, text, repair=False)
    assert [e.code for e in whole.errors] == [e.code for e in streamed] == ["TLP-004"]
    assert whole.errors[0].message == streamed[0].message
    assert whole.errors[0].position == streamed[0].position
    # With repair on, both readers take the call.
    assert [c.name for c in toolmend.parse_response({"message": {"content": text}}, registry).calls] == ["read_file"]
    assert [c.name for c in _in_text(registry, text, repair=True)] == ["read_file"]


def test_check_call_checks_a_call_as_a_reply_does(registry: Any) -> None:
    assert toolmend.check_call("read_file", {"path": 1}, registry).errors[0].code == "TSR-004"
    assert toolmend.check_call("read file", {}, registry).errors[0].code == "TLP-003"
    assert toolmend.check_call("nope", {}, registry).errors[0].code == toolmend.parse_response(
        {"message": {"tool_calls": [{"function": {"name": "nope", "arguments": {}}}]}}, registry
    ).errors[0].code
    assert toolmend.check_call("read_file", "[1, 2]", registry).errors[0].code == "TLP-004"
    big = toolmend.check_call("read_file", '{"path": "' + "x" * 2000 + '"}', registry, max_size=1000)
    assert big.errors[0].code == "TLP-007"
    # Nothing given is changed.
    arguments = {"path": "a.txt"}
    result = toolmend.check_call("read_file", arguments, registry)
    assert result.ok and arguments == {"path": "a.txt"} and result.text == ""
