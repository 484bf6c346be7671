//! `repair`, `loads` and their result classes: Python text in, the core's repair pass with the
//! GIL released for big inputs, Python values out.
//!
//! The result classes are frozen pyclasses so that a result costs one small allocation, and the
//! repair log stays a Rust vector until someone reads `.repairs` (a 1 MB input can carry tens of
//! thousands of repairs; building them eagerly would cost more than repairing). Their reprs and
//! pickling are Python's (toolmend/_records.py).

use std::borrow::Cow;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyInt, PyList, PyString};
use toolmend_core::{Error, ErrorCode, Limits, Mended, RepairKind, Repaired};

use crate::convert::{
    all_untracked, bounded_input, detach_if_large, orjson_objects, python_objects, strict_objects,
    untracked,
};
use crate::error::parse_error;

/// The deepest nesting loads turns into Python objects: jiter's fixed recursion limit.
pub(crate) const LOADS_MAX_DEPTH: usize = 200;

fn run_repair<'b>(py: Python<'_>, bytes: &'b [u8], limits: &Limits) -> Result<Repaired<'b>, Error> {
    detach_if_large(py, bytes.len(), || toolmend_core::repair(bytes, limits))
}

/// One fault that was mended: its kind (e.g. "trailing_comma") and the byte offset where it was found.
#[pyclass(module = "toolmend", frozen, eq, hash)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repair {
    kind: RepairKind,
    #[pyo3(get)]
    position: usize,
}

impl Repair {
    pub(crate) fn to_core(self) -> toolmend_core::Repair {
        toolmend_core::Repair {
            kind: self.kind,
            position: self.position,
        }
    }
}

impl From<&toolmend_core::Repair> for Repair {
    fn from(r: &toolmend_core::Repair) -> Self {
        Repair {
            kind: r.kind,
            position: r.position,
        }
    }
}

#[pymethods]
impl Repair {
    #[new]
    fn new(kind: &str, position: usize) -> PyResult<Self> {
        let kind = RepairKind::from_name(kind)
            .ok_or_else(|| PyValueError::new_err(format!("unknown repair kind {kind:?}")))?;
        Ok(Repair { kind, position })
    }

    #[getter]
    fn kind(&self) -> &'static str {
        self.kind.as_str()
    }
}

/// Why a text could not be repaired: a TLP code, a message, a byte offset and a hint.
#[pyclass(module = "toolmend", frozen, eq, get_all)]
#[derive(Clone, PartialEq, Eq)]
pub struct RepairError {
    code: String,
    message: String,
    position: usize,
    suggestion: String,
}

#[pymethods]
impl RepairError {
    #[new]
    fn new(code: String, message: String, position: usize, suggestion: String) -> Self {
        RepairError {
            code,
            message,
            position,
            suggestion,
        }
    }
}

impl From<&Error> for RepairError {
    fn from(e: &Error) -> Self {
        RepairError {
            code: e.code().as_str().to_owned(),
            message: e.to_string(),
            position: e.position,
            suggestion: e.suggestion().to_owned(),
        }
    }
}

/// The outcome of repair(): the JSON text when ok, the repair log, and the input as given.
#[pyclass(module = "toolmend", frozen)]
pub struct RepairResult {
    /// The repaired text; the input object itself when it was a valid str.
    #[pyo3(get)]
    json: Option<Py<PyAny>>,
    log: Vec<toolmend_core::Repair>,
    /// The input exactly as the caller passed it.
    #[pyo3(get)]
    original: Py<PyAny>,
    /// Why the text could not be repaired, or None.
    #[pyo3(get)]
    error: Option<Py<RepairError>>,
}

#[pymethods]
impl RepairResult {
    /// True when the input needed mending.
    #[getter]
    fn repaired(&self) -> bool {
        !self.log.is_empty()
    }

    /// The repairs applied, in input order (a new list on each access).
    #[getter]
    fn repairs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        repair_list(py, &self.log)
    }
}

/// A repair log as the list of Repair objects `.repairs` hands out (a new list on each access).
pub(crate) fn repair_list<'py>(
    py: Python<'py>,
    log: &[toolmend_core::Repair],
) -> PyResult<Bound<'py, PyList>> {
    PyList::new(py, all_untracked(py, log.iter().map(Repair::from))?)
}

/// Repairs text into one strict JSON value in linear time.
///
/// Valid JSON comes back unchanged (the same str object) with an empty log. Positions are byte
/// offsets into the UTF-8 encoding of the input. Never raises for bad input: see `error`.
#[pyfunction]
#[pyo3(signature = (text, *, max_size = Limits::DEFAULT.max_size, max_depth = Limits::DEFAULT.max_depth, timeout_ms = Limits::DEFAULT.timeout_ms))]
pub fn repair(
    py: Python<'_>,
    text: &Bound<'_, PyAny>,
    max_size: usize,
    max_depth: usize,
    timeout_ms: u64,
) -> PyResult<Py<RepairResult>> {
    let input = bounded_input(text, max_size)?;
    // No depth ceiling: repair keeps its own stack and returns text (see `limits`).
    let limits = Limits {
        max_size,
        max_depth,
        timeout_ms,
    };
    let outcome = match &input {
        Ok(bytes) => run_repair(py, bytes, &limits),
        Err(too_large) => Err(too_large.clone()),
    };
    repair_result(py, text, outcome)
}

/// A repair's outcome as the RepairResult `repair()` returns: valid str input comes back as the
/// same object.
pub(crate) fn repair_result(
    py: Python<'_>,
    text: &Bound<'_, PyAny>,
    outcome: Result<Repaired<'_>, Error>,
) -> PyResult<Py<RepairResult>> {
    let original = text.clone().unbind();
    let result = match outcome {
        Ok(repaired) => {
            let json = match &repaired.json {
                Cow::Borrowed(_) if text.is_instance_of::<PyString>() => original.clone_ref(py),
                json => PyString::new(py, json).into_any().unbind(),
            };
            RepairResult {
                json: Some(json),
                log: repaired.repairs,
                original,
                error: None,
            }
        }
        Err(e) => RepairResult {
            json: None,
            log: Vec::new(),
            original,
            error: Some(untracked(py, RepairError::from(&e))?),
        },
    };
    untracked(py, result)
}

/// Repairs text when needed and returns Python objects; raises ParseError when it cannot.
///
/// Valid JSON within the limits is parsed by orjson (the fastest well-kept parser, called from
/// here so the limit checks add no Python frames); anything else is repaired by the core and its
/// output built into Python objects by jiter.
#[pyfunction]
#[pyo3(signature = (text, *, max_size = Limits::DEFAULT.max_size, max_depth = Limits::DEFAULT.max_depth, timeout_ms = Limits::DEFAULT.timeout_ms))]
pub fn loads<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    max_size: usize,
    max_depth: usize,
    timeout_ms: u64,
) -> PyResult<Bound<'py, PyAny>> {
    // No depth ceiling: Python objects are built to LOADS_MAX_DEPTH levels at most.
    let limits = Limits {
        max_size,
        max_depth,
        timeout_ms,
    };
    let loaded = match bounded_input(text, max_size)? {
        Ok(bytes) => load_json(py, text, &bytes, &limits, Mending::Unlogged)?,
        Err(too_large) => Err(LoadError::Core(too_large)),
    };
    loaded
        .map(|(value, _)| value)
        .map_err(|e| load_error(py, e))
}

/// Why `loads` failed, as the ParseError it raises.
pub(crate) fn load_error(py: Python<'_>, error: LoadError) -> PyErr {
    match error {
        LoadError::Core(e) => parse_error(
            py,
            e.code().as_str(),
            &e.to_string(),
            e.position,
            e.suggestion(),
        ),
        // Strict JSON that Python cannot hold.
        LoadError::Python(e) => parse_error(
            py,
            ErrorCode::Unparseable.as_str(),
            &format!("{} at byte {}", e.error_type, e.index),
            e.index,
            "send values Python can hold",
        ),
    }
}

/// What `load_json` does with text that is not valid JSON within the limits.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mending {
    /// Refuse it (repair turned off): the strict check says why.
    Off,
    /// Mend it, keeping no log (`loads` hands back objects alone).
    Unlogged,
    /// Mend it and log the repairs (a tool call carries them).
    Logged,
}

/// Python objects made from JSON text, and the repairs it needed.
pub(crate) type Loaded<'py> = (Bound<'py, PyAny>, Vec<toolmend_core::Repair>);

/// Why JSON text did not become Python objects.
pub(crate) enum LoadError {
    /// Not JSON even after repair (or, with repair off, not strict JSON), or over a limit.
    Core(Error),
    /// Strict JSON that jiter could not build.
    Python(jiter::JsonError),
}

/// JSON text (already read as `bytes`) as Python objects, with the repairs made: orjson for valid
/// text within the limits; otherwise the repair pass (or, with mending off, the strict check),
/// the GIL released for big inputs, and jiter. Nesting is capped at what jiter can build: past
/// it, the core reports TLP-008 like any depth limit (repair() still handles deeper text).
pub(crate) fn load_json<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    bytes: &[u8],
    limits: &Limits,
    mending: Mending,
) -> PyResult<Result<Loaded<'py>, LoadError>> {
    let limits = loads_limits(limits);
    if let Some(value) = fast_load(py, text, bytes, &limits)? {
        return Ok(Ok((value, Vec::new())));
    }
    // orjson refused the text (or it is over a limit, which the core reports): mend it directly.
    let outcome = detach_if_large(py, bytes.len(), || mend_for_loads(bytes, &limits, mending));
    Ok(build_loaded(py, bytes, outcome, &limits))
}

/// The limits `loads` works under: nesting capped at what jiter can build.
pub(crate) fn loads_limits(limits: &Limits) -> Limits {
    Limits {
        max_depth: limits.max_depth.min(LOADS_MAX_DEPTH),
        ..*limits
    }
}

/// The first stage of `loads`: orjson's objects for valid text within the limits, else None.
pub(crate) fn fast_load<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    bytes: &[u8],
    limits: &Limits,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    if bytes.len() > limits.max_size || toolmend_core::repair::plainly_broken(bytes) {
        return Ok(None);
    }
    strict_objects(py, text, Some(bytes), limits.max_depth)
}

/// The second stage, without the GIL: the text mended (or, with mending off, checked) into
/// strict JSON, with the repairs made when they are logged.
pub(crate) fn mend_for_loads(
    bytes: &[u8],
    limits: &Limits,
    mending: Mending,
) -> Result<Mended, Error> {
    match mending {
        Mending::Logged => toolmend_core::mend(bytes, limits),
        Mending::Unlogged => toolmend_core::mend_unlogged(bytes, limits),
        Mending::Off => toolmend_core::validate(bytes, limits).map(|()| Mended {
            json: String::from_utf8_lossy(bytes).into_owned(),
            repairs: Vec::new(),
            plain_numbers: false,
        }),
    }
}

/// The last stage: the mended text as Python objects, numbers past a double refused.
pub(crate) fn build_loaded<'py>(
    py: Python<'py>,
    bytes: &[u8],
    outcome: Result<Mended, Error>,
    limits: &Limits,
) -> Result<Loaded<'py>, LoadError> {
    let Mended {
        json,
        repairs: log,
        plain_numbers,
    } = outcome.map_err(LoadError::Core)?;
    // orjson builds objects fastest, and those it hands back are in range (finite doubles,
    // 64-bit integers: see `objects_stand`); what it refuses (an integer past 64 bits, say),
    // jiter builds, and those are checked. The repair pass held its output to the depth limit,
    // so when every number it wrote is plain, orjson's objects need no walk.
    let check = (!plain_numbers).then_some(limits.max_depth);
    if let Some(value) = orjson_objects(py, json.as_bytes(), check) {
        return Ok((value, log));
    }
    let value = python_objects(py, json.as_bytes()).map_err(LoadError::Python)?;
    if holds_out_of_range(&value, limits.max_depth) {
        // Positions are the input's; a number the repair pass moved is found in its output.
        let position = toolmend_core::limits::first_number_out_of_range(bytes)
            .or_else(|| toolmend_core::limits::first_number_out_of_range(json.as_bytes()))
            .unwrap_or(0);
        return Err(LoadError::Core(Error::number_out_of_range(position)));
    }
    Ok((value, log))
}

/// Whether objects jiter built hold a number past the range of a double: a float it read as
/// infinity (`1e400`), or an integer no double can come near. The walk is bounded like
/// `objects_stand`.
fn holds_out_of_range(value: &Bound<'_, PyAny>, room: usize) -> bool {
    if let Ok(f) = value.cast_exact::<PyFloat>() {
        !f.value().is_finite()
    } else if let Ok(i) = value.cast_exact::<PyInt>() {
        i.extract::<i64>().is_err() && i.extract::<f64>().is_err()
    } else if let Ok(d) = value.cast_exact::<PyDict>() {
        room > 0 && d.iter().any(|(_, v)| holds_out_of_range(&v, room - 1))
    } else if let Ok(l) = value.cast_exact::<PyList>() {
        room > 0 && l.iter().any(|v| holds_out_of_range(&v, room - 1))
    } else {
        false
    }
}

/// Empties jiter's bounded cache of Python key strings.
#[pyfunction]
pub fn cache_clear() {
    jiter::cache_clear();
}
