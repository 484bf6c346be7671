//! The JSON-like values the wire shapes and the pipeline read: one trait, served by serde values
//! here and by Python objects in the binding (the way one reader can serve JSON text and Python
//! objects alike), so every decision is written once.

use std::borrow::Cow;

use std::convert::Infallible;

use serde_json::Value;

/// The member names the wire shapes are read by. A closed set, so a backend can keep each name
/// ready (the binding interns them once, in `Key::ALL`'s order: a lookup hashes no new string).
macro_rules! keys {
    ($($key:ident => $name:literal,)*) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Key {
            $($key,)*
        }

        impl Key {
            /// Every key, in declaration order: `ALL[k as usize] == k`.
            pub const ALL: &'static [Key] = &[$(Key::$key,)*];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(Key::$key => $name,)*
                }
            }
        }
    };
}

keys! {
    Args => "args",
    Arguments => "arguments",
    CallId => "call_id",
    Choices => "choices",
    Content => "content",
    ContentBlock => "content_block",
    Delta => "delta",
    Detail => "detail",
    Done => "done",
    DoneReason => "done_reason",
    Error => "error",
    FinishReason => "finish_reason",
    Function => "function",
    Id => "id",
    Index => "index",
    Input => "input",
    InvalidToolCalls => "invalid_tool_calls",
    Item => "item",
    Message => "message",
    Name => "name",
    Object => "object",
    Output => "output",
    OutputIndex => "output_index",
    PartialJson => "partial_json",
    Reasoning => "reasoning",
    ReasoningContent => "reasoning_content",
    Response => "response",
    Role => "role",
    Status => "status",
    StopReason => "stop_reason",
    Summary => "summary",
    Text => "text",
    Thinking => "thinking",
    ToolCalls => "tool_calls",
    Type => "type",
    Usage => "usage",
    PromptTokens => "prompt_tokens",
    CompletionTokens => "completion_tokens",
    PromptEvalCount => "prompt_eval_count",
    EvalCount => "eval_count",
    InputTokens => "input_tokens",
    OutputTokens => "output_tokens",
}

/// A JSON-like value as the wire and the pipeline read it. Reads never fail except where a
/// backend cannot give text it holds (`Error`): Python strings with lone surrogates.
pub trait JsonLike: Clone {
    type Error;

    /// The member `key` of an object; None when it is missing or null, or this is no object.
    fn get(&self, key: Key) -> Option<Self>;
    /// Whether this is an object that has `key` at all, null included.
    fn has(&self, key: Key) -> bool;
    /// How many members an object has; None for any other value.
    fn members(&self) -> Option<usize>;
    fn is_null(&self) -> bool;
    fn is_object(&self) -> bool;
    /// JSON text still to be read: a string (the binding takes bytes too).
    fn is_text(&self) -> bool;
    /// A string's text; `Ok(None)` for any other value. Borrowed where the host holds UTF-8; a
    /// string the host holds that is not valid Unicode (a lone surrogate in Python) is read with
    /// U+FFFD in its place, as the text of such bytes is mended.
    fn as_str(&self) -> Result<Option<Cow<'_, str>>, Self::Error>;
    /// An array's elements; None for any other value.
    fn items(&self) -> Option<Vec<Self>>;
    /// A whole number that can index calls (as Python reads it: a bool is 0 or 1).
    fn as_index(&self) -> Option<usize>;
    /// Truth as Python tests it: false for null, false, 0, "", [] and {}.
    fn is_truthy(&self) -> bool;
    /// The value's type as a message names it ("dict", "list", "str", "int", "null", ...).
    fn type_name(&self) -> String;
    /// The value as text: a string as it is, anything else rendered. None when it cannot be.
    fn display(&self) -> Option<String>;
    /// The value written as JSON text.
    fn to_json(&self) -> Result<String, Self::Error>;
}

/// The error type of a value type, for signatures that name it often.
pub type ErrorOf<V> = <V as JsonLike>::Error;

/// Reads JSON text into a backend's values.
pub trait Parser {
    type Value: JsonLike;

    /// Strict JSON text as a value; `Ok(None)` when it is not strict JSON.
    fn parse(&self, json: &[u8]) -> Result<Option<Self::Value>, ErrorOf<Self::Value>>;
    /// JSON text the repair pass wrote (strict, possibly with numbers beyond 64 bits) as a
    /// value; None when the backend cannot hold it.
    fn build(&self, json: &[u8]) -> Option<Self::Value>;
}

/// serde values: the pipeline and the wire shapes run on them in `cargo test` and the fuzzers.
/// `get` and `items` clone what they return, which is fine for tests and small inputs.
impl JsonLike for Value {
    type Error = Infallible;

    fn get(&self, key: Key) -> Option<Self> {
        self.as_object()?
            .get(key.as_str())
            .filter(|v| !v.is_null())
            .cloned()
    }

    fn has(&self, key: Key) -> bool {
        self.as_object()
            .is_some_and(|o| o.contains_key(key.as_str()))
    }

    fn members(&self) -> Option<usize> {
        self.as_object().map(|o| o.len())
    }

    fn is_null(&self) -> bool {
        Value::is_null(self)
    }

    fn is_object(&self) -> bool {
        Value::is_object(self)
    }

    fn is_text(&self) -> bool {
        self.is_string()
    }

    fn as_str(&self) -> Result<Option<Cow<'_, str>>, Infallible> {
        Ok(Value::as_str(self).map(Cow::Borrowed))
    }

    fn items(&self) -> Option<Vec<Self>> {
        self.as_array().cloned()
    }

    fn as_index(&self) -> Option<usize> {
        match self {
            Value::Bool(b) => Some(usize::from(*b)),
            Value::Number(n) => n.as_u64().and_then(|n| usize::try_from(n).ok()),
            _ => None,
        }
    }

    fn is_truthy(&self) -> bool {
        match self {
            Value::Null => false,
            Value::Bool(b) => *b,
            Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
            Value::String(s) => !s.is_empty(),
            Value::Array(a) => !a.is_empty(),
            Value::Object(o) => !o.is_empty(),
        }
    }

    fn type_name(&self) -> String {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "bool",
            Value::Number(n) if n.is_f64() => "float",
            Value::Number(_) => "int",
            Value::String(_) => "str",
            Value::Array(_) => "list",
            Value::Object(_) => "dict",
        }
        .into()
    }

    fn display(&self) -> Option<String> {
        Some(match self {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
    }

    fn to_json(&self) -> Result<String, Infallible> {
        Ok(self.to_string())
    }
}

/// serde_json as the parser.
#[derive(Clone, Copy, Debug, Default)]
pub struct SerdeParser;

impl Parser for SerdeParser {
    type Value = Value;

    fn parse(&self, json: &[u8]) -> Result<Option<Value>, Infallible> {
        Ok(serde_json::from_slice(json).ok())
    }

    fn build(&self, json: &[u8]) -> Option<Value> {
        serde_json::from_slice(json).ok()
    }
}
