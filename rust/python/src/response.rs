//! parse_response: a model's whole reply (Ollama /api/chat or an OpenAI-compatible completion)
//! into checked tool calls, in one call. The reply's shape is walked here over the Python
//! objects orjson built (so valid arguments are parsed once); names, repair, text formats and
//! validation are the core's.

use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyInt, PyList, PyString, PyTuple};
use toolmend_core::extract::{check_name, FoundCall};
use toolmend_core::schema::Tool;
use toolmend_core::{ErrorCode, Limits};

use crate::convert::{
    input_bytes, load_json, orjson_dumps, orjson_loads, python_objects, LoadError, Repair,
};
use crate::registry::{walk, Budget, FieldError, PyToolRegistry};

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
    /// Where the call was found: "tool_calls" (the structured field) or a text format
    /// ("hermes", "mistral", "bare_json", ...).
    #[pyo3(get)]
    source: &'static str,
}

impl ToolCall {
    pub(crate) fn index(&self) -> usize {
        self.index
    }
}

#[pymethods]
impl ToolCall {
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
        Ok(format!(
            "ToolCall(id={}, name={}, arguments={}, index={}, source={:?}, repairs={})",
            self.id.bind(py).repr()?,
            self.name.bind(py).repr()?,
            self.arguments.bind(py).repr()?,
            self.index,
            self.source,
            self.log.len()
        ))
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

    fn __repr__(&self) -> String {
        format!(
            "ToolCallError(code={:?}, message={:?}, tool_name={:?}, position={:?}, index={})",
            self.code, self.message, self.tool_name, self.position, self.index
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
}

#[pymethods]
impl ParseResult {
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "ParseResult(ok={}, calls={}, errors={}, text={:?})",
            if self.ok { "True" } else { "False" },
            self.calls.bind(py).repr()?,
            self.errors.bind(py).repr()?,
            self.text
        ))
    }
}

/// A call failed: the fields of a ToolCallError, before it is built.
#[derive(Clone)]
pub(crate) struct Failure {
    pub(crate) code: ErrorCode,
    pub(crate) message: String,
    pub(crate) position: Option<usize>,
    pub(crate) validation: Vec<FieldError>,
    pub(crate) suggestion: String,
}

impl Failure {
    pub(crate) fn new(code: ErrorCode, message: impl Into<String>, suggestion: &str) -> Self {
        Failure {
            code,
            message: message.into(),
            position: None,
            validation: Vec::new(),
            suggestion: suggestion.into(),
        }
    }
}

pub(crate) struct Pipeline<'a, 'py> {
    py: Python<'py>,
    registry: Option<&'a PyToolRegistry>,
    limits: Limits,
    repair: bool,
    pub(crate) calls: Vec<ToolCall>,
    pub(crate) errors: Vec<ToolCallError>,
}

/// A call as found: on the wire or in text.
pub(crate) struct Candidate<'py> {
    pub(crate) id: Option<Bound<'py, PyString>>,
    pub(crate) name: Option<Bound<'py, PyAny>>,
    /// None: the call has no function at all (TLP-001).
    pub(crate) arguments: Option<Option<Bound<'py, PyAny>>>,
    /// The arguments as received, where `arguments` holds them already read and held to the
    /// limits (a stream's live view); None means they are `arguments`.
    pub(crate) raw: Option<Bound<'py, PyAny>>,
    pub(crate) index: usize,
    pub(crate) source: &'static str,
    pub(crate) log: Vec<toolmend_core::Repair>,
    /// Why the call's text could not be read at all (a text format whose JSON is beyond repair,
    /// a streamed call over the limits); reported once the name has been checked.
    pub(crate) unreadable: Option<Failure>,
}

impl<'py> Candidate<'py> {
    /// A call found in text.
    pub(crate) fn found(py: Python<'py>, call: FoundCall, index: usize) -> Self {
        let FoundCall {
            name,
            arguments,
            id,
            repairs,
            error,
            format,
            ..
        } = call;
        Candidate {
            id: id.map(|id| PyString::new(py, &id)),
            name: name.map(|n| PyString::new(py, &n).into_any()),
            arguments: Some(arguments.map(|a| PyString::new(py, &a).into_any())),
            raw: None,
            index,
            source: format,
            log: repairs,
            unreadable: error.as_ref().map(core_failure),
        }
    }
}

impl<'a, 'py> Pipeline<'a, 'py> {
    pub(crate) fn new(
        py: Python<'py>,
        registry: Option<&'a PyToolRegistry>,
        limits: Limits,
        repair: bool,
    ) -> Self {
        Pipeline {
            py,
            registry,
            limits,
            repair,
            calls: Vec::new(),
            errors: Vec::new(),
        }
    }

    pub(crate) fn run(&mut self, c: Candidate<'py>) -> PyResult<()> {
        let py_name = c.name.as_ref().and_then(|n| n.cast::<PyString>().ok());
        let name = py_name.map(|n| n.to_str()).transpose()?;
        let raw = c
            .raw
            .clone()
            .or_else(|| c.arguments.clone().flatten())
            .map(Bound::unbind);
        match self.check(&c, name) {
            Ok((arguments, log)) => {
                if c.source != "tool_calls" && self.repeats_a_call(name, &arguments) {
                    // Ollama can leave a call it parsed in the content too: it runs once.
                    return Ok(());
                }
                let mut all = c.log;
                all.extend(log);
                let py = self.py;
                self.calls.push(ToolCall {
                    id: c
                        .id
                        .map_or_else(|| PyString::new(py, &new_call_id()).unbind(), Bound::unbind),
                    name: py_name
                        .map_or_else(|| PyString::new(py, "").unbind(), |n| n.clone().unbind()),
                    arguments: arguments.unbind(),
                    raw,
                    log: all,
                    index: c.index,
                    source: c.source,
                });
            }
            Err(f) => {
                let tool_name = name.map(str::to_owned).or_else(|| {
                    c.name
                        .as_ref()
                        .and_then(|n| n.str().ok())
                        .map(|s| s.to_string())
                });
                self.errors.push(ToolCallError {
                    code: f.code.as_str(),
                    message: f.message,
                    tool_name,
                    raw,
                    position: f.position,
                    index: c.index,
                    validation: PyTuple::new(self.py, f.validation)?.unbind(),
                    suggestion: f.suggestion,
                });
            }
        }
        Ok(())
    }

    pub(crate) fn into_result(self, text: String) -> PyResult<ParseResult> {
        let ok = self.errors.is_empty();
        Ok(ParseResult {
            calls: PyTuple::new(self.py, self.calls)?.unbind(),
            errors: PyTuple::new(self.py, self.errors)?.unbind(),
            text,
            ok,
        })
    }

    fn repeats_a_call(&self, name: Option<&str>, arguments: &Bound<'py, PyAny>) -> bool {
        self.calls.iter().any(|call| {
            call.source == "tool_calls"
                && call.name.bind(self.py).to_str().ok() == name
                && call.arguments.bind(self.py).eq(arguments).unwrap_or(false)
        })
    }

    /// The checks in the order of the pipeline: function, name, arguments, tool, schema.
    fn check(
        &self,
        c: &Candidate<'py>,
        name: Option<&str>,
    ) -> Result<(Bound<'py, PyAny>, Vec<toolmend_core::Repair>), Failure> {
        let py = self.py;
        let Some(arguments) = &c.arguments else {
            return Err(Failure::new(
                ErrorCode::MissingFunction,
                "Tool call has no function: a function with a name is required",
                "send each call as {\"function\": {\"name\": ..., \"arguments\": {...}}}",
            ));
        };
        let name = match (name, &c.name) {
            (Some(n), _) => n,
            (None, Some(other)) if !other.is_none() => {
                return Err(Failure::new(
                    ErrorCode::InvalidName,
                    format!("Function name must be a string, not {}", type_name(other)),
                    "give the tool's name as a string",
                ));
            }
            (None, _) => {
                return Err(Failure::new(
                    ErrorCode::EmptyName,
                    "Function name is required: the call has no name",
                    "name the tool to call",
                ))
            }
        };
        check_name(name).map_err(|(code, message)| {
            Failure::new(
                code,
                message,
                "use the tool's name exactly as it was declared",
            )
        })?;
        if let Some(failure) = &c.unreadable {
            return Err(failure.clone());
        }
        // Looked up now, reported after the limits (the pipeline's order): a registry that will
        // validate a dict under the same limits walks it once for both.
        let tool = self.registry.map(|r| r.inner.get(name));
        let registry_walks = matches!(tool, Some(Ok(_)))
            && self
                .registry
                .is_some_and(|r| *r.inner.limits() == self.limits_no_deadline());
        let (value, log) = match arguments {
            None => (PyDict::new(py).into_any(), Vec::new()),
            // No walk for the limits where the registry walks anyway or the stream held them.
            Some(a) if a.is_instance_of::<PyDict>() && (registry_walks || c.raw.is_some()) => {
                (a.clone(), Vec::new())
            }
            Some(a) if a.is_instance_of::<PyDict>() => {
                let mut budget = Budget {
                    bytes: self.limits.max_size,
                    max_depth: self.limits.max_depth,
                };
                if let Err(v) = walk::<false>(a, 0, &String::new, &mut budget) {
                    return Err(Failure {
                        position: None,
                        ..Failure::new(v.code, v.message, &v.suggestion)
                    });
                }
                (a.clone(), Vec::new())
            }
            Some(a) if a.is_instance_of::<PyString>() || a.is_instance_of::<PyBytes>() => {
                self.parse_arguments(a)?
            }
            Some(a) => {
                return Err(Failure::new(
                    ErrorCode::Unparseable,
                    format!("Arguments must be a JSON object, not {}", type_name(a)),
                    "send the arguments as one JSON object",
                ));
            }
        };
        if !value.is_instance_of::<PyDict>() {
            return Err(Failure::new(
                ErrorCode::Unparseable,
                format!("Arguments must be a JSON object, not {}", type_name(&value)),
                "send the arguments as one JSON object",
            ));
        }
        if let (Some(registry), Some(tool)) = (self.registry, tool) {
            let tool = tool
                .map_err(|e| Failure::new(e.code, e.message, "call one of the registered tools"))?;
            self.validate(registry, &tool, &value, name)?;
        }
        Ok((value, log))
    }

    /// The limits without the repair deadline, as a registry holds them.
    fn limits_no_deadline(&self) -> Limits {
        Limits {
            timeout_ms: 0,
            ..self.limits
        }
    }

    /// JSON text arguments: orjson for valid text, the repair pass (when allowed) for the rest.
    fn parse_arguments(
        &self,
        text: &Bound<'py, PyAny>,
    ) -> Result<(Bound<'py, PyAny>, Vec<toolmend_core::Repair>), Failure> {
        let py = self.py;
        let bytes = input_bytes(text)
            .map_err(|e| Failure::new(ErrorCode::Unparseable, e.to_string(), ""))?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            // OpenAI-compatible servers send "" for a call without arguments.
            return Ok((PyDict::new(py).into_any(), Vec::new()));
        }
        match load_json(py, text, &bytes, &self.limits, self.repair) {
            Ok(Ok(loaded)) => Ok(loaded),
            Ok(Err(LoadError::Core(e))) => Err(core_failure(&e)),
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
        registry: &PyToolRegistry,
        tool: &Arc<Tool>,
        value: &Bound<'py, PyAny>,
        name: &str,
    ) -> Result<(), Failure> {
        match registry.check(self.py, tool, value) {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(violations)) => {
                let first = violations[0].code;
                let message = format!(
                    "Arguments of '{name}' do not match its schema: {} error{} ({}: {})",
                    violations.len(),
                    if violations.len() == 1 { "" } else { "s" },
                    violations[0].path,
                    violations[0].message
                );
                let suggestion = violations[0].suggestion.clone();
                Err(Failure {
                    validation: violations.into_iter().map(FieldError::from).collect(),
                    ..Failure::new(first, message, &suggestion)
                })
            }
            Err(e) => Err(Failure::new(ErrorCode::CallConstruction, e.to_string(), "")),
        }
    }
}

pub(crate) fn core_failure(e: &toolmend_core::Error) -> Failure {
    Failure {
        position: Some(e.position),
        ..Failure::new(
            e.code(),
            format!("Arguments could not be parsed: {e}"),
            e.suggestion(),
        )
    }
}

fn type_name(v: &Bound<'_, PyAny>) -> String {
    if v.is_none() {
        return "null".into();
    }
    v.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".into())
}

/// "call_" and 16 hex digits, unique in the process (a counter mixed with a per-process key).
fn new_call_id() -> String {
    static KEY: OnceLock<RandomState> = OnceLock::new();
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!(
        "call_{:016x}",
        KEY.get_or_init(RandomState::new).hash_one(n)
    )
}

/// `d[key]` unless missing or None. Keys are interned once (`intern!`), so a lookup hashes no
/// new string.
pub(crate) fn get<'py>(
    d: &Bound<'py, PyDict>,
    key: &Bound<'py, PyString>,
) -> Option<Bound<'py, PyAny>> {
    d.get_item(key).ok().flatten().filter(|v| !v.is_none())
}

pub(crate) fn int_of(v: Option<Bound<'_, PyAny>>) -> Option<usize> {
    v.filter(|v| v.is_instance_of::<PyInt>())
        .and_then(|v| v.extract::<usize>().ok())
}

/// The assistant message of a reply: Ollama's `message`, OpenAI's `choices[0].message` (or a
/// stream chunk's `delta`), or the dict itself when it is a message.
fn message_of<'py>(reply: &Bound<'py, PyDict>) -> Option<Bound<'py, PyDict>> {
    let py = reply.py();
    if let Some(choices) = get(reply, intern!(py, "choices")) {
        let first = choices.cast::<PyList>().ok()?.get_item(0).ok()?;
        let first = first.cast::<PyDict>().ok()?;
        return get(first, intern!(py, "message"))
            .or_else(|| get(first, intern!(py, "delta")))
            .and_then(|m| m.cast_into::<PyDict>().ok());
    }
    if let Some(message) = get(reply, intern!(py, "message")) {
        return message.cast_into::<PyDict>().ok();
    }
    Some(reply.clone())
}

/// The reply as a dict, or as the text of a message when it is not JSON.
enum Reply<'py> {
    Json(Bound<'py, PyDict>),
    Text(String),
}

fn read_reply<'py>(
    py: Python<'py>,
    body: &Bound<'py, PyAny>,
    limits: &Limits,
) -> PyResult<Reply<'py>> {
    if let Ok(d) = body.cast::<PyDict>() {
        return Ok(Reply::Json(d.clone()));
    }
    if let Some(value) = orjson_loads(py, body)? {
        if let Ok(d) = value.cast_into::<PyDict>() {
            return Ok(Reply::Json(d));
        }
    }
    let bytes = input_bytes(body)?;
    let text = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(&bytes);
    if text.len() != bytes.len() {
        if let Some(Ok(d)) =
            orjson_loads(py, PyBytes::new(py, text).as_any())?.map(|v| v.cast_into::<PyDict>())
        {
            return Ok(Reply::Json(d));
        }
    }
    if let Some(merged) = streamed_message(py, text)? {
        return Ok(Reply::Json(merged));
    }
    // A reply cut off or broken on the way: mended like arguments, if it then reads as a reply.
    if text.trim_ascii_start().starts_with(b"{") {
        if let Ok(repaired) = toolmend_core::repair(text, limits) {
            let parsed = python_objects(py, repaired.json.as_bytes());
            if let Ok(Ok(d)) = parsed.map(|v| v.cast_into::<PyDict>()) {
                let py_keys = [
                    intern!(py, "message"),
                    intern!(py, "choices"),
                    intern!(py, "tool_calls"),
                ];
                if py_keys.iter().any(|k| d.contains(k).unwrap_or(false)) {
                    return Ok(Reply::Json(d));
                }
            }
        }
    }
    // Not a JSON reply: the text a model wrote (a raw completion, or content copied out).
    Ok(Reply::Text(String::from_utf8_lossy(text).into_owned()))
}

/// Ollama's streamed reply (one JSON object per line, its default) as one message: the content
/// of every line joined and the tool calls of every line in order. None when the text is not
/// such a stream. A last line cut off mid-object is left out.
fn streamed_message<'py>(py: Python<'py>, text: &[u8]) -> PyResult<Option<Bound<'py, PyDict>>> {
    let lines: Vec<&[u8]> = text
        .split(|&b| b == b'\n')
        .map(<[u8]>::trim_ascii)
        .filter(|l| !l.is_empty())
        .collect();
    if lines.len() < 2 || !lines[0].starts_with(b"{") {
        return Ok(None);
    }
    let mut content = String::new();
    let tool_calls = PyList::empty(py);
    for (i, line) in lines.iter().enumerate() {
        let parsed = orjson_loads(py, PyBytes::new(py, line).as_any())?
            .and_then(|v| v.cast_into::<PyDict>().ok());
        let Some(chunk) = parsed else {
            if i + 1 == lines.len() {
                break;
            }
            return Ok(None);
        };
        let Some(message) =
            message_of(&chunk).filter(|_| chunk.contains(intern!(py, "message")).unwrap_or(false))
        else {
            continue;
        };
        if let Some(c) =
            get(&message, intern!(py, "content")).and_then(|c| c.cast_into::<PyString>().ok())
        {
            content.push_str(c.to_str()?);
        }
        if let Some(calls) =
            get(&message, intern!(py, "tool_calls")).and_then(|c| c.cast_into::<PyList>().ok())
        {
            for call in calls.iter() {
                tool_calls.append(call)?;
            }
        }
    }
    let message = PyDict::new(py);
    message.set_item("role", "assistant")?;
    message.set_item("content", content)?;
    message.set_item("tool_calls", tool_calls)?;
    let reply = PyDict::new(py);
    reply.set_item("message", message)?;
    Ok(Some(reply))
}

/// Turns a model's reply into checked tool calls; see the Python docstring.
#[pyfunction]
#[pyo3(signature = (body, registry=None, *, repair=true, text_calls=true, max_size=1_048_576, max_depth=64, timeout_ms=100))]
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
    let limits = Limits {
        max_size,
        max_depth,
        timeout_ms,
    };
    let mut pipeline = Pipeline::new(py, registry.as_deref(), limits, repair);
    let (message, content) = match read_reply(py, body, &limits)? {
        Reply::Json(reply) => {
            let message = message_of(&reply);
            let content = message
                .as_ref()
                .and_then(|m| get(m, intern!(py, "content")))
                .and_then(|c| c.cast_into::<PyString>().ok())
                .map(|c| c.to_str().map(str::to_owned))
                .transpose()?;
            (message, content)
        }
        Reply::Text(text) => (None, Some(text)),
    };
    let mut next_index = 0;
    if let Some(tool_calls) = message
        .as_ref()
        .and_then(|m| get(m, intern!(py, "tool_calls")))
    {
        let entries: Vec<Bound<'py, PyAny>> = match tool_calls.cast::<PyList>() {
            Ok(list) => list.iter().collect(),
            Err(_) => vec![tool_calls],
        };
        for (position, entry) in entries.into_iter().enumerate() {
            let entry = entry.cast_into::<PyDict>().ok();
            let function = entry
                .as_ref()
                .and_then(|e| get(e, intern!(py, "function")))
                .and_then(|f| f.cast_into::<PyDict>().ok());
            let index = int_of(function.as_ref().and_then(|f| get(f, intern!(py, "index"))))
                .or_else(|| int_of(entry.as_ref().and_then(|e| get(e, intern!(py, "index")))))
                .unwrap_or(position);
            next_index = next_index.max(index + 1);
            let id = entry
                .as_ref()
                .and_then(|e| get(e, intern!(py, "id")))
                .and_then(|id| id.str().ok());
            pipeline.run(Candidate {
                id,
                name: function.as_ref().and_then(|f| get(f, intern!(py, "name"))),
                arguments: function.as_ref().map(|f| get(f, intern!(py, "arguments"))),
                raw: None,
                index,
                source: "tool_calls",
                log: Vec::new(),
                unreadable: None,
            })?;
        }
    }
    let text = match content {
        Some(content) if text_calls && !content.is_empty() => {
            let found = match pipeline.registry {
                Some(r) => {
                    let inner = Arc::clone(&r.inner);
                    let is_tool = move |name: &str| inner.get(name).is_ok();
                    toolmend_core::extract::text_calls(&content, &limits, Some(&is_tool))
                }
                None => toolmend_core::extract::text_calls(&content, &limits, None),
            };
            for (i, call) in found.calls.into_iter().enumerate() {
                pipeline.run(Candidate::found(py, call, next_index + i))?;
            }
            found.text
        }
        Some(content) => content,
        None => String::new(),
    };
    pipeline.into_result(text)
}
