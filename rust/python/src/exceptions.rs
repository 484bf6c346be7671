//! Core errors -> the Python exception hierarchy defined in python/toolmend/errors.py.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

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
