"""Type stubs of the compiled module; toolmend re-exports the public names."""

from typing import Any, Literal, Mapping, Union, final

__version__: str
LOADS_MAX_DEPTH: int

#: The limits a call takes when it does not set them (Limits::DEFAULT of the Rust core):
#: {"max_size": bytes, "max_depth": levels, "timeout_ms": milliseconds}.
DEFAULT_LIMITS: dict[str, int]
#: The largest max_depth that validation, parse_response and the stream readers accept.
MAX_DEPTH_CEILING: int

#: Every error code of the catalogue (tests check this list against ERROR_CODES).
ErrorCodeStr = Literal[
    "TLP-001",
    "TLP-002",
    "TLP-003",
    "TLP-004",
    "TLP-005",
    "TLP-006",
    "TLP-007",
    "TLP-008",
    "TSR-001",
    "TSR-002",
    "TSR-003",
    "TSR-004",
    "TSR-005",
    "TSR-006",
    "TSR-007",
    "TSR-008",
]

#: The error catalogue, in order: (code, name, title, cause, fix) for each code.
ERROR_CODES: tuple[tuple[ErrorCodeStr, str, str, str, str], ...]

_Text = Union[str, bytes, bytearray]

@final
class Repair:
    """One fault that was mended: its kind (e.g. "trailing_comma") and the byte offset where it was found."""

    def __init__(self, kind: str, position: int) -> None: ...
    @property
    def kind(self) -> str: ...
    @property
    def position(self) -> int: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

@final
class RepairError:
    """Why a text could not be repaired: a TLP code, a message, a byte offset and a hint."""

    def __init__(self, code: str, message: str, position: int, suggestion: str) -> None: ...
    @property
    def code(self) -> ErrorCodeStr: ...
    @property
    def message(self) -> str: ...
    @property
    def position(self) -> int: ...
    @property
    def suggestion(self) -> str: ...
    def __eq__(self, other: object) -> bool: ...

@final
class RepairResult:
    """The outcome of repair(): the JSON text when ok, the repair log, and the input as given."""

    @property
    def ok(self) -> bool: ...
    @property
    def json(self) -> str | None: ...
    @property
    def repaired(self) -> bool: ...
    @property
    def repairs(self) -> list[Repair]: ...
    @property
    def original(self) -> _Text: ...
    @property
    def error(self) -> RepairError | None: ...
    def raise_for_error(self) -> RepairResult: ...

# Defaults of every limit: DEFAULT_LIMITS.
def repair(text: _Text, *, max_size: int = ..., max_depth: int = ..., timeout_ms: int = ...) -> RepairResult: ...
def loads(text: _Text, *, max_size: int = ..., max_depth: int = ..., timeout_ms: int = ...) -> Any: ...
def cache_clear() -> None: ...

@final
class FieldError:
    """One reason arguments do not match their tool's schema."""

    def __init__(
        self,
        path: str,
        code: str,
        message: str,
        expected: str | None = None,
        actual: str | None = None,
        suggestion: str = "",
    ) -> None: ...
    @property
    def path(self) -> str: ...
    @property
    def code(self) -> ErrorCodeStr: ...
    @property
    def message(self) -> str: ...
    @property
    def expected(self) -> str | None: ...
    @property
    def actual(self) -> str | None: ...
    @property
    def suggestion(self) -> str: ...
    def as_dict(self) -> dict[str, Any]: ...

@final
class ValidationResult:
    """The outcome of try_validate."""

    @property
    def ok(self) -> bool: ...
    @property
    def value(self) -> Any: ...
    @property
    def errors(self) -> tuple[FieldError, ...]: ...
    def __bool__(self) -> bool: ...

@final
class ToolInfo:
    """A registered tool."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def version(self) -> str: ...
    @property
    def category(self) -> str | None: ...
    @property
    def fingerprint(self) -> str: ...
    @property
    def schema(self) -> dict[str, Any]: ...

class ToolRegistry:
    """Tools by name, each schema compiled once (toolmend.ToolRegistry adds functions and files)."""

    def __init__(self, strict: bool = True, *, max_size: int = ..., max_depth: int = ...) -> None: ...
    @property
    def strict(self) -> bool: ...
    def register(
        self,
        name: str,
        schema: Mapping[str, Any] | str | bytes,
        *,
        description: str = "",
        version: str = "1.0.0",
        category: str | None = None,
    ) -> ToolInfo: ...
    def get(self, name: str) -> ToolInfo: ...
    def tools(self, category: str | None = None) -> tuple[ToolInfo, ...]: ...
    def schema_hint(self, name: str) -> str: ...
    def validate(self, name: str, args: Any) -> Any: ...
    def try_validate(self, name: str, args: Any) -> ValidationResult: ...
    def __len__(self) -> int: ...
    def __contains__(self, name: str) -> bool: ...

@final
class ToolCall:
    """One tool call, ready to execute."""

    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def arguments(self) -> dict[str, Any]: ...
    @property
    def raw_arguments(self) -> str: ...
    @property
    def repairs(self) -> list[Repair]: ...
    @property
    def index(self) -> int: ...
    @property
    def source(self) -> str: ...

@final
class ToolCallError:
    """Why one call of a reply could not be used."""

    @property
    def code(self) -> ErrorCodeStr: ...
    @property
    def message(self) -> str: ...
    @property
    def tool_name(self) -> str | None: ...
    @property
    def raw_arguments(self) -> str | None: ...
    @property
    def position(self) -> int | None: ...
    @property
    def index(self) -> int: ...
    @property
    def validation(self) -> tuple[FieldError, ...]: ...
    @property
    def suggestion(self) -> str: ...

@final
class ParseResult:
    """The calls of a reply, the errors of those that failed, and the text without the calls."""

    @property
    def calls(self) -> tuple[ToolCall, ...]: ...
    @property
    def errors(self) -> tuple[ToolCallError, ...]: ...
    @property
    def text(self) -> str: ...
    @property
    def ok(self) -> bool: ...

def parse_response(
    body: str | bytes | bytearray | Mapping[str, Any],
    registry: ToolRegistry | None = None,
    *,
    repair: bool = True,
    text_calls: bool = True,
    max_size: int = ...,
    max_depth: int = ...,
    timeout_ms: int = ...,
) -> ParseResult: ...

@final
class ToolCallDelta:
    """One fragment of one tool call."""

    def __init__(
        self,
        index: int = 0,
        id: str | None = None,
        name: str | None = None,
        arguments: str | None = None,
        complete: bool = False,
    ) -> None: ...
    @property
    def index(self) -> int: ...
    @property
    def id(self) -> str | None: ...
    @property
    def name(self) -> str | None: ...
    @property
    def arguments(self) -> str | None: ...
    @property
    def complete(self) -> bool: ...

@final
class StreamEvent:
    """What a chunk caused: kind is "started", "name", "arguments", "completed" or "failed"."""

    @property
    def kind(self) -> str: ...
    @property
    def index(self) -> int: ...
    @property
    def id(self) -> str | None: ...
    @property
    def path(self) -> str | None: ...
    @property
    def text(self) -> str | None: ...
    @property
    def code(self) -> str | None: ...
    @property
    def message(self) -> str | None: ...

@final
class ToolCallAccumulator:
    """Assembles the tool calls of one streamed turn (one accumulator per stream)."""

    def __init__(
        self,
        registry: ToolRegistry | None = None,
        *,
        max_size: int = ...,
        max_depth: int = ...,
        timeout_ms: int = ...,
    ) -> None: ...
    def feed(self, chunk: ToolCallDelta | Mapping[str, Any] | str | bytes | bytearray) -> list[StreamEvent]: ...
    def extend_arguments(self, index: int, text: str, /) -> Any:
        """Appends argument text to call `index` and returns partial(index); builds no events."""
    def completed(self) -> ParseResult: ...
    def finish(self) -> ParseResult: ...
    def partial(self, index: int) -> Any:
        """The arguments so far (a live view, read-only: it becomes the call's arguments when whole)."""

@final
class TextCallParser:
    """Tool calls out of text that arrives token by token."""

    def __init__(
        self,
        registry: ToolRegistry | None = None,
        *,
        max_buffer: int = 50_000,
        max_size: int = ...,
        max_depth: int = ...,
        timeout_ms: int = ...,
    ) -> None: ...
    def feed(self, token: str) -> list[str | ToolCall | ToolCallError]: ...
    def flush(self) -> list[str | ToolCall | ToolCallError]: ...
    def reset(self) -> None: ...
