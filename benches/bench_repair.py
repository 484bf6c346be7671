"""Repair speed, peers side by side on the same inputs (pytest-benchmark).

Full run (release build):  python -m pytest benches --benchmark-only --benchmark-group-by=group
Smoke pass (CI):           python -m pytest benches --benchmark-disable   (each benchmark once)

Each case is its own group, so toolmend, json_repair, fast_json_repair, jsonmend and the
orjson.loads floor on the valid twin appear next to each other in the report.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest

from toolmend.bench import Case, corpus, peers, skip_reason

CASES = corpus()
PEERS = peers()
# Pure-Python peers: on megabyte and pathological inputs one call takes seconds to minutes.
SLOW_PEERS = {"json_repair", "jsonmend"}


def _guarded(fn: Callable[[Case], Any], case: Case) -> Callable[[], Any]:
    def call() -> Any:
        try:
            return fn(case)
        except Exception:  # a peer that cannot handle an input is timed on its failure, as users meet it
            return None

    return call


@pytest.mark.parametrize("peer", list(PEERS))
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_repair_speed(benchmark: Any, case: Case, peer: str) -> None:
    too_big = 10_000 if case.pathological else (200_000 if benchmark.disabled else 2_000_000)
    if peer in SLOW_PEERS and case.nbytes > too_big:
        pytest.skip(f"{peer} takes seconds or more per call at this size")
    if reason := skip_reason(peer, case):
        pytest.skip(reason)
    benchmark.group = case.name
    benchmark.extra_info["bytes"] = case.nbytes
    # toolmend is not guarded: an error from it on the corpus fails the run.
    call = (lambda: PEERS[peer](case)) if peer.startswith("toolmend") else _guarded(PEERS[peer], case)
    benchmark(call)
