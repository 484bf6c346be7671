"""benches/peer_suites.py reads the peers' test files where they lie: its TS string-literal tokenizer and its
case extraction, held on small samples written here (no peer's case is copied). The benchmark itself runs in
sessions against snapshots of the peers' repositories, never here."""

from __future__ import annotations

import importlib.util
import pathlib
import sys

_PATH = pathlib.Path(__file__).parent.parent / "benches" / "peer_suites.py"
_SPEC = importlib.util.spec_from_file_location("peer_suites", _PATH)
assert _SPEC and _SPEC.loader
peer_suites = importlib.util.module_from_spec(_SPEC)
sys.modules["peer_suites"] = peer_suites  # its dataclasses look their module up
_SPEC.loader.exec_module(peer_suites)

FAIL = peer_suites.FAIL


def _strings(src: str) -> list[object]:
    return [t.value if t.kind == "str" else t.kind for t in peer_suites.ts_tokens(src) if t.kind in ("str", "tmpl")]


def test_ts_string_literals_decode_their_escapes() -> None:
    src = r"""
    const a = 'it\'s' + "say \"hi\"" // a 'comment' with "quotes"
    const b = 'tab\there\nline \x41\u00e9\u{1F600} \ud83d\ude00 back\\slash \/ \q'
    /* 'not a string' */ const c = `plain ${'x'}` + `no interpolation \` here \${x}`
    const d = 'joined \
line'
    const e = '\0'
    """
    assert _strings(src) == [
        "it's",
        'say "hi"',
        "tab\there\nline Aé😀 😀 back\\slash / q",
        "tmpl",
        "no interpolation ` here ${x}",
        "joined line",
        "\0",
    ]


def test_ts_tokenizer_skips_regex_literals_and_keeps_lines() -> None:
    toks = peer_suites.ts_tokens("x.match(/['\"]+/g)\ny = '\"'\n")
    kinds = [(t.kind, t.line) for t in toks if t.kind in ("regex", "str")]
    assert kinds == [("regex", 1), ("str", 2)]


_TS_SAMPLE = r"""
import { expect, test, describe } from 'vitest'

describe.each(impls)('repairer [$name]', ({ jsonrepair }) => {
  describe('mending', () => {
    test('quotes keys', () => {
      expect(jsonrepair("{k: 'v'}")).toBe('{"k": "v"}')
      expect(jsonrepair('{k: 1}')).toEqual(`{"k": 1}`)
      assertRepair('[1, 2]')
    })

    test('joins lines', () => {
      const input =
        '{\n' +
        '  "n": 3,\n' +
        '}'
      const out = jsonrepair(input)
      expect(out).toBe('{\n  "n": 3\n}')
      expect(jsonrepair('[1' + ', 2'), 'a message, no matcher')
    })
  })

  test('refuses', () => {
    expect(() => {
      console.log(jsonrepair('{"q" :'))
    }).toThrow(new RepairError('Value expected', 6))
    expect(() => jsonrepair(`${dynamic}`)).toThrow()
  })

  function assertRepair(text: string) {
    expect(jsonrepair(text)).toBe(text)
  }
})
"""


def test_ts_cases_are_extracted_with_their_family() -> None:
    suite = peer_suites.Suite("jsonrepair", "c0ffee")
    peer_suites.read_ts_file(suite, "src/sample.test.ts", _TS_SAMPLE)
    got = [(c.family, c.text, c.expect) for c in suite.cases]
    assert got == [
        ("mending > quotes keys", "{k: 'v'}", {"k": "v"}),
        ("mending > quotes keys", "{k: 1}", {"k": 1}),
        ("mending > quotes keys", "[1, 2]", [1, 2]),
        ("mending > joins lines", '{\n  "n": 3,\n}', {"n": 3}),
        ("refuses", '{"q" :', FAIL),
    ]
    assert all(c.text_output for c in suite.cases)
    assert sorted(reason for _, reason in suite.skipped) == [
        "expect(…, message) with no matcher",
        "input or expected not a literal",
    ]


_PY_SAMPLE = '''
import pytest
from somewhere import repair_json, loads


def _both(raw, expected):
    assert repair_json(raw, return_objects=True) == expected


def test_text_and_objects():
    assert repair_json("{'a': 1,}") == '{"a": 1}'
    assert repair_json("[1, 2", return_objects=True, skip_json_loads=True) == [1, 2]
    assert loads("{b: null}") == {"b": None}
    assert repair_json("nothing here") == ""
    assert repair_json("{'t': True}", ensure_ascii=False) == '{"t": true}'
    assert repair_json("{}")


@pytest.mark.parametrize(("raw", "expected"), [("[3,]", [3]), pytest.param("{c: 4}", {"c": 4}, id="bare")])
def test_parametrized(raw, expected):
    _both(raw, expected)


def test_bound_names_and_loops():
    raw = '{"d": ' + "5"
    value, logs = repair_json(raw, logging=True)
    assert value == {"d": 5}
    for text in ("[6", "[6,"):
        assert repair_json(text) == "[6]"


def test_options_without_an_equivalent():
    with pytest.raises(ValueError):
        repair_json("[1] [2]", strict=True)
    assert repair_json("{}", schema={"type": "object"}) == "{}"
    assert repair_json('{"e": "x', stream_stable=True) == '{"e": "x"}'
'''


def test_python_cases_are_extracted_from_the_ast() -> None:
    suite = peer_suites.Suite("json_repair", "c0ffee")
    peer_suites.read_python_file(suite, "tests/test_sample.py", _PY_SAMPLE)
    got = [(c.family, c.text, c.expect, c.text_output) for c in suite.cases]
    assert got == [
        ("test_text_and_objects", "{'a': 1,}", {"a": 1}, True),
        ("test_text_and_objects", "[1, 2", [1, 2], False),
        ("test_text_and_objects", "{b: null}", {"b": None}, False),
        ("test_text_and_objects", "nothing here", FAIL, True),
        ("test_text_and_objects", "{'t': True}", {"t": True}, True),
        ("test_parametrized", "[3,]", [3], False),
        ("test_parametrized", "{c: 4}", {"c": 4}, False),
        ("test_bound_names_and_loops", '{"d": 5', {"d": 5}, False),
        ("test_bound_names_and_loops", "[6", [6], True),
        ("test_bound_names_and_loops", "[6,", [6], True),
    ]
    reasons = sorted(reason for _, reason in suite.skipped)
    assert reasons == [
        "asserts no value (truthiness)",
        "schema-guided repair",
        "stream_stable=True (a partial stream read stably)",
        "strict=True (refuse where it would mend)",
    ]


def test_scoring_by_json_value() -> None:
    same = peer_suites.same
    assert same(2, 2.0) and not same(True, 1) and not same(1, True)
    assert same({"a": [1, {"b": None}]}, {"a": [1.0, {"b": None}]})
    assert not same({"a": 1}, {"a": 1, "b": 2})
    assert same(FAIL, FAIL) and same("", FAIL) and not same(None, FAIL) and not same(FAIL, None)
    assert peer_suites.key_missing({"a": 1}, {"a": 1, "b": {"c": 2}})
    assert not peer_suites.key_missing([{"c": 2, "b": 0, "a": 1}], {"a": 1, "b": {"c": 2}})


def test_without_snapshots_it_skips_cleanly(monkeypatch, capsys) -> None:
    for var in peer_suites.ENV.values():
        monkeypatch.delenv(var, raising=False)
    assert peer_suites.main([]) == 0
    assert "nothing measured" in capsys.readouterr().out
