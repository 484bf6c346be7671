"""toolmend: turn what a language model says into tool calls an agent can execute safely, fast."""

import logging
from typing import TYPE_CHECKING

from toolmend import _records  # noqa: F401  (the result classes' methods written in Python)
from toolmend._core import LOADS_MAX_DEPTH, REPAIR_KINDS, __version__
from toolmend._limits import DEFAULT_LIMITS, MAX_DEPTH_CEILING
from toolmend._repair import Repair, RepairError, RepairResult, loads, loads_many, repair, repair_many
from toolmend._states import CallSource, Code, Lane, StreamEventKind
from toolmend.config import RetryConfig
from toolmend.errors import (
    ERROR_CODES,
    CircuitOpenError,
    ErrorInfo,
    FailedCall,
    MidStreamError,
    ModelHTTPError,
    ParseError,
    RetryExhaustedError,
    SchemaError,
    TokenBudgetError,
    ToolmendError,
    UnknownToolError,
    ValidationError,
)
from toolmend.registry import FieldError, SkippedTool, ToolInfo, ToolRegistry, ToolResult, ToolRunError, ValidationResult
from toolmend.response import TEXT_FORMATS, ParseResult, TextCalls, ToolCall, ToolCallError, check_call, parse_response
from toolmend.content import ParsedContent, split_content
from toolmend._core import Reasoning, StreamEvent, TextCallParser, TextWithoutCalls, ToolCallAccumulator, ToolCallDelta

__all__ = [
    "Attempt",
    "CallSource",
    "ChatResult",
    "CircuitOpenError",
    "Code",
    "DEFAULT_LIMITS",
    "Done",
    "ERROR_CODES",
    "REPAIR_KINDS",
    "ErrorInfo",
    "FailedCall",
    "Lane",
    "MAX_DEPTH_CEILING",
    "MidStreamError",
    "MendingTransport",
    "AsyncMendingTransport",
    "Reasoning",
    "ReasoningDelta",
    "TextDelta",
    "ToolCallArgumentsDelta",
    "ToolCallCompleted",
    "ToolCallFailed",
    "ToolCallStarted",
    "TokenBudgetError",
    "ModelHTTPError",
    "OllamaClient",
    "OpenAICompatibleClient",
    "RetryConfig",
    "RetryExhaustedError",
    "RunResult",
    "SyncOllamaClient",
    "SyncOpenAICompatibleClient",
    "Usage",
    "LOADS_MAX_DEPTH",
    "FieldError",
    "ParseError",
    "ParseResult",
    "ParsedContent",
    "Repair",
    "RepairError",
    "RepairResult",
    "SchemaError",
    "SkippedTool",
    "StreamEvent",
    "StreamEventKind",
    "TEXT_FORMATS",
    "TextCallParser",
    "TextCalls",
    "TextWithoutCalls",
    "ToolInfo",
    "ToolCall",
    "ToolCallAccumulator",
    "ToolCallDelta",
    "ToolCallError",
    "ToolRegistry",
    "ToolResult",
    "ToolRunError",
    "ToolmendError",
    "UnknownToolError",
    "ValidationError",
    "ValidationResult",
    "__version__",
    "loads",
    "loads_many",
    "parse_response",
    "check_call",
    "split_content",
    "reflection_messages",
    "repair",
    "repair_many",
]

if TYPE_CHECKING:  # what the lazy names below are, for type checkers and editors
    from toolmend.client import (
        Attempt,
        ChatResult,
        Done,
        OllamaClient,
        OpenAICompatibleClient,
        ReasoningDelta,
        RunResult,
        SyncOllamaClient,
        SyncOpenAICompatibleClient,
        TextDelta,
        ToolCallArgumentsDelta,
        ToolCallCompleted,
        ToolCallFailed,
        ToolCallStarted,
        Usage,
        reflection_messages,
    )
    from toolmend.mending import AsyncMendingTransport, MendingTransport

# A library logs; the application decides where the records go (no output unless configured).
logging.getLogger("toolmend").addHandler(logging.NullHandler())

# The clients pull in httpx: imported on first use, so `import toolmend` stays light for repair.
_LAZY = {
    "OllamaClient",
    "OpenAICompatibleClient",
    "SyncOllamaClient",
    "SyncOpenAICompatibleClient",
    "RunResult",
    "reflection_messages",
    "ChatResult",
    "Attempt",
    "Usage",
    "TextDelta",
    "ReasoningDelta",
    "ToolCallStarted",
    "ToolCallArgumentsDelta",
    "ToolCallCompleted",
    "ToolCallFailed",
    "Done",
}


#: The mending transports, imported on first use too (they need httpx).
_MENDING = {"MendingTransport", "AsyncMendingTransport"}


def __getattr__(name: str) -> object:
    if name in _MENDING:
        from toolmend import mending

        return getattr(mending, name)
    if name in _LAZY:
        from toolmend import client

        return getattr(client, name)
    raise AttributeError(f"module 'toolmend' has no attribute {name!r}")
