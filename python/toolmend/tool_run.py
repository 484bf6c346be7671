"""Tools that run: the function a registered tool keeps, how a checked call reaches it, and the result that goes
back to the model as a message (``ToolRegistry.run`` / ``arun``; see toolmend.registry).

A tool's function is called with the validated arguments: as keyword arguments built through the same pydantic
model its schema came from (so a ``datetime`` parameter gets a datetime, a model parameter its instance), as one
model instance for a tool registered from a model, or as LangChain's ``invoke`` input. What it returns is the
result's ``output``; what it raises as an ``Exception`` is the result's ``error``, for the model to read. What is
not an ``Exception`` (``asyncio.CancelledError``, ``KeyboardInterrupt``, ``SystemExit``) is never caught: an
agent that is stopped stops.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import json
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Mapping

import orjson

if TYPE_CHECKING:  # the SDKs' own message types, when they are installed (Any otherwise)
    from anthropic.types import ToolResultBlockParam
    from openai.types.chat import ChatCompletionToolMessageParam

__all__ = ["Runner", "ToolResult", "ToolRunError", "output_text"]

logger = logging.getLogger("toolmend")

#: ``(args, kwargs)`` for the function, from the validated arguments.
Arguments = tuple[tuple[Any, ...], dict[str, Any]]


@dataclass(frozen=True)
class ToolRunError:
    """Why a call did not give an output: ``type`` is the exception's class name (``ValueError``,
    ``ValidationError``, ``UnknownToolError``, ``NotImplementedError`` for a tool with no function), ``message``
    its text, ``code`` the TSR code when the arguments were refused."""

    type: str
    message: str
    code: str | None = None

    def __str__(self) -> str:
        return f"{self.type}: {self.message}"


@dataclass(frozen=True)
class ToolResult:
    """What running one call gave: ``output`` (what the function returned) or ``error`` (a ToolRunError), and the
    call's id and tool name, to answer the call in the provider's form (``to_openai``, ``to_ollama``,
    ``to_anthropic``)."""

    call_id: str | None
    name: str
    output: Any = None
    error: ToolRunError | None = None

    @property
    def ok(self) -> bool:
        """True when the function returned (``output`` holds what it returned, None included)."""
        return self.error is None

    @property
    def content(self) -> str:
        """The text the model reads: the output as it is when it is a str, else as JSON text; for an error,
        ``Error: <type>: <message>``."""
        if self.error is not None:
            return f"Error: {self.error}"
        return output_text(self.output)

    def to_openai(self) -> ChatCompletionToolMessageParam:
        """An OpenAI ``tool`` message answering the call: ``{"role": "tool", "tool_call_id", "content"}``."""
        return {"role": "tool", "tool_call_id": self.call_id or "", "content": self.content}

    def to_ollama(self) -> dict[str, Any]:
        """An Ollama ``tool`` message: ``{"role": "tool", "tool_name", "content"}`` (Ollama matches a result to
        its call by the tool's name; research/wire_formats.md)."""
        return {"role": "tool", "tool_name": self.name, "content": self.content}

    def to_anthropic(self) -> ToolResultBlockParam:
        """An Anthropic ``tool_result`` content block (``tool_use_id``, ``content``, and ``is_error`` on an error),
        to send in the next user message."""
        block: ToolResultBlockParam = {"type": "tool_result", "tool_use_id": self.call_id or "", "content": self.content}
        if self.error is not None:
            block["is_error"] = True
        return block


@dataclass(frozen=True)
class Runner:
    """How a registered tool runs: ``function`` called with what ``arguments`` makes of the validated arguments.
    ``is_async``: it returns an awaitable (a coroutine function, or LangChain's ``ainvoke``-only tool);
    ``async_function``, when set, is the native async entry ``arun`` prefers (LangChain's ``ainvoke``)."""

    function: Callable[..., Any]
    arguments: Callable[[Any], Arguments]
    is_async: bool = False
    async_function: Callable[..., Awaitable[Any]] | None = None

    def call(self, value: Any) -> Any:
        """Runs the tool in this thread: an async one on an event loop of its own (in a worker thread when this
        thread already runs one, which it must not block on itself)."""
        args, kwargs = self.arguments(value)
        out = self.function(*args, **kwargs)
        if inspect.isawaitable(out):
            return _wait(out)
        return out

    async def acall(self, value: Any) -> Any:
        """Runs the tool on the running loop: an async one awaited, a sync one in a thread (``asyncio.to_thread``),
        so a slow tool never stalls the loop."""
        args, kwargs = self.arguments(value)
        if self.async_function is not None:
            out = await self.async_function(*args, **kwargs)
        elif self.is_async:
            out = await self.function(*args, **kwargs)
        else:
            out = await asyncio.to_thread(self.function, *args, **kwargs)
        if inspect.isawaitable(out):  # a sync function that handed back a coroutine (a partial of an async one)
            out = await out
        return out


def keyword_arguments(value: Any) -> Arguments:
    """The validated arguments object as keyword arguments."""
    return (), dict(value) if isinstance(value, Mapping) else {}


def single_argument(value: Any) -> Arguments:
    """The input as one positional argument (LangChain's ``invoke(input)``)."""
    return (value,), {}


def function_runner(fn: Callable[..., Any], model: Any = None, tool_name: str = "") -> Runner:
    """The runner of a plain function: keyword arguments, each made into its parameter's type through ``model``
    (the pydantic model of its signature, when there is one); positional-only parameters positionally."""
    from toolmend.typed import into_model

    positional = [
        p.name for p in inspect.signature(fn).parameters.values() if p.kind is inspect.Parameter.POSITIONAL_ONLY
    ]

    def arguments(value: Any) -> Arguments:
        given = dict(value) if isinstance(value, Mapping) else {}
        if model is not None:
            built = into_model(model, given, tool_name)
            # Only what the call gave: a parameter left out keeps the function's own default.
            given = {name: getattr(built, name) for name in given if name in type(built).model_fields}
        args = tuple(given.pop(name) for name in positional if name in given)
        return args, given

    return Runner(fn, arguments, is_async=_is_async(fn))


def model_runner(fn: Callable[..., Any], model: Any, tool_name: str) -> Runner:
    """The runner of a function registered with a model (``register(name, Model, function=fn)``): called with one
    instance of the model."""
    from toolmend.typed import into_model

    def arguments(value: Any) -> Arguments:
        return (into_model(model, value, tool_name),), {}

    return Runner(fn, arguments, is_async=_is_async(fn))


def mapping_runner(fn: Callable[..., Any]) -> Runner:
    """The runner of a function registered with a JSON Schema: called with the arguments as keywords."""
    return Runner(fn, keyword_arguments, is_async=_is_async(fn))


def output_text(output: Any) -> str:
    """A tool's output as the text a model reads: a str as it is, anything else as JSON (pydantic models and
    msgspec Structs as their JSON form, sets as lists, dict keys as text, anything else as its ``str``)."""
    if isinstance(output, str):
        return output
    try:
        return orjson.dumps(output, default=_plain, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:  # integers past 64 bits, values nested past orjson's limit: the slower, exact writer
        return json.dumps(output, default=_plain, ensure_ascii=False)


def _plain(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):  # a pydantic model
        return dump(mode="json")
    if hasattr(type(value), "__struct_fields__"):  # a msgspec Struct
        import msgspec

        return msgspec.to_builtins(value)
    if isinstance(value, (set, frozenset)):
        return list(value)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    return str(value)


def failure(error: BaseException) -> ToolRunError:
    """An exception as a result's error: its class name, its text, and the TSR code of a refusal."""
    code = getattr(error, "code", None)
    if code is None:
        errors = getattr(error, "errors", None)  # toolmend's ValidationError: the first field error's code
        if isinstance(errors, tuple) and errors:
            code = getattr(errors[0], "code", None)
    return ToolRunError(type(error).__name__, str(error), code if isinstance(code, str) else None)


def _is_async(fn: Any) -> bool:
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(fn, "__call__", None)  # an object whose __call__ is a coroutine function
    return not inspect.isfunction(fn) and inspect.iscoroutinefunction(call)


def _wait(awaitable: Awaitable[Any]) -> Any:
    """The value of an awaitable, from sync code: ``asyncio.run`` when this thread runs no loop, else on a loop in
    a worker thread (this thread's loop cannot run it while this thread waits)."""

    async def wait() -> Any:
        return await awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(wait())
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="toolmend-tool") as pool:
        return pool.submit(asyncio.run, wait()).result()
