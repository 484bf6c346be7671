//! Every read-only look-ahead (and look-behind) the repair heuristics use, in one place, so that
//! the linear-time bound can be checked here.
//!
//! Why the engine stays linear. The main loop consumes each byte once. A look-ahead reads past
//! the byte the engine stands on, and it would cost more than a constant per byte only if it
//! read far *and* the engine then called it again from inside the bytes it had already read.
//! Each look-ahead here avoids that in one of three ways:
//!
//! - **A window.** `looks_like_key` reads at most `LOOKAHEAD` bytes; `comment_len` looks for a
//!   comment's end within `COMMENT_WINDOW` bytes; `looks_like_element`, `quote_looks_closed`,
//!   `scan::literal_at` and `scan::curly_quote_at` read a few bytes past those.
//! - **Bytes the engine consumes next.** `number_runs_on` and `word_ends_at_delimiter` read the
//!   number-like run or the word the engine then consumes, and the spaces after it (a key after
//!   those is looked for within the window). Whitespace (`what_follows`, the start of
//!   `skip_ws_and_comments`) is only ever scanned from just past a byte that is not whitespace,
//!   so two scans never share a byte. `call_wrapper_at` reads an identifier that the word or the
//!   call then consumes. `structure_before_next_quote` reads up to the next closing quote of the
//!   string it is in, where the string loop goes on, so the stretches it reads for one kind of
//!   quote are disjoint. `key_after_unclosed_value` reads back over the whitespace before a
//!   quote, down to the byte before it, which is not whitespace. `escaped_json_at` runs once, and
//!   so do `fenced_string_end` and `closers_end`: they look back over a string that ran to the
//!   end of the input, which is then over.
//! - **A memo of how far a scan reached**, where neither holds. A run of short comments can be
//!   long, and a string left open can hold quotes inside those comments, each of which asks
//!   whether it closes the string by skipping the comments after it: `skip_ws_and_comments`
//!   remembers, for each comment end it walks past, where the run ends, so all walks together
//!   pass each comment end once, plus one comment per walk (at most `COMMENT_WINDOW` bytes).
//!   Likewise `last_written` (behind `after_brace` and `wrote_string_last`) remembers how far
//!   back the whitespace at the end of the output reaches, so that runs of redundant braces,
//!   which write only whitespace, do not re-read it; the few places that change the output
//!   other than by appending tell it so (`rewrote_output_from`).
//!
//! The look-aheads that can read far (through comments, up to a quote, back over the output)
//! add the bytes they read to the engine's work count. The engine loops that call look-aheads
//! count their turns and check the deadline every `CHECK_EVERY` units, and a look-ahead that
//! reads far in one call polls it itself, so a deadline holds even inside a string that runs to
//! the end of the input. (Loops that only consume bytes, such as a bare word's or a number's,
//! are bounded by what they consume.) The tests count that work on hostile inputs at two sizes
//! and expect it to grow by the same factor as the input.

use std::collections::BTreeMap;

use super::engine::{After, Engine, Expect, Frame};
use crate::scan::{self, is_ident, is_ws, literal_at, skip_ws, Delimiter};

/// How far a heuristic may look ahead. Keys and literals that decide a repair are short; a
/// longer look would make runs of quotes cost more per byte without deciding more cases.
pub(super) const LOOKAHEAD: usize = 64;

/// How far past its start a comment's end is looked for. A comment whose end is further is not
/// skipped by look-aheads, so that many look-aheads over one long comment stay linear.
const COMMENT_WINDOW: usize = LOOKAHEAD * 4;

/// How many comments (or four times as many bytes) a look-ahead reads between two looks at
/// the deadline. Only a look-ahead that reads far in one call (the first walk through a long
/// run of comments, or the scan of a long string with no quote) ever gets there.
const POLL_EVERY: usize = 1024;

/// The length of the `//`, `# ` or `/* */` comment at `i`, if one starts there and ends within
/// `COMMENT_WINDOW` bytes (a line comment may also end with the input).
#[inline]
fn comment_len(src: &[u8], i: usize) -> Option<usize> {
    if !matches!(src.get(i), Some(b'/' | b'#')) {
        return None;
    }
    let rest = &src[i..];
    let window = &rest[..rest.len().min(COMMENT_WINDOW)];
    // `# ` with its space: a `#` stuck to a word is a channel, a tag or a colour far more often.
    if rest.starts_with(b"//") || rest.starts_with(b"# ") {
        window
            .iter()
            .position(|&b| b == b'\n')
            .or((rest.len() <= COMMENT_WINDOW).then_some(rest.len()))
            .map(|n| line_comment_len(&rest[..n]))
    } else if rest.starts_with(b"/*") {
        // A block comment left open at the end of the text was cut off there.
        window
            .windows(2)
            .skip(2)
            .position(|w| w == b"*/")
            .map(|n| n + 4)
            .or((rest.len() <= COMMENT_WINDOW).then_some(rest.len()))
    } else {
        None
    }
}

/// The length of a line comment whose line is `line` (without its line break): the whole line,
/// unless a closer in it is followed by `,` and a quoted key (`# note }, "b": 2`), where the
/// comment ends, so that the members after it are kept. Each closer's look is bounded.
pub(super) fn line_comment_len(line: &[u8]) -> usize {
    memchr::memchr2_iter(b'}', b']', line)
        .find(|&k| {
            let comma = skip_ws(line, k + 1);
            line.get(comma) == Some(&b',') && surely_quoted_key(line, skip_ws(line, comma + 1))
        })
        .unwrap_or(line.len())
}

/// Whether an object key starts at `i`: a quoted or bare name followed by `:`, or a `}` that
/// closes the object. Bounded by `LOOKAHEAD`; when the window ends before the shape is decided,
/// the answer is yes, because valid JSON (a long key) must never be read as broken.
pub(super) fn looks_like_key(src: &[u8], i: usize) -> bool {
    let Some(&first) = src.get(i) else {
        return false;
    };
    let limit = (i + LOOKAHEAD).min(src.len());
    let mut j = i + 1;
    match first {
        b'}' => return true,
        b'"' | b'\'' => {
            while j < limit && src[j] != first && src[j] != b'\n' {
                j += if src[j] == b'\\' { 2 } else { 1 };
            }
            if j >= limit {
                return limit < src.len();
            }
            if src[j] != first {
                return false;
            }
            j += 1;
        }
        b if is_ident(b) => {
            while j < limit && is_ident(src[j]) {
                j += 1;
            }
        }
        _ => return false,
    }
    while j < limit && is_ws(src[j]) {
        j += 1;
    }
    if j >= limit {
        return limit < src.len();
    }
    src[j] == b':'
}

/// Whether a quoted key and its colon start at `i`, decided within `LOOKAHEAD` bytes (unlike
/// `looks_like_key`, an undecided window is a no: this closes an array, which valid JSON must
/// never see happen).
pub(super) fn surely_quoted_key(src: &[u8], i: usize) -> bool {
    let Some(&quote @ (b'"' | b'\'')) = src.get(i) else {
        return false;
    };
    let limit = (i + LOOKAHEAD).min(src.len());
    let mut j = i + 1;
    while j < limit && src[j] != quote && src[j] != b'\n' {
        j += if src[j] == b'\\' { 2 } else { 1 };
    }
    j < limit && src[j] == quote && src.get(skip_ws(src, j + 1)) == Some(&b':')
}

/// Where the quoted key starts after a bare word and a space at `at` (`COMMENT "b": 2`): the
/// word is no key (a key is followed by its colon), only junk. Bounded: a word of at most 64
/// bytes, and the key's own bounded look-ahead.
///
/// A few words with their punctuation (`quick brown fox. "b": 2`) are junk alike, within the
/// same 64 bytes.
pub(super) fn junk_word_before_key(src: &[u8], at: usize) -> Option<usize> {
    if !src.get(at).is_some_and(|&c| is_ident(c)) {
        return None;
    }
    let run = src[at..]
        .iter()
        .take(65)
        .take_while(|&&c| is_ident(c) || matches!(c, b' ' | b'\t' | b'.' | b'!' | b'?'))
        .count();
    if run > 64 {
        return None;
    }
    let key = at + run;
    (matches!(src[key - 1], b' ' | b'\t') && surely_quoted_key(src, key)).then_some(key)
}

/// `{not json at all`: words with spaces between them where a key would be, and no colon (or
/// `=`) after them. That is prose, not a key: read as one, a sentence would pass as arguments
/// of a single member with no value. Where the words end. Bounded by `LOOKAHEAD`.
pub(super) fn prose_where_key_is(src: &[u8], at: usize) -> Option<usize> {
    if !src.get(at).is_some_and(|&c| is_ident(c)) {
        return None;
    }
    let run = src[at..]
        .iter()
        .take(LOOKAHEAD)
        .enumerate()
        .take_while(|&(i, &c)| {
            !matches!(
                c,
                b':' | b'=' | b',' | b'{' | b'}' | b'[' | b']' | b'"' | b'\'' | b'\n' | b'\r'
            ) && scan::curly_quote_at(src, at + i).is_none()
        })
        .count();
    let end = at + run;
    let spaced = src[at..end]
        .trim_ascii_end()
        .iter()
        .any(|&c| matches!(c, b' ' | b'\t'));
    let colon = matches!(src.get(skip_ws(src, end)), Some(b':' | b'='));
    (spaced && !colon && run < LOOKAHEAD).then_some(end)
}

/// `b":` at `i`: a bare word stuck to a quote and then a colon, a key whose opening quote went
/// missing (`{"a": "x", b": 1}`): where the quote stands. Bounded by `LOOKAHEAD`.
pub(super) fn key_missing_open_quote(src: &[u8], i: usize) -> Option<usize> {
    let word = src[i..]
        .iter()
        .take(LOOKAHEAD)
        .take_while(|&&c| is_ident(c))
        .count();
    let quote = i + word;
    (word > 0
        && matches!(src.get(quote), Some(b'"' | b'\''))
        && src.get(skip_ws(src, quote + 1)) == Some(&b':'))
    .then_some(quote)
}

/// `ipsum, sic, datum.",}` at `i`: an unquoted value whose closing quote stands after commas
/// of its own text, stuck to it and followed by the end of a member (`,`, a closer or the end
/// of the text). Where that quote stands. No other quote, colon, bracket or line break comes
/// before it (else the commas end the value: `b, c": 1`, `b, "c": 1`). Bounded by `LOOKAHEAD`.
pub(super) fn value_missing_open_quote(src: &[u8], i: usize) -> Option<usize> {
    let quote = i + src[i..]
        .iter()
        .take(LOOKAHEAD)
        .position(|&c| matches!(c, b'"' | b':' | b'{' | b'[' | b'}' | b']' | b'\n' | b'\r'))?;
    (src[quote] == b'"'
        && quote > i
        && !is_ws(src[quote - 1])
        && src[i..quote].contains(&b',')
        && matches!(
            src.get(skip_ws(src, quote + 1)),
            None | Some(b',' | b'}' | b']')
        ))
    .then_some(quote)
}

/// `This is F(3)]` at `i`: an element written with no quotes (words, then `,` or `]` on its
/// line, no quote, bracket or colon before), after a quote and a comma that then ended the
/// element before it. Bounded by `LOOKAHEAD`.
fn bare_element_at(src: &[u8], i: usize) -> bool {
    src.get(i).is_some_and(|c| c.is_ascii_alphabetic())
        && src[i..]
            .iter()
            .take(LOOKAHEAD)
            .find(|&&c| {
                matches!(
                    c,
                    b'"' | b'\'' | b':' | b'{' | b'[' | b'}' | b']' | b',' | b'\n' | b'\r'
                )
            })
            .is_some_and(|&c| matches!(c, b']' | b','))
}

/// `"k"e"y":` with `i` past the quote after `k`: a word stuck to a quote inside a key, and,
/// on its line within `LOOKAHEAD` bytes, a later quote followed by the colon: the quotes
/// between are the key's text, not its end. No comma, bracket or colon comes first.
pub(super) fn key_goes_on_after(src: &[u8], i: usize) -> bool {
    if !src.get(i).is_some_and(|&c| is_ident(c)) {
        return false;
    }
    let window = &src[i..src.len().min(i + LOOKAHEAD)];
    for (k, &c) in window.iter().enumerate() {
        match c {
            b'"' if src.get(skip_ws(src, i + k + 1)) == Some(&b':') => return true,
            b',' | b':' | b'{' | b'}' | b'[' | b']' | b'\n' | b'\r' | b'\\' => return false,
            _ => {}
        }
    }
    false
}

/// `""value"}`, `""key"":` with `i` at the second quote `q` of two: they open one string when
/// the next `q` on the line, within `LOOKAHEAD` bytes, ends it, written once or twice (`,`, a
/// closer, a colon or the end follows). A quoted word that opens a text (`""Best" movie"`) is
/// the text's own quote, not a doubled one.
pub(super) fn doubled_open_quote(src: &[u8], i: usize, q: u8) -> bool {
    let Some(k) = src[i + 1..]
        .iter()
        .take(LOOKAHEAD)
        .position(|&c| c == q || c == b'\n')
        .map(|k| i + 1 + k)
    else {
        return false;
    };
    let after = if src.get(k + 1) == Some(&q) {
        k + 2
    } else {
        k + 1
    };
    src[k] == q
        && matches!(
            src.get(skip_ws(src, after)),
            None | Some(b',' | b'}' | b']' | b':')
        )
}

/// `"key" "value"`: a quoted key at `i` closed within `LOOKAHEAD` bytes on its line, then,
/// with no colon, another quote.
pub(super) fn key_missing_colon_at(src: &[u8], i: usize) -> bool {
    if src.get(i) != Some(&b'"') {
        return false;
    }
    let limit = (i + LOOKAHEAD).min(src.len());
    let mut j = i + 1;
    while j < limit && src[j] != b'"' && src[j] != b'\n' {
        j += if src[j] == b'\\' { 2 } else { 1 };
    }
    j < limit && src[j] == b'"' && src.get(skip_ws(src, j + 1)) == Some(&b'"')
}

/// Where the element starts after a stray word and a space at `at` (`COMMENT 2]`), when it
/// stands alone (see `element_alone_at`) or opens a container, and the word is no literal. Bounded: a word of at
/// most 64 bytes.
pub(super) fn junk_word_before_element(src: &[u8], at: usize) -> Option<usize> {
    if literal_at(src, at).is_some() {
        return None;
    }
    let word = src[at..]
        .iter()
        .take(65)
        .take_while(|&&c| is_ident(c))
        .count();
    if word == 0 || word > 64 {
        return None;
    }
    let spaces = src[at + word..]
        .iter()
        .take_while(|&&c| matches!(c, b' ' | b'\t'))
        .count();
    let element = at + word + spaces;
    let starts = matches!(src.get(element), Some(b'{' | b'[')) || element_alone_at(src, element);
    (spaces > 0 && starts).then_some(element)
}

/// Whether an element stands alone at `i`, then `,` or `]`: a number, a JSON literal, or a
/// string closed within `LOOKAHEAD` bytes on its line (never a key: no colon follows it).
pub(super) fn element_alone_at(src: &[u8], i: usize) -> bool {
    let end = match src.get(i) {
        Some(b'"' | b'\'') => return whole_element_at(src, i),
        Some(b'-' | b'0'..=b'9') => super::scalars::strict_number_end(src, i),
        _ => scan::json_literal_len(src, i).map(|n| i + n),
    };
    end.is_some_and(|end| {
        let k = end
            + src[end..]
                .iter()
                .take_while(|&&b| matches!(b, b' ' | b'\t'))
                .count();
        matches!(src.get(k), Some(b',' | b']'))
    })
}

/// Whether a string element opened by the quote at `i` closes within `LOOKAHEAD` bytes, on its
/// line, and a `,` or `]` (or the end) follows it.
fn whole_element_at(src: &[u8], i: usize) -> bool {
    let Some(&quote @ (b'"' | b'\'')) = src.get(i) else {
        return false;
    };
    let limit = (i + LOOKAHEAD).min(src.len());
    let mut j = i + 1;
    while j < limit && src[j] != quote && src[j] != b'\n' {
        j += if src[j] == b'\\' { 2 } else { 1 };
    }
    j < limit && src[j] == quote && matches!(src.get(skip_ws(src, j + 1)), None | Some(b',' | b']'))
}

/// Whether the input ends within a key opened at `i` (`{"a": "b", "c`): a quote, and no
/// other quote or line break before the end, which is within `LOOKAHEAD` bytes.
#[inline(never)]
fn cut_key_at(src: &[u8], i: usize) -> bool {
    matches!(src.get(i), Some(&q @ (b'"' | b'\'')) if src.len() - i <= LOOKAHEAD
        && !src[i + 1..].iter().any(|&b| b == q || b == b'\n'))
}

/// The longest prose after an unclosed value that is read as a trailer (see `trailer_at`):
/// only the end of the input is looked at, so the look-ahead is bounded.
const TRAILER_MAX: usize = 512;

/// Whether the text from `i` is what a model writes after a JSON value it forgot to close: a
/// closing fence, or, after a line break (in the whitespace from `ws_start` to `i`), a few
/// words of prose running to the end of the input (letters, and no quote, bracket or colon:
/// nothing of JSON).
pub(super) fn trailer_at(src: &[u8], ws_start: usize, i: usize) -> bool {
    let tail = &src[i.min(src.len())..];
    if tail.starts_with(b"```") {
        return true;
    }
    tail.len() <= TRAILER_MAX
        && i - ws_start <= TRAILER_MAX
        && src[ws_start..i].contains(&b'\n')
        && tail.iter().any(u8::is_ascii_alphabetic)
        && !tail
            .iter()
            .any(|b| matches!(b, b'"' | b'{' | b'}' | b'[' | b']' | b':'))
}

/// `12:00` at `i`: digits, a colon, digits (a time of day, not a key and its value).
fn time_at(src: &[u8], i: usize) -> bool {
    let digits = src[i..].iter().take_while(|b| b.is_ascii_digit()).count();
    digits > 0
        && src.get(i + digits) == Some(&b':')
        && src.get(i + digits + 1).is_some_and(u8::is_ascii_digit)
}

/// After a bare key at `i` (which `looks_like_key` accepted): whether what follows its colon
/// can start a value (a quote, a bracket, a number, a word), not `/`, `\\` or another mark.
fn value_after_key(src: &[u8], i: usize) -> bool {
    let limit = (i + LOOKAHEAD).min(src.len());
    let mut j = i;
    while j < limit && src[j] != b':' {
        j += 1;
    }
    j += 1;
    while j < limit && is_ws(src[j]) {
        j += 1;
    }
    match src.get(j) {
        None => true,
        Some(&b) => matches!(b, b'"' | b'\'' | b'{' | b'[' | b'-' | b'.') || is_ident(b),
    }
}

/// Where the object or array after a list marker at `i` starts (`- {...}`, `* [...]`,
/// `• {...}`, `2. {...}`, `3) {...}`), when a list marker stands there: a model listing its
/// calls as bullets.
pub(super) fn list_marker_end(src: &[u8], i: usize) -> Option<usize> {
    let rest = src.get(i..)?;
    let marker = if rest.starts_with("\u{2022}".as_bytes()) {
        3
    } else if matches!(rest.first(), Some(b'-' | b'*' | b'+')) {
        1
    } else {
        let digits = rest
            .iter()
            .take(4)
            .take_while(|b| b.is_ascii_digit())
            .count();
        if digits == 0 || !matches!(rest.get(digits), Some(b'.' | b')')) {
            return None;
        }
        digits + 1
    };
    let gap = rest[marker..]
        .iter()
        .take(8)
        .take_while(|&&b| b == b' ' || b == b'\t')
        .count();
    (gap > 0 && matches!(rest.get(marker + gap), Some(b'{' | b'['))).then_some(i + marker + gap)
}

/// Whether an array element starts at `i`: a bracket, a quote (typographic ones too), a number
/// or a JSON literal word.
pub(super) fn looks_like_element(src: &[u8], i: usize) -> bool {
    match src.get(i) {
        None => true,
        Some(b'"' | b'\'' | b'{' | b'[' | b']' | b'}' | b'-' | b'0'..=b'9') => true,
        Some(0xE2) => scan::curly_quote_at(src, i).is_some(),
        Some(_) => literal_at(src, i).is_some(),
    }
}

/// Where JSON escaped once too often begins: an object or array whose first key or string opens
/// with `\"` (`{\"path\": ...}`), or a string that does (`\"hello\"`), as when a model
/// stringifies its arguments twice.
///
/// Behind a fence or a line of prose too (```` ```json\n{\"a\": 1}``` ````, `Here it is:
/// {\"a\": 1}`): there the first bracket is looked at, and the escaped line breaks of a
/// pretty-printed text (`{\n  \"a\"`) count as the whitespace they stand for.
pub(super) fn escaped_json_at(text: &[u8]) -> Option<usize> {
    let mut start = scan::skip_ws(text, 0);
    if text[start..].starts_with(b"\\\"") {
        return Some(start); // a stringified string: `\"hello\"`
    }
    if text[start..].starts_with(b"```") {
        start = super::engine::fence_body(text, start);
    }
    if !matches!(text.get(start), Some(b'{' | b'[' | b'"')) {
        start += memchr::memchr2(b'{', b'[', &text[start..])?;
    }
    if !matches!(text.get(start), Some(b'{' | b'[')) {
        return None;
    }
    let mut inner = start + 1;
    let mut escaped_breaks = false;
    loop {
        inner = scan::skip_ws(text, inner);
        match text.get(inner..inner + 2) {
            Some(b"\\n" | b"\\t" | b"\\r") => {
                inner += 2;
                escaped_breaks = true;
            }
            _ => break,
        }
    }
    if text[inner..].starts_with(b"\\\"") || escaped_breaks && inner < text.len() {
        return Some(inner);
    }
    // A first key written otherwise (`{“a”: \"x\"`, `{a: \"x\"`): an escaped quote before any
    // plain one within `LOOKAHEAD` bytes.
    let window = &text[inner..(inner + LOOKAHEAD).min(text.len())];
    let escaped = memchr::memmem::find(window, b"\\\"")?;
    (!window[..escaped].contains(&b'"')).then_some(inner)
}

/// Whether the number-like run at `i` goes on into more text on its line before a delimiter:
/// `1/3`, `12345/67890`, `0.0.1 2`. Not when a comment, a quote or a key follows (`1 // n`,
/// `1 "b": 2`, `1 b: 2`: a comma is missing there).
pub(super) fn number_runs_on(src: &[u8], i: usize) -> bool {
    let mut j = i;
    while j < src.len()
        && matches!(
            src[j],
            b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E' | b'_'
        )
    {
        j += 1;
    }
    let run_end = j;
    while j < src.len() && matches!(src[j], b' ' | b'\t') {
        j += 1;
    }
    match src.get(j) {
        Some(b'/') => j == run_end && src.get(j + 1).is_some_and(u8::is_ascii_digit),
        Some(&c) if c.is_ascii_digit() => j > run_end && !looks_like_key(src, j),
        // `"weight": 5 kg`: a unit after the number, not a key with its comma missing.
        Some(&c) if c.is_ascii_alphabetic() => {
            j > run_end && !looks_like_key(src, j) && literal_at(src, j).is_none()
        }
        _ => false,
    }
}

/// Whether the word at `i` (an identifier, then spaces or tabs) is followed by a delimiter or
/// the end of the input: a literal there stands alone (`true,`), not as the start of prose.
pub(super) fn word_ends_at_delimiter(src: &[u8], i: usize) -> bool {
    let mut i = i;
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
}

impl<const STRICT: bool> Engine<'_, STRICT> {
    /// Past `Name(` when a call of a named function (not a literal) starts at `i`.
    pub(super) fn call_wrapper_at(&self, i: usize) -> Option<usize> {
        let src = self.src;
        let name = src[i..]
            .iter()
            .take_while(|&&c| is_ident(c) || c == b'.')
            .count();
        let is_name = name > 0 && !src[i].is_ascii_digit();
        let is_call = is_name && src.get(i + name) == Some(&b'(') && literal_at(src, i).is_none();
        is_call.then_some(i + name + 1)
    }

    /// Past whitespace and comments from `from` (see `comment_len` for which comments).
    ///
    /// A run of short comments can be long, and a look-ahead can start inside it again and
    /// again: from each quote in `"a": "//"\n//"\n//"...`, a string left open whose quotes
    /// each ask whether they close it. So where a walk passes the end of a comment, the end of
    /// the run is remembered, and a later walk that reaches that point stops there. A walk
    /// goes on only past comment ends not seen before, so all walks together pass each comment
    /// end once, plus one comment (at most `COMMENT_WINDOW` bytes) per walk to reach the first.
    #[inline]
    pub(super) fn skip_ws_and_comments(&self, from: usize) -> usize {
        let i = skip_ws(self.src, from);
        // Whitespace alone is not counted: the engine consumes it next (see the module comment).
        match comment_len(self.src, i) {
            None => i,
            Some(n) => self.skip_comment_run(from, i, n),
        }
    }

    /// `skip_ws_and_comments` from `from`, where a comment of `n` bytes starts at `i`. Out of
    /// line, so the common case (no comment) stays small enough to inline.
    #[inline(never)]
    fn skip_comment_run(&self, from: usize, mut i: usize, n: usize) -> usize {
        let src = self.src;
        let mut runs = self.comment_runs.borrow_mut();
        if let Some(&end) = runs.get(&from) {
            self.charge(i - from);
            return end;
        }
        let mut passed = Vec::new();
        i += n;
        let end = loop {
            if let Some(&end) = runs.get(&i) {
                break end;
            }
            if passed.len() % POLL_EVERY == POLL_EVERY - 1 && self.lookahead_expired() {
                self.charge(i - from);
                return i; // not remembered: it is not where the run ends
            }
            passed.push(i);
            i = skip_ws(src, i);
            match comment_len(src, i) {
                Some(n) => i += n,
                None => break i,
            }
        };
        self.charge(i - from);
        if passed.len() * 8 >= runs.len() {
            // Many new ends (the first walk through a long run): built in bulk, then merged,
            // in time linear in both; a merge only this large keeps the total linear.
            let mut new: BTreeMap<usize, usize> = passed.into_iter().map(|at| (at, end)).collect();
            runs.append(&mut new);
        } else {
            for at in passed {
                runs.insert(at, end);
            }
        }
        end
    }

    /// The last byte written that is not whitespace. The whitespace at the end of the output is
    /// measured once: later calls read only what was appended since, so runs of redundant
    /// braces (`{"a": 1, {} {} {} ...`), which write nothing but whitespace, stay linear.
    pub(super) fn last_written(&self) -> Option<u8> {
        let out = &self.out;
        let (len, start) = self.ws_tail.get();
        debug_assert!(
            len <= out.len(),
            "output rewritten without rewrote_output_from"
        );
        let len = len.min(out.len());
        let start = match out[len..].iter().rposition(|&c| !is_ws(c)) {
            Some(k) => len + k + 1,
            None => start,
        };
        self.charge(out.len() - len);
        self.ws_tail.set((out.len(), start));
        start.checked_sub(1).map(|k| out[k])
    }

    /// Output bytes from `at` on were changed or removed, not only appended to: the whitespace
    /// tail `last_written` measured is kept only as far as it still holds.
    pub(super) fn rewrote_output_from(&self, at: usize) {
        let (len, start) = self.ws_tail.get();
        if at < len {
            self.ws_tail
                .set(if start <= at { (at, start) } else { (0, 0) });
        }
    }

    /// The output byte at `at` was replaced by whitespace, the length unchanged: the measured
    /// whitespace tail still holds when the byte stands before the last byte that is not
    /// whitespace (which the tail records); otherwise it is measured again from there.
    pub(super) fn replaced_output_at(&self, at: usize) {
        let (_, start) = self.ws_tail.get();
        if at + 1 >= start {
            self.rewrote_output_from(at);
        }
    }

    /// A redundant brace wrote nothing, so the object goes on as it stood before it: after `{`,
    /// after `,`, or after a member. Only whitespace can have been written since.
    pub(super) fn after_brace(&self) -> Expect {
        match self.last_written() {
            Some(b'{') => Expect::FirstKey,
            Some(b',') => Expect::NextKey,
            _ => Expect::AfterValue,
        }
    }

    /// What follows a closer that does not match the innermost container, from `i` past it.
    pub(super) fn what_follows(&self, i: usize) -> After {
        let i = scan::skip_ws(self.src, i);
        match self.src.get(i) {
            None | Some(b'}' | b']') => After::End,
            Some(b',') => {
                let j = scan::skip_ws(self.src, i + 1);
                if looks_like_key(self.src, j) {
                    After::CommaKey
                } else {
                    After::CommaElement
                }
            }
            Some(_) => After::Other,
        }
    }

    /// Whether the key string from `content_start` to its closing quote at `quote` ends in a
    /// colon that belongs outside it (`{"key:"value"}`): nothing but a value follows the quote,
    /// no colon of its own.
    pub(super) fn colon_inside_key(&self, content_start: usize, quote: usize) -> bool {
        let src = self.src;
        quote > content_start + 1
            && src[quote - 1] == b':'
            && src[quote - 2] != b'\\'
            && match src.get(scan::skip_ws(src, quote + 1)) {
                Some(b'"' | b'\'' | b'{' | b'[' | b'-' | b'0'..=b'9') => false,
                Some(&c) => is_ident(c) && !looks_like_key(src, quote + 1),
                None => false,
            }
    }

    /// Whether a quote inside a value string, with `after` the byte past it, ends the string.
    /// Valid JSON always ends here, so the strict path never needs this; for broken input the
    /// bytes after the quote must look like what may follow a value in this container.
    /// `pair_open`: the string holds an odd number of quotes kept as its text (`"a "b`), so a
    /// quote with only a word and structure after it closes that pair, not the string.
    #[inline(always)]
    pub(super) fn quote_closes(&self, after: usize, close: u8, pair_open: bool) -> bool {
        let src = self.src;
        let i = self.skip_ws_and_comments(after);
        let Some(&c) = src.get(i) else { return true };
        if !self.stack.is_empty() && trailer_at(src, after, i) {
            // `{"a": "x"` and then a fence or a closing line: the braces were forgotten.
            return true;
        }
        if c == b'+' && self.concatenation_at(i)
            || c == b')' && (self.open_calls > 0 || self.tuple_awaits_paren())
        {
            return true;
        }
        // A word or number after the quote may be junk or a value whose comma is missing; a
        // colon, brace or parenthesis is far more often code or prose inside the string.
        let word_follows = c.is_ascii_alphanumeric() || c == b'_';
        self.quote_looks_closed(i, c, i == after, pair_open)
            || (word_follows
                && !pair_open
                && self.stack.last().is_some()
                // A word after a space that runs to the end of the text (`"x" tail`) is junk
                // after a value left open, like one before its closer.
                && self.structure_before_next_quote(after, close, i > after))
    }

    /// The bytes after a quote (from `i`, holding `c`; `stuck` when nothing is between them)
    /// look like what may follow a value here.
    #[inline(always)]
    fn quote_looks_closed(&self, i: usize, c: u8, stuck: bool, pair_open: bool) -> bool {
        let src = self.src;
        // A closer right after the quote ends the string only if what follows the closer may
        // follow a container; code inside strings (`f"{name}!"}\n`) writes closers too.
        // An object glued to the next (`{"a":"x"}{"a":"y"}`, as proxies join parallel calls)
        // ends there too: several values one after another, never one merged string.
        let closer_ends = || {
            matches!(
                src.get(i + 1),
                None | Some(b' ' | b'\t' | b'\n' | b'\r' | b',' | b'}' | b']' | b'`')
            ) || (c == b'}' && src.get(i + 1) == Some(&b'{') && src.get(i + 2) == Some(&b'"'))
                || (c == b'}'
                    && src.get(i + 1) == Some(&b'[')
                    && matches!(
                        src.get(i + 2),
                        Some(b'"' | b'{' | b'[' | b'-' | b'0'..=b'9')
                    ))
        };
        match self.stack.last() {
            Some(Frame::Object | Frame::Brace) => match c {
                b'}' | b']' => closer_ends(),
                b',' => {
                    let j = self.skip_ws_and_comments(i + 1);
                    j >= src.len()
                        || looks_like_key(src, j)
                        || cut_key_at(src, j)
                        || junk_word_before_key(src, j).is_some()
                        || key_missing_open_quote(src, j).is_some()
                        || (src.get(j) == Some(&b'[') && src.get(j + 1) == Some(&b'"'))
                        || (self.stack.len() >= 2
                            && self.stack[self.stack.len() - 2] == Frame::Array
                            && (matches!(src.get(j), Some(b'{' | b'['))
                                || element_alone_at(src, j)))
                }
                // A bare word stuck to the quote (`"run "d:/x/v2.py""`) is a key only when a
                // value follows its colon: a path or a URL inside the string has none.
                _ if stuck && is_ident(c) => {
                    looks_like_key(src, i) && value_after_key(src, i) && !time_at(src, i)
                }
                _ => looks_like_key(src, i),
            },
            Some(Frame::Array) => match c {
                b']' | b'}' => closer_ends(),
                // `"Taj "Mahal"",`: a quote stuck to one that ends the element is the text's own.
                // With a pair of quotes open (`"a "b" c" "`), the quote closes the pair.
                b'"' => !(pair_open || stuck && self.element_ends_at(i + 1)),
                b',' => {
                    let j = self.skip_ws_and_comments(i + 1);
                    looks_like_element(src, j)
                        || junk_word_before_element(src, j).is_some()
                        // No pair of quotes open in the text (`"He said "stop", then left]`).
                        // No comment between (a quote inside one is the string's own).
                        || (!pair_open && skip_ws(src, i + 1) == j && bare_element_at(src, j))
                }
                _ => false,
            },
            None => matches!(c, b',' | b'{' | b'[' | b'`'),
        }
    }

    /// In an array, whether what follows a quote ending at `after` ends the element: `,` and an
    /// element, or `]` (or the end of the text). Bounded like `looks_like_element`.
    fn element_ends_at(&self, after: usize) -> bool {
        let src = self.src;
        let i = skip_ws(src, after);
        match src.get(i) {
            None | Some(b']') => true,
            Some(b',') => looks_like_element(src, skip_ws(src, i + 1)),
            _ => false,
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
    #[inline(always)]
    fn structure_before_next_quote(&self, after: usize, close: u8, end_closes: bool) -> bool {
        let src = self.src;
        let in_object = matches!(self.stack.last(), Some(Frame::Object | Frame::Brace));
        let mut j = after;
        let found = loop {
            let Some(&b) = src.get(j) else {
                break end_closes;
            };
            if (j - after) % (POLL_EVERY * 4) == POLL_EVERY * 4 - 1 && self.lookahead_expired() {
                break false;
            }
            match b {
                b if b == close => break false,
                b'}' | b']' => {
                    if matches!(
                        src.get(j + 1),
                        None | Some(b' ' | b'\t' | b'\n' | b'\r' | b',' | b'}' | b']' | b'`')
                    ) {
                        break true;
                    }
                }
                b',' => {
                    let k = self.skip_ws_and_comments(j + 1);
                    let next_item = if in_object {
                        looks_like_key(src, k)
                    } else {
                        src.get(k) == Some(&b'"')
                            || looks_like_element(src, k) && src.get(k) != Some(&b'\'')
                    };
                    if k < src.len() && next_item {
                        break true;
                    }
                }
                _ => {}
            }
            j += 1;
        };
        self.charge(j - after);
        found
    }

    /// A value string in an object reaches `"key":` (the quote at `quote` opening it) right
    /// after a comma: the value's closing quote went missing before that comma. Returns the
    /// comma's position when the bytes from it to the quote were copied unchanged.
    pub(super) fn key_after_unclosed_value(
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
        self.charge(quote - c);
        let comma = c
            .checked_sub(1)
            .filter(|&c| c >= content_start && src[c] == b',')?;
        looks_like_key(src, quote).then_some(comma)
    }

    /// A string left open to the end of the text (`end`), once per text: a key holding a colon
    /// and more (`{"key:value}`) ends at the colon; a value in an object holding `, key: V`
    /// with V a number, literal, bracket or quote (`{"a": "first, b: 1}`) ends at the last
    /// such comma. (With a word after the colon, `"Hello, note: at 5}`, the words are the
    /// value's.) Only when the text ends with the closers of every open container. Read once:
    /// the string ran to the end.
    pub(super) fn split_in_open_string(
        &self,
        content_start: usize,
        end: usize,
        is_key: bool,
    ) -> Option<usize> {
        let src = self.src;
        // Only a text that ends with the closers of every open container: one cut off mid-value
        // (`{"a": "hello, b: 5`) stays cut, its value whole.
        let closed = || {
            let text = src[content_start..end].trim_ascii_end();
            self.closers_end(content_start, content_start + text.len())
                .is_some()
        };
        if self.open_string_split.replace(true)
            || !matches!(self.stack.last(), Some(Frame::Object | Frame::Brace))
            || !closed()
        {
            return None;
        }
        let text = &src[content_start..end];
        self.charge(text.len());
        if is_key {
            let colon = content_start + memchr::memchr(b':', text)?;
            let value = skip_ws(src, colon + 1);
            return (colon > content_start && value < end && !matches!(src[value], b'}' | b']'))
                .then_some(colon);
        }
        memchr::memrchr_iter(b':', text).find_map(|k| {
            let colon = content_start + k;
            let value = colon
                + 1
                + src[colon + 1..end]
                    .iter()
                    .take_while(|&&b| matches!(b, b' ' | b'\t'))
                    .count();
            let starts_value = match src.get(value) {
                Some(b'"' | b'[' | b'{' | b'-' | b'0'..=b'9') => true,
                Some(_) => scan::json_literal_len(src, value).is_some(),
                None => false,
            };
            if !starts_value {
                return None;
            }
            let mut key_end = colon;
            while key_end > content_start && matches!(src[key_end - 1], b' ' | b'\t') {
                key_end -= 1;
            }
            let mut key_start = key_end;
            while key_start > content_start
                && key_end - key_start < LOOKAHEAD
                && is_ident(src[key_start - 1])
            {
                key_start -= 1;
            }
            let mut comma = key_start;
            while comma > content_start && matches!(src[comma - 1], b' ' | b'\t') {
                comma -= 1;
            }
            let comma = comma.checked_sub(1)?;
            (key_start < key_end && comma > content_start && src[comma] == b',').then_some(comma)
        })
    }

    /// A value string's quote at `quote`, which did not end it, right after a `{` or `[` of its
    /// text (`answer is {"blank_1": "5"}, correct`): an object or array written inline. Where the
    /// bracket that balances it ends, when that is on the same line within `4 * LOOKAHEAD`
    /// bytes and more text follows it than closers (so the string's own closers are never
    /// taken for it). Bounded by that window.
    pub(super) fn inline_json_end(&self, content_start: usize, quote: usize) -> Option<usize> {
        let src = self.src;
        let mut open = quote;
        while open > content_start && matches!(src[open - 1], b' ' | b'\t') {
            open -= 1;
        }
        let open = open.checked_sub(1).filter(|&o| o >= content_start)?;
        // A scan that found no end recorded how far it read: none starts inside that stretch
        // again, so failed scans read each byte once.
        if !matches!(src[open], b'{' | b'[') || open < self.inline_scan_reached.get() {
            return None;
        }
        let limit = (open + LOOKAHEAD * 4).min(src.len());
        let mut depth = 0usize;
        let mut j = open;
        let end = loop {
            if j >= limit {
                break None;
            }
            match src[j] {
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        break Some(j + 1);
                    }
                }
                b'\n' => break None,
                b'\\' => j += 1,
                _ => {}
            }
            j += 1;
        };
        self.charge(j.min(src.len()) - open);
        let Some(end) = end else {
            self.inline_scan_reached.set(j);
            return None;
        };
        let rest = src[end..limit.max(end)].trim_ascii_start();
        rest.first()
            .is_some_and(|&b| !matches!(b, b'}' | b']'))
            .then_some(end)
    }

    /// A value string in an object reaches `, key: "` (a bare key, then the quote at `quote`
    /// opening a whole value that a `,` or `}` follows): the value's closing quote went missing
    /// before that comma (`{"a": "first, b: "second"}`). Returns the comma's position. A bounded
    /// look back: a key of at most `LOOKAHEAD` bytes.
    pub(super) fn bare_key_after_unclosed_value(
        &self,
        content_start: usize,
        quote: usize,
    ) -> Option<usize> {
        let src = self.src;
        if !matches!(self.stack.last(), Some(Frame::Object | Frame::Brace)) {
            return None;
        }
        let back_ws = |mut c: usize| {
            while c > content_start && matches!(src[c - 1], b' ' | b'\t') {
                c -= 1;
            }
            c
        };
        let colon = back_ws(quote).checked_sub(1)?;
        if colon <= content_start || src[colon] != b':' {
            return None;
        }
        let key_end = back_ws(colon);
        let mut key_start = key_end;
        while key_start > content_start
            && key_end - key_start < LOOKAHEAD
            && is_ident(src[key_start - 1])
        {
            key_start -= 1;
        }
        let comma = back_ws(key_start).checked_sub(1)?;
        let found = key_start < key_end
            && comma > content_start
            && src[comma] == b','
            && key_start > comma + 1;
        self.charge(quote - comma);
        if !found {
            return None;
        }
        let limit = (quote + LOOKAHEAD).min(src.len());
        let mut j = quote + 1;
        while j < limit && src[j] != src[quote] && src[j] != b'\n' {
            j += if src[j] == b'\\' { 2 } else { 1 };
        }
        (j < limit
            && src[j] == src[quote]
            && matches!(src.get(skip_ws(src, j + 1)), None | Some(b',' | b'}')))
        .then_some(comma)
    }

    /// In an array, whether the quote at `quote`, which did not look closed, ends its element
    /// all the same because another element follows with its comma missing: a number or
    /// literal alone (`["a" 2`), or a word stuck to a quote that ends the next element
    /// (`["value1" value2", "value3"]`: that element's opening quote went missing). Bounded by
    /// `LOOKAHEAD`.
    pub(super) fn element_follows_quote(&self, quote: usize, close: u8) -> bool {
        let src = self.src;
        if self.stack.last() != Some(&Frame::Array) {
            return false;
        }
        let after = quote + 1;
        let k = after
            + src[after..]
                .iter()
                .take_while(|&&b| matches!(b, b' ' | b'\t'))
                .count();
        if k == after {
            return false;
        }
        let scalar_end = match src.get(k) {
            Some(b'-' | b'0'..=b'9') => super::scalars::strict_number_end(src, k),
            _ => scan::json_literal_len(src, k).map(|n| k + n),
        };
        if let Some(end) = scalar_end {
            let m = end
                + src[end..]
                    .iter()
                    .take_while(|&&b| matches!(b, b' ' | b'\t'))
                    .count();
            if matches!(src.get(m), None | Some(b',' | b']' | b'\n' | b'\r')) {
                return true;
            }
        }
        if is_ws(src[quote - 1]) {
            return false;
        }
        let limit = (k + LOOKAHEAD).min(src.len());
        let mut j = k;
        while j < limit
            && src[j] != close
            && !matches!(
                src[j],
                b'\n' | b'\r' | b',' | b'[' | b']' | b'{' | b'}' | b':'
            )
        {
            j += 1;
        }
        self.charge(j - k);
        j < limit
            && j > k
            && src[j] == close
            && !is_ws(src[j - 1])
            && matches!(src.get(skip_ws(src, j + 1)), None | Some(b',' | b']'))
    }

    /// An element string in an array reaches a quote right after a comma (and whitespace), and
    /// that quote opens a whole element (`["hello,"world"]`, `"abc,\n"def"`): the element's
    /// closing quote went missing before the comma. Returns the comma's position.
    pub(super) fn element_after_unclosed_value(
        &self,
        content_start: usize,
        quote: usize,
    ) -> Option<usize> {
        let src = self.src;
        if self.stack.last() != Some(&Frame::Array) {
            return None;
        }
        let mut c = quote;
        while c > content_start && is_ws(src[c - 1]) {
            c -= 1;
        }
        self.charge(quote - c);
        let comma = c
            .checked_sub(1)
            .filter(|&c| c > content_start && src[c] == b',')?;
        whole_element_at(src, quote).then_some(comma)
    }

    /// The innermost container is an array written for a tuple, which `)` closes.
    #[inline(never)]
    fn tuple_awaits_paren(&self) -> bool {
        self.python_arrays
            .last()
            .is_some_and(|p| p.closer == b')' && p.at + 1 == self.stack.len())
    }

    /// A value string whose text is JSON with its quotes left unescaped
    /// (`"{"style": "modern", "size": 2}"`), its content starting at `start`: the position of
    /// the quote that ends it, found as the quote right after the bracket that balances the
    /// first one, where that quote may end a value here. Only when a quote follows the opening
    /// bracket (a quoted key or element), the case in which the first inner quote would cut
    /// the value short.
    ///
    /// Linear: a scan that finds the end reads bytes the string loop consumes next; one that
    /// does not records how far it read, and no later scan starts before that point, so failed
    /// scans read each byte once.
    #[inline(never)]
    pub(super) fn json_in_string_end(&self, start: usize) -> Option<usize> {
        let src = self.src;
        let first_quote = skip_ws(src, start + 1);
        // A first quote that may end the string ends it (`"{", "b": 1`): valid JSON stays.
        if start < self.json_scan_reached.get()
            || !matches!(src.get(start), Some(b'{' | b'['))
            || src.get(first_quote) != Some(&b'"')
            || self.quote_closes(first_quote + 1, b'"', false)
        {
            return None;
        }
        let mut depth = 0usize;
        let mut j = start;
        let end = loop {
            let Some(&b) = src.get(j) else { break None };
            if (j - start) % (POLL_EVERY * 4) == POLL_EVERY * 4 - 1 && self.lookahead_expired() {
                break None;
            }
            match b {
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        let closes =
                            src.get(j + 1) == Some(&b'"') && self.quote_closes(j + 2, b'"', false);
                        break closes.then_some(j + 1);
                    }
                }
                b'\\' => j += 1,
                _ => {}
            }
            j += 1;
        };
        self.charge(j.min(src.len()) - start);
        if end.is_none() {
            self.json_scan_reached.set(j);
        }
        end
    }

    /// `(` at `i` opens a Python tuple: a value that is no bare word follows, or `)`. (A
    /// parenthesis before prose, `(see below)`, stays text.)
    pub(super) fn tuple_at(&self, i: usize) -> bool {
        let j = skip_ws(self.src, i + 1);
        match self.src.get(j) {
            Some(b'"' | b'\'' | b'[' | b'{' | b'(' | b')' | b'-' | b'0'..=b'9') => true,
            Some(_) => literal_at(self.src, j).is_some(),
            None => false,
        }
    }

    /// `{` at `i` opens a Python set: its first member is a number followed by `,` or `}`, not
    /// by `:`. The number read here is the one the engine reads next.
    pub(super) fn set_at(&self, i: usize) -> bool {
        let src = self.src;
        let mut j = skip_ws(src, i + 1);
        if matches!(src.get(j), Some(b'"' | b'\'')) {
            return self.set_of_strings_at(j);
        }
        if !matches!(src.get(j), Some(b'-' | b'0'..=b'9')) {
            return false;
        }
        j += 1;
        while j < src.len() && matches!(src[j], b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-') {
            j += 1;
        }
        self.charge(j - i);
        matches!(src.get(skip_ws(src, j)), Some(b',' | b'}'))
    }

    /// `{'a', 'b'}` (a Python set of strings; `{"` is read as an object before this is asked):
    /// from the first member at `i`, two quoted strings,
    /// the first followed by `,`, the second by `,` or `}`, neither by `:`. Bounded: each string
    /// is looked at within `LOOKAHEAD` bytes.
    fn set_of_strings_at(&self, i: usize) -> bool {
        let src = self.src;
        let string_end = |at: usize| {
            let quote = *src.get(at)?;
            if !matches!(quote, b'"' | b'\'') {
                return None;
            }
            let limit = (at + LOOKAHEAD).min(src.len());
            let mut j = at + 1;
            while j < limit && src[j] != quote && src[j] != b'\n' {
                j += if src[j] == b'\\' { 2 } else { 1 };
            }
            (j < limit && src[j] == quote).then(|| skip_ws(src, j + 1))
        };
        let Some(after_first) = string_end(i) else {
            return false;
        };
        self.charge(after_first - i);
        if src.get(after_first) != Some(&b',') {
            return false;
        }
        let second = skip_ws(src, after_first + 1);
        string_end(second).is_some_and(|after| matches!(src.get(after), Some(b',' | b'}')))
    }

    /// A single backtick at `i` (in repair mode) opens a string; three open a fence.
    pub(super) fn backtick_string_at(&self, i: usize) -> bool {
        !STRICT && self.src.get(i + 1) != Some(&b'`')
    }

    /// What closes the string a backtick opens at `i`: the first backtick or acute accent on its
    /// line (`` `a´ ``), else an apostrophe that a delimiter follows (`` `a', ``). Bounded:
    /// the line's first `4 * LOOKAHEAD` bytes, which the string then reads.
    pub(super) fn backtick_delimiter(&self, i: usize) -> &'static Delimiter {
        let src = self.src;
        let limit = (i + 1 + LOOKAHEAD * 4).min(src.len());
        let line = &src[i + 1..limit];
        let line = &line[..memchr::memchr(b'\n', line).unwrap_or(line.len())];
        self.charge(line.len());
        let backtick = memchr::memchr(b'`', line);
        let acute = memchr::memmem::find(line, "\u{00b4}".as_bytes());
        match (backtick, acute) {
            (Some(b), Some(a)) if a < b => return &scan::BACKTICK_ACUTE,
            (Some(_), _) => return &scan::BACKTICK,
            (None, Some(_)) => return &scan::BACKTICK_ACUTE,
            (None, None) => {}
        }
        let apostrophe_ends = memchr::memchr_iter(b'\'', line).any(|k| {
            matches!(
                src.get(skip_ws(src, i + 2 + k)),
                None | Some(b',' | b':' | b'}' | b']')
            )
        });
        if apostrophe_ends {
            &scan::BACKTICK_APOSTROPHE
        } else {
            &scan::BACKTICK
        }
    }

    /// Whether the last value written, whitespace aside, is a string.
    pub(super) fn wrote_string_last(&self) -> bool {
        self.last_written() == Some(b'"')
    }

    /// `+` at `i` followed by a double-quoted string: JavaScript concatenation.
    pub(super) fn concatenation_at(&self, i: usize) -> bool {
        matches!(
            self.src.get(self.skip_ws_and_comments(i + 1)),
            Some(b'"' | b'\'')
        )
    }
}

/// Look-behinds over a string that runs to the end of the input.
impl<const STRICT: bool> Engine<'_, STRICT> {
    /// Where a string that runs to the end of the input (`end`) really ends, when its text
    /// closes with a fence (before the fence and the closers and whitespace in front of it), or
    /// with exactly the closers of every container open (`{"msg": "hello}`: only the quote was
    /// forgotten).
    pub(super) fn fenced_string_end(&self, content_start: usize, end: usize) -> Option<usize> {
        let src = self.src;
        let text = src[content_start..end].trim_ascii_end();
        if self.stack.is_empty() {
            return None;
        }
        if !text.ends_with(b"```") {
            return self.closers_end(content_start, content_start + text.len());
        }
        let mut at = content_start + text.len() - 3;
        while at > content_start
            && matches!(src[at - 1], b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
        {
            at -= 1;
        }
        // A fence opened inside the string (code in a file's content) is the string's own.
        (!src[content_start..at].windows(3).any(|w| w == b"```")).then_some(at)
    }

    /// Where the closers of every open container, innermost first, end the text from
    /// `content_start` to `end` (whitespace between them allowed): the position of the first.
    fn closers_end(&self, content_start: usize, end: usize) -> Option<usize> {
        let src = self.src;
        let mut at = end;
        // Outermost first from the end of the text.
        for frame in self.stack.iter().filter(|f| **f != Frame::Brace) {
            while at > content_start && is_ws(src[at - 1]) {
                at -= 1;
            }
            let closer = if *frame == Frame::Array { b']' } else { b'}' };
            if at == content_start || src[at - 1] != closer {
                return None;
            }
            at -= 1;
        }
        // Whitespace before the closers is layout, not the value's (`"abc\n]`).
        let text_end = at;
        while at > content_start && is_ws(src[at - 1]) {
            at -= 1;
        }
        if at == content_start {
            at = text_end;
        }
        // The text before the closers must be the value's own, not empty.
        (at > content_start && at < end).then_some(at)
    }
}
