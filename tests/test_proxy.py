"""`toolmend proxy` served by uvicorn on loopback in front of a scripted upstream, with the real openai SDK and
httpx as its clients: chat replies come back mended, everything else passes through, health and counters answer."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
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


class _Uvicorn:
    """An ASGI app served by uvicorn on a loopback port, in a thread, for the length of a ``with``."""

    def __init__(self, app: Any, **config: Any) -> None:
        self.port = _free_port()
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning", **config))
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


class Served(_Uvicorn):
    def __init__(self, upstream: str, **kw: Any) -> None:
        super().__init__(proxy.app(upstream, **kw), lifespan="on")


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


def test_an_unreachable_upstream_is_a_502_and_the_proxy_stays_up() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]  # bound, never listening: connections are refused
        with Served(f"http://127.0.0.1:{closed}") as url, httpx.Client(base_url=url) as http:
            reply = http.post("/v1/chat/completions", json={"model": "m", "messages": MESSAGES, "tools": TOOLS})
            assert reply.status_code == 502 and reply.json()["error"]["type"] == "upstream_error"
            assert http.get("/toolmend/health").json() == {"ok": True}


class RawUpstream:
    """An upstream that answers every request with the same bytes, then closes: HTTP or not."""

    def __init__(self, response: bytes) -> None:
        import socketserver

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                self.request.settimeout(5)
                got = b""
                while b"\r\n\r\n" not in got and (data := self.request.recv(65536)):
                    got += data
                self.request.sendall(response)

        socketserver.ThreadingTCPServer.allow_reuse_address = True
        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize(
    "response, code",
    [
        (b"HTTP/1.1 OK 200\r\ncontent-length: 2\r\n\r\n{}", "upstream_malformed"),
        (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n", "upstream_malformed"),
        (b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n{\"id\": ", "upstream_closed"),
        (b"HTTP/1.1 200 OK\r\n" + b"x-pad: %s\r\n" % (b"a" * 8192) * 200 + b"\r\n{}", "upstream_malformed"),
    ],
    ids=["bad status line", "bad chunk size", "truncated body", "oversized headers"],
)
def test_a_malformed_upstream_response_is_a_coded_502(response: bytes, code: str) -> None:
    with RawUpstream(response) as upstream, Served(upstream) as url, httpx.Client(base_url=url, timeout=10) as http:
        for path in ("/v1/chat/completions", "/v1/models"):  # mended, and passed through
            reply = http.post(path, json={"model": "m", "messages": MESSAGES, "tools": TOOLS})
            assert reply.status_code == 502 and reply.json()["error"] == {"message": "toolmend proxy: the upstream did not answer", "type": "upstream_error", "code": code}
        assert http.get("/toolmend/health").json() == {"ok": True}


class ChunkedUpstream(_Uvicorn):
    """An upstream in Starlette + uvicorn, whose streams come chunked (the scripted servers close-frame theirs)."""

    def __init__(self) -> None:
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import Response, StreamingResponse
        from starlette.routing import Route
        from openai_server import sse_lines

        async def chat(request: Request) -> Response:
            lines = sse_lines({"name": "read_file", "arguments": "{'path': 'd.txt',}", "id": "call_d"}, text=["Reading ", "d."])

            async def pieces() -> Any:
                for line in lines:
                    yield line

            return StreamingResponse(pieces(), media_type="text/event-stream")

        async def generate(request: Request) -> Response:
            async def pieces() -> Any:
                for i in range(50):
                    yield json.dumps({"response": f"w{i} ", "done": i == 49}).encode() + b"\n"

            return StreamingResponse(pieces(), media_type="application/x-ndjson")

        super().__init__(
            Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"]), Route("/api/generate", generate, methods=["POST"])])
        )


def test_chunked_upstream_streams_are_mended_or_passed_through_whole() -> None:
    with ChunkedUpstream() as upstream, Served(upstream) as url:
        client = openai.OpenAI(base_url=url + "/v1", api_key="x", max_retries=0)
        for _ in range(3):  # on connections kept alive between streams
            chunks = list(client.chat.completions.create(model="m", messages=MESSAGES, tools=TOOLS, stream=True))
            calls = [tc for c in chunks if c.choices for tc in c.choices[0].delta.tool_calls or []]
            assert [(tc.id, json.loads(tc.function.arguments)) for tc in calls] == [("call_d", {"path": "d.txt"})]
            assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Reading d."
        with httpx.Client(base_url=url) as http:
            lines = http.post("/api/generate", json={"model": "m", "prompt": "x"}).content.splitlines()
        assert [json.loads(line)["response"] for line in lines] == [f"w{i} " for i in range(50)]


def test_a_client_gone_midstream_stops_the_upstream_stream() -> None:
    lines = [{"model": "m", "message": {"role": "assistant", "content": f"w{i} "}, "done": False} for i in range(100)]
    with ScriptedOllama([Reply(lines=lines, line_delay_s=0.05)]) as server, Served(server.url) as url:
        started = time.monotonic()
        with httpx.Client(base_url=url) as http, http.stream("POST", "/api/chat", json={"model": "m", "messages": MESSAGES}) as reply:
            first = next(reply.iter_lines())
        assert json.loads(first)["message"]["content"] == "w0 "
        # The upstream would stream for 5 s; its connection is cut as soon as the client's is.
        assert server.connections_after_close(timeout_s=3.0) == 0
        assert time.monotonic() - started < 4.0


def _workers(pid: int) -> list[int]:
    """The worker processes uvicorn spawned under ``pid`` (not multiprocessing's resource tracker)."""
    found = []
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            children = [int(p) for p in f.read().split()]
        for child in children:
            with open(f"/proc/{child}/cmdline", "rb") as f:
                if b"spawn_main" in f.read():
                    found.append(child)
    except OSError:
        pass
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="worker processes are counted through /proc")
def test_the_command_serves_with_several_workers_and_a_tools_file(tmp_path: Any) -> None:
    tools = tmp_path / "tools.json"
    strict = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"], "additionalProperties": False}
    tools.write_text(json.dumps([{"name": "read_file", "description": "Read", "parameters": strict}]))
    script = [completion({"name": "read_file", "arguments": "{'path': 'a.txt',}"}), completion({"name": "read_file", "arguments": {"file": "a.txt"}})]
    port = _free_port()
    with ScriptedOpenAI(script) as upstream:
        command = [sys.executable, "-c", "import sys; from toolmend.cli import main; sys.exit(main(sys.argv[1:]))"]
        options = ["proxy", "--upstream", upstream.url, "--port", str(port), "--workers", "2", "--tools", str(tools)]
        server = subprocess.Popen(command + options, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            url = f"http://127.0.0.1:{port}"
            with httpx.Client(base_url=url) as http:
                for _ in range(300):  # bounded: up to 15 s for the workers to start
                    try:
                        if http.get("/toolmend/health").json() == {"ok": True} and len(_workers(server.pid)) >= 2:
                            break
                    except httpx.TransportError:
                        pass
                    time.sleep(0.05)
                assert len(_workers(server.pid)) == 2
                # No tools in the requests: the file's schemas check the calls.
                mended = http.post("/v1/chat/completions", json={"model": "m", "messages": MESSAGES})
                assert json.loads(mended.json()["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]) == {"path": "a.txt"}
                invalid = http.post("/v1/chat/completions", json={"model": "m", "messages": MESSAGES})
                assert invalid.headers["x-toolmend-errors"].startswith("TSR-")
        finally:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(timeout=5)


def test_the_command_refuses_no_workers() -> None:
    with pytest.raises(SystemExit) as stop:
        proxy.main(["proxy", "--upstream", "http://127.0.0.1:1", "--workers", "0"])
    assert stop.value.code == 2


def test_each_worker_s_app_comes_from_the_environment_with_its_loaded_objects_frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    import gc

    monkeypatch.setenv(proxy.ENV_UPSTREAM, "http://127.0.0.1:9/v1")
    monkeypatch.setenv(proxy.ENV_REFLECT, "2")
    monkeypatch.delenv(proxy.ENV_TOOLS, raising=False)
    try:
        served = proxy.app_from_env()
        assert gc.get_freeze_count() > 1000  # the modules and the app: out of the full collections' way
    finally:
        gc.unfreeze()
    forward = served.state.proxy
    assert forward.mender.reflect == 2 and forward.upstream.prefix == b"/v1" and forward.upstream.port == 9


def test_reflect_asks_the_upstream_again_through_the_proxy() -> None:
    script = [completion({"name": "read_file", "arguments": {"path": 7}}), completion({"name": "read_file", "arguments": {"path": "a.txt"}})]
    strict = [{"type": "function", "function": {"name": "read_file", "description": "Read", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}]
    with ScriptedOpenAI(script) as upstream, Served(upstream.url, reflect=1) as url, httpx.Client(base_url=url) as http:
        reply = http.post("/v1/chat/completions", json={"model": "m", "messages": MESSAGES, "tools": strict})
        assert reply.status_code == 200 and "x-toolmend-errors" not in reply.headers
        assert json.loads(reply.json()["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]) == {"path": "a.txt"}
        assert http.get("/toolmend/stats").json()["reflected"] == 1
    asked_again = upstream.requests[1]["json"]["messages"]
    assert len(asked_again) > len(MESSAGES) and "TSR-004" in json.dumps(asked_again)
