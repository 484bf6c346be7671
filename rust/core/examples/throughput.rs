//! Core throughput without Python: `cargo run --release -p toolmend-core --example throughput`.
//! Prints MB/s of strict validation and of repair per fault class, with serde_json as the floor.

use std::time::Instant;

use toolmend_core::{repair, validate, Limits};

/// A write_file-like argument object of about `size` bytes, valid JSON.
fn valid_document(size: usize) -> String {
    let mut s = String::from("{\"path\": \"src/main.rs\", \"files\": [");
    let mut i = 0;
    while s.len() < size {
        if i > 0 {
            s.push_str(", ");
        }
        s.push_str(&format!(
            "{{\"name\": \"file_{i}.txt\", \"size\": {}, \"ok\": true, \"content\": \"line one of the file\\nsecond line with a \\\"quote\\\" and more text here\"}}",
            i * 37
        ));
        i += 1;
    }
    s.push_str("]}");
    s
}

fn best_seconds(mut f: impl FnMut()) -> f64 {
    (0..15)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let limits = Limits {
        max_size: 1 << 26,
        max_depth: 1 << 20,
        timeout_ms: 0,
    };
    // With file arguments, time just those inputs (to look into one case of the Python benches).
    let files: Vec<String> = std::env::args().skip(1).collect();
    for path in &files {
        let input = std::fs::read(path).expect("readable file");
        let v = best_seconds(|| {
            let _ = validate(&input, &limits);
        });
        let r = best_seconds(|| {
            repair(&input, &limits).unwrap();
        });
        let m = best_seconds(|| {
            toolmend_core::mend(&input, &limits).unwrap();
        });
        let mb = input.len() as f64 / 1e6;
        println!(
            "{path}: validate {:.0} MB/s, repair {:.0} MB/s, mend alone {:.0} MB/s",
            mb / v,
            mb / r,
            mb / m
        );
    }
    if !files.is_empty() {
        return;
    }
    for size in [2 << 10, 100 << 10, 1 << 20] {
        let valid = valid_document(size);
        let cases: Vec<(&str, String)> = vec![
            ("valid", valid.clone()),
            (
                "trailing commas",
                valid.replace("}, {", "}, , {").replace("true,", "true,,"),
            ),
            ("truncated", valid[..valid.len() - 7].to_string()),
            (
                "single quotes",
                valid.replace('"', "'").replace("\\'", "\""),
            ),
            (
                "unquoted keys",
                valid
                    .replace("\"name\"", "name")
                    .replace("\"size\"", "size"),
            ),
            ("python literals", valid.replace("true", "True")),
            ("raw newlines", valid.replace("\\n", "\n")),
        ];
        let floor = best_seconds(|| {
            serde_json::from_str::<serde_json::Value>(&valid).unwrap();
        });
        println!(
            "{} KiB  serde_json::Value: {:7.0} MB/s",
            size >> 10,
            valid.len() as f64 / floor / 1e6
        );
        let v = best_seconds(|| validate(valid.as_bytes(), &limits).unwrap());
        println!(
            "  {:<16} validate {:7.0} MB/s",
            "valid",
            valid.len() as f64 / v / 1e6
        );
        for (name, input) in &cases {
            let t = best_seconds(|| {
                repair(input.as_bytes(), &limits).unwrap();
            });
            let n = repair(input.as_bytes(), &limits).unwrap().repairs.len();
            println!(
                "  {:<16} repair   {:7.0} MB/s  ({n} repairs)",
                name,
                input.len() as f64 / t / 1e6
            );
        }
    }
}
