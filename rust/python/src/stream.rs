//! ToolCallAccumulator and TextCallParser: streamed chunks (OpenAI deltas, Ollama NDJSON lines,
//! raw SSE or NDJSON bytes, ToolCallDelta) and streamed text, read by the core (wire, stream,
//! extract); assembled calls go through the core's pipeline like parse_response's. Here the
//! events become Python objects and the live view follows the arguments.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use toolmend_core::partial::mended_look;
use toolmend_core::pipeline::{
    check_stream_reply, check_text_events, finish_text, known_tool, MessageText, Pipeline, TextItem,
};
use toolmend_core::stream::{Accumulator, AssembledCall, Delta, Event, EventKind, FailedCall};
use toolmend_core::wire::{is_limit_reason, Said, StreamReader};
use toolmend_core::{ErrorCode, Limits};

use crate::convert::{input_bytes, python_objects, untracked};
use crate::error::parse_error;
use crate::partial::{PyBuilder, PyViews};
use crate::pipeline::PyHost;
use crate::pipeline::{ParseResult, ToolCall, ToolCallError};
use crate::schema::PyToolRegistry;
use crate::wire::{plain, Obj, PyParser};

record! {
    /// One fragment of one tool call, for callers that read the wire themselves.
    #[pyclass(module = "toolmend", frozen, get_all)]
    #[derive(Clone)]
    pub struct ToolCallDelta {
        index: usize = 0,
        id: Option<String> = None,
        name: Option<String> = None,
        arguments: Option<String> = None,
        complete: bool = false,
    }
}

/// What a chunk caused: `kind` is "started", "name", "arguments", "completed" or "failed";
/// `text` is what was appended (name or arguments); `code` and `message` say why a call failed.
#[pyclass(module = "toolmend", frozen, freelist = 64)]
pub struct StreamEvent {
    /// The kind's value; `kind` is its StreamEventKind member (toolmend/_records.py).
    #[pyo3(get, name = "_kind")]
    kind: &'static str,
    #[pyo3(get)]
    index: usize,
    #[pyo3(get)]
    id: Option<String>,
    /// For "arguments": the JSON Pointer of the value the appended text ended in ("/content"),
    /// None when the arguments are not strict JSON so far.
    #[pyo3(get)]
    path: Option<String>,
    #[pyo3(get)]
    text: Option<String>,
    #[pyo3(get)]
    code: Option<&'static str>,
    #[pyo3(get)]
    message: Option<String>,
}

#[pymethods]
impl StreamEvent {
    /// An event built by hand (to replay a stream); `kind` and `code` are checked.
    #[new]
    #[pyo3(signature = (kind, index=0, id=None, path=None, text=None, code=None, message=None))]
    fn new(
        kind: &str,
        index: usize,
        id: Option<String>,
        path: Option<String>,
        text: Option<String>,
        code: Option<&str>,
        message: Option<String>,
    ) -> PyResult<Self> {
        let kind = EventKind::from_name(kind)
            .map(EventKind::as_str)
            .or_else(|| Said::KINDS.into_iter().find(|k| *k == kind))
            .ok_or_else(|| PyValueError::new_err(format!("not an event kind: {kind:?}")))?;
        let code = match code {
            Some(code) => Some(
                ErrorCode::from_code(code)
                    .ok_or_else(|| PyValueError::new_err(format!("not an error code: {code:?}")))?
                    .as_str(),
            ),
            None => None,
        };
        Ok(StreamEvent {
            kind,
            index,
            id,
            path,
            text,
            code,
            message,
        })
    }
}

/// Assembles the tool calls of one streamed turn. Not shared between threads: one per stream.
#[pyclass(module = "toolmend", unsendable)]
pub struct ToolCallAccumulator {
    reader: StreamReader,
    limits: Limits,
    registry: Option<Py<PyToolRegistry>>,
    /// partial()'s live views, by the core's call slot.
    views: PyViews,
    /// Calls cut off are taken, marked `truncated` (else refused with TLP-010).
    allow_truncated: bool,
    /// The caller said the stream stopped at the token limit.
    cut_by_length: bool,
    /// Off: a call whose arguments are not strict JSON as sent is refused (TLP-004).
    repair: bool,
}

#[pymethods]
impl ToolCallAccumulator {
    #[new]
    #[pyo3(signature = (registry=None, *, repair=true, text_calls=None, max_size=Limits::DEFAULT.max_size, max_depth=Limits::DEFAULT.max_depth, timeout_ms=Limits::DEFAULT.timeout_ms, allow_truncated=false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        registry: Option<Py<PyToolRegistry>>,
        repair: bool,
        text_calls: Option<&Bound<'_, PyAny>>,
        max_size: usize,
        max_depth: usize,
        timeout_ms: u64,
        allow_truncated: bool,
    ) -> PyResult<Self> {
        let limits = crate::convert::limits(max_size, max_depth, timeout_ms)?;
        let formats = text_calls.map_or(Ok(Default::default()), crate::convert::formats)?;
        Ok(ToolCallAccumulator {
            reader: StreamReader::new(limits).with_text_calls(limits, formats),
            limits,
            registry,
            views: PyViews::default(),
            allow_truncated,
            cut_by_length: false,
            repair,
        })
    }

    /// Takes one chunk (an OpenAI stream chunk or delta, an Ollama /api/chat line, raw bytes or
    /// text of either stream split anywhere, or a ToolCallDelta) and returns the events it caused.
    fn feed(&mut self, py: Python<'_>, chunk: &Bound<'_, PyAny>) -> PyResult<Vec<Py<StreamEvent>>> {
        self.events(py, |reader, sink| {
            if let Ok(delta) = chunk.cast::<ToolCallDelta>() {
                let d = delta.get();
                let delta = Delta {
                    index: d.index,
                    id: d.id.clone(),
                    name: d.name.clone(),
                    arguments: d.arguments.clone(),
                    complete: d.complete,
                };
                return reader.feed_delta(delta, sink);
            }
            // A dict, or an SDK's chunk or event object read as the dict of its fields.
            let value = plain(chunk.clone());
            if value.is_instance_of::<PyDict>() {
                reader.feed_chunk(&Obj(value), sink)
            } else {
                reader.feed_bytes(&input_bytes(chunk)?, &PyParser(py), sink)
            }
        })
    }

    /// Takes one decoded message of a stream, as httpx-sse's `sse.data` or an NDJSON line
    /// (str or bytes): one whole JSON chunk, not raw wire text; `[DONE]` ends the turn. Returns
    /// the events it caused.
    fn feed_data(
        &mut self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<Py<StreamEvent>>> {
        let bytes = input_bytes(data)?;
        self.events(py, |reader, sink| {
            reader.feed_payload(&bytes, &PyParser(py), sink)
        })
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
        }) = self.reader.calls_mut().extend_arguments(index, text)
        {
            return Err(parse_error(
                py,
                ErrorCode::CallConstruction.as_str(),
                &message,
                0,
                Accumulator::LATE_FRAGMENT_FIX,
            ));
        }
        self.partial(py, index)
    }

    /// The calls that are complete and not yet handed out, in index order, checked like
    /// parse_response's (errors for those that fail).
    fn completed(&mut self, py: Python<'_>) -> PyResult<Py<ParseResult>> {
        self.hand_out(py, false)
    }

    /// The end of the stream: whatever is left, cut-off arguments repaired, as a ParseResult.
    /// `finish_reason` is the reason the stream ended when the caller read it elsewhere
    /// ("length": the token limit, which the chunks fed may already have said).
    #[pyo3(signature = (finish_reason=None))]
    fn finish(&mut self, py: Python<'_>, finish_reason: Option<&str>) -> PyResult<Py<ParseResult>> {
        // What the end says was handed out by `end`, if it was called; else it is not.
        self.end(py, finish_reason)?;
        self.hand_out(py, true)
    }

    /// The end of the stream's text and lines, before `finish`: the events of a raw stream's
    /// last line (if it had no newline) and of the text held back, and a "text_revised" event
    /// when the text held calls written without a marker. Calling it again does nothing.
    #[pyo3(signature = (finish_reason=None))]
    fn end(
        &mut self,
        py: Python<'_>,
        finish_reason: Option<&str>,
    ) -> PyResult<Vec<Py<StreamEvent>>> {
        if finish_reason.is_some_and(is_limit_reason) {
            self.cut_by_length = true;
        }
        let registry = self.registry.as_ref().map(|r| r.clone_ref(py));
        self.events(py, |reader, sink| {
            reader.end_bytes(&PyParser(py), sink)?;
            let registry = registry.as_ref().map(|r| r.borrow(py));
            let host = PyHost::new(py, registry.as_deref());
            let is_tool = known_tool(&host);
            reader.finish_text(is_tool.as_ref().map(|f| f as &dyn Fn(&str) -> bool));
            Ok(())
        })
    }

    /// Token counts the stream sent, (prompt, completion), or None.
    #[getter]
    fn usage(&self) -> Option<(u64, u64)> {
        self.reader.said_so_far().usage
    }

    /// Why the reply ended, as the server said it, or None.
    #[getter]
    fn finish_reason(&self) -> Option<String> {
        self.reader.said_so_far().finish_reason.clone()
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
        let Some(slot) = self.reader.calls().slot_of(index) else {
            return Ok(None);
        };
        let view = self
            .views
            .catch_up(&mut PyBuilder(py), self.reader.calls(), slot);
        if view.is_live() {
            return Ok(view.value(&mut PyBuilder(py))?.map(|v| v.into_bound(py)));
        }
        let text = self.reader.calls().arguments(slot).unwrap_or_default();
        Ok(mended_look(text, &self.limits)
            .and_then(|json| python_objects(py, json.as_bytes()).ok()))
    }
}

/// What the core's stream reader reports each call event to.
type EventSink<'a> = dyn FnMut(&Accumulator, Event) -> PyResult<()> + 'a;

/// The Python event for a core event, read right after it: an "arguments" event carries the
/// path the text ended in, from the live view caught up with it.
fn stream_event(
    py: Python<'_>,
    views: &mut PyViews,
    calls: &Accumulator,
    event: Event,
) -> StreamEvent {
    let (kind, slot) = (event.kind(), event.slot());
    let (text, code, message) = match event {
        Event::NameGrew { appended, .. } | Event::ArgumentsGrew { appended, .. } => {
            (Some(appended), None, None)
        }
        Event::Failed { code, message, .. } => (None, Some(code.as_str()), Some(message)),
        Event::Started { .. } | Event::Completed { .. } => (None, None, None),
    };
    let (index, id) = calls.call_key(slot);
    let path = match kind {
        EventKind::Arguments => {
            let mut builder = PyBuilder(py);
            views.catch_up(&mut builder, calls, slot).path(&builder)
        }
        _ => None,
    };
    StreamEvent {
        kind: kind.as_str(),
        index,
        id,
        path,
        text,
        code,
        message,
    }
}

impl ToolCallAccumulator {
    /// The calls complete and not handed out yet (all that is left when `finished`), with the
    /// calls written in the text, checked (what `completed` and `finish` give).
    fn hand_out(&mut self, py: Python<'_>, finished: bool) -> PyResult<Py<ParseResult>> {
        let views = &self.views;
        let holds_whole = |slot: usize, text: &str| views.holds_whole(slot, text);
        let calls = self.reader.calls_mut();
        let assembled = if finished {
            calls.finish_with(holds_whole)
        } else {
            calls.take_completed_with(holds_whole)
        };
        let text_calls = self.reader.take_text_calls();
        self.check(py, assembled, text_calls, finished)
    }

    /// The assembled calls through the pipeline; valid arguments the live view has read whole
    /// are taken from it, not read again.
    fn check(
        &self,
        py: Python<'_>,
        assembled: Vec<Result<AssembledCall, FailedCall>>,
        text_calls: Vec<toolmend_core::extract::FoundCall>,
        at_end: bool,
    ) -> PyResult<Py<ParseResult>> {
        let registry = self.registry.as_ref().map(|r| r.borrow(py));
        let host = PyHost::new(py, registry.as_deref());
        let mut pipeline =
            Pipeline::new(&host, self.limits, self.repair).allow_truncated(self.allow_truncated);
        pipeline.set_cut_by_length(
            self.cut_by_length
                || self.reader.cut_by_length()
                || (at_end && self.reader.stopped_unfinished()),
        );
        if at_end {
            let (notes, quoted) = self.reader.text_notes();
            pipeline.notes.extend_from_slice(notes);
            pipeline.quoted += quoted;
        }
        let said = self.reader.said_so_far();
        let error = at_end.then_some(said.provider_error.as_deref()).flatten();
        check_stream_reply(&mut pipeline, assembled, text_calls, error, |call| {
            self.views
                .whole_object(&PyBuilder(py), call)
                .map(|v| Obj(v.into_bound(py)))
        })?;
        let text = match at_end {
            true => MessageText {
                text: said.text().to_owned(),
                reasoning: said.reasoning().to_owned(),
                calls_at: None,
            },
            false => MessageText::default(),
        };
        ParseResult::from_pipeline(py, pipeline, text)
    }

    /// The events of what `read` gives the stream reader: those of the calls, as the core
    /// reports them, then one for each thing the stream said besides its calls.
    fn events(
        &mut self,
        py: Python<'_>,
        read: impl FnOnce(&mut StreamReader, &mut EventSink<'_>) -> PyResult<()>,
    ) -> PyResult<Vec<Py<StreamEvent>>> {
        let mut events = Vec::new();
        let views = &mut self.views;
        read(
            &mut self.reader,
            &mut |calls: &Accumulator, event: Event| {
                events.push(untracked(py, stream_event(py, views, calls, event))?);
                Ok(())
            },
        )?;
        for said in self.reader.take_said() {
            let Some((kind, text)) = said.shown() else {
                continue;
            };
            let error = matches!(said, Said::ProviderError(_));
            let text = text.map(str::to_owned);
            let event = StreamEvent {
                kind,
                index: 0,
                id: None,
                path: None,
                text: if error { None } else { text.clone() },
                code: error.then(|| ErrorCode::ProviderError.as_str()),
                message: if error { text } else { None },
            };
            events.push(untracked(py, event)?);
        }
        Ok(events)
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
    /// Calls cut off are taken, marked `truncated` (else refused with TLP-010).
    allow_truncated: bool,
    /// Off: a call whose JSON needed repair is refused (TLP-004).
    repair: bool,
}

#[pymethods]
impl TextCallParser {
    #[new]
    #[pyo3(signature = (registry=None, *, repair=true, max_buffer=toolmend_core::extract::DEFAULT_MAX_BUFFER, max_size=Limits::DEFAULT.max_size, max_depth=Limits::DEFAULT.max_depth, timeout_ms=Limits::DEFAULT.timeout_ms, allow_truncated=false, formats=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        registry: Option<Py<PyToolRegistry>>,
        repair: bool,
        max_buffer: usize,
        max_size: usize,
        max_depth: usize,
        timeout_ms: u64,
        allow_truncated: bool,
        formats: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let limits = crate::convert::limits(max_size, max_depth, timeout_ms)?;
        let formats = formats.map_or(Ok(Default::default()), crate::convert::formats)?;
        Ok(TextCallParser {
            core: toolmend_core::extract::TextCallParser::new(limits, max_buffer)
                .with_formats(formats),
            limits,
            registry,
            next_index: 0,
            allow_truncated,
            repair,
        })
    }

    /// One more token; returns text (str) and calls (ToolCall, or ToolCallError) in order.
    fn feed(&mut self, py: Python<'_>, token: &str) -> PyResult<Vec<Py<PyAny>>> {
        let events = self.core.feed(token);
        self.convert(py, events, false)
    }

    /// The end of the text: what is held back, a block still open read as it is. With the
    /// reply's `finish_reason` at the token limit ("length"), the last call is cut off when
    /// anything in it needed mending.
    #[pyo3(signature = (finish_reason=None))]
    fn flush(&mut self, py: Python<'_>, finish_reason: Option<&str>) -> PyResult<Vec<Py<PyAny>>> {
        let registry = self.registry.as_ref().map(|r| r.borrow(py));
        let events = finish_text(&PyHost::new(py, registry.as_deref()), &mut self.core);
        drop(registry);
        self.convert(py, events, finish_reason.is_some_and(is_limit_reason))
    }

    /// Forgets what is held, for a new turn.
    fn reset(&mut self) {
        self.core.reset();
        self.next_index = 0;
    }
}

impl TextCallParser {
    /// Text and checked calls as Python values, in the order they stood (see
    /// `toolmend_core::pipeline::check_text_events`).
    fn convert(
        &mut self,
        py: Python<'_>,
        events: Vec<toolmend_core::extract::TextEvent>,
        cut_by_length: bool,
    ) -> PyResult<Vec<Py<PyAny>>> {
        let registry = self.registry.as_ref().map(|r| r.borrow(py));
        let host = PyHost::new(py, registry.as_deref());
        let items = check_text_events(
            &host,
            self.limits,
            self.repair,
            self.allow_truncated,
            events,
            &mut self.next_index,
            cut_by_length,
        )?;
        items
            .into_iter()
            .map(|item| {
                Ok(match item {
                    TextItem::Text(text) => PyString::new(py, &text).into_any().unbind(),
                    TextItem::Reasoning(text) => Reasoning::item(py, text, false)?,
                    TextItem::TextWasReasoning(text) => Reasoning::item(py, text, true)?,
                    TextItem::TextWithoutCalls(text) => {
                        untracked(py, TextWithoutCalls { text })?.into_any()
                    }
                    TextItem::Call(call) => {
                        untracked(py, ToolCall::from_checked(py, call))?.into_any()
                    }
                    TextItem::Refused(error) => {
                        untracked(py, ToolCallError::from_rejected(py, error)?)?.into_any()
                    }
                })
            })
            .collect()
    }
}

record! {
    /// Reasoning out of streamed text: a think block's body, never text, never a call. With
    /// `was_text`, a lone reasoning closer came: `text` is everything before it, as written, and
    /// the text handed out so far was part of it (it belongs to the reasoning, not the answer).
    #[pyclass(module = "toolmend", frozen, get_all)]
    pub struct Reasoning {
        text: String,
        was_text: bool = false,
    }
}

impl Reasoning {
    fn item(py: Python<'_>, text: String, was_text: bool) -> PyResult<Py<PyAny>> {
        Ok(untracked(py, Reasoning { text, was_text })?.into_any())
    }
}

record! {
    /// At the end of streamed text: what was handed out as text held calls written without a
    /// marker (bare JSON, a pythonic list), which only the whole text tells apart from prose.
    /// `text` is the text without them, to stand instead of what was handed out; the calls come
    /// next.
    #[pyclass(module = "toolmend", frozen, get_all)]
    pub struct TextWithoutCalls {
        text: String,
    }
}
