//! The error catalogue: stable codes, a byte position, and the facts a message is rendered from.
//!
//! Every code is one row of the table below; the enum, `ErrorCode::ALL`, the code strings and
//! the documentation texts (title, cause, fix) are generated from it, and the Python package
//! and docs/errors.md are generated from those, so a code is described in one place only.

use std::fmt;

/// Builds `ErrorCode` and its lookup functions from one table of rows
/// `Variant = "CODE", "title", cause: "...", fix: "...";`.
macro_rules! error_catalogue {
    ($(
        $variant:ident = $code:literal, $title:literal,
            cause: $cause:literal,
            fix: $fix:literal;
    )+) => {
        /// Stable error codes shared with the Python layer and the documentation.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum ErrorCode {
            $(
                #[doc = concat!($code, ": ", $title, ". ", $cause)]
                $variant,
            )+
        }

        impl ErrorCode {
            /// Every code, in catalogue order.
            pub const ALL: [ErrorCode; 0 $(+ error_catalogue!(@one $variant))+] =
                [$(ErrorCode::$variant),+];

            /// The code as it appears in logs, exceptions and reflection prompts ("TLP-004").
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $code,)+
                }
            }

            /// The variant's name ("Unparseable"), as the Python catalogue lists it.
            pub const fn name(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => stringify!($variant),)+
                }
            }

            /// A few words naming the fault ("invalid JSON"); also the error type of a
            /// reflection prompt.
            pub const fn title(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $title,)+
                }
            }

            /// What makes it happen.
            pub const fn cause(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $cause,)+
                }
            }

            /// What to do about it.
            pub const fn fix(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $fix,)+
                }
            }
        }
    };
    (@one $variant:ident) => {
        1
    };
}

error_catalogue! {
    MissingFunction = "TLP-001", "missing function",
        cause: "A tool call has no function part: the entry of `tool_calls` holds no `function` object, so there is neither a name nor arguments to read.",
        fix: "Declare the tools in the request's `tools` field so the model answers with whole calls; the client reflects the error to the model, which usually corrects it.";
    EmptyName = "TLP-002", "missing tool name",
        cause: "The call's function name is missing, empty or only whitespace.",
        fix: "Have the model name one of the declared tools; the reflection prompt lists them.";
    InvalidName = "TLP-003", "invalid tool name",
        cause: "The name is not a string, or holds characters other than ASCII letters, digits and `_` (a hyphen, a space, a dot, quotes left around it).",
        fix: "Declare tool names made of letters, digits and underscores, and have the model call them exactly as declared.";
    Unparseable = "TLP-004", "invalid JSON",
        cause: "The arguments are not JSON and repair could not mend them (prose instead of arguments, or repair turned off), or they are JSON but not an object.",
        fix: "Keep repair on (the default) and send one JSON object as the arguments; `position` is the byte where reading stopped and `suggestion` says what was expected there.";
    NameTooLong = "TLP-005", "tool name too long",
        cause: "The tool name is longer than 64 characters.",
        fix: "Declare names of at most 64 characters and have the model call them exactly as declared.";
    CallConstruction = "TLP-006", "tool call not built",
        cause: "The call was read but could not be built: its arguments could not be checked (an unexpected error during validation), or a fragment arrived for a streamed call that was already complete.",
        fix: "Start each new call of a stream at a new index (or with a new id); for a failure during validation, the message says what went wrong.";
    TooLarge = "TLP-007", "arguments too large",
        cause: "The input is longer than `max_size` bytes (1 MiB unless set).",
        fix: "Send smaller arguments, or raise `max_size` where the limits are set (`repair`, `parse_response`, `ToolRegistry`, `RetryConfig`).";
    TooDeepOrTimeout = "TLP-008", "arguments nested too deep or too slow to repair",
        cause: "Objects and arrays nest deeper than `max_depth` (64 unless set), or repairing took longer than `timeout_ms` (100 ms unless set).",
        fix: "Flatten the arguments, or raise `max_depth` (at most `MAX_DEPTH_CEILING`) or `timeout_ms`; `timeout_ms=0` turns the deadline off.";
    ReplyNotUnderstood = "TLP-009", "not a chat reply",
        cause: "The server's response is not a chat reply: a redirect (its JSON belongs to another page), a status other than 200 below 400 (204 No Content, say), or a body that is not a JSON object (an HTML page from a proxy).",
        fix: "Point the client at the server's final address (no redirects) and check that nothing between them rewrites replies; the error's `status` and `body` show what came back.";
    CutOff = "TLP-010", "arguments cut off",
        cause: "The reply ended inside a call's arguments: in a string or a literal (`tru`), or right after a key, `:` or `,`, so what was sent is the start of a call, not a whole one. When the reply says it stopped at the token limit (finish reason `length`, `done_reason` `length`, `stop_reason` `max_tokens`, status `incomplete`), any call whose end needed mending counts as cut off, even one that only lacks its closing braces; so does the reply's last call when anything in it needed mending, and arguments that could not be read at all. The error's `arguments` hold the part that was mended.",
        fix: "Raise the model's output limit (`num_predict` for Ollama, `max_tokens` for OpenAI-compatible servers) or ask for shorter arguments; the client reflects the call with a prompt that says it was cut off. A caller that reads the finish reason itself passes it to `ToolCallAccumulator.finish(finish_reason)` or `TextCallParser.flush(finish_reason)`. Pass `allow_truncated=True` (parse_response, ToolCallAccumulator, TextCallParser, or `register(..., allow_truncated=True)` for one tool) to take such calls, marked `truncated=True`, for tools where a partial call does no harm.";
    ProviderError = "TLP-011", "provider error",
        cause: "The reply is the provider's error, not a model's answer: `{\"error\": ...}` in Ollama's, OpenAI's or Anthropic's form (an unknown model, a context too long, an overloaded server). The provider's message is kept in the error's message.",
        fix: "Act on the provider's message (pull the model, shorten the conversation, retry later); the client raises `ModelHTTPError` for such replies when the status says so.";
    UnknownTool = "TSR-001", "unknown tool",
        cause: "No tool of that name is registered, in any letter case.",
        fix: "Register the tool, or have the model call one of the registered tools (`ToolRegistry.tools()`).";
    InvalidArguments = "TSR-002", "arguments not JSON",
        cause: "The arguments given for validation are not JSON text, or hold Python values JSON cannot represent (a set, bytes, NaN, a key that is not a string).",
        fix: "Pass a dict of JSON-compatible values (str keys; dict, list, str, int, float, bool, None) or JSON text.";
    RequiredMissing = "TSR-003", "missing required argument",
        cause: "A property the schema lists under `required` is absent.",
        fix: "Send every required property; `path` points at the object that lacks it and `expected` names it.";
    TypeMismatch = "TSR-004", "wrong argument type",
        cause: "A value has another JSON type than the schema asks for (a string for an integer, say); types are never coerced.",
        fix: "Send the value with the type in `expected`; `path` points at it.";
    ConstraintViolation = "TSR-005", "argument constraint violated",
        cause: "A value breaks a constraint of its schema: length, range, pattern, enum, format, or a property the strict registry does not allow.",
        fix: "Change the value at `path` to satisfy `expected`; for unknown properties, drop them or register the tool with `strict=False`.";
    SchemaInvalid = "TSR-006", "invalid tool definition",
        cause: "The tool definition is refused before compiling: a bad name, a version that is not `X.Y.Z`, a description over 500 characters, an unknown keyword (a typo such as `maxlength`), a draft other than 2020-12, a `$ref` outside the document, or a schema over the registry's size or depth limits.",
        fix: "Fix the definition at `path`: names of letters, digits and `_` (at most 64), versions `X.Y.Z`, draft 2020-12 schemas with local `#...` references only.";
    DuplicateTool = "TSR-007", "duplicate tool name",
        cause: "A different definition is already registered under that name (registering the same definition again is a no-op).",
        fix: "Register the new definition under another name; a registry holds one definition per name.";
    CompilationFailed = "TSR-008", "schema does not compile",
        cause: "The schema passes the checks but does not compile: a `$ref` that points nowhere or only at itself, or a `pattern` the regex engine refuses.",
        fix: "Fix the schema at `path`; patterns use the Rust `regex` syntax, which has no look-around or backreferences.";
}

impl ErrorCode {
    /// The code named by its string ("TLP-004"), if there is one.
    pub fn from_code(code: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|c| c.as_str() == code)
    }
}

/// What went wrong, as data; the message is rendered from it only when asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// A byte the grammar does not allow here (`found` is `None` at the end of the input).
    Unexpected {
        expected: &'static str,
        found: Option<char>,
    },
    /// The input is not valid UTF-8 (strict mode only; repair replaces the bytes).
    InvalidUtf8,
    /// Input longer than the size limit.
    TooLarge { size: usize, limit: usize },
    /// Containers nested deeper than the depth limit.
    TooDeep { limit: usize },
    /// The deadline passed before the work was done.
    Timeout { limit_ms: u64 },
    /// A number past the range of a double (`1e400`): no value can hold it, and reading it as
    /// infinity would hand a tool a number nobody wrote.
    NumberOutOfRange,
}

/// A user-facing error: the input is wrong or too big. Bugs never take this shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    /// Byte offset into the input where the fault was found.
    pub position: usize,
}

impl Error {
    pub(crate) fn unexpected(position: usize, expected: &'static str, found: Option<char>) -> Self {
        Error {
            kind: ErrorKind::Unexpected { expected, found },
            position,
        }
    }

    /// A number past the range of a double, at `position`.
    pub fn number_out_of_range(position: usize) -> Self {
        Error {
            kind: ErrorKind::NumberOutOfRange,
            position,
        }
    }

    /// The stable code of this error.
    pub fn code(&self) -> ErrorCode {
        match self.kind {
            ErrorKind::Unexpected { .. } | ErrorKind::InvalidUtf8 | ErrorKind::NumberOutOfRange => {
                ErrorCode::Unparseable
            }
            ErrorKind::TooLarge { .. } => ErrorCode::TooLarge,
            ErrorKind::TooDeep { .. } | ErrorKind::Timeout { .. } => ErrorCode::TooDeepOrTimeout,
        }
    }

    /// True when more input could make the document valid (a stream reader should wait, not fail).
    pub fn is_incomplete(&self) -> bool {
        matches!(self.kind, ErrorKind::Unexpected { found: None, .. })
    }

    /// A short hint for a person or a reflection prompt; computed here because it is logic.
    pub fn suggestion(&self) -> &'static str {
        match &self.kind {
            ErrorKind::Unexpected { found: None, .. } => {
                "the output was cut off: send the complete JSON value"
            }
            ErrorKind::Unexpected { .. } => {
                "send one JSON object with double-quoted keys and strings"
            }
            ErrorKind::InvalidUtf8 => "send UTF-8 text",
            ErrorKind::TooLarge { .. } => "send smaller arguments, or raise max_size",
            ErrorKind::TooDeep { .. } => "flatten the arguments, or raise max_depth",
            ErrorKind::Timeout { .. } => "send smaller arguments, or raise timeout_ms",
            ErrorKind::NumberOutOfRange => "send numbers a double can hold (up to about 1.8e308)",
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::Unexpected {
                expected,
                found: Some(c),
            } => {
                write!(
                    f,
                    "expected {expected} at byte {}, found {c:?}",
                    self.position
                )
            }
            ErrorKind::Unexpected {
                expected,
                found: None,
            } => {
                write!(
                    f,
                    "expected {expected} at byte {}, found end of input",
                    self.position
                )
            }
            ErrorKind::InvalidUtf8 => write!(f, "invalid UTF-8 at byte {}", self.position),
            ErrorKind::NumberOutOfRange => write!(
                f,
                "number out of range at byte {}: JSON numbers must fit a double",
                self.position
            ),
            ErrorKind::TooLarge { size, limit } => {
                write!(
                    f,
                    "input of {size} bytes is over the size limit of {limit} bytes"
                )
            }
            ErrorKind::TooDeep { limit } => {
                write!(
                    f,
                    "nesting deeper than the depth limit of {limit} at byte {}",
                    self.position
                )
            }
            ErrorKind::Timeout { limit_ms } => {
                write!(
                    f,
                    "timeout: repair passed its deadline of {limit_ms} ms at byte {}",
                    self.position
                )
            }
        }
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::ErrorCode;

    #[test]
    fn codes_are_numbered_in_order_within_each_series() {
        let mut next = std::collections::HashMap::new();
        for code in ErrorCode::ALL {
            let (series, number) = code.as_str().split_once('-').unwrap();
            let expected = next.entry(series).or_insert(1);
            assert_eq!(number, format!("{expected:03}"), "{code:?}");
            *expected += 1;
            assert_eq!(ErrorCode::from_code(code.as_str()), Some(code));
        }
        assert_eq!(ErrorCode::from_code("tlp-004"), None);
        assert_eq!(ErrorCode::from_code("TLP-04"), None);
    }

    #[test]
    fn every_code_is_described() {
        for code in ErrorCode::ALL {
            assert!(!code.title().is_empty() && !code.title().ends_with('.'));
            for text in [code.cause(), code.fix()] {
                assert!(text.ends_with('.'), "{code:?}: {text}");
            }
            assert_eq!(format!("{code:?}"), code.name());
        }
    }
}
