"""toolmend: turn what a language model says into tool calls an agent can execute safely, fast."""

from toolmend._core import LOADS_MAX_DEPTH, __version__
from toolmend.errors import ParseError, SchemaError, ToolmendError, UnknownToolError, ValidationError
from toolmend.registry import FieldError, SkippedTool, ToolInfo, ToolRegistry, ValidationResult
from toolmend.repair import Repair, RepairError, RepairResult, loads, repair

__all__ = [
    "LOADS_MAX_DEPTH",
    "FieldError",
    "ParseError",
    "Repair",
    "RepairError",
    "RepairResult",
    "SchemaError",
    "SkippedTool",
    "ToolInfo",
    "ToolRegistry",
    "ToolmendError",
    "UnknownToolError",
    "ValidationError",
    "ValidationResult",
    "__version__",
    "loads",
    "repair",
]
