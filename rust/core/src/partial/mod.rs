//! An incremental JSON reader for streamed arguments: text arrives in pieces split anywhere
//! (inside keys, escapes, numbers), and each piece yields the tokens it completed. The state
//! carries over between pieces, so a whole stream is read in time linear in its size; string
//! bodies are copied in runs found with memchr, not byte by byte.
//!
//! It reads strict JSON only. On the first byte that strict JSON does not allow it stops and
//! says so (`is_broken`); the caller then falls back to the repair pass over the whole text.

use std::borrow::Cow;

use crate::limits::Limits;

mod view;
pub use view::{Builder, View, Views};

/// What a look at arguments that stopped being strict JSON (or hold a value the host cannot
/// build) shows: the whole value they began with when more text follows it (`{"a": 1}{"b": 2}`
/// shows `{"a": 1}`), else the repair pass's reading of all the text so far (a cut-off string
/// closed, single quotes made double); None when there is no text yet or nothing can be made of
/// it.
pub fn mended_look<'t>(text: &'t str, limits: &Limits) -> Option<Cow<'t, str>> {
    if text.trim().is_empty() {
        return None;
    }
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<serde::de::IgnoredAny>();
    if let Some(Ok(_)) = values.next() {
        return Some(Cow::Borrowed(&text[..values.byte_offset()]));
    }
    crate::repair(text.as_bytes(), limits).ok().map(|r| r.json)
}

/// What a piece of text completed, in order. Text is borrowed from the piece where it lies
/// whole in it, so a steady stream allocates nothing per token.
#[derive(Clone, Debug, PartialEq)]
pub enum Token<'a> {
    ObjectStart,
    ArrayStart,
    /// The innermost object or array closed.
    End,
    Key(Cow<'a, str>),
    /// A string value opened; its text follows in `StringText` tokens.
    StringStart,
    StringText(Cow<'a, str>),
    StringEnd,
    /// A number, as written (complete: a delimiter followed it).
    Number(Cow<'a, str>),
    Bool(bool),
    Null,
}

impl Token<'_> {
    /// The token with its text copied out of the piece.
    pub fn into_owned(self) -> Token<'static> {
        match self {
            Token::ObjectStart => Token::ObjectStart,
            Token::ArrayStart => Token::ArrayStart,
            Token::End => Token::End,
            Token::Key(k) => Token::Key(Cow::Owned(k.into_owned())),
            Token::StringStart => Token::StringStart,
            Token::StringText(t) => Token::StringText(Cow::Owned(t.into_owned())),
            Token::StringEnd => Token::StringEnd,
            Token::Number(n) => Token::Number(Cow::Owned(n.into_owned())),
            Token::Bool(b) => Token::Bool(b),
            Token::Null => Token::Null,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    Value,
    /// After `{`: a key or `}`.
    KeyOrEnd,
    /// After `,` in an object.
    Key,
    Colon,
    /// After `[`: a value or `]`.
    ValueOrEnd,
    CommaOrEnd,
    /// The root value is complete: only whitespace may follow.
    Done,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Escape {
    None,
    Backslash,
    Unicode { digits: u8, value: u32 },
}

/// The reader's state between pieces.
#[derive(Clone, Debug)]
pub struct Reader {
    /// true for an object, false for an array.
    stack: Vec<bool>,
    expect: Expect,
    /// Inside a string: whether it is a key.
    in_string: Option<bool>,
    escape: Escape,
    high_surrogate: Option<u32>,
    /// Text of the open key, or of the open value string not yet handed out.
    text: String,
    /// An unfinished number or literal.
    scalar: String,
    broken: bool,
}

impl Default for Reader {
    fn default() -> Self {
        Reader {
            stack: Vec::new(),
            expect: Expect::Value,
            in_string: None,
            escape: Escape::None,
            high_surrogate: None,
            text: String::new(),
            scalar: String::new(),
            broken: false,
        }
    }
}

impl Reader {
    /// True once the text stopped being strict JSON; no more tokens come then.
    pub fn is_broken(&self) -> bool {
        self.broken
    }

    /// True once one whole value has been read (and nothing but whitespace after it).
    pub fn is_complete(&self) -> bool {
        !self.broken && self.expect == Expect::Done
    }

    /// Reads one more piece and appends the tokens it completed to `out`.
    pub fn feed(&mut self, piece: &str, out: &mut Vec<Token<'static>>) {
        self.feed_with(piece, |token| out.push(token.into_owned()));
    }

    /// Reads one more piece and hands each token it completed to `sink`, in order. Text that
    /// lies whole in the piece is lent from it; nothing is copied unless a token spans pieces or
    /// holds escapes.
    pub fn feed_with(&mut self, piece: &str, mut sink: impl FnMut(Token<'_>)) {
        if self.broken {
            return;
        }
        let bytes = piece.as_bytes();
        let mut i = 0;
        // Where the number or literal being read starts in this piece (0 when it began in an
        // earlier one: its start is then in `self.scalar`).
        let mut scalar_from = (!self.scalar.is_empty()).then_some(0);
        while i < bytes.len() {
            if let Some(is_key) = self.in_string {
                i = self.string_run(piece, i, is_key, &mut sink);
                continue;
            }
            let b = bytes[i];
            if let Some(from) = scalar_from {
                if b.is_ascii_alphanumeric() || matches!(b, b'.' | b'+' | b'-') {
                    i += 1;
                    continue;
                }
                scalar_from = None;
                if !self.finish_scalar(&piece[from..i], &mut sink) {
                    return;
                }
            }
            i += 1;
            match (b, self.expect) {
                (b' ' | b'\t' | b'\n' | b'\r', _) => {}
                (b'"', Expect::Value | Expect::ValueOrEnd) => {
                    self.in_string = Some(false);
                    sink(Token::StringStart);
                }
                (b'"', Expect::Key | Expect::KeyOrEnd) => self.in_string = Some(true),
                (b':', Expect::Colon) => self.expect = Expect::Value,
                (b'{', Expect::Value | Expect::ValueOrEnd) => {
                    self.stack.push(true);
                    self.expect = Expect::KeyOrEnd;
                    sink(Token::ObjectStart);
                }
                (b'[', Expect::Value | Expect::ValueOrEnd) => {
                    self.stack.push(false);
                    self.expect = Expect::ValueOrEnd;
                    sink(Token::ArrayStart);
                }
                (b'}', Expect::KeyOrEnd | Expect::CommaOrEnd)
                    if self.stack.last() == Some(&true) =>
                {
                    self.close(&mut sink)
                }
                (b']', Expect::ValueOrEnd | Expect::CommaOrEnd)
                    if self.stack.last() == Some(&false) =>
                {
                    self.close(&mut sink)
                }
                (b',', Expect::CommaOrEnd) => {
                    self.expect = if self.stack.last() == Some(&true) {
                        Expect::Key
                    } else {
                        Expect::Value
                    };
                }
                (b'-' | b'0'..=b'9' | b't' | b'f' | b'n', Expect::Value | Expect::ValueOrEnd) => {
                    scalar_from = Some(i - 1);
                }
                _ => {
                    self.broken = true;
                    return;
                }
            }
        }
        // A number or literal cut by the piece's end waits for its delimiter.
        if let Some(from) = scalar_from {
            self.scalar.push_str(&piece[from..]);
        }
        // The open value string's text so far goes out now, so a view can show it.
        if self.in_string == Some(false) {
            self.emit_text(&mut sink);
        }
    }

    fn close(&mut self, sink: &mut impl FnMut(Token<'_>)) {
        self.stack.pop();
        sink(Token::End);
        self.after_value();
    }

    fn after_value(&mut self) {
        self.expect = if self.stack.is_empty() {
            Expect::Done
        } else {
            Expect::CommaOrEnd
        };
    }

    /// A number or literal ended (a delimiter followed it): `tail` is its part in this piece.
    /// False if it is not one.
    fn finish_scalar(&mut self, tail: &str, sink: &mut impl FnMut(Token<'_>)) -> bool {
        let text: Cow<'_, str> = if self.scalar.is_empty() {
            Cow::Borrowed(tail)
        } else {
            self.scalar.push_str(tail);
            Cow::Owned(std::mem::take(&mut self.scalar))
        };
        let token = match text.as_ref() {
            "true" => Token::Bool(true),
            "false" => Token::Bool(false),
            "null" => Token::Null,
            n if is_number(n) => Token::Number(text),
            _ => {
                self.broken = true;
                return false;
            }
        };
        sink(token);
        self.after_value();
        true
    }

    /// Hands out the value text held back (escapes, a lone surrogate), if any.
    fn emit_text(&mut self, sink: &mut impl FnMut(Token<'_>)) {
        if !self.text.is_empty() {
            sink(Token::StringText(Cow::Borrowed(&self.text)));
            self.text.clear();
        }
    }

    /// Reads string text from `i` up to the closing quote or the end of the piece. A value's
    /// plain runs go out as they are read; a key is held until it closes.
    fn string_run(
        &mut self,
        piece: &str,
        mut i: usize,
        is_key: bool,
        sink: &mut impl FnMut(Token<'_>),
    ) -> usize {
        let bytes = piece.as_bytes();
        while i < bytes.len() {
            if self.escape != Escape::None {
                if !self.escape_byte(bytes[i]) {
                    self.broken = true;
                    return bytes.len();
                }
                i += 1;
                continue;
            }
            let found = memchr::memchr2(b'"', b'\\', &bytes[i..]).map(|offset| i + offset);
            let run_end = found.unwrap_or(bytes.len());
            let run = &piece[i..run_end];
            let closes = found.is_some_and(|at| bytes[at] == b'"');
            // Strict JSON: no raw control characters, and a high surrogate escape is followed by
            // a low one. What this reader completes, the strict validator accepts.
            if self.high_surrogate.is_some() && (closes || !run.is_empty()) {
                self.broken = true;
                return bytes.len();
            }
            if let Some(bad) = run.bytes().position(|b| b < 0x20) {
                // The text before it goes out as it would have in a piece that ended there.
                if !is_key && bad > 0 {
                    self.emit_text(sink);
                    sink(Token::StringText(Cow::Borrowed(&run[..bad])));
                }
                self.broken = true;
                return bytes.len();
            }
            // A key read whole from this piece is lent as it is; any other is gathered.
            let lend_key = is_key && closes && self.text.is_empty();
            if !run.is_empty() {
                if is_key {
                    if !lend_key {
                        self.text.push_str(run);
                    }
                } else {
                    self.emit_text(sink);
                    sink(Token::StringText(Cow::Borrowed(run)));
                }
            }
            let Some(at) = found else {
                return bytes.len();
            };
            i = at + 1;
            if !closes {
                self.escape = Escape::Backslash;
                continue;
            }
            self.in_string = None;
            if is_key {
                if lend_key {
                    sink(Token::Key(Cow::Borrowed(run)));
                } else {
                    sink(Token::Key(Cow::Borrowed(&self.text)));
                    self.text.clear();
                }
                self.expect = Expect::Colon;
            } else {
                self.emit_text(sink);
                sink(Token::StringEnd);
                self.after_value();
            }
            return i;
        }
        i
    }

    fn escape_byte(&mut self, b: u8) -> bool {
        match self.escape {
            Escape::Backslash => {
                let c = match b {
                    b'"' => '"',
                    b'\\' => '\\',
                    b'/' => '/',
                    b'b' => '\u{8}',
                    b'f' => '\u{c}',
                    b'n' => '\n',
                    b'r' => '\r',
                    b't' => '\t',
                    b'u' => {
                        self.escape = Escape::Unicode {
                            digits: 0,
                            value: 0,
                        };
                        return true;
                    }
                    _ => return false,
                };
                if self.high_surrogate.is_some() {
                    return false; // a high surrogate not followed by a low one
                }
                self.text.push(c);
                self.escape = Escape::None;
                true
            }
            Escape::Unicode { digits, value } => {
                let Some(d) = (b as char).to_digit(16) else {
                    return false;
                };
                let value = value * 16 + d;
                if digits < 3 {
                    self.escape = Escape::Unicode {
                        digits: digits + 1,
                        value,
                    };
                    return true;
                }
                self.escape = Escape::None;
                match (self.high_surrogate.take(), value) {
                    (Some(high), 0xDC00..=0xDFFF) => {
                        let c = 0x10000 + ((high - 0xD800) << 10) + (value - 0xDC00);
                        self.text.push(char::from_u32(c).unwrap_or('\u{fffd}'));
                    }
                    // A high surrogate not followed by a low one, or a low one alone.
                    (Some(_), _) | (None, 0xDC00..=0xDFFF) => return false,
                    (None, 0xD800..=0xDBFF) => self.high_surrogate = Some(value),
                    (None, _) => self.text.push(char::from_u32(value).unwrap_or('\u{fffd}')),
                }
                true
            }
            Escape::None => true,
        }
    }
}

fn is_number(text: &str) -> bool {
    let t = text.strip_prefix('-').unwrap_or(text);
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || (digits > 1 && t.starts_with('0')) {
        return false;
    }
    let mut rest = &t[digits..];
    if let Some(frac) = rest.strip_prefix('.') {
        let n = frac.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return false;
        }
        rest = &frac[n..];
    }
    if let Some(exp) = rest.strip_prefix(['e', 'E']) {
        let exp = exp.strip_prefix(['+', '-']).unwrap_or(exp);
        let n = exp.bytes().take_while(u8::is_ascii_digit).count();
        return n > 0 && n == exp.len();
    }
    rest.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens_in_pieces(pieces: &[&str]) -> (Vec<Token<'static>>, bool) {
        let mut reader = Reader::default();
        let mut out = Vec::new();
        for piece in pieces {
            reader.feed(piece, &mut out);
        }
        (out, reader.is_broken())
    }

    /// Joins string text tokens, so splits that cut a string differently compare equal.
    fn merged(tokens: Vec<Token<'static>>) -> Vec<Token<'static>> {
        let mut out: Vec<Token<'static>> = Vec::new();
        for t in tokens {
            if let (Token::StringText(new), Some(Token::StringText(old))) = (&t, out.last_mut()) {
                old.to_mut().push_str(new);
                continue;
            }
            out.push(t);
        }
        out
    }

    #[test]
    fn a_look_past_strict_json_is_the_repair_pass_reading_of_the_text_so_far() {
        let limits = Limits::DEFAULT;
        assert_eq!(mended_look("  ", &limits), None);
        assert_eq!(
            mended_look("{'path': 'a.tx", &limits).as_deref(),
            Some(r#"{"path": "a.tx"}"#)
        );
        // A whole value with more after it: the value.
        assert_eq!(
            mended_look(r#" {"a": 1}{"b": 2}"#, &limits).as_deref(),
            Some(r#" {"a": 1}"#)
        );
        assert_eq!(mended_look(r#""x" "y"#, &limits).as_deref(), Some(r#""x""#));
        // Nothing the repair pass can read: nothing to show.
        assert_eq!(
            mended_look(
                "{\"a\": 1",
                &Limits {
                    max_size: 4,
                    ..limits
                }
            ),
            None
        );
    }

    #[test]
    fn every_split_gives_the_same_tokens() {
        let text =
            r#"{"path": "a\"b\\c\u00e9\ud83d\ude00", "n": [1, -2.5e3, true, null], "o": {}}"#;
        let (whole, broken) = tokens_in_pieces(&[text]);
        assert!(!broken);
        assert_eq!(
            merged(whole.clone()),
            vec![
                Token::ObjectStart,
                Token::Key("path".into()),
                Token::StringStart,
                Token::StringText("a\"b\\cé😀".into()),
                Token::StringEnd,
                Token::Key("n".into()),
                Token::ArrayStart,
                Token::Number("1".into()),
                Token::Number("-2.5e3".into()),
                Token::Bool(true),
                Token::Null,
                Token::End,
                Token::Key("o".into()),
                Token::ObjectStart,
                Token::End,
                Token::End,
            ]
        );
        for a in 0..=text.len() {
            for b in a..=text.len() {
                if !(text.is_char_boundary(a) && text.is_char_boundary(b)) {
                    continue;
                }
                let (split, broken) = tokens_in_pieces(&[&text[..a], &text[a..b], &text[b..]]);
                assert!(!broken, "{a} {b}");
                assert_eq!(merged(split), merged(whole.clone()), "split at {a}, {b}");
            }
        }
    }

    #[test]
    fn open_string_text_is_handed_out_per_piece() {
        let mut reader = Reader::default();
        let mut out = Vec::new();
        reader.feed(r#"{"content": "def f():\n"#, &mut out);
        assert_eq!(
            merged(out.split_off(3)),
            vec![Token::StringText("def f():\n".into())]
        );
        out.clear();
        reader.feed("    return 1", &mut out);
        assert_eq!(out, vec![Token::StringText("    return 1".into())]);
    }

    /// Found by the partial fuzz target: text before a control character went out when a piece
    /// ended before it, and not when it came in one piece with it.
    #[test]
    fn text_before_what_stops_the_reader_reads_alike_however_split() {
        let text = "[\")\u{fffd}y\u{10}*";
        let whole = tokens_in_pieces(&[text]);
        assert!(whole.1);
        for at in (0..=text.len()).filter(|&at| text.is_char_boundary(at)) {
            let split = tokens_in_pieces(&[&text[..at], &text[at..]]);
            assert_eq!(
                (merged(split.0), split.1),
                (merged(whole.0.clone()), true),
                "split at {at}"
            );
        }
    }

    #[test]
    fn what_is_not_strict_json_stops_the_reader() {
        for text in [
            "{'a': 1}",
            "{\"a\": 1,}",
            "[01]",
            "{\"a\" 1}",
            "[tru]",
            "{\"a\": \"\\x\"}",
            "{} x",
            // What the strict validator refuses: control characters, lone surrogates.
            "[\"a\u{1}b\"]",
            "[\"\\ud800\"]",
            "[\"\\ud800x\"]",
            "[\"\\ud800\\n\"]",
            "[\"\\udc00\"]",
        ] {
            let (_, broken) = tokens_in_pieces(&[text, " "]);
            assert!(broken, "{text}");
        }
    }
}
