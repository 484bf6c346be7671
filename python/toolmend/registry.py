"""The tool registry: definitions compiled once in Rust (draft 2020-12), validated strictly.

`ToolRegistry` is the Rust registry plus what belongs in Python: tools from functions (type
hints -> JSON Schema through msgspec) and from files (JSON, TOML, YAML, including the
`tool_registry.custom_tools` list of `.agent/config.yml`).
"""

from __future__ import annotations

import inspect
import json
import logging
import os
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

from toolmend import _core
from toolmend._core import FieldError, ToolInfo, ValidationResult
from toolmend.errors import SchemaError

__all__ = ["FieldError", "SkippedTool", "ToolInfo", "ToolRegistry", "ValidationResult"]

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
    unknown properties at every object level (see the README), never coerces types, and
    compares enums case-sensitively. ``register``, ``get``, ``tools``, ``validate``,
    ``try_validate`` and ``schema_hint`` run in Rust.
    """

    #: Tools of the last `from_file` that were left out, with why.
    skipped: tuple[SkippedTool, ...] = ()

    def register(  # type: ignore[override]
        self,
        name: str,
        schema: Mapping[str, Any] | str | bytes,
        *,
        description: str = "",
        version: str = "1.0.0",
        category: str | None = None,
    ) -> ToolInfo:
        """Checks, compiles and adds a tool (a no-op when the same definition is there already).

        Raises SchemaError: TSR-006 invalid definition, TSR-007 name taken by another definition,
        TSR-008 schema that does not compile.
        """
        try:
            info = super().register(name, schema, description=description, version=version, category=category)
        except SchemaError as e:
            logger.warning("tool %r refused: %s", name, e.code)
            raise
        logger.info("registered tool %r v%s (fingerprint %s)", info.name, info.version, info.fingerprint)
        return info

    def register_function(
        self, fn: Callable[..., Any], *, name: str | None = None, version: str = "1.0.0", category: str | None = None
    ) -> ToolInfo:
        """Registers `fn` as a tool: the schema from its type hints, the description from the
        first paragraph of its docstring. Parameters without defaults are required."""
        schema = function_schema(fn)
        doc = inspect.getdoc(fn) or ""
        description = doc.split("\n\n", 1)[0].replace("\n", " ").strip()[:500]
        return self.register(name or fn.__name__, schema, description=description, version=version, category=category)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], *, strict: bool = True) -> ToolRegistry:
        """A registry of the tools in a JSON, TOML or YAML file.

        The file holds a list of tools, ``{"tools": [...]}``, or ``tool_registry.custom_tools``
        (the ``.agent/config.yml`` layout). A tool is ``name``, ``description``, ``version``,
        ``category``, ``enabled`` and its schema under ``parameters`` (or ``schema`` /
        ``input_schema``); OpenAI's ``{"type": "function", "function": {...}}`` is read too.
        A broken tool does not stop the others: it is logged and listed in ``skipped``.
        """
        registry = cls(strict)
        skipped: list[SkippedTool] = []
        for entry in _tool_entries(_read_config(path)):
            name = str(entry.get("name", ""))
            if entry.get("enabled", True) is False:
                skipped.append(SkippedTool(name, "disabled"))
                continue
            schema = entry.get("parameters", entry.get("schema", entry.get("input_schema", {"type": "object"})))
            try:
                registry.register(
                    name,
                    schema,
                    description=str(entry.get("description", "")),
                    version=str(entry.get("version", "1.0.0")),
                    category=entry.get("category"),
                )
            except (SchemaError, TypeError, ValueError) as e:
                code = getattr(e, "code", None)
                logger.warning("skipping tool %r from %s: %s", name, os.fspath(path), code or type(e).__name__)
                skipped.append(SkippedTool(name, str(e), code))
        registry.skipped = tuple(skipped)
        logger.info("tool registry from %s: %d tools (%d skipped)", os.fspath(path), len(registry), len(skipped))
        return registry


def function_schema(fn: Callable[..., Any]) -> dict[str, Any]:
    """The JSON Schema of `fn`'s parameters, from its type hints (msgspec does the typing)."""
    import msgspec

    fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
    hints = _type_hints(fn)
    for p in inspect.signature(fn).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        hint = hints.get(p.name, Any)
        fields.append((p.name, hint) if p.default is p.empty else (p.name, hint, p.default))
    struct = msgspec.defstruct(fn.__name__, fields, forbid_unknown_fields=True)
    generated = msgspec.json.schema(struct)
    defs: dict[str, Any] = generated.get("$defs", {})
    root = dict(defs.pop(fn.__name__, generated))
    root.pop("title", None)
    if defs:
        root["$defs"] = defs
    return root


def _type_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    import typing

    try:
        return typing.get_type_hints(fn)
    except Exception:  # unresolvable forward references: fall back to "any value"
        return {}


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


def _tool_entries(config: Any) -> Iterable[Mapping[str, Any]]:
    if isinstance(config, Mapping):
        if "tool_registry" in config:
            config = config["tool_registry"].get("custom_tools", [])
        elif "tools" in config:
            config = config["tools"]
        else:
            config = [config]
    for entry in config or []:
        if isinstance(entry, Mapping) and entry.get("type") == "function" and isinstance(entry.get("function"), Mapping):
            entry = entry["function"]
        if isinstance(entry, Mapping):
            yield entry
