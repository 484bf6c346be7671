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

/// The high bit of each byte of `word` below `n` (n <= 128), the classic SWAR test: a mark can
/// be false only above a true one (a borrow runs upward), so "any" and "lowest" are exact.
#[inline(always)]
const fn bytes_below(word: u64, n: u8) -> u64 {
    word.wrapping_sub(ONES * n as u64) & !word & HIGHS
}

#[inline(always)]
const fn bytes_equal(word: u64, b: u8) -> u64 {
    bytes_below(word ^ (ONES * b as u64), 1)
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

    /// Index of the first stop byte at or after `i` (or `src.len()`). Eight bytes at a time,
    /// since string contents are most of the bytes of tool arguments: in the SWAR masks only
    /// bytes above a true stop can be marked falsely, so the lowest mark is the first stop.
    #[inline]
    pub(crate) fn find(&self, src: &[u8], mut i: usize) -> usize {
        while let Some(chunk) = src.get(i..i + 8) {
            let marks = self.word_stops(chunk);
            if marks != 0 {
                return i + (marks.trailing_zeros() / 8) as usize;
            }
            i += 8;
        }
        while i < src.len() && !self.stops(src[i]) {
            i += 1;
        }
        i
    }

    /// The high bit of each stop byte among eight, plus maybe false marks above the first.
    #[inline(always)]
    fn word_stops(&self, chunk: &[u8]) -> u64 {
        let word = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        bytes_below(word, 0x20)
            | bytes_equal(word, b'"')
            | bytes_equal(word, b'\\')
            | bytes_equal(word, self.quote)
    }

    /// Index of the first stop at or after `i` that does not begin a plain two-byte escape
    /// (`\n`, `\"`: written out as they stand), or `src.len()`. The whole copied run of a
    /// string in one call: code in tool arguments holds an escape every few bytes.
    #[inline(always)]
    pub(crate) fn run_end(&self, src: &[u8], mut i: usize) -> usize {
        loop {
            // Keys and most values end within a word: the blocks are for longer runs.
            if src
                .get(i..i + 8)
                .is_some_and(|chunk| self.word_stops(chunk) == 0)
            {
                i = self.blocks_end(src, i + 8);
            }
            i = self.find(src, i);
            if src.get(i) == Some(&b'\\') && src.get(i + 1).is_some_and(|&c| is_plain_escape(c)) {
                i += 2;
            } else {
                return i;
            }
        }
    }

    /// Past the 16-byte blocks from `i` that hold no stop but plain escapes: each block's
    /// stops, backslashes and escaped bytes are compared at once. A block it cannot settle
    /// alone (a run of backslashes; one at its end, whose escaped byte is not in the block and
    /// so not seen to be plain) is left to `find`.
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    #[inline]
    fn blocks_end(&self, src: &[u8], i: usize) -> usize {
        // SAFETY: SSE2 is enabled for this build (the x86-64 baseline: every x86-64 processor
        // has it), as the cfg above checks.
        unsafe { self.blocks_end_sse2(src, i) }
    }

    /// Out of line: only runs with no stop in their first eight bytes come here.
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    #[target_feature(enable = "sse2")]
    #[inline(never)]
    fn blocks_end_sse2(&self, src: &[u8], mut i: usize) -> usize {
        use std::arch::x86_64::*;
        let quote = _mm_set1_epi8(b'"' as i8);
        let own = _mm_set1_epi8(self.quote as i8);
        let backslash = _mm_set1_epi8(b'\\' as i8);
        let control_max = _mm_set1_epi8(0x1F);
        while let Some(block) = src.get(i..i + 16) {
            // SAFETY: `block` is 16 readable bytes; the load has no alignment requirement.
            let v = unsafe { _mm_loadu_si128(block.as_ptr().cast()) };
            let ends = _mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, own)),
                _mm_cmpeq_epi8(_mm_min_epu8(v, control_max), v),
            );
            let ends = _mm_movemask_epi8(ends) as u32;
            let backslashes = _mm_movemask_epi8(_mm_cmpeq_epi8(v, backslash)) as u32;
            if backslashes == 0 {
                if ends != 0 {
                    return i;
                }
                i += 16;
                continue;
            }
            if backslashes & (backslashes << 1) != 0 {
                return i;
            }
            let mut plain_bytes = _mm_setzero_si128();
            for c in PLAIN_ESCAPES {
                plain_bytes = _mm_or_si128(plain_bytes, _mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8)));
            }
            let plain_bytes = _mm_movemask_epi8(plain_bytes) as u32;
            let escaped = backslashes << 1;
            if ends & !escaped | backslashes & !(plain_bytes >> 1) != 0 {
                return i;
            }
            i += 16;
        }
        i
    }

    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    #[inline]
    fn blocks_end(&self, _src: &[u8], i: usize) -> usize {
        i
    }
}

/// The bytes after a backslash that make an escape JSON reads as it stands (`\n`, `\"`...).
const PLAIN_ESCAPES: [u8; 8] = [b'"', b'\\', b'/', b'b', b'f', b'n', b'r', b't'];

/// Whether `c` is one of `PLAIN_ESCAPES`; a `match` (a test holds the two together) is what the
/// scalar paths ask at every escape.
#[inline(always)]
pub(crate) fn is_plain_escape(c: u8) -> bool {
    matches!(c, b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't')
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
    use Literal::*;
    let rest = &src[i.min(src.len())..];
    // The first byte picks the words to compare; most bytes start none.
    // Upper case (`TRUE`, `NULL`) is how SQL and some models spell them; mended like Python's.
    let words: &[(&[u8], Literal)] = match rest.first() {
        Some(b't') => &[(b"true", True)],
        Some(b'f') => &[(b"false", False)],
        Some(b'n') => &[(b"null", Null)],
        Some(b'T') => &[(b"True", PyTrue), (b"TRUE", PyTrue)],
        Some(b'F') => &[(b"False", PyFalse), (b"FALSE", PyFalse)],
        Some(b'N') => &[(b"None", PyNone), (b"NULL", PyNone), (b"NaN", JsNull)],
        Some(b'u') => &[(b"undefined", JsNull)],
        Some(b'I') => &[(b"Infinity", JsNull)],
        _ => return None,
    };
    words.iter().find_map(|&(word, lit)| {
        let ends_word = rest.get(word.len()).is_none_or(|&b| !is_ident(b));
        (rest.starts_with(word) && ends_word).then_some(lit)
    })
}

/// The length of `true`, `false` or `null` at `i`, written whole (no identifier byte after it).
#[inline]
pub(crate) fn json_literal_len(src: &[u8], i: usize) -> Option<usize> {
    // Each word compared at its own, constant length: a few loads, not a call to memcmp.
    let len = match src.get(i)? {
        b't' if src.get(i..i + 4) == Some(b"true") => 4,
        b'f' if src.get(i..i + 5) == Some(b"false") => 5,
        b'n' if src.get(i..i + 4) == Some(b"null") => 4,
        _ => return None,
    };
    src.get(i + len)
        .is_none_or(|&b| !is_ident(b))
        .then_some(len)
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::Strategy;

    proptest::proptest! {
        /// The block and word scans stop where a byte-by-byte scan does, for every delimiter
        /// and start, over bytes dense in stops and escapes.
        #[test]
        fn string_runs_end_at_the_first_stop(
            // Mostly plain bytes, so that whole blocks pass, then escapes (runs of backslashes
            // too) and stops.
            pieces in proptest::collection::vec(
                proptest::prop_oneof![
                    3 => proptest::sample::select(vec![
                        &b"\\\""[..], b"\\n", b"\\\\", b"\\\\\"", b"\\\\\\\"", b"\\u", b"\\'", b"\\\n",
                        b"\"", b"'", b"`", b"\n", b"\x1f", b"\x7f", b"\x80\xff", b"\xe2\x80\x9d",
                    ]).prop_map(<[u8]>::to_vec),
                    1 => proptest::num::u8::ANY.prop_map(|b| vec![b]),
                    8 => (1usize..20).prop_map(|n| vec![b'a'; n]),
                ],
                0..24,
            ),
            start in 0usize..200,
        ) {
            let bytes: Vec<u8> = pieces.concat();
            let start = start.min(bytes.len());
            for delim in [&DOUBLE, &SINGLE, &BACKTICK, &CURLY_DOUBLE] {
                let naive = (start..bytes.len())
                    .find(|&i| delim.stops.stops(bytes[i]))
                    .unwrap_or(bytes.len());
                proptest::prop_assert_eq!(delim.stops.find(&bytes, start), naive);
                let mut naive = start;
                while let Some(&b) = bytes.get(naive) {
                    if !delim.stops.stops(b) {
                        naive += 1;
                    } else if b == b'\\' && bytes.get(naive + 1).is_some_and(|&c| is_plain_escape(c)) {
                        naive += 2;
                    } else {
                        break;
                    }
                }
                proptest::prop_assert_eq!(delim.stops.run_end(&bytes, start), naive);
            }
        }
    }

    #[test]
    fn is_plain_escape_is_the_plain_escapes() {
        let mut set = PLAIN_ESCAPES;
        set.sort();
        let found: Vec<u8> = (0..=255).filter(|&c| is_plain_escape(c)).collect();
        assert_eq!(found, set);
    }

    #[test]
    fn json_literal_len_takes_whole_words_only() {
        for (text, len) in [
            ("true,", 4),
            ("false}", 5),
            ("null]", 4),
            ("true", 4),
            ("null(", 4),
        ] {
            assert_eq!(json_literal_len(text.as_bytes(), 0), Some(len), "{text}");
        }
        for text in [
            "truex,", "true_", "nul,", "True,", "none,", "fals]", "null-1",
        ] {
            assert_eq!(json_literal_len(text.as_bytes(), 0), None, "{text}");
        }
    }

    #[test]
    fn literal_at_reads_every_spelling_and_only_whole_words() {
        use Literal::*;
        for (text, lit) in [
            ("true", True),
            ("false", False),
            ("null", Null),
            ("True", PyTrue),
            ("TRUE", PyTrue),
            ("False", PyFalse),
            ("FALSE", PyFalse),
            ("None", PyNone),
            ("NULL", PyNone),
            ("NaN", JsNull),
            ("undefined", JsNull),
            ("Infinity", JsNull),
        ] {
            assert_eq!(literal_at(text.as_bytes(), 0), Some(lit), "{text}");
            assert_eq!(
                literal_at(format!("[{text}]").as_bytes(), 1),
                Some(lit),
                "{text}"
            );
            assert_eq!(
                literal_at(format!("{text}x").as_bytes(), 0),
                None,
                "{text}x"
            );
        }
        for text in ["tru", "Nul", "nil", "Truth", "NaNa", "", "x"] {
            assert_eq!(literal_at(text.as_bytes(), 0), None, "{text}");
        }
    }
}
