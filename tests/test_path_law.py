"""Path agreement as a law: for any reply and any split of its stream, parse_response of the whole body, one
ToolCallAccumulator fed the raw stream, and both clients' chat and chat_stream (max_retries=0) over real HTTP, agree on the calls (name, arguments and
source, in order, repeats kept; ids where the reply sent them), the text and the reasoning.

Replies are drawn from wire calls (arguments with integers past 64 bits, floats, unicode, and repairable
faults) and content pieces (prose with quotes, calls written in the text, think blocks in several spellings,
a lone ``</think>``, inline code quoting a tag, calls written as bare JSON or a pythonic list). A stream knows
a call written without a marker only once the text has ended: such calls come after the marked ones there, so
the two kinds are compared each in its own order.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ollama_server as ol
import openai_server as oa
import toolmend
from ollama_server import Reply, ScriptedOllama
from toolmend.client import OllamaClient, OpenAICompatibleClient
from toolmend.config import RetryConfig
from wires import instant

PIECES = [
    "Sure. ",
    "I'll read 'notes' and \"todo\". ",
    "`<tool_call>` is the tag. ",
    '<tool_call>{"name": "read_file", "arguments": {"path": "a.txt"}}</tool_call>',
    "<tool_call>{'name': 'read_file', 'arguments': {'path': 'b.txt',}}</tool_call>",
    '<think>maybe <tool_call>{"name": "delete_file", "arguments": {}}</tool_call></think>',
    "[THINK]hm[/THINK]",
    "<thinking>let me see</thinking>",
    "</think>",
    "Done.\n",
    "é€😀 ",
    '{"name": "read_file", "arguments": {"path": "c.txt"}}',
    "[read_file(path='d.txt', n=18446744073709551617)]",
    # Quotations, echoes, values and mentions: never calls, on any path (docs/repair.md).
    'He wrote "<tool_call>{"name": "delete_file", "arguments": {}}</tool_call>" there. ',
    '<!-- <tool_call>{"name": "delete_file", "arguments": {}}</tool_call> -->',
    "Use <code>x</code> and the <tool_response> tag. ",
    'Observation: <tool_call>{"name": "delete_file", "arguments": {}}</tool_call>\n\n',
    "[write_file(path='f.txt', content='<tool_call>{\"name\": \"delete_file\", \"arguments\": {}}</tool_call>')]",
    'Here:\n```json\n{"name": "read_file", "arguments": {"path": "e.txt"}}\n```\n',
    "Use ``` for code. ",
]

KEYS = st.sampled_from(["path", "n", "x", "é", "deep"])
SCALARS = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=6),
    st.booleans(),
    st.none(),
)
ARGUMENTS = st.dictionaries(KEYS, st.one_of(SCALARS, st.lists(SCALARS, max_size=2)), max_size=3)


@st.composite
def replies(draw: Any) -> dict[str, Any]:
    calls = []
    for i in range(draw(st.integers(0, 3))):
        arguments = draw(ARGUMENTS)
        text = json.dumps(arguments, ensure_ascii=False)
        if arguments and draw(st.booleans()):
            text = text[:-1] + ",}"  # a trailing comma: mended on every path
        calls.append({"id": f"call_{i}", "name": draw(st.sampled_from(["f", "g"])), "arguments": arguments, "text": text})
    content = "".join(draw(st.lists(st.sampled_from(PIECES), max_size=6)))
    return {"calls": calls, "content": content, "step": draw(st.integers(1, 9))}


def _pieces(text: str, step: int) -> list[str]:
    return [text[i : i + step] for i in range(0, len(text), step)] or [""]


def _openai(reply: dict[str, Any], stream: bool) -> Reply:
    calls = [{"id": c["id"], "name": c["name"], "arguments": c["text"]} for c in reply["calls"]]
    if not stream:
        return oa.completion(*calls, content=reply["content"])
    return oa.streamed(*calls, text=_pieces(reply["content"], reply["step"]), pieces=reply["step"])


def _ollama(reply: dict[str, Any], stream: bool) -> Reply:
    # Ollama sends arguments as objects; a fault can only be in text calls.
    calls = [{"id": c["id"], "name": c["name"], "arguments": c["arguments"]} for c in reply["calls"]]
    if not stream:
        return ol.chat_reply(*calls, content=reply["content"])
    return Reply(lines=ol.stream_lines(*calls, text=_pieces(reply["content"], reply["step"])))


def _seen(calls: Any) -> list[tuple[Any, ...]]:
    """Calls as compared: a streamed call's source is "stream" where a whole reply's is "tool_calls"; ids where
    the reply sent them (text calls get fresh ones)."""
    out = []
    for c in calls:
        wire = str(c.source) in ("tool_calls", "stream")
        out.append((c.name, c.arguments, "wire" if wire else str(c.source), c.id if wire else None))
    # The wire's calls, then those written in the text: marked ones, then unmarked ones (stable).
    return sorted(out, key=lambda seen: {"wire": 0, "bare_json": 2, "pythonic": 2}.get(seen[2], 1))


def _through_clients(provider: str, reply: dict[str, Any]) -> list[Any]:
    make = _openai if provider == "openai" else _ollama

    def script(payload: Any) -> Reply:
        return make(reply, bool(payload.get("stream")))

    async def go() -> list[Any]:
        out = []
        with ScriptedOllama(script) as server:
            config = RetryConfig(max_retries=0)
            client: Any = (
                OpenAICompatibleClient(server.url + "/v1", "m", config=config, sleep=instant)
                if provider == "openai"
                else OllamaClient(server.url, "m", config=config, sleep=instant)
            )
            async with client:
                out.append(await client.chat([{"role": "user", "content": "go"}]))
                events = [e async for e in client.chat_stream([{"role": "user", "content": "go"}])]
                out.append(events[-1].result)
        return out

    return asyncio.run(go())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reply=replies(), provider=st.sampled_from(["openai", "ollama"]))
def test_every_path_reads_a_reply_alike(reply: dict[str, Any], provider: str) -> None:
    body = (_openai if provider == "openai" else _ollama)(reply, False).body
    whole = toolmend.parse_response(json.dumps(body, ensure_ascii=False).encode())
    assert whole.ok, whole.errors
    expected = (_seen(whole.calls), whole.text, whole.reasoning)
    for result in _through_clients(provider, reply):
        assert (_seen(result.tool_calls), result.text, result.reasoning) == expected
    # One ToolCallAccumulator fed the raw stream, cut every `step` bytes, reads the same calls, text and reasoning.
    stream = (_openai if provider == "openai" else _ollama)(reply, True)
    raw = b"".join(line if isinstance(line, bytes) else json.dumps(line).encode() + b"\n" for line in stream.lines or [])
    acc = toolmend.ToolCallAccumulator()
    for at in range(0, len(raw), reply["step"]):
        acc.feed(raw[at : at + reply["step"]])
    fed = acc.finish()
    assert fed.ok, fed.errors
    assert (_seen(fed.calls), fed.text, fed.reasoning) == expected


# ---- any JSON type in any field ------------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70), st.floats(allow_nan=False), st.text(max_size=5)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)),
    max_leaves=6,
)
#: The places in an OpenAI chunk and an Ollama line where a reader looks.
FIELDS = ["content", "reasoning_content", "thinking", "tool_calls", "call", "index", "id", "name", "arguments", "function", "finish_reason"]


def _odd_chunk(field: str, value: Any, ollama: bool) -> dict[str, Any]:
    call: dict[str, Any] = {"index": 0, "id": "c", "function": {"name": "f", "arguments": "{}"}}
    delta: dict[str, Any] = {"content": "hi", "tool_calls": [call]}
    if field in ("index", "id"):
        call[field] = value
    elif field in ("name", "arguments"):
        call["function"][field] = value
    elif field == "function":
        call["function"] = value
    elif field == "call":
        delta["tool_calls"] = [value]
    elif field != "finish_reason":
        delta[field] = value
    if ollama:
        return {"message": delta, "done": field == "finish_reason", "done_reason": value if field == "finish_reason" else None}
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": value if field == "finish_reason" else None}]}


@settings(max_examples=300, deadline=None)
@given(field=st.sampled_from(FIELDS), value=JSON_VALUES, ollama=st.booleans())
def test_any_json_type_in_any_field_is_read_or_a_coded_error(field: str, value: Any, ollama: bool) -> None:
    chunk = _odd_chunk(field, value, ollama)
    acc = toolmend.ToolCallAccumulator()
    acc.feed(chunk)
    line = json.dumps(chunk).encode()
    acc.feed((line + b"\n") if ollama else b"data: " + line + b"\n\n")
    for result in (acc.finish(), toolmend.parse_response(chunk), toolmend.parse_response(line)):
        assert all(e.code.startswith("TLP-") or e.code.startswith("TSR-") for e in result.errors)
        assert isinstance(result.text, str) and isinstance(result.reasoning, str)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(field=st.sampled_from(FIELDS), value=JSON_VALUES, ollama=st.booleans())
def test_any_json_type_in_any_field_of_a_stream_never_escapes_the_client(field: str, value: Any, ollama: bool) -> None:
    chunk = _odd_chunk(field, value, ollama)
    if ollama:
        lines: list[Any] = [chunk, {"message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop"}]
        reply = Reply(lines=lines)
    else:
        reply = Reply(lines=[oa.event(chunk), oa.event(oa.chunk({}, "stop")), oa.event(b"[DONE]")], content_type="text/event-stream")

    async def go() -> None:
        with ScriptedOllama([reply]) as server:
            config = RetryConfig(max_retries=0, model_http_retries=0)
            client: Any = (
                OllamaClient(server.url, "m", config=config, sleep=instant)
                if ollama
                else OpenAICompatibleClient(server.url + "/v1", "m", config=config, sleep=instant)
            )
            async with client:
                try:
                    async for _ in client.chat_stream([{"role": "user", "content": "go"}]):
                        pass
                except toolmend.ToolmendError as e:
                    assert getattr(e, "code", None) is None or str(e.code).startswith("TLP-") or str(e.code).startswith("TSR-")

    asyncio.run(go())
