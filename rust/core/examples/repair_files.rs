//! Repair cost per file, for profiling the repair pass on a corpus dumped to disk:
//! `cargo run --release -p toolmend-core --example repair_files -- FILE...`.

use std::time::Instant;

use toolmend_core::{repair, Limits};

fn main() {
    let limits = Limits {
        max_size: 1 << 26,
        timeout_ms: 0,
        ..Limits::default()
    };
    for path in std::env::args().skip(1) {
        let text = std::fs::read(&path).expect("readable file");
        let best = (0..200)
            .map(|_| {
                let t = Instant::now();
                std::hint::black_box(repair(&text, &limits).ok());
                t.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min);
        println!(
            "{:8.1} us  {:7.1} MB/s  {path}",
            best * 1e6,
            text.len() as f64 / best / 1e6
        );
    }
}
