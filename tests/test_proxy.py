"""`toolmend proxy` served by uvicorn on loopback in front of a scripted upstream, with the real openai SDK and
httpx as its clients: chat replies come back mended, everything else passes through, health and counters answer."""

from __future__ import annotations

import json
import socket
import threading
import time
from typing import Any, Iterator

import httpx
import openai
import pytest
import uvicorn
from ollama_server import Reply, ScriptedOllama, stream_lines
from openai_server import ScriptedOpenAI, completion, streamed

from toolmend import proxy

TOOLS = [{"type": "function", "function": {"name": "read_file", "description": "Read", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}]
MESSAGES = [{"role": "user", "content": "read a.txt"}]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Served:
    def __init__(self, upstream: str, **kw: Any) -> None:
        self.port = _free_port()
        config = uvicorn.Config(proxy.app(upstream, **kw), host="127.0.0.1", port=self.port, log_level="warning", lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        for _ in range(500):  # bounded: up to 5 s to start
            if self.server.started:
                break
            time.sleep(0.01)
        assert self.server.started
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=5)


@pytest.fixture
def upstream() -> Iterator[ScriptedOllama]:
    script = [
        completion({"name": "read_file", "arguments": "{'path': 'a.txt',}"}),
        streamed({"name": "read_file", "arguments": "{'path': 'b.txt',}", "id": "call_b"}, text=["Reading."]),
        Reply(body={"data": [{"id": "m"}]}),
        Reply(lines=stream_lines(text=['<tool_call>{"name": "read_file", "arguments": {"path": "c.txt"}}</tool_call>'])),
    ]
    with ScriptedOpenAI(script) as server:
        yield server


def test_the_proxy_mends_for_any_client_by_its_base_url(upstream: ScriptedOllama) -> None:
    with Served(upstream.url) as url:
        client = openai.OpenAI(base_url=url + "/v1", api_key="x", max_retries=0)
        whole = client.chat.completions.create(model="m", messages=MESSAGES, tools=TOOLS)
        assert json.loads(whole.choices[0].message.tool_calls[0].function.arguments) == {"path": "a.txt"}
        chunks = list(client.chat.completions.create(model="m", messages=MESSAGES, tools=TOOLS, stream=True))
        calls = [tc for c in chunks if c.choices for tc in c.choices[0].delta.tool_calls or []]
        assert [(tc.id, json.loads(tc.function.arguments)) for tc in calls] == [("call_b", {"path": "b.txt"})]
        with httpx.Client(base_url=url) as http:
            assert http.post("/v1/embeddings", json={"input": "x"}).json() == {"data": [{"id": "m"}]}
            lines = [json.loads(line) for line in http.post("/api/chat", json={"model": "m", "messages": MESSAGES, "tools": TOOLS}).content.splitlines()]
            calls = [c for line in lines for c in line["message"].get("tool_calls", [])]
            assert [c["function"]["arguments"] for c in calls] == [{"path": "c.txt"}] and lines[-1]["done"]
            assert http.get("/toolmend/health").json() == {"ok": True}
            stats = http.get("/toolmend/stats").json()
            assert stats["replies"] == 3 and stats["mended"] == 3 and stats["invalid"] == 0
    # What the upstream was sent is what the clients sent.
    assert [r["path"] for r in upstream.requests] == ["/v1/chat/completions", "/v1/chat/completions", "/v1/embeddings", "/api/chat"]
    assert upstream.requests[0]["json"]["tools"] == TOOLS
