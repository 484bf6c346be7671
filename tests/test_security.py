"""Hostile arguments (path traversal, shell text, wrong types and cases, oversized and deep values) are refused
with the right codes, and no argument value reaches a log record at INFO or above on any path (registry,
parse_response, the Ollama client)."""

from __future__ import annotations

import asyncio
import logging

import pytest

from ollama_server import ScriptedOllama, chat_reply
from toolmend import ToolRegistry, parse_response
from toolmend.config import RetryConfig
from toolmend.errors import RetryExhaustedError
from toolmend.ollama import OllamaClient

SECRET = "s3cr3t-VALUE-do-not-log"
SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "pattern": "^[A-Za-z0-9_][A-Za-z0-9_./-]*$", "not": {"pattern": "\\.\\."}, "maxLength": 256},
        "count": {"type": "integer", "minimum": 1, "maximum": 100},
        "mode": {"enum": ["read", "write"]},
        "token": {"type": "string"},
    },
    "required": ["path"],
}


@pytest.fixture
def registry() -> ToolRegistry:
    reg = ToolRegistry(max_depth=16)
    reg.register("file_op", SCHEMA, description="Operate on a file")
    return reg


@pytest.mark.parametrize(
    ("arguments", "code", "path"),
    [
        ({"path": "../../../etc/passwd"}, "TSR-005", "/path"),
        ({"path": "/etc/passwd"}, "TSR-005", "/path"),
        ({"path": "a/../../b"}, "TSR-005", "/path"),
        ({"path": "ok.txt", "count": "123"}, "TSR-004", "/count"),
        ({"path": "ok.txt", "count": 1e9}, "TSR-005", "/count"),  # integral: an integer, over maximum
        ({"path": "ok.txt", "mode": "READ"}, "TSR-005", "/mode"),
        ({"path": "ok.txt", "mode": "read "}, "TSR-005", "/mode"),
        ({"path": "x" * 100_000}, "TSR-005", "/path"),
        ({"path": "ok.txt", "extra": "; rm -rf /"}, "TSR-005", "/extra"),
        ({"path": "ok.txt", "token": [[[[[[[[[[[[[[[[[["deep"]]]]]]]]]]]]]]]]]]}, "TLP-008", "/token/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0"),
    ],
)
def test_injection_payloads_are_refused_with_codes(registry: ToolRegistry, arguments: dict, code: str, path: str) -> None:
    errors = registry.try_validate("file_op", arguments).errors
    assert (errors[0].code, errors[0].path) == (code, path)


def test_no_argument_value_is_logged_at_info_or_above(registry: ToolRegistry, caplog: pytest.LogCaptureFixture) -> None:
    bad = {"path": "../" + SECRET, "token": SECRET}
    with caplog.at_level(logging.DEBUG, logger="toolmend"):
        registry.try_validate("file_op", bad)
        parse_response({"message": {"tool_calls": [{"function": {"name": "file_op", "arguments": bad}}]}}, registry)
        script = [chat_reply({"name": "file_op", "arguments": bad})] * 2
        with ScriptedOllama(script) as server:

            async def go() -> None:
                async with OllamaClient(server.url, "m", registry, RetryConfig(max_retries=1)) as client:
                    await client.chat([{"role": "user", "content": "go"}])

            with pytest.raises(RetryExhaustedError):
                asyncio.run(go())
    loud = [r for r in caplog.records if r.levelno >= logging.INFO]
    assert loud  # the retries and the exhaustion were logged
    assert not any(SECRET in r.getMessage() for r in loud)
