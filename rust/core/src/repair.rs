//! Single-pass JSON repair.
//!
//! One engine, two modes: `Engine<true>` is a strict validator that writes nothing and fails at
//! the first fault; `Engine<false>` mends each fault where it finds it and writes the repaired
//! text. Valid input is answered by the strict mode alone and comes back borrowed, unchanged.
//!
//! Linear time for every input: each byte is consumed once by the main loop, containers live on
//! an explicit stack (no recursion), and every heuristic looks ahead at most `scan::LOOKAHEAD`
//! bytes past whitespace that the main loop then consumes.

use std::borrow::Cow;

use crate::error::{Error, ErrorCode, ErrorKind};
use crate::limits::{Deadline, Limits};
use crate::scan::{self, is_ident, is_ws, literal_at, Delimiter, Literal};

/// One fault that was mended: what kind, and the byte offset in the input where it was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repair {
    pub kind: RepairKind,
    pub position: usize,
}

/// The kinds of fault the engine mends. `as_str` is the stable name used in logs and Python.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RepairKind {
    /// `,` before `}` or `]`, or at the end of a truncated container: removed.
    TrailingComma,
    /// `,,` or `[,`: the extra comma is removed.
    ExtraComma,
    /// An object left open: `}` added.
    MissingClosingBrace,
    /// An array left open: `]` added.
    MissingClosingBracket,
    /// `[1, 2}`: the wrong closer is replaced by the right one.
    MismatchedCloser,
    /// A `}` or `]` that closes nothing: dropped.
    ExtraCloser,
    /// `{{"a": 1}}` (templates double their braces): the inner pair is dropped.
    RedundantBrace,
    /// `'text'`: rewritten with double quotes.
    SingleQuotes,
    /// `“text”` or `‘text’`: typographic quotes around a string, rewritten with double quotes.
    SpecialQuotes,
    /// `{\"a\": 1}`: JSON escaped once too often (a stringified string); unescaped, then repaired.
    /// Later positions refer to the unescaped text.
    EscapedJson,
    /// `{path: 1}`: the key is quoted.
    UnquotedKey,
    /// `{"name": John}`: the value is quoted as a string.
    UnquotedString,
    /// The input ends inside a string: the string is closed.
    TruncatedString,
    /// The input ends inside `true`, `false` or `null`: the word is completed.
    TruncatedLiteral,
    /// `"He said "hi""`: quotes that do not end the string are escaped.
    UnescapedQuotes,
    /// A raw newline, tab or other control character inside a string: escaped.
    ControlCharacter,
    /// `\x`, `\'`, a bad `\u` or a lone surrogate: rewritten to what it most likely meant.
    InvalidEscape,
    /// `//`, `/* */` and `#` comments: removed.
    Comment,
    /// `True`, `False`, `None`: written as `true`, `false`, `null`.
    PythonLiteral,
    /// `undefined`, `NaN`, `Infinity`, `-Infinity`: written as `null` (strict JSON has no such values).
    JsLiteral,
    /// `.5`, `+1`, `1.`, `1e`: mended; numbers that cannot be (`007`, `1.2.3`) become strings.
    InvalidNumber,
    /// `{"a": 1 "b": 2}`: the comma is inserted.
    MissingComma,
    /// `{"a" 1}`: the colon is inserted.
    MissingColon,
    /// `{"a": }` or `{"a"}`: the value is written as `null`.
    MissingValue,
    /// A byte that fits nowhere in the grammar (`;` between members, `...` in an array): dropped.
    UnexpectedCharacter,
    /// ```` ```json ```` fences around the value: removed.
    MarkdownFence,
    /// Prose before or after the JSON value: removed.
    SurroundingText,
    /// Several top-level values one after another: wrapped in one array, in order.
    ConcatenatedValues,
    /// `"abc" + "def"` (JavaScript string concatenation): joined into one string.
    StringConcatenation,
    /// `ObjectId("1")`, `NumberLong(2)`, JSONP `callback(...)`: the call is replaced by its argument.
    FunctionCall,
    /// A leading UTF-8 byte order mark: removed.
    ByteOrderMark,
    /// Bytes that are not UTF-8: replaced with U+FFFD (positions still refer to the input).
    InvalidUtf8,
}

impl RepairKind {
    /// Every kind, in declaration order.
    pub const ALL: [RepairKind; 32] = {
        use RepairKind::*;
        [
            TrailingComma,
            ExtraComma,
            MissingClosingBrace,
            MissingClosingBracket,
            MismatchedCloser,
            ExtraCloser,
            RedundantBrace,
            SingleQuotes,
            SpecialQuotes,
            EscapedJson,
            UnquotedKey,
            UnquotedString,
            TruncatedString,
            TruncatedLiteral,
            UnescapedQuotes,
            ControlCharacter,
            InvalidEscape,
            Comment,
            PythonLiteral,
            JsLiteral,
            InvalidNumber,
            MissingComma,
            MissingColon,
            MissingValue,
            UnexpectedCharacter,
            MarkdownFence,
            SurroundingText,
            ConcatenatedValues,
            StringConcatenation,
            FunctionCall,
            ByteOrderMark,
            InvalidUtf8,
        ]
    };

    /// The kind whose stable name is `name`.
    pub fn from_name(name: &str) -> Option<RepairKind> {
        Self::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// The stable snake_case name of this kind.
    pub fn as_str(self) -> &'static str {
        use RepairKind::*;
        match self {
            TrailingComma => "trailing_comma",
            ExtraComma => "extra_comma",
            MissingClosingBrace => "missing_closing_brace",
            MissingClosingBracket => "missing_closing_bracket",
            MismatchedCloser => "mismatched_closer",
            ExtraCloser => "extra_closer",
            RedundantBrace => "redundant_brace",
            SingleQuotes => "single_quotes",
            SpecialQuotes => "special_quotes",
            EscapedJson => "escaped_json",
            UnquotedKey => "unquoted_key",
            UnquotedString => "unquoted_string",
            TruncatedString => "truncated_string",
            TruncatedLiteral => "truncated_literal",
            UnescapedQuotes => "unescaped_quotes",
            ControlCharacter => "control_character",
            InvalidEscape => "invalid_escape",
            Comment => "comment",
            PythonLiteral => "python_literal",
            JsLiteral => "js_literal",
            InvalidNumber => "invalid_number",
            MissingComma => "missing_comma",
            MissingColon => "missing_colon",
            MissingValue => "missing_value",
            StringConcatenation => "string_concatenation",
            FunctionCall => "function_call",
            UnexpectedCharacter => "unexpected_character",
            MarkdownFence => "markdown_fence",
            SurroundingText => "surrounding_text",
            ConcatenatedValues => "concatenated_values",
            ByteOrderMark => "byte_order_mark",
            InvalidUtf8 => "invalid_utf8",
        }
    }
}

/// The outcome of a successful repair: the JSON text (borrowed when the input was already valid)
/// and the log of repairs, empty for valid input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Repaired<'a> {
    pub json: Cow<'a, str>,
    pub repairs: Vec<Repair>,
}

impl Repaired<'_> {
    /// True when the input needed mending.
    pub fn was_repaired(&self) -> bool {
        !self.repairs.is_empty()
    }
}

/// Checks that `input` is one strict JSON value (RFC 8259, UTF-8, no lone surrogate escapes)
/// within the limits.
pub fn validate(input: &[u8], limits: &Limits) -> Result<(), Error> {
    limits.check_size(input.len())?;
    if let Err(e) = std::str::from_utf8(input) {
        return Err(Error {
            kind: ErrorKind::InvalidUtf8,
            position: e.valid_up_to(),
        });
    }
    Engine::<true>::new(input, limits, limits.deadline()).run()
}

/// Repairs `input` into one strict JSON value. Valid input comes back unchanged (borrowed) with
/// an empty log; anything else is mended in one pass, or refused with a coded error.
pub fn repair<'a>(input: &'a [u8], limits: &Limits) -> Result<Repaired<'a>, Error> {
    limits.check_size(input.len())?;
    if let Ok(valid) = std::str::from_utf8(input) {
        match Engine::<true>::new(input, limits, limits.deadline()).run() {
            Ok(()) => {
                return Ok(Repaired {
                    json: Cow::Borrowed(valid),
                    repairs: Vec::new(),
                })
            }
            Err(e) if e.code() != ErrorCode::Unparseable => return Err(e),
            Err(_) => {}
        }
    }
    mend(input, limits).map(|(json, repairs)| Repaired {
        json: Cow::Owned(json),
        repairs,
    })
}

/// The repair pass alone, for callers that already know `input` is not valid JSON (a strict
/// parser refused it): it skips the validation that `repair` runs first. Valid input still comes
/// back equal, with an empty log.
pub fn mend(input: &[u8], limits: &Limits) -> Result<(String, Vec<Repair>), Error> {
    limits.check_size(input.len())?;
    let mut repairs = Vec::new();
    // Positions in the text the engine reads, mapped back to the input's (the two differ when
    // invalid UTF-8 was replaced or one level of escaping taken off).
    let mut maps: Vec<PositionMap> = Vec::new();
    let utf8_error = std::str::from_utf8(input).err();
    let mut text: Cow<'_, [u8]> = match utf8_error {
        None => Cow::Borrowed(input),
        Some(e) => {
            repairs.push(Repair {
                kind: RepairKind::InvalidUtf8,
                position: e.valid_up_to(),
            });
            let (lossy, map) = replace_invalid_utf8(input);
            maps.push(map);
            Cow::Owned(lossy)
        }
    };
    if let Some(at) = escaped_json_at(&text) {
        repairs.push(Repair {
            kind: RepairKind::EscapedJson,
            position: original_position(&maps, at),
        });
        let (unescaped, map) = unescape_once(&text);
        maps.push(map);
        text = Cow::Owned(unescaped);
    }
    let before = repairs.len();
    let mut engine = Engine::<false>::new(&text, limits, limits.deadline());
    engine.repairs = repairs;
    if let Err(mut e) = engine.run() {
        e.position = original_position(&maps, e.position);
        return Err(e);
    }
    if !maps.is_empty() {
        for r in &mut engine.repairs[before..] {
            r.position = original_position(&maps, r.position);
        }
    }
    let json = String::from_utf8(engine.out)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    Ok((json, engine.repairs))
}

/// Where a rewrite of the text moved positions: each point pairs a position in the rewritten
/// text with the one it came from; between points both advance together.
#[derive(Debug, Default)]
struct PositionMap {
    points: Vec<(usize, usize)>,
}

impl PositionMap {
    fn before(&self, position: usize) -> usize {
        let i = self.points.partition_point(|&(new, _)| new <= position);
        if i == 0 {
            return position;
        }
        let (new, old) = self.points[i - 1];
        let mapped = old + (position - new);
        // Inside a rewritten run: never past where the next unchanged text starts.
        self.points
            .get(i)
            .map_or(mapped, |&(_, next_old)| mapped.min(next_old))
    }
}

/// A position in the text after every rewrite in `maps` (applied in order), in the input.
fn original_position(maps: &[PositionMap], position: usize) -> usize {
    maps.iter().rev().fold(position, |p, map| map.before(p))
}

/// Each invalid UTF-8 sequence replaced by U+FFFD, as `String::from_utf8_lossy` does.
fn replace_invalid_utf8(input: &[u8]) -> (Vec<u8>, PositionMap) {
    let mut out = Vec::with_capacity(input.len() + 8);
    let mut map = PositionMap::default();
    for chunk in input.utf8_chunks() {
        out.extend_from_slice(chunk.valid().as_bytes());
        let invalid = chunk.invalid();
        if !invalid.is_empty() {
            let old = invalid.as_ptr() as usize - input.as_ptr() as usize;
            map.points.push((out.len(), old));
            out.extend_from_slice("\u{FFFD}".as_bytes());
            map.points.push((out.len(), old + invalid.len()));
        }
    }
    (out, map)
}

/// Where JSON escaped once too often begins: an object or array whose first key or string opens
/// with `\"` (`{\"path\": ...}`), or a string that does (`\"hello\"`), as when a model
/// stringifies its arguments twice.
fn escaped_json_at(text: &[u8]) -> Option<usize> {
    let start = scan::skip_ws(text, 0);
    let inner = scan::skip_ws(text, start + 1);
    if text[start.min(text.len())..].starts_with(b"\\\"") {
        return Some(start); // a stringified string: `\"hello\"`
    }
    (matches!(text.get(start), Some(b'{' | b'['))
        && text[inner.min(text.len())..].starts_with(b"\\\""))
    .then_some(inner)
}

/// Removes one level of JSON string escaping: `\"` -> `"`, `\\` -> `\`, `\n` -> a newline, and
/// so on; escapes of the inner level come out as raw characters, which the repair pass escapes again.
fn unescape_once(text: &[u8]) -> (Vec<u8>, PositionMap) {
    let mut out = Vec::with_capacity(text.len());
    let mut map = PositionMap::default();
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        let next = text.get(i + 1).copied();
        let (bytes, used): (&[u8], usize) = match (b, next) {
            (b'\\', Some(b'"')) => (b"\"", 2),
            (b'\\', Some(b'\\')) => (b"\\", 2),
            (b'\\', Some(b'/')) => (b"/", 2),
            (b'\\', Some(b'n')) => (b"\n", 2),
            (b'\\', Some(b't')) => (b"\t", 2),
            (b'\\', Some(b'r')) => (b"\r", 2),
            _ => (&text[i..i + 1], 1),
        };
        out.extend_from_slice(bytes);
        i += used;
        if used == 2 {
            map.points.push((out.len(), i));
        }
    }
    (out, map)
}

/// A container on the explicit stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Frame {
    Object,
    Array,
    /// A redundant `{` met where a key belongs; its `}` is dropped, its members join the object.
    Brace,
}

impl Frame {
    fn closes_with(self, b: u8) -> bool {
        match self {
            Frame::Object | Frame::Brace => b == b'}',
            Frame::Array => b == b']',
        }
    }
}

/// What the grammar expects next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    RootValue,
    /// After `:`.
    MemberValue,
    /// After `[`.
    FirstElement,
    /// After `,` in an array.
    NextElement,
    /// After `{`.
    FirstKey,
    /// After `,` in an object.
    NextKey,
    Colon,
    /// After a value inside a container: `,` or a closer.
    AfterValue,
    /// The root value is complete.
    Done,
}

/// Which container a `,` after a closer leads into, judged by what follows the comma.
#[derive(Clone, Copy, PartialEq, Eq)]
enum After {
    CommaKey,
    CommaElement,
    End,
    Other,
}

struct Engine<'a, const STRICT: bool> {
    src: &'a [u8],
    pos: usize,
    out: Vec<u8>,
    stack: Vec<Frame>,
    /// Stack indices of open objects (including redundant braces) and of open arrays, so that
    /// "is there a container this closer matches?" is answered in O(1).
    objects: Vec<usize>,
    arrays: Vec<usize>,
    repairs: Vec<Repair>,
    /// Output offset and input offset of the last comma written, for trailing-comma removal.
    last_comma: (usize, usize),
    max_depth: usize,
    /// The deepest the stack has been, and the levels added around it in the output (one when
    /// several root values are wrapped in an array): the output nests no deeper than the limit.
    deepest: usize,
    wrapper_levels: usize,
    deadline: Deadline,
    steps: u32,
    /// The next string continues the one written last (`"a" + "b"`): no opening quote.
    continues_string: bool,
    /// Calls (`ObjectId(`) whose `)` is still to come.
    open_calls: usize,
}

impl<'a, const STRICT: bool> Engine<'a, STRICT> {
    fn new(src: &'a [u8], limits: &Limits, deadline: Deadline) -> Self {
        Engine {
            src,
            pos: 0,
            out: if STRICT {
                Vec::new()
            } else {
                Vec::with_capacity(src.len() + 16)
            },
            stack: Vec::with_capacity(16),
            objects: Vec::new(),
            arrays: Vec::new(),
            repairs: Vec::new(),
            last_comma: (0, 0),
            max_depth: limits.max_depth,
            deepest: 0,
            wrapper_levels: 0,
            deadline,
            steps: 0,
            continues_string: false,
            open_calls: 0,
        }
    }

    fn run(&mut self) -> Result<(), Error> {
        if !STRICT {
            self.prelude();
        }
        self.value()?;
        self.epilogue()
    }

    // ---- output and faults -------------------------------------------------------------

    #[inline(always)]
    fn emit(&mut self, bytes: &[u8]) {
        if !STRICT {
            self.out.extend_from_slice(bytes);
        }
    }

    #[inline(always)]
    fn emit_byte(&mut self, b: u8) {
        if !STRICT {
            self.out.push(b);
        }
    }

    /// A fault at `position`: strict mode fails with what was expected; repair mode logs it and
    /// the caller mends it.
    #[inline]
    fn fault(
        &mut self,
        kind: RepairKind,
        position: usize,
        expected: &'static str,
    ) -> Result<(), Error> {
        if STRICT {
            return Err(Error::unexpected(
                position,
                expected,
                scan::char_at(self.src, position),
            ));
        }
        self.repairs.push(Repair { kind, position });
        Ok(())
    }

    fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }

    fn tick(&mut self) -> Result<(), Error> {
        self.steps = self.steps.wrapping_add(1);
        if self.steps.is_multiple_of(1024) {
            self.deadline.check(self.pos)?;
        }
        Ok(())
    }

    // ---- document level ----------------------------------------------------------------

    /// Skips what may stand before the value: a BOM, a markdown fence, leading prose.
    fn prelude(&mut self) {
        if self.src.starts_with(b"\xEF\xBB\xBF") {
            self.repairs.push(Repair {
                kind: RepairKind::ByteOrderMark,
                position: 0,
            });
            self.pos = 3;
        }
        let start = scan::skip_ws(self.src, self.pos);
        let mut at = start;
        if self.src[at..].starts_with(b"```") {
            self.repairs.push(Repair {
                kind: RepairKind::MarkdownFence,
                position: at,
            });
            at = self.src[at..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(self.src.len(), |n| at + n + 1);
            at = scan::skip_ws(self.src, at);
        }
        if let Some(&b) = self.src.get(at) {
            let starts_value = matches!(b, b'{' | b'[' | b'"' | b'-' | b'0'..=b'9')
                || literal_at(self.src, at).is_some();
            if !starts_value {
                if let Some(n) = self.src[at..].iter().position(|&c| c == b'{' || c == b'[') {
                    self.repairs.push(Repair {
                        kind: RepairKind::SurroundingText,
                        position: at,
                    });
                    at += n;
                }
            }
        }
        if at != start {
            self.pos = at;
        }
    }

    /// After the root value: whitespace, or more values (wrapped in an array), fences, stray
    /// closers and trailing prose, which is dropped.
    fn epilogue(&mut self) -> Result<(), Error> {
        let mut wrapped = false;
        loop {
            let mut before_ws = self.out.len();
            self.skip_ws()?;
            let Some(b) = self.peek() else { break };
            if STRICT {
                return Err(Error::unexpected(
                    self.pos,
                    "the end of the input",
                    scan::char_at(self.src, self.pos),
                ));
            }
            if b == b'+' && self.wrote_string_last() && self.concatenation_at(self.pos) {
                self.concatenate()?;
                continue;
            }
            let next = if b == b',' {
                scan::skip_ws_and_comments(self.src, self.pos + 1)
            } else {
                self.pos
            };
            // Another container, or after a comma any value but a key (`1, 2, 3`).
            let another_value = match self.src.get(next) {
                Some(b'{' | b'[') => true,
                Some(b'}' | b']') | None => false,
                Some(_) => {
                    b == b','
                        && scan::looks_like_element(self.src, next)
                        && !scan::looks_like_key(self.src, next)
                }
            };
            if another_value {
                if !wrapped {
                    // The array around the values is one more level: what was read must fit.
                    if self.deepest + 1 > self.max_depth {
                        return Err(self.too_deep(next));
                    }
                    self.wrapper_levels = 1;
                    self.repairs.push(Repair {
                        kind: RepairKind::ConcatenatedValues,
                        position: next,
                    });
                    self.out.insert(0, b'[');
                    wrapped = true;
                    before_ws += 1;
                }
                self.out.insert(before_ws, b',');
                self.pos = next;
                self.value()?;
            } else if self.src[self.pos..].starts_with(b"```") {
                self.repairs.push(Repair {
                    kind: RepairKind::MarkdownFence,
                    position: self.pos,
                });
                self.out.truncate(before_ws);
                self.pos += 3;
            } else if b == b'}' || b == b']' {
                self.repairs.push(Repair {
                    kind: RepairKind::ExtraCloser,
                    position: self.pos,
                });
                self.pos += 1;
            } else {
                self.repairs.push(Repair {
                    kind: RepairKind::SurroundingText,
                    position: self.pos,
                });
                self.out.truncate(before_ws);
                self.pos = self.src.len();
            }
        }
        if wrapped {
            self.out.push(b']');
        }
        Ok(())
    }

    /// Whitespace (copied) and comments (strict: a fault; repair: dropped).
    #[inline]
    fn skip_ws(&mut self) -> Result<(), Error> {
        loop {
            let start = self.pos;
            self.pos = scan::skip_ws(self.src, self.pos);
            if !STRICT && self.pos > start {
                self.out.extend_from_slice(&self.src[start..self.pos]);
            }
            let rest = &self.src[self.pos..];
            let end = if rest.starts_with(b"//") || rest.starts_with(b"#") {
                rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len())
            } else if rest.starts_with(b"/*") {
                rest.windows(2)
                    .skip(2)
                    .position(|w| w == b"*/")
                    .map_or(rest.len(), |n| n + 4)
            } else {
                return Ok(());
            };
            self.fault(RepairKind::Comment, self.pos, "a JSON value, not a comment")?;
            self.pos += end;
        }
    }

    // ---- the state machine ---------------------------------------------------------------

    /// Parses one complete value from `self.pos`; at the end of the input, mends what is open.
    fn value(&mut self) -> Result<(), Error> {
        let mut expect = Expect::RootValue;
        loop {
            self.tick()?;
            self.skip_ws()?;
            let Some(b) = self.peek() else {
                return self.finish(expect);
            };
            expect = match expect {
                Expect::RootValue
                | Expect::MemberValue
                | Expect::FirstElement
                | Expect::NextElement => self.on_value(expect, b)?,
                Expect::FirstKey | Expect::NextKey => self.on_key(expect, b)?,
                Expect::Colon => self.on_colon(b)?,
                Expect::AfterValue => self.on_after_value(b)?,
                Expect::Done => return Ok(()),
            };
            if expect == Expect::Done {
                return Ok(());
            }
        }
    }

    fn after_value(&self) -> Expect {
        if self.stack.is_empty() {
            Expect::Done
        } else {
            Expect::AfterValue
        }
    }

    fn open(&mut self, frame: Frame) -> Result<(), Error> {
        if self.stack.len() + self.wrapper_levels >= self.max_depth {
            return Err(self.too_deep(self.pos));
        }
        match frame {
            Frame::Object | Frame::Brace => self.objects.push(self.stack.len()),
            Frame::Array => self.arrays.push(self.stack.len()),
        }
        self.stack.push(frame);
        self.deepest = self.deepest.max(self.stack.len());
        Ok(())
    }

    fn too_deep(&self, position: usize) -> Error {
        Error {
            kind: ErrorKind::TooDeep {
                limit: self.max_depth,
            },
            position,
        }
    }

    fn pop(&mut self) -> Option<Frame> {
        let frame = self.stack.pop()?;
        match frame {
            Frame::Object | Frame::Brace => self.objects.pop(),
            Frame::Array => self.arrays.pop(),
        };
        Some(frame)
    }

    /// Pops the top frame and writes its closer, logging it as missing.
    fn close_missing(&mut self, position: usize) {
        match self.pop() {
            Some(Frame::Object) => {
                self.repairs.push(Repair {
                    kind: RepairKind::MissingClosingBrace,
                    position,
                });
                self.out.push(b'}');
            }
            Some(Frame::Array) => {
                self.repairs.push(Repair {
                    kind: RepairKind::MissingClosingBracket,
                    position,
                });
                self.out.push(b']');
            }
            Some(Frame::Brace) | None => {}
        }
    }

    /// Removes the comma written last (only whitespace has been written after it).
    fn drop_last_comma(&mut self) -> Result<(), Error> {
        let (out_at, src_at) = self.last_comma;
        self.fault(RepairKind::TrailingComma, src_at, "a value after ','")?;
        self.out.remove(out_at);
        Ok(())
    }

    /// The end of the input: strict mode fails; repair mode completes what is open.
    fn finish(&mut self, expect: Expect) -> Result<(), Error> {
        let at = self.src.len();
        let expected = match expect {
            Expect::RootValue => return Err(Error::unexpected(at, "a JSON value", None)),
            Expect::MemberValue | Expect::FirstElement | Expect::NextElement => "a value",
            Expect::FirstKey | Expect::NextKey => "a key",
            Expect::Colon => "':'",
            Expect::AfterValue | Expect::Done => "',' or a closing bracket",
        };
        if STRICT {
            return Err(Error::unexpected(at, expected, None));
        }
        match expect {
            Expect::MemberValue => {
                self.fault(RepairKind::MissingValue, at, expected)?;
                self.out.extend_from_slice(b"null");
            }
            Expect::Colon => {
                self.fault(RepairKind::MissingValue, at, expected)?;
                self.out.extend_from_slice(b":null");
            }
            Expect::NextElement | Expect::NextKey => self.drop_last_comma()?,
            _ => {}
        }
        while !self.stack.is_empty() {
            self.close_missing(at);
        }
        Ok(())
    }

    fn on_value(&mut self, expect: Expect, b: u8) -> Result<Expect, Error> {
        let at = self.pos;
        match b {
            b'{' => {
                self.open(Frame::Object)?;
                self.emit_byte(b'{');
                self.pos += 1;
                Ok(Expect::FirstKey)
            }
            b'[' => {
                self.open(Frame::Array)?;
                self.emit_byte(b'[');
                self.pos += 1;
                Ok(Expect::FirstElement)
            }
            b'"' => {
                self.string(&scan::DOUBLE, false)?;
                Ok(self.after_value())
            }
            b'-' | b'0'..=b'9' => {
                self.number()?;
                Ok(self.after_value())
            }
            b'}' | b']' | b',' | b':' => self.on_missing_value(expect, b),
            b'.' if !STRICT && self.src[at..].iter().take_while(|&&c| c == b'.').count() >= 2 => {
                // `[1, 2, ...]`: an ellipsis stands for elements the model left out.
                self.fault(RepairKind::UnexpectedCharacter, at, "a value")?;
                self.pos += self.src[at..].iter().take_while(|&&c| c == b'.').count();
                Ok(expect)
            }
            b'+' | b'.' => {
                self.number()?;
                Ok(self.after_value())
            }
            b'\'' => {
                self.fault(RepairKind::SingleQuotes, at, "a double-quoted string")?;
                self.string(&scan::SINGLE, false)?;
                Ok(self.after_value())
            }
            0xE2 if scan::curly_quote_at(self.src, at).is_some() => {
                self.fault(RepairKind::SpecialQuotes, at, "a double-quoted string")?;
                self.string(scan::curly_quote_at(self.src, at).expect("checked"), false)?;
                Ok(self.after_value())
            }
            _ if !STRICT && self.call_wrapper_at(at).is_some() => {
                // `ObjectId("1")`, `NumberLong(2)`, JSONP `callback(...)`: the value inside
                // stands for the call; the `)` after it is dropped as an unexpected character.
                self.fault(RepairKind::FunctionCall, at, "a JSON value")?;
                self.pos = self.call_wrapper_at(at).expect("checked");
                self.open_calls += 1;
                Ok(expect)
            }
            _ => {
                self.word(expect == Expect::RootValue)?;
                Ok(self.after_value())
            }
        }
    }

    /// Past `Name(` when a call of a named function (not a literal) starts at `i`.
    fn call_wrapper_at(&self, i: usize) -> Option<usize> {
        let src = self.src;
        let name = src[i..]
            .iter()
            .take_while(|&&c| is_ident(c) || c == b'.')
            .count();
        let is_name = name > 0 && !src[i].is_ascii_digit() && literal_at(src, i).is_none();
        (is_name && src.get(i + name) == Some(&b'(')).then_some(i + name + 1)
    }

    /// A closer, comma or colon where a value belongs.
    fn on_missing_value(&mut self, expect: Expect, b: u8) -> Result<Expect, Error> {
        let at = self.pos;
        match (expect, b) {
            (Expect::FirstElement, b']') => self.close(b, expect),
            (Expect::NextElement, b']' | b'}') => {
                self.drop_last_comma()?;
                self.close(b, Expect::AfterValue)
            }
            (Expect::FirstElement, b'}') => self.close(b, expect),
            (Expect::MemberValue, b'}' | b']' | b',') => {
                self.fault(RepairKind::MissingValue, at, "a value after ':'")?;
                self.out.extend_from_slice(b"null");
                Ok(Expect::AfterValue)
            }
            (Expect::FirstElement | Expect::NextElement, b',') => {
                self.fault(RepairKind::ExtraComma, at, "a value")?;
                self.pos += 1;
                Ok(expect)
            }
            _ => {
                // A stray closer before the root value, or a doubled colon.
                let kind = if b == b':' {
                    RepairKind::UnexpectedCharacter
                } else {
                    RepairKind::ExtraCloser
                };
                self.fault(kind, at, "a value")?;
                self.pos += 1;
                Ok(expect)
            }
        }
    }

    fn on_key(&mut self, expect: Expect, b: u8) -> Result<Expect, Error> {
        let at = self.pos;
        match b {
            b'"' => {
                self.string(&scan::DOUBLE, true)?;
                Ok(Expect::Colon)
            }
            b'}' | b']' => {
                if expect == Expect::NextKey {
                    self.drop_last_comma()?;
                    return self.close(b, Expect::AfterValue);
                }
                self.close(b, expect)
            }
            b'\'' => {
                self.fault(RepairKind::SingleQuotes, at, "a double-quoted key")?;
                self.string(&scan::SINGLE, true)?;
                Ok(Expect::Colon)
            }
            0xE2 if scan::curly_quote_at(self.src, at).is_some() => {
                self.fault(RepairKind::SpecialQuotes, at, "a double-quoted key")?;
                self.string(scan::curly_quote_at(self.src, at).expect("checked"), true)?;
                Ok(Expect::Colon)
            }
            b'{' => {
                self.fault(RepairKind::RedundantBrace, at, "a double-quoted key")?;
                self.open(Frame::Brace)?;
                self.pos += 1;
                Ok(expect)
            }
            b'.' if !STRICT && self.src[at..].starts_with(b"..") => {
                // `{"a": 1, ...}`: an ellipsis stands for members the model left out.
                self.fault(RepairKind::UnexpectedCharacter, at, "a double-quoted key")?;
                self.pos += self.src[at..].iter().take_while(|&&c| c == b'.').count();
                Ok(expect)
            }
            b',' | b'[' | b':' => {
                let kind = if b == b',' {
                    RepairKind::ExtraComma
                } else {
                    RepairKind::UnexpectedCharacter
                };
                self.fault(kind, at, "a double-quoted key")?;
                self.pos += 1;
                Ok(expect)
            }
            _ => {
                self.fault(RepairKind::UnquotedKey, at, "a double-quoted key")?;
                self.unquoted_key();
                Ok(Expect::Colon)
            }
        }
    }

    fn on_colon(&mut self, b: u8) -> Result<Expect, Error> {
        let at = self.pos;
        match b {
            b':' => {
                self.emit_byte(b':');
                self.pos += 1;
                Ok(Expect::MemberValue)
            }
            b',' | b'}' | b']' => {
                self.fault(RepairKind::MissingValue, at, "':' after a key")?;
                self.out.extend_from_slice(b":null");
                Ok(Expect::AfterValue)
            }
            b'=' => {
                self.fault(RepairKind::MissingColon, at, "':' after a key")?;
                self.out.push(b':');
                self.pos += 1;
                Ok(Expect::MemberValue)
            }
            _ => {
                self.fault(RepairKind::MissingColon, at, "':' after a key")?;
                self.out.push(b':');
                Ok(Expect::MemberValue)
            }
        }
    }

    fn on_after_value(&mut self, b: u8) -> Result<Expect, Error> {
        let at = self.pos;
        let in_array = self.stack.last() == Some(&Frame::Array);
        match b {
            b',' => {
                self.last_comma = (self.out.len(), at);
                self.emit_byte(b',');
                self.pos += 1;
                Ok(if in_array {
                    Expect::NextElement
                } else {
                    Expect::NextKey
                })
            }
            b'}' | b']' => self.close(b, Expect::AfterValue),
            b')' if !STRICT && self.open_calls > 0 => {
                self.open_calls -= 1;
                self.pos += 1;
                Ok(Expect::AfterValue)
            }
            b'+' if !STRICT && self.wrote_string_last() && self.concatenation_at(at) => {
                self.concatenate()?;
                Ok(Expect::AfterValue)
            }
            _ => {
                let expected = if in_array {
                    "',' or ']' after an element"
                } else {
                    "',' or '}' after a member"
                };
                let starts_item = b == b'"'
                    || b == b'\''
                    || b == b'{'
                    || b == b'['
                    || is_ident(b)
                    || b == b'.'
                    || b == b'+';
                if starts_item {
                    self.fault(RepairKind::MissingComma, at, expected)?;
                    self.last_comma = (self.out.len(), at);
                    self.out.push(b',');
                    Ok(if in_array {
                        Expect::NextElement
                    } else {
                        Expect::NextKey
                    })
                } else {
                    self.fault(RepairKind::UnexpectedCharacter, at, expected)?;
                    self.pos += 1;
                    Ok(Expect::AfterValue)
                }
            }
        }
    }

    /// A `}` or `]` inside a container. When it does not match the innermost container, what
    /// follows it decides between closing up to the container it matches (adding the missing
    /// closers), treating it as a typo for the innermost closer, or dropping it as stray.
    fn close(&mut self, b: u8, expect: Expect) -> Result<Expect, Error> {
        let at = self.pos;
        let top = *self
            .stack
            .last()
            .expect("close is only reached inside a container");
        if top.closes_with(b) {
            self.pop();
            self.pos += 1;
            if top == Frame::Brace {
                return Ok(self.after_brace());
            }
            self.emit_byte(b);
            return Ok(self.after_value());
        }
        let expected = if top == Frame::Array { "']'" } else { "'}'" };
        if STRICT {
            return Err(Error::unexpected(at, expected, Some(char::from(b))));
        }
        let matching = if b == b'}' {
            self.objects.last()
        } else {
            self.arrays.last()
        }
        .copied();
        let next = self.what_follows(at + 1);
        let context_fits = |frame: Option<Frame>| match (next, frame) {
            (After::CommaKey, Some(Frame::Object | Frame::Brace)) => true,
            (After::CommaElement, Some(Frame::Array)) => true,
            (After::CommaKey | After::CommaElement, _) => false,
            _ => true,
        };
        let below_top = self.stack.len().checked_sub(2).map(|i| self.stack[i]);
        match matching {
            Some(index)
                if context_fits(index.checked_sub(1).map(|i| self.stack[i]))
                    || !context_fits(below_top) =>
            {
                while self.stack.len() > index + 1 {
                    self.close_missing(at);
                }
                if self.pop() == Some(Frame::Brace) {
                    self.pos += 1;
                    return Ok(self.after_brace());
                }
                self.out.push(b);
            }
            _ if matches!(next, After::End)
                || (matches!(next, After::CommaKey | After::CommaElement)
                    && context_fits(below_top)) =>
            {
                self.repairs.push(Repair {
                    kind: RepairKind::MismatchedCloser,
                    position: at,
                });
                match self.pop() {
                    Some(Frame::Object) => self.out.push(b'}'),
                    Some(Frame::Array) => self.out.push(b']'),
                    Some(Frame::Brace) => {
                        self.pos += 1;
                        return Ok(self.after_brace());
                    }
                    None => {}
                }
            }
            _ => {
                self.repairs.push(Repair {
                    kind: RepairKind::ExtraCloser,
                    position: at,
                });
                self.pos += 1;
                return Ok(expect);
            }
        }
        self.pos += 1;
        Ok(self.after_value())
    }

    /// A redundant brace wrote nothing, so the object goes on as it stood before it: after `{`,
    /// after `,`, or after a member. Only whitespace can have been written since.
    fn after_brace(&self) -> Expect {
        match self.out.iter().rev().find(|&&c| !is_ws(c)) {
            Some(b'{') => Expect::FirstKey,
            Some(b',') => Expect::NextKey,
            _ => Expect::AfterValue,
        }
    }

    fn what_follows(&self, i: usize) -> After {
        let i = scan::skip_ws(self.src, i);
        match self.src.get(i) {
            None | Some(b'}' | b']') => After::End,
            Some(b',') => {
                let j = scan::skip_ws(self.src, i + 1);
                if scan::looks_like_key(self.src, j) {
                    After::CommaKey
                } else {
                    After::CommaElement
                }
            }
            Some(_) => After::Other,
        }
    }

    // ---- strings -------------------------------------------------------------------------

    /// A string opened by `delim` at `self.pos`, written double-quoted.
    fn string(&mut self, delim: &'static Delimiter, is_key: bool) -> Result<(), Error> {
        let src = self.src;
        if std::mem::take(&mut self.continues_string) {
            // Joined onto the previous string: its closing quote was taken back instead.
        } else {
            self.emit_byte(b'"');
        }
        let content_start = self.pos + delim.open.len();
        let mut kept_quote = false;
        // Where the output last stopped being a byte-for-byte copy of the source (an escape
        // written out): a value cut back to an earlier comma must be a copy from there on.
        let mut rewritten_at: Option<usize> = None;
        self.pos += delim.open.len();
        loop {
            let run = self.pos;
            let i = delim.stops.find(src, run);
            self.emit(&src[run..i]);
            self.pos = i;
            let Some(&b) = src.get(i) else {
                self.fault(RepairKind::TruncatedString, i, "a closing '\"'")?;
                self.out.push(b'"');
                return Ok(());
            };
            match b {
                _ if b == delim.close[0] && src[i..].starts_with(delim.close) => {
                    self.pos += delim.close.len();
                    if STRICT || is_key || self.quote_closes(self.pos, delim.close[0]) {
                        self.emit_byte(b'"');
                        return Ok(());
                    }
                    // Only while no quote inside this string was kept as a character: code in a
                    // string (`return {"a": 1, "b": 2}`) writes keys after commas too.
                    if let Some(comma) = self
                        .key_after_unclosed_value(content_start, i, delim)
                        .filter(|&comma| !kept_quote && rewritten_at.is_none_or(|at| at < comma))
                    {
                        // `"city": "New York, "zip": 1`: the value ended at the comma.
                        self.repairs.push(Repair {
                            kind: RepairKind::TruncatedString,
                            position: comma,
                        });
                        self.out.truncate(self.out.len() - (i - comma));
                        self.out.push(b'"');
                        self.pos = comma;
                        return Ok(());
                    }
                    self.repairs.push(Repair {
                        kind: RepairKind::UnescapedQuotes,
                        position: i,
                    });
                    kept_quote = true;
                    self.out.extend_from_slice(delim.inner);
                }
                b'"' => {
                    // Inside a string with other delimiters: escaped for the double-quoted output.
                    self.out.extend_from_slice(b"\\\"");
                    self.pos += 1;
                    rewritten_at = Some(i);
                }
                b'\\' => {
                    let written = self.out.len();
                    self.escape(delim.close == b"'")?;
                    if self.out.len() - written != self.pos - i {
                        rewritten_at = Some(i);
                    }
                }
                0..=0x1F => {
                    rewritten_at = Some(i);
                    self.fault(
                        RepairKind::ControlCharacter,
                        i,
                        "an escaped control character",
                    )?;
                    self.push_control(b);
                    self.pos += 1;
                }
                _ => {
                    // The first byte of another character that shares the closer's lead byte.
                    self.emit_byte(b);
                    self.pos += 1;
                }
            }
        }
    }

    fn push_control(&mut self, b: u8) {
        match b {
            b'\n' => self.out.extend_from_slice(b"\\n"),
            b'\r' => self.out.extend_from_slice(b"\\r"),
            b'\t' => self.out.extend_from_slice(b"\\t"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                self.out.extend_from_slice(&[
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[(b >> 4) as usize],
                    HEX[(b & 15) as usize],
                ]);
            }
        }
    }

    /// Whether a quote inside a value string, with `after` the byte past it, ends the string.
    /// Valid JSON always ends here, so the strict path never needs this; for broken input the
    /// bytes after the quote must look like what may follow a value in this container.
    fn quote_closes(&self, after: usize, close: u8) -> bool {
        let src = self.src;
        let i = scan::skip_ws_and_comments(src, after);
        let Some(&c) = src.get(i) else { return true };
        if c == b'+' && self.concatenation_at(i) || c == b')' && self.open_calls > 0 {
            return true;
        }
        // A word or number after the quote may be junk or a value whose comma is missing; a
        // colon, brace or parenthesis is far more often code or prose inside the string.
        let word_follows = c.is_ascii_alphanumeric() || c == b'_';
        self.quote_looks_closed(i, c)
            || (word_follows
                && self.stack.last().is_some()
                && self.structure_before_next_quote(after, close))
    }

    /// The bytes after a quote (from `i`, holding `c`) look like what may follow a value here.
    fn quote_looks_closed(&self, i: usize, c: u8) -> bool {
        let src = self.src;
        // A closer right after the quote ends the string only if what follows the closer may
        // follow a container; code inside strings (`f"{name}!"}\n`) writes closers too.
        let closer_ends = || {
            matches!(
                src.get(i + 1),
                None | Some(b' ' | b'\t' | b'\n' | b'\r' | b',' | b'}' | b']' | b'`')
            )
        };
        match self.stack.last() {
            Some(Frame::Object | Frame::Brace) => match c {
                b'}' | b']' => closer_ends(),
                b',' => {
                    let j = scan::skip_ws_and_comments(src, i + 1);
                    j >= src.len() || scan::looks_like_key(src, j)
                }
                _ => scan::looks_like_key(src, i),
            },
            Some(Frame::Array) => match c {
                b']' | b'}' => closer_ends(),
                b'"' => true,
                b',' => scan::looks_like_element(src, scan::skip_ws_and_comments(src, i + 1)),
                _ => false,
            },
            None => matches!(c, b',' | b'{' | b'[' | b'`'),
        }
    }

    /// After a quote that did not look like a closer: whether the text up to the next quote
    /// (the next `close` byte)
    /// holds structure that only follows a finished value (a closer that ends a container, or
    /// a comma before the next member or element). Then the quote ended the string after all,
    /// and what follows it is junk or a value with its comma missing (`["a" 2]`,
    /// `"b" comment],`). An inner quote (`"He said "hi, Bob" and left"`) reaches the next
    /// quote first. The scan stops at the next quote, where the string loop goes on, so each
    /// byte is looked at a bounded number of times.
    fn structure_before_next_quote(&self, after: usize, close: u8) -> bool {
        let src = self.src;
        let in_object = matches!(self.stack.last(), Some(Frame::Object | Frame::Brace));
        let mut j = after;
        while j < src.len() {
            match src[j] {
                b if b == close => return false,
                b'}' | b']' => {
                    if matches!(
                        src.get(j + 1),
                        None | Some(b' ' | b'\t' | b'\n' | b'\r' | b',' | b'}' | b']' | b'`')
                    ) {
                        return true;
                    }
                }
                b',' => {
                    let k = scan::skip_ws_and_comments(src, j + 1);
                    let next_item = if in_object {
                        scan::looks_like_key(src, k)
                    } else {
                        src.get(k) == Some(&b'"')
                            || scan::looks_like_element(src, k) && src.get(k) != Some(&b'\'')
                    };
                    if k < src.len() && next_item {
                        return true;
                    }
                }
                _ => {}
            }
            j += 1;
        }
        false
    }

    /// A value string in an object reaches `"key":` (the quote at `quote` opening it) right
    /// after a comma: the value's closing quote went missing before that comma. Returns the
    /// comma's position when the bytes from it to the quote were copied unchanged.
    fn key_after_unclosed_value(
        &self,
        content_start: usize,
        quote: usize,
        delim: &Delimiter,
    ) -> Option<usize> {
        let src = self.src;
        if delim.close != b"\"" || !matches!(self.stack.last(), Some(Frame::Object | Frame::Brace))
        {
            return None;
        }
        let mut c = quote;
        while c > content_start && is_ws(src[c - 1]) {
            c -= 1;
        }
        let comma = c
            .checked_sub(1)
            .filter(|&c| c >= content_start && src[c] == b',')?;
        scan::looks_like_key(src, quote).then_some(comma)
    }

    /// Whether the last value written, whitespace aside, is a string.
    fn wrote_string_last(&self) -> bool {
        self.out.iter().rev().find(|&&c| !is_ws(c)) == Some(&b'"')
    }

    /// `+` at `i` followed by a double-quoted string: JavaScript concatenation.
    fn concatenation_at(&self, i: usize) -> bool {
        matches!(
            self.src.get(scan::skip_ws_and_comments(self.src, i + 1)),
            Some(b'"' | b'\'')
        )
    }

    /// Joins the string after `+` (at `self.pos`) onto the string written last.
    fn concatenate(&mut self) -> Result<(), Error> {
        self.fault(
            RepairKind::StringConcatenation,
            self.pos,
            "',' between values",
        )?;
        while self.out.last().is_some_and(|&c| is_ws(c)) {
            self.out.pop();
        }
        debug_assert_eq!(self.out.last(), Some(&b'"'));
        self.out.pop();
        self.pos = scan::skip_ws_and_comments(self.src, self.pos + 1);
        self.continues_string = true;
        if self.src[self.pos] == b'\'' {
            self.fault(RepairKind::SingleQuotes, self.pos, "a double-quoted string")?;
            return self.string(&scan::SINGLE, false);
        }
        self.string(&scan::DOUBLE, false)
    }

    /// A backslash at `self.pos` inside a string; `in_single` when single quotes delimit it.
    fn escape(&mut self, in_single: bool) -> Result<(), Error> {
        let at = self.pos;
        let src = self.src;
        match src.get(at + 1) {
            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                self.emit(&src[at..at + 2]);
                self.pos += 2;
            }
            Some(b'u') => {
                match hex4(src, at + 2) {
                    Some(0xD800..=0xDBFF) => {
                        let low = (src.get(at + 6) == Some(&b'\\')
                            && src.get(at + 7) == Some(&b'u'))
                        .then(|| hex4(src, at + 8))
                        .flatten();
                        if matches!(low, Some(0xDC00..=0xDFFF)) {
                            self.emit(&src[at..at + 12]);
                            self.pos += 12;
                        } else {
                            self.fault(
                                RepairKind::InvalidEscape,
                                at,
                                "a low surrogate after a high surrogate",
                            )?;
                            self.out.extend_from_slice(b"\\ufffd");
                            self.pos += 6;
                        }
                    }
                    Some(0xDC00..=0xDFFF) => {
                        self.fault(
                            RepairKind::InvalidEscape,
                            at,
                            "a high surrogate before a low surrogate",
                        )?;
                        self.out.extend_from_slice(b"\\ufffd");
                        self.pos += 6;
                    }
                    Some(_) => {
                        self.emit(&src[at..at + 6]);
                        self.pos += 6;
                    }
                    None if src.len() - at < 6
                        && src[at + 2..].iter().all(u8::is_ascii_hexdigit) =>
                    {
                        // Cut off mid-escape: drop it; the string is then closed as truncated.
                        self.fault(
                            RepairKind::TruncatedString,
                            at,
                            "four hex digits after '\\u'",
                        )?;
                        self.pos = src.len();
                    }
                    None => {
                        self.fault(RepairKind::InvalidEscape, at, "four hex digits after '\\u'")?;
                        self.out.extend_from_slice(b"\\\\");
                        self.pos += 1;
                    }
                }
            }
            Some(b'\'') => {
                if !in_single {
                    self.fault(RepairKind::InvalidEscape, at, "a valid escape sequence")?;
                }
                self.out.push(b'\'');
                self.pos += 2;
            }
            None => {
                // A lone backslash at the very end: drop it; the string is closed as truncated.
                self.pos += 1;
            }
            Some(_) => {
                // `C:\Users`: keep the backslash as a character rather than lose it.
                self.fault(RepairKind::InvalidEscape, at, "a valid escape sequence")?;
                self.out.extend_from_slice(b"\\\\");
                self.pos += 1;
            }
        }
        Ok(())
    }

    /// Writes `raw` as the contents of a JSON string, escaping what JSON requires.
    fn push_escaped(&mut self, raw: &[u8]) {
        for &b in raw {
            match b {
                b'"' => self.out.extend_from_slice(b"\\\""),
                b'\\' => self.out.extend_from_slice(b"\\\\"),
                0..=0x1F => self.push_control(b),
                _ => self.out.push(b),
            }
        }
    }

    /// A bare key, up to the colon or a structural byte; inner spaces are kept, trailing ones
    /// are left as whitespace.
    fn unquoted_key(&mut self) {
        let src = self.src;
        let start = self.pos;
        let mut end = start;
        while end < src.len()
            && !matches!(
                src[end],
                b':' | b',' | b'{' | b'}' | b'[' | b']' | b'"' | b'\'' | b'\n' | b'\r'
            )
        {
            end += 1;
        }
        while end > start + 1 && is_ws(src[end - 1]) {
            end -= 1;
        }
        self.out.push(b'"');
        self.push_escaped(&src[start..end]);
        self.out.push(b'"');
        self.pos = end;
    }

    // ---- scalars -----------------------------------------------------------------------------

    /// A number at `self.pos`. Strict JSON numbers are copied; others are mended or, when their
    /// meaning is not a number (`007`, `1.2.3`, `10MB`), kept as strings.
    fn number(&mut self) -> Result<(), Error> {
        let src = self.src;
        let start = self.pos;
        let end = strict_number_end(src, start);
        let followed_by_word = |i: usize| {
            src.get(i)
                .is_some_and(|&c| is_ident(c) || c == b'.' || c == b'+')
        };
        if let Some(end) = end.filter(|&e| !followed_by_word(e)) {
            self.emit(&src[start..end]);
            self.pos = end;
            return Ok(());
        }
        if STRICT {
            return Err(Error::unexpected(
                start,
                "a JSON number",
                scan::char_at(src, start),
            ));
        }
        if src[start..].starts_with(b"-Infinity") && literal_at(src, start + 1).is_some() {
            self.repairs.push(Repair {
                kind: RepairKind::JsLiteral,
                position: start,
            });
            self.out.extend_from_slice(b"null");
            self.pos = start + 9;
            return Ok(());
        }
        let mut run_end = start;
        // `1_000` (a digit separator in Python and JavaScript) belongs to the number.
        let separator = |i: usize| {
            src[i] == b'_'
                && src[i - 1].is_ascii_digit()
                && src.get(i + 1).is_some_and(u8::is_ascii_digit)
        };
        while run_end < src.len()
            && (matches!(src[run_end], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                || run_end > start && separator(run_end))
        {
            run_end += 1;
        }
        if src.get(run_end).is_some_and(|&c| is_ident(c)) {
            return self.word(false);
        }
        self.repairs.push(Repair {
            kind: RepairKind::InvalidNumber,
            position: start,
        });
        let run: Vec<u8> = src[start..run_end]
            .iter()
            .copied()
            .filter(|&c| c != b'_')
            .collect();
        match mend_number(&run) {
            Some(mended) => self.out.extend_from_slice(&mended),
            None => {
                self.out.push(b'"');
                self.push_escaped(&src[start..run_end]);
                self.out.push(b'"');
            }
        }
        self.pos = run_end;
        Ok(())
    }

    /// A bare word where a value belongs: a JSON, Python or JavaScript literal, a literal cut
    /// off by the end of the input, or an unquoted string.
    fn word(&mut self, at_root: bool) -> Result<(), Error> {
        let src = self.src;
        let start = self.pos;
        let literal = literal_at(src, start).filter(|_| {
            let mut i = start;
            while i < src.len() && is_ident(src[i]) {
                i += 1;
            }
            while i < src.len() && matches!(src[i], b' ' | b'\t') {
                i += 1;
            }
            src.get(i).is_none_or(|&c| {
                matches!(
                    c,
                    b',' | b'}' | b']' | b')' | b'\n' | b'\r' | b'/' | b'"' | b'\'' | b'#'
                )
            })
        });
        if let Some(literal) = literal {
            let (text, kind): (&[u8], _) = match literal {
                Literal::True => (b"true", None),
                Literal::False => (b"false", None),
                Literal::Null => (b"null", None),
                Literal::PyTrue => (b"true", Some(RepairKind::PythonLiteral)),
                Literal::PyFalse => (b"false", Some(RepairKind::PythonLiteral)),
                Literal::PyNone => (b"null", Some(RepairKind::PythonLiteral)),
                Literal::JsNull => (b"null", Some(RepairKind::JsLiteral)),
            };
            let len = src[start..].iter().take_while(|&&c| is_ident(c)).count();
            if let Some(kind) = kind {
                self.fault(kind, start, "true, false or null")?;
            }
            self.emit(text);
            self.pos = start + len;
            return Ok(());
        }
        if STRICT {
            return Err(Error::unexpected(
                start,
                "a JSON value",
                scan::char_at(src, start),
            ));
        }
        let rest = &src[start..];
        if let Some(full) = [&b"true"[..], b"false", b"null"]
            .into_iter()
            .find(|w| w.len() > rest.len() && w.starts_with(rest))
        {
            self.repairs.push(Repair {
                kind: RepairKind::TruncatedLiteral,
                position: start,
            });
            self.out.extend_from_slice(full);
            self.pos = src.len();
            return Ok(());
        }
        if at_root {
            return Err(Error::unexpected(
                start,
                "a JSON value (an object, array, string, number, true, false or null)",
                scan::char_at(src, start),
            ));
        }
        let mut end = start;
        let in_object = matches!(self.stack.last(), Some(Frame::Object | Frame::Brace));
        while end < src.len() && !matches!(src[end], b',' | b'}' | b']' | b'\n' | b'\r') {
            if in_object && src[end] == b'"' && end > start && scan::looks_like_key(src, end) {
                break; // `{"a": value "b": 1}`: the next key begins; its comma is missing
            }
            end += 1;
        }
        self.pos = end;
        while end > start + 1 && is_ws(src[end - 1]) {
            end -= 1;
        }
        if end > start + 1 && src[end - 1] == b'"' {
            // `"a": hello",`: the opening quote went missing.
            end -= 1;
        }
        self.repairs.push(Repair {
            kind: RepairKind::UnquotedString,
            position: start,
        });
        self.out.push(b'"');
        self.push_escaped(&src[start..end]);
        self.out.push(b'"');
        self.out.extend_from_slice(
            &src[end..self.pos]
                .iter()
                .copied()
                .filter(|&c| is_ws(c))
                .collect::<Vec<_>>(),
        );
        Ok(())
    }
}

/// The end of the strict JSON number starting at `i`, if one starts there.
fn strict_number_end(src: &[u8], mut i: usize) -> Option<usize> {
    let digits = |mut i: usize| {
        let start = i;
        while i < src.len() && src[i].is_ascii_digit() {
            i += 1;
        }
        (i > start).then_some(i)
    };
    if src.get(i) == Some(&b'-') {
        i += 1;
    }
    i = match src.get(i)? {
        b'0' => i + 1,
        b'1'..=b'9' => digits(i)?,
        _ => return None,
    };
    if src.get(i) == Some(&b'.') {
        i = digits(i + 1)?;
    }
    if matches!(src.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(src.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        i = digits(i)?;
    }
    if src.get(i).is_some_and(|c| c.is_ascii_digit()) {
        return None; // `01`
    }
    Some(i)
}

/// Mends a run of number characters that is not a strict number: `+1` -> `1`, `.5` -> `0.5`,
/// `1.` -> `1.0`, `1e` -> `1`, `-` -> `-0`. `None` when the run means something else
/// (leading zeros of an identifier, two dots, a date), which is then kept as a string.
fn mend_number(run: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(run.len() + 2);
    let mut i = 0;
    if run.first() == Some(&b'+') {
        i += 1;
    } else if run.first() == Some(&b'-') {
        out.push(b'-');
        i += 1;
    }
    let int_start = i;
    while i < run.len() && run[i].is_ascii_digit() {
        i += 1;
    }
    let int = &run[int_start..i];
    if int.len() > 1 && int[0] == b'0' {
        return None;
    }
    out.extend_from_slice(if int.is_empty() { b"0" } else { int });
    if run.get(i) == Some(&b'.') {
        i += 1;
        let frac_start = i;
        while i < run.len() && run[i].is_ascii_digit() {
            i += 1;
        }
        out.push(b'.');
        out.extend_from_slice(if i == frac_start {
            b"0"
        } else {
            &run[frac_start..i]
        });
    }
    if matches!(run.get(i), Some(b'e' | b'E')) {
        let exp_start = i;
        i += 1;
        if matches!(run.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let digits_start = i;
        while i < run.len() && run[i].is_ascii_digit() {
            i += 1;
        }
        if i > digits_start {
            out.extend_from_slice(&run[exp_start..i]);
        }
    }
    (i == run.len()).then_some(out)
}

fn hex4(src: &[u8], i: usize) -> Option<u32> {
    let digits = src.get(i..i + 4)?;
    digits
        .iter()
        .try_fold(0u32, |acc, &d| Some(acc * 16 + (d as char).to_digit(16)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Repairs `input` with default limits; returns the JSON and the kinds logged.
    fn fix(input: &str) -> (String, Vec<&'static str>) {
        let repaired = repair(input.as_bytes(), &Limits::default())
            .unwrap_or_else(|e| panic!("{input:?}: {e}"));
        serde_json::from_str::<serde_json::Value>(&repaired.json)
            .unwrap_or_else(|e| panic!("{input:?} -> {:?} is not strict JSON: {e}", repaired.json));
        (
            repaired.json.into_owned(),
            repaired.repairs.iter().map(|r| r.kind.as_str()).collect(),
        )
    }

    fn fixed(input: &str) -> String {
        fix(input).0
    }

    #[test]
    fn every_kind_has_a_distinct_name_that_maps_back() {
        for kind in RepairKind::ALL {
            assert_eq!(RepairKind::from_name(kind.as_str()), Some(kind));
        }
        assert_eq!(RepairKind::from_name("no_such_kind"), None);
    }

    #[test]
    fn valid_json_is_borrowed_unchanged_with_an_empty_log() {
        let input =
            r#"{"path": "test.txt", "content": "hello world", "n": [1, -2.5e3, true, null]}"#;
        let repaired = repair(input.as_bytes(), &Limits::default()).unwrap();
        assert!(matches!(repaired.json, Cow::Borrowed(_)));
        assert_eq!(repaired.json, input);
        assert!(repaired.repairs.is_empty());
    }

    #[test]
    fn trailing_comma_in_object_and_nested_array_is_removed() {
        assert_eq!(
            fix(r#"{"path": "test.txt",}"#),
            (r#"{"path": "test.txt"}"#.into(), vec!["trailing_comma"])
        );
        assert_eq!(
            fix(r#"{"items": [1, 2, 3,]}"#),
            (r#"{"items": [1, 2, 3]}"#.into(), vec!["trailing_comma"])
        );
        assert_eq!(fixed("[[1,],\n]"), "[[1]\n]");
    }

    #[test]
    fn missing_closers_are_added_innermost_first() {
        assert_eq!(
            fix(r#"{"path": "test.txt""#),
            (
                r#"{"path": "test.txt"}"#.into(),
                vec!["missing_closing_brace"]
            )
        );
        assert_eq!(
            fixed(r#"{"outer": {"inner": {"deep": "value"}"#),
            r#"{"outer": {"inner": {"deep": "value"}}}"#
        );
        assert_eq!(fixed(r#"{"a": [1, {"b": [2"#), r#"{"a": [1, {"b": [2]}]}"#);
    }

    #[test]
    fn array_closed_by_a_brace_gets_its_bracket() {
        assert_eq!(
            fix(r#"{"items": [1, 2, 3}"#),
            (
                r#"{"items": [1, 2, 3]}"#.into(),
                vec!["missing_closing_bracket"]
            )
        );
    }

    #[test]
    fn wrong_closer_followed_by_more_members_is_replaced() {
        let (json, kinds) = fix(r#"{"a": [1, 2}, "b": 3}"#);
        assert_eq!(json, r#"{"a": [1, 2], "b": 3}"#);
        assert_eq!(kinds, vec!["mismatched_closer"]);
        assert_eq!(fixed(r#"[{"a": 1], {"b": 2}]"#), r#"[{"a": 1}, {"b": 2}]"#);
        assert_eq!(fixed("[1, 2}"), "[1, 2]");
    }

    #[test]
    fn stray_closers_are_dropped() {
        assert_eq!(
            fix(r#"{"a": [1]], "b": 2}"#),
            (r#"{"a": [1], "b": 2}"#.into(), vec!["extra_closer"])
        );
        assert_eq!(
            fix(r#"{"a": 1}}"#),
            (r#"{"a": 1}"#.into(), vec!["extra_closer"])
        );
        assert_eq!(fixed("[}1]"), "[1]");
        assert_eq!(fixed("[\"a\",}"), "[\"a\"]");
    }

    #[test]
    fn doubled_template_braces_are_collapsed() {
        assert_eq!(
            fix(r#"{{"name": "x"}}"#),
            (r#"{"name": "x"}"#.into(), vec!["redundant_brace"])
        );
        assert_eq!(fixed(r#"{"a": 1, {"b": 2}}"#), r#"{"a": 1, "b": 2}"#);
        assert_eq!(fixed(r#"{{}, "a": 1}"#), r#"{ "a": 1}"#);
    }

    #[test]
    fn single_quoted_strings_and_keys_are_double_quoted() {
        assert_eq!(fixed(r#"{'path': 'test.txt'}"#), r#"{"path": "test.txt"}"#);
        assert_eq!(
            fixed(r#"{'say': 'a "quoted" word'}"#),
            r#"{"say": "a \"quoted\" word"}"#
        );
        assert_eq!(
            fixed(r#"{'text': 'it's fine'}"#),
            r#"{"text": "it's fine"}"#
        );
        assert_eq!(fixed(r#"['don\'t']"#), r#"["don't"]"#);
    }

    #[test]
    fn typographic_quotes_delimit_strings() {
        assert_eq!(
            fix("{\u{201c}path\u{201d}: \u{201c}a.txt\u{201d}, \u{2018}n\u{2019}: \u{2018}it\u{2019}s\u{2019}}"),
            (r#"{"path": "a.txt", "n": "it’s"}"#.into(), vec!["special_quotes", "special_quotes", "special_quotes", "special_quotes", "unescaped_quotes"])
        );
        // Inside an ordinary string they are ordinary characters.
        assert!(validate("[\"\u{201c}x\u{201d}\"]".as_bytes(), &Limits::default()).is_ok());
    }

    #[test]
    fn json_escaped_twice_is_unescaped_then_repaired() {
        let (json, kinds) = fix(r#"{\"path\": \"a.txt\", \"content\": \"line\\nnext \\\"q\\\"\"}"#);
        assert_eq!(
            json,
            "{\"path\": \"a.txt\", \"content\": \"line\\nnext \\\"q\\\"\"}"
        );
        assert_eq!(kinds[0], "escaped_json");
    }

    #[test]
    fn unquoted_keys_are_quoted() {
        assert_eq!(
            fix(r#"{path: "test.txt", content: "hello"}"#),
            (
                r#"{"path": "test.txt", "content": "hello"}"#.into(),
                vec!["unquoted_key", "unquoted_key"]
            )
        );
        assert_eq!(
            fixed(r#"{max_tokens: 5, $ref: "x"}"#),
            r#"{"max_tokens": 5, "$ref": "x"}"#
        );
    }

    #[test]
    fn unquoted_values_become_strings() {
        assert_eq!(
            fix(r#"{"name": John Smith}"#),
            (r#"{"name": "John Smith"}"#.into(), vec!["unquoted_string"])
        );
        assert_eq!(
            fixed(r#"{"size": 10MB, "url": http://x.io/a}"#),
            r#"{"size": "10MB", "url": "http://x.io/a"}"#
        );
        assert_eq!(fixed("[a, b]"), r#"["a", "b"]"#);
    }

    #[test]
    fn truncated_string_is_closed_then_its_containers() {
        let (json, kinds) = fix(r#"{"content": "Hello, this is a test"#);
        assert_eq!(json, r#"{"content": "Hello, this is a test"}"#);
        assert_eq!(kinds, vec!["truncated_string", "missing_closing_brace"]);
        assert_eq!(fixed(r#"["a\"#), r#"["a"]"#);
        assert_eq!(fixed(r#"["a\u00"#), r#"["a"]"#);
    }

    #[test]
    fn truncated_key_or_member_gets_a_null_value() {
        assert_eq!(fixed(r#"{"a": 1, "ke"#), r#"{"a": 1, "ke":null}"#);
        assert_eq!(fixed(r#"{"a": 1, "b":"#), r#"{"a": 1, "b":null}"#);
        assert_eq!(fixed(r#"{"a": 1, "b""#), r#"{"a": 1, "b":null}"#);
        assert_eq!(fixed(r#"{"a": 1,"#), r#"{"a": 1}"#);
    }

    #[test]
    fn truncated_literals_are_completed() {
        assert_eq!(
            fix("[tr"),
            (
                "[true]".into(),
                vec!["truncated_literal", "missing_closing_bracket"]
            )
        );
        assert_eq!(fixed(r#"{"a": nu"#), r#"{"a": null}"#);
        assert_eq!(fixed(r#"{"a": f"#), r#"{"a": false}"#);
    }

    #[test]
    fn inner_quotes_are_escaped() {
        let (json, kinds) = fix(r#"{"message": "He said "hello" to me"}"#);
        assert_eq!(json, r#"{"message": "He said \"hello\" to me"}"#);
        assert_eq!(kinds, vec!["unescaped_quotes", "unescaped_quotes"]);
        assert_eq!(
            fixed(r#"{"a": "say "hi", then go", "b": 1}"#),
            r#"{"a": "say \"hi\", then go", "b": 1}"#
        );
        assert_eq!(fixed(r#"["a "b" c", "d"]"#), r#"["a \"b\" c", "d"]"#);
        assert_eq!(fixed(r#"{"q": "quote: "x""}"#), r#"{"q": "quote: \"x\""}"#);
        let code = r#"{"content": "return {"body": f"Hi {name}!"}\nnext", "mode": "w"}"#;
        assert_eq!(
            fixed(code),
            r#"{"content": "return {\"body\": f\"Hi {name}!\"}\nnext", "mode": "w"}"#
        );
    }

    #[test]
    fn control_characters_in_strings_are_escaped() {
        assert_eq!(
            fix("{\"a\": \"line1\nline2\tx\u{1}\"}"),
            (
                "{\"a\": \"line1\\nline2\\tx\\u0001\"}".into(),
                vec!["control_character"; 3]
            )
        );
    }

    #[test]
    fn invalid_escapes_keep_their_characters() {
        assert_eq!(
            fixed(r#"{"p": "C:\Users\me"}"#),
            r#"{"p": "C:\\Users\\me"}"#
        );
        assert_eq!(fixed(r#"["\x41"]"#), r#"["\\x41"]"#);
        assert_eq!(fixed(r#"["\uZZZZ"]"#), r#"["\\uZZZZ"]"#);
    }

    #[test]
    fn lone_surrogate_escapes_become_replacement_characters() {
        assert_eq!(fixed(r#"["\ud800"]"#), r#"["\ufffd"]"#);
        assert_eq!(fixed(r#"["\udc00x"]"#), r#"["\ufffdx"]"#);
        assert_eq!(fixed(r#"["\ud83d\ude00"]"#), r#"["\ud83d\ude00"]"#);
        assert!(validate(br#"["\ud83d\ude00"]"#, &Limits::default()).is_ok());
        assert!(validate(br#"["\ud800"]"#, &Limits::default()).is_err());
    }

    #[test]
    fn comments_are_removed() {
        assert_eq!(fix("{\"a\": 1, // one\n\"b\": 2}").1, vec!["comment"]);
        assert_eq!(
            fixed("{\"a\": 1, // one\n\"b\": 2}"),
            "{\"a\": 1, \n\"b\": 2}"
        );
        assert_eq!(fixed("[1, /* two */ 2] # done"), "[1,  2] ");
        assert_eq!(fixed("[1 /* unterminated"), "[1 ]");
    }

    #[test]
    fn python_and_js_literals_are_mapped() {
        assert_eq!(
            fix("[True, False, None]"),
            ("[true, false, null]".into(), vec!["python_literal"; 3])
        );
        assert_eq!(
            fix("[undefined, NaN, Infinity, -Infinity]"),
            ("[null, null, null, null]".into(), vec!["js_literal"; 4])
        );
        assert_eq!(fixed(r#"{"a": Truest}"#), r#"{"a": "Truest"}"#);
    }

    #[test]
    fn numbers_are_mended_or_kept_as_strings() {
        assert_eq!(
            fixed("[+1, .5, -.5, 1., 1e, 2E+]"),
            "[1, 0.5, -0.5, 1.0, 1, 2]"
        );
        assert_eq!(
            fixed("[007, 1.2.3, 2024-01-01]"),
            r#"["007", "1.2.3", "2024-01-01"]"#
        );
        assert_eq!(fix("[1, 2, ...]").0, "[1, 2 ]");
    }

    #[test]
    fn missing_commas_and_colons_are_inserted() {
        assert_eq!(
            fix(r#"{"a": 1 "b": 2}"#),
            (r#"{"a": 1 ,"b": 2}"#.into(), vec!["missing_comma"])
        );
        assert_eq!(fixed("[1 2 3]"), "[1 ,2 ,3]");
        assert_eq!(
            fixed("{\"a\": \"x\"\n\"b\": 2}"),
            "{\"a\": \"x\"\n,\"b\": 2}"
        );
        assert_eq!(
            fix(r#"{"a" 1}"#),
            (r#"{"a" :1}"#.into(), vec!["missing_colon"])
        );
        assert_eq!(fixed(r#"{"a" = 1}"#), r#"{"a" : 1}"#);
    }

    #[test]
    fn keys_without_values_get_null() {
        assert_eq!(
            fix(r#"{"a"}"#),
            (r#"{"a":null}"#.into(), vec!["missing_value"])
        );
        assert_eq!(fixed(r#"{"a": , "b": 1}"#), r#"{"a": null, "b": 1}"#);
        assert_eq!(fixed("[1,,2]"), "[1,2]");
    }

    #[test]
    fn fences_and_prose_around_the_value_are_removed() {
        assert_eq!(
            fix("```json\n{\"a\": 1}\n```"),
            (
                "{\"a\": 1}".into(),
                vec!["markdown_fence", "markdown_fence"]
            )
        );
        let (json, kinds) = fix("Sure! Here you go: {\"a\": 1} Hope this helps.");
        assert_eq!(json, "{\"a\": 1}");
        assert_eq!(kinds, vec!["surrounding_text", "surrounding_text"]);
    }

    /// Found by the repair fuzz target: wrapping several root values in an array added a level
    /// past the depth limit, so the output was refused when repaired again.
    #[test]
    fn wrapping_root_values_keeps_the_output_within_the_depth_limit() {
        let limits = Limits {
            max_depth: 3,
            ..Limits::default()
        };
        let code = |text: &str| repair(text.as_bytes(), &limits).map(|r| r.json.into_owned());
        assert_eq!(code("1 [[1]]").unwrap(), "[1, [[1]]]");
        assert_eq!(
            code("[[[1]]] [2]").unwrap_err().kind,
            ErrorKind::TooDeep { limit: 3 }
        );
        assert_eq!(
            code("1 [[[1]]]").unwrap_err().kind,
            ErrorKind::TooDeep { limit: 3 }
        );
        for text in ["NaN}[[[", "1 [[", "[[1]] {\"a\": [2"] {
            if let Ok(json) = code(text) {
                assert!(
                    repair(json.as_bytes(), &limits).is_ok(),
                    "{text:?} -> {json:?}"
                );
            }
        }
    }

    /// Found by the repair fuzz target: a value cut back to an earlier comma was cut by its
    /// length in the source, but escaped control characters had made it longer in the output:
    /// the cut landed inside an escape and the output was not JSON.
    #[test]
    fn a_value_cut_back_to_a_comma_after_escapes_stays_json() {
        for input in [
            "{a\",\r\r\"\":",
            "{\"a\": \"x,\t\"b\": 1}",
            "{\"a\": 'x,\"\"b': 1}",
        ] {
            let repaired = repair(input.as_bytes(), &Limits::default()).unwrap();
            assert!(
                serde_json::from_str::<serde_json::Value>(&repaired.json).is_ok(),
                "{input:?} -> {:?}",
                repaired.json
            );
        }
    }

    #[test]
    fn concatenated_values_are_wrapped_in_an_array() {
        assert_eq!(
            fix("{\"a\": 1}\n{\"b\": 2}"),
            (
                "[{\"a\": 1},\n{\"b\": 2}]".into(),
                vec!["concatenated_values"]
            )
        );
        assert_eq!(fixed("[1], [2]"), "[[1],[2]]");
    }

    #[test]
    fn bom_and_invalid_utf8_are_mended() {
        assert_eq!(
            fix("\u{feff}{\"a\": 1}"),
            ("{\"a\": 1}".into(), vec!["byte_order_mark"])
        );
        let repaired = repair(b"{\"a\": \"\xff\"}", &Limits::default()).unwrap();
        assert_eq!(repaired.json, "{\"a\": \"\u{fffd}\"}");
        assert_eq!(
            repaired.repairs,
            vec![Repair {
                kind: RepairKind::InvalidUtf8,
                position: 7
            }]
        );
    }

    /// Found by the repair fuzz target: after invalid bytes were replaced (3 bytes each), error
    /// and repair positions pointed into the replaced text, past the input's end.
    #[test]
    fn positions_refer_to_the_input_after_invalid_utf8_or_unescaping() {
        let positions = |input: &[u8]| -> Vec<(RepairKind, usize)> {
            let repaired = repair(input, &Limits::default()).unwrap();
            repaired
                .repairs
                .iter()
                .map(|r| (r.kind, r.position))
                .collect()
        };
        let kinds = positions(b"{\"a\xff\xfe\": 'x', \"b\": }}");
        assert_eq!(kinds[1], (RepairKind::SingleQuotes, 8));
        assert_eq!(
            kinds.iter().map(|k| k.1).collect::<Vec<_>>(),
            [3, 8, 18, 19]
        );
        let err = repair(b"\xff\xff\xff\xff :", &Limits::default()).unwrap_err();
        assert!(err.position <= 6, "position {}", err.position);
        // One level of escaping taken off: `{\"a\": 'x'}` -> `{"a": 'x'}`.
        let kinds = positions(br#"{\"a\": 'x'}"#);
        assert!(kinds.contains(&(RepairKind::SingleQuotes, 8)), "{kinds:?}");
    }

    #[test]
    fn several_faults_at_once_are_all_mended() {
        let (json, kinds) = fix("{path: 'test.txt',}");
        assert_eq!(json, r#"{"path": "test.txt"}"#);
        assert_eq!(
            kinds,
            vec!["unquoted_key", "single_quotes", "trailing_comma"]
        );
    }

    #[test]
    fn text_without_json_is_refused_with_a_position() {
        for input in ["", "   ", "hello there"] {
            let err = repair(input.as_bytes(), &Limits::default()).unwrap_err();
            assert_eq!(err.code(), ErrorCode::Unparseable, "{input:?}");
            assert!(err.to_string().contains("expected a JSON value"), "{err}");
        }
    }

    #[test]
    fn limits_are_enforced_with_their_codes() {
        let limits = Limits {
            max_size: 10,
            ..Limits::default()
        };
        let err = repair(br#"{"a": "0123456789"}"#, &limits).unwrap_err();
        assert_eq!(
            (err.code().as_str(), err.kind.clone()),
            (
                "TLP-007",
                ErrorKind::TooLarge {
                    size: 19,
                    limit: 10
                }
            )
        );
        let deep = "[".repeat(65);
        let err = repair(deep.as_bytes(), &Limits::default()).unwrap_err();
        assert_eq!((err.code().as_str(), err.position), ("TLP-008", 64));
        assert!(repair("[".repeat(64).as_bytes(), &Limits::default()).is_ok());
    }

    #[test]
    fn seed_ten_thousand_braces_fail_on_depth_or_finish_fast_when_allowed() {
        // The seed's pathological case: 10,000 '{' then 9,999 '}' with a 10 ms deadline. With the
        // default depth limit it is refused at once (TLP-008, depth); with the limit lifted the
        // engine is linear and finishes inside the deadline instead of timing out.
        let input = format!("{}{}", "{".repeat(10_000), "}".repeat(9_999));
        let strict = Limits {
            timeout_ms: 10,
            ..Limits::default()
        };
        let err = repair(input.as_bytes(), &strict).unwrap_err();
        assert_eq!(err.kind, ErrorKind::TooDeep { limit: 64 });
        let lifted = Limits {
            timeout_ms: 10,
            max_depth: 20_000,
            ..Limits::default()
        };
        let repaired = repair(input.as_bytes(), &lifted).unwrap();
        assert_eq!(repaired.json, "{}");
    }

    #[test]
    fn a_passed_deadline_is_a_timeout_error() {
        let input = "[1,".repeat(20_000);
        let limits = Limits {
            timeout_ms: 1,
            max_depth: 1 << 20,
            ..Limits::default()
        };
        let deadline = Deadline::expired(1);
        let err = Engine::<false>::new(input.as_bytes(), &limits, deadline)
            .run()
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::TooDeepOrTimeout);
        assert!(err.to_string().contains("timeout"));
    }

    #[test]
    fn strict_errors_say_what_was_expected_and_where() {
        let err = validate(br#"{"a": 1,}"#, &Limits::default()).unwrap_err();
        assert_eq!(err.position, 7);
        assert_eq!(
            err.to_string(),
            "expected a value after ',' at byte 7, found ','"
        );
        let err = validate(br#"{"a": 1"#, &Limits::default()).unwrap_err();
        assert!(err.is_incomplete());
    }
}

#[cfg(test)]
mod closing_quote_tests {
    use super::*;

    fn fixed(input: &str) -> String {
        let limits = Limits::default();
        repair(input.as_bytes(), &limits).unwrap().json.into_owned()
    }

    #[test]
    fn a_quote_before_structure_closes_even_when_junk_follows_it() {
        assert_eq!(fixed(r#"["a" 2]"#), r#"["a" ,2]"#);
        assert_eq!(
            fixed(r#"{"k": ["x","y" comment], "n": 1}"#),
            r#"{"k": ["x","y" ,"comment"], "n": 1}"#
        );
        assert_eq!(
            fixed(
                r#"{"a": "b" // note
}"#
            ),
            "{\"a\": \"b\" \n}"
        );
        assert_eq!(
            fixed(r#"{"a":"foo",/*x*/"b":"bar"}"#),
            r#"{"a":"foo","b":"bar"}"#
        );
    }

    #[test]
    fn inner_quotes_with_commas_or_code_stay_inside_the_string() {
        assert_eq!(
            fixed(r#"{"a": "He said "Hi, Bob" and left", "b": 1}"#),
            r#"{"a": "He said \"Hi, Bob\" and left", "b": 1}"#
        );
        assert_eq!(
            fixed(r#"{"c": "print(f"{name}")", "d": 2}"#),
            r#"{"c": "print(f\"{name}\")", "d": 2}"#
        );
    }

    #[test]
    fn string_concatenation_is_joined() {
        assert_eq!(fixed(r#"{"s": "ab" + "cd"}"#), r#"{"s": "abcd"}"#);
        assert_eq!(
            fixed(
                r#""ab" +
 "cd""#
            ),
            r#""abcd""#
        );
    }

    #[test]
    fn a_key_after_a_comma_ends_a_value_left_open() {
        assert_eq!(
            fixed(r#"{"city": "New York, "zip": "10001"}"#),
            r#"{"city": "New York", "zip": "10001"}"#
        );
        assert_eq!(
            fixed(r#"{"key": value "key2" : "v"}"#),
            r#"{"key": "value" ,"key2" : "v"}"#
        );
    }

    #[test]
    fn calls_ellipses_and_stringified_strings() {
        assert_eq!(
            fixed(r#"{"_id": ObjectId("123"), "n": NumberLong(2)}"#),
            r#"{"_id": "123", "n": 2}"#
        );
        assert_eq!(fixed("callback_1(true);"), "true");
        assert_eq!(fixed(r#"{"a": 2, ..., "z": 26}"#), r#"{"a": 2,  "z": 26}"#);
        assert_eq!(fixed(r#"\"hello\""#), r#""hello""#);
        assert_eq!(fixed("{'g': 'he' + /* c */ 'llo'}"), r#"{"g": "hello"}"#);
        assert_eq!(fixed("{},\n/* 2 */\n{}"), "[{},{}]");
    }

    #[test]
    fn top_level_comma_lists_become_arrays_and_digit_separators_are_dropped() {
        assert_eq!(fixed("1,2,3"), "[1,2,3]");
        assert_eq!(fixed(r#"{"n": 82_461_110}"#), r#"{"n": 82461110}"#);
        assert_eq!(fixed(r#"{"a": 1}, "b": 2}"#), r#"{"a": 1}"#);
    }
}
