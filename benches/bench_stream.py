"""Streaming arguments: 20-byte chunks, the partial arguments read after every chunk (pytest-benchmark).

Full run (release build):  python -m pytest benches/bench_stream.py --benchmark-only --benchmark-group-by=group
Smoke pass (CI):           python -m pytest benches --benchmark-disable   (each benchmark once)

Peers on the same chunks, split before timing starts (they arrive from the network): jsonmend.Mender
(incremental, pure Python), jiter and partial-json-parser re-parsing the whole prefix after each chunk
(quadratic, so they sit out the larger sizes), and one orjson.loads of the final document as the floor.
toolmend runs two ways: extend_arguments (append text, get the live arguments back: one call per chunk)
and feed(ToolCallDelta) + partial() (events built for every chunk, then the live arguments).
"""

from __future__ import annotations

import json
from typing import Any, Callable

import pytest

from toolmend import ToolCallAccumulator, ToolCallDelta
from toolmend.bench import optional_module

CHUNK = 20
SIZES = {"10KB": 10_000, "100KB": 100_000, "1MB": 1_000_000}


def search_results(size: int) -> str:
    """Arguments of a tool that returns records: many short values, as a results list streams."""
    items: list[dict[str, Any]] = []
    while 90 * len(items) < size:
        i = len(items)
        items.append({"id": i, "title": f"result number {i}", "score": i * 0.5, "tags": ["a", "b"], "ok": True})
    return json.dumps({"query": "toolmend", "results": items})


DOCUMENTS = {name: search_results(size) for name, size in SIZES.items()}
CHUNKS = {name: [text[i : i + CHUNK] for i in range(0, len(text), CHUNK)] for name, text in DOCUMENTS.items()}


def toolmend_extend(chunks: list[str]) -> Any:
    acc = ToolCallAccumulator(max_size=1 << 22)
    acc.feed(ToolCallDelta(0, name="search"))
    for chunk in chunks:
        acc.extend_arguments(0, chunk)
    return acc.finish().calls[0].arguments


def toolmend_feed_partial(chunks: list[str]) -> Any:
    acc = ToolCallAccumulator(max_size=1 << 22)
    acc.feed(ToolCallDelta(0, name="search"))
    for chunk in chunks:
        acc.feed(ToolCallDelta(0, arguments=chunk))
        acc.partial(0)
    return acc.finish().calls[0].arguments


def prefix_reparse(parse: Callable[[str], Any]) -> Callable[[list[str]], Any]:
    def run(chunks: list[str]) -> Any:
        prefix = ""
        value = None
        for chunk in chunks:
            prefix += chunk
            try:
                value = parse(prefix)
            except Exception:  # a prefix the peer cannot read yet
                pass
        return value

    return run


PEERS: dict[str, Callable[[list[str]], Any]] = {
    "toolmend.extend_arguments": toolmend_extend,
    "toolmend.feed+partial": toolmend_feed_partial,
}
# The floor reads the final document at once (its input is the whole text, not the chunks).
FLOOR = "orjson.loads(final, floor)"
orjson = optional_module("orjson")
if orjson is not None:
    PEERS[FLOOR] = orjson.loads
jsonmend = optional_module("jsonmend")
if jsonmend is not None:

    def jsonmend_stream(chunks: list[str]) -> Any:
        mender = jsonmend.Mender()
        for chunk in chunks:
            mender.feed(chunk)
        return mender.close()

    PEERS["jsonmend.Mender"] = jsonmend_stream
jiter = optional_module("jiter")
if jiter is not None:
    PEERS["jiter(prefix)"] = prefix_reparse(lambda p: jiter.from_json(p.encode(), partial_mode="trailing-strings"))
partial_json_parser = optional_module("partial_json_parser")
if partial_json_parser is not None:
    PEERS["partial_json_parser(prefix)"] = prefix_reparse(partial_json_parser.loads)

# Re-parsing every prefix is quadratic: these peers take minutes to hours on a megabyte.
QUADRATIC = {"jiter(prefix)": 100_000, "partial_json_parser(prefix)": 10_000}


@pytest.mark.parametrize("peer", list(PEERS))
@pytest.mark.parametrize("size", list(SIZES))
def test_stream_speed(benchmark: Any, size: str, peer: str) -> None:
    text = DOCUMENTS[size]
    if len(text) > QUADRATIC.get(peer, 10**9) * 1.1:
        pytest.skip(f"{peer} re-reads the whole prefix per chunk: too slow at this size")
    if benchmark.disabled and len(text) > 110_000:
        pytest.skip("the smoke pass stays quick: 1 MB runs in the full run only")
    benchmark.group = f"stream-{size}"
    benchmark.extra_info["bytes"] = len(text)
    benchmark(PEERS[peer], text if peer == FLOOR else CHUNKS[size])


@pytest.mark.parametrize("size", list(SIZES))
def test_every_peer_ends_with_the_document(size: str) -> None:
    expected = json.loads(DOCUMENTS[size])
    chunks = CHUNKS[size]
    assert toolmend_extend(chunks) == expected
    assert toolmend_feed_partial(chunks) == expected
    if jsonmend is not None and len(chunks) <= 5_000:
        assert PEERS["jsonmend.Mender"](chunks) == expected
