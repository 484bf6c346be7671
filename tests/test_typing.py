"""A user's script type-checks under mypy --strict and pyright strict, with zero errors: the stub, the lazy
client names and the result classes all resolve to their real types."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parent / "typecheck" / "user_script.py"


def test_user_script_passes_mypy_strict() -> None:
    pytest.importorskip("mypy")
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(SCRIPT)],
        capture_output=True, text=True, timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Success: no issues found" in run.stdout


def test_user_script_passes_pyright_strict(tmp_path: Path) -> None:
    pyright = shutil.which("pyright", path=str(Path(sys.executable).parent)) or shutil.which("pyright")
    if pyright is None or shutil.which("node") is None:
        pytest.skip("pyright (and the node it runs on) is not installed here")
    config = tmp_path / "pyrightconfig.json"
    config.write_text(json.dumps({"typeCheckingMode": "strict", "pythonPath": sys.executable}))
    run = subprocess.run(
        [pyright, "-p", str(config), "--outputjson", str(SCRIPT)], capture_output=True, text=True, timeout=600
    )
    try:
        report = json.loads(run.stdout)
    except ValueError:  # pyright fetches its own runtime on first use; a machine without it cannot run it
        pytest.skip(f"pyright could not run here: {run.stderr.strip()[:300]}")
    errors = [d for d in report["generalDiagnostics"] if d["severity"] == "error"]
    assert errors == [] and report["summary"]["filesAnalyzed"] == 1, errors


def test_a_type_error_in_a_script_is_caught(tmp_path: Path) -> None:
    # The check above could pass by seeing nothing: a wrong use of the same API must fail it.
    pytest.importorskip("mypy")
    bad = tmp_path / "bad.py"
    bad.write_text("import toolmend\nfixed: int = toolmend.repair('x')\nclient: int = toolmend.OllamaClient()\n")
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(bad)], capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 1 and "RepairResult" in run.stdout and "OllamaClient" in run.stdout, run.stdout
