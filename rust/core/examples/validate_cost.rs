//! Where validating large JSON arguments spends its time: parsing into a Value, then the schema.
//! `cargo run --release --example validate_cost -- FILE`
use std::time::Instant;

use serde_json::json;
use toolmend_core::schema::{Definition, Registry};
use toolmend_core::Limits;

fn main() {
    let path = std::env::args().nth(1).expect("a JSON file");
    let bytes = std::fs::read(path).unwrap();
    let limits = Limits {
        max_size: 1 << 22,
        ..Limits::default()
    };
    let registry = Registry::new(false, limits);
    let tool = registry
        .register(Definition {
            name: "write".into(),
            description: String::new(),
            version: "1.0.0".into(),
            category: None,
            schema: json!({"type": "object", "properties": {"path": {"type": "string"}, "records": {"type": "array"}}}),
            annotations: None,
            allow_truncated: false,
        })
        .unwrap();
    for _ in 0..3 {
        let start = Instant::now();
        let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        let parse = start.elapsed();
        let start = Instant::now();
        tool.validate_value(&value).unwrap();
        let check = start.elapsed();
        let start = Instant::now();
        drop(value);
        let free = start.elapsed();
        let start = Instant::now();
        tool.validate_json(&bytes, &limits).unwrap();
        println!(
            "parse {parse:?}, schema {check:?}, drop {free:?}, validate_json {:?}",
            start.elapsed()
        );
    }
}
