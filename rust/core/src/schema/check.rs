//! What a definition must satisfy before it is compiled, the strict-mode rewrite, compilation.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::graph::Graph;
use super::shown::{clip, render};
use super::{Definition, RegistryError};
use crate::error::ErrorCode;
use crate::names::NameRule;
use crate::pointer::{escape_pointer, percent_decode};

pub const MAX_DESCRIPTION: usize = 500;
/// Largest schema accepted, serialised (50 KiB).
pub const MAX_SCHEMA_BYTES: usize = 50 * 1024;
/// Deepest schema document accepted, counting every object and array level.
pub const MAX_SCHEMA_DEPTH: usize = 20;
const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// Keywords of draft 2020-12 (all vocabularies). Anything else in a schema object is refused:
/// a misspelt keyword (`maxlength`) would otherwise be silently ignored.
const KEYWORDS: &[&str] = &[
    "$schema",
    "$id",
    "$ref",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$vocabulary",
    "$comment",
    "$defs",
    "prefixItems",
    "items",
    "contains",
    "additionalProperties",
    "properties",
    "patternProperties",
    "dependentSchemas",
    "propertyNames",
    "if",
    "then",
    "else",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "unevaluatedItems",
    "unevaluatedProperties",
    "type",
    "const",
    "enum",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxContains",
    "minContains",
    "maxProperties",
    "minProperties",
    "required",
    "dependentRequired",
    "title",
    "description",
    "default",
    "deprecated",
    "readOnly",
    "writeOnly",
    "examples",
    "format",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
];

/// Keywords whose value is one subschema.
pub(super) const ONE_SCHEMA: &[&str] = &[
    "items",
    "contains",
    "additionalProperties",
    "propertyNames",
    "if",
    "then",
    "else",
    "not",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
];
/// Keywords whose value is an array of subschemas.
pub(super) const SCHEMA_ARRAY: &[&str] = &["prefixItems", "allOf", "anyOf", "oneOf"];
/// Keywords whose value maps names to subschemas.
pub(super) const SCHEMA_MAP: &[&str] = &[
    "properties",
    "patternProperties",
    "dependentSchemas",
    "$defs",
];

fn invalid(message: impl Into<String>, path: Option<String>) -> RegistryError {
    RegistryError {
        code: ErrorCode::SchemaInvalid,
        message: message.into(),
        path,
    }
}

/// Name (under `names`), description, version and schema rules; the first fault found is
/// reported.
pub fn definition(d: &Definition, names: NameRule) -> Result<(), RegistryError> {
    if d.name.is_empty() {
        return Err(invalid("Tool name cannot be empty", None));
    }
    if d.name.chars().count() > names.max_len() {
        return Err(invalid(
            format!("Tool name cannot exceed {} characters", names.max_len()),
            None,
        ));
    }
    if !d.name.chars().all(|c| names.allows(c)) {
        return Err(invalid(
            format!(
                "Tool name '{}' may hold only {}",
                clip(&d.name),
                names.characters()
            ),
            None,
        ));
    }
    if d.description.chars().count() > MAX_DESCRIPTION {
        return Err(invalid(
            format!("Tool description cannot exceed {MAX_DESCRIPTION} characters"),
            None,
        ));
    }
    if !is_semver(&d.version) {
        return Err(invalid(
            format!(
                "Tool version '{}' is not a semantic version such as 1.0.0",
                clip(&d.version)
            ),
            None,
        ));
    }
    schema(&d.schema)
}

/// MAJOR.MINOR.PATCH with optional -prerelease and +build parts (semver.org).
fn is_semver(v: &str) -> bool {
    let (core, _build) = v.split_once('+').unwrap_or((v, ""));
    let (core, pre) = core
        .split_once('-')
        .map_or((core, None), |(c, p)| (c, Some(p)));
    let numbers: Vec<&str> = core.split('.').collect();
    let number_ok = |n: &&str| {
        !n.is_empty()
            && n.bytes().all(|b| b.is_ascii_digit())
            && (n.len() == 1 || !n.starts_with('0'))
    };
    let ident_ok = |s: &str| {
        !s.is_empty()
            && s.split('.')
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
    };
    numbers.len() == 3
        && numbers.iter().all(number_ok)
        && pre.is_none_or(ident_ok)
        && (!v.contains('+') || ident_ok(_build))
}

/// Size, depth, draft, keywords, local references, the meta-schema.
pub fn schema(schema: &Value) -> Result<(), RegistryError> {
    if !schema.is_object() {
        return Err(invalid("Parameter schema must be a JSON object", None));
    }
    let size = serde_json::to_vec(schema).map_or(usize::MAX, |v| v.len());
    if size > MAX_SCHEMA_BYTES {
        return Err(invalid(
            format!("Schema exceeds the maximum size of {MAX_SCHEMA_BYTES} bytes ({size} bytes)"),
            None,
        ));
    }
    if depth(schema) > MAX_SCHEMA_DEPTH {
        return Err(invalid(
            format!("Schema exceeds the maximum nesting depth of {MAX_SCHEMA_DEPTH}"),
            None,
        ));
    }
    match schema.get("$schema") {
        None => {}
        Some(Value::String(s)) if s.trim_end_matches('#') == DRAFT_2020_12 => {}
        Some(other) => {
            return Err(invalid(
                format!(
                    "Only draft 2020-12 schemas are accepted; $schema is {}",
                    render(other)
                ),
                Some("/$schema".into()),
            ))
        }
    }
    let mut work = vec![(schema, String::new())];
    while let Some((node, path)) = work.pop() {
        let Value::Object(map) = node else { continue };
        for (key, value) in map {
            let here = format!("{path}/{}", escape_pointer(key));
            if !KEYWORDS.contains(&key.as_str()) {
                return Err(invalid(
                    format!(
                        "Unknown keyword '{}' (only draft 2020-12 keywords are accepted)",
                        clip(key)
                    ),
                    Some(here),
                ));
            }
            if key == "$ref" || key == "$dynamicRef" {
                if !value.as_str().is_some_and(|r| r.starts_with('#')) {
                    return Err(invalid(
                        "Only local references ('#/$defs/...') are accepted; remote $ref is refused and never fetched",
                        Some(here),
                    ));
                }
            } else {
                push_subschemas(&mut work, key, value, here);
            }
        }
    }
    if let Err(e) = jsonschema::meta::validate(schema) {
        let path = e.instance_path().as_str().to_string();
        return Err(invalid(
            format!(
                "Schema is not valid draft 2020-12 at '{path}': {}",
                meta_reason(&e)
            ),
            Some(path),
        ));
    }
    Ok(())
}

/// The meta-schema's complaint in words that do not quote the meta-schema back.
fn meta_reason(e: &jsonschema::ValidationError<'_>) -> String {
    use jsonschema::error::ValidationErrorKind as K;
    match e.kind() {
        K::AnyOf { .. } | K::Enum { .. } if e.instance_path().as_str().ends_with("/type") => {
            format!("{} is not a type; valid types: string, number, integer, boolean, array, object, null", render(e.instance()))
        }
        K::Type { .. } => format!(
            "{} has the wrong JSON type for this keyword",
            render(e.instance())
        ),
        _ => format!("{} is not allowed here", render(e.instance())),
    }
}

fn depth(v: &Value) -> usize {
    let mut deepest = 0;
    let mut work = vec![(v, 1usize)];
    while let Some((node, d)) = work.pop() {
        match node {
            Value::Object(m) => {
                deepest = deepest.max(d);
                work.extend(m.values().map(|c| (c, d + 1)));
            }
            Value::Array(a) => {
                deepest = deepest.max(d);
                work.extend(a.iter().map(|c| (c, d + 1)));
            }
            _ => {}
        }
    }
    deepest
}

/// Compiles for draft 2020-12 with formats asserted and the linear-time regex engine, after
/// refusing reference cycles that never reach into the instance (they would recurse forever).
/// `graph` is the schema's.
pub(super) fn compile<F: jsonschema::json::Json>(
    schema: &Value,
    graph: &Graph<'_>,
) -> Result<jsonschema::Validator<F>, RegistryError> {
    refuse_cycles(schema, graph)?;
    build(schema)
}

/// Refuses reference cycles that never reach into the instance (see `compile`).
fn refuse_cycles(schema: &Value, graph: &Graph<'_>) -> Result<(), RegistryError> {
    // Cycles through anchors or dependentSchemas are found on the graph of the schema.
    let through_anchors = || {
        let node = graph.in_place_order().err()?;
        let at = &graph.nodes[node].pointer;
        Some(if at.is_empty() {
            "#".to_string()
        } else {
            at.clone()
        })
    };
    if let Some(at) = ref_cycle(schema).or_else(through_anchors) {
        return Err(RegistryError {
            code: ErrorCode::CompilationFailed,
            message: format!("Schema compilation failed: circular reference detected at '{at}'"),
            path: Some(at),
        });
    }
    Ok(())
}

/// Compiles a schema whose cycles were refused already (a registered tool's, for another
/// representation of the instance): the graph walk is not repeated.
pub fn build<F: jsonschema::json::Json>(
    schema: &Value,
) -> Result<jsonschema::Validator<F>, RegistryError> {
    // Large enums of objects, arrays or mixed values are looked up by hash (enums.rs).
    let schema = super::enums::hashed(schema);
    jsonschema::options_for::<F>()
        .with_draft(jsonschema::Draft::Draft202012)
        .with_keyword(super::enums::KEYWORD, super::enums::factory::<F>)
        .should_validate_formats(true)
        .should_ignore_unknown_formats(false)
        .with_format("idn-hostname", is_idn_hostname)
        .with_format("idn-email", is_idn_email)
        .with_pattern_options(jsonschema::PatternOptions::regex())
        .build(&schema)
        .map_err(|e| {
            let path = e.instance_path().as_str().to_string();
            let detail = match e.kind() {
                jsonschema::error::ValidationErrorKind::Referencing(_) => "could not resolve reference".to_string(),
                jsonschema::error::ValidationErrorKind::Format { format } if format == "regex" => {
                    "pattern is not supported by the linear-time regex engine (no look-around or back-references)".to_string()
                }
                _ => clip(&e.to_string()),
            };
            RegistryError {
                code: ErrorCode::CompilationFailed,
                message: format!("Schema compilation failed at '{path}': {detail}"),
                path: Some(path),
            }
        })
}

/// `idn-hostname` (RFC 5890), checked leniently: the validator is built without IDNA tables,
/// so a label may hold any letter, digit or other non-ASCII character that is not a space, a
/// control or a dot-like separator; ASCII labels follow the hostname rules (letters, digits,
/// hyphens, no hyphen at either end, at most 63 characters), the whole name at most 253.
pub(super) fn is_idn_hostname(text: &str) -> bool {
    // IDNA treats the ideographic and full-width full stops as dots.
    let dots = |c: char| matches!(c, '.' | '\u{3002}' | '\u{FF0E}' | '\u{FF61}');
    !text.is_empty()
        && text.chars().count() <= 253
        && text.split(dots).all(|label| {
            let n = label.chars().count();
            (1..=63).contains(&n)
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label.chars().all(|c| {
                    if c.is_ascii() {
                        c.is_ascii_alphanumeric() || c == '-'
                    } else {
                        !c.is_whitespace() && !c.is_control()
                    }
                })
        })
}

/// `idn-email` (RFC 6531), checked leniently: a local part of ASCII "atext" characters, dots
/// between them, and any non-ASCII character (or a quoted string), then `@` and an
/// `idn-hostname` or an address literal in brackets.
pub(super) fn is_idn_email(text: &str) -> bool {
    let Some((local, domain)) = text.rsplit_once('@') else {
        return false;
    };
    let local_ok = if local.len() >= 2 && local.starts_with('"') && local.ends_with('"') {
        // A quoted string: any character but a control; `"` and `\` only escaped.
        let mut chars = local[1..local.len() - 1].chars();
        let mut ok = true;
        while let Some(c) = chars.next() {
            ok &= !c.is_control() && c != '"' && (c != '\\' || chars.next().is_some());
        }
        ok
    } else {
        let atext = |c: char| {
            !c.is_ascii() && !c.is_whitespace() && !c.is_control()
                || c.is_ascii_alphanumeric()
                || "!#$%&'*+-/=?^_`{|}~".contains(c)
        };
        !local.is_empty()
            && local
                .split('.')
                .all(|atom| !atom.is_empty() && atom.chars().all(atext))
    };
    let domain_ok = match domain.strip_prefix('[').and_then(|d| d.strip_suffix(']')) {
        Some(literal) => {
            literal.parse::<std::net::Ipv4Addr>().is_ok()
                || literal
                    .strip_prefix("IPv6:")
                    .is_some_and(|a| a.parse::<std::net::Ipv6Addr>().is_ok())
        }
        None => is_idn_hostname(domain),
    };
    local_ok && domain_ok
}

/// Queues the subschemas under `key` (one, an array of them, or a map of them) with their paths.
fn push_subschemas<'v>(
    work: &mut Vec<(&'v Value, String)>,
    key: &str,
    value: &'v Value,
    here: String,
) {
    if ONE_SCHEMA.contains(&key) {
        work.push((value, here));
    } else if SCHEMA_ARRAY.contains(&key) {
        if let Value::Array(items) = value {
            work.extend(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (v, format!("{here}/{i}"))),
            );
        }
    } else if SCHEMA_MAP.contains(&key) {
        if let Value::Object(members) = value {
            work.extend(
                members
                    .iter()
                    .map(|(k, v)| (v, format!("{here}/{}", escape_pointer(k)))),
            );
        }
    }
}

/// A chain of in-place applicators (`$ref`, `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/
/// `else`) that comes back to where it started without descending into the instance.
/// Returns the pointer of a schema on the cycle.
fn ref_cycle(root: &Value) -> Option<String> {
    // Edges between schema locations through in-place applicators only.
    let mut edges: HashMap<String, Vec<String>> = HashMap::new();
    let mut work = vec![(root, String::new())];
    while let Some((node, path)) = work.pop() {
        let Value::Object(map) = node else { continue };
        let out = edges.entry(path.clone()).or_default();
        for (key, value) in map {
            let here = format!("{path}/{}", escape_pointer(key));
            match key.as_str() {
                "$ref" => {
                    if let Some(target) = value.as_str().and_then(|r| r.strip_prefix('#')) {
                        // A fragment is a percent-encoded pointer: "#/$defs/a%25b" is "/$defs/a%b".
                        out.push(percent_decode(target));
                    }
                }
                "allOf" | "anyOf" | "oneOf" => {
                    if let Value::Array(items) = value {
                        out.extend((0..items.len()).map(|i| format!("{here}/{i}")));
                    }
                }
                "not" | "if" | "then" | "else" => out.push(here.clone()),
                _ => {}
            }
        }
        for (key, value) in map {
            let here = format!("{path}/{}", escape_pointer(key));
            push_subschemas(&mut work, key, value, here);
        }
    }
    // Iterative three-colour depth-first search.
    let mut done: HashSet<&str> = HashSet::new();
    for start in edges.keys() {
        if done.contains(start.as_str()) {
            continue;
        }
        let mut on_path: HashSet<&str> = HashSet::new();
        let mut stack: Vec<(&str, usize)> = vec![(start.as_str(), 0)];
        on_path.insert(start.as_str());
        while let Some((node, next)) = stack.pop() {
            let targets = edges.get(node).map_or(&[][..], |v| v.as_slice());
            if let Some(target) = targets.get(next) {
                stack.push((node, next + 1));
                if on_path.contains(target.as_str()) {
                    return Some(if target.is_empty() {
                        "#".to_string()
                    } else {
                        target.clone()
                    });
                }
                if !done.contains(target.as_str()) {
                    on_path.insert(target.as_str());
                    stack.push((target.as_str(), 0));
                }
            } else {
                on_path.remove(node);
                done.insert(node);
            }
        }
    }
    None
}

/// Hex FNV-1a of the canonical definition (object keys sorted): a cheap identity for the
/// "same definition twice is a no-op" rule and for audit logs.
pub fn fingerprint(d: &Definition) -> String {
    let mut text = String::new();
    for part in [
        &d.name,
        &d.description,
        &d.version,
        d.category.as_deref().unwrap_or(""),
    ] {
        text.push_str(part);
        text.push('\u{0}');
    }
    canonical(&d.schema, &mut text);
    if d.allow_truncated {
        // Only when set, so the fingerprints of every other definition stay as they were.
        text.push_str("\u{0}allow_truncated");
    }
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{hash:016x}")
}

/// `v` as JSON with object keys sorted (and a comma after every member): equal values, equal
/// text, whatever their key order.
pub(crate) fn canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort_unstable();
            out.push('{');
            for k in keys {
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                canonical(&m[k], out);
                out.push(',');
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for x in a {
                canonical(x, out);
                out.push(',');
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}
