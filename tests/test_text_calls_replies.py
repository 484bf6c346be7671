"""Reply formats read since issue 35's last part (Gemma 4, FunctionGemma, Olmo 3, Command R's action
block and its older ``Action:`` fence, a call block inside a wrapper never closed, a name line before
JSON arguments), and the rule kept for each: reasoning and quotations never run, a cut-off call is cut."""

from __future__ import annotations

from typing import Any

import pytest

from toolmend import parse_response


def read(content: str) -> Any:
    return parse_response({"message": {"role": "assistant", "content": content}})


def calls(content: str) -> list[tuple[str, dict[str, Any], str]]:
    result = read(content)
    assert not result.errors, result.errors
    return [(c.name, c.arguments, c.source) for c in result.calls]


def test_gemma4_values_bare_keys_and_quote_tokens() -> None:
    got = calls('Sure.<|tool_call>call:search{query:<|"|>say "hi", then {x}<|"|>,limit:10,deep:true,'
                'tags:[<|"|>a<|"|>,<|"|>b<|"|>],opt:null,raw:"q \\"x\\""}<tool_call|>')
    assert got == [("search", {"query": 'say "hi", then {x}', "limit": 10, "deep": True, "tags": ["a", "b"],
                               "opt": None, "raw": 'q "x"'}, "gemma4")]
    assert read('Sure.<|tool_call>call:search{query:<|"|>x<|"|>}<tool_call|>').text == "Sure."


def test_functiongemma_calls_one_after_another() -> None:
    got = calls("<start_function_call>call:first{}<end_function_call>Between."
                "<start_function_call>call:second{data:{name:<escape>t<escape>,n:1.5}}<end_function_call>")
    assert got == [("first", {}, "functiongemma"), ("second", {"data": {"name": "t", "n": 1.5}}, "functiongemma")]


@pytest.mark.parametrize("content", ['<|tool_call>call:f{a:<|"|>cut here', '<|tool_call>call:f{a:<|"|>x<|"|>,b:'])
def test_a_gemma_call_cut_off_is_cut_not_run(content: str) -> None:
    result = read(content)
    assert not result.calls
    assert [e.code for e in result.errors] == ["TLP-010"]


def test_gemma_thought_channel_is_reasoning() -> None:
    result = read('<|channel>thought\nmaybe <|tool_call>call:rm{p:<|"|>/<|"|>}<tool_call|><channel|>Done.')
    assert not result.calls and not result.errors
    assert result.text == "Done."


def test_olmo3_calls_one_a_line_and_invokes_in_the_same_tag() -> None:
    got = calls('<function_calls>get_weather(location="SF")\nget_time(tz=\'PST\', n=2)</function_calls>')
    assert got == [("get_weather", {"location": "SF"}, "olmo3"), ("get_time", {"tz": "PST", "n": 2}, "olmo3")]
    got = calls('<function_calls><invoke name="f"><parameter name="a">x</parameter></invoke></function_calls>')
    assert got == [("f", {"a": "x"}, "olmo3")]


def test_command_r_action_block_after_reasoning() -> None:
    result = read('<|START_THINKING|>plan: use <|START_ACTION|>[{"tool_name": "rm", "parameters": {}}]<|END_ACTION|>'
                  '<|END_THINKING|><|START_ACTION|>[\n {"tool_call_id": "0", "tool_name": "get_weather", '
                  '"parameters": {"city": "Paris"}},\n {"tool_call_id": "1", "tool_name": "get_time", "parameters": {}}\n]'
                  "<|END_ACTION|>")
    assert not result.errors
    assert [(c.name, c.arguments, c.source) for c in result.calls] == [
        ("get_weather", {"city": "Paris"}, "command_r"),
        ("get_time", {}, "command_r"),
    ]
    assert "plan" in result.reasoning


def test_command_r_text_markers_are_not_text() -> None:
    result = read("<|START_THINKING|>t<|END_THINKING|><|START_TEXT|>Hello world!<|END_TEXT|>")
    assert (result.text, result.reasoning, result.calls) == ("Hello world!", "t", ())


def test_command_r_older_action_fence_only_at_a_line_start() -> None:
    fence = 'Action: ```json\n[{"tool_name": "internet_search", "parameters": {"query": "x"}}]\n```'
    assert calls("Plan: search first.\n" + fence) == [("internet_search", {"query": "x"}, "command_r")]
    # Mid-line, as a quotation of the form, it opens nothing.
    quoted = read("The model wrote " + fence + " and then stopped, which is a sample.")
    assert not quoted.calls


@pytest.mark.parametrize(
    "outer", ["<tool_calls>", "<TOOLCALL>", "[TOOL_CALLS]", "<function_calls>", "<|python_start|>", "<|START_ACTION|>"]
)
def test_a_call_block_closed_inside_a_wrapper_never_closed(outer: str) -> None:
    result = read(outer + '<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>\nDone.')
    assert [(c.name, c.arguments) for c in result.calls] == [("f", {"a": 1})]
    assert not result.errors
    assert "</tool_call>" not in result.text and "Done." in result.text


def test_two_blocks_in_a_wrapper_and_a_wrapper_in_reasoning() -> None:
    two = '<tool_calls>\n<tool_call>{"name": "f", "arguments": {}}</tool_call>\n<tool_call>{"name": "g", "arguments": {}}</tool_call>'
    assert [c[0] for c in calls(two)] == ["f", "g"]
    thought = read('<think><tool_calls><tool_call>{"name": "f", "arguments": {}}</tool_call></think>ok')
    assert not thought.calls and thought.text == "ok"


def test_a_name_line_before_json_arguments() -> None:
    assert calls('<tool_call>get_weather\n{"location": "SF"}</tool_call>') == [("get_weather", {"location": "SF"}, "hermes")]
    # A word and JSON on one line is not that form.
    assert not read('<tool_call>get_weather {"location": "SF"}</tool_call>').calls


def test_a_whole_reply_with_a_stray_closer_is_still_a_call_but_not_amid_prose() -> None:
    listed = '[{"name": "get_conditions", "arguments": {"location": "Tokyo"}}]'
    assert calls(listed + "]") == [("get_conditions", {"location": "Tokyo"}, "bare_json")]
    assert not read(listed + "] and then some prose about it").calls
