//! The tool registry: definitions checked and compiled once (draft 2020-12, jsonschema crate),
//! arguments validated under hard limits, every violation reported as data.
//!
//! Strict mode (the default) rejects unknown properties even where a schema does not say
//! `additionalProperties: false`; `strict.rs` states the rule and why it only ever refuses more.

mod check;
pub(crate) use check::canonical;
mod cost;
mod enums;
mod exact;
mod given;
mod graph;
mod hints;
mod shown;
mod strict;
mod suggestions;
mod violations;

use crate::names::NameRule;
use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use serde_json::Value;

use crate::error::ErrorCode;
use crate::limits::{exceeds_depth, Limits};

pub use cost::MAX_APPLICATIONS;
pub use given::{check_given, GivenArguments};
pub use violations::Violation;

/// Compiles `schema` with the registry's options (draft 2020-12, formats asserted, linear-time
/// patterns) for instances held in the representation `F`: bindings validate their own
/// values in place (Python objects, say) with the same rules as the serde validator. For a
/// registered tool's compiled schema (see [`Tool::companion`]), whose cycles were refused.
pub fn compile_for<F: jsonschema::json::Json>(
    schema: &Value,
) -> Result<jsonschema::Validator<F>, RegistryError> {
    // The schema is a registered tool's, whose reference cycles were refused at registration.
    check::build::<F>(schema)
}

/// Most violations reported for one call; a model fixes the first few before it needs the rest.
pub const MAX_VIOLATIONS: usize = 50;

/// A tool definition as given to [`Registry::register`].
#[derive(Clone, Debug, PartialEq)]
pub struct Definition {
    pub name: String,
    pub description: String,
    pub version: String,
    pub category: Option<String>,
    /// The parameter schema exactly as given (strict mode compiles a derived copy).
    pub schema: Value,
    /// Hints about the tool as its source gave them (MCP's `annotations`: `readOnlyHint`,
    /// `destructiveHint`, ...); kept, never checked, not part of the fingerprint.
    pub annotations: Option<Value>,
    /// Calls cut off are taken for this tool (marked truncated) instead of refused: for tools
    /// with no side effects, where a partial call does no harm.
    pub allow_truncated: bool,
}

/// A registered tool: its definition and the validator compiled from it.
pub struct Tool {
    pub definition: Definition,
    /// Hex digest of the canonical definition: equal definitions, equal fingerprints.
    pub fingerprint: String,
    validator: jsonschema::Validator,
    /// The schema the validator was compiled from (the strict copy in strict mode).
    compiled: Value,
    /// The schema holds doubles past 2^53, which 64-bit integers are rounded to when compared.
    big_doubles: bool,
    /// A binding's own state for this tool (a validator over its native values), built once.
    companion: OnceLock<Box<dyn Any + Send + Sync>>,
}

impl std::fmt::Debug for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.definition.name)
            .field("fingerprint", &self.fingerprint)
            .finish()
    }
}

/// Why a definition was refused, or a lookup failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegistryError {
    pub code: ErrorCode,
    pub message: String,
    /// JSON Pointer into the schema, where the fault is in the schema.
    pub path: Option<String>,
}

impl RegistryError {
    /// What to do about a call to a name the registry does not hold.
    pub const UNKNOWN_TOOL_FIX: &'static str = "call one of the registered tools";

    pub(crate) fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        RegistryError {
            code,
            message: message.into(),
            path: None,
        }
    }
}

impl From<RegistryError> for Violation {
    /// A failed lookup as the one violation of arguments for that name (`try_validate`).
    fn from(e: RegistryError) -> Self {
        Violation {
            path: String::new(),
            code: e.code,
            message: e.message,
            expected: None,
            actual: None,
            suggestion: RegistryError::UNKNOWN_TOOL_FIX.into(),
        }
    }
}

impl std::fmt::Display for RegistryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{}] {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for RegistryError {}

/// Tools by name, safe to share across threads. Names are unique regardless of case, and a
/// lookup that misses the exact spelling falls back to the case-insensitive match (models
/// write `Read_File` for `read_file`).
pub struct Registry {
    strict: bool,
    limits: Limits,
    /// Which tool names are accepted, at registration and in calls checked against it.
    names: NameRule,
    tools: RwLock<Catalogue>,
}

/// The registry's tools, by lowercase name, and their names indexed for suggestions.
#[derive(Default)]
struct Catalogue {
    by_key: HashMap<String, Arc<Tool>>,
    names: suggestions::Suggestions,
    /// Every tool by category (uncategorised first) then name, kept sorted as tools are added,
    /// so a listing is a copy, not a sort.
    listing: Vec<Arc<Tool>>,
    /// Tools added or replaced so far.
    revision: u64,
}

impl Registry {
    /// `limits` bound the arguments of every validation (size and depth; the deadline is unused).
    pub fn new(strict: bool, limits: Limits) -> Self {
        Registry {
            strict,
            limits,
            names: NameRule::Default,
            tools: RwLock::new(Catalogue::default()),
        }
    }

    /// The registry with another naming rule (OpenAI's or MCP's names).
    pub fn with_names(mut self, names: NameRule) -> Self {
        self.names = names;
        self
    }

    pub fn names(&self) -> NameRule {
        self.names
    }

    pub fn strict(&self) -> bool {
        self.strict
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Checks and compiles `definition`, then adds it. The same definition twice is a no-op
    /// that returns the tool already there; a different one under a taken name is TSR-007.
    pub fn register(&self, definition: Definition) -> Result<Arc<Tool>, RegistryError> {
        self.add(definition, false)
    }

    /// Checks and compiles `definition`, then puts it in place of the tool registered under its
    /// name (another version of that tool), or adds it when the name is free. Lookups already
    /// under way keep the tool they found. A taken name spelt otherwise is TSR-007.
    pub fn replace(&self, definition: Definition) -> Result<Arc<Tool>, RegistryError> {
        self.add(definition, true)
    }

    fn add(&self, definition: Definition, replace: bool) -> Result<Arc<Tool>, RegistryError> {
        check::definition(&definition, self.names)?;
        let fingerprint = check::fingerprint(&definition);
        let key = definition.name.to_ascii_lowercase();
        if let Some(existing) = self.read().by_key.get(&key) {
            if !replace || existing.fingerprint == fingerprint {
                return same_or_duplicate(existing, &fingerprint, &definition.name);
            }
        }
        // Compiled outside the lock: registering never blocks validation on other tools.
        let compiled = if self.strict {
            strict::strict_schema(&definition.schema)?
        } else {
            definition.schema.clone()
        };
        // Before compiling: a schema that would cost exponential work is refused cheaply.
        let graph = graph::Graph::new(&compiled);
        cost::check(&graph, self.limits.max_depth)?;
        let validator = check::compile::<jsonschema::json::SerdeJson>(&compiled, &graph)?;
        let tool = Arc::new(Tool {
            definition,
            fingerprint,
            validator,
            big_doubles: exact::holds_big_doubles(&compiled),
            compiled,
            companion: OnceLock::new(),
        });
        let mut tools = self.tools.write().unwrap_or_else(|e| e.into_inner());
        if let Some(existing) = tools.by_key.get(&key) {
            let spelt_otherwise = existing.definition.name != tool.definition.name;
            if !replace || spelt_otherwise || existing.fingerprint == tool.fingerprint {
                return same_or_duplicate(existing, &tool.fingerprint, &tool.definition.name);
            }
            let existing = Arc::clone(existing);
            tools.listing.retain(|t| !Arc::ptr_eq(t, &existing));
        } else {
            tools.names.insert(&tool.definition.name);
        }
        tools.by_key.insert(key, Arc::clone(&tool));
        tools.revision += 1;
        let at = tools
            .listing
            .partition_point(|t| listing_place(t) < listing_place(&tool));
        tools.listing.insert(at, Arc::clone(&tool));
        Ok(tool)
    }

    /// How many times a tool was added or replaced: a listing made at one revision holds until
    /// the next.
    pub fn revision(&self) -> u64 {
        self.read().revision
    }

    /// The tool registered under `name` (exact spelling first, then any case), or TSR-001.
    pub fn get(&self, name: &str) -> Result<Arc<Tool>, RegistryError> {
        let tools = self.read();
        let found = tools
            .by_key
            .get(name)
            .or_else(|| tools.by_key.get(&name.to_ascii_lowercase()));
        found.cloned().ok_or_else(|| {
            let hint = tools
                .names
                .closest(name)
                .map(|n| format!("; did you mean '{n}'?"))
                .unwrap_or_default();
            RegistryError::new(
                ErrorCode::UnknownTool,
                format!("Unknown tool: '{}'{hint}", shown::clip(name)),
            )
        })
    }

    /// Every tool, by category (uncategorised first) then name; only `category` when given.
    pub fn tools(&self, category: Option<&str>) -> Vec<Arc<Tool>> {
        self.read()
            .listing
            .iter()
            .filter(|t| category.is_none() || t.definition.category.as_deref() == category)
            .cloned()
            .collect()
    }

    pub fn len(&self) -> usize {
        self.read().by_key.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Catalogue> {
        // A panic while the lock was held cannot leave the map half-written (inserts are
        // single calls), so a poisoned lock is still safe to read.
        self.tools.read().unwrap_or_else(|e| e.into_inner())
    }
}

fn same_or_duplicate(
    existing: &Arc<Tool>,
    fingerprint: &str,
    name: &str,
) -> Result<Arc<Tool>, RegistryError> {
    if existing.fingerprint == fingerprint {
        Ok(Arc::clone(existing))
    } else {
        Err(RegistryError::new(
            ErrorCode::DuplicateTool,
            format!("Tool '{name}' is already registered with a different definition"),
        ))
    }
}

/// Where a tool stands in a listing: by category (uncategorised first), then name.
fn listing_place(tool: &Tool) -> (&Option<String>, &String) {
    (&tool.definition.category, &tool.definition.name)
}

impl Tool {
    /// Parses JSON argument bytes under `limits` and validates them: the parsed value, or
    /// every violation (TSR-002 for text that is not JSON, TLP-007/008 over the limits).
    pub fn validate_json(&self, bytes: &[u8], limits: &Limits) -> Result<Value, Vec<Violation>> {
        if let Err(e) = limits.check_size(bytes.len()) {
            return Err(vec![Violation::limit(ErrorCode::TooLarge, e.to_string())]);
        }
        // Before parsing: serde_json stops at 128 levels, but the registry's limit is lower.
        if exceeds_depth(bytes, limits.max_depth) {
            return Err(vec![Violation::too_deep(limits.max_depth)]);
        }
        let value: Value =
            serde_json::from_slice(bytes).map_err(|e| vec![Violation::not_json(&e, bytes)])?;
        let mut inexact = if exact::may_hold_inexact(&value) {
            exact::inexact_integers(bytes)
        } else {
            Vec::new()
        };
        if self.big_doubles {
            inexact.extend(exact::inexact_in_value(&value));
        }
        self.validate_exactly(&value, &inexact)?;
        Ok(value)
    }

    /// Validates an already parsed value (its size and depth are the caller's to bound).
    /// Integers beyond 64 bits in it are doubles already; [`Tool::validate_json`] compares them
    /// exactly, from their text.
    pub fn validate_value(&self, value: &Value) -> Result<(), Vec<Violation>> {
        let inexact = if self.big_doubles {
            exact::inexact_in_value(value)
        } else {
            Vec::new()
        };
        self.validate_exactly(value, &inexact)
    }

    /// Validates `value`, and when it holds integers no double holds, validates it again with
    /// each as the double just below and just above it: both must pass.
    fn validate_exactly(
        &self,
        value: &Value,
        inexact: &[exact::Inexact],
    ) -> Result<(), Vec<Violation>> {
        self.check(value)?;
        if inexact.is_empty() {
            return Ok(());
        }
        for above in [false, true] {
            self.check(&exact::with_neighbours(value, inexact, above))
                .map_err(|mut violations| {
                    // Show the integer as written, not the double it was checked as.
                    for v in &mut violations {
                        if v.code != ErrorCode::ConstraintViolation {
                            continue;
                        }
                        if let Some(n) = inexact.iter().find(|n| n.path == v.path) {
                            v.actual = Some(shown::clip(&n.digits));
                        }
                    }
                    violations
                })?;
        }
        Ok(())
    }

    fn check(&self, value: &Value) -> Result<(), Vec<Violation>> {
        if self.validator.is_valid(value) {
            return Ok(());
        }
        Err(violations::violations(
            self.validator.iter_errors(value),
            value,
            &self.compiled,
        ))
    }

    /// The schema validation runs against (in strict mode, the closed copy).
    pub fn compiled_schema(&self) -> &Value {
        &self.compiled
    }

    /// The binding's companion state for this tool, made from the compiled schema on first use.
    /// `None` when a companion of another type was made first.
    ///
    /// When the schema holds doubles past 2^53 the companion is made from a schema that accepts
    /// nothing: a validator over native values rounds large integers to those doubles, so every
    /// value goes to the core, which compares them exactly.
    pub fn companion<T: Any + Send + Sync>(&self, make: impl FnOnce(&Value) -> T) -> Option<&T> {
        self.companion
            .get_or_init(|| {
                Box::new(if self.big_doubles {
                    make(&Value::Bool(false))
                } else {
                    make(&self.compiled)
                })
            })
            .downcast_ref()
    }

    /// One line that tells a model what the tool expects, e.g.
    /// `read_file expects: {path: string (required), encoding?: 'utf-8'|'ascii'}`.
    pub fn schema_hint(&self) -> String {
        hints::schema_hint(&self.definition.name, &self.definition.schema)
    }
}

#[cfg(test)]
mod tests;
