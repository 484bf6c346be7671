//! ToolCallAccumulator: streamed chunks (OpenAI deltas, Ollama NDJSON lines, raw SSE or NDJSON
//! bytes, ToolCallDelta) read into wire-neutral fragments for the core's accumulator; assembled
//! calls go through the same checks as parse_response.

use jiter::{PartialMode, PythonParse, StringCacheMode};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};
use toolmend_core::partial::{Reader, Token};
use toolmend_core::stream::{Accumulator, Delta, Event};
use toolmend_core::{ErrorCode, Limits};

use crate::convert::{input_bytes, orjson_dumps, orjson_loads, python_objects};
use crate::exceptions::parse_error;
use crate::registry::PyToolRegistry;
use crate::response::{get, int_of, Candidate, Failure, ParseResult, Pipeline};

/// One fragment of one tool call, for callers that read the wire themselves.
#[pyclass(module = "toolmend", frozen, get_all)]
#[derive(Clone)]
pub struct ToolCallDelta {
    index: usize,
    id: Option<String>,
    name: Option<String>,
    arguments: Option<String>,
    complete: bool,
}

#[pymethods]
impl ToolCallDelta {
    #[new]
    #[pyo3(signature = (index=0, id=None, name=None, arguments=None, complete=false))]
    fn new(
        index: usize,
        id: Option<String>,
        name: Option<String>,
        arguments: Option<String>,
        complete: bool,
    ) -> Self {
        ToolCallDelta {
            index,
            id,
            name,
            arguments,
            complete,
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "ToolCallDelta(index={}, id={:?}, name={:?}, arguments={:?}, complete={})",
            self.index, self.id, self.name, self.arguments, self.complete
        )
    }
}

/// What a chunk caused: `kind` is "started", "name", "arguments", "completed" or "failed";
/// `text` is what was appended (name or arguments); `code` and `message` say why a call failed.
#[pyclass(module = "toolmend", frozen, get_all)]
pub struct StreamEvent {
    kind: &'static str,
    index: usize,
    id: Option<String>,
    /// For "arguments": the JSON Pointer of the value the appended text ended in ("/content"),
    /// None when the arguments are not strict JSON so far.
    path: Option<String>,
    text: Option<String>,
    code: Option<&'static str>,
    message: Option<String>,
}

#[pymethods]
impl StreamEvent {
    fn __repr__(&self) -> String {
        let mut out = format!("StreamEvent(kind={:?}, index={}", self.kind, self.index);
        if let Some(text) = &self.text {
            out.push_str(&format!(", text={text:?}"));
        }
        if let Some(code) = self.code {
            out.push_str(&format!(", code={code:?}"));
        }
        out.push(')');
        out
    }
}

/// Assembles the tool calls of one streamed turn. Not shared between threads: one per stream.
#[pyclass(module = "toolmend", unsendable)]
pub struct ToolCallAccumulator {
    core: Accumulator,
    limits: Limits,
    registry: Option<Py<PyToolRegistry>>,
    /// Bytes of a raw stream after its last newline: a line still arriving.
    pending: Vec<u8>,
    /// Index for Ollama calls that carry none: they count up through the turn.
    next_ollama_index: usize,
    /// partial()'s live views, by the core's call slot.
    views: Vec<LiveView>,
}

#[pymethods]
impl ToolCallAccumulator {
    #[new]
    #[pyo3(signature = (registry=None, *, max_size=1_048_576, max_depth=64, timeout_ms=100))]
    fn new(
        registry: Option<Py<PyToolRegistry>>,
        max_size: usize,
        max_depth: usize,
        timeout_ms: u64,
    ) -> Self {
        let limits = Limits {
            max_size,
            max_depth,
            timeout_ms,
        };
        ToolCallAccumulator {
            core: Accumulator::new(limits),
            limits,
            registry,
            pending: Vec::new(),
            next_ollama_index: 0,
            views: Vec::new(),
        }
    }

    /// Takes one chunk (an OpenAI stream chunk or delta, an Ollama /api/chat line, raw bytes or
    /// text of either stream split anywhere, or a ToolCallDelta) and returns the events it caused.
    fn feed(&mut self, py: Python<'_>, chunk: &Bound<'_, PyAny>) -> PyResult<Vec<StreamEvent>> {
        let mut events = Vec::new();
        if let Ok(delta) = chunk.cast::<ToolCallDelta>() {
            let d = delta.get();
            self.push(
                py,
                Delta {
                    index: d.index,
                    id: d.id.clone(),
                    name: d.name.clone(),
                    arguments: d.arguments.clone(),
                    complete: d.complete,
                },
                &mut events,
            )?;
        } else if let Ok(d) = chunk.cast::<PyDict>() {
            self.feed_object(py, d, &mut events)?;
        } else {
            let bytes = input_bytes(chunk)?;
            self.pending.extend_from_slice(&bytes);
            while let Some(newline) = self.pending.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.pending.drain(..=newline).collect();
                self.feed_line(py, &line, &mut events)?;
            }
        }
        Ok(events)
    }

    /// Appends `text` to the arguments of the call at `index` (starting the call if it is new)
    /// and returns what partial(index) would: the lean path for a caller that reads the wire
    /// itself and shows the arguments as they grow. No events are built; a call that crosses a
    /// limit returns None here and is reported by completed() or finish(). Text for a call that
    /// is already complete raises ParseError (TLP-006): it would otherwise be lost unseen.
    #[pyo3(signature = (index, text, /))]
    fn extend_arguments<'py>(
        &mut self,
        py: Python<'py>,
        index: usize,
        text: &str,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        if let Some(Event::Failed {
            code: ErrorCode::CallConstruction,
            message,
            ..
        }) = self.core.extend_arguments(index, text)
        {
            let suggestion = "start a new call at a new index, or a new id at this one";
            return Err(parse_error(
                py,
                ErrorCode::CallConstruction.as_str(),
                &message,
                0,
                suggestion,
            ));
        }
        self.partial(py, index)
    }

    /// The calls that are complete and not yet handed out, in index order, checked like
    /// parse_response's (errors for those that fail).
    fn completed(&mut self, py: Python<'_>) -> PyResult<ParseResult> {
        let views = &self.views;
        let assembled = self
            .core
            .take_completed_with(|slot, text| read_whole(views, slot, text));
        self.check(py, assembled)
    }

    /// The end of the stream: whatever is left, cut-off arguments repaired, as a ParseResult.
    fn finish(&mut self, py: Python<'_>) -> PyResult<ParseResult> {
        if !self.pending.is_empty() {
            let line = std::mem::take(&mut self.pending);
            let mut events = Vec::new();
            self.feed_line(py, &line, &mut events)?;
        }
        let views = &self.views;
        let assembled = self
            .core
            .finish_with(|slot, text| read_whole(views, slot, text));
        self.check(py, assembled)
    }

    /// The arguments of the call at `index` received so far as Python objects, open strings
    /// included (None before any arguments). A live view: each call reads only the text that
    /// arrived since the last one; values already complete were built once and are kept in the
    /// same dict, and only the open string is rebuilt. The dict belongs to the accumulator: copy
    /// it to change it. When the call completes as strict JSON, this same dict becomes its
    /// arguments (not read again from the text).
    fn partial<'py>(
        &mut self,
        py: Python<'py>,
        index: usize,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some(slot) = self.core.slot_of(index) else {
            return Ok(None);
        };
        let view = self.catch_up(py, slot)?;
        if view.is_live() {
            return view.value(py);
        }
        let text = self.core.arguments(slot).unwrap_or_default();
        // Not strict JSON (single quotes, say): what the repair pass makes of the whole text.
        if text.trim().is_empty() {
            return Ok(None);
        }
        let parser = PythonParse {
            cache_mode: StringCacheMode::Keys,
            partial_mode: PartialMode::TrailingStrings,
            ..Default::default()
        };
        match parser.python_parse(py, text.as_bytes()) {
            Ok(value) => Ok(Some(value)),
            Err(_) => match toolmend_core::repair(text.as_bytes(), &self.limits) {
                Ok(r) => Ok(python_objects(py, r.json.as_bytes()).ok()),
                Err(_) => Ok(None),
            },
        }
    }
}

/// Python objects built from the incremental reader's tokens, kept between calls.
#[derive(Default)]
struct LiveView {
    reader: Reader,
    /// Bytes of the call's arguments read so far.
    fed: usize,
    built: Built,
    /// A value could not be built as a Python object; the view stopped there.
    unbuildable: bool,
}

/// The objects of a live view and where the next value goes.
#[derive(Default)]
struct Built {
    root: Option<Py<PyAny>>,
    /// Open containers, innermost last.
    stack: Vec<Open>,
    /// The open string value.
    open: Option<OpenString>,
}

/// An open object or array and the member being written in it.
struct Open {
    container: Py<PyAny>,
    is_dict: bool,
    member: Member,
}

/// Where in its container the value being written goes.
enum Member {
    /// Between members of an object (after a value, before the next key).
    None,
    Key(Py<PyString>),
    /// An array's element (an array keeps its last index between elements).
    Index(usize),
}

/// A string value still arriving. It is put in its container only when shown (by partial() or
/// its end), so a string that opens and closes between two looks is built once.
#[derive(Default)]
struct OpenString {
    text: String,
    /// The container holds all of `text`.
    shown: bool,
    /// The container holds some version of it (an array has its element).
    placed: bool,
}

impl LiveView {
    /// Reads more text. A value Python cannot hold (an int of more digits than Python converts)
    /// stops the view, as text that is not strict JSON does: partial() then falls back to the
    /// repair pass, and completion reads the text again.
    fn read(&mut self, py: Python<'_>, text: &str) {
        if self.unbuildable {
            return;
        }
        let built = &mut self.built;
        let mut failed = false;
        self.reader.feed_with(text, |token| {
            failed = failed || built.apply(py, token).is_err();
        });
        self.unbuildable = failed;
    }

    /// The view follows the text: strict JSON so far, every value built.
    fn is_live(&self) -> bool {
        !self.unbuildable && !self.reader.is_broken()
    }

    /// Where the text read last ended: the JSON Pointer of the innermost member being written.
    fn path(&self, py: Python<'_>) -> Option<String> {
        if !self.is_live() {
            return None;
        }
        let mut path = String::new();
        for open in &self.built.stack {
            match &open.member {
                Member::None => {}
                Member::Key(k) => {
                    path.push('/');
                    let key = k.bind(py).to_cow().unwrap_or_default();
                    for c in key.chars() {
                        match c {
                            '~' => path.push_str("~0"),
                            '/' => path.push_str("~1"),
                            c => path.push(c),
                        }
                    }
                }
                Member::Index(i) => {
                    use std::fmt::Write;
                    let _ = write!(path, "/{i}");
                }
            }
        }
        Some(path)
    }

    fn value<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.built.show_open_string(py)?;
        Ok(self.built.root.as_ref().map(|r| r.bind(py).clone()))
    }
}

impl Built {
    fn apply(&mut self, py: Python<'_>, token: Token<'_>) -> PyResult<()> {
        match token {
            Token::ObjectStart => self.open_container(py, PyDict::new(py).into_any(), true),
            Token::ArrayStart => self.open_container(py, PyList::empty(py).into_any(), false),
            Token::End => {
                self.stack.pop();
                self.member_done();
                Ok(())
            }
            Token::Key(k) => {
                if let Some(top) = self.stack.last_mut() {
                    // Keys repeat (records): jiter's cache hands out one str per key text.
                    top.member = Member::Key(jiter::cached_py_string(py, &k).unbind());
                }
                Ok(())
            }
            Token::StringStart => {
                self.open = Some(OpenString::default());
                // Not in its array yet, but the path already points at it.
                if let Some(top) = self.stack.last_mut().filter(|top| !top.is_dict) {
                    top.member = Member::Index(top.container.bind(py).cast::<PyList>()?.len());
                }
                Ok(())
            }
            Token::StringText(t) => {
                if let Some(open) = &mut self.open {
                    open.text.push_str(&t);
                    open.shown = false;
                }
                Ok(())
            }
            Token::StringEnd => {
                self.show_open_string(py)?;
                self.open = None;
                self.member_done();
                Ok(())
            }
            Token::Number(n) => self.scalar(py, number(py, &n)?),
            Token::Bool(b) => {
                let value = pyo3::types::PyBool::new(py, b)
                    .to_owned()
                    .into_any()
                    .unbind();
                self.scalar(py, value)
            }
            Token::Null => self.scalar(py, py.None()),
        }
    }

    fn open_container(
        &mut self,
        py: Python<'_>,
        container: Bound<'_, PyAny>,
        is_dict: bool,
    ) -> PyResult<()> {
        let container = container.unbind();
        self.place(py, container.clone_ref(py))?;
        self.stack.push(Open {
            container,
            is_dict,
            member: Member::None,
        });
        Ok(())
    }

    fn scalar(&mut self, py: Python<'_>, value: Py<PyAny>) -> PyResult<()> {
        self.place(py, value)?;
        self.member_done();
        Ok(())
    }

    /// Puts a new value where the innermost container expects it (or at the root).
    fn place(&mut self, py: Python<'_>, value: Py<PyAny>) -> PyResult<()> {
        let Some(top) = self.stack.last_mut() else {
            self.root = Some(value);
            return Ok(());
        };
        let container = top.container.bind(py);
        if top.is_dict {
            match &top.member {
                Member::Key(k) => container.cast::<PyDict>()?.set_item(k, value),
                // The reader hands out a key before every member value.
                _ => Ok(()),
            }
        } else {
            let list = container.cast::<PyList>()?;
            top.member = Member::Index(list.len());
            list.append(value)
        }
    }

    /// A member of the innermost object is complete: the path points at the object until the
    /// next key (an array keeps its last index).
    fn member_done(&mut self) {
        if let Some(top) = self.stack.last_mut() {
            if top.is_dict {
                top.member = Member::None;
            }
        }
    }

    /// Puts the open string's text in its container (O(its length)), if it is not there yet.
    fn show_open_string(&mut self, py: Python<'_>) -> PyResult<()> {
        let Some(open) = &mut self.open else {
            return Ok(());
        };
        if open.shown {
            return Ok(());
        }
        let value = PyString::new(py, &open.text).into_any().unbind();
        open.shown = true;
        if !std::mem::replace(&mut open.placed, true) {
            return self.place(py, value);
        }
        match self.stack.last() {
            None => {
                self.root = Some(value); // the arguments are one string
                Ok(())
            }
            Some(top) => {
                let container = top.container.bind(py);
                match &top.member {
                    Member::Key(k) => container.cast::<PyDict>()?.set_item(k, value),
                    Member::Index(i) => container.cast::<PyList>()?.set_item(*i, value),
                    Member::None => Ok(()),
                }
            }
        }
    }
}

/// True when the live view of `slot` has read all of `text` and found it one whole strict JSON
/// value (what the reader completes, the strict validator accepts).
fn read_whole(views: &[LiveView], slot: usize, text: &str) -> bool {
    views
        .get(slot)
        .is_some_and(|view| view.fed == text.len() && view.is_live() && view.reader.is_complete())
}

/// A JSON number as Python's int or float (ints of any size, as json.loads reads them).
fn number(py: Python<'_>, text: &str) -> PyResult<Py<PyAny>> {
    if !text.contains(['.', 'e', 'E']) {
        if let Ok(i) = text.parse::<i64>() {
            return Ok(i.into_pyobject(py)?.into_any().unbind());
        }
        return Ok(py.get_type::<pyo3::types::PyInt>().call1((text,))?.unbind());
    }
    Ok(text
        .parse::<f64>()
        .unwrap_or(f64::NAN)
        .into_pyobject(py)?
        .into_any()
        .unbind())
}

impl ToolCallAccumulator {
    fn push(&mut self, py: Python<'_>, delta: Delta, out: &mut Vec<StreamEvent>) -> PyResult<()> {
        let events = self.core.feed(delta);
        self.translate(py, events, out)
    }

    /// The live view of the call in `slot`, brought up to date with its arguments text.
    fn catch_up(&mut self, py: Python<'_>, slot: usize) -> PyResult<&mut LiveView> {
        let text = self.core.arguments(slot).unwrap_or_default();
        if self.views.len() <= slot {
            self.views.resize_with(slot + 1, LiveView::default);
        }
        let view = &mut self.views[slot];
        if text.len() < view.fed {
            *view = LiveView::default(); // the buffer was freed (the call failed)
        }
        view.read(py, &text[view.fed..]);
        view.fed = text.len();
        Ok(view)
    }

    fn translate(
        &mut self,
        py: Python<'_>,
        events: Vec<Event>,
        out: &mut Vec<StreamEvent>,
    ) -> PyResult<()> {
        for event in events {
            let (kind, slot, text, code, message) = match event {
                Event::Started { slot, .. } => ("started", slot, None, None, None),
                Event::NameGrew { slot, appended } => ("name", slot, Some(appended), None, None),
                Event::ArgumentsGrew { slot, appended } => {
                    ("arguments", slot, Some(appended), None, None)
                }
                Event::Completed { slot } => ("completed", slot, None, None, None),
                Event::Failed {
                    slot,
                    code,
                    message,
                } => ("failed", slot, None, Some(code.as_str()), Some(message)),
            };
            let (index, id) = self.core.call_key(slot);
            let path = if kind == "arguments" {
                self.catch_up(py, slot)?.path(py)
            } else {
                None
            };
            out.push(StreamEvent {
                kind,
                index,
                id,
                path,
                text,
                code,
                message,
            });
        }
        Ok(())
    }

    fn feed_line(
        &mut self,
        py: Python<'_>,
        line: &[u8],
        out: &mut Vec<StreamEvent>,
    ) -> PyResult<()> {
        let line = line.trim_ascii();
        let payload = line.strip_prefix(b"data:").map_or(line, <[u8]>::trim_ascii);
        if payload.is_empty()
            || line.starts_with(b":")
            || line.starts_with(b"event:")
            || line.starts_with(b"id:")
        {
            return Ok(());
        }
        if payload == b"[DONE]" {
            let events = self.core.end_of_turn();
            self.translate(py, events, out)?;
            return Ok(());
        }
        match orjson_loads(py, PyBytes::new(py, payload).as_any())?.map(|v| v.cast_into::<PyDict>())
        {
            Some(Ok(d)) => self.feed_object(py, &d, out),
            // A line that is not a JSON object (a proxy's keep-alive, a broken line) says nothing
            // about any call.
            _ => Ok(()),
        }
    }

    fn feed_object(
        &mut self,
        py: Python<'_>,
        d: &Bound<'_, PyDict>,
        out: &mut Vec<StreamEvent>,
    ) -> PyResult<()> {
        // OpenAI chunk: choices[0].delta.tool_calls, finish_reason.
        if let Some(choices) =
            get(d, intern!(py, "choices")).and_then(|c| c.cast_into::<PyList>().ok())
        {
            for choice in choices.iter() {
                let Ok(choice) = choice.cast_into::<PyDict>() else {
                    continue;
                };
                if let Some(delta) =
                    get(&choice, intern!(py, "delta")).and_then(|x| x.cast_into::<PyDict>().ok())
                {
                    self.feed_deltas(py, &delta, out)?;
                }
                if get(&choice, intern!(py, "finish_reason")).is_some() {
                    let events = self.core.end_of_turn();
                    self.translate(py, events, out)?;
                }
            }
            return Ok(());
        }
        // Ollama line: whole calls in message.tool_calls; done ends the turn.
        if let Some(message) =
            get(d, intern!(py, "message")).and_then(|m| m.cast_into::<PyDict>().ok())
        {
            if let Some(calls) =
                get(&message, intern!(py, "tool_calls")).and_then(|c| c.cast_into::<PyList>().ok())
            {
                for call in calls.iter() {
                    let Ok(call) = call.cast_into::<PyDict>() else {
                        continue;
                    };
                    let function = get(&call, intern!(py, "function"))
                        .and_then(|f| f.cast_into::<PyDict>().ok());
                    let index =
                        int_of(function.as_ref().and_then(|f| get(f, intern!(py, "index"))))
                            .unwrap_or(self.next_ollama_index);
                    self.next_ollama_index = index + 1;
                    let arguments = match function
                        .as_ref()
                        .and_then(|f| get(f, intern!(py, "arguments")))
                    {
                        Some(a) if a.is_instance_of::<PyString>() => {
                            Some(a.cast_into::<PyString>()?.to_str()?.to_owned())
                        }
                        Some(a) => Some(orjson_dumps(py, &a)?),
                        None => None,
                    };
                    let delta = Delta {
                        index,
                        id: get(&call, intern!(py, "id"))
                            .and_then(|i| i.str().ok())
                            .map(|s| s.to_string()),
                        name: function
                            .as_ref()
                            .and_then(|f| get(f, intern!(py, "name")))
                            .and_then(|n| n.str().ok())
                            .map(|s| s.to_string()),
                        arguments,
                        complete: true,
                    };
                    self.push(py, delta, out)?;
                }
            }
            if get(d, intern!(py, "done")).is_some_and(|done| done.is_truthy().unwrap_or(false)) {
                let events = self.core.end_of_turn();
                self.translate(py, events, out)?;
            }
            return Ok(());
        }
        // A bare delta ({"tool_calls": [...]}) as some clients pass it on.
        self.feed_deltas(py, d, out)
    }

    fn feed_deltas(
        &mut self,
        py: Python<'_>,
        delta: &Bound<'_, PyDict>,
        out: &mut Vec<StreamEvent>,
    ) -> PyResult<()> {
        let Some(calls) =
            get(delta, intern!(py, "tool_calls")).and_then(|c| c.cast_into::<PyList>().ok())
        else {
            return Ok(());
        };
        for (position, call) in calls.iter().enumerate() {
            let Ok(call) = call.cast_into::<PyDict>() else {
                continue;
            };
            let function =
                get(&call, intern!(py, "function")).and_then(|f| f.cast_into::<PyDict>().ok());
            let text = |key: &Bound<'_, PyString>| -> Option<String> {
                function
                    .as_ref()
                    .and_then(|f| get(f, key))
                    .and_then(|v| v.str().ok())
                    .map(|s| s.to_string())
            };
            let delta = Delta {
                index: int_of(get(&call, intern!(py, "index"))).unwrap_or(position),
                id: get(&call, intern!(py, "id"))
                    .and_then(|i| i.str().ok())
                    .map(|s| s.to_string()),
                name: text(intern!(py, "name")),
                arguments: text(intern!(py, "arguments")),
                complete: false,
            };
            self.push(py, delta, out)?;
        }
        Ok(())
    }

    /// The live view's value of an assembled call, when it holds exactly its arguments: all of
    /// the text read, strict JSON (nothing repaired), one whole object.
    fn whole_view<'py>(
        &self,
        py: Python<'py>,
        call: &toolmend_core::stream::AssembledCall,
    ) -> Option<Bound<'py, PyAny>> {
        if !call.repairs.is_empty() || !read_whole(&self.views, call.slot, &call.raw_arguments) {
            return None;
        }
        let root = self.views[call.slot].built.root.as_ref()?.bind(py);
        root.is_instance_of::<PyDict>().then(|| root.clone())
    }

    fn check(
        &self,
        py: Python<'_>,
        assembled: Vec<
            Result<toolmend_core::stream::AssembledCall, toolmend_core::stream::FailedCall>,
        >,
    ) -> PyResult<ParseResult> {
        let registry = self.registry.as_ref().map(|r| r.borrow(py));
        let mut pipeline = Pipeline::new(py, registry.as_deref(), self.limits, true);
        for call in assembled {
            let candidate = match call {
                Ok(c) => Candidate {
                    id: c.id.as_deref().map(|id| PyString::new(py, id)),
                    name: Some(PyString::new(py, &c.name).into_any()),
                    // Valid arguments that the live view has read whole are not read again.
                    arguments: Some(Some(
                        self.whole_view(py, &c)
                            .unwrap_or_else(|| PyString::new(py, &c.arguments).into_any()),
                    )),
                    raw: Some(PyString::new(py, &c.raw_arguments).into_any()),
                    index: c.index,
                    source: "stream",
                    log: c.repairs,
                    unreadable: None,
                },
                Err(f) => Candidate {
                    id: f.id.map(|id| PyString::new(py, &id)),
                    name: Some(PyString::new(py, &f.name).into_any()),
                    arguments: Some(Some(PyString::new(py, &f.raw_arguments).into_any())),
                    raw: None,
                    index: f.index,
                    source: "stream",
                    log: Vec::new(),
                    unreadable: Some(Failure {
                        position: f.position,
                        ..Failure::new(f.code, f.message, f.suggestion)
                    }),
                },
            };
            pipeline.run(candidate)?;
        }
        pipeline.into_result(String::new())
    }
}

/// Tool calls out of text that arrives token by token: plain text comes back at once, calls
/// when their block closes (see toolmend_core::extract::TextCallParser).
#[pyclass(module = "toolmend", unsendable)]
pub struct TextCallParser {
    core: toolmend_core::extract::TextCallParser,
    limits: Limits,
    registry: Option<Py<PyToolRegistry>>,
    /// Calls handed out so far: the next call's index.
    next_index: usize,
}

#[pymethods]
impl TextCallParser {
    #[new]
    #[pyo3(signature = (registry=None, *, max_buffer=50_000, max_size=1_048_576, max_depth=64, timeout_ms=100))]
    fn new(
        registry: Option<Py<PyToolRegistry>>,
        max_buffer: usize,
        max_size: usize,
        max_depth: usize,
        timeout_ms: u64,
    ) -> Self {
        let limits = Limits {
            max_size,
            max_depth,
            timeout_ms,
        };
        TextCallParser {
            core: toolmend_core::extract::TextCallParser::new(limits, max_buffer),
            limits,
            registry,
            next_index: 0,
        }
    }

    /// One more token; returns text (str) and calls (ToolCall, or ToolCallError) in order.
    fn feed(&mut self, py: Python<'_>, token: &str) -> PyResult<Vec<Py<PyAny>>> {
        let events = self.core.feed(token);
        self.convert(py, events)
    }

    /// The end of the text: what is held back, a block still open read as it is.
    fn flush(&mut self, py: Python<'_>) -> PyResult<Vec<Py<PyAny>>> {
        let events = self.core.flush();
        self.convert(py, events)
    }

    /// Forgets what is held, for a new turn.
    fn reset(&mut self) {
        self.core.reset();
        self.next_index = 0;
    }
}

impl TextCallParser {
    fn convert(
        &mut self,
        py: Python<'_>,
        events: Vec<toolmend_core::extract::TextEvent>,
    ) -> PyResult<Vec<Py<PyAny>>> {
        use toolmend_core::extract::TextEvent;
        let registry = self.registry.as_ref().map(|r| r.borrow(py));
        let mut out = Vec::new();
        for event in events {
            match event {
                TextEvent::Text(text) => out.push(PyString::new(py, &text).into_any().unbind()),
                TextEvent::Calls(found) => {
                    let mut pipeline = Pipeline::new(py, registry.as_deref(), self.limits, true);
                    for call in found {
                        pipeline.run(Candidate::found(py, call, self.next_index))?;
                        self.next_index += 1;
                    }
                    // In the order they were found.
                    let mut items: Vec<(usize, Py<PyAny>)> = Vec::new();
                    for call in pipeline.calls {
                        items.push((call.index(), Py::new(py, call)?.into_any()));
                    }
                    for error in pipeline.errors {
                        items.push((error.index(), Py::new(py, error)?.into_any()));
                    }
                    items.sort_by_key(|(i, _)| *i);
                    out.extend(items.into_iter().map(|(_, item)| item));
                }
            }
        }
        Ok(out)
    }
}
