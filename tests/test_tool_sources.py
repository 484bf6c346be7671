"""Tools from every source an agent meets, built with the real SDK packages: each is registered with its
schema (never opened up), or refused with TSR-006."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Annotated, Any, Literal

import anthropic.types
import mcp.types
import msgspec
import openai
import pydantic
import pytest

from toolmend import SchemaError, ToolRegistry
from toolmend.tool_sources import parameter_docs, tool_spec


class ReadFile(pydantic.BaseModel):
    """Read a text file."""

    path: str = pydantic.Field(max_length=4096, description="Where the file is")
    start_line: int = pydantic.Field(default=1, ge=1)


class Move(msgspec.Struct, forbid_unknown_fields=True):
    """Move a file."""

    source: str
    target: str
    overwrite: bool = False


def codes(registry: ToolRegistry, name: str, args: Any) -> list[tuple[str, str]]:
    return [(e.path, e.code) for e in registry.try_validate(name, args).errors]


# ---- tool definitions of the SDKs ---------------------------------------------------------------------


def test_openai_tool_dicts_chat_and_responses_forms() -> None:
    chat_tool = openai.pydantic_function_tool(ReadFile)  # {"type": "function", "function": {..., "strict": True}}
    responses_tool = {"type": "function", "name": "ping", "description": "Ping", "parameters": {"type": "object", "properties": {"host": {"type": "string"}}, "required": ["host"]}, "strict": True}
    no_parameters = {"type": "function", "function": {"name": "now", "description": "The time"}}
    registry = ToolRegistry.from_tools([chat_tool, responses_tool, no_parameters])
    assert [t.name for t in registry.tools()] == ["ReadFile", "now", "ping"]
    assert codes(registry, "ReadFile", {"path": "a", "start_line": 0}) == [("/start_line", "TSR-005")]
    assert codes(registry, "ping", {}) == [("/host", "TSR-003")]
    # A function without parameters takes none: an argument is refused, not let through.
    assert codes(registry, "now", {}) == [] and codes(registry, "now", {"x": 1})[0][1] != ""
    assert tool_spec(chat_tool).strict is True and tool_spec(no_parameters).strict is None


def test_mcp_tools_as_objects_dicts_and_a_tools_list_file(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"query": {"type": "string", "minLength": 1}}, "required": ["query"]}
    tool = mcp.types.Tool(
        name="search.docs-v2",
        description="Search the docs",
        input_schema=schema,
        annotations=mcp.types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
    )
    spec = tool_spec(tool)
    assert spec.schema == schema and spec.annotations == {"readOnlyHint": True, "openWorldHint": False}
    wire = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert "inputSchema" in wire  # the wire form, as a tools/list result carries it
    wire["name"] = "search_docs"
    registry = ToolRegistry.from_tools([wire])
    assert codes(registry, "search_docs", {"query": ""}) == [("/query", "TSR-005")]
    assert registry.annotations["search_docs"]["readOnlyHint"] is True

    listing = mcp.types.ListToolsResult(tools=[mcp.types.Tool(name="lookup", input_schema=schema)])
    rpc = {"jsonrpc": "2.0", "id": 1, "result": listing.model_dump(mode="json", by_alias=True, exclude_none=True)}
    (tmp_path / "tools.json").write_text(json.dumps(rpc))
    from_file = ToolRegistry.from_file(tmp_path / "tools.json")
    assert [t.name for t in from_file.tools()] == ["lookup"]
    assert codes(from_file, "lookup", {}) == [("/query", "TSR-003")]


def test_anthropic_tools() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    as_param: anthropic.types.ToolParam = {"name": "weather", "description": "Weather", "input_schema": schema}
    forecast: anthropic.types.ToolParam = {"name": "forecast", "input_schema": schema, "cache_control": {"type": "ephemeral"}}
    registry = ToolRegistry.from_tools([as_param, forecast])
    assert [t.name for t in registry.tools()] == ["forecast", "weather"]
    assert codes(registry, "forecast", {"city": 3}) == [("/city", "TSR-004")]
    assert registry.get("weather").description == "Weather"


def test_a_definition_without_a_schema_is_refused_never_opened_up(tmp_path: Path) -> None:
    for item in ({"name": "loose", "description": "no schema here"}, {"description": "no name", "inputSchema": {}}, 42):
        with pytest.raises(SchemaError) as excinfo:
            ToolRegistry.from_tools([item])
        assert excinfo.value.code == "TSR-006" and "tool 0" in excinfo.value.message
    (tmp_path / "tools.json").write_text(json.dumps([{"name": "loose"}, {"name": "ok", "parameters": {"type": "object"}}]))
    registry = ToolRegistry.from_file(tmp_path / "tools.json")
    assert [t.name for t in registry.tools()] == ["ok"]
    assert [(s.name, s.code) for s in registry.skipped] == [("loose", "TSR-006")]


# ---- models and types -------------------------------------------------------------------------------------


def test_register_takes_a_pydantic_model_a_struct_and_a_type_adapter() -> None:
    registry = ToolRegistry()
    info = registry.register("read_file", ReadFile)
    assert info.description == "Read a text file."
    assert info.schema["properties"]["path"] == {"type": "string", "maxLength": 4096, "description": "Where the file is"}
    assert codes(registry, "read_file", {"path": "x" * 5000}) == [("/path", "TSR-005")]
    registry.register("move", Move)
    assert registry.get("move").description == "Move a file."
    assert codes(registry, "move", {"source": "a"}) == [("/target", "TSR-003")]
    registry.register("tags", pydantic.TypeAdapter(dict[str, Annotated[int, pydantic.Field(ge=0)]]))
    assert codes(registry, "tags", {"a": -1}) == [("/a", "TSR-005")]
    with pytest.raises(SchemaError) as excinfo:
        registry.register("nope", object())
    assert excinfo.value.code == "TSR-006"


def test_functions_keep_constraints_formats_and_nested_models() -> None:
    registry = ToolRegistry()

    @registry.tool
    def schedule(
        title: Annotated[str, pydantic.Field(min_length=1)],
        when: datetime.datetime,
        attendees: Annotated[int, pydantic.Field(gt=0)] = 1,
        where: ReadFile | None = None,
        kind: Literal["call", "visit"] = "call",
    ) -> None:
        """Schedule a meeting.

        Args:
            title: What the meeting is about.
            when (datetime): When it starts,
                in ISO 8601.
            attendees: How many come.
        """

    assert callable(schedule) and schedule.__name__ == "schedule"  # the decorator gives the function back
    schema = registry.get("schedule").schema
    assert schema["required"] == ["title", "when"]
    assert schema["properties"]["attendees"]["exclusiveMinimum"] == 0
    assert schema["properties"]["when"]["format"] == "date-time"
    assert schema["properties"]["when"]["description"] == "When it starts, in ISO 8601."
    assert registry.get("schedule").description == "Schedule a meeting."
    assert codes(registry, "schedule", {"title": "", "when": "2026-11-23T10:00:00Z", "attendees": 0}) == [
        ("/title", "TSR-005"),
        ("/attendees", "TSR-005"),
    ]
    nested = codes(registry, "schedule", {"title": "t", "when": "2026-11-23T10:00:00Z", "where": {"path": 1}})
    assert nested and all(path.startswith("/where") for path, _ in nested)
    assert "ReadFile" in schema["$defs"]

    @registry.tool(name="ping_host", category="net")
    def ping(host: str) -> None:
        """Ping."""

    assert ping.__name__ == "ping" and registry.get("ping_host").category == "net"


@pytest.mark.parametrize(
    "doc",
    [
        """Copy.\n\nArgs:\n    src (str): The source\n        file.\n    dst: The target.\n\nReturns:\n    Nothing.""",
        """Copy.\n\nParameters\n----------\nsrc : str\n    The source\n    file.\ndst : str\n    The target.\n\nReturns\n-------\nNone""",
        """Copy.\n\n:param src: The source\n    file.\n:param str dst: The target.\n:returns: nothing""",
    ],
    ids=["google", "numpy", "sphinx"],
)
def test_parameter_descriptions_from_each_docstring_style(doc: str) -> None:
    assert parameter_docs(doc) == {"src": "The source file.", "dst": "The target."}

    def copy(src: str, dst: str) -> None:
        pass

    copy.__doc__ = doc
    schema = ToolRegistry().register_function(copy).schema
    assert schema["properties"]["src"]["description"] == "The source file."
    assert schema["properties"]["dst"]["description"] == "The target."
