//! Laws of the stream reader on generated raw streams (stable Rust's stand-in for the `wire`
//! fuzz target): the same calls however the bytes are chunked, refused lines included, and one
//! outcome per call through the pipeline.

use std::convert::Infallible;

use proptest::prelude::*;
use toolmend_core::pipeline::{check_stream, Pipeline, SerdeHost};
use toolmend_core::stream::{Accumulator, AssembledCall, Event, FailedCall};
use toolmend_core::wire::{SerdeParser, StreamReader};
use toolmend_core::Limits;

fn limits() -> Limits {
    Limits {
        max_size: 256,
        max_depth: 8,
        timeout_ms: 0,
    }
}

/// Lines of both streams, broken ones among them.
fn stream() -> impl Strategy<Value = Vec<u8>> {
    let line = prop_oneof![
        (0usize..3, "[a-z]{1,6}", "[{}\\[\\]\":a-z0-9 ,]{0,24}").prop_map(|(i, name, args)| {
            let call =
                serde_json::json!({"index": i, "function": {"name": name, "arguments": args}});
            format!(
                "data: {}\n\n",
                serde_json::json!({"choices": [{"delta": {"tool_calls": [call]}}]})
            )
        }),
        ("[a-z]{1,6}", 0u32..100).prop_map(|(name, n)| {
            let call = serde_json::json!({"function": {"name": name, "arguments": {"n": n}}});
            format!(
                "{}\n",
                serde_json::json!({"message": {"tool_calls": [call]}})
            )
        }),
        Just("data: [DONE]\n".to_string()),
        Just(": keep-alive\r\n".to_string()),
        Just("data: {\"choices\": [\n".to_string()),
        Just("data: ]}\n".to_string()),
        Just("\n".to_string()),
        "[a-z{}\" ]{0,80}".prop_map(|junk| format!("data: {junk}\n")),
        Just("{\"done\": true}\n".to_string()),
    ];
    prop::collection::vec(line, 0..12).prop_map(|lines| lines.concat().into_bytes())
}

type Calls = Vec<Result<AssembledCall, FailedCall>>;

fn read(line_limit: usize, chunks: &[&[u8]]) -> Calls {
    let mut reader = StreamReader::with_line_limit(limits(), line_limit);
    let mut ignore = |_: &Accumulator, _: Event| Ok::<(), Infallible>(());
    for chunk in chunks {
        reader.feed_bytes(chunk, &SerdeParser, &mut ignore).unwrap();
    }
    reader.end_bytes(&SerdeParser, &mut ignore).unwrap();
    reader.calls_mut().finish()
}

proptest! {
    #[test]
    fn the_same_calls_however_the_bytes_are_chunked(
        bytes in stream(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..16),
        line_limit in prop_oneof![Just(40usize), Just(120), Just(usize::MAX)],
    ) {
        let mut at: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
        at.sort_unstable();
        let mut chunks = Vec::new();
        let mut from = 0;
        for to in at.into_iter().chain([bytes.len()]) {
            chunks.push(&bytes[from..to]);
            from = to;
        }
        let whole = read(line_limit, &[&bytes]);
        prop_assert_eq!(&read(line_limit, &chunks), &whole);

        let host = SerdeHost::new(None);
        let mut pipeline = Pipeline::new(&host, limits(), true);
        let count = whole.len();
        check_stream(&mut pipeline, whole, |_| None).unwrap();
        prop_assert_eq!(pipeline.calls.len() + pipeline.errors.len(), count);
        prop_assert!(pipeline.calls.iter().all(|c| c.arguments.is_object()));
    }
}
