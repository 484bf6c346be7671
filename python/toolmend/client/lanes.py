"""Which lane an attempt's outcome takes, and how long a transport retry waits.

An attempt ends in one of five lanes (``Attempt.lane``): ``ok``; ``model`` (calls that failed our checks or the
server's parser, reflected to the model); ``salvaged`` (the server's parser refused a call whose raw text we
mended); ``transport`` (429, 502, 503, 504, a 500 not about a tool call, timeouts, dropped connections, an empty
200; backed off and sent again); ``fatal`` (other 4xx, replies that are not replies: raised at once).
"""

from __future__ import annotations

import email.utils
import random
import re
import time
from typing import Callable

import httpx

from toolmend._states import Lane, Verdict
from toolmend.errors import ModelHTTPError

# The lane names, written once (toolmend.Lane): every use in the client goes through these.
OK = Lane.OK
MODEL = Lane.MODEL
SALVAGED = Lane.SALVAGED
TRANSPORT = Lane.TRANSPORT
FATAL = Lane.FATAL
#: Not a lane of the ledger: how the engine reads a 400 that says the request carried a malformed tool call
#: (recorded in the ledger as MODEL, since it is answered by asking the model again).
REJECTED = Verdict.REJECTED
#: Not a lane either: a reply whose calls the engine checks.
REPLY = Verdict.REPLY

TRANSPORT_STATUSES = frozenset({429, 502, 503, 504})
# The server's words when its own parser rejected the model's tool call (Ollama's server/routes.go, the harmony
# parser; its OpenAI-compatible endpoint wraps the same text in an error object).
MODEL_ERROR = re.compile(r"error parsing tool call|invalid tool call arguments|failed to parse JSON|tool call", re.I)
RAW = re.compile(r"raw='(?P<raw>.*)',\s*err=(?P<err>.*)$", re.S)
# A 400 with these words: the request's history held a tool call whose arguments the server could not read.
REJECTED_CALL = re.compile(r"invalid tool call arguments", re.I)


def is_model_error(text: str | None) -> bool:
    return text is not None and MODEL_ERROR.search(text) is not None


def raw_call_text(error_text: str) -> str | None:
    """The call's arguments as the model wrote them, from Ollama's ``raw='...', err=...`` message."""
    match = RAW.search(error_text)
    return match.group("raw") if match else None


def classify(status: int | None, failure: str | None, error_text: str | None) -> Lane | Verdict:
    """The lane of an attempt from what came back: TRANSPORT, REJECTED, FATAL, MODEL (the server's error
    about the model's call, or an error object sent with 200) or REPLY (a reply to check)."""
    if failure is not None or status in TRANSPORT_STATUSES:
        return TRANSPORT
    if status == 500:
        return MODEL if is_model_error(error_text) else TRANSPORT
    if status is not None and status >= 400:
        if status == 400 and error_text is not None and REJECTED_CALL.search(error_text):
            return REJECTED
        return FATAL
    if error_text is not None:
        return MODEL
    return REPLY


class Backoff:
    """Exponential backoff with full jitter and a cap, the server's own wait honoured, never past the deadline."""

    def __init__(self, base_ms: int, cap_ms: int, retries: int, rand: Callable[[], float] = random.random) -> None:
        self.base_s = base_ms / 1000
        self.cap_s = cap_ms / 1000
        self.retries = retries
        self._rand = rand

    def jitter(self, failures: int) -> float:
        """Full jitter: a uniform draw below the capped exponential."""
        return min(self.cap_s, self.base_s * 2 ** (failures - 1)) * self._rand()

    def delay(
        self,
        failures: int,
        why: str,
        status: int | None,
        headers: httpx.Headers | None,
        body: str,
        deadline: float,
    ) -> float:
        """How long to wait before the next try: the server's wait when it says, else the backoff; never past the
        deadline. ModelHTTPError when the budget of ``retries`` is spent or the server asks for longer than the cap."""
        if failures > self.retries:
            raise ModelHTTPError(f"{why} (after {failures} tries)", status=status, body=body)
        wait = server_wait(headers, status) if headers is not None else None
        if wait is not None and wait > self.cap_s:
            raise ModelHTTPError(
                f"{why}; the server asks to wait {wait:.1f}s, over the backoff cap",
                status=status,
                body=body,
                retry_after_s=wait,
            )
        delay = wait if wait is not None else self.jitter(failures)
        return min(delay, max(0.0, deadline - time.monotonic()))


def server_wait(headers: httpx.Headers, status: int | None = None) -> float | None:
    """Seconds the server asks us to wait: retry-after-ms, Retry-After (seconds or an HTTP date) and, on a 429,
    the reset of the rate limit that ran out (OpenAI's x-ratelimit-reset-requests / -tokens, "1s", "6m0s",
    "20ms"; or x-ratelimit-reset, seconds or a Unix time). None when it does not say."""
    if "retry-after-ms" in headers:
        try:
            return max(0.0, float(headers["retry-after-ms"]) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is not None:
        try:
            return max(0.0, float(value))
        except ValueError:
            pass
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            when = None
        if when is not None:
            return max(0.0, when.timestamp() - time.time())
    if status != 429:
        return None
    # The limit that ran out is the one with nothing remaining; when none says so, the sooner reset.
    resets = []
    for kind in ("requests", "tokens"):
        reset = _duration(headers.get(f"x-ratelimit-reset-{kind}"))
        if reset is None:
            continue
        if headers.get(f"x-ratelimit-remaining-{kind}", "").strip() == "0":
            return reset
        resets.append(reset)
    generic = _duration(headers.get("x-ratelimit-reset"))
    if generic is not None:
        return generic
    return min(resets) if resets else None


_DURATION = re.compile(r"(?P<n>\d+(?:\.\d+)?)(?P<unit>ms|h|m|s)")
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def _duration(value: str | None) -> float | None:
    """Seconds from "1s", "6m0s", "1h2m3.5s", "20ms", a bare number of seconds, or a Unix time."""
    if value is None:
        return None
    value = value.strip()
    try:
        number = float(value)
    except ValueError:
        parts = _DURATION.findall(value)
        if not parts or "".join(n + u for n, u in parts) != value:
            return None
        return sum(float(n) * _UNIT_S[u] for n, u in parts)
    # A bare number this large is a point in time, not a wait.
    return max(0.0, number - time.time()) if number > 1e9 else max(0.0, number)
