"""The OpenAI-compatible twin of ollama_server: the same scripted loopback server on 127.0.0.1 (it answers any
POST, here /v1/chat/completions), and replies in the OpenAI chat-completions shapes: a whole completion,
server-sent events (``data: {chunk}`` lines, arguments in pieces keyed by index, ``finish_reason``, a usage
chunk, ``data: [DONE]``), the error bodies of OpenAI, vLLM and llama.cpp, and 429s with rate-limit headers."""

from __future__ import annotations

import json
from typing import Any

from ollama_server import Reply, ScriptedOllama

#: The server is the same; only what it is scripted to say differs.
ScriptedOpenAI = ScriptedOllama


def _arguments(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def completion(
    *calls: dict[str, Any],
    content: str | None = "",
    finish_reason: str | None = None,
    prompt_tokens: int = 100,
    completion_tokens: int = 50,
) -> Reply:
    """A whole chat completion with tool calls given as {"name", "arguments", "id"?} (arguments sent as a
    string: a dict is dumped, a string is sent as the model wrote it)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [
            {"id": c.get("id", f"call_{i}"), "type": "function", "function": {"name": c["name"], "arguments": _arguments(c["arguments"])}}
            for i, c in enumerate(calls)
        ]
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_800_000_000,
        "model": "test-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason or ("tool_calls" if calls else "stop")}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens},
    }
    return Reply(body=body)


def chunk(delta: dict[str, Any] | None = None, finish_reason: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "test-model",
        "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish_reason}],
        **extra,
    }


def event(data: Any) -> bytes:
    """One server-sent event: a data line and the blank line that ends it."""
    return b"data: " + (data if isinstance(data, bytes) else json.dumps(data).encode()) + b"\n\n"


def sse_lines(
    *calls: dict[str, Any],
    text: list[str] = (),  # type: ignore[assignment]
    finish_reason: str | None = None,
    done: bool = True,
    pieces: int = 3,
    prompt_tokens: int = 100,
    completion_tokens: int = 50,
) -> list[bytes]:
    """A streamed completion: text pieces, then each call (id and name first, its arguments in ``pieces``
    fragments), the finish_reason chunk, a usage chunk and [DONE]. ``done=False`` stops after the calls, as a
    dropped connection would."""
    out = [event(chunk({"role": "assistant", "content": ""})), b": keep-alive\n\n"]
    out += [event(chunk({"content": t})) for t in text]
    for i, c in enumerate(calls):
        first = {"index": i, "id": c.get("id", f"call_{i}"), "type": "function", "function": {"name": c["name"], "arguments": ""}}
        out.append(event(chunk({"tool_calls": [first]})))
        arguments = _arguments(c["arguments"])
        step = max(1, -(-len(arguments) // pieces))
        for at in range(0, len(arguments), step):
            piece = {"index": i, "function": {"arguments": arguments[at : at + step]}}
            out.append(event(chunk({"tool_calls": [piece]})))
    if not done:
        return out
    out.append(event(chunk({}, finish_reason or ("tool_calls" if calls else "stop"))))
    usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens}
    out.append(event({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [], "usage": usage}))
    out.append(event(b"[DONE]"))
    return out


def streamed(*calls: dict[str, Any], **kwargs: Any) -> Reply:
    return Reply(lines=sse_lines(*calls, **kwargs), content_type="text/event-stream")


def error(status: int, message: str, *, style: str = "openai", headers: dict[str, str] | None = None, code: Any = None) -> Reply:
    """An error body as OpenAI and newer vLLM ("openai"), llama.cpp ("llamacpp") or older vLLM ("vllm") send it."""
    if style == "vllm":
        body: dict[str, Any] = {"object": "error", "message": message, "type": "BadRequestError", "param": None, "code": code or status}
    elif style == "llamacpp":
        body = {"error": {"code": code or status, "message": message, "type": "server_error" if status >= 500 else "invalid_request_error"}}
    else:
        body = {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": code}}
    return Reply(status, body, headers or {})
