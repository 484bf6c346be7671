"""The tools of a client: what a request declares, which registry checks the calls, and salvage.

``strict_validation=False`` validates against a non-strict copy of the registry: each schema exactly as written,
so an object that lists ``properties`` accepts others too (strict mode closes such objects). Types are never
coerced in either mode. ``True`` (the default) validates with the registry as it was made: a registry made with
``strict=False`` stays non-strict.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

import orjson

from toolmend import _core
from toolmend.config import RetryConfig
from toolmend.response import ParseResult, read_call, read_reply


def _revision(registry: Any) -> int:
    """Changes whenever the registry's tools do: a tool added, or a newer version in place of one."""
    return registry.revision


class Toolset:
    def __init__(self, registry: Any, config: RetryConfig, limits: Mapping[str, Any]) -> None:
        self.registry = registry
        self.config = config
        self.limits = limits
        self._relaxed: Any = None
        self._relaxed_revision = -1
        self._all: list[dict[str, Any]] = []
        self._all_revision = -1

    def checking(self) -> Any:
        """The registry calls are validated against (see the module's note on strict_validation)."""
        registry = self.registry
        if registry is None or self.config.strict_validation or not registry.strict:
            return registry
        if _revision(registry) != self._relaxed_revision:
            relaxed = _core.ToolRegistry(False, max_size=self.limits["max_size"], max_depth=self.limits["max_depth"])
            for info in registry.tools():
                relaxed.register(
                    info.name, info.schema, description=info.description, version=info.version, category=info.category
                )
            self._relaxed, self._relaxed_revision = relaxed, _revision(registry)
        return self._relaxed

    def specs(self, tools: Iterable[str | Mapping[str, Any]] | None) -> list[dict[str, Any]]:
        """The request's ``tools``: the registry's (all, or those named), or definitions given as they are."""
        if tools is None:
            if self.registry is None:
                return []
            # Every tool of the registry: built once, again only when tools were added.
            if self._all_revision != _revision(self.registry):
                self._all = self.specs([t.name for t in self.registry.tools()])
                self._all_revision = _revision(self.registry)
            return self._all
        names = list(tools)
        specs: list[dict[str, Any]] = []
        for tool in names:
            if isinstance(tool, Mapping):
                specs.append(dict(tool))
                continue
            if self.registry is None:
                raise ValueError(f"tool {tool!r} given by name, but the client has no registry")
            info = self.registry.get(tool)
            function = {"name": info.name, "description": info.description, "parameters": info.schema}
            specs.append({"type": "function", "function": function})
        return specs

    def salvage(self, raw: str) -> ParseResult | None:
        """The server's raw='...' text made into a call locally: it names a tool, or it validates against exactly
        one of the registry's tools. None when neither (or when it needs repair and repair is off)."""
        registry = self.checking()
        repair = self.config.enable_auto_repair
        found = read_reply({"message": {"role": "assistant", "content": raw}}, registry, repair=repair, **self.limits)
        if found.calls and found.ok:
            return found
        if registry is None:
            return None
        arguments = self._loose(raw)
        fits = [t.name for t in registry.tools() if registry.try_validate(t.name, arguments).ok]
        if len(fits) != 1:
            return None
        result = read_call(fits[0], raw, registry, repair=repair, **self.limits)
        return result if result.ok else None

    def _loose(self, raw: str) -> Any:
        if not self.config.enable_auto_repair:
            try:
                return orjson.loads(raw)
            except orjson.JSONDecodeError:
                return None
        from toolmend._repair import loads

        try:
            return loads(raw, **self.limits)
        except ValueError:
            return None
