"""Result classes show themselves as Python does: quoted strings, None, True/False."""

from __future__ import annotations

import toolmend
from toolmend import ToolCallAccumulator, ToolCallDelta


def test_reprs_of_results_are_python() -> None:
    registry = toolmend.ToolRegistry()
    info = registry.register("f", {"type": "object", "required": ["x"]}, category="c")
    assert repr(info) == "ToolInfo(name='f', version='1.0.0', category='c')"
    error = registry.try_validate("f", {}).errors[0]
    assert repr(error) == (
        "FieldError(path='/x', code='TSR-003', message=\"Required property 'x' is missing\", "
        "expected=None, actual=None, suggestion=\"add the required property 'x'\")"
    )
    assert repr(toolmend.repair("{a:1}").repairs[0]) == "Repair(kind='unquoted_key', position=1)"
    assert repr(toolmend.repair("").error).startswith("RepairError(code='TLP-004', message=")
    reply = {
        "message": {
            "tool_calls": [
                {"id": "c1", "function": {"name": "f", "arguments": '{"x": 1,}'}},
                {"function": {"name": "bad-name", "arguments": "{}"}},
            ]
        }
    }
    result = toolmend.parse_response(reply)
    assert repr(result.calls[0]) == (
        "ToolCall(id='c1', name='f', arguments={'x': 1}, index=0, source='tool_calls', repairs=1)"
    )
    assert repr(result.errors[0]).startswith("ToolCallError(code='TLP-003', message=")
    assert repr(result.errors[0]).endswith("tool_name='bad-name', position=None, index=1)")
    assert repr(result).startswith("ParseResult(ok=False, calls=(ToolCall(") and repr(result).endswith(", text='', reasoning='')")
    assert repr(ToolCallDelta(0, name="x")) == "ToolCallDelta(index=0, id=None, name='x', arguments=None, complete=False)"
    events = ToolCallAccumulator().feed(ToolCallDelta(0, name="f"))
    assert [repr(e) for e in events] == ["StreamEvent(kind='started', index=0)", "StreamEvent(kind='name', index=0, text='f')"]
    for shown in map(repr, (info, error, result, *events)):
        assert "Some(" not in shown and '"None"' not in shown
