//! Core errors -> the Python exception hierarchy defined in python/toolmend/errors.py, and the
//! error catalogue as Python data.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyTuple, PyType};
use toolmend_core::ErrorCode;

use crate::convert::package_class;

static PARSE_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// A toolmend.ParseError built with keyword-free positional fields (code, message, position, suggestion).
pub(crate) fn parse_error(
    py: Python<'_>,
    code: &str,
    message: &str,
    position: usize,
    suggestion: &str,
) -> PyErr {
    match package_class(py, &PARSE_ERROR, "toolmend.errors", "ParseError")
        .and_then(|cls| cls.call1((code, message, position, suggestion)))
    {
        Ok(instance) => PyErr::from_value(instance),
        Err(e) => e,
    }
}

/// The error catalogue as `((code, name, title, cause, fix), ...)`, in catalogue order; the Python
/// package and docs/errors.md are made from it.
pub(crate) fn error_codes(py: Python<'_>) -> PyResult<Bound<'_, PyTuple>> {
    PyTuple::new(
        py,
        ErrorCode::ALL
            .iter()
            .map(|c| (c.as_str(), c.name(), c.title(), c.cause(), c.fix())),
    )
}

/// The repair kinds, in order: (name, description) for each.
pub(crate) fn repair_kinds(py: Python<'_>) -> PyResult<Bound<'_, PyTuple>> {
    PyTuple::new(
        py,
        toolmend_core::RepairKind::ALL
            .iter()
            .map(|k| (k.as_str(), k.description())),
    )
}
