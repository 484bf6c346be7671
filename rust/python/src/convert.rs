//! What every part of the binding converts with: text in (str, bytes, bytearray, bounded by the
//! size limit without a copy), when to release the GIL, limits and option values read, JSON text
//! as Python objects (orjson for strict text, jiter for the repair pass's output) and Python
//! objects as JSON text.

use std::borrow::Cow;

use jiter::{PythonParse, StringCacheMode};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyString, PyTuple, PyType};
use toolmend_core::limits::may_hold_wide_integer;
use toolmend_core::{Error, Limits};

/// Work on inputs at least this long (bytes, or estimated bytes of a dict) runs with the GIL
/// released; below it, releasing and re-taking the GIL costs more than the work.
const RELEASE_GIL_AT: usize = 4096;

/// `work` on an input of `size` bytes: with the GIL released when it is large enough to pay.
pub(crate) fn detach_if_large<T: Send>(
    py: Python<'_>,
    size: usize,
    work: impl FnOnce() -> T + Send,
) -> T {
    if size >= RELEASE_GIL_AT {
        py.detach(work)
    } else {
        work()
    }
}

/// The input's UTF-8 bytes, borrowed from the Python object when it can be. A `str` holding lone
/// surrogates (which UTF-8 cannot encode) is passed on with them encoded as surrogatepass bytes,
/// so the core reports or replaces them like any other invalid UTF-8.
pub(crate) fn input_bytes<'a>(text: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, [u8]>> {
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
    Err(PyTypeError::new_err(format!(
        "expected str, bytes or bytearray, got {}",
        text.get_type().name()?
    )))
}

/// The input's UTF-8 bytes as `input_bytes` gives them, or the size error when they are over
/// `max_size`, found without copying the text: a 100 MB `bytearray` or non-ASCII `str` is
/// refused without a 100 MB copy (and no UTF-8 copy left cached on the str).
pub(crate) fn bounded_input<'a>(
    text: &'a Bound<'_, PyAny>,
    max_size: usize,
) -> PyResult<Result<Cow<'a, [u8]>, Error>> {
    let limits = Limits {
        max_size,
        ..Limits::DEFAULT
    };
    let size = if let Ok(s) = text.cast::<PyString>() {
        utf8_size_if_over(s, max_size)?
    } else if let Ok(b) = text.cast::<PyByteArray>() {
        Some(b.len())
    } else {
        None
    };
    match size.map(|size| limits.check_size(size)) {
        Some(Err(too_large)) => Ok(Err(too_large)),
        _ => input_bytes(text).map(Ok),
    }
}

/// The UTF-8 size of `s` when it may be over `max_size`, else None. A str's UTF-8 form takes one
/// to four bytes a character, so most strings are settled by their length; an ASCII str's size
/// is its length; otherwise the size is measured a slice at a time, never the whole text at once.
fn utf8_size_if_over(s: &Bound<'_, PyString>, max_size: usize) -> PyResult<Option<usize>> {
    const SLICE: usize = 1 << 16;
    let chars = s.len()?;
    if chars.saturating_mul(4) <= max_size {
        return Ok(None);
    }
    if s.call_method0("isascii")?.is_truthy()? {
        return Ok(Some(chars));
    }
    if chars <= max_size {
        // At most 4 x max_size bytes: the copy is bounded by the limit, not by the input.
        return Ok(None);
    }
    let mut size = 0;
    for start in (0..chars).step_by(SLICE) {
        let slice = s.get_item(pyo3::types::PySlice::new(
            s.py(),
            start as isize,
            (start + SLICE).min(chars) as isize,
            1,
        ))?;
        size += slice
            .call_method1("encode", ("utf-8", "surrogatepass"))?
            .len()?;
    }
    Ok(Some(size))
}

/// The limits given to a function or class whose work walks Python values or validates them
/// (the registry, parse_response, the stream readers), refused with a ValueError when
/// `max_depth` is over `Limits::MAX_DEPTH_CEILING`. `repair` and `loads` take any depth: repair
/// keeps its own stack and returns text, loads builds at most `LOADS_MAX_DEPTH` levels. Every
/// signature defaults to `Limits::DEFAULT`.
pub(crate) fn limits(max_size: usize, max_depth: usize, timeout_ms: u64) -> PyResult<Limits> {
    Limits::new(max_size, max_depth, timeout_ms).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// `Limits::DEFAULT` as a dict, for the Python layer's signatures and configuration.
pub(crate) fn default_limits(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("max_size", Limits::DEFAULT.max_size)?;
    d.set_item("max_depth", Limits::DEFAULT.max_depth)?;
    d.set_item("timeout_ms", Limits::DEFAULT.timeout_ms)?;
    Ok(d)
}

static ORJSON_LOADS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// An attribute of the orjson module, looked up once per interpreter.
fn orjson<'py>(
    py: Python<'py>,
    cell: &'static PyOnceLock<Py<PyAny>>,
    name: &str,
) -> PyResult<&'py Bound<'py, PyAny>> {
    cell.get_or_try_init(py, || py.import("orjson")?.getattr(name).map(Bound::unbind))
        .map(|attr| attr.bind(py))
}

/// orjson.loads as the C function behind it, when it is a builtin of one argument (METH_O, as
/// orjson defines it): called the way CPython calls such a builtin, without the argument tuple and
/// the generic call an abi3 build makes for `call1` (about 30 ns of a 50-byte `loads`).
struct DirectLoads {
    function: ffi::PyCFunction,
    /// The module the builtin is bound to (its first argument).
    module: Option<Py<PyAny>>,
}

static ORJSON_LOADS_C: PyOnceLock<Option<DirectLoads>> = PyOnceLock::new();

fn direct_loads(py: Python<'_>) -> PyResult<Option<&DirectLoads>> {
    let loads = orjson(py, &ORJSON_LOADS, "loads")?;
    Ok(ORJSON_LOADS_C
        .get_or_init(py, || {
            let f = loads.as_ptr();
            // SAFETY: the GIL is held and `f` is alive (cached above); the three calls only read
            // the builtin's method definition, after the type check.
            unsafe {
                if ffi::PyCFunction_Check(f) == 0 {
                    return None;
                }
                const CALL_KINDS: std::ffi::c_int = ffi::METH_VARARGS
                    | ffi::METH_KEYWORDS
                    | ffi::METH_NOARGS
                    | ffi::METH_O
                    | ffi::METH_FASTCALL;
                if ffi::PyCFunction_GetFlags(f) & CALL_KINDS != ffi::METH_O {
                    return None;
                }
                let function = ffi::PyCFunction_GetFunction(f)?;
                let module = ffi::PyCFunction_GetSelf(f);
                let module =
                    (!module.is_null()).then(|| Bound::from_borrowed_ptr(py, module).unbind());
                Some(DirectLoads { function, module })
            }
        })
        .as_ref())
}

/// orjson.loads(text): the value, or None when orjson refuses the text as not JSON.
pub(crate) fn orjson_loads<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let loaded = match direct_loads(py)? {
        Some(direct) => {
            let module = direct
                .module
                .as_ref()
                .map_or(std::ptr::null_mut(), |m| m.as_ptr());
            // SAFETY: a METH_O builtin takes (self, arg) and returns a new reference, or NULL
            // with an exception set; the GIL is held and both arguments are alive.
            unsafe { Bound::from_owned_ptr_or_err(py, (direct.function)(module, text.as_ptr())) }
        }
        None => orjson(py, &ORJSON_LOADS, "loads")?.call1((text,)),
    };
    match loaded {
        Ok(value) => Ok(Some(value)),
        Err(e) if e.is_instance_of::<PyValueError>(py) => Ok(None),
        Err(e) => Err(e),
    }
}

static ORJSON_DUMPS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static ORJSON_SORT_KEYS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// orjson.dumps(value) with sorted keys (equal dicts give equal text); None when orjson cannot
/// write the value.
pub(crate) fn sorted_json(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    let dumps = orjson(py, &ORJSON_DUMPS, "dumps")?;
    let sort_keys = orjson(py, &ORJSON_SORT_KEYS, "OPT_SORT_KEYS")?;
    // orjson matches keyword names by identity: the name must be the interned str.
    let kwargs = PyDict::new(py);
    kwargs.set_item(pyo3::intern!(py, "option"), sort_keys)?;
    Ok(dumps.call((value,), Some(&kwargs)).ok().and_then(|b| {
        b.cast::<PyBytes>()
            .ok()
            .map(|b| String::from_utf8_lossy(b.as_bytes()).into_owned())
    }))
}

/// A call's arguments as JSON text, for `ToolCall.to_openai` (see `orjson_dumps`).
#[pyfunction(name = "_json_text")]
pub(crate) fn arguments_text(value: &Bound<'_, PyAny>) -> PyResult<String> {
    orjson_dumps(value.py(), value)
}

/// orjson.dumps(value) as text. orjson stops at 255 levels of nesting; a deeper value of plain
/// JSON types is written by `json_text` instead, so that the depth limit, not the encoder,
/// decides what becomes of it.
pub(crate) fn orjson_dumps(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<String> {
    let dumps = orjson(py, &ORJSON_DUMPS, "dumps")?;
    match dumps.call1((value,)) {
        Ok(bytes) => Ok(String::from_utf8_lossy(bytes.cast::<PyBytes>()?.as_bytes()).into_owned()),
        Err(e) => json_text(value).ok_or(e),
    }
}

/// Compact JSON text of JSON-like Python values nested to any depth, integers of any size
/// exactly (the core's writer); None for anything else (orjson's error says what).
pub(crate) fn json_text(value: &Bound<'_, PyAny>) -> Option<String> {
    toolmend_core::walk::json_text(&crate::wire::Obj(value.clone()))
}

/// orjson.loads(text) when what it built can stand: None when the text
/// is not strict JSON, when the objects nest deeper than `max_depth` containers, or when they hold
/// a float that is not what the text said: an integer past 64 bits (orjson reads it as the
/// nearest double) or a number past the double range (read as infinity). Those take the exact
/// path (the core, then jiter), so every path reads numbers the same way. A whole double from
/// 2^63 on may be either such an integer or a float written so (`7.18e+20`): the text (`bytes`,
/// or `text`'s own when None) says which, looked at only then.
pub(crate) fn strict_objects<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    bytes: Option<&[u8]>,
    max_depth: usize,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let Some(value) = orjson_loads(py, text)? else {
        return Ok(None);
    };
    let mut whole_big_double = false;
    // SAFETY: `value` is what orjson just returned, seen by no other code yet; the GIL is held
    // and the walk runs no Python code, so nothing can change or free what it reads.
    if !unsafe { objects_stand(value.as_ptr(), max_depth, &mut whole_big_double) } {
        return Ok(None);
    }
    if whole_big_double {
        let wide = match bytes {
            Some(bytes) => may_hold_wide_integer(bytes),
            None => may_hold_wide_integer(&input_bytes(text)?),
        };
        if wide {
            return Ok(None);
        }
    }
    Ok(Some(value))
}

/// orjson's objects for strict JSON text held by Rust, read through a memoryview (no copy); None
/// when orjson refuses the text or fails. With `check` (a depth), only objects that stand for the
/// text (see `strict_objects`) and nest at most that deep; without, the caller knows both already
/// (`Mended::plain_numbers` of text the repair pass held to the depth limit).
pub(crate) fn orjson_objects<'py>(
    py: Python<'py>,
    json: &[u8],
    check: Option<usize>,
) -> Option<Bound<'py, PyAny>> {
    /// The buffer is read-only (CPython's PyBUF_READ).
    const READ_ONLY: std::ffi::c_int = 0x100;
    let size = ffi::Py_ssize_t::try_from(json.len()).ok()?;
    // SAFETY: the view lends `json` to this call only: orjson keeps no reference to its input,
    // and the view is released (unusable from then on) before `json` can go.
    let view = unsafe {
        let ptr = ffi::PyMemoryView_FromMemory(json.as_ptr().cast_mut().cast(), size, READ_ONLY);
        Bound::from_owned_ptr_or_err(py, ptr).ok()?
    };
    let loaded = match check {
        Some(max_depth) => strict_objects(py, &view, Some(json), max_depth),
        None => orjson_loads(py, &view),
    };
    view.call_method0(pyo3::intern!(py, "release")).ok()?;
    loaded.ok().flatten()
}

/// Doubles from 2^63 on may be integers orjson could not hold exactly.
const INEXACT_INTEGERS_FROM: f64 = 9_223_372_036_854_775_808.0;

/// Whether `obj` nests at most `room` containers deep and holds no infinite float; a whole
/// double from 2^63 on, which may stand for an integer orjson rounded, is noted in
/// `whole_big_double` for the text to settle (see `strict_objects`). A walk over values, never
/// over bytes: a scan of the text would cost more than orjson's whole parse on string-heavy
/// arguments. References from PyDict_Next and PyList_GetItem are borrowed; the recursion is
/// bounded by `room`.
#[inline(always)]
unsafe fn objects_stand(obj: *mut ffi::PyObject, room: usize, whole_big_double: &mut bool) -> bool {
    unsafe {
        match value_kind(obj) {
            Kind::Float => float_stands(obj, whole_big_double),
            Kind::Container => room > 0 && members_stand(obj, room, whole_big_double),
            Kind::Other => true,
        }
    }
}

enum Kind {
    Float,
    Container,
    Other,
}

/// What an object orjson built is, by its exact type (one pointer read).
unsafe fn value_kind(obj: *mut ffi::PyObject) -> Kind {
    unsafe {
        let t = ffi::Py_TYPE(obj);
        if t == std::ptr::addr_of_mut!(ffi::PyFloat_Type) {
            Kind::Float
        } else if t == std::ptr::addr_of_mut!(ffi::PyDict_Type)
            || t == std::ptr::addr_of_mut!(ffi::PyList_Type)
        {
            Kind::Container
        } else {
            Kind::Other
        }
    }
}

unsafe fn float_stands(obj: *mut ffi::PyObject, whole_big_double: &mut bool) -> bool {
    let f = unsafe { ffi::PyFloat_AsDouble(obj) };
    *whole_big_double |= f.abs() >= INEXACT_INTEGERS_FROM && f.fract() == 0.0;
    f.is_finite()
}

/// The members of a dict or list at `room` levels (at least one): scalars are looked at where
/// they stand, with no call each (most members are scalars); containers nest one level down.
unsafe fn members_stand(obj: *mut ffi::PyObject, room: usize, whole_big_double: &mut bool) -> bool {
    unsafe {
        let mut member = |item: *mut ffi::PyObject| objects_stand(item, room - 1, whole_big_double);
        if ffi::PyDict_CheckExact(obj) != 0 {
            let (mut pos, mut key, mut item) = (0, std::ptr::null_mut(), std::ptr::null_mut());
            while ffi::PyDict_Next(obj, &mut pos, &mut key, &mut item) != 0 {
                if !member(item) {
                    return false;
                }
            }
            true
        } else {
            (0..ffi::PyList_Size(obj)).all(|i| member(ffi::PyList_GetItem(obj, i)))
        }
    }
}

/// `value` as a new Python object that the cycle collector does not track. pyo3 makes every
/// class a GC type, but toolmend's classes define no `__traverse__`, so the collector can never
/// see what they hold: tracking them buys nothing, and every collection while they live visits
/// them (a loop keeping 200,000 `parse_response` results spent half its time in the collector, one
/// keeping 280,000 `repair` results a fifth). A class given `__traverse__` must not come here.
pub(crate) fn untracked<T: pyo3::PyClass>(
    py: Python<'_>,
    value: impl Into<pyo3::PyClassInitializer<T>>,
) -> PyResult<Py<T>> {
    let object = Py::new(py, value)?;
    // SAFETY: `object` is a live GC object (pyo3 classes all are); untracking one is always
    // allowed, and its dealloc untracks again, which CPython treats as a no-op.
    unsafe { ffi::PyObject_GC_UnTrack(object.as_ptr().cast()) };
    Ok(object)
}

/// Each of `values` as a new untracked Python object (see `untracked`), in order.
pub(crate) fn all_untracked<T: pyo3::PyClass, V: Into<pyo3::PyClassInitializer<T>>>(
    py: Python<'_>,
    values: impl IntoIterator<Item = V>,
) -> PyResult<Vec<Py<T>>> {
    values.into_iter().map(|v| untracked(py, v)).collect()
}

/// Strict JSON text as Python objects (jiter; object keys cached).
pub(crate) fn python_objects<'py>(
    py: Python<'py>,
    json: &[u8],
) -> Result<Bound<'py, PyAny>, jiter::JsonError> {
    PythonParse {
        cache_mode: StringCacheMode::Keys,
        ..Default::default()
    }
    .python_parse(py, json)
}

/// Looks a class of the Python package up once per interpreter.
pub(crate) fn package_class<'py>(
    py: Python<'py>,
    cell: &'static PyOnceLock<Py<PyType>>,
    module: &str,
    name: &str,
) -> PyResult<&'py Bound<'py, PyType>> {
    cell.import(py, module, name)
}

/// The formats a reading takes: True (the "default" preset), False (none), a preset's name
/// ("strict", "default", "lenient") or a collection of format names.
pub fn formats(value: &Bound<'_, PyAny>) -> PyResult<toolmend_core::extract::Formats> {
    use toolmend_core::extract::Formats;
    if let Ok(on) = value.extract::<bool>() {
        return Ok(if on {
            Formats::default()
        } else {
            Formats::NONE
        });
    }
    if let Ok(preset) = value.extract::<String>() {
        return Formats::preset(&preset).ok_or_else(|| {
            PyValueError::new_err(format!(
                "unknown text_calls preset {preset:?}: use \"strict\", \"default\" or \"lenient\", or a set of format names"
            ))
        });
    }
    let names: Vec<String> = value
        .try_iter()
        .and_then(|items| items.map(|n| n?.extract::<String>()).collect())
        .map_err(|_| {
            PyTypeError::new_err(
                "text_calls takes a bool, a preset's name or a collection of format names",
            )
        })?;
    Formats::of(names.iter().map(String::as_str)).map_err(|unknown| {
        PyValueError::new_err(format!(
            "unknown format {unknown:?}; the formats are: {}",
            Formats::names().join(", ")
        ))
    })
}

/// The format names of each preset, for Python's `toolmend.TEXT_FORMATS`.
pub fn text_formats(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let presets = PyDict::new(py);
    for name in ["strict", "default", "lenient"] {
        let formats = toolmend_core::extract::Formats::preset(name).expect("a preset");
        presets.set_item(name, PyTuple::new(py, formats.taken().collect::<Vec<_>>())?)?;
    }
    Ok(presets)
}
