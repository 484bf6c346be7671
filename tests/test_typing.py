"""A user's script type-checks under mypy --strict and pyright strict, with zero errors: the stub, the lazy
client names and the result classes all resolve to their real types."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import toolmend

SCRIPT = Path(__file__).parent / "typecheck" / "user_script.py"
#: Where the toolmend under test lives. The checkers find an installed toolmend by themselves; one imported from
#: a source tree (PYTHONPATH, a git worktree) is pointed to, so that what is checked is what the tests import.
SOURCE = Path(toolmend.__file__).resolve().parent.parent
INSTALLED = "site-packages" in SOURCE.parts


def mypy(script: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """``mypy --strict`` over a script, as a user runs it: errors inside toolmend are not the script's (mypy does
    not report errors in an installed package; a source tree on MYPYPATH gets ``ignore_errors`` to match)."""
    command = [sys.executable, "-m", "mypy", "--strict", "--no-incremental"]
    env = dict(os.environ)
    if not INSTALLED:
        config = tmp_path / "mypy.ini"
        config.write_text("[mypy]\n\n[mypy-toolmend.*]\nignore_errors = True\n")
        command += ["--config-file", str(config)]
        env["MYPYPATH"] = str(SOURCE)
    return subprocess.run([*command, str(script)], capture_output=True, text=True, timeout=600, env=env)


def test_user_script_passes_mypy_strict(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    run = mypy(SCRIPT, tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Success: no issues found" in run.stdout


def test_user_script_passes_pyright_strict(tmp_path: Path) -> None:
    pyright = shutil.which("pyright", path=str(Path(sys.executable).parent)) or shutil.which("pyright")
    if pyright is None or shutil.which("node") is None:
        pytest.skip("pyright (and the node it runs on) is not installed here")
    config = tmp_path / "pyrightconfig.json"
    settings: dict[str, object] = {"typeCheckingMode": "strict", "pythonPath": sys.executable}
    if not INSTALLED:
        settings["extraPaths"] = [str(SOURCE)]  # before site-packages in pyright's import order
    config.write_text(json.dumps(settings))
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
    run = mypy(bad, tmp_path)
    assert run.returncode == 1 and "RepairResult" in run.stdout and "OllamaClient" in run.stdout, run.stdout
