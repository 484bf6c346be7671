"""repair_many and loads_many against a loop, on a log of tool calls (release build).

    python benches/batch_report.py [MEGABYTES]      (default 100)

The log is generated: realistic tool-call arguments (paths, code, commands, nested options), a
third of them broken the ways models break them (single quotes, trailing commas, cut off, Python
literals). Each figure is the best of three runs; the machine's load is printed with them.
"""

from __future__ import annotations

import os
import random
import sys
import time

import toolmend


def _record(rng: random.Random, i: int) -> str:
    content = "".join(rng.choice("abcdefghij klmnop\\n\"{}[]") for _ in range(rng.randint(20, 400)))
    args = (
        '{"path": "src/module_%d.py", "content": "%s", "mode": "w", '
        '"options": {"create_dirs": true, "encoding": "utf-8", "tags": [%d, %d, %d]}}'
        % (i, content.replace("\\", "\\\\").replace('"', '\\"'), i, i + 1, i + 2)
    )
    fault = rng.random()
    if fault < 0.1:
        args = args.replace('"', "'")
    elif fault < 0.2:
        args = args[:-2] + ",}}"
    elif fault < 0.3:
        args = args[: rng.randint(10, len(args) - 1)]
    elif fault < 0.35:
        args = args.replace("true", "True")
    return args


def _best(fn: object, runs: int = 3) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    megabytes = float(sys.argv[1]) if len(sys.argv) > 1 else 100.0
    rng = random.Random(7)
    texts: list[str] = []
    size = 0
    while size < megabytes * 1e6:
        texts.append(_record(rng, len(texts)))
        size += len(texts[-1])
    print(f"{len(texts):,} records, {size / 1e6:.0f} MB; {os.cpu_count()} cores; load {os.getloadavg()[0]:.2f}")
    loop = _best(lambda: [toolmend.repair(t) for t in texts])
    print(f"repair loop            {loop:6.2f} s  {size / loop / 1e6:6.0f} MB/s")
    for threads in sorted({1, 2, os.cpu_count() or 1}):
        t = _best(lambda: toolmend.repair_many(texts, threads=threads))
        print(f"repair_many threads={threads:<2} {t:6.2f} s  {size / t / 1e6:6.0f} MB/s  {loop / t:.2f}x the loop")

    def loads_loop() -> list[object]:
        # Keeps what it builds, as loads_many does: a loop that drops its objects skips the
        # garbage collector's work on a growing heap, and would compare unlike work.
        out: list[object] = []
        for text in texts:
            try:
                out.append(toolmend.loads(text))
            except toolmend.ParseError as e:
                out.append(e)
        return out

    loop = _best(loads_loop)
    print(f"loads loop             {loop:6.2f} s")
    for threads in sorted({1, 2, os.cpu_count() or 1}):
        t = _best(lambda: toolmend.loads_many(texts, threads=threads, errors="return"))
        print(f"loads_many threads={threads:<2}  {t:6.2f} s  {loop / t:.2f}x the loop")


if __name__ == "__main__":
    main()
