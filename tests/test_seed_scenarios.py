"""The seed's manual test scenarios replayed from the command line, with the seed's own config file.

Each `acode` command maps to toolmend's (docs/troubleshooting.md lists the mapping): `config set` to the file
or the environment, `debug parse-tool-call` to `toolmend parse`, `test retry-scenario` to `toolmend smoke`
against the loopback server, `providers stats` to `toolmend stats`, `debug tool-call` to itself."""

from __future__ import annotations

import argparse
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from ollama_server import ScriptedOllama
from toolmend import __version__
from toolmend.cli import _parser, main
from wires import Wire

SEED_CONFIG = Path(__file__).parent / "data" / "seed" / "config.yml"
TOOLS = Path(__file__).resolve().parent.parent / "examples" / "tools.json"
WHOLE, STREAMED = Wire("ollama", False), Wire("ollama", True)
ECHO = {"name": "echo", "arguments": {"text": "smoke test"}, "id": "call_echo"}
DELETE_BAD = {"name": "delete_file", "arguments": {"path": "/tmp/toolmend-smoke.txt"}}
DELETE_OK = {"name": "delete_file", "arguments": {"path": "/tmp/toolmend-smoke.txt", "confirm": "yes-delete-it"}}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose .agent/config.yml is the seed's file as written; the commands run in it."""
    for name in list(os.environ):
        if name.startswith("TOOLMEND_"):
            monkeypatch.delenv(name)
    (tmp_path / ".agent").mkdir()
    (tmp_path / ".agent" / "config.yml").write_text(SEED_CONFIG.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def config_set(project: Path, key: str, value: Any) -> None:
    """`acode config set KEY VALUE`: the key written into the project's .agent/config.yml."""
    path = project / ".agent" / "config.yml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    *parents, last = key.split(".")
    node = data
    for part in parents:
        node = node.setdefault(part, {})
    node[last] = value
    path.write_text(yaml.safe_dump(data), encoding="utf-8")


def response(path: Path, *calls: dict[str, Any]) -> str:
    """A reply file as the scenarios write them (`cat > /tmp/...-response.json`)."""
    tool_calls = [{"id": c["id"], "function": {"name": c["name"], "arguments": c["arguments"]}} for c in calls]
    path.write_text(json.dumps({"message": {"role": "assistant", "tool_calls": tool_calls}}), encoding="utf-8")
    return str(path)


def smoke_script(*reflection: Any) -> list[Any]:
    return [WHOLE.calls(ECHO), STREAMED.calls(ECHO), *reflection, WHOLE.error(404, "model not found")]


def address(server: ScriptedOllama) -> list[str]:
    return ["--provider", "ollama", "--base-url", server.url]


# ---- the scenarios ---------------------------------------------------------------------------------------


def records(err: str, kind: str) -> list[str]:
    """The lines of the toolmend logger's records on stderr that start with ``kind``."""
    return [line for line in err.splitlines() if line.split("] ", 1)[-1].startswith(kind)]


def test_scenario_1_a_valid_call_from_an_ollama_reply(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`acode chat --message ... --tools read_file --log-level debug`, then `acode providers stats ollama`."""
    audit = project / "audit.jsonl"
    config_set(project, "model.providers.ollama.tool_call.audit_path", str(audit))
    config_set(project, "model.providers.ollama.tool_call.log_argument_values", True)  # the seed shows the arguments
    readme = {"name": "read_file", "arguments": {"path": "README.md"}, "id": "call_readme"}
    argv = ["chat", "--model", "llama3.1", "--message", "Read the README.md file", "--tools", str(TOOLS), "--log-level", "debug"]
    with ScriptedOllama([WHOLE.calls(readme)]) as server:
        assert main([*argv, *address(server)]) == 0
    out, err = capsys.readouterr()
    assert "call 0 read_file [call_readme]" in out
    (parsed,) = records(err, "Tool call parsed: read_file (call_readme) parse_result=success")
    assert parsed.startswith("[INFO]")
    assert records(err, "Arguments of read_file (call_readme)") == ["[DEBUG] Arguments of read_file (call_readme): {'path': 'README.md'}"]
    assert main(["stats", str(audit), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["chats"], summary["retried"], summary["failed"]) == (1, 0, 0)


def test_scenario_2_automatic_repair_of_a_trailing_comma(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    malformed = response(project / "malformed-response.json", {"id": "call_test", "name": "read_file", "arguments": '{"path": "test.txt",}'})
    assert main(["parse", malformed, "--log-level", "debug"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == ["call 0 read_file [call_test] from tool_calls (repaired: trailing_comma)", '  {"path": "test.txt"}']
    parsed = "[INFO] Tool call parsed: read_file (call_test) parse_result=repaired repair_applied=[trailing_comma] retry_count=0"
    info, debug = err.splitlines()
    assert re.fullmatch(re.escape(parsed) + " correlation_id=[0-9a-f]{16}", info)
    assert debug == "[DEBUG] Repair applied to read_file (call_test): trailing_comma at 19"
    config_set(project, "model.providers.ollama.tool_call.log_repair_details", False)
    assert main(["parse", malformed, "--log-level", "debug"]) == 0
    (info,) = capsys.readouterr().err.splitlines()
    assert info.startswith(parsed)


def test_scenarios_3_and_7_retry_then_exhaustion_then_debug_and_stats(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    audit = project / "audit.jsonl"
    config_set(project, "model.providers.ollama.tool_call.audit_path", str(audit))
    config_set(project, "model.providers.ollama.tool_call.max_retries", 3)
    # Scenario 3: `acode test retry-scenario --initial-failures 2`
    with ScriptedOllama(smoke_script(WHOLE.calls(DELETE_BAD), WHOLE.calls(DELETE_BAD), WHOLE.calls(DELETE_OK))) as server:
        assert main(["smoke", "--model", "m", *address(server), "--log-level", "info"]) == 0
    out, err = capsys.readouterr()
    assert "pass  model (reflection): model -> model -> ok, reflected and corrected" in out
    # The seed's retry log: each retry at INFO with its number, then the call taken after 2 retries.
    retries = records(err, "Retry attempt")
    assert [line.split(" for ")[0] for line in retries] == ["[INFO] Retry attempt 1/3", "[INFO] Retry attempt 2/3"]
    (taken,) = records(err, "Tool call parsed: delete_file")
    assert "parse_result=retry" in taken and "retry_count=2" in taken
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    chats: dict[str, list[dict[str, Any]]] = {}
    for line in lines:
        chats.setdefault(line["correlation_id"], []).append(line)
    (retried,) = [cid for cid, attempts in chats.items() if len(attempts) == 3]
    assert [a["delay_ms"] for a in chats[retried]] == [100.0, 200.0, 0.0]  # the seed's spacing
    assert main(["debug", "tool-call", "--correlation-id", retried]) == 0
    out = capsys.readouterr().out
    shown = dict(line.split(":", 1) for line in out.splitlines()[1:8])
    assert shown["Parse Result"].strip() == "SUCCESS" and shown["Retry Count"].strip() == "2"
    assert shown["Error Codes"].strip() == "TSR-003, TSR-003"
    # Each attempt's calls by name and id (the seed's Tool Name, Call ID), never their arguments.
    calls = [line.strip() for line in out.splitlines() if line.startswith("     ")]
    assert [re.sub(r"\(call_[0-9a-f]+\)", "(ID)", line) for line in calls] == [
        "delete_file (-)  FAILED TSR-003", "delete_file (-)  FAILED TSR-003", "delete_file (ID)  PASSED",
    ]
    assert "/tmp/toolmend-smoke.txt" not in out
    # Scenario 7: `config set ... max_retries 2`, `acode test retry-scenario --always-fail`
    config_set(project, "model.providers.ollama.tool_call.max_retries", 2)
    with ScriptedOllama(smoke_script(*[WHOLE.calls(DELETE_BAD)] * 3)) as server:
        assert main(["smoke", "--model", "m", *address(server)]) == 1
    out = capsys.readouterr().out
    assert "FAIL  model (reflection): RetryExhaustedError: tool calls still failing after 2 retries: [TSR-003]" in out
    failed = [json.loads(line) for line in audit.read_text().splitlines()][-4:-1]
    assert [a["lane"] for a in failed] == ["model"] * 3 and len({a["correlation_id"] for a in failed}) == 1
    assert main(["debug", "tool-call", "--correlation-id", failed[0]["correlation_id"], "--json"]) == 0
    assert [a["attempt"] for a in json.loads(capsys.readouterr().out)] == [1, 2, 3]
    assert main(["debug", "tool-call", "--correlation-id", failed[0]["correlation_id"]]) == 0
    assert "Parse Result:   FAIL" in capsys.readouterr().out
    # `acode providers stats ollama --tool-calls`
    assert main(["stats", str(audit), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["chats"], summary["retried"], summary["failed"]) == (8, 1, 3)  # two fatal checks, one exhausted


def test_debug_tool_call_says_what_it_cannot_find(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["debug", "tool-call", "--correlation-id", "abc-123-def"]) == 2
    assert "no audit file" in capsys.readouterr().err
    audit = project / "audit.jsonl"
    audit.write_text('{"correlation_id": "other", "attempt": 1, "lane": "ok"}\n')
    assert main(["debug", "tool-call", "--correlation-id", "abc-123-def", "--audit", str(audit)]) == 1
    assert "no attempt with correlation id 'abc-123-def'" in capsys.readouterr().err


def test_scenario_4_schema_validation_failure_with_a_clear_error(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`acode debug parse-tool-call --input wrong-type-response.json --strict`: strict validation is the default."""
    wrong = response(project / "wrong-type-response.json", {"id": "call_001", "name": "read_file", "arguments": '{"path": 12345}'})
    assert main(["parse", wrong, "--tools", str(TOOLS), "--log-level", "warning"]) == 1
    out, err = capsys.readouterr()
    assert out.splitlines()[:2] == [
        "error: [TSR-004] call 0 (read_file): Arguments of 'read_file' do not match its schema: 1 error "
        "(/path: Type mismatch: expected string, got integer) (provide 'path' as a string value, not an integer)",
        "  [TSR-004] /path: Type mismatch: expected string, got integer",
    ]
    (failed,) = records(err, "Tool call failed: read_file")
    assert "error_code=TSR-004" in failed and "12345" not in err  # pointers and codes, never the value
    assert main(["parse", wrong, "--tools", str(TOOLS), "--json"]) == 1
    (error,) = json.loads(capsys.readouterr().out)["errors"]
    (field,) = error["validation"]
    assert (field["path"], field["expected"], field["actual"], field["code"]) == ("/path", "string", "integer", "TSR-004")


def test_scenario_5_multiple_calls_kept_in_order(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    calls = [
        {"id": "call_1", "name": "read_file", "arguments": '{"path": "a.txt"}'},
        {"id": "call_2", "name": "read_file", "arguments": '{"path": "b.txt"}'},
        {"id": "call_3", "name": "read_file", "arguments": '{"path": "c.txt"}'},
        {"id": "call_4", "name": "write_file", "arguments": '{"path": "out.txt", "content": "combined"}'},
        {"id": "call_5", "name": "execute_command", "arguments": '{"command": "ls"}'},
    ]
    multi = response(project / "multi-tool-response.json", *calls)
    assert main(["parse", multi, "--log-level", "info"]) == 0
    out, err = capsys.readouterr()
    heads = [line for line in out.splitlines() if line.startswith("call ")]
    assert heads == [f"call {i} {c['name']} [{c['id']}] from tool_calls" for i, c in enumerate(calls)]
    parsed = records(err, "Tool call parsed")
    assert [line.split(" (", 1)[1].split(")", 1)[0] for line in parsed] == [c["id"] for c in calls]
    assert len({line.rsplit("correlation_id=", 1)[1] for line in parsed}) == 1  # one parse, one correlation id


def test_scenario_6_a_streamed_call_accumulated(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`acode chat --message ... --tools read_file --stream --log-level debug`: fragments keyed by index."""
    readme = {"name": "read_file", "arguments": '{"path": "README.md"}', "id": "call_stream_0"}
    argv = ["chat", "--model", "m", "--message", "Read README.md", "--tools", str(TOOLS), "--stream", "--log-level", "debug"]
    with ScriptedOllama([STREAMED.calls(readme)]) as server:
        assert main([*argv, *address(server)]) == 0
    out, err = capsys.readouterr()
    assert '[call read_file {"path": "README.md"}]' in out and "failed" not in out
    (parsed,) = records(err, "Tool call parsed: read_file (call_stream_0) parse_result=success")
    assert parsed.startswith("[INFO]")


def test_scenario_8_unknown_tool_rejected(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    unknown = response(project / "unknown-tool-response.json", {"id": "call_001", "name": "hack_system", "arguments": "{}"})
    assert main(["parse", unknown, "--tools", str(TOOLS)]) == 1
    assert "error: [TSR-001]" in capsys.readouterr().out


@pytest.mark.parametrize("how", ["environment", "file", "flag"])
def test_scenario_9_large_argument_size_rejection(
    how: str, project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    flags: list[str] = []
    if how == "environment":  # `acode config set ...max_argument_size 1024`, as the environment
        monkeypatch.setenv("TOOLMEND_MAX_ARGUMENT_SIZE", "1024")
    elif how == "file":
        config_set(project, "model.providers.ollama.tool_call.max_argument_size", 1024)
    else:
        flags = ["--max-size", "1024"]
    content = json.dumps({"path": "test.txt", "content": "x" * 2048})
    large = response(project / "large-args-response.json", {"id": "call_001", "name": "write_file", "arguments": content})
    assert main(["parse", large, *flags, "--json"]) == 1
    (error,) = json.loads(capsys.readouterr().out)["errors"]
    assert error["code"] == "TLP-007" and "2083 bytes is over the size limit of 1024 bytes" in error["message"]


def test_scenario_10_configuration_verification(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "show"]) == 0
    table = {line.split("  ")[0].strip(): line.split() for line in capsys.readouterr().out.splitlines()}
    where = f"{project / '.agent' / 'config.yml'}"
    for name, value in [
        ("max_retries", "3"), ("enable_auto_repair", "True"), ("timeout_ms (repair_timeout_ms)", "100"),
        ("strict_validation", "True"), ("max_depth (max_nesting_depth)", "64"), ("max_size (max_argument_size)", "1048576"),
        ("log_repair_details", "True"), ("log_argument_values", "False"),
    ]:
        assert table[name][-3:] == [value, "file", where], name
    malformed = response(project / "malformed-response.json", {"id": "call_test", "name": "read_file", "arguments": '{"path": "test.txt",}'})
    config_set(project, "model.providers.ollama.tool_call.enable_auto_repair", False)
    assert main(["parse", malformed, "--log-level", "warning"]) == 1
    out, err = capsys.readouterr()
    assert out.startswith("error: [TLP-004] call 0 (read_file): Arguments could not be parsed: expected a value after ',' at byte 19")
    assert err.strip().endswith("(auto-repair disabled)")
    config_set(project, "model.providers.ollama.tool_call.enable_auto_repair", True)
    assert main(["parse", malformed]) == 0
    assert main(["parse", malformed, "--no-repair"]) == 1
    capsys.readouterr()


# ---- the commands with the seed's file -------------------------------------------------------------------


def test_config_show_smoke_and_chat_take_the_seeds_file(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = str(project / ".agent" / "config.yml")
    assert main(["config", "show", "--config", config, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["max_size"] == {"value": 1_048_576, "source": f"file {config}"}
    with ScriptedOllama(smoke_script(WHOLE.calls(DELETE_OK))) as server:
        assert main(["smoke", "--model", "m", "--config", config, *address(server)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "4 of 4 checks passed"
    with ScriptedOllama([WHOLE.calls({"name": "read_file", "arguments": {"path": "a"}, "id": "call_r"})]) as server:
        assert main(["chat", "--model", "m", "--message", "x", "--tools", str(TOOLS), "--config", config, *address(server)]) == 0
    assert "call 0 read_file [call_r]" in capsys.readouterr().out


def test_a_config_that_cannot_be_read_is_a_usage_error_not_a_traceback(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config_set(project, "model.providers.ollama.tool_call.retry_prompt_template", "call {tool} again")
    for argv in (["chat", "--model", "m", "--message", "x"], ["smoke", "--model", "m"], ["config", "show"], ["parse", "-"]):
        assert main(argv) == 2, argv
        assert "unknown placeholder {tool}" in capsys.readouterr().err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out == f"toolmend {__version__}\n"


def test_every_option_has_help_text() -> None:
    missing = []

    def walk(parser: argparse.ArgumentParser, where: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, f"{where} {name}")
            elif not action.help:
                missing.append(f"{where}: {'/'.join(action.option_strings) or action.dest}")

    walk(_parser(), "toolmend")
    assert not missing, missing
