"""Both providers and both entry points behind one face, so that a client test runs four ways: Ollama and
OpenAI-compatible, ``chat`` and ``chat_stream``. A Wire scripts the loopback server in its provider's shapes
(whole replies for ``chat``, streamed ones for ``chat_stream``) and runs a turn the way its entry point does."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any, Callable

import ollama_server as ol
import openai_server as oa
from ollama_server import Reply, ScriptedOllama
from toolmend.client import Done, OllamaClient, OpenAICompatibleClient, SyncOllamaClient, SyncOpenAICompatibleClient, ToolCallFailed
from toolmend.config import RetryConfig

MESSAGES = [{"role": "user", "content": "Read test.txt"}]


async def instant(_: float) -> None:
    return None


@dataclass(frozen=True)
class Wire:
    provider: str  # "ollama" or "openai"
    streamed: bool

    def __str__(self) -> str:
        return f"{self.provider}-{'stream' if self.streamed else 'chat'}"

    # ---- the client ----------------------------------------------------------------------------------

    def client(self, server: ScriptedOllama, registry: Any, config: RetryConfig | None = None, **kwargs: Any) -> Any:
        kwargs.setdefault("sleep", instant)
        if self.provider == "ollama":
            return OllamaClient(server.url, "test-model", registry, config, **kwargs)
        return OpenAICompatibleClient(server.url + "/v1", "test-model", "sk-test", registry, config, **kwargs)

    def sync_client(self, server: ScriptedOllama, registry: Any, config: RetryConfig | None = None, **kwargs: Any) -> Any:
        """This provider's sync client (SyncOllamaClient, SyncOpenAICompatibleClient) on the server."""
        kwargs.setdefault("sleep", instant)
        if self.provider == "ollama":
            return SyncOllamaClient(server.url, "test-model", registry, config, **kwargs)
        return SyncOpenAICompatibleClient(server.url + "/v1", "test-model", "sk-test", registry, config, **kwargs)

    async def turn(self, client: Any, events: list[Any] | None = None, messages: Any = MESSAGES, **request: Any) -> Any:
        """One turn through this wire's entry point: the ChatResult (the stream's Done), or its error after the
        events (collected in ``events``)."""
        if not self.streamed:
            return await client.chat(messages, **request)
        seen = [] if events is None else events
        async for event in client.chat_stream(messages, **request):
            seen.append(event)
        assert isinstance(seen[-1], Done) and not any(isinstance(e, Done) for e in seen[:-1])
        return seen[-1].result

    def run(self, server: ScriptedOllama, registry: Any, events: list[Any] | None = None, **config: Any) -> Any:
        async def go() -> Any:
            async with self.client(server, registry, RetryConfig(**config)) as client:
                return await self.turn(client, events)

        return asyncio.run(go())

    # ---- what the server says --------------------------------------------------------------------------

    @property
    def path(self) -> str:
        return "/api/chat" if self.provider == "ollama" else "/v1/chat/completions"

    def calls(
        self, *calls: dict[str, Any], text: str = "", finish: str | None = None, prompt_tokens: int = 100, eval_tokens: int = 50
    ) -> Reply:
        """A reply with these calls ({"name", "arguments", "id"?}) and text, in this wire's shape."""
        if self.provider == "ollama":
            if self.streamed:
                lines = ol.stream_lines(*calls, text=[text] if text else [])
                lines[-1].update(done_reason=finish or "stop", prompt_eval_count=prompt_tokens, eval_count=eval_tokens)
                return Reply(lines=lines)
            reply = ol.chat_reply(*calls, content=text, prompt_tokens=prompt_tokens, eval_tokens=eval_tokens)
            reply.body["done_reason"] = finish or "stop"
            return reply
        if self.streamed:
            return oa.streamed(
                *calls, text=[text] if text else [], finish_reason=finish, prompt_tokens=prompt_tokens, completion_tokens=eval_tokens
            )
        return oa.completion(*calls, content=text, finish_reason=finish, prompt_tokens=prompt_tokens, completion_tokens=eval_tokens)

    def error(self, status: int, message: str, headers: dict[str, str] | None = None) -> Reply:
        """An error status with the provider's error body."""
        if self.provider == "ollama":
            return Reply(status, {"error": message}, headers or {})
        return oa.error(status, message, headers=headers)

    def cut(self, *calls: dict[str, Any], text: str = "") -> Reply:
        """A reply that stops before its end: a stream whose connection closes after the calls (for ``chat``,
        whose replies cannot be cut this way, the whole reply)."""
        if not self.streamed:
            return self.calls(*calls, text=text)
        if self.provider == "ollama":
            return Reply(lines=ol.stream_lines(*calls, text=[text] if text else [], done=False))
        return Reply(lines=oa.sse_lines(*calls, text=[text] if text else [], done=False), content_type="text/event-stream")

    # ---- what the client sent ------------------------------------------------------------------------

    @staticmethod
    def sent(server: ScriptedOllama, n: int) -> list[dict[str, Any]]:
        return server.requests[n]["json"]["messages"]

    def prompts(self, server: ScriptedOllama, n: int) -> list[str]:
        """The retry prompts request ``n`` carried, one per failed call."""
        return [m["content"] for m in self.sent(server, n) if m["role"] == "tool"]

    @staticmethod
    def failed_events(events: list[Any]) -> list[ToolCallFailed]:
        return [e for e in events if isinstance(e, ToolCallFailed)]


WIRES = [Wire("ollama", False), Wire("ollama", True), Wire("openai", False), Wire("openai", True)]
PROVIDERS = [Wire("ollama", False), Wire("openai", False)]


def arguments_of(call: dict[str, Any]) -> Any:
    """A sent call's arguments as a value, whichever form they were sent in."""
    arguments = call["function"]["arguments"]
    return json.loads(arguments) if isinstance(arguments, str) else arguments


Script = Callable[[Any], Reply]


#: The tool the client tests call: one required string.
READ_FILE = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


def read_file_registry() -> Any:
    """A registry that knows read_file (the client tests' tool)."""
    from toolmend import ToolRegistry

    reg = ToolRegistry()
    reg.register("read_file", READ_FILE, description="Read a file")
    return reg
