//! Python values as the core's walk reads them (`toolmend_core::walk`): what each one is, and
//! nothing else; the limits, the pointers and the messages are the core's. Two readings: `Obj`
//! (owned references, any value) and `Peek` (borrowed references, exact builtin types only),
//! which the quick limits pass takes.

// A refusal is the cold path: its Violation is returned by value rather than boxed.
#![allow(clippy::result_large_err)]

use std::marker::PhantomData;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::dict::BoundDictIterator;
use pyo3::types::list::BoundListIterator;
use pyo3::types::tuple::BoundTupleIterator;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyIterator, PyList, PyString, PyTuple};
use toolmend_core::schema::Violation;
use toolmend_core::walk::{check_by, Budget, Key, Node, Tree};

use crate::wire::Obj;

/// The limits of `value` checked by the core: the quick pass over borrowed references, the
/// walk over owned ones only when that pass cannot tell.
pub(crate) fn check_limits(value: &Bound<'_, PyAny>, budget: &mut Budget) -> Result<(), Violation> {
    // SAFETY: the GIL is held for the whole check and reading exact builtin types runs no
    // Python code (see `Peek`), so nothing frees or changes what the quick pass borrows.
    let quick = Peek {
        ptr: value.as_ptr(),
        _value: PhantomData,
    };
    check_by(&quick, &Obj(value.clone()), budget)
}

/// Any Python value, through owned references.
impl<'py> Tree for Obj<'py> {
    type Key = Obj<'py>;
    type Entries = std::iter::Map<BoundDictIterator<'py>, fn(Pair<'py>) -> (Obj<'py>, Obj<'py>)>;
    type Items = Items<'py>;

    #[inline(always)]
    fn node(&self) -> Node<'_, Self> {
        let obj = &self.0;
        // What arguments hold, tested by exact type first (a pointer comparison each); the
        // subclass checks below cost a call each.
        if let Ok(s) = obj.cast_exact::<PyString>() {
            return str_node(s);
        }
        if let Ok(d) = obj.cast_exact::<PyDict>() {
            return dict_node(d);
        }
        if obj.is_exact_instance_of::<PyInt>() {
            return int_node(obj);
        }
        if let Ok(l) = obj.cast_exact::<PyList>() {
            return Node::Array(Items::List(l.clone().into_iter()));
        }
        if let Ok(f) = obj.cast_exact::<PyFloat>() {
            return Node::Float(f.value());
        }
        if obj.is_none() {
            return Node::Null;
        }
        if let Ok(b) = obj.cast::<PyBool>() {
            return Node::Bool(b.is_true());
        }
        if let Ok(s) = obj.cast::<PyString>() {
            return str_node(s);
        }
        if obj.is_instance_of::<PyInt>() {
            return int_node(obj);
        }
        if let Ok(f) = obj.cast::<PyFloat>() {
            return Node::Float(f.value());
        }
        if let Ok(d) = obj.cast::<PyDict>() {
            return dict_node(d);
        }
        if let Ok(t) = obj.cast_exact::<PyTuple>() {
            return Node::Array(Items::Tuple(t.clone().into_iter()));
        }
        if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
            return match obj.try_iter() {
                Ok(items) => Node::Array(Items::Other(items)),
                Err(_) => Node::NotJson("an array".into()),
            };
        }
        let type_name = obj
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_else(|_| "object".into());
        Node::Other(format!("a value of type {type_name}"))
    }

    fn digits(&self) -> Option<String> {
        // Past Python's own limit on digits, str() raises: no digits.
        Some(self.0.str().ok()?.to_str().ok()?.to_owned())
    }
}

#[inline(always)]
fn str_node<'a, 'py>(s: &'a Bound<'py, PyString>) -> Node<'a, Obj<'py>> {
    match s.to_str() {
        Ok(text) => Node::Str(text),
        Err(_) => Node::NotJson("a string with lone surrogates".into()),
    }
}

#[inline(always)]
fn dict_node<'a, 'py>(d: &'a Bound<'py, PyDict>) -> Node<'a, Obj<'py>> {
    let pair: fn(Pair<'py>) -> (Obj<'py>, Obj<'py>) = |(k, v)| (Obj(k), Obj(v));
    Node::Object(d.iter().map(pair), d.len())
}

fn int_node<'a, 'py>(obj: &Bound<'py, PyAny>) -> Node<'a, Obj<'py>> {
    if let Ok(i) = obj.extract::<i64>() {
        return Node::Int(i.into());
    }
    if let Ok(u) = obj.extract::<u64>() {
        return Node::Int(u.into());
    }
    match obj.call_method0("bit_length").and_then(|b| b.extract()) {
        Ok(bits) => Node::BigInt {
            bits,
            approx: obj.extract::<f64>().ok(),
        },
        Err(_) => Node::NotJson("an integer too large".into()),
    }
}

/// An array's items: a list or tuple read by index, anything else through its iterator.
pub(crate) enum Items<'py> {
    List(BoundListIterator<'py>),
    Tuple(BoundTupleIterator<'py>),
    Other(Bound<'py, PyIterator>),
}

impl<'py> Iterator for Items<'py> {
    type Item = Result<Obj<'py>, ()>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Items::List(items) => items.next().map(|item| Ok(Obj(item))),
            Items::Tuple(items) => items.next().map(|item| Ok(Obj(item))),
            Items::Other(items) => items.next().map(|item| item.map(Obj).map_err(drop)),
        }
    }
}

type Pair<'py> = (Bound<'py, PyAny>, Bound<'py, PyAny>);

impl Key for Obj<'_> {
    fn text(&self) -> Result<&str, &'static str> {
        match self.0.cast::<PyString>() {
            Ok(s) => s.to_str().map_err(|_| "a key with lone surrogates"),
            Err(_) => Err("a key that is not a string"),
        }
    }
}

/// A Python value through a borrowed reference, read only where that runs no Python code:
/// exact `dict`, `list`, `tuple`, `str`, `int` (64 bits), `float`, `bool` and `None`. Anything
/// else is `Other`, which hands the check to the walk over `Obj`. Made only by `check_limits`,
/// whose caller holds the GIL throughout; the values it points at live at least as long as `'a`.
#[derive(Clone, Copy)]
pub(crate) struct Peek<'a> {
    ptr: *mut ffi::PyObject,
    _value: PhantomData<&'a ()>,
}

impl<'a> Peek<'a> {
    fn at(ptr: *mut ffi::PyObject) -> Self {
        Peek {
            ptr,
            _value: PhantomData,
        }
    }

    fn is(&self, ty: *mut ffi::PyTypeObject) -> bool {
        // SAFETY: `ptr` is a live object (see `Peek`).
        unsafe { ffi::Py_TYPE(self.ptr) == ty }
    }

    /// An exact str's UTF-8 text; None for anything else or a str with lone surrogates.
    fn text(&self) -> Option<&'a str> {
        // SAFETY: see `Peek`; the UTF-8 buffer lives as long as the str, which lives for 'a.
        unsafe {
            if !self.is(std::ptr::addr_of_mut!(ffi::PyUnicode_Type)) {
                return None;
            }
            let mut size: ffi::Py_ssize_t = 0;
            let data = ffi::PyUnicode_AsUTF8AndSize(self.ptr, &mut size);
            if data.is_null() {
                ffi::PyErr_Clear();
                return None;
            }
            let bytes = std::slice::from_raw_parts(data.cast::<u8>(), size as usize);
            Some(std::str::from_utf8_unchecked(bytes))
        }
    }
}

/// Gave up: the walk over `Obj` settles it.
fn cannot_tell<'a, T: Tree>() -> Node<'a, T> {
    Node::Other(String::new())
}

impl<'a> Tree for Peek<'a> {
    type Key = Peek<'a>;
    type Entries = PeekEntries<'a>;
    type Items = PeekItems<'a>;

    #[inline(always)]
    fn node(&self) -> Node<'_, Self> {
        // SAFETY: see `Peek`; each call below reads an object of the exact type it is for.
        unsafe {
            if let Some(text) = self.text() {
                return Node::Str(text);
            }
            if self.is(std::ptr::addr_of_mut!(ffi::PyDict_Type)) {
                let len = ffi::PyDict_Size(self.ptr) as usize;
                return Node::Object(
                    PeekEntries {
                        dict: *self,
                        pos: 0,
                    },
                    len,
                );
            }
            if self.is(std::ptr::addr_of_mut!(ffi::PyLong_Type)) {
                let mut overflow = 0;
                let i = ffi::PyLong_AsLongLongAndOverflow(self.ptr, &mut overflow);
                return if overflow == 0 && (i != -1 || ffi::PyErr_Occurred().is_null()) {
                    Node::Int(i.into())
                } else {
                    ffi::PyErr_Clear();
                    cannot_tell()
                };
            }
            let list = self.is(std::ptr::addr_of_mut!(ffi::PyList_Type));
            if list || self.is(std::ptr::addr_of_mut!(ffi::PyTuple_Type)) {
                let len = if list {
                    ffi::PyList_Size(self.ptr)
                } else {
                    ffi::PyTuple_Size(self.ptr)
                };
                return Node::Array(PeekItems {
                    seq: *self,
                    list,
                    next: 0,
                    len,
                });
            }
            if self.is(std::ptr::addr_of_mut!(ffi::PyFloat_Type)) {
                return Node::Float(ffi::PyFloat_AsDouble(self.ptr));
            }
            if self.ptr == ffi::Py_None() {
                return Node::Null;
            }
            if self.ptr == ffi::Py_True() || self.ptr == ffi::Py_False() {
                return Node::Bool(self.ptr == ffi::Py_True());
            }
            cannot_tell()
        }
    }
}

impl Key for Peek<'_> {
    fn text(&self) -> Result<&str, &'static str> {
        Peek::text(self).ok_or("a key that is not a plain string")
    }
}

/// An exact dict's entries, through PyDict_Next's borrowed references.
pub(crate) struct PeekEntries<'a> {
    dict: Peek<'a>,
    pos: ffi::Py_ssize_t,
}

impl<'a> Iterator for PeekEntries<'a> {
    type Item = (Peek<'a>, Peek<'a>);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let (mut key, mut value) = (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: see `Peek`; the dict is not changed while the pass reads it.
        let more = unsafe { ffi::PyDict_Next(self.dict.ptr, &mut self.pos, &mut key, &mut value) };
        (more != 0).then(|| (Peek::at(key), Peek::at(value)))
    }
}

/// An exact list's or tuple's items, by index.
pub(crate) struct PeekItems<'a> {
    seq: Peek<'a>,
    list: bool,
    next: ffi::Py_ssize_t,
    len: ffi::Py_ssize_t,
}

impl<'a> Iterator for PeekItems<'a> {
    type Item = Result<Peek<'a>, ()>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.next >= self.len {
            return None;
        }
        // SAFETY: see `Peek`; the index is below the length read when the pass opened it.
        let item = unsafe {
            if self.list {
                ffi::PyList_GetItem(self.seq.ptr, self.next)
            } else {
                ffi::PyTuple_GetItem(self.seq.ptr, self.next)
            }
        };
        self.next += 1;
        Some(if item.is_null() {
            Err(())
        } else {
            Ok(Peek::at(item))
        })
    }
}
