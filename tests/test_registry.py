"""The tool registry from Python: the keyword table, strictness, limits, files, threads."""

from __future__ import annotations

import json
import logging
import threading
import time
from pathlib import Path
from typing import Any, Literal

import pytest

import toolmend
from toolmend import FieldError, SchemaError, ToolRegistry, UnknownToolError, ValidationError

FILE_READ = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "maxLength": 4096},
        "encoding": {"type": "string", "enum": ["utf-8", "ascii", "utf-16", "utf-32"], "default": "utf-8"},
        "start_line": {"type": "integer", "minimum": 1},
    },
    "required": ["path"],
    "additionalProperties": False,
}

# One tool per supported keyword: (schema of property "v", valid value, invalid value,
# expected code, a word the message must hold).
KEYWORDS = {
    "type": ({"type": "integer"}, 42, "42", "TSR-004", "integer"),
    "minLength": ({"type": "string", "minLength": 3}, "abc", "ab", "TSR-005", "minimum length"),
    "maxLength": ({"type": "string", "maxLength": 10}, "1234567890", "12345678901", "TSR-005", "maximum length"),
    "minimum": ({"type": "integer", "minimum": 0}, 0, -1, "TSR-005", "minimum"),
    "maximum": ({"type": "integer", "maximum": 100}, 100, 101, "TSR-005", "maximum"),
    "pattern": ({"type": "string", "pattern": "^[A-Z]{3}-\\d{3}$"}, "ABC-123", "abc-123", "TSR-005", "pattern"),
    "enum": ({"enum": ["read", "write", "append"]}, "read", "READ", "TSR-005", "read, write, append"),
    "items": ({"type": "array", "items": {"type": "string"}}, ["/a", "/b"], ["/a", 123], "TSR-004", "string"),
    "minItems": ({"type": "array", "minItems": 1}, ["a"], [], "TSR-005", "minimum"),
    "maxItems": ({"type": "array", "maxItems": 5}, [1] * 5, [1] * 6, "TSR-005", "maximum"),
    "multipleOf": ({"type": "integer", "multipleOf": 5}, 15, 12, "TSR-005", "multiple of 5"),
    "format": ({"type": "string", "format": "uri"}, "https://example.com/a", "not a uri", "TSR-005", "uri"),
    "properties": (
        {"type": "object", "properties": {"timeout": {"type": "integer"}}},
        {"timeout": 30},
        {"timeout": "thirty"},
        "TSR-004",
        "integer",
    ),
    "additionalProperties": (
        {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False},
        {"a": "x"},
        {"a": "x", "extra": "property"},
        "TSR-005",
        "additional",
    ),
}


@pytest.fixture
def registry() -> ToolRegistry:
    r = ToolRegistry()
    r.register("file_read", FILE_READ, description="Read a file")
    return r


@pytest.mark.parametrize("keyword", list(KEYWORDS))
def test_each_keyword_accepts_the_valid_and_reports_the_invalid(keyword: str) -> None:
    schema, good, bad, code, word = KEYWORDS[keyword]
    r = ToolRegistry()
    r.register("t", {"type": "object", "properties": {"v": schema}})
    assert r.validate("t", {"v": good}) == {"v": good}
    result = r.try_validate("t", {"v": bad})
    assert not result.ok and result.value is None
    assert [e.code for e in result.errors] == [code]
    assert result.errors[0].path.startswith("/v")
    assert word in result.errors[0].message + " " + (result.errors[0].expected or "")


def test_required_missing_points_at_the_property_and_says_what_it_should_be(registry: ToolRegistry) -> None:
    (error,) = registry.try_validate("file_read", {}).errors
    assert error == FieldError(
        "/path",
        "TSR-003",
        "Required property 'path' is missing",
        "string",
        None,
        "add the required property 'path' (string)",
    )


def test_null_is_not_a_string(registry: ToolRegistry) -> None:
    (error,) = registry.try_validate("file_read", {"path": None}).errors
    assert (error.code, error.path, error.actual) == ("TSR-004", "/path", "null")
    assert "null" in error.message


def test_default_is_an_annotation_and_never_injected(registry: ToolRegistry) -> None:
    args = {"path": "/tmp/a"}
    assert registry.validate("file_read", args) is args
    assert args == {"path": "/tmp/a"}


def test_nested_path_case_of_the_issue() -> None:
    r = ToolRegistry()
    r.register("t", {"type": "object", "properties": {"options": {"type": "object", "properties": {"timeout": {"type": "integer"}}}}})
    with pytest.raises(ValidationError) as excinfo:
        r.validate("t", {"options": {"timeout": "invalid"}})
    (error,) = excinfo.value.errors
    assert (error.path, error.code, error.expected, error.actual) == ("/options/timeout", "TSR-004", "integer", "string")
    assert excinfo.value.tool_name == "t"
    assert excinfo.value.as_dicts()[0]["path"] == "/options/timeout"


def test_all_errors_in_document_order_from_dict_str_and_bytes_alike(registry: ToolRegistry) -> None:
    args = {"start_line": 0, "encoding": "UTF-8", "extra": True}
    from_dict = registry.try_validate("file_read", args).errors
    assert [(e.path, e.code) for e in from_dict] == [
        ("/start_line", "TSR-005"),
        ("/encoding", "TSR-005"),
        ("/extra", "TSR-005"),
        ("/path", "TSR-003"),
    ]
    assert registry.try_validate("file_read", json.dumps(args)).errors == from_dict
    assert registry.try_validate("file_read", json.dumps(args).encode()).errors == from_dict


def test_strict_mode_closes_nested_objects_and_lax_mode_does_not() -> None:
    schema = {"type": "object", "properties": {"o": {"type": "object", "properties": {"a": {"type": "integer"}}}, "free": {"type": "object"}}}
    strict, lax = ToolRegistry(), ToolRegistry(strict=False)
    for r in (strict, lax):
        r.register("t", schema)
    args = {"o": {"a": 1, "b": 2}, "free": {"anything": [1]}}
    assert [e.path for e in strict.try_validate("t", args).errors] == ["/o/b"]
    assert lax.validate("t", args) == args
    assert strict.strict and not lax.strict


def test_text_arguments_that_are_not_json_are_tsr_002(registry: ToolRegistry) -> None:
    (error,) = registry.try_validate("file_read", '{"path": "a",').errors
    assert (error.code, error.path) == ("TSR-002", "")
    assert "byte" in error.message


def test_values_json_cannot_hold_are_tsr_002_with_their_path(registry: ToolRegistry) -> None:
    (error,) = registry.try_validate("file_read", {"path": {1, 2}}).errors
    assert (error.code, error.path) == ("TSR-002", "/path")
    (error,) = registry.try_validate("file_read", {"path": float("nan")}).errors
    assert error.code == "TSR-002"


def test_limits_refuse_huge_and_deep_arguments_before_validating() -> None:
    r = ToolRegistry(max_size=1000, max_depth=10)
    r.register("t", {"type": "object"})
    deep: Any = []
    for _ in range(10_000):
        deep = [deep]
    for args in ({"a": deep}, "[" * 50 + "]" * 50):
        (error,) = r.try_validate("t", args).errors
        assert error.code == "TLP-008"
    for args in ({"a": "x" * 5000}, json.dumps({"a": "x" * 5000})):
        (error,) = r.try_validate("t", args).errors
        assert error.code == "TLP-007"


def test_unknown_tools_raise_tsr_001_with_the_name_and_a_near_match(registry: ToolRegistry) -> None:
    with pytest.raises(UnknownToolError) as excinfo:
        registry.validate("file_raed", {})
    assert excinfo.value.code == "TSR-001" and excinfo.value.tool_name == "file_raed"
    assert "did you mean 'file_read'" in str(excinfo.value)
    (error,) = registry.try_validate("nope", {}).errors
    assert error.code == "TSR-001"
    assert registry.get("FILE_READ").name == "file_read"


@pytest.mark.parametrize(
    ("schema", "code", "where"),
    [
        ({"properties": {"v": {"type": "invalid_type"}}}, "TSR-006", "/properties/v/type"),
        ({"$ref": "https://example.com/schema.json"}, "TSR-006", "/$ref"),
        ({"properties": {"p": {"$ref": "file:///etc/passwd"}}}, "TSR-006", "/properties/p/$ref"),
        ({"type": "object", "maxlength": 3}, "TSR-006", "/maxlength"),
        ({"type": "object", "$ref": "#"}, "TSR-008", "#"),
        ({"$ref": "#/$defs/missing"}, "TSR-008", None),
        ({"$defs": {"a%b": {"$ref": "#/$defs/a%25b"}}, "$ref": "#/$defs/a%25b"}, "TSR-008", None),
        ({"$defs": {"a/b": {"$ref": "#/$defs/a~1b"}}, "$ref": "#/$defs/a~1b"}, "TSR-008", None),
        ({"type": "string", "pattern": "(?<=a)b"}, "TSR-008", None),
    ],
)
def test_bad_schemas_are_refused_with_codes_and_nothing_is_fetched(schema: dict[str, Any], code: str, where: str | None) -> None:
    r = ToolRegistry()
    with pytest.raises(SchemaError) as excinfo:
        r.register("t", schema)
    assert excinfo.value.code == code
    if where is not None:
        assert excinfo.value.path == where
    assert len(r) == 0


@pytest.mark.parametrize(
    ("name", "kwargs", "words"),
    [
        ("", {}, "name"),
        ("a" * 65, {}, "64 characters"),
        ("bad-name", {}, "letters, digits"),
        ("ok", {"version": "1.0"}, "semantic version"),
        ("ok", {"description": "d" * 501}, "500 characters"),
    ],
)
def test_definition_rules(name: str, kwargs: dict[str, str], words: str) -> None:
    with pytest.raises(SchemaError) as excinfo:
        ToolRegistry().register(name, {"type": "object"}, **kwargs)
    assert excinfo.value.code == "TSR-006" and words in excinfo.value.message


def test_oversized_and_overdeep_schemas_are_refused() -> None:
    big = {"type": "object", "properties": {f"p{i}": {"type": "string", "description": "x" * 20} for i in range(2000)}}
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(12):
        deep = {"type": "object", "properties": {"x": deep}}
    for schema in (big, deep):
        with pytest.raises(SchemaError) as excinfo:
            ToolRegistry().register("t", schema)
        assert excinfo.value.code == "TSR-006"


def test_same_definition_twice_is_a_no_op_and_a_different_one_is_tsr_007(registry: ToolRegistry) -> None:
    again = registry.register("file_read", FILE_READ, description="Read a file")
    assert again.fingerprint == registry.get("file_read").fingerprint
    with pytest.raises(SchemaError) as excinfo:
        registry.register("file_read", {"type": "object"}, description="Read a file")
    assert excinfo.value.code == "TSR-007" and "already registered" in excinfo.value.message
    assert len(registry) == 1


def test_redos_pattern_is_matched_in_linear_time() -> None:
    r = ToolRegistry()
    r.register("t", {"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}}})
    start = time.perf_counter()
    (error,) = r.try_validate("t", {"s": "a" * 100_000 + "!"}).errors
    assert error.code == "TSR-005"
    assert time.perf_counter() - start < 5  # a backtracking engine would not finish at all


def test_tools_listing_filtering_and_hints() -> None:
    r = ToolRegistry()
    r.register("write_file", {"type": "object"}, category="FileSystem")
    r.register("read_file", FILE_READ, category="FileSystem")
    r.register("fetch", {"type": "object"}, category="Web")
    assert [t.name for t in r.tools()] == ["read_file", "write_file", "fetch"]
    assert [t.name for t in r.tools("FileSystem")] == ["read_file", "write_file"]
    assert isinstance(r.tools(), tuple) and "fetch" in r
    assert r.schema_hint("read_file") == (
        "read_file expects: {path: string (required), encoding?: 'utf-8'|'ascii'|'utf-16'|'utf-32', start_line?: integer (>= 1)}"
    )


def test_register_function_reads_hints_and_docstring() -> None:
    def move_file(source: str, target: str, mode: Literal["copy", "move"] = "move", retries: int = 1) -> None:
        """Move or copy a file.

        Longer explanation that is not the description."""

    r = ToolRegistry()
    info = r.register_function(move_file, category="FileSystem")
    assert (info.name, info.description, info.category) == ("move_file", "Move or copy a file.", "FileSystem")
    assert info.schema["required"] == ["source", "target"]
    assert r.validate("move_file", {"source": "a", "target": "b", "mode": "copy"})["mode"] == "copy"
    errors = r.try_validate("move_file", {"source": "a", "mode": "rename", "retries": "2"}).errors
    assert [(e.path, e.code) for e in errors] == [("/mode", "TSR-005"), ("/retries", "TSR-004"), ("/target", "TSR-003")]


def test_from_file_reads_json_toml_and_agent_yaml_and_skips_broken_tools(tmp_path: Path) -> None:
    tools = [
        {"name": "file_read", "description": "Read", "parameters": FILE_READ},
        {"type": "function", "function": {"name": "fetch", "description": "Fetch", "parameters": {"type": "object"}}},
        {"name": "broken_tool", "parameters": {"type": "object", "properties": {"v": {"type": "invalid_type_name"}}}},
        {"name": "off", "enabled": False, "parameters": {"type": "object"}},
    ]
    (tmp_path / "tools.json").write_text(json.dumps(tools))
    (tmp_path / "tools.toml").write_text(
        '[[tools]]\nname = "greet"\ndescription = "Greet"\n[tools.parameters]\ntype = "object"\nrequired = ["name"]\n'
        '[tools.parameters.properties.name]\ntype = "string"\n'
    )
    (tmp_path / "config.yml").write_text(
        "tool_registry:\n  custom_tools:\n    - name: custom_greeting\n      version: 1.0.0\n      category: custom\n"
        "      description: Greets\n      parameters:\n        type: object\n        properties:\n"
        "          name: {type: string, maxLength: 100}\n          style: {type: string, enum: [formal, casual]}\n"
        "        required: [name]\n"
    )
    from_json = ToolRegistry.from_file(tmp_path / "tools.json")
    assert [t.name for t in from_json.tools()] == ["fetch", "file_read"]
    assert [(s.name, s.code) for s in from_json.skipped] == [("broken_tool", "TSR-006"), ("off", None)]
    assert ToolRegistry.from_file(tmp_path / "tools.toml").try_validate("greet", {}).errors[0].path == "/name"
    yaml_registry = ToolRegistry.from_file(tmp_path / "config.yml")
    assert yaml_registry.validate("custom_greeting", {"name": "Alice", "style": "formal"}) == {"name": "Alice", "style": "formal"}
    assert yaml_registry.get("custom_greeting").category == "custom"


def test_threads_registering_and_validating_at_once_agree() -> None:
    r = ToolRegistry()
    results: list[tuple[bool, tuple[str, ...]]] = []
    lock = threading.Lock()

    def work(i: int) -> None:
        name = f"tool_{i % 10}"
        r.register(name, {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
        for args in ({"n": 1}, '{"n": "1"}', b"{}"):
            res = r.try_validate(name, args)
            with lock:
                results.append((res.ok, tuple(e.code for e in res.errors)))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(r) == 10
    assert sorted(set(results)) == [(False, ("TSR-003",)), (False, ("TSR-004",)), (True, ())]
    assert len(results) == 120


def test_validation_failures_log_without_values(caplog: pytest.LogCaptureFixture, registry: ToolRegistry) -> None:
    caplog.set_level("DEBUG", logger="toolmend")
    registry.try_validate("file_read", {"path": "secret-value-123" * 300})
    ToolRegistry().register("logged", {"type": "object"})
    assert "secret-value-123" not in caplog.text
    assert "registered tool 'logged'" in caplog.text


def test_public_names() -> None:
    for name in ("ToolRegistry", "ValidationError", "SchemaError", "UnknownToolError", "FieldError", "ValidationResult"):
        assert name in toolmend.__all__


_BASE = {"base": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}


@pytest.mark.parametrize(
    "schema",
    [
        pytest.param({"$defs": _BASE, "$ref": "#/$defs/base", "properties": {"mode": {"enum": ["r", "w"]}}}, id="ref-and-properties"),
        pytest.param({"$defs": _BASE, "allOf": [{"$ref": "#/$defs/base"}, {"properties": {"mode": {"enum": ["r", "w"]}}}]}, id="allOf"),
        pytest.param(
            {"type": "object", "properties": {"path": {"type": "string"}}, "dependentSchemas": {"path": {"properties": {"mode": {"enum": ["r", "w"]}}}}},
            id="dependentSchemas",
        ),
    ],
)
def test_strict_mode_keeps_properties_declared_in_every_part_open(schema: dict[str, Any]) -> None:
    r = ToolRegistry()
    r.register("t", schema)
    args = {"path": "/tmp/a", "mode": "w"}
    assert r.validate("t", args) is args
    assert r.validate("t", json.dumps(args)) == args
    (error,) = r.try_validate("t", {"path": "/tmp/a", "mode": "w", "force": True}).errors
    assert (error.path, error.code) == ("/force", "TSR-005")
    assert "path" in error.suggestion and "mode" in error.suggestion
    # A bad value of a declared property is reported once, not also as an unknown property.
    (error,) = r.try_validate("t", {"path": 1, "mode": "w"}).errors
    assert (error.path, error.code) == ("/path", "TSR-004")


def test_idn_formats_are_accepted_and_checked() -> None:
    r = ToolRegistry()
    r.register(
        "t",
        {"type": "object", "properties": {"mail": {"type": "string", "format": "idn-email"}, "host": {"type": "string", "format": "idn-hostname"}}},
    )
    assert r.try_validate("t", {"mail": "用户@例子.广告", "host": "bücher.example"}).ok
    errors = r.try_validate("t", {"mail": "no-at-sign", "host": "bad host"}).errors
    assert [(e.path, e.code) for e in errors] == [("/mail", "TSR-005"), ("/host", "TSR-005")]


@pytest.mark.parametrize("keyword", ["const", "enum"])
def test_integers_beyond_64_bits_in_json_text_are_compared_exactly(keyword: str) -> None:
    value = 2**64
    r = ToolRegistry()
    r.register("t", f'{{"type": "object", "properties": {{"n": {{"{keyword}": {json.dumps(value if keyword == "const" else [value, "x"])}}}}}}}')
    assert r.try_validate("t", f'{{"n": {value}}}').ok
    for near in (value + 1, value - 1, value + 2048):
        (error,) = r.try_validate("t", f'{{"n": {near}}}').errors
        assert (error.path, error.code, error.actual) == ("/n", "TSR-005", str(near))


def test_listing_is_kept_until_a_tool_is_added_and_its_schemas_are_fresh_copies() -> None:
    registry = toolmend.ToolRegistry()
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    for name, category in (("b", "x"), ("a", "y"), ("c", None), ("a2", "x")):
        registry.register(name, schema, category=category)
    listing = registry.tools()
    assert [t.name for t in listing] == ["c", "a2", "b", "a"]  # uncategorised first, then by category, name
    assert registry.tools() is listing
    assert [t.name for t in registry.tools("x")] == ["a2", "b"]
    listing[0].schema["properties"] = {}  # a copy: the registry keeps its own
    assert registry.get("c").schema == schema
    registry.register("d", schema, category="x")
    assert registry.tools() is not listing
    assert [t.name for t in registry.tools("x")] == ["a2", "b", "d"]

# ---- metrics and failure records ------------------------------------------------------------------------

POINT = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}


def test_metrics_count_validations_by_tool_and_outcome_and_reset() -> None:
    reg = ToolRegistry(metrics=True)
    reg.register("point", POINT)
    reg.register("other", {"type": "object"})
    assert reg.metrics()["validations"] == 0 and reg.metrics()["tools"] == 2
    reg.validate("point", {"x": 1})
    assert not reg.try_validate("point", {"x": "one"}).ok
    assert reg.try_validate("other", {}).ok
    with pytest.raises(toolmend.ValidationError):
        reg.validate("point", {})
    with pytest.raises(toolmend.UnknownToolError):
        reg.validate("nope", {})
    m = reg.metrics()
    assert (m["validations"], m["valid"], m["invalid"]) == (5, 2, 3)
    assert m["by_tool"] == {"point": {"valid": 1, "invalid": 2}, "other": {"valid": 1, "invalid": 0}, "nope": {"valid": 0, "invalid": 1}}
    assert m["failures_by_code"] == {"TSR-004": 1, "TSR-003": 1, "TSR-001": 1}
    assert sum(m["latency"].values()) == 5 and list(m["latency"])[-1] == "<=inf"
    m["by_tool"]["point"]["valid"] = 99  # a snapshot: changing it changes nothing
    assert reg.metrics()["by_tool"]["point"]["valid"] == 1
    reg.metrics.reset()
    after = reg.metrics()
    assert (after["validations"], after["by_tool"], after["failures_by_code"], after["tools"]) == (0, {}, {}, 2)
    assert sum(after["latency"].values()) == 0


def test_a_registry_made_without_metrics_keeps_rusts_own_methods() -> None:
    reg = ToolRegistry()
    reg.register("point", POINT)
    reg.validate("point", {"x": 1})
    assert "validate" not in vars(reg) and "try_validate" not in vars(reg)
    assert reg.metrics()["validations"] == 0 and reg.metrics()["enabled"] is False


@pytest.mark.parametrize("include", [False, True])
def test_failures_are_logged_at_the_configured_level_with_the_correlation_id(
    caplog: pytest.LogCaptureFixture, include: bool
) -> None:
    from toolmend.registry_metrics import correlation_id

    reg = ToolRegistry(validation_failure_log_level="warning", include_actual_values=include)
    reg.register("point", POINT)
    token = correlation_id.set("c0ffee")
    try:
        with caplog.at_level(logging.DEBUG, logger="toolmend"):
            reg.try_validate("point", {"x": "secret-ish"})
            reg.validate("point", {"x": 2})
    finally:
        correlation_id.reset(token)
    record, *values = [r for r in caplog.records if r.getMessage().startswith("validation failed")]
    assert record.levelno == logging.WARNING
    # The actual values only with include_actual_values, and then in a DEBUG record of their own.
    assert [(r.levelno, r.getMessage().rsplit(": ", 1)[1]) for r in values] == ([(logging.DEBUG, "/x got string")] if include else [])
    assert (record.correlation_id, record.tool, record.code) == ("c0ffee", "point", "TSR-004")  # type: ignore[attr-defined]
    assert (record.tool_name, record.error_code) == ("point", "TSR-004")  # type: ignore[attr-defined]
    assert [e["code"] for e in record.validation_errors] == ["TSR-004"]  # type: ignore[attr-defined]
    message = record.getMessage()
    assert "TSR-004 at /x expected integer" in message and "(correlation: c0ffee)" in message
    assert "got string" not in message
    assert reg.metrics()["validations"] == 0  # logging alone counts nothing
    with pytest.raises(ValueError, match="validation_failure_log_level"):
        ToolRegistry(validation_failure_log_level="LOUD")


def test_from_file_takes_the_failure_records_of_the_tool_registry_section(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    pytest.importorskip("yaml")
    config = tmp_path / "config.yml"
    config.write_text(
        "tool_registry:\n  validation_failure_log_level: ERROR\n  include_actual_values: true\n  custom_tools:\n"
        "    - name: point\n      parameters: {type: object, properties: {x: {type: integer}}}\n"
    )
    reg = ToolRegistry.from_file(config)
    with caplog.at_level(logging.DEBUG, logger="toolmend"):
        assert not reg.try_validate("point", {"x": "a"}).ok
    record, values = [r for r in caplog.records if r.getMessage().startswith("validation failed")]
    assert record.levelno == logging.ERROR and "got string" not in record.getMessage()
    assert values.levelno == logging.DEBUG and values.getMessage().endswith("actual values: /x got string")
