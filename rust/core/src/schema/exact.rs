//! Integers beyond 64 bits, compared exactly.
//!
//! Arguments are parsed into doubles past the 64-bit range, where neighbouring integers share a
//! double: `18446744073709551617` reads as `2^64`, and would then pass `"const": 2^64`. Such a
//! number is checked twice, as the double just below its exact value and as the one just above:
//! no double equals it, so no `const` or `enum` holds for both, and a bound (`maximum`,
//! `minimum`) holds for both exactly when it holds for the integer itself.
//!
//! Integers within 64 bits are held exactly, but compared with a double in the schema (a
//! `const` of `2^64`, a `maximum` of `1e19`) they are rounded too: when the schema holds such a
//! double, integers past 2^53 (where doubles stop holding every integer) are checked the same way.

use serde_json::{Number, Value};

use crate::pointer::escape_pointer;

/// An integer literal of the arguments that no double holds exactly.
pub(super) struct Inexact {
    /// Where it is (JSON Pointer).
    pub(super) path: String,
    /// The literal as written.
    pub(super) digits: String,
    /// The doubles just below and just above it.
    pub(super) below: f64,
    pub(super) above: f64,
}

/// 2^53: past it, doubles no longer hold every integer.
const EXACT_DOUBLES: f64 = 9_007_199_254_740_992.0;

/// Whether a schema holds a double of an integer past 2^53 (a `const`, an `enum` member, a
/// bound), which 64-bit integers are rounded to when compared with it.
pub(super) fn holds_big_doubles(schema: &Value) -> bool {
    let mut work = vec![schema];
    while let Some(v) = work.pop() {
        match v {
            Value::Number(n)
                if n.is_f64() && n.as_f64().is_some_and(|f| f.abs() >= EXACT_DOUBLES) =>
            {
                return true;
            }
            Value::Array(items) => work.extend(items),
            Value::Object(members) => work.extend(members.values()),
            _ => {}
        }
    }
    false
}

/// Whether `value` holds a double past the 64-bit range, where an integer literal may have been
/// rounded: the cheap test before the text is read again.
pub(super) fn may_hold_inexact(value: &Value) -> bool {
    numbers(value).any(|(_, n)| {
        n.is_f64()
            && n.as_f64()
                .is_some_and(|f| !((i64::MIN as f64)..(u64::MAX as f64)).contains(&f))
    })
}

/// The 64-bit integers of `value` past 2^53 that no double holds, with their neighbours.
pub(super) fn inexact_in_value(value: &Value) -> Vec<Inexact> {
    numbers(value)
        .filter(|(_, n)| !n.is_f64() && n.as_f64().is_some_and(|f| f.abs() > EXACT_DOUBLES))
        .filter_map(|(path, n)| {
            let digits = n.to_string();
            let (below, above) = neighbours(&digits, true)?;
            Some(Inexact {
                path,
                digits,
                below,
                above,
            })
        })
        .collect()
}

/// Every number of `value` with its path, in document order.
fn numbers(value: &Value) -> impl Iterator<Item = (String, &Number)> {
    let mut work = vec![(String::new(), value)];
    std::iter::from_fn(move || {
        while let Some((path, v)) = work.pop() {
            match v {
                Value::Number(n) => return Some((path, n)),
                Value::Array(items) => work.extend(
                    items
                        .iter()
                        .enumerate()
                        .rev()
                        .map(|(i, x)| (format!("{path}/{i}"), x)),
                ),
                Value::Object(members) => work.extend(
                    members
                        .iter()
                        .rev()
                        .map(|(k, x)| (format!("{path}/{}", escape_pointer(k)), x)),
                ),
                _ => {}
            }
        }
        None
    })
}

/// Every integer literal in `json` (valid JSON) past the 64-bit range that no double holds,
/// with its path.
pub(super) fn inexact_integers(json: &[u8]) -> Vec<Inexact> {
    enum Frame {
        Object { key: String, expect_key: bool },
        Array { index: usize },
    }
    let path = |stack: &[Frame]| -> String {
        let mut p = String::new();
        for frame in stack {
            p.push('/');
            match frame {
                Frame::Object { key, .. } => p.push_str(&escape_pointer(key)),
                Frame::Array { index } => p.push_str(&index.to_string()),
            }
        }
        p
    };
    let mut found = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    while i < json.len() {
        match json[i] {
            b'{' => stack.push(Frame::Object {
                key: String::new(),
                expect_key: true,
            }),
            b'[' => stack.push(Frame::Array { index: 0 }),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => match stack.last_mut() {
                Some(Frame::Array { index }) => *index += 1,
                Some(Frame::Object { expect_key, .. }) => *expect_key = true,
                None => {}
            },
            b'"' => {
                let start = i;
                i = crate::scan::quoted_end(json, i + 1, b'"');
                if let Some(Frame::Object { key, expect_key }) = stack.last_mut() {
                    if *expect_key {
                        *key = serde_json::from_slice(&json[start..=i.min(json.len() - 1)])
                            .unwrap_or_default();
                        *expect_key = false;
                    }
                }
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i + 1 < json.len()
                    && matches!(json[i + 1], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                {
                    i += 1;
                }
                let literal = std::str::from_utf8(&json[start..=i]).unwrap_or_default();
                if let Some((below, above)) = neighbours(literal, false) {
                    found.push(Inexact {
                        path: path(&stack),
                        digits: literal.to_string(),
                        below,
                        above,
                    });
                }
            }
            _ => {}
        }
        i += 1;
    }
    found
}

/// For an integer literal that no double holds (past the 64-bit range, or with `in_range`
/// anywhere), the doubles just below and just above it; `None` for any other literal.
fn neighbours(literal: &str, in_range: bool) -> Option<(f64, f64)> {
    let magnitude = literal.strip_prefix('-').unwrap_or(literal);
    // 2^53 has 16 digits; i64::MIN has 19.
    let shortest = if in_range { 16 } else { 19 };
    if magnitude.len() < shortest || !magnitude.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if !in_range && (literal.parse::<i64>().is_ok() || literal.parse::<u64>().is_ok()) {
        return None;
    }
    let nearest: f64 = literal.parse().ok().filter(|f: &f64| f.is_finite())?;
    // Doubles this large are integers, and their fixed-point text is exact.
    let exact = format!("{nearest:.0}");
    if exact == literal {
        return None;
    }
    let nearest_magnitude = exact.trim_start_matches('-');
    // Which side of the double the literal lies on, by magnitude (both have the same sign).
    let literal_larger =
        (magnitude.len(), magnitude) > (nearest_magnitude.len(), nearest_magnitude);
    let away = f64::from_bits(nearest.to_bits() + 1);
    let toward = f64::from_bits(nearest.to_bits() - 1);
    let (small, large) = if literal_larger {
        (nearest, away)
    } else {
        (toward, nearest)
    };
    // For a negative number the larger magnitude is the smaller value.
    Some(if literal.starts_with('-') {
        (-large.abs(), -small.abs())
    } else {
        (small, large)
    })
}

/// `value` with each inexact integer replaced by its neighbour below (`above == false`) or above.
pub(super) fn with_neighbours(value: &Value, inexact: &[Inexact], above: bool) -> Value {
    let mut copy = value.clone();
    for n in inexact {
        if let Some(slot) = copy.pointer_mut(&n.path) {
            if slot.is_number() {
                let f = if above { n.above } else { n.below };
                if let Some(number) = Number::from_f64(f) {
                    *slot = Value::Number(number);
                }
            }
        }
    }
    copy
}
