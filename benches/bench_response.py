"""parse_response speed on whole model replies, peers side by side (pytest-benchmark).

Full run (release build):  python -m pytest benches/bench_response.py --benchmark-only --benchmark-group-by=group
Smoke pass (CI):           python -m pytest benches/bench_response.py --benchmark-disable   (each once)

Every body is the bytes a client reads off the wire, with 1 or 10 tool calls to read_file,
write_file and search (arguments of 100-300 bytes each; write_file carries a few hundred
characters of code). The registry holds those three tools, every object closed with
additionalProperties: false. Each case is its own group:

    ollama-valid-<n>      Ollama /api/chat reply, arguments as objects in message.tool_calls
    openai-valid-<n>      OpenAI chat completion, arguments as JSON strings
    openai-repairs-<n>    the same, every argument string with single quotes and/or a trailing comma
    ollama-text-<n>       Ollama reply whose content holds <n> <tool_call>{...}</tool_call> blocks

and in each group, side by side:

    toolmend(registry)        parse_response(body, registry): parse, repair, check names, validate
    toolmend(no-registry)     parse_response(body): parse, repair, check names
    orjson.loads(floor)       orjson.loads(body): the envelope parsed, nothing else
    orjson+jsonschema_rs      (valid cases only) what one writes by hand: orjson.loads(body), then
                              per call orjson.loads(arguments) where they are a string and
                              jsonschema_rs validate; left out when jsonschema_rs is not installed

The plain tests at the end check that every body gives the expected calls and no errors (the
repair cases a repair on every call), and that the by-hand peer finds the same calls, so the
bench times working code doing like work.
"""

from __future__ import annotations

from functools import cache, partial
from typing import Any, Callable

import orjson
import pytest

import toolmend
from toolmend.bench import optional_module

# ---- tools -------------------------------------------------------------------------------------

SCHEMAS: dict[str, dict[str, Any]] = {
    "read_file": {
        "type": "object",
        "properties": {
            "path": {"type": "string", "maxLength": 4096},
            "encoding": {"type": "string", "enum": ["utf-8", "ascii", "latin-1"]},
            "start_line": {"type": "integer", "minimum": 1},
            "end_line": {"type": "integer", "minimum": 1},
        },
        "required": ["path"],
        "additionalProperties": False,
    },
    "write_file": {
        "type": "object",
        "properties": {
            "path": {"type": "string", "pattern": "^[A-Za-z0-9_][A-Za-z0-9_./-]*$", "maxLength": 4096},
            "content": {"type": "string"},
            "mode": {"type": "string", "enum": ["overwrite", "append", "create"]},
            "create_dirs": {"type": "boolean"},
        },
        "required": ["path", "content"],
        "additionalProperties": False,
    },
    "search": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1, "maxLength": 500},
            "path": {"type": "string"},
            "glob": {"type": "string"},
            "case_sensitive": {"type": "boolean"},
            "max_results": {"type": "integer", "minimum": 1, "maximum": 1000},
        },
        "required": ["query"],
        "additionalProperties": False,
    },
}

# ---- calls -------------------------------------------------------------------------------------

_CODE = (
    "def load_config(path):\n"
    "    with open(path, encoding=\"utf-8\") as f:\n"
    "        data = json.load(f)\n"
    "    if \"retries\" not in data:\n"
    "        data[\"retries\"] = 3\n"
    "    return Config(**data)\n"
)

# (name, arguments) in the order the calls appear; the 1-call cases take the first.
_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("write_file", {"path": "src/app/config.py", "content": _CODE, "mode": "overwrite", "create_dirs": True}),
    ("read_file", {"path": "services/accounts/src/accounts/handlers/users.py", "encoding": "utf-8", "start_line": 120, "end_line": 180}),
    ("search", {"query": "def load_config(path", "path": "services/accounts/src", "glob": "**/*.py", "case_sensitive": False, "max_results": 50}),
    ("read_file", {"path": "services/accounts/tests/integration/test_users_api.py", "encoding": "utf-8", "start_line": 1, "end_line": 240}),
    ("write_file", {"path": "docs/notes/retries.md", "content": "# Retries\n\nThe loader sets `retries` to 3 when the config leaves it out.\n" * 3, "mode": "create"}),
    ("search", {"query": "Config(**data)", "path": "services/accounts/src", "glob": "**/*.py", "case_sensitive": True, "max_results": 20}),
    ("read_file", {"path": "services/accounts/src/accounts/models/config_model.py", "encoding": "utf-8", "start_line": 1, "end_line": 95}),
    ("write_file", {"path": "src/app/config_test_helpers.py", "content": _CODE.replace("load_config", "load_test_config"), "mode": "overwrite", "create_dirs": False}),
    ("search", {"query": "retries", "path": "services/accounts/src/accounts/handlers", "glob": "**/*.py", "case_sensitive": False, "max_results": 100}),
    ("read_file", {"path": "services/accounts/config/settings.production.toml", "encoding": "utf-8", "start_line": 1, "end_line": 60}),
]
COUNTS = (1, 10)


def _calls(n: int) -> list[tuple[str, dict[str, Any]]]:
    return _CALLS[:n]


def _broken(i: int, arguments: dict[str, Any]) -> str:
    """The arguments as a model botches them: a trailing comma, and on every other call single quotes."""
    if i % 2:
        return orjson.dumps(arguments).decode()[:-1] + ",}"
    parts = []
    for key, value in arguments.items():
        if isinstance(value, str):
            # A JSON string body between single quotes: escapes kept, '"' as \" as JSON writes it.
            assert "'" not in value
            text = "'" + orjson.dumps(value).decode()[1:-1] + "'"
        else:
            text = orjson.dumps(value).decode()
        parts.append(f"'{key}': {text}")
    return "{" + ", ".join(parts) + ",}"


def ollama_body(n: int) -> bytes:
    tool_calls = [
        {"id": f"call_{i:08x}", "function": {"index": i, "name": name, "arguments": arguments}}
        for i, (name, arguments) in enumerate(_calls(n))
    ]
    return orjson.dumps(
        {
            "model": "qwen3:8b",
            "created_at": "2026-11-23T10:00:00.000000Z",
            "message": {"role": "assistant", "content": "", "tool_calls": tool_calls},
            "done_reason": "stop",
            "done": True,
            "total_duration": 4_832_112_000,
            "load_duration": 21_044_000,
            "prompt_eval_count": 812,
            "eval_count": 96 * n,
        }
    )


def openai_body(n: int, *, broken: bool = False) -> bytes:
    tool_calls = [
        {
            "id": f"call_{i:024x}",
            "type": "function",
            "function": {"name": name, "arguments": _broken(i, arguments) if broken else orjson.dumps(arguments).decode()},
        }
        for i, (name, arguments) in enumerate(_calls(n))
    ]
    return orjson.dumps(
        {
            "id": "chatcmpl-9f8e7d6c5b4a",
            "object": "chat.completion",
            "created": 1795428000,
            "model": "llama3.2",
            "system_fingerprint": "fp_ollama",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": None, "tool_calls": tool_calls},
                    "finish_reason": "tool_calls",
                }
            ],
            "usage": {"prompt_tokens": 812, "completion_tokens": 96 * n, "total_tokens": 812 + 96 * n},
        }
    )


def ollama_text_body(n: int) -> bytes:
    blocks = [
        "<tool_call>\n" + orjson.dumps({"name": name, "arguments": arguments}).decode() + "\n</tool_call>"
        for name, arguments in _calls(n)
    ]
    content = "I'll look at the config loader first.\n" + "\n".join(blocks)
    return orjson.dumps(
        {
            "model": "qwen2.5:7b",
            "created_at": "2026-11-23T10:00:00.000000Z",
            "message": {"role": "assistant", "content": content},
            "done_reason": "stop",
            "done": True,
            "eval_count": 96 * n,
        }
    )


# group -> (body, calls expected, whether every call is repaired, whether the case is valid as sent)
CASES: dict[str, tuple[bytes, int, bool, bool]] = {}
for _n in COUNTS:
    CASES[f"ollama-valid-{_n}"] = (ollama_body(_n), _n, False, True)
    CASES[f"openai-valid-{_n}"] = (openai_body(_n), _n, False, True)
    CASES[f"openai-repairs-{_n}"] = (openai_body(_n, broken=True), _n, True, False)
    CASES[f"ollama-text-{_n}"] = (ollama_text_body(_n), _n, False, False)

# ---- peers -------------------------------------------------------------------------------------


jsonschema_rs = optional_module("jsonschema_rs")


@cache
def toolmend_registry() -> toolmend.ToolRegistry:
    reg = toolmend.ToolRegistry()
    for name, schema in SCHEMAS.items():
        reg.register(name, schema, description=f"bench tool {name}")
    return reg


@cache
def rs_validators() -> dict[str, Any]:
    return {name: jsonschema_rs.Draft202012Validator(schema) for name, schema in SCHEMAS.items()}


def by_hand(body: bytes, validators: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """What a client writes without toolmend: parse the reply, parse and validate each call."""
    reply = orjson.loads(body)
    message = reply["choices"][0]["message"] if "choices" in reply else reply["message"]
    calls = []
    for tool_call in message.get("tool_calls") or ():
        function = tool_call["function"]
        name, arguments = function["name"], function["arguments"]
        if isinstance(arguments, str):
            arguments = orjson.loads(arguments)
        validators[name].validate(arguments)
        calls.append((name, arguments))
    return calls


def _toolmend_with_registry(body: bytes) -> Callable[[], Any]:
    reg = toolmend_registry()
    toolmend.parse_response(body, reg)  # validators built on first use are built before timing
    return partial(toolmend.parse_response, body, reg)


# A peer: (label, module it needs or None, whether it only does valid input, factory of the timed call).
Peer = tuple[str, Any, bool, Callable[[bytes], Callable[[], Any]]]

PEERS: list[Peer] = [
    ("toolmend(registry)", toolmend, False, _toolmend_with_registry),
    ("toolmend(no-registry)", toolmend, False, lambda body: partial(toolmend.parse_response, body)),
    ("orjson.loads(floor)", orjson, False, lambda body: partial(orjson.loads, body)),
    ("orjson+jsonschema_rs", jsonschema_rs, True, lambda body: partial(by_hand, body, rs_validators())),
]


def _benches() -> list[Any]:
    params = []
    for group, (_, _, _, valid) in CASES.items():
        for label, module, valid_only, make in PEERS:
            if module is not None and (valid or not valid_only):
                params.append(pytest.param(group, make, id=f"{group}/{label}"))
    return params


@pytest.mark.parametrize(("group", "make"), _benches())
def test_parse_response_speed(benchmark: Any, group: str, make: Callable[[bytes], Callable[[], Any]]) -> None:
    body, ncalls, _, _ = CASES[group]
    benchmark.group = group
    benchmark.extra_info["bytes"] = len(body)
    benchmark.extra_info["calls"] = ncalls
    benchmark(make(body))


# ---- the bench measures working code -----------------------------------------------------------


@pytest.mark.parametrize("group", list(CASES))
@pytest.mark.parametrize("with_registry", [True, False], ids=["registry", "no-registry"])
def test_every_body_gives_its_calls_and_no_errors(group: str, with_registry: bool) -> None:
    body, ncalls, repaired, _ = CASES[group]
    result = toolmend.parse_response(body, toolmend_registry() if with_registry else None)
    assert result.ok and result.errors == (), [(e.code, e.message) for e in result.errors]
    assert [(c.name, c.arguments) for c in result.calls] == _calls(ncalls)
    assert [c.index for c in result.calls] == list(range(ncalls))
    if repaired:
        assert all(c.repairs for c in result.calls), [c.repairs for c in result.calls]
        assert all("trailing_comma" in {r.kind for r in c.repairs} for c in result.calls)
    else:
        assert not any(c.repairs for c in result.calls)
    expected_source = "hermes" if group.startswith("ollama-text") else "tool_calls"
    assert {c.source for c in result.calls} == {expected_source}
    if group.startswith("ollama-text"):
        assert result.text == "I'll look at the config loader first."
    else:
        assert result.text == ""
        assert [c.id for c in result.calls] == [
            tc["id"] for tc in (orjson.loads(body).get("message") or orjson.loads(body)["choices"][0]["message"])["tool_calls"]
        ]


@pytest.mark.skipif(jsonschema_rs is None, reason="jsonschema_rs is not installed")
@pytest.mark.parametrize("group", [g for g, case in CASES.items() if case[3]])
def test_by_hand_peer_finds_the_same_calls(group: str) -> None:
    body, ncalls, _, _ = CASES[group]
    assert by_hand(body, rs_validators()) == _calls(ncalls)


def test_every_arguments_object_is_100_to_300_bytes_and_schema_valid() -> None:
    reg = toolmend_registry()
    for name, arguments in _CALLS:
        assert 100 <= len(orjson.dumps(arguments)) <= 300, (name, len(orjson.dumps(arguments)))
        assert reg.validate(name, arguments) == arguments
    assert any(len(a.get("content", "")) >= 150 for _, a in _CALLS)


def test_repair_bodies_really_are_broken() -> None:
    body, _, _, _ = CASES["openai-repairs-10"]
    for tool_call in orjson.loads(body)["choices"][0]["message"]["tool_calls"]:
        with pytest.raises(orjson.JSONDecodeError):
            orjson.loads(tool_call["function"]["arguments"])
