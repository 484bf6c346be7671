"""The turn engine: one attempt loop under ``chat`` and ``chat_stream`` alike, over a provider's wire format.

As httpx builds ``request()`` and ``stream()`` on one ``send()``, both entry points drive ``_turn``: it sends
attempts until one gives calls that pass, and decides each outcome's lane (see toolmend.client.lanes). The two
differ only in how a reply is read (whole, or line by line with events), which the provider does
(``_read_whole``, ``_read_stream``); reflection, budgets, the breaker, the ledger and the events are the same.
"""

from __future__ import annotations

import asyncio
import logging
import time
from contextlib import aclosing
from typing import TYPE_CHECKING, Any, AsyncGenerator, Awaitable, Callable, Iterable, Mapping, Sequence

import httpx
import orjson

from toolmend._core import ToolCall
from toolmend.client import lanes
from toolmend.client.agent import RunResult, agent_loop
from toolmend.client.assembly import Assembly
from toolmend.client.breaker import CircuitBreaker
from toolmend.client.events import (
    ChatEvent,
    ChatResult,
    Done,
    ToolCallArgumentsDelta,
    ToolCallCompleted,
    ToolCallFailed,
    ToolCallStarted,
)
from toolmend.client.decoding import ACCEPT_ENCODING, UnreadableReply
from toolmend.client.exchange import Reply, json_or_none, left, within
from toolmend.client.history import Form, well_formed
from toolmend.client.ledger import AuditLog, Stats
from toolmend.client.limits import repair_limits
from toolmend.client.observe import Hook, Observers
from toolmend.client.outcomes import Outcomes
from toolmend.client.reflection import FailedCall, turn_reflection
from toolmend.client.toolset import Toolset
from toolmend.client.transport import Transport
from toolmend.client.turn import Turn, merge
from toolmend.config import RetryConfig
from toolmend.errors import ToolmendError
from toolmend._states import Code

if TYPE_CHECKING:
    from typing_extensions import Self  # typing.Self from Python 3.11; type checkers ship typing_extensions

logger = logging.getLogger("toolmend")

Tools = Iterable[str | Mapping[str, Any]] | None
# Events of a call under way: not handed out for a call that failed and is asked again.
_CALL_PROGRESS = (ToolCallStarted, ToolCallArgumentsDelta)


class Engine:
    """What every provider's client shares. A provider sets ``provider`` and ``_path`` and reads its wire
    format: ``_payload``, ``_read_whole``, ``_read_stream``, ``_wire_call``, ``_result_message``.

    The engine runs the attempt loop; it sends through ``_transport`` (a Transport) and settles each attempt
    (lane, ledger, result, error) through ``_outcomes`` (an Outcomes), each made here with what it needs."""

    provider: Form = "ollama"
    _path = ""

    def __init__(
        self,
        base_url: str,
        model: str,
        registry: Any,
        config: RetryConfig | None,
        *,
        http_client: httpx.AsyncClient | None,
        transport: httpx.AsyncBaseTransport | None,
        sleep: Callable[[float], Awaitable[Any]],
        rand: Callable[[], float],
        clock: Callable[[], float],
        headers: Mapping[str, str] | None = None,
        on_attempt: Hook | None = None,
        on_retry: Hook | None = None,
        on_give_up: Hook | None = None,
        tracer_provider: Any = None,
        meter_provider: Any = None,
    ) -> None:
        self.model = model
        # A client made without a config reads the environment (TOOLMEND_*), never a file: a config file is
        # read by RetryConfig.load, and the client takes the config it is given.
        self.config = cfg = config if config is not None else RetryConfig.load(discover=False)
        self._limits = repair_limits(cfg)
        # A streamed call's arguments are held to the stream's buffer size too (tool_call.streaming.buffer_size).
        buffer = cfg.stream_buffer_size
        self._stream_limits = {**self._limits, "max_size": min(cfg.max_size, buffer)} if buffer else self._limits
        self._tools = Toolset(registry, cfg, self._limits)
        self._own_client = http_client is None
        timeout = httpx.Timeout(cfg.first_byte_timeout_s, connect=cfg.connect_timeout_s)
        pool = httpx.Limits(max_connections=cfg.max_connections, max_keepalive_connections=cfg.max_connections)
        http = http_client or httpx.AsyncClient(base_url=base_url, timeout=timeout, transport=transport, limits=pool)
        # Relative to our own client's base URL; absolute for a client the caller brought.
        url = self._path if self._own_client else f"{base_url}{self._path}"
        # Accept-Encoding names only what the client decodes within max_response_bytes (client.decoding): httpx
        # would ask for br and zstd too when their packages are installed, and a caller's value cannot widen it.
        sent_headers = {k: v for k, v in (headers or {}).items() if k.lower() != "accept-encoding"}
        sent_headers = {"content-type": "application/json", **sent_headers, "accept-encoding": ACCEPT_ENCODING}
        self._transport = Transport(http, url, sent_headers, cfg, self._read_stream)
        self._sleep = sleep
        self._breaker = CircuitBreaker(cfg.breaker_threshold, cfg.breaker_reset_s, clock)
        #: ``client.stats()``: counters (every key present from the start), per-model counts and latency
        #: histograms since the client was made or ``client.stats.reset()``.
        self.stats = Stats()
        self._audit = AuditLog(cfg.audit_path) if cfg.audit_path else None
        self._observers = Observers(self.provider, on_attempt, on_retry, on_give_up, tracer_provider, meter_provider)
        backoff = lanes.Backoff(cfg.retry_delay_ms, cfg.backoff_cap_ms, cfg.model_http_retries, rand)
        self._outcomes = Outcomes(
            cfg, self.provider, self._limits, registry, self.stats, self._audit, backoff, self._breaker,
            self._observers, self._result_message,
        )

    @property
    def registry(self) -> Any:
        """The registry the client was made with (calls are checked against it, or its non-strict copy)."""
        return self._tools.registry

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Closes the connections (of a client the engine made itself) and writes out the audit file."""
        if self._own_client:
            await self._transport.http.aclose()
        if self._audit is not None:
            await asyncio.to_thread(self._audit.close)

    # ---- the two entry points ----------------------------------------------------------------------------

    async def _chat(self, messages: Sequence[Mapping[str, Any]], tools: Tools, fields: Mapping[str, Any]) -> ChatResult:
        async with aclosing(self._turn(messages, tools, fields, stream=False)) as events:
            async for event in events:
                if type(event) is Done:
                    return event.result
        raise RuntimeError("a turn ends with Done or an error")  # pragma: no cover

    def _stream(self, messages: Sequence[Mapping[str, Any]], tools: Tools, fields: Mapping[str, Any]) -> AsyncGenerator[ChatEvent, None]:
        return self._turn(messages, tools, fields, stream=True)

    async def _run(
        self, messages: Sequence[Mapping[str, Any]], tools: Tools, fields: Mapping[str, Any], max_turns: int
    ) -> RunResult:
        return await agent_loop(self, messages, tools, fields, max_turns)

    # ---- the attempt loop ----------------------------------------------------------------------------------

    async def _turn(
        self, messages: Sequence[Mapping[str, Any]], tools: Tools, fields: Mapping[str, Any], *, stream: bool
    ) -> AsyncGenerator[ChatEvent, None]:
        cfg = self.config
        turn = Turn(well_formed(messages, self.provider, repair=cfg.enable_auto_repair, limits=self._limits), self.model, 0.0)
        turn.deadline = turn.started + cfg.deadline_s
        observers, outcomes = self._observers, self._outcomes
        hooked = observers.hooked
        if observers.telemetry is not None:
            turn.span = observers.telemetry.chat_started(turn.model, turn.correlation_id, stream)
        try:
            if self._audit is not None:
                self._audit.open()
            self._breaker.admit(turn.model, turn.correlation_id)
            specs = self._tools.specs(tools)
            while True:
                turn.shown = False
                reply: Reply | None = None
                held: list[Any] = []  # events from the first failed call on: that call may still be reflected
                async with aclosing(self._attempt(turn, specs, fields, stream)) as items:
                    async for item in items:
                        if type(item) is Reply:
                            reply = item
                        elif held or type(item) is ToolCallFailed:
                            held.append(item)
                        else:
                            turn.shown = True
                            yield item
                assert reply is not None
                turn.usage = turn.usage + reply.usage
                turn.read()
                turn.last_response = reply.response()
                turn.finish_reason = reply.finish_reason
                lane = outcomes.lane(turn, reply)
                if lane in (lanes.TRANSPORT, lanes.REJECTED):
                    delay = outcomes.retry(turn, reply, lane)
                    if hooked:
                        await outcomes.announce(turn, retry=True)
                    await self._sleep(delay)
                    outcomes.check_deadline(turn)
                    continue
                turn.transport_failures = 0
                asm = reply.assembly
                calls, failures = asm.ordered_calls(), list(asm.errors)
                outcomes.count_validations(turn, calls, failures)
                refused: FailedCall | None = None
                if lane == lanes.MODEL:  # the server's own parser refused the call
                    raw = lanes.raw_call_text(reply.error_text or "")
                    salvaged = self._tools.salvage(raw) if raw is not None and not failures else None
                    if salvaged is not None:
                        for call in salvaged.calls:
                            yield ToolCallCompleted(call)
                        outcomes.note(turn, lanes.SALVAGED, reply)
                        result = outcomes.succeed(turn, reply, calls + list(salvaged.calls))
                        if hooked:
                            await outcomes.announce(turn)
                        yield Done(result)
                        return
                    error_text = reply.error_text or ""
                    refused = FailedCall(Code.UNPARSEABLE, error_text, None, raw if raw is not None else error_text, -1)
                    failures.append(refused)
                if not failures:
                    for event in held:
                        yield event
                    outcomes.note(turn, lanes.OK, reply)
                    result = outcomes.succeed(turn, reply, calls)
                    if hooked:
                        await outcomes.announce(turn)
                    yield Done(result)
                    return
                # The failed calls are reflected; what passed is handed out now, and kept.
                for event in held:
                    kind = type(event)
                    if kind is ToolCallFailed or (kind in _CALL_PROGRESS and event.index in asm.failed_wire):
                        continue
                    yield event
                merged = merge(turn.kept, calls)
                outcomes.taken(turn, reply, merged[len(turn.kept) :])
                turn.kept = merged
                turn.texts.append(asm.text)
                self.stats.failed(failures)
                last = turn.reflections >= cfg.max_retries or outcomes.over_budget(turn)
                # Reflections are spaced as the seed says: retry_delay_ms, doubling (100, 200, 400 ms).
                delay = 0.0 if last else outcomes.reflection_delay(turn)
                outcomes.note(turn, lanes.MODEL, reply, failures[0].code, delay)
                if last:
                    for failure in failures:
                        yield ToolCallFailed(failure.index, failure)
                    outcomes.given_up(turn, reply, failures)
                    outcomes.exhausted(turn, failures[0])
                turn.reflections += 1
                turn.messages += turn_reflection(
                    failures, asm, refused, self.provider, self._tools.checking(), self.config.retry_prompt_template
                )
                outcomes.retrying(turn, reply, failures, delay)
                if hooked:
                    await outcomes.announce(turn, retry=True)
                if delay > 0:
                    await self._sleep(delay)
                outcomes.check_deadline(turn)
        except ToolmendError as error:
            turn.error = error
            outcomes.failed(turn, error)
            if hooked:
                await outcomes.announce(turn)
                await observers.call(observers.on_give_up, turn.attempts[-1] if turn.attempts else None, error)
            raise
        except asyncio.CancelledError as error:
            turn.error = error
            self.stats.count("chats_cancelled")
            raise
        finally:
            if turn.span is not None:
                observers.telemetry.chat_ended(
                    turn.span, turn.model, turn.elapsed(), turn.usage, len(turn.attempts), turn.finish_reason, turn.error
                )

    async def _attempt(
        self, turn: Turn, specs: list[dict[str, Any]], fields: Mapping[str, Any], stream: bool
    ) -> AsyncGenerator[Any, None]:
        """One request: its events while it streams, then its Reply (last, always). The deadline bounds the
        whole exchange (waiting for a connection, the headers, a body sent a byte at a time), not each read."""
        cfg = self.config
        # streaming: false (the seed's model.providers.<provider>.streaming) reads whole replies under chat_stream
        # too, and hands out each one's events once it is read.
        streamed = stream and cfg.streaming
        limits = self._stream_limits if streamed else self._limits
        reply = Reply(Assembly(self._tools.checking(), limits, cfg.enable_auto_repair, cfg.max_concurrent_calls))
        content = orjson.dumps(self._payload(turn.messages, specs, fields, streamed))
        t0 = time.monotonic()
        try:
            if streamed:
                async with aclosing(self._transport.streamed(content, reply, turn.deadline)) as events:
                    async for event in events:
                        yield event
            else:
                # Nothing is handed out while a reply is read whole: one timeout scope covers it all.
                await within(self._transport.exchange(content, reply, turn.deadline), left(turn.deadline))
        except UnreadableReply as e:
            reply.unreadable = e
        except (asyncio.TimeoutError, TimeoutError):
            reply.failure = "timeout (the chat deadline or the wait for the next piece of the reply passed)"
        except httpx.TimeoutException as e:
            reply.failure = f"timeout ({type(e).__name__})"
        except httpx.TransportError as e:
            reply.failure = f"connection failed ({type(e).__name__}: {e})"
        finally:
            reply.assembly.release()
        if reply.whole and reply.unreadable is None and reply.failure is None:
            if reply.status == 200 and not reply.body.strip():
                reply.failure = "an empty reply"
            else:
                reply.data = json_or_none(reply.body)
                self._read_whole(reply)
                if stream:
                    for event in reply.assembly.whole_events():
                        yield event
        reply.duration_s = time.monotonic() - t0
        yield reply

    # ---- what a provider supplies ---------------------------------------------------------------------

    def _payload(
        self, messages: list[dict[str, Any]], specs: list[dict[str, Any]], fields: Mapping[str, Any], stream: bool
    ) -> dict[str, Any]:
        """The request body: model, messages, stream flag and tools, then the caller's request fields (which
        win). Both wire formats name these the same; a provider adds what only it sends."""
        payload: dict[str, Any] = {"model": self.model, "messages": messages, "stream": stream}
        if specs:
            payload["tools"] = specs
        payload.update(self._option_fields(self.config.options) if self.config.options else {})
        payload.update(fields)
        return payload

    def _option_fields(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """The request fields of the config's model options (``RetryConfig.options``); the chat's own fields
        are laid over them."""
        raise NotImplementedError

    def _read_whole(self, reply: Reply) -> None:
        """Fills ``reply`` (error_text, usage, finish_reason, its assembly) from ``reply.data``/``reply.body``."""
        raise NotImplementedError

    def _read_stream(self, response: httpx.Response, reply: Reply, deadline: float) -> AsyncGenerator[Any, None]:
        """Reads a streamed reply into ``reply`` and its assembly, yielding the assembly's events as they come."""
        raise NotImplementedError

    def _wire_call(self, call: ToolCall) -> dict[str, Any]:
        raise NotImplementedError

    def _result_message(self, text: str, calls: list[ToolCall], thinking: str) -> dict[str, Any]:
        """The assistant message of a chat's result, in the provider's wire format."""
        raise NotImplementedError
