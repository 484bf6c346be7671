//! The stream reader over serde values: recorded streams, chunk shapes, framing.

use std::convert::Infallible;

use serde_json::{json, Value};

use super::*;
use crate::error::ErrorCode;
use crate::limits::Limits;
use crate::stream::{Accumulator, AssembledCall, Event, EventKind, FailedCall};

const RECORDED: [(&str, &[u8]); 5] = [
    (
        "ollama_chat_two_calls",
        include_bytes!("../../../../tests/data/streams/ollama_chat_two_calls.ndjson"),
    ),
    (
        "openai_stream_parallel_tools",
        include_bytes!("../../../../tests/data/streams/openai_stream_parallel_tools.sse"),
    ),
    (
        "openai_stream_pydantic_tool",
        include_bytes!("../../../../tests/data/streams/openai_stream_pydantic_tool.sse"),
    ),
    (
        "openai_stream_single_tool",
        include_bytes!("../../../../tests/data/streams/openai_stream_single_tool.sse"),
    ),
    (
        "openai_stream_strict_tool",
        include_bytes!("../../../../tests/data/streams/openai_stream_strict_tool.sse"),
    ),
];

type Calls = Vec<Result<AssembledCall, FailedCall>>;

/// Feeds `chunks` of raw stream, ends it, and returns the event kinds and every call.
fn read_bytes(limits: Limits, chunks: &[&[u8]]) -> (Vec<(EventKind, usize)>, Calls) {
    let mut reader = StreamReader::new(limits);
    let mut events = Vec::new();
    let mut sink = |calls: &Accumulator, e: Event| {
        events.push((e.kind(), calls.call_key(e.slot()).0));
        Ok::<(), Infallible>(())
    };
    for chunk in chunks {
        reader.feed_bytes(chunk, &SerdeParser, &mut sink).unwrap();
    }
    reader.end_bytes(&SerdeParser, &mut sink).unwrap();
    let calls = reader.calls_mut().finish();
    (events, calls)
}

/// (index, id, name, arguments) of the calls that assembled.
fn summary(calls: &Calls) -> Vec<(usize, Option<String>, String, String)> {
    calls
        .iter()
        .flatten()
        .map(|c| (c.index, c.id.clone(), c.name.clone(), c.arguments.clone()))
        .collect()
}

#[test]
fn recorded_streams_give_their_calls_however_they_are_split() {
    for (name, bytes) in RECORDED {
        let (_, whole) = read_bytes(Limits::default(), &[bytes]);
        assert!(
            !whole.is_empty() && whole.iter().all(Result::is_ok),
            "{name}"
        );
        for call in whole.iter().flatten() {
            assert!(call.id.is_some() && !call.name.is_empty(), "{name}");
            let arguments: Value = serde_json::from_str(&call.arguments).unwrap();
            assert!(arguments.is_object(), "{name}");
        }
        for step in [1, 2, 3, 7, 64, 1000] {
            let chunks: Vec<&[u8]> = bytes.chunks(step).collect();
            let (_, split) = read_bytes(Limits::default(), &chunks);
            assert_eq!(
                summary(&split),
                summary(&whole),
                "{name} in {step}-byte chunks"
            );
        }
    }
}

#[test]
fn ollama_lines_carry_whole_calls_with_object_arguments() {
    let (events, calls) = read_bytes(Limits::default(), &[RECORDED[0].1]);
    let completed = events
        .iter()
        .filter(|(k, _)| *k == EventKind::Completed)
        .count();
    assert_eq!(completed, 2, "each Ollama call is complete as it arrives");
    let calls = summary(&calls);
    assert_eq!(
        calls
            .iter()
            .map(|(i, id, _, a)| (*i, id.as_deref().unwrap(), a.as_str()))
            .collect::<Vec<_>>(),
        [
            (0, "call_4f1a9z0b", r#"{"city":"New York"}"#),
            (1, "call_8k2m1x7q", r#"{"city":"Paris"}"#),
        ]
    );
}

#[test]
fn ollama_calls_without_an_index_count_up() {
    let mut reader = StreamReader::new(Limits::default());
    let mut sink = |_: &Accumulator, _: Event| Ok::<(), Infallible>(());
    for name in ["a", "b"] {
        let line =
            json!({"message": {"tool_calls": [{"function": {"name": name, "arguments": {}}}]}});
        reader.feed_chunk(&line, &mut sink).unwrap();
    }
    let calls = reader.calls_mut().finish();
    let got: Vec<_> = summary(&calls)
        .into_iter()
        .map(|(i, _, n, _)| (i, n))
        .collect();
    assert_eq!(got, [(0, "a".into()), (1, "b".into())]);
}

#[test]
fn openai_chunks_bare_deltas_and_the_end_of_the_turn() {
    let mut reader = StreamReader::new(Limits::default());
    let kinds = std::cell::RefCell::new(Vec::new());
    let mut sink = |_: &Accumulator, e: Event| {
        kinds.borrow_mut().push(e.kind().as_str());
        Ok::<(), Infallible>(())
    };
    let start = json!({"choices": [{"delta": {"tool_calls": [
        {"index": 0, "id": "c1", "function": {"name": "f", "arguments": "{\"a\""}}
    ]}}]});
    reader.feed_chunk(&start, &mut sink).unwrap();
    // A bare delta, as some clients pass them on; the index is the entry's place when missing.
    let more = json!({"tool_calls": [{"function": {"arguments": ": 1}"}}]});
    reader.feed_chunk(&more, &mut sink).unwrap();
    let end = json!({"choices": [{"delta": {}, "finish_reason": "tool_calls"}]});
    reader.feed_chunk(&end, &mut sink).unwrap();
    // The finish reason ends the reply, not its calls: the stream's end does ([DONE] here).
    assert_eq!(
        *kinds.borrow(),
        ["started", "name", "arguments", "arguments"]
    );
    reader
        .feed_payload(b"[DONE]", &SerdeParser, &mut sink)
        .unwrap();
    assert_eq!(
        *kinds.borrow(),
        ["started", "name", "arguments", "arguments", "completed"]
    );
    let calls = reader.calls_mut().take_completed();
    assert_eq!(
        summary(&calls),
        [(0, Some("c1".into()), "f".into(), "{\"a\": 1}".into())]
    );
}

#[test]
fn sse_comments_crlf_done_and_keep_alives() {
    let stream = concat!(
        ": keep-alive\r\n",
        "event: chunk\r\n",
        "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}}]}\r\n",
        "\r\n",
        "data: ping\r\n",
        "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"d\",\"function\":{\"name\":\"g\",\"arguments\":\"[]\"}}]}}]}\r\n",
        "\r\n",
        "data: [DONE]\r\n",
    );
    let (events, calls) = read_bytes(Limits::default(), &[stream.as_bytes()]);
    assert_eq!(
        summary(&calls)
            .into_iter()
            .map(|(_, _, n, _)| n)
            .collect::<Vec<_>>(),
        ["f", "g"],
        "a data line that is not JSON does not hide the next one"
    );
    assert_eq!(
        events.last(),
        Some(&(EventKind::Completed, 1)),
        "[DONE] ends the turn"
    );
}

#[test]
fn an_event_whose_json_spans_several_data_lines_is_read_joined() {
    let stream = concat!(
        "data: {\"choices\": [{\"delta\": {\"tool_calls\": [\n",
        "data: {\"index\": 0, \"id\": \"c\", \"function\": {\"name\": \"f\", \"arguments\": \"{}\"}}\n",
        "data: ]}}]}\n",
        "\n",
    );
    let bytes = stream.as_bytes();
    for step in [1, 5, bytes.len()] {
        let chunks: Vec<&[u8]> = bytes.chunks(step).collect();
        let (_, calls) = read_bytes(Limits::default(), &chunks);
        let names: Vec<_> = summary(&calls).into_iter().map(|(_, _, n, _)| n).collect();
        assert_eq!(names, ["f"], "{step}-byte chunks");
    }
}

#[test]
fn a_line_too_long_fails_the_open_call_at_once() {
    let limits = Limits {
        max_size: 100,
        ..Limits::default()
    };
    let limit = line_limit(&limits);
    let open = "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"big\",\"arguments\":\"{\\\"a\\\": \\\"\"}}]}}]}\n";
    let huge = vec![b'x'; limit + 1];
    let mut reader = StreamReader::new(limits);
    let failed = std::cell::RefCell::new(Vec::new());
    let mut sink = |calls: &Accumulator, e: Event| {
        if let Event::Failed { code, .. } = &e {
            failed
                .borrow_mut()
                .push((calls.call_key(e.slot()).0, *code));
        }
        Ok::<(), Infallible>(())
    };
    reader
        .feed_bytes(open.as_bytes(), &SerdeParser, &mut sink)
        .unwrap();
    for chunk in huge.chunks(1024) {
        reader.feed_bytes(chunk, &SerdeParser, &mut sink).unwrap();
    }
    assert_eq!(
        *failed.borrow(),
        [(0, ErrorCode::TooLarge)],
        "refused before its newline"
    );
    let next = "\ndata: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"d\",\"function\":{\"name\":\"small\",\"arguments\":\"{}\"}}]}}]}\n";
    reader
        .feed_bytes(next.as_bytes(), &SerdeParser, &mut sink)
        .unwrap();
    let calls = reader.calls_mut().finish();
    assert_eq!(summary(&calls)[0].2, "small", "the stream goes on");
    let error = calls[0].as_ref().unwrap_err();
    assert_eq!((error.code, error.lost_line), (ErrorCode::TooLarge, false));
}

#[test]
fn a_line_too_long_with_no_call_open_is_reported_after_the_last_index() {
    let limits = Limits {
        max_size: 10,
        ..Limits::default()
    };
    let first =
        "{\"message\":{\"tool_calls\":[{\"function\":{\"name\":\"a\",\"arguments\":{}}}]}}\n";
    let mut huge = b"{\"message\":{\"content\":\"".to_vec();
    huge.resize(line_limit(&limits) + 10, b'x');
    huge.push(b'\n');
    let last = "{\"message\":{\"tool_calls\":[{\"function\":{\"name\":\"c\",\"arguments\":{}}}]},\"done\":true}\n";
    let whole = [first.as_bytes(), &huge, last.as_bytes()].concat();
    let (events, calls) = read_bytes(limits, &[&whole]);
    assert!(events.contains(&(EventKind::Started, 1)) && events.contains(&(EventKind::Failed, 1)));
    let lost = calls
        .iter()
        .find_map(|c| c.as_ref().err())
        .expect("the loss is reported");
    assert!(lost.lost_line && lost.code == ErrorCode::TooLarge && lost.index == 1);
    let got: Vec<_> = summary(&calls)
        .into_iter()
        .map(|(i, _, n, _)| (i, n))
        .collect();
    assert_eq!(
        got,
        [(0, "a".into()), (2, "c".into())],
        "the next call takes the next index"
    );
    // The same however the bytes arrive.
    let chunks: Vec<&[u8]> = whole.chunks(7).collect();
    let (_, split) = read_bytes(limits, &chunks);
    assert_eq!(split, calls);
}

/// Feeds chunk values, and returns every call (finished) and the kinds of the events.
fn read_values(chunks: &[Value]) -> (Vec<EventKind>, Calls) {
    let mut reader = StreamReader::new(Limits::default());
    let mut events = Vec::new();
    let mut sink = |_: &Accumulator, e: Event| {
        events.push(e.kind());
        Ok::<(), Infallible>(())
    };
    for chunk in chunks {
        reader.feed_chunk(chunk, &mut sink).unwrap();
    }
    (events, reader.calls_mut().finish())
}

#[test]
fn anthropic_stream_events_assemble_tool_use_blocks() {
    let events = [
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": []}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Checking."}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": ""}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"city\": \"Pa"}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "ris\"}"}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}}),
        json!({"type": "message_stop"}),
    ];
    let (kinds, calls) = read_values(&events);
    assert_eq!(
        summary(&calls),
        [(
            1,
            Some("toolu_1".into()),
            "get_weather".into(),
            r#"{"city": "Paris"}"#.into()
        )]
    );
    assert_eq!(kinds.first(), Some(&EventKind::Started));
    assert!(kinds.contains(&EventKind::Completed));
}

#[test]
fn responses_stream_events_assemble_function_calls() {
    let events = [
        json!({"type": "response.created", "response": {"id": "resp_1", "output": []}}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "id": "m", "content": []}}),
        json!({"type": "response.output_text.delta", "output_index": 0, "delta": "Sure."}),
        json!({"type": "response.output_item.added", "output_index": 1, "item": {"type": "function_call", "id": "fc_1", "call_id": "call_7", "name": "f", "arguments": ""}}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 1, "delta": "{\"a\": "}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 1, "delta": "1}"}),
        json!({"type": "response.function_call_arguments.done", "item_id": "fc_1", "output_index": 1, "arguments": "{\"a\": 1}"}),
        json!({"type": "response.output_item.done", "output_index": 1, "item": {"type": "function_call", "id": "fc_1", "call_id": "call_7", "name": "f", "arguments": "{\"a\": 1}"}}),
        json!({"type": "response.completed", "response": {"id": "resp_1"}}),
    ];
    let (_, calls) = read_values(&events);
    assert_eq!(
        summary(&calls),
        [(1, Some("call_7".into()), "f".into(), r#"{"a": 1}"#.into())]
    );
}

mod openai_lines {
    //! Raw OpenAI chunk lines are read straight from their text (`openai`); every other line,
    //! and every chunk that reading does not cover, the general way. Both must give the same
    //! events and calls on any chunk.

    use super::*;
    use proptest::prelude::*;

    /// A value of some JSON type, for members that may hold the wrong one.
    fn odd() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            Just(json!(true)),
            Just(json!(-1)),
            Just(json!(2)),
            Just(json!(1.5)),
            Just(json!("x")),
            Just(json!([])),
            Just(json!({})),
            // Arrays that would fill a struct member by member, were they read as one.
            Just(json!([0, "call_1", ["f", "{}"]])),
            Just(json!([[0, "c", ["f", "{}"]]])),
            Just(json!([{"tool_calls": [[0, "c", ["f", "{}"]]]}, "stop", null, null, null])),
        ]
    }

    fn text() -> impl Strategy<Value = Value> {
        prop_oneof![
            4 => prop::sample::select(vec!["", "{\"a\": ", "1}", "\"q\\u00e9\\n\"", "read_file", "call_1", "length", "stop", "max_tokens", "incomplete"]).prop_map(Value::from),
            1 => odd(),
        ]
    }

    /// An object with each member of `members` present or not.
    fn object(members: Vec<(&'static str, BoxedStrategy<Value>)>) -> BoxedStrategy<Value> {
        let parts: Vec<_> = members
            .into_iter()
            .map(|(k, v)| prop::option::weighted(0.7, v).prop_map(move |v| (k, v)))
            .collect();
        parts
            .prop_map(|parts| {
                Value::Object(
                    parts
                        .into_iter()
                        .filter_map(|(k, v)| Some((k.to_string(), v?)))
                        .collect(),
                )
            })
            .boxed()
    }

    fn call() -> BoxedStrategy<Value> {
        let function = object(vec![
            ("name", text().boxed()),
            ("arguments", text().boxed()),
        ]);
        let index = prop_oneof![4 => (0usize..3).prop_map(Value::from), 1 => odd()];
        prop_oneof![
            8 => object(vec![
                ("index", index.boxed()),
                ("id", text().boxed()),
                ("type", Just(json!("function")).boxed()),
                ("function", prop_oneof![8 => function, 1 => odd()].boxed()),
            ]),
            1 => odd().boxed(),
        ]
        .boxed()
    }

    fn choice() -> BoxedStrategy<Value> {
        let calls =
            prop_oneof![6 => prop::collection::vec(call(), 0..3).prop_map(Value::from), 1 => odd()];
        let parts =
            Just(json!([{"type": "text", "text": "a"}, {"type": "thinking", "thinking": "b"}]));
        let content = prop_oneof![6 => text(), 1 => parts];
        let delta = prop_oneof![
            6 => object(vec![
                ("tool_calls", calls.boxed()),
                ("content", content.boxed()),
                ("reasoning_content", text().boxed()),
                ("reasoning", text().boxed()),
                ("thinking", text().boxed()),
                ("role", Just(json!("assistant")).boxed()),
            ]),
            1 => odd().boxed(),
        ];
        let reason = prop_oneof![3 => Just(Value::Null), 2 => text()];
        prop_oneof![
            8 => object(vec![
                ("index", prop_oneof![6 => Just(json!(0)), 1 => Just(json!(1))].boxed()),
                ("delta", delta.boxed()),
                ("finish_reason", reason.clone().boxed()),
                ("done_reason", reason.clone().boxed()),
                ("stop_reason", reason.clone().boxed()),
                ("status", reason.boxed()),
            ]),
            1 => odd().boxed(),
        ]
        .boxed()
    }

    fn chunk() -> BoxedStrategy<Value> {
        let choices = prop_oneof![8 => prop::collection::vec(choice(), 0..3).prop_map(Value::from), 1 => odd()];
        object(vec![
            ("id", Just(json!("chatcmpl-1")).boxed()),
            ("object", prop_oneof![6 => Just(json!("chat.completion.chunk")), 1 => Just(json!("error"))].boxed()),
            ("choices", choices.boxed()),
            (
                "usage",
                prop_oneof![
                    3 => Just(json!({"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10})),
                    1 => Just(Value::Null),
                    1 => odd(),
                ]
                .boxed(),
            ),
            ("error", prop_oneof![4 => Just(Value::Null), 1 => Just(json!({"message": "boom"}))].boxed()),
            (
                "type",
                prop_oneof![4 => Just(Value::Null), 1 => Just(json!("content_block_delta"))]
                    .boxed(),
            ),
        ])
    }

    type Seen = (
        Vec<(Event, (usize, Option<String>))>,
        Calls,
        bool,
        Vec<Said>,
    );

    /// The chunks read as raw SSE lines (`raw`) or as values, with the events, calls and cut.
    fn read(chunks: &[Value], raw: bool) -> Seen {
        let mut reader = StreamReader::new(Limits::DEFAULT);
        let mut events = Vec::new();
        let mut sink = |calls: &Accumulator, e: Event| {
            let key = calls.call_key(e.slot());
            events.push((e, key));
            Ok::<(), Infallible>(())
        };
        for chunk in chunks {
            if raw {
                let line = format!("data: {chunk}\n\n");
                reader
                    .feed_bytes(line.as_bytes(), &SerdeParser, &mut sink)
                    .unwrap();
            } else {
                reader.feed_chunk(chunk, &mut sink).unwrap();
            }
        }
        let cut = reader.cut_by_length();
        let said = reader.take_said();
        (events, reader.calls_mut().finish(), cut, said)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn raw_lines_and_values_give_the_same_events(chunks in prop::collection::vec(chunk(), 1..4)) {
            prop_assert_eq!(read(&chunks, true), read(&chunks, false));
        }
    }

    #[test]
    fn a_plain_chunk_is_read_straight_from_its_text() {
        let line = br#"{"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 1, "id": "call_1", "function": {"name": "f", "arguments": "{\"a\\u00e9\": "}}]}, "finish_reason": null}]}"#;
        let chunk = super::super::openai::read_chunk(line).expect("covered");
        let choices = &chunk.choices;
        let delta = &choices[0].deltas[0];
        assert_eq!(
            (delta.index, delta.id.as_deref(), delta.name.as_deref()),
            (1, Some("call_1"), Some("f"))
        );
        assert_eq!(delta.arguments.as_deref(), Some(r#"{"a\u00e9": "#));
        assert_eq!(choices[0].ends, None);
        // Another shape, a member of another type, or not JSON: the general reading's.
        for other in [
            &br#"{"type": "x", "choices": []}"#[..],
            br#"{"choices": [{"delta": {"tool_calls": [{"index": -1}]}}]}"#,
            br#"{"choices": [1]}"#,
            b"{\"choices\": [",
            br#"{"message": {}}"#,
        ] {
            assert!(
                super::super::openai::read_chunk(other).is_none(),
                "{}",
                String::from_utf8_lossy(other)
            );
        }
    }
}

#[test]
fn anthropic_and_responses_streams_say_their_token_counts() {
    let read = |events: &[Value]| {
        let mut reader = StreamReader::new(Limits::DEFAULT);
        let mut sink = |_: &Accumulator, _: Event| Ok::<(), Infallible>(());
        for event in events {
            reader.feed_chunk(event, &mut sink).unwrap();
        }
        let said = reader.said_so_far();
        (
            said.usage,
            said.finish_reason.clone(),
            said.text().to_string(),
        )
    };
    let anthropic = [
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 25, "output_tokens": 1}}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi."}}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 15}}),
        json!({"type": "message_stop"}),
    ];
    assert_eq!(
        read(&anthropic),
        (Some((25, 15)), Some("end_turn".into()), "Hi.".into())
    );
    let responses = [
        json!({"type": "response.output_text.delta", "delta": "Hi."}),
        json!({"type": "response.completed", "response": {"usage": {"input_tokens": 9, "output_tokens": 4}}}),
    ];
    assert_eq!(read(&responses), (Some((9, 4)), None, "Hi.".into()));
}

#[test]
fn every_key_stands_at_its_own_place_with_its_own_name() {
    let names: std::collections::HashSet<_> = Key::ALL.iter().map(|k| k.as_str()).collect();
    assert_eq!(names.len(), Key::ALL.len());
    for (i, key) in Key::ALL.iter().enumerate() {
        assert_eq!(*key as usize, i);
    }
    assert_eq!(Key::ALL[Key::ToolCalls as usize].as_str(), "tool_calls");
}

#[test]
fn a_finish_reason_before_the_stream_ends_leaves_the_calls_open() {
    // OpenWebUI in front of vLLM sends `finish_reason: "stop"` after every chunk.
    let mut reader = StreamReader::new(Limits::default());
    let mut failed = 0;
    let mut sink = |_: &Accumulator, e: Event| {
        failed += usize::from(e.kind() == EventKind::Failed);
        Ok::<(), Infallible>(())
    };
    let stop = json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]});
    for piece in ["", "{\"city\": ", "\"Paris\"}"] {
        let call = json!({"index": 0, "id": "c1", "function": {"name": "f", "arguments": piece}});
        let chunk = json!({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]});
        reader.feed_chunk(&chunk, &mut sink).unwrap();
        reader.feed_chunk(&stop, &mut sink).unwrap();
        assert!(reader.calls_mut().take_completed().is_empty());
    }
    reader
        .feed_payload(b"[DONE]", &SerdeParser, &mut sink)
        .unwrap();
    let calls = reader.calls_mut().take_completed();
    assert_eq!(failed, 0);
    assert_eq!(
        summary(&calls),
        [(
            0,
            Some("c1".into()),
            "f".into(),
            "{\"city\": \"Paris\"}".into()
        )]
    );
}
