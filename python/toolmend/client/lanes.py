"""Which lane a failure takes (transport, fatal, model), and how long a transport retry waits."""

from __future__ import annotations

import email.utils
import re
import time

import httpx

TRANSPORT_STATUSES = {429, 502, 503, 504}
# Ollama's words when its own parser rejected the model's tool call (server/routes.go, harmony parser).
MODEL_ERROR = re.compile(r"error parsing tool call|invalid tool call arguments|failed to parse JSON|tool call", re.I)
RAW = re.compile(r"raw='(?P<raw>.*)',\s*err=(?P<err>.*)$", re.S)


def _is_model_error(text: str | None) -> bool:
    return text is not None and MODEL_ERROR.search(text) is not None


def _raw_call_text(error_text: str) -> str | None:
    match = RAW.search(error_text)
    return match.group("raw") if match else None



def _retry_after(headers: httpx.Headers) -> float | None:
    """Seconds to wait, from retry-after-ms or Retry-After (seconds or an HTTP date)."""
    if "retry-after-ms" in headers:
        try:
            return max(0.0, float(headers["retry-after-ms"]) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


