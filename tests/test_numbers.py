"""One rule for numbers on every path that turns text or objects into arguments.

Integers keep their exact value at any size a double can reach (orjson reads integers past 64 bits
as doubles, so those take the exact path); a number past the range of a double (`1e400`, or an
integer of more than 308 digits) is refused with a code, never read as infinity; a number too
small for a double reads as 0.0, as in every JSON parser.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest

import toolmend
from toolmend import ToolCallAccumulator, ToolCallDelta, ToolRegistry

BIG = 99999999999999999999
EXACT = {
    "99999999999999999999": BIG,
    "-99999999999999999999": -BIG,
    "18446744073709551617": 2**64 + 1,
    "1" + "0" * 300: 10**300,
    "1e-400": 0.0,
    "1e20": 1e20,
}
OUT_OF_RANGE = ["1e400", "-1e400", "1" + "0" * 400]


def _registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register("f", {"type": "object"})
    return registry


def _loads_valid(literal: str) -> Any:
    return toolmend.loads('{"a": ' + literal + "}")["a"]


def _loads_repaired(literal: str) -> Any:
    return toolmend.loads('{"a": ' + literal + ",}")["a"]


def _reply(arguments: Any) -> dict[str, Any]:
    return {"message": {"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": arguments}}]}}


class Refused(Exception):
    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


def _from_result(result: toolmend.ParseResult) -> Any:
    if not result.ok:
        raise Refused(result.errors[0].code)
    return result.calls[0].arguments["a"]


def _parse_text_arguments(literal: str) -> Any:
    return _from_result(toolmend.parse_response(_reply('{"a": ' + literal + "}")))


def _parse_body_bytes(literal: str) -> Any:
    body = '{"message": {"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": {"a": ' + literal + "}}}]}}"
    return _from_result(toolmend.parse_response(body.encode()))


def _parse_with_registry(literal: str) -> Any:
    return _from_result(toolmend.parse_response(_reply('{"a": ' + literal + "}"), _registry()))


def _validate_text(literal: str) -> Any:
    return _registry().validate("f", '{"a": ' + literal + "}")["a"]


def _accumulate(literal: str) -> Any:
    acc = ToolCallAccumulator()
    acc.feed(ToolCallDelta(0, name="f", arguments='{"a": ' + literal + "}", complete=True))
    return _from_result(acc.finish())


ENTRY_POINTS: list[Callable[[str], Any]] = [
    _loads_valid,
    _loads_repaired,
    _parse_text_arguments,
    _parse_body_bytes,
    _parse_with_registry,
    _validate_text,
    _accumulate,
]


@pytest.mark.parametrize("entry", ENTRY_POINTS, ids=lambda f: f.__name__.strip("_"))
@pytest.mark.parametrize("literal", list(EXACT), ids=lambda s: s[:24])
def test_numbers_read_the_same_on_every_path(entry: Callable[[str], Any], literal: str) -> None:
    value = entry(literal)
    assert value == EXACT[literal]
    assert type(value) is type(EXACT[literal])


@pytest.mark.parametrize("entry", ENTRY_POINTS, ids=lambda f: f.__name__.strip("_"))
@pytest.mark.parametrize("literal", OUT_OF_RANGE, ids=lambda s: s[:24])
def test_numbers_past_a_double_are_refused_on_every_path(entry: Callable[[str], Any], literal: str) -> None:
    with pytest.raises((toolmend.ParseError, toolmend.ValidationError, Refused)) as refused:
        entry(literal)
    error = refused.value
    codes = {e.code for e in error.errors} if isinstance(error, toolmend.ValidationError) else {error.code}
    assert codes <= {"TLP-004", "TSR-002"}, codes


def test_the_refusal_of_text_says_where_and_why() -> None:
    with pytest.raises(toolmend.ParseError) as refused:
        toolmend.loads('{"a": 1, "b": -1e400}')
    assert refused.value.code == "TLP-004"
    assert refused.value.position == 14
    assert "out of range" in str(refused.value)


@pytest.mark.parametrize("const", [2**64, -(2**64), 2**80])
def test_dict_arguments_keep_big_integers_exact_in_validation(const: int) -> None:
    # The schema's own numbers are doubles (these three are exact ones); the arguments' integers
    # are compared exactly, so a neighbour of the constant is not taken for it.
    registry = ToolRegistry()
    registry.register("f", {"type": "object", "properties": {"a": {"const": const}}})
    assert registry.validate("f", {"a": const})["a"] == const
    for neighbour in (const - 1, const + 1):
        assert not registry.try_validate("f", {"a": neighbour}).ok
        assert not registry.try_validate("f", '{"a": %d}' % neighbour).ok


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan"), 10**400])
def test_dict_arguments_past_a_double_are_refused(value: Any) -> None:
    result = _registry().try_validate("f", {"a": value})
    assert not result.ok and result.errors[0].code == "TSR-002"
    parsed = toolmend.parse_response(_reply({"a": value}))
    assert not parsed.ok and parsed.errors[0].code == "TSR-002"


def test_a_big_integer_spends_its_digits_from_the_size_limit() -> None:
    registry = ToolRegistry(max_size=100)
    registry.register("f", {"type": "object"})
    result = registry.try_validate("f", {"a": 10**300})
    assert not result.ok and result.errors[0].code == "TLP-007"


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 7.18e+20, "b": 1.534e+16, "c": [3.2e19, -9.5e30]}',
        '{"a": 7.18e+20, "b": 18446744073709551617}',
        '[7.18e+20, "18446744073709551617", 1e-300]',
        '[7.18e+20, 18446744073709551617.5, -18446744073709551617]',
    ],
)
def test_big_floats_written_as_floats_and_wide_integers_read_as_written(text: str) -> None:
    """A whole double from 2^63 on is either a float written so or an integer orjson rounded: the text says
    which, so floats stay floats (and fast) and integers past 64 bits stay exact, whole or mended, on every
    path that builds objects."""
    import json

    expected = json.loads(text)
    for given in (text, text.encode(), text[:-1] + ",]" if text.endswith("]") else text[:-1] + ",}"):
        value = toolmend.loads(given)
        assert value == expected and json.dumps(value) == json.dumps(expected), given
    reply = toolmend.parse_response({"message": {"tool_calls": [{"function": {"name": "f", "arguments": text if text.startswith("{") else '{"v": ' + text + "}"}}]}})
    wanted = expected if text.startswith("{") else {"v": expected}
    assert [c.arguments for c in reply.calls] == [wanted]
