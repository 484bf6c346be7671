//! partial()'s live view over Python objects: the core's view (toolmend_core::partial::View)
//! decides where each value goes; here values become dicts, lists, str, int and float.

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyInt, PyList, PyString};
use toolmend_core::partial::Builder;

/// The live views of a stream's calls, as Python objects.
pub(crate) type PyViews = toolmend_core::partial::Views<Py<PyAny>, Py<PyString>>;

/// Python objects for the core's live view.
pub(crate) struct PyBuilder<'py>(pub(crate) Python<'py>);

impl Builder for PyBuilder<'_> {
    type Value = Py<PyAny>;
    type Key = Py<PyString>;
    type Error = PyErr;

    fn object(&mut self) -> PyResult<Py<PyAny>> {
        Ok(PyDict::new(self.0).into_any().unbind())
    }

    fn array(&mut self) -> PyResult<Py<PyAny>> {
        Ok(PyList::empty(self.0).into_any().unbind())
    }

    fn key(&mut self, text: &str) -> Py<PyString> {
        // Keys repeat (records): jiter's cache hands out one str per key text.
        jiter::cached_py_string(self.0, text).unbind()
    }

    fn key_text<'k>(&self, key: &'k Py<PyString>) -> Cow<'k, str> {
        let mut size: pyo3::ffi::Py_ssize_t = 0;
        // SAFETY: the GIL is held, and `key` keeps the str alive for 'k: its UTF-8 form, made
        // once and cached on the str (which never changes), lives as long. Null for a str
        // holding lone surrogates, which is read the slow way.
        unsafe {
            let data = pyo3::ffi::PyUnicode_AsUTF8AndSize(key.as_ptr(), &mut size);
            if data.is_null() {
                pyo3::ffi::PyErr_Clear();
                return Cow::Owned(key.bind(self.0).to_string_lossy().into_owned());
            }
            let bytes = std::slice::from_raw_parts(data.cast::<u8>(), size as usize);
            Cow::Borrowed(std::str::from_utf8_unchecked(bytes))
        }
    }

    fn string(&mut self, text: &str) -> PyResult<Py<PyAny>> {
        Ok(PyString::new(self.0, text).into_any().unbind())
    }

    /// Python's int or float, as json.loads reads them (ints of any size). A number past the
    /// range of a double is an error: it stops the view, and the call's text is read again,
    /// where it is refused.
    fn number(&mut self, text: &str) -> PyResult<Py<PyAny>> {
        let py = self.0;
        let integer = !text.contains(['.', 'e', 'E']);
        if integer {
            if let Ok(i) = text.parse::<i64>() {
                return Ok(i.into_pyobject(py)?.into_any().unbind());
            }
        }
        let f = text.parse::<f64>().unwrap_or(f64::NAN);
        if f.is_infinite() {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "number out of range",
            ));
        }
        if integer {
            return Ok(py.get_type::<PyInt>().call1((text,))?.unbind());
        }
        Ok(f.into_pyobject(py)?.into_any().unbind())
    }

    fn boolean(&mut self, value: bool) -> Py<PyAny> {
        PyBool::new(self.0, value).to_owned().into_any().unbind()
    }

    fn null(&mut self) -> Py<PyAny> {
        self.0.None()
    }

    fn share(&self, value: &Py<PyAny>) -> Py<PyAny> {
        value.clone_ref(self.0)
    }

    fn is_object(&self, value: &Py<PyAny>) -> bool {
        value.bind(self.0).is_instance_of::<PyDict>()
    }

    fn set(&mut self, object: &Py<PyAny>, key: &Py<PyString>, value: Py<PyAny>) -> PyResult<()> {
        object.bind(self.0).cast::<PyDict>()?.set_item(key, value)
    }

    fn push(&mut self, array: &Py<PyAny>, value: Py<PyAny>) -> PyResult<()> {
        array.bind(self.0).cast::<PyList>()?.append(value)
    }

    fn replace(&mut self, array: &Py<PyAny>, index: usize, value: Py<PyAny>) -> PyResult<()> {
        array.bind(self.0).cast::<PyList>()?.set_item(index, value)
    }
}
