"""Benchmark corpus and the peer table printed by `toolmend bench`.

The corpus is generated, not stored: deterministic (seeded), no network, no files. Each case holds
the broken text and the valid document it stands for, so orjson.loads of the valid twin is the
floor every repair is measured against. benches/bench_repair.py times the same cases under
pytest-benchmark.
"""

from __future__ import annotations

import importlib
import json
import os
import platform
import random
import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable

import toolmend
from toolmend._states import Code

SEED = int(os.environ.get("TOOLMEND_BENCH_SEED", "20261123"))
SIZES = {"60B": 60, "2KB": 2_000, "100KB": 100_000, "1MB": 1_000_000}
PATHOLOGICAL_SIZES = {"10KB": 10_000, "100KB": 100_000, "1MB": 1_000_000}
# Room for the pathological families, which are built to be deep or long.
LIFTED = {"max_size": 1 << 22, "max_depth": 1 << 22, "timeout_ms": 0}
# The "1MB" cases with prose or comments grow past the 1 MiB default; the bench measures speed,
# not the size limit, so every case may be up to 4 MiB.
ROOMY = {"max_size": 1 << 22}


@dataclass(frozen=True)
class Case:
    """One benchmark input: broken text, the valid document it stands for, and where it comes from."""

    name: str
    family: str
    size: str
    text: str
    valid: str
    pathological: bool = False
    # Nests deeper than toolmend.loads builds Python objects (LOADS_MAX_DEPTH); repair() still mends it.
    too_deep_for_python: bool = False

    @property
    def nbytes(self) -> int:
        return len(self.text.encode())


# ---- valid documents ---------------------------------------------------------------------------

_CODE_LINES = [
    'def handler(event, context):',
    '    name = event.get("name", "world")',
    "    path = 'C:\\\\Users\\\\me\\\\notes.txt'",
    '    if not name: raise ValueError("empty {name}")',
    '    return {"status": 200, "body": f"Hello, {name}!"}',
    '',
    '# TODO: handle the "retry" case',
]


def _tool_arguments(rng: random.Random, size: int) -> dict[str, Any]:
    """write_file-like arguments: a few options and one long content string, as models send them."""
    if size <= 100:
        return {"path": "notes/todo.txt", "append": True, "n": rng.randint(1, 9)}
    lines: list[str] = []
    total = 0
    while total < size - 260:
        line = rng.choice(_CODE_LINES)
        lines.append(line)
        total += len(line) + 4
    return {
        "path": f"src/module_{rng.randint(1, 99)}.py",
        "content": "\n".join(lines),
        "mode": "overwrite",
        "create_dirs": True,
        "encoding": "utf-8",
        "tags": ["generated", "python", "handler"],
        "options": {"timeout": 30, "retries": 2, "backup": None, "ratio": 0.75},
    }


def _search_results(rng: random.Random, size: int) -> dict[str, Any]:
    """An object-heavy document: many small records, as a search tool returns them."""
    results = []
    total = 0
    while total < size - 80:
        record = {
            "id": rng.randint(1, 10**6),
            "title": f"Result {len(results)} about parsing",
            "score": round(rng.random(), 4),
            "tags": ["json", "repair"],
            "ok": rng.random() < 0.5,
            "note": None,
        }
        results.append(record)
        total += len(json.dumps(record)) + 2
    return {"query": "json repair", "results": results}


# ---- breaking a document in one fault class ------------------------------------------------------------

def _emit(value: Any, fault: str, out: list[str]) -> None:
    """Writes `value` as JSON into `out`, breaking it the way `fault` names."""
    if isinstance(value, dict):
        out.append("{")
        for i, (k, v) in enumerate(value.items()):
            if i:
                out.append(" " if fault == "missing_comma" else ", ")
            if fault == "unquoted_key":
                out.append(k)
            elif fault == "single_quotes":
                out.append("'" + k + "'")
            else:
                out.append(json.dumps(k))
            out.append(": ")
            _emit(v, fault, out)
        if value and fault == "trailing_comma":
            out.append(",")
        if fault == "comments" and value:
            out.append(" // end of object\n")
        out.append("}")
    elif isinstance(value, list):
        out.append("[")
        for i, v in enumerate(value):
            if i:
                out.append(" " if fault == "missing_comma" else ", ")
            _emit(v, fault, out)
        if value and fault == "trailing_comma":
            out.append(",")
        out.append("]")
    elif isinstance(value, str):
        if fault == "single_quotes" and "'" not in value:
            out.append("'" + json.dumps(value)[1:-1].replace('\\"', '"') + "'")
        elif fault == "raw_newlines":
            out.append(json.dumps(value.replace("\n", "\ue000")).replace("\\ue000", "\n"))
        elif fault == "unescaped_quotes":
            out.append(json.dumps(value).replace('\\"', '"'))
        else:
            out.append(json.dumps(value))
    elif fault == "python_literals" and (value is None or isinstance(value, bool)):
        out.append(repr(value))
    else:
        out.append(json.dumps(value))


FAULTS = [
    "trailing_comma",
    "truncated",
    "single_quotes",
    "unquoted_key",
    "unescaped_quotes",
    "raw_newlines",
    "comments",
    "python_literals",
    "missing_comma",
    "fenced_prose",
]


def _break(value: Any, fault: str) -> str:
    if fault == "truncated":
        text = json.dumps(value)
        return text[: int(len(text) * 0.9)]
    if fault == "fenced_prose":
        return "Sure! Here are the arguments:\n```json\n" + json.dumps(value, indent=2) + "\n```\nLet me know."
    out: list[str] = []
    _emit(value, fault, out)
    return "".join(out)


# ---- pathological families -----------------------------------------------------------------------

PATHOLOGICAL: dict[str, Callable[[int], str]] = {
    "deep_nesting": lambda n: "[" * n,
    "quote_run": lambda n: '{"a": "' + '"' * n,
    "backslash_run": lambda n: '["' + "\\" * n,
    "unclosed_strings": lambda n: '["a, ' * (n // 5),
    "single_quote_apostrophes": lambda n: "{'k': 'it's', " * (n // 14),
    "comma_quote_storm": lambda n: '{"a": "x", "' * (n // 12),
}


def corpus(*, sizes: dict[str, int] | None = None, pathological: bool = True) -> list[Case]:
    """Every benchmark case, in a fixed order; the same seed gives the same bytes."""
    rng = random.Random(SEED)
    cases = []
    for size_name, size in (sizes or SIZES).items():
        for family, make in (("tool_args", _tool_arguments), ("records", _search_results)):
            if family == "records" and size < 1000:
                continue
            value = make(rng, size)
            valid = json.dumps(value)
            cases.append(Case(f"{family}-{size_name}-valid", family, size_name, valid, valid))
            for fault in FAULTS:
                cases.append(Case(f"{family}-{size_name}-{fault}", family, size_name, _break(value, fault), valid))
    if pathological:
        for size_name, size in PATHOLOGICAL_SIZES.items():
            for family, make in PATHOLOGICAL.items():
                text = make(size)
                repaired = toolmend.repair(text, **LIFTED).json or "null"
                deep = _nests_deeper(repaired, toolmend.LOADS_MAX_DEPTH)
                cases.append(Case(f"{family}-{size_name}", family, size_name, text, repaired, True, deep))
    return cases


def _nests_deeper(json_text: str, depth: int) -> bool:
    try:
        toolmend.loads(json_text, max_size=1 << 22, max_depth=depth)
    except toolmend.ParseError as e:
        if e.code == Code.TOO_DEEP_OR_TIMEOUT:
            return True
        raise
    return False


# ---- peers -------------------------------------------------------------------------------------

def limits_for(case: Case) -> dict[str, int]:
    """The limits toolmend runs a case under: lifted for the pathological families, roomy otherwise."""
    return LIFTED if case.pathological else ROOMY


def skip_reason(peer: str, case: Case) -> str | None:
    """Why a peer does not run on a case, or None when it does."""
    if peer == "toolmend.loads" and case.too_deep_for_python:
        return f"loads builds at most {toolmend.LOADS_MAX_DEPTH} levels of Python objects"
    return None


def optional_module(name: str) -> Any:
    """The module, or None when that peer is not installed (a bench leaves it out)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def peers() -> dict[str, Callable[[Case], Any]]:
    """The repair functions measured, by name; peers that are not installed are left out."""
    found: dict[str, Callable[[Case], Any]] = {
        "toolmend.repair": lambda c: toolmend.repair(c.text, **limits_for(c)).raise_for_error().json,
        "toolmend.loads": lambda c: toolmend.loads(c.text, **limits_for(c)),
    }
    for label, module in (("json_repair", "json_repair"), ("fast_json_repair", "fast_json_repair"), ("jsonmend", "jsonmend")):
        try:
            repair_json = importlib.import_module(module).repair_json
        except ImportError:
            continue
        found[label] = lambda c, f=repair_json: f(c.text)
    try:
        import orjson

        found["orjson.loads (valid twin)"] = lambda c: orjson.loads(c.valid)
    except ImportError:
        pass
    return found


def time_call(fn: Callable[[], Any], budget_s: float = 0.2) -> float | None:
    """Median seconds of one call, over as many calls as fit the budget (at least 3); None if it
    raised. A call slower than a second is run once: pathological peers can take minutes."""
    try:
        start = time.perf_counter()
        fn()
        first = time.perf_counter() - start
    except Exception:
        return None
    if first > 1.0:
        return first
    runs = max(3, min(1000, int(budget_s / max(first, 1e-7))))
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def machine() -> str:
    """One line naming the machine, OS, Python and toolmend version, for every table."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return (
        f"{cpu}, {os.cpu_count()} cores; {platform.platform()}; Python {platform.python_version()}; "
        f"toolmend {toolmend.__version__}"
    )


def print_peer_table(quick: bool = False) -> None:
    """Times every installed peer on the corpus and prints a Markdown table with ratios to toolmend.repair."""
    sizes = {"2KB": 2_000, "100KB": 100_000} if quick else SIZES
    cases = corpus(sizes=sizes, pathological=not quick)
    found = peers()
    names = list(found)
    print(f"Machine: {machine()}")
    print("Median time per call; in brackets, the ratio to toolmend.repair (higher is slower); MB/s of toolmend.repair.\n")
    print("| case | bytes | MB/s | " + " | ".join(names) + " |")
    print("|---|---:|---:|" + "---:|" * len(names))
    slow: set[tuple[str, str]] = set()
    for case in cases:
        row: dict[str, float | None] = {}
        for name in names:
            if ((name, case.family) in slow and case.pathological) or skip_reason(name, case):
                row[name] = None
                continue
            t: float | None
            t = row[name] = time_call(lambda: found[name](case), budget_s=0.05 if quick else 0.2)
            # Pathological sizes grow tenfold: a peer over 20 ms here may take seconds (linear) to
            # minutes (quadratic) at the next size, so it sits the rest of the family out.
            if t is not None and t > (0.02 if case.pathological else 1.0):
                slow.add((name, case.family))
        base = row["toolmend.repair"]
        cells = []
        for name in names:
            t = row[name]
            if t is None:
                skipped = (name, case.family) in slow or skip_reason(name, case)
                cells.append("skipped" if skipped else "error")
            else:
                ratio = f" ({t / base:.1f}x)" if base and name != "toolmend.repair" else ""
                cells.append(f"{_fmt(t)}{ratio}")
        mbps = f"{case.nbytes / base / 1e6:.0f}" if base else "-"
        print(f"| {case.name} | {case.nbytes} | {mbps} | " + " | ".join(cells) + " |")


def _fmt(seconds: float) -> str:
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} µs"
