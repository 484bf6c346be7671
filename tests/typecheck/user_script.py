"""A small agent as a user writes it: checked by mypy --strict and pyright strict in the tests."""

from __future__ import annotations

import asyncio
from typing import Any

import pydantic

import toolmend
from toolmend import (
    ChatResult,
    Done,
    OllamaClient,
    OpenAICompatibleClient,
    ParseResult,
    RetryConfig,
    TextDelta,
    ToolCall,
    ToolCallAccumulator,
    ToolRegistry,
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
        result: ChatResult = await client.chat([{"role": "user", "content": "read a.txt"}])
        names += [call.name for call in result.tool_calls]
        async for event in client.chat_stream([{"role": "user", "content": "again"}]):
            if isinstance(event, TextDelta):
                names.append(event.text)
            elif isinstance(event, Done):
                names += [call.name for call in event.result.tool_calls]
    async with OpenAICompatibleClient("http://127.0.0.1:8000/v1", model="qwen3", registry=reg) as other:
        names += [call.name for call in (await other.chat([{"role": "user", "content": "x"}])).tool_calls]
    return names


if __name__ == "__main__":
    print(offline(registry()), asyncio.run(online(registry())))
