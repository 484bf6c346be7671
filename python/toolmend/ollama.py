"""The Ollama client, kept importable here: it lives in toolmend.client (one turn engine, one module per provider)."""

from toolmend.client import (
    Attempt,
    ChatEvent,
    ChatResult,
    Done,
    Lane,
    OllamaClient,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallCompleted,
    ToolCallFailed,
    ToolCallStarted,
    Usage,
)

__all__ = [
    "Attempt",
    "ChatEvent",
    "ChatResult",
    "Done",
    "Lane",
    "OllamaClient",
    "TextDelta",
    "ToolCallArgumentsDelta",
    "ToolCallCompleted",
    "ToolCallFailed",
    "ToolCallStarted",
    "Usage",
]
