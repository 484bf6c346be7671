//! A model's whole reply: where its message is (Ollama's `message`, OpenAI's
//! `choices[0].message`, a stream chunk's `delta`, or a bare message), and what to make of a body
//! that is not one JSON object: a byte-order mark, Ollama's streamed lines, a reply broken on
//! the way (mended, then taken only if it reads as a reply), or plain text.

use crate::limits::Limits;
use crate::repair::repair;

use super::value::{ErrorOf, JsonLike, Key, Parser};

/// What the pipeline reads from a reply: its tool calls field and its content.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplyMessage<V> {
    /// The entries of `tool_calls` (one entry when the field is not a list).
    pub tool_calls: Vec<V>,
    /// The message's text, which may hold calls written in it.
    pub content: Option<String>,
}

/// The assistant message of a reply object: `choices[0].message` (or a stream chunk's
/// `choices[0].delta`), `message`, or the object itself when it is a message.
pub fn message_of<V: JsonLike>(reply: &V) -> Option<V> {
    if let Some(choices) = reply.get(Key::Choices) {
        let first = choices.items()?.into_iter().next()?;
        if !first.is_object() {
            return None;
        }
        return first
            .get(Key::Message)
            .or_else(|| first.get(Key::Delta))
            .filter(JsonLike::is_object);
    }
    if let Some(message) = reply.get(Key::Message) {
        return message.is_object().then_some(message);
    }
    Some(reply.clone())
}

/// The tool calls and content of a reply object.
pub fn message_parts<V: JsonLike>(reply: &V) -> Result<ReplyMessage<V>, V::Error> {
    let message = message_of(reply);
    let content = match message.as_ref().and_then(|m| m.get(Key::Content)) {
        Some(content) => content.as_str()?.map(str::to_owned),
        None => None,
    };
    let tool_calls = match message.and_then(|m| m.get(Key::ToolCalls)) {
        Some(calls) => calls.items().unwrap_or_else(|| vec![calls]),
        None => Vec::new(),
    };
    Ok(ReplyMessage {
        tool_calls,
        content,
    })
}

/// A reply body as bytes: one JSON object first, then what `read_unparsed_reply` tries.
pub fn read_reply<P: Parser>(
    parser: &P,
    body: &[u8],
    limits: &Limits,
) -> Result<ReplyMessage<P::Value>, ErrorOf<P::Value>> {
    if let Some(reply) = parser.parse(body)?.filter(JsonLike::is_object) {
        return message_parts(&reply);
    }
    read_unparsed_reply(parser, body, limits)
}

/// A reply body that did not parse as one JSON object, read in order as: the object after a
/// byte-order mark; Ollama's streamed reply (one JSON object per line) merged; the body mended
/// by the repair pass, taken only if it then holds `message`, `choices` or `tool_calls`; and
/// otherwise the text a model wrote (a raw completion, or content copied out).
pub fn read_unparsed_reply<P: Parser>(
    parser: &P,
    body: &[u8],
    limits: &Limits,
) -> Result<ReplyMessage<P::Value>, ErrorOf<P::Value>> {
    let text = body.strip_prefix("\u{feff}".as_bytes()).unwrap_or(body);
    if text.len() != body.len() {
        if let Some(reply) = parser.parse(text)?.filter(JsonLike::is_object) {
            return message_parts(&reply);
        }
    }
    if let Some(merged) = streamed_message(parser, text)? {
        return Ok(merged);
    }
    if text.trim_ascii_start().starts_with(b"{") {
        if let Ok(repaired) = repair(text, limits) {
            let known = [Key::Message, Key::Choices, Key::ToolCalls];
            if let Some(reply) = parser
                .build(repaired.json.as_bytes())
                .filter(|r| known.iter().any(|&k| r.has(k)))
            {
                return message_parts(&reply);
            }
        }
    }
    Ok(ReplyMessage {
        tool_calls: Vec::new(),
        content: Some(String::from_utf8_lossy(text).into_owned()),
    })
}

/// Ollama's streamed reply (one JSON object per line, its default) as one message: the content
/// of every line joined and the tool calls of every line in order. None when the text is not
/// such a stream (fewer than two lines, or a line that is not an object). A last line cut off
/// mid-object is left out.
fn streamed_message<P: Parser>(
    parser: &P,
    text: &[u8],
) -> Result<Option<ReplyMessage<P::Value>>, ErrorOf<P::Value>> {
    let lines: Vec<&[u8]> = text
        .split(|&b| b == b'\n')
        .map(<[u8]>::trim_ascii)
        .filter(|l| !l.is_empty())
        .collect();
    if lines.len() < 2 || !lines[0].starts_with(b"{") {
        return Ok(None);
    }
    let mut content = String::new();
    let mut tool_calls = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(chunk) = parser.parse(line)?.filter(JsonLike::is_object) else {
            if i + 1 == lines.len() {
                break;
            }
            return Ok(None);
        };
        // A line without `message` (metrics, say) adds nothing.
        let Some(message) = message_of(&chunk).filter(|_| chunk.has(Key::Message)) else {
            continue;
        };
        if let Some(text) = message.get(Key::Content) {
            if let Some(text) = text.as_str()? {
                content.push_str(text);
            }
        }
        if let Some(calls) = message.get(Key::ToolCalls).and_then(|c| c.items()) {
            tool_calls.extend(calls);
        }
    }
    Ok(Some(ReplyMessage {
        tool_calls,
        content: Some(content),
    }))
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;
    use crate::wire::SerdeParser;

    fn read(body: &str) -> ReplyMessage<Value> {
        read_reply(&SerdeParser, body.as_bytes(), &Limits::default()).unwrap()
    }

    #[test]
    fn the_message_is_found_in_each_envelope() {
        let call = json!({"function": {"name": "f", "arguments": {}}});
        for body in [
            json!({"message": {"content": "hi", "tool_calls": [call]}}),
            json!({"choices": [{"message": {"content": "hi", "tool_calls": [call]}}]}),
            json!({"choices": [{"delta": {"content": "hi", "tool_calls": [call]}}]}),
            json!({"content": "hi", "tool_calls": [call]}),
        ] {
            let parts = read(&body.to_string());
            assert_eq!(parts.content.as_deref(), Some("hi"), "{body}");
            assert_eq!(parts.tool_calls, std::slice::from_ref(&call), "{body}");
        }
    }

    #[test]
    fn shapes_that_hold_no_message() {
        for body in [
            json!({"choices": []}),
            json!({"choices": [7]}),
            json!({"choices": "x"}),
            json!({"message": "x"}),
        ] {
            let parts = read(&body.to_string());
            assert_eq!((parts.tool_calls.len(), parts.content), (0, None), "{body}");
        }
        // One entry that is not a list is still an entry.
        let single = read(r#"{"tool_calls": {"function": {"name": "f"}}}"#);
        assert_eq!(single.tool_calls.len(), 1);
    }

    #[test]
    fn a_byte_order_mark_is_skipped() {
        let parts = read("\u{feff}{\"message\": {\"content\": \"x\"}}");
        assert_eq!(parts.content.as_deref(), Some("x"));
    }

    #[test]
    fn streamed_ollama_lines_are_merged() {
        let body = [
            r#"{"message": {"role": "assistant", "content": "Let me "}, "done": false}"#,
            r#"{"message": {"content": "check.", "tool_calls": [{"function": {"name": "a"}}]}}"#,
            r#"{"message": {"content": "", "tool_calls": [{"function": {"name": "b"}}]}}"#,
            r#"{"done": true, "eval_count": 3}"#,
            r#"{"message": {"content": "cut o"#,
        ]
        .join("\n");
        let parts = read(&body);
        assert_eq!(parts.content.as_deref(), Some("Let me check."));
        let names: Vec<_> = parts
            .tool_calls
            .iter()
            .map(|c| c["function"]["name"].clone())
            .collect();
        assert_eq!(names, [json!("a"), json!("b")]);
        // A broken line that is not the last: not such a stream (the lines are not merged).
        let broken =
            "{\"message\": {\"content\": \"a\"}}\nnot json\n{\"message\": {\"content\": \"b\"}}";
        assert_ne!(read(broken).content.as_deref(), Some("ab"));
    }

    #[test]
    fn a_broken_reply_is_mended_only_when_it_then_reads_as_one() {
        let cut = r#"{"message": {"content": "x", "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1"#;
        let parts = read(cut);
        assert_eq!(parts.content.as_deref(), Some("x"));
        assert_eq!(
            parts.tool_calls[0]["function"]["arguments"],
            json!({"a": 1})
        );
        // Mended, but not a reply: the body is text.
        let other = r#"{"answer": 42"#;
        assert_eq!(read(other).content.as_deref(), Some(other));
        assert_eq!(read("plain words").content.as_deref(), Some("plain words"));
    }
}
