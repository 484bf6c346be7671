"""Hostile replies for the call pipeline: repeated ids, and many calls that repeat one another."""

from __future__ import annotations

import time
from typing import Any

import toolmend
from toolmend import ToolCallAccumulator


def _ollama(content: str, tool_calls: list[dict[str, Any]]) -> dict[str, Any]:
    return {"message": {"role": "assistant", "content": content, "tool_calls": tool_calls}}


def test_pipeline_a_repeated_id_gets_a_fresh_one_so_each_call_can_be_answered() -> None:
    reply = {
        "choices": [
            {
                "message": {
                    "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}},
                        {"id": "c1", "type": "function", "function": {"name": "g", "arguments": "{}"}},
                    ]
                }
            }
        ]
    }
    result = toolmend.parse_response(reply)
    assert [c.name for c in result.calls] == ["f", "g"]
    assert result.calls[0].id == "c1"
    assert result.calls[1].id != "c1" and result.calls[1].id.startswith("call_")


def test_pipeline_a_stream_that_repeats_an_id_at_another_index_gets_a_fresh_id() -> None:
    acc = ToolCallAccumulator()
    for delta in (
        {"index": 0, "id": "call_1", "function": {"name": "f", "arguments": '{"a": 1}'}},
        {"index": 1, "id": "call_1", "function": {"name": "g", "arguments": "{}"}},
    ):
        acc.feed({"choices": [{"delta": {"tool_calls": [delta]}}]})
    calls = acc.finish().calls
    assert [c.name for c in calls] == ["f", "g"]
    assert len({c.id for c in calls}) == 2


def test_pipeline_a_call_left_in_the_content_runs_once_whatever_its_key_order() -> None:
    content = '<tool_call>{"name": "f", "arguments": {"b": 1, "a": [2, {"y": 1, "x": 0}]}}</tool_call>'
    field = [{"function": {"name": "f", "arguments": {"a": [2, {"x": 0, "y": 1}], "b": 1}}}]
    assert len(toolmend.parse_response(_ollama(content, field)).calls) == 1
    other = content.replace('"b": 1', '"b": 2')
    assert len(toolmend.parse_response(_ollama(other, field)).calls) == 2


def _repeat_time(n: int) -> float:
    # n calls in the field and n calls of the same name in the content that repeat none of them:
    # each content call is looked up, not compared with every field call.
    content = "".join('<tool_call>{"name": "f", "arguments": {"i": %d}}</tool_call>' % (k + n) for k in range(n))
    reply = _ollama(content, [{"function": {"name": "f", "arguments": {"i": k}}} for k in range(n)])
    start = time.perf_counter()
    result = toolmend.parse_response(reply, timeout_ms=0, max_size=1 << 30)
    assert len(result.calls) == 2 * n
    return time.perf_counter() - start


def test_pipeline_finding_repeated_calls_is_linear() -> None:
    small = min(_repeat_time(500) for _ in range(3))
    large = min(_repeat_time(4000) for _ in range(2))
    # 8x the calls: linear is about 8x, the quadratic comparison it replaced was about 64x.
    assert large / small < 24, (small, large)
