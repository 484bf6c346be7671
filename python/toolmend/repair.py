"""JSON repair: toolmend.repair and toolmend.loads, over the single-pass engine in toolmend-core."""

from __future__ import annotations

import logging
from typing import Any, Union

import orjson

from toolmend import _core
from toolmend._core import Repair, RepairError, RepairResult

__all__ = ["MAX_DEPTH", "MAX_SIZE", "TIMEOUT_MS", "Repair", "RepairError", "RepairResult", "loads", "repair"]

Text = Union[str, bytes, bytearray]

logger = logging.getLogger("toolmend")

#: Defaults of the seed specification: 1 MiB, 64 levels, 100 ms (FR-034, NFR-002).
MAX_SIZE = 1_048_576
MAX_DEPTH = 64
TIMEOUT_MS = 100


def repair(
    text: Text, *, max_size: int = MAX_SIZE, max_depth: int = MAX_DEPTH, timeout_ms: int = TIMEOUT_MS
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


def _utf8_size(text: Text) -> int:
    if isinstance(text, str) and not text.isascii():  # isascii() is O(1) on CPython strs
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text)


def _may_nest_deeper(text: Text, max_depth: int) -> bool:
    """Cheap bound first: a text with fewer opening brackets than the limit cannot nest deeper."""
    if isinstance(text, str):
        opening = text.count("{") + text.count("[")
    else:
        opening = text.count(b"{") + text.count(b"[")
    return opening > max_depth and _core.exceeds_depth(text, max_depth)


def loads(text: Text, *, max_size: int = MAX_SIZE, max_depth: int = MAX_DEPTH, timeout_ms: int = TIMEOUT_MS) -> Any:
    """Repairs text when needed and returns Python objects; raises ParseError when it cannot.

    Valid JSON within the limits is parsed by orjson; anything else goes through the repair engine,
    whose output jiter turns into Python objects. Integers beyond 64 bits come back as floats on
    both paths.
    """
    if _utf8_size(text) <= max_size:
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
        else:
            if not _may_nest_deeper(text, max_depth):
                return value
    return _core.loads(text, max_size=max_size, max_depth=max_depth, timeout_ms=timeout_ms)
