//! Single-pass JSON repair.
//!
//! One engine, two modes: `Engine<true>` is a strict validator that writes nothing and fails at
//! the first fault; `Engine<false>` mends each fault where it finds it and writes the repaired
//! text. Valid input is answered by the strict mode alone and comes back borrowed, unchanged.
//!
//! Linear time for every input: each byte is consumed once by the main loop, containers live on
//! an explicit stack (no recursion), and every heuristic looks ahead a bounded distance (the
//! argument is written out in `lookahead`).
//!
//! The files follow the engine's layers: `kinds` (the table of fault kinds), `prepass`
//! (rewrites of the whole text before the engine runs, and the maps that carry positions back),
//! `engine` (its state, output, faults and the document level around the root value), `grammar`
//! (the state machine over containers, keys, colons and commas), `strings` and `scalars`, and
//! `lookahead` (every read-only look-ahead the heuristics use, with the linear-time argument).

mod engine;
mod grammar;
mod kinds;
mod lookahead;
mod prepass;
mod scalars;
mod strings;
#[cfg(test)]
mod tests;

use std::borrow::Cow;

use crate::error::{Error, ErrorCode, ErrorKind};
use crate::limits::Limits;
pub use engine::MAX_LOGGED;
use engine::{Engine, RepairLog};
use lookahead::escaped_json_at;
use prepass::{original_position, replace_invalid_utf8, unescape_once, PositionMap};

pub use kinds::RepairKind;

/// One fault that was mended: what kind, and the byte offset in the input where it was found.
///
/// A log holds its first [`MAX_LOGGED`] repairs one record each (`count` 1); past them, one
/// record per kind stands for all the later repairs of that kind: `count` says how many, and
/// `position` is where the first of them was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repair {
    pub kind: RepairKind,
    pub position: usize,
    /// How many repairs of `kind` the record stands for, from `position` on: 1 but for the
    /// records of a log past [`MAX_LOGGED`].
    pub count: u32,
}

/// The outcome of a successful repair: the JSON text (borrowed when the input was already valid)
/// and the log of repairs, empty for valid input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Repaired<'a> {
    pub json: Cow<'a, str>,
    pub repairs: Vec<Repair>,
}

/// The outcome of the repair pass alone (`mend`): strict JSON text, the repairs made, and what
/// a caller building objects from the text may skip checking.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mended {
    pub json: String,
    pub repairs: Vec<Repair>,
    /// Every number in `json` has at most 18 characters and no exponent, so each reads back
    /// exactly (an integer within 64 bits, a fraction a finite double): a parser that turns
    /// wider integers into doubles (orjson) gives the values as written. False says only that
    /// some number may not.
    pub plain_numbers: bool,
}

impl Repaired<'_> {
    /// True when the input needed mending.
    pub fn was_repaired(&self) -> bool {
        !self.repairs.is_empty()
    }
}

/// Whether `input`, mended with `repairs`, was cut off rather than left unclosed: it ended inside
/// a string or a literal (`tru`), or right after a key, `:`, `,`, `{` or `[`, so its last member
/// is unfinished. Text whose last member is whole and that only lacks its closers is a forgotten
/// brace, not a cut.
pub fn ends_cut_off(input: &[u8], repairs: &[Repair]) -> bool {
    let end = input.trim_ascii_end().len();
    repairs.iter().any(|r| match r.kind {
        RepairKind::TruncatedString | RepairKind::TruncatedLiteral => true,
        // A key or `:` with nothing after it.
        RepairKind::MissingValue => r.position >= end,
        RepairKind::MissingClosingBrace | RepairKind::MissingClosingBracket => {
            matches!(input[..end].last(), Some(b'{' | b'[' | b':' | b','))
        }
        _ => false,
    })
}

/// Whether `input` plainly is not one strict JSON value: it opens an object or array whose first
/// member cannot start as JSON's would (`{'a'`, `{path:`, `[// `), or that does not end with its
/// closer (cut-off or unclosed arguments), or with a `,` or `:` right before it (a trailing
/// comma), or its last bytes hold what JSON never writes outside a string (see `tail_broken`).
/// A look at both ends, never wrong about valid text: callers skip a strict parse that would
/// read all of it only to refuse it (in Python, by raising, which costs orjson about 1.5 times a
/// valid parse when the fault is near the end).
pub fn plainly_broken(input: &[u8]) -> bool {
    plainly_broken_at_the_ends(input)
        || tail_broken(input, (input.len() / TAIL_SHARE).min(TAIL_WINDOW))
}

/// The tail walk reads at most 1/TAIL_SHARE of the text and at most TAIL_WINDOW bytes: under
/// 1% of a parse on valid text, and enough for the last members of tool arguments, where
/// models write their comments, `None`s and `True`s.
const TAIL_SHARE: usize = 128;
const TAIL_WINDOW: usize = 1024;

/// Whether, walking back from the end over at most `window` bytes, a byte outside strings is one
/// no JSON token holds there: a comment's `/` or `#`, a Python `None` or `True`, a single quote.
/// Outside strings JSON writes only structure, numbers and true/false/null; walking backward, the
/// quote that ends a string is one after an even run of backslashes (an escaped quote outside a
/// string is no JSON either). Never true of valid JSON; a walk that cannot tell (a run of
/// backslashes reaching the window's start) stops unsure.
fn tail_broken(text: &[u8], window: usize) -> bool {
    let stop = text.len() - window.min(text.len());
    // How many backslashes stand right before the quote at `q`; None when the run reaches the
    // window's start, so that whether the quote is escaped cannot be told.
    let backslashes = |q: usize| {
        let run = text[stop..q]
            .iter()
            .rev()
            .take_while(|&&c| c == b'\\')
            .count();
        (run < q - stop).then_some(run)
    };
    let mut i = text.len();
    loop {
        // Outside a string: each byte is checked, back to the quote that ends the string before.
        let end_quote = loop {
            if i == stop {
                return false;
            }
            i -= 1;
            match text[i] {
                b'"' => break i,
                b if !json_outside_strings(b) => return true,
                _ => {}
            }
        };
        match backslashes(end_quote) {
            None => return false,
            Some(run) if run % 2 == 1 => return true,
            Some(_) => {}
        }
        // Inside: back to the quote that opens it, past escaped ones (string contents are most
        // of the bytes, and skipped by a vectorised search).
        loop {
            let Some(q) = memchr::memrchr(b'"', &text[stop..i]) else {
                return false;
            };
            i = stop + q;
            match backslashes(i) {
                None => return false,
                Some(run) if run % 2 == 0 => break,
                Some(_) => {}
            }
        }
    }
}

/// The bytes JSON writes outside strings: whitespace, structure, numbers, true/false/null.
fn json_outside_strings(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t' | b'\n' | b'\r' | b'{' | b'}' | b'[' | b']' | b',' | b':' | b'0'
            ..=b'9'
                | b'-'
                | b'+'
                | b'.'
                | b'e'
                | b'E'
                | b't'
                | b'r'
                | b'u'
                | b'f'
                | b'a'
                | b'l'
                | b's'
                | b'n'
    )
}

fn plainly_broken_at_the_ends(input: &[u8]) -> bool {
    let text = input.trim_ascii();
    let Some((&opener, inside)) = text.split_first() else {
        return false;
    };
    let closer = match opener {
        b'{' => b'}',
        b'[' => b']',
        _ => return false,
    };
    let first_ok = match inside.trim_ascii_start().first() {
        None => false,
        Some(b'"') => true,
        Some(&c) if c == closer => true,
        Some(&c) => {
            opener == b'[' && matches!(c, b'-' | b'0'..=b'9' | b'{' | b'[' | b't' | b'f' | b'n')
        }
    };
    if !first_ok {
        return true;
    }
    match text.split_last() {
        // The opener alone was refused above, so the closer here is another byte.
        Some((&last, rest)) if last == closer => {
            matches!(rest.trim_ascii_end().last(), Some(b',' | b':'))
        }
        _ => true,
    }
}

/// Checks that `input` is one strict JSON value (RFC 8259, UTF-8, no lone surrogate escapes)
/// within the limits.
pub fn validate(input: &[u8], limits: &Limits) -> Result<(), Error> {
    limits.check_size(input.len())?;
    if let Err(e) = std::str::from_utf8(input) {
        return Err(Error {
            kind: ErrorKind::InvalidUtf8,
            position: e.valid_up_to(),
        });
    }
    Engine::<true>::new(input, limits, limits.deadline()).run()
}

/// Repairs `input` into one strict JSON value. Valid input comes back unchanged (borrowed) with
/// an empty log; anything else is mended in one pass, or refused with a coded error.
pub fn repair<'a>(input: &'a [u8], limits: &Limits) -> Result<Repaired<'a>, Error> {
    limits.check_size(input.len())?;
    let valid = std::str::from_utf8(input)
        .ok()
        .filter(|_| !plainly_broken(input));
    if let Some(valid) = valid {
        match Engine::<true>::new(input, limits, limits.deadline()).run() {
            Ok(()) => {
                return Ok(Repaired {
                    json: Cow::Borrowed(valid),
                    repairs: Vec::new(),
                })
            }
            Err(e) if e.code() != ErrorCode::Unparseable => return Err(e),
            Err(_) => {}
        }
    }
    mend(input, limits).map(|m| Repaired {
        json: Cow::Owned(m.json),
        repairs: m.repairs,
    })
}

/// The repair pass alone, for callers that already know `input` is not valid JSON (a strict
/// parser refused it): it skips the validation that `repair` runs first. Valid input still comes
/// back equal, with an empty log. The output nests no deeper than `limits.max_depth`.
pub fn mend(input: &[u8], limits: &Limits) -> Result<Mended, Error> {
    mend_with(input, limits, RepairLog::kept())
}

/// `mend` for a caller that wants the text alone (`loads`): the same output, with no repairs
/// kept (`repairs` is empty).
pub fn mend_unlogged(input: &[u8], limits: &Limits) -> Result<Mended, Error> {
    mend_with(input, limits, RepairLog::dropped())
}

/// `mend` with a log that keeps `cap` repairs in full.
#[cfg(test)]
fn mend_capped(input: &[u8], limits: &Limits, cap: usize) -> Result<Mended, Error> {
    mend_with(input, limits, RepairLog::capped(cap))
}

fn mend_with(input: &[u8], limits: &Limits, repairs: RepairLog) -> Result<Mended, Error> {
    let (mended, encoded_twice) = mend_once(input, limits, repairs)?;
    let Some((at, mut log, decoded)) = encoded_twice else {
        return Ok(mended);
    };
    // A JSON string behind prose or in a fence whose text is an object or an array: arguments
    // encoded twice. Its text is mended in turn; what that finds is logged where the string
    // stood.
    // A fault inside it is reported where the string stood, as its repairs are: positions in the
    // decoded text are no place in the input.
    let (mut again, _) = mend_once(decoded.as_bytes(), limits, log.fresh())
        .map_err(|e| Error { position: at, ..e })?;
    log.push(Repair {
        kind: RepairKind::EscapedJson,
        position: at,
        count: 1,
    });
    // Logged at the string's position, they are no closing repairs of the outer text: the
    // log's cap holds for them (its tail is kept whole only for the text's own closers).
    log.set_tail_from(usize::MAX);
    for r in again.repairs.drain(..) {
        log.push(Repair { position: at, ..r });
    }
    again.repairs = log.finish();
    Ok(again)
}

/// One pass of the engine over `input`. When the text held a JSON string whose own text is an
/// object or array, with text around it that was dropped (a fence, prose), the second part is
/// that string's position, the log so far and the string's text.
#[allow(clippy::type_complexity)]
fn mend_once(
    input: &[u8],
    limits: &Limits,
    mut repairs: RepairLog,
) -> Result<(Mended, Option<(usize, RepairLog, String)>), Error> {
    limits.check_size(input.len())?;
    // Positions in the text the engine reads, mapped back to the input's (the two differ when
    // invalid UTF-8 was replaced or one level of escaping taken off).
    let mut maps: Vec<PositionMap> = Vec::new();
    let utf8_error = std::str::from_utf8(input).err();
    let mut text: Cow<'_, [u8]> = match utf8_error {
        None => Cow::Borrowed(input),
        Some(e) => {
            repairs.push(Repair {
                kind: RepairKind::InvalidUtf8,
                position: e.valid_up_to(),
                count: 1,
            });
            let (lossy, map) = replace_invalid_utf8(input);
            maps.push(map);
            Cow::Owned(lossy)
        }
    };
    if let Some(at) = escaped_json_at(&text) {
        repairs.push(Repair {
            kind: RepairKind::EscapedJson,
            position: original_position(&maps, at),
            count: 1,
        });
        let (mut unescaped, map) = unescape_once(&text);
        drop_quotes_around_the_value(&mut unescaped);
        maps.push(map);
        text = Cow::Owned(unescaped);
    }
    let before = repairs.items.len();
    repairs.set_tail_from(text.trim_ascii_end().len());
    let mut engine = Engine::<false>::new(&text, limits, limits.deadline());
    engine.repairs = repairs;
    if let Err(mut e) = engine.run() {
        e.position = original_position(&maps, e.position);
        return Err(e);
    }
    if engine.unwrapped && engine.out.trim_ascii().first() == Some(&b'"') {
        let decoded = serde_json::from_slice::<String>(&engine.out)
            .ok()
            .filter(|s| matches!(s.trim_start().as_bytes().first(), Some(b'{' | b'[')));
        if let Some(decoded) = decoded {
            let at = original_position(&maps, engine.root_at);
            let mut log = std::mem::replace(&mut engine.repairs, RepairLog::dropped());
            log.map_positions(before, |p| original_position(&maps, p));
            let empty = Mended {
                json: String::new(),
                repairs: Vec::new(),
                plain_numbers: true,
            };
            return Ok((empty, Some((at, log, decoded))));
        }
    }
    let mut log = std::mem::replace(&mut engine.repairs, RepairLog::dropped()).finish();
    if !maps.is_empty() {
        for r in &mut log[before..] {
            r.position = original_position(&maps, r.position);
        }
    }
    let json = String::from_utf8(engine.out)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    Ok((
        Mended {
            json,
            repairs: log,
            plain_numbers: !engine.wide_numbers,
        },
        None,
    ))
}

/// Unescaped text whose first bracket stands right after a quote, and whose last byte (but
/// for whitespace) is a quote: the quotes of the JSON string the value was written into
/// (`Here it is: "{\"a\": 1}"`), each made a space. The positions stay as they were.
fn drop_quotes_around_the_value(text: &mut [u8]) {
    let Some(open) = memchr::memchr2(b'{', b'[', text) else {
        return;
    };
    let end = text.trim_ascii_end().len();
    if open > 0 && text[open - 1] == b'"' && end > open + 1 && text[end - 1] == b'"' {
        text[open - 1] = b' ';
        text[end - 1] = b' ';
    }
}

/// Text of bytes that may not be UTF-8, each invalid sequence read as U+FFFD, and a surrogate
/// encoded on its own (how Python's `surrogatepass` writes a lone surrogate of a `str`) as one
/// U+FFFD: as the repair pass reads the same bytes.
pub fn utf8_lossy(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => text.to_owned(),
        Err(_) => String::from_utf8(prepass::replace_invalid_utf8(bytes).0)
            .expect("every invalid sequence was replaced"),
    }
}

/// `input` mended when all it needs is encoding repairs (a byte that is not UTF-8, a lone
/// surrogate escape, a byte order mark), which change how a text is written, never what it
/// says: one bad token of a model's output puts such a thing in a line strict parsers refuse.
/// None when the text needs another repair, or none.
pub fn encoding_mended(input: &[u8], limits: &Limits) -> Option<String> {
    const ENCODING: [RepairKind; 3] = [
        RepairKind::InvalidUtf8,
        RepairKind::InvalidEscape,
        RepairKind::ByteOrderMark,
    ];
    let mended = repair(input, limits).ok()?;
    let only_encoding =
        !mended.repairs.is_empty() && mended.repairs.iter().all(|r| ENCODING.contains(&r.kind));
    only_encoding.then(|| mended.json.into_owned())
}
