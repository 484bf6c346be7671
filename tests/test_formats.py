"""Text formats added to the table: Apertus (`<|tools_prefix|>[{"NAME": {...}}]<|tools_suffix|>`, the name as
the key, per its chat template), read whole and token by token; an object named by its one key is a call only
after a marker, never in prose."""

from __future__ import annotations

import toolmend

APERTUS = 'I will check both.<|tools_prefix|>[{"get_weather": {"city": "Paris", "unit": "celsius"}}, {"get_time": {}}]<|tools_suffix|>'


def test_apertus_calls_are_read_with_their_names_as_keys() -> None:
    result = toolmend.parse_response({"message": {"role": "assistant", "content": APERTUS}})
    assert [(c.name, c.arguments, c.source) for c in result.calls] == [
        ("get_weather", {"city": "Paris", "unit": "celsius"}, "apertus"),
        ("get_time", {}, "apertus"),
    ]
    assert result.text == "I will check both."


def test_apertus_token_by_token_and_broken() -> None:
    parser = toolmend.TextCallParser()
    items = [item for i in range(0, len(APERTUS), 7) for item in parser.feed(APERTUS[i : i + 7])] + parser.flush()
    assert [i.name for i in items if isinstance(i, toolmend.ToolCall)] == ["get_weather", "get_time"]
    broken = "<|tools_prefix|>[{'get_weather': {'city': 'Paris',}}]"
    (call,) = toolmend.parse_response({"message": {"content": broken}}).calls
    assert call.arguments == {"city": "Paris"} and call.repairs


def test_an_object_named_by_its_key_is_no_call_in_prose() -> None:
    result = toolmend.parse_response({"message": {"content": 'The config is {"database": {"host": "x"}}.'}})
    assert result.ok and result.calls == ()


def test_junk_between_mistral_s_marker_and_its_list_is_skipped() -> None:
    call = '[{"name": "get_weather", "arguments": {"city": "Paris"}}]'
    for junk in [" json\n", "```json\n", "\u2581", " \n "]:
        result = toolmend.parse_response({"message": {"content": f"[TOOL_CALLS]{junk}{call}"}})
        assert [(c.name, c.arguments, c.source) for c in result.calls] == [("get_weather", {"city": "Paris"}, "mistral")], junk
    # The named forms of v11+ are not junk.
    for named in ['[TOOL_CALLS]get_weather[ARGS]{"city": ["Paris"]}', '[TOOL_CALLS]get_weather{"city": ["Paris"]}']:
        (one,) = toolmend.parse_response({"message": {"content": named}}).calls
        assert (one.name, one.arguments) == ("get_weather", {"city": ["Paris"]})
