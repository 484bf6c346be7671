//! Streamed chunks into call fragments: OpenAI chunks (`choices[].delta.tool_calls[]`, argument
//! text in pieces, `finish_reason`), Ollama lines (`message.tool_calls[]`, whole calls with
//! object arguments, `done`), bare deltas, and raw bytes of either stream split anywhere.

use std::borrow::Cow;

use crate::extract::{Formats, TextCallParser, TextEvent, DEFAULT_MAX_BUFFER};
use crate::limits::Limits;
use crate::stream::{Accumulator, Delta, Event};

use super::envelope::{delta_text, kind_of, provider_error, stopped_at_limit};
use super::framing::{line_kind, Frame, LineFramer, LineKind};
use super::openai;
use super::value::{ErrorOf, JsonLike, Key, Parser};

/// The longest line of a raw stream that is read, for a size limit: a line carries at most a
/// fragment of arguments held to `max_size`, written inside a JSON string where one byte can take
/// six (`<` is `\u003c` from Go's encoder), and the chunk around it. Ollama's lines hold whole
/// calls, each within `max_size` and written without escapes.
pub fn line_limit(limits: &Limits) -> usize {
    limits.max_size.saturating_mul(6).saturating_add(64 * 1024)
}

/// What a stream says besides its call fragments, in the order it said it (see
/// `StreamReader::take_said`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Said {
    /// The reply's text (its first choice's `content`), as the reader's text parser handed it
    /// out (`TextEvent::Text` pieces as they came, when it reads no calls in text).
    Text(TextEvent),
    /// A piece of a reasoning field (`reasoning_content`, `reasoning`, Ollama's `thinking`,
    /// Anthropic's and the Responses API's reasoning deltas): never text, never calls.
    Reasoning(String),
    /// Token counts: OpenAI's `usage` (prompt, completion), Ollama's `prompt_eval_count` and
    /// `eval_count`.
    Usage { prompt: u64, completion: u64 },
    /// Why the reply ended, as the server said it (`finish_reason`, `done_reason`,
    /// `stop_reason`).
    Finish(String),
    /// A provider's error sent in the stream (an `error` chunk or line): its message.
    ProviderError(String),
    /// The turn ended: a finish reason (of any type), Ollama's `done`, `[DONE]`, the end event
    /// of the Anthropic and Responses streams. Said once.
    End,
}

impl Said {
    /// The names of the kinds of what a stream says, as the binding's events name them.
    pub const KINDS: [&'static str; 8] = [
        "text",
        "reasoning",
        "text_was_reasoning",
        "text_revised",
        "usage",
        "finish",
        "error",
        "end",
    ];

    /// The kind's name, and the text it carries; None for calls found in the text (they are
    /// checked with the stream's calls, see `SaidSoFar::text_calls`). "text_revised" comes at
    /// the end only: the text held calls written without a marker, and this is it without them.
    pub fn shown(&self) -> Option<(&'static str, Option<&str>)> {
        Some(match self {
            Said::Text(TextEvent::Text(t)) => ("text", Some(t)),
            Said::Text(TextEvent::Reasoning(r)) | Said::Reasoning(r) => ("reasoning", Some(r)),
            Said::Text(TextEvent::TextWasReasoning(r)) => ("text_was_reasoning", Some(r)),
            Said::Text(TextEvent::CallsInText { text, .. }) => ("text_revised", Some(text)),
            Said::Text(TextEvent::Calls(_)) => return None,
            Said::Usage { .. } => ("usage", None),
            Said::Finish(reason) => ("finish", Some(reason)),
            Said::ProviderError(message) => ("error", Some(message)),
            Said::End => ("end", None),
        })
    }
}

/// Most chunks of a call's arguments hold nothing but `tool_calls`: no text to look for.
fn only_calls<V: JsonLike>(delta: &V) -> bool {
    delta.members() == Some(1) && delta.has(Key::ToolCalls)
}

/// The reply as a stream has said it so far, as `parse_response` reads the same reply whole:
/// text without the calls in it, reasoning, token counts, the finish reason, a provider error.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SaidSoFar {
    text: String,
    reasoning: String,
    /// Calls found in the text, block by block, as the text parser handed them out.
    pub text_calls: Vec<crate::extract::FoundCall>,
    pub usage: Option<(u64, u64)>,
    pub finish_reason: Option<String>,
    pub provider_error: Option<String>,
    pub ended: bool,
}

impl SaidSoFar {
    /// The text, without the space around it.
    pub fn text(&self) -> &str {
        self.text.trim()
    }

    pub fn reasoning(&self) -> &str {
        self.reasoning.trim()
    }

    fn take(&mut self, said: &Said) {
        match said {
            Said::Text(TextEvent::Text(t)) => self.text.push_str(t),
            Said::Text(TextEvent::Reasoning(r)) => self.reasoning.push_str(r),
            Said::Text(TextEvent::TextWasReasoning(r)) => {
                // The reply began inside a reasoning block: the text so far was reasoning.
                self.text.clear();
                self.reasoning.push_str(r);
            }
            Said::Text(TextEvent::Calls(found)) => self.text_calls.extend(found.iter().cloned()),
            Said::Text(TextEvent::CallsInText { text, calls }) => {
                self.text.clone_from(text);
                self.text_calls.extend(calls.iter().cloned());
            }
            Said::Reasoning(r) => self.reasoning.push_str(r),
            Said::Usage { prompt, completion } => self.usage = Some((*prompt, *completion)),
            Said::Finish(reason) => self.finish_reason = Some(reason.clone()),
            Said::ProviderError(message) => self.provider_error = Some(message.clone()),
            Said::End => self.ended = true,
        }
    }
}

/// Reads one streamed turn into the accumulator: chunks as values, or the raw bytes of the
/// stream. Every event is handed to a sink with the accumulator as it stands right after it
/// (the binding reads the arguments text then, for the path an event ended in). What else the
/// stream says (text, reasoning, usage, its end, an error) is kept for `take_said`.
#[derive(Debug)]
pub struct StreamReader {
    calls: Accumulator,
    said: Vec<Said>,
    /// Reads the text for calls written in it; None: text is handed out as it came.
    text: Option<TextCallParser>,
    /// The reply as said so far (see `SaidSoFar`).
    so_far: SaidSoFar,
    lines: LineFramer,
    /// The `data:` lines of a server-sent event whose first line was not JSON on its own,
    /// joined by newlines (an event may write its JSON over several lines): read at the event's
    /// end. `held_ends` marks where each line ends in `held`.
    held: Vec<u8>,
    held_ends: Vec<usize>,
    /// The index of the next Ollama call that carries none: they count up through the turn.
    next_ollama_index: usize,
    /// The longest line read (the framer's limit; also caps what an event holds).
    line_limit: usize,
    /// The stream said it stopped at the token limit (see `stopped_at_limit`).
    cut_by_length: bool,
    /// Raw stream data was read (bytes or decoded messages), so the stream says how it ended.
    framed: bool,
}

impl StreamReader {
    pub fn new(limits: Limits) -> Self {
        Self::with_line_limit(limits, line_limit(&limits))
    }

    /// A reader that takes raw lines up to `line_limit` bytes (tests and fuzzing reach the
    /// refusal with small lines).
    pub fn with_line_limit(limits: Limits, line_limit: usize) -> Self {
        StreamReader {
            calls: Accumulator::new(limits),
            said: Vec::new(),
            text: None,
            so_far: SaidSoFar::default(),
            lines: LineFramer::new(line_limit),
            held: Vec::new(),
            held_ends: Vec::new(),
            next_ollama_index: 0,
            line_limit,
            cut_by_length: false,
            framed: false,
        }
    }

    /// Whether the stream said it stopped at the token limit: OpenAI's `finish_reason`
    /// "length", Ollama's `done_reason` "length", Anthropic's `max_tokens`, the Responses API's
    /// `response.incomplete`.
    pub fn cut_by_length(&self) -> bool {
        self.cut_by_length
    }

    /// The raw stream stopped without saying it ended: no finish reason, no `[DONE]` (or
    /// Ollama's `done`, Anthropic's `message_stop`). The connection was cut, and so was the
    /// call it was writing: arguments mended at their end were cut off (TLP-010).
    pub fn stopped_unfinished(&self) -> bool {
        self.framed && !self.so_far.ended && self.so_far.finish_reason.is_none()
    }

    /// Reads the stream's text for calls written in it, in `formats` (as `parse_response`'s
    /// `text_calls`): they come out as `Said::Text(TextEvent::Calls(..))`.
    pub fn with_text_calls(mut self, limits: Limits, formats: Formats) -> Self {
        self.text = Some(TextCallParser::new(limits, DEFAULT_MAX_BUFFER).with_formats(formats));
        self
    }

    /// What the stream said since the last call, besides its calls.
    pub fn take_said(&mut self) -> Vec<Said> {
        std::mem::take(&mut self.said)
    }

    /// The reply as said so far: text, reasoning, usage, its end, an error.
    pub fn said_so_far(&self) -> &SaidSoFar {
        &self.so_far
    }

    /// The calls found in the text and not yet taken.
    pub fn take_text_calls(&mut self) -> Vec<crate::extract::FoundCall> {
        std::mem::take(&mut self.so_far.text_calls)
    }

    /// The end of the text: what the text parser held, and the calls written without a marker
    /// (`TextCallParser::finish`, `is_tool` as there), said.
    pub fn finish_text(&mut self, is_tool: Option<&dyn Fn(&str) -> bool>) {
        if let Some(parser) = &mut self.text {
            for event in parser.finish(is_tool) {
                self.say(Said::Text(event));
            }
        }
    }

    /// Where the calls the text only quoted stood, and why, and how many there were.
    pub fn text_notes(&self) -> (&[crate::extract::Note], usize) {
        self.text
            .as_ref()
            .map_or((&[], 0), |parser| (parser.notes(), parser.quoted()))
    }

    fn say(&mut self, said: Said) {
        self.so_far.take(&said);
        self.said.push(said);
    }

    fn say_text(&mut self, text: String) {
        if text.is_empty() {
            return;
        }
        match &mut self.text {
            Some(parser) => {
                for event in parser.feed(&text) {
                    self.say(Said::Text(event));
                }
            }
            None => self.say(Said::Text(TextEvent::Text(text))),
        }
    }

    fn say_reasoning(&mut self, reasoning: String) {
        if !reasoning.is_empty() {
            self.say(Said::Reasoning(reasoning));
        }
    }

    /// The text and reasoning of a delta or message (`envelope::delta_text`).
    fn say_delta<V: JsonLike>(&mut self, delta: &V) -> Result<(), V::Error> {
        if only_calls(delta) {
            return Ok(());
        }
        let (text, reasoning) = delta_text(delta)?;
        self.say_reasoning(reasoning);
        self.say_text(text);
        Ok(())
    }

    fn say_finish<V: JsonLike>(&mut self, reason: Option<V>) -> Result<(), V::Error> {
        if let Some(reason) = reason {
            if let Some(reason) = reason.as_str()? {
                self.say(Said::Finish(reason.into_owned()));
            }
        }
        Ok(())
    }

    /// Token counts under `prompt` and `completion` in `value`, if it holds either; a count it
    /// leaves out is the one said before (Anthropic gives the prompt's at the start, the
    /// completion's at the end).
    fn say_usage<V: JsonLike>(&mut self, value: &V, prompt: Key, completion: Key) {
        let count = |key| value.get(key).and_then(|v| v.as_index()).map(|n| n as u64);
        let (p, c) = (count(prompt), count(completion));
        if p.is_some() || c.is_some() {
            let (p0, c0) = self.so_far.usage.unwrap_or_default();
            self.say(Said::Usage {
                prompt: p.unwrap_or(p0),
                completion: c.unwrap_or(c0),
            });
        }
    }

    /// The calls read so far.
    pub fn calls(&self) -> &Accumulator {
        &self.calls
    }

    pub fn calls_mut(&mut self) -> &mut Accumulator {
        &mut self.calls
    }

    /// One fragment in wire-neutral form.
    pub fn feed_delta<E>(
        &mut self,
        delta: Delta,
        sink: &mut (impl FnMut(&Accumulator, Event) -> Result<(), E> + ?Sized),
    ) -> Result<(), E> {
        let events = self.calls.feed(delta);
        self.emit(events, sink)
    }

    /// One chunk as a value: an OpenAI chunk, an Ollama line, an Anthropic or Responses API
    /// stream event, or a bare delta (`{"tool_calls": [...]}`) as some clients pass it on.
    pub fn feed_chunk<V: JsonLike>(
        &mut self,
        chunk: &V,
        sink: &mut (impl FnMut(&Accumulator, Event) -> Result<(), V::Error> + ?Sized),
    ) -> Result<(), V::Error> {
        if let Some(message) = provider_error(chunk)? {
            self.say(Said::ProviderError(message));
            return Ok(());
        }
        if let Some(kind) = chunk.get(Key::Type) {
            if let Some(delta) = self.typed_event(chunk, &kind.as_str()?.unwrap_or_default())? {
                return match delta {
                    Some(delta) => self.feed_delta(delta, sink),
                    None => self.end_of_turn(sink),
                };
            }
        }
        if let Some(choices) = chunk.get(Key::Choices).and_then(|c| c.items()) {
            for (position, choice) in choices.iter().enumerate() {
                if !choice.is_object() {
                    continue;
                }
                // The text of the first choice is the reply's (a request asks for one).
                let first = || {
                    let at = choice.get(Key::Index).and_then(|i| i.as_index());
                    at.unwrap_or(position) == 0
                };
                if let Some(delta) = choice.get(Key::Delta).filter(JsonLike::is_object) {
                    if !only_calls(&delta) && first() {
                        self.say_delta(&delta)?;
                    }
                    self.feed_deltas(&delta, sink)?;
                }
                // The reason is read only on the chunk that ends the choice.
                if let Some(reason) = choice.get(Key::FinishReason) {
                    if first() {
                        self.say_finish(Some(reason))?;
                    }
                    self.cut_by_length |= stopped_at_limit(choice);
                    // The reply says it ended, but its calls stay open until the stream does
                    // (`[DONE]`, its last byte, `finish`): proxies in front of vLLM (OpenWebUI)
                    // send a finish chunk after every chunk, and the arguments keep coming.
                    self.say_ended();
                }
            }
            if let Some(usage) = chunk.get(Key::Usage) {
                self.say_usage(&usage, Key::PromptTokens, Key::CompletionTokens);
            }
            return Ok(());
        }
        if let Some(message) = chunk.get(Key::Message).filter(JsonLike::is_object) {
            self.say_delta(&message)?;
            for call in message
                .get(Key::ToolCalls)
                .and_then(|c| c.items())
                .unwrap_or_default()
                .iter()
                .filter(|c| c.is_object())
            {
                let delta = self.ollama_call(call)?;
                self.feed_delta(delta, sink)?;
            }
            if chunk.get(Key::Done).is_some_and(|done| done.is_truthy()) {
                self.say_finish(chunk.get(Key::DoneReason))?;
                self.say_usage(chunk, Key::PromptEvalCount, Key::EvalCount);
                self.cut_by_length |= stopped_at_limit(chunk);
                self.end_of_turn(sink)?;
            }
            return Ok(());
        }
        // A bare delta, as some clients pass it on: its text too.
        self.say_delta(chunk)?;
        self.feed_deltas(chunk, sink)
    }

    /// One decoded message of a stream, as a client's own SSE reader (httpx-sse, an SDK's
    /// iterator) hands it out: an event's `data` or one NDJSON line. `[DONE]` ends the turn;
    /// text that is not a JSON object (a keep-alive) says nothing about any call.
    pub fn feed_payload<P: Parser>(
        &mut self,
        payload: &[u8],
        parser: &P,
        sink: &mut (impl FnMut(&Accumulator, Event) -> Result<(), ErrorOf<P::Value>> + ?Sized),
    ) -> Result<(), ErrorOf<P::Value>> {
        self.framed = true;
        let payload = payload.trim_ascii();
        if payload == b"[DONE]" {
            return self.end_of_turn(sink);
        }
        self.read_line(payload, parser, sink).map(drop)
    }

    /// Raw bytes of an SSE or NDJSON stream, split anywhere. Lines are parsed by `parser`; a
    /// line that is not a JSON object (a proxy's keep-alive, a broken line) says nothing about
    /// any call. A line too long to read fails the calls it may have carried (TLP-007).
    pub fn feed_bytes<P: Parser>(
        &mut self,
        bytes: &[u8],
        parser: &P,
        sink: &mut (impl FnMut(&Accumulator, Event) -> Result<(), ErrorOf<P::Value>> + ?Sized),
    ) -> Result<(), ErrorOf<P::Value>> {
        self.framed = true;
        // The framer is moved out while it hands lines to the reader (both are `self`).
        let mut lines = std::mem::take(&mut self.lines);
        let done = lines.push(bytes, |frame| self.frame(frame, parser, sink));
        self.lines = lines;
        done
    }

    /// The raw stream ended: its last line, if it had no newline, and the event it ends.
    pub fn end_bytes<P: Parser>(
        &mut self,
        parser: &P,
        sink: &mut (impl FnMut(&Accumulator, Event) -> Result<(), ErrorOf<P::Value>> + ?Sized),
    ) -> Result<(), ErrorOf<P::Value>> {
        let mut lines = std::mem::take(&mut self.lines);
        let done = lines.finish(|frame| self.frame(frame, parser, sink));
        self.lines = lines;
        done?;
        self.read_held(parser, sink)
    }

    /// One line of a raw stream, or the refusal of one too long to read.
    fn frame<P: Parser>(
        &mut self,
        frame: Frame<'_>,
        parser: &P,
        sink: &mut (impl FnMut(&Accumulator, Event) -> Result<(), ErrorOf<P::Value>> + ?Sized),
    ) -> Result<(), ErrorOf<P::Value>> {
        let line = match frame {
            Frame::Line(line) => line,
            Frame::TooLong => {
                self.read_held(parser, sink)?;
                let limit = self.line_limit;
                let (events, lost_index) = self.calls.refuse_line(limit);
                if let Some(index) = lost_index {
                    self.next_ollama_index = self.next_ollama_index.max(index + 1);
                }
                return self.emit(events, sink);
            }
        };
        match line_kind(line) {
            LineKind::Ignored => Ok(()),
            LineKind::Blank => self.read_held(parser, sink),
            LineKind::Done => {
                self.read_held(parser, sink)?;
                self.end_of_turn(sink)
            }
            LineKind::Bare(payload) => {
                self.read_held(parser, sink)?;
                self.read_line(payload, parser, sink).map(drop)
            }
            LineKind::Data(payload) => {
                if self.held_ends.is_empty() {
                    // One JSON object per data line, as every known server writes them: read now.
                    if self.read_line(payload, parser, sink)? {
                        return Ok(());
                    }
                } else if self.held.len() + 1 + payload.len() > self.line_limit {
                    // An event longer than a line may be: its lines are read one by one.
                    self.read_held_alone(parser, sink)?;
                    return self.frame(Frame::Line(line), parser, sink);
                } else {
                    self.held.push(b'\n');
                }
                self.held.extend_from_slice(payload);
                self.held_ends.push(self.held.len());
                Ok(())
            }
        }
    }

    /// Reads one JSON line; true when it was an object (and was fed). An OpenAI chunk is read
    /// straight from its text (see `openai`); any other line is parsed into a value.
    fn read_line<P: Parser>(
        &mut self,
        payload: &[u8],
        parser: &P,
        sink: &mut (impl FnMut(&Accumulator, Event) -> Result<(), ErrorOf<P::Value>> + ?Sized),
    ) -> Result<bool, ErrorOf<P::Value>> {
        if let Some(chunk) = openai::read_chunk(payload) {
            for choice in chunk.choices {
                let first = choice.index == 0;
                if first {
                    self.say_reasoning(choice.reasoning.unwrap_or_default());
                    self.say_text(choice.text.unwrap_or_default());
                }
                for delta in choice.deltas {
                    self.feed_delta(delta, sink)?;
                }
                if let Some(at_limit) = choice.ends {
                    if let (true, Some(reason)) = (first, choice.finish_reason) {
                        self.say(Said::Finish(reason));
                    }
                    self.cut_by_length |= at_limit;
                    // Its calls stay open until the stream ends (see `feed_chunk`).
                    self.say_ended();
                }
            }
            if let Some((prompt, completion)) = chunk.usage {
                self.say(Said::Usage { prompt, completion });
            }
            return Ok(true);
        }
        let mut chunk = parser.parse(payload)?;
        if chunk.is_none() && payload.first() == Some(&b'{') {
            // A byte that is not UTF-8 or a lone surrogate escape (one bad token) does not cost
            // the line and the call fragments in it.
            let limits = *self.calls.limits();
            if let Some(mended) = crate::repair::encoding_mended(payload, &limits) {
                chunk = parser.parse(mended.as_bytes())?;
            }
        }
        match chunk.filter(JsonLike::is_object) {
            Some(chunk) => self.feed_chunk(&chunk, sink).map(|()| true),
            None => Ok(false),
        }
    }

    /// The event whose lines were held has ended: its lines read joined, or, when that is not
    /// a JSON object (a keep-alive line before a chunk, say), each line alone. The first line
    /// was read alone already; each byte is read at most twice.
    fn read_held<P: Parser>(
        &mut self,
        parser: &P,
        sink: &mut (impl FnMut(&Accumulator, Event) -> Result<(), ErrorOf<P::Value>> + ?Sized),
    ) -> Result<(), ErrorOf<P::Value>> {
        if self.held_ends.len() < 2 {
            self.held.clear();
            self.held_ends.clear();
            return Ok(());
        }
        let held = std::mem::take(&mut self.held);
        let joined = self.read_line(&held, parser, sink);
        self.held = held;
        if joined? {
            self.held.clear();
            self.held_ends.clear();
            return Ok(());
        }
        self.read_held_alone(parser, sink)
    }

    /// Each held line after the first, alone; then nothing is held.
    fn read_held_alone<P: Parser>(
        &mut self,
        parser: &P,
        sink: &mut (impl FnMut(&Accumulator, Event) -> Result<(), ErrorOf<P::Value>> + ?Sized),
    ) -> Result<(), ErrorOf<P::Value>> {
        let held = std::mem::take(&mut self.held);
        let ends = std::mem::take(&mut self.held_ends);
        let mut done = Ok(());
        for pair in ends.windows(2) {
            // A line starts after the newline that ends the one before.
            done = self
                .read_line(&held[pair[0] + 1..pair[1]], parser, sink)
                .map(drop);
            if done.is_err() {
                break;
            }
        }
        self.held = held;
        self.held.clear();
        self.held_ends = ends;
        self.held_ends.clear();
        done
    }

    /// The reply said it ended (once).
    fn say_ended(&mut self) {
        if !self.so_far.ended {
            self.say(Said::End);
        }
    }

    fn end_of_turn<E>(
        &mut self,
        sink: &mut (impl FnMut(&Accumulator, Event) -> Result<(), E> + ?Sized),
    ) -> Result<(), E> {
        self.say_ended();
        let events = self.calls.end_of_turn();
        self.emit(events, sink)
    }

    fn emit<E>(
        &self,
        events: Vec<Event>,
        sink: &mut (impl FnMut(&Accumulator, Event) -> Result<(), E> + ?Sized),
    ) -> Result<(), E> {
        events
            .into_iter()
            .try_for_each(|event| sink(&self.calls, event))
    }

    /// A stream event named by its `type`: Anthropic's Messages stream (`content_block_start`
    /// of a `tool_use` block, `input_json_delta` pieces, `content_block_stop`, `message_stop`)
    /// and the Responses API's (`response.output_item.added` of a `function_call`, argument
    /// `delta`s, `response.output_item.done`, `response.completed`). The call's index is the
    /// block's or output item's. `Some(None)` ends the turn; None when the event is none of
    /// these (or carries nothing about a call).
    #[allow(clippy::option_option)]
    fn typed_event<V: JsonLike>(
        &mut self,
        event: &V,
        kind: &str,
    ) -> Result<Option<Option<Delta>>, V::Error> {
        let index = |key| event.get(key).and_then(|i| i.as_index());
        let text = |v: Option<V>| -> Result<Option<String>, V::Error> {
            Ok(match v {
                Some(v) => v.as_str()?.map(Cow::into_owned),
                None => None,
            })
        };
        let delta = |index, id, name, arguments, complete| Delta {
            index,
            id,
            name,
            arguments,
            complete,
        };
        Ok(Some(match kind {
            "content_block_start" | "response.output_item.added" => {
                let (Some(index), Some(item)) = (
                    index(Key::Index).or_else(|| index(Key::OutputIndex)),
                    event
                        .get(Key::ContentBlock)
                        .or_else(|| event.get(Key::Item)),
                ) else {
                    return Ok(None);
                };
                let block = kind_of(&item)?;
                if !matches!(block.as_deref(), Some("tool_use" | "function_call")) {
                    return Ok(None);
                }
                let id = item.get(Key::CallId).or_else(|| item.get(Key::Id));
                // Anthropic starts a block with its `input` empty ({}); its text comes in pieces.
                let arguments = text(item.get(Key::Arguments))?;
                Some(delta(
                    index,
                    text(id)?,
                    text(item.get(Key::Name))?,
                    arguments,
                    false,
                ))
            }
            "content_block_delta" => {
                let (Some(index), Some(piece)) = (index(Key::Index), event.get(Key::Delta)) else {
                    return Ok(None);
                };
                let Some(json) = text(piece.get(Key::PartialJson))? else {
                    // Anthropic's text and thinking blocks grow by deltas of their own.
                    match kind_of(&piece)?.as_deref() {
                        Some("text_delta") => {
                            self.say_text(text(piece.get(Key::Text))?.unwrap_or_default())
                        }
                        Some("thinking_delta") => {
                            self.say_reasoning(text(piece.get(Key::Thinking))?.unwrap_or_default())
                        }
                        _ => {}
                    }
                    return Ok(None);
                };
                Some(delta(index, None, None, Some(json), false))
            }
            "response.function_call_arguments.delta" => {
                let Some(index) = index(Key::OutputIndex) else {
                    return Ok(None);
                };
                Some(delta(
                    index,
                    None,
                    None,
                    text(event.get(Key::Delta))?,
                    false,
                ))
            }
            "content_block_stop" | "response.output_item.done" => {
                let Some(index) = index(Key::Index).or_else(|| index(Key::OutputIndex)) else {
                    return Ok(None);
                };
                // Text blocks end too: only a call that was started is complete.
                if self.calls.slot_of(index).is_none() {
                    return Ok(None);
                }
                Some(delta(index, None, None, None, true))
            }
            "message_start" => {
                if let Some(usage) = event.get(Key::Message).and_then(|m| m.get(Key::Usage)) {
                    self.say_usage(&usage, Key::InputTokens, Key::OutputTokens);
                }
                return Ok(None);
            }
            "message_delta" => {
                // Anthropic's stop reason comes in the delta before `message_stop`.
                if let Some(delta) = event.get(Key::Delta) {
                    self.say_finish(delta.get(Key::StopReason))?;
                    self.cut_by_length |= stopped_at_limit(&delta);
                }
                if let Some(usage) = event.get(Key::Usage) {
                    self.say_usage(&usage, Key::InputTokens, Key::OutputTokens);
                }
                return Ok(None);
            }
            "response.output_text.delta" => {
                self.say_text(text(event.get(Key::Delta))?.unwrap_or_default());
                return Ok(None);
            }
            "response.reasoning_text.delta" | "response.reasoning_summary_text.delta" => {
                self.say_reasoning(text(event.get(Key::Delta))?.unwrap_or_default());
                return Ok(None);
            }
            "message_stop" => None,
            "response.completed" => {
                if let Some(usage) = event.get(Key::Response).and_then(|r| r.get(Key::Usage)) {
                    self.say_usage(&usage, Key::InputTokens, Key::OutputTokens);
                }
                None
            }
            "response.incomplete" => {
                self.cut_by_length = true;
                None
            }
            _ => return Ok(None),
        }))
    }

    /// OpenAI deltas: argument text in pieces, the call's index on the entry (its place in the
    /// list when missing).
    fn feed_deltas<V: JsonLike>(
        &mut self,
        delta: &V,
        sink: &mut (impl FnMut(&Accumulator, Event) -> Result<(), V::Error> + ?Sized),
    ) -> Result<(), V::Error> {
        let Some(calls) = delta.get(Key::ToolCalls).and_then(|c| c.items()) else {
            return Ok(());
        };
        for (position, call) in calls.iter().enumerate() {
            if !call.is_object() {
                continue;
            }
            let function = call.get(Key::Function).filter(JsonLike::is_object);
            let text = |key| function.as_ref()?.get(key)?.display();
            let delta = Delta {
                index: call
                    .get(Key::Index)
                    .and_then(|i| i.as_index())
                    .unwrap_or(position),
                id: call.get(Key::Id).and_then(|i| i.display()),
                name: text(Key::Name),
                arguments: text(Key::Arguments),
                complete: false,
            };
            self.feed_delta(delta, sink)?;
        }
        Ok(())
    }

    /// An Ollama call: whole, its arguments an object (written as JSON text here), its index in
    /// `function.index` or counted through the turn.
    fn ollama_call<V: JsonLike>(&mut self, call: &V) -> Result<Delta, V::Error> {
        let function = call.get(Key::Function).filter(JsonLike::is_object);
        let member = |key| function.as_ref().and_then(|f| f.get(key));
        let index = member(Key::Index)
            .and_then(|i| i.as_index())
            .unwrap_or(self.next_ollama_index);
        self.next_ollama_index = index + 1;
        let arguments = match member(Key::Arguments) {
            Some(a) => Some(match a.as_str()? {
                Some(text) => text.into_owned(),
                None => a.to_json()?,
            }),
            None => None,
        };
        Ok(Delta {
            index,
            id: call.get(Key::Id).and_then(|i| i.display()),
            name: member(Key::Name).and_then(|n| n.display()),
            arguments,
            complete: true,
        })
    }
}
