//! Cost per 20-byte chunk of the streaming pieces, without Python: the accumulator alone, the
//! incremental reader alone, and a raw OpenAI stream read line by line (one `data:` line a chunk, as
//! `benches/feed_paths.py` feeds it). `cargo run --release --example stream_cost -- FILE`
use std::convert::Infallible;
use std::time::Instant;

use toolmend_core::partial::Reader;
use toolmend_core::stream::{Accumulator, Delta};
use toolmend_core::wire::{SerdeParser, StreamReader};
use toolmend_core::Limits;

/// One `chat.completion.chunk` line carrying `arguments`, as an OpenAI-compatible server writes it.
fn sse_line(arguments: &str) -> Vec<u8> {
    let arguments = serde_json::to_string(arguments).expect("a str");
    format!(
        "data: {{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\
         \"model\":\"m\",\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\
         \"function\":{{\"arguments\":{arguments}}}}}]}},\"finish_reason\":null}}]}}\n\n"
    )
    .into_bytes()
}

fn main() {
    let path = std::env::args().nth(1).expect("a JSON file");
    let text = std::fs::read_to_string(path).unwrap();
    let chunks: Vec<&str> = text
        .as_bytes()
        .chunks(20)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    let lines: Vec<Vec<u8>> = chunks.iter().map(|c| sse_line(c)).collect();
    let limits = Limits {
        max_size: 1 << 23,
        ..Limits::default()
    };
    let n = chunks.len() as f64;
    for _ in 0..3 {
        let start = Instant::now();
        let mut acc = Accumulator::new(limits);
        for c in &chunks {
            acc.feed(Delta {
                index: 0,
                arguments: Some(c.to_string()),
                ..Delta::default()
            });
        }
        let feed = start.elapsed().as_nanos() as f64 / n;
        let start = Instant::now();
        let mut reader = Reader::default();
        let mut tokens = Vec::new();
        let mut count = 0;
        for c in &chunks {
            reader.feed(c, &mut tokens);
            count += tokens.len();
            tokens.clear();
        }
        let read = start.elapsed().as_nanos() as f64 / n;
        let start = Instant::now();
        let mut stream = StreamReader::new(limits);
        let mut events = 0;
        let mut sink = |_: &Accumulator, _| -> Result<(), Infallible> {
            events += 1;
            Ok(())
        };
        for line in &lines {
            let _ = stream.feed_bytes(line, &SerdeParser, &mut sink);
        }
        let raw = start.elapsed().as_nanos() as f64 / n;
        println!(
            "accumulator feed {feed:.0} ns/chunk, reader {read:.0} ns/chunk ({count} tokens), \
             raw lines {raw:.0} ns/chunk ({events} events)"
        );
    }
}
