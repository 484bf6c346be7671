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
use crate::walk::Budget;

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
            mend(bytes, &limits).map(|m| (m.json, m.repairs))
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

/// Holds a value to the size and depth limits (the walk the binding runs over Python objects).
fn walk(value: &Value, limits: &Limits) -> Result<(), Box<Violation>> {
    crate::walk::check(&value, &mut Budget::new(limits)).map_err(Box::new)
}
