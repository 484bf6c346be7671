//! Hard limits, checked before and during work.

use std::fmt;
use std::time::{Duration, Instant};

use crate::error::{Error, ErrorKind};

/// Size, depth and time limits for one call; `Limits::DEFAULT` holds the defaults every layer
/// uses (the Python signatures and configuration read them from here).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest input accepted, in bytes (default 1 MiB).
    pub max_size: usize,
    /// Deepest nesting of objects and arrays accepted (default 64, at most `MAX_DEPTH_CEILING`).
    pub max_depth: usize,
    /// Deadline for one repair in milliseconds (default 100); 0 disables it.
    pub timeout_ms: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}

impl Limits {
    /// The defaults: 1 MiB, 64 levels, 100 ms. Tool arguments are small and shallow; these
    /// bound the work a hostile input can cause without refusing real ones.
    pub const DEFAULT: Limits = Limits {
        max_size: 1 << 20,
        max_depth: 64,
        timeout_ms: 100,
    };

    /// The largest `max_depth` that may be set for work that validates values or walks them
    /// (`Limits::new` refuses more); repair alone, which keeps a stack of its own and returns
    /// text, may go deeper. Schema validation recurses per level of the value (several frames
    /// per level when the schema refers to itself) and parsed values are dropped recursively. Measured on a 2 MB thread stack, the deepest of these (errors reported
    /// through a self-referring `anyOf` schema) overflows at about 1,700 levels in a release
    /// build and 600 in a debug build; 500 keeps a 3x margin there and more than 10x on an 8 MB
    /// main thread, far beyond the nesting of any tool's arguments.
    pub const MAX_DEPTH_CEILING: usize = 500;

    /// Limits for validation and the walks over values: `max_depth` checked against the ceiling.
    pub fn new(max_size: usize, max_depth: usize, timeout_ms: u64) -> Result<Limits, LimitsError> {
        if max_depth > Limits::MAX_DEPTH_CEILING {
            return Err(LimitsError::DepthOverCeiling { max_depth });
        }
        Ok(Limits {
            max_size,
            max_depth,
            timeout_ms,
        })
    }

    /// Refuses an input over `max_size` before any work is done on it.
    pub fn check_size(&self, len: usize) -> Result<(), Error> {
        if len > self.max_size {
            return Err(Error {
                kind: ErrorKind::TooLarge {
                    size: len,
                    limit: self.max_size,
                },
                position: 0,
            });
        }
        Ok(())
    }

    pub(crate) fn deadline(&self) -> Deadline {
        Deadline {
            at: (self.timeout_ms > 0)
                .then(|| Instant::now() + Duration::from_millis(self.timeout_ms)),
            limit_ms: self.timeout_ms,
        }
    }
}

// The defaults are settings like any other: within the ceiling.
const _: () = assert!(Limits::DEFAULT.max_depth <= Limits::MAX_DEPTH_CEILING);

/// A limit that may not be set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitsError {
    /// `max_depth` over `Limits::MAX_DEPTH_CEILING`.
    DepthOverCeiling { max_depth: usize },
}

impl fmt::Display for LimitsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LimitsError::DepthOverCeiling { max_depth } => write!(
                f,
                "max_depth={max_depth} is over the ceiling of {}: nesting that deep would \
                 overflow the stack of the walks that recurse per level",
                Limits::MAX_DEPTH_CEILING
            ),
        }
    }
}

impl std::error::Error for LimitsError {}

/// Where the first number of `json` past the range of a double starts (`1e400` reads as
/// infinity), skipping strings; None when every number fits. One pass over the bytes.
pub fn first_number_out_of_range(json: &[u8]) -> Option<usize> {
    let mut i = 0;
    while i < json.len() {
        match json[i] {
            b'"' => {
                i = crate::scan::quoted_end(json, i + 1, b'"') + 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < json.len()
                    && matches!(json[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    i += 1;
                }
                let literal = std::str::from_utf8(&json[start..i]).unwrap_or("");
                if literal.parse::<f64>().is_ok_and(f64::is_infinite) {
                    return Some(start);
                }
            }
            _ => i += 1,
        }
    }
    None
}

/// The fewest digits an integer literal has when it is past 64 bits (2^64 has 20): such an
/// integer is one a reader that holds 64-bit integers (orjson) gives back as a double.
pub const WIDE_INTEGER_DIGITS: usize = 20;

/// Whether `json` may hold an integer literal of `WIDE_INTEGER_DIGITS` digits or more. False
/// means none is there, so a big whole double a reader gave back was written as a float
/// (`7.18e+20`), not an integer it rounded; digits in strings count too (a true answer only
/// sends the caller the exact way). Bytes are looked at `WIDE_INTEGER_DIGITS` apart (every run
/// that long holds one of them), so text with few digits costs a twentieth of a pass.
pub fn may_hold_wide_integer(json: &[u8]) -> bool {
    const RUN: usize = WIDE_INTEGER_DIGITS;
    let mut k = RUN - 1;
    while k < json.len() {
        if !json[k].is_ascii_digit() {
            k += RUN;
            continue;
        }
        // A run of RUN digits through k holds k - RUN/2 or k + RUN/2 - 1 (it starts at one, or
        // after it and so reaches the other): with neither a digit, no run here is that long.
        let digit_at = |i: usize| json.get(i).is_some_and(u8::is_ascii_digit);
        if !digit_at(k.wrapping_sub(RUN / 2)) && !digit_at(k + RUN / 2 - 1) {
            k += RUN;
            continue;
        }
        let start = k - json[..k]
            .iter()
            .rev()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let end = k + json[k..].iter().take_while(|b| b.is_ascii_digit()).count();
        if end - start >= RUN && is_integer_literal(json, start, end) {
            return true;
        }
        // The next run starts after `end`; one of RUN bytes in a row from there is looked at.
        k = end + RUN;
    }
    false
}

/// Whether the digits `json[start..end]` are an integer: not a fraction, not an exponent, not
/// the whole part of a float.
fn is_integer_literal(json: &[u8], start: usize, end: usize) -> bool {
    let before = start.checked_sub(1).map(|i| json[i]);
    let exponent_sign =
        before == Some(b'-') && start >= 2 && matches!(json[start - 2], b'e' | b'E');
    !matches!(before, Some(b'.' | b'e' | b'E' | b'+'))
        && !exponent_sign
        && !matches!(json.get(end), Some(b'.' | b'e' | b'E'))
}

/// Whether `json` holds more opening brackets than `max_depth`: when it does not, it cannot nest
/// deeper. memchr2 jumps between brackets (SIMD) and stops at the limit, so string-heavy
/// arguments cost a fraction of a byte each.
pub fn may_exceed_depth(json: &[u8], max_depth: usize) -> bool {
    memchr::memchr2_iter(b'{', b'[', json)
        .nth(max_depth)
        .is_some()
}

/// Whether `json`, already known to be valid, nests deeper than `max_depth`. For a fast path
/// that parses with a library which does not limit depth; brackets inside strings are skipped.
pub fn exceeds_depth(json: &[u8], max_depth: usize) -> bool {
    if !may_exceed_depth(json, max_depth) {
        return false;
    }
    // Only the bytes between strings can hold structure, so jump from quote to quote (SIMD) and
    // walk just those stretches; string bodies, most of the bytes of tool arguments, are skipped.
    let mut depth = 0usize;
    let mut outside_from = Some(0);
    for quote in memchr::memchr_iter(b'"', json) {
        match outside_from {
            Some(from) => {
                if nests_deeper(&json[from..quote], &mut depth, max_depth) {
                    return true;
                }
                outside_from = None;
            }
            None => {
                let backslashes = json[..quote]
                    .iter()
                    .rev()
                    .take_while(|&&b| b == b'\\')
                    .count();
                if backslashes % 2 == 0 {
                    outside_from = Some(quote + 1);
                }
            }
        }
    }
    outside_from.is_some_and(|from| nests_deeper(&json[from..], &mut depth, max_depth))
}

fn nests_deeper(structure: &[u8], depth: &mut usize, max_depth: usize) -> bool {
    for &b in structure {
        match b {
            b'{' | b'[' => {
                *depth += 1;
                if *depth > max_depth {
                    return true;
                }
            }
            b'}' | b']' => *depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// A deadline that is cheap to poll: callers check it every few thousand steps, not every byte.
pub(crate) struct Deadline {
    at: Option<Instant>,
    limit_ms: u64,
}

impl Deadline {
    pub(crate) fn check(&self, position: usize) -> Result<(), Error> {
        match self.at {
            Some(at) if Instant::now() >= at => Err(Error {
                kind: ErrorKind::Timeout {
                    limit_ms: self.limit_ms,
                },
                position,
            }),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
impl Deadline {
    /// A deadline that has already passed, for testing the timeout path without sleeping.
    pub(crate) fn expired(limit_ms: u64) -> Self {
        Deadline {
            at: Some(Instant::now()),
            limit_ms,
        }
    }
}

#[cfg(test)]
mod tests {
    proptest::proptest! {
        /// The strided look finds what a look at every digit run finds.
        #[test]
        fn the_strided_look_misses_no_run(text in "([0-9]{15,25}|[.eE+\\- x]{1,2}){0,10}") {
            let b = text.as_bytes();
            let mut naive = false;
            let mut i = 0;
            while i < b.len() {
                let run = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
                if run >= super::WIDE_INTEGER_DIGITS && super::is_integer_literal(b, i, i + run) {
                    naive = true;
                }
                i += run.max(1);
            }
            proptest::prop_assert_eq!(super::may_hold_wide_integer(b), naive, "{:?}", text);
        }
    }

    #[test]
    fn wide_integers_are_found_wherever_they_stand_and_floats_are_not() {
        use super::may_hold_wide_integer as wide;
        let big = "18446744073709551616";
        for text in [
            big.to_string(),
            format!("[{big}]"),
            format!("{{\"a\": -{big}, \"b\": 1}}"),
            format!("{{\"a\": 1.5, \"b\": 7.18e+20, \"c\": {big}9}}"),
            format!("x{big}"),
        ] {
            // At every offset, so the stride meets the run anywhere in it.
            for pad in 0..25 {
                let padded = format!("{}{text}", " ".repeat(pad));
                assert!(wide(padded.as_bytes()), "{padded}");
            }
        }
        for text in [
            "{\"a\": 7.18e+20, \"b\": 1.534e+16, \"c\": 1e-300}".to_string(),
            format!("[0.{big}, 1e{big}, 1e+{big}, 1E-{big}, {big}.5, {big}e3]"),
            "[1234567890123456789, 9223372036854775807, -9223372036854775808]".to_string(),
            String::new(),
        ] {
            for pad in 0..25 {
                let padded = format!("{}{text}", " ".repeat(pad));
                assert!(!wide(padded.as_bytes()), "{padded}");
            }
        }
    }

    use super::{exceeds_depth, first_number_out_of_range, Limits, LimitsError};

    #[test]
    fn numbers_past_a_double_are_found_outside_strings_only() {
        assert_eq!(
            first_number_out_of_range(br#"{"a": 1, "b": -1e400}"#),
            Some(14)
        );
        assert_eq!(
            first_number_out_of_range(br#"{"a": "1e400", "b": 1e308}"#),
            None
        );
        assert_eq!(first_number_out_of_range(br#"["\"1e400", 1e-400]"#), None);
        let digits = format!("[{}]", "9".repeat(309));
        assert_eq!(first_number_out_of_range(digits.as_bytes()), Some(1));
        assert_eq!(first_number_out_of_range(b"[99999999999999999999]"), None);
    }

    #[test]
    fn defaults_are_one_constant() {
        assert_eq!(Limits::default(), Limits::DEFAULT);
    }

    #[test]
    fn depth_over_the_ceiling_is_refused() {
        let ceiling = Limits::MAX_DEPTH_CEILING;
        assert_eq!(Limits::new(10, ceiling, 5).unwrap().max_depth, ceiling);
        let err = Limits::new(10, ceiling + 1, 5).unwrap_err();
        assert_eq!(
            err,
            LimitsError::DepthOverCeiling {
                max_depth: ceiling + 1
            }
        );
        assert!(err.to_string().contains(&format!("ceiling of {ceiling}")));
    }

    #[test]
    fn depth_counts_brackets_outside_strings_only() {
        assert!(!exceeds_depth(br#"[[1], {"a": [2]}]"#, 3));
        assert!(exceeds_depth(br#"[[1], {"a": [[2]]}]"#, 3));
        assert!(!exceeds_depth(br#"["[[[[", {"k\"[[[": "\\"}]"#, 2));
        assert!(!exceeds_depth(b"", 0));
    }
}
