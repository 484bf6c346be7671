"""parse_response on the SDKs' own reply objects against the same reply as a dict (pytest-benchmark).

Full run (release build):  python -m pytest benches/bench_sdk_objects.py --benchmark-only --benchmark-group-by=group
Smoke pass (CI):           python -m pytest benches/bench_sdk_objects.py --benchmark-disable   (each once)
Ratios:                    python benches/sdk_report.py

The replies are bench_response's bodies with 1 or 10 calls to read_file, write_file and search (and
a registry of those tools), read into each SDK's reply class with its own ``model_validate``:
openai's ChatCompletion and Responses API Response, ollama's ChatResponse and Anthropic's Message.
In each group, side by side:

    toolmend(object)          parse_response(reply_object, registry): fields read in place
    toolmend(dict)            parse_response(reply_dict, registry): the same reply as a dict
    model_dump+toolmend       parse_response(reply_object.model_dump(mode="json"), registry): what a
                              caller writes when a library takes dicts only
"""

from __future__ import annotations

from functools import partial
from typing import Any, Callable

import orjson
import pytest
from bench_response import COUNTS, _calls, ollama_body, openai_body, toolmend_registry

import toolmend

openai_chat = pytest.importorskip("openai.types.chat")
openai_responses = pytest.importorskip("openai.types.responses")
anthropic_types = pytest.importorskip("anthropic.types")
ollama = pytest.importorskip("ollama")


def anthropic_dict(n: int) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": "I'll look at the config loader first."}]
    content += [{"type": "tool_use", "id": f"toolu_{i:020d}", "name": name, "input": arguments} for i, (name, arguments) in enumerate(_calls(n))]
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude",
        "content": content,
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 812, "output_tokens": 96 * n},
    }


def responses_dict(n: int) -> dict[str, Any]:
    output = [
        {"type": "function_call", "id": f"fc_{i}", "call_id": f"call_{i:024x}", "name": name, "arguments": orjson.dumps(arguments).decode(), "status": "completed"}
        for i, (name, arguments) in enumerate(_calls(n))
    ]
    return {
        "id": "resp_01",
        "object": "response",
        "created_at": 1795428000,
        "model": "gpt",
        "status": "completed",
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "error": None,
        "output": output,
    }


# group -> (reply as a dict, the SDK class that reads it)
REPLIES: dict[str, tuple[dict[str, Any], Any]] = {}
for _n in COUNTS:
    REPLIES[f"openai-{_n}"] = (orjson.loads(openai_body(_n)), openai_chat.ChatCompletion)
    REPLIES[f"ollama-{_n}"] = (orjson.loads(ollama_body(_n)), ollama.ChatResponse)
    REPLIES[f"anthropic-{_n}"] = (anthropic_dict(_n), anthropic_types.Message)
    REPLIES[f"responses-{_n}"] = (responses_dict(_n), openai_responses.Response)


def reply_object(group: str) -> Any:
    reply, cls = REPLIES[group]
    return cls.model_validate(reply)


def _object(group: str) -> Callable[[], Any]:
    return partial(toolmend.parse_response, reply_object(group), toolmend_registry())


def _dict(group: str) -> Callable[[], Any]:
    return partial(toolmend.parse_response, REPLIES[group][0], toolmend_registry())


def _dumped(group: str) -> Callable[[], Any]:
    reply, registry = reply_object(group), toolmend_registry()
    return lambda: toolmend.parse_response(reply.model_dump(mode="json"), registry)


WAYS: dict[str, Callable[[str], Callable[[], Any]]] = {
    "toolmend(object)": _object,
    "toolmend(dict)": _dict,
    "model_dump+toolmend": _dumped,
}


@pytest.mark.parametrize("group", list(REPLIES))
@pytest.mark.parametrize("way", list(WAYS))
def test_sdk_object_speed(benchmark: Any, group: str, way: str) -> None:
    benchmark.group = group
    run = WAYS[way](group)
    run()  # validators built on first use are built before timing
    benchmark(run)


@pytest.mark.parametrize("group", list(REPLIES))
def test_every_way_gives_the_same_calls(group: str) -> None:
    n = int(group.rsplit("-", 1)[1])
    for way in WAYS.values():
        result = way(group)()
        assert result.ok, [(e.code, e.message) for e in result.errors]
        assert [(c.name, c.arguments) for c in result.calls] == _calls(n)
