//! The pipeline end to end over serde values: reply bytes in, checked calls and coded errors out.

use serde_json::{json, Value};

use super::*;
use crate::extract::Formats;
use crate::repair::RepairKind;
use crate::schema::Definition;
use crate::stream::Accumulator;
use crate::wire::{read_reply, SerdeParser, StreamReader};

struct Outcome {
    calls: Vec<CheckedCall<Value>>,
    errors: Vec<RejectedCall<Value>>,
    text: String,
}

impl Outcome {
    fn codes(&self) -> Vec<&'static str> {
        self.errors
            .iter()
            .map(|e| e.failure.code.as_str())
            .collect()
    }

    fn names(&self) -> Vec<(usize, &str)> {
        self.calls
            .iter()
            .map(|c| (c.index, c.name.as_str().unwrap()))
            .collect()
    }
}

fn no_deadline() -> Limits {
    Limits {
        timeout_ms: 0,
        ..Limits::default()
    }
}

fn parse_with(body: &str, registry: Option<&Registry>, limits: Limits, repair: bool) -> Outcome {
    let host = SerdeHost::new(registry);
    let mut pipeline = Pipeline::new(&host, limits, repair);
    let message = read_reply(&SerdeParser, body.as_bytes(), &limits).unwrap();
    let text = check_reply(&mut pipeline, message, Formats::default())
        .unwrap()
        .text;
    Outcome {
        calls: pipeline.calls,
        errors: pipeline.errors,
        text,
    }
}

fn parse(body: &Value) -> Outcome {
    parse_with(&body.to_string(), None, no_deadline(), true)
}

fn ollama(calls: Vec<Value>, content: &str) -> Value {
    json!({"model": "m", "message": {"role": "assistant", "content": content, "tool_calls": calls}, "done": true})
}

fn call(name: Value, arguments: Value) -> Value {
    json!({"function": {"name": name, "arguments": arguments}})
}

fn registry() -> Registry {
    let registry = Registry::new(true, no_deadline());
    let schema = json!({
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    });
    registry
        .register(Definition {
            name: "read_file".into(),
            description: String::new(),
            version: "1.0.0".into(),
            category: None,
            schema,
            annotations: None,
            allow_truncated: false,
        })
        .unwrap();
    registry
}

#[test]
fn every_code_in_the_order_of_the_checks() {
    let deep = format!("{}1{}", "{\"a\":".repeat(100), "}".repeat(100));
    let cases = [
        (json!({"id": "call_1"}), "TLP-001"),
        (json!({"id": "call_1", "function": null}), "TLP-001"),
        (call(json!(""), json!("{}")), "TLP-002"),
        (call(json!("   "), json!("{}")), "TLP-002"),
        (json!({"function": {"arguments": "{}"}}), "TLP-002"),
        (call(json!("read-file"), json!("{}")), "TLP-003"),
        (call(json!(42), json!("{}")), "TLP-003"),
        (call(json!("read_file"), json!("just words")), "TLP-004"),
        (call(json!("read_file"), json!("[1, 2]")), "TLP-004"),
        (call(json!("read_file"), json!([1, 2])), "TLP-004"),
        (call(json!("x".repeat(65)), json!("{}")), "TLP-005"),
        (call(json!("read_file"), json!(deep)), "TLP-008"),
    ];
    for (bad, code) in cases {
        let ok = call(json!("read_file"), json!({"path": "ok"}));
        let out = parse(&ollama(vec![bad.clone(), ok], ""));
        assert_eq!(out.codes(), [code], "{bad}");
        assert_eq!(
            out.names(),
            [(1, "read_file")],
            "one bad call spoils nothing else"
        );
        assert_eq!(out.errors[0].index, 0);
        assert!(!out.errors[0].failure.message.is_empty());
    }
}

#[test]
fn a_name_that_is_not_a_string_is_named_by_its_type() {
    let out = parse(&ollama(vec![call(json!(42), json!({}))], ""));
    let error = &out.errors[0];
    assert_eq!(
        error.failure.message,
        "Function name must be a string, not int"
    );
    assert_eq!(error.tool_name.as_deref(), Some("42"));
}

#[test]
fn broken_arguments_are_repaired_and_the_raw_text_kept() {
    let body = json!({"choices": [{"message": {"tool_calls": [
        {"id": "call_a", "function": {"name": "read_file", "arguments": "{\"path\": \"t.txt\",}"}},
        {"function": {"name": "now", "arguments": ""}},
    ]}}]});
    let out = parse(&body);
    let first = &out.calls[0];
    assert_eq!(first.arguments, json!({"path": "t.txt"}));
    assert_eq!(first.raw, Some(json!("{\"path\": \"t.txt\",}")));
    assert_eq!(first.id, Some(json!("call_a")));
    let kinds: Vec<_> = first.repairs.iter().map(|r| r.kind).collect();
    assert_eq!(kinds, [RepairKind::TrailingComma]);
    assert_eq!(
        out.calls[1].arguments,
        json!({}),
        "blank text is no arguments"
    );
    assert_eq!(out.calls[1].id, None);
    // With repair off, the same text is refused.
    let strict = parse_with(&body.to_string(), None, no_deadline(), false);
    assert_eq!(strict.codes(), ["TLP-004"]);
}

#[test]
fn unparseable_arguments_carry_a_position() {
    let out = parse(&ollama(
        vec![call(json!("read_file"), json!("path: x"))],
        "",
    ));
    let error = &out.errors[0];
    assert_eq!(
        (error.failure.code, error.failure.position),
        (ErrorCode::Unparseable, Some(0))
    );
    assert_eq!(error.raw, Some(json!("path: x")));
    assert!(!error.failure.suggestion.is_empty());
}

#[test]
fn arguments_over_the_size_limit_as_text_or_object() {
    let limits = Limits {
        max_size: 50,
        ..no_deadline()
    };
    let long = "x".repeat(60);
    let text = json!({"path": long}).to_string();
    for arguments in [json!(text), json!({"path": long})] {
        let body = ollama(vec![call(json!("read_file"), arguments)], "");
        let out = parse_with(&body.to_string(), None, limits, true);
        assert_eq!(out.codes(), ["TLP-007"]);
    }
}

#[test]
fn wire_indexes_are_kept_and_text_calls_come_after() {
    let body = json!({"message": {
        "content": "Also: <tool_call>{\"name\": \"b\", \"arguments\": {}}</tool_call>",
        "tool_calls": [
            {"function": {"index": 4, "name": "a", "arguments": {}}},
            {"index": 2, "function": {"name": "c", "arguments": {}}},
            {"function": {"name": "d", "arguments": {}}},
        ],
    }});
    let out = parse(&body);
    assert_eq!(out.names(), [(4, "a"), (2, "c"), (2, "d"), (5, "b")]);
    assert_eq!(
        out.calls[3].source.as_str(),
        "hermes",
        "found in the text, in that format"
    );
    assert_eq!(out.calls[0].source, CallSource::ToolCalls);
    assert_eq!(out.text.trim(), "Also:");
    // Each source is read back from its name, and nothing else is a source.
    for source in out.calls.iter().map(|c| c.source) {
        assert_eq!(CallSource::from_name(source.as_str()), Some(source));
    }
    assert_eq!(CallSource::from_name("stream"), Some(CallSource::Stream));
    assert_eq!(CallSource::from_name("telepathy"), None);
}

#[test]
fn a_call_repeated_in_the_content_runs_once() {
    let content = "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}</tool_call>\
                   <tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"b\"}}</tool_call>";
    let body = ollama(
        vec![call(json!("read_file"), json!({"path": "a"}))],
        content,
    );
    let out = parse(&body);
    let paths: Vec<_> = out
        .calls
        .iter()
        .map(|c| c.arguments["path"].clone())
        .collect();
    assert_eq!(paths, [json!("a"), json!("b")]);
}

#[test]
fn the_registry_checks_tool_and_schema() {
    let registry = registry();
    let body = ollama(
        vec![
            call(json!("read_file"), json!({"path": 7})),
            call(json!("nope"), json!({})),
            call(json!("read_file"), json!("{\"path\": \"ok\"}")),
        ],
        "",
    );
    let out = parse_with(&body.to_string(), Some(&registry), no_deadline(), true);
    assert_eq!(out.codes(), ["TSR-004", "TSR-001"]);
    let mismatch = &out.errors[0].failure;
    assert_eq!(mismatch.violations[0].path, "/path");
    assert!(mismatch
        .message
        .starts_with("Arguments of 'read_file' do not match its schema: 1 error"));
    assert_eq!(out.names(), [(2, "read_file")]);
    // A prose object naming no known tool stays text when there is a registry.
    let prose = ollama(vec![], "{\"name\": \"nope\", \"arguments\": {}}");
    let out = parse_with(&prose.to_string(), Some(&registry), no_deadline(), true);
    assert!(out.calls.is_empty() && out.errors.is_empty());
}

#[test]
fn a_body_that_is_text_is_read_for_calls() {
    let out = parse_with(
        "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\",}",
        None,
        no_deadline(),
        true,
    );
    assert_eq!(out.names(), [(0, "get_weather")]);
    assert_eq!(out.calls[0].arguments, json!({"city": "Paris"}));
}

#[test]
fn stream_calls_and_a_lost_line_go_through_the_same_checks() {
    let limits = Limits {
        max_size: 20,
        ..no_deadline()
    };
    let mut reader = StreamReader::new(limits);
    let mut sink = |_: &Accumulator, _| Ok::<(), std::convert::Infallible>(());
    let line = |name: &str, args: &str| {
        format!("{{\"message\":{{\"tool_calls\":[{{\"function\":{{\"name\":\"{name}\",\"arguments\":{args}}}}}]}}}}\n")
    };
    let mut stream = line("read_file", "{\"path\":\"a\"}");
    stream.push_str(&line("bad-name", "{}"));
    stream.push_str(&"x".repeat(crate::wire::line_limit(&limits) + 1));
    stream.push('\n');
    stream.push_str(&line("read_file", "{\"path\":\"b\"}"));
    reader
        .feed_bytes(stream.as_bytes(), &SerdeParser, &mut sink)
        .unwrap();
    let calls = reader.calls_mut().finish();
    let host = SerdeHost::new(None);
    let mut pipeline = Pipeline::new(&host, limits, true);
    check_stream(&mut pipeline, calls, |_| None).unwrap();
    let names: Vec<_> = pipeline
        .calls
        .iter()
        .map(|c| (c.index, c.name.as_str().unwrap(), c.source.as_str()))
        .collect();
    assert_eq!(
        names,
        [(0, "read_file", "stream"), (3, "read_file", "stream")]
    );
    let errors: Vec<_> = pipeline
        .errors
        .iter()
        .map(|e| (e.index, e.failure.code.as_str(), e.tool_name.as_deref()))
        .collect();
    assert_eq!(
        errors,
        [(1, "TLP-003", Some("bad-name")), (2, "TLP-007", None)]
    );
}

#[test]
fn made_ids_are_unique() {
    let (a, b) = (new_call_id(), new_call_id());
    assert!(a.starts_with("call_") && a.len() == 21 && a != b);
}

fn openai(arguments: &str, finish_reason: &str) -> Value {
    json!({"choices": [{"index": 0, "finish_reason": finish_reason, "message": {"tool_calls": [
        {"id": "c1", "function": {"name": "read_file", "arguments": arguments}}]}}]})
}

#[test]
fn a_call_cut_off_inside_its_arguments_is_refused_with_what_it_held() {
    for cut in [
        r#"{"path": "notes/a.t"#,
        r#"{"path": "a", "force": tru"#,
        r#"{"path": "a", "mode":"#,
        r#"{"path": "a", "n": 1, "mode""#,
        r#"{"path": "a","#,
        r#"{"path": "a", "lines": ["#,
        r#"{'path': 'a', 'mode': 'app"#,
    ] {
        let out = parse(&openai(cut, "tool_calls"));
        assert_eq!(out.codes(), ["TLP-010"], "{cut}");
        let partial = out.errors[0].partial.as_ref().expect("the mended part");
        assert_eq!(
            partial["path"].as_str().map(|p| &p[..1]),
            Some(if cut.contains("notes") { "n" } else { "a" }),
            "{cut}"
        );
    }
}

#[test]
fn a_forgotten_brace_is_mended_unless_the_reply_stopped_at_the_limit() {
    for forgotten in [
        r#"{"path": "a""#,
        r#"{"path": "a", "lines": [1, 2]"#,
        r#"{"path": "a", "n": 12"#,
    ] {
        let whole = parse(&openai(forgotten, "tool_calls"));
        assert_eq!(
            (whole.codes().len(), whole.calls.len()),
            (0, 1),
            "{forgotten}"
        );
        assert!(!whole.calls[0].truncated);
        let length = parse(&openai(forgotten, "length"));
        assert_eq!(length.codes(), ["TLP-010"], "{forgotten}");
    }
    // Valid arguments are whole even when the reply stopped at the limit.
    let valid = parse(&openai(r#"{"path": "a"}"#, "length"));
    assert_eq!(valid.calls.len(), 1);
    // Ollama, Anthropic and the Responses API say it their own way.
    for body in [
        json!({"message": {"tool_calls": [{"function": {"name": "f", "arguments": "{\"a\": 1"}}]}, "done_reason": "length"}),
        json!({"type": "message", "role": "assistant", "stop_reason": "max_tokens",
               "content": [{"type": "text", "text": "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}"}]}),
        json!({"status": "incomplete", "output": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": "{\"a\": 1"}]}),
    ] {
        assert_eq!(parse(&body).codes(), ["TLP-010"], "{body}");
    }
}

#[test]
fn allow_truncated_takes_the_mended_part_marked() {
    let host = SerdeHost::new(None);
    let limits = no_deadline();
    let mut pipeline = Pipeline::new(&host, limits, true).allow_truncated(true);
    let body = openai(r#"{"path": "notes/a.t"#, "tool_calls").to_string();
    let reply = read_reply(&SerdeParser, body.as_bytes(), &limits).unwrap();
    check_reply(&mut pipeline, reply, Formats::default()).unwrap();
    assert!(pipeline.errors.is_empty());
    assert!(pipeline.calls[0].truncated);
    assert_eq!(pipeline.calls[0].arguments, json!({"path": "notes/a.t"}));
}

#[test]
fn a_call_written_in_text_and_a_stream_cut_off_are_refused() {
    let text = ollama(
        vec![],
        "Reading.\n<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"no",
    );
    assert_eq!(parse(&text).codes(), ["TLP-010"]);
    let forgotten = ollama(
        vec![],
        "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}",
    );
    assert_eq!(parse(&forgotten).calls.len(), 1);
    // Two calls in one block: only the one the text ended in was cut.
    let two = ollama(vec![], "[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {}}, {\"name\": \"b\", \"arguments\": {\"x\": \"y");
    let out = parse(&two);
    assert_eq!(
        (out.names(), out.codes()),
        (vec![(0, "a")], vec!["TLP-010"])
    );

    let mut reader = StreamReader::new(no_deadline());
    let mut sink = |_: &Accumulator, _| Ok::<(), std::convert::Infallible>(());
    let chunk = json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "c", "function": {"name": "read_file", "arguments": "{\"path\": \"a"}}]}}]});
    reader.feed_chunk(&chunk, &mut sink).unwrap();
    let calls = reader.calls_mut().finish();
    let host = SerdeHost::new(None);
    let mut pipeline = Pipeline::new(&host, no_deadline(), true);
    check_stream(&mut pipeline, calls, |_| None).unwrap();
    assert_eq!(pipeline.errors[0].failure.code, ErrorCode::CutOff);
}

#[test]
fn arguments_encoded_twice_are_read_once_more_where_an_object_is_required() {
    let twice = serde_json::to_string(&json!({"path": "a"}).to_string()).unwrap();
    let out = parse(&openai(&twice, "tool_calls"));
    assert_eq!(out.calls[0].arguments, json!({"path": "a"}));
    assert_eq!(out.calls[0].repairs[0].kind, RepairKind::EscapedJson);
    // A string that holds no object is still refused.
    let words = serde_json::to_string("just words").unwrap();
    assert_eq!(parse(&openai(&words, "tool_calls")).codes(), ["TLP-004"]);
}

fn openai_calls(calls: &[(&str, &str)], finish_reason: &str) -> Value {
    let calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, arguments))| {
            json!({"id": format!("c{i}"), "function": {"name": name, "arguments": arguments}})
        })
        .collect();
    json!({"choices": [{"index": 0, "finish_reason": finish_reason,
                        "message": {"tool_calls": calls}}]})
}

#[test]
fn at_the_limit_the_last_call_mended_in_any_way_is_cut_and_unreadable_arguments_too() {
    let calls = [("a", "{'x': 1}"), ("b", "{'y': 2}")];
    // Not at the limit: both mended, both taken.
    assert_eq!(parse(&openai_calls(&calls, "stop")).calls.len(), 2);
    // At the limit: only the last one is suspect, refused with what it held.
    let out = parse(&openai_calls(&calls, "length"));
    assert_eq!(out.names(), [(0, "a")]);
    assert_eq!(out.codes(), ["TLP-010"]);
    let cut = &out.errors[0];
    assert_eq!((cut.index, cut.tool_name.as_deref()), (1, Some("b")));
    assert_eq!(cut.partial, Some(json!({"y": 2})));
    // A last call that needed nothing stays; arguments not readable at all are cut off.
    let out = parse(&openai_calls(
        &[("a", "{'x': 1}"), ("b", "{\"y\": 2}")],
        "length",
    ));
    assert_eq!((out.calls.len(), out.codes().len()), (2, 0));
    let out = parse(&openai_calls(&[("a", "{\"x\": 1}"), ("b", "[[[")], "stop"));
    assert_eq!(out.codes(), ["TLP-004"]);
    let out = parse(&openai_calls(
        &[("a", "{\"x\": 1}"), ("b", "[[[")],
        "length",
    ));
    assert_eq!(out.codes(), ["TLP-010"]);
    // Where cut calls are allowed, the last one is taken marked.
    let host = SerdeHost::new(None);
    let limits = no_deadline();
    let mut pipeline = Pipeline::new(&host, limits, true).allow_truncated(true);
    let body = openai_calls(&calls, "length").to_string();
    let reply = read_reply(&SerdeParser, body.as_bytes(), &limits).unwrap();
    check_reply(&mut pipeline, reply, Formats::default()).unwrap();
    let marks: Vec<bool> = pipeline.calls.iter().map(|c| c.truncated).collect();
    assert_eq!((marks, pipeline.errors.len()), (vec![false, true], 0));
}

#[test]
fn text_events_come_back_in_order_numbered_on_and_only_the_last_block_is_cut() {
    let mut parser = crate::extract::TextCallParser::new(no_deadline(), 50_000);
    let mut events = parser.feed(
        "First <tool_call>{\"name\": \"a\", \"arguments\": {\"x\": 1}</tool_call> then \
         <tool_call>{\"name\": \"c\", \"arguments\": {\"z\": 1}",
    );
    events.extend(parser.flush());
    let host = SerdeHost::new(None);
    let mut next_index = 5;
    let items = check_text_events(
        &host,
        no_deadline(),
        true,
        false,
        events.clone(),
        &mut next_index,
        true,
    )
    .unwrap();
    let shown: Vec<String> = items
        .iter()
        .map(|item| match item {
            TextItem::Text(t) => format!("text {}", t.trim()),
            TextItem::Reasoning(t) => format!("reasoning {}", t.trim()),
            TextItem::TextWasReasoning(t) => format!("was reasoning {}", t.trim()),
            TextItem::TextWithoutCalls(t) => format!("text without calls {}", t.trim()),
            TextItem::Call(c) => format!("call {} {}", c.index, c.name),
            TextItem::Refused(e) => format!("refused {} {}", e.index, e.failure.code.as_str()),
        })
        .collect();
    assert_eq!(
        shown,
        // The calls are held while a lone `</think>` may still make all before it reasoning:
        // they come at the end, each block as it stood.
        ["text First  then", "call 5 \"a\"", "refused 6 TLP-010"]
    );
    assert_eq!(next_index, 7);
    // Both blocks lack a brace; at the limit only the last is taken for cut off. Not at the
    // limit, both are forgotten braces, mended and taken.
    let mut next_index = 0;
    let items = check_text_events(
        &host,
        no_deadline(),
        true,
        false,
        events,
        &mut next_index,
        false,
    )
    .unwrap();
    assert_eq!(
        items
            .iter()
            .filter(|i| matches!(i, TextItem::Call(_)))
            .count(),
        2
    );
}

#[test]
fn a_stream_reads_its_text_and_a_call_repeated_there_runs_once() {
    // Ollama can leave a call it parsed in the content too: streamed, as read whole, it runs once,
    // and the text's other calls come after the stream's, numbered on.
    let limits = no_deadline();
    let mut reader = StreamReader::new(limits).with_text_calls(limits, Formats::default());
    let mut sink = |_: &Accumulator, _| Ok::<(), std::convert::Infallible>(());
    let lines = concat!(
        "{\"message\":{\"content\":\"<tool_call>{\\\"name\\\": \\\"f\\\", \\\"arguments\\\": {\\\"a\\\": 1}}</tool_call>\"}}\n",
        "{\"message\":{\"thinking\":\"hm\",\"content\":\" ok <tool_call>{\\\"name\\\": \\\"g\\\", \\\"arguments\\\": {}}</tool_call>\"}}\n",
        "{\"message\":{\"tool_calls\":[{\"function\":{\"name\":\"f\",\"arguments\":{\"a\":1}}}]},\"done\":true,\"done_reason\":\"stop\",\"prompt_eval_count\":3,\"eval_count\":4}\n",
    );
    reader
        .feed_bytes(lines.as_bytes(), &SerdeParser, &mut sink)
        .unwrap();
    reader.finish_text(None);
    let calls = reader.calls_mut().finish();
    let text_calls = reader.take_text_calls();
    let host = SerdeHost::new(None);
    let mut pipeline = Pipeline::new(&host, limits, true);
    check_stream_reply(&mut pipeline, calls, text_calls, None, |_| None).unwrap();
    let names: Vec<_> = pipeline
        .calls
        .iter()
        .map(|c| (c.index, c.name.as_str().unwrap(), c.source.as_str()))
        .collect();
    assert_eq!(names, [(0, "f", "stream"), (2, "g", "hermes")]);
    let said = reader.said_so_far();
    assert_eq!((said.text(), said.reasoning()), ("ok", "hm"));
    assert_eq!(said.usage, Some((3, 4)));
    assert_eq!(said.finish_reason.as_deref(), Some("stop"));
    assert!(said.ended);
}

#[test]
fn a_name_in_another_case_comes_back_as_registered_with_the_spelling_kept() {
    let registry = registry();
    let body = ollama(
        vec![
            call(json!("READ_FILE"), json!({"path": "a"})),
            call(json!("read_file"), json!({"path": "b"})),
        ],
        // The text repeats the field's first call in yet another case: it runs once.
        "<tool_call>{\"name\": \"Read_File\", \"arguments\": {\"path\": \"a\"}}</tool_call>",
    );
    let out = parse_with(&body.to_string(), Some(&registry), no_deadline(), true);
    assert!(out.errors.is_empty());
    assert_eq!(out.names(), [(0, "read_file"), (1, "read_file")]);
    let (renamed, exact) = (&out.calls[0], &out.calls[1]);
    assert_eq!(renamed.raw_name, Some(json!("READ_FILE")));
    assert_eq!(
        renamed.repairs,
        [Repair {
            kind: RepairKind::ToolName,
            position: 0,
            count: 1,
        }]
    );
    assert_eq!(exact.raw_name, None);
    assert!(exact.repairs.is_empty());
    // Without a registry there is no registered name to give.
    let out = parse(&body);
    assert_eq!(out.calls[0].name, json!("READ_FILE"));
    assert_eq!(out.calls[0].raw_name, None);
}

#[test]
fn a_renamed_last_call_is_not_taken_for_one_the_token_limit_cut() {
    let registry = registry();
    let body = json!({"message": {"tool_calls": [call(json!("READ_FILE"), json!({"path": "a"}))]},
                      "done_reason": "length"});
    let out = parse_with(&body.to_string(), Some(&registry), no_deadline(), true);
    assert!(out.errors.is_empty(), "{:?}", out.codes());
    assert!(!out.calls[0].truncated);
}
