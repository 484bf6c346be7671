//! Violations as data: code, JSON Pointer, message, expected, actual, suggestion; and the
//! one-line schema hint. Messages never quote a schema, a `$ref` or a pattern's source.

use serde_json::Value;

use super::MAX_VIOLATIONS;
use crate::error::ErrorCode;
use crate::pointer::{escape_pointer, percent_decode, unescape_pointer};
use jsonschema::error::{TypeKind, ValidationErrorKind as K};

/// Longest rendering of a value in `actual` (and of a name in a message), in characters.
pub const MAX_SHOWN: usize = 200;

/// One reason arguments do not match their tool's schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// JSON Pointer to the offending value ("" for the whole arguments; for a missing
    /// property, where it should be).
    pub path: String,
    pub code: ErrorCode,
    pub message: String,
    pub expected: Option<String>,
    /// The offending value as JSON, truncated to [`MAX_SHOWN`] characters.
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
            for name in unexpected {
                // A declared property is unevaluated only because the part declaring it failed
                // on something else, which is reported on its own.
                let consequence = declared.as_ref().is_some_and(|d| d.contains(name));
                let allowed_hint = allowed
                    .as_deref()
                    .map(|a| format!("; allowed: {a}"))
                    .unwrap_or_default();
                let meant = declared.as_ref().and_then(|d| {
                    d.iter().find(|known| {
                        instance.get(known.as_str()).is_none() && near_miss(name, known)
                    })
                });
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
                .map(|o| {
                    list(
                        o.iter()
                            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
                            .collect::<Vec<_>>()
                            .iter()
                            .map(String::as_str),
                    )
                })
                .unwrap_or_default();
            (
                format!("Value must be one of: {allowed}"),
                Some(format!("one of: {allowed}")),
                format!("use one of the allowed values for {field} (exact case): {allowed}"),
            )
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

/// The value as JSON, cut at [`MAX_SHOWN`] characters. Only the part shown is written: the
/// instance of an error about an object is the whole object, arguments of any size.
pub fn render(v: &Value) -> String {
    // MAX_SHOWN + 1 characters fit in this many bytes, so the cut falls where `clip` puts it.
    const ENOUGH: usize = (MAX_SHOWN + 1) * 4;
    struct Bounded(Vec<u8>);
    impl std::io::Write for Bounded {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let room = ENOUGH - self.0.len();
            if room == 0 {
                return Err(std::io::ErrorKind::WriteZero.into());
            }
            let n = buf.len().min(room);
            self.0.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut out = Bounded(Vec::with_capacity(64));
    // An error here only says the writer is full.
    let _ = serde_json::to_writer(&mut out, v);
    clip(&String::from_utf8_lossy(&out.0))
}

/// At most [`MAX_SHOWN`] characters, with "..." when cut.
pub fn clip(s: &str) -> String {
    match s.char_indices().nth(MAX_SHOWN) {
        Some((at, _)) => format!("{}...", &s[..at]),
        None => s.to_string(),
    }
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
                if !names.contains(name) {
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

/// A registered name, prepared for "did you mean" (names are ASCII letters, digits and `_`).
#[derive(Clone, Debug)]
pub struct Candidate {
    pub name: String,
    lower: Vec<u8>,
    /// Which symbols the name holds, one bit each: a cheap lower bound on edit distance.
    symbols: u64,
}

impl Candidate {
    pub fn new(name: &str) -> Self {
        let lower = fold(name);
        Candidate {
            name: name.to_string(),
            symbols: symbols(&lower),
            lower,
        }
    }
}

/// Lowercase ASCII; any other character becomes one byte no name holds (still one edit).
fn fold(text: &str) -> Vec<u8> {
    text.chars()
        .map(|c| {
            if c.is_ascii() {
                c.to_ascii_lowercase() as u8
            } else {
                0xFF
            }
        })
        .collect()
}

fn symbols(lower: &[u8]) -> u64 {
    lower.iter().fold(0u64, |set, &b| {
        let bit = match b {
            b'a'..=b'z' => b - b'a',
            b'0'..=b'9' => 26 + b - b'0',
            b'_' => 36,
            _ => 37 + b % 27,
        };
        set | 1 << bit
    })
}

/// Most edit-distance cells computed for one unknown name: with the filters below a miss costs
/// microseconds even against 10,000 tools, and a pathological registry costs no more than this.
const MAX_CELLS: usize = 1 << 20;

/// The registered name closest to `name` by edit distance, if it is close enough to be a typo
/// (at most 2 edits, or a third of the name's length). `candidates` are sorted by name; of
/// equally close names the first wins.
///
/// Each candidate is first filtered by length (an edit distance of `k` needs lengths within
/// `k`) and by the symbols both names hold (one edit changes at most two), then measured with a
/// Levenshtein band of width `2k + 1` that stops once a row exceeds `k`; `k` shrinks to the best
/// distance found so far.
pub fn closest<'c>(name: &str, candidates: &'c [Candidate]) -> Option<&'c str> {
    // Names hold at most 64 characters and 21 edits: anything longer is no typo of one.
    const LONGEST: usize = super::check::MAX_NAME + super::check::MAX_NAME / 3;
    if name.chars().nth(LONGEST).is_some() {
        return None;
    }
    let wanted = fold(name);
    let wanted_symbols = symbols(&wanted);
    let mut best: Option<(usize, &'c str)> = None;
    let mut cells = 0;
    for c in candidates {
        let allowed = 2.max(c.lower.len() / 3);
        let k = match best {
            Some((0, _)) => break,
            Some((d, _)) => allowed.min(d - 1),
            None => allowed,
        };
        if wanted.len().abs_diff(c.lower.len()) > k
            || (wanted_symbols ^ c.symbols).count_ones() as usize > 2 * k
        {
            continue;
        }
        cells += wanted.len() * (2 * k + 1);
        if cells > MAX_CELLS {
            break;
        }
        if let Some(d) = bounded_distance(&wanted, &c.lower, k) {
            best = Some((d, &c.name));
        }
    }
    best.map(|(_, n)| n)
}

/// A name as near-miss matching compares it: lower case, without `_` and `-`.
fn folded(s: &str) -> impl Iterator<Item = char> + '_ {
    s.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
}

/// Levenshtein distance of `a` and `b` if it is at most `k`, computed in the band of cells
/// within `k` of the diagonal.
pub(super) fn bounded_distance(a: &[u8], b: &[u8], k: usize) -> Option<usize> {
    let (m, n) = (a.len(), b.len());
    if m.abs_diff(n) > k {
        return None;
    }
    const FAR: usize = usize::MAX / 2;
    let mut prev: Vec<usize> = (0..=n).map(|j| if j <= k { j } else { FAR }).collect();
    let mut cur = vec![FAR; n + 1];
    for i in 1..=m {
        let lo = i.saturating_sub(k).max(1);
        let hi = (i + k).min(n);
        cur[0] = if i <= k { i } else { FAR };
        cur[lo - 1] = if lo == 1 { cur[0] } else { FAR };
        let mut row_min = cur[0];
        for j in lo..=hi {
            let d = (prev[j - 1] + usize::from(a[i - 1] != b[j - 1]))
                .min(prev[j] + 1)
                .min(cur[j - 1] + 1);
            cur[j] = d;
            row_min = row_min.min(d);
        }
        if hi < n {
            cur[hi + 1] = FAR;
        }
        if row_min > k {
            return None;
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    (prev[n] <= k).then_some(prev[n])
}

/// Whether `given` is a near miss of the property name `name`: the same but for letter case,
/// `_` and `-`, or at most two edits apart (one for short names). Names longer than 64 bytes
/// are not compared, which keeps the check cheap; nothing is allocated.
fn near_miss(given: &str, name: &str) -> bool {
    if given == name || given.len() > 64 || name.len() > 64 {
        return false;
    }
    if given.is_ascii() && name.is_ascii() {
        let (mut a, mut b) = ([0u8; 64], [0u8; 64]);
        let (a, b) = (
            fold_ascii_into(given, &mut a),
            fold_ascii_into(name, &mut b),
        );
        return within_edits(a, b);
    }
    let (mut a, mut b) = (['\0'; FOLDED_MAX], ['\0'; FOLDED_MAX]);
    within_edits(fold_into(given, &mut a), fold_into(name, &mut b))
}

/// Whether folded names are equal or a few edits apart (see `near_miss`).
fn within_edits<T: PartialEq>(a: &[T], b: &[T]) -> bool {
    let budget = if b.len() <= 4 { 1 } else { 2 };
    a == b || (a.len().abs_diff(b.len()) <= budget && edit_distance(a, b) <= budget)
}

/// An ASCII `s` folded (see `folded`) into `buf`.
fn fold_ascii_into<'b>(s: &str, buf: &'b mut [u8; 64]) -> &'b [u8] {
    let mut n = 0;
    for b in s.bytes().filter(|b| *b != b'_' && *b != b'-') {
        buf[n] = b.to_ascii_lowercase();
        n += 1;
    }
    &buf[..n]
}

/// The most characters a name of 64 bytes folds to (a character lowers to at most three).
const FOLDED_MAX: usize = 3 * 64;

/// `s` folded (see `folded`) into `buf`.
fn fold_into<'b>(s: &str, buf: &'b mut [char; FOLDED_MAX]) -> &'b [char] {
    let mut n = 0;
    for (slot, c) in buf.iter_mut().zip(folded(s)) {
        *slot = c;
        n += 1;
    }
    &buf[..n]
}

/// Levenshtein distance (insertions, deletions, substitutions, and a swap of two neighbours)
/// of names folded by `fold_into`, on three rows kept on the stack.
fn edit_distance<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    // Distances stay below FOLDED_MAX + 2, which a byte holds.
    let mut rows = [[0u8; FOLDED_MAX + 1]; 3];
    let [mut before, mut previous, mut row] = [0, 1, 2];
    for (j, cell) in rows[previous][..=b.len()].iter_mut().enumerate() {
        *cell = j as u8;
    }
    for i in 1..=a.len() {
        rows[row][0] = i as u8;
        for j in 1..=b.len() {
            let cost = u8::from(a[i - 1] != b[j - 1]);
            let mut d = (rows[previous][j] + 1)
                .min(rows[row][j - 1] + 1)
                .min(rows[previous][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(rows[before][j - 2] + 1);
            }
            rows[row][j] = d;
        }
        [before, previous, row] = [previous, row, before];
    }
    usize::from(rows[previous][b.len()])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_misses_fold_case_and_separators_and_allow_a_few_edits() {
        for (given, name) in [
            ("filePath", "file_path"),
            ("FILE-PATH", "file_path"),
            ("pth", "path"),
            ("contnet", "content"),
            ("contetn", "content"),
            ("recursve", "recursive"),
            ("İd", "id\u{307}"),
        ] {
            assert!(near_miss(given, name), "{given} / {name}");
        }
        for (given, name) in [
            ("path", "path"),
            ("xyz", "path"),
            ("pt", "path"),
            ("description", "destination"),
            (&"a".repeat(65), &"a".repeat(64)),
        ] {
            assert!(!near_miss(given, name), "{given} / {name}");
        }
    }

    /// The distance by the textbook table, for comparison.
    fn reference_distance(a: &[char], b: &[char]) -> usize {
        let mut d = vec![vec![0; b.len() + 1]; a.len() + 1];
        for (i, row) in d.iter_mut().enumerate() {
            row[0] = i;
        }
        d[0] = (0..=b.len()).collect();
        for i in 1..=a.len() {
            for j in 1..=b.len() {
                let cost = usize::from(a[i - 1] != b[j - 1]);
                d[i][j] = (d[i - 1][j] + 1)
                    .min(d[i][j - 1] + 1)
                    .min(d[i - 1][j - 1] + cost);
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
                }
            }
        }
        d[a.len()][b.len()]
    }

    proptest::proptest! {
        #[test]
        fn the_stack_distance_is_the_table_distance(a in "[abc_İ-]{0,70}", b in "[abc_İ-]{0,70}") {
            let (mut x, mut y) = (['\0'; FOLDED_MAX], ['\0'; FOLDED_MAX]);
            let (x, y) = (fold_into(&a, &mut x), fold_into(&b, &mut y));
            proptest::prop_assert_eq!(edit_distance(x, y), reference_distance(x, y));
        }
    }
}
