//! Violations as data: the validator's errors as records of code, JSON Pointer, message,
//! expected, actual and suggestion, in document order. Messages never quote a schema, a `$ref`
//! or a pattern's source.

use serde_json::Value;

use super::hints::describe;
use super::shown::{clip, render};
use super::suggestions::{near_miss, Declared};
use super::MAX_VIOLATIONS;
use crate::error::ErrorCode;
use crate::pointer::{escape_pointer, percent_decode, unescape_pointer};
use jsonschema::error::{TypeKind, ValidationErrorKind as K};

/// One reason arguments do not match their tool's schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// JSON Pointer to the offending value ("" for the whole arguments; for a missing
    /// property, where it should be).
    pub path: String,
    pub code: ErrorCode,
    pub message: String,
    pub expected: Option<String>,
    /// The offending value as JSON, truncated to [`MAX_SHOWN`](super::shown::MAX_SHOWN) characters.
    pub actual: Option<String>,
    pub suggestion: String,
}

impl Violation {
    /// A limit passed (TLP-007 over the size limit, TLP-008 too deep): about the whole arguments.
    pub fn limit(code: ErrorCode, message: String) -> Self {
        Violation {
            path: String::new(),
            code,
            message,
            expected: None,
            actual: None,
            suggestion: "send smaller arguments".into(),
        }
    }

    pub(crate) fn too_deep(limit: usize) -> Self {
        Violation {
            path: String::new(),
            code: ErrorCode::TooDeepOrTimeout,
            message: format!("Arguments nest deeper than the depth limit of {limit}"),
            expected: Some(format!("at most {limit} levels of objects and arrays")),
            actual: None,
            suggestion: "flatten the arguments".into(),
        }
    }

    pub(crate) fn not_json(e: &serde_json::Error, bytes: &[u8]) -> Self {
        let position = if e.is_eof() {
            bytes.len()
        } else {
            line_column_to_offset(bytes, e.line(), e.column())
        };
        let text = e.to_string();
        let reason = text
            .rsplit_once(" at line ")
            .map_or(text.as_str(), |(r, _)| r);
        Violation {
            path: String::new(),
            code: ErrorCode::InvalidArguments,
            message: format!("Invalid JSON in arguments at byte {position}: {reason}"),
            expected: Some("a JSON object".into()),
            actual: None,
            suggestion: "send the arguments as one JSON object with double-quoted keys and strings"
                .into(),
        }
    }
}

fn line_column_to_offset(bytes: &[u8], line: usize, column: usize) -> usize {
    let line_start: usize = bytes
        .split(|&b| b == b'\n')
        .take(line.saturating_sub(1))
        .map(|l| l.len() + 1)
        .sum();
    (line_start + column.saturating_sub(1)).min(bytes.len())
}

/// Every error the validator found, mapped and sorted in document order, at most
/// [`MAX_VIOLATIONS`]. `compiled` is the schema validated against (for what a missing
/// property should be).
pub fn violations<'a>(
    errors: impl Iterator<Item = jsonschema::ValidationError<'a>>,
    instance: &Value,
    compiled: &Value,
) -> Vec<Violation> {
    let mut found: Vec<(usize, Violation, bool)> = Vec::new();
    for e in errors {
        map_error(&e, compiled, &mut found);
        if found.len() >= 4 * MAX_VIOLATIONS {
            break;
        }
    }
    // The paths ranked (each error's and its parent's), sorted for binary search.
    let mut wanted: Vec<&str> = found
        .iter()
        .flat_map(|(_, v, _)| {
            let parent = v.path.rsplit_once('/').map_or("", |(p, _)| p);
            [v.path.as_str(), parent]
        })
        .collect();
    wanted.sort_unstable();
    wanted.dedup();
    let order = document_order(instance, &wanted);
    let at = |path: &str| wanted.binary_search(&path).ok().and_then(|i| order[i]);
    let rank = |path: &str| -> (usize, usize) {
        if let Some((i, _)) = at(path) {
            return (i, 0);
        }
        // A missing property sorts after everything its parent holds.
        let parent = path.rsplit_once('/').map_or("", |(p, _)| p);
        (at(parent).map_or(0, |(_, end)| end), 1)
    };
    let ranks: Vec<(usize, usize)> = found.iter().map(|(_, v, _)| rank(&v.path)).collect();
    let mut found: Vec<_> = found.into_iter().zip(ranks).collect();
    // Consequences of other errors are dropped when those errors are there to say it.
    if found.iter().any(|((_, _, consequence), _)| !consequence) {
        found.retain(|((_, _, consequence), _)| !consequence);
    }
    found.sort_by_key(|((seq, _, _), rank)| (*rank, *seq));
    let mut out: Vec<Violation> = Vec::with_capacity(found.len().min(MAX_VIOLATIONS));
    for ((_, v, _), _) in found {
        if !out.contains(&v) && out.len() < MAX_VIOLATIONS {
            out.push(v);
        }
    }
    out
}

/// For each of the `wanted` locations (sorted paths) that the instance holds: its pre-order index
/// (objects in document order) and the last index inside it, in `wanted`'s order. One walk, and
/// only the wanted paths are kept, so the cost does not grow with the paths of a large instance
/// that has a few errors.
fn document_order(instance: &Value, wanted: &[&str]) -> Vec<Option<(usize, usize)>> {
    enum Step<'v> {
        Enter(&'v Value, usize),
        /// Leaving the location whose path is `path[..len]` and whose index is `index`.
        Leave(usize, usize),
    }
    let mut order = vec![None; wanted.len()];
    let mut path = String::new();
    let mut next = 0usize;
    let mut work = vec![Step::Enter(instance, 0)];
    // The key of each location waiting to be entered, popped as it is (both are stacks).
    let mut keys: Vec<String> = Vec::new();
    while let Some(step) = work.pop() {
        match step {
            Step::Enter(v, len) => {
                path.truncate(len);
                if let Some(key) = keys.pop() {
                    path.push('/');
                    path.push_str(&key);
                }
                let index = next;
                next += 1;
                work.push(Step::Leave(path.len(), index));
                let here = path.len();
                match v {
                    Value::Object(m) => {
                        for (k, c) in m.iter().rev() {
                            keys.push(escape_pointer(k).into_owned());
                            work.push(Step::Enter(c, here));
                        }
                    }
                    Value::Array(a) => {
                        for (i, c) in a.iter().enumerate().rev() {
                            keys.push(i.to_string());
                            work.push(Step::Enter(c, here));
                        }
                    }
                    _ => {}
                }
            }
            Step::Leave(len, index) => {
                path.truncate(len);
                if let Ok(i) = wanted.binary_search(&path.as_str()) {
                    order[i] = Some((index, next - 1));
                }
            }
        }
    }
    order
}

fn map_error(
    e: &jsonschema::ValidationError<'_>,
    compiled: &Value,
    out: &mut Vec<(usize, Violation, bool)>,
) {
    let path = e.instance_path().as_str().to_string();
    let instance: &Value = e.instance();
    let seq = out.len();
    let field = field_name(&path);
    let mut push = |path: String,
                    code,
                    message: String,
                    expected: Option<String>,
                    actual: Option<String>,
                    suggestion: String,
                    consequence: bool| {
        out.push((
            seq,
            Violation {
                path,
                code,
                message,
                expected,
                actual,
                suggestion,
            },
            consequence,
        ));
    };
    match e.kind() {
        K::Required { property } => {
            let name = property.as_str().unwrap_or_default();
            let member_schema = schema_at(
                compiled,
                e.schema_path().as_str().trim_end_matches("/required"),
            )
            .and_then(|s| s.get("properties"))
            .and_then(|p| p.get(name));
            let expected = member_schema.map(describe);
            let what = expected
                .as_deref()
                .map(|x| format!(" ({x})"))
                .unwrap_or_default();
            // A key given under a near-miss of the name (`pth` for `path`) is named, never
            // renamed silently: the model is told which it meant.
            let near = instance
                .as_object()
                .and_then(|o| o.keys().find(|k| near_miss(k, name)));
            let suggestion = match near {
                Some(given) => format!(
                    "rename '{}' to the required property '{}'{what}",
                    clip(given),
                    clip(name)
                ),
                None => format!("add the required property '{}'{what}", clip(name)),
            };
            push(
                format!("{path}/{}", escape_pointer(name)),
                ErrorCode::RequiredMissing,
                format!("Required property '{}' is missing", clip(name)),
                expected.clone(),
                None,
                suggestion,
                false,
            );
        }
        K::Type { kind } => {
            let expected = match kind {
                TypeKind::Single(t) => t.to_string(),
                TypeKind::Multiple(set) => set
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(" or "),
            };
            let actual_type = json_type(instance);
            push(
                path,
                ErrorCode::TypeMismatch,
                format!("Type mismatch: expected {expected}, got {actual_type}"),
                Some(expected.clone()),
                // Types on both sides ("expected string, actual integer"), so a reader sees both without the schema.
                Some(actual_type.to_string()),
                format!(
                    "provide {field} as {} {expected} value, not {}",
                    article(&expected),
                    with_article(actual_type)
                ),
                false,
            );
        }
        K::AdditionalProperties { unexpected } | K::UnevaluatedProperties { unexpected } => {
            let closed = schema_at(compiled, parent_schema_path(e.schema_path().as_str()));
            let declared = closed.map(|s| declared_names(compiled, s));
            let allowed = declared
                .as_ref()
                .filter(|d| !d.is_empty())
                .map(|d| list(d.iter().map(String::as_str)));
            let allowed_hint = allowed
                .as_deref()
                .map(|a| format!("; allowed: {a}"))
                .unwrap_or_default();
            // Each unexpected name is looked up among the declared ones, not compared with each.
            let declared = declared
                .as_deref()
                .map(|d| Declared::new(d, unexpected.len()));
            for name in unexpected {
                // A declared property is unevaluated only because the part declaring it failed
                // on something else, which is reported on its own.
                let consequence = declared.as_ref().is_some_and(|d| d.contains(name));
                let meant = declared
                    .as_ref()
                    .and_then(|d| d.first_near_miss(name, |known| instance.get(known).is_none()));
                let fix = match meant {
                    Some(meant) => format!("rename '{}' to '{}'", clip(name), clip(meant)),
                    None => format!("remove '{}'", clip(name)),
                };
                push(
                    format!("{path}/{}", escape_pointer(name)),
                    ErrorCode::ConstraintViolation,
                    format!("additional property '{}' is not allowed", clip(name)),
                    allowed
                        .clone()
                        .map(|a| format!("one of the declared properties: {a}")),
                    instance.get(name).map(render),
                    format!("{fix}{allowed_hint}"),
                    consequence,
                );
            }
        }
        kind => {
            let (message, expected, suggestion) = constraint(kind, instance, &field);
            push(
                path,
                ErrorCode::ConstraintViolation,
                message,
                expected,
                // Rendered only here: the other kinds' instance is often a whole object.
                Some(render(instance)),
                suggestion,
                false,
            );
        }
    }
}

/// Message, expected and suggestion for a constraint keyword.
fn constraint(kind: &K, instance: &Value, field: &str) -> (String, Option<String>, String) {
    let chars = instance.as_str().map_or(0, |s| s.chars().count());
    let items = instance.as_array().map_or(0, Vec::len);
    let members = instance.as_object().map_or(0, |m| m.len());
    match kind {
        K::MinLength { limit } => (
            format!("String is shorter than the minimum length of {limit} ({chars} characters)"),
            Some(format!("at least {limit} characters")),
            format!("make {field} at least {limit} characters long"),
        ),
        K::MaxLength { limit } => (
            format!("String is longer than the maximum length of {limit} ({chars} characters)"),
            Some(format!("at most {limit} characters")),
            format!("shorten {field} to at most {limit} characters"),
        ),
        K::Minimum { limit } => (
            format!("Value is below the minimum of {limit}"),
            Some(format!(">= {limit}")),
            format!("use a value of at least {limit} for {field}"),
        ),
        K::Maximum { limit } => (
            format!("Value is above the maximum of {limit}"),
            Some(format!("<= {limit}")),
            format!("use a value of at most {limit} for {field}"),
        ),
        K::ExclusiveMinimum { limit } => (
            format!("Value must be greater than the exclusive minimum of {limit}"),
            Some(format!("> {limit}")),
            format!("use a value greater than {limit} for {field}"),
        ),
        K::ExclusiveMaximum { limit } => (
            format!("Value must be less than the exclusive maximum of {limit}"),
            Some(format!("< {limit}")),
            format!("use a value less than {limit} for {field}"),
        ),
        K::MultipleOf { multiple_of } => (
            format!("Value is not a multiple of {multiple_of}"),
            Some(format!("a multiple of {multiple_of}")),
            format!("use a multiple of {multiple_of} for {field}"),
        ),
        K::Pattern { pattern } => (
            "String does not match the required pattern".to_string(),
            Some(format!("a string matching {}", clip(pattern))),
            format!("change {field} to match the required pattern"),
        ),
        K::Enum { options } => {
            let allowed = options
                .as_array()
                .map(|o| enum_allowed(o))
                .unwrap_or_default();
            not_allowed(&allowed, field)
        }
        // An enum looked up by hash (enums.rs), whose message is the list of allowed values.
        K::Custom { keyword, message } if keyword == super::enums::KEYWORD => {
            not_allowed(message, field)
        }
        K::Constant { expected_value } => (
            format!("Value must be {}", render(expected_value)),
            Some(render(expected_value)),
            format!("set {field} to {}", render(expected_value)),
        ),
        K::MinItems { limit } => (
            format!("Array has fewer items than the minimum of {limit} ({items} items)"),
            Some(format!("at least {limit} items")),
            format!("give {field} at least {limit} items"),
        ),
        K::MaxItems { limit } => (
            format!("Array has more items than the maximum of {limit} ({items} items)"),
            Some(format!("at most {limit} items")),
            format!("give {field} at most {limit} items"),
        ),
        K::UniqueItems => (
            "Array items must be unique".to_string(),
            Some("unique items".into()),
            format!("remove the repeated items from {field}"),
        ),
        K::MinProperties { limit } => (
            format!("Object has fewer properties than the minimum of {limit} ({members})"),
            Some(format!("at least {limit} properties")),
            format!("give {field} at least {limit} properties"),
        ),
        K::MaxProperties { limit } => (
            format!("Object has more properties than the maximum of {limit} ({members})"),
            Some(format!("at most {limit} properties")),
            format!("give {field} at most {limit} properties"),
        ),
        K::Format { format } => (
            format!("Value is not a valid {format}"),
            Some(format!("a valid {format}")),
            format!("give {field} in {format} format"),
        ),
        K::AnyOf { .. } | K::OneOfNotValid { .. } => (
            "Value matches none of the allowed alternatives".to_string(),
            None,
            format!("give {field} in one of the shapes the schema allows"),
        ),
        K::OneOfMultipleValid { .. } => (
            "Value matches more than one alternative where exactly one is allowed".to_string(),
            None,
            format!("make {field} match exactly one of the allowed shapes"),
        ),
        K::FalseSchema => (
            "No value is allowed here".to_string(),
            None,
            format!("remove {field}"),
        ),
        K::Not { .. } => (
            "Value matches a shape that is not allowed".to_string(),
            None,
            format!("change {field}"),
        ),
        K::Contains => (
            "Array has no item of the required kind".to_string(),
            None,
            format!("add an item of the required kind to {field}"),
        ),
        K::AdditionalItems { limit } => (
            format!("Array has more items than the {limit} allowed"),
            Some(format!("at most {limit} items")),
            format!("remove the extra items from {field}"),
        ),
        K::UnevaluatedItems { .. } => (
            "Array has items that are not allowed".to_string(),
            None,
            format!("remove the extra items from {field}"),
        ),
        K::PropertyNames { .. } => (
            "Object has a property name that is not allowed".to_string(),
            None,
            format!("rename the properties of {field}"),
        ),
        K::BacktrackLimitExceeded { .. } | K::RegexEngineFailure { .. } => (
            "Pattern evaluation gave up on this value".to_string(),
            None,
            format!("send a shorter or simpler value for {field}"),
        ),
        _ => (
            "Value breaks a constraint of the schema".to_string(),
            None,
            format!("change {field}"),
        ),
    }
}

/// The members of an enum as a violation lists them.
pub(super) fn enum_allowed(members: &[Value]) -> String {
    list(
        members
            .iter()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
            .collect::<Vec<_>>()
            .iter()
            .map(String::as_str),
    )
}

/// A value that is none of an enum's members (`allowed`, listed), of `field`.
fn not_allowed(allowed: &str, field: &str) -> (String, Option<String>, String) {
    (
        format!("Value must be one of: {allowed}"),
        Some(format!("one of: {allowed}")),
        format!("use one of the allowed values for {field} (exact case): {allowed}"),
    )
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

fn with_article(word: &str) -> String {
    if word == "null" {
        "null".into()
    } else {
        format!("{} {word}", article(word))
    }
}

/// 'name' for a member, "item 3" for an array element, "the arguments" at the root.
fn field_name(path: &str) -> String {
    match path.rsplit_once('/') {
        None => "the arguments".into(),
        Some((_, last)) if last.bytes().all(|b| b.is_ascii_digit()) && !last.is_empty() => {
            format!("item {last}")
        }
        Some((_, last)) => format!("'{}'", clip(&unescape_pointer(last))),
    }
}

fn parent_schema_path(schema_path: &str) -> &str {
    schema_path.rsplit_once('/').map_or("", |(p, _)| p)
}

/// The subschema at an evaluation path: a JSON Pointer whose `$ref` segments jump to the
/// reference's target.
fn schema_at<'v>(schema: &'v Value, pointer: &str) -> Option<&'v Value> {
    if pointer.is_empty() {
        return Some(schema);
    }
    let mut here = schema;
    for segment in pointer.strip_prefix('/')?.split('/') {
        let segment = unescape_pointer(segment);
        here = match (segment.as_ref(), here) {
            ("$ref", Value::Object(m)) if m.get("$ref").is_some_and(Value::is_string) => {
                resolve(schema, m["$ref"].as_str().unwrap_or_default())?
            }
            (_, Value::Object(m)) => m.get(segment.as_ref())?,
            (_, Value::Array(a)) => a.get(segment.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(here)
}

/// A local reference's target (JSON Pointer fragments only).
fn resolve<'v>(schema: &'v Value, reference: &str) -> Option<&'v Value> {
    let fragment = reference.strip_prefix('#')?;
    schema.pointer(&percent_decode(fragment))
}

/// Property names `closed` declares, its own first, then those of the parts it combines
/// (`$ref`, `allOf`, `anyOf`, `oneOf`, `if`, `then`, `else`, `dependentSchemas`).
fn declared_names(schema: &Value, closed: &Value) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut named: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let mut seen: Vec<*const Value> = Vec::new();
    let mut work = vec![closed];
    while let Some(node) = work.pop() {
        let Value::Object(m) = node else { continue };
        if seen.contains(&(node as *const Value)) || seen.len() > 1000 {
            continue;
        }
        seen.push(node);
        if let Some(Value::Object(props)) = m.get("properties") {
            for name in props.keys() {
                if named.insert(name) {
                    names.push(name.clone());
                }
            }
        }
        let mut parts: Vec<&Value> = Vec::new();
        if let Some(target) = m
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| resolve(schema, r))
        {
            parts.push(target);
        }
        for key in ["allOf", "anyOf", "oneOf"] {
            if let Some(Value::Array(items)) = m.get(key) {
                parts.extend(items);
            }
        }
        for key in ["if", "then", "else"] {
            parts.extend(m.get(key));
        }
        if let Some(Value::Object(dependent)) = m.get("dependentSchemas") {
            parts.extend(dependent.values());
        }
        work.extend(parts.into_iter().rev());
    }
    names
}

fn list<'a>(items: impl Iterator<Item = &'a str>) -> String {
    let all: Vec<&str> = items.collect();
    clip(&all.join(", "))
}
