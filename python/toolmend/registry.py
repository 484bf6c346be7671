"""The tool registry: definitions compiled once in Rust (draft 2020-12), validated strictly.

`ToolRegistry` is the Rust registry plus what belongs in Python: tools from every source an agent
meets (OpenAI, MCP and Anthropic definitions, pydantic models, msgspec Structs, functions, LangChain
tools; see toolmend.tool_sources) and from files (JSON, TOML, YAML, including the `tool_registry.custom_tools`
list of `.agent/config.yml` and an MCP `tools/list` result); the functions that run them (`run`, `arun`;
toolmend.tool_run) and the tool lists each SDK takes (toolmend.tool_exports).
"""

from __future__ import annotations

import json
import logging
import os
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, TypeVar, overload

from toolmend import _core
from toolmend._core import FieldError, ToolInfo, ValidationResult
from toolmend.errors import SchemaError, ToolmendError, UnknownToolError
from toolmend.registry_metrics import RegistryMetrics, instrument, log_level
from toolmend.tool_exports import OllamaTool, anthropic_tools, ollama_tools, openai_tools
from toolmend.tool_run import Runner, ToolResult, ToolRunError, failure, mapping_runner, model_runner
from toolmend.tool_sources import ToolSpec, function_schema, schema_of, tool_items, tool_spec
from toolmend._states import Code
from toolmend import strict_mode as strict_mode_rules
from toolmend.tool_versions import latest, semver_key

__all__ = [
    "FieldError",
    "SkippedTool",
    "ToolInfo",
    "ToolRegistry",
    "ToolResult",
    "ToolRunError",
    "ToolSpec",
    "ValidationResult",
    "function_schema",
]

if TYPE_CHECKING:  # the SDKs' own parameter types, when they are installed (Any otherwise)
    from anthropic.types import ToolParam
    from openai.types.chat import ChatCompletionToolParam

F = TypeVar("F", bound=Callable[..., Any])

logger = logging.getLogger("toolmend")


@dataclass(frozen=True)
class SkippedTool:
    """A tool in a file that was not registered: disabled, or refused with a coded error."""

    name: str
    reason: str
    code: str | None = None


class ToolRegistry(_core.ToolRegistry):
    """Tools by name, each schema compiled once; safe to share across threads.

    ``ToolRegistry(strict=True, *, max_size=..., max_depth=...)``: the limits default to
    ``DEFAULT_LIMITS``, and ``max_depth`` over ``MAX_DEPTH_CEILING`` is refused. Strict mode rejects
    unknown properties at every object level (see docs/api.md), never coerces types, and
    compares enums case-sensitively. ``register``, ``get``, ``tools``, ``validate``,
    ``try_validate`` and ``schema_hint`` run in Rust.
    """

    #: Tools of the last `from_file` that were left out, with why.
    skipped: tuple[SkippedTool, ...] = ()

    #: The seed's strict_mode (toolmend.strict_mode): every property typed, every tool described, or TSR-006.
    strict_mode: bool = False

    #: ``registry.metrics()``: validations by tool and outcome, failures by code, a latency histogram and the
    #: number of tools (a snapshot); ``registry.metrics.reset()``. Counted when made with ``metrics=True``.
    metrics: RegistryMetrics

    #: What runs each tool that has a function, by tool name (see ``run``).
    _runners: dict[str, Runner]

    #: Every version registered, by tool name (toolmend.tool_versions): the Rust part holds each tool at its
    #: latest; and the limits the registry was made with.
    _versions: dict[str, dict[str, ToolInfo]]
    _limits: dict[str, int]
    _lock: threading.Lock

    def __new__(
        cls,
        strict: bool = True,
        *,
        metrics: bool = False,
        validation_failure_log_level: int | str | None = None,
        include_actual_values: bool = False,
        names: str = "default",
        strict_mode: bool = False,
        **limits: int,
    ) -> ToolRegistry:
        """``metrics=True`` counts and times every validation (``registry.metrics()``);
        ``validation_failure_log_level`` (a level or its name) logs each failed validation on the ``toolmend``
        logger, with the field errors' codes, paths and expected types, and their actual values only with
        ``include_actual_values``. Both off by default: they cost more than a small validation.
        ``names`` is the naming rule for tools: "default" (letters, digits, ``_``; 64 characters),
        "openai" (``-`` too) or "mcp" (``-`` and ``.``, 128 characters), for registering and for the
        calls checked against the registry. ``strict_mode`` is the seed's ``tool_registry.strict_mode``: a tool
        is refused (TSR-006, ``path`` the pointer) unless every property of its schema declares a type (FR-023;
        ``enum``, ``const``, ``$ref`` or typed ``anyOf``/``oneOf``/``allOf`` branches count) and it has a
        description. Off by default: MCP and OpenAI tools often leave a property untyped."""
        registry = super().__new__(cls, strict, names=names, **limits)
        registry._runners = {}
        registry._versions = {}
        registry._lock = threading.Lock()
        registry._limits = dict(limits)
        registry.strict_mode = strict_mode
        level = log_level(validation_failure_log_level)
        registry.metrics = RegistryMetrics(registry.__len__, metrics, level, include_actual_values)
        if metrics or level is not None:
            instrument(registry, registry.metrics, _core.ToolRegistry.validate, _core.ToolRegistry.try_validate)
        return registry

    def register(  # type: ignore[override]
        self,
        name: str,
        schema: Mapping[str, Any] | str | bytes | type | Any,
        *,
        description: str = "",
        version: str = "1.0.0",
        category: str | None = None,
        annotations: Mapping[str, Any] | None = None,
        allow_truncated: bool = False,
        function: Callable[..., Any] | None = None,
    ) -> ToolInfo:
        """Checks, compiles and adds a tool (a no-op when the same definition is there already).
        ``annotations`` (MCP's ``readOnlyHint``, ``destructiveHint``, ...) are kept on its ToolInfo.
        ``allow_truncated`` takes this tool's calls cut off by the end of a reply (marked
        ``truncated``) instead of refusing them with TLP-010: for tools with no side effects.

        ``schema`` is a JSON Schema (a mapping, or its JSON text), or a pydantic model class, a msgspec
        Struct class or a pydantic TypeAdapter whose JSON Schema is taken (and whose docstring is the
        description when none is given).

        ``function`` (a function or a coroutine function) is what ``run`` and ``arun`` call: with one
        instance of the model when ``schema`` is a model, with the arguments as keywords when it is a JSON
        Schema.

        Several versions of a tool are kept (``version``, semver): ``get(name, version=...)`` gives any of them,
        ``versions(name)`` lists them, and the checks, ``tools()``, ``get(name)`` and the exports use the latest.

        Raises SchemaError: TSR-006 invalid definition (or version), TSR-007 a version of the tool registered
        already with another definition, TSR-008 schema that does not compile.
        """
        runner: Runner | None = None
        if function is not None:
            is_model = not isinstance(schema, (Mapping, str, bytes, bytearray, memoryview))
            runner = model_runner(function, schema, name) if is_model else mapping_runner(function)
        if not isinstance(schema, (Mapping, str, bytes, bytearray, memoryview)):
            converted = schema_of(schema)
            if converted is None:
                raise SchemaError(Code.SCHEMA_INVALID, f"not a schema: {type(schema).__name__}")
            if not description and isinstance(schema, type):
                description = tool_spec(schema, name=name).description
            schema = converted
        try:
            if self.strict_mode:
                strict_mode_rules.check(name, _schema_value(schema), description)
            info, newest = self._add(
                name, schema, description=description, version=version, category=category, annotations=annotations,
                allow_truncated=allow_truncated,
            )
        except SchemaError as e:
            logger.warning("tool %r refused: %s", name, e.code)
            raise
        logger.info("registered tool %r v%s (fingerprint %s)", info.name, info.version, info.fingerprint)
        if runner is not None and newest:  # run calls the latest version's function
            self._runners[info.name] = runner
        return info

    def _add(self, name: str, schema: Any, **fields: Any) -> tuple[ToolInfo, bool]:
        """Registers one version of a tool: its ToolInfo, and whether it is the tool's latest version. One
        registration at a time: two threads adding versions at once must not each build a view missing the other's."""
        with self._lock:
            return self._add_locked(name, schema, **fields)

    def _add_locked(self, name: str, schema: Any, **fields: Any) -> tuple[ToolInfo, bool]:
        known = self._versions.get(name)
        if known is None:  # the tool's first version
            info = super().register(name, schema, **fields)
            if info.name not in self._versions:
                self._versions[info.name] = {info.version: info}
            return info, True
        version = fields.get("version", "1.0.0")
        if version in known or semver_key(version) < semver_key(latest(known).version):
            # A version the Rust part does not hold: checked and compiled on its own.
            info = _core.ToolRegistry(self.strict, names=self.names, **self._limits).register(name, schema, **fields)
        else:  # the tool's new latest takes the place of the one before, in Rust
            info = super().register(name, schema, replace=True, **fields)
        same = known.get(info.version)
        if same is not None:
            if same.fingerprint == info.fingerprint:
                return same, same is latest(known)
            raise SchemaError(
                Code.DUPLICATE_TOOL, f"Tool '{name}' version {info.version} is already registered with a different definition"
            )
        newest = semver_key(info.version) > semver_key(latest(known).version)
        known[info.version] = info
        return info, newest

    def get(self, name: str, version: str | None = None) -> ToolInfo:  # type: ignore[override]
        """The tool named ``name`` (any case when the exact spelling misses): its latest version, or ``version``.
        UnknownToolError (TSR-001) for a name, or a version of it, not registered."""
        info = super().get(name)
        if version is None:
            return info
        found = self._versions.get(info.name, {}).get(version)
        if found is None:
            listed = ", ".join(self.versions(info.name))
            raise UnknownToolError(
                Code.UNKNOWN_TOOL, f"Tool '{info.name}' has no version {version} (versions: {listed})", name
            )
        return found

    def versions(self, name: str) -> tuple[str, ...]:
        """Every version of the tool registered, oldest to latest (semver order)."""
        info = self.get(name)
        return tuple(sorted(self._versions.get(info.name, {info.version: info}), key=semver_key))

    def register_function(
        self, fn: Callable[..., Any], *, name: str | None = None, version: str = "1.0.0", category: str | None = None
    ) -> ToolInfo:
        """Registers `fn` as a tool: the schema from its type hints (constraints through pydantic when it is
        installed), each parameter's description from its docstring (Google, NumPy or Sphinx style), the
        tool's description from the docstring's first paragraph. Parameters without defaults are required.
        The function is kept: ``run`` calls it with the arguments as keywords, each of its parameter's type."""
        spec = tool_spec(fn, name=name)
        info = self.register(spec.name, spec.schema, description=spec.description, version=version, category=category)
        self._keep(info.name, spec.runner)
        return info

    @overload
    def tool(self, fn: F, /) -> F: ...

    @overload
    def tool(
        self, *, name: str | None = None, version: str = "1.0.0", category: str | None = None
    ) -> Callable[[F], F]: ...

    def tool(
        self, fn: Any = None, /, *, name: str | None = None, version: str = "1.0.0", category: str | None = None
    ) -> Any:
        """A decorator: ``@registry.tool`` or ``@registry.tool(category="files")`` registers the function (as
        ``register_function`` does, keeping it for ``run``) and returns it unchanged."""

        def decorate(f: F) -> F:
            self.register_function(f, name=name, version=version, category=category)
            return f

        return decorate(fn) if fn is not None else decorate

    def register_tool(
        self, item: Any, *, name: str | None = None, version: str = "1.0.0", category: str | None = None
    ) -> ToolInfo:
        """Registers one tool definition from any source ``from_tools`` reads."""
        spec = tool_spec(item, name=name)
        info = self.register(
            spec.name, spec.schema, description=spec.description, version=version, category=category, annotations=spec.annotations
        )
        if spec.annotations is not None:
            self.annotations = {**self.annotations, spec.name: dict(spec.annotations)}
        self._keep(info.name, spec.runner)
        return info

    # ---- the tool lists of the SDKs --------------------------------------------------------------------------

    def to_openai_tools(
        self, names: Iterable[str] | None = None, *, category: str | None = None
    ) -> list[ChatCompletionToolParam]:
        """The tools (all, those named, or a category's) as OpenAI Chat Completions ``tools``, typed as the openai
        SDK's ``ChatCompletionToolParam``."""
        return openai_tools(self._chosen(names, category))

    def to_ollama_tools(
        self, names: Iterable[str] | None = None, *, category: str | None = None
    ) -> list[OllamaTool]:
        """The tools as Ollama ``/api/chat`` ``tools`` (for ``ollama.chat(tools=...)`` too)."""
        return ollama_tools(self._chosen(names, category))

    def to_anthropic_tools(
        self, names: Iterable[str] | None = None, *, category: str | None = None
    ) -> list[ToolParam]:
        """The tools as Anthropic Messages ``tools``, typed as the anthropic SDK's ``ToolParam``."""
        return anthropic_tools(self._chosen(names, category))

    def _chosen(self, names: Iterable[str] | None, category: str | None) -> list[ToolInfo]:
        if names is None:
            return list(self.tools(category))
        chosen = [self.get(name) for name in names]  # an unknown name raises UnknownToolError
        return [info for info in chosen if category is None or info.category == category]

    # ---- tools that run ------------------------------------------------------------------------------------

    def run(self, call: Any, /) -> ToolResult:
        """Runs one call (a ToolCall, or anything with ``name``, ``arguments`` and ``id``) with its arguments
        validated, in this thread: the result's ``output`` is what the tool returned, its ``error`` what it raised
        (any ``Exception``), or why it did not run (arguments refused, an unknown tool, a tool with no function).
        ``KeyboardInterrupt`` and other exceptions that are not ``Exception`` propagate. An async tool runs on an
        event loop of its own."""
        name, call_id, prepared = self._prepare(call)
        if isinstance(prepared, ToolRunError):
            return ToolResult(call_id, name, error=prepared)
        runner, value = prepared
        try:
            output = runner.call(value)
        except Exception as e:  # the tool's own failure is the model's to read; BaseException is not caught
            return self._failed(call_id, name, e)
        return ToolResult(call_id, name, output=output)

    async def arun(self, call: Any, /) -> ToolResult:
        """``run`` for async code: an async tool is awaited, a sync one runs in a thread (``asyncio.to_thread``)
        so the loop goes on meanwhile. Cancelling the task cancels the call (a sync tool's thread runs to its
        end, unawaited)."""
        name, call_id, prepared = self._prepare(call)
        if isinstance(prepared, ToolRunError):
            return ToolResult(call_id, name, error=prepared)
        runner, value = prepared
        try:
            output = await runner.acall(value)
        except Exception as e:  # asyncio.CancelledError is a BaseException: cancellation propagates
            return self._failed(call_id, name, e)
        return ToolResult(call_id, name, output=output)

    def runnable(self, name: str) -> bool:
        """True when the tool has a function for ``run`` to call."""
        return name in self._runners

    def _keep(self, name: str, runner: Runner | None) -> None:
        if runner is not None:
            self._runners[name] = runner

    def _prepare(self, call: Any) -> tuple[str, str | None, tuple[Runner, Any] | ToolRunError]:
        """The call's name and id, and its runner with the validated arguments, or why it cannot run."""
        name = str(getattr(call, "name", "") or "")
        call_id = getattr(call, "id", None)
        if name not in self:
            known = ", ".join(t.name for t in self.tools()[:20]) or "none"
            message = f"no tool named {name!r} is registered (tools: {known})"
            return name, call_id, ToolRunError("UnknownToolError", message, Code.UNKNOWN_TOOL.value)
        runner = self._runners.get(name)
        if runner is None:
            message = (
                f"tool {name!r} has a schema but no function to run: register it with @registry.tool, "
                "register_function(fn) or register(name, schema, function=fn)"
            )
            return name, call_id, ToolRunError("NotImplementedError", message)
        try:
            value = self.validate(name, getattr(call, "arguments", None))
        except (ValueError, ToolmendError) as e:  # ValidationError (coded), ParseError: arguments that are not JSON
            return name, call_id, failure(e)
        return name, call_id, (runner, value)

    def _failed(self, call_id: str | None, name: str, error: Exception) -> ToolResult:
        logger.warning("tool %r raised %s", name, type(error).__name__)
        return ToolResult(call_id, name, error=failure(error))

    #: MCP tool annotations by tool name, for tools registered from MCP definitions.
    annotations: Mapping[str, Mapping[str, Any]] = {}

    @classmethod
    def from_tools(
        cls, items: Iterable[Any], *, strict: bool = True, names: str = "default", **limits: int
    ) -> ToolRegistry:
        """A registry of tool definitions from any source: OpenAI tool dicts (``{"type": "function",
        "function": {...}}`` or the Responses API's flat form), MCP tools (objects or dicts with
        ``inputSchema``; their ``annotations`` are kept), Anthropic tools (``input_schema``), pydantic model
        classes, msgspec Struct classes, plain functions, LangChain tools and pydantic-ai tools (a ``Tool``, or an
        ``Agent`` or ``FunctionToolset`` given for all the tools it holds).

        ``names="mcp"`` (or "openai") accepts the tool names those servers allow.
        Raises SchemaError naming the tool (TSR-006 when a definition holds no schema)."""
        registry = cls(strict, names=names, **limits)
        for position, item in enumerate(tool_items(items)):
            try:
                registry.register_tool(item)
            except SchemaError as e:
                raise SchemaError(e.code, f"tool {position}: {e.message}", getattr(e, "path", None)) from None
        return registry

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], *, strict: bool = True, names: str = "default") -> ToolRegistry:
        """A registry of the tools in a JSON, TOML or YAML file.

        The file holds a list of tools, ``{"tools": [...]}``, or ``tool_registry.custom_tools``
        (the ``.agent/config.yml`` layout). A tool is ``name``, ``description``, ``version``,
        ``category``, ``enabled`` and its schema under ``parameters`` (or ``schema`` /
        ``input_schema`` / ``inputSchema``); OpenAI's ``{"type": "function", "function": {...}}`` and an
        MCP ``tools/list`` result (bare, or in its JSON-RPC envelope) are read too. A tool with no schema
        is refused (TSR-006), never opened up. A broken tool does not stop the others: it is logged and
        listed in ``skipped``.

        Seed 002's layouts are read too: ``tools.custom`` and ``tools.custom_tools`` (beside
        ``tool_registry.custom_tools``, all of them when a file holds several). The section's ``strict_mode: true``
        makes the registry's ``strict_mode`` (every property typed, every tool described).
        The ``tool_registry`` section's ``max_schema_size`` refuses a tool whose schema (as compact JSON) is
        larger, with TSR-006; the core refuses schemas over SCHEMA_SIZE_CEILING bytes whatever it says.
        ``pattern_timeout_ms`` is noted at INFO: patterns run on a linear-time engine, with nothing to time out.
        """
        config = _read_config(path)
        section = config.get("tool_registry") if isinstance(config, Mapping) else None
        section = section if isinstance(section, Mapping) else {}
        # The failure records of .agent/config.yml's tool_registry section apply to the registry it lists.
        settings = {k: section[k] for k in _LOG_SETTINGS if section.get(k) is not None}
        mode = section.get("strict_mode", False)
        if not isinstance(mode, bool):
            raise ValueError(f"{os.fspath(path)}: tool_registry.strict_mode = {mode!r} is not true or false")
        settings["strict_mode"] = mode
        max_schema_size = _schema_size_limit(section, path)
        registry = cls(strict, names=names, **settings)
        skipped: list[SkippedTool] = []
        for entry in _tool_entries(config):
            name = str(entry.get("name", ""))
            if entry.get("enabled", True) is False:
                skipped.append(SkippedTool(name, "disabled"))
                continue
            try:
                if max_schema_size is not None:
                    _check_schema_size(entry, max_schema_size)
                registry.register_tool(entry, version=str(entry.get("version", "1.0.0")), category=entry.get("category"))
            except (SchemaError, TypeError, ValueError) as e:
                code = getattr(e, "code", None)
                logger.warning("skipping tool %r from %s: %s", name, os.fspath(path), code or type(e).__name__)
                skipped.append(SkippedTool(name, str(e), code))
        registry.skipped = tuple(skipped)
        logger.info("tool registry from %s: %d tools (%d skipped)", os.fspath(path), len(registry), len(skipped))
        return registry


_LOG_SETTINGS = ("validation_failure_log_level", "include_actual_values")

#: The largest schema the core registers, in bytes of compact JSON (MAX_SCHEMA_BYTES of rust/core/src/schema/check.rs):
#: larger ones are TSR-006 whatever ``tool_registry.max_schema_size`` says.
SCHEMA_SIZE_CEILING = 50 * 1024


def _schema_size_limit(section: Mapping[str, Any], path: str | os.PathLike[str]) -> int | None:
    """``tool_registry.max_schema_size`` (None when not set), with the notes on the keys that mean nothing here."""
    where = os.fspath(path)
    if "pattern_timeout_ms" in section:
        logger.info(
            "config %s: tool_registry.pattern_timeout_ms is not needed: patterns run on a linear-time regex engine "
            "(no backtracking), so no pattern can take longer than linear time to match", where,
        )
    if "cache_compiled_schemas" in section:
        logger.debug("config %s: tool_registry.cache_compiled_schemas: schemas are always compiled once", where)
    limit = section.get("max_schema_size")
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"{where}: tool_registry.max_schema_size = {limit!r} is not a number of bytes")
    if limit > SCHEMA_SIZE_CEILING:
        logger.info(
            "config %s: tool_registry.max_schema_size = %d is over the registry's ceiling of %d bytes, which holds",
            where, limit, SCHEMA_SIZE_CEILING,
        )
    return limit


def _check_schema_size(entry: Mapping[str, Any], limit: int) -> None:
    """SchemaError TSR-006 when the tool's schema, as compact JSON, is over ``limit`` bytes."""
    schema = tool_spec(entry).schema
    size = len(json.dumps(schema, separators=(",", ":"), ensure_ascii=False).encode())
    if size > limit:
        raise SchemaError(
            Code.SCHEMA_INVALID, f"Schema exceeds tool_registry.max_schema_size of {limit} bytes ({size} bytes)", ""
        )


def _schema_value(schema: Any) -> Any:
    """A schema given as JSON text, read for strict_mode's walk (the core reads it again when it compiles it)."""
    if isinstance(schema, (str, bytes, bytearray, memoryview)):
        try:
            return json.loads(bytes(schema) if not isinstance(schema, str) else schema)
        except ValueError:
            return None  # not JSON: the core refuses it with its own error
    return schema


def _read_config(path: str | os.PathLike[str]) -> Any:
    suffix = os.fspath(path).rsplit(".", 1)[-1].lower()
    with open(path, "rb") as f:
        data = f.read()
    if suffix == "toml":
        try:
            import tomllib
        except ImportError:  # pragma: no cover - Python 3.10
            import tomli as tomllib  # type: ignore[no-redef]
        return tomllib.loads(data.decode())
    if suffix in ("yml", "yaml"):
        try:
            import yaml
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError("reading YAML tool files needs PyYAML: pip install pyyaml") from e
        return yaml.safe_load(data)
    return json.loads(data)


#: Where seed 002 lists a config's tools under ``tools:`` (its "Configuration-Based Tools" and its scenarios).
_SEED_TOOL_LISTS = ("custom", "custom_tools")


def _tool_entries(config: Any) -> Iterable[Mapping[str, Any]]:
    lists: list[Any] = [config]
    if isinstance(config, Mapping):
        if isinstance(config.get("result"), Mapping) and "tools" in config["result"]:  # JSON-RPC tools/list
            config = config["result"]
        lists = []
        section = config.get("tool_registry")
        if isinstance(section, Mapping):
            lists.append(section.get("custom_tools") or [])
        tools = config.get("tools")
        if isinstance(tools, Mapping):
            found = [k for k in _SEED_TOOL_LISTS if k in tools]
            if not found:  # a layout not read would register nothing, silently
                raise ValueError(f"tools: holds {sorted(map(str, tools))}, not custom or custom_tools (the tool lists read)")
            lists += [tools[k] or [] for k in found]
        elif tools is not None:
            lists.append(tools)
        if not lists and section is None:
            lists = [[config]]  # one tool's definition
    for entry in (e for listed in lists for e in (listed or [])):
        if isinstance(entry, Mapping) and entry.get("type") == "function" and isinstance(entry.get("function"), Mapping):
            entry = entry["function"]
        if isinstance(entry, Mapping):
            yield entry
