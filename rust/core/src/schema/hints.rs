//! The one-line schema hint: what a tool's arguments should look like, in a few words
//! (`read_file expects: {path: string (required), limit?: integer (1-100)}`).

use serde_json::Value;

use super::shown::render;

/// A short description of what a subschema accepts: `string`, `integer (1-100)`,
/// `'utf-8'|'ascii'`, `string[]`, `{...}`.
pub fn describe(schema: &Value) -> String {
    if let Some(options) = schema.get("enum").and_then(Value::as_array) {
        return options
            .iter()
            .map(|o| {
                o.as_str()
                    .map_or_else(|| o.to_string(), |s| format!("'{s}'"))
            })
            .collect::<Vec<_>>()
            .join("|");
    }
    if let Some(c) = schema.get("const") {
        return render(c);
    }
    for combinator in ["anyOf", "oneOf"] {
        if let Some(options) = schema.get(combinator).and_then(Value::as_array) {
            return options.iter().map(describe).collect::<Vec<_>>().join("|");
        }
    }
    let ty = match schema.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join("|"),
        _ if schema.get("properties").is_some() => "object".into(),
        _ => "any".into(),
    };
    match ty.as_str() {
        "array" => match schema.get("items") {
            Some(items) => {
                let inner = describe(items);
                if inner.contains('|') {
                    format!("({inner})[]")
                } else {
                    format!("{inner}[]")
                }
            }
            None => "array".into(),
        },
        "integer" | "number" => match (schema.get("minimum"), schema.get("maximum")) {
            (Some(lo), Some(hi)) => format!("{ty} ({lo}-{hi})"),
            (Some(lo), None) => format!("{ty} (>= {lo})"),
            (None, Some(hi)) => format!("{ty} (<= {hi})"),
            (None, None) => ty,
        },
        "object" if schema.get("properties").is_some() => "{...}".into(),
        _ => ty,
    }
}

/// `name expects: {a: string (required), b?: integer}`, cut at a readable length.
pub fn schema_hint(name: &str, schema: &Value) -> String {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let members: Vec<String> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| {
            props
                .iter()
                .map(|(k, s)| {
                    if required.contains(&k.as_str()) {
                        format!("{k}: {} (required)", describe(s))
                    } else {
                        format!("{k}?: {}", describe(s))
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    let hint = format!("{name} expects: {{{}}}", members.join(", "));
    match hint.char_indices().nth(400) {
        Some((at, _)) => format!("{}...}}", &hint[..at]),
        None => hint,
    }
}
