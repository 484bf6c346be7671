"""Several versions of one tool (seed 002, FR-065..069): every version kept, each tool's latest (semver order) used
by the checks, the listings, the exports and the core's readers, whatever order the versions came in."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

import toolmend
from ollama_server import ScriptedOllama
from toolmend import SchemaError, ToolRegistry, UnknownToolError
from toolmend.cli import main
from toolmend.tool_versions import semver_key
from wires import Wire

V1 = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
V2 = {"type": "object", "properties": {"paths": {"type": "array", "items": {"type": "string"}}}, "required": ["paths"]}
RC = {"type": "object", "properties": {"glob": {"type": "string"}}, "required": ["glob"]}


def registry(order: list[str], **kwargs: Any) -> ToolRegistry:
    reg = ToolRegistry(**kwargs)
    schemas = {"1.0.0": V1, "2.0.0": V2, "2.0.0-rc.1": RC}
    for version in order:
        reg.register("read", schemas[version], description=f"read v{version}", version=version)
    return reg


ORDERS = [["1.0.0", "2.0.0-rc.1", "2.0.0"], ["2.0.0", "1.0.0", "2.0.0-rc.1"], ["2.0.0-rc.1", "2.0.0", "1.0.0"]]


def reply(arguments: dict[str, Any]) -> dict[str, Any]:
    return {"message": {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "read", "arguments": arguments}}]}}


@pytest.mark.parametrize("order", ORDERS, ids=lambda o: "-".join(o))
def test_every_version_is_kept_and_the_latest_is_used(order: list[str]) -> None:
    reg = registry(order)
    assert reg.versions("read") == ("1.0.0", "2.0.0-rc.1", "2.0.0") and len(reg) == 1
    assert reg.get("read").version == "2.0.0" and reg.get("READ").version == "2.0.0"
    assert [reg.get("read", version=v).description for v in ("1.0.0", "2.0.0-rc.1")] == ["read v1.0.0", "read v2.0.0-rc.1"]
    assert reg.get("read", version="1.0.0").schema == V1
    assert [(t.name, t.version) for t in reg.tools()] == [("read", "2.0.0")]
    # The checks are the latest's, in Python and in the core's readers alike.
    assert reg.try_validate("read", {"paths": ["a"]}).ok and not reg.try_validate("read", {"path": "a"}).ok
    assert reg.validate("read", {"paths": ["a"]}) == {"paths": ["a"]}
    assert toolmend.parse_response(reply({"paths": ["a"]}), reg).ok
    assert [e.code for e in toolmend.parse_response(reply({"path": "a"}), reg).errors] == ["TSR-005"]
    assert toolmend.check_call("read", {"paths": ["a"]}, reg).ok
    assert "paths" in reg.schema_hint("read")
    # The exports give the latest.
    (openai,) = reg.to_openai_tools()
    assert (openai["function"]["description"], openai["function"]["parameters"]) == ("read v2.0.0", V2)
    assert reg.to_ollama_tools()[0]["function"]["parameters"] == V2
    assert reg.to_anthropic_tools()[0]["input_schema"] == V2


def test_the_same_version_with_another_definition_stays_tsr_007() -> None:
    reg = registry(["1.0.0", "2.0.0"])
    assert reg.register("read", V2, description="read v2.0.0", version="2.0.0") == reg.get("read")  # the same: a no-op
    assert reg.register("read", V1, description="read v1.0.0", version="1.0.0") == reg.get("read", version="1.0.0")
    for version in ("1.0.0", "2.0.0"):
        with pytest.raises(SchemaError) as refused:
            reg.register("read", RC, description="other", version=version)
        assert refused.value.code == "TSR-007" and f"version {version} is already registered" in refused.value.message
    with pytest.raises(SchemaError) as bad:
        reg.register("read", V1, version="three")
    assert bad.value.code == "TSR-006"
    with pytest.raises(UnknownToolError) as missing:
        reg.get("read", version="9.0.0")
    assert missing.value.code == "TSR-001" and "versions: 1.0.0, 2.0.0" in str(missing.value)
    assert reg.versions("read") == ("1.0.0", "2.0.0")


def test_semver_order() -> None:
    ordered = ["0.9.0", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1",
               "1.0.0", "1.0.1", "1.10.0", "10.0.0"]
    assert sorted(reversed(ordered), key=semver_key) == ordered
    assert semver_key("1.0.0+build.5") == semver_key("1.0.0")


def test_a_new_tool_after_a_newer_version_is_checked_too() -> None:
    reg = registry(["1.0.0", "2.0.0"], metrics=True)
    reg.register("write", V1, description="write")
    assert [t.name for t in reg.tools()] == ["read", "write"] and toolmend.check_call("write", {"path": "a"}, reg).ok
    with pytest.raises(toolmend.ValidationError):
        reg.validate("read", {"path": "a"})
    assert reg.metrics()["invalid"] == 1  # the metrics count the latest's checks


def test_a_client_checks_calls_against_the_latest(tmp_path: Path) -> None:
    reg = registry(["1.0.0", "2.0.0"])
    wire = Wire("ollama", True)
    new = {"name": "read", "arguments": {"paths": ["a"]}, "id": "call_1"}
    with ScriptedOllama([wire.calls(new)]) as server:

        async def go() -> Any:
            async with wire.client(server, reg) as client:
                return await wire.turn(client)

        result = asyncio.run(go())
        (sent,) = server.requests[0]["json"]["tools"]
    assert result.tool_calls[0].arguments == {"paths": ["a"]} and sent["function"]["parameters"] == V2


def test_a_file_may_list_versions_and_the_cli_shows_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tools = [
        {"name": "read", "version": "2.0.0", "description": "v2", "parameters": V2},
        {"name": "read", "version": "1.0.0", "description": "v1", "parameters": V1},
    ]
    path = tmp_path / "tools.yml"
    path.write_text(yaml.safe_dump({"tools": {"custom_tools": tools}}))
    assert ToolRegistry.from_file(path).versions("read") == ("1.0.0", "2.0.0")
    assert main(["tools", "show", "read", "--tools", str(path)]) == 0
    out = capsys.readouterr().out
    assert "Version: 2.0.0\n" in out and "Versions: 1.0.0, 2.0.0 (latest 2.0.0)" in out
    assert main(["tools", "show", "read", "--tools", str(path), "--tool-version", "1.0.0"]) == 0
    out = capsys.readouterr().out
    assert "Version: 1.0.0\n" in out and json.loads(out.split("Schema (JSON):\n", 1)[1]) == V1
    assert main(["tools", "list", "--tools", str(path)]) == 0
    assert "Total: 1 tools registered" in capsys.readouterr().out


def test_versions_registered_from_many_threads_at_once_all_count() -> None:
    from concurrent.futures import ThreadPoolExecutor

    reg = ToolRegistry()
    versions = [f"1.{i}.0" for i in range(40)]

    def add(version: str) -> None:
        reg.register("t", {"type": "object", "properties": {f"p{version.split('.')[1]}": {"type": "string"}}}, version=version)

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(add, versions))
    assert reg.versions("t") == tuple(sorted(versions, key=semver_key)) and reg.get("t").version == "1.39.0"
    assert reg.try_validate("t", {"p39": "x"}).ok and not reg.try_validate("t", {"p0": "x"}).ok


@pytest.mark.parametrize("order", ORDERS)
def test_readers_built_directly_check_against_the_latest(order: list[str]) -> None:
    """An accumulator or a text parser made with the registry itself (no view, no helper) checks the latest."""
    reg = registry(order)
    acc = toolmend.ToolCallAccumulator(reg)
    acc.feed(toolmend.ToolCallDelta(0, id="c1", name="read", arguments='{"paths": ["a"]}'))
    (done,) = acc.finish().calls
    assert done.arguments == {"paths": ["a"]}
    old = toolmend.ToolCallAccumulator(reg)
    old.feed(toolmend.ToolCallDelta(0, id="c1", name="read", arguments='{"path": "a"}'))
    assert [e.code for e in old.finish().errors] == ["TSR-005"]  # `paths`, required by 2.0.0, is missing
    parser = toolmend.TextCallParser(reg)
    out = parser.feed('<tool_call>{"name": "read", "arguments": {"paths": ["b"]}}</tool_call>') + parser.flush()
    assert [c.arguments for c in out if isinstance(c, toolmend.ToolCall)] == [{"paths": ["b"]}]


def test_a_newer_version_takes_the_place_of_the_one_before_in_the_listing() -> None:
    reg = ToolRegistry()
    reg.register("a_tool", V1, version="1.0.0")
    first = reg.tools()
    reg.register("read", V1, version="1.0.0", category="files")
    reg.register("read", V2, version="2.0.0", category="files")
    listed = reg.tools()
    assert first != listed and [(t.name, t.version) for t in listed] == [("a_tool", "1.0.0"), ("read", "2.0.0")]
    assert len(reg) == 2 and [t.version for t in reg.tools("files")] == ["2.0.0"]
    reg.register("read", RC, version="2.0.0-rc.1")  # older: kept, the listing unchanged
    assert reg.tools() == listed and reg.versions("read") == ("1.0.0", "2.0.0-rc.1", "2.0.0")
    assert reg.get("read", version="1.0.0").schema == V1 and "paths" in reg.schema_hint("read")
