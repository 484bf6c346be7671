"""Hostile inputs for repair: text built so that look-aheads re-read the rest of the input.

Quotes inside short comments inside a string left open each ask "does this quote close the
string?", and the answer skips the comments after it; redundant `{}` pairs each look back over
the whitespace written since the last value. Each call must come back within a wall-clock bound,
as a repair or as a TLP-008 timeout. The calls run in a subprocess, so a hang fails the test
instead of stalling the suite.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import toolmend

REPAIR_FAMILIES = {
    "line comments in a string": ('{"a": "', '\n//"', "\nx y}"),
    "line comments in a single-quoted string": ("{\"a\": '", "\n//'", "\nx y}"),
    "block comments in a string": ('{"a": "', '/*"/**/', "\nx y}"),
    "comments after commas in a string": ("['", ",\n//'", "\nx y]"),
    "redundant brace pairs": ('{"a": 1, ', "{} ", "}"),
    # The third round's look-aheads (issue 35): each reads a bounded window.
    "quotes doubled at a string's start": ("[", '""a b c, ', "1]"),
    "unquoted values with commas": ("{", '"k": a, b c, ', '"z": 1}'),
    "elements with no quotes after a quote": ("[", '"a", b c, ', "1]"),
    "quotes inside a key": ("{", '"k"e"y": 1, ', '"z": 1}'),
    "pairs of quotes in a value": ('{"a": "', 'x "y" z ', "}"),
    "brackets in a bare value": ("{", '"a": w{x}[y], ', '"z": 1}'),
}

TIMED_REPAIR = """
import json, sys, time
import toolmend
head, unit, tail, size, timeout_ms = json.loads(sys.argv[1])
text = head + unit * ((size - len(head) - len(tail)) // len(unit)) + tail
start = time.perf_counter()
result = toolmend.repair(text, timeout_ms=timeout_ms)
seconds = time.perf_counter() - start
error = result.error
print(json.dumps({"seconds": seconds, "ok": result.ok, "json_ok": result.ok and bool(json.loads(result.json)),
                  "code": error and error.code, "message": error and error.message}))
"""


def _repair_run_in_subprocess(family: str, size: int, timeout_ms: int) -> dict:
    head, unit, tail = REPAIR_FAMILIES[family]
    args = json.dumps([head, unit, tail, size, timeout_ms])
    # The generous outer bound only keeps a regression from hanging the suite; the call itself
    # is held to a much tighter one below.
    proc = subprocess.run([sys.executable, "-c", TIMED_REPAIR, args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _repair_assert_done_or_timed_out(outcome: dict) -> None:
    if outcome["ok"]:
        assert outcome["json_ok"]
    else:
        assert outcome["code"] == "TLP-008" and "timeout" in outcome["message"], outcome


@pytest.mark.parametrize("family", sorted(REPAIR_FAMILIES))
def test_repair_hostile_input_returns_within_its_deadline(family: str) -> None:
    outcome = _repair_run_in_subprocess(family, 256 << 10, timeout_ms=50)
    assert outcome["seconds"] < 5.0, outcome
    _repair_assert_done_or_timed_out(outcome)


def test_repair_hostile_input_near_the_size_limit_honours_a_one_millisecond_deadline() -> None:
    outcome = _repair_run_in_subprocess("line comments in a string", 800 << 10, timeout_ms=1)
    assert outcome["seconds"] < 5.0, outcome
    _repair_assert_done_or_timed_out(outcome)


def test_repair_quotes_in_comments_inside_an_open_string_stay_in_it() -> None:
    result = toolmend.repair('{"a": "' + '\n//"' * 3 + "\nx y}")
    assert result.ok
    # The words after the string are no key (no colon follows them): dropped, and said so.
    assert json.loads(result.json) == {"a": '\n//"\n//"\n//'}
    assert [r.kind for r in result.repairs].count("unescaped_quotes") == 2
    assert "unexpected_character" in [r.kind for r in result.repairs]
    single = toolmend.repair("{\"a\": '" + "\n//'" * 3 + "\nx y}")
    assert json.loads(single.json) == {"a": "\n//'\n//'\n//"}


def test_repair_redundant_brace_pairs_are_dropped() -> None:
    result = toolmend.repair('{"a": 1, ' + "{} " * 3 + "}")
    assert result.ok and json.loads(result.json) == {"a": 1}
    assert [r.kind for r in result.repairs].count("redundant_brace") == 3


def test_repair_a_lone_surrogate_in_a_str_is_one_replacement_character() -> None:
    # A str may hold lone surrogates (from json.loads of "\ud800", say); each is one character,
    # so it becomes one U+FFFD, and the repair log says invalid UTF-8 was mended.
    result = toolmend.repair('["a\ud800b", "\udfff"]')
    assert result.json == '["a\ufffdb", "\ufffd"]'
    assert [r.kind for r in result.repairs] == ["invalid_utf8"]
    assert toolmend.loads('["a\ud800b",]') == ["a\ufffdb"]


def test_repair_megabytes_of_commas_log_a_thousand_repairs_and_a_summary() -> None:
    # 4 MiB of commas are 4 million repairs: the log keeps the first 1,000, then one record for the rest of
    # their kind, whose count says how many; the repaired text is the same.
    commas = 4 << 20
    result = toolmend.repair("[1" + "," * commas + "2]", max_size=5 << 20, timeout_ms=0)
    assert result.json == "[1,2]"
    assert len(result.repairs) == 1001
    assert all(r.count == 1 for r in result.repairs[:1000])
    summary = result.repairs[1000]
    assert (summary.kind, summary.position, summary.count) == ("extra_comma", 1003, commas - 1 - 1000)
    assert sum(r.count for r in result.repairs) == commas - 1
    assert summary == toolmend.Repair("extra_comma", 1003, commas - 1001) and "count=" in repr(summary)
    # Each kind past the cap is counted on its own, and what closes the text at its end is kept in full.
    mixed = "{'a': [" + "1,, True, " * 2000
    repairs = toolmend.repair(mixed).repairs
    assert len(repairs) < 1000 + len(toolmend.REPAIR_KINDS) + 10
    # Per kind, by where its first repair past the cap was; the one trailing comma is a record of one.
    tail = [(r.kind, r.count) for r in repairs[1000:]]
    assert tail == [("python_literal", 1501), ("extra_comma", 1500), ("trailing_comma", 1),
                    ("missing_closing_bracket", 1), ("missing_closing_brace", 1)]
    assert sum(r.count for r in repairs) == 1 + 2 * 2000 + 1 + 2


def test_repair_a_call_of_a_hostile_size_carries_a_bounded_log() -> None:
    arguments = '{"path": "a", "n": [1' + "," * (1 << 20) + "2]}"
    (call,) = toolmend.check_call("f", arguments, max_size=2 << 20, timeout_ms=0).calls
    assert call.arguments == {"path": "a", "n": [1, 2]}
    assert len(call.repairs) == 1001 and sum(r.count for r in call.repairs) == (1 << 20) - 1
