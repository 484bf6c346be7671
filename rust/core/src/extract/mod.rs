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
