//! The core pipeline's host over Python objects: argument text parsed once (orjson for valid
//! text, the repair pass and jiter for the rest), dicts walked for the limits without copying,
//! and validation by the registry in place.

use std::borrow::Cow;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use toolmend_core::pipeline::{Failure, Host};
use toolmend_core::schema::{Registry, Tool, Violation};
use toolmend_core::{ErrorCode, Limits, Repair};

use crate::convert::{bounded_input, load_json, sorted_json, LoadError};
use crate::registry::PyToolRegistry;
use crate::wire::Obj;
use toolmend_core::walk::{walk, Budget};

pub(crate) struct PyHost<'a, 'py> {
    py: Python<'py>,
    registry: Option<&'a PyToolRegistry>,
}

impl<'a, 'py> PyHost<'a, 'py> {
    pub(crate) fn new(py: Python<'py>, registry: Option<&'a PyToolRegistry>) -> Self {
        PyHost { py, registry }
    }
}

impl<'py> Host for PyHost<'_, 'py> {
    type Value = Obj<'py>;

    fn registry(&self) -> Option<&Registry> {
        self.registry.map(|r| &*r.inner)
    }

    fn string(&self, text: &str) -> Obj<'py> {
        Obj(PyString::new(self.py, text).into_any())
    }

    fn empty_object(&self) -> Obj<'py> {
        Obj(PyDict::new(self.py).into_any())
    }

    fn walk_limits(&self, object: &Obj<'py>, limits: &Limits) -> Result<(), Failure> {
        let mut budget = Budget::new(limits);
        walk::<Obj, false>(object, 0, &String::new, &mut budget)
            .map(drop)
            .map_err(|v| Failure::new(v.code, v.message, &v.suggestion))
    }

    fn text_bytes<'v>(
        &self,
        text: &'v Obj<'py>,
        max_size: usize,
    ) -> Result<Cow<'v, [u8]>, Failure> {
        match bounded_input(&text.0, max_size) {
            Ok(Ok(bytes)) => Ok(bytes),
            Ok(Err(too_large)) => Err(Failure::unparsed(&too_large)),
            Err(e) => Err(Failure::new(ErrorCode::Unparseable, e.to_string(), "")),
        }
    }

    fn parse_arguments(
        &self,
        text: &Obj<'py>,
        bytes: &[u8],
        limits: &Limits,
        repair: bool,
    ) -> Result<(Obj<'py>, Vec<Repair>), Failure> {
        match load_json(self.py, &text.0, bytes, limits, repair) {
            Ok(Ok((value, repairs))) => Ok((Obj(value), repairs)),
            Ok(Err(LoadError::Core(e))) => Err(Failure::unparsed(&e)),
            Ok(Err(LoadError::Python(e))) => Err(Failure {
                position: Some(e.index),
                ..Failure::new(
                    ErrorCode::TooDeepOrTimeout,
                    format!(
                        "Arguments cannot be built as Python objects: {}",
                        e.error_type
                    ),
                    "flatten the arguments",
                )
            }),
            Err(e) => Err(Failure::new(ErrorCode::Unparseable, e.to_string(), "")),
        }
    }

    fn validate(
        &self,
        tool: &Arc<Tool>,
        arguments: &Obj<'py>,
    ) -> Result<Result<(), Vec<Violation>>, String> {
        let Some(registry) = self.registry else {
            return Ok(Ok(()));
        };
        match registry.check(self.py, tool, &arguments.0) {
            Ok(checked) => Ok(checked.map(drop)),
            Err(e) => Err(e.to_string()),
        }
    }

    fn same_value(&self, a: &Obj<'py>, b: &Obj<'py>) -> bool {
        a.0.eq(&b.0).unwrap_or(false)
    }

    fn equality_key(&self, value: &Obj<'py>) -> Option<String> {
        sorted_json(self.py, &value.0).ok().flatten()
    }
}
