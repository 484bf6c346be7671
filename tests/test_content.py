"""split_content: a reply's content split around the calls written in it (seed 001's SplitContent): the text before
the first call, the text after the last, the whole text without calls, and the calls."""

from __future__ import annotations

import pickle

import pytest

import toolmend
from toolmend import ParsedContent, split_content

READ = '{"name": "read_file", "arguments": {"path": "a.txt"}}'
WRITE = '{"name": "write_file", "arguments": {"path": "b.txt", "content": "x"}}'


def test_separates_text_and_calls() -> None:
    """The seed's FunctionCallParser_SplitContent_SeparatesTextAndCalls, with its ```tool_call blocks."""
    content = f"I'll read the file first.\n```tool_call\n{READ}\n```\nThen write it.\n```tool_call\n{WRITE}\n```\nDone.\n"
    split = split_content(content)
    assert (split.text_before, split.text_after) == ("I'll read the file first.", "Done.")
    assert split.text == "I'll read the file first.\n\nThen write it.\n\nDone."
    assert [c.name for c in split.calls] == ["read_file", "write_file"] and split.errors == () and split.has_tool_calls
    assert split.text == toolmend.parse_response({"message": {"role": "assistant", "content": content}}).text


@pytest.mark.parametrize(
    ("content", "before", "after"),
    [
        (f"Let me check. <tool_call>{READ}</tool_call>", "Let me check.", ""),
        (f"<tool_call>{READ}</tool_call> Done.", "", "Done."),
        (f"Calling now [TOOL_CALLS][{READ}]", "Calling now", ""),
        (f"  \n\nFirst.\n```tool_call\n{READ}\n```\n\nLast.  \n", "First.", "Last."),
        # The text next to a call starts (or ends) as the call does: the split still falls at the call.
        (f"See: <tool_call>{READ}</tool_call><b>bold</b>", "See:", "<b>bold</b>"),
        (f"<b>x</b><tool_call>{READ}</tool_call>", "<b>x</b>", ""),
        (f"Same <tool_call>{READ}</tool_call> Same", "Same", "Same"),
        # Indices are the str's (characters), not bytes of UTF-8.
        (f"Café ☕ <tool_call>{READ}</tool_call> fin é", "Café ☕", "fin é"),
        (f"<think>plan é</think>Go <tool_call>{READ}</tool_call> ok", "Go", "ok"),
    ],
)
def test_text_before_and_after(content: str, before: str, after: str) -> None:
    split = split_content(content)
    assert (split.text_before, split.text_after, len(split.calls)) == (before, after, 1)


def test_content_without_calls_is_all_text_before() -> None:
    split = split_content("  Just an answer, no calls.  ")
    assert split == ParsedContent("Just an answer, no calls.", "", "Just an answer, no calls.", (), ())
    assert not split.has_tool_calls


def test_calls_before_a_lone_reasoning_closer_were_reasoning() -> None:
    split = split_content(f"<tool_call>{READ}</tool_call> maybe read it</think>The answer.")
    assert split == ParsedContent("The answer.", "", "The answer.", (), ())


def test_many_calls_are_read_once() -> None:
    """The split comes from the one reading (a text with thousands of calls is not read again per call)."""
    content = "Start. " + " and ".join(f"<tool_call>{READ}</tool_call>" for _ in range(2000)) + " End."
    split = split_content(content)
    assert (split.text_before, split.text_after, len(split.calls)) == ("Start.", "End.", 2000)


def test_a_refused_call_still_splits_the_text() -> None:
    split = split_content('Oops: <tool_call>{"name": "bad name", "arguments": {}}</tool_call> sorry')
    assert (split.text_before, split.text_after, split.calls) == ("Oops:", "sorry", ())
    assert [e.code for e in split.errors] == ["TLP-003"] and split.has_tool_calls


def test_the_options_are_parse_responses() -> None:
    prose = f"Sure. {READ} and more"
    assert not split_content(prose).has_tool_calls  # JSON amid prose is a call only when asked for
    lenient = split_content(prose, text_calls="lenient")
    assert (lenient.text_before, lenient.text_after, [c.name for c in lenient.calls]) == ("Sure.", "and more", ["read_file"])
    registry = toolmend.ToolRegistry()
    registry.register("read_file", {"type": "object", "properties": {"path": {"type": "integer"}}})
    checked = split_content(f"Go <tool_call>{READ}</tool_call>", registry)
    assert [e.code for e in checked.errors] == ["TSR-004"] and checked.text_before == "Go"
    assert pickle.loads(pickle.dumps(checked)) == checked
