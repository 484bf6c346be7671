"""The `toolmend` command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
