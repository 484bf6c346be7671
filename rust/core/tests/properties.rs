//! Laws of the repair engine, checked on generated inputs (stable Rust's stand-in for fuzzing).

use proptest::prelude::*;
use toolmend_core::{mend, mend_unlogged, repair, validate, ErrorCode, Limits};

fn limits() -> Limits {
    // No deadline: these laws are about results, and debug builds on a busy CI box are slow.
    Limits {
        timeout_ms: 0,
        ..Limits::default()
    }
}

/// Valid JSON documents, serialised by serde_json in compact or pretty form.
fn json_value() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::Bool),
        any::<i64>().prop_map(|n| serde_json::json!(n)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| serde_json::json!(f)),
        ".{0,12}".prop_map(serde_json::Value::String),
    ];
    leaf.prop_recursive(6, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(serde_json::Value::Array),
            prop::collection::btree_map("[a-z\"\\\\ ]{0,6}", inner, 0..8)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Text made of the bytes that matter to a JSON grammar, so that broken shapes are common.
fn jsonish_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("{"),
        Just("}"),
        Just("["),
        Just("]"),
        Just(","),
        Just(":"),
        Just("\""),
        Just("'"),
        Just("\\"),
        Just(" "),
        Just("\n"),
        Just("a"),
        Just("key"),
        Just("1"),
        Just("-"),
        Just("."),
        Just("e"),
        Just("true"),
        Just("True"),
        Just("None"),
        Just("null"),
        Just("//"),
        Just("/*"),
        Just("*/"),
        Just("#"),
        Just("```"),
        Just("\\u"),
        Just("d8"),
        Just("00"),
        Just("\t"),
        Just("é"),
        Just("\u{201c}"),
        Just("\u{201d}"),
        Just("\u{2019}"),
        Just("\\\""),
        Just("\\n"),
        Just("12345678901234567890"),
        Just("0.5"),
    ];
    prop::collection::vec(piece, 0..60).prop_map(|p| p.concat())
}

fn nesting(value: &serde_json::Value) -> usize {
    match value {
        serde_json::Value::Array(items) => 1 + items.iter().map(nesting).max().unwrap_or(0),
        serde_json::Value::Object(members) => 1 + members.values().map(nesting).max().unwrap_or(0),
        _ => 0,
    }
}

/// The number tokens of strict JSON text (outside its strings).
fn number_tokens(json: &str) -> Vec<&str> {
    let b = json.as_bytes();
    let (mut tokens, mut i) = (Vec::new(), 0);
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                while b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < b.len() && matches!(b[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                {
                    i += 1;
                }
                tokens.push(&json[start..i]);
            }
            _ => i += 1,
        }
    }
    tokens
}

fn strictly_valid(text: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(&tame_numbers(text)).is_ok()
}

/// `text` with every number's magnitude made small and its syntax kept: serde_json refuses a
/// number past a double's range (`1e99999`, a 400-digit integer), which JSON's grammar allows.
/// Outside strings, exponent digits become `0` and an integer part of more than 15 digits
/// (not starting with 0) becomes `1`.
fn tame_numbers(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let (mut i, mut in_string) = (0, false);
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            out.push(b);
            match b {
                b'\\' if i + 1 < bytes.len() => {
                    out.push(bytes[i + 1]);
                    i += 1;
                }
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        let after_word = i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'.');
        if b.is_ascii_digit() && !after_word {
            let end = i + bytes[i..].iter().take_while(|c| c.is_ascii_digit()).count();
            if end - i > 15 && b != b'0' {
                out.push(b'1');
            } else {
                out.extend_from_slice(&bytes[i..end]);
            }
            i = end;
            continue;
        }
        if matches!(b, b'e' | b'E') && i > 0 && bytes[i - 1].is_ascii_digit() {
            out.push(b);
            i += 1;
            if matches!(bytes.get(i), Some(b'+' | b'-')) {
                out.push(bytes[i]);
                i += 1;
            }
            let digits = bytes[i..].iter().take_while(|c| c.is_ascii_digit()).count();
            if digits > 0 {
                out.push(b'0');
            }
            i += digits;
            continue;
        }
        in_string = b == b'"';
        out.push(b);
        i += 1;
    }
    String::from_utf8(out).expect("only ASCII digits were replaced")
}

proptest! {
    // 2,000 cases per law by default; PROPTEST_CASES raises it for a long run.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000),
        ..ProptestConfig::default()
    })]

    #[test]
    fn valid_json_comes_back_byte_identical(value in json_value(), pretty in any::<bool>()) {
        let text = if pretty { serde_json::to_string_pretty(&value) } else { serde_json::to_string(&value) }.unwrap();
        let deep = Limits { max_depth: 1000, ..limits() };
        let repaired = repair(text.as_bytes(), &deep).unwrap();
        prop_assert_eq!(repaired.json.as_ref(), text.as_str());
        prop_assert!(repaired.repairs.is_empty());
    }

    #[test]
    fn the_repair_pass_alone_leaves_valid_json_as_it_is(value in json_value(), pretty in any::<bool>()) {
        let text = if pretty { serde_json::to_string_pretty(&value) } else { serde_json::to_string(&value) }.unwrap();
        let mended = mend(text.as_bytes(), &Limits { max_depth: 1000, ..limits() }).unwrap();
        prop_assert_eq!(mended.json, text);
        prop_assert!(mended.repairs.is_empty());
    }

    #[test]
    fn depth_check_agrees_with_the_parsed_nesting(value in json_value(), limit in 0usize..8, pretty in any::<bool>()) {
        let text = if pretty { serde_json::to_string_pretty(&value) } else { serde_json::to_string(&value) }.unwrap();
        prop_assert_eq!(toolmend_core::limits::exceeds_depth(text.as_bytes(), limit), nesting(&value) > limit);
    }

    #[test]
    fn strict_mode_agrees_with_serde_json(text in jsonish_text()) {
        let ours = validate(text.as_bytes(), &Limits { max_depth: 1000, ..limits() }).is_ok();
        prop_assert_eq!(ours, strictly_valid(&text), "input {:?}", text);
    }

    #[test]
    fn output_parses_strictly_and_repair_is_idempotent(text in jsonish_text()) {
        match repair(text.as_bytes(), &limits()) {
            Ok(once) => {
                prop_assert!(strictly_valid(&once.json), "{:?} -> {:?}", text, once.json);
                let twice = repair(once.json.as_bytes(), &limits()).unwrap();
                prop_assert_eq!(twice.json.as_ref(), once.json.as_ref());
                prop_assert!(twice.repairs.is_empty());
            }
            Err(e) => prop_assert!(matches!(e.code(), ErrorCode::Unparseable | ErrorCode::TooDeepOrTimeout)),
        }
    }

    #[test]
    fn mended_output_keeps_the_depth_limit_and_says_when_a_number_is_wide(text in jsonish_text(), limit in 0usize..8) {
        // What `loads` relies on to build objects with orjson and check nothing after it.
        if let Ok(mended) = mend(text.as_bytes(), &Limits { max_depth: limit, ..limits() }) {
            let value: serde_json::Value = serde_json::from_str(&tame_numbers(&mended.json)).unwrap();
            prop_assert!(nesting(&value) <= limit, "{:?} -> {:?} nests past {}", text, mended.json, limit);
            let wide = number_tokens(&mended.json)
                .into_iter()
                .any(|n| n.len() > 18 || n.contains(['e', 'E']));
            prop_assert!(!(wide && mended.plain_numbers), "{:?} -> {:?}", text, mended.json);
        }
    }

    #[test]
    fn mending_without_the_log_writes_the_same_text(bytes in prop::collection::vec(any::<u8>(), 0..120), text in jsonish_text()) {
        // `loads` keeps no log; what it builds must not depend on that.
        for input in [bytes.as_slice(), text.as_bytes()] {
            match (mend(input, &limits()), mend_unlogged(input, &limits())) {
                (Ok(logged), Ok(unlogged)) => {
                    prop_assert_eq!(&logged.json, &unlogged.json);
                    prop_assert_eq!(logged.plain_numbers, unlogged.plain_numbers);
                    prop_assert!(unlogged.repairs.is_empty());
                }
                (Err(a), Err(b)) => prop_assert_eq!((a.code(), a.position), (b.code(), b.position)),
                (a, b) => prop_assert!(false, "{:?}: {:?} vs {:?}", input, a.is_ok(), b.is_ok()),
            }
        }
    }

    #[test]
    fn any_bytes_give_a_result_or_a_coded_error(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        match repair(&bytes, &limits()) {
            Ok(r) => prop_assert!(strictly_valid(&r.json), "{:?} -> {:?}", bytes, r.json),
            Err(e) => prop_assert!(e.position <= bytes.len(), "position {} past {:?}", e.position, bytes),
        }
    }

    #[test]
    fn truncating_valid_json_anywhere_still_repairs(value in json_value(), cut in any::<prop::sample::Index>()) {
        let text = serde_json::to_string(&value).unwrap();
        let mut end = cut.index(text.len() + 1);
        while !text.is_char_boundary(end) { end -= 1; }
        let prefix = &text[..end];
        if let Ok(r) = repair(prefix.as_bytes(), &Limits { max_depth: 1000, ..limits() }) {
            prop_assert!(strictly_valid(&r.json), "{:?} -> {:?}", prefix, r.json);
        } else {
            // Only a prefix holding no value at all (empty, or a bare word cut short) is refused.
            let refused_ok = prefix.trim().is_empty() || !prefix.starts_with(['{', '[']);
            prop_assert!(refused_ok, "refused {:?}", prefix);
        }
    }
}

/// A family of inputs: its name, and the input of about `n` bytes.
type Family = (&'static str, fn(usize) -> String);

/// Linear time on every pathological family: time per byte at 1 MiB stays within a generous
/// factor of that at 16 KiB. Ratios, not absolute times, so a slow machine does not fail it.
#[test]
fn pathological_families_scale_linearly() {
    let families: [Family; 10] = [
        ("deep nesting", |n| "[".repeat(n)),
        ("quote run", |n| format!("{{\"a\": \"{}", "\"".repeat(n))),
        ("backslash run", |n| format!("[\"{}", "\\".repeat(n))),
        ("unclosed strings", |n| "[\"a, ".repeat(n / 5)),
        ("single quotes", |n| "{'k': 'it's', ".repeat(n / 14)),
        ("comma + quote", |n| "{\"a\": \"x\", \"".repeat(n / 12)),
        // Quotes inside short comments inside a string left open: each quote's look-ahead
        // skips the comments after it.
        ("comments in a string", |n| {
            format!("{{\"a\": \"{}\nx y}}", "\n//\"".repeat(n / 4))
        }),
        ("comments in a single-quoted string", |n| {
            format!("{{\"a\": '{}\nx y}}", "/*'/**/".repeat(n / 7))
        }),
        ("comments in a string after commas", |n| {
            format!("['{}\nx y]", ",\n//'".repeat(n / 5))
        }),
        // Redundant braces write nothing: each one's closer looks back over the output.
        ("redundant brace pairs", |n| {
            format!("{{\"a\": 1, {}}}", "{} ".repeat(n / 3))
        }),
    ];
    let lifted = Limits {
        max_size: 1 << 22,
        max_depth: 1 << 22,
        timeout_ms: 0,
    };
    for (name, make) in families {
        let per_byte = |n: usize| {
            let input = make(n);
            let best = (0..5)
                .map(|_| {
                    let t = std::time::Instant::now();
                    let _ = repair(input.as_bytes(), &lifted);
                    t.elapsed().as_secs_f64()
                })
                .fold(f64::INFINITY, f64::min);
            best / input.len() as f64
        };
        let small = per_byte(16 << 10);
        let large = per_byte(1 << 20);
        assert!(
            large < small * 8.0 + 1e-9,
            "{name}: {large:e} s/B at 1 MiB vs {small:e} s/B at 16 KiB"
        );
    }
}

#[test]
fn numbers_past_a_double_are_strict_json_to_these_laws() {
    // Found by the laws above: serde_json refuses `1e12345678901234567890` (past a double's
    // range), which JSON's grammar allows and the repair pass keeps as written.
    let once = repair(b"'[1e12345678901234567890{", &limits()).unwrap();
    assert_eq!(once.json, "[1e12345678901234567890,{}]");
    assert!(strictly_valid(&once.json));
    assert_eq!(
        tame_numbers(r#"[-12345678901234567890.5e-999, "1e999", 0.1E+7]"#),
        r#"[-1.5e-0, "1e999", 0.1E+0]"#
    );
    for refused in ["01", "1e", "1.e5", "-", "00000000000000000001", "[1,]"] {
        assert!(!strictly_valid(refused), "{refused}");
    }
}
