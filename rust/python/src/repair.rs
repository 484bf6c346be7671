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
use toolmend_core::loads::{load, Loaded, Mending, Objects};
use toolmend_core::{Error, ErrorCode, Limits, RepairKind, Repaired};

use crate::convert::{
    all_untracked, bounded_input, detach_if_large, orjson_objects, python_objects, strict_objects,
    untracked,
};
use crate::error::parse_error;

pub(crate) use toolmend_core::loads::LOADS_MAX_DEPTH;

fn run_repair<'b>(py: Python<'_>, bytes: &'b [u8], limits: &Limits) -> Result<Repaired<'b>, Error> {
    detach_if_large(py, bytes.len(), || toolmend_core::repair(bytes, limits))
}

/// One fault that was mended: its kind (e.g. "trailing_comma") and the byte offset where it was found;
/// past the log's first 1,000, one record per kind stands for the rest (`count` says how many).
#[pyclass(module = "toolmend", frozen, eq, hash)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repair {
    kind: RepairKind,
    #[pyo3(get)]
    position: usize,
    #[pyo3(get)]
    count: u32,
}

impl Repair {
    pub(crate) fn to_core(self) -> toolmend_core::Repair {
        toolmend_core::Repair {
            kind: self.kind,
            position: self.position,
            count: self.count,
        }
    }
}

impl From<&toolmend_core::Repair> for Repair {
    fn from(r: &toolmend_core::Repair) -> Self {
        Repair {
            kind: r.kind,
            position: r.position,
            count: r.count,
        }
    }
}

#[pymethods]
impl Repair {
    #[new]
    #[pyo3(signature = (kind, position, count=1))]
    fn new(kind: &str, position: usize, count: u32) -> PyResult<Self> {
        let kind = RepairKind::from_name(kind)
            .ok_or_else(|| PyValueError::new_err(format!("unknown repair kind {kind:?}")))?;
        if count == 0 {
            return Err(PyValueError::new_err(
                "a repair record stands for at least one repair",
            ));
        }
        Ok(Repair {
            kind,
            position,
            count,
        })
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

    /// The repairs applied, in input order (a new list on each access): the first 1,000 one
    /// record each, then one record per kind counting the rest (see Repair.count).
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
        LoadError::Build(e) => parse_error(
            py,
            ErrorCode::Unparseable.as_str(),
            &format!("{} at byte {}", e.error_type, e.index),
            e.index,
            "send values Python can hold",
        ),
    }
}

/// Why JSON text did not become Python objects (jiter says why it could not build strict JSON).
pub(crate) type LoadError = toolmend_core::loads::LoadError<jiter::JsonError>;

/// How the binding builds objects for the core's `loads` stages: orjson first (from the caller's
/// own object at stage 1, so nothing is copied), jiter for what orjson refuses (it holds any
/// number), the GIL let go of while big texts are mended.
pub(crate) struct PyObjects<'a, 'py> {
    pub(crate) py: Python<'py>,
    /// The text as the caller gave it (orjson reads a str or bytes without a copy).
    pub(crate) text: &'a Bound<'py, PyAny>,
}

impl<'py> Objects for PyObjects<'_, 'py> {
    type Object = Bound<'py, PyAny>;
    type Error = PyErr;
    type BuildError = jiter::JsonError;

    fn strict(&self, bytes: &[u8], max_depth: usize) -> PyResult<Option<Bound<'py, PyAny>>> {
        strict_objects(self.py, self.text, Some(bytes), max_depth)
    }

    fn fast(&self, json: &[u8], walk: Option<usize>) -> Option<Bound<'py, PyAny>> {
        orjson_objects(self.py, json, walk)
    }

    fn exact(&self, json: &[u8]) -> Result<Bound<'py, PyAny>, jiter::JsonError> {
        python_objects(self.py, json)
    }

    fn out_of_range(&self, object: &Bound<'py, PyAny>, room: usize) -> bool {
        holds_out_of_range(object, room)
    }

    fn detached<T: Send>(&self, size: usize, work: impl FnOnce() -> T + Send) -> T {
        detach_if_large(self.py, size, work)
    }
}

/// JSON text (already read as `bytes`) as Python objects, with the repairs made: the core's
/// `loads` stages over `PyObjects`.
pub(crate) fn load_json<'a, 'py>(
    py: Python<'py>,
    text: &'a Bound<'py, PyAny>,
    bytes: &[u8],
    limits: &Limits,
    mending: Mending,
) -> PyResult<Loaded<PyObjects<'a, 'py>>> {
    load(&PyObjects { py, text }, bytes, limits, mending)
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
