"""RetryConfig: how the Ollama client retries, repairs and times out (the seed's fields and defaults).

Precedence: keyword argument > environment (``TOOLMEND_<FIELD>``) > file > default. Files:
``.agent/config.yml`` (``model.providers.ollama.tool_call``) or ``toolmend.toml`` (``[tool_call]``).
"""

from __future__ import annotations

import os
from typing import Any, Mapping

import msgspec

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


class RetryConfig(msgspec.Struct, frozen=True, kw_only=True):
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
    repair_timeout_ms: int = 100
    #: False: the clients validate calls against a non-strict copy of the registry (each schema as written: an object
    #: listing properties accepts others too); True validates with the registry as it was made.
    strict_validation: bool = True
    max_nesting_depth: int = 64
    max_argument_size: int = 1_048_576
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
    #: Largest reply body read, in bytes (a streamed reply: all its lines together); past it the chat fails
    #: with ModelHTTPError code TLP-007 instead of buffering without end.
    max_response_bytes: int = 16 * 1_048_576
    #: A JSON-lines file that gets one line per attempt (no argument values); None: no audit.
    audit_path: str | None = None
    #: Argument values in DEBUG records (secret-looking values masked). Off by default.
    log_argument_values: bool = False

    def __post_init__(self) -> None:
        checks = {
            "max_retries": 0 <= self.max_retries <= 10,
            "retry_delay_ms": self.retry_delay_ms >= 0,
            "backoff_cap_ms": self.backoff_cap_ms >= self.retry_delay_ms,
            "model_http_retries": 0 <= self.model_http_retries <= 10,
            "repair_timeout_ms": self.repair_timeout_ms >= 0,
            "max_nesting_depth": 1 <= self.max_nesting_depth <= 10_000,
            "max_argument_size": self.max_argument_size >= 1,
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

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None, **overrides: Any) -> RetryConfig:
        """The configuration from a file (if given), the environment and keyword overrides."""
        values: dict[str, Any] = {}
        if path is not None:
            values.update(_from_file(path))
        fields = set(cls.__struct_fields__)
        for field in fields:
            env = os.environ.get(f"TOOLMEND_{field.upper()}")
            if env is not None:
                values[field] = _from_env(cls, field, env)
        values.update(overrides)
        unknown = set(values) - fields
        if unknown:
            raise ValueError(f"RetryConfig has no field {sorted(unknown)[0]!r}")
        try:
            # strict=False: "3" from a file or the environment reads as 3.
            return msgspec.convert(values, cls, strict=False)
        except msgspec.ValidationError as e:
            raise ValueError(f"RetryConfig: {e}") from None


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
    text = open(path, "rb").read()  # noqa: SIM115 - small file, read once
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
