"""The streaming table from a pytest-benchmark JSON file: median per peer and size, the ratio to one
orjson.loads of the final document, and the exponent of time against size (1 is linear).

    python -m pytest benches/bench_stream.py --benchmark-only --benchmark-json=stream.json
    python benches/stream_report.py stream.json
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections import defaultdict

FLOOR = "orjson.loads(final, floor)"


def exponent(points: list[tuple[int, float]]) -> float:
    """Least-squares slope of log(time) against log(bytes)."""
    xs = [math.log(b) for b, _ in points]
    ys = [math.log(t) for _, t in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def duration(seconds: float) -> str:
    for unit, scale in (("s", 1), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds * 1e9:.3g} ns"


def main(path: str) -> None:
    runs = json.load(open(path))["benchmarks"]
    medians: dict[str, dict[str, tuple[int, float]]] = defaultdict(dict)
    for run in runs:
        match = re.fullmatch(r"test_stream_speed\[(\w+)-(.+)\]", run["name"])
        if match:
            size, peer = match.groups()
            medians[peer][size] = (run["extra_info"]["bytes"], run["stats"]["median"])
    sizes = sorted({s for by_size in medians.values() for s in by_size}, key=lambda s: medians[FLOOR][s][0])
    print("| peer | " + " | ".join(sizes) + " | exponent |")
    print("|---|" + "---:|" * (len(sizes) + 1))
    for peer, by_size in medians.items():
        cells = []
        for size in sizes:
            if size not in by_size:
                cells.append("skipped")
                continue
            t = by_size[size][1]
            ratio = t / medians[FLOOR][size][1]
            cells.append(duration(t) if peer == FLOOR else f"{duration(t)} ({ratio:.1f}x)")
        points = sorted(by_size.values())
        slope = f"{exponent(points):.2f}" if len(points) > 1 else "-"
        print(f"| {peer} | " + " | ".join(cells) + f" | {slope} |")


if __name__ == "__main__":
    main(sys.argv[1])
