//! The incremental reader: any split of the text gives the tokens of the whole, and strict
//! JSON never breaks it.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;
use toolmend_core::partial::{Reader, Token};
use toolmend_core::{validate, Limits};

fn read(pieces: &[&str]) -> (Vec<Token<'static>>, bool) {
    let mut reader = Reader::default();
    let mut out = Vec::new();
    for piece in pieces {
        reader.feed(piece, &mut out);
    }
    // String text is handed out per piece: join runs so that splits compare equal.
    let mut merged: Vec<Token<'static>> = Vec::new();
    for token in out {
        if let (Token::StringText(new), Some(Token::StringText(old))) = (&token, merged.last_mut())
        {
            old.to_mut().push_str(new);
            continue;
        }
        merged.push(token);
    }
    (merged, reader.is_broken())
}

fuzz_target!(|data: &[u8]| {
    let Some((&cuts, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let whole = read(&[&text]);
    if common::strict_json(text.as_bytes()) {
        assert!(!whole.1, "strict JSON broke the reader");
    }
    // What the reader completes, the strict validator accepts (the stream relies on it to skip
    // validating arguments twice).
    let mut reader = Reader::default();
    reader.feed(&text, &mut Vec::new());
    if reader.is_complete() {
        let limits = Limits {
            max_depth: usize::MAX,
            timeout_ms: 0,
            ..Limits::default()
        };
        assert!(
            validate(text.as_bytes(), &limits).is_ok(),
            "the reader completed what validate refuses"
        );
    }
    // Pieces of 1 + (cuts % 16) bytes, moved to char boundaries.
    let step = 1 + (cuts as usize % 16);
    let pieces = common::pieces(&text, step);
    assert_eq!(read(&pieces), whole, "split into {step}-byte pieces");
});
