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
