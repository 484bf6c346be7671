"""benches/code_edit_report.py runs as a script: its --quick pass (a few KB, one round) checks that each
way ends with the document and prints the table. The figures themselves come from a release build."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("orjson")
pytest.importorskip("jsonmend")

_SCRIPT = pathlib.Path(__file__).parent.parent / "benches" / "code_edit_report.py"


def test_code_edit_report_quick_prints_the_table() -> None:
    run = subprocess.run([sys.executable, str(_SCRIPT), "--quick"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    rows = [line for line in run.stdout.splitlines() if line.startswith("| 4 KB")]
    assert len(rows) == 1, run.stdout
    cells = [cell.strip() for cell in rows[0].strip("|").split("|")]
    assert len(cells) == 7 and cells[-1].endswith("x") and cells[-2].endswith("x"), rows[0]
