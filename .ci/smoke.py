"""Smoke test of an installed toolmend (a wheel or an sdist build), run by .ci/wheel.sh and the release workflow.

It needs only the package and its dependencies: no checkout files, no test extras, no network beyond a
loopback server it starts itself on 127.0.0.1. Each step checks a result the README promises:
repair, parse_response with a registry, the accumulator over a raw SSE stream, and one client turn.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import toolmend

READ_FILE = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "encoding": {"enum": ["utf-8", "ascii"]}},
    "required": ["path"],
}


def check_repair() -> None:
    r = toolmend.repair("""{path: 'notes.txt', "content": "He said "hi"", append: True,}""")
    assert json.loads(r.json) == {"path": "notes.txt", "content": 'He said "hi"', "append": True}, r.json
    assert "trailing_comma" in [x.kind for x in r.repairs]
    assert toolmend.loads("{'a': [1, 2,") == {"a": [1, 2]}


def registry() -> toolmend.ToolRegistry:
    reg = toolmend.ToolRegistry()
    reg.register("read_file", READ_FILE, description="Read a text file")
    return reg


def check_parse_response(reg: toolmend.ToolRegistry) -> None:
    reply = {"message": {"role": "assistant", "content": "Reading.",
                         "tool_calls": [{"function": {"name": "read_file", "arguments": {"path": "notes.txt"}}}]}}
    result = toolmend.parse_response(json.dumps(reply).encode(), reg)
    assert result.ok and [(c.name, c.arguments) for c in result.calls] == [("read_file", {"path": "notes.txt"})]
    text = "I'll look.\n<tool_call>\n{'name': 'read_file', 'arguments': {'path': 'a.txt',}}"
    result = toolmend.parse_response(text, reg)
    assert [(c.name, c.arguments, c.source) for c in result.calls] == [("read_file", {"path": "a.txt"}, "hermes")]
    result = toolmend.parse_response({"error": "model 'qwen9' not found"}, reg)
    assert [e.code for e in result.errors] == ["TLP-011"], result.errors


def sse(delta: dict, finish_reason: str | None = None) -> bytes:
    chunk = {"choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


def check_accumulator(reg: toolmend.ToolRegistry) -> None:
    wire = (
        sse({"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": ""}}]})
        + sse({"tool_calls": [{"index": 0, "function": {"arguments": "{'path': 'no"}}]})
        + sse({"tool_calls": [{"index": 0, "function": {"arguments": "tes.txt',}"}}]})
        + sse({}, "tool_calls")
        + b"data: [DONE]\n\n"
    )
    acc = toolmend.ToolCallAccumulator(reg)
    kinds = []
    for start in range(0, len(wire), 37):  # cut anywhere, as off a socket
        kinds += [event.kind for event in acc.feed(wire[start:start + 37])]
    result = acc.finish()
    assert "started" in kinds and "completed" in kinds, kinds
    assert [(c.id, c.name, c.arguments) for c in result.calls] == [("call_1", "read_file", {"path": "notes.txt"})]


class Ollama(BaseHTTPRequestHandler):
    """Plays Ollama's /api/chat: the first reply breaks the schema (an unknown property), the second is right."""

    replies: list[dict] = []
    requests: list[dict] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.requests.append(json.loads(body))
        arguments = self.replies.pop(0)
        out = json.dumps({
            "model": "test-model", "created_at": "2026-11-27T10:00:00Z", "done": True, "done_reason": "stop",
            "message": {"role": "assistant", "content": "",
                        "tool_calls": [{"function": {"index": 0, "name": "read_file", "arguments": arguments}}]},
            "prompt_eval_count": 100, "eval_count": 20,
        }).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args: object) -> None:
        pass


def check_client(reg: toolmend.ToolRegistry) -> None:
    Ollama.replies = [{"path": "notes.txt", "mode": "r"}, {"path": "notes.txt"}]
    server = ThreadingHTTPServer(("127.0.0.1", 0), Ollama)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host, port = server.server_address[:2]

    async def turn() -> toolmend.ChatResult:
        async with toolmend.OllamaClient(host=f"http://{host}:{port}", model="test-model", registry=reg) as client:
            return await client.chat([{"role": "user", "content": "Read notes.txt"}])

    try:
        result = asyncio.run(turn())
    finally:
        server.shutdown()
        server.server_close()
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("read_file", {"path": "notes.txt"})]
    assert [a.error_code for a in result.attempts] == ["TSR-005", None], result.attempts
    assert len(Ollama.requests) == 2 and "TSR-005" in json.dumps(Ollama.requests[1])


def main() -> None:
    reg = registry()
    check_repair()
    check_parse_response(reg)
    check_accumulator(reg)
    check_client(reg)
    print(f"smoke ok: toolmend from {toolmend.__file__} on Python {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
