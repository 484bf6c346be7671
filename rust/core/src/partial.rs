//! An incremental JSON reader for streamed arguments: text arrives in pieces split anywhere
//! (inside keys, escapes, numbers), and each piece yields the tokens it completed. The state
//! carries over between pieces, so a whole stream is read in time linear in its size; string
//! bodies are copied in runs found with memchr, not byte by byte.
//!
//! It reads strict JSON only. On the first byte that strict JSON does not allow it stops and
//! says so (`is_broken`); the caller then falls back to the repair pass over the whole text.

/// What a piece of text completed, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum Token {
    ObjectStart,
    ArrayStart,
    /// The innermost object or array closed.
    End,
    Key(String),
    /// A string value opened; its text follows in `StringText` tokens.
    StringStart,
    StringText(String),
    StringEnd,
    /// A number, as written (complete: a delimiter followed it).
    Number(String),
    Bool(bool),
    Null,
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

    /// Reads one more piece and appends the tokens it completed to `out`.
    pub fn feed(&mut self, piece: &str, out: &mut Vec<Token>) {
        if self.broken {
            return;
        }
        let bytes = piece.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if let Some(is_key) = self.in_string {
                i = self.string_run(piece, i, is_key, out);
                continue;
            }
            let b = bytes[i];
            if !self.scalar.is_empty() {
                if b.is_ascii_alphanumeric() || matches!(b, b'.' | b'+' | b'-') {
                    self.scalar.push(b as char);
                    i += 1;
                    continue;
                }
                if !self.finish_scalar(out) {
                    return;
                }
            }
            i += 1;
            match (b, self.expect) {
                (b' ' | b'\t' | b'\n' | b'\r', _) => {}
                (b'"', Expect::Value | Expect::ValueOrEnd) => {
                    self.in_string = Some(false);
                    out.push(Token::StringStart);
                }
                (b'"', Expect::Key | Expect::KeyOrEnd) => self.in_string = Some(true),
                (b':', Expect::Colon) => self.expect = Expect::Value,
                (b'{', Expect::Value | Expect::ValueOrEnd) => {
                    self.stack.push(true);
                    self.expect = Expect::KeyOrEnd;
                    out.push(Token::ObjectStart);
                }
                (b'[', Expect::Value | Expect::ValueOrEnd) => {
                    self.stack.push(false);
                    self.expect = Expect::ValueOrEnd;
                    out.push(Token::ArrayStart);
                }
                (b'}', Expect::KeyOrEnd | Expect::CommaOrEnd)
                    if self.stack.last() == Some(&true) =>
                {
                    self.close(out)
                }
                (b']', Expect::ValueOrEnd | Expect::CommaOrEnd)
                    if self.stack.last() == Some(&false) =>
                {
                    self.close(out)
                }
                (b',', Expect::CommaOrEnd) => {
                    self.expect = if self.stack.last() == Some(&true) {
                        Expect::Key
                    } else {
                        Expect::Value
                    };
                }
                (b'-' | b'0'..=b'9' | b't' | b'f' | b'n', Expect::Value | Expect::ValueOrEnd) => {
                    self.scalar.push(b as char)
                }
                _ => {
                    self.broken = true;
                    return;
                }
            }
        }
        // The open value string's text so far goes out now, so a view can show it.
        if self.in_string == Some(false) && !self.text.is_empty() {
            out.push(Token::StringText(std::mem::take(&mut self.text)));
        }
    }

    fn close(&mut self, out: &mut Vec<Token>) {
        self.stack.pop();
        out.push(Token::End);
        self.after_value();
    }

    fn after_value(&mut self) {
        self.expect = if self.stack.is_empty() {
            Expect::Done
        } else {
            Expect::CommaOrEnd
        };
    }

    /// A number or literal ended (a delimiter followed it); false if it is not one.
    fn finish_scalar(&mut self, out: &mut Vec<Token>) -> bool {
        let scalar = std::mem::take(&mut self.scalar);
        let token = match scalar.as_str() {
            "true" => Token::Bool(true),
            "false" => Token::Bool(false),
            "null" => Token::Null,
            n if is_number(n) => Token::Number(scalar),
            _ => {
                self.broken = true;
                return false;
            }
        };
        out.push(token);
        self.after_value();
        true
    }

    /// Reads string text from `i` up to the closing quote or the end of the piece.
    fn string_run(
        &mut self,
        piece: &str,
        mut i: usize,
        is_key: bool,
        out: &mut Vec<Token>,
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
            let Some(offset) = memchr::memchr2(b'"', b'\\', &bytes[i..]) else {
                self.push_text(&piece[i..]);
                return bytes.len();
            };
            self.push_text(&piece[i..i + offset]);
            i += offset + 1;
            if bytes[i - 1] == b'\\' {
                self.escape = Escape::Backslash;
                continue;
            }
            self.in_string = None;
            self.flush_surrogate();
            let text = std::mem::take(&mut self.text);
            if is_key {
                out.push(Token::Key(text));
                self.expect = Expect::Colon;
            } else {
                if !text.is_empty() {
                    out.push(Token::StringText(text));
                }
                out.push(Token::StringEnd);
                self.after_value();
            }
            return i;
        }
        i
    }

    fn push_text(&mut self, text: &str) {
        if !text.is_empty() {
            self.flush_surrogate();
            self.text.push_str(text);
        }
    }

    /// A high surrogate not followed by a low one stands for U+FFFD.
    fn flush_surrogate(&mut self) {
        if self.high_surrogate.take().is_some() {
            self.text.push('\u{fffd}');
        }
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
                self.flush_surrogate();
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
                    (previous, 0xD800..=0xDBFF) => {
                        if previous.is_some() {
                            self.text.push('\u{fffd}');
                        }
                        self.high_surrogate = Some(value);
                    }
                    (previous, _) => {
                        if previous.is_some() {
                            self.text.push('\u{fffd}');
                        }
                        self.text.push(char::from_u32(value).unwrap_or('\u{fffd}'));
                    }
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

    fn tokens_in_pieces(pieces: &[&str]) -> (Vec<Token>, bool) {
        let mut reader = Reader::default();
        let mut out = Vec::new();
        for piece in pieces {
            reader.feed(piece, &mut out);
        }
        (out, reader.is_broken())
    }

    /// Joins string text tokens, so splits that cut a string differently compare equal.
    fn merged(tokens: Vec<Token>) -> Vec<Token> {
        let mut out: Vec<Token> = Vec::new();
        for t in tokens {
            if let (Token::StringText(new), Some(Token::StringText(old))) = (&t, out.last_mut()) {
                old.push_str(new);
                continue;
            }
            out.push(t);
        }
        out
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
        assert_eq!(out.last(), Some(&Token::StringText("def f():\n".into())));
        out.clear();
        reader.feed("    return 1", &mut out);
        assert_eq!(out, vec![Token::StringText("    return 1".into())]);
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
        ] {
            let (_, broken) = tokens_in_pieces(&[text, " "]);
            assert!(broken, "{text}");
        }
    }
}
