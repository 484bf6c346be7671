"""Results out: a call in each provider's assistant-message form (checked with the SDKs' own types), value
equality, and pickling across processes."""

from __future__ import annotations

import pickle
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import msgspec
import pydantic
import pytest

import toolmend
from toolmend import ToolCall, errors


def _calls() -> tuple[ToolCall, ...]:
    reply = {
        "message": {
            "role": "assistant",
            "tool_calls": [
                {"id": "call_7", "function": {"name": "write_file", "arguments": "{'path': 'a.txt', 'content': 'hi',}"}},
                {"function": {"name": "search", "arguments": {"query": "x", "limit": 3}}},
            ],
        }
    }
    return toolmend.parse_response(reply).calls


def test_a_call_in_openai_form_is_what_the_openai_sdk_reads() -> None:
    from openai.types.chat import ChatCompletionMessageToolCall

    call = _calls()[0]
    sdk = ChatCompletionMessageToolCall.model_validate(call.to_openai())
    assert (sdk.id, sdk.type, sdk.function.name) == ("call_7", "function", "write_file")
    assert toolmend.loads(sdk.function.arguments) == {"path": "a.txt", "content": "hi"}


def test_a_call_in_ollama_form_is_what_the_ollama_sdk_reads() -> None:
    import ollama

    call = _calls()[1]
    sdk = ollama.Message.ToolCall.model_validate(call.to_ollama())
    assert sdk.function.name == "search" and dict(sdk.function.arguments) == {"query": "x", "limit": 3}
    message = ollama.Message(role="assistant", tool_calls=[call.to_ollama()])
    assert message.tool_calls is not None and message.tool_calls[0].function.name == "search"


def test_a_call_in_anthropic_form_is_what_the_anthropic_sdk_reads() -> None:
    from anthropic.types import ToolUseBlock

    call = _calls()[0]
    block = ToolUseBlock.model_validate(call.to_anthropic())
    assert (block.type, block.id, block.name, block.input) == ("tool_use", "call_7", "write_file", call.arguments)


def test_as_dict_and_a_call_built_by_hand() -> None:
    call = _calls()[0]
    assert call.as_dict() == {
        "id": "call_7", "name": "write_file", "raw_name": "write_file", "arguments": {"path": "a.txt", "content": "hi"},
        "index": 0, "source": "tool_calls",
    }
    made = ToolCall("write_file", {"path": "a.txt", "content": "hi"}, id="call_7")
    assert made == call  # the repairs and the raw text are how it was found, not what it is
    assert ToolCall("f", {}).id.startswith("call_") and ToolCall("f", {}).id != ToolCall("f", {}).id
    assert made != ToolCall("write_file", {"path": "b.txt", "content": "hi"}, id="call_7")
    assert made != ToolCall("write_file", made.arguments, id="call_8")
    assert made != "write_file" and made.__hash__ is None  # arguments are a dict: not hashable


def _round_trip(value: Any) -> Any:
    return pickle.loads(pickle.dumps(value))


def test_results_pickle_and_come_back_equal() -> None:
    call = _calls()[0]
    back = _round_trip(call)
    assert back == call
    assert (back.raw_arguments, back.repairs, back.source) == (call.raw_arguments, call.repairs, call.source)
    registry = toolmend.ToolRegistry()
    registry.register("f", {"type": "object", "required": ["x"]})
    error = registry.try_validate("f", {}).errors[0]
    assert _round_trip(error) == error
    repaired = toolmend.repair("{'a': 1")
    assert _round_trip(repaired.repairs) == repaired.repairs
    failure = toolmend.repair("nope").error
    assert failure is not None and _round_trip(failure) == failure


def _name_and_arguments(call: ToolCall) -> tuple[str, dict[str, Any]]:
    return call.name, call.arguments


def test_a_call_crosses_a_process_pool() -> None:
    calls = _calls()
    with ProcessPoolExecutor(max_workers=1) as pool:
        back = list(pool.map(_round_trip, calls))
        names = list(pool.map(_name_and_arguments, calls))
    assert back == list(calls)
    assert names == [(c.name, c.arguments) for c in calls]


def test_a_call_pickles_with_its_raw_arguments_as_given() -> None:
    # Text that UTF-8 cannot encode, and an object as Ollama gives it, both come back as they were.
    for raw in ["{'a': '\ud800'}", {"a": 1}]:
        call = ToolCall("f", {"a": 1}, raw_arguments=raw)
        back = pickle.loads(pickle.dumps(call))
        assert back == call and back._raw == raw and back.raw_arguments == call.raw_arguments


@pytest.mark.parametrize("source", ["tool_calls", "hermes", "stream"])
def test_source_is_kept_as_given(source: str) -> None:
    assert ToolCall("f", {}, source=source).source == source


# ---- typed arguments, pickling and equality of every result and error --------------------------------


_SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "lines": {"type": "integer"}},
    "required": ["path"],
}


class _ReadArgs(pydantic.BaseModel):
    path: str
    lines: int = pydantic.Field(default=10, gt=0, le=100)


class _ReadStruct(msgspec.Struct):
    path: str
    lines: int = 10


def _typed_registry() -> toolmend.ToolRegistry:
    reg = toolmend.ToolRegistry()
    reg.register("read_file", _SCHEMA)
    return reg


def test_validate_into_a_model_a_type_adapter_and_a_struct() -> None:
    reg = _typed_registry()
    assert reg.validate("read_file", {"path": "a", "lines": 5}, into=_ReadArgs) == _ReadArgs(path="a", lines=5)
    adapter = pydantic.TypeAdapter(_ReadArgs)
    assert reg.validate("read_file", {"path": "a"}, into=adapter) == _ReadArgs(path="a")
    assert reg.validate("read_file", {"path": "a", "lines": 3}, into=_ReadStruct) == _ReadStruct("a", 3)
    call = toolmend.parse_response({"message": {"tool_calls": [{"function": {"name": "read_file", "arguments": {"path": "b"}}}]}}, reg).calls[0]
    assert call.parse(_ReadArgs) == _ReadArgs(path="b") and call.parse(_ReadStruct) == _ReadStruct("b")


def test_the_registry_checks_first_then_the_model_with_coded_errors() -> None:
    reg = _typed_registry()
    with pytest.raises(errors.ValidationError) as schema_refused:
        reg.validate("read_file", {"lines": 5}, into=_ReadArgs)
    assert [e.code for e in schema_refused.value.errors] == ["TSR-003"]
    with pytest.raises(errors.ValidationError) as model_refused:
        reg.validate("read_file", {"path": "a", "lines": 500}, into=_ReadArgs)
    (error,) = model_refused.value.errors
    assert (error.code, error.path, error.actual) == ("TSR-005", "/lines", "500")
    call = toolmend.ToolCall("read_file", {"path": 7})
    with pytest.raises(errors.ValidationError) as wrong_type:
        call.parse(_ReadStruct)
    assert [e.code for e in wrong_type.value.errors] == ["TSR-004"]
    with pytest.raises(TypeError):
        reg.validate("read_file", {"path": "a"}, into=dict)


def _text_without_calls() -> object:
    parser = toolmend.TextCallParser()
    parser.feed('[{"name": "read_file", "arguments": {"path": "a"}}]')
    return next(item for item in parser.flush() if isinstance(item, toolmend.TextWithoutCalls))


def _every_result_and_error() -> dict[str, object]:
    reg = _typed_registry()
    body = {"message": {"tool_calls": [
        {"function": {"name": "read_file", "arguments": '{"path": 1}'}},
        {"function": {"name": "read_file", "arguments": '{"path": "a"'}},
    ]}}
    result = toolmend.parse_response(body, reg)
    cut = toolmend.parse_response({"message": {"tool_calls": [{"function": {"name": "read_file", "arguments": '{"path": "a'}}]}})
    objects: dict[str, object] = {
        "ParseResult": result,
        "ToolCall": result.calls[0],
        "ToolCallError": result.errors[0],
        "ToolCallError(cut)": cut.errors[0],
        "FieldError": result.errors[0].validation[0],
        "ValidationResult": reg.try_validate("read_file", {}),
        "ToolInfo": reg.get("read_file"),
        "StreamEvent": toolmend.ToolCallAccumulator().feed(toolmend.ToolCallDelta(0, name="read_file"))[0],
        "Reasoning": toolmend.TextCallParser().feed("<think>plan</think>")[0],
        "TextWithoutCalls": _text_without_calls(),
        "ModelHTTPError": errors.ModelHTTPError("gone", status=404, body="{}"),
        "RetryExhaustedError": errors.RetryExhaustedError("no", attempts=(), last_error=result.errors[0], correlation_id="c1"),
    }
    for name, make in [("ValidationError", lambda: reg.validate("read_file", {})), ("ParseError", lambda: toolmend.loads("")), ("UnknownToolError", lambda: reg.get("nope"))]:
        try:
            make()
        except errors.ToolmendError as e:
            objects[name] = e
    return objects


@pytest.mark.parametrize("name", list(_every_result_and_error()))
def test_every_result_and_error_pickles_and_comes_back_equal(name: str) -> None:
    original = _every_result_and_error()[name]
    copy = pickle.loads(pickle.dumps(original))
    assert copy == original and type(copy) is type(original)
    assert repr(copy) == repr(original) and str(copy) == str(original)


def test_results_cross_a_process_pool() -> None:
    result = _every_result_and_error()["ParseResult"]
    with ProcessPoolExecutor(max_workers=1) as pool:
        back = pool.submit(pickle.loads, pickle.dumps(result)).result()
    assert back == result


def test_tool_call_errors_compare_by_value() -> None:
    a = toolmend.ToolCallError("TLP-004", "bad", "f", "{", 1, 0)
    assert a == toolmend.ToolCallError("TLP-004", "bad", "f", "{", 1, 0)
    assert a != toolmend.ToolCallError("TLP-004", "bad", "f", "{", 1, 1)
    with pytest.raises(ValueError):
        toolmend.ToolCallError("XYZ-1", "bad")
