"""toolmend.loads of broken input beside fast_json_repair with objects, and beside orjson.loads of the valid twin;
and toolmend.loads of valid input beside orjson.loads.

    python benches/loads_report.py [SIZES]         (release build; SIZES like 10KB,100KB,1MB, the default)
    python benches/loads_report.py valid [SIZES]   (valid documents, str and bytes; 60B to 1MB by default)

For every broken case of the bench corpus (both document families, every fault) at those sizes: the best of
five timings of each, then per size the ratios fast_json_repair / loads (higher: toolmend faster) and
loads / orjson (lower: closer to one strict parse), as min, median and max over the cases. With ``valid``:
each valid document of the corpus, loads / orjson.loads of the same object (str, then bytes).
"""

from __future__ import annotations

import statistics
import sys
import timeit
from typing import Any, Callable

import orjson

import toolmend
from toolmend.bench import ROOMY, corpus

SIZES = {"60B": 60, "500B": 500, "2KB": 2_000, "10KB": 10_000, "100KB": 100_000, "1MB": 1_000_000}


def best(run: Callable[[], Any], budget_s: float = 0.05) -> float:
    once = min(timeit.repeat(run, number=1, repeat=3))
    number = max(1, int(budget_s / max(once, 1e-7)))
    return min(timeit.repeat(run, number=number, repeat=5)) / number


def valid(wanted: list[str]) -> None:
    """loads / orjson.loads on each valid document, str and bytes."""
    print("| document | bytes | orjson.loads (str) | loads / orjson, str | loads / orjson, bytes |")
    print("|---|---:|---:|---:|---:|")
    for case in corpus(sizes={name: SIZES[name] for name in wanted}, pathological=False):
        if not case.name.endswith("-valid"):
            continue
        ratios = []
        # The call a user writes: no keywords unless the document is over the default size limit.
        limits = ROOMY if len(case.valid) > toolmend.DEFAULT_LIMITS["max_size"] else {}
        for text in (case.valid, case.valid.encode()):
            assert toolmend.loads(text, **limits) == orjson.loads(text), case.name
            floor = best(lambda: orjson.loads(text))
            ratios.append((floor, best(lambda: toolmend.loads(text, **limits)) / floor))
        name = case.name.removesuffix("-valid")
        print(f"| {name} | {len(case.valid):,} | {ratios[0][0] * 1e6:.2f} us | {ratios[0][1]:.2f}x | {ratios[1][1]:.2f}x |",
              flush=True)


def main() -> None:
    if sys.argv[1:2] == ["valid"]:
        valid(sys.argv[2].split(",") if len(sys.argv) > 2 else list(SIZES))
        return
    import fast_json_repair

    wanted = sys.argv[1].split(",") if len(sys.argv) > 1 else ["10KB", "100KB", "1MB"]
    sizes = {name: SIZES[name] for name in wanted}
    rows: dict[str, list[tuple[str, float, float]]] = {name: [] for name in sizes}
    for case in corpus(sizes=sizes, pathological=False):
        if case.text == case.valid:
            continue
        assert toolmend.loads(case.text, **ROOMY) == orjson.loads(toolmend.repair(case.text, **ROOMY).json), case.name
        loads = best(lambda: toolmend.loads(case.text, **ROOMY))
        peer = best(lambda: fast_json_repair.repair_json(case.text, return_objects=True))
        floor = best(lambda: orjson.loads(case.valid))
        rows[case.size].append((case.name, peer / loads, loads / floor))
        print(f"{case.name:40} loads {loads * 1e6:9.1f} us  fast_json_repair {peer / loads:4.1f}x  "
              f"orjson(valid twin) {loads / floor:4.1f}x", flush=True)
    print("\n| size | cases | fast_json_repair / loads (min, median, max) | loads / orjson (min, median, max) |")
    print("|---|---:|---:|---:|")
    for size, found in rows.items():
        peer = [r[1] for r in found]
        floor = [r[2] for r in found]
        print(f"| {size} | {len(found)} | {min(peer):.1f}x, {statistics.median(peer):.1f}x, {max(peer):.1f}x "
              f"| {min(floor):.1f}x, {statistics.median(floor):.1f}x, {max(floor):.1f}x |")


if __name__ == "__main__":
    main()
