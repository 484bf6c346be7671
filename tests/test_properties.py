"""Laws of repair over generated inputs (hypothesis)."""

from __future__ import annotations

import json
import sys
import threading

from hypothesis import assume, given, settings
from hypothesis import strategies as st

import toolmend


def strict_loads(text: str) -> object:
    """json.loads without the NaN/Infinity extensions, so that only RFC 8259 JSON passes."""

    def refuse(name: str) -> object:
        raise ValueError(f"non-standard constant {name}")

    return json.loads(text, parse_constant=refuse)


def _past_a_double(value: object) -> bool:
    if isinstance(value, float):
        return value in (float("inf"), float("-inf"))
    if isinstance(value, int) and not isinstance(value, bool):
        return abs(value) > sys.float_info.max
    if isinstance(value, dict):
        return any(_past_a_double(v) for v in value.values())
    return isinstance(value, list) and any(_past_a_double(v) for v in value)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=8), inner, max_size=6),
    max_leaves=40,
)

# Fragments that matter to a JSON grammar, so broken shapes come up often.
jsonish = st.lists(
    st.sampled_from(
        ['{', '}', '[', ']', ',', ':', '"', "'", '\\', ' ', '\n', 'key', '1', '-', '.', 'e', 'true', 'True',
         'None', 'null', '//', '/*', '*/', '#', '```', '\\u', 'd800', '\t', 'é', '“', '99999999999', '+']
    ),
    max_size=50,
).map("".join)

# A generous deadline: these laws are about results, and debug builds on a busy machine are slow.
LIMITS = {"timeout_ms": 1000}


@given(json_values, st.booleans())
def test_valid_json_is_unchanged(value: object, pretty: bool) -> None:
    text = json.dumps(value, indent=2 if pretty else None, ensure_ascii=False)
    result = toolmend.repair(text, max_depth=1000, **LIMITS)
    assert result.json == text and result.repairs == []


@given(jsonish)
@settings(max_examples=500)
def test_output_parses_strictly_and_repair_is_idempotent(text: str) -> None:
    once = toolmend.repair(text, **LIMITS)
    if once.ok:
        assert once.json is not None
        strict_loads(once.json)
        twice = toolmend.repair(once.json, **LIMITS)
        assert twice.json == once.json and twice.repairs == []
        expected = strict_loads(once.json)
        try:
            # repr tells an integer from the double of the same value (orjson reads wide integers as doubles).
            assert repr(toolmend.loads(text, **LIMITS)) == repr(expected)
        except toolmend.ParseError as refused:
            # A number past a double (`1e999`): repair keeps it as written, loads refuses it.
            assert refused.code == "TLP-004" and _past_a_double(expected)
    else:
        assert once.error is not None and once.error.code in {"TLP-004", "TLP-008"}
        assert 0 <= once.error.position <= len(text.encode("utf-8", "surrogatepass"))


@given(st.binary(max_size=300))
@settings(max_examples=500)
def test_any_bytes_give_a_result_or_a_coded_error(data: bytes) -> None:
    result = toolmend.repair(data, **LIMITS)
    assert result.ok == (result.error is None)
    if result.ok:
        assert result.json is not None
        strict_loads(result.json)
    else:
        assert result.error is not None and result.error.code.startswith("TLP-")
        assert result.error.message and result.error.suggestion


# ---- validation is deterministic across threads ----------------------------------------------------

WRITE_FILE = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "pattern": "^[a-z/._-]+$", "maxLength": 32},
        "content": {"type": "string"},
        "mode": {"enum": ["overwrite", "append"]},
        "lines": {"type": "array", "items": {"type": "integer", "minimum": 0}, "maxItems": 4},
    },
    "required": ["path", "content"],
    "additionalProperties": False,
}
arguments = st.dictionaries(
    st.sampled_from(["path", "content", "mode", "lines", "extra"]),
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=40) | st.lists(st.integers(-2, 9), max_size=6),
    max_size=5,
)


def _outcome(registry: toolmend.ToolRegistry, args: object) -> tuple[object, ...]:
    result = registry.try_validate("write_file", args)
    return (result.ok, result.value, tuple((e.path, e.code, e.message, e.expected, e.actual) for e in result.errors))


@settings(max_examples=150, deadline=None)
@given(st.lists(arguments, min_size=1, max_size=8), st.booleans())
def test_validation_is_deterministic_across_threads(batch: list[dict[str, object]], as_text: bool) -> None:
    registry = toolmend.ToolRegistry()
    registry.register("write_file", WRITE_FILE)
    inputs = [json.dumps(a) if as_text else a for a in batch]
    expected = [_outcome(registry, a) for a in inputs]
    seen: list[list[tuple[object, ...]]] = []

    def work() -> None:
        seen.append([_outcome(registry, a) for a in inputs])

    pool = [threading.Thread(target=work) for _ in range(4)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    assert seen == [expected] * 4


# ---- no member dropped (issue 35) ----------------------------------------------------------------

_keys = st.from_regex(r"[a-z][a-z_]{2,7}", fullmatch=True)
_scalars = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.from_regex(r"[A-Za-z][A-Za-z ]{0,10}", fullmatch=True)
_members = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_keys, inner, max_size=3),
    max_leaves=8,
)
_objects = st.dictionaries(_keys, _members, min_size=2, max_size=5)


def _leaf_pairs(value: object, key: str | None = None) -> set[tuple[str | None, str]]:
    """Every scalar with the key it stands under (None in a list), at any depth."""
    if isinstance(value, dict):
        return set().union(*(_leaf_pairs(v, k) for k, v in value.items())) if value else set()
    if isinstance(value, list):
        return set().union(*(_leaf_pairs(v, key) for v in value)) if value else set()
    return {(key, json.dumps(value))}


def _keys_of(value: object) -> list[str]:
    if isinstance(value, dict):
        return [k for k, v in value.items() for k in [k, *_keys_of(v)]]
    if isinstance(value, list):
        return [k for v in value for k in _keys_of(v)]
    return []


def _unique_keys(value: object) -> bool:
    """No key twice at any depth: with a closer gone, `{"l": {"a": 1}, "a": 2}` is a duplicate key, whose
    last value wins, as in every JSON parser."""
    keys = _keys_of(value)
    return len(keys) == len(set(keys))


def _outside_strings(text: str, wanted: str) -> list[int]:
    out, inside, escaped = [], False, False
    for i, c in enumerate(text):
        if inside:
            escaped = not escaped and c == "\\"
            inside = escaped or c != '"'
        elif c == '"':
            inside = True
        elif c in wanted:
            out.append(i)
    return out


@settings(max_examples=300, deadline=None)
@given(_objects, st.data())
def test_deleting_a_closer_keeps_every_member(args: dict[str, object], data: st.DataObject) -> None:
    assume(_unique_keys(args))
    text = json.dumps(args)
    at = data.draw(st.sampled_from(_outside_strings(text, "}]")))
    got = toolmend.loads(text[:at] + text[at + 1 :])
    assert _leaf_pairs(args) <= _leaf_pairs(got), (text[:at] + text[at + 1 :], got)


@settings(max_examples=300, deadline=None)
@given(_objects, st.data(), st.sampled_from(["COMMENT", "SHOULD_NOT_EXIST", "note", "xyz"]))
def test_a_junk_word_between_members_keeps_every_member(args: dict[str, object], data: st.DataObject, word: str) -> None:
    assume(_unique_keys(args))
    text = json.dumps(args)
    at = data.draw(st.sampled_from(_outside_strings(text, ",")))
    broken = text[: at + 1] + f" {word}" + text[at + 1 :]
    got = toolmend.loads(broken)
    assert _leaf_pairs(args) <= _leaf_pairs(got), (broken, got)
