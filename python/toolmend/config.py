"""RetryConfig: how the clients retry, repair and time out.

Precedence: keyword argument > environment (``TOOLMEND_<FIELD>``) > file > default. Files: ``.agent/config.yml``
(the section ``model.providers.<provider>``: its ``tool_call`` keys, ``streaming`` and ``options``; a file whose
top level is ``tool_call:`` is read as that section) or ``toolmend.toml`` (``[tool_call]``). With no path,
``load`` reads ``$TOOLMEND_CONFIG`` or the first ``.agent/config.yml`` from the working directory up.

The seed's names of the limits (``max_argument_size``, ``max_nesting_depth``, ``repair_timeout_ms``) and the short
names the rest of toolmend uses (``max_size``, ``max_depth``, ``timeout_ms``) are both first-class: as keywords,
attributes, file keys and ``TOOLMEND_*`` variables.

Keys that mean nothing here are not errors: each gets a note on the ``toolmend`` logger at INFO (never a warning),
listed in docs/client.md. A key no section knows is a ValueError, so a typo never passes silently.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
import re
from pathlib import Path
from typing import Any, Callable, Mapping

import msgspec
import orjson

from toolmend._limits import DEFAULT_LIMITS, MAX_DEPTH_CEILING

logger = logging.getLogger("toolmend")

#: The seed's names of the limits, and the short names toolmend uses everywhere else: both are first-class.
SEED_NAMES: Mapping[str, str] = {
    "max_argument_size": "max_size",
    "max_nesting_depth": "max_depth",
    "repair_timeout_ms": "timeout_ms",
}

#: The environment variable naming a config file, read when ``load`` is given no path.
CONFIG_ENV = "TOOLMEND_CONFIG"
#: The file ``load`` looks for from the working directory up.
CONFIG_FILE = os.path.join(".agent", "config.yml")

#: The placeholders of ``retry_prompt_template``: ``{name}`` for one of these is replaced by its value; any other
#: brace stays as written (a JSON example in the template is text). ``{word}`` for another word is refused.
PLACEHOLDERS = frozenset(
    {
        "tool_name",
        "error_type",
        "error_code",
        "error_position",
        "error_message",
        "validation_errors",
        "malformed_json",
        "schema_hint",
        "schema_example",
    }
)
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")

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


def check_template(template: str) -> None:
    """ValueError naming the first ``{word}`` of ``template`` that is not one of PLACEHOLDERS."""
    for match in _PLACEHOLDER.finditer(template):
        if match.group(1) not in PLACEHOLDERS:
            raise ValueError(
                f"RetryConfig.retry_prompt_template: unknown placeholder {match.group(0)} at character "
                f"{match.start()}; placeholders are {', '.join('{' + p + '}' for p in sorted(PLACEHOLDERS))} "
                "(other braces, such as a JSON example, stay as written)"
            )


def fill_template(template: str, values: Mapping[str, Any]) -> str:
    """``template`` with each placeholder replaced by its value, in one pass (a value holding ``{tool_name}`` stays
    as it is); every other brace as written. ValueError for an unknown ``{word}`` (see check_template)."""
    check_template(template)
    return _PLACEHOLDER.sub(lambda m: str(values.get(m.group(1), m.group(0))), template)


@dataclasses.dataclass(frozen=True, kw_only=True)
class RetryConfig:
    """Retry, repair and timeout settings. Invalid values raise ValueError naming the field."""

    #: Reflection requests after the first one when tool calls keep failing (0..10; 0 turns reflection off).
    max_retries: int = 3
    #: Milliseconds: the wait before each reflection, doubling (100, 200, 400, ...; 0: none), and the base of the
    #: jittered backoff between transport retries.
    retry_delay_ms: int = 100
    #: Cap of one backoff delay; a server asking for longer (Retry-After) fails fast.
    backoff_cap_ms: int = 10_000
    #: Transport retries (429, 503, 502, 504, timeouts, dropped connections) per request.
    model_http_retries: int = 2
    enable_auto_repair: bool = True
    #: The limits every call of a reply is read under, as in repair() and parse_response(): arguments
    #: over max_size bytes are TLP-007; nesting over max_depth levels (at most MAX_DEPTH_CEILING) or a
    #: repair longer than timeout_ms milliseconds is TLP-008. The seed's names max_argument_size,
    #: max_nesting_depth and repair_timeout_ms are the same fields (as keywords, attributes, keys, variables).
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

    #: Repair details (each call's repairs: kind and position, never values) in DEBUG records.
    log_repair_details: bool = True
    #: False: chat_stream asks for whole replies (stream: false) and hands out each reply's events once it is read
    #: (``model.providers.<provider>.streaming`` in .agent/config.yml).
    streaming: bool = True
    #: Bytes: the cap of one streamed call's arguments (``tool_call.streaming.buffer_size``); past it the call
    #: fails with TLP-007 as it streams. None: max_size alone.
    stream_buffer_size: int | None = None
    #: Calls taken from one reply at most (``tool_call.streaming.max_concurrent_calls``); the calls after them
    #: fail with TLP-006 and are asked for again. None: no cap.
    max_concurrent_calls: int | None = None
    #: Model options sent with every request (``model.providers.<provider>.options``): Ollama's ``options``
    #: (``format`` goes in the request's own ``format``), an OpenAI-compatible server's request fields
    #: (``format: json`` as ``response_format``). What a chat passes wins.
    options: dict[str, Any] | None = dataclasses.field(default=None, hash=False)  # a dict: left out of the hash

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
            "stream_buffer_size": self.stream_buffer_size is None or self.stream_buffer_size >= 1,
            "max_concurrent_calls": self.max_concurrent_calls is None or self.max_concurrent_calls >= 1,
        }
        for field, ok in checks.items():
            if not ok:
                raise ValueError(f"RetryConfig.{field} = {getattr(self, field)!r} is out of range")
        check_template(self.retry_prompt_template)

    # The seed's names of the limits, read-only.
    @property
    def max_argument_size(self) -> int:
        """The seed's name of ``max_size``."""
        return self.max_size

    @property
    def max_nesting_depth(self) -> int:
        """The seed's name of ``max_depth``."""
        return self.max_depth

    @property
    def repair_timeout_ms(self) -> int:
        """The seed's name of ``timeout_ms``."""
        return self.timeout_ms

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str] | None = None,
        *,
        provider: str = "ollama",
        discover: bool = True,
        **overrides: Any,
    ) -> RetryConfig:
        """The configuration from a file, the environment and keyword overrides.

        ``path`` None: ``$TOOLMEND_CONFIG``, else the first ``.agent/config.yml`` from the working directory up
        (``discover=False``: no file). ``provider`` picks ``model.providers.<provider>`` of a YAML file."""
        return _load(cls, path, provider, discover, overrides)[0]


def find_config(start: str | os.PathLike[str] | None = None) -> Path | None:
    """The config file ``RetryConfig.load()`` reads when given no path: ``$TOOLMEND_CONFIG`` (whether it exists
    or not: reading it then says), else the first ``.agent/config.yml`` in ``start`` (the working directory) or
    one of its parents; None when there is none."""
    named = os.environ.get(CONFIG_ENV)
    if named:
        return Path(named)
    here = Path(start if start is not None else os.getcwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / CONFIG_FILE
        if candidate.is_file():
            return candidate
    return None


@dataclasses.dataclass
class _Loaded:
    path: Path | None
    file_values: dict[str, Any]
    environment: dict[str, str]  # field -> the variable it came from


def _load(
    cls: Any, path: str | os.PathLike[str] | None, provider: str, discover: bool, overrides: Mapping[str, Any]
) -> tuple[RetryConfig, _Loaded]:
    if path is None and discover:
        path = find_config()
    values: dict[str, Any] = {}
    file_values: dict[str, Any] = {}
    if path is not None:
        raw, notes = _from_file(path, provider)
        for level, note in notes:
            logger.log(level, "config %s: %s", os.fspath(path), note)
        file_values = _short_names(raw, f"key of {os.fspath(path)}", ValueError)
        values.update(file_values)
    fields = {f.name for f in dataclasses.fields(cls)}
    environment: dict[str, str] = {}
    variables: dict[str, str] = {}
    for name in sorted(fields | set(SEED_NAMES)):
        env = os.environ.get(f"TOOLMEND_{name.upper()}")
        if env is not None:
            environment[name] = env
            variables[SEED_NAMES.get(name, name)] = f"TOOLMEND_{name.upper()}"
    environment = _short_names(environment, "environment variable", ValueError, prefix="TOOLMEND_")
    values.update({name: _from_env(cls, name, text) for name, text in environment.items()})
    values.update(_short_names(overrides, "keyword argument", TypeError))
    unknown = set(values) - fields
    if unknown:
        raise ValueError(f"RetryConfig has no field {sorted(unknown)[0]!r}")
    try:
        # strict=False: "3" from a file or the environment reads as 3.
        config = msgspec.convert(values, cls, strict=False)
    except msgspec.ValidationError as e:
        raise ValueError(f"RetryConfig: {e}") from None
    return config, _Loaded(Path(path) if path is not None else None, file_values, variables)


def _shown(field: str, prefix: str) -> str:
    return f"{prefix}{field.upper()}" if prefix else field


def _short_names(values: Mapping[str, Any], kind: str, error: type[Exception], prefix: str = "") -> dict[str, Any]:
    """``values`` with the seed's names of the limits given as the short names (the fields)."""
    out = dict(values)
    for seed, short in SEED_NAMES.items():
        if seed not in out:
            continue
        if short in out:
            raise error(
                f"RetryConfig: {_shown(seed, prefix)} and {_shown(short, prefix)} ({kind}) both given; "
                f"they name the same setting"
            )
        out[short] = out.pop(seed)
    return out


def _accept_seed_names(init: Callable[..., None]) -> Callable[..., None]:
    @functools.wraps(init)
    def __init__(self: RetryConfig, **kwargs: Any) -> None:
        init(self, **_short_names(kwargs, "keyword argument", TypeError))

    return __init__


# The dataclass's own __init__ stays what type checkers and inspect.signature see.
RetryConfig.__init__ = _accept_seed_names(RetryConfig.__init__)  # type: ignore[method-assign]
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _from_env(cls: Any, field: str, text: str) -> Any:
    """An environment value for ``field``: booleans as 1/0, true/false, yes/no, on/off (any case); "none" or
    nothing for a field that may be None; a mapping as JSON (``TOOLMEND_OPTIONS='{"temperature": 0.1}'``);
    anything else as given (msgspec converts "3" to 3)."""
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
    if kind.startswith("dict"):
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            raise ValueError(f"RetryConfig.{field}: TOOLMEND_{field.upper()} is not a JSON object") from None
    return text


#: Notes for keys of .agent/config.yml that RetryConfig reads but that mean nothing here (docs/client.md).
_NO_EFFECT = {
    "logging": (
        "logging is not applied: toolmend logs on the 'toolmend' logger (the streaming accumulator's records too); "
        "set its level with Python's logging, such as logging.getLogger('toolmend').setLevel(logging.DEBUG)"
    ),
}
#: Sections of .agent/config.yml read by other parts of toolmend (noted at DEBUG only).
_READ_ELSEWHERE = {
    "tool_registry": "tool_registry is read by ToolRegistry.from_file",
    "tools": "tools (custom, custom_tools) is read by ToolRegistry.from_file",
}
#: ``tool_call.streaming`` keys and the fields they set.
_STREAMING_KEYS = {"buffer_size": "stream_buffer_size", "max_concurrent_calls": "max_concurrent_calls"}


def _from_file(path: str | os.PathLike[str], provider: str) -> tuple[dict[str, Any], list[tuple[int, str]]]:
    """The settings of a config file as field names (the seed's names of the limits not yet made short), and the
    notes on what it holds that has no effect, each with its log level."""
    with open(path, "rb") as f:
        text = f.read()
    name = os.fspath(path)
    notes: list[tuple[int, str]] = []
    if name.endswith(".toml"):
        try:
            import tomllib
        except ImportError:  # Python 3.10
            import tomli as tomllib
        data = tomllib.loads(text.decode())
    else:
        import yaml

        data = yaml.safe_load(text) or {}
    if not isinstance(data, Mapping):
        raise ValueError(f"RetryConfig: {name} does not hold a mapping of settings")
    section = _mapping(_mapping(_mapping(data.get("model")).get("providers")).get(provider))
    values: dict[str, Any] = {}
    for key, value in section.items():
        if key == "tool_call":
            continue
        if key == "streaming":
            values["streaming"] = value
        elif key == "options":
            values["options"] = value
        else:
            notes.append((logging.DEBUG, f"model.providers.{provider}.{key} is not a client setting: not read"))
    tool_call: Any = section.get("tool_call")
    where = f"model.providers.{provider}.tool_call"
    if tool_call is None and "tool_call" in data:
        tool_call, where = data["tool_call"], "tool_call"  # a snippet: the section on its own
    if tool_call is None and name.endswith(".toml") and "model" not in data:
        tool_call, where = data, "the file"  # a toolmend.toml of bare settings
    for key, value in _mapping(tool_call, where).items():
        if key == "streaming" and isinstance(value, Mapping):
            for sub, sub_value in value.items():
                if sub not in _STREAMING_KEYS:
                    raise ValueError(f"RetryConfig has no field {f'{where}.streaming.{sub}'!r}")
                values[_STREAMING_KEYS[sub]] = sub_value
        else:
            values[key] = value
    for key, note in _NO_EFFECT.items():
        if key in data:
            notes.append((logging.INFO, note))
    for key, note in _READ_ELSEWHERE.items():
        if key in data:
            notes.append((logging.DEBUG, note))
    return values, notes


def _mapping(value: Any, where: str | None = None) -> Mapping[str, Any]:
    if value is None:
        return {}
    if isinstance(value, Mapping):
        return value
    if where is not None:
        raise ValueError(f"RetryConfig: {where} is not a mapping of settings")
    return {}


def sources(path: str | os.PathLike[str] | None = None, *, provider: str = "ollama") -> list[tuple[str, Any, str]]:
    """Each setting of ``RetryConfig.load(path)`` with where its value came from: ``default``, ``file PATH``
    (the file given, or the one found) or ``environment TOOLMEND_NAME`` (the environment wins over the file)."""
    config, loaded = _load(RetryConfig, path, provider, True, {})
    out = []
    for field in dataclasses.fields(RetryConfig):
        name = field.name
        if name in loaded.environment:
            where = f"environment {loaded.environment[name]}"
        elif name in loaded.file_values:
            where = f"file {loaded.path}"
        else:
            where = "default"
        out.append((name, getattr(config, name), where))
    return out
