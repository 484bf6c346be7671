"""Threads and memory: threads working at once get identical results, and a megabyte costs a bounded\nmultiple of itself."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap
import threading
import time
from typing import Callable

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


def _python_steps_during(work: Callable[[], object]) -> int:
    """How many steps a pure-Python loop in another thread makes while `work` runs in this one.

    A call that holds the GIL lets the other thread run only at the switch points before and
    after it: a step or two. A call that releases it lets the loop run alongside, on a second
    core or, on one core, in the scheduler's turns."""
    steps = 0
    stop = False
    started = threading.Event()

    def count() -> None:
        nonlocal steps
        started.set()
        while not stop:
            steps += 1

    counter = threading.Thread(target=count)
    counter.start()
    started.wait()
    try:
        time.sleep(0.001)  # let the counter reach its loop
        before = steps
        work()
        return steps - before
    finally:
        stop = True
        counter.join()


def test_the_repair_pass_releases_the_gil_for_a_large_input() -> None:
    # What the release buys in speed is measured by benches/batch_report.py. Timing two threads
    # against one here was noise: a megabyte's repair touches about 8 MB of fresh memory, and
    # whether the allocator hands back pages already faulted in moved one call between 3 and 6 ms,
    # which swamped the overlap. Counting another thread's steps asks the question itself: does
    # Python run while the repair does? 14 MB takes about 60 ms, long enough that even on one core
    # the scheduler gives the other thread its share.
    huge = "{'records': [" + "".join(f"{{'id': {i}, 'ok': True, 'tags': ['a', 'b',],}}, " for i in range(300_000)) + "]}"
    shuffled = random.Random(7).sample(range(500_000), 500_000)
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # the other thread's turns at the switch points stay short
    try:
        released = [_python_steps_during(lambda: toolmend.repair(huge, max_size=1 << 25, timeout_ms=0)) for _ in range(3)]
        # The control: sorting ints is C that holds the GIL throughout (longer than the repair);
        # what the other thread gets is its turns at the switch points around the call.
        held = [_python_steps_during(lambda: sorted(shuffled)) for _ in range(3)]
    finally:
        sys.setswitchinterval(previous)
    # Measured: 300x on two cores, 10x pinned to one.
    assert max(released) > 4 * max(held), (released, held)


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
