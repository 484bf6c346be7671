"""The ledger of a chat: what each attempt cost and how it ended, the client's counters, the audit file."""

from __future__ import annotations

import os
import queue
import re
import threading
import weakref
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import orjson

from toolmend._core import ToolCall
from toolmend._states import Lane
from toolmend.client import lanes

SECRET_KEY = re.compile(r"pass(word)?|secret|token|api[_-]?key|auth", re.I)


@dataclass(frozen=True)
class Usage:
    """Tokens and time as the server reports them, summed over attempts."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_duration_ns: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.total_duration_ns + other.total_duration_ns,
        )


@dataclass(frozen=True)
class Attempt:
    """One request of a chat: which lane its outcome took, why, and what it cost."""

    number: int
    lane: Lane  # a toolmend.Lane: "ok", "model", "salvaged", "transport" or "fatal" (each a str too)
    status: int | None
    error_code: str | None
    delay_s: float
    usage: Usage
    duration_s: float
    #: The chat this attempt belongs to, and the model asked (for hooks and telemetry, which see attempts alone).
    correlation_id: str = ""
    model: str = ""


#: Upper bounds of the latency buckets, in milliseconds (the last one is open).
LATENCY_BUCKETS_MS = (10, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, float("inf"))
_BUCKET_NAMES = tuple("<=" + (f"{b:g}ms" if b != float("inf") else "inf") for b in LATENCY_BUCKETS_MS)

#: Every counter of Stats, present (at zero) from the start.
COUNTERS = (
    "chats",  # chats that ended: chats_ok + chats_failed
    "chats_ok",
    "chats_failed",  # ended in a toolmend error, whichever
    "chats_exhausted",  # of which: calls still failing after the last reflection
    "chats_over_budget",  # of which: the token budget ran out
    "chats_refused",  # of which: refused by an open circuit
    "chats_cancelled",  # cancelled by the caller (not counted in chats)
    "attempts",
    "reflected",
    "salvaged",
    "backed_off",
    "fatal",
    "calls_parsed",
    "calls_repaired",
    "prompt_tokens",
    "completion_tokens",
)
_PER_MODEL = ("chats", "chats_failed", "attempts", "prompt_tokens", "completion_tokens")
# The counter each lane adds to (the ok lane's chats are counted when the chat ends).
_LANE_COUNTER = {lanes.MODEL: "reflected", lanes.SALVAGED: "salvaged", lanes.TRANSPORT: "backed_off", lanes.FATAL: "fatal"}


class Stats:
    """Counters and latency histograms of one client; chats on one event loop update them in turn.
    ``client.stats()`` is a snapshot (a copy), ``client.stats.reset()`` sets every counter back to zero."""

    def __init__(self) -> None:
        self.reset()

    def __call__(self) -> dict[str, Any]:
        return self.snapshot()

    def reset(self) -> None:
        """Every counter back to zero."""
        self.counters: dict[str, int] = dict.fromkeys(COUNTERS, 0)
        self.by_model: dict[str, dict[str, int]] = {}
        self.repairs_by_kind: dict[str, int] = {}
        self.failed_by_code: dict[str, int] = {}
        self.attempt_ms = [0] * len(LATENCY_BUCKETS_MS)
        self.chat_ms = [0] * len(LATENCY_BUCKETS_MS)

    def count(self, name: str, n: int = 1, model: str | None = None) -> None:
        self.counters[name] = self.counters.get(name, 0) + n
        if model is not None and name in _PER_MODEL:
            per = self.by_model.get(model)
            if per is None:
                per = self.by_model[model] = dict.fromkeys(_PER_MODEL, 0)
            per[name] += n

    def attempt(self, model: str, attempt: Attempt) -> None:
        self.count("attempts", model=model)
        counter = _LANE_COUNTER.get(attempt.lane)
        if counter:
            self.count(counter)
        if attempt.usage.prompt_tokens:
            self.count("prompt_tokens", attempt.usage.prompt_tokens, model)
        if attempt.usage.completion_tokens:
            self.count("completion_tokens", attempt.usage.completion_tokens, model)
        _observe(self.attempt_ms, attempt.duration_s)

    def failed(self, errors: Iterable[Any]) -> None:
        for error in errors:
            self.failed_by_code[error.code] = self.failed_by_code.get(error.code, 0) + 1

    def chat_ok(self, model: str, calls: Iterable[ToolCall], seconds: float) -> None:
        self.count("chats", model=model)
        self.count("chats_ok")
        for call in calls:
            self.count("calls_parsed")
            if call.repairs:
                self.count("calls_repaired")
            for r in call.repairs:
                # A record past the log's first 1,000 repairs stands for `count` of them.
                self.repairs_by_kind[r.kind] = self.repairs_by_kind.get(r.kind, 0) + r.count
        _observe(self.chat_ms, seconds)

    def chat_failed(self, model: str, seconds: float) -> None:
        self.count("chats", model=model)
        self.count("chats_failed", model=model)
        _observe(self.chat_ms, seconds)

    def snapshot(self) -> dict[str, Any]:
        return {
            **self.counters,
            "by_model": {model: dict(per) for model, per in self.by_model.items()},
            "repairs_by_kind": dict(self.repairs_by_kind),
            "failed_by_code": dict(self.failed_by_code),
            "attempt_latency": dict(zip(_BUCKET_NAMES, self.attempt_ms)),
            "chat_latency": dict(zip(_BUCKET_NAMES, self.chat_ms)),
        }


def _observe(histogram: list[int], seconds: float) -> None:
    ms = seconds * 1000
    for i, bound in enumerate(LATENCY_BUCKETS_MS):
        if ms <= bound:
            histogram[i] += 1
            return


def mask_secrets(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of arguments for a DEBUG record, with secret-looking values masked."""
    return {k: ("***" if SECRET_KEY.search(k) else v) for k, v in arguments.items()}


class AuditLog:
    """One JSON line per attempt, written by a thread of its own so that the event loop never waits on the
    disk. The file is opened on first use, owner-only and never through a symlink planted at the path (that
    OSError reaches the chat that opened it); ``close`` writes what is queued and closes it."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._queue: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._fd: int | None = None

    def open(self) -> None:
        if self._fd is not None:
            return
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        self._thread = threading.Thread(target=_write_lines, args=(self._queue, self._fd), name="toolmend-audit", daemon=True)
        self._thread.start()
        # A client dropped without aclose still gets its lines written and its file closed.
        weakref.finalize(self, self._queue.put, None)

    def write(self, line: Mapping[str, Any]) -> None:
        self.open()
        self._queue.put(orjson.dumps(line) + b"\n")

    def close(self) -> None:
        """Writes every queued line and closes the file (blocking: call it off the event loop)."""
        if self._thread is None:
            return
        self._queue.put(None)
        self._thread.join()
        self._thread = None
        self._fd = None


def _write_lines(lines: queue.SimpleQueue[bytes | None], fd: int) -> None:
    try:
        while True:
            batch = [lines.get()]
            while not lines.empty():  # lines queued meanwhile go out in one write
                batch.append(lines.get())
            data = b"".join(b for b in batch if b is not None)
            while data:
                data = data[os.write(fd, data) :]
            if None in batch:
                return
    finally:
        os.close(fd)
