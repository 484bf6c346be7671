"""Several versions of one tool (seed 002, FR-065..069): every version registered is kept, and a registry's checks,
listings and exports use each tool's latest, by semver order.

The Rust registry holds one definition per name and cannot drop one. A registry's own Rust part holds the first
version registered of each name; while that is each tool's latest (the common case: one version, or older ones
added later), the Rust part does every check. Once a newer version comes after an older one, a second Rust
registry (the *view*) is built, when next used, with every tool at its latest, and the checks, listings and the
core's readers go to it (``core_registry``). Older versions stay here, as ToolInfo, for ``get(name, version=...)``.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from toolmend import _core
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


def copy_into(registry: _core.ToolRegistry, info: ToolInfo) -> ToolInfo:
    """Registers ``info``'s definition, as it is, into another Rust registry."""
    return registry.register(
        info.name, info.schema, description=info.description, version=info.version, category=info.category,
        annotations=info.annotations, allow_truncated=info.allow_truncated,
    )


def build_view(strict: bool, names: str, limits: Mapping[str, int], tools: Mapping[str, Mapping[str, ToolInfo]]) -> _core.ToolRegistry:
    """A Rust registry holding every tool at its latest version."""
    view = _core.ToolRegistry(strict, names=names, **limits)
    for versions in tools.values():
        copy_into(view, latest(versions))
    return view


def core_registry(registry: Any) -> Any:
    """The Rust registry the core's readers check calls against: the registry's view when it has one (a newer
    version came after an older one), else the registry itself."""
    # Most registries hold one version a tool and have no view: two attribute reads, no call.
    if getattr(registry, "_view", None) is None and not getattr(registry, "_stale", False):
        return registry
    return registry._checker()
