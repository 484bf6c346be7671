"""Tools from wherever an agent gets them: OpenAI, MCP and Anthropic tool definitions (dicts or SDK
objects), pydantic models, msgspec Structs, TypeAdapters, plain functions, LangChain tools and pydantic-ai
tools (alone, or those of an Agent or a FunctionToolset), each read into one ToolSpec. Nothing here imports an
SDK: objects are read by their shape. A function, a LangChain tool and a pydantic-ai tool keep what runs them
(``ToolSpec.runner``, see toolmend.tool_run).

A definition whose schema cannot be found is refused with TSR-006; it is never registered as "any
object", which would let every argument through.
"""

from __future__ import annotations

import inspect
import re
import typing
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from toolmend.errors import SchemaError
from toolmend._states import Code
from toolmend.tool_run import Arguments, Runner, function_runner, single_argument

__all__ = ["ToolSpec", "function_schema", "parameter_docs", "schema_of", "tool_items", "tool_spec"]

#: OpenAI: a function without ``parameters`` takes no arguments.
NO_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}


@dataclass(frozen=True)
class ToolSpec:
    """One tool as read from a source: what ``ToolRegistry.register`` needs, plus what rides along."""

    name: str
    schema: Mapping[str, Any]
    description: str = ""
    #: MCP's tool annotations (``readOnlyHint``, ``destructiveHint``, ...), as the server sent them.
    annotations: Mapping[str, Any] | None = None
    #: OpenAI's ``function.strict``, when the definition said.
    strict: bool | None = None
    #: What runs the tool: a function's, a LangChain or pydantic-ai tool's; None for a definition alone.
    runner: Runner | None = None


def tool_spec(item: Any, *, name: str | None = None) -> ToolSpec:
    """Reads one tool definition. ``name`` overrides the definition's own (and is required for a
    TypeAdapter, which has none). Raises SchemaError TSR-006 when no schema can be found."""
    if callable(item) and not isinstance(item, type) and _is_plain_function(item):
        tool_name = name or item.__name__
        parameters, model = _function_schema(item)
        return ToolSpec(tool_name, parameters, _summary(item), runner=function_runner(item, model, tool_name))
    if _is_langchain_tool(item):
        return _langchain_spec(item, name)
    if _is_pydantic_ai_tool(item):
        return _pydantic_ai_spec(item, name)
    schema = schema_of(item)
    if schema is not None:
        tool_name = name or getattr(item, "__name__", None)
        if not tool_name:
            raise SchemaError(Code.SCHEMA_INVALID, f"a {type(item).__name__} has no name: pass name=...")
        return ToolSpec(tool_name, schema, _summary(item) if isinstance(item, type) else "")
    wire = _as_mapping(item)
    if wire is None:
        raise SchemaError(Code.SCHEMA_INVALID, f"not a tool definition: {type(item).__name__}")
    return _spec_from_mapping(wire, name)


def schema_of(source: Any) -> dict[str, Any] | None:
    """The JSON Schema of a pydantic model class, a msgspec Struct class or a TypeAdapter; None when
    ``source`` is none of these (a mapping, text or a tool definition is not converted here)."""
    if isinstance(source, type):
        if callable(getattr(source, "model_json_schema", None)):  # pydantic v2 model
            return _untitled(_inline_root(source.model_json_schema(), source.__name__))
        if _is_struct(source):
            import msgspec

            return _inline_root(msgspec.json.schema(source), source.__name__)
        return None
    if callable(getattr(source, "json_schema", None)) and callable(getattr(source, "validate_python", None)):
        return _untitled(_inline_root(source.json_schema(), None))  # pydantic TypeAdapter
    return None


def function_schema(fn: Callable[..., Any]) -> dict[str, Any]:
    """The JSON Schema of ``fn``'s parameters: types and constraints through pydantic when it is installed
    (``Annotated[int, Field(gt=0)]`` keeps ``exclusiveMinimum``, ``datetime`` keeps ``format: date-time``, a
    model parameter becomes a nested schema), through msgspec otherwise; each parameter's description from
    a Google, NumPy or Sphinx docstring. Parameters without defaults are required."""
    return _function_schema(fn)[0]


def _function_schema(fn: Callable[..., Any]) -> tuple[dict[str, Any], Any]:
    """``fn``'s schema, and the pydantic model it came from (None when msgspec made it): the model makes a call's
    arguments into the parameters' types when the tool runs."""
    params = [p for p in inspect.signature(fn).parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    hints = _type_hints(fn)
    try:
        schema, model = _pydantic_schema(fn.__name__, params, hints)
    except ImportError:
        schema, model = _msgspec_schema(fn.__name__, params, hints), None
    docs = parameter_docs(inspect.getdoc(fn) or "")
    properties = schema.get("properties", {})
    for key, text in docs.items():
        if key in properties and "description" not in properties[key]:
            properties[key]["description"] = text
    return schema, model


def parameter_docs(doc: str) -> dict[str, str]:
    """Per-parameter descriptions from a docstring in Google (``Args:``), NumPy (``Parameters`` over a
    dashed line) or Sphinx (``:param name:``) style; continuation lines are joined."""
    found: dict[str, str] = {}
    for match in _SPHINX.finditer(doc):
        found[match["name"]] = _squash(match["text"])
    if found:
        return found
    lines = doc.splitlines()
    i = 0
    while i < len(lines):
        header = lines[i].strip()
        numpy = header.lower() in _NUMPY_HEADERS and i + 1 < len(lines) and set(lines[i + 1].strip()) == {"-"}
        google = header.lower().rstrip(":") in _GOOGLE_HEADERS and header.endswith(":")
        if not (numpy or google):
            i += 1
            continue
        i += 2 if numpy else 1
        base: int | None = None
        current: str | None = None
        while i < len(lines):
            line = lines[i]
            if not line.strip():
                i += 1
                if numpy and i < len(lines) and lines[i].strip() and _indent(lines[i]) == 0 and i + 1 < len(lines) and set(lines[i + 1].strip()) == {"-"}:
                    break
                continue
            indent = _indent(line)
            if base is None:
                base = indent
            if indent < base or (google and indent == 0 and base > 0):
                break
            if indent == base:
                entry = (_NUMPY_ENTRY if numpy else _GOOGLE_ENTRY).match(line.strip())
                if entry is None:
                    break
                current = entry["name"].lstrip("*")
                found[current] = (entry.groupdict().get("text") or "").strip()
            elif current is not None:
                found[current] = (found[current] + " " + line.strip()).strip()
            i += 1
    return {k: _squash(v) for k, v in found.items() if v}


# ---- definitions as mappings -------------------------------------------------------------------------------


def _spec_from_mapping(wire: Mapping[str, Any], name: str | None) -> ToolSpec:
    strict = None
    openai = wire.get("type") == "function"  # the Responses API form is flat, Chat Completions' nested
    if openai and isinstance(wire.get("function"), Mapping):
        wire = wire["function"]
    if openai or "parameters" in wire:
        schema = wire.get("parameters", NO_PARAMETERS if openai else None)
        strict = wire.get("strict") if isinstance(wire.get("strict"), bool) else None
    elif "inputSchema" in wire or "input_schema" in wire:  # MCP, Anthropic
        schema = wire.get("inputSchema", wire.get("input_schema"))
    elif "schema" in wire:
        schema = wire["schema"]
    else:
        schema = None
    tool_name = name or wire.get("name")
    if not isinstance(tool_name, str) or not tool_name:
        raise SchemaError(Code.SCHEMA_INVALID, "the tool definition has no name")
    if schema is None:
        raise SchemaError(
            Code.SCHEMA_INVALID,
            f"no schema found for tool '{tool_name}': expected parameters (OpenAI), inputSchema (MCP) or input_schema (Anthropic)",
        )
    annotations = wire.get("annotations")
    return ToolSpec(
        tool_name,
        schema_of(schema) or schema,
        str(wire.get("description") or ""),
        dict(annotations) if isinstance(annotations, Mapping) else None,
        strict,
    )


def _is_langchain_tool(item: Any) -> bool:
    """A LangChain ``BaseTool`` (``@tool``, ``StructuredTool``, a subclass), read by its shape: a name, a
    description, an ``args_schema`` field, and ``invoke`` / ``ainvoke``."""
    return (
        not isinstance(item, type)
        and isinstance(getattr(item, "name", None), str)
        and isinstance(getattr(item, "description", None), str)
        and hasattr(item, "args_schema")
        and callable(getattr(item, "invoke", None))
        and callable(getattr(item, "ainvoke", None))
    )


def _langchain_spec(item: Any, name: str | None) -> ToolSpec:
    """A LangChain tool: the schema the model is shown (``tool_call_schema``: injected arguments left out), its
    description, and ``invoke`` / ``ainvoke`` to run it (``ainvoke`` alone for a tool with only a coroutine)."""
    source = getattr(item, "tool_call_schema", None)
    if source is None:
        source = item.args_schema if item.args_schema is not None else item.get_input_schema()
    schema = dict(source) if isinstance(source, Mapping) else schema_of(source)
    if schema is None:
        raise SchemaError(Code.SCHEMA_INVALID, f"no schema found for LangChain tool '{item.name}'")
    description = inspect.cleandoc(item.description)
    if schema.get("description") == description:  # pydantic copied the docstring: said once is enough
        schema.pop("description")
    if getattr(item, "func", None) is None and getattr(item, "coroutine", None) is not None:
        runner = Runner(item.ainvoke, single_argument, is_async=True)
    else:
        runner = Runner(item.invoke, single_argument, async_function=item.ainvoke)
    return ToolSpec(name or item.name, schema, description, runner=runner)


def _is_pydantic_ai_tool(item: Any) -> bool:
    """A pydantic-ai ``Tool`` (``Tool(fn)``, or one an Agent or a FunctionToolset holds), read by its shape: a
    ``tool_def`` and the ``function_schema`` that validates and calls it."""
    schema = getattr(item, "function_schema", None)
    return (
        not isinstance(item, type)
        and isinstance(getattr(item, "takes_ctx", None), bool)
        and hasattr(item, "tool_def")
        and callable(getattr(getattr(schema, "validator", None), "validate_python", None))
    )


def _pydantic_ai_spec(item: Any, name: str | None) -> ToolSpec:
    """A pydantic-ai tool: the schema and description its Agent shows the model (``tool_def``), and its function,
    called with the arguments as pydantic-ai's own validator makes them (a model parameter its instance). A tool
    that takes a ``RunContext`` is registered for its schema only: the context exists only inside its Agent's
    run."""
    definition = item.tool_def
    schema = definition.parameters_json_schema
    if not isinstance(schema, Mapping):
        raise SchemaError(Code.SCHEMA_INVALID, f"no schema found for pydantic-ai tool '{item.name}'")
    functions = item.function_schema
    runner = None if item.takes_ctx else Runner(functions.function, _pydantic_ai_arguments(functions), is_async=functions.is_async)
    return ToolSpec(name or definition.name, dict(schema), definition.description or "", strict=definition.strict, runner=runner)


def _pydantic_ai_arguments(functions: Any) -> Callable[[Any], Arguments]:
    def arguments(value: Any) -> Arguments:
        given = functions.validator.validate_python(dict(value) if isinstance(value, Mapping) else {})
        # As pydantic-ai calls it: the positional parameters by position, *args spread, the rest by keyword.
        given = dict(given)
        args = [given.pop(field) for field in functions.positional_fields]
        if functions.var_positional_field:
            args.extend(given.pop(functions.var_positional_field))
        return tuple(args), given

    return arguments


def tool_items(items: Iterable[Any]) -> Iterator[Any]:
    """``items`` with each pydantic-ai Agent and FunctionToolset given as the tools it holds. A toolset whose tools
    are known only once it runs (an MCP server's, say) is refused: its tools are not there to register."""
    for item in items:
        toolsets = getattr(item, "toolsets", None)
        if _holds_pydantic_ai_tools(item):
            yield from item.tools.values()
        elif not isinstance(item, (Mapping, type)) and isinstance(toolsets, Sequence) and callable(getattr(item, "run_sync", None)):
            for toolset in toolsets:
                if not _holds_pydantic_ai_tools(toolset):
                    raise SchemaError(
                        Code.SCHEMA_INVALID,
                        f"the agent's toolset {type(toolset).__name__} lists its tools only while it runs: "
                        "register them from that source (an MCP server's tools/list, say)",
                    )
                yield from toolset.tools.values()
        else:
            yield item


def _holds_pydantic_ai_tools(item: Any) -> bool:
    """A pydantic-ai toolset (it lists and calls tools) holding its tools in ``tools``, as a FunctionToolset does."""
    tools = getattr(item, "tools", None)
    return (
        callable(getattr(item, "get_tools", None))
        and callable(getattr(item, "call_tool", None))
        and isinstance(tools, Mapping)
        and all(_is_pydantic_ai_tool(t) for t in tools.values())
    )


def _as_mapping(item: Any) -> Mapping[str, Any] | None:
    if isinstance(item, Mapping):
        return item
    dump = getattr(item, "model_dump", None)
    if callable(dump):  # pydantic objects of the SDKs (an MCP Tool): their wire form, aliases included
        dumped = dump(mode="json", by_alias=True, exclude_none=True)
        return dumped if isinstance(dumped, Mapping) else None
    return None


# ---- schemas from types ------------------------------------------------------------------------------------


def _pydantic_schema(name: str, params: list[inspect.Parameter], hints: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
    import pydantic

    fields: dict[str, Any] = {}
    for p in params:
        hint = hints.get(p.name, Any)
        fields[p.name] = (hint, ... if p.default is p.empty else p.default)
    try:
        model = pydantic.create_model(name, __config__=pydantic.ConfigDict(arbitrary_types_allowed=False), **fields)
        schema = model.model_json_schema()
    except (pydantic.PydanticUserError, pydantic.PydanticSchemaGenerationError, NameError, TypeError, ValueError):
        return _msgspec_schema(name, params, hints), None
    return _untitled(_inline_root(schema, name)), model


def _msgspec_schema(name: str, params: list[inspect.Parameter], hints: Mapping[str, Any]) -> dict[str, Any]:
    import msgspec

    fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
    for p in params:
        hint = hints.get(p.name, Any)
        fields.append((p.name, hint) if p.default is p.empty else (p.name, hint, p.default))
    struct = msgspec.defstruct(name, fields, forbid_unknown_fields=True)
    return _inline_root(msgspec.json.schema(struct), name)


def _inline_root(generated: Mapping[str, Any], name: str | None) -> dict[str, Any]:
    """A generator's schema with its root inlined: msgspec answers ``{"$ref": "#/$defs/Name", "$defs": ...}``;
    the registry wants an object at the root. The other definitions stay under ``$defs``."""
    schema = dict(generated)
    defs: dict[str, Any] = dict(schema.pop("$defs", {}))
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/") and len(schema) == 1:
        schema = dict(defs.pop(ref[len("#/$defs/"):], {}))
    if name is not None and schema.get("title") == name:
        schema.pop("title")
    if defs:
        schema["$defs"] = defs
    return schema


def _untitled(schema: dict[str, Any]) -> dict[str, Any]:
    """Drops the titles pydantic makes up from property names ("Source" for ``source``), in the root and in
    every definition: noise in a prompt."""
    for part in (schema, *schema.get("$defs", {}).values()):
        for key, prop in part.get("properties", {}).items() if isinstance(part, dict) else ():
            if isinstance(prop, dict) and prop.get("title") == key.replace("_", " ").title():
                prop.pop("title")
    return schema


def _is_struct(cls: type) -> bool:
    try:
        import msgspec
    except ImportError:  # pragma: no cover - msgspec is a dependency
        return False
    return issubclass(cls, msgspec.Struct)


def _is_plain_function(item: Any) -> bool:
    return inspect.isfunction(item) or inspect.ismethod(item) or inspect.isbuiltin(item)


def _type_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except Exception:  # unresolvable forward references: fall back to "any value"
        return {}


def _summary(item: Any) -> str:
    """The first paragraph of a docstring, on one line (pydantic's BaseModel docstring is not a tool's)."""
    doc = inspect.getdoc(item) or ""
    if isinstance(item, type) and doc and any(doc == inspect.getdoc(base) for base in item.__mro__[1:]):
        return ""
    return doc.split("\n\n", 1)[0].replace("\n", " ").strip()[:500]


_SPHINX = re.compile(r"^\s*:param(?:\s+[^:\s]+)?\s+(?P<name>\w+)\s*:(?P<text>.*(?:\n(?!\s*:)(?!\s*$).*)*)", re.M)
_GOOGLE_HEADERS = {"args", "arguments", "parameters", "params"}
_NUMPY_HEADERS = {"parameters", "params", "other parameters"}
_GOOGLE_ENTRY = re.compile(r"(?P<name>\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(?P<text>.*)$")
_NUMPY_ENTRY = re.compile(r"(?P<name>\*{0,2}\w+)\s*(?::\s*(?P<type>.*))?$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _squash(text: str) -> str:
    return " ".join(text.split())
