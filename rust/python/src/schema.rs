//! The tool registry's Python face: Python values <-> serde values at the boundary, the GIL
//! released while schemas compile and arguments validate. Every rule lives in toolmend_core::schema.

// A refusal is the cold path: its Violation is returned by value rather than boxed for each one.
#![allow(clippy::result_large_err)]

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use pyo3::exceptions::PyTypeError;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyByteArray, PyBytes, PyString, PyTuple, PyType};
use serde_json::Value;
use toolmend_core::schema::{
    check_given, compile_for, Definition, GivenArguments, Registry, RegistryError, Tool, Violation,
};
use toolmend_core::walk::{walk, Budget};
use toolmend_core::{ErrorCode, Limits, NameRule};

use crate::convert::{
    all_untracked, bounded_input, detach_if_large, json_text, limits, package_class,
    python_objects, strict_objects, untracked,
};
use crate::walk::check_limits;
use crate::wire::Obj;

static SCHEMA_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static UNKNOWN_TOOL_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static VALIDATION_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// One reason arguments do not match their tool's schema.
#[pyclass(module = "toolmend", frozen, eq, get_all)]
#[derive(Clone, PartialEq)]
pub struct FieldError {
    /// JSON Pointer to the value ("" for the whole arguments).
    path: String,
    code: &'static str,
    message: String,
    expected: Option<String>,
    actual: Option<String>,
    suggestion: String,
}

#[pymethods]
impl FieldError {
    #[new]
    #[pyo3(signature = (path, code, message, expected=None, actual=None, suggestion=String::new()))]
    fn new(
        path: String,
        code: &str,
        message: String,
        expected: Option<String>,
        actual: Option<String>,
        suggestion: String,
    ) -> PyResult<Self> {
        let code = ErrorCode::from_code(code)
            .map(ErrorCode::as_str)
            .ok_or_else(|| {
                pyo3::exceptions::PyValueError::new_err(format!("unknown error code {code:?}"))
            })?;
        Ok(FieldError {
            path,
            code,
            message,
            expected,
            actual,
            suggestion,
        })
    }
}

impl From<Violation> for FieldError {
    fn from(v: Violation) -> Self {
        FieldError {
            path: v.path,
            code: v.code.as_str(),
            message: v.message,
            expected: v.expected,
            actual: v.actual,
            suggestion: v.suggestion,
        }
    }
}

/// Violations as the tuple of FieldErrors that results and errors carry.
pub(crate) fn field_errors(
    py: Python<'_>,
    violations: Vec<Violation>,
) -> PyResult<Bound<'_, PyTuple>> {
    PyTuple::new(
        py,
        all_untracked(py, violations.into_iter().map(FieldError::from))?,
    )
}

/// The outcome of `try_validate`: `ok`, the parsed `value` (None when not ok), and `errors`.
#[pyclass(module = "toolmend", frozen, get_all)]
pub struct ValidationResult {
    ok: bool,
    value: Py<PyAny>,
    errors: Py<PyTuple>,
}

#[pymethods]
impl ValidationResult {
    /// A result built by hand; `ok` is whether `errors` is empty.
    #[new]
    #[pyo3(signature = (value=None, errors=Vec::new()))]
    fn new(
        py: Python<'_>,
        value: Option<Py<PyAny>>,
        errors: Vec<Py<FieldError>>,
    ) -> PyResult<Self> {
        Ok(ValidationResult {
            ok: errors.is_empty(),
            value: value.unwrap_or_else(|| py.None()),
            errors: PyTuple::new(py, errors)?.unbind(),
        })
    }
}

/// A registered tool as Python sees it (read-only).
#[pyclass(module = "toolmend", name = "ToolInfo", frozen)]
pub struct ToolInfo {
    tool: Arc<Tool>,
}

#[pymethods]
impl ToolInfo {
    /// A tool compiled outside any registry (what an unpickled ToolInfo is).
    #[staticmethod]
    #[allow(clippy::too_many_arguments)]
    fn _from_definition(
        py: Python<'_>,
        name: String,
        schema: &Bound<'_, PyAny>,
        description: String,
        version: String,
        category: Option<String>,
        annotations: Option<&Bound<'_, PyAny>>,
        allow_truncated: bool,
    ) -> PyResult<Self> {
        // The widest naming rule: the name was accepted by the registry it came from.
        let registry = Arc::new(Registry::new(false, Limits::DEFAULT).with_names(NameRule::Mcp));
        let given = (name, description, version, category);
        register_into(
            py,
            &registry,
            given,
            schema,
            annotations,
            allow_truncated,
            false,
        )
    }

    /// The parameter schema as registered: a new dict on each access, so nothing a caller does
    /// to it reaches the registry (and a listing of many tools builds none until asked).
    #[getter]
    fn schema(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        value_to_py(py, &self.tool.definition.schema)
    }

    #[getter]
    fn name(&self) -> &str {
        &self.tool.definition.name
    }

    /// Whether calls cut off are taken for this tool (marked truncated) instead of refused.
    #[getter]
    fn allow_truncated(&self) -> bool {
        self.tool.definition.allow_truncated
    }

    /// The tool's annotations as its source gave them (MCP's `readOnlyHint`, ...); None when it
    /// gave none. A new dict on each access.
    #[getter]
    fn annotations(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.tool
            .definition
            .annotations
            .as_ref()
            .map(|a| value_to_py(py, a))
            .transpose()
    }

    #[getter]
    fn description(&self) -> &str {
        &self.tool.definition.description
    }

    #[getter]
    fn version(&self) -> &str {
        &self.tool.definition.version
    }

    #[getter]
    fn category(&self) -> Option<&str> {
        self.tool.definition.category.as_deref()
    }

    /// Hex digest of the canonical definition (equal definitions, equal fingerprints).
    #[getter]
    fn fingerprint(&self) -> &str {
        &self.tool.fingerprint
    }
}

/// Checks, compiles and adds a tool to `registry` (name, description, version, category given),
/// the compiling done without the GIL.
fn register_into(
    py: Python<'_>,
    registry: &Arc<Registry>,
    (name, description, version, category): (String, String, String, Option<String>),
    schema: &Bound<'_, PyAny>,
    annotations: Option<&Bound<'_, PyAny>>,
    allow_truncated: bool,
    replace: bool,
) -> PyResult<ToolInfo> {
    let definition = Definition {
        name,
        description,
        version,
        category,
        schema: schema_value(schema)?,
        annotations: annotations.map(schema_value).transpose()?,
        allow_truncated,
    };
    let tool = py
        .detach(|| {
            if replace {
                registry.replace(definition)
            } else {
                registry.register(definition)
            }
        })
        .map_err(|e| registry_error(py, &e, None))?;
    Ok(tool_info(&tool))
}

fn tool_info(tool: &Arc<Tool>) -> ToolInfo {
    ToolInfo {
        tool: Arc::clone(tool),
    }
}

/// Tools by name with compiled, strict, limited validation (see toolmend_core::schema).
#[pyclass(module = "toolmend._core", name = "ToolRegistry", subclass, frozen)]
pub struct PyToolRegistry {
    pub(crate) inner: Arc<Registry>,
    /// Listings already built (all tools under None, else by category) and the tool count they
    /// hold for: `tools()` hands out the same tuple until a tool is added.
    listings: Mutex<Listings>,
}

/// The tool count and the listings built at it, by category (None: every tool).
type Listings = (u64, HashMap<Option<String>, Py<PyTuple>>);

#[pymethods]
impl PyToolRegistry {
    #[new]
    #[pyo3(signature = (strict=true, *, max_size=Limits::DEFAULT.max_size, max_depth=Limits::DEFAULT.max_depth, names="default"))]
    fn new(strict: bool, max_size: usize, max_depth: usize, names: &str) -> PyResult<Self> {
        // Validation has no repair deadline.
        let limits = limits(max_size, max_depth, 0)?;
        let names = NameRule::from_name(names).ok_or_else(|| {
            PyValueError::new_err(format!(
                "names must be \"default\", \"openai\" or \"mcp\", not {names:?}"
            ))
        })?;
        Ok(PyToolRegistry {
            inner: Arc::new(Registry::new(strict, limits).with_names(names)),
            listings: Mutex::new((0, HashMap::new())),
        })
    }

    #[getter]
    fn strict(&self) -> bool {
        self.inner.strict()
    }

    /// The naming rule: "default", "openai" or "mcp".
    #[getter]
    fn names(&self) -> &'static str {
        self.inner.names().as_str()
    }

    /// Checks, compiles and adds a tool; registering the same definition again is a no-op. With
    /// `replace`, the tool takes the place of the one registered under its name (another
    /// version of it). Raises SchemaError (TSR-006, TSR-007, TSR-008).
    #[pyo3(signature = (name, schema, *, description=String::new(), version=String::from("1.0.0"), category=None, annotations=None, allow_truncated=false, replace=false))]
    #[allow(clippy::too_many_arguments)]
    fn register(
        &self,
        py: Python<'_>,
        name: String,
        schema: &Bound<'_, PyAny>,
        description: String,
        version: String,
        category: Option<String>,
        annotations: Option<&Bound<'_, PyAny>>,
        allow_truncated: bool,
        replace: bool,
    ) -> PyResult<ToolInfo> {
        let given = (name, description, version, category);
        register_into(
            py,
            &self.inner,
            given,
            schema,
            annotations,
            allow_truncated,
            replace,
        )
    }

    /// How many times a tool was added or replaced (a listing made at one revision holds until
    /// the next).
    #[getter]
    fn revision(&self) -> u64 {
        self.inner.revision()
    }

    /// The tool named `name` (any case when the exact spelling misses); UnknownToolError (TSR-001).
    fn get(&self, py: Python<'_>, name: &str) -> PyResult<ToolInfo> {
        let tool = self
            .inner
            .get(name)
            .map_err(|e| registry_error(py, &e, Some(name)))?;
        Ok(tool_info(&tool))
    }

    /// Every tool (or those of `category`), by category then name.
    #[pyo3(signature = (category=None))]
    fn tools<'py>(&self, py: Python<'py>, category: Option<&str>) -> PyResult<Bound<'py, PyTuple>> {
        // The revision tells whether a listing still holds.
        let count = self.inner.revision();
        let key = category.map(str::to_owned);
        let mut listings = self.listings.lock().unwrap_or_else(|e| e.into_inner());
        // Stale after a registration; and a bounded cache, whatever categories callers ask for.
        if listings.0 != count || listings.1.len() >= 64 {
            *listings = (count, HashMap::new());
        }
        if let Some(listing) = listings.1.get(&key) {
            return Ok(listing.bind(py).clone());
        }
        let infos = self
            .inner
            .tools(category)
            .iter()
            .map(tool_info)
            .collect::<Vec<_>>();
        let listing = PyTuple::new(py, infos)?;
        listings.1.insert(key, listing.clone().unbind());
        Ok(listing)
    }

    /// One line telling a model what the tool expects.
    fn schema_hint(&self, py: Python<'_>, name: &str) -> PyResult<String> {
        let tool = self
            .inner
            .get(name)
            .map_err(|e| registry_error(py, &e, Some(name)))?;
        Ok(tool.schema_hint())
    }

    /// The parsed arguments (the caller's own object when a dict was given), or ValidationError
    /// with every error; UnknownToolError for a name not registered. With `into` (a pydantic
    /// model, a TypeAdapter, a msgspec Struct) they are built into its instance (toolmend.typed).
    #[pyo3(signature = (name, args, *, into=None))]
    fn validate(
        &self,
        py: Python<'_>,
        name: &str,
        args: &Bound<'_, PyAny>,
        into: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let tool = self
            .inner
            .get(name)
            .map_err(|e| registry_error(py, &e, Some(name)))?;
        match self.check(py, &tool, args)? {
            Ok(value) => match into {
                None => Ok(value),
                Some(model) => Ok(py
                    .import("toolmend.typed")?
                    .getattr("into_model")?
                    .call1((model, value, tool.definition.name.as_str()))?
                    .unbind()),
            },
            Err(errors) => {
                let errors = field_errors(py, errors)?;
                let cls =
                    package_class(py, &VALIDATION_ERROR, "toolmend.errors", "ValidationError")?;
                Err(PyErr::from_value(
                    cls.call1((tool.definition.name.as_str(), errors))?,
                ))
            }
        }
    }

    /// Like `validate`, but every outcome is a ValidationResult; it never raises for bad input.
    fn try_validate(
        &self,
        py: Python<'_>,
        name: &str,
        args: &Bound<'_, PyAny>,
    ) -> PyResult<Py<ValidationResult>> {
        let outcome = match self.inner.get(name) {
            Ok(tool) => self.check(py, &tool, args)?,
            Err(e) => Err(vec![Violation::from(e)]),
        };
        untracked(
            py,
            match outcome {
                Ok(value) => ValidationResult {
                    ok: true,
                    value,
                    errors: PyTuple::empty(py).unbind(),
                },
                Err(errors) => ValidationResult {
                    ok: false,
                    value: py.None(),
                    errors: field_errors(py, errors)?.unbind(),
                },
            },
        )
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn __contains__(&self, name: &str) -> bool {
        self.inner.get(name).is_ok()
    }
}

impl PyToolRegistry {
    /// The arguments checked against `tool` (see `toolmend_core::schema::check_given`, which
    /// decides the way): the objects to call it with, or every violation.
    pub(crate) fn check(
        &self,
        py: Python<'_>,
        tool: &Arc<Tool>,
        args: &Bound<'_, PyAny>,
    ) -> PyResult<Result<Py<PyAny>, Vec<Violation>>> {
        let given = PyGiven { py, args };
        Ok(check_given(&given, tool, self.inner.limits())?.map(Bound::unbind))
    }
}

/// Arguments as a caller gave them to Python: text (str, bytes) or objects.
struct PyGiven<'a, 'py> {
    py: Python<'py>,
    args: &'a Bound<'py, PyAny>,
}

impl<'py> GivenArguments for PyGiven<'_, 'py> {
    type Object = Bound<'py, PyAny>;
    type Error = PyErr;

    fn text(
        &self,
        max_size: usize,
    ) -> PyResult<Option<Result<Cow<'_, [u8]>, toolmend_core::Error>>> {
        text_bytes(self.args, max_size)
    }

    fn strict_objects(&self, bytes: &[u8], max_depth: usize) -> PyResult<Option<Self::Object>> {
        strict_objects(self.py, self.args, Some(bytes), max_depth)
    }

    fn exact_objects(&self, bytes: &[u8]) -> PyResult<Self::Object> {
        python_objects(self.py, bytes)
            .map_err(|_| PyValueError::new_err("valid JSON that Python cannot hold"))
    }

    fn given(&self) -> Self::Object {
        self.args.clone()
    }

    fn checks_in_place(&self, tool: &Tool) -> bool {
        in_place_validator(tool).is_some()
    }

    fn valid_in_place(&self, tool: &Tool, object: &Self::Object) -> bool {
        in_place_validator(tool).is_some_and(|v| v.is_valid(object.as_borrowed()))
    }

    fn walk_limits(&self, limits: &Limits) -> Result<(usize, bool), Violation> {
        let mut budget = Budget::new(limits);
        check_limits(self.args, &mut budget)?;
        Ok((budget.bytes, budget.big_ints))
    }

    fn json_text(&self) -> PyResult<Option<String>> {
        Ok(json_text(self.args))
    }

    fn value(&self, limits: &Limits) -> Result<Value, Violation> {
        let mut budget = Budget::new(limits);
        walk::<Obj, true>(&Obj(self.args.clone()), 0, &String::new, &mut budget)
    }

    fn detached<T: Send>(&self, size: usize, work: impl FnOnce() -> T + Send) -> T {
        detach_if_large(self.py, size, work)
    }
}

type InPlace = Option<jsonschema::Validator<jsonschema::json::Pyo3>>;

/// The tool's validator over Python objects, compiled on first use with the core's options;
/// None if it cannot be built, and then the serde path does all the work.
fn in_place_validator(tool: &Tool) -> Option<&jsonschema::Validator<jsonschema::json::Pyo3>> {
    tool.companion::<InPlace>(|schema| compile_for(schema).ok())
        .and_then(Option::as_ref)
}

/// JSON text arguments (str, bytes, bytearray) as bytes, borrowed where they can be, or the
/// size error when they are over `max_size` (found without copying); None for anything else
/// (a dict, say).
fn text_bytes<'a>(
    args: &'a Bound<'_, PyAny>,
    max_size: usize,
) -> PyResult<Option<Result<Cow<'a, [u8]>, toolmend_core::Error>>> {
    let is_text = args.is_instance_of::<PyString>()
        || args.is_instance_of::<PyBytes>()
        || args.is_instance_of::<PyByteArray>();
    if is_text {
        bounded_input(args, max_size).map(Some)
    } else {
        Ok(None)
    }
}

/// A schema given as a dict (or JSON text) as a serde value.
fn schema_value(schema: &Bound<'_, PyAny>) -> PyResult<Value> {
    if let Some(Ok(bytes)) = text_bytes(schema, usize::MAX)? {
        return serde_json::from_slice(&bytes).map_err(|e| {
            PyErr::new::<pyo3::exceptions::PyValueError, _>(format!(
                "[TSR-006] schema is not valid JSON: {e}"
            ))
        });
    }
    // A schema is small: the registry's own limits (50 KiB, 20 levels) refuse big ones after.
    let mut budget = Budget::new(&Limits::DEFAULT);
    walk::<Obj, true>(&Obj(schema.clone()), 0, &String::new, &mut budget)
        .map_err(|v| PyTypeError::new_err(format!("schema: {}", v.message)))
}

/// serde value -> Python object (for schemas handed back): its JSON text built by jiter.
fn value_to_py(py: Python<'_>, v: &Value) -> PyResult<Py<PyAny>> {
    let text = serde_json::to_vec(v).map_err(|e| PyValueError::new_err(e.to_string()))?;
    python_objects(py, &text)
        .map(Bound::unbind)
        .map_err(|e| PyValueError::new_err(e.description(&text)))
}

/// A registry error as the Python exception of its code.
fn registry_error(py: Python<'_>, e: &RegistryError, tool_name: Option<&str>) -> PyErr {
    let made = if e.code == ErrorCode::UnknownTool {
        package_class(
            py,
            &UNKNOWN_TOOL_ERROR,
            "toolmend.errors",
            "UnknownToolError",
        )
        .and_then(|cls| {
            cls.call1((
                e.code.as_str(),
                e.message.as_str(),
                tool_name.unwrap_or_default(),
            ))
        })
    } else {
        package_class(py, &SCHEMA_ERROR, "toolmend.errors", "SchemaError")
            .and_then(|cls| cls.call1((e.code.as_str(), e.message.as_str(), e.path.as_deref())))
    };
    match made {
        Ok(instance) => PyErr::from_value(instance),
        Err(err) => err,
    }
}
