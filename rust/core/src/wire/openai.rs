//! The common line of a raw OpenAI-compatible stream, a `chat.completion.chunk`, read straight
//! from its JSON text: serde reads only the members a delta uses (strings borrowed where they
//! hold no escape) and skips the rest without building them, so no value is made for the line.
//!
//! It covers the chunk exactly as the general reading (`StreamReader::feed_chunk` over any
//! `JsonLike` value) does, or not at all: a line with another shape, a member of another type
//! than the one expected (an array where an object goes, too), a repeated member or text that is
//! not JSON is refused here, and the general reading takes it. A test holds the two to the same
//! events on any chunk.
//!
//! One difference is on purpose: members no delta uses are skipped, not read, so a value in them
//! that a strict parser refuses (an integer past 64 bits in `created`, a number past the range of
//! a double, a lone surrogate escape) does not cost the line. The general reading in the binding
//! parses the whole line with orjson and loses it, call fragments and all.

use std::borrow::Cow;
use std::sync::LazyLock;

use memchr::memmem;
use serde::de::IgnoredAny;
use serde::Deserialize;

use crate::stream::Delta;

/// A chunk: its choices. `type` (an Anthropic or Responses API event) is another shape.
#[derive(Deserialize)]
pub(super) struct Chunk<'a> {
    #[serde(borrow)]
    choices: Vec<Object<Choice<'a>>>,
    #[serde(rename = "type")]
    kind: Option<IgnoredAny>,
    usage: Option<Object<UsageBody>>,
    // A chunk with an `error`, or whose `object` is "error", may be an error body (see
    // `envelope::provider_error`): the general reading's.
    error: Option<IgnoredAny>,
    #[serde(borrow)]
    object: Option<Cow<'a, str>>,
}

/// Token counts, where a server sends them (a usage-only last chunk, or the last choice's).
#[derive(Deserialize)]
struct UsageBody {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    index: Option<usize>,
    #[serde(borrow)]
    delta: Option<Object<DeltaBody<'a>>>,
    #[serde(borrow)]
    finish_reason: Option<Cow<'a, str>>,
    // The other ways a server says it stopped at the token limit (see `stopped_at_limit`).
    #[serde(borrow)]
    done_reason: Option<Cow<'a, str>>,
    #[serde(borrow)]
    stop_reason: Option<Cow<'a, str>>,
    #[serde(borrow)]
    status: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct DeltaBody<'a> {
    #[serde(borrow)]
    tool_calls: Option<Vec<Object<CallPiece<'a>>>>,
    // Text and reasoning as text only: a list of parts (Magistral's) is the general reading's.
    #[serde(borrow)]
    content: Option<Cow<'a, str>>,
    #[serde(borrow)]
    thinking: Option<Cow<'a, str>>,
    #[serde(borrow)]
    reasoning_content: Option<Cow<'a, str>>,
    #[serde(borrow)]
    reasoning: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct CallPiece<'a> {
    index: Option<usize>,
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    function: Option<Object<FunctionPiece<'a>>>,
}

/// A struct read from a JSON object only. serde's derived structs also read an array, member by
/// member in order; the general reading skips an array where an object goes, so this does too.
struct Object<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(MapOnly(deserializer)).map(Object)
    }
}

/// A deserializer that reads a struct as a map, refusing any other form.
struct MapOnly<D>(D);

impl<'de, D: serde::Deserializer<'de>> serde::Deserializer<'de> for MapOnly<D> {
    type Error = D::Error;

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_any(visitor)
    }

    fn deserialize_struct<V: serde::de::Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_map(visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

#[derive(Deserialize)]
struct FunctionPiece<'a> {
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    arguments: Option<Cow<'a, str>>,
}

/// What one choice of a chunk says: its call fragments, then, when it ends the choice, whether
/// it stopped at the token limit.
pub(super) struct ChoiceRead {
    pub deltas: Vec<Delta>,
    pub ends: Option<bool>,
    /// The choice's place (its `index`, else its place in the list).
    pub index: usize,
    pub text: Option<String>,
    pub reasoning: Option<String>,
    pub finish_reason: Option<String>,
}

/// What a chunk says: its choices and the token counts it carries.
pub(super) struct ChunkRead {
    pub choices: Vec<ChoiceRead>,
    pub usage: Option<(u64, u64)>,
}

/// The chunk `payload` holds, choice by choice; None when it is not a chunk this reading covers.
pub(super) fn read_chunk(payload: &[u8]) -> Option<ChunkRead> {
    // Only a line that names `choices` can be one: other lines (Ollama's) are not parsed twice.
    static CHOICES: LazyLock<memmem::Finder<'static>> =
        LazyLock::new(|| memmem::Finder::new(b"\"choices\""));
    CHOICES.find(payload)?;
    let Object(chunk) = serde_json::from_slice::<Object<Chunk<'_>>>(payload).ok()?;
    if chunk.kind.is_some() || chunk.error.is_some() || chunk.object.as_deref() == Some("error") {
        return None;
    }
    let usage = chunk
        .usage
        .filter(|Object(u)| u.prompt_tokens.is_some() || u.completion_tokens.is_some())
        .map(|Object(u)| {
            (
                u.prompt_tokens.unwrap_or(0),
                u.completion_tokens.unwrap_or(0),
            )
        });
    let choices = chunk
        .choices
        .into_iter()
        .enumerate()
        .map(|(position, c)| read_choice(c.0, position))
        .collect();
    Some(ChunkRead { choices, usage })
}

fn read_choice(choice: Choice<'_>, position: usize) -> ChoiceRead {
    let index = choice.index.unwrap_or(position);
    let (text, reasoning, calls) = match choice.delta {
        Some(Object(d)) => {
            // The reasoning fields in the order `envelope::reasoning_fields` reads them.
            let reasoning = d.thinking.or(d.reasoning_content).or(d.reasoning);
            (d.content, reasoning, d.tool_calls.unwrap_or_default())
        }
        None => (None, None, Vec::new()),
    };
    let deltas = calls
        .into_iter()
        .enumerate()
        .map(|(position, Object(call))| {
            let (name, arguments) = match call.function {
                Some(Object(f)) => (f.name, f.arguments),
                None => (None, None),
            };
            Delta {
                index: call.index.unwrap_or(position),
                id: call.id.map(Cow::into_owned),
                name: name.map(Cow::into_owned),
                arguments: arguments.map(Cow::into_owned),
                complete: false,
            }
        })
        .collect();
    let said = |reason: &Option<Cow<'_, str>>, limit: &str| reason.as_deref() == Some(limit);
    let ends = choice.finish_reason.is_some().then(|| {
        said(&choice.finish_reason, "length")
            || said(&choice.done_reason, "length")
            || said(&choice.stop_reason, "max_tokens")
            || said(&choice.status, "incomplete")
    });
    ChoiceRead {
        deltas,
        ends,
        index,
        text: text.map(Cow::into_owned),
        reasoning: reasoning.map(Cow::into_owned),
        finish_reason: choice.finish_reason.map(Cow::into_owned),
    }
}
