"""The error catalogue: one table in the Rust core, and everything made from it (Python data, docs, stub)."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any, Callable

import pytest

import toolmend
from toolmend import _core
from toolmend.errors import ERROR_CODES, ErrorInfo, catalogue_markdown

ROOT = Path(__file__).parent.parent
STUB = ROOT / "python" / "toolmend" / "_core.pyi"


def stub_literal(name: str) -> list[str]:
    """The values of the Literal type alias `name` in _core.pyi, in order."""
    for node in ast.walk(ast.parse(STUB.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            assert isinstance(node.value, ast.Subscript)
            return [e.value for e in ast.walk(node.value.slice) if isinstance(e, ast.Constant)]
    raise AssertionError(f"{name} is not in _core.pyi")


def test_core_exports_every_code_with_its_texts() -> None:
    rows = _core.ERROR_CODES
    assert isinstance(rows, tuple) and all(isinstance(r, tuple) and len(r) == 5 for r in rows)
    codes = [r[0] for r in rows]
    assert len(set(codes)) == len(codes) == len({r[1] for r in rows})
    for series in ("TLP", "TSR"):
        numbers = [int(c[4:]) for c in codes if c.startswith(series + "-")]
        assert numbers == list(range(1, len(numbers) + 1)), f"{series} codes are numbered 001, 002, ... in order"
    assert set(codes) == {c for c in codes if re.fullmatch(r"T(LP|SR)-\d{3}", c)}
    for code, name, title, cause, fix in rows:
        assert name.isidentifier() and name[0].isupper()
        assert title and not title.endswith("."), code
        assert cause.endswith(".") and fix.endswith("."), code


def test_python_catalogue_is_the_core_catalogue() -> None:
    assert list(ERROR_CODES) == [r[0] for r in _core.ERROR_CODES]
    for row in _core.ERROR_CODES:
        info = ERROR_CODES[row[0]]
        assert isinstance(info, ErrorInfo)
        assert tuple(info[:5]) == row
    assert toolmend.ERROR_CODES is ERROR_CODES
    with pytest.raises(TypeError):
        ERROR_CODES["TLP-999"] = ERROR_CODES["TLP-001"]  # type: ignore[index]


def test_code_names_every_code_of_the_catalogue_after_its_core_variant() -> None:
    members = [(m.name, m.value) for m in toolmend.Code]
    assert members == [(re.sub(r"(?<!^)(?=[A-Z])", "_", name).upper(), code) for code, name, *_ in _core.ERROR_CODES]
    for code in ERROR_CODES:
        assert toolmend.Code(code) == code and f"{toolmend.Code(code)}" == code


def test_the_package_names_codes_by_code_not_as_bare_literals() -> None:
    """A code written out by hand can drift from the catalogue; `Code.CUT_OFF` cannot."""
    package = ROOT / "python" / "toolmend"
    allowed = {package / "_states.py"}
    found = [
        f"{path.relative_to(package)}:{number}"
        for path in package.rglob("*.py")
        if path not in allowed
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"[\"']T(LP|SR)-\d{3}[\"']", line)
    ]
    assert not found, found


def test_every_code_has_a_python_type_that_reports_it() -> None:
    for info in ERROR_CODES.values():
        assert info.reported_as, f"{info.code} has no Python exception or result type"
        for cls in info.reported_as:
            assert getattr(toolmend, cls.__name__) is cls, f"{cls.__name__} is public"
            assert issubclass(cls, toolmend.ToolmendError) or hasattr(cls, "code") or "code" in getattr(cls, "__dataclass_fields__", {})


def test_every_code_appears_in_the_stub() -> None:
    assert stub_literal("ErrorCodeStr") == list(ERROR_CODES), "ErrorCodeStr in _core.pyi lists the catalogue in order"
    for name in ("ERROR_CODES", "DEFAULT_LIMITS", "MAX_DEPTH_CEILING"):
        assert re.search(rf"^{name}: ", STUB.read_text(encoding="utf-8"), re.M), name


def test_docs_errors_md_is_generated_from_the_catalogue() -> None:
    text = (ROOT / "docs" / "errors.md").read_text(encoding="utf-8")
    assert text == catalogue_markdown(), "docs/errors.md drifted: run python docs/gen_errors.py"
    for info in ERROR_CODES.values():
        section = text.split(f"## {info.code}: {info.title}\n", 1)[1].split("\n## ", 1)[0]
        assert info.cause in section and info.fix in section


def test_repair_kinds_are_the_core_table_in_the_stub_and_the_docs() -> None:
    names = [name for name, _ in toolmend.REPAIR_KINDS]
    assert len(set(names)) == len(names) and all(re.fullmatch(r"[a-z0-9_]+", n) for n in names)
    assert all(description.endswith(".") for _, description in toolmend.REPAIR_KINDS)
    assert stub_literal("RepairKindStr") == names, "RepairKindStr in _core.pyi lists the core's kinds in order"
    # docs/repair.md's table names every kind in its first column, and nothing else.
    page = (ROOT / "docs" / "repair.md").read_text(encoding="utf-8")
    table = page.split("| kind | before | after |\n", 1)[1].split("\n\n", 1)[0]
    in_table = {cell.strip() for row in table.splitlines()[1:] for cell in row.split("|")[1].split("/")}
    assert in_table == set(names), f"docs/repair.md: missing {set(names) - in_table}, unknown {in_table - set(names)}"
    # Every kind the engine reports is one of them.
    assert toolmend.repair("{'a': [1, 2,").repairs[0].kind in names


def test_troubleshooting_has_an_entry_for_every_code() -> None:
    # Each code links to its catalogue section from a line saying what to do about it.
    text = (ROOT / "docs" / "troubleshooting.md").read_text(encoding="utf-8")
    missing = [code for code in ERROR_CODES if f"(errors.md#{code.lower()})" not in text]
    assert missing == [], f"docs/troubleshooting.md has no entry for {missing}"


def test_docs_check_mode_reports_drift(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen_errors", ROOT / "docs" / "gen_errors.py")
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    target = tmp_path / "errors.md"
    monkeypatch.setattr(gen, "ERRORS_MD", target)
    assert gen.main(["--check"]) == 1  # missing
    assert gen.main([]) == 0 and target.read_text(encoding="utf-8") == catalogue_markdown()
    assert gen.main(["--check"]) == 0
    target.write_text(catalogue_markdown().replace("invalid JSON", "bad JSON"), encoding="utf-8")
    assert gen.main(["--check"]) == 1


# Each case provokes one code for real and returns the object that reports it.
def _raised(fn: Callable[[], Any]) -> Any:
    with pytest.raises(toolmend.ToolmendError) as excinfo:
        fn()
    return excinfo.value


def _registry() -> toolmend.ToolRegistry:
    reg = toolmend.ToolRegistry()
    reg.register("read_file", {"type": "object", "properties": {"path": {"type": "string", "maxLength": 5}}, "required": ["path"]})
    return reg


def _call_error(call: dict[str, Any], registry: toolmend.ToolRegistry | None = None) -> Any:
    result = toolmend.parse_response({"message": {"tool_calls": [call]}}, registry, text_calls=False)
    (error,) = result.errors
    return error


OBSERVED: dict[str, Callable[[], Any]] = {
    "TLP-001": lambda: _call_error({"id": "x"}),
    "TLP-002": lambda: _call_error({"function": {"name": "", "arguments": {}}}),
    "TLP-003": lambda: _call_error({"function": {"name": "read-file", "arguments": {}}}),
    "TLP-004": lambda: toolmend.repair("no JSON here").error,
    "TLP-005": lambda: _call_error({"function": {"name": "a" * 65, "arguments": {}}}),
    "TLP-006": lambda: _raised(lambda: _extend_completed()),
    "TLP-007": lambda: _raised(lambda: toolmend.loads("[1, 2, 3]", max_size=4)),
    "TLP-008": lambda: _registry().try_validate("read_file", _deep(70)).errors[0],
    "TLP-009": lambda: _not_a_reply(204),
    "TLP-010": lambda: _cut_off(),
    "TLP-011": lambda: toolmend.parse_response({"error": "model 'qwen9' not found"}).errors[0],
    "TSR-001": lambda: _raised(lambda: _registry().validate("write_file", {})),
    "TSR-002": lambda: _raised(lambda: _registry().validate("read_file", {"path": {1, 2}})),
    "TSR-003": lambda: _raised(lambda: _registry().validate("read_file", {})),
    "TSR-004": lambda: _call_error({"function": {"name": "read_file", "arguments": {"path": 1}}}, _registry()),
    "TSR-005": lambda: _registry().try_validate("read_file", {"path": "too long"}).errors[0],
    "TSR-006": lambda: _raised(lambda: toolmend.ToolRegistry().register("bad-name", {"type": "object"})),
    "TSR-007": lambda: _raised(lambda: _registry().register("read_file", {"type": "object"})),
    "TSR-008": lambda: _raised(lambda: toolmend.ToolRegistry().register("p", {"type": "string", "pattern": "(?=a)b"})),
}


def _not_a_reply(status: int) -> Any:
    from toolmend.client.exchange import Reply, not_a_reply
    from toolmend.client.assembly import Assembly

    return not_a_reply(Reply(Assembly(None, {}, True), status=status, whole=True))


def _cut_off() -> Any:
    from toolmend.client.reflection import cut_off

    call = toolmend.parse_response({"message": {"tool_calls": [{"function": {"name": "read_file", "arguments": {"path": "a"}}}]}}).calls[0]
    return cut_off(call)


def _deep(levels: int) -> dict[str, Any]:
    root = value = {}
    for _ in range(levels):
        value["a"] = {}
        value = value["a"]
    return {"path": "x", "extra": root}


def _extend_completed() -> None:
    acc = toolmend.ToolCallAccumulator()
    acc.feed(toolmend.ToolCallDelta(0, name="t", arguments="{}", complete=True))
    acc.extend_arguments(0, '{"x": 1}')  # (the same "{}" again would be a repeat, dropped)


def test_every_code_is_observed_in_a_type_the_catalogue_names() -> None:
    assert set(OBSERVED) == set(ERROR_CODES)
    for code, provoke in OBSERVED.items():
        reported = provoke()
        codes = {e.code for e in reported.errors} if isinstance(reported, toolmend.ValidationError) else {reported.code}
        assert codes == {code}, (code, reported)
        assert isinstance(reported, ERROR_CODES[code].reported_as), (code, type(reported))


def test_reflection_prompts_name_every_code_by_its_title() -> None:
    from toolmend.client.reflection import error_type as _error_type

    for info in ERROR_CODES.values():
        assert _error_type(info.code) == info.title
    assert _error_type("TLP-999") == "invalid tool call"


def test_catalogue_markdown_renders_one_section_per_code() -> None:
    text = catalogue_markdown()
    headings = re.findall(r"^## (T\w\w-\d{3}): ", text, re.M)
    assert headings == list(ERROR_CODES)


def test_every_code_the_sources_use_is_in_the_catalogue() -> None:
    # A code written into Python or Rust source without a row in the catalogue would reach users
    # undocumented: no title for reflection prompts, no section in docs/errors.md.
    sources = [*(ROOT / "python" / "toolmend").rglob("*.py"), *(ROOT / "python" / "toolmend").rglob("*.pyi")]
    sources += [*(ROOT / "rust").rglob("*.rs")]
    used: dict[str, str] = {}
    for path in sources:
        for code in re.findall(r"\bT(?:LP|SR)-\d{3}\b", path.read_text(encoding="utf-8")):
            used.setdefault(code, str(path.relative_to(ROOT)))
    missing = {code: where for code, where in used.items() if code not in ERROR_CODES}
    assert not missing, f"codes used but not in the catalogue of rust/core/src/error.rs: {missing}"
