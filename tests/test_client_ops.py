"""What a running client tells the outside, four ways (both providers, ``chat`` and ``chat_stream``): the
hooks, OpenTelemetry spans and metrics, and the audit file."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from ollama_server import ScriptedOllama
from toolmend import ToolRegistry
from toolmend.client import Attempt
from toolmend.config import RetryConfig
from toolmend.errors import ModelHTTPError, RetryExhaustedError
from wires import READ_FILE, WIRES, Wire, read_file_registry

SECRET = "secret-path-value.txt"
GOOD = {"name": "read_file", "arguments": {"path": SECRET}, "id": "call_good"}
BAD = {"name": "read_file", "arguments": {"path": 5}, "id": "call_bad"}

pytestmark = pytest.mark.parametrize("wire", WIRES, ids=str)


@pytest.fixture
def registry() -> ToolRegistry:
    return read_file_registry()  # type: ignore[no-any-return]


def session(wire: Wire, script: list[Any], registry: Any, config: RetryConfig | None = None, **client: Any) -> Any:
    """One turn on a fresh client; returns (the result or the error raised, the server)."""

    async def go(server: ScriptedOllama) -> Any:
        async with wire.client(server, registry, config or RetryConfig(), rand=lambda: 0.5, **client) as c:
            try:
                return await wire.turn(c)
            except (RetryExhaustedError, ModelHTTPError) as e:
                return e

    with ScriptedOllama(script) as server:
        return asyncio.run(go(server)), server


class Recorder:
    """Hooks that note what they were given: one plain function, one coroutine function."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, Any]] = []

    def on_attempt(self, attempt: Attempt) -> None:
        self.seen.append(("attempt", attempt))

    async def on_retry(self, attempt: Attempt) -> None:
        await asyncio.sleep(0)
        self.seen.append(("retry", attempt))

    async def on_give_up(self, attempt: Attempt, error: BaseException) -> None:
        self.seen.append(("give_up", (attempt, error)))

    def hooks(self) -> dict[str, Any]:
        return {"on_attempt": self.on_attempt, "on_retry": self.on_retry, "on_give_up": self.on_give_up}

    def kinds(self) -> list[tuple[str, Any]]:
        return [(kind, a.lane if kind != "give_up" else (a[0].number, type(a[1]).__name__)) for kind, a in self.seen]


# ---- hooks -----------------------------------------------------------------------------------------------


def test_hooks_see_each_attempt_and_each_retry_in_order(wire: Wire, registry: ToolRegistry) -> None:
    hooks = Recorder()
    result, _ = session(wire, [wire.error(503, "busy"), wire.calls(BAD), wire.calls(GOOD)], registry, **hooks.hooks())
    assert [a.lane for a in result.attempts] == ["transport", "model", "ok"]
    assert hooks.kinds() == [
        ("attempt", "transport"), ("retry", "transport"), ("attempt", "model"), ("retry", "model"), ("attempt", "ok")
    ]
    attempts = [a for kind, a in hooks.seen if kind == "attempt"]
    assert attempts == list(result.attempts)
    assert {(a.correlation_id, a.model) for a in attempts} == {(result.correlation_id, "test-model")}


def test_give_up_hook_gets_the_last_attempt_and_the_error(wire: Wire, registry: ToolRegistry) -> None:
    hooks = Recorder()
    error, _ = session(wire, [wire.calls(BAD), wire.calls(BAD)], registry, RetryConfig(max_retries=1), **hooks.hooks())
    assert isinstance(error, RetryExhaustedError)
    assert hooks.kinds() == [("attempt", "model"), ("retry", "model"), ("attempt", "model"), ("give_up", (2, "RetryExhaustedError"))]
    assert hooks.seen[-1][1][1] is error
    # A fatal status: one attempt, no retry, then giving up.
    hooks = Recorder()
    error, _ = session(wire, [wire.error(404, "model not found")], registry, **hooks.hooks())
    assert isinstance(error, ModelHTTPError)
    assert hooks.kinds() == [("attempt", "fatal"), ("give_up", (1, "ModelHTTPError"))]


@pytest.mark.parametrize("kind", ["function", "coroutine"])
def test_a_hook_that_raises_is_logged_and_the_chat_goes_on(
    wire: Wire, registry: ToolRegistry, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(attempt: Attempt) -> None:
        raise ValueError("hook bug")

    async def broken_async(attempt: Attempt) -> None:
        raise ValueError("hook bug")

    hook = broken if kind == "function" else broken_async
    with caplog.at_level(logging.ERROR, logger="toolmend"):
        result, _ = session(wire, [wire.calls(BAD), wire.calls(GOOD)], registry, on_attempt=hook, on_retry=hook)
    assert [a.lane for a in result.attempts] == ["model", "ok"]
    assert [c.arguments for c in result.tool_calls] == [{"path": SECRET}]
    records = [r for r in caplog.records if "hook" in r.getMessage()]
    assert len(records) == 3  # two attempts, one retry
    assert all(r.exc_info and r.exc_info[0] is ValueError for r in records)
    assert [(r.attempt, r.lane, r.correlation_id) for r in records] == [  # type: ignore[attr-defined]
        (1, "model", result.correlation_id), (1, "model", result.correlation_id), (2, "ok", result.correlation_id)
    ]


# ---- OpenTelemetry ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def otel() -> Any:
    """An in-memory span exporter and metric reader, behind providers handed to each client (the global ones
    stay as they are)."""
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    providers = {"tracer_provider": tracer_provider, "meter_provider": MeterProvider(metric_readers=[reader])}
    return exporter, reader, providers


def metric_totals(reader: Any) -> dict[tuple[str, frozenset[Any]], float]:
    """toolmend's metrics so far (cumulative): a count or sum per (name, attributes)."""
    data = reader.get_metrics_data()
    out: dict[tuple[str, frozenset[Any]], float] = {}
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            if scope.scope.name != "toolmend":
                continue
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    key = (metric.name, frozenset(point.attributes.items()))
                    value = point.count if metric.name == "gen_ai.client.operation.duration" else getattr(point, "sum", None)
                    out[key] = value if value is not None else point.value
    return out


def metric_changes(before: dict[Any, float], after: dict[Any, float]) -> dict[tuple[str, Any], float]:
    """What one chat added: per metric name, keyed by the attribute that tells its points apart."""
    out: dict[tuple[str, Any], float] = {}
    for (name, attributes), value in after.items():
        added = value - before.get((name, attributes), 0)
        if added:
            a = dict(attributes)
            assert a["gen_ai.request.model"] == "test-model"
            out[(name, a.get("gen_ai.token.type") or a.get("toolmend.lane") or a["gen_ai.system"])] = added
    return out


def test_a_span_per_chat_and_per_attempt_with_gen_ai_names_and_no_argument_values(
    wire: Wire, registry: ToolRegistry, otel: Any
) -> None:
    exporter, reader, providers = otel
    exporter.clear()
    before = metric_totals(reader)
    script = [wire.calls(BAD, prompt_tokens=10, eval_tokens=5), wire.calls(GOOD, prompt_tokens=20, eval_tokens=7)]
    result, _ = session(wire, script, registry, **providers)
    spans = exporter.get_finished_spans()
    (chat,) = [s for s in spans if s.name == "chat test-model"]
    attempts = sorted((s for s in spans if s.name.startswith("attempt ")), key=lambda s: s.attributes["toolmend.attempt"])
    assert len(spans) == 3
    assert chat.parent is None and all(s.parent.span_id == chat.context.span_id for s in attempts)
    assert all(s.context.trace_id == chat.context.trace_id for s in attempts)
    a = chat.attributes
    assert (a["gen_ai.operation.name"], a["gen_ai.system"], a["gen_ai.request.model"]) == ("chat", wire.provider, "test-model")
    assert (a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"]) == (30, 12)
    assert tuple(a["gen_ai.response.finish_reasons"]) == ("tool_calls" if wire.provider == "openai" else "stop",)
    assert a["toolmend.correlation_id"] == result.correlation_id and a["toolmend.attempts"] == 2
    assert [(s.attributes["toolmend.attempt"], s.attributes["toolmend.lane"]) for s in attempts] == [(1, "model"), (2, "ok")]
    assert attempts[0].attributes["toolmend.code"] == "TSR-004" and attempts[0].attributes["error.type"] == "TSR-004"
    assert "error.type" not in attempts[1].attributes
    assert [s.attributes["gen_ai.usage.input_tokens"] for s in attempts] == [10, 20]
    for span in spans:  # names, counts and codes only
        assert not any(SECRET in str(v) for v in span.attributes.values())
        assert span.end_time >= span.start_time
    assert metric_changes(before, metric_totals(reader)) == {
        ("gen_ai.client.operation.duration", wire.provider): 1,
        ("gen_ai.client.token.usage", "input"): 30,
        ("gen_ai.client.token.usage", "output"): 12,
        ("toolmend.client.attempts", "model"): 1,
        ("toolmend.client.attempts", "ok"): 1,
    }


def test_a_failed_chat_ends_its_span_with_the_error(wire: Wire, registry: ToolRegistry, otel: Any) -> None:
    from opentelemetry.trace import StatusCode

    exporter, _, providers = otel
    exporter.clear()
    error, _ = session(wire, [wire.calls(BAD), wire.calls(BAD)], registry, RetryConfig(max_retries=1), **providers)
    assert isinstance(error, RetryExhaustedError)
    (chat,) = [s for s in exporter.get_finished_spans() if s.name.startswith("chat ")]
    assert chat.status.status_code is StatusCode.ERROR
    assert chat.attributes["error.type"] == "RetryExhaustedError" and chat.attributes["toolmend.attempts"] == 2


def test_a_stream_left_early_still_ends_its_span(wire: Wire, registry: ToolRegistry, otel: Any) -> None:
    if not wire.streamed:
        pytest.skip("only a stream can be left before its end")
    exporter, _, providers = otel
    exporter.clear()

    async def go(server: ScriptedOllama) -> None:
        async with wire.client(server, registry, RetryConfig(), **providers) as client:
            stream = client.chat_stream([{"role": "user", "content": "hi"}])
            await stream.__anext__()
            await stream.aclose()

    with ScriptedOllama([wire.calls(GOOD, text="Reading. ")]) as server:
        asyncio.run(go(server))
    assert [s.name for s in exporter.get_finished_spans()] == ["chat test-model"]


# ---- the audit file ---------------------------------------------------------------------------------------


def test_a_model_name_with_a_newline_cannot_forge_an_audit_line(wire: Wire, registry: ToolRegistry, tmp_path: Any) -> None:
    audit = tmp_path / "audit.jsonl"
    forged = 'm\n{"correlation_id": "forged", "lane": "ok"}'

    async def go(server: ScriptedOllama) -> Any:
        from toolmend.client import OllamaClient, OpenAICompatibleClient

        config = RetryConfig(audit_path=str(audit))
        if wire.provider == "ollama":
            client = OllamaClient(server.url, forged, registry, config)
        else:
            client = OpenAICompatibleClient(server.url + "/v1", forged, None, registry, config)
        async with client:
            return await wire.turn(client)

    with ScriptedOllama([wire.calls(BAD), wire.calls(GOOD)]) as server:
        result = asyncio.run(go(server))
    lines = audit.read_text().splitlines()
    assert len(lines) == 2
    parsed = [json.loads(line) for line in lines]
    assert {p["correlation_id"] for p in parsed} == {result.correlation_id}
    assert {p["model"] for p in parsed} == {forged}
    assert [p["lane"] for p in parsed] == ["model", "ok"]


# ---- the registry's metrics --------------------------------------------------------------------------------


def test_the_registry_counts_the_calls_a_chat_checked_and_logs_failures_with_its_correlation_id(
    wire: Wire, caplog: pytest.LogCaptureFixture
) -> None:
    reg = ToolRegistry(metrics=True, validation_failure_log_level="INFO")
    reg.register("read_file", READ_FILE, description="Read a file")
    with caplog.at_level(logging.INFO, logger="toolmend"):
        result, _ = session(wire, [wire.calls(BAD), wire.calls(GOOD)], reg)
    m = reg.metrics()
    assert m["by_tool"] == {"read_file": {"valid": 1, "invalid": 1}} and m["failures_by_code"] == {"TSR-004": 1}
    (record,) = [r for r in caplog.records if r.getMessage().startswith("validation failed")]
    assert (record.levelno, record.correlation_id, record.code) == (logging.INFO, result.correlation_id, "TSR-004")  # type: ignore[attr-defined]


def test_without_opentelemetry_nothing_is_recorded_and_chats_run(
    wire: Wire, registry: ToolRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    for name in [m for m in sys.modules if m == "opentelemetry" or m.startswith("opentelemetry.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "opentelemetry", None)  # import opentelemetry now raises ImportError

    async def go(server: ScriptedOllama) -> Any:
        async with wire.client(server, registry, RetryConfig()) as client:
            assert client._observers.telemetry is None
            return await wire.turn(client)

    with ScriptedOllama([wire.calls(BAD), wire.calls(GOOD)]) as server:
        result = asyncio.run(go(server))
    assert [a.lane for a in result.attempts] == ["model", "ok"]
