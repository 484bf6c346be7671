"""The mending transports under the real SDKs (openai on httpx2, ollama on httpx), against loopback servers that
send broken calls: whole and streamed replies come back mended, what stays invalid is marked, the rest passes."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import httpx2
import ollama
import openai
import pytest
from ollama_server import Reply, ScriptedOllama, chat_reply, stream_lines
from openai_server import ScriptedOpenAI, completion, streamed

import toolmend
from toolmend import AsyncMendingTransport, MendingTransport
from toolmend.mending import ERRORS_HEADER

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        },
    }
]
MESSAGES = [{"role": "user", "content": "read a.txt"}]
BROKEN = "{'path': 'a.txt',}"
IN_TEXT = 'Sure.\n<tool_call>{"name": "read_file", "arguments": {"path": "a.txt",}}</tool_call>'


def _openai_sync(server: ScriptedOllama, **kw: Any) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url + "/v1", api_key="x", max_retries=0, http_client=httpx2.Client(transport=MendingTransport(**kw)))


def test_openai_sdk_gets_repaired_arguments_whole() -> None:
    with ScriptedOpenAI([completion({"name": "read_file", "arguments": BROKEN})]) as server:
        client = _openai_sync(server)
        reply = client.chat.completions.with_raw_response.create(model="m", messages=MESSAGES, tools=TOOLS)
        (call,) = reply.parse().choices[0].message.tool_calls
        assert call.function.name == "read_file" and json.loads(call.function.arguments) == {"path": "a.txt"}
        assert reply.headers.get("x-toolmend-mended") == "1"


def test_openai_sdk_gets_calls_written_in_content_as_tool_calls() -> None:
    with ScriptedOpenAI([completion(content=IN_TEXT)]) as server:
        message = _openai_sync(server).chat.completions.create(model="m", messages=MESSAGES, tools=TOOLS).choices[0]
        assert message.finish_reason == "tool_calls"
        assert message.message.content == "Sure."
        assert [json.loads(c.function.arguments) for c in message.message.tool_calls] == [{"path": "a.txt"}]


def test_what_stays_invalid_is_passed_on_and_marked() -> None:
    bad = completion({"name": "read_file", "arguments": {"path": 7}})
    with ScriptedOpenAI([bad]) as server:
        reply = _openai_sync(server).chat.completions.with_raw_response.create(model="m", messages=MESSAGES, tools=TOOLS)
        assert reply.headers[ERRORS_HEADER] == "TSR-004@0"
        assert json.loads(reply.parse().choices[0].message.tool_calls[0].function.arguments) == {"path": 7}


def test_reflect_asks_the_upstream_again_with_the_exact_error() -> None:
    script = [completion({"name": "read_file", "arguments": {"path": 7}}), completion({"name": "read_file", "arguments": {"path": "a.txt"}})]
    with ScriptedOpenAI(script) as server:
        reply = _openai_sync(server, reflect=1).chat.completions.with_raw_response.create(model="m", messages=MESSAGES, tools=TOOLS)
        assert ERRORS_HEADER not in reply.headers
        assert json.loads(reply.parse().choices[0].message.tool_calls[0].function.arguments) == {"path": "a.txt"}
        retried = server.requests[1]["json"]["messages"]
        assert len(retried) > len(MESSAGES) and "TSR-004" in json.dumps(retried)


def test_a_reflection_answers_each_refused_call_by_the_id_the_model_gave_it() -> None:
    calls = [{"name": "read_file", "arguments": {"path": "a.txt"}, "id": "call_ok"}, {"name": "read_file", "arguments": {"path": 7}, "id": "call_bad"}]
    script = [completion(*calls), completion({"name": "read_file", "arguments": {"path": "b.txt"}})]
    with ScriptedOpenAI(script) as server:
        _openai_sync(server, reflect=1).chat.completions.create(model="m", messages=MESSAGES, tools=TOOLS)
        added = server.requests[1]["json"]["messages"][len(MESSAGES) :]
    assert [c["id"] for c in added[0]["tool_calls"]] == ["call_bad"]
    assert [(m["role"], m["tool_call_id"]) for m in added[1:]] == [("tool", "call_bad")]


def test_a_streamed_call_handed_on_invalid_keeps_the_id_the_model_gave_it() -> None:
    calls = [{"name": "read_file", "arguments": BROKEN, "id": "call_ok"}, {"name": "read_file", "arguments": '{"path": 7}', "id": "call_bad"}]
    with ScriptedOpenAI([streamed(*calls)]) as server:
        chunks = list(_openai_sync(server).chat.completions.create(model="m", messages=MESSAGES, tools=TOOLS, stream=True))
    sent = [tc for c in chunks if c.choices for tc in c.choices[0].delta.tool_calls or []]
    assert [(tc.id, json.loads(tc.function.arguments)) for tc in sent] == [("call_ok", {"path": "a.txt"}), ("call_bad", {"path": 7})]


def test_each_refused_call_keeps_its_own_id_in_every_choice() -> None:
    def entry(i: str, **index: int) -> dict[str, Any]:
        return {"id": i, "type": "function", "function": {"name": "read_file", "arguments": '{"path": 7}'}, **index}

    body = {"choices": [
        {"index": 0, "message": {"tool_calls": [entry("a"), entry("b", index=5)]}},
        {"index": 1, "message": {"tool_calls": [entry("c")]}},
    ]}
    registry = toolmend.ToolRegistry.from_tools(TOOLS)
    errors = toolmend.parse_response(body, registry).errors
    assert [(e.choice, e.id) for e in errors] == [(0, "a"), (0, "b"), (1, "c")]
    ollama_body = {"message": {"tool_calls": [{"id": "x", "function": {"index": 3, "name": "read_file", "arguments": {"path": 7}}}]}}
    (error,) = toolmend.parse_response(ollama_body, registry).errors
    assert (error.id, error.index) == ("x", 3)


def test_openai_sdk_stream_is_mended_and_keeps_flowing() -> None:
    reply = streamed({"name": "read_file", "arguments": BROKEN, "id": "call_a"}, text=["Let me ", "look."])
    with ScriptedOpenAI([reply]) as server:
        stream = _openai_sync(server).chat.completions.create(model="m", messages=MESSAGES, tools=TOOLS, stream=True, stream_options={"include_usage": True})
        chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    calls = [tc for c in chunks if c.choices for tc in c.choices[0].delta.tool_calls or []]
    finish = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert text == "Let me look."
    assert [(tc.id, tc.function.name, json.loads(tc.function.arguments)) for tc in calls] == [("call_a", "read_file", {"path": "a.txt"})]
    assert finish == ["tool_calls"] and chunks[-1].usage is not None and chunks[-1].usage.total_tokens == 150


def test_a_call_written_in_streamed_content_reaches_the_sdk_as_a_call() -> None:
    pieces = [IN_TEXT[i : i + 7] for i in range(0, len(IN_TEXT), 7)]
    with ScriptedOpenAI([streamed(text=pieces)]) as server:
        chunks = list(_openai_sync(server).chat.completions.create(model="m", messages=MESSAGES, tools=TOOLS, stream=True))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    calls = [tc for c in chunks if c.choices for tc in c.choices[0].delta.tool_calls or []]
    assert text.strip() == "Sure." and "<tool_call>" not in text
    assert [json.loads(tc.function.arguments) for tc in calls] == [{"path": "a.txt"}]


def test_async_openai_sdk_through_the_async_transport() -> None:
    async def main() -> Any:
        with ScriptedOpenAI([completion({"name": "read_file", "arguments": BROKEN})]) as server:
            client = openai.AsyncOpenAI(base_url=server.url + "/v1", api_key="x", max_retries=0, http_client=httpx2.AsyncClient(transport=AsyncMendingTransport()))
            reply = await client.chat.completions.create(model="m", messages=MESSAGES, tools=TOOLS)
            await client.close()
            return reply

    call = asyncio.run(main()).choices[0].message.tool_calls[0]
    assert json.loads(call.function.arguments) == {"path": "a.txt"}


def test_ollama_sdk_whole_and_streamed_on_httpx() -> None:
    whole = chat_reply(content=IN_TEXT)
    lines = stream_lines(text=[IN_TEXT[:20], IN_TEXT[20:]])
    with ScriptedOllama([whole, Reply(lines=lines)]) as server:
        client = ollama.Client(host=server.url, transport=MendingTransport())
        reply = client.chat(model="m", messages=MESSAGES, tools=TOOLS)
        assert [(c.function.name, dict(c.function.arguments)) for c in reply.message.tool_calls] == [("read_file", {"path": "a.txt"})]
        assert reply.message.content == "Sure."
        parts = list(client.chat(model="m", messages=MESSAGES, tools=TOOLS, stream=True))
        calls = [(c.function.name, dict(c.function.arguments)) for p in parts for c in p.message.tool_calls or []]
        assert calls == [("read_file", {"path": "a.txt"})]
        assert "".join(p.message.content or "" for p in parts).strip() == "Sure." and parts[-1].done


def test_an_invalid_streamed_call_is_marked_in_the_stream_not_dropped() -> None:
    with ScriptedOllama([Reply(lines=stream_lines({"name": "read_file", "arguments": {"path": 7}}))]) as server:
        with httpx.Client(transport=MendingTransport()) as http:
            body = http.post(server.url + "/api/chat", json={"model": "m", "messages": MESSAGES, "tools": TOOLS}).content
    marks = [json.loads(line)["toolmend_error"] for line in body.splitlines() if b"toolmend_error" in line]
    assert [(m["code"], m["tool_name"]) for m in marks] == [("TSR-004", "read_file")]


def test_requests_it_does_not_mend_pass_through_unchanged() -> None:
    with ScriptedOllama([Reply(body={"models": []}), Reply(status=500, body={"error": "boom"})]) as server:
        with httpx.Client(transport=MendingTransport()) as http:
            assert http.post(server.url + "/api/embed", json={"model": "m", "input": "x"}).json() == {"models": []}
            broken = http.post(server.url + "/api/chat", json={"model": "m", "messages": MESSAGES})
            assert broken.status_code == 500 and broken.json() == {"error": "boom"}


def test_request_tools_are_compiled_once_per_distinct_list() -> None:
    mender = toolmend.mending.Mender()
    first = mender.registry_for({"tools": TOOLS})
    assert first is not None and mender.registry_for({"tools": json.loads(json.dumps(TOOLS))}) is first
    assert mender.registry_for({"tools": []}) is None and mender.registry_for({}) is None


@pytest.mark.parametrize("step", [1, 5, 64])
def test_a_stream_split_anywhere_is_mended_alike(step: int) -> None:
    from openai_server import sse_lines

    raw = b"".join(sse_lines({"name": "read_file", "arguments": BROKEN, "id": "c"}, text=["Hi ", "there."]))
    mender = toolmend.mending.Mender(toolmend.ToolRegistry.from_tools(TOOLS))
    whole = mender.stream("openai", mender.registry)
    expected = whole.feed(raw) + whole.end()
    split = mender.stream("openai", mender.registry)
    got = b"".join(split.feed(raw[i : i + step]) for i in range(0, len(raw), step)) + split.end()
    assert got == expected and b"[DONE]" in got


@pytest.mark.parametrize("stream", [False, True])
def test_each_mended_call_is_a_seed_record(stream: bool, caplog: pytest.LogCaptureFixture) -> None:
    """The transport's calls are logged as a reply read alone is (toolmend._call_log): one INFO record each."""
    call = {"name": "read_file", "arguments": BROKEN, "id": "call_a"}
    reply = streamed(call) if stream else completion(call)
    with caplog.at_level("INFO", logger="toolmend"), ScriptedOpenAI([reply]) as server:
        created = _openai_sync(server).chat.completions.create(model="m", messages=MESSAGES, tools=TOOLS, stream=stream)
        if stream:
            list(created)
    (record,) = [r for r in caplog.records if hasattr(r, "parse_result")]
    assert (record.tool_name, record.parse_result, record.repair_applied) == (  # type: ignore[attr-defined]
        "read_file", "repaired", ["single_quotes", "single_quotes", "trailing_comma"]
    )


def test_a_request_s_tools_are_read_from_its_bytes_once_per_distinct_list() -> None:
    mender = toolmend.mending.Mender()
    raw = json.dumps(TOOLS).encode()
    first = mender._registry_for_raw(raw)
    assert first is not None and mender._registry_for_raw(raw) is first and len(mender._cache) == 1
    assert mender._registry_for_raw(b"") is None and mender._registry_for_raw(b"null") is None
    # A list the registry refuses is cached as no registry: calls are then mended but not validated.
    assert mender._registry_for_raw(b'[{"type": "function", "function": {}}]') is None and len(mender._cache) == 2


INVALID_IN_TEXT = 'Sure.\n<tool_call>{"name": "read_file", "arguments": {"path": 7}}</tool_call>'


def test_a_refused_call_written_in_streamed_content_goes_on_as_text_as_it_does_whole() -> None:
    """No path hands the SDK a call the model only wrote in its text and toolmend refused: the whole reply keeps it
    in content, and so does the stream (after the text already sent), with no tool_calls entry and no tool_calls
    finish."""
    pieces = [INVALID_IN_TEXT[i : i + 7] for i in range(0, len(INVALID_IN_TEXT), 7)]
    with ScriptedOpenAI([completion(content=INVALID_IN_TEXT), streamed(text=pieces)]) as server:
        client = _openai_sync(server)
        whole = client.chat.completions.with_raw_response.create(model="m", messages=MESSAGES, tools=TOOLS)
        chunks = list(client.chat.completions.create(model="m", messages=MESSAGES, tools=TOOLS, stream=True))
    choice = whole.parse().choices[0]
    assert whole.headers[ERRORS_HEADER].startswith("TSR-004") and not choice.message.tool_calls
    assert choice.message.content == INVALID_IN_TEXT
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    calls = [tc for c in chunks if c.choices for tc in c.choices[0].delta.tool_calls or []]
    finish = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert calls == [] and finish == ["stop"]
    assert text.startswith("Sure.") and text.endswith('<tool_call>{"name": "read_file", "arguments": {"path": 7}}</tool_call>')


def test_a_refused_call_written_in_ollama_streamed_content_is_marked_and_kept_as_text() -> None:
    lines = stream_lines(text=[INVALID_IN_TEXT[:20], INVALID_IN_TEXT[20:]])
    with ScriptedOllama([Reply(lines=lines)]) as server:
        with httpx.Client(transport=MendingTransport()) as http:
            body = http.post(server.url + "/api/chat", json={"model": "m", "messages": MESSAGES, "tools": TOOLS}).content
    parsed = [json.loads(line) for line in body.splitlines() if line.strip()]
    marks = [p["toolmend_error"] for p in parsed if "toolmend_error" in p]
    assert [(m["code"], m["tool_name"]) for m in marks] == [("TSR-004", "read_file")]
    text = "".join((p.get("message") or {}).get("content") or "" for p in parsed)
    assert "<tool_call>" in text and not any((p.get("message") or {}).get("tool_calls") for p in parsed)
