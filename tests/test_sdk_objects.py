"""Replies as the SDKs hand them over: openai's ChatCompletion and Responses API objects, ollama's
ChatResponse, Anthropic's Message and LangChain's AIMessage, each built with the package's own classes
(no network), go into parse_response and the calls come out; provider error bodies and objects that
are no reply are coded errors, never ``ok`` with calls lost."""

from __future__ import annotations

import copy
import json
from typing import Any, Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolmend
from toolmend import parse_response

anthropic_types = pytest.importorskip("anthropic.types")
openai_chat = pytest.importorskip("openai.types.chat")
openai_responses = pytest.importorskip("openai.types.responses")
ollama = pytest.importorskip("ollama")
lc_messages = pytest.importorskip("langchain_core.messages")

ARGS = {"path": "notes/a.txt", "lines": [1, 2, 3]}


def registry() -> toolmend.ToolRegistry:
    reg = toolmend.ToolRegistry()
    reg.register(
        "read_file",
        {
            "type": "object",
            "properties": {"path": {"type": "string"}, "lines": {"type": "array", "items": {"type": "integer"}}},
            "required": ["path"],
        },
    )
    return reg


def openai_completion(*arguments: str, n_text: str | None = None) -> Any:
    tool_calls = [
        openai_chat.ChatCompletionMessageFunctionToolCall(
            id=f"call_{i}",
            type="function",
            function={"name": "read_file", "arguments": a},
        )
        for i, a in enumerate(arguments)
    ]
    message = openai_chat.ChatCompletionMessage(role="assistant", content=n_text, tool_calls=tool_calls or None)
    choice = openai_chat.chat_completion.Choice(index=0, finish_reason="tool_calls", message=message)
    return openai_chat.ChatCompletion(id="cmpl", choices=[choice], created=0, model="m", object="chat.completion")


def ollama_reply() -> Any:
    call = ollama.Message.ToolCall(function=ollama.Message.ToolCall.Function(name="read_file", arguments=dict(ARGS)))
    return ollama.ChatResponse(model="qwen3", message=ollama.Message(role="assistant", content="", tool_calls=[call]), done=True)


def anthropic_reply() -> Any:
    return anthropic_types.Message(
        id="msg_1",
        type="message",
        role="assistant",
        model="claude",
        content=[
            anthropic_types.TextBlock(type="text", text="Let me read it."),
            anthropic_types.ToolUseBlock(type="tool_use", id="toolu_1", name="read_file", input=dict(ARGS)),
        ],
        stop_reason="tool_use",
        stop_sequence=None,
        usage=anthropic_types.Usage(input_tokens=1, output_tokens=1),
    )


def responses_reply() -> Any:
    return openai_responses.Response.model_validate(
        {
            "id": "resp_1",
            "object": "response",
            "created_at": 0,
            "model": "gpt",
            "status": "completed",
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "error": None,
            "output": [
                {
                    "type": "message",
                    "id": "msg_1",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": "Reading.", "annotations": []}],
                },
                {
                    "type": "function_call",
                    "id": "fc_1",
                    "call_id": "call_42",
                    "name": "read_file",
                    "arguments": json.dumps(ARGS),
                    "status": "completed",
                },
            ],
        }
    )


def langchain_reply() -> Any:
    return lc_messages.AIMessage(content="", tool_calls=[{"name": "read_file", "args": dict(ARGS), "id": "lc_1"}])


SDK_REPLIES: dict[str, tuple[Callable[[], Any], str, str]] = {
    # name: (reply, expected id prefix, expected text)
    "openai": (lambda: openai_completion(json.dumps(ARGS)), "call_0", ""),
    "ollama": (ollama_reply, "call_", ""),
    "anthropic": (anthropic_reply, "toolu_1", "Let me read it."),
    "responses": (responses_reply, "call_42", "Reading."),
    "langchain": (langchain_reply, "lc_1", ""),
}


@pytest.mark.parametrize("sdk", sorted(SDK_REPLIES))
def test_an_sdk_reply_object_gives_its_call(sdk: str) -> None:
    make, call_id, text = SDK_REPLIES[sdk]
    reply = make()
    before = reply.model_dump()
    result = parse_response(reply, registry())
    assert result.ok, result.errors
    (call,) = result.calls
    assert (call.name, call.arguments, call.choice) == ("read_file", ARGS, 0)
    assert call.id.startswith(call_id)
    assert result.text == text
    # The object given is neither changed nor needed afterwards.
    assert reply.model_dump() == before


@pytest.mark.parametrize("sdk", sorted(SDK_REPLIES))
def test_the_object_and_its_dump_give_the_same_calls(sdk: str) -> None:
    reply = SDK_REPLIES[sdk][0]()
    from_object = parse_response(reply)
    from_dict = parse_response(reply.model_dump(mode="json"))
    assert [(c.name, c.arguments, c.index) for c in from_object.calls] == [(c.name, c.arguments, c.index) for c in from_dict.calls]
    assert from_object.text == from_dict.text


def test_broken_arguments_in_an_sdk_object_are_mended() -> None:
    result = parse_response(openai_completion("{'path': 'notes/a.txt', 'lines': [1, 2, 3],}"), registry())
    (call,) = result.calls
    assert call.arguments == ARGS
    assert {r.kind for r in call.repairs} >= {"single_quotes", "trailing_comma"}


def test_langchain_invalid_tool_calls_are_mended_not_dropped() -> None:
    reply = lc_messages.AIMessage(
        content="",
        invalid_tool_calls=[{"name": "read_file", "args": '{"path": "notes/a.txt", "lines": [1, 2, 3]', "id": "bad_1", "error": "JSON"}],
    )
    (call,) = parse_response(reply, registry()).calls
    assert (call.id, call.arguments) == ("bad_1", ARGS)


def test_an_ollama_message_object_on_its_own() -> None:
    message = ollama_reply().message
    (call,) = parse_response(message).calls
    assert call.arguments == ARGS


def test_every_choice_is_read_and_each_call_names_its_choice() -> None:
    first = openai_completion(json.dumps(ARGS))
    second = copy.deepcopy(first.choices[0])
    second.index = 1
    second.message.tool_calls[0].function.arguments = json.dumps({"path": "b.txt"})
    first.choices.append(second)
    result = parse_response(first, registry())
    assert [(c.choice, c.arguments["path"]) for c in result.calls] == [(0, "notes/a.txt"), (1, "b.txt")]
    # Alternatives, not repeats: the same id in both choices is kept in each.
    assert result.calls[0].id == result.calls[1].id == "call_0"
    again = toolmend.ToolCall("read_file", {"path": "b.txt"}, id="call_0", choice=1)
    assert again == result.calls[1] and again != toolmend.ToolCall("read_file", {"path": "b.txt"}, id="call_0")
    assert "choice=1" in repr(result.calls[1]) and "choice" not in repr(result.calls[0])


def test_an_error_in_one_choice_says_which() -> None:
    body = {
        "choices": [
            {"index": 0, "message": {"tool_calls": [{"function": {"name": "read_file", "arguments": json.dumps(ARGS)}}]}},
            {"index": 1, "message": {"tool_calls": [{"function": {"name": "read_file", "arguments": "{}"}}]}},
        ]
    }
    result = parse_response(body, registry())
    assert [c.choice for c in result.calls] == [0]
    (error,) = result.errors
    assert (error.code, error.choice) == ("TSR-003", 1)


@pytest.mark.parametrize(
    "body, said",
    [
        ({"error": "model 'qwen9' not found, try pulling it first"}, "model 'qwen9' not found"),
        ({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}, "Rate limit reached"),
        ({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, "Overloaded"),
        ({"object": "error", "message": "The model `x` does not exist.", "code": 404}, "does not exist"),
        (b'{"error": "unexpected server error"}', "unexpected server error"),
    ],
)
def test_a_provider_error_body_is_a_coded_error_with_its_message(body: Any, said: str) -> None:
    result = parse_response(body)
    assert not result.ok and result.calls == ()
    (error,) = result.errors
    assert error.code == "TLP-011" and said in error.message


def test_a_failed_responses_object_is_a_provider_error() -> None:
    reply = responses_reply()
    failed = reply.model_copy(update={"status": "failed", "output": [], "error": {"code": "server_error", "message": "boom"}})
    (error,) = parse_response(failed).errors
    assert error.code == "TLP-011" and "boom" in error.message


@pytest.mark.parametrize("body", [{"answer": 42}, {"data": [1, 2]}, [1, 2], 7, None])
def test_an_object_that_is_no_reply_is_refused_not_ok(body: Any) -> None:
    result = parse_response(body)
    assert not result.ok and result.calls == ()
    assert [e.code for e in result.errors] == ["TLP-009"]


def test_text_that_is_a_bare_json_object_is_still_read_as_written_text() -> None:
    # A model may answer with nothing but a call as JSON: given as text, it is the model's text.
    result = parse_response('{"name": "read_file", "arguments": {"path": "a"}}')
    assert [c.name for c in result.calls] == ["read_file"]
    assert parse_response('{"answer": 42}').ok


def test_a_text_only_answer_is_ok_with_no_calls() -> None:
    reply = openai_completion(n_text="It is sunny.")
    result = parse_response(reply)
    assert result.ok and result.calls == () and result.text == "It is sunny."


# Every shape a call can come in, wrapped around one call.
SHAPES: list[Callable[[str, dict[str, Any]], Any]] = [
    lambda n, a: {"message": {"tool_calls": [{"function": {"name": n, "arguments": a}}]}},
    lambda n, a: {"choices": [{"message": {"tool_calls": [{"id": "c", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}]}}]},
    lambda n, a: {"output": [{"type": "function_call", "call_id": "c", "name": n, "arguments": json.dumps(a)}]},
    lambda n, a: {"type": "message", "role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": n, "input": a}]},
    lambda n, a: {"content": "", "tool_calls": [{"name": n, "args": a, "id": "l"}]},
    lambda n, a: {"name": n, "arguments": a},
    lambda n, a: {"function": {"name": n, "arguments": a}},
    lambda n, a: {"tool_calls": [{"function": {"name": n, "arguments": json.dumps(a)}}]},
]

json_scalars = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=20)
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(
    shape=st.sampled_from(range(len(SHAPES))),
    name=st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,40}", fullmatch=True),
    arguments=st.dictionaries(st.text(max_size=10), json_values, max_size=5),
    as_text=st.booleans(),
)
def test_any_supported_shape_gives_its_call(shape: int, name: str, arguments: dict[str, Any], as_text: bool) -> None:
    body = SHAPES[shape](name, arguments)
    result = parse_response(json.dumps(body) if as_text else body)
    assert result.ok, result.errors
    assert [(c.name, c.arguments) for c in result.calls] == [(name, arguments)]


@settings(max_examples=200, deadline=None)
@given(body=st.dictionaries(st.sampled_from(["choices", "message", "output", "content", "tool_calls", "error", "role", "name", "function", "x"]), json_values, max_size=4))
def test_any_dict_gives_calls_text_or_coded_errors(body: dict[str, Any]) -> None:
    result = parse_response(body)
    assert result.ok == (result.errors == ())
    for error in result.errors:
        assert error.code in toolmend.ERROR_CODES


# Streams: the SDKs' chunk and event objects, and decoded SSE payloads, into the accumulator.


def openai_chunks() -> list[Any]:
    pieces = ['{"path": "no', 'tes/a.txt", "lin', 'es": [1, 2, 3]}']
    chunks = [
        {"index": 0, "id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": ""}},
        *({"index": 0, "function": {"arguments": p}} for p in pieces),
    ]
    out = [
        openai_chat.ChatCompletionChunk.model_validate(
            {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": [{"index": 0, "delta": {"tool_calls": [c]}, "finish_reason": None}]}
        )
        for c in chunks
    ]
    out.append(
        openai_chat.ChatCompletionChunk.model_validate(
            {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}
        )
    )
    return out


def anthropic_events() -> list[Any]:
    raw = [
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Reading."}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": '{"path": "notes/a.txt", '}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": '"lines": [1, 2, 3]}'}},
        {"type": "content_block_stop", "index": 1},
        {"type": "message_stop"},
    ]
    kinds = {
        "content_block_start": anthropic_types.RawContentBlockStartEvent,
        "content_block_delta": anthropic_types.RawContentBlockDeltaEvent,
        "content_block_stop": anthropic_types.RawContentBlockStopEvent,
        "message_stop": anthropic_types.RawMessageStopEvent,
    }
    return [kinds[e["type"]].model_validate(e) for e in raw]


def responses_events() -> list[Any]:
    item = {"type": "function_call", "id": "fc_1", "call_id": "call_42", "name": "read_file", "arguments": "", "status": "in_progress"}
    done = {**item, "arguments": json.dumps(ARGS), "status": "completed"}
    return [
        openai_responses.ResponseOutputItemAddedEvent.model_validate({"type": "response.output_item.added", "output_index": 0, "item": item, "sequence_number": 1}),
        openai_responses.ResponseFunctionCallArgumentsDeltaEvent.model_validate(
            {"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 0, "delta": json.dumps(ARGS)[:10], "sequence_number": 2}
        ),
        openai_responses.ResponseFunctionCallArgumentsDeltaEvent.model_validate(
            {"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 0, "delta": json.dumps(ARGS)[10:], "sequence_number": 3}
        ),
        openai_responses.ResponseOutputItemDoneEvent.model_validate({"type": "response.output_item.done", "output_index": 0, "item": done, "sequence_number": 4}),
    ]


def ollama_parts() -> list[Any]:
    return [
        ollama.ChatResponse(model="q", message=ollama.Message(role="assistant", content="Reading."), done=False),
        ollama_reply(),
    ]


STREAMS: dict[str, Callable[[], list[Any]]] = {
    "openai": openai_chunks,
    "anthropic": anthropic_events,
    "responses": responses_events,
    "ollama": ollama_parts,
}


@pytest.mark.parametrize("sdk", sorted(STREAMS))
def test_sdk_stream_objects_assemble_the_call(sdk: str) -> None:
    acc = toolmend.ToolCallAccumulator(registry())
    events = [e for chunk in STREAMS[sdk]() for e in acc.feed(chunk)]
    calls = [e for e in events if e.kind in ("started", "name", "arguments", "completed", "failed")]
    assert calls and calls[0].kind == "started"
    result = acc.finish()
    assert result.ok, result.errors
    (call,) = result.calls
    assert (call.name, call.arguments) == ("read_file", ARGS)
    # The same reader reads the stream's text: its events, and the text finish() gives.
    shown = "".join(e.text for e in events if e.kind == "text")
    assert shown.strip() == result.text


@pytest.mark.parametrize("sdk", sorted(STREAMS))
def test_stream_objects_and_their_dicts_agree(sdk: str) -> None:
    def run(chunks: list[Any]) -> list[tuple[Any, ...]]:
        acc = toolmend.ToolCallAccumulator()
        kinds = [e.kind for c in chunks for e in acc.feed(c)]
        # Ollama sends no ids: each run makes fresh ones.
        return [(kinds, None if sdk == "ollama" else c.id, c.name, c.arguments, c.index) for c in acc.finish().calls]

    objects = STREAMS[sdk]()
    assert run(objects) == run([o.model_dump(mode="json") for o in objects])


def test_decoded_sse_payloads_go_in_one_message_at_a_time() -> None:
    acc = toolmend.ToolCallAccumulator()
    for chunk in openai_chunks()[:-1]:  # no finish_reason: the stream's [DONE] ends it
        acc.feed_data(chunk.model_dump_json())
    # [DONE] ends the turn: the call is complete and handed out by completed().
    assert [e.kind for e in acc.feed_data("[DONE]")] == ["completed", "end"]
    (call,) = acc.completed().calls
    assert call.arguments == ARGS
    # A keep-alive or a line that is no JSON object says nothing.
    assert acc.feed_data(": keep-alive") == [] and acc.feed_data("") == []


def test_feed_data_is_not_raw_wire_text() -> None:
    # The same chunk given to feed() as str is a raw stream line without "data: ": it has no newline
    # yet, so nothing happens until it ends; feed_data reads it at once.
    payload = openai_chunks()[0].model_dump_json()
    assert toolmend.ToolCallAccumulator().feed(payload) == []
    assert [e.kind for e in toolmend.ToolCallAccumulator().feed_data(payload)] == ["started", "name"]


def test_single_sdk_items_on_their_own() -> None:
    message = openai_completion(json.dumps(ARGS)).choices[0].message
    item = responses_reply().output[1]
    tool_call = ollama_reply().message.tool_calls[0]
    block = anthropic_reply().content[1]
    for one in (message, item, tool_call, block):
        result = parse_response(one, registry())
        assert [(c.name, c.arguments) for c in result.calls] == [("read_file", ARGS)], type(one)
