//! Helpers shared by the fuzz targets.
#![allow(dead_code)]

/// True when `text` is one strict JSON value, by jiter (no NaN or Infinity). serde_json is not
/// the oracle: it refuses numbers beyond f64's range, which the grammar allows.
pub fn strict_json(text: &[u8]) -> bool {
    jiter::JsonValue::parse(text, false).is_ok()
}

/// `text` cut into pieces of `step` bytes, moved forward to char boundaries; at least one piece.
pub fn pieces(text: &str, step: usize) -> Vec<&str> {
    let mut out = vec![];
    let mut from = 0;
    while from < text.len() {
        let mut to = (from + step).min(text.len());
        while !text.is_char_boundary(to) {
            to += 1;
        }
        out.push(&text[from..to]);
        from = to;
    }
    if out.is_empty() {
        out.push(text);
    }
    out
}
