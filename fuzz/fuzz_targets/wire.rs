//! Raw streams and reply bodies over serde values: no panic; the same calls however the bytes
//! are chunked (a line too long to read included); every call either checks out with an object
//! for arguments or is a coded failure, none lost; a chunk read as a value, as an SSE event
//! and as an NDJSON line gives the same calls; every call entry of a reply (in any choice and
//! shape) gives exactly one call or error, and an error body or no reply one error.
#![no_main]

use std::convert::Infallible;

use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;
use serde_json::Value;
use toolmend_core::extract::Formats;
use toolmend_core::pipeline::{check_reply, check_stream, CallSource, Pipeline, SerdeHost};
use toolmend_core::stream::{Accumulator, AssembledCall, Event, FailedCall};
use toolmend_core::wire::{read_reply, Reply, SerdeParser, StreamReader};
use toolmend_core::Limits;

fn limits() -> Limits {
    // Small limits, so that the size and depth failures are reached too.
    Limits {
        max_size: 512,
        max_depth: 8,
        timeout_ms: 0,
    }
}

type Calls = Vec<Result<AssembledCall, FailedCall>>;

fn ignore(_: &Accumulator, _: Event) -> Result<(), Infallible> {
    Ok(())
}

/// A raw stream fed in `chunks`, then ended.
fn read_stream(line_limit: usize, chunks: &[&[u8]]) -> Calls {
    let mut reader = StreamReader::with_line_limit(limits(), line_limit);
    for chunk in chunks {
        reader.feed_bytes(chunk, &SerdeParser, &mut ignore).unwrap();
    }
    reader.end_bytes(&SerdeParser, &mut ignore).unwrap();
    reader.calls_mut().finish()
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, body)) = data.split_first() else {
        return;
    };
    // Lines of 16 to 1,024 bytes are read, so that refused lines are common.
    let line_limit = 16 << (flags & 7);
    let whole = read_stream(line_limit, &[body]);
    for call in whole.iter().flatten() {
        assert!(common::strict_json(call.arguments.as_bytes()), "{call:?}");
    }
    let step = 1 + (flags >> 3) as usize;
    let chunks: Vec<&[u8]> = body.chunks(step).collect();
    let split = read_stream(line_limit, &chunks);
    let key = |calls: &Calls| -> Vec<_> {
        calls
            .iter()
            .map(|c| match c {
                Ok(c) => Ok((c.index, c.id.clone(), c.name.clone(), c.arguments.clone())),
                Err(f) => Err((f.index, f.code, f.lost_line)),
            })
            .collect()
    };
    assert_eq!(key(&split), key(&whole), "{step}-byte chunks");

    // Every call through the checks: one outcome each, arguments an object.
    let host = SerdeHost::new(None);
    let mut pipeline = Pipeline::new(&host, limits(), true);
    let count = whole.len();
    check_stream(&mut pipeline, whole, |_| None).unwrap();
    assert_eq!(pipeline.calls.len() + pipeline.errors.len(), count);
    assert!(pipeline.calls.iter().all(|c| c.arguments.is_object()));

    // One chunk three ways: a value, an SSE event, an NDJSON line.
    if let Ok(chunk @ Value::Object(_)) = serde_json::from_slice::<Value>(body) {
        let mut reader = StreamReader::new(limits());
        reader.feed_chunk(&chunk, &mut ignore).unwrap();
        let as_value = key(&reader.calls_mut().finish());
        let compact = chunk.to_string();
        let sse = format!("data: {compact}\n\n");
        let ndjson = format!("{compact}\n");
        let big = usize::MAX;
        assert_eq!(key(&read_stream(big, &[sse.as_bytes()])), as_value);
        assert_eq!(key(&read_stream(big, &[ndjson.as_bytes()])), as_value);
    }

    // The same bytes as a whole reply: each `tool_calls` entry gives one call or one error;
    // the calls written in the content come on top.
    // A provider's error or a body that is no reply is one error.
    let reply = read_reply(&SerdeParser, body, &limits()).unwrap();
    let entries = match &reply {
        Reply::Messages(messages) => messages.iter().map(|m| m.tool_calls.len()).sum(),
        Reply::ProviderError(_) | Reply::NotAReply(_) => 1,
    };
    let mut fields_only = Pipeline::new(&host, limits(), true);
    check_reply(&mut fields_only, reply.clone(), Formats::NONE).unwrap();
    assert_eq!(fields_only.calls.len() + fields_only.errors.len(), entries);
    assert!(fields_only
        .calls
        .iter()
        .all(|c| c.source == CallSource::ToolCalls && c.arguments.is_object()));
    let mut with_text = Pipeline::new(&host, limits(), true);
    check_reply(&mut with_text, reply, Formats::preset("lenient").unwrap()).unwrap();
    assert!(with_text.calls.len() + with_text.errors.len() >= entries);
    assert!(with_text.calls.iter().all(|c| c.arguments.is_object()));
});
