//! Python objects as the core's JSON-like values, so the core's wire shapes and pipeline read
//! them in place: dicts from orjson (or the caller) are never converted, member names are
//! interned once, and JSON text is parsed by orjson (valid) or built by jiter (repaired).

use std::borrow::Cow;

use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyMapping, PyString};
use toolmend_core::wire::{
    read_unparsed_reply, reply_of, reply_of_text, JsonLike, Key, Parser, Reply,
};
use toolmend_core::Limits;

use crate::convert::{input_bytes, orjson_dumps, python_objects, strict_objects};
use crate::repair::LOADS_MAX_DEPTH;

static KEYS: PyOnceLock<Vec<Py<PyString>>> = PyOnceLock::new();

/// The member name as an interned Python string, made once per interpreter: a lookup hashes no
/// new string.
fn key(py: Python<'_>, key: Key) -> &Bound<'_, PyString> {
    let keys = KEYS.get_or_init(py, || {
        Key::ALL
            .iter()
            .map(|k| PyString::intern(py, k.as_str()).unbind())
            .collect()
    });
    keys[key as usize].bind(py)
}

/// A Python object as the core reads JSON-like values (a newtype: the trait and `Bound` are
/// both the binding's dependencies).
#[derive(Clone, Debug)]
#[repr(transparent)]
pub(crate) struct Obj<'py>(pub(crate) Bound<'py, PyAny>);

impl<'py> JsonLike for Obj<'py> {
    type Error = PyErr;

    fn get(&self, k: Key) -> Option<Self> {
        let py = self.0.py();
        let dict = self.0.as_ptr();
        // SAFETY: the GIL is held; `dict` is a dict (checked) that `self` keeps alive, and the
        // borrowed item is made an owned reference before any Python code can run.
        unsafe {
            if ffi::PyDict_Check(dict) == 0 {
                return None;
            }
            let item = ffi::PyDict_GetItemWithError(dict, key(py, k).as_ptr());
            if item.is_null() {
                // Missing, or a key's __eq__ raised: either way the member is not there.
                ffi::PyErr_Clear();
                return None;
            }
            if item == ffi::Py_None() {
                return None;
            }
            Some(Obj(plain(Bound::from_borrowed_ptr(py, item))))
        }
    }

    fn has(&self, k: Key) -> bool {
        self.0
            .cast::<PyDict>()
            .is_ok_and(|d| d.contains(key(self.0.py(), k)).unwrap_or(false))
    }

    fn members(&self) -> Option<usize> {
        self.0.cast::<PyDict>().ok().map(|d| d.len())
    }

    fn is_null(&self) -> bool {
        self.0.is_none()
    }

    fn is_object(&self) -> bool {
        self.0.is_instance_of::<PyDict>()
    }

    fn is_text(&self) -> bool {
        self.0.is_instance_of::<PyString>() || self.0.is_instance_of::<PyBytes>()
    }

    fn as_str(&self) -> PyResult<Option<Cow<'_, str>>> {
        match self.0.cast::<PyString>() {
            // A lone surrogate is no UTF-8: read with U+FFFD in its place, as its escape is mended.
            Ok(s) => Ok(Some(match s.to_str() {
                Ok(text) => Cow::Borrowed(text),
                Err(_) => Cow::Owned(toolmend_core::repair::utf8_lossy(
                    &crate::convert::input_bytes(s.as_any())?,
                )),
            })),
            Err(_) => Ok(None),
        }
    }

    fn items(&self) -> Option<Vec<Self>> {
        Some(
            self.0
                .cast::<PyList>()
                .ok()?
                .iter()
                .map(|v| Obj(plain(v)))
                .collect(),
        )
    }

    fn as_index(&self) -> Option<usize> {
        if self.0.is_instance_of::<PyInt>() {
            self.0.extract::<usize>().ok()
        } else {
            None
        }
    }

    fn is_truthy(&self) -> bool {
        self.0.is_truthy().unwrap_or(false)
    }

    fn type_name(&self) -> String {
        if self.0.is_none() {
            return "null".into();
        }
        self.0
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_else(|_| "object".into())
    }

    fn display(&self) -> Option<String> {
        // A str (as most are) is taken as it is; anything else as str() shows it.
        let shown = match self.0.cast_exact::<PyString>() {
            Ok(s) => s.clone(),
            Err(_) => self.0.str().ok()?,
        };
        Some(match shown.to_str() {
            Ok(text) => text.to_owned(),
            Err(_) => toolmend_core::repair::utf8_lossy(&crate::convert::input_bytes(&shown).ok()?),
        })
    }

    fn to_json(&self) -> PyResult<String> {
        orjson_dumps(self.0.py(), &self.0)
    }
}

/// orjson for JSON text (strict; numbers it cannot hold exactly take the repair pass), jiter for
/// what the repair pass wrote (it holds any number).
#[derive(Clone, Copy)]
pub(crate) struct PyParser<'py>(pub(crate) Python<'py>);

impl<'py> Parser for PyParser<'py> {
    type Value = Obj<'py>;

    fn parse(&self, json: &[u8]) -> PyResult<Option<Obj<'py>>> {
        let text = PyBytes::new(self.0, json);
        if let Some(value) = strict_objects(self.0, text.as_any(), Some(json), LOADS_MAX_DEPTH)? {
            return Ok(Some(Obj(value)));
        }
        // orjson refused the text, or its objects do not stand for it (an integer past 64 bits
        // made a float, or nesting past the limit): jiter builds it exactly, or refuses it too.
        Ok(python_objects(self.0, json).ok().map(Obj))
    }

    fn build(&self, json: &[u8]) -> Option<Obj<'py>> {
        python_objects(self.0, json).ok().map(Obj)
    }
}

/// A value as the wire shapes read it: JSON-like values as they are; an SDK's object (a
/// pydantic model: openai, ollama, anthropic, LangChain) as the dict of its fields, which it
/// holds already (no copy, nothing dumped), joined by its extra fields where it has some
/// (LiteLLM files most of its fields there); any other mapping as a dict of its items.
pub(crate) fn plain(value: Bound<'_, PyAny>) -> Bound<'_, PyAny> {
    // What wires carry, tested by exact type first (a pointer comparison each).
    if value.is_none()
        || value.is_exact_instance_of::<PyDict>()
        || value.is_exact_instance_of::<PyString>()
        || value.is_exact_instance_of::<PyList>()
        || value.is_exact_instance_of::<PyInt>()
    {
        return value;
    }
    if value.is_instance_of::<PyDict>()
        || value.is_instance_of::<PyString>()
        || value.is_instance_of::<PyList>()
        || value.is_instance_of::<PyInt>()
        || value.is_instance_of::<PyFloat>()
        || value.is_instance_of::<PyBytes>()
        || value.is_instance_of::<PyByteArray>()
    {
        return value;
    }
    let py = value.py();
    if value
        .hasattr(intern!(py, "model_fields_set"))
        .unwrap_or(false)
    {
        if let Ok(fields) = value.getattr(intern!(py, "__dict__")) {
            if let Ok(fields) = fields.cast_into::<PyDict>() {
                return with_extra_fields(&value, fields).into_any();
            }
        }
    }
    if let Ok(mapping) = value.cast::<PyMapping>() {
        if let Ok(items) = mapping.items() {
            if let Ok(dict) = PyDict::from_sequence(items.as_any()) {
                return dict.into_any();
            }
        }
    }
    value
}

/// A pydantic object's fields and its extra fields as one dict: the object's own dict when it
/// has no extra ones, else a new dict (the caller's object is never changed).
fn with_extra_fields<'py>(
    value: &Bound<'py, PyAny>,
    fields: Bound<'py, PyDict>,
) -> Bound<'py, PyDict> {
    let extra = value.getattr(intern!(value.py(), "__pydantic_extra__"));
    let Ok(extra) = extra.as_ref().map(|e| e.cast::<PyDict>()) else {
        return fields;
    };
    match extra {
        Ok(extra) if !extra.is_empty() => match fields.copy() {
            Ok(joined) if joined.update(extra.as_mapping()).is_ok() => joined,
            _ => fields,
        },
        _ => fields,
    }
}

/// A reply body as read: a dict (or an SDK's reply object) as it is, a body orjson reads as
/// one object (straight from the str or bytes object, no copy), else what the core makes of
/// the bytes. A value that is neither text nor an object is no reply.
pub(crate) fn read_reply<'py>(
    py: Python<'py>,
    body: &Bound<'py, PyAny>,
    limits: &Limits,
) -> PyResult<Reply<Obj<'py>>> {
    let body = plain(body.clone());
    if body.is_instance_of::<PyDict>() {
        return reply_of(&Obj(body));
    }
    let is_text = body.is_instance_of::<PyString>()
        || body.is_instance_of::<PyBytes>()
        || body.is_instance_of::<PyByteArray>();
    if !is_text {
        return Ok(Reply::NotAReply(Obj(body).type_name()));
    }
    if let Some(reply) =
        strict_objects(py, &body, None, LOADS_MAX_DEPTH)?.filter(|v| v.is_instance_of::<PyDict>())
    {
        let bytes = input_bytes(&body)?;
        return reply_of_text(&bytes, &Obj(reply));
    }
    let bytes = input_bytes(&body)?;
    read_unparsed_reply(&PyParser(py), &bytes, limits)
}
