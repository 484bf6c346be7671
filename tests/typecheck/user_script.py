"""A small agent as a user writes it: checked by mypy --strict and pyright strict in the tests."""

from __future__ import annotations

import asyncio
from typing import Any, Mapping, Sequence

import anthropic
import ollama
import openai
import pydantic
from openai.types.chat import ChatCompletionMessageParam
from typing_extensions import assert_type

import toolmend
from toolmend import (
    ChatResult,
    Done,
    OllamaClient,
    OpenAICompatibleClient,
    ParseResult,
    RetryConfig,
    RunResult,
    SyncOllamaClient,
    SyncOpenAICompatibleClient,
    TextDelta,
    ToolCall,
    ToolCallAccumulator,
    ToolRegistry,
    ToolResult,
)


def registry() -> ToolRegistry:
    reg = ToolRegistry()
    reg.register("read_file", {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})
    return reg


class ReadArgs(pydantic.BaseModel):
    path: str


def typed(reg: ToolRegistry, call: ToolCall) -> list[str]:
    first: ReadArgs = reg.validate("read_file", {"path": "a.txt"}, into=ReadArgs)
    second: ReadArgs = call.parse(ReadArgs)
    plain: dict[str, Any] = reg.validate("read_file", {"path": "a.txt"})
    return [first.path, second.path, str(plain)]


def offline(reg: ToolRegistry) -> list[str]:
    fixed: toolmend.RepairResult = toolmend.repair("{'path': 'a.txt',}")
    value: Any = toolmend.loads(fixed.json or "{}")
    result: ParseResult = toolmend.parse_response({"message": {"content": "", "tool_calls": []}}, reg)
    calls: tuple[ToolCall, ...] = result.calls
    acc = ToolCallAccumulator(reg)
    done: ParseResult = acc.finish()
    checked = reg.try_validate("read_file", value)
    batch = toolmend.repair_many(["{a:1}", "[1,"])
    return [c.name for c in calls + done.calls] + [e.code for e in checked.errors] + [r.json or "" for r in batch]


async def online(reg: ToolRegistry) -> list[str]:
    config = RetryConfig(max_retries=2)
    names: list[str] = []
    async with OllamaClient(model="qwen3", registry=reg, config=config) as client:
        assert_type(client, OllamaClient)  # not Any: __aenter__ gives the client's own class
        result: ChatResult = await client.chat([{"role": "user", "content": "read a.txt"}])
        names += [call.name for call in result.tool_calls]
        async for event in client.chat_stream([{"role": "user", "content": "again"}]):
            if isinstance(event, TextDelta):
                names.append(event.text)
            elif isinstance(event, Done):
                names += [call.name for call in event.result.tool_calls]
    async with OpenAICompatibleClient("http://127.0.0.1:8000/v1", model="qwen3", registry=reg) as other:
        assert_type(other, OpenAICompatibleClient)
        names += [call.name for call in (await other.chat([{"role": "user", "content": "x"}])).tool_calls]
    return names


def blocking(reg: ToolRegistry) -> list[str]:
    """The sync twins: the same calls, waited for; the stream a plain iterator; the agent loop."""
    names: list[str] = []
    with SyncOllamaClient(model="qwen3", registry=reg) as client:
        assert_type(client, SyncOllamaClient)
        result: ChatResult = client.chat([{"role": "user", "content": "read a.txt"}])
        names += [call.name for call in result.tool_calls]
        for event in client.chat_stream([{"role": "user", "content": "again"}]):
            if isinstance(event, Done):
                names += [call.name for call in event.result.tool_calls]
        loop: RunResult = client.run([{"role": "user", "content": "read a.txt"}], max_turns=3)
        names += [loop.answer, loop.stop_reason] + [r.content for r in loop.tool_results]
    with SyncOpenAICompatibleClient("http://127.0.0.1:8000/v1", "qwen3", registry=reg) as other:
        assert_type(other, SyncOpenAICompatibleClient)
        names += [m["role"] for m in other.run([{"role": "user", "content": "x"}]).messages]
    return names


def sdk_tools(reg: ToolRegistry, call: ToolCall) -> list[str]:
    """A registry's tools and a tool's result given to each SDK as it is: typed as the SDK's own parameters
    (defined, never sent: the script is type-checked, not run against a server)."""
    result: ToolResult = reg.run(call)
    history: list[ChatCompletionMessageParam] = [{"role": "user", "content": "read a.txt"}, result.to_openai()]
    oa = openai.OpenAI(api_key="sk-test", base_url="http://127.0.0.1:9/v1")
    reply = oa.chat.completions.create(model="qwen3", messages=history, tools=reg.to_openai_tools())
    an = anthropic.Anthropic(api_key="sk-test", base_url="http://127.0.0.1:9")
    message = an.messages.create(
        model="claude",
        max_tokens=100,
        messages=[{"role": "user", "content": [result.to_anthropic()]}],
        tools=reg.to_anthropic_tools(),
    )
    # ollama.Client.chat's own signature is partly unknown to pyright strict (a bare Callable): its parameter types.
    local_messages: Sequence[Mapping[str, Any] | ollama.Message] = [result.to_ollama()]
    local_tools: Sequence[Mapping[str, Any] | ollama.Tool] = reg.to_ollama_tools()
    return [reply.id, message.id, str(len(local_messages) + len(local_tools))]


if __name__ == "__main__":
    print(offline(registry()), asyncio.run(online(registry())))
