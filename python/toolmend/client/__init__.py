"""The async clients: one turn engine (lanes, backoff, breaker, reflection, ledger) and one module per provider."""

from toolmend.client.events import (
    ChatEvent,
    ChatResult,
    Done,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallCompleted,
    ToolCallFailed,
    ToolCallStarted,
)
from toolmend.client.ledger import Attempt, Stats, Usage
from toolmend.client.ollama import OllamaClient

__all__ = [
    "Attempt",
    "ChatEvent",
    "ChatResult",
    "Done",
    "OllamaClient",
    "Stats",
    "TextDelta",
    "ToolCallArgumentsDelta",
    "ToolCallCompleted",
    "ToolCallFailed",
    "ToolCallStarted",
    "Usage",
]
