"""The async clients: one turn engine (lanes, backoff, breaker, reflection, ledger) and one module per provider."""

from toolmend.client.events import (
    ChatEvent,
    ChatResult,
    Done,
    ReasoningDelta,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallCompleted,
    ToolCallFailed,
    ToolCallStarted,
)
from toolmend._states import Lane
from toolmend.client.ledger import Attempt, Stats, Usage
from toolmend.client.ollama import OllamaClient
from toolmend.client.openai import OpenAICompatibleClient
from toolmend.client.reflection import FailedCall, reflection_messages

__all__ = [
    "Attempt",
    "ChatEvent",
    "ChatResult",
    "Done",
    "FailedCall",
    "Lane",
    "OllamaClient",
    "OpenAICompatibleClient",
    "ReasoningDelta",
    "Stats",
    "TextDelta",
    "ToolCallArgumentsDelta",
    "ToolCallCompleted",
    "ToolCallFailed",
    "ToolCallStarted",
    "Usage",
    "reflection_messages",
]
