//! Reply and chunk shapes on the wire: Ollama's `/api/chat` (a reply object, or NDJSON lines
//! with whole calls) and OpenAI-compatible completions (a reply object, or server-sent events
//! with argument text in pieces).
//!
//! Every shape is read over [`JsonLike`] values, so the same code reads serde values here and
//! Python objects in the binding; raw bytes are framed into lines in time linear in their size.

mod chunks;
mod envelope;
mod framing;
mod openai;
mod value;

pub use chunks::{line_limit, Said, SaidSoFar, StreamReader};
pub(crate) use envelope::join_text;
pub use envelope::{
    call_entry, delta_text, is_limit_reason, message_of, message_parts, read_reply,
    read_unparsed_reply, reply_of, reply_of_text, CallEntry, Reply, ReplyMessage,
};
pub use framing::{line_kind, Frame, LineFramer, LineKind};
pub use value::{ErrorOf, JsonLike, Key, Parser, SerdeParser};

#[cfg(test)]
mod tests;
