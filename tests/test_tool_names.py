"""Tool names: the default rule, OpenAI's and MCP's, for registering and for the calls checked against a
registry."""

from __future__ import annotations

import pytest

import toolmend



@pytest.mark.parametrize(
    "names, ok, refused",
    [
        ("default", ["read_file"], ["read-file", "fs.read"]),
        ("openai", ["read_file", "read-file"], ["fs.read", "a" * 65]),
        ("mcp", ["read-file", "fs.read_file", "a" * 128], ["fs/read", "a" * 129]),
    ],
)
def test_a_registry_takes_the_names_its_rule_allows(names: str, ok: list[str], refused: list[str]) -> None:
    reg = toolmend.ToolRegistry(names=names)
    assert reg.names == names
    for name in ok:
        reg.register(name, {"type": "object"})
        body = {"message": {"tool_calls": [{"function": {"name": name, "arguments": {}}}]}}
        assert [c.name for c in toolmend.parse_response(body, reg).calls] == [name]
    for name in refused:
        with pytest.raises(toolmend.SchemaError) as e:
            reg.register(name, {"type": "object"})
        assert e.value.code == "TSR-006"


def test_calls_are_held_to_the_registry_s_rule_and_to_the_default_without_one() -> None:
    body = {"message": {"tool_calls": [{"function": {"name": "fs.read", "arguments": {}}}]}}
    assert [e.code for e in toolmend.parse_response(body).errors] == ["TLP-003"]
    reg = toolmend.ToolRegistry(names="mcp")
    reg.register("fs.read", {"type": "object"})
    assert toolmend.parse_response(body, reg).ok
    with pytest.raises(ValueError):
        toolmend.ToolRegistry(names="anything")


def test_mcp_tools_register_under_mcp_names() -> None:
    tools = [{"name": "github.create-issue", "description": "d", "inputSchema": {"type": "object"}, "annotations": {"destructiveHint": True}}]
    reg = toolmend.ToolRegistry.from_tools(tools, names="mcp")
    assert "github.create-issue" in reg and reg.annotations["github.create-issue"] == {"destructiveHint": True}


def test_mcp_annotations_are_on_the_tool_info_and_travel_with_it() -> None:
    import pickle

    tools = [
        {"name": "fs.delete", "inputSchema": {"type": "object"}, "annotations": {"destructiveHint": True, "readOnlyHint": False}},
        {"name": "fs.read", "inputSchema": {"type": "object"}},
    ]
    reg = toolmend.ToolRegistry.from_tools(tools, names="mcp")
    info = reg.get("fs.delete")
    assert info.annotations == {"destructiveHint": True, "readOnlyHint": False}
    assert reg.get("fs.read").annotations is None
    assert pickle.loads(pickle.dumps(info)).annotations == info.annotations
    # A new dict each time: nothing a caller does to it reaches the registry.
    info.annotations["destructiveHint"] = False  # type: ignore[index]
    assert reg.get("fs.delete").annotations == {"destructiveHint": True, "readOnlyHint": False}


# ---- a name in another case comes back as registered ------------------------------------------------------


def _delete_registry() -> toolmend.ToolRegistry:
    schema = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    tools = [
        {"type": "function", "function": {"name": "delete_file", "parameters": schema}},
        {"type": "function", "function": {"name": "read_file", "parameters": schema}},
    ]
    return toolmend.ToolRegistry.from_tools(tools)


def _renamed(call: toolmend.ToolCall, written: str) -> None:
    """The call carries the registered name, the model's spelling, and a tool_name repair first."""
    assert (call.name, call.raw_name) == ("delete_file", written)
    assert call.repairs[0] == toolmend.Repair("tool_name", 0)
    assert call.as_dict()["name"] == "delete_file" and call.as_dict()["raw_name"] == written


def test_a_name_in_another_case_comes_back_registered_in_a_whole_reply() -> None:
    reg = _delete_registry()
    text = '<tool_call>{"name": "DELETE_FILE", "arguments": {"path": "a"}}</tool_call>'
    (call,) = toolmend.parse_response(text, reg).calls
    _renamed(call, "DELETE_FILE")
    # Dispatch by name finds the handler; a policy on the registered name sees the call.
    handlers = {"delete_file": lambda path: f"deleted {path}"}
    assert handlers[call.name](**call.arguments) == "deleted a"
    body = {"choices": [{"message": {"role": "assistant", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "Delete_File", "arguments": '{"path": "b",}'}},
    ]}}]}
    (call,) = toolmend.parse_response(body, reg).calls
    _renamed(call, "Delete_File")
    assert [r.kind for r in call.repairs] == ["tool_name", "trailing_comma"]


def test_a_name_in_another_case_comes_back_registered_from_a_stream() -> None:
    acc = toolmend.ToolCallAccumulator(_delete_registry())
    for delta in [
        toolmend.ToolCallDelta(0, id="c1", name="DELETE"),
        toolmend.ToolCallDelta(0, name="_FILE", arguments='{"path": '),
        toolmend.ToolCallDelta(0, arguments='"a"}', complete=True),
    ]:
        acc.feed(delta)
    (call,) = acc.finish().calls
    _renamed(call, "DELETE_FILE")
    assert call.source == "stream"


def test_a_name_in_another_case_comes_back_registered_from_check_call() -> None:
    (call,) = toolmend.check_call("dElEtE_fIlE", {"path": "a"}, _delete_registry()).calls
    _renamed(call, "dElEtE_fIlE")
    # Finding the tool whatever the case is the registry's rule, not a mending of the text: repair=False keeps it.
    (call,) = toolmend.check_call("DELETE_FILE", '{"path": "a"}', _delete_registry(), repair=False).calls
    _renamed(call, "DELETE_FILE")


def test_a_name_as_registered_has_no_repair_and_its_raw_name_is_its_name() -> None:
    reg = _delete_registry()
    for result in [
        toolmend.parse_response('<tool_call>{"name": "delete_file", "arguments": {"path": "a"}}</tool_call>', reg),
        toolmend.check_call("delete_file", {"path": "a"}, reg),
        # Without a registry there is no registered name: the call keeps the model's.
        toolmend.check_call("DELETE_FILE", {"path": "a"}),
    ]:
        (call,) = result.calls
        assert call.raw_name == call.name and call.repairs == []
        assert "raw_name" not in repr(call)


def test_a_renamed_call_pickles_and_equals_one_written_as_registered() -> None:
    import pickle

    reg = _delete_registry()
    (renamed,) = toolmend.check_call("DELETE_FILE", {"path": "a"}, reg).calls
    back = pickle.loads(pickle.dumps(renamed))
    assert (back.name, back.raw_name, back.repairs) == ("delete_file", "DELETE_FILE", renamed.repairs)
    assert "raw_name='DELETE_FILE'" in repr(renamed)
    by_hand = toolmend.ToolCall("delete_file", {"path": "a"}, id=renamed.id)
    assert by_hand.raw_name == "delete_file" and by_hand == renamed  # how it was written is not what it is
    assert toolmend.ToolCall("delete_file", {}, raw_name="DELETE_FILE").raw_name == "DELETE_FILE"


def test_a_repeat_in_the_text_in_another_case_runs_once() -> None:
    body = {"message": {
        "content": '<tool_call>{"name": "delete_file", "arguments": {"path": "a"}}</tool_call>',
        "tool_calls": [{"function": {"name": "DELETE_FILE", "arguments": {"path": "a"}}}],
    }}
    (call,) = toolmend.parse_response(body, _delete_registry()).calls
    assert call.source == "tool_calls" and call.raw_name == "DELETE_FILE"
