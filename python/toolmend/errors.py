"""The exception hierarchy, defined once; every field is an attribute and errors() gives plain dicts."""

from __future__ import annotations

from typing import Any


class ToolmendError(Exception):
    """Root of every error toolmend raises on purpose."""


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
    every attempt summed."""

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
    ) -> None:
        super().__init__(message)
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
