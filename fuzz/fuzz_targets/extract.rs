//! Calls written in text: found in one pass without panic, and a token-by-token parser given
//! any split finds the same calls and gives back the same text as one given it whole. (The
//! buffer cap is above the fuzzer's input length: where a block crosses it depends on the split.)
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;
use toolmend_core::extract::{text_calls, TextCallParser, TextEvent};
use toolmend_core::Limits;

fn parse(pieces: &[&str]) -> (String, Vec<(Option<String>, Option<String>)>) {
    let mut parser = TextCallParser::new(
        Limits {
            timeout_ms: 0,
            ..Limits::default()
        },
        50_000,
    );
    let mut text = String::new();
    let mut calls = Vec::new();
    let mut take = |events: Vec<TextEvent>| {
        for event in events {
            match event {
                TextEvent::Text(t) => text.push_str(&t),
                TextEvent::Calls(found) => {
                    calls.extend(found.into_iter().map(|c| (c.name, c.arguments)))
                }
            }
        }
    };
    for piece in pieces {
        take(parser.feed(piece));
    }
    take(parser.flush());
    (text, calls)
}

fuzz_target!(|data: &[u8]| {
    let Some((&cuts, rest)) = data.split_first() else {
        return;
    };
    let content = String::from_utf8_lossy(rest);
    let limits = Limits {
        timeout_ms: 0,
        ..Limits::default()
    };
    let found = text_calls(&content, &limits, None);
    for call in &found.calls {
        assert!(call.position <= content.len());
    }
    assert!(found.text.len() <= content.len(), "cut-out text grew");

    let step = 1 + (cuts as usize % 12);
    let pieces = common::pieces(&content, step);
    assert_eq!(
        parse(&pieces),
        parse(&[&content]),
        "split into {step}-byte pieces"
    );
});
