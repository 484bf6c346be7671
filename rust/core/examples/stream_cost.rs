//! Cost per 20-byte chunk of the streaming pieces, without Python: the accumulator alone and the
//! incremental reader alone. `cargo run --release --example stream_cost -- FILE`
use std::time::Instant;

use toolmend_core::partial::Reader;
use toolmend_core::stream::{Accumulator, Delta};
use toolmend_core::Limits;

fn main() {
    let path = std::env::args().nth(1).expect("a JSON file");
    let text = std::fs::read_to_string(path).unwrap();
    let chunks: Vec<&str> = text
        .as_bytes()
        .chunks(20)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    let n = chunks.len() as f64;
    for _ in 0..3 {
        let start = Instant::now();
        let mut acc = Accumulator::new(Limits {
            max_size: 1 << 23,
            ..Limits::default()
        });
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
        println!("accumulator feed {feed:.0} ns/chunk, reader {read:.0} ns/chunk ({count} tokens)");
    }
}
