//! Scalars: numbers (strict, mended, or kept as strings) and bare words (literals, truncated
//! literals, unquoted strings).

use super::engine::{Engine, Frame};
use super::lookahead::{
    looks_like_key, number_runs_on, value_missing_open_quote, word_ends_at_delimiter,
};
use super::{Repair, RepairKind};
use crate::error::Error;
use crate::scan::{self, is_ident, is_ws, literal_at, Literal};

impl<const STRICT: bool> Engine<'_, STRICT> {
    /// A number at `self.pos`. Strict JSON numbers are copied; others are mended or, when their
    /// meaning is not a number (`007`, `1.2.3`, `10MB`), kept as strings.
    pub(super) fn number(&mut self) -> Result<(), Error> {
        let src = self.src;
        let start = self.pos;
        let end = strict_number_end(src, start);
        let followed_by_word = |i: usize| {
            src.get(i)
                .is_some_and(|&c| is_ident(c) || matches!(c, b'.' | b'+' | b'%'))
        };
        // `"ratio": 1/3`, `"version": 0.0.1 2`: a member value that starts like a number and
        // goes on is kept whole as text rather than split into keys.
        let runs_on = |end: usize| {
            !STRICT
                && matches!(src.get(end), Some(b'/' | b' ' | b'\t' | b'.'))
                && matches!(self.stack.last(), Some(Frame::Object | Frame::Brace))
                && number_runs_on(src, start)
        };
        if let Some(end) = end.filter(|&e| !followed_by_word(e)) {
            if !runs_on(end) {
                self.note_width(&src[start..end]);
                self.emit(&src[start..end]);
                self.pos = end;
                if !STRICT
                    && src.get(end) == Some(&b'"')
                    && matches!(
                        src.get(scan::skip_ws(src, end + 1)),
                        None | Some(b',' | b'}' | b']')
                    )
                {
                    // `"n": 12345",`: a stray quote after the number (its opening one missing).
                    self.fault(RepairKind::UnexpectedCharacter, end, "',' after a value")?;
                    self.pos = end + 1;
                }
                return Ok(());
            }
        }
        if STRICT {
            return Err(Error::unexpected(
                start,
                "a JSON number",
                scan::char_at(src, start),
            ));
        }
        if matches!(self.stack.last(), Some(Frame::Object | Frame::Brace))
            && number_runs_on(src, start)
        {
            return self.word(false);
        }
        if src[start..].starts_with(b"-Infinity") && literal_at(src, start + 1).is_some() {
            self.repairs.push(Repair {
                kind: RepairKind::JsLiteral,
                position: start,
                count: 1,
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
        if src.get(run_end).is_some_and(|&c| is_ident(c) || c == b'%') {
            return self.word(false); // `10MB`, `50%`
        }
        if !src[start..run_end].iter().any(u8::is_ascii_digit) {
            // `"a": -` (cut off after the sign), `[+]`: no digits, so no number was written.
            self.repairs.push(Repair {
                kind: RepairKind::MissingValue,
                position: start,
                count: 1,
            });
            self.out.extend_from_slice(b"null");
            self.pos = run_end;
            return Ok(());
        }
        self.repairs.push(Repair {
            kind: RepairKind::InvalidNumber,
            position: start,
            count: 1,
        });
        let run: Vec<u8> = src[start..run_end]
            .iter()
            .copied()
            .filter(|&c| c != b'_')
            .collect();
        match mend_number(&run) {
            Some(mended) => {
                self.note_width(&mended);
                self.out.extend_from_slice(&mended);
            }
            None => {
                self.out.push(b'"');
                self.push_escaped(&src[start..run_end]);
                self.out.push(b'"');
            }
        }
        self.pos = run_end;
        Ok(())
    }

    /// Marks the output as holding a wide number when `number` (as written) has an exponent or
    /// more than 18 characters: below that, an integer fits 64 bits (|n| < 10^18) and a
    /// fraction is a finite double under 2^63, so a parser reads each as written.
    #[inline(always)]
    fn note_width(&mut self, number: &[u8]) {
        if number.len() > 18 || number.iter().any(|&c| c | 0x20 == b'e') {
            self.wide_numbers = true;
        }
    }

    /// A bare word where a value belongs: a JSON, Python or JavaScript literal, a literal cut
    /// off by the end of the input, or an unquoted string.
    pub(super) fn word(&mut self, at_root: bool) -> Result<(), Error> {
        let src = self.src;
        let start = self.pos;
        let literal = literal_at(src, start).filter(|_| word_ends_at_delimiter(src, start));
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
                count: 1,
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
        if let Some(quote) = in_object
            .then(|| value_missing_open_quote(src, start))
            .flatten()
        {
            // `"a": one, two",`: the commas before the closing quote are the value's own.
            end = quote + 1;
        }
        // Brackets the word opened itself (`words{in brackets}`, `x[0]`): their closers are
        // its text too.
        let mut depth = 0usize;
        while end < src.len() && !matches!(src[end], b',' | b'\n' | b'\r') {
            match src[end] {
                b'{' | b'[' if end > start => depth += 1,
                b'}' | b']' if depth == 0 => break,
                b'}' | b']' => depth -= 1,
                b'"' if in_object && end > start && looks_like_key(src, end) => {
                    break; // `{"a": value "b": 1}`: the next key begins; its comma is missing
                }
                _ => {}
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
            count: 1,
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
pub(super) fn strict_number_end(src: &[u8], mut i: usize) -> Option<usize> {
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
/// (leading zeros of an identifier, two dots, a date, an exponent with no digits before it:
/// `-e5`), which is then kept as a string.
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
        if !run[..i].iter().any(u8::is_ascii_digit) {
            return None; // `-e5`: an exponent of no number
        }
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
