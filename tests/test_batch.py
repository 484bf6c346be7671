"""repair_many, loads_many and `toolmend repair --jsonl`: the same results as a loop, on every core."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolmend

# Text shaped like tool arguments, with the faults models make, and plain noise.
_fragments = st.sampled_from(
    ['{"a": 1', "'b': 'x'", ",", "}", "]", "[1, 2", "true", "None", '"str', "//c\n", "\u00e9", "1e400", "99999999999999999999"]
)
_texts = st.one_of(
    st.lists(_fragments, max_size=8).map("".join),
    st.text(max_size=40),
    st.binary(max_size=40),
)


def _repair_view(r: toolmend.RepairResult) -> Any:
    error = r.error and (r.error.code, r.error.position, r.error.message)
    return (r.ok, r.json, [(x.kind, x.position) for x in r.repairs], error)


def _loads_view(text: Any) -> Any:
    try:
        return ("ok", toolmend.loads(text))
    except toolmend.ParseError as e:
        return ("error", e.code, e.position)


@settings(max_examples=150, deadline=None)
@given(texts=st.lists(_texts, max_size=40), threads=st.sampled_from([None, 1, 2, 3]))
def test_repair_many_is_a_loop_of_repair(texts: list[Any], threads: int | None) -> None:
    many = toolmend.repair_many(texts, threads=threads, max_size=64)
    assert [_repair_view(r) for r in many] == [_repair_view(toolmend.repair(t, max_size=64)) for t in texts]


@settings(max_examples=150, deadline=None)
@given(texts=st.lists(_texts, max_size=40), threads=st.sampled_from([None, 1, 2]))
def test_loads_many_is_a_loop_of_loads(texts: list[Any], threads: int | None) -> None:
    many = toolmend.loads_many(texts, threads=threads, errors="return")
    views = [("error", v.code, v.position) if isinstance(v, toolmend.ParseError) else ("ok", v) for v in many]
    assert views == [_loads_view(t) for t in texts]


def test_loads_many_raises_the_first_failure_like_a_loop() -> None:
    with pytest.raises(toolmend.ParseError) as refused:
        toolmend.loads_many(['{"a": 1}', "nope}", "[1e400]"])
    assert refused.value.position == 0 and "found 'n'" in str(refused.value)
    with pytest.raises(ValueError, match="errors must be"):
        toolmend.loads_many([], errors="ignore")
    with pytest.raises(ValueError, match="threads"):
        toolmend.repair_many([], threads=0)


def test_repair_many_keeps_valid_str_as_the_same_object() -> None:
    text = '{"ok": true}'
    assert toolmend.repair_many([text] * 50)[7].json is text


def test_cli_repair_jsonl_writes_one_record_per_line(tmp_path: Path) -> None:
    source = tmp_path / "calls.jsonl"
    source.write_bytes(b"{'path': 'a.txt',}\n{\"ok\": 1}\nnot json at all}\n[1, 2\r\n")
    out = tmp_path / "out.jsonl"
    run = subprocess.run(
        [sys.executable, "-m", "toolmend.cli", "repair", "--jsonl", str(source), "-o", str(out)],
        capture_output=True, text=True, timeout=120,
    )
    lines = out.read_text().splitlines()
    assert run.returncode == 1 and run.stderr == ""  # one record could not be repaired; no progress off a terminal
    assert json.loads(lines[0]) == {"path": "a.txt"} and json.loads(lines[1]) == {"ok": 1}
    assert json.loads(lines[2])["line"] == 3 and json.loads(lines[2])["error"]["code"] == "TLP-004"
    assert json.loads(lines[3]) == [1, 2]
