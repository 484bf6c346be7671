"""The seed's log records of each tool call (seed 000, "Logging Fields Reference"): an INFO record per call taken,
a WARNING per call refused, every one of the seed's fields an attribute of the record, with the values a reader of
the chat can check (total_tokens the server's usage summed, retry_count the retries made, repair_applied the
repairs in order). Chats run over real HTTP against the loopback servers."""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any

import pytest

import toolmend
from ollama_server import ScriptedOllama
from toolmend import RetryConfig, RetryExhaustedError
from toolmend._call_log import FIELDS, MAX_RECORDS
from toolmend.registry_metrics import correlation_id as current_correlation_id
from wires import WIRES, Wire, read_file_registry

SECRET = "hunter2-secret-value"
BAD = {"name": "read_file", "arguments": {"path": [SECRET]}, "id": "call_bad"}  # a list for a string: TSR-004
REPAIRED = {"name": "read_file", "arguments": "{'path': 'a.txt',}", "id": "call_ok"}  # single quotes, then a comma


def records(caplog: pytest.LogCaptureFixture, level: int | None = None) -> list[logging.LogRecord]:
    """The records that carry the seed's fields (at ``level`` when given)."""
    return [r for r in caplog.records if hasattr(r, "parse_result") and (level is None or r.levelno == level)]


def fields(record: logging.LogRecord) -> dict[str, Any]:
    return {name: getattr(record, name) for name in FIELDS}


def ollama_reply(*calls: dict[str, Any]) -> dict[str, Any]:
    tool_calls = [{"id": c.get("id"), "function": {"name": c["name"], "arguments": c["arguments"]}} for c in calls]
    return {"message": {"role": "assistant", "content": "", "tool_calls": tool_calls}}


# ---- a reply read alone ------------------------------------------------------------------------------------


def test_parse_response_writes_info_per_call_and_warning_per_refusal(caplog: pytest.LogCaptureFixture) -> None:
    body = ollama_reply(REPAIRED, {"name": "read_file", "arguments": {"path": "b.txt"}, "id": "call_2"}, BAD)
    with caplog.at_level(logging.INFO, logger="toolmend"):
        result = toolmend.parse_response(body, read_file_registry(), correlation_id="abc-123")
    assert [c.id for c in result.calls] == ["call_ok", "call_2"] and [e.code for e in result.errors] == ["TSR-004"]
    repaired, clean = records(caplog, logging.INFO)
    (failed,) = records(caplog, logging.WARNING)
    assert {**fields(repaired), "parse_time_ms": 0, "repair_time_ms": 0} == {
        "correlation_id": "abc-123", "tool_name": "read_file", "tool_call_id": "call_ok", "parse_result": "repaired",
        "repair_applied": ["single_quotes", "single_quotes", "trailing_comma"], "retry_count": 0,
        "validation_errors": [], "parse_time_ms": 0, "repair_time_ms": 0, "retry_time_ms": 0.0,
        "total_tokens": None, "error_code": None, "error_position": None,
    }
    # One pass parses and repairs: a repaired call's repair time is that pass's, a clean one's none.
    assert repaired.parse_time_ms > 0 and repaired.repair_time_ms == repaired.parse_time_ms  # type: ignore[attr-defined]
    assert (clean.parse_result, clean.repair_applied, clean.repair_time_ms) == ("success", [], 0.0)  # type: ignore[attr-defined]
    assert {**fields(failed), "parse_time_ms": 0} == {
        "correlation_id": "abc-123", "tool_name": "read_file", "tool_call_id": "call_bad", "parse_result": "fail",
        "repair_applied": [], "retry_count": 0, "validation_errors": [{"pointer": "/path", "code": "TSR-004"}],
        "parse_time_ms": 0, "repair_time_ms": 0.0, "retry_time_ms": 0.0, "total_tokens": None,
        "error_code": "TSR-004", "error_position": None,
    }
    assert failed.code == "TSR-004"  # type: ignore[attr-defined]  # the earlier name, kept beside error_code
    assert failed.getMessage().startswith("Tool call failed: read_file (call_bad) parse_result=fail error_code=TSR-004")
    assert repaired.getMessage() == (
        "Tool call parsed: read_file (call_ok) parse_result=repaired "
        "repair_applied=[single_quotes, single_quotes, trailing_comma] retry_count=0 correlation_id=abc-123"
    )
    assert SECRET not in caplog.text


def test_a_parse_error_record_says_where(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="toolmend"):
        toolmend.check_call("read_file", '{"path": "a" "b": 1}', repair=False)
    (failed,) = records(caplog)
    assert (failed.error_code, failed.error_position, failed.parse_result) == ("TLP-004", 13, "fail")  # type: ignore[attr-defined]


def test_the_correlation_id_is_given_or_the_context_s_or_fresh(caplog: pytest.LogCaptureFixture) -> None:
    body = ollama_reply({"name": "read_file", "arguments": {"path": "a"}, "id": "c1"})
    with caplog.at_level(logging.INFO, logger="toolmend"):
        toolmend.parse_response(body)
        token = current_correlation_id.set("from-context")
        try:
            toolmend.parse_response(body)
            toolmend.parse_response(body, correlation_id="given")
        finally:
            current_correlation_id.reset(token)
    fresh, context, given = (r.correlation_id for r in records(caplog))  # type: ignore[attr-defined]
    assert re.fullmatch("[0-9a-f]{16}", fresh) and (context, given) == ("from-context", "given")


def test_a_flood_of_refused_calls_is_a_bounded_number_of_records(caplog: pytest.LogCaptureFixture) -> None:
    body = ollama_reply(*[{"name": "bad name!", "arguments": {}, "id": f"c{i}"} for i in range(MAX_RECORDS + 30)])
    with caplog.at_level(logging.INFO, logger="toolmend"):
        result = toolmend.parse_response(body)
    assert len(result.errors) == MAX_RECORDS + 30
    assert len(records(caplog, logging.WARNING)) == MAX_RECORDS
    assert caplog.records[-1].getMessage().startswith("30 more tool calls refused")


def test_nothing_is_built_when_the_logger_is_off(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="toolmend"):
        toolmend.parse_response(ollama_reply(BAD), read_file_registry())
    assert caplog.records == []


# ---- chats -------------------------------------------------------------------------------------------------


def chat(wire: Wire, script: list[Any], config: RetryConfig, registry: Any = None) -> tuple[Any, ScriptedOllama]:
    with ScriptedOllama(script) as server:

        async def go() -> Any:
            async with wire.client(server, registry or read_file_registry(), config) as client:
                try:
                    return await wire.turn(client)
                except RetryExhaustedError as e:
                    return e

        return asyncio.run(go()), server


@pytest.mark.parametrize("wire", WIRES, ids=str)
def test_a_chat_writes_retry_records_then_the_calls_record(wire: Wire, caplog: pytest.LogCaptureFixture) -> None:
    script = [
        wire.calls(BAD, prompt_tokens=100, eval_tokens=10),
        wire.calls(BAD, prompt_tokens=200, eval_tokens=20),
        wire.calls(REPAIRED, prompt_tokens=300, eval_tokens=30),
    ]
    with caplog.at_level(logging.INFO, logger="toolmend"):
        result, _ = chat(wire, script, RetryConfig(retry_delay_ms=1))
    assert [a.lane for a in result.attempts] == ["model", "model", "ok"]
    first, second = records(caplog, logging.INFO)[:2]
    for number, record in enumerate((first, second), 1):
        assert record.getMessage().startswith(f"Retry attempt {number}/3 for read_file")
        assert (record.parse_result, record.retry_count, record.error_code, record.code) == ("retry", number, "TSR-004", "TSR-004")  # type: ignore[attr-defined]
        assert record.validation_errors == [{"pointer": "/path", "code": "TSR-004"}]  # type: ignore[attr-defined]
        assert record.correlation_id == result.correlation_id  # type: ignore[attr-defined]
    assert (first.total_tokens, second.total_tokens) == (110, 330)  # type: ignore[attr-defined]
    (taken,) = records(caplog, logging.INFO)[2:]
    got = fields(taken)
    assert {k: got[k] for k in FIELDS if not k.endswith("_time_ms")} == {
        "correlation_id": result.correlation_id, "tool_name": "read_file", "tool_call_id": "call_ok",
        "parse_result": "retry", "repair_applied": ["single_quotes", "single_quotes", "trailing_comma"],
        "retry_count": 2, "validation_errors": [], "total_tokens": 660, "error_code": None, "error_position": None,
    }
    assert got["total_tokens"] == result.usage.total_tokens
    # Two waits of 1 and 2 ms lie between the first reply's end and the last's.
    assert got["retry_time_ms"] >= 3 and got["repair_time_ms"] == got["parse_time_ms"] > 0
    assert not records(caplog, logging.WARNING) and SECRET not in caplog.text


@pytest.mark.parametrize("wire", WIRES[:2], ids=str)
def test_a_call_that_passes_at_once_beside_a_retried_one_has_its_own_count(wire: Wire, caplog: pytest.LogCaptureFixture) -> None:
    good = {"name": "read_file", "arguments": {"path": "b.txt"}, "id": "call_first"}
    with caplog.at_level(logging.INFO, logger="toolmend"):
        result, _ = chat(wire, [wire.calls(good, BAD), wire.calls(REPAIRED)], RetryConfig(retry_delay_ms=0))
    assert [c.id for c in result.tool_calls] == ["call_first", "call_ok"]
    taken = [r for r in records(caplog, logging.INFO) if r.getMessage().startswith("Tool call parsed")]
    assert [(r.tool_call_id, r.parse_result, r.retry_count, r.total_tokens) for r in taken] == [  # type: ignore[attr-defined]
        ("call_first", "success", 0, 150), ("call_ok", "retry", 1, 300),
    ]
    assert taken[0].retry_time_ms == 0.0 and taken[1].retry_time_ms > 0  # type: ignore[attr-defined]


@pytest.mark.parametrize("wire", WIRES, ids=str)
def test_a_chat_that_gives_up_writes_a_warning_per_failed_call(wire: Wire, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="toolmend"):
        error, _ = chat(wire, [wire.calls(BAD)] * 3, RetryConfig(max_retries=2, retry_delay_ms=0))
    assert isinstance(error, RetryExhaustedError)
    (failed,) = [r for r in records(caplog, logging.WARNING)]
    assert {**fields(failed), "parse_time_ms": 0, "retry_time_ms": 0} == {
        "correlation_id": error.correlation_id, "tool_name": "read_file", "tool_call_id": "call_bad",
        "parse_result": "fail", "repair_applied": [], "retry_count": 2,
        "validation_errors": [{"pointer": "/path", "code": "TSR-004"}], "parse_time_ms": 0, "repair_time_ms": 0.0,
        "retry_time_ms": 0, "total_tokens": 450, "error_code": "TSR-004", "error_position": None,
    }
    assert failed.code == "TSR-004"  # type: ignore[attr-defined]
    # The chat's own end is a WARNING too, saying error_code as well.
    (ended,) = [r for r in caplog.records if r.getMessage().startswith("tool calls still failing")]
    assert (ended.levelno, ended.error_code, ended.code) == (logging.WARNING, "TSR-004", "TSR-004")  # type: ignore[attr-defined]
    assert SECRET not in caplog.text


def test_a_fatal_refusal_says_error_code(caplog: pytest.LogCaptureFixture) -> None:
    wire = Wire("ollama", False)
    with caplog.at_level(logging.INFO, logger="toolmend"), ScriptedOllama([wire.calls()]) as server:
        server.script[0].body = ["not", "a", "reply"]
        with pytest.raises(toolmend.ToolmendError):
            wire.run(server, read_file_registry())
    (record,) = [r for r in caplog.records if r.getMessage().startswith("reply refused")]
    assert record.error_code == record.code == "TLP-009"  # type: ignore[attr-defined]


# ---- what reaches DEBUG, and only when asked for ------------------------------------------------------------


@pytest.mark.parametrize("details", [True, False])
@pytest.mark.parametrize("values", [True, False])
def test_repairs_and_values_at_debug_only_when_asked_for(details: bool, values: bool, caplog: pytest.LogCaptureFixture) -> None:
    wire = Wire("ollama", False)
    secret_call = {"name": "read_file", "arguments": "{'path': '" + SECRET + "',}", "id": "call_s"}
    with caplog.at_level(logging.DEBUG, logger="toolmend"):
        chat(wire, [wire.calls(secret_call)], RetryConfig(log_repair_details=details, log_argument_values=values))
    repairs = [r for r in caplog.records if r.getMessage().startswith("Repair applied")]
    shown = [r for r in caplog.records if SECRET in r.getMessage()]
    assert [r.getMessage() for r in repairs] == (
        ["Repair applied to read_file (call_s): single_quotes at 1, single_quotes at 9, trailing_comma at 31"] if details else []
    )
    assert [r.getMessage() for r in shown] == ([f"Arguments of read_file (call_s): {{'path': '{SECRET}'}}"] if values else [])
    assert all(r.levelno == logging.DEBUG for r in repairs + shown)
    assert repairs == [] or repairs[0].repair_applied == ["single_quotes", "single_quotes", "trailing_comma"]  # type: ignore[attr-defined]


@pytest.mark.parametrize("include", [True, False])
def test_actual_values_are_added_at_debug_only_with_include_actual_values(include: bool, caplog: pytest.LogCaptureFixture) -> None:
    registry = toolmend.ToolRegistry(include_actual_values=include)
    registry.register("limit", {"type": "object", "properties": {"n": {"type": "string", "pattern": "^a"}}, "required": ["n"]})
    body = ollama_reply({"name": "limit", "arguments": {"n": SECRET}, "id": "c1"})
    with caplog.at_level(logging.DEBUG, logger="toolmend"):
        toolmend.parse_response(body, registry)
    (failed,) = records(caplog, logging.WARNING)
    assert failed.validation_errors == [{"pointer": "/n", "code": "TSR-005"}]  # type: ignore[attr-defined]
    shown = [r for r in caplog.records if SECRET in r.getMessage()]
    assert [r.levelno for r in shown] == ([logging.DEBUG] if include else [])
    if include:
        assert shown[0].getMessage() == f'Actual values of limit: /n TSR-005 got "{SECRET}"'


@pytest.mark.parametrize(
    "arguments",
    [
        '{"path": "' + SECRET + '" "x": }',  # not JSON, even repaired
        {"path": SECRET, "extra": SECRET},  # a property the strict schema refuses
        {"path": [SECRET]},  # a type mismatch
        '{"path": "' + SECRET * 100 + '"}',  # over the size limit
    ],
    ids=["unparseable", "extra", "type", "size"],
)
def test_no_argument_value_reaches_a_record_above_debug(arguments: Any, caplog: pytest.LogCaptureFixture) -> None:
    wire = Wire("ollama", False)
    call = {"name": "read_file", "arguments": arguments, "id": "call_s"}
    with caplog.at_level(logging.DEBUG, logger="toolmend"):
        chat(wire, [wire.calls(call)] * 2, RetryConfig(max_retries=1, retry_delay_ms=0, max_size=1024, enable_auto_repair=False))
        toolmend.parse_response(ollama_reply(call), read_file_registry(), max_size=1024, repair=False)
    assert len(records(caplog, logging.WARNING)) == 2  # the chat's given-up call and the reply read alone
    assert not [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO and SECRET in r.getMessage()]
    assert not [r for r in caplog.records if r.levelno >= logging.INFO and SECRET in repr(r.__dict__)]
