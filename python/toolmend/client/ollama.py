"""OllamaClient: Ollama's native /api/chat (a JSON reply, or NDJSON lines when streamed) on the turn engine.

Ollama sends each call whole, its arguments a JSON object, with ``function.index`` and an id of its own; the
last streamed line has ``done: true``, ``done_reason`` and the token counts. When its own parser refuses the
model's call it answers HTTP 500 (or, mid-stream, a line) ``{"error": "error parsing tool call: raw='...',
err=..."}``; older servers used the message itself as the key.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from contextlib import aclosing
from typing import Any, AsyncGenerator, Awaitable, Callable, Mapping, Sequence

import httpx

from toolmend._core import ToolCall
from toolmend.client.agent import RunResult
from toolmend.client.engine import Engine, Tools
from toolmend.client.events import ChatEvent, ChatResult
from toolmend.client.exchange import Reply, lines, read_json, reason
from toolmend.client.ledger import Usage
from toolmend.client.observe import Hook
from toolmend.config import RetryConfig
from toolmend.registry import ToolRegistry

DEFAULT_HOST = "http://127.0.0.1:11434"


class OllamaClient(Engine):
    """``async with OllamaClient(model="qwen3", registry=reg) as client: result = await client.chat(msgs)``.

    ``host`` defaults to ``$OLLAMA_HOST`` or 127.0.0.1:11434; ``config`` to ``RetryConfig.load()`` (the
    environment's TOOLMEND_* settings). One httpx.AsyncClient is reused for every chat (pass ``http_client``
    or ``transport`` to bring your own); many chats may run on one client at once. ``sleep``, ``rand`` and
    ``clock`` (the circuit breaker's) are injectable for tests. ``on_attempt(attempt)`` runs after each request,
    ``on_retry(attempt)`` when another follows it, ``on_give_up(attempt, error)`` when a chat that sent a request
    ends in an error (functions or coroutine functions; one that raises is logged and ignored). With
    opentelemetry-api installed, each chat is a span and each attempt a child span, under ``tracer_provider``
    and ``meter_provider`` (default: the global ones).
    """

    provider = "ollama"
    _path = "/api/chat"

    def __init__(
        self,
        host: str | None = None,
        model: str = "",
        registry: ToolRegistry | None = None,
        config: RetryConfig | None = None,
        *,
        http_client: httpx.AsyncClient | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        rand: Callable[[], float] = random.random,
        clock: Callable[[], float] = time.monotonic,
        on_attempt: Hook | None = None,
        on_retry: Hook | None = None,
        on_give_up: Hook | None = None,
        tracer_provider: Any = None,
        meter_provider: Any = None,
    ) -> None:
        host = (host or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST).rstrip("/")
        self.host = host if "://" in host else "http://" + host
        super().__init__(
            self.host, model, registry, config, http_client=http_client, transport=transport, sleep=sleep, rand=rand, clock=clock,
            on_attempt=on_attempt, on_retry=on_retry, on_give_up=on_give_up,
            tracer_provider=tracer_provider, meter_provider=meter_provider,
        )

    async def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Tools = None,
        options: Mapping[str, Any] | None = None,
        think: bool | str | None = None,
        keep_alive: str | float | None = None,
        format: str | Mapping[str, Any] | None = None,
    ) -> ChatResult:
        """Sends the conversation and returns the assistant's checked tool calls, reflecting failed calls back
        to the model and backing off on transport errors. ``messages`` is never modified. ``tools``: names of
        registry tools or definitions (default: every tool of the registry); ``options``, ``think``,
        ``keep_alive`` and ``format`` go into the request as Ollama reads them (``options`` laid over the
        config's, key by key)."""
        return await self._chat(messages, tools, _fields(options, think, keep_alive, format))

    def chat_stream(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Tools = None,
        options: Mapping[str, Any] | None = None,
        think: bool | str | None = None,
        keep_alive: str | float | None = None,
        format: str | Mapping[str, Any] | None = None,
    ) -> AsyncGenerator[ChatEvent, None]:
        """A streamed turn as typed events, ending with Done(result): the same turn as ``chat``.

        Transport failures are retried as in ``chat`` while nothing of the attempt has reached the caller; after
        its first event such a failure raises MidStreamError with what was received. Events are never replayed,
        and a call whose arguments were cut off is never handed out. A call that fails our checks is held back
        and reflected to the model, as ``chat`` does, even when text was already shown: the caller sees the text
        and the calls that passed, then the next attempt's events. Tool calls the model writes in its text are
        found while streaming and not shown as text. Calls still failing after the last reflection raise
        RetryExhaustedError, after their ToolCallFailed events.
        """
        return self._stream(messages, tools, _fields(options, think, keep_alive, format))

    async def run(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        max_turns: int = 10,
        tools: Tools = None,
        options: Mapping[str, Any] | None = None,
        think: bool | str | None = None,
        keep_alive: str | float | None = None,
        format: str | Mapping[str, Any] | None = None,
    ) -> RunResult:
        """The agent loop: chats, runs each checked call with the registry's function (``registry.arun``), sends the
        results back, and again, until a reply has no calls (``stop_reason`` "answer") or ``max_turns`` chats were
        made ("max_turns"). Failed calls are reflected within each chat, as ``chat`` does; a tool's error goes back
        to the model as its result. Returns the RunResult: ``answer``, the whole ``messages`` transcript, each
        turn's ChatResult. The request keywords are ``chat``'s, sent with every turn."""
        return await self._run(messages, tools, _fields(options, think, keep_alive, format), max_turns)

    # ---- Ollama's wire format --------------------------------------------------------------------------

    def _read_whole(self, reply: Reply) -> None:
        data = reply.data
        if not isinstance(data, dict):
            return
        reply.error_text = error_text(data)
        if reply.error_text is not None or reply.status != 200:
            return
        reply.usage = usage(data)
        reply.finish_reason = reason(data.get("done_reason"))
        # The body as read: the core parses it itself, integers past 64 bits exactly (orjson makes them floats).
        reply.assembly.whole(reply.body, reply.finish_reason)

    async def _read_stream(self, response: httpx.Response, reply: Reply, deadline: float) -> AsyncGenerator[Any, None]:
        cfg = self.config
        asm = reply.assembly
        source = lines(response, cfg.max_response_bytes, cfg.first_byte_timeout_s, cfg.idle_timeout_s, deadline)
        async with aclosing(source):
            async for line in source:
                if not line.strip():
                    continue
                # The core reads the line: calls, text, reasoning, its end, an error.
                events = asm.data(line)
                if asm.provider_error is not None:
                    chunk = read_json(line)[0]
                    reply.error_text = (error_text(chunk) if isinstance(chunk, dict) else None) or asm.provider_error
                    return
                done = asm.ended
                if done:
                    # The last line: its counts and times, read once.
                    chunk = read_json(line)[0]
                    reply.usage = usage(chunk) if isinstance(chunk, dict) else Usage(*(asm.usage or (0, 0)))
                    reply.finish_reason = asm.finish_reason
                    events += asm.end(reply.finish_reason)
                    reply.complete = True
                for event in events:
                    yield event
                if done:
                    return
        reply.failure = "the stream ended before its last line (done)"

    def _option_fields(self, options: Mapping[str, Any]) -> dict[str, Any]:
        # Ollama reads ``format`` beside ``options``, not in them.
        options = dict(options)
        fields: dict[str, Any] = {}
        if "format" in options:
            fields["format"] = options.pop("format")
        if options:
            fields["options"] = options
        return fields

    def _payload(
        self, messages: list[dict[str, Any]], specs: list[dict[str, Any]], fields: Mapping[str, Any], stream: bool
    ) -> dict[str, Any]:
        # A chat's own options are laid over the config's, key by key.
        configured = self.config.options
        if configured and isinstance(fields.get("options"), Mapping):
            base = self._option_fields(configured).get("options", {})
            fields = {**fields, "options": {**base, **fields["options"]}}
        return super()._payload(messages, specs, fields, stream)

    def _wire_call(self, call: ToolCall) -> dict[str, Any]:
        return {"id": call.id, "function": {"index": call.index, "name": call.name, "arguments": call.arguments}}

    def _result_message(self, text: str, calls: list[ToolCall], thinking: str) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": text, "tool_calls": [self._wire_call(c) for c in calls]}
        if thinking:
            message["thinking"] = thinking
        return message


def _fields(options: Any, think: Any, keep_alive: Any, format: Any) -> dict[str, Any]:
    fields = {"options": dict(options) if options else None, "think": think, "keep_alive": keep_alive, "format": format}
    return {k: v for k, v in fields.items() if v is not None}


def error_text(reply: Mapping[str, Any]) -> str | None:
    """Ollama's error message: {"error": "..."}, or older servers' {"error parsing tool call": "..."}."""
    if "message" in reply or "choices" in reply:
        return None
    error = reply.get("error")
    if isinstance(error, str):
        return error
    if isinstance(error, dict) and isinstance(error.get("message"), str):  # its OpenAI-style error object
        return error["message"]
    for key, value in reply.items():
        if key.startswith("error"):
            return f"{key}: {value}"
    return None


def usage(reply: Mapping[str, Any]) -> Usage:
    """Tokens and time of one reply (absent on a prompt-cache hit: zero)."""
    return Usage(
        int(reply.get("prompt_eval_count") or 0), int(reply.get("eval_count") or 0), int(reply.get("total_duration") or 0)
    )
