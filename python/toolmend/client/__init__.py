"""The clients: one turn engine (lanes, backoff, breaker, reflection, ledger), one module per provider, their sync
twins (client.sync) and the agent loop (client.agent)."""

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
from toolmend.client.agent import RunResult
from toolmend.client.ledger import Attempt, Stats, Usage
from toolmend.client.ollama import OllamaClient
from toolmend.client.openai import OpenAICompatibleClient
from toolmend.client.reflection import FailedCall, reflection_messages
from toolmend.client.sync import SyncOllamaClient, SyncOpenAICompatibleClient

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
    "RunResult",
    "Stats",
    "SyncOllamaClient",
    "SyncOpenAICompatibleClient",
    "TextDelta",
    "ToolCallArgumentsDelta",
    "ToolCallCompleted",
    "ToolCallFailed",
    "ToolCallStarted",
    "Usage",
    "reflection_messages",
]
