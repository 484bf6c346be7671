//! Streamed fragments in any order and split: no panic, every call that started comes out
//! exactly once (assembled or failed), assembled arguments are strict JSON, and how one call's
//! arguments were split does not change what it assembles to.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;
use toolmend_core::stream::{Accumulator, Delta, Event};
use toolmend_core::Limits;

fn limits() -> Limits {
    // Small limits, so that the size and depth failures are reached too.
    Limits {
        max_size: 512,
        max_depth: 8,
        timeout_ms: 0,
    }
}

/// Records of: a flags byte (index in bits 0-1, id bit 2, complete bit 3, name bit 4), a length
/// byte, then that many bytes of argument text.
fn deltas(data: &[u8]) -> Vec<Delta> {
    let mut out = Vec::new();
    let mut i = 0;
    while i + 2 <= data.len() {
        let (flags, len) = (data[i], data[i + 1] as usize % 32);
        let end = (i + 2 + len).min(data.len());
        let text = String::from_utf8_lossy(&data[i + 2..end]).into_owned();
        out.push(Delta {
            index: (flags & 3) as usize,
            id: (flags & 4 != 0).then(|| format!("call_{}", flags >> 5)),
            name: (flags & 16 != 0).then(|| "read_file".to_string()),
            arguments: Some(text),
            complete: flags & 8 != 0,
        });
        i = end;
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let mut acc = Accumulator::new(limits());
    let mut started = 0;
    let mut results = Vec::new();
    for delta in deltas(data) {
        for event in acc.feed(delta) {
            if matches!(event, Event::Started { .. }) {
                started += 1;
            }
        }
        results.extend(acc.take_completed());
    }
    results.extend(acc.finish());
    // A call handed out before a fragment of its own came is reported once more, as that.
    let reports = results
        .iter()
        .filter(|r| r.as_ref().is_err_and(|f| f.handed_out))
        .count();
    assert_eq!(
        results.len() - reports,
        started,
        "a call was lost or handed out twice"
    );
    for call in results.iter().flatten() {
        assert!(
            common::strict_json(call.arguments.as_bytes()),
            "{:?}",
            call.arguments
        );
    }

    // One call, its whole argument text fed at once or in pieces: the same result.
    let text = String::from_utf8_lossy(data);
    let one = |pieces: &[&str]| {
        let mut acc = Accumulator::new(limits());
        for piece in pieces {
            acc.feed(Delta {
                index: 0,
                arguments: Some(piece.to_string()),
                ..Delta::default()
            });
        }
        acc.finish()
    };
    let step = 1 + data.first().map_or(0, |&b| b as usize % 7);
    let pieces = common::pieces(&text, step);
    assert_eq!(one(&pieces), one(&[&text]));
});
