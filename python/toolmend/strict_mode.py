"""The seed's ``tool_registry.strict_mode`` (seed 002): every property of a tool's schema declares its type
(FR-023) and every tool says what it does.

A ToolRegistry option (``ToolRegistry(strict_mode=True)``), on for a registry read from a file whose
``tool_registry`` section says ``strict_mode: true``, and off for registries made in code: real MCP and OpenAI tool
schemas, and the tools a request brings, often leave a property untyped, and they must keep registering.
"""

from __future__ import annotations

from typing import Any, Mapping

from toolmend._states import Code
from toolmend.errors import SchemaError

#: A property typed through one of these is typed when every branch is.
_COMBINATORS = ("anyOf", "oneOf", "allOf")
#: Keys whose value is one schema, and keys whose value is a list or a map of schemas, that hold properties too.
_ONE = ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames")
_MANY = ("prefixItems", "anyOf", "oneOf", "allOf")
_MAPS = ("$defs", "definitions", "patternProperties", "dependentSchemas")


def typed(schema: Any) -> bool:
    """A property's schema declares its type: ``type``, ``enum``, ``const``, ``$ref``, or a combinator whose every
    branch is typed."""
    if not isinstance(schema, Mapping):
        return False  # true / false / {} say nothing of the type
    if "type" in schema or "enum" in schema or "const" in schema or "$ref" in schema:
        return True
    return any(
        isinstance(schema.get(k), list) and schema[k] and all(typed(b) for b in schema[k]) for k in _COMBINATORS
    )


def untyped_property(schema: Any) -> str | None:
    """The JSON Pointer (into the schema) of the first property, at any depth, that declares no type; None when
    every one does. Walked with a stack, not recursion: a deep schema cannot exhaust Python's stack."""
    stack: list[tuple[Any, str]] = [(schema, "")]
    while stack:
        node, pointer = stack.pop()
        if not isinstance(node, Mapping):
            continue
        subs: list[tuple[Any, str]] = []
        properties = node.get("properties")
        if isinstance(properties, Mapping):
            for key, sub in properties.items():
                where = f"{pointer}/properties/{_escape(str(key))}"
                if not typed(sub):
                    return where
                subs.append((sub, where))
        subs += [(node[k], f"{pointer}/{k}") for k in _ONE if isinstance(node.get(k), Mapping)]
        for k in _MANY:
            if isinstance(node.get(k), list):
                subs += [(b, f"{pointer}/{k}/{i}") for i, b in enumerate(node[k])]
        for k in _MAPS:
            if isinstance(node.get(k), Mapping):
                subs += [(v, f"{pointer}/{k}/{_escape(str(n))}") for n, v in node[k].items()]
        stack.extend(reversed(subs))  # document order: the first untyped property found is the first written
    return None


def check(name: str, schema: Any, description: str) -> None:
    """SchemaError TSR-006 with the pointer of what strict_mode refuses: a property with no type, or no description."""
    if not description.strip():
        raise SchemaError(
            Code.SCHEMA_INVALID,
            f"Tool '{name}' has no description (tool_registry.strict_mode: every tool says what it does)",
            "/description",
        )
    pointer = untyped_property(schema)
    if pointer is not None:
        raise SchemaError(
            Code.SCHEMA_INVALID,
            f"Tool '{name}': the property at {pointer} declares no type (tool_registry.strict_mode, FR-023: give it "
            "type, enum, const, $ref, or anyOf/oneOf/allOf branches that do)",
            pointer,
        )


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")
