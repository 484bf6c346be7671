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
