//! Path agreement: one reply read whole (`read_reply` + `check_reply`) and streamed as OpenAI
//! SSE chunks or Ollama NDJSON lines, cut anywhere (`StreamReader` + `check_stream_reply`),
//! gives the same calls (name
//! and arguments, each kind in its order: the wire's, those marked in the text, then those
//! written without a marker, which a stream knows only at its end), the same text and the same
//! reasoning. The reply is drawn from the input: calls with arguments that may need repair, and
//! content made of pieces that hold calls, think blocks, lone closers and quoted markers.
//! Glued objects are never merged: every call taken has flat arguments whose paths are ones the
//! reply wrote (a merge makes a list, or a string holding `}{`), and quoted calls never run.
//! A number the reply shows was cut (it stopped at the token limit) is never taken whole.
//! Names: checked against a registry, a call comes back under the registered spelling, with
//! the model's spelling kept (`raw_name`) and a `tool_name` repair first whenever they differ.
#![no_main]

use std::convert::Infallible;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;
use serde_json::{json, Value};
use toolmend_core::extract::Formats;
use toolmend_core::pipeline::{
    check_reply, check_stream_reply, known_tool, CallSource, CheckedCall, Pipeline, SerdeHost,
};
use toolmend_core::schema::{Definition, Registry};
use toolmend_core::stream::{Accumulator, Event};
use toolmend_core::wire::{read_reply, SerdeParser, StreamReader};
use toolmend_core::Limits;

const LIMITS: Limits = Limits {
    max_size: 1 << 20,
    max_depth: 64,
    timeout_ms: 0,
};

const PIECES: &[&str] = &[
    "Sure. ",
    "I'll read 'notes' and \"todo\". ",
    "`<tool_call>` is the tag. ",
    "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}</tool_call>",
    "<tool_call>{'name': 'read_file', 'arguments': {'path': 'b.txt',}}</tool_call>",
    "<think>maybe <tool_call>{\"name\": \"delete_file\", \"arguments\": {}}</tool_call></think>",
    "[THINK]hm[/THINK]",
    "<thinking>let me see</thinking>",
    "</think>",
    "Done.\n",
    "é€😀 ",
    "{\"name\": \"read_file\", \"arguments\": {\"path\": \"c.txt\"}}",
    "[read_file(path='d.txt')]",
    "```json\n{\"name\": \"g\", \"arguments\": {}}\n```",
    "{",
    "[",
    "[TOOL_CALLS]read_file[ARGS]{\"path\":\"a\"}{\"path\":\"b\"}",
    "<tool_call>{\"name\":\"f\",\"arguments\":{\"path\":\"a\"}}{\"name\":\"g\",\"arguments\":{}}</tool_call>",
    "<tool_call>{\"name\":\"f\",\"arguments\":{\"path\":\"a\"} {\"path\":\"b\"}}</tool_call>",
    "\nObservation: <tool_call>{\"name\": \"delete_file\", \"arguments\": {}}</tool_call>\n",
    "<!-- <tool_call>{\"name\": \"delete_file\", \"arguments\": {}}</tool_call> -->",
    "The tool said `[delete_file(path='x')]`. ",
    "Wrap them in <tool_calls> tags. ",
    "<tool_calls>",
    "</tool_calls>",
];

/// The paths the pieces and arguments write: a call taken with any other merged two.
const PATHS: &[&str] = &["a.txt", "b.txt", "c.txt", "d.txt", "é", "a", "b"];

const ARGUMENTS: &[&str] = &[
    "{}",
    "{\"path\": \"a.txt\"}",
    "{\"n\": 18446744073709551617, \"x\": 1.5e300}",
    "{\"path\": \"a.txt\",}",
    "{'path': 'é'}",
    "{\"s\": \"\\u00e9\\n\\\"q\\\"\"}",
    "",
    "{\"path\":\"a\"}{\"path\":\"b\"}",
    "{\"path\": \"a\"} {\"path\": \"b\"}",
    "{\"path\": \"a\"}{\"path\":\"a\"}",
    "{\"path\": \"a\"}\n{\"path\": \"a\"} {\"path\":\"a\"}",
    CUT_NUMBER,
];

/// Arguments that end inside a number, their closers missing: cut off when the reply says it
/// stopped at the token limit (TLP-010), a missing brace otherwise.
const CUT_NUMBER: &str = "{\"path\": \"a.txt\", \"n\": 10";

type Seen = (Vec<(u8, String, Option<Value>, Value)>, String, String);

/// The calls as compared: by kind (the wire's, marked in text, unmarked), each in its order.
fn seen(calls: &[CheckedCall<Value>]) -> Vec<(u8, String, Option<Value>, Value)> {
    let mut out: Vec<_> = calls
        .iter()
        .map(|c| {
            let kind = match c.source {
                CallSource::ToolCalls | CallSource::Stream => 0,
                CallSource::Text("bare_json" | "pythonic") => 2,
                CallSource::Text(_) => 1,
            };
            let name = c.name.as_str().unwrap_or_default().to_string();
            (kind, name, c.raw_name.clone(), c.arguments.clone())
        })
        .collect();
    out.sort_by_key(|(kind, _, _, _)| *kind);
    out
}

/// The tools the names are checked against, when the input asks for a registry.
const REGISTERED: &[&str] = &["f", "g", "read_file"];

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let registry = Registry::new(false, LIMITS);
        for name in REGISTERED {
            let definition = Definition {
                name: name.to_string(),
                description: String::new(),
                version: "1.0.0".into(),
                category: None,
                schema: json!({"type": "object"}),
                annotations: None,
                allow_truncated: false,
            };
            registry.register(definition).unwrap();
        }
        registry
    })
}

/// The names law: a call checked against the registry is named as registered; the model's
/// other spelling is kept in `raw_name`, and the renaming is the call's first repair.
fn named_as_registered(calls: &[CheckedCall<Value>], what: &str) {
    for call in calls {
        let name = call.name.as_str().expect("a name");
        assert!(REGISTERED.contains(&name), "{what}: {name}");
        let renamed = call.repairs.first().map(|r| r.kind.as_str()) == Some("tool_name");
        match &call.raw_name {
            Some(Value::String(raw)) => {
                assert!(raw != name && raw.eq_ignore_ascii_case(name) && renamed, "{what}: {raw} as {name}");
            }
            None => assert!(!renamed, "{what}: renamed with no raw name"),
            Some(other) => panic!("{what}: raw name {other:?}"),
        }
    }
}

/// A name as a model may write it: the tool's, in the case the input picks.
fn spelt(name: &str, how: u8) -> String {
    match how % 3 {
        0 => name.to_string(),
        1 => name.to_ascii_uppercase(),
        _ => name[..1].to_ascii_uppercase() + &name[1..],
    }
}

/// No call merged glued objects, and no quoted call ran: arguments are flat (no list or object
/// inside), every path is one the reply wrote, and nothing is named `delete_file` (which the
/// pieces write only quoted or inside a think block).
fn nothing_merged(calls: &[CheckedCall<Value>], what: &str) {
    for call in calls {
        assert_ne!(call.name.as_str(), Some("delete_file"), "{what}");
        let Value::Object(args) = &call.arguments else {
            panic!("{what}: arguments {:?}", call.arguments);
        };
        for (key, value) in args {
            assert!(!value.is_array() && !value.is_object(), "{what}: {args:?}");
            if key == "path" {
                assert!(PATHS.contains(&value.as_str().unwrap_or("")), "{what}: {args:?}");
            }
        }
    }
}

fn ignore(_: &Accumulator, _: Event) -> Result<(), Infallible> {
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let [calls_byte, step_byte, split_byte, rest @ ..] = data else {
        return;
    };
    let calls: Vec<(String, &str)> = rest
        .iter()
        .take((calls_byte % 4) as usize)
        .map(|b| {
            let name = spelt(["f", "g", "read_file"][(b % 3) as usize], b >> 5);
            (name, ARGUMENTS[(b >> 1) as usize % ARGUMENTS.len()])
        })
        .collect();
    let content: String = rest
        .iter()
        .skip(calls.len())
        .take(8)
        .map(|b| PIECES[*b as usize % PIECES.len()])
        .collect();
    let step = 1 + (*step_byte % 9) as usize;
    // Ollama sends arguments as objects, whole: a call's text that is no object is sent as {}.
    let ollama = *step_byte >= 128;
    let object = |args: &str| match serde_json::from_str::<Value>(args) {
        Ok(v @ Value::Object(_)) => v,
        _ => json!({}),
    };
    let split = 1 + *split_byte as usize;
    let finish = if calls_byte & 0x80 != 0 { "length" } else { "stop" };

    // Whole.
    let tool_calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, args))| match ollama {
            true => json!({"function": {"index": i, "name": name, "arguments": object(args)}}),
            false => {
                json!({"id": format!("call_{i}"), "type": "function", "function": {"name": name, "arguments": args}})
            }
        })
        .collect();
    let mut message = json!({"role": "assistant", "content": content});
    if !tool_calls.is_empty() {
        message["tool_calls"] = Value::from(tool_calls.clone());
    }
    let body = match ollama {
        true => json!({"model": "m", "message": message, "done": true, "done_reason": finish}),
        false => json!({"choices": [{"index": 0, "message": message, "finish_reason": finish}]}),
    };
    // With a registry, names are checked and come back as registered.
    let checked = *split_byte & 1 == 1;
    let host = SerdeHost::new(checked.then(registry));
    let mut whole = Pipeline::new(&host, LIMITS, true);
    let reply = read_reply(&SerdeParser, body.to_string().as_bytes(), &LIMITS).unwrap();
    let said = check_reply(&mut whole, reply, Formats::default()).unwrap();
    nothing_merged(&whole.calls, &format!("whole: {content:?} {calls:?}"));
    if checked {
        named_as_registered(&whole.calls, &format!("whole: {content:?} {calls:?}"));
    }
    if finish == "length" && !ollama {
        let cut = |c: &&CheckedCall<Value>| c.arguments.get("n") == Some(&json!(10));
        assert!(!whole.calls.iter().any(|c| cut(&c)), "a cut number taken: {calls:?}");
    }
    let expected: Seen = (seen(&whole.calls), said.text, said.reasoning);
    let whole_errors = whole.errors.len();

    // Streamed: the text in pieces of `step` characters, each call's id and name, then its
    // arguments in pieces, then the end; the bytes cut every `split`.
    let mut sse = String::new();
    if ollama {
        for piece in common::pieces(&content, step) {
            let line = json!({"message": {"role": "assistant", "content": piece}, "done": false});
            sse.push_str(&format!("{line}\n"));
        }
        for call in &tool_calls {
            let line = json!({"message": {"role": "assistant", "content": "", "tool_calls": [call]}, "done": false});
            sse.push_str(&format!("{line}\n"));
        }
        let last = json!({"message": {"role": "assistant", "content": ""}, "done": true, "done_reason": finish});
        sse.push_str(&format!("{last}\n"));
    } else {
        let mut chunk = |delta: Value, finish: Value| {
            let c = json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
            sse.push_str(&format!("data: {c}\n\n"));
        };
        for piece in common::pieces(&content, step) {
            chunk(json!({"content": piece}), Value::Null);
        }
        for (i, (name, args)) in calls.iter().enumerate() {
            let first = json!({"index": i, "id": format!("call_{i}"), "type": "function", "function": {"name": name, "arguments": ""}});
            chunk(json!({"tool_calls": [first]}), Value::Null);
            for piece in common::pieces(args, step) {
                let more = json!({"index": i, "function": {"arguments": piece}});
                chunk(json!({"tool_calls": [more]}), Value::Null);
            }
        }
        chunk(json!({}), json!(finish));
        sse.push_str("data: [DONE]\n\n");
    }
    let mut reader = StreamReader::new(LIMITS).with_text_calls(LIMITS, Formats::default());
    for bytes in sse.as_bytes().chunks(split) {
        reader.feed_bytes(bytes, &SerdeParser, &mut ignore).unwrap();
    }
    reader.end_bytes(&SerdeParser, &mut ignore).unwrap();
    let is_tool = known_tool(&host);
    reader.finish_text(is_tool.as_ref().map(|f| f as &dyn Fn(&str) -> bool));
    let assembled = reader.calls_mut().finish();
    let text_calls = reader.take_text_calls();
    let mut streamed = Pipeline::new(&host, LIMITS, true);
    // As the accumulator does: the stream said where it stopped.
    streamed.set_cut_by_length(reader.cut_by_length() || reader.stopped_unfinished());
    check_stream_reply(&mut streamed, assembled, text_calls, None, |_| None).unwrap();
    let so_far = reader.said_so_far();
    let got: Seen = (
        seen(&streamed.calls),
        so_far.text().to_string(),
        so_far.reasoning().to_string(),
    );
    assert_eq!(
        got, expected,
        "{content:?} {calls:?} step {step} split {split}"
    );
    assert_eq!(streamed.errors.len(), whole_errors, "{content:?} {calls:?}");
});
