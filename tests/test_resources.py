"""Threads and memory: threads working at once get identical results, and a megabyte costs a bounded\nmultiple of itself."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading

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


def test_threads_repairing_and_validating_at_once_give_identical_results() -> None:
    # Only results are asserted. Issue 9 also asks that two threads finish faster than one doing the
    # work twice: on the release build they do not reliably (0.83-0.88x for repair alone, no overlap
    # with validation, whose Python objects are built under the GIL), so a timing bound here failed
    # CI. The closing note records it as open.
    registry = toolmend.ToolRegistry(max_size=1 << 21)
    registry.register("write", {"type": "object", "properties": {"path": {"type": "string"}, "records": {"type": "array"}}})
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
