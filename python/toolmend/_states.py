"""States as enums whose members are also their string values, so ``attempt.lane == "transport"`` holds
and logs, JSON and f-strings show the plain value."""

from __future__ import annotations

import enum
import sys


class _StrEnum(str, enum.Enum):
    """enum.StrEnum for Python 3.10: members are str, and str() and format() give the value."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


if sys.version_info >= (3, 11):
    _Base = enum.StrEnum
else:  # pragma: no cover - Python 3.10
    _Base = _StrEnum


class StrEnum(_Base):  # type: ignore[valid-type,misc]
    """A state that reads as its string everywhere, its repr included (``[('model', 'TSR-005')]`` in a list
    of lanes, as before they were enums)."""

    def __repr__(self) -> str:
        return repr(self.value)


class Lane(StrEnum):
    """The way one request of a chat ended (``Attempt.lane``)."""

    #: The reply's tool calls passed every check.
    OK = "ok"
    #: The model's calls failed (ours or Ollama's parser): the errors were reflected back to it.
    MODEL = "model"
    #: Ollama refused the model's raw call text, which was made into a valid call locally.
    SALVAGED = "salvaged"
    #: 429, 502, 503, 504, a timeout or a dropped connection: retried after a backoff.
    TRANSPORT = "transport"
    #: A refusal no retry can fix (404, 400, auth): raised as ModelHTTPError.
    FATAL = "fatal"


class Verdict(StrEnum):
    """What the engine makes of a reply that is not yet an attempt's lane (``lanes.classify``). Internal: an
    Attempt's lane is always a Lane."""

    #: A 400 saying the request's history held a tool call the server could not read: the model is asked to
    #: reformulate (noted as Lane.MODEL).
    REJECTED = "rejected"
    #: A reply whose calls the engine checks.
    REPLY = "reply"


class StreamEventKind(StrEnum):
    """What a chunk fed to a ToolCallAccumulator caused (``StreamEvent.kind``)."""

    #: A new call (index, id) appeared.
    STARTED = "started"
    #: Text was added to the call's name (``text``).
    NAME = "name"
    #: Text was added to the call's arguments (``text``, ``path``).
    ARGUMENTS = "arguments"
    #: The call is whole and passed every check.
    COMPLETED = "completed"
    #: The call failed (``code``, ``message``).
    FAILED = "failed"
    #: Text of the reply (``text``), calls written in it taken out: they come from ``completed()``.
    TEXT = "text"
    #: Reasoning (``text``): a reasoning field, or a think block in the text. Never text, never calls.
    REASONING = "reasoning"
    #: A lone reasoning closer came: ``text`` is all before it, and the text so far was reasoning.
    TEXT_WAS_REASONING = "text_was_reasoning"
    #: From ``end()`` only: the text held calls written without a marker (bare JSON, a pythonic list); ``text`` is
    #: the text without them, to stand instead of the text handed out.
    TEXT_REVISED = "text_revised"
    #: Token counts came (read them from ``ToolCallAccumulator.usage``).
    USAGE = "usage"
    #: Why the reply ended, as the server said it (``text``).
    FINISH = "finish"
    #: The provider sent an error in the stream (``code`` TLP-011, ``message``).
    ERROR = "error"
    #: The turn ended (a finish reason, Ollama's ``done``, ``[DONE]``, the end event of the stream).
    END = "end"


class Code(StrEnum):
    """The error codes by name (``Code.CUT_OFF == "TLP-010"``); toolmend.ERROR_CODES[code] says what each means."""

    #: Missing function.
    MISSING_FUNCTION = "TLP-001"
    #: Missing tool name.
    EMPTY_NAME = "TLP-002"
    #: Invalid tool name.
    INVALID_NAME = "TLP-003"
    #: Invalid JSON.
    UNPARSEABLE = "TLP-004"
    #: Tool name too long.
    NAME_TOO_LONG = "TLP-005"
    #: Tool call not built.
    CALL_CONSTRUCTION = "TLP-006"
    #: Arguments too large.
    TOO_LARGE = "TLP-007"
    #: Arguments nested too deep or too slow to repair.
    TOO_DEEP_OR_TIMEOUT = "TLP-008"
    #: Not a chat reply.
    REPLY_NOT_UNDERSTOOD = "TLP-009"
    #: Arguments cut off.
    CUT_OFF = "TLP-010"
    #: Provider error.
    PROVIDER_ERROR = "TLP-011"
    #: Unknown tool.
    UNKNOWN_TOOL = "TSR-001"
    #: Arguments not JSON.
    INVALID_ARGUMENTS = "TSR-002"
    #: Missing required argument.
    REQUIRED_MISSING = "TSR-003"
    #: Wrong argument type.
    TYPE_MISMATCH = "TSR-004"
    #: Argument constraint violated.
    CONSTRAINT_VIOLATION = "TSR-005"
    #: Invalid tool definition.
    SCHEMA_INVALID = "TSR-006"
    #: Duplicate tool name.
    DUPLICATE_TOOL = "TSR-007"
    #: Schema does not compile.
    COMPILATION_FAILED = "TSR-008"


class CallSource(StrEnum):
    """Where a call was found (``ToolCall.source``): the reply's structured field, a stream, or the text format
    the model wrote it in (one member per format of ``TEXT_FORMATS["lenient"]``)."""

    #: The reply's structured ``tool_calls`` field (or its provider's equivalent).
    TOOL_CALLS = "tool_calls"
    #: Assembled from a stream's fragments.
    STREAM = "stream"
    # Written in the text, in one of the formats of TEXT_FORMATS (docs/api.md lists what each looks like).
    FENCED_TOOL_CALL = "fenced_tool_call"
    FENCED_JSON = "fenced_json"
    HERMES = "hermes"
    GRANITE = "granite"
    GRANITE_FC = "granite_fc"
    NEMOTRON = "nemotron"
    APERTUS = "apertus"
    MISTRAL = "mistral"
    LLAMA3 = "llama3"
    PHI4 = "phi4"
    DEEPSEEK = "deepseek"
    KIMI_K2 = "kimi_k2"
    GPT_OSS = "gpt_oss"
    FUNCTIONARY = "functionary"
    MINIMAX = "minimax"
    FUNCTIONARY_V32 = "functionary_v32"
    LFM2 = "lfm2"
    LLAMA4 = "llama4"
    OLMO3 = "olmo3"
    GEMMA4 = "gemma4"
    FUNCTIONGEMMA = "functiongemma"
    COMMAND_R = "command_r"
    BARE_JSON = "bare_json"
    PYTHONIC = "pythonic"
    ANY_JSON = "any_json"
