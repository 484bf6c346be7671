"""The limits a client hands to the core (repair, parsing, validation), read from its RetryConfig here only."""

from __future__ import annotations

from typing import Any

from toolmend.config import RetryConfig


def repair_limits(config: RetryConfig) -> dict[str, Any]:
    """``max_size``, ``max_depth`` and ``timeout_ms`` as the core's functions and classes take them."""
    return {
        "max_size": config.max_size,
        "max_depth": config.max_depth,
        "timeout_ms": config.timeout_ms,
    }
