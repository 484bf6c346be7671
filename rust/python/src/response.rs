//! parse_response: a model's whole reply (Ollama /api/chat or an OpenAI-compatible completion)
//! into checked tool calls, in one call, and the result classes every pipeline run gives. The
//! reply's shape and the checks are the core's (wire, pipeline); here Python objects go in and
//! result classes come out.

use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};
use toolmend_core::pipeline::{
    check_reply, new_call_id, CallSource, CheckedCall, Pipeline, RejectedCall,
};
use toolmend_core::Limits;

use crate::convert::{class_repr, orjson_dumps, py_value, Repair};
use crate::pipeline::PyHost;
use crate::registry::{FieldError, PyToolRegistry};
use crate::wire::{read_reply, Obj};

/// Arguments as the model gave them: JSON text, or an object (Ollama). Text for the object is
/// made only when asked for.
fn raw_text(py: Python<'_>, raw: &Option<Py<PyAny>>) -> PyResult<Option<String>> {
    let Some(raw) = raw else { return Ok(None) };
    let raw = raw.bind(py);
    if let Ok(s) = raw.cast::<PyString>() {
        return Ok(Some(s.to_str()?.to_owned()));
    }
    match orjson_dumps(py, raw) {
        Ok(text) => Ok(Some(text)),
        Err(_) => Ok(Some(raw.repr()?.to_string())),
    }
}

/// One tool call, ready to execute: its arguments are a dict that matched the tool's schema
/// (when a registry was given).
#[pyclass(module = "toolmend", frozen)]
pub struct ToolCall {
    // Python strings, kept as the reply gave them: no copy on the way in or out.
    #[pyo3(get)]
    id: Py<PyString>,
    #[pyo3(get)]
    name: Py<PyString>,
    #[pyo3(get)]
    arguments: Py<PyAny>,
    raw: Option<Py<PyAny>>,
    log: Vec<toolmend_core::Repair>,
    /// Position among the reply's calls (the wire's index when it gave one).
    #[pyo3(get)]
    index: usize,
    source: CallSource,
}

impl ToolCall {
    pub(crate) fn index(&self) -> usize {
        self.index
    }

    fn from_checked(py: Python<'_>, call: CheckedCall<Obj<'_>>) -> Self {
        ToolCall {
            id: call
                .id
                .and_then(|id| id.0.str().ok())
                .map_or_else(|| PyString::new(py, &new_call_id()).unbind(), Bound::unbind),
            name: call
                .name
                .0
                .cast_into::<PyString>()
                .map_or_else(|_| PyString::new(py, "").unbind(), Bound::unbind),
            arguments: call.arguments.0.unbind(),
            raw: call.raw.map(|raw| raw.0.unbind()),
            log: call.repairs,
            index: call.index,
            source: call.source,
        }
    }
}

#[pymethods]
impl ToolCall {
    /// Where the call was found: "tool_calls" (the structured field), "stream", or a text
    /// format ("hermes", "mistral", "bare_json", ...).
    #[getter]
    fn source(&self) -> &'static str {
        self.source.as_str()
    }

    /// The arguments as the model wrote them (text; an object given by Ollama is serialised).
    #[getter]
    fn raw_arguments(&self, py: Python<'_>) -> PyResult<String> {
        Ok(raw_text(py, &self.raw)?.unwrap_or_default())
    }

    /// The repairs applied to the arguments (or to the text around a call written in text).
    #[getter]
    fn repairs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.log.iter().map(Repair::from))
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        class_repr(
            py,
            "ToolCall",
            vec![
                ("id", self.id.bind(py).clone().into_any()),
                ("name", self.name.bind(py).clone().into_any()),
                ("arguments", self.arguments.bind(py).clone()),
                ("index", py_value(py, self.index)?),
                ("source", py_value(py, self.source.as_str())?),
                ("repairs", py_value(py, self.log.len())?),
            ],
        )
    }
}

/// Why one call of a reply could not be used. The other calls are not affected.
#[pyclass(module = "toolmend", frozen)]
pub struct ToolCallError {
    #[pyo3(get)]
    code: &'static str,
    #[pyo3(get)]
    message: String,
    #[pyo3(get)]
    tool_name: Option<String>,
    raw: Option<Py<PyAny>>,
    /// Byte offset of the fault in the raw arguments (or in the content, for a call written in
    /// text that could not be read); None when the fault has no place.
    #[pyo3(get)]
    position: Option<usize>,
    #[pyo3(get)]
    index: usize,
    /// The schema errors (FieldError) when the arguments did not match the tool's schema.
    #[pyo3(get)]
    validation: Py<PyTuple>,
    #[pyo3(get)]
    suggestion: String,
}

impl ToolCallError {
    pub(crate) fn index(&self) -> usize {
        self.index
    }

    fn from_rejected(py: Python<'_>, rejected: RejectedCall<Obj<'_>>) -> PyResult<Self> {
        let failure = rejected.failure;
        Ok(ToolCallError {
            code: failure.code.as_str(),
            message: failure.message,
            tool_name: rejected.tool_name,
            raw: rejected.raw.map(|raw| raw.0.unbind()),
            position: failure.position,
            index: rejected.index,
            validation: PyTuple::new(py, failure.violations.into_iter().map(FieldError::from))?
                .unbind(),
            suggestion: failure.suggestion,
        })
    }
}

#[pymethods]
impl ToolCallError {
    #[getter]
    fn raw_arguments(&self, py: Python<'_>) -> PyResult<Option<String>> {
        raw_text(py, &self.raw)
    }

    fn __str__(&self) -> String {
        match &self.tool_name {
            Some(name) => format!(
                "[{}] call {} ({name}): {}",
                self.code, self.index, self.message
            ),
            None => format!("[{}] call {}: {}", self.code, self.index, self.message),
        }
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        class_repr(
            py,
            "ToolCallError",
            vec![
                ("code", py_value(py, self.code)?),
                ("message", py_value(py, &self.message)?),
                ("tool_name", py_value(py, &self.tool_name)?),
                ("position", py_value(py, self.position)?),
                ("index", py_value(py, self.index)?),
            ],
        )
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
}

#[pymethods]
impl ParseResult {
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        class_repr(
            py,
            "ParseResult",
            vec![
                ("ok", py_value(py, self.ok)?),
                ("calls", self.calls.bind(py).clone().into_any()),
                ("errors", self.errors.bind(py).clone().into_any()),
                ("text", py_value(py, &self.text)?),
            ],
        )
    }
}

impl ParseResult {
    /// The outcome of a pipeline run: its calls and errors as result classes, and the text.
    pub(crate) fn from_pipeline(
        py: Python<'_>,
        pipeline: Pipeline<'_, PyHost<'_, '_>>,
        text: String,
    ) -> PyResult<Self> {
        let quoted = pipeline.quoted;
        let (calls, errors) = into_classes(py, pipeline)?;
        let ok = errors.is_empty();
        Ok(ParseResult {
            calls: PyTuple::new(py, calls)?.unbind(),
            errors: PyTuple::new(py, errors)?.unbind(),
            text,
            ok,
            quoted,
        })
    }
}

/// A pipeline run's calls and errors as result classes.
pub(crate) fn into_classes(
    py: Python<'_>,
    pipeline: Pipeline<'_, PyHost<'_, '_>>,
) -> PyResult<(Vec<ToolCall>, Vec<ToolCallError>)> {
    let calls = pipeline
        .calls
        .into_iter()
        .map(|c| ToolCall::from_checked(py, c))
        .collect();
    let errors = pipeline
        .errors
        .into_iter()
        .map(|e| ToolCallError::from_rejected(py, e))
        .collect::<PyResult<_>>()?;
    Ok((calls, errors))
}

/// Turns a model's reply into checked tool calls; see the Python docstring.
#[pyfunction]
#[pyo3(signature = (body, registry=None, *, repair=true, text_calls=true, max_size=Limits::DEFAULT.max_size, max_depth=Limits::DEFAULT.max_depth, timeout_ms=Limits::DEFAULT.timeout_ms))]
#[allow(clippy::too_many_arguments)]
pub fn parse_response<'py>(
    py: Python<'py>,
    body: &Bound<'py, PyAny>,
    registry: Option<PyRef<'py, PyToolRegistry>>,
    repair: bool,
    text_calls: bool,
    max_size: usize,
    max_depth: usize,
    timeout_ms: u64,
) -> PyResult<ParseResult> {
    let limits = crate::convert::limits(max_size, max_depth, timeout_ms)?;
    let host = PyHost::new(py, registry.as_deref());
    let mut pipeline = Pipeline::new(&host, limits, repair);
    let message = read_reply(py, body, &limits)?;
    let text = check_reply(&mut pipeline, message, text_calls)?;
    ParseResult::from_pipeline(py, pipeline, text)
}
