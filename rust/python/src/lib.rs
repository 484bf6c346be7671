//! toolmend._core: conversion only. Every decision about JSON is made in toolmend-core; this
//! crate packs keyword options into the core's structs, releases the GIL around core work and
//! converts results into Python values.

mod convert;

use pyo3::prelude::*;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(convert::repair, m)?)?;
    m.add_function(wrap_pyfunction!(convert::loads, m)?)?;
    m.add_function(wrap_pyfunction!(convert::cache_clear, m)?)?;
    Ok(())
}
