"""What the result classes do besides hold their fields: reprs, plain-dict and wire forms, pickling and
equality.

Their fields and constructors are in Rust (toolmend._core), so that the engines build a result with one
small allocation and no Python code; everything a caller asks of a result after that is written here, as
Python. Each ``@methods_of(cls)`` block below adds its functions to the Rust class ``cls``, and the
name it defines is that class.
"""

from __future__ import annotations

from typing import Any, Callable, TypeVar

from toolmend import _core
from toolmend._states import CallSource, StreamEventKind

__all__: list[str] = []

T = TypeVar("T", bound=type)


#: What every class body holds about itself, which is not to be copied.
_CLASS_BODY_ONLY = frozenset(
    {"__module__", "__qualname__", "__dict__", "__weakref__", "__doc__", "__annotations__", "__firstlineno__",
     "__static_attributes__", "__type_params__"}
)


def methods_of(cls: T) -> Callable[[type], T]:
    """Adds the decorated class body's functions and properties to ``cls`` and gives back ``cls``."""

    def add(body: type) -> T:
        for name, member in vars(body).items():
            if name not in _CLASS_BODY_ONLY:
                setattr(cls, name, member)
        return cls

    return add


def _repr(self: object, *fields: str) -> str:
    shown = ", ".join(f"{field}={getattr(self, field)!r}" for field in fields)
    return f"{type(self).__name__}({shown})"


def _record(cls: T, fields: tuple[str, ...], *, equality: bool = True) -> Callable[[type], T]:
    """``methods_of(cls)`` for a class whose constructor takes ``fields``: it pickles as them, and comes
    back equal; with ``equality``, two are equal when those fields are (and, as the values may be
    unhashable, it has no hash)."""

    def state(self: Any) -> tuple[Any, ...]:
        return tuple(getattr(self, field) for field in fields)

    def __reduce__(self: Any) -> tuple[type, tuple[Any, ...]]:
        return type(self), state(self)

    def __eq__(self: Any, other: object) -> bool:
        """Equal when every field is."""
        return type(other) is type(self) and state(self) == state(other)

    def add(body: type) -> T:
        methods_of(cls)(body)
        cls.__reduce__ = __reduce__  # type: ignore[assignment]
        if equality:
            cls.__eq__ = __eq__  # type: ignore[assignment]
            cls.__hash__ = None  # type: ignore[assignment]
        return cls

    return add


# --- repair ----------------------------------------------------------------------------------------------


@_record(_core.Repair, ("kind", "position", "count"), equality=False)
class Repair:
    def __repr__(self) -> str:
        # `count` only where the record stands for several repairs (past the log's first 1,000).
        return _repr(self, "kind", "position", *(["count"] if self.count != 1 else []))


@_record(_core.RepairError, ("code", "message", "position", "suggestion"), equality=False)
class RepairError:
    def __repr__(self) -> str:
        return _repr(self, "code", "message", "position", "suggestion")


@methods_of(_core.RepairResult)
class RepairResult:
    @property
    def ok(self) -> bool:
        """True when the result holds JSON text."""
        return self.error is None

    def raise_for_error(self) -> RepairResult:
        """Raises ParseError when the text could not be repaired; returns the result otherwise, so that
        ``repair(text).raise_for_error().json`` reads as one expression."""
        if self.error is not None:
            from toolmend.errors import ParseError

            e = self.error
            raise ParseError(e.code, e.message, e.position, e.suggestion)
        return self

    def __repr__(self) -> str:
        return (
            f"RepairResult(ok={self.ok!r}, json={self.json!r}, repaired={self.repaired!r}, "
            f"repairs=<{len(self.repairs)} repairs>, error={self.error!r})"
        )


# --- the registry --------------------------------------------------------------------------------------


@_record(_core.FieldError, ("path", "code", "message", "expected", "actual", "suggestion"), equality=False)
class FieldError:
    def as_dict(self) -> dict[str, Any]:
        """The error as a plain dict, fit for a log line or a reflection prompt."""
        return {f: getattr(self, f) for f in ("path", "code", "message", "expected", "actual", "suggestion")}

    def __str__(self) -> str:
        return f"[{self.code}] {self.path or '/'}: {self.message}"

    def __repr__(self) -> str:
        return _repr(self, "path", "code", "message", "expected", "actual", "suggestion")


@_record(_core.ValidationResult, ("value", "errors"))
class ValidationResult:
    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        return _repr(self, "ok", "value", "errors")


@methods_of(_core.ToolInfo)
class ToolInfo:
    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickles as its definition; unpickling compiles it again."""
        definition = (
            self.name,
            self.schema,
            self.description,
            self.version,
            self.category,
            self.annotations,
            self.allow_truncated,
        )
        return type(self)._from_definition, definition

    def __eq__(self, other: object) -> bool:
        """Equal when the definitions are (their fingerprints)."""
        return isinstance(other, _core.ToolInfo) and other.fingerprint == self.fingerprint

    def __hash__(self) -> int:
        return hash(self.fingerprint)

    def __repr__(self) -> str:
        return _repr(self, "name", "version", "category")


# --- replies -----------------------------------------------------------------------------------------------

_CALL_SOURCES = {source.value: source for source in CallSource}


@_record(
    _core.ToolCall,
    # The raw arguments as given (text, or Ollama's object), not as text: text may not encode.
    ("name", "arguments", "id", "index", "source", "_raw", "repairs", "choice", "truncated", "raw_name"),
    equality=False,
)
class ToolCall:
    @property
    def source(self) -> CallSource:
        """Where the call was found: the reply's ``tool_calls`` field, a stream, or the text format the model
        wrote it in (a CallSource, equal to its plain value: "tool_calls", "stream", "hermes", ...)."""
        return _CALL_SOURCES[self._source]

    def __eq__(self, other: object) -> bool:
        """Equal when the id, name, arguments, index, choice, source and truncation are (arguments
        compared as values). How the call was written (its raw arguments and name, its repairs) is not
        what it is: a call to "delete_file" written as "DELETE_FILE" equals one written as registered."""
        fields = ("index", "choice", "truncated", "id", "name", "source", "arguments")
        return isinstance(other, _core.ToolCall) and all(getattr(self, f) == getattr(other, f) for f in fields)

    __hash__ = None  # type: ignore[assignment]

    def parse(self, model: Any) -> Any:
        """The arguments as an instance of ``model`` (a pydantic model class, a TypeAdapter or a msgspec
        Struct class), built once; ValidationError when the model refuses them."""
        from toolmend.typed import into_model

        return into_model(model, self.arguments, self.name)

    def as_dict(self) -> dict[str, Any]:
        """The call as a plain dict: id, name, raw_name, arguments, index, source."""
        return {f: getattr(self, f) for f in ("id", "name", "raw_name", "arguments", "index", "source")}

    def to_openai(self) -> dict[str, Any]:
        """The call as an OpenAI assistant message's ``tool_calls`` entry (arguments as JSON text)."""
        function = {"name": self.name, "arguments": _core._json_text(self.arguments)}
        return {"id": self.id, "type": "function", "function": function}

    def to_ollama(self) -> dict[str, Any]:
        """The call as an Ollama assistant message's ``tool_calls`` entry (arguments as an object)."""
        return {"function": {"name": self.name, "arguments": self.arguments}}

    def to_anthropic(self) -> dict[str, Any]:
        """The call as an Anthropic ``tool_use`` content block."""
        return {"type": "tool_use", "id": self.id, "name": self.name, "input": self.arguments}

    def __repr__(self) -> str:
        optional = [field for field in ("choice", "truncated") if getattr(self, field)]
        written = ["raw_name"] if self.raw_name != self.name else []
        fields = ["id", "name", *written, "arguments", "index", *optional, "source"]
        shown = ", ".join(f"{f}={getattr(self, f)!r}" for f in fields)
        return f"ToolCall({shown}, repairs={len(self.repairs)})"


@_record(
    _core.ToolCallError,
    (
        "code",
        "message",
        "tool_name",
        "raw_arguments",
        "position",
        "index",
        "validation",
        "suggestion",
        "choice",
        "arguments",
        "id",
        "written",
    ),
)
class ToolCallError:
    def __str__(self) -> str:
        name = f" ({self.tool_name})" if self.tool_name is not None else ""
        return f"[{self.code}] call {self.index}{name}: {self.message}"

    def __repr__(self) -> str:
        return _repr(self, "code", "message", "tool_name", "position", "index")


@_record(_core.ParseResult, ("calls", "errors", "text", "quoted", "reasoning", "notes"))
class ParseResult:
    def __repr__(self) -> str:
        return _repr(self, "ok", "calls", "errors", "text", "reasoning")


@_record(_core.Reasoning, ("text", "was_text"))
class Reasoning:
    def __repr__(self) -> str:
        return _repr(self, "text", "was_text")


@_record(_core.TextWithoutCalls, ("text",))
class TextWithoutCalls:
    def __repr__(self) -> str:
        return _repr(self, "text")


# --- streams -----------------------------------------------------------------------------------------------

_EVENT_KINDS = {kind.value: kind for kind in StreamEventKind}


@methods_of(_core.ToolCallDelta)
class ToolCallDelta:
    def __repr__(self) -> str:
        return _repr(self, "index", "id", "name", "arguments", "complete")


@_record(_core.StreamEvent, ("kind", "index", "id", "path", "text", "code", "message"))
class StreamEvent:
    @property
    def kind(self) -> StreamEventKind:
        """The StreamEventKind member (a StrEnum: equal to its plain value, "arguments" say)."""
        return _EVENT_KINDS[self._kind]

    def __repr__(self) -> str:
        fields = ["kind", "index"] + [f for f in ("text", "code") if getattr(self, f) is not None]
        return _repr(self, *fields)
