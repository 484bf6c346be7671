"""RetryConfig: how the Ollama client retries, repairs and times out.

Precedence: keyword argument > environment (``TOOLMEND_<FIELD>``) > file > default. Files:
``.agent/config.yml`` (``model.providers.ollama.tool_call``) or ``toolmend.toml`` (``[tool_call]``).

The limits of each reply's calls are named as everywhere else in toolmend: ``max_size``, ``max_depth``,
``timeout_ms``. Their former names here (``max_argument_size``, ``max_nesting_depth``,
``repair_timeout_ms``) are still read, as keywords, attributes, file keys and ``TOOLMEND_*`` variables,
with a DeprecationWarning; they go away in the next release.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import warnings
from typing import Any, Callable, Mapping

import msgspec

from toolmend._limits import DEFAULT_LIMITS, MAX_DEPTH_CEILING

#: Former field names and the names that replace them.
RENAMED_FIELDS: Mapping[str, str] = {
    "max_argument_size": "max_size",
    "max_nesting_depth": "max_depth",
    "repair_timeout_ms": "timeout_ms",
}

DEFAULT_RETRY_PROMPT = """\
The tool call arguments you provided for '{tool_name}' could not be used.

Error: {error_type} ({error_code}) at position {error_position}
Details: {error_message}
{validation_errors}
Your output:
```json
{malformed_json}
```

Expected for '{tool_name}': {schema_hint}

Please call '{tool_name}' again with corrected JSON arguments.
Do not include any explanation, only the corrected call."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class RetryConfig:
    """Retry, repair and timeout settings. Invalid values raise ValueError naming the field."""

    #: Reflection requests after the first one when tool calls keep failing (0..10; 0 turns reflection off).
    max_retries: int = 3
    #: Base of the exponential backoff between transport retries, in milliseconds.
    retry_delay_ms: int = 100
    #: Cap of one backoff delay; a server asking for longer (Retry-After) fails fast.
    backoff_cap_ms: int = 10_000
    #: Transport retries (429, 503, 502, 504, timeouts, dropped connections) per request.
    model_http_retries: int = 2
    enable_auto_repair: bool = True
    #: The limits every call of a reply is read under, as in repair() and parse_response(): arguments
    #: over max_size bytes are TLP-007; nesting over max_depth levels (at most MAX_DEPTH_CEILING) or a
    #: repair longer than timeout_ms milliseconds is TLP-008.
    max_size: int = DEFAULT_LIMITS["max_size"]
    max_depth: int = DEFAULT_LIMITS["max_depth"]
    timeout_ms: int = DEFAULT_LIMITS["timeout_ms"]
    #: False: the clients validate calls against a non-strict copy of the registry (each schema as written: an object
    #: listing properties accepts others too); True validates with the registry as it was made.
    strict_validation: bool = True
    retry_prompt_template: str = DEFAULT_RETRY_PROMPT
    #: Seconds: connecting; the first byte of a reply (a model may be loading); the whole chat with retries.
    connect_timeout_s: float = 10.0
    first_byte_timeout_s: float = 300.0
    #: Seconds between two chunks of a streamed reply.
    idle_timeout_s: float = 60.0
    deadline_s: float = 900.0
    #: Stop reflecting once a chat has used this many tokens (prompt + completion, all attempts); None: no budget.
    token_budget: int | None = None
    #: After this many exhausted chats in a row for a model, its circuit opens for breaker_reset_s seconds:
    #: chats fail at once instead of spending a model's time on calls it keeps getting wrong.
    breaker_threshold: int = 5
    breaker_reset_s: float = 30.0
    #: Connections the client keeps to the server at most (chats beyond it wait for one).
    max_connections: int = 100
    #: Largest reply body read, in bytes (a streamed reply: all its lines together), as sent and as decoded
    #: (every layer of a compressed reply); past it the chat fails with ModelHTTPError code TLP-007 instead of
    #: buffering without end.
    max_response_bytes: int = 16 * 1_048_576
    #: A JSON-lines file that gets one line per attempt (no argument values); None: no audit.
    audit_path: str | None = None
    #: Argument values in DEBUG records (secret-looking values masked). Off by default.
    log_argument_values: bool = False

    def __post_init__(self) -> None:
        if self.max_depth > MAX_DEPTH_CEILING:
            raise ValueError(
                f"RetryConfig.max_depth = {self.max_depth!r} is over the ceiling of {MAX_DEPTH_CEILING} "
                "(toolmend.MAX_DEPTH_CEILING)"
            )
        checks = {
            "max_retries": 0 <= self.max_retries <= 10,
            "retry_delay_ms": self.retry_delay_ms >= 0,
            "backoff_cap_ms": self.backoff_cap_ms >= self.retry_delay_ms,
            "model_http_retries": 0 <= self.model_http_retries <= 10,
            "timeout_ms": self.timeout_ms >= 0,
            "max_depth": self.max_depth >= 1,
            "max_size": self.max_size >= 1,
            "connect_timeout_s": self.connect_timeout_s > 0,
            "first_byte_timeout_s": self.first_byte_timeout_s > 0,
            "idle_timeout_s": self.idle_timeout_s > 0,
            "deadline_s": self.deadline_s > 0,
            "token_budget": self.token_budget is None or self.token_budget > 0,
            "breaker_threshold": self.breaker_threshold >= 1,
            "max_connections": self.max_connections >= 1,
            "max_response_bytes": self.max_response_bytes >= 1024,
            "breaker_reset_s": self.breaker_reset_s >= 0,
        }
        for field, ok in checks.items():
            if not ok:
                raise ValueError(f"RetryConfig.{field} = {getattr(self, field)!r} is out of range")

    # The former names, read-only, for one release.
    @property
    def max_argument_size(self) -> int:
        _warn_renamed("max_argument_size", "attribute", stacklevel=3)
        return self.max_size

    @property
    def max_nesting_depth(self) -> int:
        _warn_renamed("max_nesting_depth", "attribute", stacklevel=3)
        return self.max_depth

    @property
    def repair_timeout_ms(self) -> int:
        _warn_renamed("repair_timeout_ms", "attribute", stacklevel=3)
        return self.timeout_ms

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None, **overrides: Any) -> RetryConfig:
        """The configuration from a file (if given), the environment and keyword overrides."""
        values: dict[str, Any] = {}
        if path is not None:
            values.update(_new_names(_from_file(path), f"key of {os.fspath(path)}", ValueError))
        fields = {f.name for f in dataclasses.fields(cls)}
        environment = {}
        for name in sorted(fields | set(RENAMED_FIELDS)):
            env = os.environ.get(f"TOOLMEND_{name.upper()}")
            if env is not None:
                environment[name] = env
        environment = _new_names(environment, "environment variable", ValueError, prefix="TOOLMEND_")
        values.update({name: _from_env(cls, name, text) for name, text in environment.items()})
        values.update(_new_names(overrides, "keyword argument", TypeError))
        unknown = set(values) - fields
        if unknown:
            raise ValueError(f"RetryConfig has no field {sorted(unknown)[0]!r}")
        try:
            # strict=False: "3" from a file or the environment reads as 3.
            return msgspec.convert(values, cls, strict=False)
        except msgspec.ValidationError as e:
            raise ValueError(f"RetryConfig: {e}") from None


def _warn_renamed(old: str, kind: str, prefix: str = "", stacklevel: int = 4) -> None:
    warnings.warn(
        f"RetryConfig: {_shown(old, prefix)} ({kind}) is deprecated and goes away in the next release; "
        f"use {_shown(RENAMED_FIELDS[old], prefix)}, the name repair() and parse_response() use",
        DeprecationWarning,
        stacklevel=stacklevel,
    )


def _shown(field: str, prefix: str) -> str:
    return f"{prefix}{field.upper()}" if prefix else field


def _new_names(
    values: Mapping[str, Any], kind: str, error: type[Exception], prefix: str = ""
) -> dict[str, Any]:
    """``values`` with the former field names replaced by the new ones, each with a DeprecationWarning
    that points at the caller of the function that called this one."""
    out = dict(values)
    for old, new in RENAMED_FIELDS.items():
        if old not in out:
            continue
        if new in out:
            raise error(
                f"RetryConfig: {_shown(old, prefix)} and {_shown(new, prefix)} both given; "
                f"{_shown(old, prefix)} is the former name of {_shown(new, prefix)}"
            )
        _warn_renamed(old, kind, prefix)
        out[new] = out.pop(old)
    return out


def _accept_former_names(init: Callable[..., None]) -> Callable[..., None]:
    @functools.wraps(init)
    def __init__(self: RetryConfig, **kwargs: Any) -> None:
        init(self, **_new_names(kwargs, "keyword argument", TypeError))

    return __init__


# The dataclass's own __init__ stays what type checkers and inspect.signature see.
RetryConfig.__init__ = _accept_former_names(RetryConfig.__init__)  # type: ignore[method-assign]
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _from_env(cls: Any, field: str, text: str) -> Any:
    """An environment value for ``field``: booleans as 1/0, true/false, yes/no, on/off (any case); "none" or
    nothing for a field that may be None; anything else as given (msgspec converts "3" to 3)."""
    kind = cls.__annotations__.get(field, "")
    word = text.strip().lower()
    if kind == "bool":
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
        raise ValueError(f"RetryConfig.{field}: TOOLMEND_{field.upper()}={text!r} is not a boolean (1/0, true/false, yes/no, on/off)")
    if "None" in kind and word in ("", "none", "null"):
        return None
    return text


def _from_file(path: str | os.PathLike[str]) -> Mapping[str, Any]:
    with open(path, "rb") as f:
        text = f.read()
    name = os.fspath(path)
    if name.endswith((".toml",)):
        try:
            import tomllib
        except ImportError:  # Python 3.10
            import tomli as tomllib
        data = tomllib.loads(text.decode())
        return dict(data.get("tool_call", data))
    import yaml  # optional: only .agent/config.yml needs it

    data = yaml.safe_load(text) or {}
    section = data.get("model", {}).get("providers", {}).get("ollama", {}).get("tool_call", {})
    return dict(section or {})


def sources(path: str | os.PathLike[str] | None = None) -> list[tuple[str, Any, str]]:
    """Each setting of ``RetryConfig.load(path)`` with where its value came from: ``default``, ``file PATH``
    or ``environment TOOLMEND_NAME`` (the environment wins over the file, as in ``load``)."""
    config = RetryConfig.load(path)
    from_file: Mapping[str, Any] = {}
    if path is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # load() has said it already
            from_file = _new_names(_from_file(path), "key", ValueError)
    renamed_from = {new: old for old, new in RENAMED_FIELDS.items()}
    out = []
    for field in dataclasses.fields(RetryConfig):
        name = field.name
        env = next(
            (f"TOOLMEND_{n.upper()}" for n in (name, renamed_from.get(name)) if n and f"TOOLMEND_{n.upper()}" in os.environ),
            None,
        )
        if env is not None:
            where = f"environment {env}"
        elif name in from_file:
            where = f"file {os.fspath(path)}"  # type: ignore[arg-type]
        else:
            where = "default"
        out.append((name, getattr(config, name), where))
    return out
