//! The core pipeline in Python: `parse_response` (a model's whole reply, Ollama /api/chat or an
//! OpenAI-compatible completion, into checked tool calls in one call), the result classes every
//! pipeline run gives, and the pipeline's host over Python objects (argument text parsed once:
//! orjson for valid text, the repair pass and jiter for the rest; dicts walked for the limits
//! without copying; validation by the registry in place). The reply's shape and the checks are
//! the core's (wire, pipeline).

use std::borrow::Cow;
use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use toolmend_core::extract::Formats;
use toolmend_core::pipeline::{
    check_reply, new_call_id, CallSource, Candidate, CheckedCall, Failure, Host, MessageText,
    Pipeline, RejectedCall,
};
use toolmend_core::schema::{Registry, Tool, Violation};
use toolmend_core::walk::Budget;
use toolmend_core::{ErrorCode, Limits};

use crate::convert::{all_untracked, bounded_input, orjson_dumps, sorted_json, untracked};
use crate::repair::{load_json, repair_list, LoadError, Repair};
use crate::schema::{field_errors, FieldError, PyToolRegistry};
use crate::walk::check_limits;
use crate::wire::{plain, read_reply, Obj};
use toolmend_core::loads::Mending;

/// Arguments as the model gave them: JSON text (the str itself, whatever it holds), or an object
/// (Ollama), whose text is made only when asked for.
fn raw_text<'py>(py: Python<'py>, raw: &Option<Py<PyAny>>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let Some(raw) = raw else { return Ok(None) };
    let raw = raw.bind(py);
    if raw.is_instance_of::<PyString>() {
        return Ok(Some(raw.clone()));
    }
    let text = match orjson_dumps(py, raw) {
        Ok(text) => text,
        Err(_) => raw.repr()?.to_string(),
    };
    Ok(Some(PyString::new(py, &text).into_any()))
}

/// One tool call, ready to execute: its arguments are a dict that matched the tool's schema
/// (when a registry was given).
#[pyclass(module = "toolmend", frozen)]
pub struct ToolCall {
    // Python strings, kept as the reply gave them: no copy on the way in or out.
    #[pyo3(get)]
    id: Py<PyString>,
    /// The registered tool's name (a registry finds a tool whatever the case of the name).
    #[pyo3(get)]
    name: Py<PyString>,
    /// The name as the model wrote it: `name` itself unless the model wrote it in another case.
    #[pyo3(get)]
    raw_name: Py<PyString>,
    #[pyo3(get)]
    arguments: Py<PyAny>,
    /// The arguments as the reply gave them (text, or Ollama's object), for pickling.
    #[pyo3(get, name = "_raw")]
    raw: Option<Py<PyAny>>,
    log: Vec<toolmend_core::Repair>,
    /// Position among the reply's calls (the wire's index when it gave one).
    #[pyo3(get)]
    index: usize,
    /// Which choice of a multi-choice reply the call came from (0 for a reply with one).
    #[pyo3(get)]
    choice: usize,
    /// The arguments were cut off and mended into what they held (taken with allow_truncated).
    #[pyo3(get)]
    truncated: bool,
    /// Where the call was found: "tool_calls" (the structured field), "stream", or a text
    /// format ("hermes", "mistral", "bare_json", ...). Interned: one str per format. `source` is
    /// its CallSource member (toolmend/_records.py).
    #[pyo3(get, name = "_source")]
    source: Py<PyString>,
}

impl ToolCall {
    pub(crate) fn from_checked(py: Python<'_>, call: CheckedCall<Obj<'_>>) -> Self {
        let name = call
            .name
            .0
            .cast_into::<PyString>()
            .map_or_else(|_| PyString::new(py, "").unbind(), Bound::unbind);
        let raw_name = call
            .raw_name
            .and_then(|n| n.0.cast_into::<PyString>().ok())
            .map_or_else(|| name.clone_ref(py), Bound::unbind);
        ToolCall {
            id: call
                .id
                .and_then(|id| id.0.str().ok())
                .map_or_else(|| PyString::new(py, &new_call_id()).unbind(), Bound::unbind),
            name,
            raw_name,
            arguments: call.arguments.0.unbind(),
            raw: call.raw.map(|raw| raw.0.unbind()),
            log: call.repairs,
            index: call.index,
            choice: call.choice,
            truncated: call.truncated,
            source: source_name(py, call.source),
        }
    }
}

/// A call's source as a Python str, interned (a reply's calls share a handful of them).
fn source_name(py: Python<'_>, source: CallSource) -> Py<PyString> {
    PyString::intern(py, source.as_str()).unbind()
}

#[pymethods]
impl ToolCall {
    /// A call built by hand (to test an agent, or to replay one); `repairs` are Repair objects.
    /// The arguments object is kept as given; `raw_name` is `name` unless given.
    #[new]
    #[pyo3(signature = (name, arguments, id=None, index=0, source="tool_calls", raw_arguments=None, repairs=Vec::new(), choice=0, truncated=false, raw_name=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        name: Bound<'_, PyString>,
        arguments: Py<PyAny>,
        id: Option<Bound<'_, PyString>>,
        index: usize,
        source: &str,
        raw_arguments: Option<Py<PyAny>>,
        repairs: Vec<PyRef<'_, Repair>>,
        choice: usize,
        truncated: bool,
        raw_name: Option<Bound<'_, PyString>>,
    ) -> PyResult<Self> {
        let source = CallSource::from_name(source)
            .ok_or_else(|| PyValueError::new_err(format!("not a call source: {source:?}")))?;
        Ok(ToolCall {
            id: id.map_or_else(|| PyString::new(py, &new_call_id()).unbind(), Bound::unbind),
            raw_name: raw_name.unwrap_or_else(|| name.clone()).unbind(),
            name: name.unbind(),
            arguments,
            raw: raw_arguments,
            log: repairs.iter().map(|r| r.to_core()).collect(),
            index,
            choice,
            truncated,
            source: source_name(py, source),
        })
    }

    /// The arguments as the model wrote them (text; an object given by Ollama is serialised).
    #[getter]
    fn raw_arguments<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(raw_text(py, &self.raw)?.unwrap_or_else(|| PyString::new(py, "").into_any()))
    }

    /// The repairs applied to the arguments (or to the text around a call written in text).
    #[getter]
    fn repairs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        repair_list(py, &self.log)
    }
}

/// Why one call of a reply could not be used. The other calls are not affected.
#[pyclass(module = "toolmend", frozen)]
pub struct ToolCallError {
    #[pyo3(get)]
    code: &'static str,
    #[pyo3(get)]
    message: String,
    /// The id the reply gave the call (to answer it by), None when it gave none.
    #[pyo3(get)]
    id: Option<Py<PyString>>,
    #[pyo3(get)]
    tool_name: Option<String>,
    raw: Option<Py<PyAny>>,
    /// Byte offset of the fault in the raw arguments (or in the content, for a call written in
    /// text that could not be read); None when the fault has no place.
    #[pyo3(get)]
    position: Option<usize>,
    #[pyo3(get)]
    index: usize,
    /// Which choice of a multi-choice reply the call came from.
    #[pyo3(get)]
    choice: usize,
    /// For a call cut off (TLP-010): its arguments mended into what they held; else None.
    #[pyo3(get)]
    arguments: Option<Py<PyAny>>,
    /// The schema errors (FieldError) when the arguments did not match the tool's schema.
    #[pyo3(get)]
    validation: Py<PyTuple>,
    #[pyo3(get)]
    suggestion: String,
    /// For a call found in the reply's text: that text as the model wrote it (the call's block,
    /// markers included), so that whoever hands the reply on can put it back as text. None for a
    /// `tool_calls` entry.
    #[pyo3(get)]
    written: Option<String>,
}

impl ToolCallError {
    pub(crate) fn from_rejected(py: Python<'_>, rejected: RejectedCall<Obj<'_>>) -> PyResult<Self> {
        let failure = rejected.failure;
        Ok(ToolCallError {
            code: failure.code.as_str(),
            message: failure.message,
            id: rejected
                .id
                .and_then(|id| id.0.str().ok())
                .map(Bound::unbind),
            tool_name: rejected.tool_name,
            raw: rejected.raw.map(|raw| raw.0.unbind()),
            position: failure.position,
            index: rejected.index,
            choice: rejected.choice,
            arguments: rejected.partial.map(|p| p.0.unbind()),
            validation: field_errors(py, failure.violations)?.unbind(),
            suggestion: failure.suggestion,
            written: rejected.written.map(|text| text.to_string()),
        })
    }
}

#[pymethods]
impl ToolCallError {
    /// An error built by hand (to test an agent, or to replay one); `code` is one of the
    /// catalogue's.
    #[new]
    #[pyo3(signature = (code, message, tool_name=None, raw_arguments=None, position=None, index=0, validation=None, suggestion=String::new(), choice=0, arguments=None, id=None, written=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        code: &str,
        message: String,
        tool_name: Option<String>,
        raw_arguments: Option<Py<PyAny>>,
        position: Option<usize>,
        index: usize,
        validation: Option<Vec<Py<FieldError>>>,
        suggestion: String,
        choice: usize,
        arguments: Option<Py<PyAny>>,
        id: Option<Py<PyString>>,
        written: Option<String>,
    ) -> PyResult<Self> {
        let code = ErrorCode::from_code(code)
            .ok_or_else(|| PyValueError::new_err(format!("not an error code: {code:?}")))?;
        Ok(ToolCallError {
            code: code.as_str(),
            message,
            id,
            tool_name,
            raw: raw_arguments,
            position,
            index,
            choice,
            arguments,
            validation: PyTuple::new(py, validation.unwrap_or_default())?.unbind(),
            suggestion,
            written,
        })
    }

    #[getter]
    fn raw_arguments<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        raw_text(py, &self.raw)
    }
}

/// Everything found in a reply: the calls that can run, the errors of those that cannot, and the
/// text with the calls cut out. `ok` is True when no call failed.
#[pyclass(module = "toolmend", frozen, get_all)]
pub struct ParseResult {
    calls: Py<PyTuple>,
    errors: Py<PyTuple>,
    text: String,
    ok: bool,
    /// How many calls stood in the text only quoted (an echoed tool result, inline code, a fence
    /// amid prose): they are left in `text` and never run.
    quoted: usize,
    /// Where each of those stood and why it was not taken: `(position, reason)` pairs.
    notes: Py<PyTuple>,
    /// The model's reasoning: the reply's reasoning fields and think blocks, never in `text`,
    /// never a source of calls.
    reasoning: String,
    /// Where the calls written in the text were cut out of `text`, the first and the last
    /// (indices into the str), for `split_content`; None when it held none.
    _calls_at: Option<(usize, usize)>,
}

#[pymethods]
impl ParseResult {
    /// A result built by hand (to test an agent); `ok` is whether `errors` is empty.
    #[new]
    #[pyo3(signature = (calls=Vec::new(), errors=Vec::new(), text=String::new(), quoted=0, reasoning=String::new(), notes=Vec::new()))]
    fn new(
        py: Python<'_>,
        calls: Vec<Py<ToolCall>>,
        errors: Vec<Py<ToolCallError>>,
        text: String,
        quoted: usize,
        reasoning: String,
        notes: Vec<(usize, String)>,
    ) -> PyResult<Self> {
        Ok(ParseResult {
            ok: errors.is_empty(),
            calls: PyTuple::new(py, calls)?.unbind(),
            errors: PyTuple::new(py, errors)?.unbind(),
            text,
            quoted,
            notes: PyTuple::new(py, notes)?.unbind(),
            reasoning,
            _calls_at: None,
        })
    }
}

impl ParseResult {
    /// The outcome of a pipeline run: its calls and errors as result classes, and the text.
    pub(crate) fn from_pipeline(
        py: Python<'_>,
        pipeline: Pipeline<'_, PyHost<'_, '_>>,
        said: MessageText,
    ) -> PyResult<Py<Self>> {
        let quoted = pipeline.quoted;
        let notes = pipeline.notes.iter().map(|n| (n.position, n.reason));
        let notes = PyTuple::new(py, notes)?.unbind();
        let calls = all_untracked(
            py,
            pipeline
                .calls
                .into_iter()
                .map(|c| ToolCall::from_checked(py, c)),
        )?;
        let errors = pipeline
            .errors
            .into_iter()
            .map(|e| ToolCallError::from_rejected(py, e))
            .collect::<PyResult<Vec<_>>>()?;
        let errors = all_untracked(py, errors)?;
        let ok = errors.is_empty();
        // Python indexes a str by character.
        let index = |byte: usize| said.text.get(..byte).unwrap_or(&said.text).chars().count();
        let calls_at = said
            .calls_at
            .map(|(first, last)| (index(first), index(last)));
        let result = ParseResult {
            calls: PyTuple::new(py, calls)?.unbind(),
            errors: PyTuple::new(py, errors)?.unbind(),
            text: said.text,
            ok,
            quoted,
            notes,
            reasoning: said.reasoning,
            _calls_at: calls_at,
        };
        untracked(py, result)
    }
}

/// Turns a model's reply into checked tool calls; see the Python docstring.
#[pyfunction]
#[pyo3(signature = (body, registry=None, *, repair=true, text_calls=None, max_size=Limits::DEFAULT.max_size, max_depth=Limits::DEFAULT.max_depth, timeout_ms=Limits::DEFAULT.timeout_ms, allow_truncated=false))]
#[allow(clippy::too_many_arguments)]
pub fn parse_response<'py>(
    py: Python<'py>,
    body: &Bound<'py, PyAny>,
    registry: Option<PyRef<'py, PyToolRegistry>>,
    repair: bool,
    text_calls: Option<&Bound<'py, PyAny>>,
    max_size: usize,
    max_depth: usize,
    timeout_ms: u64,
    allow_truncated: bool,
) -> PyResult<Py<ParseResult>> {
    let limits = crate::convert::limits(max_size, max_depth, timeout_ms)?;
    let formats = text_calls.map_or(Ok(Formats::default()), crate::convert::formats)?;
    let host = PyHost::new(py, registry.as_deref());
    let mut pipeline = Pipeline::new(&host, limits, repair).allow_truncated(allow_truncated);
    let reply = read_reply(py, body, &limits)?;
    let said = check_reply(&mut pipeline, reply, formats)?;
    ParseResult::from_pipeline(py, pipeline, said)
}

/// Checks one call given by its name and arguments as a call of a reply is checked; see the
/// Python docstring.
#[pyfunction]
#[pyo3(signature = (name, arguments, registry=None, *, repair=true, max_size=Limits::DEFAULT.max_size, max_depth=Limits::DEFAULT.max_depth, timeout_ms=Limits::DEFAULT.timeout_ms, allow_truncated=false))]
#[allow(clippy::too_many_arguments)]
pub fn check_call<'py>(
    py: Python<'py>,
    name: &Bound<'py, PyAny>,
    arguments: &Bound<'py, PyAny>,
    registry: Option<PyRef<'py, PyToolRegistry>>,
    repair: bool,
    max_size: usize,
    max_depth: usize,
    timeout_ms: u64,
    allow_truncated: bool,
) -> PyResult<Py<ParseResult>> {
    let limits = crate::convert::limits(max_size, max_depth, timeout_ms)?;
    let host = PyHost::new(py, registry.as_deref());
    let mut pipeline = Pipeline::new(&host, limits, repair).allow_truncated(allow_truncated);
    let (name, arguments) = (Obj(plain(name.clone())), Obj(plain(arguments.clone())));
    pipeline.run(Candidate::given(name, arguments, 0))?;
    ParseResult::from_pipeline(py, pipeline, Default::default())
}

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
        check_limits(&object.0, &mut budget)
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
    ) -> Result<(Obj<'py>, Vec<toolmend_core::Repair>), Failure> {
        let mending = if repair {
            Mending::Logged
        } else {
            Mending::Off
        };
        match load_json(self.py, &text.0, bytes, limits, mending) {
            Ok(Ok((value, repairs))) => Ok((Obj(value), repairs)),
            Ok(Err(LoadError::Core(e))) => Err(Failure::unparsed(&e)),
            Ok(Err(LoadError::Build(e))) => Err(Failure {
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
