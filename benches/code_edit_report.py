"""feed(chunk dict) + partial() on a stream of code-edit records, beside the floor and jsonmend's Mender.

    python benches/code_edit_report.py            (release build: maturin develop --release)
    python benches/code_edit_report.py --quick    (a few KB, one round: the CI smoke pass)

The arguments are one JSON object holding a list of code-edit records (paths, line numbers, floats,
booleans, short strings with escapes and accents, written as UTF-8), streamed as OpenAI chat-completion
chunk dicts of 20-character argument pieces (a little more in bytes, for the accents); the first chunk
carries the call's id and name. The dicts are built before timing starts (they arrive parsed from the
network). Three ways through the same chunks:

- floor: each dict's piece read by hand (``chunk["choices"][0]["delta"]["tool_calls"][0]["function"]
  ["arguments"]``) and kept, then ``orjson.loads`` of the joined text once (nothing is seen until the end);
- toolmend: ``acc.feed(chunk)`` then ``acc.partial(0)`` after every chunk, then ``acc.finish()``;
- jsonmend: the piece read by hand as the floor reads it, then ``Mender.feed(piece)``, which returns the
  value so far (its partial), after every chunk, then ``close()``.

Rounds interleave the three (each round keeps each way's best of three runs), so a neighbour's burst on a
shared machine spoils a round, not a ratio; the ratios are taken within each round. The collector is off
while a way runs, as under timeit. The table gives the median of the rounds and, in brackets, their range.
"""

from __future__ import annotations

import gc
import json
import statistics
import sys
import time
from typing import Any, Callable

import orjson

from toolmend import ToolCallAccumulator

PIECE = 20


def code_edits(size: int) -> str:
    """Arguments of an edit tool: one object whose `edits` list holds records, about `size` UTF-8 bytes."""
    edits: list[dict[str, Any]] = []
    total = 0
    while total < size:
        i = len(edits)
        record = {
            "path": f"src/pkg_{i % 13}/mod_{i}.py",
            "line": 1 + (i * 37) % 4999,
            "column": i % 80,
            "confidence": round(0.5 + (i % 97) / 200, 4),
            "replace_all": i % 3 == 0,
            "old": f'name = "résumé_{i}"\n',
            "new": f'name = "naïve\\{i}"\t# café',
        }
        edits.append(record)
        total += len(json.dumps(record, ensure_ascii=False).encode()) + 2
    return json.dumps({"reason": "rename the módulo's names", "edits": edits}, ensure_ascii=False)


def chunks_of(text: str) -> list[dict[str, Any]]:
    """OpenAI chat-completion stream chunks carrying `text` in 20-character pieces."""

    def chunk(call: dict[str, Any]) -> dict[str, Any]:
        return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
                "choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}]}

    first = chunk({"index": 0, "id": "call_1", "type": "function", "function": {"name": "edit", "arguments": ""}})
    first["choices"][0]["delta"]["role"] = "assistant"
    pieces = [text[at : at + PIECE] for at in range(0, len(text), PIECE)]
    return [first] + [chunk({"index": 0, "function": {"arguments": piece}}) for piece in pieces]


def floor(chunks: list[dict[str, Any]]) -> Any:
    pieces = []
    for chunk in chunks:
        pieces.append(chunk["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"])
    return orjson.loads("".join(pieces))


def toolmend_feed(chunks: list[dict[str, Any]]) -> Any:
    acc = ToolCallAccumulator(max_size=1 << 22)
    for chunk in chunks:
        acc.feed(chunk)
        acc.partial(0)
    return acc.finish().calls[0].arguments


def jsonmend_feed(chunks: list[dict[str, Any]]) -> Any:
    import jsonmend

    mender = jsonmend.Mender()
    for chunk in chunks:
        mender.feed(chunk["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"])
    return mender.close()


WAYS: dict[str, Callable[[list[dict[str, Any]]], Any]] = {
    "floor": floor, "toolmend": toolmend_feed, "jsonmend": jsonmend_feed,
}


def timed(run: Callable[[], Any]) -> float:
    """Seconds of one run with the collector off, as timeit runs (a collection walks every chunk
    dict of the list, whichever way happens to trigger it)."""
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        run()
        return time.perf_counter() - start
    finally:
        gc.enable()


def spread(values: list[float], fmt: Callable[[float], str]) -> str:
    if len(values) == 1:
        return fmt(values[0])
    return f"{fmt(statistics.median(values))} ({fmt(min(values))}-{fmt(max(values))})"


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3g} ms"


def ratio(value: float) -> str:
    return f"{value:.2f}x"


def measure(size: int, rounds: int, tries: int) -> dict[str, list[float]]:
    text = code_edits(size)
    chunks = chunks_of(text)
    expected = json.loads(text)
    for name, way in WAYS.items():
        assert way(chunks) == expected, name
    times: dict[str, list[float]] = {name: [] for name in WAYS}
    for _ in range(rounds):
        for name, way in WAYS.items():
            times[name].append(min(timed(lambda: way(chunks)) for _ in range(tries)))
    times["bytes"] = [len(text.encode())]
    times["chunks"] = [len(chunks)]
    return times


def main(argv: list[str]) -> None:
    quick = "--quick" in argv
    sizes = {"4 KB": 4 << 10} if quick else {"256 KB": 256 << 10, "1 MB": 1 << 20}
    rounds, tries = (1, 1) if quick else (9, 3)
    print(f"{rounds} round(s), each the best of {tries} runs of each way in turn; median (min-max) of the rounds")
    print()
    print("| arguments | chunks | floor (a) | toolmend feed+partial (b) | jsonmend Mender (c) | (b)/(a) | (c)/(b) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, size in sizes.items():
        t = measure(size, rounds, tries)
        a, b, c = t["floor"], t["toolmend"], t["jsonmend"]
        b_over_a = spread([y / x for x, y in zip(a, b)], ratio)
        c_over_b = spread([z / y for y, z in zip(b, c)], ratio)
        print(
            f"| {label} ({t['bytes'][0]:,} B) | {t['chunks'][0]:,} | {spread(a, ms)} | {spread(b, ms)} "
            f"| {spread(c, ms)} | {b_over_a} | {c_over_b} |"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
