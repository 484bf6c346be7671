//! The calls of a whole reply and of a stream's assembled calls, through the pipeline.

use crate::extract::text_calls;
use crate::stream::{AssembledCall, FailedCall};
use crate::wire::{ErrorOf, JsonLike, Key, ReplyMessage};

use super::{Arguments, CallSource, Candidate, Failure, Host, Pipeline};

/// Checks a reply's calls: each `tool_calls` entry at its wire index (`function.index`, the
/// entry's `index`, or its place in the list), then, when `text_calls` is on, the calls written
/// in the content, numbered after the highest wire index. Returns the content with those calls
/// cut out.
pub fn check_reply<H: Host>(
    pipeline: &mut Pipeline<'_, H>,
    message: ReplyMessage<H::Value>,
    text_calls_on: bool,
) -> Result<String, ErrorOf<H::Value>> {
    let mut next_index = 0;
    for (position, entry) in message.tool_calls.into_iter().enumerate() {
        let entry = Some(entry).filter(JsonLike::is_object);
        let member = |key| entry.as_ref().and_then(|e| e.get(key));
        let function = member(Key::Function).filter(JsonLike::is_object);
        let index = function
            .as_ref()
            .and_then(|f| f.get(Key::Index))
            .and_then(|i| i.as_index())
            .or_else(|| member(Key::Index).and_then(|i| i.as_index()))
            .unwrap_or(position);
        next_index = next_index.max(index + 1);
        let arguments = match &function {
            None => Arguments::NoFunction,
            Some(f) => f
                .get(Key::Arguments)
                .map_or(Arguments::Missing, Arguments::Given),
        };
        pipeline.run(Candidate {
            id: member(Key::Id),
            name: function.as_ref().and_then(|f| f.get(Key::Name)),
            arguments,
            raw: None,
            index,
            source: CallSource::ToolCalls,
            repairs: Vec::new(),
            unreadable: None,
        })?;
    }
    let Some(content) = message.content else {
        return Ok(String::new());
    };
    if !text_calls_on || content.is_empty() {
        return Ok(content);
    }
    let host = pipeline.host();
    // With a registry, a JSON object in plain prose is a call only when it names a known tool.
    let is_tool = host
        .registry()
        .map(|r| move |name: &str| r.get(name).is_ok());
    let found = text_calls(
        &content,
        pipeline.limits(),
        is_tool.as_ref().map(|f| f as &dyn Fn(&str) -> bool),
    );
    for (i, call) in found.calls.into_iter().enumerate() {
        pipeline.run(Candidate::found(host, call, next_index + i))?;
    }
    pipeline.quoted += found.quoted;
    Ok(found.text)
}

/// Checks a stream's calls as the accumulator handed them out. `read` gives the arguments of
/// an assembled call already read as a value, when the host holds them (the binding's live
/// view); a line the stream dropped unread is reported at its index.
pub fn check_stream<H: Host>(
    pipeline: &mut Pipeline<'_, H>,
    calls: Vec<Result<AssembledCall, FailedCall>>,
    mut read: impl FnMut(&AssembledCall) -> Option<H::Value>,
) -> Result<(), ErrorOf<H::Value>> {
    let host = pipeline.host();
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
    Ok(())
}
