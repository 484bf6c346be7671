//! What a call looks like once its text is JSON: the name and arguments keys of every format,
//! and where a JSON value written in prose ends.

use std::collections::BTreeMap;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::FoundCall;
use crate::limits::{may_hold_wide_integer, Limits};
use crate::repair::ends_cut_off;
use crate::repair::{repair, Repair};

/// Keys that name the tool, in the order they are tried (Hermes and Llama say `name`,
/// Command R says `tool_name`, ReAct-style prompts say `tool`).
const NAME_KEYS: [&str; 4] = ["name", "tool_name", "tool", "function"];
/// Keys that hold the arguments (Llama 3 says `parameters`, LangChain agents `tool_input`).
const ARGUMENT_KEYS: [&str; 5] = ["arguments", "parameters", "tool_input", "input", "args"];

/// Where the JSON value that starts at `start` (a `{` or `[`) ends: one past its closer, or the
/// end of the text when it is never closed (a cut-off reply). Strings in double quotes, and in
/// single quotes where a value or key may start, are skipped with their escapes. Linear.
pub fn value_end(text: &[u8], start: usize) -> usize {
    let mut depth = 0usize;
    let mut i = start;
    let mut value_may_start = true;
    while i < text.len() {
        let b = text[i];
        match b {
            b'"' | b'\'' if b == b'"' || value_may_start => {
                i = crate::scan::quoted_end(text, i + 1, b);
                value_may_start = false;
            }
            b'{' | b'[' => {
                depth += 1;
                value_may_start = true;
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
                value_may_start = false;
            }
            b',' | b':' => value_may_start = true,
            b' ' | b'\t' | b'\r' | b'\n' => {}
            _ => value_may_start = false,
        }
        i += 1;
    }
    text.len()
}

/// The value that starts at `start` (a `{` or `[`) and every bracket nested in it outside its
/// strings, each with where it ends (as `value_end` measures it: the end of the text when
/// never closed), in the order they open. One pass measures them all: the value from a nested
/// bracket is the same stretch the outer scan walks, since both see strings alike from there.
pub(super) fn structure(text: &[u8], start: usize) -> Vec<(usize, usize)> {
    let mut values = Vec::new();
    let mut open = Vec::new();
    let mut i = start;
    let mut value_may_start = true;
    while i < text.len() {
        let b = text[i];
        match b {
            b'"' | b'\'' if b == b'"' || value_may_start => {
                i = crate::scan::quoted_end(text, i + 1, b);
                value_may_start = false;
            }
            b'{' | b'[' => {
                open.push(values.len());
                values.push((i, text.len()));
                value_may_start = true;
            }
            b'}' | b']' => {
                if let Some(k) = open.pop() {
                    values[k].1 = i + 1;
                }
                if open.is_empty() {
                    return values;
                }
                value_may_start = false;
            }
            b',' | b':' | b'(' | b'=' => value_may_start = true,
            b' ' | b'\t' | b'\r' | b'\n' => {}
            _ => value_may_start = false,
        }
        i += 1;
    }
    values
}

/// How sure the surrounding text makes us that a JSON object is a call.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Context {
    /// Behind a format's marker: a name is enough (`{"name": "x"}` is a call with no arguments).
    Marked,
    /// In prose or a ```json fence: a name and an arguments key are both needed.
    Prose,
}

/// Reads the calls in JSON text of one kind of place (a format's body, or prose).
pub(super) struct JsonCalls<'a> {
    pub content: &'a str,
    pub context: Context,
    pub format: &'static str,
    pub limits: &'a Limits,
    /// With a registry, whether a name is a known tool (prose only).
    pub is_tool: Option<&'a dyn Fn(&str) -> bool>,
}

impl JsonCalls<'_> {
    /// The calls in the JSON text `content[start..end]`: one call object, a list of them, or
    /// several separated by `;` or newlines. The text is repaired first. An empty list means the
    /// text holds no call (it is left as text); text that cannot be read at all becomes one call
    /// carrying the error, when the context says a call was meant.
    pub(super) fn in_span(&self, start: usize, end: usize) -> Vec<FoundCall> {
        let bytes = self.content.as_bytes();
        let mut calls = Vec::new();
        let mut i = start;
        // Each JSON value in the body in turn: separators, fences and junk between them are skipped.
        while let Some(offset) = memchr::memchr2(b'{', b'[', &bytes[i..end]) {
            let from = i + offset;
            let to = value_end(&bytes[..end], from);
            calls.extend(self.in_value(from, to));
            i = to.max(from + 1);
        }
        if calls.is_empty()
            && self.context == Context::Marked
            && !self.content[start..end].trim().is_empty()
        {
            // A marker promised a call: whatever is there is reported with why it cannot be read.
            calls.extend(self.in_value(start, end));
        }
        calls
    }

    fn in_value(&self, start: usize, end: usize) -> Vec<FoundCall> {
        let (content, context, format, limits, is_tool) = (
            self.content,
            self.context,
            self.format,
            self.limits,
            self.is_tool,
        );
        let body = &content[start..end];
        let unreadable = |error: crate::Error| match context {
            Context::Marked => vec![FoundCall {
                name: None,
                arguments: Some(body.trim().to_string()),
                id: None,
                position: start,
                format,
                repairs: Vec::new(),
                error: Some(crate::Error {
                    position: start + error.position,
                    ..error
                }),
                cut: false,
                untyped: Vec::new(),
                written: None,
            }],
            Context::Prose => Vec::new(),
        };
        let repaired = match repair(body.as_bytes(), limits) {
            Ok(r) => r,
            Err(error) => return unreadable(error),
        };
        if !repaired.repairs.is_empty() {
            if let Some(at) = glued_at(body.as_bytes()) {
                return unreadable(crate::Error::unexpected(
                    at,
                    "a comma before it: one object glued to another inside a call (several \
                     calls' arguments joined) is never merged into one",
                    Some('{'),
                ));
            }
        }
        let Ok(value) = serde_json::from_str::<Value>(&repaired.json) else {
            return Vec::new();
        };
        let repairs: Vec<Repair> = repaired
            .repairs
            .iter()
            .map(|r| Repair {
                kind: r.kind,
                position: start + r.position,
                count: r.count,
            })
            .collect();
        let objects: Vec<&Map<String, Value>> = match &value {
            Value::Object(o) => vec![o],
            Value::Array(items) => items.iter().filter_map(Value::as_object).collect(),
            _ => Vec::new(),
        };
        // serde_json's values hold an integer past 64 bits as the nearest double: where the
        // text may hold one, arguments are taken from it as written.
        let written = may_hold_wide_integer(repaired.json.as_bytes())
            .then(|| objects_as_written(&repaired.json));
        let mut calls = Vec::new();
        for (i, object) in objects.into_iter().enumerate() {
            if let Some(mut call) = call_from_object(object, context) {
                if context == Context::Prose && !names_a_tool(&call, is_tool) {
                    continue;
                }
                let exact = written.as_ref().and_then(|w| w.get(i)?.as_ref());
                if let Some(arguments) = exact.and_then(|o| arguments_as_written(o.get())) {
                    call.arguments = Some(arguments);
                }
                call.position = start;
                call.format = format;
                call.repairs = repairs.clone();
                calls.push(call);
            }
        }
        // Only the call the text ended in can be cut off.
        if let Some(last) = calls.last_mut() {
            last.cut = ends_cut_off(body.as_bytes(), &repaired.repairs);
        }
        calls
    }
}

/// Where an object opens right after another closed inside an object, with no comma between
/// (`{"arguments": {"city":"Paris"}{"city":"Rome"}}`): valid JSON never does, outside strings,
/// and no reading keeps both without merging them. Inside an array (`[{call}{call}]`) the two
/// stay two items, as a missing comma is mended anywhere else: each call of a list is its own.
fn glued_at(text: &[u8]) -> Option<usize> {
    // The open containers, innermost last: true for an object.
    let (mut open, mut i, mut last) = (Vec::<bool>::new(), 0, 0u8);
    while i < text.len() {
        match text[i] {
            b'"' => {
                i = crate::scan::quoted_end(text, i + 1, b'"');
                last = b'"';
            }
            b'{' if last == b'}' && open.last() == Some(&true) => return Some(i),
            b @ (b'{' | b'[') => {
                open.push(b == b'{');
                last = b;
            }
            b @ (b'}' | b']') => {
                open.pop();
                last = b;
            }
            b if b.is_ascii_whitespace() => {}
            b => last = b,
        }
        i += 1;
    }
    None
}

/// Whether a call found in prose names a tool: any name without a registry, a registered one with.
pub(super) fn names_a_tool(call: &FoundCall, is_tool: Option<&dyn Fn(&str) -> bool>) -> bool {
    match (&call.name, is_tool) {
        (Some(name), Some(is_tool)) => is_tool(name),
        (Some(_), None) => true,
        (None, _) => false,
    }
}

/// After a call marker, an object with one key whose value is an object is a call named by
/// that key (Apertus writes `[{"get_weather": {"city": "Paris"}}]`). Never in prose, where such
/// objects are ordinary data.
fn name_as_key(object: &Map<String, Value>, context: Context) -> Option<FoundCall> {
    let (name, Value::Object(arguments)) = object.iter().next()? else {
        return None;
    };
    if context != Context::Marked || object.len() != 1 {
        return None;
    }
    Some(FoundCall {
        name: Some(name.clone()),
        arguments: Some(Value::Object(arguments.clone()).to_string()),
        id: None,
        position: 0,
        format: "",
        repairs: Vec::new(),
        error: None,
        cut: false,
        untyped: Vec::new(),
        written: None,
    })
}

/// The objects of `json` (the value itself, or the objects of an array) as written, in the
/// order `in_value` takes them.
fn objects_as_written(json: &str) -> Vec<Option<Box<RawValue>>> {
    let is_object = |raw: &RawValue| raw.get().starts_with('{');
    match serde_json::from_str::<Box<RawValue>>(json) {
        Ok(whole) if is_object(&whole) => vec![Some(whole)],
        Ok(whole) => serde_json::from_str::<Vec<Box<RawValue>>>(whole.get())
            .map(|items| {
                items
                    .into_iter()
                    .filter(|r| is_object(r))
                    .map(Some)
                    .collect()
            })
            .unwrap_or_default(),
        Err(_) => Vec::new(),
    }
}

/// The arguments of the call object `object` (JSON text) as written, where they are an object
/// or an array; the member is chosen as `call_from_object` and `name_as_key` choose it.
fn arguments_as_written(object: &str) -> Option<String> {
    let members: BTreeMap<String, &RawValue> = serde_json::from_str(object).ok()?;
    if let Some(function) = members.get("function").filter(|f| f.get().starts_with('{')) {
        return arguments_as_written(function.get());
    }
    let raw = if NAME_KEYS.iter().any(|k| members.contains_key(*k)) {
        ARGUMENT_KEYS.iter().find_map(|k| members.get(*k))?
    } else if members.len() == 1 {
        members.values().next()?
    } else {
        return None;
    };
    let text = raw.get();
    (text.starts_with('{') || text.starts_with('[')).then(|| text.to_string())
}

/// A call out of one JSON object, or None when the object is not shaped like one.
pub(super) fn call_from_object(object: &Map<String, Value>, context: Context) -> Option<FoundCall> {
    // OpenAI's shape written out in text: {"type": "function", "function": {...}, "id": ...}.
    if let Some(Value::Object(function)) = object.get("function") {
        let mut call = call_from_object(function, context)?;
        call.id = call.id.or_else(|| object.get("id").and_then(scalar_text));
        return Some(call);
    }
    let Some(name) = NAME_KEYS.iter().find_map(|k| object.get(*k)) else {
        return name_as_key(object, context);
    };
    let arguments = ARGUMENT_KEYS.iter().find_map(|k| object.get(*k));
    if arguments.is_none() && context == Context::Prose {
        return None;
    }
    if arguments.is_some_and(is_schema) {
        // A tool definition echoed back: its "parameters" is a JSON Schema, not arguments.
        return None;
    }
    Some(FoundCall {
        name: match name {
            Value::Null => None,
            Value::String(s) => Some(s.clone()),
            other => Some(other.to_string()),
        },
        arguments: arguments.and_then(|a| match a {
            Value::Null => None,
            // Arguments given as a JSON string (Granite 4, OpenAI's wire shape): their text.
            Value::String(s) => Some(s.clone()),
            other => Some(other.to_string()),
        }),
        id: object.get("id").and_then(scalar_text),
        position: 0,
        format: "",
        repairs: Vec::new(),
        error: None,
        cut: false,
        untyped: Vec::new(),
        written: None,
    })
}

fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn is_schema(v: &Value) -> bool {
    v.get("type").and_then(Value::as_str) == Some("object")
        && v.get("properties").is_some_and(Value::is_object)
}

/// `k=v, k2=[1, 2]` (Python keyword arguments) as a JSON object text: keys quoted, values kept
/// as written for the repair pass (it reads single quotes and True/False/None).
/// Keyword arguments as the text of a JSON object (values as written, for the repair pass to
/// read), and the bare words among the values (`title=true`, `city=Paris`): text with no type
/// of its own, which the tool's schema may take as a string (see `FoundCall::untyped`).
pub(super) fn python_kwargs_as_json(kwargs: &str) -> (String, Vec<(String, String)>) {
    let mut untyped = Vec::new();
    let mut out = String::with_capacity(kwargs.len() + 8);
    out.push('{');
    let mut first = true;
    for part in split_top_level(kwargs, b',') {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let Some(eq) = split_top_level(part, b'=').next().map(str::len) else {
            continue;
        };
        if eq >= part.len() {
            continue; // a positional argument: no name to give it
        }
        if !first {
            out.push_str(", ");
        }
        first = false;
        let key = part[..eq].trim();
        let value = part[eq + 1..].trim();
        out.push_str(&Value::String(key.to_string()).to_string());
        out.push_str(": ");
        out.push_str(value);
        // Python's own literals have a type; a bare word (`true`, `Paris`) does not.
        let bare = value
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
            && !matches!(value, "True" | "False" | "None");
        if bare {
            untyped.push((key.to_string(), value.to_string()));
        }
    }
    out.push('}');
    (out, untyped)
}

/// Splits at `sep` where it stands outside brackets and quotes.
fn split_top_level(text: &str, sep: u8) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut parts = Vec::new();
    let (mut depth, mut quote, mut from, mut i) = (0usize, None::<u8>, 0usize, 0usize);
    while i < bytes.len() {
        let b = bytes[i];
        match quote {
            Some(q) => {
                if b == b'\\' {
                    i += 1;
                } else if b == q {
                    quote = None;
                }
            }
            None => match b {
                b'"' | b'\'' => quote = Some(b),
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth = depth.saturating_sub(1),
                _ if b == sep && depth == 0 => {
                    parts.push(&text[from..i]);
                    from = i + 1;
                }
                _ => {}
            },
        }
        i += 1;
    }
    parts.push(&text[from.min(text.len())..]);
    parts.into_iter()
}

/// `[get_weather(city='Paris'), now()]`: each call's name and keyword arguments.
pub(super) fn pythonic_calls(
    content: &str,
    start: usize,
    end: usize,
    format: &'static str,
) -> Vec<FoundCall> {
    let body = content[start..end].trim();
    let inner = body
        .strip_prefix('[')
        .map(|b| b.strip_suffix(']').unwrap_or(b))
        .unwrap_or(body);
    let mut calls = Vec::new();
    // Calls are separated by commas in a list, by newlines one a line (Olmo 3).
    for part in split_top_level(inner, b',').flat_map(|p| split_top_level(p, b'\n')) {
        let part = part.trim();
        let Some(open) = part.find('(') else {
            continue;
        };
        let name = part[..open].trim();
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
        {
            continue;
        }
        let args = part[open + 1..]
            .strip_suffix(')')
            .unwrap_or(&part[open + 1..]);
        let (arguments, untyped) = python_kwargs_as_json(args);
        calls.push(FoundCall {
            name: Some(name.to_string()),
            arguments: Some(arguments),
            id: None,
            position: start,
            format,
            repairs: Vec::new(),
            error: None,
            cut: false,
            untyped,
            written: None,
        });
    }
    calls
}

/// Whether `text` (trimmed) is a pythonic call list: `[name(` ... `)]`.
pub(super) fn looks_pythonic(text: &str) -> bool {
    let t = text.trim();
    let Some(rest) = t.strip_prefix('[') else {
        return false;
    };
    let rest = rest.trim_start();
    let ident = rest
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'.')
        .count();
    ident > 0 && rest[ident..].starts_with('(') && t.ends_with(")]")
}
