"""OllamaClient: an async client for Ollama's /api/chat that returns checked tool calls and recovers when
they fail.

Failures go one of three ways, decided by status and body:

1. model: calls that fail our pipeline, or Ollama's own "error parsing tool call: raw='...'" (HTTP 500, or an
   ``{"error": ...}`` body after 200). The raw text is salvaged locally first; failing that, the model is asked
   again for the failed calls only (reflection), at most ``max_retries`` times.
2. transport: 429, 502, 503, 504, timeouts, dropped connections. Exponential backoff with full jitter and a cap;
   Retry-After (seconds or HTTP date) and retry-after-ms honoured; longer than the cap fails fast.
3. fatal: 404, 400 ("does not support tools", "invalid tool call arguments"), auth, other 4xx: raised at once.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import time
import uuid
from typing import Any, AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence

import httpx
import orjson

from toolmend._core import TextCallParser, ToolCall, ToolCallAccumulator, ToolCallError
from toolmend._log import loggable
from toolmend.client.breaker import CircuitBreaker
from toolmend.client.events import (
    ChatEvent,
    ChatResult,
    Done,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallCompleted,
    ToolCallFailed,
    ToolCallStarted,
)
from toolmend.client.exchange import ReplyTooLarge, _error_text, _json, _left, _lines, _not_a_reply, _read_body, _text
from toolmend.client.lanes import TRANSPORT_STATUSES, _is_model_error, _raw_call_text, _retry_after
from toolmend.client.ledger import Attempt, Stats, Usage, mask_secrets, write_audit
from toolmend.client.reflection import reflect, reflect_raw
from toolmend.config import RetryConfig
from toolmend.errors import MidStreamError, ModelHTTPError, RetryExhaustedError, TokenBudgetError
from toolmend.registry import ToolRegistry
from toolmend.response import parse_response

logger = logging.getLogger("toolmend")

DEFAULT_HOST = "http://127.0.0.1:11434"


class OllamaClient:
    """``async with OllamaClient(model="qwen3", registry=reg) as client: result = await client.chat(msgs)``.

    One httpx.AsyncClient is reused for every chat (pass ``http_client`` or ``transport`` to bring your own);
    many chats may run on one client at once. ``sleep``, ``rand`` and ``clock`` (the circuit breaker's) are
    injectable for tests.
    """

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
    ) -> None:
        self.host = (host or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST).rstrip("/")
        if "://" not in self.host:
            self.host = "http://" + self.host
        self.model = model
        self.registry = registry
        self.config = config or RetryConfig()
        self._own_client = http_client is None
        timeout = httpx.Timeout(self.config.first_byte_timeout_s, connect=self.config.connect_timeout_s)
        limits = httpx.Limits(max_connections=self.config.max_connections, max_keepalive_connections=self.config.max_connections)
        self._http = http_client or httpx.AsyncClient(base_url=self.host, timeout=timeout, transport=transport, limits=limits)
        # Relative to our own client's base URL; absolute for a client the caller brought.
        self._chat_url = "/api/chat" if self._own_client else f"{self.host}/api/chat"
        self._sleep = sleep
        self._rand = rand
        self._breaker = CircuitBreaker(self.config.breaker_threshold, self.config.breaker_reset_s, clock)
        self._stats = Stats()
        # Requests wait here, not in the connection pool: httpcore's pool does work per queued request when
        # one is cancelled, so a long queue made cancelling cost seconds. A semaphore's queue costs nothing.
        self._slots = asyncio.Semaphore(self.config.max_connections)

    async def __aenter__(self) -> OllamaClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._own_client:
            await self._http.aclose()

    # ---- one turn ------------------------------------------------------------------------------------

    async def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Iterable[str | Mapping[str, Any]] | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> ChatResult:
        """Sends the conversation and returns the assistant's checked tool calls, reflecting failed calls
        back to the model and backing off on transport errors. ``messages`` is never modified."""
        cfg = self.config
        correlation_id = uuid.uuid4().hex[:16]
        started = time.monotonic()
        self._breaker.admit(self.model, correlation_id)
        deadline = started + cfg.deadline_s
        work = [dict(m) for m in messages]
        tool_specs = self._tool_specs(tools)
        attempts: list[Attempt] = []
        usage = Usage()
        kept: list[ToolCall] = []
        reflections = 0
        transport_failures = 0
        last_error: Any = None
        last_body: Any = None
        while True:
            number = len(attempts) + 1
            payload = self._payload(work, tool_specs, options, stream=False)
            t0 = time.monotonic()
            try:
                status, headers, body, failure = await self._post(payload, deadline)
            except ReplyTooLarge as e:
                self._note(attempts, correlation_id, Attempt(number, "fatal", e.status, "TLP-007", 0.0, Usage(), time.monotonic() - t0))
                raise e.error() from None
            took = time.monotonic() - t0
            reply = _json(body)
            last_body = reply if reply is not None else body
            attempt_usage = Usage.of(reply) if isinstance(reply, dict) else Usage()
            usage = usage + attempt_usage
            error_text = _error_text(reply) if status is not None else None

            # ---- transport lane ------------------------------------------------------------------------
            if failure is None and status == 200 and not body.strip():
                failure = "an empty reply"
            if failure is not None or status in TRANSPORT_STATUSES or (status == 500 and not _is_model_error(error_text)):
                transport_failures += 1
                why = failure or f"HTTP {status}: {error_text or ''}".strip()
                try:
                    delay = self._transport_delay(transport_failures, why, status, headers, body, deadline)
                except ModelHTTPError:
                    self._note(attempts, correlation_id, Attempt(number, "transport", status, None, 0.0, attempt_usage, took))
                    raise
                self._note(attempts, correlation_id, Attempt(number, "transport", status, None, delay, attempt_usage, took))
                self._log_backoff(transport_failures, why, delay, correlation_id)
                await self._sleep(delay)
                self._check_deadline(deadline, attempts, correlation_id, usage, last_body)
                continue
            transport_failures = 0

            # ---- fatal lane ----------------------------------------------------------------------------
            refusal = _not_a_reply(status, headers, reply, body)
            if refusal is not None:
                self._note(attempts, correlation_id, Attempt(number, "fatal", status, refusal.code, 0.0, attempt_usage, took))
                logger.warning("reply refused (correlation: %s): %s", correlation_id, loggable(refusal.message))
                raise refusal
            if status is not None and status >= 400 and status != 500:
                self._note(attempts, correlation_id, Attempt(number, "fatal", status, None, 0.0, attempt_usage, took))
                message = error_text or _text(body)
                if "invalid tool call arguments" in message:
                    message += " (the history sent held malformed tool-call arguments: a toolmend bug, please report)"
                logger.warning("request refused (correlation: %s): HTTP %s %s", correlation_id, status, loggable(message))
                raise ModelHTTPError(message, status=status, body=_text(body))

            # ---- model lane: Ollama's parser refused the call ------------------------------------------
            if error_text is not None:
                raw = _raw_call_text(error_text)
                salvaged = self._salvage(raw) if raw is not None else None
                if salvaged is not None:
                    self._note(attempts, correlation_id, Attempt(number, "salvaged", status, None, 0.0, attempt_usage, took))
                    calls = _merge(kept, salvaged.calls)
                    message = {"role": "assistant", "content": "", "tool_calls": [_wire_call(c) for c in calls]}
                    return self._result(message, calls, "", usage, attempts, correlation_id, started)
                last_error = error_text
                self._note(attempts, correlation_id, Attempt(number, "model", status, "TLP-004", 0.0, attempt_usage, took))
                if reflections >= cfg.max_retries or self._over_budget(usage):
                    self._exhausted(attempts, last_error, correlation_id, usage, last_body)
                reflections += 1
                work += reflect_raw(raw if raw is not None else error_text, error_text, cfg.retry_prompt_template)
                self._log_reflection(reflections, "?", "TLP-004", correlation_id)
                self._check_deadline(deadline, attempts, correlation_id, usage, last_body)
                continue

            # ---- a reply: our pipeline decides --------------------------------------------------------
            result = parse_response(
                body,
                self.registry,
                repair=cfg.enable_auto_repair,
                max_size=cfg.max_argument_size,
                max_depth=cfg.max_nesting_depth,
                timeout_ms=cfg.repair_timeout_ms,
            )
            message = reply.get("message", {}) if isinstance(reply, dict) else {}
            calls = _merge(kept, result.calls)
            if result.ok:
                self._note(attempts, correlation_id, Attempt(number, "ok", status, None, 0.0, attempt_usage, took))
                self._breaker.succeeded(self.model)
                out = {"role": "assistant", "content": result.text, "tool_calls": [_wire_call(c) for c in calls]}
                if message.get("thinking"):
                    out["thinking"] = message["thinking"]
                return self._result(out, calls, result.text, usage, attempts, correlation_id, started)
            last_error = result.errors[0]
            self._note(attempts, correlation_id, Attempt(number, "model", status, last_error.code, 0.0, attempt_usage, took))
            if reflections >= cfg.max_retries or self._over_budget(usage):
                self._exhausted(attempts, last_error, correlation_id, usage, last_body)
            reflections += 1
            kept = calls
            self._stats.failed(result.errors)
            work += reflect(result.errors, result.text, self.registry, cfg.retry_prompt_template)
            for error in result.errors:
                self._log_reflection(reflections, error.tool_name or "?", error.code, correlation_id)
            self._check_deadline(deadline, attempts, correlation_id, usage, last_body)

    async def chat_stream(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Iterable[str | Mapping[str, Any]] | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> AsyncIterator[ChatEvent]:
        """A streamed turn as typed events, ending with Done(result).

        Transport failures are retried as in ``chat`` while nothing has reached the caller; after the first
        event such a failure raises MidStreamError with what was received. Events are never replayed, and a
        call whose arguments were cut off is never handed out. A call that fails our checks is held back and
        reflected to the model, as ``chat`` does, even when text was already shown: the caller sees the text
        and the calls that passed, then the next attempt's events. Tool calls the model writes in its text
        are found while streaming and not shown as text. Calls still failing after the last reflection raise
        RetryExhaustedError, after the events already yielded.
        """
        cfg = self.config
        correlation_id = uuid.uuid4().hex[:16]
        started = time.monotonic()
        self._breaker.admit(self.model, correlation_id)
        deadline = started + cfg.deadline_s
        work = [dict(m) for m in messages]
        tool_specs = self._tool_specs(tools)
        attempts: list[Attempt] = []
        usage = Usage()
        reflections = 0
        transport_failures = 0
        yielded = False
        kept: list[ToolCall] = []  # calls handed out by earlier attempts of this turn
        shown: list[str] = []  # text handed out by earlier attempts of this turn
        while True:
            number = len(attempts) + 1
            payload = self._payload(work, tool_specs, options, stream=True)
            acc = ToolCallAccumulator(self.registry, max_size=cfg.max_argument_size, max_depth=cfg.max_nesting_depth)
            text_parser = TextCallParser(self.registry, max_size=cfg.max_argument_size, max_depth=cfg.max_nesting_depth)
            text_parts: list[str] = []
            calls: list[ToolCall] = []
            errors: list[ToolCallError] = []
            held: list[Any] = []  # events of this attempt held back from the first failed call on
            outcome: str | None = None  # why this attempt failed, if it did
            status: int | None = None
            headers: httpx.Headers | None = None
            body = b""
            reply_json: Any = None
            attempt_usage = Usage()
            t0 = time.monotonic()
            error_text: str | None = None
            too_large: ReplyTooLarge | None = None
            try:
                remaining = max(0.001, deadline - time.monotonic())
                await asyncio.wait_for(self._slots.acquire(), timeout=remaining)
                try:
                    request = self._request(payload, remaining)
                    response = await asyncio.wait_for(self._http.send(request, stream=True), timeout=_left(deadline))
                    try:
                        status = response.status_code
                        if status != 200:
                            headers = response.headers
                            body = await asyncio.wait_for(_read_body(response, cfg.max_response_bytes), timeout=_left(deadline))
                            reply_json = _json(body)
                            error_text = _error_text(reply_json) or _text(body)
                            outcome = "http"
                        else:
                            lines = _lines(response, cfg.max_response_bytes)
                            try:
                                first = True
                                done = False
                                while True:
                                    wait = cfg.first_byte_timeout_s if first else cfg.idle_timeout_s
                                    try:
                                        line = await asyncio.wait_for(lines.__anext__(), timeout=min(wait, _left(deadline)))
                                    except StopAsyncIteration:
                                        break
                                    first = False
                                    chunk = _json(line) if line.strip() else None
                                    if not isinstance(chunk, dict):
                                        continue
                                    error_text = _error_text(chunk)
                                    if error_text is not None:
                                        outcome = "model"
                                        break
                                    message = chunk.get("message") or {}
                                    content = message.get("content") or ""
                                    new_events: list[Any] = []
                                    if content:
                                        for item in text_parser.feed(content):
                                            new_events.append(self._text_item(item, text_parts, calls, errors))
                                    new_events += self._call_events(acc, acc.feed(chunk), calls, errors)
                                    if chunk.get("done"):
                                        attempt_usage = Usage.of(chunk)
                                        for item in text_parser.flush():
                                            new_events.append(self._text_item(item, text_parts, calls, errors))
                                        new_events += self._finish_events(acc.finish(), calls, errors)
                                        done = True
                                    batch = [e for e in new_events if e is not None]
                                    if held or any(isinstance(e, ToolCallFailed) for e in batch):
                                        # From a failed call on, hold everything: the call may still be reflected.
                                        held += batch
                                    else:
                                        for event in batch:
                                            yielded = True
                                            if isinstance(event, TextDelta):
                                                shown.append(event.text)
                                            yield event
                                    if done:
                                        break
                            finally:
                                # Closed here, not left to the garbage collector (no stray task).
                                await lines.aclose()
                            if outcome is None and not done:
                                outcome = "cut"
                    finally:
                        await response.aclose()
                finally:
                    self._slots.release()
            except ReplyTooLarge as e:
                outcome, too_large = "too_large", e
            except (httpx.TimeoutException, asyncio.TimeoutError):
                outcome, error_text = "transport", "timeout"
            except httpx.TransportError as e:
                outcome, error_text = "transport", f"connection failed ({type(e).__name__})"
            took = time.monotonic() - t0
            usage = usage + attempt_usage
            failed = [e.error for e in held if isinstance(e, ToolCallFailed)]
            if outcome is None and failed:
                outcome = "calls"
            if outcome is None:
                for h in held:
                    yield h
                self._note(attempts, correlation_id, Attempt(number, "ok", status, None, 0.0, attempt_usage, took))
                self._breaker.succeeded(self.model)
                calls = _merge(kept, calls)
                text = "".join(shown) + "".join(e.text for e in held if isinstance(e, TextDelta))
                out = {"role": "assistant", "content": text, "tool_calls": [_wire_call(c) for c in calls]}
                yield Done(self._result(out, calls, text, usage, attempts, correlation_id, started))
                return
            if too_large is not None:
                self._note(attempts, correlation_id, Attempt(number, "fatal", status, "TLP-007", 0.0, attempt_usage, took))
                raise too_large.error()
            if outcome == "calls":
                # The failed calls are reflected; what passed is handed out now, as chat keeps it.
                failed_at = {e.index for e in failed}
                for event in held:
                    if isinstance(event, TextDelta):
                        shown.append(event.text)
                    elif isinstance(event, ToolCallFailed) or getattr(event, "index", None) in failed_at:
                        continue
                    yielded = True
                    yield event
                kept = _merge(kept, calls)
                self._stats.failed(failed)
                self._note(attempts, correlation_id, Attempt(number, "model", status, failed[0].code, 0.0, attempt_usage, took))
                if reflections >= cfg.max_retries or self._over_budget(usage):
                    for error in failed:
                        yield ToolCallFailed(error.index, error)
                    self._exhausted(attempts, failed[0], correlation_id, usage, None)
                reflections += 1
                work += reflect(failed, "".join(text_parts), self.registry, cfg.retry_prompt_template)
                for error in failed:
                    self._log_reflection(reflections, error.tool_name or "?", error.code, correlation_id)
                self._check_deadline(deadline, attempts, correlation_id, usage, None)
                continue
            # A failure of the exchange itself: retried only while the caller has seen nothing.
            lane = "transport" if outcome in ("transport", "cut") or (outcome == "http" and (status in TRANSPORT_STATUSES or (status == 500 and not _is_model_error(error_text)))) else "model"
            if outcome == "http" and lane != "transport" and not _is_model_error(error_text):
                refusal = _not_a_reply(status, headers, reply_json, body) or ModelHTTPError(error_text or "", status=status)
                self._note(attempts, correlation_id, Attempt(number, "fatal", status, refusal.code, 0.0, attempt_usage, took))
                raise refusal
            if yielded:
                raise MidStreamError(
                    f"the stream failed after events were delivered: {error_text or outcome}",
                    attempts=tuple(attempts),
                    last_error=error_text or outcome,
                    correlation_id=correlation_id,
                    response="".join(shown),
                    usage=usage,
                    received=tuple(_merge(kept, calls)),
                )
            if lane == "transport":
                transport_failures += 1
                why = error_text or outcome
                try:
                    delay = self._transport_delay(transport_failures, why, status, headers, body, deadline)
                except ModelHTTPError:
                    self._note(attempts, correlation_id, Attempt(number, "transport", status, None, 0.0, attempt_usage, took))
                    raise
                self._note(attempts, correlation_id, Attempt(number, "transport", status, None, delay, attempt_usage, took))
                self._log_backoff(transport_failures, why, delay, correlation_id)
                await self._sleep(delay)
                self._check_deadline(deadline, attempts, correlation_id, usage, None)
                continue
            # Model lane: Ollama's raw text salvaged, or reflected.
            raw = _raw_call_text(error_text or "")
            salvaged = self._salvage(raw) if raw is not None else None
            if salvaged is not None:
                self._note(attempts, correlation_id, Attempt(number, "salvaged", status, None, 0.0, attempt_usage, took))
                for call in salvaged.calls:
                    yield ToolCallCompleted(call)
                calls = _merge(kept, salvaged.calls)
                text = "".join(shown)
                out = {"role": "assistant", "content": text, "tool_calls": [_wire_call(c) for c in calls]}
                yield Done(self._result(out, calls, text, usage, attempts, correlation_id, started))
                return
            self._note(attempts, correlation_id, Attempt(number, "model", status, "TLP-004", 0.0, attempt_usage, took))
            if reflections >= cfg.max_retries or self._over_budget(usage):
                self._exhausted(attempts, error_text, correlation_id, usage, None)
            reflections += 1
            work += reflect_raw(raw if raw is not None else (error_text or ""), error_text or "", cfg.retry_prompt_template)
            self._log_reflection(reflections, "?", "TLP-004", correlation_id)
            self._check_deadline(deadline, attempts, correlation_id, usage, None)

    @staticmethod
    def _text_item(item: Any, text_parts: list[str], calls: list[ToolCall], errors: list[ToolCallError]) -> Any:
        if isinstance(item, str):
            if not item:
                return None
            text_parts.append(item)
            return TextDelta(item)
        if isinstance(item, ToolCall):
            calls.append(item)
            return ToolCallCompleted(item)
        errors.append(item)
        return ToolCallFailed(item.index, item)

    @staticmethod
    def _call_events(acc: ToolCallAccumulator, events: list[Any], calls: list[ToolCall], errors: list[ToolCallError]) -> list[Any]:
        out: list[Any] = []
        names: dict[int, str] = {}
        for e in events:
            if e.kind == "name":
                names[e.index] = names.get(e.index, "") + (e.text or "")
                out.append(ToolCallStarted(e.index, e.id, names[e.index]))
            elif e.kind == "arguments":
                out.append(ToolCallArgumentsDelta(e.index, e.path or "", e.text or "", acc.partial(e.index)))
        return out + OllamaClient._finish_events(acc.completed(), calls, errors)

    @staticmethod
    def _finish_events(result: Any, calls: list[ToolCall], errors: list[ToolCallError]) -> list[Any]:
        out: list[Any] = []
        for call in result.calls:
            calls.append(call)
            out.append(ToolCallCompleted(call))
        for error in result.errors:
            errors.append(error)
            out.append(ToolCallFailed(error.index, error))
        return out

    # ---- pieces -----------------------------------------------------------------------------------------

    async def _post(
        self, payload: dict[str, Any], deadline: float
    ) -> tuple[int | None, httpx.Headers | None, bytes, str | None]:
        """(status, headers, body, None), or (None, None, b"", why) when no reply came. The deadline bounds the
        whole exchange (waiting for a connection, headers and a body sent a byte at a time), not each read.
        ReplyTooLarge when the body passes ``max_response_bytes``."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None, None, b"", "the chat deadline passed"
        try:
            return await asyncio.wait_for(self._exchange(payload, remaining), timeout=remaining)
        except asyncio.TimeoutError:
            return None, None, b"", "timeout (the chat deadline passed before the reply was read)"
        except httpx.TimeoutException as e:
            return None, None, b"", f"timeout ({type(e).__name__})"
        except httpx.TransportError as e:
            return None, None, b"", f"connection failed ({type(e).__name__}: {e})"

    async def _exchange(self, payload: dict[str, Any], remaining: float) -> tuple[int, httpx.Headers, bytes, None]:
        async with self._slots:
            response = await self._http.send(self._request(payload, remaining), stream=True)
            try:
                body = await _read_body(response, self.config.max_response_bytes)
            finally:
                await response.aclose()
        return response.status_code, response.headers, body, None

    def _request(self, payload: dict[str, Any], remaining: float) -> httpx.Request:
        return self._http.build_request(
            "POST",
            self._chat_url,
            content=orjson.dumps(payload),
            headers={"content-type": "application/json"},
            timeout=httpx.Timeout(
                min(self.config.first_byte_timeout_s, remaining),
                connect=min(self.config.connect_timeout_s, remaining),
            ),
        )

    def _payload(
        self, work: list[dict[str, Any]], tool_specs: list[dict[str, Any]], options: Mapping[str, Any] | None, *, stream: bool
    ) -> dict[str, Any]:
        payload: dict[str, Any] = {"model": self.model, "messages": work, "stream": stream}
        if tool_specs:
            payload["tools"] = tool_specs
        if options:
            payload["options"] = dict(options)
        return payload

    def _transport_delay(
        self, failures: int, why: str, status: int | None, headers: httpx.Headers | None, body: bytes, deadline: float
    ) -> float:
        """How long to wait before the next try: Retry-After when the server says, else the backoff; never past
        the deadline. ModelHTTPError when the transport budget is spent, or the server asks for longer than the cap."""
        cfg = self.config
        if failures > cfg.model_http_retries:
            raise ModelHTTPError(f"{why} (after {failures} tries)", status=status, body=_text(body))
        retry_after = _retry_after(headers) if headers is not None else None
        if retry_after is not None and retry_after * 1000 > cfg.backoff_cap_ms:
            raise ModelHTTPError(
                f"{why}; the server asks to wait {retry_after:.1f}s, over the backoff cap",
                status=status,
                body=_text(body),
                retry_after_s=retry_after,
            )
        delay = retry_after if retry_after is not None else self._backoff(failures)
        return min(delay, max(0.0, deadline - time.monotonic()))

    def _log_backoff(self, failures: int, why: str, delay: float, correlation_id: str) -> None:
        logger.info(
            "Retry attempt %d/%d for %s (correlation: %s): transport, %s, waiting %.3fs",
            failures, self.config.model_http_retries, loggable(self.model), correlation_id, loggable(why), delay,
        )

    def _backoff(self, failures: int) -> float:
        """Full jitter: a uniform draw below the capped exponential."""
        cap = self.config.backoff_cap_ms / 1000
        ceiling = min(cap, self.config.retry_delay_ms / 1000 * 2 ** (failures - 1))
        return ceiling * self._rand()

    def _tool_specs(self, tools: Iterable[str | Mapping[str, Any]] | None) -> list[dict[str, Any]]:
        if tools is None:
            if self.registry is None:
                return []
            names: list[str | Mapping[str, Any]] = [t.name for t in self.registry.tools()]
        else:
            names = list(tools)
        specs = []
        for tool in names:
            if isinstance(tool, Mapping):
                specs.append(dict(tool))
                continue
            if self.registry is None:
                raise ValueError(f"tool {tool!r} given by name, but the client has no registry")
            info = self.registry.get(tool)
            function = {"name": info.name, "description": info.description, "parameters": info.schema}
            specs.append({"type": "function", "function": function})
        return specs

    def _salvage(self, raw: str) -> Any:
        """Ollama's raw='...' text made into a call locally: it names a tool, or it validates against exactly
        one of the registry's tools. None when neither."""
        body = {"message": {"role": "assistant", "content": raw}}
        found = parse_response(body, self.registry)
        if found.calls and found.ok:
            return found
        if self.registry is None:
            return None
        fits = [t.name for t in self.registry.tools() if self.registry.try_validate(t.name, _loose(raw)).ok]
        if len(fits) != 1:
            return None
        reply = {"message": {"tool_calls": [{"function": {"name": fits[0], "arguments": raw}}]}}
        result = parse_response(reply, self.registry)
        return result if result.ok else None

    def _note(self, attempts: list[Attempt], correlation_id: str, attempt: Attempt) -> None:
        """Adds an attempt to the chat's ledger, the client's stats and the audit file."""
        attempts.append(attempt)
        self._stats.attempt(attempt)
        if self.config.audit_path:
            line = {
                "ts": time.time(),
                "correlation_id": correlation_id,
                "model": self.model,
                "attempt": attempt.number,
                "lane": attempt.lane,
                "status": attempt.status,
                "code": attempt.error_code,
                "delay_ms": round(attempt.delay_s * 1000, 3),
                "duration_ms": round(attempt.duration_s * 1000, 3),
                "prompt_tokens": attempt.usage.prompt_tokens,
                "completion_tokens": attempt.usage.completion_tokens,
            }
            write_audit(self.config.audit_path, line)

    def stats(self) -> dict[str, Any]:
        """Counters and latency histograms since the client was made (a copy)."""
        return self._stats.snapshot()

    def _over_budget(self, usage: Usage) -> bool:
        budget = self.config.token_budget
        return budget is not None and usage.total_tokens >= budget

    def _log_reflection(self, n: int, tool: str, code: str, correlation_id: str) -> None:
        logger.info(
            "Retry attempt %d/%d for %s (correlation: %s): model, %s",
            n, self.config.max_retries, loggable(tool), correlation_id, code,
        )

    def _exhausted(self, attempts: list[Attempt], last_error: Any, correlation_id: str, usage: Usage, body: Any) -> None:
        if self._over_budget(usage):
            self._stats.count("chats_over_budget")
            raise TokenBudgetError(
                f"the chat used {usage.total_tokens} tokens of its budget of {self.config.token_budget}",
                attempts=tuple(attempts),
                last_error=last_error,
                correlation_id=correlation_id,
                response=body,
                usage=usage,
            )
        code = getattr(last_error, "code", "TLP-004")
        self._stats.count("chats_exhausted")
        self._breaker.exhausted(self.model)
        logger.warning(
            "tool calls still failing after %d retries (correlation: %s): %s",
            self.config.max_retries, correlation_id, code,
        )
        raise RetryExhaustedError(
            f"tool calls still failing after {self.config.max_retries} retries: {last_error}",
            attempts=tuple(attempts),
            last_error=last_error,
            correlation_id=correlation_id,
            response=body,
            usage=usage,
        )

    def _check_deadline(self, deadline: float, attempts: list[Attempt], correlation_id: str, usage: Usage, body: Any) -> None:
        if time.monotonic() >= deadline:
            raise RetryExhaustedError(
                f"the chat deadline of {self.config.deadline_s}s passed",
                attempts=tuple(attempts),
                last_error="deadline",
                correlation_id=correlation_id,
                response=body,
                usage=usage,
            )

    def _result(
        self,
        message: dict[str, Any],
        calls: list[ToolCall],
        text: str,
        usage: Usage,
        attempts: list[Attempt],
        correlation_id: str,
        started: float,
    ) -> ChatResult:
        if self.config.log_argument_values and logger.isEnabledFor(logging.DEBUG):
            for call in calls:
                logger.debug("call %s %s arguments %s", call.id, call.name, mask_secrets(call.arguments))
        repairs = tuple(r for c in calls for r in c.repairs)
        self._stats.chat_done(calls, time.monotonic() - started)
        return ChatResult(message, tuple(calls), text, usage, tuple(attempts), correlation_id, time.monotonic() - started, repairs)


def _loose(raw: str) -> Any:
    from toolmend.repair import loads

    try:
        return loads(raw)
    except ValueError:
        return None


def _merge(kept: list[ToolCall], new: Iterable[ToolCall]) -> list[ToolCall]:
    """Calls kept from earlier attempts, then new ones that are not repeats of them."""
    seen = {(c.name, orjson.dumps(c.arguments, option=orjson.OPT_SORT_KEYS)) for c in kept}
    out = list(kept)
    for call in new:
        key = (call.name, orjson.dumps(call.arguments, option=orjson.OPT_SORT_KEYS))
        if key not in seen:
            seen.add(key)
            out.append(call)
    return out


def _wire_call(call: ToolCall) -> dict[str, Any]:
    return {"id": call.id, "function": {"index": call.index, "name": call.name, "arguments": call.arguments}}


