"""The sync clients: ``SyncOllamaClient`` and ``SyncOpenAICompatibleClient``, for scripts, notebooks, Flask and
Django. Each owns an async client (the one engine: the same lanes, reflection, budgets, breaker, stats) and an
event loop on a private thread that runs it (client.loop_thread); every method waits there for its async twin.
So they work where an event loop already runs in the caller's thread (a notebook cell), and a client's
connections are reused across calls. ``close()`` (or leaving ``with``) closes the connections and ends the thread.
"""

from __future__ import annotations

import asyncio
import random
import time
import weakref
from typing import TYPE_CHECKING, Any, AsyncGenerator, Awaitable, Callable, Generic, Iterator, Mapping, Sequence
from typing import TypeVar

import httpx

from toolmend.client.agent import RunResult
from toolmend.client.engine import Engine, Tools
from toolmend.client.events import ChatEvent, ChatResult
from toolmend.client.ledger import Stats
from toolmend.client.loop_thread import END, LoopThread
from toolmend.client.observe import Hook
from toolmend.client.ollama import OllamaClient
from toolmend.client.openai import OpenAICompatibleClient
from toolmend.config import RetryConfig
from toolmend.registry import ToolRegistry

if TYPE_CHECKING:
    from typing_extensions import Self  # typing.Self from Python 3.11; type checkers ship typing_extensions

__all__ = ["SyncOllamaClient", "SyncOpenAICompatibleClient"]

C = TypeVar("C", bound=Engine)


class SyncClient(Generic[C]):
    """What both sync clients share: the loop thread, the async client made on it, closing, and the stream."""

    def __init__(self, make: Callable[[], C]) -> None:
        self._loop = LoopThread(f"toolmend-{make.__name__}")
        # A client dropped without close() still ends its thread (when collected, or at exit).
        self._finalizer = weakref.finalize(self, self._loop.close)
        try:
            # Made on the loop that will run it: whatever binds to a loop binds to that one.
            self._client: C = self._loop.run(_call(make))
        except BaseException:
            self._finalizer()
            raise
        #: ``client.stats()``: the async client's counters and histograms (``stats.reset()`` zeroes them).
        self.stats: Stats = self._client.stats

    @property
    def registry(self) -> Any:
        """The registry the client was made with."""
        return self._client.registry

    @property
    def config(self) -> RetryConfig:
        """The client's RetryConfig."""
        return self._client.config

    @property
    def model(self) -> str:
        """The model every chat asks."""
        return self._client.model

    @property
    def closed(self) -> bool:
        """True once ``close()`` ran: the loop thread is gone and every method raises RuntimeError."""
        return self._loop.closed

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the connections, writes out the audit file and ends the loop thread (a no-op the second time)."""
        if self._loop.closed:
            return
        try:
            self._loop.run(self._client.aclose())
        finally:
            self._finalizer()

    def _stream(self, stream: AsyncGenerator[ChatEvent, None]) -> Iterator[ChatEvent]:
        # Each event is fetched on the loop while this thread waits; leaving the loop early (break, an exception,
        # the generator collected) closes the stream there, which releases its connection.
        try:
            while True:
                event = self._loop.next(stream)
                if event is END:
                    return
                yield event  # type: ignore[misc]
        finally:
            self._loop.close_stream(stream)


class SyncOllamaClient(SyncClient[OllamaClient]):
    """``with SyncOllamaClient(model="qwen3", registry=reg) as client: result = client.chat(msgs)``: OllamaClient's
    methods, each waiting for its result (``chat_stream`` is a plain iterator). The arguments are OllamaClient's;
    ``sleep`` and the hooks may be coroutine functions (they run on the client's loop)."""

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
        def ollama() -> OllamaClient:
            return OllamaClient(
                host, model, registry, config, http_client=http_client, transport=transport, sleep=sleep, rand=rand,
                clock=clock, on_attempt=on_attempt, on_retry=on_retry, on_give_up=on_give_up,
                tracer_provider=tracer_provider, meter_provider=meter_provider,
            )

        super().__init__(ollama)
        self.host = self._client.host

    def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Tools = None,
        options: Mapping[str, Any] | None = None,
        think: bool | str | None = None,
        keep_alive: str | float | None = None,
        format: str | Mapping[str, Any] | None = None,
    ) -> ChatResult:
        """OllamaClient.chat, waited for."""
        request = _ollama_request(tools, options, think, keep_alive, format)
        return self._loop.run(self._client.chat(messages, **request))

    def chat_stream(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Tools = None,
        options: Mapping[str, Any] | None = None,
        think: bool | str | None = None,
        keep_alive: str | float | None = None,
        format: str | Mapping[str, Any] | None = None,
    ) -> Iterator[ChatEvent]:
        """OllamaClient.chat_stream as a plain iterator of the same events, ending with Done(result)."""
        request = _ollama_request(tools, options, think, keep_alive, format)
        return self._stream(self._client.chat_stream(messages, **request))

    def run(
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
        """OllamaClient.run (the agent loop), waited for: sync tools run in the loop's worker threads."""
        request = _ollama_request(tools, options, think, keep_alive, format)
        return self._loop.run(self._client.run(messages, max_turns=max_turns, **request))


class SyncOpenAICompatibleClient(SyncClient[OpenAICompatibleClient]):
    """``with SyncOpenAICompatibleClient("http://127.0.0.1:8000/v1", "qwen3", registry=reg) as client: ...``:
    OpenAICompatibleClient's methods, each waiting for its result, as SyncOllamaClient."""

    def __init__(
        self,
        base_url: str,
        model: str = "",
        api_key: str | None = None,
        registry: ToolRegistry | None = None,
        config: RetryConfig | None = None,
        *,
        http_client: httpx.AsyncClient | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        headers: Mapping[str, str] | None = None,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        rand: Callable[[], float] = random.random,
        clock: Callable[[], float] = time.monotonic,
        on_attempt: Hook | None = None,
        on_retry: Hook | None = None,
        on_give_up: Hook | None = None,
        tracer_provider: Any = None,
        meter_provider: Any = None,
    ) -> None:
        def openai() -> OpenAICompatibleClient:
            return OpenAICompatibleClient(
                base_url, model, api_key, registry, config, http_client=http_client, transport=transport,
                headers=headers, sleep=sleep, rand=rand, clock=clock, on_attempt=on_attempt, on_retry=on_retry,
                on_give_up=on_give_up, tracer_provider=tracer_provider, meter_provider=meter_provider,
            )

        super().__init__(openai)
        self.base_url = self._client.base_url

    def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Tools = None,
        tool_choice: str | Mapping[str, Any] | None = None,
        parallel_tool_calls: bool | None = None,
        response_format: Mapping[str, Any] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        extra_body: Mapping[str, Any] | None = None,
    ) -> ChatResult:
        """OpenAICompatibleClient.chat, waited for."""
        request = _openai_request(
            tools, tool_choice, parallel_tool_calls, response_format, max_tokens, temperature, extra_body
        )
        return self._loop.run(self._client.chat(messages, **request))

    def chat_stream(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Tools = None,
        tool_choice: str | Mapping[str, Any] | None = None,
        parallel_tool_calls: bool | None = None,
        response_format: Mapping[str, Any] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        extra_body: Mapping[str, Any] | None = None,
    ) -> Iterator[ChatEvent]:
        """OpenAICompatibleClient.chat_stream as a plain iterator of the same events, ending with Done(result)."""
        request = _openai_request(
            tools, tool_choice, parallel_tool_calls, response_format, max_tokens, temperature, extra_body
        )
        return self._stream(self._client.chat_stream(messages, **request))

    def run(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        max_turns: int = 10,
        tools: Tools = None,
        tool_choice: str | Mapping[str, Any] | None = None,
        parallel_tool_calls: bool | None = None,
        response_format: Mapping[str, Any] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        extra_body: Mapping[str, Any] | None = None,
    ) -> RunResult:
        """OpenAICompatibleClient.run (the agent loop), waited for."""
        request = _openai_request(
            tools, tool_choice, parallel_tool_calls, response_format, max_tokens, temperature, extra_body
        )
        return self._loop.run(self._client.run(messages, max_turns=max_turns, **request))


def _ollama_request(tools: Tools, options: Any, think: Any, keep_alive: Any, format: Any) -> dict[str, Any]:
    return {"tools": tools, "options": options, "think": think, "keep_alive": keep_alive, "format": format}


def _openai_request(
    tools: Tools, tool_choice: Any, parallel_tool_calls: Any, response_format: Any, max_tokens: Any, temperature: Any,
    extra_body: Any,
) -> dict[str, Any]:
    return {
        "tools": tools,
        "tool_choice": tool_choice,
        "parallel_tool_calls": parallel_tool_calls,
        "response_format": response_format,
        "max_tokens": max_tokens,
        "temperature": temperature,
        "extra_body": extra_body,
    }


async def _call(make: Callable[[], C]) -> C:
    return make()
