"""``toolmend proxy``: the mending of ``toolmend.mending`` as an OpenAI- and Ollama-compatible HTTP server, so a
client in any language gets mended calls by changing its base URL. Stateless (each replica holds only a cache of
compiled tool lists), so several behind any load balancer serve one fleet, and ``--workers N`` runs N processes
on one port. Needs the ``proxy`` extra (Starlette, uvicorn, with httptools and uvloop where they install).

- ``POST .../chat/completions`` and ``POST /api/chat`` are mended, whole and streamed;
- every other request passes through to the upstream unchanged;
- ``GET /toolmend/health`` answers ``{"ok": true}``, ``GET /toolmend/stats`` the counters (of the worker that
  answers).

The app is Starlette (the health and counters routes) whose catch-all route hands the raw ASGI request to
``Proxy``, over a pool of keep-alive connections to the upstream (``toolmend._upstream``, its responses parsed
by httptools), each request driving ``Mender.exchange``, the same exchange the mending transports drive: a whole
reply costs the proxy Starlette's routing, one read of the request, one write upstream, one read of the reply,
the mending (a few µs when nothing needs it) and one write back.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import os
from typing import Any, Awaitable, Callable, MutableMapping, Sequence

import orjson

from toolmend._upstream import Reply, Upstream, UpstreamError
from toolmend.mending import Mender
from toolmend.registry import ToolRegistry

log = logging.getLogger("toolmend")

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

#: Request headers not handed on: hop-by-hop, the body's framing (set anew), and what the proxy decides itself
#: (the upstream is asked for an identity body, which the proxy reads; ``expect`` is answered by the server).
_DROP_ASKED = frozenset(
    {b"host", b"content-length", b"connection", b"keep-alive", b"proxy-connection", b"transfer-encoding", b"te", b"upgrade", b"trailer", b"expect", b"accept-encoding"}
)
#: Response headers not handed on: hop-by-hop and the upstream's framing (the server frames the body itself).
_DROP_ANSWERED = frozenset({b"connection", b"keep-alive", b"proxy-connection", b"transfer-encoding", b"te", b"upgrade", b"trailer"})
_IDENTITY = (b"accept-encoding", b"identity")
_JSON = [(b"content-type", b"application/json")]
#: The body of a 502 when the upstream cannot be reached, breaks off before its reply is whole or answers
#: something not HTTP/1.1: its ``code`` is the ``UpstreamError``'s.
_UNANSWERED = b'{"error":{"message":"toolmend proxy: the upstream did not answer","type":"upstream_error","code":"%s"}}'
#: Environment variables that carry ``toolmend proxy``'s options to each worker process (``--workers``).
ENV_UPSTREAM, ENV_REFLECT, ENV_TOOLS = "TOOLMEND_PROXY_UPSTREAM", "TOOLMEND_PROXY_REFLECT", "TOOLMEND_PROXY_TOOLS"


class Proxy:
    """The forwarding to ``upstream`` as a raw ASGI app: what ``app()``'s catch-all route hands each request to,
    with no Starlette request or response objects on the way (they would cost more than the rest of the
    forwarding)."""

    def __init__(self, upstream: str, *, registry: ToolRegistry | None = None, reflect: int = 0) -> None:
        self.upstream = Upstream(upstream)
        self.mender = Mender(registry, reflect=reflect)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._http(scope, receive, send)

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        method: str = scope["method"]
        path: str = scope["path"]
        pieces: list[bytes] = []
        while True:  # the request body, in the pieces the server hands over
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            pieces.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = pieces[0] if len(pieces) == 1 else b"".join(pieces)
        target = scope.get("raw_path") or path.encode()
        if scope.get("query_string"):
            target += b"?" + scope["query_string"]
        headers = [h for h in scope["headers"] if h[0] not in _DROP_ASKED]
        headers.append(_IDENTITY)
        steps = self.mender.exchange(method, path)
        result: Any = None
        try:
            while True:
                kind, arg = steps.send(result)
                if kind == "send":
                    result = await self.upstream.request(method, target, headers, body if arg is None else arg)
                elif kind == "body":
                    result = body
                else:
                    result = await arg.read()
        except StopIteration as done:
            outcome = done.value
        except UpstreamError as e:
            log.warning("proxy: the upstream did not answer (%s)", e)
            return await _answer(send, 502, _JSON, _UNANSWERED % e.code.encode())
        reply: Reply = outcome[1]
        kept = [h for h in reply.headers if h[0] not in _DROP_ANSWERED]
        if outcome[0] == "whole":
            kept = [h for h in kept if h[0] != b"content-length"]
            kept.extend((k.encode(), v.encode()) for k, v in outcome[3].items())
            kept.append((b"content-length", b"%d" % len(outcome[2])))
            return await _answer(send, reply.status_code, kept, outcome[2])
        if outcome[0] == "stream":
            stream = outcome[2]
            kept = [h for h in kept if h[0] != b"content-length"]
            try:
                await _relay(receive, send, reply, kept, stream.feed, stream.end)
            finally:
                stream.release()
            return None
        if reply.framing == "length" and reply.length <= self.upstream.max_body:  # passed on as it came, read whole
            try:
                content = await reply.read()
            except UpstreamError as e:
                log.warning("proxy: the upstream did not answer (%s)", e)
                return await _answer(send, 502, _JSON, _UNANSWERED % e.code.encode())
            return await _answer(send, reply.status_code, kept, content)
        return await _relay(receive, send, reply, kept, None, None)


async def _answer(send: Send, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _relay(receive: Receive, send: Send, reply: Reply, headers: list[tuple[bytes, bytes]], feed: Callable[[bytes], bytes] | None, end: Callable[[], bytes] | None) -> None:
    """A body handed on as it arrives (through ``feed``, then ``end``, when mended). If the client goes away the
    upstream connection is cut, so the upstream stops too; if the upstream fails midway the error is raised, so
    the server cuts the client's connection rather than end the body as if whole."""
    gone = False

    async def watch() -> None:
        nonlocal gone
        while (await receive())["type"] != "http.disconnect":  # only the disconnect can follow a whole body
            pass
        gone = True
        reply.close()

    watcher = asyncio.ensure_future(watch())
    try:
        await send({"type": "http.response.start", "status": reply.status_code, "headers": headers})
        async for piece in reply.pieces():
            out = feed(piece) if feed is not None else piece
            if out:
                await send({"type": "http.response.body", "body": out, "more_body": True})
        await send({"type": "http.response.body", "body": end() if end is not None else b""})
    except UpstreamError as e:
        if gone:
            return
        log.warning("proxy: the upstream stream broke off (%s)", e)
        raise
    finally:
        watcher.cancel()


def app(upstream: str, *, registry: ToolRegistry | None = None, reflect: int = 0) -> Any:
    """The proxy as an ASGI app (Starlette) in front of ``upstream``; ``app.state.proxy`` is its ``Proxy``."""
    from contextlib import asynccontextmanager

    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Mount, Route

    forward = Proxy(upstream, registry=registry, reflect=reflect)

    async def health(request: Request) -> Response:
        return Response(b'{"ok":true}', media_type="application/json")

    async def stats(request: Request) -> Response:
        return Response(orjson.dumps(forward.mender.counts), media_type="application/json")

    @asynccontextmanager
    async def lifespan(_: Any) -> Any:
        yield
        await forward.upstream.aclose()

    class Routed(Starlette):
        def build_middleware_stack(self) -> Any:
            # The router alone: Starlette's error and exception middleware wrap every request and every message
            # sent (each chunk of a stream), about a third of the 20-25 us Starlette adds to a reply, for what
            # uvicorn does anyway (an exception is logged and answered with a 500); no route raises HTTPException
            # (the catch-all matches every path).
            return self.router

    # Everything but the two routes (any method, any path, GET /toolmend/... included) is forwarded.
    served = Routed(routes=[Route("/toolmend/health", health, methods=["GET"]), Route("/toolmend/stats", stats, methods=["GET"]), Mount("/", app=forward)], lifespan=lifespan)
    served.state.proxy = forward
    return served


def app_from_env() -> Any:
    """The app for each worker of ``toolmend proxy --workers N``: its options come through the environment.

    What is loaded by then (the modules, the app, the tools) is moved out of the garbage collector's sight
    (``gc.freeze``): a full collection otherwise walks those ~30,000 objects every few seconds under load, a
    pause of 10-35 ms on this project's machine that every request in flight waits through (the p99)."""
    tools = os.environ.get(ENV_TOOLS)
    registry = ToolRegistry.from_file(tools) if tools else None
    served = app(os.environ[ENV_UPSTREAM], registry=registry, reflect=int(os.environ.get(ENV_REFLECT, "0")))
    gc.collect()
    gc.freeze()
    return served


def add_command(commands: Any) -> None:
    """``toolmend proxy`` on the CLI's subcommands."""
    proxy = commands.add_parser("proxy", help="serve mended chat replies from an OpenAI- or Ollama-compatible upstream")
    proxy.add_argument("--upstream", required=True, help="the server to forward to, e.g. http://127.0.0.1:11434")
    proxy.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    proxy.add_argument("--port", type=int, default=8808, help="port to listen on (default 8808)")
    proxy.add_argument("--reflect", type=int, default=0, help="ask the upstream again with the exact error, up to N times")
    proxy.add_argument("--tools", help="a tools file whose schemas check the calls (default: each request's own tools)")
    proxy.add_argument("--workers", type=_positive, default=1, help="worker processes on the one port, one per core to use (default 1)")
    proxy.set_defaults(run=serve)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return value


def serve(args: argparse.Namespace) -> int:
    try:
        import uvicorn
    except ImportError:
        print("toolmend proxy needs the proxy extra: pip install 'toolmend[proxy]'")
        return 2
    if args.reflect < 0:
        print("--reflect must be 0 or more")
        return 2
    # The options go through the environment so that every worker (a process of its own) builds the same app;
    # the tools file is read here first, so that a bad one stops the command before any worker starts.
    if args.tools:
        ToolRegistry.from_file(args.tools)
    os.environ[ENV_UPSTREAM] = args.upstream
    os.environ[ENV_REFLECT] = str(args.reflect)
    if args.tools:
        os.environ[ENV_TOOLS] = os.path.abspath(args.tools)
    else:
        os.environ.pop(ENV_TOOLS, None)
    # The upstream's own date and server headers are handed on, not doubled by uvicorn's; no access log and no
    # X-Forwarded-* rewriting (uvicorn's defaults), each a cost on every request that the proxy has no use for.
    uvicorn.run(
        "toolmend.proxy:app_from_env",
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        log_level="warning",
        server_header=False,
        date_header=False,
        access_log=False,
        proxy_headers=False,
        backlog=2048,
    )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="toolmend")
    add_command(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.run(args))
