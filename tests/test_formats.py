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


def calls_of(content: str) -> list[tuple[str, object, str]]:
    result = toolmend.parse_response({"message": {"role": "assistant", "content": content}})
    assert result.errors == ()
    return [(c.name, c.arguments, c.source) for c in result.calls]


def streamed(content: str, step: int) -> tuple[list[tuple[str, object]], str]:
    parser = toolmend.TextCallParser()
    items = [i for at in range(0, len(content), step) for i in parser.feed(content[at : at + step])] + parser.flush()
    calls = [(i.name, i.arguments) for i in items if isinstance(i, toolmend.ToolCall)]
    return calls, "".join(i for i in items if isinstance(i, str))


# MiniMax-M2's chat template: one <minimax:tool_call> block, one <invoke> per call.
MINIMAX = (
    "I'll look both up.\n<minimax:tool_call>\n"
    '<invoke name="get_weather">\n<parameter name="city">Paris</parameter>\n<parameter name="days">3</parameter>\n</invoke>\n'
    '<invoke name="search">\n<parameter name="query">rain "tomorrow"</parameter>\n'
    '<parameter name="filters">{"lang": ["fr"]}</parameter>\n</invoke>\n</minimax:tool_call>'
)


def test_minimax_invoke_blocks_are_calls_with_typed_values() -> None:
    assert calls_of(MINIMAX) == [
        ("get_weather", {"city": "Paris", "days": 3}, "minimax"),
        ("search", {"query": 'rain "tomorrow"', "filters": {"lang": ["fr"]}}, "minimax"),
    ]
    for step in (1, 5, 64):
        calls, text = streamed(MINIMAX, step)
        assert calls == [(n, a) for n, a, _ in calls_of(MINIMAX)] and text.strip() == "I'll look both up."


def test_minimax_values_follow_the_schema() -> None:
    reg = toolmend.ToolRegistry()
    reg.register("lookup", {"type": "object", "properties": {"zip": {"type": "string"}, "n": {"type": "integer"}}})
    text = '<minimax:tool_call><invoke name="lookup"><parameter name="zip">02139</parameter><parameter name="n">2</parameter></invoke></minimax:tool_call>'
    (call,) = toolmend.parse_response({"message": {"content": text}}, reg).calls
    assert call.arguments == {"zip": "02139", "n": 2}


# GLM 4.5/4.6's chat template: the name, then <arg_key>/<arg_value> pairs, inside <tool_call>.
GLM = (
    "Checking.<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n"
    "<arg_key>days</arg_key>\n<arg_value>2</arg_value>\n</tool_call>"
)


def test_glm_arg_key_pairs_are_a_call() -> None:
    assert calls_of(GLM) == [("get_weather", {"city": "Beijing", "days": 2}, "hermes")]
    calls, text = streamed(GLM, 3)
    assert calls == [("get_weather", {"city": "Beijing", "days": 2})] and text == "Checking."
    # A JSON body inside <tool_call> is read as before.
    assert calls_of('<tool_call>{"name": "a", "arguments": {"x": "<arg_key>"}}</tool_call>') == [
        ("a", {"x": "<arg_key>"}, "hermes")
    ]


# Functionary v3.2 (llama.cpp's test-chat cases): `>>>NAME\n{...}` per call, `>>>all\n` before text.
FUNCTIONARY = '>>>all\nLet me check.\n>>>get_weather\n{"city": "Paris"}>>>get_time\n{"zone": "UTC"}'


def test_functionary_v32_calls_and_its_text_channel() -> None:
    assert calls_of(FUNCTIONARY) == [
        ("get_weather", {"city": "Paris"}, "functionary_v32"),
        ("get_time", {"zone": "UTC"}, "functionary_v32"),
    ]
    assert toolmend.parse_response({"message": {"content": FUNCTIONARY}}).text == "Let me check."
    for step in (1, 2, 9):
        calls, text = streamed(FUNCTIONARY, step)
        assert calls == [("get_weather", {"city": "Paris"}), ("get_time", {"zone": "UTC"})]
        assert text.strip() == "Let me check."


def test_arrows_that_are_no_call_stay_text() -> None:
    for prose in [
        "x >>> 2 shifts right",
        "A Python session:\n```python\n>>> print(1)\n1\n```",
        ">>> a nested quote",
        ">>>all\n",
        "<b>bold</b> and <i>more</i>",
    ]:
        result = toolmend.parse_response({"message": {"content": prose}})
        assert result.calls == () and result.errors == () and result.quoted == 0, prose
        assert streamed(prose, 1)[0] == []
    assert toolmend.parse_response({"message": {"content": "x >>> 2"}}).text == "x >>> 2"


def test_a_tag_end_is_not_held_back_in_a_stream() -> None:
    parser = toolmend.TextCallParser()
    assert parser.feed("<b>bold</b>") == ["<b>bold</b>"]


# Llama 3.1's built-in tools, as its prompt format documents them.
def test_llama31_builtin_tools_are_calls_by_their_tool_name() -> None:
    assert calls_of('<|python_tag|>brave_search.call(query="weather in Paris")<|eom_id|>') == [
        ("brave_search", {"query": "weather in Paris"}, "llama3")
    ]
    assert calls_of("<|python_tag|>wolfram_alpha.call(query='solve x^2 = 4')") == [
        ("wolfram_alpha", {"query": "solve x^2 = 4"}, "llama3")
    ]
    assert calls_of('<|python_tag|>code_interpreter.call(code="print(max(1, 2))")<|eom_id|>') == [
        ("code_interpreter", {"code": "print(max(1, 2))"}, "llama3")
    ]
    calls, _ = streamed('<|python_tag|>brave_search.call(query="x, y")<|eom_id|>', 4)
    assert calls == [("brave_search", {"query": "x, y"})]
    # The JSON form is unchanged.
    assert calls_of('<|python_tag|>{"name": "f", "parameters": {"a": 1}}') == [("f", {"a": 1}, "llama3")]


# ---- formats chosen per call site ---------------------------------------------------------------

PROSE_JSON = 'Try this: {"name": "get_weather", "arguments": {"city": "Paris"}} and tell me.'
WHOLE_JSON = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
FENCED_JSON = '```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```'
PYTHONIC = '[get_weather(city="Paris")]'
HERMES = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'


def names(content: str, text_calls: object = True, registry: toolmend.ToolRegistry | None = None) -> list[str]:
    return [c.name for c in toolmend.parse_response({"message": {"content": content}}, registry, text_calls=text_calls).calls]  # type: ignore[arg-type]


def test_presets_nest_and_name_only_known_formats() -> None:
    strict, default, lenient = (set(toolmend.TEXT_FORMATS[p]) for p in ("strict", "default", "lenient"))
    assert strict < default < lenient
    assert {"hermes", "mistral", "llama3", "minimax", "functionary_v32", "apertus"} <= strict
    assert default - strict == {"fenced_json", "bare_json", "pythonic"}
    assert lenient - default == {"any_json"}


def test_json_in_prose_is_a_call_only_when_lenient_or_known_to_the_registry() -> None:
    assert names(PROSE_JSON) == []
    assert names(PROSE_JSON, "lenient") == ["get_weather"]
    registry = toolmend.ToolRegistry()
    registry.register("get_weather", {"type": "object", "properties": {"city": {"type": "string"}}})
    assert names(PROSE_JSON, registry=registry) == ["get_weather"]
    # A reply that is one JSON call is a call by default, not in strict.
    assert names(WHOLE_JSON) == ["get_weather"] and names(WHOLE_JSON, "strict") == []


def test_strict_reads_only_marked_formats() -> None:
    assert names(HERMES, "strict") == ["get_weather"]
    for content in (FENCED_JSON, PYTHONIC, WHOLE_JSON):
        result = toolmend.parse_response({"message": {"content": content}}, text_calls="strict")
        assert result.calls == () and result.errors == () and result.text == content, content
    assert names(FENCED_JSON) == names(PYTHONIC) == ["get_weather"]


def test_formats_are_allowed_or_denied_by_name() -> None:
    assert names(HERMES, ["hermes"]) == ["get_weather"]
    assert names(HERMES, {"mistral"}) == []
    without_pythonic = set(toolmend.TEXT_FORMATS["default"]) - {"pythonic"}
    assert names(PYTHONIC, without_pythonic) == [] and names(HERMES, without_pythonic) == ["get_weather"]
    assert names(HERMES, False) == [] and names(HERMES, ()) == []


def test_a_denied_format_stays_text_in_a_stream() -> None:
    for formats, expected in ((None, ["get_weather"]), ("strict", ["get_weather"]), (["mistral"], [])):
        parser = toolmend.TextCallParser(formats=formats)
        items = [item for i in range(0, len(HERMES), 5) for item in parser.feed(HERMES[i : i + 5])] + parser.flush()
        assert [i.name for i in items if isinstance(i, toolmend.ToolCall)] == expected, formats
        if not expected:
            assert "".join(i for i in items if isinstance(i, str)) == HERMES


def test_unknown_formats_and_presets_are_refused_with_the_names() -> None:
    import pytest

    with pytest.raises(ValueError, match="hermes"):
        names(HERMES, ["hermes", "no_such_format"])
    with pytest.raises(ValueError, match="lenient"):
        names(HERMES, "loose")
    with pytest.raises(TypeError):
        names(HERMES, 3)
