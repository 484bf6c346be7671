"""Text from a model or a server, made fit for a log record."""

from __future__ import annotations

import re
from typing import Any, Iterable

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def loggable(text: Any, limit: int = 200) -> str:
    """``text`` with control characters escaped (a newline in a tool name cannot start a forged record)
    and its length capped at ``limit`` characters."""
    text = str(text)
    clipped = _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text[:limit])
    return clipped + (f"... ({len(text) - limit} more characters)" if len(text) > limit else "")


def repair_details(repairs: Iterable[Any]) -> str:
    """A call's repairs for a DEBUG record, kind and byte position each (never the values they touched):
    ``trailing_comma at 19, single_quotes at 1``."""
    return ", ".join(f"{r.kind} at {r.position}" for r in repairs)
