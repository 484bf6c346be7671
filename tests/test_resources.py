"""Threads and memory: threads working at once get identical results, and a megabyte costs a bounded\nmultiple of itself."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import textwrap
import threading
import time
from typing import Callable

import pytest

import toolmend

# ~1 MB of dense, broken records (single quotes, Python literals, trailing commas): the repair pass does
# real work per byte, with the GIL released, while building the result string holds it only briefly.
BIG_BROKEN = "{'path': 'out.txt', 'records': [" + "".join(
    f"{{'id': {i}, 'name': 'item {i}', 'ok': True, 'tags': ['a', 'b',],}}, " for i in range(16_000)
) + "]}"


def _repair_and_validate(text: str, registry: toolmend.ToolRegistry, out: list[object]) -> None:
    # No deadline: on a busy machine the 100 ms default could pass, and this test is about threads.
    result = toolmend.repair(text, max_size=1 << 21, timeout_ms=0)
    out.append((result.json, registry.try_validate("write", result.json).ok))


def _registry() -> toolmend.ToolRegistry:
    registry = toolmend.ToolRegistry(max_size=1 << 21)
    registry.register("write", {"type": "object", "properties": {"path": {"type": "string"}, "records": {"type": "array"}}})
    return registry


def test_threads_repairing_and_validating_at_once_give_identical_results() -> None:
    registry = _registry()
    expected: list[object] = []
    _repair_and_validate(BIG_BROKEN, registry, expected)
    assert expected[0][1] is True  # type: ignore[index]
    for _ in range(3):
        out: list[object] = []
        pool = [threading.Thread(target=_repair_and_validate, args=(BIG_BROKEN, registry, out)) for _ in range(4)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
        assert out == expected * 4


def _twice(work: Callable[[], object], threads: int) -> float:
    """Seconds for two runs of `work`: one after the other, or in two threads at once."""
    t0 = time.perf_counter()
    if threads == 1:
        work()
        work()
    else:
        pool = [threading.Thread(target=work) for _ in range(2)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
    return time.perf_counter() - t0


def test_two_threads_repairing_finish_before_one_doing_it_twice() -> None:
    # The repair pass runs without the GIL, so two threads overlap it. Validation is timed apart
    # and not asserted: its result is the arguments' Python objects, which CPython builds under the
    # GIL (about 9 of the 13 ms a megabyte of records costs to repair and validate), so two threads
    # doing both come to 0.8-1.2x one thread doing both twice, too close to 1 for a test.
    def ours() -> object:
        return toolmend.repair(BIG_BROKEN, max_size=1 << 21, timeout_ms=0)

    # The control: hashing, which CPython runs with the GIL released. If it cannot overlap either,
    # the machine has no idle core right now and nothing can be learnt about the GIL here.
    data = b"x" * (16 << 20)

    def control() -> object:
        return hashlib.sha256(data).digest()

    # A neighbour's burst on a shared machine can take the second core for a whole attempt (seen once
    # in CI: 1.01x while hashing overlapped), so up to three attempts are made; one that overlaps settles it.
    seen = []
    for _ in range(3):
        rounds = [(_twice(ours, 1), _twice(ours, 2), _twice(control, 1), _twice(control, 2)) for _ in range(5)]
        one, two = min(r[0] for r in rounds), min(r[1] for r in rounds)
        control_ratio = min(r[3] for r in rounds) / min(r[2] for r in rounds)
        if control_ratio >= 0.8:
            continue  # no idle core in this attempt: nothing can be learnt about the GIL from it
        # Measured 0.55-0.57 on an idle two-core machine; the bound only asks that two threads be faster.
        if two < one:
            return
        seen.append(f"two threads {two * 1e3:.1f} ms, one thread twice {one * 1e3:.1f} ms")
    if not seen:
        pytest.skip("no idle core to overlap on: even hashing ran at 0.8x or more in two threads")
    pytest.fail("; ".join(seen))


def test_a_megabyte_costs_a_bounded_multiple_of_itself() -> None:
    # Peak RSS of a fresh interpreter, before and after repairing, loading and streaming 1 MiB.
    script = textwrap.dedent(
        """
        import json, resource, toolmend
        text = json.dumps({"content": "x" * (1 << 20)})[:-2]
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        toolmend.repair(text, max_size=1 << 21)
        toolmend.loads(text, max_size=1 << 21)
        acc = toolmend.ToolCallAccumulator(max_size=1 << 21)
        for i in range(0, len(text), 4096):
            acc.feed(toolmend.ToolCallDelta(0, name="w" if i == 0 else None, arguments=text[i:i + 4096]))
        acc.partial(0)
        acc.finish()
        refused = toolmend.repair("[" * (1 << 22), max_size=1 << 20)
        assert refused.error.code == "TLP-007"
        print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base)
        """
    )
    grown_kib = int(subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout)
    # ru_maxrss is in KiB on Linux. The 1 MiB input, its repaired copy, Python's str of it and the
    # stream's buffer and view: a few MiB. 24 MiB is generous and finite.
    assert grown_kib < 24 * 1024, grown_kib



def test_repair_results_stay_out_of_the_cycle_collector() -> None:
    import gc

    class Text(str):
        pass

    # They hold strs, bytes and a RepairError, and the collector could not look inside them anyway
    # (no __traverse__): each collection would visit them for nothing.
    for text in ["{'a': 1,}", b"{'a': 1,}", bytearray(b"[1, 2"), '{"a": 1}', "nothing here", Text("[1,")]:
        result = toolmend.repair(text)
        assert not gc.is_tracked(result), text
        assert result.original is text
    results = toolmend.repair_many(["[1,", b"{}", "oops"])
    assert [r.json for r in results] == ["[1]", "{}", None]
    assert not any(gc.is_tracked(r) for r in results)
    failed = toolmend.repair("x" * 10, max_size=5)
    assert failed.error is not None and not gc.is_tracked(failed.error)
    gc.collect()
    assert failed.error.code == "TLP-007" and results[0].repairs[0].kind == "trailing_comma"
    assert not any(gc.is_tracked(r) for r in results[0].repairs)


def test_results_of_parsing_streaming_and_validation_stay_out_of_the_cycle_collector() -> None:
    import gc

    registry = toolmend.ToolRegistry()
    registry.register("read", {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})
    reply = {"message": {"role": "assistant", "tool_calls": [
        {"function": {"name": "read", "arguments": {"path": "a.txt"}}},
        {"function": {"name": "read", "arguments": {"path": 7}}},
    ]}}
    parsed = toolmend.parse_response(reply, registry)
    assert [c.arguments for c in parsed.calls] == [{"path": "a.txt"}]
    [refused] = parsed.errors
    assert [e.path for e in refused.validation] == ["/path"]
    checked = registry.try_validate("read", {"path": 7})
    assert not checked.ok and checked.errors[0].code == refused.validation[0].code
    acc = toolmend.ToolCallAccumulator()
    events = acc.feed(toolmend.ToolCallDelta(0, name="read", arguments='{"path": "b"}'))
    finished = acc.finish()
    assert finished.calls[0].arguments == {"path": "b"}
    mended = toolmend.parse_response({"message": {"tool_calls": [{"function": {"name": "read", "arguments": "{'path': 'c',}"}}]}})
    assert [r.kind for r in mended.calls[0].repairs] == ["single_quotes", "single_quotes", "trailing_comma"]
    objects = [parsed, *parsed.calls, refused, *refused.validation, checked, *checked.errors, *events, finished,
               *mended.calls[0].repairs]
    assert [type(o).__name__ for o in objects if gc.is_tracked(o)] == []
