"""Type stubs of the compiled module; toolmend re-exports the public names."""

from typing import Any, Collection, Iterable, Literal, Mapping, TypeVar, Union, final, overload

from toolmend._states import CallSource, StreamEventKind

_M = TypeVar("_M")

__version__: str
LOADS_MAX_DEPTH: int

#: The limits a call takes when it does not set them (Limits::DEFAULT of the Rust core):
#: {"max_size": bytes, "max_depth": levels, "timeout_ms": milliseconds}.
DEFAULT_LIMITS: dict[str, int]
TEXT_FORMATS: dict[str, tuple[str, ...]]
#: The largest max_depth that validation, parse_response and the stream readers accept.
MAX_DEPTH_CEILING: int
#: How many bytes of an open block a TextCallParser holds back by default.
DEFAULT_MAX_BUFFER: int

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
    "TLP-009",
    "TLP-010",
    "TLP-011",
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

#: Every repair kind, as Repair.kind names it (tests check this list against REPAIR_KINDS).
RepairKindStr = Literal[
    "trailing_comma",
    "extra_comma",
    "missing_closing_brace",
    "missing_closing_bracket",
    "missing_opening_brace",
    "mismatched_closer",
    "extra_closer",
    "redundant_brace",
    "single_quotes",
    "special_quotes",
    "escaped_json",
    "unquoted_key",
    "unquoted_string",
    "truncated_string",
    "unclosed_string",
    "truncated_literal",
    "unescaped_quotes",
    "control_character",
    "invalid_escape",
    "comment",
    "python_literal",
    "python_container",
    "js_literal",
    "invalid_number",
    "missing_comma",
    "missing_colon",
    "missing_value",
    "unexpected_character",
    "markdown_fence",
    "surrounding_text",
    "concatenated_values",
    "string_concatenation",
    "function_call",
    "byte_order_mark",
    "invalid_utf8",
    "repeated_arguments",
    "tool_name",
]

#: The repair kinds, in order: (name, description) for each.
REPAIR_KINDS: tuple[tuple[RepairKindStr, str], ...]

_Text = Union[str, bytes, bytearray]

@final
class Repair:
    """One fault that was mended: its kind (e.g. "trailing_comma") and the byte offset where it was found;
    past the log's first 1,000, one record per kind stands for the rest (`count` says how many)."""

    def __init__(self, kind: str, position: int, count: int = 1) -> None: ...
    @property
    def kind(self) -> RepairKindStr:
        """The fault, as a stable snake_case name ("trailing_comma", "single_quotes", ...)."""
    @property
    def position(self) -> int:
        """Byte offset in the UTF-8 input where the fault was found (the first of them, for a record of several)."""
    @property
    def count(self) -> int:
        """How many repairs of this kind the record stands for: 1, but for the records that follow the log's
        first 1,000 repairs, one per kind, each counting that kind's repairs from `position` on."""
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

@final
class RepairError:
    """Why a text could not be repaired: a TLP code, a message, a byte offset and a hint."""

    def __init__(self, code: str, message: str, position: int, suggestion: str) -> None: ...
    @property
    def code(self) -> ErrorCodeStr:
        """The error code: "TLP-004" (no JSON value), "TLP-007" (size) or "TLP-008" (depth or deadline)."""
    @property
    def message(self) -> str:
        """What went wrong, with the byte position."""
    @property
    def position(self) -> int:
        """Byte offset in the UTF-8 input."""
    @property
    def suggestion(self) -> str:
        """What to do about it."""
    def __eq__(self, other: object) -> bool: ...

@final
class RepairResult:
    """The outcome of repair(): the JSON text when ok, the repair log, and the input as given."""

    @property
    def ok(self) -> bool:
        """True when the result holds JSON text."""
    @property
    def json(self) -> str | None:
        """The repaired text; the input object itself when it was a valid str. None when not ok."""
    @property
    def repaired(self) -> bool:
        """True when the input needed mending."""
    @property
    def repairs(self) -> list[Repair]:
        """The repairs applied, in input order (a new list on each access): the first 1,000 one record each,
        then one record per kind counting the rest (see Repair.count)."""
    @property
    def original(self) -> _Text:
        """The input exactly as the caller passed it."""
    @property
    def error(self) -> RepairError | None:
        """Why the text could not be repaired, or None."""
    def raise_for_error(self) -> RepairResult:
        """Raises ParseError when the text could not be repaired; returns the result otherwise."""

# Defaults of every limit: DEFAULT_LIMITS.
def repair(
    text: _Text, *, max_size: int = ..., max_depth: int = ..., timeout_ms: int = ...
) -> RepairResult:
    """Repairs text into one strict JSON value in linear time; never raises for bad input (see `error`).

    Valid JSON comes back unchanged (the same str object) with an empty log. Positions are byte offsets
    into the UTF-8 encoding of the input."""
def loads(text: _Text, *, max_size: int = ..., max_depth: int = ..., timeout_ms: int = ...) -> Any:
    """Repairs text when needed and returns Python objects; raises ParseError when it cannot.

    Valid JSON within the limits is parsed by orjson, anything else repaired and built by jiter.
    Integers stay exact at any size; a number past the range of a double is refused (TLP-004)."""
def repair_many(
    texts: Iterable[_Text],
    *,
    max_size: int = ...,
    max_depth: int = ...,
    timeout_ms: int = ...,
    threads: int | None = None,
) -> list[RepairResult]:
    """`repair` of every text, the passes spread over `threads` threads (all cores by default) with
    the GIL released: the same results as `[repair(t) for t in texts]`."""
def loads_many(
    texts: Iterable[_Text],
    *,
    max_size: int = ...,
    max_depth: int = ...,
    timeout_ms: int = ...,
    threads: int | None = None,
    errors: Literal["raise", "return"] = "raise",
) -> list[Any]:
    """`loads` of every text: valid texts parsed by orjson, the others mended on `threads` threads
    with the GIL released, then built into objects under the GIL. `errors="raise"` raises the first
    failure's ParseError (as a loop would); `errors="return"` puts the ParseError in its place."""

def _json_text(value: Any) -> str:
    """orjson.dumps(value) as text; integers past 64 bits and deep values written exactly."""

def cache_clear() -> None:
    """Empties jiter's bounded cache of Python key strings."""

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
    def path(self) -> str:
        """JSON Pointer to the value ("" for the whole arguments)."""
    @property
    def code(self) -> ErrorCodeStr:
        """The error code, "TSR-001" to "TSR-005" (or "TLP-007" / "TLP-008" when the arguments pass a limit)."""
    @property
    def message(self) -> str:
        """What is wrong, in one line."""
    @property
    def expected(self) -> str | None:
        """What the schema wants here (short: a type, an enum, a pattern, a bound), or None."""
    @property
    def actual(self) -> str | None:
        """What was given (rendered, cut at 200 characters), or None."""
    @property
    def suggestion(self) -> str:
        """How to fix it, fit for a reflection prompt."""
    def as_dict(self) -> dict[str, Any]:
        """The error as a plain dict, fit for a log line or a reflection prompt."""

@final
class ValidationResult:
    """The outcome of try_validate. Compares by value and pickles."""

    def __init__(self, value: Any = None, errors: list[FieldError] = ...) -> None: ...

    @property
    def ok(self) -> bool:
        """True when the arguments match the schema."""
    @property
    def value(self) -> Any:
        """The arguments (the caller's own dict, or the parsed JSON); None when not ok."""
    @property
    def errors(self) -> tuple[FieldError, ...]:
        """Every error, in document order (empty when ok)."""
    def __bool__(self) -> bool: ...

@final
class ToolInfo:
    """A registered tool. Equal to another with the same definition (fingerprint); pickles as its definition."""

    @property
    def allow_truncated(self) -> bool:
        """Whether calls cut off are taken for this tool (marked truncated) instead of refused (TLP-010)."""
    @property
    def annotations(self) -> dict[str, Any] | None:
        """The tool's annotations as its source gave them (MCP's readOnlyHint, destructiveHint, ...), or None."""
    @property
    def name(self) -> str:
        """The tool's name, as registered."""
    @property
    def description(self) -> str:
        """What the tool does, for the model."""
    @property
    def version(self) -> str:
        """The definition's semver version."""
    @property
    def category(self) -> str | None:
        """The category tools() sorts and filters by, or None."""
    @property
    def fingerprint(self) -> str:
        """Hex digest of the canonical definition (equal definitions, equal fingerprints)."""
    @property
    def schema(self) -> dict[str, Any]:
        """The parameter schema as registered."""

class ToolRegistry:
    """Tools by name, each schema compiled once (toolmend.ToolRegistry adds functions and files)."""

    def __init__(
        self, strict: bool = True, *, max_size: int = ..., max_depth: int = ..., names: str = "default"
    ) -> None: ...
    @property
    def strict(self) -> bool:
        """True when object schemas are closed to unknown properties (the default)."""
    @property
    def names(self) -> str:
        """The naming rule for tools: "default", "openai" (also '-') or "mcp" (also '-' and '.', 128 characters)."""
    @property
    def revision(self) -> int:
        """How many times a tool was added or replaced: a listing made at one revision holds until the next."""
    def register(
        self,
        name: str,
        schema: Mapping[str, Any] | str | bytes,
        *,
        description: str = "",
        version: str = "1.0.0",
        category: str | None = None,
        annotations: Mapping[str, Any] | None = None,
        allow_truncated: bool = False,
        replace: bool = False,
    ) -> ToolInfo:
        """Checks, compiles and adds a tool; registering the same definition again is a no-op. With ``replace``,
        the tool takes the place of the one registered under its name (another version of it); readers already
        holding the old one keep it.

        Raises SchemaError: TSR-006 invalid definition, TSR-007 name taken by another definition,
        TSR-008 schema that does not compile."""
    def get(self, name: str) -> ToolInfo:
        """The tool named `name` (any case when the exact spelling misses); UnknownToolError (TSR-001)."""
    def tools(self, category: str | None = None) -> tuple[ToolInfo, ...]:
        """Every tool (or those of `category`), by category then name."""
    def schema_hint(self, name: str) -> str:
        """One line telling a model what the tool expects."""
    @overload
    def validate(self, name: str, args: Any) -> Any:
        """The arguments (the caller's own dict, or JSON text parsed), or ValidationError with every
        error; UnknownToolError for a name not registered. With `into` (a pydantic model class, a
        TypeAdapter or a msgspec Struct class) they come back as its instance, built once; a model that
        refuses them raises ValidationError with coded FieldErrors (TSR-003, TSR-004, TSR-005)."""
    @overload
    def validate(self, name: str, args: Any, *, into: type[_M]) -> _M: ...
    @overload
    def validate(self, name: str, args: Any, *, into: Any) -> Any: ...
    def try_validate(self, name: str, args: Any) -> ValidationResult:
        """Like `validate`, but every outcome is a ValidationResult; never raises for bad input."""
    def __len__(self) -> int: ...
    def __contains__(self, name: str) -> bool: ...

@final
class ToolCall:
    """One tool call, ready to execute. Equal to another with the same id, name, arguments, index and
    source (and choice); pickles (its constructor's arguments) and comes back equal."""

    def __init__(
        self,
        name: str,
        arguments: Any,
        id: str | None = None,
        index: int = 0,
        source: str = "tool_calls",
        raw_arguments: Any = None,
        repairs: list[Repair] = ...,
        choice: int = 0,
        truncated: bool = False,
        raw_name: str | None = None,
    ) -> None:
        """A call built by hand (to test an agent, or to replay one); `id` defaults to a fresh one, `raw_name`
        to `name`."""
    @overload
    def parse(self, model: type[_M]) -> _M:
        """The arguments as an instance of `model` (a pydantic model class, a TypeAdapter or a msgspec Struct
        class), built once; ValidationError (with coded FieldErrors) when the model refuses them."""
    @overload
    def parse(self, model: Any) -> Any: ...
    def as_dict(self) -> dict[str, Any]:
        """The call as a plain dict: id, name, raw_name, arguments, index, source."""
    def to_openai(self) -> dict[str, Any]:
        """An OpenAI assistant message's `tool_calls` entry: id, type "function", name, arguments as JSON text."""
    def to_ollama(self) -> dict[str, Any]:
        """An Ollama assistant message's `tool_calls` entry: the function's name and arguments object."""
    def to_anthropic(self) -> dict[str, Any]:
        """An Anthropic `tool_use` content block: id, name, input."""

    @property
    def id(self) -> str:
        """The id the server gave, or "call_" + 16 hex digits."""
    @property
    def name(self) -> str:
        """The tool's name: with a registry, the name it was registered under, whatever the case the model
        wrote it in."""
    @property
    def raw_name(self) -> str:
        """The name as the model wrote it: `name` itself, unless the model wrote it in another case (then the
        call's repairs start with a "tool_name" repair)."""
    @property
    def arguments(self) -> dict[str, Any]:
        """The arguments, parsed (and repaired) and, with a registry, validated."""
    @property
    def raw_arguments(self) -> str:
        """The arguments as the model wrote them (text; an object given by Ollama is serialised)."""
    @property
    def repairs(self) -> list[Repair]:
        """The repairs applied to the arguments (or to the text around a call written in text)."""
    @property
    def index(self) -> int:
        """Position among the reply's calls (the wire's index when it gave one)."""
    @property
    def choice(self) -> int:
        """Which choice of a multi-choice reply (`n` > 1) the call came from; 0 for a reply with one."""
    @property
    def truncated(self) -> bool:
        """The arguments were cut off and mended into what they held (taken only with `allow_truncated=True`)."""
    @property
    def source(self) -> CallSource:
        """Where the call was found: a CallSource, equal to its value ("tool_calls", "stream", or a text format
        such as "hermes" or "mistral")."""

@final
class ToolCallError:
    """Why one call of a reply could not be used. Compares by value and pickles."""

    def __init__(
        self,
        code: str,
        message: str,
        tool_name: str | None = None,
        raw_arguments: Any = None,
        position: int | None = None,
        index: int = 0,
        validation: list[FieldError] | None = None,
        suggestion: str = "",
        choice: int = 0,
        arguments: Any = None,
        id: str | None = None,
        written: str | None = None,
    ) -> None:
        """An error built by hand (to test an agent, or to replay one); `code` is one of the catalogue's."""

    @property
    def code(self) -> ErrorCodeStr:
        """The error code: "TLP-00x" for the call itself, "TSR-00x" for the tool and its schema."""
    @property
    def message(self) -> str:
        """What is wrong, in one line."""
    @property
    def id(self) -> str | None:
        """The id the reply gave the call, to answer it by; None when it gave none."""
    @property
    def tool_name(self) -> str | None:
        """The name the model gave, or None."""
    @property
    def raw_arguments(self) -> str | None:
        """The arguments as the model wrote them, or None."""
    @property
    def position(self) -> int | None:
        """Byte offset of the fault in the raw arguments (or in the content); None when it has no place."""
    @property
    def written(self) -> str | None:
        """For a call found in the reply's text: that text as written (its block, markers included); None for a
        ``tool_calls`` entry."""
    @property
    def index(self) -> int:
        """Position among the reply's calls."""
    @property
    def choice(self) -> int:
        """Which choice of a multi-choice reply the call came from."""
    @property
    def arguments(self) -> dict[str, Any] | None:
        """For a call cut off (TLP-010): its arguments mended into what they held; else None."""
    @property
    def validation(self) -> tuple[FieldError, ...]:
        """The schema errors (FieldError) when the arguments did not match the tool's schema."""
    @property
    def suggestion(self) -> str:
        """How to fix it, fit for a reflection prompt."""

@final
class ParseResult:
    """The calls of a reply, the errors of those that failed, and the text without the calls. Compares by
    value and pickles."""

    def __init__(
        self,
        calls: list[ToolCall] = ...,
        errors: list[ToolCallError] = ...,
        text: str = "",
        quoted: int = 0,
        reasoning: str = "",
        notes: list[tuple[int, str]] = ...,
    ) -> None: ...
    @property
    def notes(self) -> tuple[tuple[int, str], ...]:
        """Where each quoted call stood (a byte offset in the content) and why it was not taken.
        Notes never make `ok` false."""
    @property
    def reasoning(self) -> str:
        """The model's reasoning (reasoning fields, think blocks): never in `text`, never a source of
        calls."""

    @property
    def calls(self) -> tuple[ToolCall, ...]:
        """The calls that passed every check, in order."""
    @property
    def errors(self) -> tuple[ToolCallError, ...]:
        """Why each of the other calls cannot be used."""
    @property
    def text(self) -> str:
        """The reply's text with the calls cut out."""
    @property
    def quoted(self) -> int:
        """How many calls stood in the text only quoted (an echoed tool result, inline code, a
        fence amid prose): left in `text`, never run."""
    @property
    def ok(self) -> bool:
        """True when no call failed."""
    @property
    def _calls_at(self) -> tuple[int, int] | None:
        """Where the calls written in the text were cut out of `text`: the first and the last (str
        indices), for `split_content`; None when the text held none."""

def check_call(
    name: Any,
    arguments: Any,
    registry: ToolRegistry | None = None,
    *,
    repair: bool = True,
    max_size: int = ...,
    max_depth: int = ...,
    timeout_ms: int = ...,
    allow_truncated: bool = False,
) -> ParseResult: ...
def parse_response(
    body: object,
    registry: ToolRegistry | None = None,
    *,
    repair: bool = True,
    text_calls: bool | str | Collection[str] = True,
    max_size: int = ...,
    max_depth: int = ...,
    timeout_ms: int = ...,
    allow_truncated: bool = False,
) -> ParseResult:
    """The checked tool calls of an Ollama /api/chat reply or an OpenAI-compatible chat completion.

    `body` is bytes, str or a parsed dict. Calls come from `tool_calls` and, with `text_calls`, from
    calls the model wrote in its content: True, False, a preset of TEXT_FORMATS or format names. A bad call becomes a ToolCallError and does not spoil the
    others. Never raises for bad input."""

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
    def index(self) -> int:
        """The call's index in the turn."""
    @property
    def id(self) -> str | None:
        """The call's id, when this fragment carries it."""
    @property
    def name(self) -> str | None:
        """Text to append to the call's name."""
    @property
    def arguments(self) -> str | None:
        """Text to append to the call's arguments."""
    @property
    def complete(self) -> bool:
        """True when the call is whole after this fragment."""

@final
class StreamEvent:
    """What a chunk caused: kind is "started", "name", "arguments", "completed" or "failed". Compares by
    value and pickles."""

    def __init__(
        self,
        kind: str,
        index: int = 0,
        id: str | None = None,
        path: str | None = None,
        text: str | None = None,
        code: str | None = None,
        message: str | None = None,
    ) -> None: ...

    @property
    def kind(self) -> StreamEventKind:
        """What happened: a StreamEventKind, equal to its value ("started", "name", "arguments", "completed"
        or "failed")."""
    @property
    def index(self) -> int:
        """The call's index."""
    @property
    def id(self) -> str | None:
        """The call's id, when known."""
    @property
    def path(self) -> str | None:
        """For "arguments": the JSON Pointer of the value the appended text ended in; None when the
        arguments are not strict JSON so far."""
    @property
    def text(self) -> str | None:
        """What was appended (name or arguments), or None."""
    @property
    def code(self) -> str | None:
        """For "failed": the error code."""
    @property
    def message(self) -> str | None:
        """For "failed": what went wrong."""

@final
class ToolCallAccumulator:
    """Assembles the tool calls of one streamed turn (one accumulator per stream)."""

    def __init__(
        self,
        registry: ToolRegistry | None = None,
        *,
        repair: bool = True,
        text_calls: bool | str | Collection[str] | None = None,
        max_size: int = ...,
        max_depth: int = ...,
        timeout_ms: int = ...,
        allow_truncated: bool = False,
    ) -> None:
        """``repair=False``: a call whose arguments are not strict JSON as sent is refused (TLP-004).
        ``text_calls``: the formats of calls written in the stream's text that are read, as for parse_response
        (None: "default"; False: none)."""
    @property
    def usage(self) -> tuple[int, int] | None:
        """The token counts the stream sent, (prompt, completion)."""
    @property
    def finish_reason(self) -> str | None:
        """Why the reply ended, as the server said it."""
    def feed(self, chunk: ToolCallDelta | Mapping[str, Any] | str | bytes | bytearray | object) -> list[StreamEvent]:
        """Takes one chunk (an OpenAI chunk or delta, an Ollama line, an Anthropic or Responses API
        stream event, as a dict or the SDK's object; raw SSE or NDJSON bytes split anywhere; or a
        ToolCallDelta) and returns the events it caused."""
    def feed_data(self, data: str | bytes) -> list[StreamEvent]:
        """Takes one decoded message of a stream (httpx-sse's `sse.data`, one NDJSON line): one
        whole JSON chunk, not raw wire text; `[DONE]` ends the turn."""
    def extend_arguments(self, index: int, text: str, /) -> Any:
        """Appends argument text to call `index` and returns partial(index); builds no events."""
    def completed(self) -> ParseResult:
        """The calls that are complete and not yet handed out, in index order, checked like
        parse_response's (errors for those that fail)."""
    def finish(self, finish_reason: str | None = None) -> ParseResult:
        """The end of the stream: whatever is left, cut-off arguments repaired, as a ParseResult.

        ``finish_reason``: why the stream ended, when the caller read it elsewhere; "length" (the token limit)
        cuts the last call if anything in it needed mending (the chunks fed may have said so already)."""
    def partial(self, index: int) -> Any:
        """The arguments so far (a live view, read-only: it becomes the call's arguments when whole)."""

@final
class Reasoning:
    """Reasoning out of streamed text: never text, never a call. With `was_text`, a lone reasoning
    closer came: `text` is everything before it as written, and the text handed out so far was part of
    it."""

    def __init__(self, text: str, was_text: bool = False) -> None: ...
    @property
    def text(self) -> str: ...
    @property
    def was_text(self) -> bool: ...

@final
class TextWithoutCalls:
    """At the end of streamed text (``flush``): the text handed out held calls written without a marker (bare
    JSON, a pythonic list), which only the whole text tells apart from prose. ``text`` is the text without them, to
    stand instead of what was handed out; the calls come next."""

    def __init__(self, text: str) -> None: ...
    @property
    def text(self) -> str: ...

class TextCallParser:
    """Tool calls out of text that arrives token by token."""

    def __init__(
        self,
        registry: ToolRegistry | None = None,
        *,
        repair: bool = True,
        max_buffer: int = 50_000,
        max_size: int = ...,
        max_depth: int = ...,
        timeout_ms: int = ...,
        allow_truncated: bool = False,
        formats: bool | str | Collection[str] | None = None,
    ) -> None:
        """`formats` chooses the formats read, like parse_response's `text_calls` (None: "default")."""
    def feed(self, token: str) -> list[str | ToolCall | ToolCallError | Reasoning]:
        """One more token; returns text (str), reasoning (Reasoning) and calls (ToolCall, or
        ToolCallError) in order."""
    def flush(
        self, finish_reason: str | None = None
    ) -> list[str | ToolCall | ToolCallError | Reasoning | TextWithoutCalls]:
        """The end of the text: what is held back, a block still open read as it is, and the calls written without
        a marker (bare JSON, a pythonic list) in the text handed out, after a TextWithoutCalls.

        ``finish_reason``: why the reply ended; at the token limit ("length", "max_tokens") the last call is cut off
        (TLP-010, or taken marked ``truncated`` where allowed) when anything in it needed mending."""
    def reset(self) -> None:
        """Forgets what is held, for a new turn."""
