"""toolmend.repair and toolmend.loads: the Python surface of the repair engine."""

from __future__ import annotations

import json
import logging

import pytest

import toolmend
from toolmend import ParseError, Repair, RepairError

# The reference cases of the repair rules, with exact outputs and repair kinds.
REFERENCE_CASES = [
    ('{"path": "test.txt",}', '{"path": "test.txt"}', ["trailing_comma"]),
    ('{"items": [1, 2, 3,]}', '{"items": [1, 2, 3]}', ["trailing_comma"]),
    ('{"path": "test.txt"', '{"path": "test.txt"}', ["missing_closing_brace"]),
    (
        '{"outer": {"inner": {"deep": "value"}',
        '{"outer": {"inner": {"deep": "value"}}}',
        ["missing_closing_brace", "missing_closing_brace"],
    ),
    ('{"items": [1, 2, 3}', '{"items": [1, 2, 3]}', ["missing_closing_bracket"]),
    (
        '{"message": "He said "hello" to me"}',
        '{"message": "He said \\"hello\\" to me"}',
        ["unescaped_quotes", "unescaped_quotes"],
    ),
    (
        '{"content": "Hello, this is a test',
        '{"content": "Hello, this is a test"}',
        ["truncated_string", "missing_closing_brace"],
    ),
    (
        '{path: "test.txt", content: "hello"}',
        '{"path": "test.txt", "content": "hello"}',
        ["unquoted_key", "unquoted_key"],
    ),
    ("{'path': 'test.txt'}", '{"path": "test.txt"}', ["single_quotes", "single_quotes"]),
    ("{path: 'test.txt',}", '{"path": "test.txt"}', ["unquoted_key", "single_quotes", "trailing_comma"]),
]


@pytest.mark.parametrize(("broken", "expected", "kinds"), REFERENCE_CASES)
def test_reference_cases_are_repaired_exactly(broken: str, expected: str, kinds: list[str]) -> None:
    result = toolmend.repair(broken)
    assert result.ok and result.repaired
    assert result.json == expected
    assert [r.kind for r in result.repairs] == kinds
    assert result.original is broken
    assert result.error is None


def test_repair_values_compare_hash_and_refuse_unknown_kinds() -> None:
    assert Repair("trailing_comma", 3) == Repair("trailing_comma", 3) != Repair("trailing_comma", 4)
    assert len({Repair("comment", 1), Repair("comment", 1)}) == 1
    assert repr(Repair("comment", 1)) == "Repair(kind='comment', position=1)"
    with pytest.raises(ValueError, match="unknown repair kind"):
        Repair("not_a_kind", 0)


def test_repairs_carry_byte_positions() -> None:
    result = toolmend.repair('{"path": "test.txt",}')
    assert result.repairs == [Repair("trailing_comma", 19)]
    # Positions count UTF-8 bytes, so text before the fault that is not ASCII shifts them.
    assert toolmend.repair('{"é": 1,}').repairs == [Repair("trailing_comma", 8)]


def test_valid_json_comes_back_as_the_same_object() -> None:
    text = '{"path": "test.txt", "content": "hello world"}'
    result = toolmend.repair(text)
    assert (result.ok, result.repaired, result.repairs, result.error) == (True, False, [], None)
    assert result.json is text and result.original is text
    assert repr(result).startswith("RepairResult(ok=True, json='{\"path\"")


def test_bytes_and_bytearray_inputs_are_accepted_and_left_untouched() -> None:
    data = bytearray(b"{'a': 1,}")
    result = toolmend.repair(data)
    assert result.json == '{"a": 1}'
    assert data == bytearray(b"{'a': 1,}")
    assert result.original is data
    assert toolmend.repair(b'{"a": 1}').json == '{"a": 1}'


def test_other_input_types_are_a_type_error() -> None:
    with pytest.raises(TypeError, match="expected str, bytes or bytearray, got int"):
        toolmend.repair(42)  # type: ignore[arg-type]


def test_invalid_utf8_and_lone_surrogates_are_replaced() -> None:
    result = toolmend.repair(b'{"a": "\xff"}')
    assert json.loads(result.json) == {"a": "\ufffd"}
    assert result.repairs == [Repair("invalid_utf8", 7)]
    surrogate = toolmend.repair('{"a": "\ud800"}')
    assert surrogate.ok and "invalid_utf8" in [r.kind for r in surrogate.repairs]


def test_unrepairable_text_gets_a_coded_error_with_position_and_expectation() -> None:
    result = toolmend.repair("I cannot call that tool.")
    assert not result.ok and result.json is None
    assert result.error == RepairError(
        "TLP-004",
        "expected a JSON value (an object, array, string, number, true, false or null) at byte 0, found 'I'",
        0,
        "send one JSON object with double-quoted keys and strings",
    )
    with pytest.raises(ParseError) as excinfo:
        result.raise_for_error()
    assert excinfo.value.code == "TLP-004"
    mended = toolmend.repair("{'a': 1,}")
    assert mended.raise_for_error() is mended


def test_size_limit_is_tlp_007_before_any_work() -> None:
    result = toolmend.repair('{"a": "' + "x" * 100 + '"}', max_size=50)
    assert result.error is not None
    assert (result.error.code, result.error.position) == ("TLP-007", 0)
    assert "over the size limit of 50 bytes" in result.error.message


def test_depth_limit_is_tlp_008() -> None:
    assert toolmend.repair("[" * 64 + "]" * 64).ok
    result = toolmend.repair("[" * 65 + "]" * 65)
    assert result.error is not None and result.error.code == "TLP-008"
    assert "depth limit of 64" in result.error.message
    assert toolmend.repair("[" * 65, max_depth=100).json == "[" * 65 + "]" * 65


@pytest.mark.parametrize("broken", [False, True])
def test_loads_builds_python_objects_up_to_its_own_depth(broken: bool) -> None:
    deepest = toolmend.LOADS_MAX_DEPTH
    close = "" if broken else "]"
    nested = toolmend.loads("[" * deepest + close * deepest, max_depth=10 * deepest)
    for _ in range(deepest - 1):
        nested = nested[0]
    assert nested == []
    with pytest.raises(toolmend.ParseError) as excinfo:
        toolmend.loads("[" * (deepest + 1) + close * (deepest + 1), max_depth=10 * deepest)
    assert excinfo.value.code == "TLP-008"
    assert toolmend.repair("[" * (deepest + 1), max_depth=10 * deepest).ok


def test_ten_thousand_braces_fail_on_depth_or_finish_inside_the_deadline() -> None:
    # 10,000 '{' and 9,999 '}' with a 10 ms deadline: refused on depth by default; with the depth
    # limit lifted the linear engine finishes inside the deadline (no timeout).
    text = "{" * 10_000 + "}" * 9_999
    refused = toolmend.repair(text, timeout_ms=10)
    assert refused.error is not None and refused.error.code == "TLP-008"
    assert "depth" in refused.error.message
    lifted = toolmend.repair(text, timeout_ms=10, max_depth=20_000)
    assert lifted.ok and lifted.json == "{}"


def test_deadline_is_tlp_008_with_timeout_in_the_message() -> None:
    text = "[1 " * 2_000_000  # 6 MB of missing commas: far more than 1 ms of work on any machine
    result = toolmend.repair(text, max_size=len(text), max_depth=len(text), timeout_ms=1)
    assert result.error is not None and result.error.code == "TLP-008"
    assert "timeout" in result.error.message


def test_loads_returns_python_objects() -> None:
    assert toolmend.loads("{path: 'a.txt', n: [1, 2.5, True, None],}") == {"path": "a.txt", "n": [1, 2.5, True, None]}
    assert toolmend.loads(b'{"a": 1}') == {"a": 1}
    assert toolmend.loads('"caf\\u00e9"') == "café"


def test_loads_raises_parse_error_with_fields() -> None:
    with pytest.raises(ParseError) as excinfo:
        toolmend.loads("")
    err = excinfo.value
    assert isinstance(err, ValueError) and isinstance(err, toolmend.ToolmendError)
    assert (err.code, err.position) == ("TLP-004", 0)
    assert "found end of input" in err.message
    assert err.errors() == [
        {"code": "TLP-004", "message": err.message, "position": 0, "suggestion": err.suggestion}
    ]
    assert str(err).startswith("TLP-004: expected a JSON value")


def test_loads_enforces_the_limits_on_valid_input_too() -> None:
    with pytest.raises(ParseError) as excinfo:
        toolmend.loads("[" * 10 + "]" * 10, max_depth=5)
    assert excinfo.value.code == "TLP-008"
    with pytest.raises(ParseError) as excinfo:
        toolmend.loads('{"a": "' + "x" * 100 + '"}', max_size=50)
    assert excinfo.value.code == "TLP-007"
    # More brackets than the limit, but not nested that deep: accepted.
    assert toolmend.loads("[" + "[1]," * 100 + "[2]]", max_depth=2)[-1] == [2]
    # Brackets inside strings do not count.
    assert toolmend.loads('["' + "[" * 100 + '"]', max_depth=1) == ["[" * 100]


def test_loads_refuses_overflowing_numbers_that_repair_keeps_as_written() -> None:
    # 1e999 is valid JSON text, but no value holds it: json.loads would hand out inf, a number
    # nobody wrote. repair() returns the text as it is; loads() refuses it (see test_numbers.py).
    assert toolmend.repair("[1e999]").json == "[1e999]"
    with pytest.raises(toolmend.ParseError) as refused:
        toolmend.loads("[1e999]")
    assert (refused.value.code, refused.value.position) == ("TLP-004", 1)


def test_loads_gives_the_same_values_on_the_fast_and_the_repair_path() -> None:
    valid = '{"a": [1, 2.5, true, null, "x\\u00e9"], "b": {"c": -3}}'
    assert toolmend.loads(valid) == toolmend.loads(valid.replace("true", "True") + " trailing prose")


def test_argument_values_never_reach_info_logs(caplog: pytest.LogCaptureFixture) -> None:
    secret = "sk-live-SECRET"
    with caplog.at_level(logging.DEBUG, logger="toolmend"):
        toolmend.repair("{'token': '" + secret + "',}")
        toolmend.repair("no json " + secret)
    assert any("single_quotes" in r.getMessage() for r in caplog.records)
    assert all(secret not in r.getMessage() for r in caplog.records)
    assert all(r.levelno < logging.INFO for r in caplog.records)


def test_large_inputs_repair_to_the_same_result_from_several_threads() -> None:
    from concurrent.futures import ThreadPoolExecutor

    text = "{'content': '" + "line of text with a \"quote\"\n" * 20_000 + "',}"
    expected = toolmend.repair(text, max_size=1 << 22).json
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: toolmend.repair(text, max_size=1 << 22).json, range(8)))
    assert results == [expected] * 8
    assert json.loads(expected)["content"].count('"quote"') == 20_000


def test_every_fault_class_of_the_bench_corpus_repairs_to_its_valid_document() -> None:
    from toolmend.bench import corpus

    for case in corpus(sizes={"60B": 60, "2KB": 2_000}, pathological=False):
        result = toolmend.repair(case.text)
        assert result.ok, case.name
        if "truncated" in case.name:
            json.loads(result.json)  # cut off: the tail is lost, but what remains is valid
        else:
            assert json.loads(result.json) == json.loads(case.valid), case.name
            assert result.repaired == (case.text != case.valid), case.name


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # Fences: no line break around the value, a bracket typed before the fence, several blocks.
        ('```json {"a": 1}```', {"a": 1}),
        ('[```json\n{"a": "b"}\n```]', {"a": "b"}),
        ('Call one:\n```json\n{"a": 1}\n```\nand two:\n```json\n{"b": 2}\n```', [{"a": 1}, {"b": 2}]),
        ("Here:\n```python\n(1, 2)\n```", [1, 2]),
        # Several top-level values, one a line; containers glued.
        ("1\n2\n3", [1, 2, 3]),
        ('{"a": "x"}[1, 2]', [{"a": "x"}, [1, 2]]),
        # Python: parentheses around one value, sets of strings.
        ('{"n": (1), "s": ("x"), "t": (1,)}', {"n": 1, "s": "x", "t": [1]}),
        ("{'a', 'b'}", ["a", "b"]),
        # Members in an array with no braces.
        ('{"rows": ["id": 1, "name": "x"]}', {"rows": [{"id": 1, "name": "x"}]}),
        # Invisible characters between tokens; an exponent of nothing.
        ('{"a":\u200b"foo", "b":\ufeff1}', {"a": "foo", "b": 1}),
        ("[-e5]", ["-e5"]),
    ],
)
def test_fences_python_shapes_and_members_in_arrays_read_what_was_meant(text: str, value: object) -> None:
    assert toolmend.loads(text) == value


def test_a_value_with_no_key_is_refused() -> None:
    with pytest.raises(toolmend.ParseError) as e:
        toolmend.loads("{:2}")
    assert e.value.code == "TLP-004"
    assert toolmend.loads("{:}") == {}


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # A quote missing at an element's start or end.
        ('{"tags": ["city" paris", "trip"]}', {"tags": ["city", "paris", "trip"]}),
        ('["a" 2', ["a", 2]),
        ('["hello,"world"]', ["hello", "world"]),
        ('["say "hi" now", "x"]', ['say "hi" now', "x"]),
        # Keys and numbers next to a missing quote.
        ('{path":"a.txt",mode":"w"}', {"path": "a.txt", "mode": "w"}),
        ('{"n": 12345", "w": ab" }', {"n": 12345, "w": "ab"}),
        # Junk after the last member; an array closed early goes on.
        ('{"b": "x" true}', {"b": "x"}),
        ('{"ids": [1], [2, 3], "n": 1}', {"ids": [1, 2, 3], "n": 1}),
        ('{"a": "x"}, "b" "y"}', {"a": "x", "b": "y"}),
        # Arguments encoded twice behind prose or in a fence.
        ('```json\n"{\\"city\\": \\"Paris\\"}"\n```', {"city": "Paris"}),
        ('Here are the arguments: {\\"city\\": \\"Paris\\", \\"days\\": 3}', {"city": "Paris", "days": 3}),
        ('"{\\"city\\": \\"Paris\\"}"', '{"city": "Paris"}'),
    ],
)
def test_missing_quotes_junk_early_closes_and_double_encoding_keep_every_member(text: str, value: object) -> None:
    assert toolmend.loads(text) == value


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("{`path´: `a.txt´}", {"path": "a.txt"}),
        ('[{"id": 1 {"id": 2}]', [{"id": 1}, {"id": 2}]),
        ('[{"id": 1, {"id": 2}]', [{"id": 1}, {"id": 2}]),
        ("{mode “append”}", {"mode": "append"}),
        ('{"a": TRUE, "b": Null}', {"a": True, "b": None}),
        ('{"note": "line one\\\nline two"}', {"note": "line one\nline two"}),
        ('{"path": "a.txt", "', {"path": "a.txt"}),
        ('{"x": "the answer is {"a": "b"}, not a string", "n": 1}', {"x": 'the answer is {"a": "b"}, not a string', "n": 1}),
        ('{"x": "a, {"k": 1}, "y": 2}', {"x": 'a, {"k": 1}', "y": 2}),
    ],
)
def test_backticks_objects_left_open_in_arrays_and_inline_objects_read_what_was_meant(text: str, value: object) -> None:
    assert toolmend.loads(text) == value


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"a": "first, b: 1}', {"a": "first", "b": 1}),
        ('{"msg": "Hello, note: at 5}', {"msg": "Hello, note: at 5"}),
        ('{"path:a.txt}', {"path": "a.txt"}),
        ('{"k": {"a": "x" # note }, "b": 1}', {"k": {"a": "x"}, "b": 1}),
    ],
)
def test_members_held_by_a_string_left_open_or_a_comment_are_kept(text: str, value: object) -> None:
    assert toolmend.loads(text) == value


def test_a_value_cut_off_mid_string_stays_cut() -> None:
    result = toolmend.repair('{"a": "hello, b: 5')
    assert json.loads(result.json) == {"a": "hello, b: 5"}
    assert "truncated_string" in [r.kind for r in result.repairs]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # A pair of quotes kept in a value: its second quote does not end the value.
        ('{"note": "size} "large" please}', {"note": 'size} "large" please'}),
        ('["say "hi" "there"]', ['say "hi" "there']),
        # A word after a value, ending the text, is junk; stuck to a quote it is the text's.
        ('{"path": "a.txt" later', {"path": "a.txt"}),
        ('{"q": "say "hi" and', {"q": 'say "hi" and'}),
        # A typographic quote escaped as if it were `"`.
        ('{"t": "a \\„b\\“ c", "n": 1}', {"t": "a „b“ c", "n": 1}),
        # An opening quote written twice, every quote doubled (CSV), a key's with a space.
        ('{"city": ""Paris", "n": 1}', {"city": "Paris", "n": 1}),
        ("{\"\"tags\"\":[''red'',\"\"blue\"\"]}", {"tags": ["red", "blue"]}),
        ('{"" name":"Ann"}', {" name": "Ann"}),
        ('{"title": ""Dune" by Herbert", "n": 1}', {"title": '"Dune" by Herbert', "n": 1}),
        # An unquoted value whose closing quote comes after commas of its own.
        ('{"who": Ann, Bob, Cy.", "n": 1}', {"who": "Ann, Bob, Cy.", "n": 1}),
        ('{"a": x, b": 1}', {"a": "x", "b": 1}),
        # An element with no quotes after one that ended at its quote.
        ('["step (1)", run step (2), "x"]', ["step (1)", "run step (2)", "x"]),
        ('["He said "stop", then left]', ['He said "stop", then left']),
        # Brackets a bare value opens are its text.
        ("{note: see{the list}, n: 1}", {"note": "see{the list}", "n": 1}),
        # A key holds quotes up to the one its colon follows.
        ('{"user"s id": 7}', {'user"s id': 7}),
    ],
)
def test_quotes_paired_doubled_or_missing_and_bare_text_keep_what_was_meant(text: str, value: object) -> None:
    assert toolmend.loads(text) == value
