"""The mending harnesses of benches/quality.py hold their figures: agreement on the peers' kinds of
cases, exact recovery of real argument shapes under seeded faults, and calls read from every format.
Each figure is a floor the harness has reached; a change that loses cases fails here with the texts it missed."""

from __future__ import annotations

import importlib.util
import pathlib

import pytest

_PATH = pathlib.Path(__file__).parent.parent / "benches" / "quality.py"
_SPEC = importlib.util.spec_from_file_location("quality", _PATH)
assert _SPEC and _SPEC.loader
quality = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(quality)

import toolmend  # noqa: E402


def test_agreement_on_the_peers_kinds_of_cases() -> None:
    rate, missed = quality.share(toolmend.loads, quality.AGREEMENT)
    assert rate >= 0.85, missed


@pytest.mark.parametrize("group, target", [("single", 0.98), ("combined", 0.95)])
def test_recovery_of_real_arguments_under_seeded_faults(group: str, target: float) -> None:
    cases = quality.recovery_cases()[group]
    assert len(cases) >= 300
    rate, missed = quality.share(toolmend.loads, cases)
    assert rate >= target, missed[:10]


def test_every_format_of_the_table_reads_exactly() -> None:
    rate, missed = quality.format_share()
    assert rate >= 0.98, missed


def test_the_harness_tells_a_wrong_reader_apart() -> None:
    # A reader that loses the last member fails the harness: the measure can fail.
    def lossy(text: str) -> object:
        value = toolmend.loads(text)
        if isinstance(value, dict) and value:
            value.pop(list(value)[-1])
        return value

    assert quality.share(lossy, quality.recovery_cases()["single"])[0] < 0.5
