//! A model's whole reply: where its messages are (Ollama's `message`, every one of OpenAI's
//! `choices`, a stream chunk's `delta`, the Responses API's `output` items, Anthropic's content
//! blocks, a LangChain message, or a bare message), what a call entry looks like in each, when a
//! body is a provider's error or no reply at all, and what to make of a body that is not one
//! JSON object: a byte-order mark, Ollama's streamed lines, a reply broken on the way (mended,
//! then taken only if it reads as a reply), or plain text.

use std::borrow::Cow;

use crate::limits::Limits;
use crate::repair::repair;

use super::value::{ErrorOf, JsonLike, Key, Parser};

/// What the pipeline reads from one message of a reply: its call entries and its content.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplyMessage<V> {
    /// The call entries, in any of the shapes [`call_entry`] reads (one entry when
    /// `tool_calls` is not a list).
    pub tool_calls: Vec<V>,
    /// The message's text, which may hold calls written in it.
    pub content: Option<String>,
    /// The model's reasoning as the reply gave it apart from the text: Ollama's `thinking`,
    /// `reasoning_content` (DeepSeek, vLLM, SGLang, DashScope), `reasoning` (OpenRouter),
    /// Anthropic's and Magistral's thinking parts, the Responses API's reasoning items.
    pub reasoning: Option<String>,
    /// Which choice of the reply the message is (its `index`, else its place).
    pub choice: usize,
    /// The reply (or this choice) stopped at the token limit: OpenAI's `finish_reason`
    /// "length", Ollama's `done_reason` "length", Anthropic's `stop_reason` "max_tokens", the
    /// Responses API's `status` "incomplete".
    pub cut_off: bool,
}

impl<V> ReplyMessage<V> {
    fn text(content: Option<String>) -> Self {
        ReplyMessage {
            tool_calls: Vec::new(),
            content,
            reasoning: None,
            choice: 0,
            cut_off: false,
        }
    }
}

/// Whether a reply or a choice says it stopped at the token limit (see `ReplyMessage::cut_off`).
pub fn stopped_at_limit<V: JsonLike>(value: &V) -> bool {
    [
        (Key::FinishReason, "length"),
        (Key::DoneReason, "length"),
        (Key::StopReason, "max_tokens"),
        (Key::Status, "incomplete"),
    ]
    .into_iter()
    .any(|(key, said)| {
        value
            .get(key)
            .is_some_and(|v| v.as_str().ok().flatten().as_deref() == Some(said))
    })
}

/// Whether a finish reason a caller read from the wire says the reply stopped at the token
/// limit, in any provider's word for it.
pub fn is_limit_reason(reason: &str) -> bool {
    matches!(reason, "length" | "max_tokens" | "incomplete")
}

/// A reply object as read.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply<V> {
    /// Its messages: one, or one per choice in the reply's order.
    Messages(Vec<ReplyMessage<V>>),
    /// The provider answered with an error (`{"error": ...}` in Ollama's, OpenAI's or
    /// Anthropic's form): the provider's own message.
    ProviderError(String),
    /// An object that holds no message in any known shape: what it is, for the message.
    NotAReply(String),
}

/// One call entry, whatever its shape: OpenAI's and Ollama's `{"id", "function": {"name",
/// "arguments"}}`, and the flat entries that name the tool at the top: LangChain's `{"name",
/// "args", "id"}`, Anthropic's `tool_use` block (`input`), the Responses API's `function_call`
/// item (`call_id`, `arguments`).
#[derive(Clone, Debug, PartialEq)]
pub struct CallEntry<V> {
    pub id: Option<V>,
    pub name: Option<V>,
    /// False when the entry has neither a function nor a name: no call can be read from it.
    pub has_function: bool,
    pub arguments: Option<V>,
    /// The wire's index, when it gave one.
    pub index: Option<usize>,
}

/// Reads one call entry (see [`CallEntry`]).
pub fn call_entry<V: JsonLike>(entry: &V) -> CallEntry<V> {
    let none = CallEntry {
        id: None,
        name: None,
        has_function: false,
        arguments: None,
        index: None,
    };
    if !entry.is_object() {
        return none;
    }
    let index = |v: &V| v.get(Key::Index).and_then(|i| i.as_index());
    if let Some(function) = entry.get(Key::Function).filter(JsonLike::is_object) {
        return CallEntry {
            id: entry.get(Key::Id),
            name: function.get(Key::Name),
            has_function: true,
            arguments: function.get(Key::Arguments),
            index: index(&function).or_else(|| index(entry)),
        };
    }
    match entry.get(Key::Name) {
        Some(name) => CallEntry {
            // The Responses API's `id` names the output item; `call_id` is what a result answers.
            id: entry.get(Key::CallId).or_else(|| entry.get(Key::Id)),
            name: Some(name),
            has_function: true,
            arguments: [Key::Arguments, Key::Args, Key::Input]
                .into_iter()
                .find_map(|k| entry.get(k)),
            index: index(entry),
        },
        None => CallEntry {
            id: entry.get(Key::Id),
            ..none
        },
    }
}

/// The assistant message of a reply object: `choices[0].message` (or a stream chunk's
/// `choices[0].delta`), `message`, or the object itself when it is a message.
pub fn message_of<V: JsonLike>(reply: &V) -> Option<V> {
    if let Some(choices) = reply.get(Key::Choices) {
        let first = choices.items()?.into_iter().next()?;
        return choice_message(&first);
    }
    if let Some(message) = reply.get(Key::Message) {
        return message.is_object().then_some(message);
    }
    Some(reply.clone())
}

/// A choice's `message`, or a stream chunk's `delta`.
fn choice_message<V: JsonLike>(choice: &V) -> Option<V> {
    if !choice.is_object() {
        return None;
    }
    choice
        .get(Key::Message)
        .or_else(|| choice.get(Key::Delta))
        .filter(JsonLike::is_object)
}

/// The members that make an object a message (or a flat call) rather than something else.
const MESSAGE_KEYS: [Key; 6] = [
    Key::Content,
    Key::ToolCalls,
    Key::InvalidToolCalls,
    Key::Role,
    Key::Function,
    Key::Name,
];

/// A reply object as read: its messages, a provider's error, or no reply.
pub fn reply_of<V: JsonLike>(reply: &V) -> Result<Reply<V>, V::Error> {
    if let Some(message) = provider_error(reply)? {
        return Ok(Reply::ProviderError(message));
    }
    if let Some(choices) = reply.get(Key::Choices) {
        let mut messages = Vec::new();
        for (position, choice) in choices.items().unwrap_or_default().iter().enumerate() {
            let Some(message) = choice_message(choice) else {
                continue;
            };
            let mut parts = message_parts(&message)?;
            parts.choice = choice
                .get(Key::Index)
                .and_then(|i| i.as_index())
                .unwrap_or(position);
            parts.cut_off = stopped_at_limit(choice);
            messages.push(parts);
        }
        return Ok(Reply::Messages(messages));
    }
    let mut read = reply_body(reply)?;
    if let Reply::Messages(messages) = &mut read {
        let cut_off = stopped_at_limit(reply);
        for message in messages {
            message.cut_off |= cut_off;
        }
    }
    Ok(read)
}

/// The message of a provider's error body (a whole reply, or a stream's chunk or line):
/// `{"error": ...}` with no answer beside it, `{"object": "error", "message": ...}` (vLLM's and
/// older OpenAI-compatible servers'), or FastAPI's `{"detail": ...}` when the body holds
/// nothing else a reply would. None for anything else.
pub fn provider_error<V: JsonLike>(reply: &V) -> Result<Option<String>, V::Error> {
    let answered = [Key::Choices, Key::Message, Key::Output]
        .into_iter()
        .any(|k| reply.get(k).is_some_and(|v| v.is_truthy()));
    // A reply that answered is no error reply: its `error` and `detail` are not looked up
    // (every chunk of a stream comes here).
    if let Some(error) = (!answered).then(|| reply.get(Key::Error)).flatten() {
        return error_message(&error).map(Some);
    }
    if reply
        .get(Key::Object)
        .and_then(|o| o.as_str().ok().flatten().map(|o| o == "error"))
        == Some(true)
    {
        return error_message(reply).map(Some);
    }
    if let Some(detail) = (!answered).then(|| reply.get(Key::Detail)).flatten() {
        if !MESSAGE_KEYS.into_iter().any(|k| reply.has(k)) && !reply.has(Key::Choices) {
            return error_message(&detail).map(Some);
        }
    }
    Ok(None)
}

/// A reply object other than a list of choices (see `reply_of`).
fn reply_body<V: JsonLike>(reply: &V) -> Result<Reply<V>, V::Error> {
    if let Some(message) = reply.get(Key::Message) {
        if !message.is_object() {
            return Ok(Reply::Messages(Vec::new()));
        }
        return Ok(Reply::Messages(vec![message_parts(&message)?]));
    }
    if let Some(output) = reply.get(Key::Output).and_then(|o| o.items()) {
        // The Responses API: `message` items hold text parts, `function_call` items are calls.
        let mut parts = ReplyMessage::text(None);
        for item in &output {
            match kind_of(item)?.as_deref() {
                Some("function_call") => parts.tool_calls.push(item.clone()),
                Some("message") => {
                    let text = item
                        .get(Key::Content)
                        .map(|c| content_text(&c, &mut parts.tool_calls, &mut parts.reasoning));
                    join_text(&mut parts.content, text.transpose()?.flatten());
                }
                Some("reasoning") => join_text(&mut parts.reasoning, reasoning_of(item)?),
                _ => {}
            }
        }
        return Ok(Reply::Messages(vec![parts]));
    }
    if let Some(text) = reply.get(Key::Response) {
        // Ollama's `/api/generate`: the model's text, which may hold calls.
        return Ok(Reply::Messages(vec![ReplyMessage::text(
            text.as_str()?.map(Cow::into_owned),
        )]));
    }
    if reply.is_object() && MESSAGE_KEYS.into_iter().any(|k| reply.has(k)) {
        let message = [Key::ToolCalls, Key::Content, Key::Role]
            .into_iter()
            .any(|k| reply.has(k));
        let call = reply.get(Key::Function).is_some()
            || (reply.get(Key::Name).is_some()
                && [Key::Arguments, Key::Args, Key::Input]
                    .into_iter()
                    .any(|k| reply.has(k)));
        if call && !message {
            // One call on its own.
            return Ok(Reply::Messages(vec![ReplyMessage {
                tool_calls: vec![reply.clone()],
                ..ReplyMessage::text(None)
            }]));
        }
        return Ok(Reply::Messages(vec![message_parts(reply)?]));
    }
    Ok(Reply::NotAReply(reply.type_name()))
}

/// The `type` of a content block, output item or stream event.
pub(crate) fn kind_of<V: JsonLike>(value: &V) -> Result<Option<String>, V::Error> {
    match value.get(Key::Type) {
        Some(t) => Ok(t.as_str()?.map(Cow::into_owned)),
        None => Ok(None),
    }
}

/// A provider's error message: the text, or an error object's `message` (else the object as
/// JSON), at most 2,000 characters.
fn error_message<V: JsonLike>(error: &V) -> Result<String, V::Error> {
    let text = match error.as_str()? {
        Some(text) => text.into_owned(),
        None => match error.get(Key::Message) {
            Some(message) => match message.as_str()? {
                Some(text) => text.into_owned(),
                None => message.display().unwrap_or_default(),
            },
            None => error.to_json()?,
        },
    };
    Ok(match text.char_indices().nth(2000) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text,
    })
}

/// Content given as a list of parts or blocks: the text of its text parts, one per line, and
/// the call blocks (Anthropic's `tool_use`) added to `calls`.
pub(crate) fn content_text<V: JsonLike>(
    content: &V,
    calls: &mut Vec<V>,
    reasoning: &mut Option<String>,
) -> Result<Option<String>, V::Error> {
    if let Some(text) = content.as_str()? {
        return Ok(Some(text.into_owned()));
    }
    let Some(parts) = content.items() else {
        return Ok(None);
    };
    let mut text = None;
    for part in &parts {
        match kind_of(part)?.as_deref() {
            Some("tool_use" | "function_call") => calls.push(part.clone()),
            Some("thinking" | "reasoning" | "redacted_thinking") => {
                join_text(reasoning, reasoning_of(part)?);
            }
            _ => {
                if let Some(t) = part.get(Key::Text) {
                    join_text(&mut text, t.as_str()?.map(Cow::into_owned));
                }
            }
        }
    }
    Ok(text)
}

/// The reasoning a value carries: a string, a thinking part (`thinking`, `reasoning`,
/// `summary` or `text`, each text or a list of text parts), or a list of such.
pub(crate) fn reasoning_of<V: JsonLike>(value: &V) -> Result<Option<String>, V::Error> {
    if let Some(text) = value.as_str()? {
        return Ok(Some(text.into_owned()));
    }
    if let Some(items) = value.items() {
        let mut joined = None;
        for item in &items {
            join_text(&mut joined, reasoning_of(item)?);
        }
        return Ok(joined);
    }
    for key in [
        Key::Thinking,
        Key::Reasoning,
        Key::Summary,
        Key::Text,
        Key::Content,
    ] {
        if let Some(inner) = value.get(key) {
            if let Some(text) = reasoning_of(&inner)? {
                return Ok(Some(text));
            }
        }
    }
    Ok(None)
}

/// The reasoning fields of a message or a stream delta, in the order providers use them.
pub(crate) fn reasoning_fields<V: JsonLike>(message: &V) -> Result<Option<String>, V::Error> {
    for key in [Key::Thinking, Key::ReasoningContent, Key::Reasoning] {
        if let Some(value) = message.get(key) {
            if let Some(text) = reasoning_of(&value)? {
                return Ok(Some(text));
            }
        }
    }
    Ok(None)
}

/// The text and the reasoning of a stream's delta (or a message): `content` as text or a list
/// of parts (Magistral streams thinking and text parts), and the reasoning fields. A value of
/// any other type in either place gives nothing.
pub fn delta_text<V: JsonLike>(delta: &V) -> Result<(String, String), V::Error> {
    let mut reasoning = reasoning_fields(delta)?;
    let text = match delta.get(Key::Content) {
        Some(content) => content_text(&content, &mut Vec::new(), &mut reasoning)?,
        None => None,
    };
    Ok((text.unwrap_or_default(), reasoning.unwrap_or_default()))
}

/// Appends one more piece of text, on a line of its own.
pub(crate) fn join_text(text: &mut Option<String>, more: Option<String>) {
    let Some(more) = more else { return };
    match text {
        Some(t) if !t.is_empty() && !more.is_empty() => {
            t.push('\n');
            t.push_str(&more);
        }
        Some(t) => t.push_str(&more),
        None => *text = Some(more),
    }
}

/// The call entries and content of a message object: `tool_calls` (and LangChain's
/// `invalid_tool_calls`, whose arguments it could not read: the repair pass may) and
/// `content` (text, or a list of parts and blocks).
pub fn message_parts<V: JsonLike>(message: &V) -> Result<ReplyMessage<V>, V::Error> {
    let mut tool_calls = Vec::new();
    for key in [Key::ToolCalls, Key::InvalidToolCalls] {
        if let Some(calls) = message.get(key) {
            match calls.items() {
                Some(items) => tool_calls.extend(items),
                None => tool_calls.push(calls),
            }
        }
    }
    let mut reasoning = reasoning_fields(message)?;
    let content = match message.get(Key::Content) {
        Some(content) => content_text(&content, &mut tool_calls, &mut reasoning)?,
        None => None,
    };
    Ok(ReplyMessage {
        tool_calls,
        content,
        reasoning,
        choice: 0,
        cut_off: false,
    })
}

/// A reply body as bytes: one JSON object first, then what `read_unparsed_reply` tries.
pub fn read_reply<P: Parser>(
    parser: &P,
    body: &[u8],
    limits: &Limits,
) -> Result<Reply<P::Value>, ErrorOf<P::Value>> {
    if let Some(reply) = parser.parse(body)?.filter(JsonLike::is_object) {
        return reply_of_text(body, &reply);
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
) -> Result<Reply<P::Value>, ErrorOf<P::Value>> {
    let text = body.strip_prefix("\u{feff}".as_bytes()).unwrap_or(body);
    if text.len() != body.len() {
        if let Some(reply) = parser.parse(text)?.filter(JsonLike::is_object) {
            return reply_of_text(text, &reply);
        }
    }
    if let Some(merged) = streamed_message(parser, text)? {
        return Ok(Reply::Messages(vec![merged]));
    }
    if text.trim_ascii_start().starts_with(b"{") {
        if let Ok(repaired) = repair(text, limits) {
            let known = [Key::Message, Key::Choices, Key::ToolCalls, Key::Output];
            if let Some(reply) = parser
                .build(repaired.json.as_bytes())
                .filter(|r| known.iter().any(|&k| r.has(k)))
            {
                return reply_of(&reply);
            }
        }
    }
    Ok(Reply::Messages(vec![ReplyMessage::text(Some(
        String::from_utf8_lossy(text).into_owned(),
    ))]))
}

/// A reply given as text that parsed as one object: read as a reply, or, when it is none, as
/// the text a model wrote (a call written as bare JSON, say).
pub fn reply_of_text<V: JsonLike>(text: &[u8], reply: &V) -> Result<Reply<V>, V::Error> {
    Ok(match reply_of(reply)? {
        Reply::NotAReply(_) => Reply::Messages(vec![ReplyMessage::text(Some(
            String::from_utf8_lossy(text).into_owned(),
        ))]),
        read => read,
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
    let mut reasoning = String::new();
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
                content.push_str(&text);
            }
        }
        if let Some(text) = message.get(Key::Thinking) {
            if let Some(text) = text.as_str()? {
                reasoning.push_str(&text);
            }
        }
        if let Some(calls) = message.get(Key::ToolCalls).and_then(|c| c.items()) {
            tool_calls.extend(calls);
        }
    }
    Ok(Some(ReplyMessage {
        tool_calls,
        content: Some(content),
        reasoning: (!reasoning.is_empty()).then_some(reasoning),
        choice: 0,
        cut_off: false,
    }))
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;
    use crate::wire::SerdeParser;

    fn reply(body: &Value) -> Reply<Value> {
        read_reply(
            &SerdeParser,
            body.to_string().as_bytes(),
            &Limits::default(),
        )
        .unwrap()
    }

    /// The first message of a reply (an empty one when it has none).
    fn read(body: &str) -> ReplyMessage<Value> {
        match read_reply(&SerdeParser, body.as_bytes(), &Limits::default()).unwrap() {
            Reply::Messages(messages) => messages
                .into_iter()
                .next()
                .unwrap_or(ReplyMessage::text(None)),
            other => panic!("not a message: {other:?}"),
        }
    }

    fn names(message: &ReplyMessage<Value>) -> Vec<Value> {
        message
            .tool_calls
            .iter()
            .map(|c| call_entry(c).name.unwrap_or(Value::Null))
            .collect()
    }

    #[test]
    fn every_choice_is_read_with_its_index() {
        let call = |n: &str| json!({"function": {"name": n, "arguments": "{}"}});
        let body = json!({"choices": [
            {"index": 0, "message": {"content": "a", "tool_calls": [call("f")]}},
            {"index": 1, "message": {"content": "b", "tool_calls": [call("g")]}},
            {"message": {"content": "c"}},
        ]});
        let Reply::Messages(messages) = reply(&body) else {
            panic!("a reply")
        };
        let seen: Vec<_> = messages
            .iter()
            .map(|m| (m.choice, m.content.clone().unwrap(), names(m)))
            .collect();
        assert_eq!(
            seen,
            [
                (0, "a".to_string(), vec![json!("f")]),
                (1, "b".to_string(), vec![json!("g")]),
                (2, "c".to_string(), vec![]),
            ]
        );
    }

    #[test]
    fn responses_anthropic_and_langchain_shapes() {
        let responses = json!({"object": "response", "error": null, "output": [
            {"type": "reasoning", "summary": []},
            {"type": "message", "content": [{"type": "output_text", "text": "Checking."}]},
            {"type": "function_call", "id": "fc_1", "call_id": "call_9", "name": "f", "arguments": "{\"a\": 1}"},
        ]});
        let m = read(&responses.to_string());
        assert_eq!(m.content.as_deref(), Some("Checking."));
        let entry = call_entry(&m.tool_calls[0]);
        assert_eq!(
            (entry.id, entry.name),
            (Some(json!("call_9")), Some(json!("f")))
        );
        assert_eq!(entry.arguments, Some(json!("{\"a\": 1}")));

        let anthropic = json!({"type": "message", "role": "assistant", "content": [
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "toolu_1", "name": "g", "input": {"q": "x"}},
            {"type": "text", "text": "Done."},
        ], "stop_reason": "tool_use"});
        let m = read(&anthropic.to_string());
        assert_eq!(m.content.as_deref(), Some("Let me look.\nDone."));
        let entry = call_entry(&m.tool_calls[0]);
        assert_eq!(entry.arguments, Some(json!({"q": "x"})));
        assert_eq!(entry.id, Some(json!("toolu_1")));

        let langchain = json!({"type": "ai", "content": "", "tool_calls": [
            {"name": "h", "args": {"n": 2}, "id": "c1", "type": "tool_call"}],
            "invalid_tool_calls": [{"name": "k", "args": "{'n': 3,}", "id": "c2", "error": "bad"}]});
        let m = read(&langchain.to_string());
        assert_eq!(names(&m), [json!("h"), json!("k")]);
        assert_eq!(
            call_entry(&m.tool_calls[1]).arguments,
            Some(json!("{'n': 3,}"))
        );
    }

    #[test]
    fn error_bodies_and_objects_that_are_no_reply() {
        for (body, message) in [
            (
                json!({"error": "model 'x' not found"}),
                "model 'x' not found",
            ),
            (
                json!({"error": {"message": "Rate limit", "type": "requests", "code": 429}}),
                "Rate limit",
            ),
            (
                json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
                "Overloaded",
            ),
            (
                json!({"status": "failed", "output": [], "error": {"code": "x", "message": "m"}}),
                "m",
            ),
            (
                json!({"object": "error", "message": "no such model", "code": 404}),
                "no such model",
            ),
        ] {
            assert_eq!(reply(&body), Reply::ProviderError(message.into()), "{body}");
        }
        // An error with an answer beside it is an answer.
        let answered = json!({"error": "x", "message": {"content": "hi"}});
        assert!(matches!(reply(&answered), Reply::Messages(_)));
        // A dict that is no reply: refused when given as an object, read as text when given
        // as text (a model may answer with bare JSON).
        assert_eq!(
            reply_of(&json!({"answer": 42})).unwrap(),
            Reply::NotAReply("dict".into())
        );
        assert_eq!(
            read(r#"{"answer": 42}"#).content.as_deref(),
            Some(r#"{"answer": 42}"#)
        );
    }

    #[test]
    fn a_call_on_its_own_and_ollama_generate() {
        let flat = json!({"name": "f", "arguments": {"a": 1}});
        assert_eq!(names(&read(&flat.to_string())), [json!("f")]);
        // A message that names its author is a message, not a call.
        let named = json!({"role": "assistant", "name": "bot", "content": "hi"});
        assert_eq!((read(&named.to_string()).tool_calls.len()), 0);
        let generate = json!({"model": "m", "response": "<tool_call>{}</tool_call>", "done": true});
        assert_eq!(
            read(&generate.to_string()).content.as_deref(),
            Some("<tool_call>{}</tool_call>")
        );
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

    #[test]
    fn reasoning_is_read_from_every_field_providers_use() {
        let cases = [
            json!({"message": {"role": "assistant", "content": "", "thinking": "R"}}),
            json!({"choices": [{"message": {"content": "", "reasoning_content": "R"}}]}),
            json!({"choices": [{"message": {"content": "", "reasoning": "R"}}]}),
            // Anthropic's thinking block; Magistral's thinking part holds text parts.
            json!({"type": "message", "role": "assistant", "content": [
                {"type": "thinking", "thinking": "R", "signature": "s"}, {"type": "text", "text": ""}]}),
            json!({"choices": [{"message": {"content": [
                {"type": "thinking", "thinking": [{"type": "text", "text": "R"}]},
                {"type": "text", "text": ""}]}}]}),
            json!({"output": [{"type": "reasoning", "summary": [{"type": "summary_text", "text": "R"}]},
                {"type": "message", "content": [{"type": "output_text", "text": ""}]}]}),
        ];
        for body in &cases {
            let Reply::Messages(messages) = reply(body) else {
                panic!("{body}")
            };
            assert_eq!(messages[0].reasoning.as_deref(), Some("R"), "{body}");
            assert_eq!(messages[0].content.as_deref().unwrap_or(""), "", "{body}");
        }
        let lines = "{\"message\": {\"thinking\": \"a\", \"content\": \"\"}}\n\
                     {\"message\": {\"thinking\": \"b\", \"content\": \"x\"}, \"done\": true}";
        assert_eq!(read(lines).reasoning.as_deref(), Some("ab"));
    }

    #[test]
    fn fastapi_detail_is_a_provider_error() {
        for (body, said) in [
            (json!({"detail": "Not Found"}), "Not Found"),
            (
                json!({"detail": [{"loc": ["body", "model"], "msg": "field required"}]}),
                "field required",
            ),
        ] {
            match reply(&body) {
                Reply::ProviderError(message) => assert!(message.contains(said), "{message}"),
                other => panic!("{other:?}"),
            }
        }
        // A message that has a `detail` member too is still a message.
        assert!(matches!(
            reply(&json!({"message": {"content": "x"}, "detail": "y"})),
            Reply::Messages(_)
        ));
    }
}
