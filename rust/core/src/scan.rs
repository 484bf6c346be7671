//! Byte classes, string delimiters and fixed-length token tests shared by the engines.
//!
//! Everything here reads a fixed number of bytes or stops at the first byte of another class;
//! the look-aheads that decide repairs, and the argument that they stay linear, live in
//! `repair::lookahead`.

pub(crate) const fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Bytes that may continue an unquoted identifier (`path`, `$ref`, `max_tokens`).
pub(crate) const fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b == b'-' || b >= 0x80
}

/// Marks, per byte, where a fast string scan must stop: the closing quote, a backslash, a raw
/// control character and, inside a single-quoted string, a double quote that needs escaping.
pub(crate) struct StringStops {
    table: [bool; 256],
    quote: u8,
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Whether any byte of `word` is below `n` (n <= 128): the classic SWAR test, exact for "any".
#[inline(always)]
const fn any_byte_below(word: u64, n: u8) -> bool {
    word.wrapping_sub(ONES * n as u64) & !word & HIGHS != 0
}

#[inline(always)]
const fn any_byte_is(word: u64, b: u8) -> bool {
    any_byte_below(word ^ (ONES * b as u64), 1)
}

impl StringStops {
    const fn new(quote: u8) -> Self {
        let mut table = [false; 256];
        let mut i = 0;
        while i < 0x20 {
            table[i] = true;
            i += 1;
        }
        table[b'\\' as usize] = true;
        table[b'"' as usize] = true;
        table[quote as usize] = true;
        StringStops { table, quote }
    }

    #[inline(always)]
    pub(crate) fn stops(&self, b: u8) -> bool {
        self.table[b as usize]
    }

    /// Index of the first stop byte at or after `i` (or `src.len()`). Eight bytes at a time
    /// while a word holds none, since string contents are most of the bytes of tool arguments.
    #[inline]
    pub(crate) fn find(&self, src: &[u8], mut i: usize) -> usize {
        while let Some(chunk) = src.get(i..i + 8) {
            let word = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
            if any_byte_below(word, 0x20)
                || any_byte_is(word, b'"')
                || any_byte_is(word, b'\\')
                || any_byte_is(word, self.quote)
            {
                break;
            }
            i += 8;
        }
        while i < src.len() && !self.stops(src[i]) {
            i += 1;
        }
        i
    }
}

/// How a string is delimited in the input; the output is always double-quoted.
pub(crate) struct Delimiter {
    pub(crate) open: &'static [u8],
    pub(crate) close: &'static [u8],
    /// Stops at the first byte of `close`, as well as at what every string stops at.
    pub(crate) stops: StringStops,
    /// What a closing quote that does not end the string becomes in the output.
    pub(crate) inner: &'static [u8],
}

const fn delimiter(open: &'static str, close: &'static str, inner: &'static str) -> Delimiter {
    Delimiter {
        open: open.as_bytes(),
        close: close.as_bytes(),
        stops: StringStops::new(close.as_bytes()[0]),
        inner: inner.as_bytes(),
    }
}

pub(crate) static DOUBLE: Delimiter = delimiter("\"", "\"", "\\\"");
pub(crate) static SINGLE: Delimiter = delimiter("'", "'", "'");
/// Typographic quotes, which word processors and some models put around JSON strings.
pub(crate) static CURLY_DOUBLE: Delimiter = delimiter("\u{201c}", "\u{201d}", "\u{201d}");
pub(crate) static CURLY_SINGLE: Delimiter = delimiter("\u{2018}", "\u{2019}", "\u{2019}");

/// Backticks, which JavaScript template strings and some models put around JSON strings (a
/// single one: three open a fence).
pub(crate) static BACKTICK: Delimiter = delimiter("`", "`", "`");

/// Unicode spaces outside strings (no-break, en to hair, narrow no-break, ideographic): the
/// length of the one at `i`, if any. Text pasted from documents carries them between tokens.
pub(crate) fn unicode_space_len(src: &[u8], i: usize) -> Option<usize> {
    match src.get(i..)? {
        [0xC2, 0xA0, ..] => Some(2),
        [0xE2, 0x80, 0x80..=0x8A | 0xAF, ..] | [0xE2, 0x81, 0x9F, ..] | [0xE3, 0x80, 0x80, ..] => {
            Some(3)
        }
        _ => None,
    }
}

/// The typographic quote that opens a string at `i`, if any.
pub(crate) fn curly_quote_at(src: &[u8], i: usize) -> Option<&'static Delimiter> {
    let rest = src.get(i..)?;
    [&CURLY_DOUBLE, &CURLY_SINGLE]
        .into_iter()
        .find(|d| rest.starts_with(d.open))
}

/// Index of the first non-whitespace byte at or after `i`.
#[inline]
pub(crate) fn skip_ws(src: &[u8], mut i: usize) -> usize {
    while i < src.len() && is_ws(src[i]) {
        i += 1;
    }
    i
}

/// A literal word spelled as JSON, Python or JavaScript writes it, ending at a word boundary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Literal {
    True,
    False,
    Null,
    PyTrue,
    PyFalse,
    PyNone,
    /// `undefined`, `NaN` and `Infinity`, which strict JSON cannot hold: written as `null`.
    JsNull,
}

pub(crate) fn literal_at(src: &[u8], i: usize) -> Option<Literal> {
    // Upper case (`TRUE`, `NULL`) is how SQL and some models spell them; mended like Python's.
    const WORDS: [(&[u8], Literal); 12] = [
        (b"true", Literal::True),
        (b"false", Literal::False),
        (b"null", Literal::Null),
        (b"True", Literal::PyTrue),
        (b"False", Literal::PyFalse),
        (b"None", Literal::PyNone),
        (b"TRUE", Literal::PyTrue),
        (b"FALSE", Literal::PyFalse),
        (b"NULL", Literal::PyNone),
        (b"undefined", Literal::JsNull),
        (b"NaN", Literal::JsNull),
        (b"Infinity", Literal::JsNull),
    ];
    let rest = &src[i.min(src.len())..];
    // Most bytes start no literal: one test settles them before any word is compared.
    if !matches!(
        rest.first(),
        Some(b't' | b'f' | b'n' | b'T' | b'F' | b'N' | b'u' | b'I')
    ) {
        return None;
    }
    WORDS.iter().find_map(|&(word, lit)| {
        let ends_word = rest.get(word.len()).is_none_or(|&b| !is_ident(b));
        (rest.starts_with(word) && ends_word).then_some(lit)
    })
}

/// Decodes the character at `i` for error messages (`None` at the end of the input).
pub(crate) fn char_at(src: &[u8], i: usize) -> Option<char> {
    let rest = src.get(i..)?;
    let end = rest.len().min(4);
    (1..=end)
        .find_map(|n| {
            std::str::from_utf8(&rest[..n])
                .ok()
                .and_then(|s| s.chars().next())
        })
        .or_else(|| rest.first().map(|&b| char::from(b)))
}
