"""SDK objects whose fields the core cannot see: LiteLLM's replies and stream chunks.

The core reads an SDK's object (a pydantic model: openai, ollama, anthropic, LangChain) by the dict of its
fields, ``__dict__``. LiteLLM's classes allow extra fields and set most of theirs after construction, so
pydantic files them in ``__pydantic_extra__``: a tool call's ``__dict__`` is empty, a streamed choice's too. Read
as it is, a whole reply gave TLP-001 (a call with no function) and a stream no call at all, and no error.

Such an object is read here into plain dicts of its fields, both kinds (nothing dumped, nothing validated, the
caller's object untouched), and the core reads those. Other objects go to the core as they are: the test is one
dictionary look-up while litellm is not imported.
"""

from __future__ import annotations

import sys
from typing import Any

from toolmend import _core

__all__ = ["from_litellm", "litellm_fields"]

#: A reply is a few levels deep; a value deeper than this goes to the core as it is (the core bounds depth).
_MAX_DEPTH = 32


def from_litellm(value: Any) -> bool:
    """Whether ``value`` is one of LiteLLM's objects (a ModelResponse, a stream chunk, a Message, ...)."""
    return "litellm" in sys.modules and type(value).__module__.startswith("litellm.")


def litellm_fields(value: Any, depth: int = 0) -> Any:
    """``value`` with every pydantic object in it made the dict of its fields, extra fields included."""
    if depth > _MAX_DEPTH:
        return value
    if isinstance(value, (str, bytes, int, float)) or value is None:
        return value
    if isinstance(value, dict):
        return {k: litellm_fields(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [litellm_fields(v, depth + 1) for v in value]
    if hasattr(value, "model_fields_set"):
        fields = dict(vars(value))
        fields.update(getattr(value, "__pydantic_extra__", None) or {})
        return {k: litellm_fields(v, depth + 1) for k, v in fields.items()}
    return value


# ToolCallAccumulator.feed is the core's; a LiteLLM chunk is read into its fields before it goes there.
_core_feed = getattr(_core.ToolCallAccumulator.feed, "__wrapped__", _core.ToolCallAccumulator.feed)


def _feed(self: Any, chunk: Any) -> Any:
    if from_litellm(chunk):
        chunk = litellm_fields(chunk)
    return _core_feed(self, chunk)


_feed.__wrapped__ = _core_feed  # type: ignore[attr-defined]
_feed.__doc__ = _core_feed.__doc__
_core.ToolCallAccumulator.feed = _feed  # type: ignore[method-assign]
