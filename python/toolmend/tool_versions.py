"""Several versions of one tool (seed 002, FR-065..069): every version registered is kept, and a registry's checks,
listings and exports use each tool's latest, by semver order.

A registry's Rust part holds each tool at its latest version: a newer version takes the place of the one before
(``replace``), so every reader built on the registry (an accumulator, a text parser, the clients) checks calls
against the latest. Older versions stay in Python, as ToolInfo, for ``get(name, version=...)``.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from toolmend._core import ToolInfo

#: Semantic Versioning 2.0.0's form (the core refuses any other version with TSR-006 before it gets here).
_SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$")


def semver_key(version: str) -> tuple[Any, ...]:
    """A sort key in Semantic Versioning 2.0.0 precedence: a pre-release sorts before its release, its identifiers
    numeric ones below alphanumeric ones; build metadata is ignored."""
    match = _SEMVER.match(version)
    if match is None:
        return (-1, -1, -1, 0, ())  # not semver (the core refuses these): below every version
    major, minor, patch, pre = match.groups()
    if pre is None:
        return (int(major), int(minor), int(patch), 1, ())
    ids = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split("."))
    return (int(major), int(minor), int(patch), 0, ids)


def latest(versions: Mapping[str, ToolInfo]) -> ToolInfo:
    return versions[max(versions, key=semver_key)]


def core_registry(registry: Any) -> Any:
    """The Rust registry the core's readers check calls against: the registry itself (kept for callers that used
    it when a registry with several versions needed a second Rust registry)."""
    return registry
