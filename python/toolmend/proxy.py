"""``toolmend proxy``: the mending of ``toolmend.mending`` as an OpenAI- and Ollama-compatible HTTP server, so a
client in any language gets mended calls by changing its base URL. Stateless (each replica holds only a cache of
compiled tool lists), so several behind any load balancer serve one fleet. Needs the ``proxy`` extra (Starlette
and uvicorn).

- ``POST .../chat/completions`` and ``POST /api/chat`` are mended, whole and streamed;
- every other request passes through to the upstream unchanged;
- ``GET /toolmend/health`` answers ``{"ok": true}``, ``GET /toolmend/stats`` the counters.
"""

from __future__ import annotations

import argparse
import contextlib
from typing import Any, AsyncIterator, Sequence

import httpx

from toolmend.mending import AsyncMendingTransport
from toolmend.registry import ToolRegistry

#: Hop-by-hop headers, and those that describe the body as the upstream sent it.
_DROP = frozenset({"host", "content-length", "connection", "keep-alive", "transfer-encoding", "content-encoding", "accept-encoding"})


def app(upstream: str, *, registry: ToolRegistry | None = None, reflect: int = 0, transport: Any = None) -> Any:
    """The proxy as an ASGI app (Starlette) in front of ``upstream``."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response, StreamingResponse
    from starlette.routing import Route

    # No cap on connections to the upstream beyond the clients' own: a stream holds one for its whole length.
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=256)
    inner = transport if transport is not None else httpx.AsyncHTTPTransport(limits=limits)
    mending = AsyncMendingTransport(inner, registry=registry, reflect=reflect)
    client = httpx.AsyncClient(base_url=upstream.rstrip("/"), transport=mending, timeout=httpx.Timeout(600.0, connect=10.0))

    async def health(_: Request) -> Response:
        return JSONResponse({"ok": True})

    async def stats(_: Request) -> Response:
        return JSONResponse(dict(mending.mender.counts))

    async def forward(request: Request) -> Response:
        headers = [(k, v) for k, v in request.headers.items() if k.lower() not in _DROP]
        outgoing = client.build_request(request.method, request.url.path, params=request.query_params, headers=headers, content=await request.body())
        response = await client.send(outgoing, stream=True)
        kept = {k: v for k, v in response.headers.items() if k.lower() not in _DROP}

        async def body() -> AsyncIterator[bytes]:
            try:
                async for piece in response.aiter_bytes():
                    yield piece
            finally:
                await response.aclose()

        return StreamingResponse(body(), status_code=response.status_code, headers=kept)

    @contextlib.asynccontextmanager
    async def lifespan(_: Any) -> AsyncIterator[None]:
        yield
        await client.aclose()

    routes = [
        Route("/toolmend/health", health, methods=["GET"]),
        Route("/toolmend/stats", stats, methods=["GET"]),
        Route("/{path:path}", forward, methods=["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"]),
    ]
    return Starlette(routes=routes, lifespan=lifespan)


def add_command(commands: Any) -> None:
    """``toolmend proxy`` on the CLI's subcommands."""
    proxy = commands.add_parser("proxy", help="serve mended chat replies from an OpenAI- or Ollama-compatible upstream")
    proxy.add_argument("--upstream", required=True, help="the server to forward to, e.g. http://127.0.0.1:11434")
    proxy.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    proxy.add_argument("--port", type=int, default=8808, help="port to listen on (default 8808)")
    proxy.add_argument("--reflect", type=int, default=0, help="ask the upstream again with the exact error, up to N times")
    proxy.add_argument("--tools", help="a tools file whose schemas check the calls (default: each request's own tools)")
    proxy.set_defaults(run=serve)


def serve(args: argparse.Namespace) -> int:
    try:
        import uvicorn
    except ImportError:
        print("toolmend proxy needs the proxy extra: pip install 'toolmend[proxy]'")
        return 2
    registry = ToolRegistry.from_file(args.tools) if args.tools else None
    uvicorn.run(app(args.upstream, registry=registry, reflect=args.reflect), host=args.host, port=args.port, log_level="warning")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="toolmend")
    add_command(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.run(args))
