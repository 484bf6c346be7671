"""The `toolmend` command line."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from toolmend.cli import main

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "broken_tool_call.json"


def test_repair_prints_the_repaired_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["repair", str(EXAMPLE)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == {
        "path": "notes/todo.txt",
        "content": 'Buy milk\nCall "Sam" about the trip',
        "append": True,
        "tags": ["home", "errands"],
    }


def test_report_prints_the_repair_log_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["repair", "--report", str(EXAMPLE)]) == 0
    report = json.loads(capsys.readouterr().out)
    kinds = {r["kind"] for r in report["repairs"]}
    assert report["ok"] and report["repaired"] and report["error"] is None
    assert {"surrounding_text", "unquoted_key", "single_quotes", "control_character",
            "unescaped_quotes", "python_literal", "trailing_comma", "missing_closing_brace"} <= kinds


def test_unrepairable_input_exits_1_with_the_coded_error_on_stderr() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "toolmend.cli", "repair", "-"], input=b"no json here", capture_output=True
    )
    assert proc.returncode == 1
    assert proc.stdout == b""
    assert proc.stderr.decode().startswith("TLP-004: expected a JSON value")


def test_limits_are_options(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 10)
    assert main(["repair", "--max-depth", "5", str(deep)]) == 1
    assert "TLP-008" in capsys.readouterr().err


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as excinfo:
        main(["repair", "--no-such-flag"])
    assert excinfo.value.code == 2
    assert main(["repair", "/no/such/file.json"]) == 2
    assert "cannot read" in capsys.readouterr().err


TOOLS = Path(__file__).resolve().parent.parent / "examples" / "tools.json"


def test_tools_list_and_show(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", "list", "--tools", str(TOOLS)]) == 0
    out = capsys.readouterr().out
    assert "read_file" in out and "write_file" in out and "Total: 2 tools registered" in out
    assert main(["tools", "show", "read_file", "--tools", str(TOOLS)]) == 0
    out = capsys.readouterr().out
    assert "read_file expects: {path: string (required)" in out
    assert json.loads(out.split("Schema (JSON):\n", 1)[1])["required"] == ["path"]


def test_validate_prints_one_coded_error_per_line_and_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    args = '{"path": "a b", "options": {"timeout": "x"}}'
    assert main(["validate", "write_file", args, "--tools", str(TOOLS)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        "[TSR-005] /path",
        "[TSR-004] /options/timeout",
        "[TSR-003] /content",
    ]


def test_validate_reads_stdin_and_exits_0_on_valid_arguments() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "toolmend.cli", "validate", "write_file", "-", "--tools", str(TOOLS)],
        input=b'{"path": "a.txt", "content": "hi"}',
        capture_output=True,
    )
    assert proc.returncode == 0
    assert json.loads(proc.stdout) == {"path": "a.txt", "content": "hi"}


def test_validate_unknown_tool_and_missing_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "wirte_file", "{}", "--tools", str(TOOLS)]) == 1
    assert "[TSR-001]" in capsys.readouterr().out
    assert main(["validate", "x", "{}", "--tools", "/no/such/tools.json"]) == 2
    with pytest.raises(SystemExit) as excinfo:
        main(["validate", "x"])
    assert excinfo.value.code == 2


# ---- toolmend parse ------------------------------------------------------------------------------

RESPONSES = Path(__file__).resolve().parent.parent / "examples" / "responses"

# example -> {with tools?: (exit status, call names, error codes)}
PARSE_EXPECTED: dict[str, dict[bool, tuple[int, list[str], list[str]]]] = {
    "ollama_call_in_content.json": {
        True: (0, ["read_file"], []),
        False: (0, ["read_file"], []),
    },
    "ollama_tool_calls.json": {
        True: (0, ["read_file", "write_file"], []),
        False: (0, ["read_file", "write_file"], []),
    },
    "openai_broken_arguments.json": {
        True: (1, ["read_file"], ["TSR-004", "TLP-003"]),
        False: (1, ["read_file", "write_file"], ["TLP-003"]),
    },
}


def _parse_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    status = main(["parse", *argv, "--json"])
    return status, json.loads(capsys.readouterr().out)


def test_every_response_example_is_covered() -> None:
    assert sorted(p.name for p in RESPONSES.glob("*.json")) == sorted(PARSE_EXPECTED)


@pytest.mark.parametrize("with_tools", [True, False], ids=["tools", "no-tools"])
@pytest.mark.parametrize("example", sorted(PARSE_EXPECTED))
def test_parse_each_example_prints_its_calls_and_exit_status(
    capsys: pytest.CaptureFixture[str], example: str, with_tools: bool
) -> None:
    status_expected, names, codes = PARSE_EXPECTED[example][with_tools]
    tools = ["--tools", str(TOOLS)] if with_tools else []
    assert main(["parse", str(RESPONSES / example), *tools]) == status_expected
    out = capsys.readouterr().out
    call_lines = [line for line in out.splitlines() if line.startswith("call ")]
    assert [line.split()[2] for line in call_lines] == names
    error_lines = [line for line in out.splitlines() if line.startswith("error: ")]
    assert [line.split()[1] for line in error_lines] == [f"[{code}]" for code in codes]
    # The same verdict as a report.
    status, report = _parse_json(capsys, str(RESPONSES / example), *tools)
    assert status == status_expected
    assert report["ok"] is (status_expected == 0)
    assert [c["name"] for c in report["calls"]] == names
    assert [e["code"] for e in report["errors"]] == codes


def test_parse_prints_ids_sources_arguments_and_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", str(RESPONSES / "ollama_tool_calls.json"), "--tools", str(TOOLS)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "call 0 read_file [call_k3x9q2m1] from tool_calls",
        '  {"path": "notes.txt"}',
        "call 1 write_file [call_p0a7c3d2] from tool_calls",
        '  {"path": "out.txt", "content": "done", "mode": "append"}',
    ]
    assert main(["parse", str(RESPONSES / "ollama_call_in_content.json")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("call 0 read_file [call_") and lines[0].endswith("from hermes (repaired: trailing_comma)")
    assert lines[1:] == ['  {"path": "notes.txt"}', "text: I'll read the file first."]


def test_parse_json_report_of_the_broken_openai_reply(capsys: pytest.CaptureFixture[str]) -> None:
    status, report = _parse_json(capsys, str(RESPONSES / "openai_broken_arguments.json"), "--tools", str(TOOLS))
    assert status == 1 and report["ok"] is False and report["text"] == ""
    (read_call,) = report["calls"]
    assert (read_call["id"], read_call["index"], read_call["source"]) == ("call_abc123", 0, "tool_calls")
    assert read_call["arguments"] == {"path": "notes.txt"}
    assert [r["kind"] for r in read_call["repairs"]] == ["single_quotes", "single_quotes", "trailing_comma"]
    assert all(isinstance(r["position"], int) for r in read_call["repairs"])
    type_error, name_error = report["errors"]
    assert (type_error["code"], type_error["tool_name"], type_error["index"]) == ("TSR-004", "write_file", 1)
    (field,) = type_error["validation"]
    assert (field["path"], field["code"], field["expected"], field["actual"]) == ("/path", "TSR-004", "string", "integer")
    assert type_error["suggestion"] == field["suggestion"] and "string" in field["suggestion"]
    assert (name_error["code"], name_error["tool_name"], name_error["index"]) == ("TLP-003", "delete-everything", 2)
    assert name_error["validation"] == [] and name_error["message"] and name_error["suggestion"]


def test_parse_without_tools_does_not_validate(capsys: pytest.CaptureFixture[str]) -> None:
    # Without a tools file nothing says /path must be a string: the TSR-004 call is a call.
    status, report = _parse_json(capsys, str(RESPONSES / "openai_broken_arguments.json"))
    assert status == 1
    assert [(c["name"], c["arguments"]) for c in report["calls"]] == [
        ("read_file", {"path": "notes.txt"}),
        ("write_file", {"path": 12345, "content": "x"}),
    ]
    assert [e["code"] for e in report["errors"]] == ["TLP-003"]
    assert main(["parse", str(RESPONSES / "openai_broken_arguments.json")]) == 1
    out = capsys.readouterr().out
    assert "call 1 write_file [call_def456] from tool_calls" in out and "TSR-004" not in out


def test_parse_reads_stdin(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    body = (RESPONSES / "ollama_tool_calls.json").read_bytes()
    monkeypatch.setattr(sys, "stdin", SimpleNamespace(buffer=io.BytesIO(body)))
    status, report = _parse_json(capsys, "-", "--tools", str(TOOLS))
    assert status == 0
    assert [c["id"] for c in report["calls"]] == ["call_k3x9q2m1", "call_p0a7c3d2"]
    # "-" is the default.
    broken = (RESPONSES / "openai_broken_arguments.json").read_bytes()
    monkeypatch.setattr(sys, "stdin", SimpleNamespace(buffer=io.BytesIO(broken)))
    assert main(["parse", "--tools", str(TOOLS)]) == 1
    assert "[TSR-004]" in capsys.readouterr().out


def test_parse_usage_errors_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["parse", str(tmp_path / "no_such_reply.json")]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "no_such_reply.json" in captured.err
    assert main(["parse", str(RESPONSES / "ollama_tool_calls.json"), "--tools", str(tmp_path / "no_tools.json")]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "cannot read tools" in captured.err
    with pytest.raises(SystemExit) as excinfo:
        main(["parse", "--no-such-flag"])
    assert excinfo.value.code == 2


# ---- the client commands: chat, smoke, stats, config show -----------------------------------------------

from ollama_server import ScriptedOllama  # noqa: E402
from toolmend import cli_ops  # noqa: E402
from wires import Wire  # noqa: E402

ECHO = {"name": "echo", "arguments": {"text": "smoke test"}, "id": "call_echo"}
DELETE_BAD = {"name": "delete_file", "arguments": {"path": "/tmp/toolmend-smoke.txt"}, "id": "call_d1"}
DELETE_OK = {"name": "delete_file", "arguments": {"path": "/tmp/toolmend-smoke.txt", "confirm": "yes-delete-it"}, "id": "call_d2"}


def address(provider: str, server: ScriptedOllama) -> list[str]:
    url = server.url + ("/v1" if provider == "openai" else "")
    return ["--provider", provider, "--base-url", url] + (["--api-key", "sk-test"] if provider == "openai" else [])


@pytest.mark.parametrize("provider", ["ollama", "openai"])
def test_chat_speaks_either_provider(provider: str, capsys: pytest.CaptureFixture[str]) -> None:
    whole = Wire(provider, False)
    read = {"name": "read_file", "arguments": {"path": "notes.txt"}, "id": "call_r"}
    with ScriptedOllama([whole.calls({**read, "arguments": {"path": 7}}), whole.calls(read)]) as server:
        status = main(["chat", "--model", "m", "--message", "read notes.txt", "--tools", str(TOOLS), *address(provider, server)])
        request = server.requests[0]
    out = capsys.readouterr().out
    assert status == 0
    assert request["path"] == whole.path and request["json"]["model"] == "m"
    assert "call 0 read_file [call_r]" in out and '{"path": "notes.txt"}' in out
    assert "attempt 1: model HTTP 200 TSR-004" in out and "attempt 2: ok HTTP 200" in out


def test_chat_with_openai_needs_a_base_url(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit, match="--base-url"):
        main(["chat", "--provider", "openai", "--model", "m", "--message", "hi"])


@pytest.mark.parametrize("provider", ["ollama", "openai"])
def test_smoke_prints_a_pass_line_per_lane(provider: str, capsys: pytest.CaptureFixture[str]) -> None:
    whole, streamed = Wire(provider, False), Wire(provider, True)
    script = [
        whole.calls(ECHO),
        streamed.calls(ECHO, text="Echoing. "),
        whole.calls(DELETE_BAD),
        whole.calls(DELETE_OK),
        whole.error(404, f"model '{cli_ops.SMOKE_MISSING_MODEL}' not found"),
    ]
    with ScriptedOllama(script) as server:
        status = main(["smoke", "--model", "m", *address(provider, server)])
        models = [r["json"]["model"] for r in server.requests]
        streams = [r["json"]["stream"] for r in server.requests]
    lines = capsys.readouterr().out.splitlines()
    assert status == 0
    assert lines == [
        "pass  ok (chat): ok, echo {'text': 'smoke test'}",
        "pass  ok (stream): ok, 1 call(s) streamed",
        "pass  model (reflection): model -> ok, reflected and corrected",
        "pass  fatal (unknown model): fatal, HTTP 404 as expected",
        "4 of 4 checks passed",
    ]
    assert models == ["m"] * 4 + [cli_ops.SMOKE_MISSING_MODEL] and streams == [False, True, False, False, False]


def test_smoke_fails_a_check_the_server_does_not_pass(capsys: pytest.CaptureFixture[str]) -> None:
    whole, streamed = Wire("ollama", False), Wire("ollama", True)
    script = [
        whole.calls(text="I cannot call tools."),
        streamed.calls(ECHO),
        whole.calls(DELETE_OK),
        whole.calls(ECHO),  # a server that answers any model name
    ]
    with ScriptedOllama(script) as server:
        status = main(["smoke", "--model", "m", *address("ollama", server)])
    lines = capsys.readouterr().out.splitlines()
    assert status == 1
    assert lines[0].startswith("FAIL  ok (chat): AssertionError: no echo call came back")
    assert lines[1].startswith("pass  ok (stream)")
    assert lines[2] == "pass  model (reflection): ok (the model got it right at once: no reflection was needed)"
    assert lines[3].startswith("FAIL  fatal (unknown model): AssertionError")
    assert lines[4] == "2 of 4 checks passed"


def test_stats_of_an_audit_file_written_by_real_chats(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    audit = tmp_path / "audit.jsonl"
    config = tmp_path / "toolmend.toml"
    config.write_text(f'[tool_call]\naudit_path = "{audit}"\nmax_retries = 1\n')
    whole = Wire("ollama", False)
    read = {"name": "read_file", "arguments": {"path": "a.txt"}}
    script = [
        whole.calls(read),  # first try
        whole.calls({"name": "read_file", "arguments": "{'path': 'b.txt',}"}),  # repaired
        whole.calls({**read, "arguments": {"path": 1}}), whole.calls(read),  # retried
        whole.calls({**read, "arguments": {"path": 1}}), whole.calls({**read, "arguments": {"path": 2}}),  # failed
    ]
    with ScriptedOllama(script) as server:
        argv = ["chat", "--model", "m", "--message", "x", "--tools", str(TOOLS), "--config", str(config), *address("ollama", server)]
        assert [main(argv) for _ in range(4)] == [0, 0, 0, 1]
    capsys.readouterr()
    assert main(["stats", str(audit)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "6 attempts in 4 chats"
    assert lines[1] == "succeeded 75.0% (first try 25.0%, repaired 25.0%, retried 25.0%), failed 25.0%"
    assert lines[2] == "repairs: single_quotes 2, trailing_comma 1"
    assert main(["stats", "--json", str(audit)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["chats"], summary["succeeded"], summary["failed"]) == (4, 3, 1)
    assert summary["repairs"] == {"single_quotes": 2, "trailing_comma": 1}


def test_config_show_says_where_each_setting_came_from(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "toolmend.toml"
    config.write_text("[tool_call]\nmax_retries = 5\nretry_delay_ms = 250\n")
    monkeypatch.setenv("TOOLMEND_RETRY_DELAY_MS", "300")
    monkeypatch.setenv("TOOLMEND_DEADLINE_S", "60")
    assert main(["config", "show", "--config", str(config), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["max_retries"] == {"value": 5, "source": f"file {config}"}
    assert shown["retry_delay_ms"] == {"value": 300, "source": "environment TOOLMEND_RETRY_DELAY_MS"}
    assert shown["deadline_s"] == {"value": 60.0, "source": "environment TOOLMEND_DEADLINE_S"}
    assert shown["backoff_cap_ms"] == {"value": 10000, "source": "default"}
    assert main(["config", "show", "--config", str(config)]) == 0
    table = {line.split()[0]: line.split(None, 2)[1:] for line in capsys.readouterr().out.splitlines()}
    assert table["max_retries"] == ["5", f"file {config}"]
    assert table["retry_prompt_template"] == ["(built", "in)  default"]
    monkeypatch.setenv("TOOLMEND_MAX_RETRIES", "eleven")
    assert main(["config", "show"]) == 2
    assert "max_retries" in capsys.readouterr().err


def test_the_cli_loads_without_the_proxy_extra() -> None:
    """The wheel installs without the `proxy` extra: the CLI (and its proxy options) still load; only serving
    needs httptools, Starlette and uvicorn."""
    code = (
        "import sys\n"
        "for name in ('httptools', 'starlette', 'uvicorn'):\n"
        "    sys.modules[name] = None  # an import of it fails, as where it is not installed\n"
        "from toolmend.cli import main\n"
        "try:\n"
        "    main(['proxy', '--help'])\n"
        "except SystemExit as e:\n"
        "    print('exit', e.code)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip().endswith("exit 0"), done.stderr
    assert "--upstream" in done.stdout
