//! Boundary conversion: Python text in, core call with the GIL released, Python values out.

use std::borrow::Cow;

use jiter::{PythonParse, StringCacheMode};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyList, PyString, PyTuple};
use toolmend_core::{Error, Limits, Repaired};

/// Inputs at least this long are repaired with the GIL released; below it, releasing and
/// re-taking the GIL costs more than the work.
const RELEASE_GIL_AT: usize = 4096;

/// The input's UTF-8 bytes, borrowed from the Python object when it can be. A `str` holding lone
/// surrogates (which UTF-8 cannot encode) is passed on with them encoded as surrogatepass bytes,
/// so the core reports or replaces them like any other invalid UTF-8.
fn input_bytes<'a>(text: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, [u8]>> {
    if let Ok(s) = text.cast::<PyString>() {
        return match s.to_str() {
            // Borrowed: the str object keeps its UTF-8 buffer alive as long as `text`.
            Ok(utf8) => Ok(Cow::Borrowed(utf8.as_bytes())),
            Err(_) => {
                let encoded = s.call_method1("encode", ("utf-8", "surrogatepass"))?;
                Ok(Cow::Owned(encoded.cast::<PyBytes>()?.as_bytes().to_vec()))
            }
        };
    }
    if let Ok(b) = text.cast::<PyBytes>() {
        return Ok(Cow::Borrowed(b.as_bytes()));
    }
    if let Ok(b) = text.cast::<PyByteArray>() {
        return Ok(Cow::Owned(b.to_vec()));
    }
    Err(PyTypeError::new_err(format!("expected str, bytes or bytearray, got {}", text.get_type().name()?)))
}

fn limits(max_size: usize, max_depth: usize, timeout_ms: u64) -> Limits {
    Limits { max_size, max_depth, timeout_ms }
}

fn run_repair<'b>(py: Python<'_>, bytes: &'b [u8], limits: &Limits) -> Result<Repaired<'b>, Error> {
    if bytes.len() >= RELEASE_GIL_AT {
        py.detach(|| toolmend_core::repair(bytes, limits))
    } else {
        toolmend_core::repair(bytes, limits)
    }
}

/// The error as a tuple `(code, message, position, suggestion)`.
fn error_tuple<'py>(py: Python<'py>, e: &Error) -> PyResult<Bound<'py, PyTuple>> {
    (e.code().as_str(), e.to_string(), e.position, e.suggestion()).into_pyobject(py)
}

/// repair(text, max_size, max_depth, timeout_ms) -> (json | None, [(kind, position)], error | None)
///
/// `json` is the input object itself when it was a valid `str`.
#[pyfunction]
#[pyo3(signature = (text, max_size, max_depth, timeout_ms))]
pub fn repair<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    max_size: usize,
    max_depth: usize,
    timeout_ms: u64,
) -> PyResult<Bound<'py, PyTuple>> {
    let bytes = input_bytes(text)?;
    let none = py.None().into_bound(py);
    match run_repair(py, &bytes, &limits(max_size, max_depth, timeout_ms)) {
        Ok(repaired) => {
            let json = match (&repaired.json, text.is_instance_of::<PyString>()) {
                (Cow::Borrowed(_), true) => text.clone(),
                (json, _) => PyString::new(py, json).into_any(),
            };
            let log = PyList::empty(py);
            for r in &repaired.repairs {
                log.append((r.kind.as_str(), r.position))?;
            }
            (json, log, none).into_pyobject(py)
        }
        Err(e) => (none.clone(), PyList::empty(py), error_tuple(py, &e)?).into_pyobject(py),
    }
}

/// loads(text, max_size, max_depth, timeout_ms) -> (value, None) or (None, error)
///
/// The core decides validity (and repairs); jiter then builds Python objects from the bytes.
#[pyfunction]
#[pyo3(signature = (text, max_size, max_depth, timeout_ms))]
pub fn loads<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    max_size: usize,
    max_depth: usize,
    timeout_ms: u64,
) -> PyResult<Bound<'py, PyTuple>> {
    let bytes = input_bytes(text)?;
    let none = py.None().into_bound(py);
    match run_repair(py, &bytes, &limits(max_size, max_depth, timeout_ms)) {
        Ok(repaired) => {
            let parser = PythonParse { cache_mode: StringCacheMode::Keys, ..Default::default() };
            let value = parser
                .python_parse(py, repaired.json.as_bytes())
                .map_err(|e| jiter::map_json_error(repaired.json.as_bytes(), &e))?;
            (value, none).into_pyobject(py)
        }
        Err(e) => (none.clone(), error_tuple(py, &e)?).into_pyobject(py),
    }
}

/// Empties jiter's bounded cache of Python key strings.
#[pyfunction]
pub fn cache_clear() {
    jiter::cache_clear();
}
