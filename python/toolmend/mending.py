"""Mending under any SDK: an HTTP transport (and the proxy built on the same ``Mender``) that hands chat replies
back mended, so an agent keeps its own stack and gets toolmend by one line.

The transports wrap another transport (by default the HTTP library's own) of ``httpx`` or ``httpx2`` (the newest
openai and anthropic SDKs use ``httpx2``; ollama-python ``httpx``): the library is told by the request each is
given. Chat replies (OpenAI-compatible ``/chat/completions``, Ollama's ``/api/chat``), whole and streamed, come
back with their arguments repaired and the calls written in the content moved into ``tool_calls``. Whatever is
not a chat reply, or not a success, passes through untouched.

- Schemas come from the registry given, else from the request's own ``tools`` (compiled once per distinct list).
- What stays invalid is passed on unchanged and marked: a whole reply carries an ``x-toolmend-errors`` header
  (``CODE@index`` items), a stream an SSE comment (``: toolmend-error CODE index message``) or, in Ollama's
  NDJSON, a line ``{"toolmend_error": {...}}`` that clients skip. Nothing is dropped silently.
- ``reflect=N`` asks the upstream again with the exact errors (the reflection prompt) before answering, up to N
  times, for whole replies.
- A stream keeps flowing: text goes on as it arrives, except text that may start a call, held until that is
  decided (at most one call); a call goes out once whole, with its arguments mended.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections import OrderedDict
from typing import Any, AsyncIterator, Generator, Iterator, Literal

import httpx
import msgspec
import orjson

from toolmend._core import ToolCallAccumulator
from toolmend._states import StreamEventKind as Kind
from toolmend.client.reflection import reflection_messages
from toolmend.registry import ToolRegistry
from toolmend.response import parse_response
from toolmend import _call_log
from toolmend.registry_metrics import correlation_id as current_correlation_id

log = logging.getLogger("toolmend")

Wire = Literal["openai", "ollama"]
#: Headers that describe the body as the upstream sent it, not as it is handed on.
_BODY_HEADERS = frozenset({"content-length", "content-encoding", "transfer-encoding"})
ERRORS_HEADER = "x-toolmend-errors"
MENDED_HEADER = "x-toolmend-mended"


def wire_of(path: str) -> Wire | None:
    """Which chat endpoint a request path names, if any."""
    path = path.rstrip("/")
    if path.endswith("/chat/completions"):
        return "openai"
    if path.endswith("/api/chat"):
        return "ollama"
    return None


class _Asked(msgspec.Struct):
    """What the mending needs of a chat request: its ``tools`` and ``stream``, as their raw JSON (absent: empty).
    The messages, most of a request's bytes, are skipped, not built into Python objects."""

    tools: msgspec.Raw = msgspec.Raw(b"")
    stream: msgspec.Raw = msgspec.Raw(b"")


_ASKED = msgspec.json.Decoder(_Asked)


class Mender:
    """What the transports and the proxy share: the registry for a request, a whole reply mended, a stream
    mended piece by piece. Stateless between requests but for the cache of compiled tool lists, so replicas
    serve one fleet."""

    def __init__(self, registry: ToolRegistry | None = None, *, reflect: int = 0, cache_size: int = 256) -> None:
        if reflect < 0:
            raise ValueError("reflect must be 0 or more")
        self.registry = registry
        self.reflect = reflect
        self._cache: OrderedDict[bytes, ToolRegistry | None] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        #: Counters: replies read, mended, passed on with errors, retried by reflection.
        self.counts = {"replies": 0, "mended": 0, "invalid": 0, "reflected": 0}

    # ---- requests ------------------------------------------------------------------------------------------

    def registry_for(self, request: Any) -> ToolRegistry | None:
        """The registry given, else one compiled from the request's ``tools`` (cached by their JSON)."""
        if self.registry is not None:
            return self.registry
        tools = request.get("tools") if isinstance(request, dict) else None
        if not tools:
            return None
        return self._cached(orjson.dumps(tools, option=orjson.OPT_SORT_KEYS), tools)

    def _registry_for_raw(self, tools: bytes) -> ToolRegistry | None:
        """``registry_for`` for the raw JSON of a request's ``tools`` (absent: empty), cached by those bytes as
        they came: the list is read only when it is new."""
        if self.registry is not None:
            return self.registry
        if not tools or tools in (b"null", b"[]"):
            return None
        return self._cached(tools, None)

    def _cached(self, key: bytes, tools: Any) -> ToolRegistry | None:
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        registry: ToolRegistry | None = None
        try:
            tools = orjson.loads(key) if tools is None else tools
            if tools:
                registry = ToolRegistry.from_tools(tools, strict=False)
        except Exception as e:  # a tool list the registry refuses: calls are still mended, not validated
            log.info("mending: the request's tools were not compiled (%s)", type(e).__name__)
        with self._lock:
            self._cache[key] = registry
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return registry

    @staticmethod
    def streams(wire: Wire, request: Any) -> bool:
        """Whether the request asks for a stream (Ollama streams unless told not to)."""
        default = wire == "ollama"
        return bool(request.get("stream", default)) if isinstance(request, dict) else default

    # ---- whole replies -------------------------------------------------------------------------------------

    def whole(self, wire: Wire, body: bytes, registry: ToolRegistry | None) -> tuple[bytes, list[Any]]:
        """A whole reply's body mended, and the errors left (the body is then handed on as it came)."""
        self.counts["replies"] += 1
        try:
            data = orjson.loads(body)
        except orjson.JSONDecodeError:
            return body, []
        if not isinstance(data, dict):
            return body, []
        if wire == "openai":
            choices = data.get("choices")
            if not isinstance(choices, list):
                return body, []
            errors: list[Any] = []
            changed = False
            for choice in choices:
                mended, errs = self._openai_choice(choice, registry)
                errors.extend(errs)
                changed |= mended
        else:
            changed, errors = self._ollama_message(data, registry)
        if errors:
            self.counts["invalid"] += 1
            return body, errors
        if not changed:
            return body, []
        self.counts["mended"] += 1
        return orjson.dumps(data), []

    def _openai_choice(self, choice: Any, registry: ToolRegistry | None) -> tuple[bool, list[Any]]:
        if not isinstance(choice, dict) or not isinstance(choice.get("message"), dict):
            return False, []
        result = parse_response({"choices": [choice]}, registry)
        if result.errors:
            return False, list(result.errors)
        message = choice["message"]
        if not result.calls or (not _changed(message.get("tool_calls"), result.calls) and result.text == (message.get("content") or "").strip()):
            return False, []
        message["tool_calls"] = [call.to_openai() for call in result.calls]
        message["content"] = result.text or None
        if choice.get("finish_reason") in (None, "stop"):
            choice["finish_reason"] = "tool_calls"
        return True, []

    def _ollama_message(self, data: dict[str, Any], registry: ToolRegistry | None) -> tuple[bool, list[Any]]:
        message = data.get("message")
        if not isinstance(message, dict):
            return False, []
        result = parse_response(data, registry)
        if result.errors:
            return False, list(result.errors)
        if not result.calls or (not _changed(message.get("tool_calls"), result.calls) and result.text == (message.get("content") or "").strip()):
            return False, []
        message["tool_calls"] = [call.to_ollama() for call in result.calls]
        message["content"] = result.text
        return True, []

    def reflected_request(self, wire: Wire, request: dict[str, Any], body: bytes, errors: list[Any], registry: ToolRegistry | None) -> bytes:
        """The request once more, with the model's reply and the exact errors appended (one reflection)."""
        self.counts["reflected"] += 1
        data = orjson.loads(body)
        if wire == "openai":
            text = ((data.get("choices") or [{}])[0].get("message") or {}).get("content") or ""
        else:
            text = (data.get("message") or {}).get("content") or ""
        asked = dict(request)
        # Each refused call is answered by the id the model gave it (`ToolCallError.id`).
        asked["messages"] = list(request.get("messages") or []) + reflection_messages(errors, wire, text=text, registry=registry)
        return orjson.dumps(asked)

    # ---- one exchange ----------------------------------------------------------------------------------------

    def exchange(self, method: str, path: str) -> Generator[tuple[str, Any], Any, tuple[Any, ...]]:
        """One request's mending, written once as a generator of the I/O it needs, which each user (the sync and
        async transports, the proxy) performs its own way:

        - ``("body", None)``: the request's body (bytes);
        - ``("send", None)``: the request sent upstream, or ``("send", body)`` the request with another body (a
          reflection); the response is sent back, anything with a ``status_code``;
        - ``("read", response)``: that response's whole body (bytes), the response then released.

        It returns what to hand back: ``("pass", response)`` as it came, ``("stream", response, StreamMender)``
        its body through the stream's mender, or ``("whole", response, body, headers)`` a whole reply's body with
        the marks to add."""
        wire = wire_of(path)
        if wire is None or method != "POST":
            return ("pass", (yield ("send", None)))
        body = yield ("body", None)
        try:
            asked: _Asked | None = _ASKED.decode(body)
        except msgspec.ValidationError:  # JSON, but no object: no tools, and the stream as the wire's default
            asked = None
        except msgspec.DecodeError:
            return ("pass", (yield ("send", None)))
        registry = self._registry_for_raw(bytes(asked.tools)) if asked is not None else self.registry
        stream = bytes(asked.stream) if asked is not None else b""
        response = yield ("send", None)
        if response.status_code != 200:
            return ("pass", response)
        if bool(orjson.loads(stream)) if stream else wire == "ollama":
            return ("stream", response, self.stream(wire, registry))
        request = orjson.loads(body) if self.reflect and asked is not None else None  # only a reflection needs it all
        for attempt in range(self.reflect + 1):
            reply = yield ("read", response)
            mended, errors = self.whole(wire, reply, registry)
            if not errors or attempt == self.reflect or request is None:
                break
            response = yield ("send", self.reflected_request(wire, request, reply, errors, registry))
            if response.status_code != 200:
                return ("pass", response)
        marks = {ERRORS_HEADER: _error_header(errors)} if errors else {MENDED_HEADER: "1"} if mended != reply else {}
        return ("whole", response, mended, marks)

    # ---- streams -------------------------------------------------------------------------------------------

    def stream(self, wire: Wire, registry: ToolRegistry | None) -> StreamMender:
        self.counts["replies"] += 1
        return StreamMender(self, wire, registry)


def _changed(sent: Any, calls: Any) -> bool:
    """Whether the calls read differ from the ``tool_calls`` the reply sent (repaired, or found in the text)."""
    if not isinstance(sent, list) or len(sent) != len(calls):
        return True
    return any(c.repairs or c.source not in ("tool_calls", "stream") for c in calls)


class StreamMender:
    """One stream, mended as it goes: ``feed(bytes)`` gives the bytes to hand on now, ``end()`` the rest."""

    def __init__(self, mender: Mender, wire: Wire, registry: ToolRegistry | None) -> None:
        self.mender = mender
        self.wire = wire
        self.acc: Any = ToolCallAccumulator(registry)
        # The seed's records of the stream's calls (toolmend._call_log) share one correlation id, as a reply's do.
        self.log = _call_log.Context(current_correlation_id.get() or _call_log.new_correlation_id())
        self.buffer = b""
        self.template: dict[str, Any] = {}
        self.sent_calls = 0
        self.finish: Any = None
        self.finish_line: dict[str, Any] | None = None
        self.tail: list[bytes] = []
        self.errors = 0
        self.done = False
        #: The ids the stream's calls came with, by index: a call handed on invalid keeps the model's own.
        self.ids: dict[int, str] = {}

    def feed(self, data: bytes) -> bytes:
        self.buffer += data
        out: list[bytes] = []
        sep = b"\n\n" if self.wire == "openai" else b"\n"
        while True:
            at = self.buffer.find(sep)
            if at < 0:
                break
            frame, self.buffer = self.buffer[:at], self.buffer[at + len(sep) :]
            out.extend(self._frame(frame))
        return b"".join(out)

    def release(self) -> None:
        """Lets go of the reader on the thread that used it (it belongs to that thread)."""
        self.acc = None

    def end(self) -> bytes:
        out: list[bytes] = []
        if self.buffer.strip():
            out.extend(self._frame(self.buffer))
        self.buffer = b""
        if not self.done:
            out.extend(self._close())
        return b"".join(out)

    # -- frames --

    def _frame(self, frame: bytes) -> list[bytes]:
        if self.wire == "ollama":
            line = frame.strip()
            if not line:
                return []
            return self._payload(line)
        payload: list[bytes] = []
        other: list[bytes] = []
        for line in frame.split(b"\n"):
            line = line.rstrip(b"\r")
            if line.startswith(b"data:"):
                payload.append(line[5:].lstrip())
            elif line:
                other.append(line)
        if not payload:
            return [b"\n".join(other) + b"\n\n"] if other else []
        return self._payload(b"\n".join(payload))

    def _payload(self, payload: bytes) -> list[bytes]:
        if payload == b"[DONE]":
            return self._close()
        try:
            chunk = orjson.loads(payload)
        except orjson.JSONDecodeError:
            return [self._raw(payload)]
        if not isinstance(chunk, dict):
            return [self._raw(payload)]
        out = self._passed(chunk)
        events = self.acc.feed_data(payload)
        out.extend(self._events(events))
        out.extend(self._checked(self.acc.completed()))
        return out

    def _raw(self, payload: bytes) -> bytes:
        return b"data: " + payload + b"\n\n" if self.wire == "openai" else payload + b"\n"

    def _passed(self, chunk: dict[str, Any]) -> list[bytes]:
        """What of an upstream chunk goes on as it came: its frame without the text, calls and finish, which the
        reader hands out (the finish waits for the calls still open)."""
        if self.wire == "openai":
            if not self.template:
                self.template = {k: v for k, v in chunk.items() if k not in ("choices", "usage")}
            choices = chunk.get("choices")
            if not isinstance(choices, list) or not choices:
                # A usage chunk, or an error: kept for after the calls, or passed on.
                if "usage" in chunk and chunk.get("usage") is not None:
                    self.tail.append(self._emit(chunk))
                    return []
                return [self._emit(chunk)]
            kept = []
            for choice in choices:
                if not isinstance(choice, dict):
                    continue
                delta = dict(choice.get("delta") or {})
                for key in ("content", "tool_calls", "reasoning_content", "reasoning"):
                    delta.pop(key, None)
                if choice.get("finish_reason") is not None:
                    self.finish = choice.get("finish_reason")
                if delta:
                    kept.append({"index": choice.get("index", 0), "delta": delta, "finish_reason": None})
            return [self._emit({**self.template, "choices": kept})] if kept else []
        if chunk.get("done"):
            line = dict(chunk)
            message = dict(line.get("message") or {})
            message.pop("tool_calls", None)
            message.pop("thinking", None)
            message["content"] = ""
            line["message"] = message
            self.finish_line = line
            return []
        if not self.template:
            self.template = {k: v for k, v in chunk.items() if k in ("model", "created_at")}
        return []

    def _events(self, events: list[Any]) -> list[bytes]:
        out: list[bytes] = []
        for e in events:
            if e.kind is Kind.TEXT:
                out.append(self._text(e.text, "content"))
            elif e.kind is Kind.REASONING:
                out.append(self._text(e.text, "reasoning_content" if self.wire == "openai" else "thinking"))
            elif e.kind is Kind.STARTED and e.id is not None:
                self.ids[e.index] = e.id
        return out

    def _text(self, text: str, field: str) -> bytes:
        if self.wire == "openai":
            return self._emit({**self.template, "choices": [{"index": 0, "delta": {field: text}, "finish_reason": None}]})
        return self._emit({**self.template, "message": {"role": "assistant", field: text}, "done": False})

    def _checked(self, result: Any) -> list[bytes]:
        if result.calls or result.errors:
            _call_log.result(result, self.log)
        out: list[bytes] = []
        for call in result.calls:
            if self.wire == "openai":
                form = {"index": self.sent_calls, **call.to_openai()}
                out.append(self._emit({**self.template, "choices": [{"index": 0, "delta": {"tool_calls": [form]}, "finish_reason": None}]}))
            else:
                out.append(self._emit({**self.template, "message": {"role": "assistant", "content": "", "tool_calls": [call.to_ollama()]}, "done": False}))
            self.sent_calls += 1
        for error in result.errors:
            self.errors += 1
            out.append(self._mark(error))
        return out

    def _mark(self, error: Any) -> bytes:
        """An invalid call, handed on as the model wrote it, marked where the stream's clients skip it: a call
        written in the text goes on as that text (as a whole reply hands it on), after the text already sent."""
        raw = error.raw_arguments if isinstance(error.raw_arguments, str) else orjson.dumps(error.raw_arguments).decode()
        name = error.tool_name or ""
        written = b"" if error.written is None else self._text(error.written, "content")
        if self.wire == "openai":
            note = f": toolmend-error {error.code} {error.index} {error.message}".replace("\n", " ").encode()
            if error.written is not None:
                return note + b"\n" + written
            call_id = getattr(error, "id", None) or self.ids.get(error.index) or f"call_invalid_{self.sent_calls}"
            form = {"index": self.sent_calls, "id": call_id, "type": "function", "function": {"name": name, "arguments": raw}}
            self.sent_calls += 1
            return note + b"\n" + self._emit({**self.template, "choices": [{"index": 0, "delta": {"tool_calls": [form]}, "finish_reason": None}]})
        mark = {"toolmend_error": {"code": error.code, "index": error.index, "message": error.message, "tool_name": name, "arguments": raw}}
        return orjson.dumps(mark) + b"\n" + written

    def _close(self) -> list[bytes]:
        self.done = True
        out = self._events(self.acc.end(self.finish))
        out.extend(self._checked(self.acc.finish(self.finish)))
        if self.wire == "openai":
            finish = self.finish
            if self.sent_calls and finish in (None, "stop"):
                finish = "tool_calls"
            out.append(self._emit({**self.template, "choices": [{"index": 0, "delta": {}, "finish_reason": finish or "stop"}]}))
            out.extend(self.tail)
            out.append(b"data: [DONE]\n\n")
        else:
            out.append(self._emit(self.finish_line or {**self.template, "message": {"role": "assistant", "content": ""}, "done": True}))
        if self.sent_calls or self.errors:
            self.mender.counts["mended" if not self.errors else "invalid"] += 1
        return out

    def _emit(self, chunk: dict[str, Any]) -> bytes:
        if self.wire == "openai":
            return b"data: " + orjson.dumps(chunk) + b"\n\n"
        return orjson.dumps(chunk) + b"\n"


# ---- transports ------------------------------------------------------------------------------------------------


def _library(request: Any) -> Any:
    """The HTTP library (``httpx`` or ``httpx2``) whose request this is: responses are made of its classes."""
    import importlib

    return importlib.import_module(type(request).__module__.split(".")[0])


def _headers(response: Any, **extra: str) -> list[tuple[str, str]]:
    headers = [(k, v) for k, v in response.headers.items() if k.lower() not in _BODY_HEADERS]
    return headers + list(extra.items())


def _error_header(errors: list[Any]) -> str:
    return ", ".join(f"{e.code}@{e.index}" for e in errors)


class _Transport:
    """What both transports share: the mender, whose ``exchange`` they drive with their library's own I/O, and the
    transport each wraps."""

    def __init__(self, transport: Any = None, *, registry: ToolRegistry | None = None, reflect: int = 0) -> None:
        self.mender = Mender(registry, reflect=reflect)
        self._given = transport
        self._own: dict[str, Any] = {}

    def _inner(self, request: Any, name: str) -> Any:
        if self._given is not None:
            return self._given
        lib = _library(request)
        if lib.__name__ not in self._own:
            self._own[lib.__name__] = getattr(lib, name)()
        return self._own[lib.__name__]


def _again(lib: Any, request: Any, content: bytes) -> Any:
    """``request`` once more with another body (a reflection)."""
    headers = [(k, v) for k, v in request.headers.items() if k.lower() != "content-length"]
    return lib.Request(request.method, request.url, headers=headers, content=content, extensions=request.extensions)


def _outcome(request: Any, outcome: tuple[Any, ...], is_async: bool) -> Any:
    """The response of the request's library for what ``Mender.exchange`` decided."""
    kind, response = outcome[0], outcome[1]
    if kind == "pass":
        return response
    lib = _library(request)
    if kind == "stream":
        stream = _stream_class(lib, is_async)(response, outcome[2])
        return lib.Response(response.status_code, headers=_headers(response), stream=stream, request=request, extensions=response.extensions)
    return lib.Response(response.status_code, headers=_headers(response, **outcome[3]), content=outcome[2], request=request, extensions=response.extensions)


class AsyncMendingTransport(_Transport, httpx.AsyncBaseTransport):
    """An async transport for ``httpx.AsyncClient`` or ``httpx2.AsyncClient`` (so for the openai, anthropic and
    ollama SDKs, pydantic-ai, LangChain, LiteLLM) that hands chat replies back mended. ``transport`` is the one
    it wraps (the library's own by default)."""

    async def handle_async_request(self, request: Any) -> Any:
        inner = self._inner(request, "AsyncHTTPTransport")
        steps = self.mender.exchange(request.method, request.url.path)
        result: Any = None
        try:
            while True:
                kind, arg = steps.send(result)
                if kind == "send":
                    result = await inner.handle_async_request(request if arg is None else _again(_library(request), request, arg))
                elif kind == "body":
                    result = await request.aread()
                else:
                    result = await arg.aread()
                    await arg.aclose()
        except StopIteration as done:
            return _outcome(request, done.value, True)

    async def aclose(self) -> None:
        for transport in [self._given, *self._own.values()]:
            if transport is not None:
                await transport.aclose()


class MendingTransport(_Transport, httpx.BaseTransport):
    """``AsyncMendingTransport`` for the sync ``httpx.Client`` / ``httpx2.Client``."""

    def handle_request(self, request: Any) -> Any:
        inner = self._inner(request, "HTTPTransport")
        steps = self.mender.exchange(request.method, request.url.path)
        result: Any = None
        try:
            while True:
                kind, arg = steps.send(result)
                if kind == "send":
                    result = inner.handle_request(request if arg is None else _again(_library(request), request, arg))
                elif kind == "body":
                    result = request.read()
                else:
                    result = arg.read()
                    arg.close()
        except StopIteration as done:
            return _outcome(request, done.value, False)

    def close(self) -> None:
        for transport in [self._given, *self._own.values()]:
            if transport is not None:
                transport.close()


class _AsyncMended:
    """The body of a mended stream: upstream bytes through the stream's mender (made a byte stream of the
    request's library by ``_stream_class``: clients check the type)."""

    def __init__(self, response: Any, mender: StreamMender) -> None:
        self.response = response
        self.mender = mender

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for piece in self.response.aiter_bytes():
                out = self.mender.feed(piece)
                if out:
                    yield out
            out = self.mender.end()
            if out:
                yield out
        finally:
            self.mender.release()
            await self.response.aclose()

    async def aclose(self) -> None:
        self.mender.release()
        await self.response.aclose()


class _SyncMended:
    """``_AsyncMended`` for sync clients."""

    def __init__(self, response: Any, mender: StreamMender) -> None:
        self.response = response
        self.mender = mender

    def __iter__(self) -> Iterator[bytes]:
        try:
            for piece in self.response.iter_bytes():
                out = self.mender.feed(piece)
                if out:
                    yield out
            out = self.mender.end()
            if out:
                yield out
        finally:
            self.mender.release()
            self.response.close()

    def close(self) -> None:
        self.mender.release()
        self.response.close()


@functools.lru_cache(maxsize=None)
def _stream_class(lib: Any, is_async: bool) -> Any:
    """The mended stream as a byte stream of ``lib`` (``httpx`` or ``httpx2``)."""
    if is_async:
        return type("AsyncMendedStream", (_AsyncMended, lib.AsyncByteStream), {})
    return type("MendedStream", (_SyncMended, lib.SyncByteStream), {})
