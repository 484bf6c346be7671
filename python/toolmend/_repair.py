"""JSON repair: toolmend.repair and toolmend.loads, over the single-pass engine in toolmend-core."""

from __future__ import annotations

import logging
from typing import Union

from toolmend import _core
from toolmend._core import Repair, RepairError, RepairResult
from toolmend._limits import DEFAULT_LIMITS

__all__ = ["Repair", "RepairError", "RepairResult", "loads", "loads_many", "repair", "repair_many"]

Text = Union[str, bytes, bytearray]

logger = logging.getLogger("toolmend")


def repair(
    text: Text,
    *,
    max_size: int = DEFAULT_LIMITS["max_size"],
    max_depth: int = DEFAULT_LIMITS["max_depth"],
    timeout_ms: int = DEFAULT_LIMITS["timeout_ms"],
) -> RepairResult:
    """Repairs text into one strict JSON value in linear time.

    Valid JSON comes back unchanged (the same str object) with an empty log. Positions are byte
    offsets into the UTF-8 encoding of the input. Never raises for bad input: see ``error``.
    Repairs and failures are logged at DEBUG, by kind and code only, never with the text.
    """
    result = _core.repair(text, max_size=max_size, max_depth=max_depth, timeout_ms=timeout_ms)
    if (result.repaired or result.error is not None) and logger.isEnabledFor(logging.DEBUG):
        if result.error is not None:
            logger.debug("repair failed: %s at byte %d", result.error.code, result.error.position)
        else:
            logger.debug("repaired JSON: %s", ", ".join(r.kind for r in result.repairs))
    return result


#: Repairs when needed and returns Python objects; raises ParseError when it cannot. Valid JSON
#: within the limits is parsed by orjson, anything else repaired by the core and built by jiter.
#: Integers stay exact at any size; a number past the range of a double is refused (TLP-004).
loads = _core.loads

#: ``repair`` of every text on all cores (GIL released): the same results as a loop of ``repair``.
repair_many = _core.repair_many

#: ``loads`` of every text, the broken ones mended on all cores; objects built under the GIL.
loads_many = _core.loads_many
