"""Sending a request: the connection slots, the deadline on every wait, the reply's body read whole or as
a stream. The engine's attempts go through here; the provider reads what comes back."""

from __future__ import annotations

import asyncio
from contextlib import aclosing
from typing import Any, AsyncGenerator

import httpx

from toolmend.client.exchange import Reply, left, read_body, within
from toolmend.config import RetryConfig


class Transport:
    """What the engine sends with: set up by its ``__init__``."""

    config: RetryConfig
    _http: httpx.AsyncClient
    _slots: asyncio.Semaphore
    _url: str
    _headers: dict[str, str]

    def _read_stream(self, response: httpx.Response, reply: Reply, deadline: float) -> AsyncGenerator[Any, None]:
        raise NotImplementedError

    async def _exchange(self, content: bytes, reply: Reply, deadline: float) -> None:
        """A request whose reply is read whole (a chat's, or a stream's error status)."""
        async with self._slots:
            response = await self._http.send(self._request(content, deadline), stream=True)
            try:
                reply.status, reply.headers = response.status_code, response.headers
                reply.body = await read_body(response, self.config.max_response_bytes)
                reply.whole = True
            finally:
                await response.aclose()

    async def _streamed(self, content: bytes, reply: Reply, deadline: float) -> AsyncGenerator[Any, None]:
        """A streamed request: its events as they come. Each wait has its own timeout, ending before a yield (a
        timeout scope open across a yield would fire in the caller's code)."""
        await within(self._slots.acquire(), left(deadline))
        try:
            response = await within(self._http.send(self._request(content, deadline), stream=True), left(deadline))
            try:
                reply.status, reply.headers = response.status_code, response.headers
                if reply.status == 200:
                    async with aclosing(self._read_stream(response, reply, deadline)) as events:
                        async for event in events:
                            yield event
                else:
                    reply.body = await within(read_body(response, self.config.max_response_bytes), left(deadline))
                    reply.whole = True
            finally:
                await response.aclose()
        finally:
            self._slots.release()

    def _request(self, content: bytes, deadline: float) -> httpx.Request:
        cfg = self.config
        remaining = left(deadline)
        timeout = httpx.Timeout(min(cfg.first_byte_timeout_s, remaining), connect=min(cfg.connect_timeout_s, remaining))
        return self._http.build_request("POST", self._url, content=content, headers=self._headers, timeout=timeout)
