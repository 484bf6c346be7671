"""toolmend: turn what a language model says into tool calls an agent can execute safely, fast."""

import logging

from toolmend._core import LOADS_MAX_DEPTH, __version__
from toolmend._limits import DEFAULT_LIMITS, MAX_DEPTH_CEILING
from toolmend._repair import Repair, RepairError, RepairResult, loads, repair
from toolmend._states import Lane, StreamEventKind
from toolmend.config import RetryConfig
from toolmend.errors import (
    ERROR_CODES,
    CircuitOpenError,
    ErrorInfo,
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
from toolmend.registry import FieldError, SkippedTool, ToolInfo, ToolRegistry, ValidationResult
from toolmend.response import ParseResult, ToolCall, ToolCallError, parse_response
from toolmend._core import StreamEvent, TextCallParser, ToolCallAccumulator, ToolCallDelta

__all__ = [
    "Attempt",
    "ChatResult",
    "CircuitOpenError",
    "DEFAULT_LIMITS",
    "Done",
    "ERROR_CODES",
    "ErrorInfo",
    "Lane",
    "MAX_DEPTH_CEILING",
    "MidStreamError",
    "TextDelta",
    "ToolCallArgumentsDelta",
    "ToolCallCompleted",
    "ToolCallFailed",
    "ToolCallStarted",
    "TokenBudgetError",
    "ModelHTTPError",
    "OllamaClient",
    "RetryConfig",
    "RetryExhaustedError",
    "Usage",
    "LOADS_MAX_DEPTH",
    "FieldError",
    "ParseError",
    "ParseResult",
    "Repair",
    "RepairError",
    "RepairResult",
    "SchemaError",
    "SkippedTool",
    "StreamEvent",
    "StreamEventKind",
    "TextCallParser",
    "ToolInfo",
    "ToolCall",
    "ToolCallAccumulator",
    "ToolCallDelta",
    "ToolCallError",
    "ToolRegistry",
    "ToolmendError",
    "UnknownToolError",
    "ValidationError",
    "ValidationResult",
    "__version__",
    "loads",
    "parse_response",
    "repair",
]

# A library logs; the application decides where the records go (no output unless configured).
logging.getLogger("toolmend").addHandler(logging.NullHandler())

# The Ollama client pulls in httpx: imported on first use, so `import toolmend` stays light for repair.
_LAZY = {
    "OllamaClient",
    "ChatResult",
    "Attempt",
    "Usage",
    "TextDelta",
    "ToolCallStarted",
    "ToolCallArgumentsDelta",
    "ToolCallCompleted",
    "ToolCallFailed",
    "Done",
}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        from toolmend import ollama

        return getattr(ollama, name)
    raise AttributeError(f"module 'toolmend' has no attribute {name!r}")
