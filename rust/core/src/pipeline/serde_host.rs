//! The pipeline's host for serde values: what `cargo test` and the fuzzers run it with. It
//! keeps the binding's accounting (the same limits walk, the same order of parsing and repair)
//! so both backends decide alike.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::error::ErrorCode;
use crate::limits::{exceeds_depth, Limits};
use crate::repair::{mend, validate, Repair};
use crate::schema::{Registry, Tool, Violation};

use super::{Failure, Host};

/// serde_json refuses to nest deeper than 128 levels: deeper arguments are refused by the
/// depth limit first.
const SERDE_MAX_DEPTH: usize = 120;

/// Runs the pipeline on serde values, against a registry when given.
#[derive(Clone, Copy, Default)]
pub struct SerdeHost<'r> {
    registry: Option<&'r Registry>,
}

impl<'r> SerdeHost<'r> {
    pub fn new(registry: Option<&'r Registry>) -> Self {
        SerdeHost { registry }
    }
}

impl Host for SerdeHost<'_> {
    type Value = Value;

    fn registry(&self) -> Option<&Registry> {
        self.registry
    }

    fn string(&self, text: &str) -> Value {
        Value::String(text.to_owned())
    }

    fn empty_object(&self) -> Value {
        Value::Object(Map::new())
    }

    fn walk_limits(&self, object: &Value, limits: &Limits) -> Result<(), Failure> {
        walk(object, limits).map_err(|v| Failure::new(v.code, v.message, &v.suggestion))
    }

    fn text_bytes<'v>(&self, text: &'v Value, _max_size: usize) -> Result<Cow<'v, [u8]>, Failure> {
        match text {
            Value::String(s) => Ok(Cow::Borrowed(s.as_bytes())),
            other => Err(Failure::new(
                ErrorCode::Unparseable,
                format!("expected JSON text, got {other}"),
                "",
            )),
        }
    }

    fn parse_arguments(
        &self,
        _text: &Value,
        bytes: &[u8],
        limits: &Limits,
        repair: bool,
    ) -> Result<(Value, Vec<Repair>), Failure> {
        let limits = Limits {
            max_depth: limits.max_depth.min(SERDE_MAX_DEPTH),
            ..*limits
        };
        // Strict JSON within the limits is read as it is; the rest goes through the core.
        if bytes.len() <= limits.max_size && !exceeds_depth(bytes, limits.max_depth) {
            if let Ok(value) = serde_json::from_slice(bytes) {
                return Ok((value, Vec::new()));
            }
        }
        let (json, repairs) = if repair {
            mend(bytes, &limits)
        } else {
            validate(bytes, &limits)
                .map(|()| (String::from_utf8_lossy(bytes).into_owned(), Vec::new()))
        }
        .map_err(|e| Failure::unparsed(&e))?;
        serde_json::from_str(&json)
            .map(|value| (value, repairs))
            .map_err(|e| {
                Failure::new(
                    ErrorCode::TooDeepOrTimeout,
                    format!("Arguments cannot be built as values: {e}"),
                    "flatten the arguments",
                )
            })
    }

    fn validate(
        &self,
        tool: &Arc<Tool>,
        arguments: &Value,
    ) -> Result<Result<(), Vec<Violation>>, String> {
        let limits = self.registry.map(|r| *r.limits()).unwrap_or_default();
        if let Err(violation) = walk(arguments, &limits) {
            return Ok(Err(vec![*violation]));
        }
        Ok(tool.validate_value(arguments))
    }

    fn same_value(&self, a: &Value, b: &Value) -> bool {
        a == b
    }

    fn equality_key(&self, value: &Value) -> Option<String> {
        let mut out = String::new();
        crate::schema::canonical(value, &mut out);
        Some(out)
    }
}

/// Holds a value to the size and depth limits, counting its bytes as compact JSON would
/// roughly take (the binding's walk over Python objects counts the same way).
fn walk(value: &Value, limits: &Limits) -> Result<(), Box<Violation>> {
    let mut budget = limits.max_size;
    walk_at(value, 0, limits.max_depth, &mut budget, &String::new)
}

fn walk_at(
    value: &Value,
    depth: usize,
    max_depth: usize,
    budget: &mut usize,
    path: &dyn Fn() -> String,
) -> Result<(), Box<Violation>> {
    let spend = |n: usize, budget: &mut usize| {
        *budget = budget.checked_sub(n).ok_or_else(|| {
            Box::new(Violation {
                path: String::new(),
                code: ErrorCode::TooLarge,
                message: "Arguments are over the size limit".into(),
                expected: None,
                actual: None,
                suggestion: "send smaller arguments".into(),
            })
        })?;
        Ok::<(), Box<Violation>>(())
    };
    match value {
        Value::Null => return spend(4, budget),
        Value::Bool(_) => return spend(5, budget),
        Value::Number(_) => return spend(8, budget),
        Value::String(s) => return spend(s.len() + 2, budget),
        _ => {}
    }
    if depth >= max_depth {
        return Err(Box::new(Violation {
            path: path(),
            code: ErrorCode::TooDeepOrTimeout,
            message: format!("Arguments nest deeper than the depth limit of {max_depth}"),
            expected: None,
            actual: None,
            suggestion: "flatten the arguments".into(),
        }));
    }
    match value {
        Value::Object(map) => {
            for (key, item) in map {
                spend(key.len() + 3, budget)?;
                let child = || format!("{}/{}", path(), key.replace('~', "~0").replace('/', "~1"));
                walk_at(item, depth + 1, max_depth, budget, &child)?;
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                spend(1, budget)?;
                let child = || format!("{}/{i}", path());
                walk_at(item, depth + 1, max_depth, budget, &child)?;
            }
        }
        _ => {}
    }
    Ok(())
}
