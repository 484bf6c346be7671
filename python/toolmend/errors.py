"""The exception hierarchy, defined once; every field is an attribute and errors() gives plain dicts.

Also the error catalogue: ``ERROR_CODES`` maps every code to its title, cause and fix (written once, in the
Rust core) and to the Python types that report it. docs/errors.md is generated from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping, NamedTuple

from toolmend import _core
from toolmend._core import FieldError, RepairError, ToolCallError
from toolmend._states import Code


class ToolmendError(Exception):
    """Root of every error toolmend raises on purpose. Every one pickles (across a ProcessPoolExecutor,
    Celery, Ray) with its attributes, and comes back equal: same type, message and attributes."""

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt without calling __init__ (whose arguments differ per class): the message, then the attributes.
        return (_rebuilt, (type(self), self.args, dict(self.__dict__)))

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self.args == other.args and self.__dict__ == other.__dict__  # type: ignore[union-attr]

    def __hash__(self) -> int:
        return hash((type(self), self.args))


def _rebuilt(cls: type[ToolmendError], args: tuple[Any, ...], attributes: dict[str, Any]) -> ToolmendError:
    error = cls.__new__(cls, *args)
    error.args = args
    error.__dict__.update(attributes)
    return error


class ParseError(ToolmendError, ValueError):
    """Raised when text cannot be made into JSON, even after repair (TLP-004, TLP-007, TLP-008)."""

    def __init__(self, code: str, message: str, position: int, suggestion: str = "") -> None:
        super().__init__(f"{code}: {message}" + (f" ({suggestion})" if suggestion else ""))
        self.code = code
        self.message = message
        self.position = position
        self.suggestion = suggestion

    def errors(self) -> list[dict[str, Any]]:
        """The error as JSON-able dicts, fit for a log line or a reflection prompt."""
        return [
            {"code": self.code, "message": self.message, "position": self.position, "suggestion": self.suggestion}
        ]


class SchemaError(ToolmendError, ValueError):
    """Raised when a tool definition is refused: TSR-006 (invalid), TSR-007 (name taken by a
    different definition), TSR-008 (the schema does not compile). `path` points into the schema."""

    def __init__(self, code: str, message: str, path: str | None = None) -> None:
        super().__init__(f"[{code}] {message}")
        self.code = code
        self.message = message
        self.path = path


class UnknownToolError(ToolmendError, LookupError):
    """Raised when no tool of that name is registered (TSR-001)."""

    def __init__(self, code: str, message: str, tool_name: str) -> None:
        super().__init__(f"[{code}] {message}")
        self.code = code
        self.message = message
        self.tool_name = tool_name

    def __str__(self) -> str:  # LookupError would quote the message like a dict key
        return f"[{self.code}] {self.message}"


class ValidationError(ToolmendError, ValueError):
    """Raised when arguments do not match their tool's schema; `.errors` holds every FieldError
    (path, code, message, expected, actual, suggestion) in document order."""

    def __init__(self, tool_name: str, errors: tuple[Any, ...]) -> None:
        lines = "".join(f"\n  {e}" for e in errors)
        super().__init__(f"Validation failed for tool '{tool_name}' with {len(errors)} error(s){lines}")
        self.tool_name = tool_name
        self.errors = tuple(errors)

    def as_dicts(self) -> list[dict[str, Any]]:
        """Every error as a plain dict, fit for a log line or a reflection prompt."""
        return [e.as_dict() for e in self.errors]


class ModelHTTPError(ToolmendError):
    """The model server refused a request for a reason a retry cannot fix (404 model not found, 400 tools
    not supported, auth), or kept failing past the transport budget. ``status`` is None for a connection
    error or timeout. Raised inside a chat it carries the chat's ``correlation_id``, the ``attempt`` number it
    came from and that attempt's ``response`` (the JSON body, or its text)."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        body: str = "",
        retry_after_s: float | None = None,
        code: str | None = None,
        correlation_id: str | None = None,
        attempt: int | None = None,
        response: Any = None,
    ) -> None:
        prefix = f"[{code}] " if code else ""
        super().__init__(prefix + (f"HTTP {status}: {message}" if status is not None else message))
        #: TLP-007 for a reply over max_response_bytes, TLP-009 for a response that is not a chat reply
        #: (a redirect, 204, a body that is not JSON); None for the server's own refusals.
        self.code = code
        self.message = message
        self.status = status
        self.body = body
        self.retry_after_s = retry_after_s
        self.correlation_id = correlation_id
        self.attempt = attempt
        self.response = response


class RetryExhaustedError(ToolmendError):
    """The model kept producing tool calls that fail, past ``max_retries`` reflections.

    ``attempts`` is the ledger (one entry per request), ``attempt`` the number of the last one, ``last_error``
    the last failure (a ToolCallError or a message), ``response`` the last reply body, ``usage`` the tokens of
    every attempt summed. ``code`` is the catalogue's code of why the calls still failed: the last failure's
    (TLP-004 arguments that could not be read, TSR-003 a required argument missing, ...), or, when the chat
    ended on something else (its deadline), the code of the last attempt that had one; None when no attempt
    had one (a transport failure). Running out of retries has no code of its own (docs/errors.md says why)."""

    def __init__(
        self,
        message: str,
        *,
        attempts: tuple[Any, ...],
        last_error: Any,
        correlation_id: str,
        response: Any = None,
        usage: Any = None,
        attempt: int | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        if code is None:
            code = getattr(last_error, "code", None)
        if code is None:
            code = next((a.error_code for a in reversed(attempts) if getattr(a, "error_code", None)), None)
        self.code = code
        self.attempts = attempts
        self.attempt = attempt if attempt is not None else (getattr(attempts[-1], "number", None) if attempts else None)
        self.last_error = last_error
        self.correlation_id = correlation_id
        self.response = response
        self.usage = usage


class CircuitOpenError(RetryExhaustedError):
    """Chats with this model kept exhausting their retries; the client refuses new ones for a while."""


class MidStreamError(RetryExhaustedError):
    """A streamed turn failed after events had reached the caller; it is not retried (events are never
    replayed). ``received`` holds the complete calls handed out before the failure."""

    def __init__(self, message: str, *, received: tuple[Any, ...] = (), **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.received = received


class TokenBudgetError(RetryExhaustedError):
    """A chat stopped because its attempts used up ``RetryConfig.token_budget``."""


# ---- the catalogue -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class FailedCall:
    """A call to ask again for, found outside the core's checks (cut off by the token limit, refused by the
    server's own parser, refused with repair turned off); it reads like a ToolCallError, plus the call's ``id``."""

    code: str
    message: str
    tool_name: str | None
    raw_arguments: str | None
    index: int
    position: int | None = None
    validation: tuple[Any, ...] = ()
    suggestion: str = ""
    id: str | None = None

    @classmethod
    def of(cls, error: Any, **changes: Any) -> FailedCall:
        """A copy of a ToolCallError (or FailedCall) with some fields changed."""
        fields = {name: getattr(error, name, None) for name in cls.__dataclass_fields__}
        fields["validation"] = tuple(fields["validation"] or ())
        fields["suggestion"] = fields["suggestion"] or ""
        fields.update(changes)
        return cls(**fields)  # type: ignore[arg-type]

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"



class ErrorInfo(NamedTuple):
    """One error code: what it is called, what causes it, what fixes it, and where it shows up."""

    code: str
    #: The variant's name in the Rust core's ErrorCode.
    name: str
    title: str
    cause: str
    fix: str
    #: The exceptions raised with this code and the result types that carry it as data.
    reported_as: tuple[type, ...]


# Where each code reaches Python. Calls that fail inside a reply are returned, not raised: their code is on
# the ToolCallError (and on the failed StreamEvent of a stream).
# RetryExhaustedError carries the code a call kept failing with, whichever it is.
_VALIDATION = (ValidationError, FieldError, ToolCallError, RetryExhaustedError)
_LIMIT = (ParseError, RepairError, ToolCallError, ValidationError, FieldError, RetryExhaustedError)
_REPORTED_AS: Mapping[str, tuple[type, ...]] = {
    Code.MISSING_FUNCTION: (ToolCallError, RetryExhaustedError),
    Code.EMPTY_NAME: (ToolCallError, RetryExhaustedError),
    Code.INVALID_NAME: (ToolCallError, RetryExhaustedError),
    Code.UNPARSEABLE: (ParseError, RepairError, ToolCallError, RetryExhaustedError),
    Code.NAME_TOO_LONG: (ToolCallError, RetryExhaustedError),
    Code.CALL_CONSTRUCTION: (ParseError, ToolCallError, FailedCall, RetryExhaustedError),
    Code.TOO_LARGE: (*_LIMIT, ModelHTTPError),
    Code.TOO_DEEP_OR_TIMEOUT: _LIMIT,
    Code.REPLY_NOT_UNDERSTOOD: (ModelHTTPError, ToolCallError),
    Code.CUT_OFF: (FailedCall, RetryExhaustedError),
    Code.PROVIDER_ERROR: (ToolCallError, ModelHTTPError),
    Code.UNKNOWN_TOOL: (UnknownToolError, FieldError, ToolCallError, RetryExhaustedError),
    Code.INVALID_ARGUMENTS: _VALIDATION,
    Code.REQUIRED_MISSING: _VALIDATION,
    Code.TYPE_MISMATCH: _VALIDATION,
    Code.CONSTRAINT_VIOLATION: _VALIDATION,
    Code.SCHEMA_INVALID: (SchemaError,),
    Code.DUPLICATE_TOOL: (SchemaError,),
    Code.COMPILATION_FAILED: (SchemaError,),
}

#: Every error code, in catalogue order: ``ERROR_CODES[Code.UNPARSEABLE].fix``.
ERROR_CODES: Mapping[str, ErrorInfo] = MappingProxyType(
    {
        code: ErrorInfo(code, name, title, cause, fix, _REPORTED_AS.get(code, ()))
        for code, name, title, cause, fix in _core.ERROR_CODES
    }
)


def catalogue_markdown() -> str:
    """docs/errors.md: one section per code with its title, cause and fix."""
    lines = [
        "# Error codes",
        "",
        "<!-- Generated from the catalogue in rust/core/src/error.rs by `python docs/gen_errors.py`; do not edit. -->",
        "",
        "Every error toolmend reports carries a stable code: `TLP` for reading a tool call (its name, its",
        "arguments, the limits), `TSR` for the tool registry (definitions and validation). The code is the",
        "`code` of the exception (of each of a `ValidationError`'s `errors`) or of the error returned as data",
        "(`ToolCallError`, `FieldError`, `RepairError`); `toolmend.ERROR_CODES[code]` holds the text below.",
        "",
        "`RetryExhaustedError.code` (and its subclasses') is the code the calls kept failing with: the last",
        "failure's. Running out of retries has no code of its own. Seed 000's summary table calls it",
        "ACODE-TLP-006, but the TLP catalogue this one follows (seed 003) gives TLP-006 to a call that could not",
        "be built; so the error says why the calls failed, and its type says that the retries ran out.",
        "",
        "| code | title |",
        "| --- | --- |",
    ]
    lines += [f"| {info.code} | {info.title} |" for info in ERROR_CODES.values()]
    for info in ERROR_CODES.values():
        reported = ", ".join(f"`{t.__name__}`" for t in info.reported_as)
        lines += [
            "",
            f"## {info.code}: {info.title}",
            "",
            f"**Cause.** {info.cause}",
            "",
            f"**Fix.** {info.fix}",
            "",
            f"Reported as {reported}.",
        ]
    return "\n".join(lines) + "\n"
