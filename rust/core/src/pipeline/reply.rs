//! The calls of a whole reply and of a stream's assembled calls, through the pipeline.

use crate::error::ErrorCode;
use crate::extract::{text_calls_in, Formats, FoundCall, TextCallParser, TextEvent};
use crate::limits::Limits;
use crate::stream::{AssembledCall, FailedCall};
use crate::wire::{call_entry, join_text, ErrorOf, Reply, ReplyMessage};

use super::{Arguments, Candidate, CheckedCall, Failure, Host, Pipeline, RejectedCall};

/// What a message says besides its calls: its text with the calls cut out, and its reasoning
/// (the reply's reasoning fields, then the reasoning written in the text).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MessageText {
    pub text: String,
    pub reasoning: String,
    /// Where the calls written in the text were cut out of it: the first and the last (byte
    /// offsets in `text`); None when the text held none.
    pub calls_at: Option<(usize, usize)>,
}

/// Checks a reply's calls, choice by choice (see [`check_message`]); a provider's error or a
/// body that is no reply is one error at index 0. Returns the text of the first message.
pub fn check_reply<H: Host>(
    pipeline: &mut Pipeline<'_, H>,
    reply: Reply<H::Value>,
    formats: Formats,
) -> Result<MessageText, ErrorOf<H::Value>> {
    let failure = match reply {
        Reply::Messages(messages) => {
            let mut text = None;
            for message in messages {
                pipeline.start_choice(message.choice);
                pipeline.set_cut_by_length(message.cut_off);
                let rest = check_message(pipeline, message, formats)?;
                pipeline.settle_cut_off();
                text.get_or_insert(rest);
            }
            return Ok(text.unwrap_or_default());
        }
        Reply::ProviderError(message) => provider_failure(&message),
        Reply::NotAReply(what) => Failure::new(
            ErrorCode::ReplyNotUnderstood,
            format!(
                "The body is not a chat reply: a {what} without `choices`, `message`, `output`, \
                 `content` or `tool_calls`"
            ),
            "pass the reply as the provider sent it (a dict, the SDK's object, str or bytes)",
        ),
    };
    pipeline.reject(0, failure);
    Ok(MessageText::default())
}

fn provider_failure(message: &str) -> Failure {
    Failure::new(
        ErrorCode::ProviderError,
        format!("The provider answered with an error, not a reply: {message}"),
        "act on the provider's message; no call was made",
    )
}

/// Checks one message's calls: each call entry at its wire index (`function.index`, the
/// entry's `index`, or its place in the list), then the calls written in the content in one of
/// `formats`, numbered after the highest wire index. Returns the content with those calls
/// cut out, and the reasoning. Reasoning written in the content is read whatever `formats`
/// says: it is never a call and never the answer.
pub fn check_message<H: Host>(
    pipeline: &mut Pipeline<'_, H>,
    message: ReplyMessage<H::Value>,
    formats: Formats,
) -> Result<MessageText, ErrorOf<H::Value>> {
    let mut next_index = 0;
    for (position, entry) in message.tool_calls.iter().enumerate() {
        let entry = call_entry(entry);
        let index = entry.index.unwrap_or(position);
        next_index = next_index.max(index + 1);
        let arguments = match (entry.has_function, entry.arguments) {
            (false, _) => Arguments::NoFunction,
            (true, None) => Arguments::Missing,
            (true, Some(a)) => Arguments::Given(a),
        };
        pipeline.run(Candidate::field(entry.id, entry.name, arguments, index))?;
    }
    let mut reasoning = message.reasoning;
    let Some(content) = message.content else {
        return Ok(MessageText {
            reasoning: reasoning.unwrap_or_default(),
            ..MessageText::default()
        });
    };
    if content.is_empty() || (formats == Formats::NONE && !may_hold_reasoning(&content)) {
        return Ok(MessageText {
            text: content,
            reasoning: reasoning.unwrap_or_default(),
            calls_at: None,
        });
    }
    let host = pipeline.host();
    let is_tool = known_tool(host);
    let found = text_calls_in(
        &content,
        pipeline.limits(),
        is_tool.as_ref().map(|f| f as &dyn Fn(&str) -> bool),
        formats,
    );
    for (i, call) in found.calls.into_iter().enumerate() {
        pipeline.run(Candidate::found(host, call, next_index + i))?;
    }
    pipeline.quoted += found.quoted;
    pipeline.notes.extend(found.notes);
    join_text(&mut reasoning, Some(found.reasoning));
    Ok(MessageText {
        text: found.text,
        reasoning: reasoning.unwrap_or_default(),
        calls_at: found.calls_at,
    })
}

/// With a registry, a JSON object in plain prose is a call only when it names a known tool.
pub fn known_tool<H: Host>(host: &H) -> Option<impl Fn(&str) -> bool + '_> {
    host.registry()
        .map(|r| move |name: &str| r.get(name).is_ok())
}

/// The end of streamed text (`TextCallParser::finish`), the calls written without a marker
/// told from prose as `check_message` tells them in a whole reply.
pub fn finish_text<H: Host>(host: &H, parser: &mut TextCallParser) -> Vec<TextEvent> {
    let is_tool = known_tool(host);
    parser.finish(is_tool.as_ref().map(|f| f as &dyn Fn(&str) -> bool))
}

/// Whether text may hold a reasoning marker (with no call format taken, only then is it read).
fn may_hold_reasoning(content: &str) -> bool {
    crate::extract::reasoning_markers().any(|m| content.contains(m))
}

/// Checks a stream's calls as the accumulator handed them out. `read` gives the arguments of
/// an assembled call already read as a value, when the host holds them (the binding's live
/// view); a line the stream dropped unread is reported at its index.
pub fn check_stream<H: Host>(
    pipeline: &mut Pipeline<'_, H>,
    calls: Vec<Result<AssembledCall, FailedCall>>,
    read: impl FnMut(&AssembledCall) -> Option<H::Value>,
) -> Result<(), ErrorOf<H::Value>> {
    check_stream_reply(pipeline, calls, Vec::new(), None, read)
}

/// `check_stream`, and the calls found in the stream's text (`SaidSoFar::text_calls`) after
/// them, numbered on from the highest index of the stream's calls as `check_message` numbers
/// the calls of a whole reply's text (and dropped where they repeat a call of the stream). A
/// provider's error the stream sent is one error at index 0, as in a whole reply.
pub fn check_stream_reply<H: Host>(
    pipeline: &mut Pipeline<'_, H>,
    calls: Vec<Result<AssembledCall, FailedCall>>,
    text_calls: Vec<FoundCall>,
    provider_error: Option<&str>,
    mut read: impl FnMut(&AssembledCall) -> Option<H::Value>,
) -> Result<(), ErrorOf<H::Value>> {
    if let Some(message) = provider_error {
        pipeline.reject(0, provider_failure(message));
    }
    let host = pipeline.host();
    let next_index = calls
        .iter()
        .map(|c| match c {
            Ok(call) => call.index + 1,
            Err(failed) => failed.index + 1,
        })
        .max()
        .unwrap_or(0);
    for call in calls {
        let candidate = match call {
            Ok(call) => {
                let value = read(&call);
                Candidate::assembled(host, call, value)
            }
            Err(lost) if lost.lost_line => {
                let failure = Failure {
                    position: lost.position,
                    ..Failure::new(lost.code, lost.message, lost.suggestion)
                };
                pipeline.reject(lost.index, failure);
                continue;
            }
            Err(failed) => Candidate::failed(host, failed),
        };
        pipeline.run(candidate)?;
    }
    // Numbered in the order they stand in the text, as a whole reply's are: a stream hands out
    // the calls written without a marker only at its end, after those behind one, and the last
    // call is the one the token limit may have cut.
    let mut text_calls = text_calls;
    text_calls.sort_by_key(|c| c.position);
    for (i, call) in text_calls.into_iter().enumerate() {
        pipeline.run(Candidate::found(host, call, next_index + i))?;
    }
    pipeline.settle_cut_off();
    Ok(())
}

/// What streamed text gave, checked: text as it stood, or a call found in it, taken or refused.
#[derive(Debug)]
pub enum TextItem<V> {
    Text(String),
    /// See `TextEvent::Reasoning` and `TextEvent::TextWasReasoning`.
    Reasoning(String),
    TextWasReasoning(String),
    /// See `TextEvent::CallsInText`: the reply's text without the calls written in it, to stand
    /// instead of the text handed out; its calls come next.
    TextWithoutCalls(String),
    Call(CheckedCall<V>),
    Refused(RejectedCall<V>),
}

/// Checks what a text parser handed out (`extract::TextCallParser`): each block of calls runs
/// through a pipeline of its own, its calls numbered on from `next_index`. With `cut_by_length`
/// (the reply stopped at the token limit) only the last block can be what the limit cut. Text
/// and results come back in the order they stood, a block's calls and refusals by index.
pub fn check_text_events<H: Host>(
    host: &H,
    limits: Limits,
    repair: bool,
    allow_truncated: bool,
    events: Vec<TextEvent>,
    next_index: &mut usize,
    cut_by_length: bool,
) -> Result<Vec<TextItem<H::Value>>, ErrorOf<H::Value>> {
    let last_block = events
        .iter()
        .rposition(|e| matches!(e, TextEvent::Calls(_) | TextEvent::CallsInText { .. }));
    let mut out = Vec::with_capacity(events.len());
    for (i, event) in events.into_iter().enumerate() {
        let found = match event {
            TextEvent::Text(text) => {
                out.push(TextItem::Text(text));
                continue;
            }
            TextEvent::Reasoning(text) => {
                out.push(TextItem::Reasoning(text));
                continue;
            }
            TextEvent::TextWasReasoning(text) => {
                out.push(TextItem::TextWasReasoning(text));
                continue;
            }
            TextEvent::Calls(found) => found,
            TextEvent::CallsInText { text, calls } => {
                out.push(TextItem::TextWithoutCalls(text));
                calls
            }
        };
        let mut pipeline = Pipeline::new(host, limits, repair).allow_truncated(allow_truncated);
        pipeline.set_cut_by_length(cut_by_length && Some(i) == last_block);
        for call in found {
            pipeline.run(Candidate::found(host, call, *next_index))?;
            *next_index += 1;
        }
        pipeline.settle_cut_off();
        let mut block: Vec<(usize, TextItem<H::Value>)> = pipeline
            .calls
            .into_iter()
            .map(|c| (c.index, TextItem::Call(c)))
            .chain(
                pipeline
                    .errors
                    .into_iter()
                    .map(|e| (e.index, TextItem::Refused(e))),
            )
            .collect();
        block.sort_by_key(|(index, _)| *index);
        out.extend(block.into_iter().map(|(_, item)| item));
    }
    Ok(out)
}
