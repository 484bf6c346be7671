//! Tool calls out of a model's reply: the name rules every call must pass, and the calls that
//! models write in their text instead of the structured `tool_calls` field.
//!
//! One pass (`engine`) cuts the content into prose, quoted text and call blocks: an Aho-Corasick
//! automaton finds the markers of every known format at once (the table in `formats`), fences
//! and inline code are found by their backticks, and a block's end is found outside its JSON
//! strings (by the body's lexer, `lexer`). Each format reads the calls in its blocks; where no
//! marker stands, JSON objects shaped like a call (`{"name": ..., "arguments": ...}`) are taken
//! from the prose. The token reader runs the same pass on the text as it arrives. Every search
//! resumes where it stopped, so the work is linear in the content, and a deadline bounds it.
//!
//! The modules depend one way: `engine` on `formats` (the table) and `lexer`; `formats` on
//! `lexer` and `shape`; `lexer` on none of them.

mod context;
mod engine;
mod formats;
mod lexer;
mod shape;
#[cfg(test)]
mod tests;

use std::time::{Duration, Instant};

use engine::{Engine, Kind, Seg};
use shape::{looks_pythonic, names_a_tool, pythonic_calls, structure, Context, JsonCalls};

use crate::error::{Error, ErrorCode, ErrorKind};
use crate::limits::Limits;
use crate::repair::Repair;

pub use engine::QUOTING;
pub use formats::{Formats, ANY_JSON, BARE_JSON, PYTHONIC};
pub use shape::value_end;

/// A tool call found in text, before its name and arguments are checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoundCall {
    /// The name as written; None when the call gave none (TLP-002 later).
    pub name: Option<String>,
    /// The arguments as written (JSON text, possibly broken); None when the call gave none.
    pub arguments: Option<String>,
    /// The call's id, when the format carries one.
    pub id: Option<String>,
    /// Byte offset in the content where the call starts.
    pub position: usize,
    /// The format it was written in: "hermes", "mistral", "bare_json", ...
    pub format: &'static str,
    /// Repairs made to the text around the arguments (positions in the content).
    pub repairs: Vec<Repair>,
    /// Set when the call's text could not be read even after repair: the call is reported, not
    /// lost. `arguments` then holds the text that was tried.
    pub error: Option<crate::Error>,
    /// The text ended inside the call's arguments (see `repair::ends_cut_off`): what was
    /// mended is the start of a call, not a whole one.
    pub cut: bool,
    /// Values written without JSON types (Qwen3-Coder's `<parameter=k>` text), by key, as
    /// written, where they were read as something other than a string: a tool's schema may say
    /// they are strings after all (`<parameter=zip>02139` for a string property).
    pub untyped: Vec<(String, String)>,
    /// The text the call was cut out of, as written (its block, markers included; shared by
    /// the calls of one block), where a reader that hands the text on puts back a call that
    /// was refused. None for a timeout.
    pub written: Option<std::sync::Arc<str>>,
}

/// Text that looked like a call and was not taken as one: where it starts in the content and
/// why (one of `context::why`'s reasons). A note never makes a reading fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Note {
    pub position: usize,
    pub reason: &'static str,
}

/// At most this many notes are kept per reading (the count in `quoted` goes on).
const MAX_NOTES: usize = 64;

/// One more call-like text not taken: counted, and noted while there is room.
fn note(notes: &mut Vec<Note>, quoted: &mut usize, position: usize, reason: &'static str) {
    *quoted += 1;
    if notes.len() < MAX_NOTES {
        notes.push(Note { position, reason });
    }
}

/// The calls found in a reply's text and the text with them cut out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TextCalls {
    pub calls: Vec<FoundCall>,
    pub text: String,
    /// The model's reasoning written in the text (`<think>` blocks and their kin, or all that
    /// came before a lone closer), markers dropped: never text, never a source of calls.
    pub reasoning: String,
    /// Calls that stood where the model only quotes (see `QUOTING`), left in the text: the
    /// calls a quoted fence or block would have made, and the call markers in other quoted text.
    pub quoted: usize,
    /// Where those stood and why they were not taken (the first 64), in the order found.
    pub notes: Vec<Note>,
    /// Where the first call and the last one were cut out of `text` (byte offsets in it): the
    /// text before the calls and the text after them. None when no call was cut out.
    pub calls_at: Option<(usize, usize)>,
}

/// Checks a tool name in the order of the pipeline under the default rule: empty (TLP-002),
/// characters outside `[A-Za-z0-9_]` (TLP-003), longer than the rule's
/// [`NameRule::max_len`](crate::names::NameRule::max_len) (64, OpenAI's limit; TLP-005).
pub fn check_name(name: &str) -> Result<(), (ErrorCode, String)> {
    crate::names::NameRule::Default.check(name)
}

/// The opening marker of every format in the table: calls, fences, tool results, thinking and
/// section markers.
pub fn markers() -> impl Iterator<Item = &'static str> {
    formats::FORMATS.iter().map(|f| f.open)
}

/// The markers that open or close reasoning.
pub fn reasoning_markers() -> impl Iterator<Item = &'static str> {
    formats::FORMATS
        .iter()
        .filter(|f| {
            matches!(
                f.body,
                formats::Body::Quote { think: true, .. } | formats::Body::ReasoningEnd
            )
        })
        .map(|f| f.open)
}

/// Finds the tool calls written in `content`. `is_tool` (when given) decides whether a JSON
/// object in plain prose that names a tool is a call: with a registry, an object naming no known
/// tool stays text. Calls behind an explicit marker are always taken (and checked later). When
/// the deadline of `limits` passes, the rest is text and a call carrying the timeout is reported.
pub fn text_calls(
    content: &str,
    limits: &Limits,
    is_tool: Option<&dyn Fn(&str) -> bool>,
) -> TextCalls {
    text_calls_in(content, limits, is_tool, Formats::default())
}

/// [`text_calls`], taking only the formats in `formats`: the blocks of the others stay text.
pub fn text_calls_in(
    content: &str,
    limits: &Limits,
    is_tool: Option<&dyn Fn(&str) -> bool>,
    formats: Formats,
) -> TextCalls {
    read_text(content, limits, is_tool, formats, usize::MAX)
}

/// [`text_calls_in`], giving back as text what a stream would (a block or a held stretch
/// longer than `max_hold`).
fn read_text(
    content: &str,
    limits: &Limits,
    is_tool: Option<&dyn Fn(&str) -> bool>,
    formats: Formats,
    max_hold: usize,
) -> TextCalls {
    let clock = Clock::new(limits);
    let mut engine = Engine::new(max_hold);
    let mut segs = Vec::new();
    engine.step(content, 0, true, &clock, &mut segs);
    let mut out = Output {
        content,
        limits,
        clock: &clock,
        is_tool,
        result: TextCalls {
            quoted: engine.quoted,
            notes: std::mem::take(&mut engine.notes),
            ..TextCalls::default()
        },
        timed_out: false,
        alone_ok: prose_stretches(after_reasoning(&segs)) <= 1,
        formats,
    };
    let mut prose_from = None;
    for seg in &segs {
        if seg.kind == Kind::Prose {
            prose_from.get_or_insert(seg.start);
            continue;
        }
        if let Some(from) = prose_from.take() {
            out.prose(from, seg.start);
        }
        out.segment(seg);
    }
    if let Some(from) = prose_from {
        out.prose(from, content.len());
    }
    let text = out.result.text.trim();
    if text.len() != out.result.text.len() {
        let lead = out.result.text.len() - out.result.text.trim_start().len();
        let at = |cut: usize| cut.saturating_sub(lead).min(text.len());
        out.result.calls_at = out
            .result
            .calls_at
            .map(|(first, last)| (at(first), at(last)));
        out.result.text = text.to_string();
    }
    let reasoning = out.result.reasoning.trim();
    if reasoning.len() != out.result.reasoning.len() {
        out.result.reasoning = reasoning.to_string();
    }
    out.result
}

/// The stretches after a lone reasoning closer (all of them when there is none): what came
/// before it was reasoning, not the answer.
fn after_reasoning(segs: &[Seg]) -> &[Seg] {
    match segs.iter().rposition(|s| s.kind == Kind::ReasoningEnd) {
        Some(i) => &segs[i + 1..],
        None => segs,
    }
}

/// How many stretches of prose (quoted prose included) hold more than whitespace: a pythonic
/// list is a call when it is all the prose of the reply.
fn prose_stretches(segs: &[Seg]) -> usize {
    let mut count = 0;
    let mut in_run = false;
    for (i, seg) in segs.iter().enumerate() {
        let run_start = seg.kind == Kind::Prose && (i == 0 || segs[i - 1].kind != Kind::Prose);
        if run_start {
            in_run = false;
        }
        if seg.prose_like && !(seg.kind == Kind::Prose && in_run) {
            count += 1;
            in_run = seg.kind == Kind::Prose;
        }
    }
    count
}

/// The deadline of one reading: searches check it as they go, and each repair gets what is
/// left of it.
pub(crate) struct Clock {
    at: Option<Instant>,
    limit_ms: u64,
}

impl Clock {
    pub(crate) fn new(limits: &Limits) -> Self {
        Clock {
            at: (limits.timeout_ms > 0)
                .then(|| Instant::now() + Duration::from_millis(limits.timeout_ms)),
            limit_ms: limits.timeout_ms,
        }
    }

    pub(crate) fn expired(&self) -> bool {
        self.at.is_some_and(|at| Instant::now() >= at)
    }

    /// `limits` with the time left (at least a millisecond, so that a repair is refused by
    /// its own deadline rather than run without one).
    fn left(&self, limits: &Limits) -> Limits {
        match self.at {
            None => *limits,
            Some(at) => Limits {
                timeout_ms: (at.saturating_duration_since(Instant::now()).as_millis() as u64)
                    .max(1),
                ..*limits
            },
        }
    }

    /// The deadline passed at `position`: reported as a call that could not be read.
    fn timeout(&self, position: usize) -> FoundCall {
        FoundCall {
            name: None,
            arguments: None,
            id: None,
            position,
            format: "text",
            repairs: Vec::new(),
            error: Some(Error {
                kind: ErrorKind::Timeout {
                    limit_ms: self.limit_ms,
                },
                position,
            }),
            cut: false,
            untyped: Vec::new(),
            written: None,
        }
    }
}

/// Collects the calls and the text between them, stretch by stretch.
struct Output<'a> {
    content: &'a str,
    limits: &'a Limits,
    clock: &'a Clock,
    is_tool: Option<&'a dyn Fn(&str) -> bool>,
    result: TextCalls,
    timed_out: bool,
    alone_ok: bool,
    formats: Formats,
}

impl Output<'_> {
    fn segment(&mut self, seg: &Seg) {
        let text = &self.content[seg.start..seg.end];
        match seg.kind {
            Kind::Prose | Kind::Text => self.result.text.push_str(text),
            Kind::Strip => {}
            Kind::Reasoning => self.result.reasoning.push_str(text),
            Kind::ReasoningEnd => {
                // All so far was reasoning, as written: its text, and the calls it seemed to
                // make (no reasoning block came before a lone closer).
                self.result.text.clear();
                self.result.calls_at = None;
                self.result.reasoning = self.content[..seg.start].to_string();
                // Counted as quoted markers are: JSON in bare prose is not counted.
                let calls = std::mem::take(&mut self.result.calls);
                for call in calls {
                    if !matches!(call.format, BARE_JSON | PYTHONIC | ANY_JSON) {
                        self.note(call.position, context::why::BEFORE_LONE_CLOSER);
                    }
                }
            }
            Kind::Timeout => self.time_out(seg.start),
            Kind::Block { .. } if self.timed_out || self.clock.expired() => {
                self.time_out(seg.start);
                self.result.text.push_str(text);
            }
            Kind::Block { fmt, .. } if !self.formats.takes(formats::FORMATS[fmt].name) => {
                self.result.text.push_str(text);
            }
            Kind::Block {
                fmt,
                body_start,
                body_end,
                quoted,
            } => {
                let limits = self.clock.left(self.limits);
                let calls = formats::read_block(
                    fmt,
                    text,
                    seg.start,
                    body_start - seg.start,
                    body_end - seg.start,
                    &limits,
                    seg.end == self.content.len() && body_end == seg.end,
                );
                let quoted = match (quoted, &calls) {
                    (Some(context::why::FENCE), Some(calls)) if fmt == formats::FENCED_JSON => {
                        self.fence_amid_prose(seg, calls)
                    }
                    _ => quoted,
                };
                match calls {
                    Some(calls) if quoted.is_none() => self.cut_out(written_in(calls, text)),
                    Some(calls) => {
                        for call in &calls {
                            self.note(call.position, quoted.unwrap_or_default());
                        }
                        self.result.text.push_str(text);
                    }
                    None => {
                        let body = &self.content[body_start..body_end];
                        for at in formats::markers_in(body) {
                            self.note(body_start + at, context::why::IN_DATA);
                        }
                        self.result.text.push_str(text);
                    }
                }
            }
        }
    }

    /// Calls cut out of the text where it stands now.
    fn cut_out(&mut self, calls: Vec<FoundCall>) {
        if !calls.is_empty() {
            let at = self.result.text.len();
            let first = self.result.calls_at.map_or(at, |(first, _)| first);
            self.result.calls_at = Some((first, at));
        }
        self.result.calls.extend(calls);
    }

    fn note(&mut self, position: usize, reason: &'static str) {
        note(
            &mut self.result.notes,
            &mut self.result.quoted,
            position,
            reason,
        );
    }

    /// A JSON fence amid prose is a sample, unless it is the reply's call: it names registered
    /// tools, nothing but a short closing line follows it, and the line before it does not
    /// introduce an example. None when it is the call, else why it is not.
    fn fence_amid_prose(&self, seg: &Seg, calls: &[FoundCall]) -> Option<&'static str> {
        use context::why;
        let known = self.is_tool.is_some() && calls.iter().all(|c| names_a_tool(c, self.is_tool));
        if !known {
            return Some(why::UNKNOWN);
        }
        // The only fence of the reply, and nothing but a closing line after it.
        if !closing_remark(&self.content[seg.end..]) || self.content[..seg.start].contains("```") {
            return Some(why::NOT_LAST);
        }
        let before = self.content[..seg.start].trim_end();
        let line = before.rsplit('\n').next().unwrap_or(before);
        if introduces_an_example(line) {
            return Some(why::EXAMPLE);
        }
        None
    }

    fn time_out(&mut self, position: usize) {
        if !self.timed_out {
            self.timed_out = true;
            self.cut_out(vec![self.clock.timeout(position)]);
        }
    }

    /// Adds `content[from..to]` as prose: JSON objects in it that are shaped like calls (and
    /// name a known tool, with a registry) become calls; the rest is text. Each value is
    /// measured once, with every bracket nested in it (outside its strings): a list that is not
    /// a call is looked into through those, so no look-ahead is repeated from a later start.
    fn prose(&mut self, from: usize, to: usize) {
        let content = self.content;
        let bytes = content.as_bytes();
        let whole = content[from..to].trim();
        let mut kept = from;
        let mut i = from;
        while let Some(offset) = memchr::memchr2(b'{', b'[', &bytes[i..to]) {
            if self.timed_out || self.clock.expired() {
                self.time_out(i);
                break;
            }
            let start = i + offset;
            let values = structure(&bytes[..to], start);
            let mut skip_to = start;
            for &(open, close) in &values {
                if open < skip_to {
                    continue;
                }
                // Stray closers after the value (`[{...}]]`) leave it the whole reply.
                let value = content[open..close].trim();
                let alone = self.alone_ok
                    && whole
                        .strip_prefix(value)
                        .is_some_and(|rest| rest.trim().bytes().all(|b| matches!(b, b']' | b'}')));
                let calls = if bytes[open] == b'{'
                    || bytes.get(crate::scan::skip_ws(bytes, open + 1)) == Some(&b'{')
                {
                    // Amid other text, JSON is a call when the registry knows its name, or
                    // with any_json (Lenient); as the whole reply, with bare_json.
                    let taken = self.formats.takes(ANY_JSON)
                        || (self.formats.takes(BARE_JSON) && (alone || self.is_tool.is_some()));
                    if !taken {
                        continue;
                    }
                    let limits = self.clock.left(self.limits);
                    JsonCalls {
                        content,
                        context: Context::Prose,
                        format: BARE_JSON,
                        limits: &limits,
                        is_tool: self.is_tool,
                    }
                    .in_span(open, close)
                } else if looks_pythonic(&content[open..close]) && self.formats.takes(PYTHONIC) {
                    // `[get_weather(city='Paris')]`: taken when it is the whole reply, or when a
                    // registry knows every name in it (prose has brackets and parentheses too).
                    let calls = pythonic_calls(content, open, close, PYTHONIC);
                    let all_known = self.is_tool.is_some()
                        && calls.iter().all(|c| names_a_tool(c, self.is_tool));
                    if alone || all_known {
                        calls
                    } else {
                        Vec::new()
                    }
                } else {
                    continue; // a list of something else: what is nested in it comes next
                };
                skip_to = close;
                if !calls.is_empty() {
                    self.result.text.push_str(&content[kept..open]);
                    self.cut_out(written_in(calls, &content[open..close]));
                    kept = close;
                }
            }
            i = values[0].1.max(start + 1);
        }
        self.result.text.push_str(&content[kept..to]);
    }
}

/// `calls` with the text they were cut out of, one copy shared by them all.
fn written_in(mut calls: Vec<FoundCall>, text: &str) -> Vec<FoundCall> {
    let text: std::sync::Arc<str> = text.into();
    for call in &mut calls {
        call.written = Some(text.clone());
    }
    calls
}

/// What may follow the reply's call: nothing, or a short closing line ("Let me know if you
/// need more."), with no code, bracket or markup that could be another block.
fn closing_remark(after: &str) -> bool {
    let after = after.trim();
    after.len() <= 240
        && after.lines().count() <= 2
        && !after.contains(['`', '{', '[', '<', '~', '|'])
}

/// The line before a fence introduces it as an example (`For example, you could call:`).
fn introduces_an_example(line: &str) -> bool {
    const WORDS: &[&str] = &[
        "example",
        "e.g.",
        "for instance",
        "such as",
        "like this",
        "like so",
        "would look",
        "could call",
        "could use",
        "can call",
        "can use",
        "might call",
        "might look",
        "format",
        "syntax",
        "sample",
        "template",
        "schema",
        "looks like",
        "how to",
        "here's how",
        "here is how",
        "would be",
        "should look",
    ];
    let line = line.to_ascii_lowercase();
    WORDS.iter().any(|w| line.contains(w))
}

fn flush_text(text: &mut String, events: &mut Vec<TextEvent>) {
    if !text.is_empty() {
        events.push(TextEvent::Text(std::mem::take(text)));
    }
}

/// How many bytes of an open block `TextCallParser` holds back by default before giving it back
/// as text.
pub const DEFAULT_MAX_BUFFER: usize = 50_000;

/// What a piece of streamed text gave: text to show now, or the calls of a block that closed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TextEvent {
    Text(String),
    Calls(Vec<FoundCall>),
    /// The body of a reasoning block: never text, never calls.
    Reasoning(String),
    /// A lone reasoning closer came: everything before it (this, as written) was reasoning.
    /// The text handed out so far was part of it and belongs to the reasoning, not the
    /// answer; the calls it seemed to make were held back and are dropped.
    TextWasReasoning(String),
    /// At the end of the text: what was handed out as text held calls written without a
    /// marker (bare JSON, a pythonic list), which only the whole text tells apart from prose
    /// (see `text_calls`). `text` is the reply's text without them, as `text_calls` gives it,
    /// to stand instead of the text handed out.
    CallsInText {
        text: String,
        calls: Vec<FoundCall>,
    },
}

/// Reads tool calls out of text that arrives token by token, by the same pass as `text_calls`.
/// Calls written without a marker (bare JSON, a pythonic list) are known only once the text
/// ends: the stream does not wait for them, and `finish` hands them out with the text
/// corrected (`TextEvent::CallsInText`). Plain text is handed back at once, except an end that may be the start of a
/// marker; a block is held until it ends, then read as calls. Text is held while it is not yet
/// known to be quoted (inline code not yet closed, fences that may be the whole reply), at most
/// `max_buffer` bytes: a block longer than that is given back as text, and so are fences held
/// longer. Positions are counted from the first byte fed (since `new`, `flush` or `reset`).
/// Each byte is searched a bounded number of times, so a stream costs time linear in its size.
#[derive(Debug)]
pub struct TextCallParser {
    limits: Limits,
    max_buffer: usize,
    /// The text from byte `base` on that is still needed.
    buffer: String,
    base: usize,
    engine: Engine,
    /// Calls read from quoted blocks (the engine counts the markers in quoted text).
    quoted_calls: usize,
    formats: Formats,
    /// Until a reasoning marker settles whether the reply began inside a reasoning block, the
    /// text as fed (a lone closer makes it reasoning) and the calls found in it, held back.
    unsettled: Option<Unsettled>,
    /// All the text fed, for calls written without a marker (None once it outgrows
    /// `limits.max_size`, past which a whole reply is refused anyway, or when no such format
    /// is taken).
    fed: Option<String>,
    /// Text with a `{`, `[`, `<`, `>` or a backtick in it was handed out (as text or
    /// reasoning): only then may it hold calls the whole text shows.
    bracket_shown: bool,
    /// Where the calls handed out so far start.
    emitted: std::collections::HashSet<usize>,
    /// After `finish`: the notes of the whole text (see `TextCalls::notes`).
    notes: Vec<Note>,
}

/// What a stream holds while a lone reasoning closer may still come.
#[derive(Debug, Default)]
struct Unsettled {
    raw: String,
    /// The blocks of calls, each as it would have gone out.
    blocks: Vec<Vec<FoundCall>>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").finish_non_exhaustive()
    }
}

impl TextCallParser {
    pub fn new(limits: Limits, max_buffer: usize) -> Self {
        let mut parser = TextCallParser {
            limits,
            max_buffer,
            buffer: String::new(),
            base: 0,
            engine: Engine::new(max_buffer),
            quoted_calls: 0,
            formats: Formats::default(),
            unsettled: Some(Unsettled::default()),
            fed: None,
            bracket_shown: false,
            emitted: Default::default(),
            notes: Vec::new(),
        };
        parser.reset();
        parser
    }

    /// Takes only the formats in `formats` (the default preset otherwise).
    pub fn with_formats(mut self, formats: Formats) -> Self {
        self.formats = formats;
        self.reset();
        self
    }

    pub fn feed(&mut self, token: &str) -> Vec<TextEvent> {
        self.buffer.push_str(token);
        if let Some(u) = &mut self.unsettled {
            u.raw.push_str(token);
        }
        if let Some(fed) = &mut self.fed {
            if fed.len() + token.len() > self.limits.max_size {
                self.fed = None;
            } else {
                fed.push_str(token);
            }
        }
        self.run(false)
    }

    /// The end of the text: a block still open is read as it is (repaired where cut off), and
    /// fences still held were the whole reply. Calls written without a marker are not looked
    /// for (see `finish`).
    pub fn flush(&mut self) -> Vec<TextEvent> {
        self.fed = None;
        self.finish(None)
    }

    /// `flush`, and the calls written without a marker in the text handed out, read from the
    /// whole text as `text_calls` reads it (`is_tool` as there): the stream's calls are then
    /// those of the whole reply. Linear: the text is read once more, only when text with a
    /// bracket was handed out.
    pub fn finish(&mut self, is_tool: Option<&dyn Fn(&str) -> bool>) -> Vec<TextEvent> {
        let mut events = self.run(true);
        let fed = self.fed.take().filter(|_| self.bracket_shown);
        let emitted = std::mem::take(&mut self.emitted);
        let quoted = self.quoted();
        let stream_notes = std::mem::take(&mut self.engine.notes);
        self.reset();
        self.quoted_calls = quoted;
        self.notes = stream_notes;
        if let Some(fed) = fed {
            let mut whole = read_text(&fed, &self.limits, is_tool, self.formats, self.max_buffer);
            self.notes = std::mem::take(&mut whole.notes);
            // The calls only the whole text shows: written without a marker, a fence that
            // was the reply's last block, a marker after an opener that was only named.
            let unmarked: Vec<FoundCall> = whole
                .calls
                .into_iter()
                .filter(|c| !emitted.contains(&c.position))
                .collect();
            if !unmarked.is_empty() {
                events.push(TextEvent::CallsInText {
                    text: whole.text,
                    calls: unmarked,
                });
            }
        }
        events
    }

    /// Forgets everything held.
    pub fn reset(&mut self) {
        self.buffer.clear();
        self.base = 0;
        self.engine = Engine::new(self.max_buffer);
        self.quoted_calls = 0;
        self.unsettled = Some(Unsettled::default());
        self.fed = Some(String::new());
        self.bracket_shown = false;
        self.emitted.clear();
        self.notes.clear();
    }

    /// Where the calls seen only quoted stood and why (see `TextCalls::notes`): as the
    /// stream has read them so far, or, after `finish`, as the whole text reads them.
    pub fn notes(&self) -> &[Note] {
        if self.notes.is_empty() {
            &self.engine.notes
        } else {
            &self.notes
        }
    }

    /// Calls seen where the model only quotes (see `TextCalls::quoted`), since `new` or
    /// `reset`.
    pub fn quoted(&self) -> usize {
        self.engine.quoted + self.quoted_calls
    }

    fn run(&mut self, at_end: bool) -> Vec<TextEvent> {
        let clock = Clock::new(&self.limits);
        let mut segs = Vec::new();
        self.engine
            .step(&self.buffer, self.base, at_end, &clock, &mut segs);
        let mut events: Vec<TextEvent> = Vec::new();
        let mut text = String::new();
        let mut timed_out = false;
        for seg in segs {
            let piece = &self.buffer[seg.start - self.base..seg.end - self.base];
            let calls = match seg.kind {
                Kind::Prose | Kind::Text => {
                    text.push_str(piece);
                    continue;
                }
                Kind::Strip => continue,
                Kind::Reasoning => {
                    flush_text(&mut text, &mut events);
                    match events.last_mut() {
                        Some(TextEvent::Reasoning(r)) => r.push_str(piece),
                        _ => events.push(TextEvent::Reasoning(piece.to_string())),
                    }
                    continue;
                }
                Kind::ReasoningEnd => {
                    flush_text(&mut text, &mut events);
                    let u = self.unsettled.take().unwrap_or_default();
                    self.quoted_calls += u.blocks.iter().map(Vec::len).sum::<usize>();
                    let before = u.raw.get(..seg.start).unwrap_or(&u.raw);
                    events.push(TextEvent::TextWasReasoning(before.to_string()));
                    continue;
                }
                Kind::Timeout | Kind::Block { .. } if timed_out => {
                    text.push_str(piece);
                    continue;
                }
                Kind::Timeout => {
                    timed_out = true;
                    vec![clock.timeout(seg.start)]
                }
                // The deadline passed: what is not read yet is text, and the timeout a call.
                Kind::Block { .. } if clock.expired() => {
                    timed_out = true;
                    text.push_str(piece);
                    vec![clock.timeout(seg.start)]
                }
                Kind::Block { fmt, .. } if !self.formats.takes(formats::FORMATS[fmt].name) => {
                    text.push_str(piece);
                    continue;
                }
                Kind::Block {
                    fmt,
                    body_start,
                    body_end,
                    quoted,
                } => {
                    let limits = clock.left(&self.limits);
                    let open_at_end =
                        at_end && seg.end == self.base + self.buffer.len() && body_end == seg.end;
                    let calls = formats::read_block(
                        fmt,
                        piece,
                        seg.start,
                        body_start - seg.start,
                        body_end - seg.start,
                        &limits,
                        open_at_end,
                    );
                    match calls {
                        Some(calls) if quoted.is_none() => written_in(calls, piece),
                        found => {
                            self.quoted_calls += found.map_or_else(
                                || {
                                    let body =
                                        &self.buffer[body_start - self.base..body_end - self.base];
                                    formats::markers_in(body).count()
                                },
                                |c| c.len(),
                            );
                            text.push_str(piece);
                            continue;
                        }
                    }
                }
            };
            match &mut self.unsettled {
                // A timeout is reported at once: nothing after it is read.
                Some(u) if !timed_out => {
                    u.blocks.push(calls);
                    continue;
                }
                _ => {}
            }
            flush_text(&mut text, &mut events);
            events.push(TextEvent::Calls(calls));
        }
        flush_text(&mut text, &mut events);
        let telling = |t: &str| {
            t.bytes()
                .any(|b| matches!(b, b'{' | b'[' | b'<' | b'>' | b'`'))
        };
        self.bracket_shown = self.bracket_shown
            || events
                .iter()
                .any(|e| matches!(e, TextEvent::Text(t) | TextEvent::Reasoning(t) if telling(t)));
        // An opener settled it (a closer after it is no lone closer), or the text ended: the
        // calls held are the reply's.
        if at_end || self.engine.reasoning_seen {
            if let Some(u) = self.unsettled.take() {
                events.extend(u.blocks.into_iter().map(TextEvent::Calls));
            }
        }
        for e in &events {
            if let TextEvent::Calls(calls) = e {
                self.emitted.extend(calls.iter().map(|c| c.position));
            }
        }
        // Drop what is no longer needed, once it is most of the buffer (amortised: each byte
        // is moved a bounded number of times).
        let done = self.engine.needed_from().min(self.base + self.buffer.len()) - self.base;
        if done > 0 && done * 2 >= self.buffer.len() {
            self.buffer.drain(..done);
            self.base += done;
        }
        events
    }
}
