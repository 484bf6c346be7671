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
    /// string in one call: code in tool arguments holds an escape every few bytes (one in
    /// eight in the bench's), so the block scan reads past escapes instead of stopping there.
    /// With `LINES`, a raw line feed is not a stop either (the repair pass escapes those in
    /// the run it copies: code pasted into a string has one every line), and `lines` is set
    /// when the run may hold one. `i` must not be the byte a backslash escapes.
    #[inline(always)]
    pub(crate) fn run_end<const LINES: bool>(
        &self,
        src: &[u8],
        mut i: usize,
        lines: &mut bool,
    ) -> usize {
        // Keys and most values end within a word: the blocks are for longer runs.
        if src
            .get(i..i + 8)
            .is_some_and(|chunk| self.word_stops(chunk) == 0)
        {
            i = self.blocks_end::<LINES>(src, i + 8, lines);
        }
        loop {
            i = self.find(src, i);
            match src.get(i) {
                // Past the escape, on in blocks: where there is one escape, more follow.
                Some(b'\\') if src.get(i + 1).is_some_and(|&c| is_plain_escape(c)) => {
                    i = self.blocks_end::<LINES>(src, i + 2, lines);
                }
                Some(b'\n') if LINES => {
                    *lines = true;
                    i = self.blocks_end::<LINES>(src, i + 1, lines);
                }
                _ => return i,
            }
        }
    }

    /// `run_end` passing raw line feeds, out of line: the string loop's common path (no raw
    /// line feed met) stays as small as it was.
    #[inline(never)]
    pub(crate) fn run_end_past_lines(&self, src: &[u8], i: usize, lines: &mut bool) -> usize {
        self.run_end::<true>(src, i, lines)
    }

    /// Past the blocks from `i` that hold no stop but plain escapes (16 bytes, then 64 at a
    /// time, then 16 again near the end). Stops, backslashes and escape letters are found with
    /// SSE2 compares; which bytes the backslashes escape is worked out on the bit masks
    /// (`escaped_bytes`). A run of backslashes that reaches the end of a block starts the next
    /// block; one that fills a whole block is left to `find`.
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    #[inline]
    fn blocks_end<const LINES: bool>(&self, src: &[u8], i: usize, lines: &mut bool) -> usize {
        // SAFETY: SSE2 is enabled for this build (the x86-64 baseline: every x86-64 processor
        // has it), as the cfg above checks.
        unsafe { self.blocks_end_sse2::<LINES>(src, i, lines) }
    }

    /// Out of line: only runs longer than a word, or going on after an escape, come here.
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    #[target_feature(enable = "sse2")]
    #[inline(never)]
    fn blocks_end_sse2<const LINES: bool>(
        &self,
        src: &[u8],
        mut i: usize,
        lines: &mut bool,
    ) -> usize {
        // 16 bytes at a time at first (most values that come here end within a few blocks),
        // then 64, then 16 again near the end.
        let start = i;
        loop {
            let step = if i >= start + 64 && src.len() >= i + 64 {
                self.chunk_sse2::<4, LINES>(src, i, lines)
            } else if src.len() >= i + 16 {
                self.chunk_sse2::<1, LINES>(src, i, lines)
            } else {
                return i;
            };
            match step {
                Ok(next) => i = next,
                Err(stop) => return stop,
            }
        }
    }

    /// The block scan over `BLOCKS` blocks of 16 bytes from `i` (which `src` holds): where the
    /// next chunk starts, or `Err` with where the scan stops.
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    #[target_feature(enable = "sse2")]
    #[inline]
    fn chunk_sse2<const BLOCKS: usize, const LINES: bool>(
        &self,
        src: &[u8],
        i: usize,
        lines: &mut bool,
    ) -> Result<usize, usize> {
        use std::arch::x86_64::*;
        debug_assert!(i + 16 * BLOCKS <= src.len());
        // SAFETY: the 16 * BLOCKS bytes from `i` are within `src` (the caller checks); the
        // loads have no alignment requirement.
        let load = |k: usize| unsafe { _mm_loadu_si128(src.as_ptr().add(i + 16 * k).cast()) };
        let (mut ends, mut backslashes) = (0u64, 0u64);
        for k in 0..BLOCKS {
            let v = load(k);
            let mut controls = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1F)), v);
            if LINES {
                // A feed past the run's end sets `lines` too: then the copy finds none.
                let feeds = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\n' as i8));
                *lines |= _mm_movemask_epi8(feeds) != 0;
                controls = _mm_andnot_si128(feeds, controls);
            }
            let stop = _mm_or_si128(
                _mm_or_si128(
                    _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8)),
                    _mm_cmpeq_epi8(v, _mm_set1_epi8(self.quote as i8)),
                ),
                controls,
            );
            ends |= (_mm_movemask_epi8(stop) as u16 as u64) << (16 * k);
            let b = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
            backslashes |= (_mm_movemask_epi8(b) as u16 as u64) << (16 * k);
        }
        if backslashes == 0 {
            return if ends == 0 {
                Ok(i + 16 * BLOCKS)
            } else {
                Err(i + ends.trailing_zeros() as usize)
            };
        }
        let mut plain = 0u64;
        for k in 0..BLOCKS {
            let v = load(k);
            let mut letters = _mm_setzero_si128();
            for c in PLAIN_ESCAPES {
                letters = _mm_or_si128(letters, _mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8)));
            }
            plain |= (_mm_movemask_epi8(letters) as u16 as u64) << (16 * k);
        }
        match settle(ends, backslashes, plain, 16 * BLOCKS) {
            Settled::Stop(at) => Err(i + at),
            // The next chunk starts at the run, whose first backslash is not escaped.
            Settled::RunFrom(0) => Err(i),
            Settled::RunFrom(at) => Ok(i + at),
            Settled::Passed => Ok(i + 16 * BLOCKS),
        }
    }

    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    #[inline]
    fn blocks_end<const LINES: bool>(&self, _src: &[u8], i: usize, _lines: &mut bool) -> usize {
        i
    }
}

/// The bytes after a backslash that make an escape JSON reads as it stands (`\n`, `\"`...).
const PLAIN_ESCAPES: [u8; 8] = [b'"', b'\\', b'/', b'b', b'f', b'n', b'r', b't'];

const EVEN_BITS: u64 = 0x5555_5555_5555_5555;

/// What the block scan finds in a block with backslashes.
#[derive(Debug, PartialEq, Eq)]
enum Settled {
    /// A stop that no backslash escapes, or the backslash of an escape that is not plain
    /// (`\u`, `\x`): the offset where the scan stops.
    Stop(usize),
    /// No stop before a run of backslashes that reaches the block's end (its escaped byte is
    /// past it): the offset of the run's first backslash, where the next block starts.
    RunFrom(usize),
    /// No stop: the scan goes on past the block.
    Passed,
}

/// What the block scan finds in a block of `width` bytes (16 to 64) with backslashes. Bit k of
/// `ends`, `backslashes` and `plain` stands for byte k: a stop, a backslash, an escape letter.
/// The block's first byte must not be escaped.
#[inline(always)]
fn settle(ends: u64, backslashes: u64, plain: u64, width: usize) -> Settled {
    let block = u64::MAX >> (64 - width);
    let settled = if backslashes >> (width - 1) & 1 == 1 {
        let run = (backslashes << (64 - width)).leading_ones() as usize;
        (1u64 << (width - run)) - 1
    } else {
        block
    };
    let escaped = escaped_bytes(backslashes);
    let unplain = (escaped & !plain & settled) >> 1;
    let stops = ends & !escaped & settled | unplain;
    if stops != 0 {
        Settled::Stop(stops.trailing_zeros() as usize)
    } else if settled != block {
        Settled::RunFrom(settled.count_ones() as usize)
    } else {
        Settled::Passed
    }
}

/// Of a block's backslashes (bit k: byte k is one), the bytes they escape: the byte after each
/// run of odd length (`\n`, `\\\n`). The block's first byte must not be escaped. A run's length
/// is odd when it starts and ends on bits of different parity; adding the run's first bit to
/// the run carries a one to the bit after it, so the runs starting on even bits and those
/// starting on odd bits are carried apart, and each end kept on the other parity. A run that
/// reaches bit 63 carries out of the word: its end is not here (the caller leaves such a run).
#[inline(always)]
const fn escaped_bytes(backslashes: u64) -> u64 {
    let firsts = backslashes & !(backslashes << 1);
    let after_even = backslashes.wrapping_add(firsts & EVEN_BITS) & !backslashes;
    let after_odd = backslashes.wrapping_add(firsts & !EVEN_BITS) & !backslashes;
    after_even & !EVEN_BITS | after_odd & EVEN_BITS
}

/// Whether `c` is one of `PLAIN_ESCAPES`; a `match` (a test holds the two together) is what the
/// scalar paths ask at every escape.
#[inline(always)]
pub(crate) fn is_plain_escape(c: u8) -> bool {
    matches!(c, b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't')
}

/// Where the string whose content starts at `i` ends: the index of its closing `quote` (`"` or
/// `'`), or `src.len()` when it never closes. A backslash escapes the byte after it, whatever
/// it is. The block scan of `StringStops` passes the content and its plain escapes, so a string
/// of a megabyte of code is not walked a byte at a time.
pub(crate) fn quoted_end(src: &[u8], mut i: usize, quote: u8) -> usize {
    let stops = if quote == b'"' {
        &DOUBLE.stops
    } else {
        &SINGLE.stops
    };
    let mut lines = false;
    while i < src.len() {
        i = stops.run_end_past_lines(src, i, &mut lines);
        match src.get(i) {
            Some(&b) if b == quote => return i,
            Some(b'\\') => i += 2,
            // A control character, or the other quote.
            Some(_) => i += 1,
            None => break,
        }
    }
    src.len()
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
/// A backtick closed by an acute accent or an apostrophe (`` `a´ ``, `` `a' ``): keyboards and
/// fonts that pair them.
pub(crate) static BACKTICK_ACUTE: Delimiter = delimiter("`", "\u{00b4}", "\u{00b4}");
pub(crate) static BACKTICK_APOSTROPHE: Delimiter = delimiter("`", "'", "'");

/// Unicode spaces outside strings (no-break, en to hair, narrow no-break, ideographic) and
/// the invisible characters that paste along with them (zero-width space, joiners, word
/// joiner, the Mongolian vowel separator, a byte order mark amid the text): the length of the
/// one at `i`, if any. Text pasted from documents carries them between tokens.
pub(crate) fn unicode_space_len(src: &[u8], i: usize) -> Option<usize> {
    match src.get(i..)? {
        [0xC2, 0xA0, ..] => Some(2),
        [0xE2, 0x80, 0x80..=0x8D | 0xAF, ..]
        | [0xE2, 0x81, 0x9F | 0xA0, ..]
        | [0xE3, 0x80, 0x80, ..]
        | [0xE1, 0xA0, 0x8E, ..]
        | [0xEF, 0xBB, 0xBF, ..] => Some(3),
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
        Some(b'N') => &[
            (b"None", PyNone),
            (b"NULL", PyNone),
            (b"Null", PyNone),
            (b"NaN", JsNull),
        ],
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
                        // Runs of backslashes of both parities, to end blocks of 16 and 64.
                        b"\\\\\\\\\\\\\\", b"\\\\\\\\\\\\\\\\", b"\\\\\\u",
                    ]).prop_map(<[u8]>::to_vec),
                    1 => proptest::num::u8::ANY.prop_map(|b| vec![b]),
                    8 => (1usize..40).prop_map(|n| vec![b'a'; n]),
                ],
                0..32,
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
                let mut lines = false;
                proptest::prop_assert_eq!(delim.stops.run_end::<false>(&bytes, start, &mut lines), naive);
                proptest::prop_assert!(!lines);
                // With LINES, line feeds are passed like plain bytes.
                let mut naive = start;
                while let Some(&b) = bytes.get(naive) {
                    if !delim.stops.stops(b) || b == b'\n' {
                        naive += 1;
                    } else if b == b'\\' && bytes.get(naive + 1).is_some_and(|&c| is_plain_escape(c)) {
                        naive += 2;
                    } else {
                        break;
                    }
                }
                proptest::prop_assert_eq!(delim.stops.run_end::<true>(&bytes, start, &mut lines), naive);
                // Set whenever the run holds a line feed (and maybe when one only follows it).
                proptest::prop_assert!(lines || !bytes[start..naive].contains(&b'\n'));
            }
            // A quoted string's end, as a byte loop finds it (a backslash escapes any byte).
            for quote in [b'"', b'\''] {
                let mut naive = start;
                while naive < bytes.len() && bytes[naive] != quote {
                    naive += if bytes[naive] == b'\\' { 2 } else { 1 };
                }
                proptest::prop_assert_eq!(quoted_end(&bytes, start, quote), naive.min(bytes.len()));
            }
        }
    }

    /// The bytes escaped by the runs in `backslashes`, read bit by bit (a run reaching bit 63
    /// escapes nothing here).
    fn escaped_one_by_one(backslashes: u64) -> u64 {
        let (mut escaped, mut run) = (0u64, 0);
        for bit in 0..64 {
            if backslashes >> bit & 1 == 1 {
                run += 1;
            } else {
                if run % 2 == 1 {
                    escaped |= 1 << bit;
                }
                run = 0;
            }
        }
        escaped
    }

    #[test]
    fn escaped_bytes_are_those_after_odd_runs() {
        // Every pattern of 16 bits, placed low, high and across the middle of the word, and a
        // spread of whole words.
        for low in 0..=u16::MAX as u64 {
            for word in [low, low << 48, low << 24, low * 0x0001_0001_0001_0001] {
                assert_eq!(escaped_bytes(word), escaped_one_by_one(word), "{word:064b}");
            }
        }
        let mut word = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..100_000 {
            word = word
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            for w in [word, word & word >> 1, word | word >> 3] {
                assert_eq!(escaped_bytes(w), escaped_one_by_one(w), "{w:064b}");
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
