"""The history a chat sends: a copy of the caller's messages in which every tool call is well-formed.

A server refuses a whole request whose history holds one tool call it cannot read (Ollama: HTTP 400 "invalid
tool call arguments"), typically a call the caller kept from an earlier turn. Each call's arguments are put in
the provider's form (Ollama: a JSON object; OpenAI: a string holding one); arguments that are not JSON are
repaired, and a call beyond repair is replayed as text in its message (the tool results that answered it
become user messages, so that no result is left without its call). The caller's list and dicts are never
modified: a message that changes is a new dict.
"""

from __future__ import annotations

from typing import Any, Literal, Mapping, Sequence

import orjson

Form = Literal["ollama", "openai"]


def well_formed(
    messages: Sequence[Mapping[str, Any]], form: Form, *, repair: bool = True, limits: Mapping[str, Any] | None = None
) -> list[dict[str, Any]]:
    """A new list of the messages, every tool call in ``form``; ``repair=False`` replays as text every call whose
    arguments are not already strict JSON."""
    out: list[dict[str, Any]] = []
    dropped: dict[str, str] = {}  # id of a call replayed as text -> its name
    for message in messages:
        calls = message.get("tool_calls")
        if calls:
            out.append(_with_calls(message, calls, form, repair, limits or {}, dropped))
        elif dropped and message.get("role") == "tool" and message.get("tool_call_id") in dropped:
            name = dropped[message["tool_call_id"]]
            out.append({"role": "user", "content": f"[result of {name}]\n{_text(message.get('content'))}"})
        else:
            out.append(dict(message))
    return out


def _with_calls(
    message: Mapping[str, Any], calls: Any, form: Form, repair: bool, limits: Mapping[str, Any], dropped: dict[str, str]
) -> dict[str, Any]:
    kept: list[Any] = []
    replayed: list[str] = []
    changed = False
    for call in calls:
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping):
            kept.append(call)
            continue
        arguments = function.get("arguments")
        fixed = _arguments(arguments, form, repair, limits)
        if fixed is _UNREADABLE:
            name = str(function.get("name") or "?")
            raw = arguments if isinstance(arguments, str) else repr(arguments)
            replayed.append(f"{name}({raw})")
            if call.get("id"):
                dropped[str(call["id"])] = name
            changed = True
        elif fixed is arguments:
            kept.append(call)
        else:
            kept.append({**call, "function": {**function, "arguments": fixed}})
            changed = True
    if not changed:
        return dict(message)
    out = dict(message)
    if kept:
        out["tool_calls"] = kept
    else:
        out.pop("tool_calls", None)
    if replayed:
        content = message.get("content")
        if isinstance(content, list):  # content parts: the replay is one more text part
            out["content"] = [*content, {"type": "text", "text": "\n".join(replayed)}]
        else:
            out["content"] = "\n".join([t for t in (_text(content),) if t] + replayed)
    return out


_UNREADABLE = object()


def _arguments(arguments: Any, form: Form, repair: bool, limits: Mapping[str, Any]) -> Any:
    """The arguments in ``form`` (the same object when they are already), or _UNREADABLE."""
    if isinstance(arguments, Mapping):
        if form == "ollama":
            return arguments
        return orjson.dumps(dict(arguments)).decode()
    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        return {} if form == "ollama" else "{}"  # a call without arguments
    if not isinstance(arguments, str):
        return _UNREADABLE
    try:
        value = orjson.loads(arguments)
    except orjson.JSONDecodeError:
        if not repair:
            return _UNREADABLE
        value = _repaired(arguments, limits)
        if not isinstance(value, dict):
            return _UNREADABLE
        return value if form == "ollama" else orjson.dumps(value).decode()
    if not isinstance(value, dict):
        return _UNREADABLE
    return value if form == "ollama" else arguments


def _repaired(text: str, limits: Mapping[str, Any]) -> Any:
    from toolmend._repair import loads

    try:
        return loads(text, **limits)
    except ValueError:
        return None


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return orjson.dumps(content).decode()
