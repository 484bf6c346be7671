"""OpenAICompatibleClient: ``POST {base_url}/chat/completions`` (OpenAI, vLLM, llama.cpp server, LM Studio,
Ollama's /v1) on the turn engine.

A reply's calls are in ``choices[0].message.tool_calls``, each call's arguments a string holding JSON (the
model's own text: it may not be JSON at all). Streamed, the reply is server-sent events, ``data: {chunk}`` lines
ending with ``data: [DONE]``; a call's id and name come in its first delta, its arguments in pieces keyed by
``index``; ``finish_reason`` ends the choice and a last chunk may carry ``usage``. Errors come as ``{"error":
{"message", "type", "code"}}`` (OpenAI, vLLM, llama.cpp) or ``{"object": "error", "message", ...}`` (older
vLLM); a 429 says when to come back in Retry-After or the x-ratelimit-reset-* headers.
"""

from __future__ import annotations

import asyncio
import random
import time
from contextlib import aclosing
from typing import Any, AsyncGenerator, Awaitable, Callable, Mapping, Sequence

import httpx
import orjson

from toolmend._core import ToolCall, _json_text
from toolmend.client.agent import RunResult
from toolmend.client.engine import Engine, Tools
from toolmend.client.events import ChatEvent, ChatResult
from toolmend.client.exchange import Reply, json_or_none, lines, reason
from toolmend.client.ledger import Usage
from toolmend.client.observe import Hook
from toolmend.config import RetryConfig
from toolmend.registry import ToolRegistry


class OpenAICompatibleClient(Engine):
    """``async with OpenAICompatibleClient("http://127.0.0.1:8000/v1", "qwen3", registry=reg) as client: ...``.

    ``api_key`` is sent as a bearer token (it is never read from the environment: a key meant for one service
    must not reach another's address). The same turn as OllamaClient: the same lanes, reflection, budgets,
    breaker, stats and events; only the wire format differs.
    """

    provider = "openai"
    _path = "/chat/completions"

    def __init__(
        self,
        base_url: str,
        model: str = "",
        api_key: str | None = None,
        registry: ToolRegistry | None = None,
        config: RetryConfig | None = None,
        *,
        http_client: httpx.AsyncClient | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        headers: Mapping[str, str] | None = None,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        rand: Callable[[], float] = random.random,
        clock: Callable[[], float] = time.monotonic,
        on_attempt: Hook | None = None,
        on_retry: Hook | None = None,
        on_give_up: Hook | None = None,
        tracer_provider: Any = None,
        meter_provider: Any = None,
    ) -> None:
        base_url = base_url.rstrip("/")
        self.base_url = base_url if "://" in base_url else "http://" + base_url
        sent = dict(headers or {})
        if api_key:
            sent["authorization"] = f"Bearer {api_key}"
        super().__init__(
            self.base_url, model, registry, config,
            http_client=http_client, transport=transport, sleep=sleep, rand=rand, clock=clock, headers=sent,
            on_attempt=on_attempt, on_retry=on_retry, on_give_up=on_give_up,
            tracer_provider=tracer_provider, meter_provider=meter_provider,
        )

    async def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Tools = None,
        tool_choice: str | Mapping[str, Any] | None = None,
        parallel_tool_calls: bool | None = None,
        response_format: Mapping[str, Any] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        extra_body: Mapping[str, Any] | None = None,
    ) -> ChatResult:
        """Sends the conversation and returns the assistant's checked tool calls, as OllamaClient.chat does.
        The keywords go into the request as the server reads them; ``extra_body`` adds any other field
        (``seed``, ``top_p``, a server's own options) and wins over the rest."""
        fields = _fields(tool_choice, parallel_tool_calls, response_format, max_tokens, temperature, extra_body)
        return await self._chat(messages, tools, fields)

    def chat_stream(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Tools = None,
        tool_choice: str | Mapping[str, Any] | None = None,
        parallel_tool_calls: bool | None = None,
        response_format: Mapping[str, Any] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        extra_body: Mapping[str, Any] | None = None,
    ) -> AsyncGenerator[ChatEvent, None]:
        """A streamed turn as typed events, ending with Done(result), as OllamaClient.chat_stream. The request
        asks for usage in the last chunk (``stream_options``) unless ``extra_body`` says otherwise."""
        fields = _fields(tool_choice, parallel_tool_calls, response_format, max_tokens, temperature, extra_body)
        return self._stream(messages, tools, fields)

    async def run(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        max_turns: int = 10,
        tools: Tools = None,
        tool_choice: str | Mapping[str, Any] | None = None,
        parallel_tool_calls: bool | None = None,
        response_format: Mapping[str, Any] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        extra_body: Mapping[str, Any] | None = None,
    ) -> RunResult:
        """The agent loop: chats, runs each checked call with the registry's function (``registry.arun``), sends the
        results back, and again, until a reply has no calls (``stop_reason`` "answer") or ``max_turns`` chats were
        made ("max_turns"). Failed calls are reflected within each chat, as ``chat`` does; a tool's error goes back
        to the model as its result. Returns the RunResult: ``answer``, the whole ``messages`` transcript, each
        turn's ChatResult. The request keywords are ``chat``'s, sent with every turn."""
        fields = _fields(tool_choice, parallel_tool_calls, response_format, max_tokens, temperature, extra_body)
        return await self._run(messages, tools, fields, max_turns)

    # ---- the OpenAI wire format ------------------------------------------------------------------------

    def _payload(
        self, messages: list[dict[str, Any]], specs: list[dict[str, Any]], fields: Mapping[str, Any], stream: bool
    ) -> dict[str, Any]:
        # Usage comes in the last chunk only when asked for; the caller's extra_body may say otherwise.
        extra = {"stream_options": {"include_usage": True}, **fields} if stream else fields
        return super()._payload(messages, specs, extra, stream)

    def _option_fields(self, options: Mapping[str, Any]) -> dict[str, Any]:
        # Each option is a request field as the server reads it; Ollama's ``format`` is ``response_format``.
        fields = dict(options)
        if "format" in fields:
            wanted = fields.pop("format")
            if wanted == "json":
                fields.setdefault("response_format", {"type": "json_object"})
            elif isinstance(wanted, Mapping):
                fields.setdefault("response_format", {"type": "json_schema", "json_schema": {"name": "reply", "schema": dict(wanted)}})
        return fields

    def _read_whole(self, reply: Reply) -> None:
        data = reply.data
        if not isinstance(data, dict):
            return
        reply.error_text = error_text(data)
        if reply.error_text is not None or reply.status != 200:
            return
        reply.usage = usage(data.get("usage"))
        choice = _first(data.get("choices"))
        reply.finish_reason = reason(choice.get("finish_reason"))
        # The body as read: the core parses it itself, integers past 64 bits exactly (orjson makes them floats).
        reply.assembly.whole(reply.body, reply.finish_reason)

    async def _read_stream(self, response: httpx.Response, reply: Reply, deadline: float) -> AsyncGenerator[Any, None]:
        cfg = self.config
        asm = reply.assembly
        # The choice's finish_reason came; the usage chunk and [DONE] may follow, and behind some proxies
        # (OpenWebUI before vLLM) more of the calls: they are read to the stream's end ([DONE], or its close).
        ended = False
        source = lines(response, cfg.max_response_bytes, cfg.first_byte_timeout_s, cfg.idle_timeout_s, deadline)
        async with aclosing(source):
            async for line in source:
                # One event per data line: multi-line data fields are not used by chat servers.
                if not line.startswith(b"data:"):
                    continue  # comments (keep-alives), event:, id:, blank separators
                data = line[5:].strip()
                if data == b"[DONE]":
                    reply.finish_reason = asm.finish_reason or reply.finish_reason
                    for event in asm.end(reply.finish_reason):
                        yield event
                    reply.complete = True
                    return
                # The core reads the chunk: calls, text, reasoning, usage, its end, an error.
                events = asm.data(data)
                if asm.provider_error is not None:
                    chunk = json_or_none(data)
                    reply.error_text = (error_text(chunk) if isinstance(chunk, dict) else None) or asm.provider_error
                    return
                if asm.usage is not None:
                    reply.usage = Usage(*asm.usage)
                if asm.ended:
                    reply.finish_reason = asm.finish_reason
                    ended = True
                for event in events:
                    yield event
        if ended:
            # Closed after its finish_reason without [DONE], as some servers do: the stream's end.
            for event in asm.end(reply.finish_reason):
                yield event
            reply.complete = True
        else:
            reply.failure = "the stream ended before its last event (finish_reason or [DONE])"

    def _wire_call(self, call: ToolCall) -> dict[str, Any]:
        arguments = _json_text(call.arguments)  # integers past 64 bits exactly
        return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": arguments}}

    def _result_message(self, text: str, calls: list[ToolCall], thinking: str) -> dict[str, Any]:
        # An empty tool_calls list is refused by OpenAI ("too short"): the key goes only with calls.
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if calls:
            message["tool_calls"] = [self._wire_call(c) for c in calls]
        return message


def _fields(
    tool_choice: Any, parallel_tool_calls: Any, response_format: Any, max_tokens: Any, temperature: Any, extra_body: Any
) -> dict[str, Any]:
    fields = {
        "tool_choice": tool_choice,
        "parallel_tool_calls": parallel_tool_calls,
        "response_format": response_format,
        "max_tokens": max_tokens,
        "temperature": temperature,
    }
    out = {k: v for k, v in fields.items() if v is not None}
    out.update(extra_body or {})
    return out


def _first(choices: Any) -> dict[str, Any]:
    """The first choice (a request asks for one), or {}."""
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        return choices[0]
    return {}


def error_text(data: Mapping[str, Any]) -> str | None:
    """The message of an error body: ``{"error": {"message", "type", "code"}}``, ``{"error": "..."}``,
    ``{"object": "error", "message", ...}`` or FastAPI's ``{"detail": ...}``; None for a reply."""
    if "choices" in data:
        return None
    error = data.get("error")
    if isinstance(error, dict):
        return _described(error.get("message"), error.get("type"), error.get("code"))
    if isinstance(error, str):
        return error
    if data.get("object") == "error":
        return _described(data.get("message"), data.get("type"), data.get("code"))
    detail = data.get("detail")
    if detail is not None:
        return detail if isinstance(detail, str) else orjson.dumps(detail).decode()
    return None


def _described(message: Any, kind: Any, code: Any) -> str:
    said = [f"{name}: {value}" for name, value in (("type", kind), ("code", code)) if value not in (None, "")]
    text = str(message) if message else "error"
    return text + (f" ({', '.join(said)})" if said else "")


def usage(counts: Any) -> Usage:
    if not isinstance(counts, dict):
        return Usage()
    return Usage(int(counts.get("prompt_tokens") or 0), int(counts.get("completion_tokens") or 0), 0)
