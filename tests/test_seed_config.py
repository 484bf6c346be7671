"""The seed's .agent/config.yml and the config snippets of its troubleshooting guide load as written, with no
warning, and every key does what the seed says (or, where it means nothing here, is noted at INFO or below).

The files are copies in tests/data/seed/ (each names the seed's lines it came from); when the seeds are on this
machine, the copies are checked against them, so that the test reads what the seed wrote."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import textwrap
import warnings
from pathlib import Path
from typing import Any

import pytest
import yaml

from ollama_server import ScriptedOllama
from toolmend import RetryExhaustedError, SchemaError, ToolRegistry
from toolmend.client import Done, OllamaClient, TextDelta, ToolCallCompleted, ToolCallFailed
from toolmend.config import CONFIG_ENV, PLACEHOLDERS, RetryConfig, find_config, sources
from toolmend.registry import SCHEMA_SIZE_CEILING
from wires import Wire, read_file_registry

SEED_DATA = Path(__file__).parent / "data" / "seed"
SEEDS = Path("/work/shared/seeds")
SEED_000 = SEEDS / "000_f30b30772ad34a5f.txt"
SEED_002 = SEEDS / "002_e5a75e0396e27654.txt"
MESSAGES = [{"role": "user", "content": "Read test.txt"}]
READ = {"name": "read_file", "arguments": {"path": "test.txt"}}

#: What each file sets, in field names (the rest stays at its default).
EXPECTED: dict[str, dict[str, Any]] = {
    "config.yml": {},  # the seed's defaults are toolmend's
    "tool_registry.yml": {},  # read by ToolRegistry.from_file
    "tools_custom.yml": {},  # read by ToolRegistry.from_file
    "troubleshooting_01_temperature.yml": {"options": {"temperature": 0.1}},
    "troubleshooting_02_format_json.yml": {"options": {"format": "json"}},
    "troubleshooting_03_relax_strict.yml": {"strict_validation": False},
    "troubleshooting_04_max_retries.yml": {"max_retries": 5},
    "troubleshooting_05_retry_template.yml": {
        "retry_prompt_template": "ERROR: Your JSON was invalid.\nSpecific error: {error_message}\n\nHere is exactly what I "
        'need:\n{"path": "string value here"}\n\nTry again with ONLY the JSON object, no explanation.\n'
    },
    "troubleshooting_06_stream_buffers.yml": {"stream_buffer_size": 65536, "max_concurrent_calls": 10},
    "troubleshooting_07_stream_logging.yml": {},  # a note: levels are Python logging's
    "troubleshooting_08_no_streaming.yml": {"streaming": False},
    "troubleshooting_09_size_limits.yml": {"max_size": 524288, "max_depth": 32},
    "troubleshooting_10_repair_timeout.yml": {"timeout_ms": 50},
}


@pytest.fixture(autouse=True)
def no_config_around(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No TOOLMEND_* setting of the machine and no .agent/config.yml above the working directory reaches a test."""
    import os

    for name in list(os.environ):
        if name.startswith("TOOLMEND_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


def seed_yaml_blocks(path: Path) -> dict[int, Any]:
    """Every ```yaml block of a seed, parsed, by the seed's line number of its first line."""
    lines = path.read_text(encoding="utf-8").split("\n")
    blocks, i = {}, 0
    while i < len(lines):
        if lines[i].strip() == "```yaml":
            j = i + 1
            while lines[j].strip() != "```":
                j += 1
            blocks[i + 2] = yaml.safe_load(textwrap.dedent("\n".join(lines[i + 1 : j]) + "\n"))
            i = j
        i += 1
    return blocks


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the seeds are not on this machine: the copies are read as they are")
def test_the_copies_hold_what_the_seed_wrote() -> None:
    blocks = {SEED_000: seed_yaml_blocks(SEED_000), SEED_002: seed_yaml_blocks(SEED_002)}
    for copy in sorted(SEED_DATA.glob("*.yml")):
        header = copy.read_text(encoding="utf-8").splitlines()[0]
        match = re.search(r"seeds/(\S+), lines (\d+)-", header)
        assert match, f"{copy.name} names the seed's lines it came from"
        seed = SEEDS / match.group(1)
        assert yaml.safe_load(copy.read_text(encoding="utf-8")) == blocks[seed][int(match.group(2))], copy.name


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_file_loads_as_written_without_a_warning(name: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="toolmend")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        config = RetryConfig.load(SEED_DATA / name)
    default = RetryConfig()
    changed = {f: getattr(config, f) for f in default.__dataclass_fields__ if getattr(config, f) != getattr(default, f)}
    assert changed == EXPECTED[name]
    assert all(r.levelno <= logging.INFO for r in caplog.records), [r.getMessage() for r in caplog.records]


@pytest.mark.filterwarnings("error")
def test_the_seeds_config_file_gives_the_seeds_values_under_both_names() -> None:
    config = RetryConfig.load(SEED_DATA / "config.yml")
    assert (config.max_retries, config.retry_delay_ms, config.enable_auto_repair, config.strict_validation) == (3, 100, True, True)
    assert (config.repair_timeout_ms, config.max_nesting_depth, config.max_argument_size) == (100, 64, 1_048_576)
    assert (config.timeout_ms, config.max_depth, config.max_size) == (100, 64, 1_048_576)
    assert (config.log_repair_details, config.log_argument_values) == (True, False)


def test_keys_with_no_effect_here_are_noted_at_info(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="toolmend")
    RetryConfig.load(SEED_DATA / "troubleshooting_07_stream_logging.yml")
    (note,) = [r for r in caplog.records if r.levelno == logging.INFO]
    assert "logging is not applied" in note.getMessage() and "getLogger('toolmend')" in note.getMessage()


def test_a_key_nothing_knows_is_still_an_error(tmp_path: Path) -> None:
    typo = tmp_path / "config.yml"
    typo.write_text("model:\n  providers:\n    ollama:\n      tool_call:\n        max_retrys: 5\n")
    with pytest.raises(ValueError, match="no field 'max_retrys'"):
        RetryConfig.load(typo)
    typo.write_text("tool_call:\n  streaming:\n    buffer: 5\n")
    with pytest.raises(ValueError, match="tool_call.streaming.buffer"):
        RetryConfig.load(typo)


# ---- where the file is found -----------------------------------------------------------------------------


def test_load_finds_agent_config_from_the_working_directory_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    (project / ".agent").mkdir(parents=True)
    (project / ".agent" / "config.yml").write_text("model:\n  providers:\n    ollama:\n      tool_call:\n        max_retries: 5\n")
    deep = project / "src" / "pkg"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    assert find_config() == project / ".agent" / "config.yml"
    assert RetryConfig.load().max_retries == 5
    assert RetryConfig.load(discover=False).max_retries == 3
    assert ("max_retries", 5, f"file {project / '.agent' / 'config.yml'}") in sources()
    other = tmp_path / "other.yml"
    other.write_text("tool_call:\n  max_retries: 7\n")
    monkeypatch.setenv(CONFIG_ENV, str(other))
    assert RetryConfig.load().max_retries == 7  # TOOLMEND_CONFIG names the file
    assert RetryConfig.load(SEED_DATA / "config.yml").max_retries == 3  # a path given wins
    monkeypatch.delenv(CONFIG_ENV)
    monkeypatch.chdir(tmp_path)
    assert find_config() is None and RetryConfig.load().max_retries == 3


def test_a_client_reads_no_file_itself(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".agent").mkdir()
    (tmp_path / ".agent" / "config.yml").write_text("tool_call:\n  max_retries: 5\n")
    monkeypatch.setenv("TOOLMEND_RETRY_DELAY_MS", "7")
    client = OllamaClient("http://127.0.0.1:9", "m")
    assert client.config.max_retries == 3 and client.config.retry_delay_ms == 7  # the environment, not the file


def test_load_picks_the_providers_section(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    both = tmp_path / "config.yml"
    both.write_text(
        "model:\n  providers:\n"
        "    ollama:\n      streaming: false\n      tool_call:\n        max_retries: 5\n"
        "    openai:\n      options:\n        temperature: 0.2\n      tool_call:\n        max_retries: 7\n"
    )
    ollama, openai = RetryConfig.load(both), RetryConfig.load(both, provider="openai")
    assert (ollama.max_retries, ollama.streaming, ollama.options) == (5, False, None)
    assert (openai.max_retries, openai.streaming, openai.options) == (7, True, {"temperature": 0.2})
    monkeypatch.setenv("TOOLMEND_OPTIONS", '{"seed": 1}')
    monkeypatch.setenv("TOOLMEND_STREAMING", "on")
    monkeypatch.setenv("TOOLMEND_STREAM_BUFFER_SIZE", "4096")
    from_environment = RetryConfig.load(both, provider="openai")
    assert (from_environment.options, from_environment.streaming, from_environment.stream_buffer_size) == ({"seed": 1}, True, 4096)
    assert hash(from_environment) == hash(RetryConfig.load(both, provider="openai"))  # options is a dict: still hashable


# ---- the retry prompt template -------------------------------------------------------------------------


def test_a_template_is_checked_when_the_config_is_made(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"unknown placeholder \{path\}"):
        RetryConfig(retry_prompt_template="Call {tool_name} with {path}")
    bad = tmp_path / "config.yml"
    bad.write_text("tool_call:\n  retry_prompt_template: 'Fix {tool} please'\n")
    with pytest.raises(ValueError, match=r"unknown placeholder \{tool\}"):
        RetryConfig.load(bad)
    every = " ".join("{" + p + "}" for p in sorted(PLACEHOLDERS)) + ' {"literal": {"braces": [1]}} {} { x }'
    assert RetryConfig(retry_prompt_template=every).retry_prompt_template == every


@pytest.mark.parametrize("wire", [Wire("ollama", False), Wire("openai", True)], ids=str)
def test_the_seeds_template_fills_by_replacement_and_keeps_its_json_example(wire: Wire) -> None:
    config = RetryConfig.load(SEED_DATA / "troubleshooting_05_retry_template.yml")
    script = [wire.calls({"name": "read_file", "arguments": {"path": 12}, "id": "c1"}), wire.calls(READ)]
    with ScriptedOllama(script) as server:

        async def go() -> Any:
            async with wire.client(server, read_file_registry(), config) as client:
                return await wire.turn(client)

        result = asyncio.run(go())
        prompts = wire.prompts(server, 1)
    assert [a.lane for a in result.attempts] == ["model", "ok"]
    (prompt,) = prompts
    assert prompt.startswith("ERROR: Your JSON was invalid.\nSpecific error: Arguments of 'read_file' do not match")
    assert '\nHere is exactly what I need:\n{"path": "string value here"}\n' in prompt


# ---- each key's effect ---------------------------------------------------------------------------------


class Sleeps:
    """An instant sleep that records the delays asked for."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


BAD = {"name": "read_file", "arguments": {"path": 1}}


@pytest.mark.parametrize("wire", [Wire("ollama", False), Wire("openai", True)], ids=str)
def test_reflections_are_spaced_100_200_400_ms(wire: Wire) -> None:
    sleeps = Sleeps()
    with ScriptedOllama([wire.calls(BAD), wire.calls(BAD), wire.calls(BAD), wire.calls(READ)]) as server:

        async def go() -> Any:
            async with wire.client(server, read_file_registry(), RetryConfig.load(SEED_DATA / "config.yml"), sleep=sleeps) as client:
                return await wire.turn(client)

        result = asyncio.run(go())
    assert sleeps.delays == [0.1, 0.2, 0.4]
    assert [(a.lane, a.delay_s) for a in result.attempts] == [("model", 0.1), ("model", 0.2), ("model", 0.4), ("ok", 0.0)]


def test_a_zero_retry_delay_is_not_slept_and_exhaustion_waits_for_nothing() -> None:
    wire, sleeps = Wire("ollama", False), Sleeps()
    with ScriptedOllama([wire.calls(BAD), wire.calls(READ)]) as server:

        async def go() -> Any:
            async with wire.client(server, read_file_registry(), RetryConfig(retry_delay_ms=0), sleep=sleeps) as client:
                return await wire.turn(client)

        result = asyncio.run(go())
    assert sleeps.delays == [] and [a.delay_s for a in result.attempts] == [0.0, 0.0]
    sleeps = Sleeps()
    with ScriptedOllama([wire.calls(BAD), wire.calls(BAD)]) as server:

        async def exhausted() -> RetryExhaustedError:
            async with wire.client(server, read_file_registry(), RetryConfig(max_retries=1), sleep=sleeps) as client:
                with pytest.raises(RetryExhaustedError) as caught:
                    await wire.turn(client)
                return caught.value

        error = asyncio.run(exhausted())
    assert sleeps.delays == [0.1]  # before the one reflection; none after the last attempt
    assert error.code == "TSR-004" == error.last_error.code
    assert [a.delay_s for a in error.attempts] == [0.1, 0.0]


@pytest.mark.parametrize("provider", ["ollama", "openai"])
def test_streaming_false_asks_for_whole_replies_and_still_gives_events(provider: str) -> None:
    config = RetryConfig.load(SEED_DATA / "troubleshooting_08_no_streaming.yml")
    whole = Wire(provider, False)
    with ScriptedOllama([whole.calls({**READ, "id": "call_1"}, text="Reading it.")]) as server:

        async def go() -> list[Any]:
            async with whole.client(server, read_file_registry(), config) as client:
                return [event async for event in client.chat_stream(MESSAGES)]

        events = asyncio.run(go())
        sent = server.requests[0]["json"]
    assert sent["stream"] is False and "stream_options" not in sent
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["TextDelta", "ToolCallStarted", "ToolCallCompleted", "Done"]
    assert isinstance(events[0], TextDelta) and events[0].text == "Reading it."
    assert isinstance(events[2], ToolCallCompleted) and events[2].call.arguments == {"path": "test.txt"}
    assert isinstance(events[-1], Done) and events[-1].result.tool_calls[0].id == "call_1"


def test_streaming_false_holds_back_a_failed_call_and_reflects_it() -> None:
    whole = Wire("ollama", False)
    with ScriptedOllama([whole.calls(BAD), whole.calls(READ)]) as server:

        async def go() -> list[Any]:
            async with whole.client(server, read_file_registry(), RetryConfig(streaming=False)) as client:
                return [event async for event in client.chat_stream(MESSAGES)]

        events = asyncio.run(go())
    assert [type(e).__name__ for e in events] == ["ToolCallStarted", "ToolCallCompleted", "Done"]
    assert [a.lane for a in events[-1].result.attempts] == ["model", "ok"]


@pytest.mark.parametrize("provider", ["ollama", "openai"])
def test_the_stream_buffer_size_caps_a_streamed_calls_arguments(provider: str) -> None:
    config = RetryConfig(stream_buffer_size=64)
    big = {"name": "read_file", "arguments": {"path": "x" * 100}}
    streamed, whole = Wire(provider, True), Wire(provider, False)
    with ScriptedOllama([streamed.calls(big), streamed.calls(READ)]) as server:
        events: list[Any] = []

        async def go() -> Any:
            async with streamed.client(server, read_file_registry(), config) as client:
                return await streamed.turn(client, events)

        result = asyncio.run(go())
    assert not [e for e in events if isinstance(e, ToolCallFailed)]  # held back: reflected, not shown
    assert [(a.lane, a.error_code) for a in result.attempts] == [("model", "TLP-007"), ("ok", None)]
    with ScriptedOllama([whole.calls(big)]) as server:
        assert whole.run(server, read_file_registry(), stream_buffer_size=64).tool_calls[0].arguments == big["arguments"]


@pytest.mark.parametrize("wire", [Wire("ollama", False), Wire("ollama", True), Wire("openai", True)], ids=str)
def test_max_concurrent_calls_caps_the_calls_taken_from_one_reply(wire: Wire) -> None:
    config = RetryConfig.load(SEED_DATA / "troubleshooting_06_stream_buffers.yml", max_concurrent_calls=2)
    calls = [{"name": "read_file", "arguments": {"path": f"{n}.txt"}, "id": f"call_{n}"} for n in range(3)]
    with ScriptedOllama([wire.calls(*calls), wire.calls(calls[2])]) as server:

        async def go() -> Any:
            async with wire.client(server, read_file_registry(), config) as client:
                return await wire.turn(client)

        result = asyncio.run(go())
        prompts = wire.prompts(server, 1)
    assert [c.arguments["path"] for c in result.tool_calls] == ["0.txt", "1.txt", "2.txt"]
    assert [(a.lane, a.error_code) for a in result.attempts] == [("model", "TLP-006"), ("ok", None)]
    assert len(prompts) == 1 and "more than 2 tool calls (max_concurrent_calls)" in prompts[0]


def test_model_options_go_into_every_ollama_request() -> None:
    config = RetryConfig(options={"temperature": 0.1, "format": "json"})
    whole = Wire("ollama", False)
    with ScriptedOllama([whole.calls(READ), whole.calls(READ)]) as server:

        async def go() -> None:
            async with whole.client(server, read_file_registry(), config) as client:
                await client.chat(MESSAGES)
                await client.chat(MESSAGES, options={"num_ctx": 8192, "temperature": 0.7})

        asyncio.run(go())
        first, second = (r["json"] for r in server.requests)
    assert (first["options"], first["format"]) == ({"temperature": 0.1}, "json")
    assert (second["options"], second["format"]) == ({"temperature": 0.7, "num_ctx": 8192}, "json")


def test_model_options_go_into_every_openai_request() -> None:
    config = RetryConfig(options={"temperature": 0.1, "format": "json"})
    whole = Wire("openai", False)
    with ScriptedOllama([whole.calls(READ), whole.calls(READ)]) as server:

        async def go() -> None:
            async with whole.client(server, read_file_registry(), config) as client:
                await client.chat(MESSAGES)
                await client.chat(MESSAGES, temperature=0.5)

        asyncio.run(go())
        first, second = (r["json"] for r in server.requests)
    assert (first["temperature"], first["response_format"]) == (0.1, {"type": "json_object"}) and "format" not in first
    assert second["temperature"] == 0.5


@pytest.mark.parametrize("details", [True, False])
def test_log_repair_details_logs_each_calls_repairs_at_debug(details: bool, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="toolmend")
    whole = Wire("ollama", False)
    mended = {"name": "read_file", "arguments": "{'path': 'test.txt',}", "id": "call_m"}
    with ScriptedOllama([whole.calls(mended)]) as server:
        result = whole.run(server, read_file_registry(), log_repair_details=details)
    kinds = ["single_quotes", "single_quotes", "trailing_comma"]
    assert [r.kind for r in result.tool_calls[0].repairs] == kinds
    records = [r for r in caplog.records if r.getMessage().startswith("Repair applied")]
    if not details:
        assert records == []
        return
    (record,) = records
    assert record.levelno == logging.DEBUG
    assert (record.tool_name, record.tool_call_id, record.repair_applied) == ("read_file", "call_m", kinds)
    assert record.getMessage().endswith("single_quotes at 1, single_quotes at 9, trailing_comma at 19")
    assert "test.txt" not in record.getMessage()  # kinds and positions, never values


def test_the_unknown_tool_reflection_does_not_ask_for_the_unknown_tool() -> None:
    whole = Wire("ollama", False)
    unknown = {"name": "hack_system", "arguments": {}, "id": "call_h"}
    with ScriptedOllama([whole.calls(unknown), whole.calls(READ)]) as server:
        result = whole.run(server, read_file_registry())
        (prompt,) = whole.prompts(server, 1)
    assert [(a.lane, a.error_code) for a in result.attempts] == [("model", "TSR-001"), ("ok", None)]
    assert prompt.startswith("There is no tool named 'hack_system' (TSR-001).")
    assert "The tools you can call are: read_file." in prompt
    assert "call 'hack_system'" not in prompt.lower() and "again" not in prompt


def test_the_seeds_config_drives_a_whole_chat() -> None:
    """The seed's file as written, given to a client: a repaired call, a reflection, and its spacing."""
    config = RetryConfig.load(SEED_DATA / "config.yml")
    sleeps = Sleeps()
    wire = Wire("ollama", True)
    mended = {"name": "read_file", "arguments": "{\"path\": \"a.txt\",}"}
    with ScriptedOllama([wire.calls(BAD), wire.calls(mended)]) as server:

        async def go() -> Any:
            async with wire.client(server, read_file_registry(), config, sleep=sleeps) as client:
                return await wire.turn(client)

        result = asyncio.run(go())
    assert [a.lane for a in result.attempts] == ["model", "ok"] and sleeps.delays == [0.1]
    assert result.tool_calls[0].arguments == {"path": "a.txt"} and [r.kind for r in result.repairs] == ["trailing_comma"]


# ---- the tool_registry section (seed 002) --------------------------------------------------------------


def test_the_seeds_tool_registry_section_loads_with_notes_not_warnings(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="toolmend")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        registry = ToolRegistry.from_file(SEED_DATA / "tool_registry.yml")
    assert [t.name for t in registry.tools()] == ["my_custom_tool"] and registry.skipped == ()
    assert registry.strict_mode  # the seed's strict_mode: true, and its tool passes it (typed and described)
    assert all(r.levelno <= logging.INFO for r in caplog.records)
    notes = [r.getMessage() for r in caplog.records if "tool_registry." in r.getMessage()]
    assert any("pattern_timeout_ms is not needed: patterns run on a linear-time regex engine" in n for n in notes)
    assert any(f"max_schema_size = 102400 is over the registry's ceiling of {SCHEMA_SIZE_CEILING} bytes" in n for n in notes)


#: Seed 002's scenario 6 (lines 3658-3677, in a PowerShell here-string there): the tools: custom_tools: layout.
SCENARIO_6 = """\
tools:
  custom_tools:
    - name: custom_greeting
      version: 1.0.0
      category: Custom
      description: Generates a personalized greeting message
      parameters:
        type: object
        properties:
          name:
            type: string
            description: Name of the person to greet
            maxLength: 100
          style:
            type: string
            enum: [formal, casual, enthusiastic]
            default: casual
        required:
          - name
        additionalProperties: false
"""


def test_the_seeds_tools_layouts_register_their_tools(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="toolmend")
    custom = ToolRegistry.from_file(SEED_DATA / "tools_custom.yml")
    assert [(t.name, t.version, t.description) for t in custom.tools()] == [("my_custom_tool", "1.0.0", "A custom tool")]
    path = tmp_path / "config.yml"
    path.write_text(SCENARIO_6)
    greeting = ToolRegistry.from_file(path)
    (info,) = greeting.tools()
    assert (info.name, info.version, info.category, info.schema["properties"]["name"]["maxLength"]) == (
        "custom_greeting", "1.0.0", "Custom", 100
    )
    assert greeting.try_validate("custom_greeting", {"name": "Alice", "style": "formal"}).ok
    assert [e.code for e in greeting.try_validate("custom_greeting", {"name": "Alice", "style": "loud"}).errors] == ["TSR-005"]
    assert all(r.levelno <= logging.INFO for r in caplog.records)
    # Every list a file holds is read; a tools: mapping that holds none of them is an error, not zero tools.
    both = yaml.safe_load(SCENARIO_6)
    both["tools"]["custom"] = yaml.safe_load((SEED_DATA / "tools_custom.yml").read_text())["tools"]["custom"]
    both["tool_registry"] = {"custom_tools": [{"name": "third", "description": "a third", "parameters": {"type": "object"}}]}
    path.write_text(yaml.safe_dump(both))
    assert sorted(t.name for t in ToolRegistry.from_file(path).tools()) == ["custom_greeting", "my_custom_tool", "third"]
    path.write_text("tools:\n  builtin:\n    - name: x\n")
    with pytest.raises(ValueError, match="not custom or custom_tools"):
        ToolRegistry.from_file(path)


def test_strict_mode_true_refuses_untyped_properties_and_missing_descriptions(tmp_path: Path) -> None:
    tools = [
        {"name": "typed", "description": "all typed", "parameters": {"type": "object", "properties": {
            "a": {"type": "string"}, "b": {"enum": [1, 2]}, "c": {"const": 3}, "d": {"$ref": "#/$defs/x"},
            "e": {"anyOf": [{"type": "string"}, {"type": "null"}]}}, "$defs": {"x": {"type": "integer"}}}},
        {"name": "loose", "description": "one untyped", "parameters": {"type": "object", "properties": {
            "outer": {"type": "object", "properties": {"in/ner": {"description": "no type"}}}}}},
        {"name": "half", "description": "a branch untyped", "parameters": {"type": "object", "properties": {
            "v": {"oneOf": [{"type": "string"}, {"minimum": 1}]}}}},
        {"name": "silent", "description": " ", "parameters": {"type": "object"}},
    ]
    path = tmp_path / "config.yml"
    path.write_text(yaml.safe_dump({"tool_registry": {"strict_mode": True, "custom_tools": tools}}))
    registry = ToolRegistry.from_file(path)
    assert registry.strict_mode and [t.name for t in registry.tools()] == ["typed"]
    assert [(s.name, s.code) for s in registry.skipped] == [("loose", "TSR-006"), ("half", "TSR-006"), ("silent", "TSR-006")]
    assert "/properties/outer/properties/in~1ner declares no type" in registry.skipped[0].reason
    assert "/properties/v declares no type" in registry.skipped[1].reason
    assert "has no description" in registry.skipped[2].reason
    # Off unless the file says so, and off for a registry made in code: MCP and OpenAI schemas keep registering.
    path.write_text(yaml.safe_dump({"tool_registry": {"custom_tools": tools}}))
    assert len(ToolRegistry.from_file(path)) == 4 and not ToolRegistry().strict_mode
    path.write_text(yaml.safe_dump({"tool_registry": {"strict_mode": "yes", "custom_tools": tools}}))
    with pytest.raises(ValueError, match="strict_mode"):
        ToolRegistry.from_file(path)


def test_strict_mode_in_code_gives_the_pointer(tmp_path: Path) -> None:
    registry = ToolRegistry(strict_mode=True)
    with pytest.raises(SchemaError) as refused:
        registry.register("t", '{"type": "object", "properties": {"list": {"type": "array", "items": {"type": "object", '
                          '"properties": {"x": true}}}}}', description="a tool")
    assert (refused.value.code, refused.value.path) == ("TSR-006", "/properties/list/items/properties/x")
    with pytest.raises(SchemaError) as refused:
        registry.register("t", {"type": "object"})
    assert (refused.value.code, refused.value.path) == ("TSR-006", "/description")
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(3000):  # deeper than Python's recursion limit: the walk uses a stack
        deep = {"type": "object", "properties": {"k": deep}}
    from toolmend.strict_mode import untyped_property

    assert untyped_property(deep) is None


def sized_schema(size: int) -> dict[str, Any]:
    """An object schema whose compact JSON is ``size`` bytes."""
    empty = len(json.dumps({"type": "object", "description": ""}, separators=(",", ":")))
    return {"type": "object", "description": "x" * (size - empty)}


def test_max_schema_size_refuses_larger_schemas(tmp_path: Path) -> None:
    tools = [
        {"name": "small", "description": "fits", "parameters": sized_schema(300)},
        {"name": "large", "description": "does not", "parameters": sized_schema(301)},
    ]
    path = tmp_path / "config.yml"
    path.write_text(yaml.safe_dump({"tool_registry": {"max_schema_size": 300, "custom_tools": tools}}))
    registry = ToolRegistry.from_file(path)
    assert [t.name for t in registry.tools()] == ["small"]
    (skipped,) = registry.skipped
    assert (skipped.name, skipped.code) == ("large", "TSR-006")
    assert "max_schema_size of 300 bytes (301 bytes)" in skipped.reason
    path.write_text(yaml.safe_dump({"tool_registry": {"max_schema_size": "big", "custom_tools": tools}}))
    with pytest.raises(ValueError, match="max_schema_size"):
        ToolRegistry.from_file(path)


def test_the_schema_size_ceiling_is_the_cores() -> None:
    ToolRegistry().register("at", sized_schema(SCHEMA_SIZE_CEILING))
    with pytest.raises(SchemaError, match=f"maximum size of {SCHEMA_SIZE_CEILING} bytes"):
        ToolRegistry().register("over", sized_schema(SCHEMA_SIZE_CEILING + 1))
