"""Tool-argument validation speed, peers side by side on the same inputs (pytest-benchmark).

Full run (release build):  python -m pytest benches --benchmark-only --benchmark-group-by=group
Smoke pass (CI):           python -m pytest benches/bench_registry.py --benchmark-disable   (each once)

toolmend's ToolRegistry is measured beside jsonschema_rs (jsonschema-rs), fastjsonschema and
jsonschema on two schemas: a typical write_file tool call (~1 KB of arguments) and a
20-property schema of mixed types. Each case is its own group, so the peers sit next to each
other in the report:

    <schema>-valid-dict           arguments already a dict
    <schema>-valid-bytes          arguments as JSON bytes (peers parse with orjson.loads first)
    <schema>-invalid-all-errors   every error collected (fastjsonschema stops at the first one)
    register-compile              a schema checked and compiled from scratch

Both schemas close every object with additionalProperties: false, so the peers validate the
same rules toolmend's strict mode does. The plain tests at the end check that every peer
agrees on each instance and that toolmend and the peers that collect all errors count the same
errors; a bench that compared unlike work would be no comparison. Peers that are not installed
are left out.
"""

from __future__ import annotations

from functools import cache, partial
from typing import Any, Callable

import orjson
import pytest

import toolmend
from toolmend.bench import optional_module

# ---- schemas and instances ---------------------------------------------------------------------

WRITE_FILE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "pattern": "^[A-Za-z0-9_][A-Za-z0-9_./-]*$", "maxLength": 255},
        "content": {"type": "string", "maxLength": 1_000_000},
        "mode": {"type": "string", "enum": ["overwrite", "append", "create"]},
        "encoding": {"type": "string", "enum": ["utf-8", "ascii", "latin-1"]},
        "create_dirs": {"type": "boolean"},
        "options": {
            "type": "object",
            "properties": {
                "timeout": {"type": "integer", "minimum": 1, "maximum": 600},
                "retries": {"type": "integer", "minimum": 0, "maximum": 10},
                "backup": {"type": "boolean"},
            },
            "additionalProperties": False,
        },
    },
    "required": ["path", "content", "mode", "encoding"],
    "additionalProperties": False,
}

_LINES = [
    "def handler(event, context):",
    '    name = event.get("name", "world")',
    '    if not name: raise ValueError("empty name")',
    '    return {"status": 200, "body": f"Hello, {name}!"}',
    "",
    "# TODO: handle the retry case",
]
CONTENT = "\n".join(_LINES * 6)[:900]  # about 900 characters of code, as models send it

WRITE_FILE_VALID: dict[str, Any] = {
    "path": "src/handlers/hello_world.py",
    "content": CONTENT,
    "mode": "overwrite",
    "encoding": "utf-8",
    "create_dirs": True,
    "options": {"timeout": 30, "retries": 2, "backup": False},
}

# Exactly 7 violations, one per keyword family, each reported once by every all-errors peer.
WRITE_FILE_INVALID: dict[str, Any] = {
    "path": "src/handlers/hello world?.py",  # 1 pattern
    "content": CONTENT,
    "mode": "replace",  # 2 enum
    # "encoding" left out                    # 3 required
    "create_dirs": "yes",  # 4 type (boolean)
    "options": {"timeout": 0, "retries": "2"},  # 5 minimum, 6 type (integer)
    "force": True,  # 7 additionalProperties
}
WRITE_FILE_ERRORS = 7

PROPS20: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 64, "pattern": "^[a-z][a-z0-9_]*$"},
        "title": {"type": "string", "minLength": 1, "maxLength": 200},
        "language": {"type": "string", "enum": ["en", "de", "fr", "es", "ja"]},
        "priority": {"type": "string", "enum": ["low", "normal", "high", "urgent"]},
        "status": {"type": "string", "enum": ["draft", "open", "closed"]},
        "count": {"type": "integer", "minimum": 0, "maximum": 1000},
        "page": {"type": "integer", "minimum": 1},
        "page_size": {"type": "integer", "minimum": 1, "maximum": 100},
        "timeout_ms": {"type": "integer", "minimum": 0, "maximum": 60000},
        "temperature": {"type": "number", "minimum": 0, "maximum": 2},
        "top_p": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
        "score": {"type": "number"},
        "verbose": {"type": "boolean"},
        "dry_run": {"type": "boolean"},
        "recursive": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 32}, "maxItems": 10},
        "paths": {
            "type": "array",
            "items": {"type": "string", "pattern": "^/[A-Za-z0-9_./-]*$"},
            "maxItems": 20,
        },
        "email": {"type": "string", "maxLength": 254, "pattern": "^[^@\\s]+@[^@\\s]+\\.[a-z]{2,}$"},
        "created_by": {"type": "string", "minLength": 1, "maxLength": 64},
        "filter": {
            "type": "object",
            "properties": {
                "field": {"type": "string", "maxLength": 64},
                "op": {"type": "string", "enum": ["eq", "ne", "lt", "gt", "contains"]},
                "value": {"type": ["string", "number"]},
            },
            "required": ["field", "op"],
            "additionalProperties": False,
        },
    },
    "required": ["name", "title", "language", "count", "verbose"],
    "additionalProperties": False,
}

PROPS20_VALID: dict[str, Any] = {
    "name": "weekly_report",
    "title": "Weekly report for the platform team",
    "language": "en",
    "priority": "normal",
    "status": "open",
    "count": 42,
    "page": 3,
    "page_size": 50,
    "timeout_ms": 15000,
    "temperature": 0.7,
    "top_p": 0.95,
    "score": -1.25,
    "verbose": True,
    "dry_run": False,
    "recursive": True,
    "tags": ["weekly", "platform", "report", "generated"],
    "paths": ["/srv/reports/weekly", "/srv/reports/archive", "/tmp/out.json"],
    "email": "team@example.com",
    "created_by": "scheduler",
    "filter": {"field": "owner", "op": "eq", "value": "platform"},
}

# 10 violations across the mixed types, the nested object and the arrays.
PROPS20_INVALID: dict[str, Any] = {
    **PROPS20_VALID,
    "name": "Weekly Report",  # pattern
    "language": "english",  # enum
    "count": 5000,  # maximum
    "page_size": "50",  # type (integer)
    "top_p": 0,  # exclusiveMinimum
    "verbose": "true",  # type (boolean)
    "tags": ["weekly"] * 11,  # maxItems
    "paths": ["/srv/ok", "relative/path"],  # pattern on an item
    "filter": {"field": "owner", "value": ["platform"]},  # required (op), type (value)
}
PROPS20_ERRORS = 10

SCHEMAS: dict[str, tuple[dict[str, Any], dict[str, Any], dict[str, Any]]] = {
    "write_file": (WRITE_FILE, WRITE_FILE_VALID, WRITE_FILE_INVALID),
    "props20": (PROPS20, PROPS20_VALID, PROPS20_INVALID),
}
EXPECTED_ERRORS = {"write_file": WRITE_FILE_ERRORS, "props20": PROPS20_ERRORS}
BYTES = {name: (orjson.dumps(valid), orjson.dumps(invalid)) for name, (_, valid, invalid) in SCHEMAS.items()}


# ---- peers -------------------------------------------------------------------------------------


jsonschema_rs = optional_module("jsonschema_rs")
fastjsonschema = optional_module("fastjsonschema")
jsonschema = optional_module("jsonschema")


@cache
def toolmend_registry() -> toolmend.ToolRegistry:
    reg = toolmend.ToolRegistry()
    for name, (schema, valid, _) in SCHEMAS.items():
        reg.register(name, schema, description=f"bench tool {name}")
        reg.validate(name, valid)  # builds the in-place (dict) validator, made on first use
    return reg


@cache
def rs_validator(name: str) -> Any:
    return jsonschema_rs.Draft202012Validator(SCHEMAS[name][0])


@cache
def fast_validator(name: str) -> Callable[[Any], Any]:
    return fastjsonschema.compile(SCHEMAS[name][0])


@cache
def py_validator(name: str) -> Any:
    return jsonschema.Draft202012Validator(SCHEMAS[name][0])


def _fast_first_error(fn: Callable[[Any], Any], instance: Any) -> Any:
    try:
        return fn(instance)
    except fastjsonschema.JsonSchemaValueException as e:
        return e


def _register_fresh() -> Any:
    return toolmend.ToolRegistry().register("write_file", WRITE_FILE, description="Write a file")


def _register_and_first_dict_validate() -> Any:
    reg = toolmend.ToolRegistry()
    reg.register("write_file", WRITE_FILE, description="Write a file")
    return reg.validate("write_file", WRITE_FILE_VALID)


def _py_check_and_build() -> Any:
    jsonschema.Draft202012Validator.check_schema(WRITE_FILE)
    return jsonschema.Draft202012Validator(WRITE_FILE)


# A peer: (label, module it needs or None, factory of the zero-argument call to time).
Peer = tuple[str, Any, Callable[[], Callable[[], Any]]]


def _validation_peers(name: str, kind: str) -> list[Peer]:
    # Each factory looks its validator up once; the timed call is the validation alone.
    _, valid, invalid = SCHEMAS[name]
    valid_bytes, _ = BYTES[name]
    loads = orjson.loads
    if kind == "valid-dict":
        return [
            ("toolmend", toolmend, lambda: partial(toolmend_registry().validate, name, valid)),
            ("jsonschema_rs.validate", jsonschema_rs, lambda: partial(rs_validator(name).validate, valid)),
            ("jsonschema_rs.is_valid", jsonschema_rs, lambda: partial(rs_validator(name).is_valid, valid)),
            ("fastjsonschema", fastjsonschema, lambda: partial(fast_validator(name), valid)),
            ("jsonschema", jsonschema, lambda: partial(py_validator(name).validate, valid)),
        ]
    if kind == "valid-bytes":
        return [
            ("toolmend", toolmend, lambda: partial(toolmend_registry().validate, name, valid_bytes)),
            ("orjson+jsonschema_rs", jsonschema_rs, lambda: _parsed(rs_validator(name).validate, loads, valid_bytes)),
            ("orjson+fastjsonschema", fastjsonschema, lambda: _parsed(fast_validator(name), loads, valid_bytes)),
            ("orjson+jsonschema", jsonschema, lambda: _parsed(py_validator(name).validate, loads, valid_bytes)),
        ]
    assert kind == "invalid-all-errors"
    return [
        ("toolmend", toolmend, lambda: partial(toolmend_registry().try_validate, name, invalid)),
        ("jsonschema_rs", jsonschema_rs, lambda: _listed(rs_validator(name).iter_errors, invalid)),
        ("jsonschema", jsonschema, lambda: _listed(py_validator(name).iter_errors, invalid)),
        (
            "fastjsonschema(first-error-only)",
            fastjsonschema,
            lambda: partial(_fast_first_error, fast_validator(name), invalid),
        ),
    ]


def _parsed(check: Callable[[Any], Any], parse: Callable[[bytes], Any], raw: bytes) -> Callable[[], Any]:
    return lambda: check(parse(raw))


def _listed(iter_errors: Callable[[Any], Any], instance: Any) -> Callable[[], Any]:
    return lambda: list(iter_errors(instance))


def _compile_peers() -> list[Peer]:
    # Every peer here checks the schema against the draft 2020-12 meta-schema, as toolmend's
    # register does (fastjsonschema excepted: it has no such check, and targets draft 7).
    # jsonschema builds its validator lazily, so its check_schema is most of its cost.
    return [
        ("toolmend.register", toolmend, lambda: _register_fresh),
        ("toolmend.register+first-dict-validate", toolmend, lambda: _register_and_first_dict_validate),
        (
            "jsonschema_rs.Draft202012Validator",
            jsonschema_rs,
            lambda: partial(jsonschema_rs.Draft202012Validator, WRITE_FILE),
        ),
        ("fastjsonschema.compile", fastjsonschema, lambda: partial(fastjsonschema.compile, WRITE_FILE)),
        ("jsonschema(check_schema+Draft202012Validator)", jsonschema, lambda: _py_check_and_build),
    ]


def _benches() -> list[Any]:
    params = []
    for name in SCHEMAS:
        for kind in ("valid-dict", "valid-bytes", "invalid-all-errors"):
            group = f"{name}-{kind}"
            for label, module, make in _validation_peers(name, kind):
                if module is not None:
                    params.append(pytest.param(group, make, id=f"{group}/{label}"))
    for label, module, make in _compile_peers():
        if module is not None:
            params.append(pytest.param("register-compile", make, id=f"register-compile/{label}"))
    return params


@pytest.mark.parametrize(("group", "make"), _benches())
def test_validation_speed(benchmark: Any, group: str, make: Callable[[], Callable[[], Any]]) -> None:
    benchmark.group = group
    name = group.split("-", 1)[0]
    if name in BYTES:
        benchmark.extra_info["bytes"] = len(BYTES[name][0 if "-valid-" in group else 1])
    benchmark(make())


# ---- like with like ----------------------------------------------------------------------------


def _verdicts(name: str, instance: dict[str, Any]) -> dict[str, bool]:
    """Whether each installed peer accepts `instance`, toolmend from a dict and from bytes."""
    raw = orjson.dumps(instance)
    reg = toolmend_registry()
    found = {
        "toolmend(dict)": reg.try_validate(name, instance).ok,
        "toolmend(bytes)": reg.try_validate(name, raw).ok,
    }
    if jsonschema_rs is not None:
        found["jsonschema_rs"] = rs_validator(name).is_valid(instance)
    if fastjsonschema is not None:
        found["fastjsonschema"] = not isinstance(
            _fast_first_error(fast_validator(name), instance), fastjsonschema.JsonSchemaValueException
        )
    if jsonschema is not None:
        found["jsonschema"] = py_validator(name).is_valid(instance)
    return found


@pytest.mark.parametrize("name", list(SCHEMAS))
def test_peers_agree_on_every_instance(name: str) -> None:
    _, valid, invalid = SCHEMAS[name]
    assert set(_verdicts(name, valid).values()) == {True}, _verdicts(name, valid)
    assert set(_verdicts(name, invalid).values()) == {False}, _verdicts(name, invalid)
    # Bytes in, the same value out as the dict path and orjson.
    assert toolmend_registry().validate(name, BYTES[name][0]) == valid


@pytest.mark.parametrize("name", list(SCHEMAS))
def test_all_errors_peers_count_the_same_errors(name: str) -> None:
    expected = EXPECTED_ERRORS[name]
    _, _, invalid = SCHEMAS[name]
    reg = toolmend_registry()
    errors = reg.try_validate(name, invalid).errors
    assert len(errors) == expected, [(e.path, e.message) for e in errors]
    assert len(reg.try_validate(name, BYTES[name][1]).errors) == expected
    with pytest.raises(toolmend.ValidationError) as raised:
        reg.validate(name, invalid)
    assert len(raised.value.errors) == expected
    if jsonschema_rs is not None:
        rs_errors = list(rs_validator(name).iter_errors(invalid))
        assert len(rs_errors) == expected, [str(e).splitlines()[0] for e in rs_errors]
    if jsonschema is not None:
        py_errors = list(py_validator(name).iter_errors(invalid))
        assert len(py_errors) == expected, [e.message for e in py_errors]


def test_write_file_instances_are_the_sizes_the_case_names() -> None:
    valid_bytes, invalid_bytes = BYTES["write_file"]
    assert 850 <= len(CONTENT) <= 900
    assert 900 <= len(valid_bytes) <= 1200, len(valid_bytes)
    assert 900 <= len(invalid_bytes) <= 1200, len(invalid_bytes)


# ---- listing tools ------------------------------------------------------------------------------


@cache
def _registry_of(n: int) -> toolmend.ToolRegistry:
    registry = toolmend.ToolRegistry()
    for i in range(n):
        registry.register(f"tool_{i:04d}", WRITE_FILE, category=f"cat_{i % 10}")
    return registry


@pytest.mark.parametrize("n", [10, 100, 1000])
@pytest.mark.parametrize("category", [None, "cat_3"], ids=["all", "one-category"])
def test_listing_tools_speed(benchmark: Any, n: int, category: str | None) -> None:
    # The listing is kept from registration on: a repeat call hands out the same tuple.
    registry = _registry_of(n)
    benchmark.group = f"tools()-{n}"
    listing = benchmark(registry.tools, category)
    assert len(listing) == (n if category is None else n // 10)
