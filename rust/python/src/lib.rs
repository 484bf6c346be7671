//! toolmend._core: conversion only. Every decision about JSON is made in toolmend-core; this
//! crate reads keyword options, releases the GIL around core work and converts results into
//! Python values (result classes, exceptions).

/// A result class whose constructor takes its fields in order (defaults as given) and keeps them
/// as they are: the struct as written, and its `__new__`.
macro_rules! record {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $($(#[$field_meta:meta])* $field:ident: $ty:ty $(= $default:expr)?,)*
        }
    ) => {
        $(#[$meta])*
        pub struct $name {
            $($(#[$field_meta])* $field: $ty,)*
        }

        #[pymethods]
        impl $name {
            #[new]
            #[pyo3(signature = ($($field $(= $default)?),*))]
            fn py_new($($field: $ty),*) -> Self {
                $name { $($field),* }
            }
        }
    };
}

mod batch;
mod convert;
mod error;
mod partial;
mod pipeline;
mod repair;
mod schema;
mod stream;
mod walk;
mod wire;

use pyo3::prelude::*;
use toolmend_core::Limits;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("LOADS_MAX_DEPTH", repair::LOADS_MAX_DEPTH)?;
    m.add("DEFAULT_LIMITS", convert::default_limits(m.py())?)?;
    m.add("MAX_DEPTH_CEILING", Limits::MAX_DEPTH_CEILING)?;
    m.add(
        "DEFAULT_MAX_BUFFER",
        toolmend_core::extract::DEFAULT_MAX_BUFFER,
    )?;
    m.add("ERROR_CODES", error::error_codes(m.py())?)?;
    m.add("REPAIR_KINDS", error::repair_kinds(m.py())?)?;
    m.add("TEXT_FORMATS", convert::text_formats(m.py())?)?;
    m.add_class::<repair::Repair>()?;
    m.add_class::<repair::RepairError>()?;
    m.add_class::<repair::RepairResult>()?;
    m.add_function(wrap_pyfunction!(repair::repair, m)?)?;
    m.add_function(wrap_pyfunction!(repair::loads, m)?)?;
    m.add_function(wrap_pyfunction!(repair::cache_clear, m)?)?;
    m.add_function(wrap_pyfunction!(batch::repair_many, m)?)?;
    m.add_function(wrap_pyfunction!(batch::loads_many, m)?)?;
    m.add_function(wrap_pyfunction!(convert::arguments_text, m)?)?;
    m.add_class::<schema::PyToolRegistry>()?;
    m.add_class::<schema::ToolInfo>()?;
    m.add_class::<schema::FieldError>()?;
    m.add_class::<schema::ValidationResult>()?;
    m.add_class::<pipeline::ToolCall>()?;
    m.add_class::<pipeline::ToolCallError>()?;
    m.add_class::<pipeline::ParseResult>()?;
    m.add_class::<stream::Reasoning>()?;
    m.add_class::<stream::TextWithoutCalls>()?;
    m.add_function(wrap_pyfunction!(pipeline::parse_response, m)?)?;
    m.add_function(wrap_pyfunction!(pipeline::check_call, m)?)?;
    m.add_class::<stream::ToolCallDelta>()?;
    m.add_class::<stream::StreamEvent>()?;
    m.add_class::<stream::ToolCallAccumulator>()?;
    m.add_class::<stream::TextCallParser>()?;
    Ok(())
}
