//! Tool calls out of a model's reply: the name rules every call must pass, and the calls that
//! models write in their text instead of the structured `tool_calls` field.
//!
//! `text_calls` makes one pass over the content: an Aho-Corasick automaton finds the markers of
//! every known format at once (the table in `formats`), each format cuts its body and reads the
//! calls in it, and the text between the calls is kept. Where no marker stands, JSON objects
//! shaped like a call (`{"name": ..., "arguments": ...}`) are taken from the prose. Each span is
//! read once and the scan never goes back, so the work is linear in the content.

mod formats;
mod shape;
#[cfg(test)]
mod tests;

use crate::error::ErrorCode;
use crate::limits::Limits;
use crate::repair::Repair;

pub use shape::value_end;

/// The longest tool name a call may give (TLP-005).
pub const MAX_NAME_LEN: usize = 64;

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
}

/// The calls found in a reply's text and the text with them cut out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TextCalls {
    pub calls: Vec<FoundCall>,
    pub text: String,
}

/// Checks a tool name in the order of the pipeline: empty (TLP-002), characters outside
/// `[A-Za-z0-9_]` (TLP-003), longer than 64 (TLP-005).
pub fn check_name(name: &str) -> Result<(), (ErrorCode, String)> {
    if name.trim().is_empty() {
        return Err((
            ErrorCode::EmptyName,
            "Function name is required: the name is empty".into(),
        ));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_'))
    {
        return Err((
            ErrorCode::InvalidName,
            format!(
                "Function name has the character {bad:?}; only letters, digits and '_' are allowed"
            ),
        ));
    }
    if name.len() > MAX_NAME_LEN {
        return Err((
            ErrorCode::NameTooLong,
            format!(
                "Function name is {} characters long; at most {MAX_NAME_LEN} are allowed",
                name.len()
            ),
        ));
    }
    Ok(())
}

/// Finds the tool calls written in `content`. `is_tool` (when given) decides whether a JSON
/// object in plain prose that names a tool is a call: with a registry, an object naming no known
/// tool stays text. Calls behind an explicit marker are always taken (and checked later).
pub fn text_calls(
    content: &str,
    limits: &Limits,
    is_tool: Option<&dyn Fn(&str) -> bool>,
) -> TextCalls {
    formats::scan(content, limits, is_tool)
}

/// What a piece of streamed text gave: text to show now, or the calls of a block that closed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TextEvent {
    Text(String),
    Calls(Vec<FoundCall>),
}

/// Reads tool calls out of text that arrives token by token. Plain text is handed back at once,
/// except an end that may be the start of a marker; from a marker on, text is held until the
/// block closes (its closing marker, or a whole JSON value for formats without one) and then read
/// as calls. A block that holds no call, or grows past `max_buffer` bytes, is given back as text.
/// Each byte is searched once, so a stream costs time linear in its size.
#[derive(Debug)]
pub struct TextCallParser {
    limits: Limits,
    max_buffer: usize,
    buffer: String,
    block: Option<Block>,
    /// Inside `<think>`: the marker that ends it. Nothing in thinking is a call.
    thinking: Option<&'static str>,
}

/// A block being read: from an opening marker to its end.
#[derive(Debug)]
struct Block {
    close: &'static [&'static str],
    /// Where the text after the marker starts in the buffer, and how far it was read.
    body_from: usize,
    searched: usize,
    /// Where the JSON value starts (found once), and the scan of it.
    value_from: Option<usize>,
    /// Text other than whitespace came before any value.
    seen_text: bool,
    scan: crate::stream::ValueScan,
}

impl TextCallParser {
    pub fn new(limits: Limits, max_buffer: usize) -> Self {
        TextCallParser {
            limits,
            max_buffer,
            buffer: String::new(),
            block: None,
            thinking: None,
        }
    }

    pub fn feed(&mut self, token: &str) -> Vec<TextEvent> {
        self.buffer.push_str(token);
        let mut events = Vec::new();
        loop {
            if let Some(close) = self.thinking {
                // Thinking is text up to its closing marker, held back only while the marker may
                // be arriving; nothing inside it is a call.
                let (end, closed) = match self.buffer.find(close) {
                    Some(at) => (at + close.len(), true),
                    None => (
                        self.buffer.len() - close_prefix_len(&self.buffer, close),
                        false,
                    ),
                };
                let text: String = self.buffer.drain(..end).collect();
                if !text.is_empty() {
                    events.push(TextEvent::Text(text));
                }
                if !closed {
                    return events;
                }
                self.thinking = None;
            }
            let Some(block) = &mut self.block else {
                match formats::first_opening(&self.buffer) {
                    Some(opening) if opening.is_strip => {
                        let text: String = self.buffer.drain(..opening.start).collect();
                        if !text.is_empty() {
                            events.push(TextEvent::Text(text));
                        }
                        self.buffer.drain(..opening.end - opening.start);
                    }
                    Some(opening) if opening.is_think => {
                        // Thinking is text: hand it out up to the marker's end, then up to its close.
                        let text: String = self.buffer.drain(..opening.end).collect();
                        events.push(TextEvent::Text(text));
                        self.thinking = opening.close.first().copied();
                    }
                    Some(opening) => {
                        let text: String = self.buffer.drain(..opening.start).collect();
                        if !text.is_empty() {
                            events.push(TextEvent::Text(text));
                        }
                        let body = opening.end - opening.start;
                        self.block = Some(Block {
                            close: opening.close,
                            body_from: body,
                            searched: body,
                            value_from: None,
                            seen_text: false,
                            scan: crate::stream::ValueScan::default(),
                        });
                    }
                    None => {
                        let keep = formats::marker_prefix_len(&self.buffer);
                        let text: String = self.buffer.drain(..self.buffer.len() - keep).collect();
                        if !text.is_empty() {
                            events.push(TextEvent::Text(text));
                        }
                        return events;
                    }
                }
                continue;
            };
            // Look for the closing marker in the new text only (a marker may straddle tokens).
            let mut from = block
                .searched
                .saturating_sub(formats::longest_close())
                .max(block.body_from);
            while !self.buffer.is_char_boundary(from) {
                from -= 1;
            }
            // Where the closing marker starts and ends, if it came.
            let marker = block
                .close
                .iter()
                .filter_map(|c| {
                    self.buffer[from..]
                        .find(c)
                        .map(|at| (from + at, from + at + c.len()))
                })
                .min();
            if block.value_from.is_none() {
                // The value starts at a bracket that opens the body, or else at the first brace
                // (after a name: Mistral's `NAME[ARGS]{...}`). Only the new text is looked at.
                let start = from.max(block.searched.min(self.buffer.len()));
                let mut start = start.min(self.buffer.len());
                while !self.buffer.is_char_boundary(start) {
                    start -= 1;
                }
                let new = &self.buffer[start..];
                let lead = new.trim_start();
                block.value_from = if !block.seen_text && lead.starts_with(['[', '{']) {
                    Some(self.buffer.len() - lead.len())
                } else {
                    new.find('{').map(|i| start + i)
                };
                block.seen_text |= !lead.is_empty();
                if let Some(v) = block.value_from {
                    block.searched = v;
                }
            }
            // A whole JSON value ends the block where the format has no closing marker, or where
            // what follows the value is not its (optional) closing marker. The same rule holds
            // whether the marker has arrived yet or not, so any split of the text reads alike.
            let value_end = block.value_from.and_then(|value_from| {
                block
                    .scan
                    .feed(&self.buffer.as_bytes()[block.searched.max(value_from)..]);
                let value_end = value_from + block.scan.closed_at()?;
                if marker.is_some_and(|(start, _)| start < value_end) {
                    return None; // the marker closed the block before the value did
                }
                let after = self.buffer[value_end..].trim_start();
                let may_close = block
                    .close
                    .iter()
                    .any(|c| c.starts_with(after) || after.starts_with(c));
                (block.close.is_empty() || (!after.is_empty() && !may_close)).then_some(value_end)
            });
            let end = value_end.or(marker.map(|(_, end)| end));
            block.searched = self.buffer.len();
            match end {
                // A block longer than max_buffer is text, whether its end came in the same token
                // or never.
                Some(end) if end > self.max_buffer => {
                    // Text up to its end; what follows is read on (as when the block outgrows
                    // the cap before its end arrives and later text is read afresh).
                    self.block = None;
                    events.push(TextEvent::Text(self.buffer.drain(..end).collect()));
                }
                Some(end) => {
                    let block: String = self.buffer.drain(..end).collect();
                    self.block = None;
                    events.extend(self.read_block(block));
                }
                None => {
                    if self.buffer.len() > self.max_buffer {
                        self.block = None;
                        events.push(TextEvent::Text(std::mem::take(&mut self.buffer)));
                    }
                    return events;
                }
            }
        }
    }

    /// The end of the text: a block still open is read as it is (repaired where cut off).
    pub fn flush(&mut self) -> Vec<TextEvent> {
        self.thinking = None;
        let rest = std::mem::take(&mut self.buffer);
        let was_block = self.block.take().is_some();
        if rest.is_empty() {
            return Vec::new();
        }
        if was_block {
            return self.read_block(rest);
        }
        vec![TextEvent::Text(rest)]
    }

    /// Forgets everything held.
    pub fn reset(&mut self) {
        self.buffer.clear();
        self.block = None;
        self.thinking = None;
    }

    fn read_block(&self, block: String) -> Vec<TextEvent> {
        let found = text_calls(&block, &self.limits, None);
        if found.calls.is_empty() {
            return vec![TextEvent::Text(block)];
        }
        let mut events = vec![TextEvent::Calls(found.calls)];
        if !found.text.is_empty() {
            events.push(TextEvent::Text(found.text));
        }
        events
    }
}

/// The longest end of `text` that is the start of `marker` (it may be completed by the next token).
fn close_prefix_len(text: &str, marker: &str) -> usize {
    (1..marker.len().min(text.len()) + 1)
        .rev()
        .find(|&n| {
            text.is_char_boundary(text.len() - n)
                && marker
                    .as_bytes()
                    .starts_with(&text.as_bytes()[text.len() - n..])
        })
        .unwrap_or(0)
}
