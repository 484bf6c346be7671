//! Calls written in text: found in one pass without panic; a token-by-token parser given any
//! split finds the same calls (at the same positions), gives back the same text and counts the
//! same quoted calls as one given it whole (the buffer cap is above the fuzzer's input length:
//! where a block crosses it depends on the split). And nothing inside a JSON string is ever a
//! call: the input written as a string value inside a call, in any format, gives that one call
//! back with the string intact. A raw value of a tag format (Qwen3-Coder, MiniMax, GLM) is
//! that value exactly; a value holding the format's own tags (which no reader of the format can
//! delimit) is only read without panic here. No silent drop: a well-formed call on its own
//! line after any text that makes no call itself is taken, refused with an error, or left with
//! a note saying why (or read as reasoning, where a think block the text opened holds it).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;
use toolmend_core::extract::{check_name, text_calls, FoundCall, TextCallParser, TextEvent};
use toolmend_core::Limits;

const LIMITS: Limits = Limits {
    max_size: 1 << 20,
    max_depth: 64,
    timeout_ms: 0,
};

fn parse(pieces: &[&str]) -> (String, Vec<FoundCall>, usize) {
    let mut parser = TextCallParser::new(LIMITS, 50_000);
    let mut text = String::new();
    let mut calls = Vec::new();
    let mut take = |events: Vec<TextEvent>| {
        for event in events {
            match event {
                TextEvent::Text(t) => text.push_str(&t),
                TextEvent::Calls(found) => calls.extend(found),
                TextEvent::Reasoning(_) => {}
                TextEvent::TextWasReasoning(_) => text.clear(),
                TextEvent::CallsInText {
                    text: t,
                    calls: found,
                } => {
                    text = t;
                    calls.extend(found);
                }
            }
        }
    };
    for piece in pieces {
        take(parser.feed(piece));
    }
    let quoted_before_flush = parser.quoted();
    // With the calls written without a marker, read from the whole text at its end.
    take(parser.finish(None));
    assert!(parser.quoted() >= quoted_before_flush);
    (text, calls, parser.quoted())
}

/// A call to `write_file` in each format, with `ARGS` where its JSON arguments go.
const WRAPPERS: &[&str] = &[
    r#"<tool_call>{"name": "write_file", "arguments": ARGS}</tool_call>"#,
    r#"<tool_call>{"name": "write_file", "arguments": ARGS}"#,
    r#"<function=write_file>ARGS</function>"#,
    r#"<|python_tag|>{"name": "write_file", "parameters": ARGS}<|eom_id|>"#,
    "```tool_call\n{\"name\": \"write_file\", \"arguments\": ARGS}\n```",
    "```json\n{\"name\": \"write_file\", \"arguments\": ARGS}\n```",
    r#"[TOOL_CALLS]write_file[ARGS]ARGS"#,
    r#"[TOOL_CALLS] [{"name": "write_file", "arguments": ARGS}]"#,
    r#"<|tool_call_begin|>functions.write_file:0 <|tool_call_argument_begin|>ARGS<|tool_call_end|>"#,
    "<｜tool▁call▁begin｜>write_file<｜tool▁sep｜>ARGS<｜tool▁call▁end｜>",
    r#"<|channel|>commentary to=functions.write_file <|constrain|>json<|message|>ARGS<|call|>"#,
    r#"<TOOLCALL>[{"name": "write_file", "arguments": ARGS}]</TOOLCALL>"#,
    r#"functools[{"name": "write_file", "arguments": ARGS}]"#,
];

fn string_stays_a_string(content: &str, which: u8) {
    let args = serde_json::json!({ "content": content }).to_string();
    let wrapper = WRAPPERS[usize::from(which) % WRAPPERS.len()];
    // `[ARGS]` is Mistral's marker, not the placeholder.
    let reply = wrapper
        .replace("[ARGS]", "\u{0}")
        .replace("ARGS", &args)
        .replace('\u{0}', "[ARGS]");
    let check = |calls: &[FoundCall], how: &str| {
        assert_eq!(calls.len(), 1, "{how}: {reply:?} gave {calls:?}");
        let call = &calls[0];
        assert_eq!(call.name.as_deref(), Some("write_file"), "{how}: {reply:?}");
        assert!(call.error.is_none(), "{how}: {reply:?}: {call:?}");
        let value: serde_json::Value =
            serde_json::from_str(call.arguments.as_deref().unwrap_or("")).expect("arguments");
        assert_eq!(value["content"].as_str(), Some(content), "{how}: {reply:?}");
    };
    check(&text_calls(&reply, &LIMITS, None).calls, "batch");
    check(&parse(&[&reply]).1, "one token");
    check(&parse(&common::pieces(&reply, 3)).1, "3-byte tokens");
}

/// What opens or closes a parameter (a `<parameter` followed by anything else is text).
const PARAMETER_TAGS: &[&str] = &["<parameter=", "<parameter ", "<parameter\t", "</parameter>"];

/// A call to `write_file` in each tag format, with `VALUE` where its raw value goes, and the
/// tags that format cannot delimit inside a value.
const TAGGED: &[(&str, &[&str])] = &[
    (
        "<tool_call>\n<function=write_file>\n<parameter=content>\nVALUE\n</parameter>\n</function>\n</tool_call>",
        PARAMETER_TAGS,
    ),
    (
        r#"<minimax:tool_call><invoke name="write_file"><parameter name="content">VALUE</parameter></invoke></minimax:tool_call>"#,
        PARAMETER_TAGS,
    ),
    (
        "<tool_call>write_file<arg_key>content</arg_key><arg_value>VALUE</arg_value></tool_call>",
        &["</arg_value>", "<arg_key>"],
    ),
];

fn raw_value_stays_the_value(content: &str, which: u8) {
    let value = format!("x{content}y");
    let (wrapper, own) = TAGGED[usize::from(which) % TAGGED.len()];
    let reply = wrapper.replace("VALUE", &value);
    let batch = text_calls(&reply, &LIMITS, None);
    let split = parse(&common::pieces(&reply, 3));
    for (how, calls, text) in [
        ("batch", batch.calls, batch.text),
        ("3-byte tokens", split.1, split.0),
    ] {
        if own.iter().any(|tag| value.contains(tag)) {
            // The format cannot delimit such a value: reading it must not panic, and what it
            // gives is the case docs/repair.md names as open (tests/test_call_rule.py holds the
            // well-formed markups to a refused call).
            let _ = (calls, text);
            continue;
        }
        assert!(
            calls.len() == 1 && calls[0].name.as_deref() == Some("write_file"),
            "{how}: {reply:?} gave {calls:?}"
        );
        let call = &calls[0];
        assert!(call.error.is_none(), "{how}: {reply:?}: {call:?}");
        let args: serde_json::Value =
            serde_json::from_str(call.arguments.as_deref().unwrap_or("")).expect("arguments");
        assert_eq!(args["content"].as_str(), Some(value.as_str()), "{how}: {reply:?}");
    }
}

/// A real call after `content` that makes no call of its own: taken, refused or noted, never
/// gone without a word. (A call `content` opens may hold what follows as its arguments' text,
/// and a fence it leaves open as its data.)
fn no_silent_drop(content: &str) {
    // An unclosed fence holds all that follows as its data (read for calls as a whole).
    if content.contains("```") || !text_calls(content, &LIMITS, None).calls.is_empty() {
        return;
    }
    const REAL: &str = r#"<tool_call>{"name": "search_docs", "arguments": {"query": "x"}}</tool_call>"#;
    let reply = format!("{content}\n{REAL}");
    let found = text_calls(&reply, &LIMITS, None);
    let taken = found.calls.iter().any(|c| {
        c.name.as_deref() == Some("search_docs")
            && c.arguments.as_deref().and_then(|a| serde_json::from_str(a).ok())
                == Some(serde_json::json!({"query": "x"}))
            && c.error.is_none()
    });
    // A call cut off is refused too (TLP-010) unless the caller takes cut calls, and so is
    // one whose name the pipeline refuses (TLP-002/003/005): each is an error the caller sees.
    let bad_name = |c: &FoundCall| c.name.as_deref().is_none_or(|n| check_name(n).is_err());
    let refused = (found.calls.iter()).any(|c| c.error.is_some() || c.cut || bad_name(c));
    let in_reasoning = found.reasoning.contains("search_docs");
    assert!(
        taken || refused || !found.notes.is_empty() || in_reasoning,
        "{reply:?} gave {:?}, text {:?}",
        found.calls,
        found.text
    );
}

fuzz_target!(|data: &[u8]| {
    let Some((&cuts, rest)) = data.split_first() else {
        return;
    };
    let content = String::from_utf8_lossy(rest);
    let found = text_calls(&content, &LIMITS, None);
    for call in &found.calls {
        assert!(call.position <= content.len());
        if let Some(error) = &call.error {
            assert!(error.position <= content.len());
        }
    }
    assert!(found.text.len() <= content.len(), "cut-out text grew");

    let step = 1 + (cuts as usize % 12);
    let pieces = common::pieces(&content, step);
    let whole = parse(&[&content]);
    assert_eq!(parse(&pieces), whole, "split into {step}-byte pieces");
    assert_eq!(
        whole.2, found.quoted,
        "quoted calls, token by token and whole"
    );

    string_stays_a_string(&content, cuts);
    raw_value_stays_the_value(&content, cuts);
    no_silent_drop(&content);
});
