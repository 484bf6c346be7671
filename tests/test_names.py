"""One naming scheme: the limits are max_size / max_depth / timeout_ms everywhere (RetryConfig also takes the seed's
names, first-class), toolmend.repair is the function alone, and states are enums that compare equal to their
strings."""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import importlib
import inspect
import json
import pickle
import pkgutil
import sys
import warnings
from pathlib import Path

import orjson
import pytest

import toolmend
from toolmend._states import CallSource, Lane, StreamEventKind, _StrEnum
from toolmend.config import SEED_NAMES, RetryConfig

# ---- RetryConfig: the short names and the seed's names, both first-class ------------------------------------


def test_retry_config_names_the_limits_as_the_rest_of_the_api() -> None:
    fields = {f.name for f in dataclasses.fields(RetryConfig)}
    assert {"max_size", "max_depth", "timeout_ms"} <= fields
    assert not fields & set(SEED_NAMES)
    assert set(inspect.signature(toolmend.parse_response).parameters) >= set(SEED_NAMES.values())
    cfg = RetryConfig(max_size=10, max_depth=5, timeout_ms=7)
    assert (cfg.max_size, cfg.max_depth, cfg.timeout_ms) == (10, 5, 7)
    assert pickle.loads(pickle.dumps(cfg)) == cfg
    assert dataclasses.replace(cfg, max_depth=6).max_depth == 6
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.max_depth = 3  # type: ignore[misc]


@pytest.mark.parametrize(("seed", "short"), list(SEED_NAMES.items()))
def test_the_seeds_keyword_and_attribute_names_work_without_a_warning(seed: str, short: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cfg = RetryConfig(**{seed: 9})
        assert getattr(cfg, short) == 9
        assert getattr(cfg, seed) == 9
        assert RetryConfig.load(**{seed: 8}).max_size == (8 if short == "max_size" else RetryConfig().max_size)
    with pytest.raises(TypeError, match="both given"):
        RetryConfig(**{seed: 9, short: 9})


def test_short_names_do_not_warn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        RetryConfig(max_size=10, max_depth=5, timeout_ms=7)
        RetryConfig.load(max_depth=5)


@pytest.mark.filterwarnings("error")
def test_both_names_in_files_and_environment_work_without_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [*SEED_NAMES, *SEED_NAMES.values()]:
        monkeypatch.delenv(f"TOOLMEND_{name.upper()}", raising=False)
    toml = tmp_path / "toolmend.toml"
    toml.write_text("[tool_call]\nmax_nesting_depth = 32\nmax_argument_size = 4096\n")
    cfg = RetryConfig.load(toml)
    assert (cfg.max_depth, cfg.max_size) == (32, 4096)
    yml = tmp_path / "config.yml"
    yml.write_text("model:\n  providers:\n    ollama:\n      tool_call:\n        repair_timeout_ms: 250\n")
    assert RetryConfig.load(yml).timeout_ms == 250
    yml.write_text("model:\n  providers:\n    ollama:\n      tool_call:\n        timeout_ms: 250\n        repair_timeout_ms: 250\n")
    with pytest.raises(ValueError, match="both given"):
        RetryConfig.load(yml)
    monkeypatch.setenv("TOOLMEND_MAX_NESTING_DEPTH", "12")
    assert RetryConfig.load(toml).max_depth == 12  # environment over file, whatever the names
    monkeypatch.setenv("TOOLMEND_MAX_DEPTH", "13")
    with pytest.raises(ValueError, match="both given"):
        RetryConfig.load()
    monkeypatch.delenv("TOOLMEND_MAX_NESTING_DEPTH")
    assert RetryConfig.load(toml).max_depth == 13
    assert RetryConfig.load(toml, max_nesting_depth=14).max_depth == 14  # keyword over environment


def test_out_of_range_limits_name_the_new_field() -> None:
    for field in ("max_size", "max_depth"):
        with pytest.raises(ValueError, match=f"RetryConfig.{field} = 0 is out of range"):
            RetryConfig(**{field: 0})
    with pytest.raises(ValueError, match="RetryConfig.timeout_ms = -1 is out of range"):
        RetryConfig(timeout_ms=-1)


def test_the_client_reads_every_call_under_the_configured_limits() -> None:
    from ollama_server import ScriptedOllama, chat_reply

    registry = toolmend.ToolRegistry()
    registry.register("t", {"type": "object"})
    big = {"name": "t", "arguments": {"text": "x" * 200}}
    deep = {"name": "t", "arguments": {"a": {"a": {"a": {}}}}}

    async def first_attempt(config: RetryConfig, call: dict[str, object]) -> toolmend.Attempt:
        with ScriptedOllama([chat_reply(call), chat_reply(call)]) as server:
            async with toolmend.OllamaClient(server.url, "m", registry, config) as client:
                with pytest.raises(toolmend.RetryExhaustedError) as excinfo:
                    await client.chat([{"role": "user", "content": "go"}])
        return excinfo.value.attempts[0]

    assert asyncio.run(first_attempt(RetryConfig(max_retries=1, max_size=100), big)).error_code == "TLP-007"
    assert asyncio.run(first_attempt(RetryConfig(max_retries=1, max_depth=2), deep)).error_code == "TLP-008"


# ---- toolmend.repair is the function ------------------------------------------------------------------------


def test_toolmend_repair_is_only_the_function() -> None:
    from toolmend import repair

    assert repair is toolmend.repair and inspect.isfunction(repair)
    for module in pkgutil.iter_modules(toolmend.__path__):
        if module.name not in ("bench",):
            importlib.import_module(f"toolmend.{module.name}")
    assert inspect.isfunction(toolmend.repair), "importing every module leaves toolmend.repair the function"
    assert "toolmend.repair" not in sys.modules
    assert importlib.import_module("toolmend._repair").repair is toolmend.repair
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("toolmend.repair")


# ---- states ---------------------------------------------------------------------------------------------------


def test_lane_members_are_their_strings() -> None:
    assert toolmend.Lane is Lane
    assert [lane.value for lane in Lane] == ["ok", "model", "salvaged", "transport", "fatal"]
    for lane in Lane:
        assert lane == lane.value and isinstance(lane, str)
        assert str(lane) == f"{lane}" == f"{lane:>1}" == lane.value
        assert json.dumps(lane) == orjson.dumps(lane).decode() == f'"{lane.value}"'
        assert {lane.value: 1}[lane] == 1, "hashes as its string"
    assert Lane("transport") is Lane.TRANSPORT


def test_the_python_3_10_str_enum_behaves_as_enum_strenum() -> None:
    class Colour(_StrEnum):
        RED = "red"

    base = getattr(enum, "StrEnum", _StrEnum)  # the standard one where there is one

    class Reference(base):  # type: ignore[misc, valid-type]
        RED = "red"

    for member in (Colour.RED, Reference.RED):
        assert member == "red" and str(member) == "red" and f"{member}" == "red" and f"[{member:^5}]" == "[ red ]"
        assert json.dumps(member) == '"red"'


def test_attempts_record_their_lane_as_a_lane() -> None:
    from ollama_server import ScriptedOllama, chat_reply

    registry = toolmend.ToolRegistry()
    registry.register("t", {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})

    async def chat() -> toolmend.ChatResult:
        script = [chat_reply({"name": "t", "arguments": {}}), chat_reply({"name": "t", "arguments": {"n": 1}})]
        with ScriptedOllama(script) as server:
            async with toolmend.OllamaClient(server.url, "m", registry) as client:
                return await client.chat([{"role": "user", "content": "go"}])

    result = asyncio.run(chat())
    assert [a.lane for a in result.attempts] == [Lane.MODEL, Lane.OK] == ["model", "ok"]
    assert all(type(a.lane) is Lane for a in result.attempts)


def test_stream_events_are_of_the_kinds_stream_event_kind_names() -> None:
    assert toolmend.StreamEventKind is StreamEventKind
    acc = toolmend.ToolCallAccumulator(max_size=30)
    seen = []
    for chunk in (
        toolmend.ToolCallDelta(0, id="a", name="read_"),
        toolmend.ToolCallDelta(0, name="file", arguments='{"path": "x"}', complete=True),
        toolmend.ToolCallDelta(1, id="b", name="t", arguments='{"text": "' + "x" * 40),
        # What else a stream says: reasoning, text that turns out to be reasoning, its end, usage, an error.
        {"choices": [{"index": 0, "delta": {"reasoning_content": "r", "content": "hm</think>ok"}, "finish_reason": "stop"}],
         "usage": {"prompt_tokens": 1, "completion_tokens": 2}},
        b'data: {"error": {"message": "overloaded"}}\n\n',
    ):
        seen += [event.kind for event in acc.feed(chunk)]
    acc2 = toolmend.ToolCallAccumulator()
    acc2.feed({"message": {"content": '{"name": "f", "arguments": {}}'}})
    seen += [event.kind for event in acc2.end()]
    seen += [event.kind for event in toolmend.ToolCallAccumulator().feed(b"data: [DONE]\n\n")]
    assert set(seen) == {kind.value for kind in StreamEventKind}
    assert all(type(kind) is StreamEventKind and StreamEventKind(kind) == kind for kind in seen)


def test_call_sources_are_the_fields_and_every_text_format() -> None:
    assert toolmend.CallSource is CallSource
    assert [s.value for s in CallSource] == ["tool_calls", "stream", *toolmend.TEXT_FORMATS["lenient"]]
    assert all(s.name == s.value.upper() for s in CallSource)
    reply = {"message": {"role": "assistant", "content": '<tool_call>{"name": "b", "arguments": {}}</tool_call>',
                         "tool_calls": [{"function": {"name": "a", "arguments": {}}}]}}
    sources = [call.source for call in toolmend.parse_response(reply).calls]
    assert sources == [CallSource.TOOL_CALLS, CallSource.HERMES] == ["tool_calls", "hermes"]
    assert all(type(s) is CallSource for s in sources)
    assert toolmend.ToolCall("f", {}, source="pythonic").source is CallSource.PYTHONIC
    with pytest.raises(ValueError, match="not a call source"):
        toolmend.ToolCall("f", {}, source="telepathy")
