"""JSON repair: toolmend.repair and toolmend.loads, over the single-pass engine in toolmend-core."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, NamedTuple, Union

from toolmend import _core
from toolmend.errors import ParseError

__all__ = ["Repair", "RepairError", "RepairResult", "loads", "repair"]

logger = logging.getLogger("toolmend")

Text = Union[str, bytes, bytearray]

#: Defaults of the seed specification: 1 MiB, 64 levels, 100 ms (FR-034, NFR-002).
MAX_SIZE = 1_048_576
MAX_DEPTH = 64
TIMEOUT_MS = 100


class Repair(NamedTuple):
    """One fault that was mended: its kind (e.g. "trailing_comma") and the byte offset where it was found."""

    kind: str
    position: int


class RepairError(NamedTuple):
    """Why a text could not be repaired: a TLP code, a message, a byte offset and a hint."""

    code: str
    message: str
    position: int
    suggestion: str


@dataclass(slots=True)
class RepairResult:
    """The outcome of repair(): the JSON text when ok, the repair log, and the input as given."""

    ok: bool
    json: str | None
    repaired: bool
    repairs: list[Repair]
    original: Text
    error: RepairError | None

    def raise_for_error(self) -> None:
        """Raises ParseError when the text could not be repaired."""
        if self.error is not None:
            raise ParseError(*self.error)


def repair(
    text: Text, *, max_size: int = MAX_SIZE, max_depth: int = MAX_DEPTH, timeout_ms: int = TIMEOUT_MS
) -> RepairResult:
    """Repairs text into one strict JSON value in linear time.

    Valid JSON comes back unchanged (the same str object) with an empty log. Positions are byte
    offsets into the UTF-8 encoding of the input. Never raises for bad input: see ``error``.
    """
    json, log, error = _core.repair(text, max_size, max_depth, timeout_ms)
    repairs = [Repair(kind, position) for kind, position in log]
    if error is not None:
        logger.debug("repair failed: %s at byte %d", error[0], error[2])
        return RepairResult(False, None, False, repairs, text, RepairError(*error))
    if repairs:
        logger.debug("repaired JSON: %s", ", ".join(r.kind for r in repairs))
    return RepairResult(True, json, bool(repairs), repairs, text, None)


def loads(text: Text, *, max_size: int = MAX_SIZE, max_depth: int = MAX_DEPTH, timeout_ms: int = TIMEOUT_MS) -> Any:
    """Repairs text when needed and returns Python objects; raises ParseError when it cannot."""
    value, error = _core.loads(text, max_size, max_depth, timeout_ms)
    if error is not None:
        raise ParseError(*error)
    return value
