//! The error catalogue: stable codes, a byte position, and the facts a message is rendered from.

use std::fmt;

/// Stable error codes shared with the Python layer (see DESIGN.md, "Error codes").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// TLP-001: a tool call without a function.
    MissingFunction,
    /// TLP-002: a tool call whose name is missing or empty.
    EmptyName,
    /// TLP-003: a name with characters outside `[A-Za-z0-9_]`.
    InvalidName,
    /// TLP-004: the arguments could not be parsed, even after repair.
    Unparseable,
    /// TLP-005: a name longer than 64 characters.
    NameTooLong,
    /// TLP-006: the call could not be built (arguments that are not an object, say).
    CallConstruction,
    /// TLP-007: the input is larger than `max_size`.
    TooLarge,
    /// TLP-008: nesting deeper than `max_depth`, or the repair deadline passed.
    TooDeepOrTimeout,
    /// TSR-001: no tool of that name is registered.
    UnknownTool,
    /// TSR-002: the arguments are not JSON (or not JSON-representable).
    InvalidArguments,
    /// TSR-003: a required property is missing.
    RequiredMissing,
    /// TSR-004: a value has the wrong JSON type.
    TypeMismatch,
    /// TSR-005: a value breaks a constraint (length, range, pattern, enum, format, ...).
    ConstraintViolation,
    /// TSR-006: the tool definition or its schema is not acceptable.
    SchemaInvalid,
    /// TSR-007: another definition is already registered under that name.
    DuplicateTool,
    /// TSR-008: the schema could not be compiled.
    CompilationFailed,
}

impl ErrorCode {
    /// Every code, in catalogue order.
    pub const ALL: [ErrorCode; 16] = [
        ErrorCode::MissingFunction,
        ErrorCode::EmptyName,
        ErrorCode::InvalidName,
        ErrorCode::Unparseable,
        ErrorCode::NameTooLong,
        ErrorCode::CallConstruction,
        ErrorCode::TooLarge,
        ErrorCode::TooDeepOrTimeout,
        ErrorCode::UnknownTool,
        ErrorCode::InvalidArguments,
        ErrorCode::RequiredMissing,
        ErrorCode::TypeMismatch,
        ErrorCode::ConstraintViolation,
        ErrorCode::SchemaInvalid,
        ErrorCode::DuplicateTool,
        ErrorCode::CompilationFailed,
    ];

    /// The code as it appears in logs, exceptions and reflection prompts.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::MissingFunction => "TLP-001",
            ErrorCode::EmptyName => "TLP-002",
            ErrorCode::InvalidName => "TLP-003",
            ErrorCode::Unparseable => "TLP-004",
            ErrorCode::NameTooLong => "TLP-005",
            ErrorCode::CallConstruction => "TLP-006",
            ErrorCode::TooLarge => "TLP-007",
            ErrorCode::TooDeepOrTimeout => "TLP-008",
            ErrorCode::UnknownTool => "TSR-001",
            ErrorCode::InvalidArguments => "TSR-002",
            ErrorCode::RequiredMissing => "TSR-003",
            ErrorCode::TypeMismatch => "TSR-004",
            ErrorCode::ConstraintViolation => "TSR-005",
            ErrorCode::SchemaInvalid => "TSR-006",
            ErrorCode::DuplicateTool => "TSR-007",
            ErrorCode::CompilationFailed => "TSR-008",
        }
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

    /// The stable code of this error.
    pub fn code(&self) -> ErrorCode {
        match self.kind {
            ErrorKind::Unexpected { .. } | ErrorKind::InvalidUtf8 => ErrorCode::Unparseable,
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
