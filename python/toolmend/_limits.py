"""The limits every call takes, as the Rust core defines them: the defaults and the depth ceiling."""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

from toolmend import _core

#: ``max_size`` (bytes), ``max_depth`` (levels) and ``timeout_ms`` when a call does not set them.
DEFAULT_LIMITS: Mapping[str, int] = MappingProxyType(dict(_core.DEFAULT_LIMITS))

#: The largest ``max_depth`` that validation, parse_response, the stream readers and RetryConfig accept:
#: validation recurses once per level, and deeper values could overflow a thread's stack. repair() and
#: loads() take any depth (repair keeps its own stack; loads builds at most LOADS_MAX_DEPTH levels).
MAX_DEPTH_CEILING: int = _core.MAX_DEPTH_CEILING


def check_max_depth(max_depth: int, name: str = "max_depth") -> None:
    """Raises ValueError, saying the ceiling, when ``max_depth`` is over MAX_DEPTH_CEILING."""
    if max_depth > MAX_DEPTH_CEILING:
        raise ValueError(
            f"{name}={max_depth} is over the ceiling of {MAX_DEPTH_CEILING} (toolmend.MAX_DEPTH_CEILING): "
            "nesting that deep would overflow the stack of the walks that recurse per level"
        )
