//! The state machine: values, objects, arrays, keys, colons and commas, and the closers that
//! end them, each fault mended where it is found.

use super::engine::{After, Engine, Expect, Frame, PythonArray};
use super::lookahead::{
    element_alone_at, junk_word_before_element, junk_word_before_key, prose_where_key_is,
    surely_quoted_key, trailer_at, word_ends_at_delimiter,
};
use super::{Repair, RepairKind};
use crate::error::{Error, ErrorKind};
use crate::scan::{self, is_ident};

impl<const STRICT: bool> Engine<'_, STRICT> {
    /// Parses one complete value from `self.pos`; at the end of the input, mends what is open.
    pub(super) fn value(&mut self) -> Result<(), Error> {
        self.value_from(Expect::RootValue)
    }

    /// `value`, from a state the caller has set up (an object reopened: `AfterValue`).
    pub(super) fn value_from(&mut self, mut expect: Expect) -> Result<(), Error> {
        loop {
            self.tick()?;
            let before_ws = self.pos;
            self.skip_ws()?;
            let Some(b) = self.peek() else {
                return self.finish(expect);
            };
            // (Not at the bytes that carry on a document, so that the check costs nothing there.)
            if !STRICT
                && !matches!(
                    b,
                    b',' | b'}' | b']' | b'"' | b'{' | b'[' | b'-' | b'0'..=b'9'
                )
                && matches!(
                    expect,
                    Expect::AfterValue | Expect::NextKey | Expect::NextElement
                )
                && trailer_at(self.src, before_ws, self.pos)
            {
                // Open containers, then a fence or a closing line of prose: the closers were
                // forgotten. They are added here; the rest is the document's trailer.
                if expect != Expect::AfterValue {
                    self.drop_last_comma()?;
                }
                let at = self.pos;
                while !self.stack.is_empty() {
                    self.tick()?;
                    self.close_missing(at);
                }
                return Ok(());
            }
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

    /// Where `true`, `false` or `null` at `at` ends, when a comma, closer or other delimiter
    /// follows it (as `word` reads literals).
    #[inline]
    fn json_literal_end(&self, at: usize) -> Option<usize> {
        let end = at + scan::json_literal_len(self.src, at)?;
        let delimited = match self.src.get(end) {
            None | Some(b',' | b'}' | b']') => true,
            Some(_) => word_ends_at_delimiter(self.src, end),
        };
        delimited.then_some(end)
    }

    pub(super) fn open(&mut self, frame: Frame) -> Result<(), Error> {
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

    pub(super) fn too_deep(&self, position: usize) -> Error {
        Error {
            kind: ErrorKind::TooDeep {
                limit: self.max_depth,
            },
            position,
        }
    }

    fn pop(&mut self) -> Option<Frame> {
        let frame = self.stack.pop()?;
        if self
            .python_arrays
            .last()
            .is_some_and(|p| p.at == self.stack.len())
        {
            self.python_arrays.pop();
        }
        match frame {
            Frame::Object | Frame::Brace => self.objects.pop(),
            Frame::Array => self.arrays.pop(),
        };
        Some(frame)
    }

    /// `(1, 2)` or `{1, 2}` (a Python tuple, or a set, which the first members tell: a number
    /// followed by `,` or `}`, or two strings): opens the array written for it.
    fn open_python_array(&mut self, closer: u8) -> Result<Expect, Error> {
        self.fault(RepairKind::PythonContainer, self.pos, "a JSON value")?;
        self.open(Frame::Array)?;
        self.python_arrays.push(PythonArray {
            at: self.stack.len() - 1,
            closer,
            opened: self.out.len(),
            comma: false,
        });
        self.out.push(b'[');
        self.pos += 1;
        Ok(Expect::FirstElement)
    }

    /// Whether `b` closes the innermost array, written for a tuple or set, where `expect` is.
    #[inline(always)]
    fn awaits_python_closer(&self, b: u8, expect: Expect) -> bool {
        !STRICT
            && !self.python_arrays.is_empty()
            && matches!(
                expect,
                Expect::FirstElement | Expect::NextElement | Expect::AfterValue
            )
            && self
                .python_arrays
                .last()
                .is_some_and(|p| p.closer == b && p.at + 1 == self.stack.len())
    }

    /// A second element of the innermost container, when it is a tuple or set being read: it
    /// is no value in parentheses (`(1 2)` is a tuple missing its comma, not `1`).
    fn python_array_holds_more(&mut self) {
        if !STRICT {
            let depth = self.stack.len();
            if let Some(p) = self.python_arrays.last_mut().filter(|p| p.at + 1 == depth) {
                p.comma = true;
            }
        }
    }

    fn close_python_array(&mut self, expect: Expect) -> Result<Expect, Error> {
        if expect == Expect::NextElement {
            self.drop_last_comma()?; // `(1,)`, a one-tuple
        }
        let python = *self.python_arrays.last().expect("awaited");
        self.pop();
        if python.closer == b')' && !python.comma && expect == Expect::AfterValue {
            // `(1)`: parentheses around one value, no tuple; the `[` becomes a space.
            self.out[python.opened] = b' ';
            self.replaced_output_at(python.opened);
        } else {
            self.out.push(b']');
        }
        self.pos += 1;
        Ok(self.after_value())
    }

    /// Pops the top frame and writes its closer, logging it as missing.
    fn close_missing(&mut self, position: usize) {
        match self.pop() {
            Some(Frame::Object) => {
                self.repairs.push(Repair {
                    kind: RepairKind::MissingClosingBrace,
                    position,
                    count: 1,
                });
                self.out.push(b'}');
            }
            Some(Frame::Array) => {
                self.repairs.push(Repair {
                    kind: RepairKind::MissingClosingBracket,
                    position,
                    count: 1,
                });
                self.out.push(b']');
            }
            Some(Frame::Brace) | None => {}
        }
    }

    /// At the end of the text: the key (`expect` a colon) or array element written last is an
    /// empty string whose opening quote was the text's last byte.
    fn cut_at_an_empty_string(&self, expect: Expect) -> bool {
        let text = self.src.trim_ascii_end();
        let in_array = self.stack.last() == Some(&Frame::Array);
        (expect == Expect::Colon || (expect == Expect::AfterValue && in_array))
            && text.last() == Some(&b'"')
            && text.len() >= 2
            && text[text.len() - 2] != b'"'
            && text[text.len() - 2] != b'\\'
            && self.out.ends_with(b"\"\"")
            // The two quotes are a string of their own, not an escaped quote's end.
            && self.out.len() >= 3
            && matches!(self.out[self.out.len() - 3], b'{' | b'[' | b',' | b' ' | b'\t' | b'\n' | b'\r')
    }

    /// After `,` in an object: whether the member before it holds an array (the output before
    /// the comma ends with `]`). Found once per comma, by reading back over the whitespace
    /// before it (each stretch of whitespace read once).
    fn array_before_comma(&self) -> bool {
        let (comma, _) = self.last_comma;
        if let Some((at, found)) = self.array_before_comma.get() {
            if at == comma {
                return found;
            }
        }
        let before = self.out[..comma]
            .iter()
            .rev()
            .take_while(|&&c| scan::is_ws(c))
            .count();
        self.charge(before);
        let found = comma > before && self.out[comma - before - 1] == b']';
        self.array_before_comma.set(Some((comma, found)));
        found
    }

    /// Whether only whitespace stands between the byte at `at` and a `[` before it (no comma
    /// skipped since the array opened). Reads back over that whitespace.
    fn right_after_bracket(&self, at: usize) -> bool {
        let before = self.src[..at]
            .iter()
            .rev()
            .take_while(|&&c| scan::is_ws(c))
            .count();
        self.charge(before);
        at > before && self.src[at - before - 1] == b'['
    }

    /// The innermost container is an array held by an object (or a redundant brace's object).
    fn array_in_object(&self) -> bool {
        let n = self.stack.len();
        n >= 2
            && self.stack[n - 1] == Frame::Array
            && matches!(self.stack[n - 2], Frame::Object | Frame::Brace)
    }

    /// The innermost container is an object (no redundant brace) held by an array.
    fn object_in_array(&self) -> bool {
        let n = self.stack.len();
        n >= 2 && self.stack[n - 1] == Frame::Object && self.stack[n - 2] == Frame::Array
    }

    /// Removes the comma written last (only whitespace has been written after it).
    fn drop_last_comma(&mut self) -> Result<(), Error> {
        let (out_at, src_at) = self.last_comma;
        self.fault(RepairKind::TrailingComma, src_at, "a value after ','")?;
        self.out.remove(out_at);
        self.rewrote_output_from(out_at);
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
        if self.cut_at_an_empty_string(expect) {
            // `{"a": 1, "` or `["`: a key or element cut off right after its opening quote
            // holds nothing; it is dropped, with the comma before it.
            self.out.truncate(self.out.len() - 2);
            self.rewrote_output_from(self.out.len());
            if self.last_written() == Some(b',') {
                self.drop_last_comma()?;
            }
            while !self.stack.is_empty() {
                self.tick()?;
                self.close_missing(at);
            }
            return Ok(());
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
            self.tick()?;
            self.close_missing(at);
        }
        Ok(())
    }

    fn on_value(&mut self, expect: Expect, b: u8) -> Result<Expect, Error> {
        let at = self.pos;
        match b {
            b')' | b'}' if self.awaits_python_closer(b, expect) => self.close_python_array(expect),
            b'{' if !STRICT && self.set_at(at) => self.open_python_array(b'}'),
            b'(' if !STRICT && self.tuple_at(at) => self.open_python_array(b')'),
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
            b'"' | b'\''
                if !STRICT
                    && expect == Expect::FirstElement
                    && surely_quoted_key(self.src, at)
                    && (self.right_after_bracket(at) || !self.array_in_object()) =>
            {
                // `["key": "value"]`: members with no braces around them; an object is opened
                // here, and the array's closer closes it too.
                self.fault(RepairKind::MissingOpeningBrace, at, "a value")?;
                self.open(Frame::Object)?;
                self.out.push(b'{');
                Ok(Expect::FirstKey)
            }
            b'"' | b'\''
                if !STRICT
                    && (expect == Expect::NextElement
                        || (expect == Expect::FirstElement && !self.right_after_bracket(at)))
                    && self.array_in_object()
                    && surely_quoted_key(self.src, at) =>
            {
                // `{"a": [1, "b": 2}`: a key after a comma where an element belongs; the array
                // was left open before it, and the comma belongs after its closer.
                if expect == Expect::NextElement {
                    let (comma, _) = self.last_comma;
                    self.out[comma] = b' ';
                }
                self.close_missing(at);
                self.last_comma = (self.out.len(), at);
                self.out.push(b',');
                self.ws_tail.set((self.out.len(), self.out.len()));
                Ok(Expect::NextKey)
            }
            b'"' => {
                self.string(&scan::DOUBLE, false)?;
                Ok(self.after_value())
            }
            b'-' | b'0'..=b'9' => {
                self.number()?;
                Ok(self.after_value())
            }
            // What `word` does with a literal it can read (one a delimiter follows), without
            // its look for a call wrapper first (none: no `(` follows).
            b't' | b'f' | b'n' if self.json_literal_end(at).is_some() => {
                let end = self.json_literal_end(at).expect("checked");
                let src = self.src;
                self.emit(&src[at..end]);
                self.pos = end;
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
            b'`' if self.backtick_string_at(at) => {
                self.fault(RepairKind::SpecialQuotes, at, "a double-quoted string")?;
                self.string(self.backtick_delimiter(at), false)?;
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
            _ if !STRICT
                && matches!(expect, Expect::FirstElement | Expect::NextElement)
                && junk_word_before_element(self.src, at).is_some() =>
            {
                // `[1, COMMENT 2]`: a stray word before an element that stands alone is junk.
                self.fault(RepairKind::UnexpectedCharacter, at, "a value")?;
                self.pos = junk_word_before_element(self.src, at).expect("checked");
                Ok(expect)
            }
            _ => {
                self.word(expect == Expect::RootValue)?;
                Ok(self.after_value())
            }
        }
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
            _ if !STRICT
                && expect == Expect::NextKey
                && self.object_in_array()
                && (matches!(b, b'{' | b'[') || element_alone_at(self.src, at)) =>
            {
                // `[{"i": 1, {"i": 2}]`, `[{"a": 1, null]`: the object's `}` went missing
                // before its comma; what follows is the array's next element.
                let (comma, _) = self.last_comma;
                self.out[comma] = b' ';
                self.close_missing(at);
                // A tuple's second element: `({"i": 1, {"i": 2})` is no value in parentheses.
                self.python_array_holds_more();
                self.last_comma = (self.out.len(), at);
                self.out.push(b',');
                // The output ends with the comma just written.
                self.ws_tail.set((self.out.len(), self.out.len()));
                Ok(Expect::NextElement)
            }
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
            b'`' if self.backtick_string_at(at) => {
                self.fault(RepairKind::SpecialQuotes, at, "a double-quoted key")?;
                self.string(self.backtick_delimiter(at), true)?;
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
            b':' if !STRICT
                && !matches!(
                    self.src.get(scan::skip_ws(self.src, at + 1)),
                    Some(b'}' | b',')
                ) =>
            {
                // `{:2}`: a value with no key. Which key was meant cannot be told, and dropping
                // the value would lose a member: refused.
                Err(Error::unexpected(at, "a key before ':'", Some(':')))
            }
            b'[' if !STRICT && expect == Expect::NextKey && self.array_before_comma() => {
                // `{"a": [1], [2], "b": 3}`: the array of the member before was closed early and
                // goes on; the `[` is dropped and the array reopened.
                self.fault(RepairKind::UnexpectedCharacter, at, "a double-quoted key")?;
                let (comma, _) = self.last_comma;
                let closer = self.out[..comma]
                    .iter()
                    .rposition(|&c| !scan::is_ws(c))
                    .expect("an array was written");
                // The closer becomes a space: nothing shifts, and the output still ends with
                // the comma and whitespace, as its measured tail says.
                self.out[closer] = b' ';
                self.ws_tail.set((self.out.len(), comma + 1));
                self.array_before_comma.set(Some((comma, false)));
                self.open(Frame::Array)?;
                self.pos += 1;
                let opener = self.out[..closer].iter().rposition(|&c| !scan::is_ws(c));
                if let Some(opener) = opener.filter(|&o| self.out[o] == b'[') {
                    // `{"a": [], [1]}`: the array held nothing; the comma goes too, and the
                    // output's last byte that is not whitespace is the array's `[`.
                    self.out[comma] = b' ';
                    self.ws_tail.set((self.out.len(), opener + 1));
                    return Ok(Expect::FirstElement);
                }
                Ok(Expect::NextElement)
            }
            b',' if !STRICT
                && expect == Expect::FirstKey
                && self.stack.len() >= 2
                && self.stack.last() == Some(&Frame::Object) =>
            {
                // `[{, 1]`, `{"a": {, "b": 1}`: an empty object whose `}` went missing.
                self.close_missing(at);
                self.on_after_value(b)
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
            _ if !STRICT && junk_word_before_key(self.src, at).is_some() => {
                // `{"a": 1, COMMENT "b": 2}`: a stray word, then a quoted key and its colon.
                self.fault(RepairKind::UnexpectedCharacter, at, "a double-quoted key")?;
                self.pos = junk_word_before_key(self.src, at).expect("checked");
                Ok(expect)
            }
            _ if !STRICT
                && expect == Expect::FirstKey
                && prose_where_key_is(self.src, at).is_some() =>
            {
                // `{not json at all`: a sentence, not an object's members; refused rather than
                // read as a key with no value.
                Err(Error::unexpected(
                    at,
                    "a double-quoted key followed by ':'",
                    Some(b as char),
                ))
            }
            _ if !STRICT
                && expect == Expect::NextKey
                && prose_where_key_is(self.src, at).is_some() =>
            {
                // `{"a": 1, see above}`: junk words between members are dropped.
                self.fault(RepairKind::UnexpectedCharacter, at, "a double-quoted key")?;
                self.pos = prose_where_key_is(self.src, at).expect("checked");
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
            b')' | b'}' if self.awaits_python_closer(b, Expect::AfterValue) => {
                self.close_python_array(Expect::AfterValue)
            }
            b',' => {
                self.python_array_holds_more();
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
                let parent = || self.stack.len().checked_sub(2).map(|i| self.stack[i]);
                if !STRICT
                    && in_array
                    && matches!(b, b'"' | b'\'')
                    && matches!(parent(), Some(Frame::Object | Frame::Brace))
                    && surely_quoted_key(self.src, at)
                {
                    // `{"a": [1, 2 "b": 3}`: a key where an element would be; the array was
                    // left open before it.
                    self.close_missing(at);
                    self.fault(RepairKind::MissingComma, at, expected)?;
                    self.last_comma = (self.out.len(), at);
                    self.out.push(b',');
                    return Ok(Expect::NextKey);
                }
                if !STRICT && b == b'{' && self.object_in_array() {
                    // `[{"i": 1 {"i": 2}]`: the object's `}` went missing before the next one.
                    self.close_missing(at);
                    self.fault(RepairKind::MissingComma, at, expected)?;
                    self.python_array_holds_more();
                    self.last_comma = (self.out.len(), at);
                    self.out.push(b',');
                    return Ok(Expect::NextElement);
                }
                if !STRICT && !in_array && is_ident(b) {
                    let word = self.src[at..].iter().take_while(|&&c| is_ident(c)).count();
                    if matches!(
                        self.src.get(scan::skip_ws(self.src, at + word)),
                        Some(b'}') | None
                    ) {
                        // `{"b": "x" true}`, `"data" AAAA }`: a stray word after the last
                        // member, with no comma before it and no colon after it, is junk;
                        // so is one that ends the text (`{"a": "x" tail`): a key is quoted.
                        self.fault(RepairKind::UnexpectedCharacter, at, expected)?;
                        self.pos = at + word;
                        return Ok(Expect::AfterValue);
                    }
                }
                if starts_item {
                    self.fault(RepairKind::MissingComma, at, expected)?;
                    self.python_array_holds_more();
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
                    self.tick()?;
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
                    count: 1,
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
                    count: 1,
                });
                self.pos += 1;
                return Ok(expect);
            }
        }
        self.pos += 1;
        Ok(self.after_value())
    }
}
