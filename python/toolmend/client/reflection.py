"""Reflection: the prompt that tells a model what was wrong with its call, and the messages that carry it back.

``reflection_messages`` is public: an agent with a client of its own builds the same retry turn with it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, Literal, Sequence

import orjson

from toolmend.config import DEFAULT_RETRY_PROMPT, fill_template
from toolmend.errors import ERROR_CODES, FailedCall
from toolmend._states import Code


def error_type(code: str) -> str:
    """The words a reflection prompt names an error with: the code's title in the catalogue."""
    info = ERROR_CODES.get(code[:7])
    return info.title if info is not None else "invalid tool call"

Provider = Literal["ollama", "openai", "anthropic"]


def cut_off(error_or_call: Any, finish_reason: str = "length") -> FailedCall:
    """A call whose arguments the token limit cut off, as a failure to reflect (never a call to run)."""
    return FailedCall(
        code=Code.CUT_OFF,
        message=f"the reply ended (finish reason {finish_reason!r}) before the call's arguments were complete",
        tool_name=getattr(error_or_call, "tool_name", None) or getattr(error_or_call, "name", None),
        raw_arguments=getattr(error_or_call, "raw_arguments", None),
        index=error_or_call.index,
        suggestion="call it again with complete arguments; if they are long, make them shorter or split the work into several calls",
        id=getattr(error_or_call, "id", None),
    )


#: Codes that say the call named no tool there is: its prompt names the tools there are, never asks for it again.
NAME_CODES = frozenset({Code.UNKNOWN_TOOL, Code.MISSING_FUNCTION, Code.EMPTY_NAME, Code.INVALID_NAME, Code.NAME_TOO_LONG})


def error_prompt(error: Any, registry: Any = None, template: str = DEFAULT_RETRY_PROMPT) -> str:
    """The retry prompt for one failed call: what was wrong, where, and what the tool expects.

    ``template``'s placeholders are filled by replacement (toolmend.config.PLACEHOLDERS); other braces stay as
    written. A call that names no tool there is (unknown, or a name the rules refuse) gets a prompt of its own
    instead: the tools the model can call, and leave to answer without one; never a request to call that
    name again."""
    if error.code in NAME_CODES:
        return unknown_tool_prompt(error, registry)
    hint = ""
    if registry is not None and error.tool_name and error.tool_name in registry:
        hint = registry.schema_hint(error.tool_name)
    elif registry is not None:
        hint = "one of: " + ", ".join(t.name for t in registry.tools()[:20])
    lines = [
        f"- {f.path or '/'}: {f.message}" + (f" (expected {f.expected}, got {f.actual})" if f.expected else "")
        for f in error.validation
    ]
    return fill_template(
        template,
        {
            "tool_name": error.tool_name or "?",
            "error_type": error_type(error.code),
            "error_code": error.code,
            "error_position": error.position if error.position is not None else "-",
            "error_message": error.message + (f" ({error.suggestion})" if error.suggestion else ""),
            "validation_errors": ("Errors:\n" + "\n".join(lines) + "\n") if lines else "",
            "malformed_json": clip(error.raw_arguments or ""),
            "schema_hint": hint or "a JSON object",
            "schema_example": hint or "a JSON object",
        },
    )


def unknown_tool_prompt(error: Any, registry: Any = None) -> str:
    """The prompt for a call naming no tool there is: why, and the tools that can be called."""
    name = clip(error.tool_name or "", 100)
    if error.code == Code.UNKNOWN_TOOL:
        lines = [f"There is no tool named '{name}' ({error.code})."]
    else:
        named = f"'{name}' " if name else ""
        lines = [f"The tool call's name {named}could not be used: {error.message} ({error.code})."]
    if registry is not None and len(registry):
        tools = registry.tools()
        shown = ", ".join(t.name for t in tools[:20]) + (f" and {len(tools) - 20} more" if len(tools) > 20 else "")
        lines.append(f"The tools you can call are: {shown}.")
    else:
        lines.append("Only the tools declared in this conversation can be called.")
    lines.append(
        "If one of them does what you need, call it with its arguments as one JSON object; "
        "otherwise answer without a tool call."
    )
    return "\n".join(lines)


def reflection_messages(
    errors: Sequence[Any],
    provider: Provider = "ollama",
    *,
    text: str = "",
    registry: Any = None,
    template: str = DEFAULT_RETRY_PROMPT,
    ids: Sequence[str | None] | None = None,
) -> list[dict[str, Any]]:
    """The messages that ask a model again for its failed calls, to append to the history after its reply.

    ``errors`` are ToolCallErrors (``ParseResult.errors``) or FailedCalls; ``text`` is what the model wrote
    besides the calls; ``registry`` gives each prompt the tool's schema hint; ``ids`` the calls' ids, in the
    order of ``errors`` (made up where missing). The form follows the provider:

    - ``ollama``: the assistant turn replayed as text (Ollama refuses a history whose tool-call arguments are not
      a JSON object), then one ``tool`` message per failed call (``tool_name``, the prompt).
    - ``openai``: an assistant message carrying the failed calls in ``tool_calls`` (id, name, the arguments
      string exactly as the model wrote it), then one ``tool`` message per call (``tool_call_id``, the prompt).
    - ``anthropic``: an assistant message with a ``tool_use`` block per call whose arguments are a JSON object
      (the rest replayed as text), then a user message with a ``tool_result`` (``is_error``) per ``tool_use`` and
      the other prompts as text.
    """
    prompts = [error_prompt(e, registry, template) for e in errors]
    call_ids: list[str] = []
    for i, e in enumerate(errors):
        given = (ids[i] if ids is not None and i < len(ids) else None) or getattr(e, "id", None)
        # A result answers its call by id: ids within one message must differ.
        call_ids.append(given if given and given not in call_ids else _made_up_id(provider))
    if provider == "ollama":
        replay = "\n".join(f"{e.tool_name or '?'}({clip(e.raw_arguments or '')})" for e in errors)
        history: list[dict[str, Any]] = [{"role": "assistant", "content": (text + "\n" + replay).strip()}]
        history += [{"role": "tool", "tool_name": e.tool_name or "", "content": p} for e, p in zip(errors, prompts)]
        return history
    if provider == "openai":
        calls = [
            {"id": i, "type": "function", "function": {"name": e.tool_name or "", "arguments": e.raw_arguments or ""}}
            for e, i in zip(errors, call_ids)
        ]
        history = [{"role": "assistant", "content": text, "tool_calls": calls}]
        history += [{"role": "tool", "tool_call_id": i, "content": p} for i, p in zip(call_ids, prompts)]
        return history
    if provider == "anthropic":
        blocks: list[dict[str, Any]] = []
        results: list[dict[str, Any]] = []
        replayed: list[str] = []
        for error, prompt, call_id in zip(errors, prompts, call_ids):
            arguments = _object_or_none(error.raw_arguments)
            if arguments is not None and error.tool_name:
                blocks.append({"type": "tool_use", "id": call_id, "name": error.tool_name, "input": arguments})
                results.append({"type": "tool_result", "tool_use_id": call_id, "content": prompt, "is_error": True})
            else:
                replayed.append(f"{error.tool_name or '?'}({clip(error.raw_arguments or '')})")
                results.append({"type": "text", "text": prompt})
        said = (text + "\n" + "\n".join(replayed)).strip()
        content = ([{"type": "text", "text": said}] if said else []) + blocks
        return [{"role": "assistant", "content": content}, {"role": "user", "content": results}]
    raise ValueError(f"unknown provider {provider!r}: 'ollama', 'openai' or 'anthropic'")


def raw_reflection(raw: str, error_text: str, template: str = DEFAULT_RETRY_PROMPT) -> list[dict[str, Any]]:
    """The server's own parser refused the call: its raw text replayed as the assistant's, the error as a user
    message (no tool_calls: the same in every provider's form)."""
    prompt = fill_template(
        template,
        {
            "tool_name": "?",
            "error_type": "invalid JSON",
            "error_code": Code.UNPARSEABLE,
            "error_position": "-",
            "error_message": error_text,
            "validation_errors": "",
            "malformed_json": clip(raw),
            "schema_hint": "one of the declared tools",
            "schema_example": "one of the declared tools",
        },
    )
    return [{"role": "assistant", "content": clip(raw)}, {"role": "user", "content": prompt}]


def rejected_request_message(error_text: str) -> dict[str, Any]:
    """The server refused the request because a tool call in it had arguments it could not read as JSON."""
    return {
        "role": "user",
        "content": (
            "A tool call failed: its arguments were not valid JSON, and the server refused them "
            f"({clip(error_text, 300)}). Please reformulate the tool call with arguments that are one valid JSON "
            "object, and do not repeat the malformed arguments."
        ),
    }


def clip(text: str, limit: int = 2000) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text) - limit} more characters)"


def _object_or_none(raw: str | None) -> dict[str, Any] | None:
    try:
        value = orjson.loads(raw) if raw else None
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _made_up_id(provider: str) -> str:
    return ("toolu_" if provider == "anthropic" else "call_") + uuid.uuid4().hex[:24]


def turn_reflection(
    failures: list[Any], asm: Any, refused: FailedCall | None, provider: Provider, registry: Any, template: str
) -> list[dict[str, Any]]:
    """The messages of a turn that ask again for its failed calls, in the provider's form; a call the
    server's own parser refused is replayed as its raw text."""
    checked = [f for f in failures if f is not refused]
    history: list[dict[str, Any]] = []
    if checked:
        ids = [getattr(f, "id", None) or asm.ids.get(f.index) for f in checked]
        history += reflection_messages(checked, provider, text=asm.text, registry=registry, template=template, ids=ids)
    if refused is not None:
        history += raw_reflection(refused.raw_arguments or "", refused.message, template)
    return history
