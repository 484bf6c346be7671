"""toolmend: turn what a language model says into tool calls an agent can execute safely, fast."""

from toolmend._core import __version__
from toolmend.errors import ParseError, ToolmendError
from toolmend.repair import Repair, RepairError, RepairResult, loads, repair

__all__ = [
    "ParseError",
    "Repair",
    "RepairError",
    "RepairResult",
    "ToolmendError",
    "__version__",
    "loads",
    "repair",
]
