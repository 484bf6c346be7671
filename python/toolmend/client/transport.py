"""Sending a request: the connection slots, the deadline on every wait, the reply's body read whole or as
a stream. The engine's attempts go through here; the provider reads what comes back."""

from __future__ import annotations

import asyncio
from contextlib import aclosing
from typing import Any, AsyncGenerator, Callable

import httpx

from toolmend.client.exchange import Reply, left, read_body, within
from toolmend.config import RetryConfig

#: The provider's reader of a streamed 200: ``(response, reply, deadline)``, yielding events as they come.
StreamReader = Callable[[httpx.Response, Reply, float], AsyncGenerator[Any, None]]


class Transport:
    """What the engine sends with: one httpx client, the URL and headers of every request, and the slots."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        url: str,
        headers: dict[str, str],
        config: RetryConfig,
        read_stream: StreamReader,
    ) -> None:
        self.http = http
        self.url = url
        self.headers = headers
        self.config = config
        self.read_stream = read_stream
        # Requests wait here, not in the connection pool: httpcore's pool does work per queued request when
        # one is cancelled, so a long queue made cancelling cost seconds. A semaphore's queue costs nothing.
        self.slots = asyncio.Semaphore(config.max_connections)

    async def exchange(self, content: bytes, reply: Reply, deadline: float) -> None:
        """A request whose reply is read whole (a chat's, or a stream's error status)."""
        async with self.slots:
            response = await self.http.send(self._request(content, deadline), stream=True)
            try:
                reply.status, reply.headers = response.status_code, response.headers
                reply.body = await read_body(response, self.config.max_response_bytes)
                reply.whole = True
            finally:
                await response.aclose()

    async def streamed(self, content: bytes, reply: Reply, deadline: float) -> AsyncGenerator[Any, None]:
        """A streamed request: its events as they come. Each wait has its own timeout, ending before a yield (a
        timeout scope open across a yield would fire in the caller's code)."""
        await within(self.slots.acquire(), left(deadline))
        try:
            response = await within(self.http.send(self._request(content, deadline), stream=True), left(deadline))
            try:
                reply.status, reply.headers = response.status_code, response.headers
                if reply.status == 200:
                    async with aclosing(self.read_stream(response, reply, deadline)) as events:
                        async for event in events:
                            yield event
                else:
                    reply.body = await within(read_body(response, self.config.max_response_bytes), left(deadline))
                    reply.whole = True
            finally:
                await response.aclose()
        finally:
            self.slots.release()

    def _request(self, content: bytes, deadline: float) -> httpx.Request:
        cfg = self.config
        remaining = left(deadline)
        timeout = httpx.Timeout(min(cfg.first_byte_timeout_s, remaining), connect=min(cfg.connect_timeout_s, remaining))
        return self.http.build_request("POST", self.url, content=content, headers=self.headers, timeout=timeout)
