//! Boundary conversion: Python text in, core call with the GIL released, Python values out.
//!
//! The result classes are frozen pyclasses so that a result costs one small allocation, and the
//! repair log stays a Rust vector until someone reads `.repairs` (a 1 MB input can carry tens of
//! thousands of repairs; building them eagerly would cost more than repairing).

use std::borrow::Cow;

use jiter::{PythonParse, StringCacheMode};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::dict::BoundDictIterator;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyIterator, PyList, PyString, PyTuple,
    PyType,
};
use toolmend_core::{Error, ErrorCode, Limits, RepairKind, Repaired};

use crate::exceptions::parse_error;
use crate::record::{reduce, Record, Reduced};

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
/// The deepest nesting loads turns into Python objects: jiter's fixed recursion limit.
pub(crate) const LOADS_MAX_DEPTH: usize = 200;

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

/// `Name(field=value, ...)` with each value as Python's `repr()` shows it (quotes, None, True),
/// for the result classes' reprs.
pub(crate) fn class_repr<'py>(
    _py: Python<'py>,
    name: &str,
    fields: Vec<(&str, Bound<'py, PyAny>)>,
) -> PyResult<String> {
    let mut out = format!("{name}(");
    for (i, (field, value)) in fields.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(field);
        out.push('=');
        out.push_str(value.repr()?.to_str()?);
    }
    out.push(')');
    Ok(out)
}

/// A Rust value as a Python object, for `class_repr`.
pub(crate) fn py_value<'py, T: IntoPyObject<'py>>(
    py: Python<'py>,
    value: T,
) -> PyResult<Bound<'py, PyAny>> {
    pyo3::IntoPyObjectExt::into_bound_py_any(value, py)
}

/// The limits given to a function or class whose work walks Python values or validates them
/// (the registry, parse_response, the stream readers), refused with a ValueError when
/// `max_depth` is over `Limits::MAX_DEPTH_CEILING`. `repair` and `loads` take any depth: repair
/// keeps its own stack and returns text, loads builds at most LOADS_MAX_DEPTH levels. Every
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

fn run_repair<'b>(py: Python<'_>, bytes: &'b [u8], limits: &Limits) -> Result<Repaired<'b>, Error> {
    detach_if_large(py, bytes.len(), || toolmend_core::repair(bytes, limits))
}

/// One fault that was mended: its kind (e.g. "trailing_comma") and the byte offset where it was found.
#[pyclass(module = "toolmend", frozen, eq, hash)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repair {
    kind: RepairKind,
    #[pyo3(get)]
    position: usize,
}

impl Repair {
    pub(crate) fn to_core(self) -> toolmend_core::Repair {
        toolmend_core::Repair {
            kind: self.kind,
            position: self.position,
        }
    }
}

impl Record for Repair {
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        (self.kind.as_str(), self.position).into_pyobject(py)
    }
}

impl From<&toolmend_core::Repair> for Repair {
    fn from(r: &toolmend_core::Repair) -> Self {
        Repair {
            kind: r.kind,
            position: r.position,
        }
    }
}

#[pymethods]
impl Repair {
    #[new]
    fn new(kind: &str, position: usize) -> PyResult<Self> {
        let kind = RepairKind::from_name(kind)
            .ok_or_else(|| PyValueError::new_err(format!("unknown repair kind {kind:?}")))?;
        Ok(Repair { kind, position })
    }

    #[getter]
    fn kind(&self) -> &'static str {
        self.kind.as_str()
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Reduced<'py>> {
        reduce(slf)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        class_repr(
            py,
            "Repair",
            vec![
                ("kind", py_value(py, self.kind.as_str())?),
                ("position", py_value(py, self.position)?),
            ],
        )
    }
}

/// Why a text could not be repaired: a TLP code, a message, a byte offset and a hint.
#[pyclass(module = "toolmend", frozen, eq, get_all)]
#[derive(Clone, PartialEq, Eq)]
pub struct RepairError {
    code: String,
    message: String,
    position: usize,
    suggestion: String,
}

#[pymethods]
impl RepairError {
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Reduced<'py>> {
        reduce(slf)
    }

    #[new]
    fn new(code: String, message: String, position: usize, suggestion: String) -> Self {
        RepairError {
            code,
            message,
            position,
            suggestion,
        }
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        class_repr(
            py,
            "RepairError",
            vec![
                ("code", py_value(py, &self.code)?),
                ("message", py_value(py, &self.message)?),
                ("position", py_value(py, self.position)?),
                ("suggestion", py_value(py, &self.suggestion)?),
            ],
        )
    }
}

impl Record for RepairError {
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        (&self.code, &self.message, self.position, &self.suggestion).into_pyobject(py)
    }
}

impl From<&Error> for RepairError {
    fn from(e: &Error) -> Self {
        RepairError {
            code: e.code().as_str().to_owned(),
            message: e.to_string(),
            position: e.position,
            suggestion: e.suggestion().to_owned(),
        }
    }
}

/// The outcome of repair(): the JSON text when ok, the repair log, and the input as given.
#[pyclass(module = "toolmend", frozen)]
pub struct RepairResult {
    /// The repaired text; the input object itself when it was a valid str.
    #[pyo3(get)]
    json: Option<Py<PyAny>>,
    log: Vec<toolmend_core::Repair>,
    /// The input exactly as the caller passed it.
    #[pyo3(get)]
    original: Py<PyAny>,
    /// Why the text could not be repaired, or None.
    #[pyo3(get)]
    error: Option<Py<RepairError>>,
}

#[pymethods]
impl RepairResult {
    /// True when the result holds JSON text.
    #[getter]
    fn ok(&self) -> bool {
        self.error.is_none()
    }

    /// True when the input needed mending.
    #[getter]
    fn repaired(&self) -> bool {
        !self.log.is_empty()
    }

    /// The repairs applied, in input order (a new list on each access).
    #[getter]
    fn repairs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(
            py,
            self.log.iter().map(|r| Repair {
                kind: r.kind,
                position: r.position,
            }),
        )
    }

    /// Raises ParseError when the text could not be repaired; returns the result otherwise, so
    /// that `repair(text).raise_for_error().json` reads as one expression.
    fn raise_for_error(slf: PyRef<'_, Self>) -> PyResult<PyRef<'_, Self>> {
        match &slf.error {
            Some(e) => {
                let e = e.get();
                Err(parse_error(
                    slf.py(),
                    &e.code,
                    &e.message,
                    e.position,
                    &e.suggestion,
                ))
            }
            None => Ok(slf),
        }
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let shown = |o: &Option<Py<PyAny>>| -> PyResult<String> {
            Ok(match o {
                Some(o) => o.bind(py).repr()?.to_string(),
                None => "None".into(),
            })
        };
        let error = match &self.error {
            Some(e) => e.get().__repr__(py)?,
            None => "None".into(),
        };
        Ok(format!(
            "RepairResult(ok={}, json={}, repaired={}, repairs=<{} repairs>, error={})",
            if self.ok() { "True" } else { "False" },
            shown(&self.json)?,
            if self.repaired() { "True" } else { "False" },
            self.log.len(),
            error
        ))
    }
}

/// Repairs text into one strict JSON value in linear time.
///
/// Valid JSON comes back unchanged (the same str object) with an empty log. Positions are byte
/// offsets into the UTF-8 encoding of the input. Never raises for bad input: see `error`.
#[pyfunction]
#[pyo3(signature = (text, *, max_size = Limits::DEFAULT.max_size, max_depth = Limits::DEFAULT.max_depth, timeout_ms = Limits::DEFAULT.timeout_ms))]
pub fn repair(
    py: Python<'_>,
    text: &Bound<'_, PyAny>,
    max_size: usize,
    max_depth: usize,
    timeout_ms: u64,
) -> PyResult<RepairResult> {
    let input = bounded_input(text, max_size)?;
    // No depth ceiling: repair keeps its own stack and returns text (see `limits`).
    let limits = Limits {
        max_size,
        max_depth,
        timeout_ms,
    };
    let outcome = match &input {
        Ok(bytes) => run_repair(py, bytes, &limits),
        Err(too_large) => Err(too_large.clone()),
    };
    repair_result(py, text, outcome)
}

/// A repair's outcome as the RepairResult `repair()` returns: valid str input comes back as the
/// same object.
pub(crate) fn repair_result(
    py: Python<'_>,
    text: &Bound<'_, PyAny>,
    outcome: Result<Repaired<'_>, Error>,
) -> PyResult<RepairResult> {
    let original = text.clone().unbind();
    Ok(match outcome {
        Ok(repaired) => {
            let json = match &repaired.json {
                Cow::Borrowed(_) if text.is_instance_of::<PyString>() => original.clone_ref(py),
                json => PyString::new(py, json).into_any().unbind(),
            };
            RepairResult {
                json: Some(json),
                log: repaired.repairs,
                original,
                error: None,
            }
        }
        Err(e) => RepairResult {
            json: None,
            log: Vec::new(),
            original,
            error: Some(Py::new(py, RepairError::from(&e))?),
        },
    })
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

/// orjson.loads(text): the value, or None when orjson refuses the text as not JSON.
pub(crate) fn orjson_loads<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let loads = orjson(py, &ORJSON_LOADS, "loads")?;
    match loads.call1((text,)) {
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

/// orjson.dumps(value) as text. orjson stops at 255 levels of nesting; a deeper value of plain
/// JSON types is written by `json_text` instead, so that the depth limit, not the encoder,
/// decides what becomes of it.
pub(crate) fn orjson_dumps(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<String> {
    let dumps = orjson(py, &ORJSON_DUMPS, "dumps")?;
    match dumps.call1((value,)) {
        Ok(bytes) => Ok(String::from_utf8_lossy(bytes.cast::<PyBytes>()?.as_bytes()).into_owned()),
        Err(e) => json_text(value)?.ok_or(e),
    }
}

/// Compact JSON text of dicts (str keys), lists, tuples, str, int, float, bool and None, nested
/// to any depth (integers of any size exactly): open containers are kept on a stack of their own,
/// not the thread's. None for anything else (orjson's error says what). Floats as orjson writes
/// them (NaN, inf: null).
pub(crate) fn json_text(value: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    enum Open<'py> {
        Object(BoundDictIterator<'py>, bool),
        Array(Bound<'py, PyIterator>, bool),
    }
    let mut out = String::new();
    let mut open: Vec<Open<'_>> = Vec::new();
    let mut next = Some(value.clone());
    loop {
        if let Some(v) = next.take() {
            if v.is_none() {
                out.push_str("null");
            } else if let Ok(b) = v.cast::<PyBool>() {
                out.push_str(if b.is_true() { "true" } else { "false" });
            } else if let Ok(s) = v.cast::<PyString>() {
                let Ok(s) = s.to_str() else { return Ok(None) };
                push_json_string(&mut out, s);
            } else if v.is_instance_of::<PyInt>() {
                match (v.extract::<i64>(), v.extract::<u64>()) {
                    (Ok(i), _) => out.push_str(&i.to_string()),
                    (_, Ok(u)) => out.push_str(&u.to_string()),
                    // Past 64 bits: its digits as Python writes them (None past Python's own
                    // limit on digits).
                    _ => match v.str() {
                        Ok(digits) => out.push_str(digits.to_str()?),
                        Err(_) => return Ok(None),
                    },
                }
            } else if let Ok(f) = v.cast::<PyFloat>() {
                match serde_json::Number::from_f64(f.value()) {
                    Some(n) => out.push_str(&n.to_string()),
                    None => out.push_str("null"),
                }
            } else if let Ok(d) = v.cast::<PyDict>() {
                out.push('{');
                open.push(Open::Object(d.iter(), true));
            } else if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
                out.push('[');
                open.push(Open::Array(v.try_iter()?, true));
            } else {
                return Ok(None);
            }
        }
        let Some(top) = open.last_mut() else {
            return Ok(Some(out));
        };
        match top {
            Open::Object(entries, first) => match entries.next() {
                Some((k, v)) => {
                    let Ok(k) = k.cast::<PyString>().map(|k| k.to_str()) else {
                        return Ok(None);
                    };
                    let Ok(k) = k else { return Ok(None) };
                    if !std::mem::replace(first, false) {
                        out.push(',');
                    }
                    push_json_string(&mut out, k);
                    out.push(':');
                    next = Some(v);
                }
                None => {
                    out.push('}');
                    open.pop();
                }
            },
            Open::Array(items, first) => match items.next() {
                Some(item) => {
                    if !std::mem::replace(first, false) {
                        out.push(',');
                    }
                    next = Some(item?);
                }
                None => {
                    out.push(']');
                    open.pop();
                }
            },
        }
    }
}

fn push_json_string(out: &mut String, s: &str) {
    // serde_json escapes exactly what JSON requires; writing to a String cannot fail.
    out.push_str(&serde_json::to_string(s).unwrap_or_default());
}

/// Repairs text when needed and returns Python objects; raises ParseError when it cannot.
///
/// Valid JSON within the limits is parsed by orjson (the fastest well-kept parser, called from
/// here so the limit checks add no Python frames); anything else is repaired by the core and its
/// output built into Python objects by jiter.
#[pyfunction]
#[pyo3(signature = (text, *, max_size = Limits::DEFAULT.max_size, max_depth = Limits::DEFAULT.max_depth, timeout_ms = Limits::DEFAULT.timeout_ms))]
pub fn loads<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    max_size: usize,
    max_depth: usize,
    timeout_ms: u64,
) -> PyResult<Bound<'py, PyAny>> {
    // No depth ceiling: Python objects are built to LOADS_MAX_DEPTH levels at most.
    let limits = Limits {
        max_size,
        max_depth,
        timeout_ms,
    };
    let loaded = match bounded_input(text, max_size)? {
        Ok(bytes) => load_json(py, text, &bytes, &limits, true)?,
        Err(too_large) => Err(LoadError::Core(too_large)),
    };
    loaded
        .map(|(value, _)| value)
        .map_err(|e| load_error(py, e))
}

/// Why `loads` failed, as the ParseError it raises.
pub(crate) fn load_error(py: Python<'_>, error: LoadError) -> PyErr {
    match error {
        LoadError::Core(e) => parse_error(
            py,
            e.code().as_str(),
            &e.to_string(),
            e.position,
            e.suggestion(),
        ),
        // Strict JSON that Python cannot hold.
        LoadError::Python(e) => parse_error(
            py,
            ErrorCode::Unparseable.as_str(),
            &format!("{} at byte {}", e.error_type, e.index),
            e.index,
            "send values Python can hold",
        ),
    }
}

/// Python objects made from JSON text, and the repairs it needed.
pub(crate) type Loaded<'py> = (Bound<'py, PyAny>, Vec<toolmend_core::Repair>);

/// Why JSON text did not become Python objects.
pub(crate) enum LoadError {
    /// Not JSON even after repair (or, with repair off, not strict JSON), or over a limit.
    Core(Error),
    /// Strict JSON that jiter could not build.
    Python(jiter::JsonError),
}

/// JSON text (already read as `bytes`) as Python objects, with the repairs made: orjson for valid
/// text within the limits; otherwise the repair pass (or, with `repair` off, the strict check),
/// the GIL released for big inputs, and jiter. Nesting is capped at what jiter can build: past
/// it, the core reports TLP-008 like any depth limit (repair() still handles deeper text).
pub(crate) fn load_json<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    bytes: &[u8],
    limits: &Limits,
    repair: bool,
) -> PyResult<Result<Loaded<'py>, LoadError>> {
    let limits = loads_limits(limits);
    if let Some(value) = fast_load(py, text, bytes, &limits)? {
        return Ok(Ok((value, Vec::new())));
    }
    // orjson refused the text (or it is over a limit, which the core reports): mend it directly.
    let outcome = detach_if_large(py, bytes.len(), || mend_for_loads(bytes, &limits, repair));
    Ok(build_loaded(py, bytes, outcome, &limits))
}

/// The limits `loads` works under: nesting capped at what jiter can build.
pub(crate) fn loads_limits(limits: &Limits) -> Limits {
    Limits {
        max_depth: limits.max_depth.min(LOADS_MAX_DEPTH),
        ..*limits
    }
}

/// The first stage of `loads`: orjson's objects for valid text within the limits, else None.
pub(crate) fn fast_load<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    bytes: &[u8],
    limits: &Limits,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    if bytes.len() > limits.max_size {
        return Ok(None);
    }
    strict_objects(py, text, limits.max_depth)
}

/// The second stage, without the GIL: the text mended (or, with `repair` off, checked) into
/// strict JSON, with the repairs made.
pub(crate) fn mend_for_loads(
    bytes: &[u8],
    limits: &Limits,
    repair: bool,
) -> Result<(String, Vec<toolmend_core::Repair>), Error> {
    if repair {
        toolmend_core::mend(bytes, limits)
    } else {
        toolmend_core::validate(bytes, limits)
            .map(|()| (String::from_utf8_lossy(bytes).into_owned(), Vec::new()))
    }
}

/// The last stage: the mended text as Python objects (jiter), numbers past a double refused.
pub(crate) fn build_loaded<'py>(
    py: Python<'py>,
    bytes: &[u8],
    outcome: Result<(String, Vec<toolmend_core::Repair>), Error>,
    limits: &Limits,
) -> Result<Loaded<'py>, LoadError> {
    let (json, log) = match outcome {
        Ok(done) => done,
        Err(e) => return Err(LoadError::Core(e)),
    };
    let value = match python_objects(py, json.as_bytes()) {
        Ok(value) => value,
        Err(e) => return Err(LoadError::Python(e)),
    };
    if holds_out_of_range(&value, limits.max_depth) {
        // Positions are the input's; a number the repair pass moved is found in its output.
        let position = toolmend_core::limits::first_number_out_of_range(bytes)
            .or_else(|| toolmend_core::limits::first_number_out_of_range(json.as_bytes()))
            .unwrap_or(0);
        return Err(LoadError::Core(Error::number_out_of_range(position)));
    }
    Ok((value, log))
}

/// orjson.loads(text) when what it built can stand: None when the text
/// is not strict JSON, when the objects nest deeper than `max_depth` containers, or when they hold
/// a float that is not what the text said: an integer past 64 bits (orjson reads it as the
/// nearest double) or a number past the double range (read as infinity). Those take the exact
/// path (the core, then jiter), so every path reads numbers the same way.
pub(crate) fn strict_objects<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyAny>,
    max_depth: usize,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    Ok(orjson_loads(py, text)?.filter(|value| {
        // SAFETY: `value` is what orjson just returned, seen by no other code yet; the GIL is
        // held and the walk runs no Python code, so nothing can change or free what it reads.
        unsafe { objects_stand(value.as_ptr(), max_depth) }
    }))
}

/// Doubles from 2^63 on may be integers orjson could not hold exactly.
const INEXACT_INTEGERS_FROM: f64 = 9_223_372_036_854_775_808.0;

/// Whether `obj` nests at most `room` containers deep and holds no float that may stand for
/// another number (see `strict_objects`). A walk over values, never over bytes: a scan of the
/// text would cost more than orjson's whole parse on string-heavy arguments. References from
/// PyDict_Next and PyList_GetItem are borrowed; the recursion is bounded by `room`.
unsafe fn objects_stand(obj: *mut ffi::PyObject, room: usize) -> bool {
    unsafe {
        if ffi::PyFloat_CheckExact(obj) != 0 {
            let f = ffi::PyFloat_AsDouble(obj);
            f.is_finite() && !(f.abs() >= INEXACT_INTEGERS_FROM && f.fract() == 0.0)
        } else if ffi::PyDict_CheckExact(obj) != 0 {
            if room == 0 {
                return false;
            }
            let (mut pos, mut key, mut item) = (0, std::ptr::null_mut(), std::ptr::null_mut());
            while ffi::PyDict_Next(obj, &mut pos, &mut key, &mut item) != 0 {
                if !objects_stand(item, room - 1) {
                    return false;
                }
            }
            true
        } else if ffi::PyList_CheckExact(obj) != 0 {
            room > 0
                && (0..ffi::PyList_Size(obj))
                    .all(|i| objects_stand(ffi::PyList_GetItem(obj, i), room - 1))
        } else {
            true
        }
    }
}

/// Whether objects jiter built hold a number past the range of a double: a float it read as
/// infinity (`1e400`), or an integer no double can come near. The walk is bounded like
/// `objects_stand`.
fn holds_out_of_range(value: &Bound<'_, PyAny>, room: usize) -> bool {
    if let Ok(f) = value.cast_exact::<PyFloat>() {
        !f.value().is_finite()
    } else if let Ok(i) = value.cast_exact::<PyInt>() {
        i.extract::<i64>().is_err() && i.extract::<f64>().is_err()
    } else if let Ok(d) = value.cast_exact::<PyDict>() {
        room > 0 && d.iter().any(|(_, v)| holds_out_of_range(&v, room - 1))
    } else if let Ok(l) = value.cast_exact::<PyList>() {
        room > 0 && l.iter().any(|v| holds_out_of_range(&v, room - 1))
    } else {
        false
    }
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

/// Empties jiter's bounded cache of Python key strings.
#[pyfunction]
pub fn cache_clear() {
    jiter::cache_clear();
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
