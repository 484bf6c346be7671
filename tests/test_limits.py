"""Limits: one set of defaults from the core, and a ceiling on max_depth that keeps deep input from crashing."""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import toolmend
from toolmend import _core
from toolmend.config import RetryConfig

CEILING = toolmend.MAX_DEPTH_CEILING


# ---- defaults ---------------------------------------------------------------------------------------


def test_defaults_come_from_the_core() -> None:
    # The documented defaults: 1 MiB, 64 levels, 100 ms.
    assert _core.DEFAULT_LIMITS == {"max_size": 1_048_576, "max_depth": 64, "timeout_ms": 100}
    assert toolmend.DEFAULT_LIMITS == _core.DEFAULT_LIMITS
    with pytest.raises(TypeError):
        toolmend.DEFAULT_LIMITS["max_depth"] = 5  # type: ignore[index]
    assert toolmend.DEFAULT_LIMITS["max_depth"] <= CEILING == _core.MAX_DEPTH_CEILING


def _outside_code_blocks(text: str) -> list[str]:
    lines, inside = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            inside = not inside
        elif not inside:
            lines.append(line)
    return lines


def test_defaults_written_in_the_docs_are_the_core_defaults() -> None:
    # Signatures and prose in the pages, and the catalogue's causes, say the defaults the core has.
    defaults = {**toolmend.DEFAULT_LIMITS, "max_buffer": _core.DEFAULT_MAX_BUFFER}
    root = Path(__file__).parent.parent
    pages = [*sorted((root / "docs").glob("*.md")), root / "README.md", root / "python" / "toolmend" / "_core.pyi"]
    for page in pages:
        written = r"\b(max_size|max_depth|timeout_ms|max_buffer)(?:=|: int = )(\d[\d_]*)"
        # Examples (code blocks) pass what they like; `timeout_ms=0` is "no deadline", not a default.
        text = "\n".join(_outside_code_blocks(page.read_text(encoding="utf-8")))
        for name, value in re.findall(written, text):
            if (name, value) != ("timeout_ms", "0"):
                assert int(value) == defaults[name], f"{page.name}: {name}={value}, the default is {defaults[name]}"
    mib = toolmend.DEFAULT_LIMITS["max_size"] / (1 << 20)
    assert f"{mib:g} MiB unless set" in toolmend.ERROR_CODES["TLP-007"].cause
    cause = toolmend.ERROR_CODES["TLP-008"].cause
    assert f"{toolmend.DEFAULT_LIMITS['max_depth']} unless set" in cause
    assert f"{toolmend.DEFAULT_LIMITS['timeout_ms']} ms unless set" in cause


@pytest.mark.parametrize("fn", [toolmend.repair, toolmend.parse_response], ids=["repair", "parse_response"])
def test_python_signatures_default_to_the_core_limits(fn: object) -> None:
    parameters = inspect.signature(fn).parameters  # type: ignore[arg-type]
    assert {name: parameters[name].default for name in toolmend.DEFAULT_LIMITS} == dict(toolmend.DEFAULT_LIMITS)


def test_retry_config_defaults_to_the_core_limits() -> None:
    cfg = RetryConfig()
    assert (cfg.max_size, cfg.max_depth, cfg.timeout_ms) == tuple(toolmend.DEFAULT_LIMITS.values())


def _nested(levels: int) -> dict[str, object]:
    """A dict `levels` deep: {"a": {"a": ... {}}}."""
    root: dict[str, object] = {}
    inner = root
    for _ in range(levels - 1):
        child: dict[str, object] = {}
        inner["a"] = child
        inner = child
    return root


def test_binding_defaults_are_the_core_limits() -> None:
    depth = toolmend.DEFAULT_LIMITS["max_depth"]
    registry = _core.ToolRegistry()
    registry.register("t", {"type": "object"})
    assert registry.try_validate("t", _nested(depth)).ok
    assert [e.code for e in registry.try_validate("t", _nested(depth + 1)).errors] == ["TLP-008"]
    assert _core.repair("[" * depth + "]" * depth).ok
    assert _core.repair("[" * (depth + 1) + "]" * (depth + 1)).error.code == "TLP-008"  # type: ignore[union-attr]
    size = toolmend.DEFAULT_LIMITS["max_size"]
    assert _core.repair(" " * (size - 2) + "[]").ok
    assert _core.repair(" " * (size - 1) + "[]").error.code == "TLP-007"  # type: ignore[union-attr]


# ---- the ceiling --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda depth: toolmend.ToolRegistry(max_depth=depth),
        lambda depth: _core.ToolRegistry(max_depth=depth),
        lambda depth: toolmend.parse_response(b'{"message": {"content": "hi"}}', max_depth=depth),
        lambda depth: RetryConfig(max_depth=depth),
    ],
    ids=["ToolRegistry", "_core.ToolRegistry", "parse_response", "RetryConfig"],
)
def test_max_depth_over_the_ceiling_is_refused_saying_the_ceiling(make: object) -> None:
    make(CEILING)  # type: ignore[operator]
    with pytest.raises(ValueError, match=f"ceiling of {CEILING}"):
        make(CEILING + 1)  # type: ignore[operator]


def test_retry_config_files_and_environment_are_held_to_the_ceiling(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    toml = tmp_path / "toolmend.toml"
    toml.write_text(f"[tool_call]\nmax_depth = {CEILING + 1}\n")
    with pytest.raises(ValueError, match=f"ceiling of {CEILING}"):
        RetryConfig.load(toml)
    monkeypatch.setenv("TOOLMEND_MAX_DEPTH", str(CEILING + 1))
    with pytest.raises(ValueError, match=f"ceiling of {CEILING}"):
        RetryConfig.load()


# The stream readers and the binding's parse_response still take max_depth as given; these pass once
# their signatures go through the binding's checked limits, and then the markers come off.


def test_stream_accumulator_refuses_max_depth_over_the_ceiling() -> None:
    with pytest.raises(ValueError, match=f"ceiling of {CEILING}"):
        toolmend.ToolCallAccumulator(max_depth=CEILING + 1)


def test_text_call_parser_refuses_max_depth_over_the_ceiling() -> None:
    with pytest.raises(ValueError, match=f"ceiling of {CEILING}"):
        toolmend.TextCallParser(max_depth=CEILING + 1)


def test_binding_parse_response_refuses_max_depth_over_the_ceiling() -> None:
    with pytest.raises(ValueError, match=f"ceiling of {CEILING}"):
        _core.parse_response(b"{}", max_depth=CEILING + 1)


def test_repair_and_loads_take_any_depth() -> None:
    # Repair keeps its own stack and returns text; loads builds at most LOADS_MAX_DEPTH levels anyway.
    deep = 20 * CEILING
    assert toolmend.repair("[" * deep, max_depth=deep).json == "[" * deep + "]" * deep
    levels = toolmend.LOADS_MAX_DEPTH
    value = toolmend.loads("[" * levels + "]" * levels, max_depth=deep)
    for _ in range(levels - 1):
        value = value[0]
    assert value == []


# ---- deep input: a coded error, never a crash ------------------------------------------------------------
# Each case runs in a fresh interpreter, on its main thread and on a thread with a 2 MB stack (a common
# size for worker threads), so that a stack overflow fails the test instead of killing pytest.

DEEP = 20_000

PRELUDE = f"""
import threading, sys
import toolmend
DEEP, CEILING = {DEEP}, toolmend.MAX_DEPTH_CEILING

def nested_dict(levels, leaf=None):
    root = inner = {{}}
    for _ in range(levels - 1):
        inner["a"] = {{}}
        inner = inner["a"]
    if leaf is not None:
        inner["a"] = leaf
    return root

def nested_list(levels):
    root = inner = []
    for _ in range(levels - 1):
        inner.append([])
        inner = inner[0]
    return root

def registry(schema={{"type": "object"}}):
    reg = toolmend.ToolRegistry(max_depth=CEILING)
    reg.register("t", schema)
    return reg

def codes(result):
    return [e.code for e in result.errors]
"""


def run_isolated(body: str, stack_kb: int | None) -> list[str]:
    """Runs `body` (which prints its findings) in a new interpreter; a crash fails the test."""
    script = PRELUDE + "def main():\n" + textwrap.indent(textwrap.dedent(body), "    ") + "\n"
    if stack_kb is None:
        script += "main()\n"
    else:
        script += (
            f"threading.stack_size({stack_kb} * 1024)\n"
            "errors = []\n"
            "def guarded():\n"
            "    try:\n        main()\n"
            "    except BaseException as e:\n        errors.append(e)\n"
            "t = threading.Thread(target=guarded)\nt.start()\nt.join()\n"
            "if errors:\n    raise errors[0]\n"
        )
    package = str(Path(toolmend.__file__).parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([package, os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, f"the interpreter ended with {proc.returncode} (negative: a signal)\n{proc.stderr[-3000:]}"
    return proc.stdout.split()


DEEP_CASES = {
    "repair": ('print(toolmend.repair("[" * DEEP, max_depth=CEILING).error.code)', ["TLP-008"]),
    "loads": (
        """
        try:
            toolmend.loads('{"a":' * DEEP + "1" + "}" * DEEP, max_depth=CEILING)
        except toolmend.ParseError as e:
            print(e.code)
        """,
        ["TLP-008"],
    ),
    "try_validate dict": ('r = registry().try_validate("t", nested_dict(DEEP)); print(r.ok, *codes(r))', ["False", "TLP-008"]),
    "try_validate list": ('r = registry().try_validate("t", {"a": nested_list(DEEP)}); print(r.ok, *codes(r))', ["False", "TLP-008"]),
    "try_validate text": (
        """
        r = registry().try_validate("t", '{"a":' * DEEP + "1" + "}" * DEEP)
        print(r.ok, *codes(r))
        """,
        ["False", "TLP-008"],
    ),
    "validate dict": (
        """
        try:
            registry().validate("t", nested_dict(DEEP))
        except toolmend.ValidationError as e:
            print(*[f.code for f in e.errors])
        """,
        ["TLP-008"],
    ),
    "parse_response dict": (
        """
        call = {"function": {"name": "t", "arguments": nested_dict(DEEP)}}
        for reg in (None, registry()):
            r = toolmend.parse_response({"message": {"tool_calls": [call]}}, reg, max_depth=CEILING)
            print(r.ok, *codes(r))
        """,
        ["False", "TLP-008", "False", "TLP-008"],
    ),
    "parse_response text": (
        """
        call = {"function": {"name": "t", "arguments": '{"a":' * DEEP + "1" + "}" * DEEP}}
        r = toolmend.parse_response({"message": {"tool_calls": [call]}}, registry(), max_depth=CEILING)
        print(r.ok, *codes(r))
        """,
        ["False", "TLP-008"],
    ),
    "accumulator Ollama dict": (
        """
        for reg in (None, registry()):
            acc = toolmend.ToolCallAccumulator(reg, max_depth=CEILING)
            call = {"function": {"name": "t", "arguments": nested_dict(DEEP)}}
            acc.feed({"message": {"role": "assistant", "tool_calls": [call]}, "done": False})
            acc.feed({"message": {"role": "assistant", "content": ""}, "done": True})
            r = acc.finish()
            print(r.ok, *codes(r))
        """,
        ["False", "TLP-008", "False", "TLP-008"],
    ),
    "accumulator OpenAI text": (
        """
        acc = toolmend.ToolCallAccumulator(registry(), max_depth=CEILING)
        text = '{"a":' * DEEP + "1" + "}" * DEEP
        for start in range(0, len(text), 4096):
            call = {"index": 0, "id": "c1", "function": {"arguments": text[start:start + 4096]}}
            if start == 0:
                call["function"]["name"] = "t"
            acc.feed({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]})
        r = acc.finish()
        print(r.ok, *codes(r))
        """,
        ["False", "TLP-008"],
    ),
}


@pytest.mark.parametrize("stack_kb", [None, 2048], ids=["main thread", "2 MB thread"])
@pytest.mark.parametrize("case", list(DEEP_CASES))
def test_input_far_deeper_than_the_ceiling_is_a_coded_error(case: str, stack_kb: int | None) -> None:
    body, expected = DEEP_CASES[case]
    assert run_isolated(body, stack_kb) == expected


def test_validation_recursing_at_the_ceiling_fits_a_2_mb_stack() -> None:
    # A schema that refers to itself makes validation recurse once per level of the value: the deepest
    # recursion a registry allows, here at max_depth = ceiling, with a valid and an invalid value.
    body = """
    reg = registry({"type": "object", "properties": {"a": {"$ref": "#"}}})
    print(reg.try_validate("t", nested_dict(CEILING)).ok)
    r = reg.try_validate("t", nested_dict(CEILING - 1, leaf=1))
    print(r.ok, *codes(r))
    call = {"function": {"name": "t", "arguments": nested_dict(CEILING - 1, leaf=1)}}
    r = toolmend.parse_response({"message": {"tool_calls": [call]}}, reg, max_depth=CEILING)
    print(r.ok, *codes(r))
    """
    assert run_isolated(body, 2048) == ["True", "False", "TSR-004", "False", "TSR-004"]


# ---- the walk over Python values: the same answers at every depth ------------------------------------------
# Shallow values are walked by recursion, deeper ones on an explicit stack; these compare both regimes.


def _path_to(levels: int, leaf: object) -> tuple[object, str]:
    """A value `levels` containers deep (dicts and lists in turn, keys needing escapes) ending in `leaf`,
    and the JSON Pointer of the leaf."""
    value: object = leaf
    pointer = ""
    for level in reversed(range(levels)):
        if level % 2:
            value = [0, value]
            pointer = "/1" + pointer
        else:
            value = {"x": 1, f"k~/{level}": value}
            pointer = f"/k~0~1{level}" + pointer
    return value, pointer


@pytest.mark.parametrize("levels", [3, 15, 16, 17, 40, 120])
def test_errors_point_at_the_value_at_any_depth(levels: int) -> None:
    registry = toolmend.ToolRegistry(max_depth=CEILING)
    registry.register("t", {"type": "object"})
    nodes = {"type": ["integer", "array", "object"], "items": {"$ref": "#/$defs/v"}, "additionalProperties": {"$ref": "#/$defs/v"}}
    registry.register("typed", {"$defs": {"v": nodes}, "$ref": "#/$defs/v", "type": "object"})
    value, pointer = _path_to(levels, {1, 2})
    (error,) = registry.try_validate("t", value).errors
    assert (error.code, error.path) == ("TSR-002", pointer)
    value, pointer = _path_to(levels, {3: "key that is not a str"})
    (error,) = registry.try_validate("t", value).errors
    assert (error.code, error.path) == ("TSR-002", pointer)
    value, pointer = _path_to(levels, [[[]]])
    shallow = toolmend.ToolRegistry(max_depth=levels + 2)
    shallow.register("t", {"type": "object"})
    (error,) = shallow.try_validate("t", value).errors
    assert (error.code, error.path) == ("TLP-008", pointer + "/0/0")
    # Valid, and built into serde values for the schema: the same value comes back.
    value, _ = _path_to(levels, 7)
    result = registry.try_validate("typed", value)
    assert result.ok and result.value == value
    value, pointer = _path_to(levels, "not an integer")
    (error,) = registry.try_validate("typed", value).errors
    assert (error.code, error.path) == ("TSR-004", pointer)


@pytest.mark.parametrize("levels", [10, 40])
def test_size_is_counted_the_same_at_any_depth(levels: int) -> None:
    value, _ = _path_to(levels, "x" * 50)
    registry = toolmend.ToolRegistry()
    registry.register("t", {"type": "object"})
    sized = [toolmend.ToolRegistry(max_size=n, max_depth=CEILING) for n in range(1, 2000)]
    for r in sized:
        r.register("t", {"type": "object"})
    fits = [r.try_validate("t", value).ok for r in sized]
    smallest = fits.index(True) + 1
    assert all(fits[smallest - 1 :]) and not any(fits[: smallest - 1])
    assert [e.code for e in sized[smallest - 2].try_validate("t", value).errors] == ["TLP-007"]
    # Every level costs the same bytes (a key or an item, brackets), so the budget grows linearly.
    assert smallest > 50 + levels


def test_ollama_arguments_deeper_than_orjson_writes_are_read_under_the_limits() -> None:
    # orjson writes at most 255 levels; deeper dict arguments are written by the binding itself.
    leaf = {"s": 'quote " backslash \\ é \u2028 \n', "f": 1.5, "i": -3, "big": 2**63, "t": True, "n": None, "l": [1, [2.0]]}
    levels = 300
    arguments, _ = _path_to(levels, leaf)
    acc = toolmend.ToolCallAccumulator(max_depth=CEILING)
    acc.feed({"message": {"role": "assistant", "tool_calls": [{"function": {"name": "t", "arguments": arguments}}]}, "done": True})
    (call,) = acc.finish().calls
    assert call.arguments == arguments
    assert json.loads(call.raw_arguments) == arguments
    assert call.raw_arguments == json.dumps(arguments, separators=(",", ":"), ensure_ascii=False)
    shallow = toolmend.ToolCallAccumulator(max_depth=levels)
    shallow.feed({"message": {"role": "assistant", "tool_calls": [{"function": {"name": "t", "arguments": arguments}}]}, "done": True})
    assert [e.code for e in shallow.finish().errors] == ["TLP-008"]
    # Values JSON cannot write are still refused as orjson refuses them.
    odd, _ = _path_to(levels, {"x": object()})
    with pytest.raises(TypeError):
        toolmend.ToolCallAccumulator(max_depth=CEILING).feed({"message": {"tool_calls": [{"function": {"name": "t", "arguments": odd}}]}})


def _nesting(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_nesting, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_nesting, value), default=0)
    return 0


_json_values = st.recursive(
    st.none()
    | st.integers()
    | st.text(alphabet="[]{}\"\\ab", max_size=6),
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(
        st.text(alphabet="[{ab", max_size=3), children, max_size=3
    ),
    max_leaves=40,
)


@given(value=_json_values, limit=st.integers(1, 8))
def test_loads_of_valid_json_is_refused_exactly_past_the_depth_limit(value: object, limit: int) -> None:
    # Valid text takes the fast parse; its depth is checked on the objects it built, and brackets
    # inside strings never count.
    text = json.dumps(value)
    if _nesting(value) > limit:
        with pytest.raises(toolmend.ParseError) as refused:
            toolmend.loads(text, max_depth=limit)
        assert refused.value.code == "TLP-008"
    else:
        assert toolmend.loads(text, max_depth=limit) == value


_OVERSIZE_SCRIPT = """
import resource, sys, toolmend
n = 50_000_000
text = ("\\u00e9" * n) if sys.argv[1] == "str" else bytearray(b"[" + b"1," * (n // 2) + b"1]")
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
codes = [toolmend.repair(text).error.code]
try:
    toolmend.loads(text)
except toolmend.ParseError as e:
    codes.append(e.code)
registry = toolmend.ToolRegistry()
registry.register("f", {"type": "object"})
codes.append(registry.try_validate("f", text).errors[0].code)
if isinstance(text, str):
    reply = {"message": {"tool_calls": [{"function": {"name": "f", "arguments": text}}]}}
    codes.append(toolmend.parse_response(reply).errors[0].code)
growth = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024
print(growth / len(text), *codes)
"""


@pytest.mark.parametrize("kind", ["str", "bytearray"])
def test_text_over_the_size_limit_is_refused_without_being_copied(kind: str) -> None:
    # A 100 MB UTF-8 text (a 50M-character non-ASCII str, or a bytearray) against the 1 MiB
    # default: the size is known without a copy, so the peak memory barely moves.
    run = subprocess.run(
        [sys.executable, "-c", _OVERSIZE_SCRIPT, kind], capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr
    growth, *codes = run.stdout.split()
    assert set(codes) == {"TLP-007"}
    assert float(growth) < 0.5, f"peak memory grew by {float(growth):.2f}x the input"


# ---- arguments handed in as values ---------------------------------------------------------------


class _Dict(dict):  # type: ignore[type-arg]
    """A dict subclass: the quick limits pass reads exact builtin types only and hands the rest
    to the walk over owned references."""


class _Int(int):
    pass


_argument_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.builds(_Int, st.integers(-5, 5))
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=6)
    | st.sampled_from(["\ud800", "é" * 5]),
    lambda children: st.lists(children, max_size=3)
    | st.lists(children, max_size=3).map(tuple)
    | st.dictionaries(st.text(max_size=3), children, max_size=3)
    | st.dictionaries(st.text(max_size=3), children, max_size=3).map(_Dict),
    max_leaves=30,
)


def _outcome(registry: toolmend.ToolRegistry, args: dict[str, object]) -> object:
    result = registry.try_validate("f", args)
    return result.ok or [(e.code, e.path) for e in result.errors]


@given(
    args=st.dictionaries(st.text(max_size=3), _argument_values, max_size=4),
    max_size=st.integers(1, 200),
    max_depth=st.integers(1, 6),
)
def test_the_quick_limits_pass_agrees_with_the_walk(args: dict[str, object], max_size: int, max_depth: int) -> None:
    # The same arguments under a dict subclass skip the quick pass over borrowed references:
    # whatever the values, both readings accept or refuse alike, at the same place.
    registry = toolmend.ToolRegistry(max_size=max_size, max_depth=max_depth)
    registry.register("f", {"type": "object"})
    snapshot = repr(args)
    assert _outcome(registry, args) == _outcome(registry, _Dict(args))
    assert repr(args) == snapshot
