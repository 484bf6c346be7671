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
