"""Tools that run: a registered function kept and called with the checked arguments (``run``, ``arun``), its result
as each provider's tool message, the registry's tools as each SDK's ``tools=``, and LangChain tools."""

from __future__ import annotations

import asyncio
import datetime
import pickle
import threading
import time
from typing import Any

import pydantic
import pytest

from toolmend import SchemaError, ToolCall, ToolRegistry, ToolResult, ToolRunError

try:  # a test extra; the pydantic-ai tests skip without it
    import pydantic_ai
except ImportError:  # pragma: no cover
    pydantic_ai = None  # type: ignore[assignment]


class Search(pydantic.BaseModel):
    """Search the notes."""

    query: str = pydantic.Field(min_length=1)
    limit: int = 5


def registry() -> ToolRegistry:
    reg = ToolRegistry()

    @reg.tool
    def add(a: int, b: int = 2) -> int:
        """Add two numbers."""
        return a + b

    @reg.tool
    def weekday(day: datetime.date) -> str:
        """The weekday of a date."""
        return day.strftime("%A")

    @reg.tool
    async def lookup(key: str) -> dict[str, Any]:
        """Look a key up."""
        await asyncio.sleep(0)
        return {"key": key, "tags": {"a"}}

    @reg.tool
    def fail(reason: str) -> None:
        """Always fails."""
        raise PermissionError(reason)

    reg.register("search", Search, function=lambda s: [f"{s.query}:{s.limit}", type(s).__name__])
    reg.register("echo", {"type": "object", "properties": {"text": {"type": "string"}}}, function=lambda text="": text)
    reg.register("schema_only", {"type": "object"}, description="a definition with nothing to run")
    return reg


def both(reg: ToolRegistry, call: ToolCall) -> ToolResult:
    """``run`` and ``arun`` agree; the result of ``run``."""
    result = reg.run(call)
    assert asyncio.run(reg.arun(call)) == result
    return result


# ---- run and arun --------------------------------------------------------------------------------------


def test_a_decorated_function_is_kept_and_called_with_its_arguments() -> None:
    reg = registry()
    result = both(reg, ToolCall("add", {"a": 40}, id="call_1"))
    assert result == ToolResult("call_1", "add", output=42) and result.ok and result.content == "42"
    assert reg.runnable("add") and not reg.runnable("schema_only")


def test_arguments_come_in_their_parameters_types() -> None:
    # The schema says "date" as a string; the function gets a date, built by the model its schema came from.
    assert both(registry(), ToolCall("weekday", {"day": "2026-01-05"})).output == "Monday"


def test_a_tool_registered_from_a_model_gets_its_instance() -> None:
    result = both(registry(), ToolCall("search", {"query": "tea"}))
    assert result.output == ["tea:5", "Search"]
    assert result.content == '["tea:5","Search"]'


def test_a_tool_registered_with_a_schema_gets_keywords() -> None:
    assert both(registry(), ToolCall("echo", {"text": "hi"})).content == "hi"  # a str is sent as it is


def test_an_async_tool_is_awaited_and_runs_from_sync_code_too() -> None:
    result = both(registry(), ToolCall("lookup", {"key": "k"}))
    assert result.output == {"key": "k", "tags": {"a"}} and result.content == '{"key":"k","tags":["a"]}'

    async def inside_a_loop() -> ToolResult:
        return registry().run(ToolCall("lookup", {"key": "k"}))  # the running loop is not blocked on itself

    assert asyncio.run(inside_a_loop()).output == result.output


def test_a_tool_that_raises_gives_an_error_result() -> None:
    result = both(registry(), ToolCall("fail", {"reason": "read-only disk"}, id="call_2"))
    assert not result.ok and result.output is None
    assert result.error == ToolRunError("PermissionError", "read-only disk")
    assert result.content == "Error: PermissionError: read-only disk"


def test_arguments_the_schema_refuses_are_an_error_result_with_their_code() -> None:
    called: list[Any] = []
    reg = ToolRegistry()
    reg.register("f", {"type": "object", "properties": {"n": {"type": "integer"}}}, function=called.append)
    result = both(reg, ToolCall("f", {"n": "ten"}))
    assert result.error is not None and (result.error.type, result.error.code) == ("ValidationError", "TSR-004")
    assert "/n" in result.error.message and called == []


def test_an_unknown_tool_and_a_tool_with_no_function_are_clear_error_results() -> None:
    reg = registry()
    unknown = both(reg, ToolCall("nope", {}))
    assert unknown.error is not None and (unknown.error.type, unknown.error.code) == ("UnknownToolError", "TSR-001")
    assert "add" in unknown.error.message
    bare = both(reg, ToolCall("schema_only", {}))
    assert bare.error is not None and bare.error.type == "NotImplementedError"
    assert "no function" in bare.error.message and "@registry.tool" in bare.error.message


def test_cancellation_and_interrupts_propagate() -> None:
    reg = ToolRegistry()

    @reg.tool
    def interrupted() -> None:
        """Ctrl-C in the tool."""
        raise KeyboardInterrupt

    @reg.tool
    async def forever() -> None:
        """Never returns."""
        await asyncio.sleep(3600)

    with pytest.raises(KeyboardInterrupt):
        reg.run(ToolCall("interrupted", {}))

    async def cancel() -> None:
        task = asyncio.ensure_future(reg.arun(ToolCall("forever", {})))
        await asyncio.sleep(0.01)
        task.cancel()
        await task

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(cancel())


def test_arun_runs_a_sync_tool_in_a_thread_and_the_loop_goes_on() -> None:
    reg = ToolRegistry()
    threads: list[str] = []

    @reg.tool
    def slow() -> str:
        """Blocks for a while."""
        threads.append(threading.current_thread().name)
        time.sleep(0.2)
        return "done"

    async def go() -> tuple[ToolResult, int]:
        ticks = 0
        task = asyncio.ensure_future(reg.arun(ToolCall("slow", {})))
        while not task.done():
            ticks += 1
            await asyncio.sleep(0.01)
        return task.result(), ticks

    result, ticks = asyncio.run(go())
    assert result.output == "done" and ticks > 5 and threads != [threading.main_thread().name]


def test_results_are_provider_messages() -> None:
    reg = registry()
    ok = reg.run(ToolCall("lookup", {"key": "k"}, id="call_7"))
    failed = reg.run(ToolCall("fail", {"reason": "no"}, id="toolu_1"))
    assert ok.to_openai() == {"role": "tool", "tool_call_id": "call_7", "content": '{"key":"k","tags":["a"]}'}
    assert ok.to_ollama() == {"role": "tool", "tool_name": "lookup", "content": '{"key":"k","tags":["a"]}'}
    assert ok.to_anthropic() == {"type": "tool_result", "tool_use_id": "call_7", "content": '{"key":"k","tags":["a"]}'}
    assert failed.to_anthropic() == {
        "type": "tool_result", "tool_use_id": "toolu_1", "content": "Error: PermissionError: no", "is_error": True
    }
    assert failed.to_openai()["content"] == "Error: PermissionError: no"


@pytest.mark.parametrize(
    ("output", "text"),
    [
        (None, "null"),
        ({"big": 2**70}, '{"big": 1180591620717411303424}'),
        ({1: "one"}, '{"1":"one"}'),
        (Search(query="q"), '{"query":"q","limit":5}'),
        (datetime.date(2026, 1, 5), '"2026-01-05"'),
        (b"bytes", '"bytes"'),
    ],
)
def test_outputs_are_sent_as_json_text(output: Any, text: str) -> None:
    assert ToolResult("c", "t", output=output).content == text


def test_results_pickle() -> None:
    result = registry().run(ToolCall("fail", {"reason": "no"}, id="c"))
    assert pickle.loads(pickle.dumps(result)) == result


# ---- the tool lists of the SDKs -------------------------------------------------------------------------


def test_exports_have_each_sdks_shape() -> None:
    reg = registry()
    schema = reg.get("add").schema
    openai_tools = reg.to_openai_tools(["add", "schema_only"])
    assert openai_tools == [
        {"type": "function", "function": {"name": "add", "description": "Add two numbers.", "parameters": schema}},
        {"type": "function", "function": {"name": "schema_only", "description": "a definition with nothing to run",
                                          "parameters": {"type": "object"}}},
    ]
    assert reg.to_ollama_tools(["add"]) == openai_tools[:1]
    assert reg.to_anthropic_tools(["add"]) == [{"name": "add", "description": "Add two numbers.", "input_schema": schema}]
    assert [t["function"]["name"] for t in reg.to_openai_tools()] == [t.name for t in reg.tools()]
    bare = ToolRegistry()
    bare.register("x", {"type": "object"})
    assert bare.to_openai_tools() == [{"type": "function", "function": {"name": "x", "parameters": {"type": "object"}}}]
    assert bare.to_anthropic_tools() == [{"name": "x", "input_schema": {"type": "object"}}]
    assert bare.to_ollama_tools()[0]["function"]["description"] == ""


def test_exports_go_through_the_sdks_own_types() -> None:
    # Each SDK reads the list as its own tool type, as it does with what a user passes to tools=.
    from anthropic.types import ToolParam
    from ollama import Tool
    from openai.types.chat import ChatCompletionFunctionToolParam

    reg = registry()
    for tool in reg.to_ollama_tools():
        assert Tool.model_validate(tool).function.name == tool["function"]["name"]  # type: ignore[union-attr]
    assert pydantic.TypeAdapter(list[ChatCompletionFunctionToolParam]).validate_python(reg.to_openai_tools())
    assert pydantic.TypeAdapter(list[ToolParam]).validate_python(reg.to_anthropic_tools())


def test_exports_take_names_and_categories() -> None:
    reg = ToolRegistry()
    reg.register("a", {"type": "object"}, category="files")
    reg.register("b", {"type": "object"})
    assert [t["name"] for t in reg.to_anthropic_tools(category="files")] == ["a"]
    assert [t["name"] for t in reg.to_anthropic_tools(["b", "a"])] == ["b", "a"]
    with pytest.raises(LookupError):
        reg.to_openai_tools(["c"])


# ---- LangChain tools --------------------------------------------------------------------------------------


def test_langchain_tools_are_registered_and_run() -> None:
    from langchain_core.tools import tool

    @tool
    def multiply(a: int, b: int = 2) -> int:
        """Multiply two numbers."""
        return a * b

    @tool(args_schema=Search)
    def search(query: str, limit: int = 5) -> str:
        """Search the notes."""
        return f"{limit} notes about {query}"

    @tool
    async def fetch(url: str) -> str:
        """Fetch a page."""
        await asyncio.sleep(0)
        return "page at " + url

    @tool
    def broken(x: int) -> int:
        """Raises."""
        raise ValueError(f"bad {x}")

    reg = ToolRegistry.from_tools([multiply, search, fetch, broken])
    info = reg.get("multiply")
    assert info.description == "Multiply two numbers."
    assert info.schema == {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer", "default": 2}},
        "required": ["a"],
    }
    assert reg.get("search").schema["properties"]["query"] == {"type": "string", "minLength": 1}
    assert [e.code for e in reg.try_validate("multiply", {"a": "x"}).errors] == ["TSR-004"]
    assert both(reg, ToolCall("multiply", {"a": 21})).output == 42
    assert both(reg, ToolCall("search", {"query": "tea", "limit": 3})).output == "3 notes about tea"
    assert both(reg, ToolCall("fetch", {"url": "u"})).output == "page at u"  # async only: run() still runs it
    failed = both(reg, ToolCall("broken", {"x": 1}))
    assert failed.error is not None and (failed.error.type, failed.error.message) == ("ValueError", "bad 1")


# ---- pydantic-ai tools ------------------------------------------------------------------------------------


class Point(pydantic.BaseModel):
    x: int
    y: int


def test_pydantic_ai_tools_are_registered_and_run() -> None:
    if pydantic_ai is None:
        pytest.skip("pydantic-ai is not installed")

    def distance(p: Point, scale: float = 1.0) -> float:
        """How far a point is from the origin.

        Args:
            p: the point
            scale: a factor
        """
        return (p.x**2 + p.y**2) ** 0.5 * scale

    async def shout(text: str) -> str:
        await asyncio.sleep(0)
        return text.upper()

    def spread(first: int, /, *rest: int) -> list[int]:
        return [first, *rest]

    def broken(x: int) -> int:
        raise ValueError(f"bad {x}")

    tools = [pydantic_ai.Tool(f) for f in (distance, shout, spread, broken)]
    reg = ToolRegistry.from_tools(tools)
    info = reg.get("distance")
    # What pydantic-ai's Agent shows the model: its tool_def.
    assert (info.description, info.schema) == ("How far a point is from the origin.", tools[0].tool_def.parameters_json_schema)
    assert info.schema["properties"]["p"] == {"$ref": "#/$defs/Point", "description": "the point"}
    assert [e.code for e in reg.try_validate("distance", {"p": {"x": 3}}).errors] == ["TSR-003"]
    assert both(reg, ToolCall("distance", {"p": {"x": 3, "y": 4}, "scale": 2})).output == 10.0
    assert both(reg, ToolCall("shout", {"text": "hi"})).output == "HI"
    assert both(reg, ToolCall("spread", {"first": 1, "rest": [2, 3]})).output == [1, 2, 3]
    failed = both(reg, ToolCall("broken", {"x": 1}))
    assert failed.error is not None and (failed.error.type, failed.error.message) == ("ValueError", "bad 1")


def test_an_agents_tools_are_all_registered_those_needing_its_context_for_their_schema_only() -> None:
    if pydantic_ai is None:
        pytest.skip("pydantic-ai is not installed")

    def add(a: int, b: int = 2) -> int:
        """Add two numbers."""
        return a + b

    agent = pydantic_ai.Agent("test", tools=[add])

    @agent.tool_plain
    def double(n: int) -> int:
        """Double a number."""
        return 2 * n

    @agent.tool
    def user_id(ctx: pydantic_ai.RunContext[None], prefix: str) -> str:
        """The user's id."""
        return prefix + str(ctx.deps)

    reg = ToolRegistry.from_tools([agent])
    assert sorted(t.name for t in reg.tools()) == ["add", "double", "user_id"]
    assert both(reg, ToolCall("double", {"n": 21})).output == 42
    assert reg.get("user_id").schema["required"] == ["prefix"]  # the context is not the model's to give
    assert not reg.runnable("user_id")
    assert both(reg, ToolCall("user_id", {"prefix": "u"})).error.type == "NotImplementedError"  # type: ignore[union-attr]
    toolset = pydantic_ai.FunctionToolset([add])
    assert [t.name for t in ToolRegistry.from_tools([toolset]).tools()] == ["add"]


def test_an_agent_whose_toolset_lists_tools_only_while_it_runs_is_refused() -> None:
    if pydantic_ai is None:
        pytest.skip("pydantic-ai is not installed")
    from pydantic_ai.toolsets import AbstractToolset

    class Remote(AbstractToolset[None]):  # an MCP server's toolset is one such
        @property
        def id(self) -> str | None:
            return "remote"

        async def get_tools(self, ctx: Any) -> dict[str, Any]:
            return {}

        async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: Any, tool: Any) -> Any:
            return None

    agent = pydantic_ai.Agent("test", toolsets=[Remote()])
    with pytest.raises(SchemaError) as caught:
        ToolRegistry.from_tools([agent])
    assert caught.value.code == "TSR-006" and "Remote" in caught.value.message


def test_an_object_with_a_tools_mapping_is_no_toolset_and_is_not_dropped() -> None:
    class Catalogue:  # not a pydantic-ai toolset: read as a definition, and refused as one, never skipped
        tools: dict[str, Any] = {}

    with pytest.raises(SchemaError) as caught:
        ToolRegistry.from_tools([Catalogue()])
    assert caught.value.code == "TSR-006"
