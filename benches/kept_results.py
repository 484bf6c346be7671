"""Loops that keep what they get, as an agent's history or a batch does, with the cycle collector on and off.

    python benches/kept_results.py [N]        (release build; 200,000 calls a loop by default)

Every result class leaves the cycle collector when it is made (the collector could never look inside it),
so keeping results should cost about the same with the collector on as off; the gap that remains is what
the kept objects themselves ask of it (argument dicts, tuples).
"""

from __future__ import annotations

import gc
import sys
import time
from typing import Any, Callable

import toolmend

N = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
REPLY = {"message": {"role": "assistant", "content": "", "tool_calls": [
    {"function": {"name": "read_file", "arguments": {"path": "a.txt"}}},
    {"function": {"name": "write_file", "arguments": {"path": "b.txt", "content": "x"}}}]}}
REGISTRY = toolmend.ToolRegistry()
REGISTRY.register("read_file", {"type": "object", "properties": {"path": {"type": "string"}}})


def kept(call: Callable[[], Any]) -> float:
    """ns a call of a loop that appends every result to a list."""
    out = []
    start = time.perf_counter()
    for _ in range(N):
        out.append(call())
    return (time.perf_counter() - start) / N * 1e9


CASES: list[tuple[str, Callable[[], Any]]] = [
    ("parse_response (2 calls)", lambda: toolmend.parse_response(REPLY)),
    ("registry.try_validate", lambda: REGISTRY.try_validate("read_file", {"path": "x"})),
    ("repair (broken)", lambda: toolmend.repair("[1, 2,")),
]


def main() -> None:
    print(f"{'kept in a list':26} {'collector on':>13} {'collector off':>14}")
    for name, call in CASES:
        times = []
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            times.append(min(kept(call) for _ in range(3)))
        gc.enable()
        print(f"{name:26} {times[0]:10.0f} ns {times[1]:11.0f} ns")


if __name__ == "__main__":
    main()
