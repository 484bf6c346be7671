"""A small Ollama-protocol server for the client tests: it listens on 127.0.0.1 on a free port and answers
POST /api/chat with scripted replies, in order, recording every request it was sent."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


class LoopbackServer(ThreadingHTTPServer):
    """socketserver's listen backlog is 5: hundreds of chats connecting at once on a busy machine overflowed it
    and some connections were reset before they were accepted (a failure of the test server, not the client)."""

    request_queue_size = 1024


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # a dict (sent as JSON), bytes or str
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    drop: bool = False  # close the connection without answering
    lines: list[Any] | None = None  # a streamed reply: NDJSON lines, sent one by one
    line_delay_s: float = 0.0
    write_size: int | None = None  # send the stream in writes of this many bytes (split anywhere)
    trickle_s: float = 0.0  # a non-streamed body sent one byte at a time, this long apart
    content_type: str | None = None  # by default application/json, or application/x-ndjson for lines


def chat_reply(
    *calls: dict[str, Any], content: str = "", prompt_tokens: int = 100, eval_tokens: int = 50
) -> Reply:
    """A non-streamed /api/chat reply with tool calls given as {"name", "arguments", "id"?}."""
    tool_calls = []
    for i, c in enumerate(calls):
        call: dict[str, Any] = {"function": {"index": i, "name": c["name"], "arguments": c["arguments"]}}
        if "id" in c:
            call["id"] = c["id"]
        tool_calls.append(call)
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    body = {
        "model": "test-model",
        "created_at": "2026-11-23T10:00:00Z",
        "message": message,
        "done": True,
        "done_reason": "stop",
        "prompt_eval_count": prompt_tokens,
        "eval_count": eval_tokens,
        "total_duration": 1_000_000,
    }
    return Reply(body=body)


class ScriptedOllama:
    """``with ScriptedOllama([reply, ...]) as server: server.url``; ``server.requests`` holds what came in."""

    def __init__(self, script: list[Reply] | Callable[[Any], Reply], *, keep_alive: bool = False) -> None:
        # A list is replayed in order; a function is asked for each request's reply (fault injection).
        # keep_alive: HTTP/1.1, connections reused between replies (the benches); by default each reply closes
        # its connection, so that a test sees every request on a connection of its own.
        self.script = deque(script) if isinstance(script, list) else script
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        #: Connections open right now (the tests check that none are left behind).
        self.open_connections = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def setup(self) -> None:
                super().setup()
                with outer._lock:
                    outer.open_connections += 1

            def finish(self) -> None:
                try:
                    super().finish()
                finally:
                    with outer._lock:
                        outer.open_connections -= 1

            protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"
            # Headers and body go out in separate writes: with Nagle on, a reused connection waits for the
            # client's delayed ACK (40 ms a reply).
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                payload = json.loads(self.rfile.read(length) or b"null")
                with outer._lock:
                    headers = {k.lower(): v for k, v in self.headers.items()}
                    outer.requests.append({"path": self.path, "json": payload, "headers": headers})
                    if callable(outer.script):
                        reply = outer.script(payload)
                    else:
                        reply = outer.script.popleft() if outer.script else Reply(500, {"error": "script exhausted"})
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.drop:
                    self.close_connection = True
                    self.connection.close()
                    return
                if reply.lines is not None:
                    self.stream(reply)
                    return
                body = reply.body
                data = body if isinstance(body, bytes) else body.encode() if isinstance(body, str) else json.dumps(body).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", reply.content_type or "application/json")
                    self.send_header("content-length", str(len(data)))
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    if reply.trickle_s:
                        for i in range(len(data)):
                            self.wfile.write(data[i : i + 1])
                            self.wfile.flush()
                            time.sleep(reply.trickle_s)
                    else:
                        self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up first (a timeout test)

            def stream(self, reply: Reply) -> None:
                # HTTP/1.0 without a length: the body ends when the connection closes.
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", reply.content_type or "application/x-ndjson")
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    data = b"".join(line if isinstance(line, bytes) else json.dumps(line).encode() + b"\n" for line in reply.lines or [])
                    if reply.write_size:
                        for i in range(0, len(data), reply.write_size):
                            self.wfile.write(data[i : i + reply.write_size])
                            self.wfile.flush()
                    else:
                        for line in reply.lines or []:
                            self.wfile.write(line if isinstance(line, bytes) else json.dumps(line).encode() + b"\n")
                            self.wfile.flush()
                            if reply.line_delay_s:
                                time.sleep(reply.line_delay_s)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                self.close_connection = True

        self._server = LoopbackServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def connections_after_close(self, timeout_s: float = 2.0) -> int:
        """Connections still open once the server threads have had time to see the client's close."""
        deadline = time.monotonic() + timeout_s
        while self.open_connections and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.open_connections

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> ScriptedOllama:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


async def settled_task_count(expected: int) -> int:
    """Tasks running now, after letting finalizers of closed async generators (asyncio's own
    short-lived athrow tasks) finish."""
    import asyncio

    for _ in range(50):
        if len(asyncio.all_tasks()) <= expected:
            break
        await asyncio.sleep(0.01)
    return len(asyncio.all_tasks())


def stream_lines(*calls: dict[str, Any], text: list[str] = (), done: bool = True) -> list[dict[str, Any]]:
    """The lines of a streamed /api/chat reply: text pieces, then one line per whole call, then done."""
    lines: list[dict[str, Any]] = [{"message": {"role": "assistant", "content": t}, "done": False} for t in text]
    for i, c in enumerate(calls):
        call = {"function": {"index": i, "name": c["name"], "arguments": c["arguments"]}}
        if "id" in c:
            call["id"] = c["id"]
        lines.append({"message": {"role": "assistant", "content": "", "tool_calls": [call]}, "done": False})
    if done:
        lines.append({"message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop", "prompt_eval_count": 100, "eval_count": 50})
    return lines
