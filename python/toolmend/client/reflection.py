"""Reflection: the prompt that tells a model what was wrong with its call, and the messages that carry it."""

from __future__ import annotations

from typing import Any, Sequence

_ERROR_TYPES = {
    "TLP-001": "missing function",
    "TLP-002": "missing tool name",
    "TLP-003": "invalid tool name",
    "TLP-004": "invalid JSON",
    "TLP-005": "tool name too long",
    "TLP-007": "arguments too large",
    "TLP-008": "arguments nested too deep",
    "TSR-001": "unknown tool",
    "TSR-003": "missing required argument",
    "TSR-004": "wrong argument type",
    "TSR-005": "argument constraint violated",
}



def _clip(text: str, limit: int = 2000) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text) - limit} more characters)"




def error_prompt(error: Any, registry: Any, template: str) -> str:
    """The retry prompt for one failed call: what was wrong, where, and what the tool expects."""
    hint = ""
    if registry is not None and error.tool_name and error.tool_name in registry:
        hint = registry.schema_hint(error.tool_name)
    elif registry is not None:
        hint = "one of: " + ", ".join(t.name for t in registry.tools()[:20])
    lines = [f"- {f.path or '/'}: {f.message}" + (f" (expected {f.expected}, got {f.actual})" if f.expected else "") for f in error.validation]
    return template.format(
        tool_name=error.tool_name or "?",
        error_type=_ERROR_TYPES.get(error.code[:7], "invalid tool call"),
        error_code=error.code,
        error_position=error.position if error.position is not None else "-",
        error_message=error.message + (f" ({error.suggestion})" if error.suggestion else ""),
        validation_errors=("Errors:\n" + "\n".join(lines) + "\n") if lines else "",
        malformed_json=_clip(error.raw_arguments or ""),
        schema_hint=hint or "a JSON object",
        schema_example=hint or "a JSON object",
    )


def reflect(errors: Sequence[Any], text: str, registry: Any, template: str) -> list[dict[str, Any]]:
    """The failed calls replayed as text (never as tool_calls arguments Ollama would refuse), and one
    tool message per failed call with the exact error."""
    replay = "\n".join(f"{e.tool_name or '?'}({_clip(e.raw_arguments or '')})" for e in errors)
    history: list[dict[str, Any]] = [{"role": "assistant", "content": (text + "\n" + replay).strip()}]
    for error in errors:
        history.append({"role": "tool", "tool_name": error.tool_name or "", "content": error_prompt(error, registry, template)})
    return history


def reflect_raw(raw: str, error_text: str, template: str) -> list[dict[str, Any]]:
    """The server's own parser refused the call: its raw text replayed, and the error as a user message."""
    prompt = template.format(
        tool_name="?",
        error_type="invalid JSON",
        error_code="TLP-004",
        error_position="-",
        error_message=error_text,
        validation_errors="",
        malformed_json=_clip(raw),
        schema_hint="one of the declared tools",
        schema_example="one of the declared tools",
    )
    return [{"role": "assistant", "content": _clip(raw)}, {"role": "user", "content": prompt}]
