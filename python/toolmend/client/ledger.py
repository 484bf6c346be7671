"""The ledger of a chat: what each attempt cost and how it ended, the client's counters, the audit file."""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import orjson

from toolmend._core import ToolCall, ToolCallError

SECRET_KEY = re.compile(r"pass(word)?|secret|token|api[_-]?key|auth", re.I)


@dataclass(frozen=True)
class Usage:
    """Tokens and time as Ollama reports them, summed over attempts."""

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

    @classmethod
    def of(cls, reply: Mapping[str, Any]) -> Usage:
        return cls(
            int(reply.get("prompt_eval_count") or 0),
            int(reply.get("eval_count") or 0),
            int(reply.get("total_duration") or 0),
        )


@dataclass(frozen=True)
class Attempt:
    """One request of a chat: which lane its outcome took, why, and what it cost."""

    number: int
    lane: str  # "ok", "model", "salvaged", "transport" or "fatal"
    status: int | None
    error_code: str | None
    delay_s: float
    usage: Usage
    duration_s: float



#: Upper bounds of the latency buckets, in milliseconds (the last one is open).
LATENCY_BUCKETS_MS = (10, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, float("inf"))


class Stats:
    """Counters and latency histograms of one client; chats on one event loop update them in turn."""

    def __init__(self) -> None:
        self.counters: dict[str, int] = {}
        self.repairs_by_kind: dict[str, int] = {}
        self.failed_by_code: dict[str, int] = {}
        self.attempt_ms = [0] * len(LATENCY_BUCKETS_MS)
        self.chat_ms = [0] * len(LATENCY_BUCKETS_MS)

    def count(self, name: str, n: int = 1) -> None:
        self.counters[name] = self.counters.get(name, 0) + n

    def attempt(self, attempt: Attempt) -> None:
        self.count("attempts")
        lane = {"model": "reflected", "salvaged": "salvaged", "transport": "backed_off", "fatal": "fatal"}.get(attempt.lane)
        if lane:
            self.count(lane)
        _observe(self.attempt_ms, attempt.duration_s)

    def failed(self, errors: Iterable[ToolCallError]) -> None:
        for error in errors:
            self.failed_by_code[error.code] = self.failed_by_code.get(error.code, 0) + 1

    def chat_done(self, calls: Iterable[ToolCall], seconds: float) -> None:
        self.count("chats")
        for call in calls:
            self.count("calls_parsed")
            if call.repairs:
                self.count("calls_repaired")
            for r in call.repairs:
                self.repairs_by_kind[r.kind] = self.repairs_by_kind.get(r.kind, 0) + 1
        _observe(self.chat_ms, seconds)

    def snapshot(self) -> dict[str, Any]:
        buckets = ["<=" + (f"{b:g}ms" if b != float("inf") else "inf") for b in LATENCY_BUCKETS_MS]
        return {
            **self.counters,
            "repairs_by_kind": dict(self.repairs_by_kind),
            "failed_by_code": dict(self.failed_by_code),
            "attempt_latency": dict(zip(buckets, self.attempt_ms)),
            "chat_latency": dict(zip(buckets, self.chat_ms)),
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




def write_audit(path: str, line: Mapping[str, Any]) -> None:
    """Appends one JSON line to the audit file: owner-only, and never through a symlink planted at the path."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "ab") as f:
        f.write(orjson.dumps(line) + b"\n")
