"""Per-chunk cost of the ways to feed a stream, beside one orjson.loads of the final document (the floor).

    python benches/feed_paths.py [SIZE_BYTES]        (release build; 1 MB in 20-byte chunks by default)

Prints ns per chunk and, in brackets, the ratio of the whole stream to the floor: extend_arguments (the lean
path), feed(ToolCallDelta) + partial, feed of an OpenAI chunk dict + partial, with the dicts built ahead
(cold in the cache, as a list of 52,000 parsed chunks is) or one dict refilled in place (hot, as a chunk parsed
just before it is fed), and feed of the raw SSE bytes of each chunk (as read off the socket) + partial.
Two bounds follow, neither of which checks anything: a chunk dict read by hand in Python and its piece
handed to extend_arguments (no partial), and orjson.loads of each raw line (no accumulation at all).
"""

from __future__ import annotations

import gc
import sys
import time
from pathlib import Path
from typing import Any, Callable

import orjson

from toolmend import ToolCallAccumulator, ToolCallDelta

sys.path.insert(0, str(Path(__file__).parent))
from bench_stream import search_results  # noqa: E402

SIZE = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
TEXT = search_results(SIZE)
CHUNKS = [TEXT[i : i + 20] for i in range(0, len(TEXT), 20)]
FIRST = {"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [
    {"index": 0, "id": "call_1", "type": "function", "function": {"name": "search", "arguments": ""}}]}, "finish_reason": None}]}


def chunk(arguments: str) -> dict[str, Any]:
    call = {"index": 0, "function": {"arguments": arguments}}
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}]}


COLD = [chunk(c) for c in CHUNKS]
RAW = [b"data: " + orjson.dumps(c) + b"\n\n" for c in COLD]
RAW_FIRST = b"data: " + orjson.dumps(FIRST) + b"\n\n"
HOT = chunk("")
HOT_FUNCTION = HOT["choices"][0]["delta"]["tool_calls"][0]["function"]


def extend() -> Any:
    acc = ToolCallAccumulator()
    acc.feed(ToolCallDelta(0, name="search"))
    for c in CHUNKS:
        acc.extend_arguments(0, c)
    return acc.finish()


def feed_delta() -> Any:
    acc = ToolCallAccumulator()
    acc.feed(ToolCallDelta(0, name="search"))
    for c in CHUNKS:
        acc.feed(ToolCallDelta(0, arguments=c))
        acc.partial(0)
    return acc.finish()


def feed_each(first: Any, chunks: list[Any]) -> Any:
    """The first chunk, then each of `chunks` with a look at the arguments after it."""
    acc = ToolCallAccumulator()
    acc.feed(first)
    for chunk in chunks:
        acc.feed(chunk)
        acc.partial(0)
    return acc.finish()


def feed_cold() -> Any:
    return feed_each(FIRST, COLD)


def feed_hot() -> Any:
    acc = ToolCallAccumulator()
    acc.feed(FIRST)
    for c in CHUNKS:
        HOT_FUNCTION["arguments"] = c
        acc.feed(HOT)
        acc.partial(0)
    return acc.finish()


def feed_raw() -> Any:
    return feed_each(RAW_FIRST, RAW)


def by_hand_dict() -> Any:
    """What a caller who reads the chunk dict in Python and feeds the lean path pays (a bound
    for feed(chunk dict): the same two steps without any checks)."""
    acc = ToolCallAccumulator()
    acc.feed(ToolCallDelta(0, name="search"))
    for c in COLD:
        acc.extend_arguments(0, c["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"])
    return acc.finish()


def parse_lines() -> Any:
    """orjson.loads of every raw line's JSON, nothing kept: a bound for feed(raw SSE bytes)."""
    for line in RAW:
        orjson.loads(line[6:])
    return None


def best(run: Callable[[], Any], repeats: int = 7) -> float:
    times = []
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    expected = orjson.loads(TEXT)
    for run in (extend, feed_delta, feed_cold, feed_hot, feed_raw, by_hand_dict):
        assert run().calls[0].arguments == expected, run.__name__
    floor = best(lambda: orjson.loads(TEXT), 21)
    print(f"{len(CHUNKS)} chunks; orjson.loads of the final document: {floor * 1e3:.2f} ms")
    for name, run in [("extend_arguments", extend), ("feed(ToolCallDelta) + partial", feed_delta),
                      ("feed(chunk dict, cold) + partial", feed_cold), ("feed(chunk dict, hot) + partial", feed_hot),
                      ("feed(raw SSE bytes) + partial", feed_raw),
                      ("bound: dict read in Python + extend", by_hand_dict),
                      ("bound: orjson.loads of each line", parse_lines)]:
        t = best(run)
        print(f"{name:34} {t / len(CHUNKS) * 1e9:6.0f} ns a chunk ({t / floor:.1f}x)")


if __name__ == "__main__":
    main()
