//! What every frozen result class shares: it pickles as its constructor's arguments (its
//! state), and those compared by value say whether two results are equal.

use pyo3::prelude::*;
use pyo3::pyclass::boolean_struct::True;
use pyo3::types::PyTuple;
use pyo3::PyClass;

/// A result class whose constructor's arguments can be read back.
pub(crate) trait Record: PyClass<Frozen = True> + Sync {
    /// The constructor's arguments that make this value again.
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>>;
}

/// What `__reduce__` returns: the class and its state.
pub(crate) type Reduced<'py> = (Bound<'py, PyAny>, Bound<'py, PyTuple>);

/// `__reduce__` of a record: pickled as its constructor's arguments, it comes back equal.
pub(crate) fn reduce<'py, T: Record>(slf: &Bound<'py, T>) -> PyResult<Reduced<'py>> {
    Ok((
        slf.as_any().get_type().into_any(),
        slf.get().state(slf.py())?,
    ))
}

/// `__eq__` of a record: the same class and equal constructor arguments.
pub(crate) fn same_state<T: Record>(
    this: &T,
    py: Python<'_>,
    other: &Bound<'_, PyAny>,
) -> PyResult<bool> {
    match other.cast::<T>() {
        Ok(other) => this.state(py)?.eq(other.get().state(py)?),
        Err(_) => Ok(false),
    }
}
