"""Provider stream quirks (tests/data/provider_streams), read on every path: the accumulator over the raw bytes
split anywhere, and each client's chat_stream over real HTTP. Each keeps every call, whole, with no reasoning
taken for text or for a call."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import toolmend
from ollama_server import Reply, ScriptedOllama
from toolmend.client import OllamaClient, OpenAICompatibleClient, ReasoningDelta
from wires import instant

DATA = Path(__file__).parent / "data" / "provider_streams"

#: The reasoning of the fixtures written after vLLM, SGLang and Ollama's OpenAI shim: a <tool_call> in it is no call.
REASONING = 'Call <tool_call>{"name": "delete_file", "arguments": {}}</tool_call>? No: the user asked for the weather.'

#: fixture -> (calls as (name, arguments), text, reasoning)
EXPECTED: dict[str, tuple[list[tuple[str, Any]], str, str]] = {
    "deepseek_empty_ids.sse": ([("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})], "", ""),
    "proxy_repeated_names.sse": ([("get_weather", {"city": "Paris"})], "", ""),
    "openwebui_finish_every_chunk.sse": (
        [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})],
        "",
        "",
    ),
    "proxy_resent_arguments.sse": ([("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})], "", ""),
    "magistral_content_parts.sse": ([("get_weather", {"city": "Paris"})], "Checking.", "The user wants the weather."),
    "no_done_usage_last.sse": ([("get_weather", {"city": "Paris"})], "", ""),
    "vllm_reasoning_content.sse": (
        [("get_weather", {"city": "Paris"})],
        "",
        'I could call <tool_call>{"name": "delete_file", "arguments": {}}</tool_call> but the user asked for weather.',
    ),
    "ollama_think.ndjson": (
        [("get_weather", {"city": "Paris"})],
        "Checking.",
        'Maybe <tool_call>{"name": "delete_file", "arguments": {}}</tool_call> no: the weather.',
    ),
    # The content "\n\n" that vLLM and SGLang send between </think> and <tool_call> is the reply's text, and text
    # is given without the space around it (as parse_response gives it): "".
    "vllm_reasoning_tool_call.sse": ([("get_weather", {"city": "Paris"})], "", REASONING),
    "llamacpp_reasoning_tool_call_timings.sse": (
        [("get_weather", {"city": "Paris"})],
        "",
        'Call <tool_call>{"name": "delete_file", "arguments": {}}</tool_call>? No: the weather.',
    ),
    "llamacpp_usage_timings.sse": ([("get_weather", {"city": "Paris"})], "Checking.", ""),
    "sglang_reasoning_tool_call.sse": ([("get_weather", {"city": "Paris"})], "", REASONING),
    "ollama_openai_reasoning_tool_calls.sse": (
        [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})],
        "Checking.",
        REASONING,
    ),
    "lmstudio_tool_call.sse": ([("get_weather", {"city": "Paris"})], "", ""),
    "gemini_openai_parallel_calls.sse": (
        [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})],
        "",
        "",
    ),
}


@pytest.mark.parametrize("size", [1, 7, 64, 1 << 20])
@pytest.mark.parametrize("name", EXPECTED)
def test_the_accumulator_keeps_every_call_of_the_raw_stream(name: str, size: int) -> None:
    raw = (DATA / name).read_bytes()
    acc = toolmend.ToolCallAccumulator()
    for at in range(0, len(raw), size):
        acc.feed(raw[at : at + size])
    result = acc.finish()
    assert result.ok, result.errors
    assert [(c.name, c.arguments) for c in result.calls] == EXPECTED[name][0]
    # One reader for the whole stream: its text and its reasoning too.
    assert (result.text, result.reasoning) == EXPECTED[name][1:]


@pytest.mark.parametrize("name", EXPECTED)
def test_chat_stream_keeps_every_call_text_and_reasoning(name: str) -> None:
    raw = (DATA / name).read_bytes()
    ollama = name.endswith(".ndjson")
    reply = Reply(lines=[raw], content_type="application/x-ndjson" if ollama else "text/event-stream", write_size=5)
    events: list[Any] = []

    async def go() -> Any:
        with ScriptedOllama([reply]) as server:
            client: Any = (
                OllamaClient(server.url, "m", sleep=instant)
                if ollama
                else OpenAICompatibleClient(server.url + "/v1", "m", sleep=instant)
            )
            async with client:
                async for event in client.chat_stream([{"role": "user", "content": "weather?"}]):
                    events.append(event)
        return events[-1].result

    result = asyncio.run(go())
    calls, text, reasoning = EXPECTED[name]
    assert [(c.name, c.arguments) for c in result.tool_calls] == calls
    assert (result.text, result.reasoning) == (text, reasoning)
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == reasoning
    assert len(result.attempts) == 1
