"""toolmend.loads of records whose floats are big and whole (7.18e+20, 3.2e+19), beside orjson.loads (valid)
and fast_json_repair (broken: Python literals, a cut, a trailing comma). Such a double may also be an integer
past 64 bits that orjson rounded; only the text tells them apart. Before the text was asked (issue 31), every
such document took the exact path (the repair pass, then jiter).

    python benches/big_floats_report.py            (release build: maturin develop --release)

Rounds interleave the four callables and keep each one's best, so a neighbour's burst on a shared machine
spoils a round, not a ratio. ``--small`` writes the same documents with 7.18e-20 (the control: no whole big
double, so only the walk over orjson's objects is paid).
"""

from __future__ import annotations

import json
import random
import sys
import time
from typing import Any, Callable

import fast_json_repair
import orjson

import toolmend

BIG = [1.534e16, 7.18e20, 3.2e19]
SMALL = [1.534e-16, 7.18e-20, 3.2e-19]


def records(n: int, floats: list[float]) -> list[dict[str, Any]]:
    rng = random.Random(1)
    return [
        {
            "id": i,
            "path": f"src/mod_{i}.py",
            "line": rng.randint(1, 5000),
            "score": rng.random(),
            "big": rng.choice(floats),
            "ok": bool(i % 2),
            "note": 'é "q" \\n',
        }
        for i in range(n)
    ]


def best(calls: list[Callable[[], Any]], number: int, rounds: int = 40) -> list[float]:
    out = [float("inf")] * len(calls)
    for _ in range(rounds):
        for j, call in enumerate(calls):
            start = time.perf_counter()
            for _ in range(number):
                call()
            out[j] = min(out[j], (time.perf_counter() - start) / number)
    return out


def main() -> None:
    floats = SMALL if "--small" in sys.argv else BIG
    for size, n, number in (("10KB", 70, 200), ("100KB", 700, 20), ("1MB", 7000, 2)):
        text = json.dumps(records(n, floats))
        broken = text[:-1].replace("true", "True") + ","
        assert toolmend.loads(text) == orjson.loads(text) == toolmend.loads(broken[:-1] + "]")
        strict, loads, mended, peer = best(
            [lambda: orjson.loads(text), lambda: toolmend.loads(text), lambda: toolmend.loads(broken),
             lambda: fast_json_repair.loads(broken)],
            number,
        )
        print(
            f"{size}: valid loads / orjson {loads / strict:.2f}x ({loads * 1e6:.0f} vs {strict * 1e6:.0f} us); "
            f"broken fast_json_repair / loads {peer / mended:.2f}x ({mended * 1e6:.0f} vs {peer * 1e6:.0f} us)"
        )


if __name__ == "__main__":
    main()
