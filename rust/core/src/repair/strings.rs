//! Strings: their delimiters, escapes, control characters and inner quotes, bare keys, and
//! JavaScript concatenation.

use super::engine::Engine;
use super::lookahead::{doubled_open_quote, key_goes_on_after, key_missing_open_quote};
use super::{Repair, RepairKind};
use crate::error::Error;
use crate::scan::{self, is_ident, is_plain_escape, is_ws, skip_ws, Delimiter};

impl<const STRICT: bool> Engine<'_, STRICT> {
    /// A string opened by `delim` at `self.pos`, written double-quoted.
    pub(super) fn string(&mut self, delim: &'static Delimiter, is_key: bool) -> Result<(), Error> {
        let src = self.src;
        if std::mem::take(&mut self.continues_string) {
            // Joined onto the previous string: its closing quote was taken back instead.
        } else {
            self.emit_byte(b'"');
        }
        let mut content_start = self.pos + delim.open.len();
        // `""value"`, `""key"":`: the opening quote written twice (an empty string is never
        // followed by a word), or a key's with a space (`"" key":`). The text starts after
        // both, and a doubled closing quote is one.
        let doubled = !STRICT
            && delim.open.len() == 1
            && matches!(delim.close[0], b'"' | b'\'')
            && src.get(content_start) == Some(&delim.close[0])
            && match src.get(content_start + 1) {
                Some(&c) if is_ident(c) => doubled_open_quote(src, content_start, delim.close[0]),
                Some(b' ') => {
                    is_key && key_missing_open_quote(src, skip_ws(src, content_start + 1)).is_some()
                }
                _ => false,
            };
        if doubled {
            self.fault(
                RepairKind::UnexpectedCharacter,
                content_start,
                "one opening quote",
            )?;
            self.pos += 1;
            content_start += 1;
        }
        let mut kept_quote = false;
        // How many quotes this string kept as its text: an odd count leaves a pair open.
        let mut kept_quotes = 0usize;
        // An object or array written inline in the text (`is {"a": "b"}, which`): the quotes
        // before this position are its own.
        let mut inline_end: Option<usize> = None;
        // Where the output last stopped being a byte-for-byte copy of the source (an escape
        // written out): a value cut back to an earlier comma must be a copy from there on.
        let mut rewritten_at: Option<usize> = None;
        self.pos += delim.open.len();
        // JSON written into the string with its quotes unescaped: every quote before its end is
        // the text's own.
        let json_end = if !STRICT
            && !is_key
            && matches!(src.get(content_start), Some(b'{' | b'['))
            && delim.close[0] == b'"'
        {
            self.json_in_string_end(content_start)
        } else {
            None
        };
        loop {
            let run = self.pos;
            // Plain two-byte escapes are written as they stand: they stay in the copied run.
            // So do raw line feeds once one was met, escaped as the run is copied.
            let mut lines = false;
            let i = if STRICT || !self.raw_line_feeds {
                delim.stops.run_end::<false>(src, run, &mut lines)
            } else {
                delim.stops.run_end_past_lines(src, run, &mut lines)
            };
            if !lines {
                self.emit(&src[run..i]);
            } else if let Some(last) = self.copy_escaping_line_feeds(run, i)? {
                rewritten_at = Some(last);
            }
            self.pos = i;
            let Some(&b) = src.get(i) else {
                let split = (!STRICT && !kept_quote && delim.close == b"\"")
                    .then(|| self.split_in_open_string(content_start, i, is_key))
                    .flatten()
                    .filter(|&at| rewritten_at.is_none_or(|r| r < at));
                if let Some(at) = split {
                    // `{"key:value}`, `{"a": "first, b: 1}`: a string left open to the end
                    // holds the colon of its own key, or the next member; it ends there, and
                    // what follows is read again.
                    self.fault(RepairKind::UnclosedString, at, "a closing '\"'")?;
                    self.out.truncate(self.out.len() - (i - at));
                    self.rewrote_output_from(self.out.len());
                    self.out.push(b'"');
                    self.pos = at;
                    return Ok(());
                }
                if let Some(end) = self.fenced_string_end(content_start, i) {
                    // `"value}```: the string ran into a closing fence; it ends before the
                    // closers and the fence, which are read again after it.
                    // Control characters escaped in the part given back are read again: each
                    // was one fault (the part holds closers, whitespace and the fence).
                    let escaped = src[end..i].iter().filter(|&&c| c < 0x20).count();
                    self.repairs
                        .take_back_from(end, RepairKind::ControlCharacter, escaped);
                    self.fault(RepairKind::UnclosedString, end, "a closing '\"'")?;
                    let written: usize = src[end..i].iter().map(|&c| escaped_len(c)).sum();
                    self.out.truncate(self.out.len() - written);
                    self.rewrote_output_from(self.out.len());
                    self.out.push(b'"');
                    self.pos = end;
                    return Ok(());
                }
                self.fault(RepairKind::TruncatedString, i, "a closing '\"'")?;
                self.out.push(b'"');
                return Ok(());
            };
            match b {
                _ if b == delim.close[0]
                    && (delim.close.len() == 1 || src[i..].starts_with(delim.close)) =>
                {
                    self.pos += delim.close.len();
                    if doubled && src.get(i + 1) == Some(&delim.close[0]) {
                        self.fault(RepairKind::UnexpectedCharacter, i + 1, "one closing quote")?;
                        self.pos += 1;
                        self.emit_byte(b'"');
                        return Ok(());
                    }
                    if inline_end.is_some_and(|end| i < end) {
                        self.repairs.push(Repair {
                            kind: RepairKind::UnescapedQuotes,
                            position: i,
                            count: 1,
                        });
                        self.out.extend_from_slice(delim.inner);
                        rewritten_at = Some(i);
                        continue;
                    }
                    if !STRICT && is_key && self.colon_inside_key(content_start, i) {
                        // `{"key:"value"}`: the key ended at its colon, and this quote opens
                        // the value. The colon is read again, after the key.
                        self.repairs.push(Repair {
                            kind: RepairKind::UnescapedQuotes,
                            position: i,
                            count: 1,
                        });
                        self.out.pop();
                        self.rewrote_output_from(self.out.len());
                        self.out.push(b'"');
                        self.pos = i - 1;
                        return Ok(());
                    }
                    let closes = match json_end {
                        Some(end) => i == end,
                        None => {
                            STRICT
                                // `"k"e"y":`: a key holds quotes up to the one its colon follows.
                                || is_key && (delim.close != b"\"" || !key_goes_on_after(src, i + 1))
                                || self.quote_closes(self.pos, delim.close[0], kept_quotes % 2 == 1)
                                || (!kept_quote && self.element_follows_quote(i, delim.close[0]))
                        }
                    };
                    if closes {
                        if !STRICT && is_key {
                            self.trim_raw_line_end_of_key(content_start, i);
                        }
                        self.emit_byte(b'"');
                        return Ok(());
                    }
                    if json_end.is_some() {
                        self.repairs.push(Repair {
                            kind: RepairKind::UnescapedQuotes,
                            position: i,
                            count: 1,
                        });
                        self.out.extend_from_slice(delim.inner);
                        continue;
                    }
                    if !is_key && delim.close == b"\"" {
                        if let Some(end) = self.inline_json_end(content_start, i) {
                            inline_end = Some(end);
                            self.repairs.push(Repair {
                                kind: RepairKind::UnescapedQuotes,
                                position: i,
                                count: 1,
                            });
                            self.out.extend_from_slice(delim.inner);
                            rewritten_at = Some(i);
                            continue;
                        }
                    }
                    // Only while no quote inside this string was kept as a character: code in a
                    // string (`return {"a": 1, "b": 2}`) writes keys after commas too.
                    if let Some(comma) = (!kept_quote)
                        .then(|| {
                            self.key_after_unclosed_value(content_start, i, delim)
                                .or_else(|| self.element_after_unclosed_value(content_start, i))
                                .or_else(|| {
                                    (delim.close == b"\"")
                                        .then(|| {
                                            self.bare_key_after_unclosed_value(content_start, i)
                                        })
                                        .flatten()
                                })
                        })
                        .flatten()
                        // From the comma on, the output is a copy but for whitespace escaped.
                        .filter(|&comma| {
                            rewritten_at.is_none_or(|at| at < comma)
                                || src[comma + 1..i].iter().all(|&c| is_ws(c))
                        })
                    {
                        // `"city": "New York, "zip": 1`, `["hello,"world"]`: the value ended
                        // at the comma. Control characters escaped after it are read again.
                        let escaped = src[comma..i].iter().filter(|&&c| c < 0x20).count();
                        self.repairs
                            .take_back_from(comma, RepairKind::ControlCharacter, escaped);
                        self.repairs.push(Repair {
                            kind: RepairKind::TruncatedString,
                            position: comma,
                            count: 1,
                        });
                        let written: usize = src[comma..i].iter().map(|&c| escaped_len(c)).sum();
                        self.out.truncate(self.out.len() - written);
                        self.rewrote_output_from(self.out.len());
                        self.out.push(b'"');
                        self.pos = comma;
                        return Ok(());
                    }
                    self.repairs.push(Repair {
                        kind: RepairKind::UnescapedQuotes,
                        position: i,
                        count: 1,
                    });
                    kept_quote = true;
                    kept_quotes += 1;
                    self.out.extend_from_slice(delim.inner);
                    // A quote that did not close the string looked ahead to decide so; the
                    // other stops only consume bytes.
                    self.tick()?;
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
                    // Text with one raw line feed in a string mostly has more (code pasted
                    // in): from here on the scan passes them and the copy escapes them.
                    self.raw_line_feeds |= b == b'\n';
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

    /// A key whose text ends in raw line breaks or tabs (`"key_1\n"`): they are dropped, as no
    /// key means them. (Valid JSON holds none.)
    fn trim_raw_line_end_of_key(&mut self, content_start: usize, quote: usize) {
        let src = self.src;
        let mut at = quote;
        while at > content_start + 1 && matches!(src[at - 1], b'\n' | b'\r' | b'\t') {
            at -= 1;
        }
        if at < quote {
            let written: usize = src[at..quote].iter().map(|&c| escaped_len(c)).sum();
            self.out.truncate(self.out.len() - written);
            self.rewrote_output_from(self.out.len());
        }
    }

    /// Copies `src[from..to]` to the output with each raw line feed in it escaped and logged
    /// (a control character fault, as the string loop logs the others); the position of the
    /// last one, if any.
    fn copy_escaping_line_feeds(&mut self, from: usize, to: usize) -> Result<Option<usize>, Error> {
        let src = self.src;
        let mut copied = from;
        let mut last = None;
        for at in memchr::memchr_iter(b'\n', &src[from..to]).map(|k| from + k) {
            self.out.extend_from_slice(&src[copied..at]);
            self.fault(
                RepairKind::ControlCharacter,
                at,
                "an escaped control character",
            )?;
            self.push_control(b'\n');
            copied = at + 1;
            last = Some(at);
        }
        self.out.extend_from_slice(&src[copied..to]);
        Ok(last)
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

    /// Joins the string after `+` (at `self.pos`) onto the string written last.
    pub(super) fn concatenate(&mut self) -> Result<(), Error> {
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
        self.rewrote_output_from(self.out.len());
        self.pos = self.skip_ws_and_comments(self.pos + 1);
        self.continues_string = true;
        match self.src.get(self.pos) {
            Some(b'\'') => {
                self.fault(RepairKind::SingleQuotes, self.pos, "a double-quoted string")?;
                self.string(&scan::SINGLE, false)
            }
            Some(b'"') => self.string(&scan::DOUBLE, false),
            _ => {
                // `concatenation_at` saw a quote here; only a look-ahead cut short by the
                // deadline stops elsewhere.
                self.deadline.check(self.pos)?;
                unreachable!("a quote follows the '+'")
            }
        }
    }

    /// A backslash at `self.pos` inside a string; `in_single` when single quotes delimit it.
    fn escape(&mut self, in_single: bool) -> Result<(), Error> {
        let at = self.pos;
        let src = self.src;
        match src.get(at + 1) {
            Some(&c) if is_plain_escape(c) => {
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
            Some(b'\n') => {
                // A backslash ending the line (a line continuation): the line break it escapes.
                self.fault(RepairKind::InvalidEscape, at, "a valid escape sequence")?;
                self.out.extend_from_slice(b"\\n");
                self.pos += 2;
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
            Some(0xE2)
                if src.get(at + 2) == Some(&0x80)
                    && matches!(src.get(at + 3), Some(0x98..=0x9A | 0x9C..=0x9E)) =>
            {
                // `\„`, `\”`: a typographic quote escaped as if it were `"`; the backslash
                // meant the quote, which is then a character of the text.
                self.fault(RepairKind::InvalidEscape, at, "a valid escape sequence")?;
                self.emit(&src[at + 1..at + 4]);
                self.pos += 4;
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
    pub(super) fn push_escaped(&mut self, raw: &[u8]) {
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
    pub(super) fn unquoted_key(&mut self) {
        let src = self.src;
        let start = self.pos;
        let mut end = start;
        while end < src.len()
            && !matches!(
                src[end],
                b':' | b',' | b'{' | b'}' | b'[' | b']' | b'"' | b'\'' | b'\n' | b'\r'
            )
            && !(end > start && scan::curly_quote_at(src, end).is_some())
        {
            end += 1;
        }
        // `{a": 1}`: the key's opening quote went missing; its closing one is dropped.
        let stray_quote = matches!(src.get(end), Some(b'"' | b'\''))
            && src.get(scan::skip_ws(src, end + 1)) == Some(&b':');
        let after = end + usize::from(stray_quote);
        while end > start + 1 && is_ws(src[end - 1]) {
            end -= 1;
        }
        self.out.push(b'"');
        self.push_escaped(&src[start..end]);
        self.out.push(b'"');
        self.pos = if stray_quote { after } else { end };
    }
}

fn hex4(src: &[u8], i: usize) -> Option<u32> {
    let digits = src.get(i..i + 4)?;
    digits
        .iter()
        .try_fold(0u32, |acc, &d| Some(acc * 16 + (d as char).to_digit(16)?))
}

/// How many bytes a source byte takes in a written string (see `push_control`).
fn escaped_len(b: u8) -> usize {
    match b {
        b'\n' | b'\r' | b'\t' => 2,
        0..=0x1F => 6,
        _ => 1,
    }
}
