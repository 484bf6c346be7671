//! The engine's state and its outer layer: output, faults, the deadline, and the document level
//! (what may stand before and after the root value, whitespace and comments).

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;

use super::lookahead::{
    key_missing_colon_at, line_comment_len, list_marker_end, looks_like_element, looks_like_key,
};
use super::{Repair, RepairKind};
use crate::error::Error;
use crate::limits::{Deadline, Limits};
use crate::scan::{self, is_ident, literal_at};

/// Units of work (loop turns and look-ahead bytes) between two looks at the clock.
const CHECK_EVERY: u64 = 1024;

/// A container on the explicit stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Frame {
    Object,
    Array,
    /// A redundant `{` met where a key belongs; its `}` is dropped, its members join the object.
    Brace,
}

impl Frame {
    pub(super) fn closes_with(self, b: u8) -> bool {
        match self {
            Frame::Object | Frame::Brace => b == b'}',
            Frame::Array => b == b']',
        }
    }
}

/// What the grammar expects next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Expect {
    RootValue,
    /// After `:`.
    MemberValue,
    /// After `[`.
    FirstElement,
    /// After `,` in an array.
    NextElement,
    /// After `{`.
    FirstKey,
    /// After `,` in an object.
    NextKey,
    Colon,
    /// After a value inside a container: `,` or a closer.
    AfterValue,
    /// The root value is complete.
    Done,
}

/// An array written for a Python tuple or set.
#[derive(Clone, Copy, Debug)]
pub(super) struct PythonArray {
    /// Its index in `stack`.
    pub(super) at: usize,
    /// The closer it awaits: `)` or `}`.
    pub(super) closer: u8,
    /// Where its `[` stands in the output.
    pub(super) opened: usize,
    /// A comma was met among its members (`(1)` is no tuple, `(1,)` is).
    pub(super) comma: bool,
}

/// Which container a `,` after a closer leads into, judged by what follows the comma.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum After {
    CommaKey,
    CommaElement,
    End,
    Other,
}

/// The repairs made, in input order; or, for a caller that only wants the text (`loads`), none
/// kept: a dense megabyte makes 160,000 of them, 2.5 MB of log grown by copying.
///
/// A log kept holds the first [`MAX_LOGGED`] repairs in full; past them, it counts each kind's
/// repairs and where the first was, and `finish` writes one record per kind for them (its
/// `count` says how many): 16 MiB of commas logs 1,000 records and one summary, not 16.7 million
/// records. The repairs that close the text at its end (a missing value, closers; all but control
/// characters, of which trailing whitespace in a string can hold millions) are kept in full
/// wherever the log stands, as `ends_cut_off` reads their positions: the open containers bound
/// them.
pub(super) struct RepairLog {
    pub(super) items: Vec<Repair>,
    keep: bool,
    /// How many repairs are kept in full ([`MAX_LOGGED`]; tests set fewer).
    cap: usize,
    /// Per kind, the repairs past the cap: how many, and the position of the first.
    elided: [(u32, usize); RepairKind::ALL.len()],
    /// How many repairs are in `elided`.
    elided_total: usize,
    /// Repairs at or past this position (the end of the text but for trailing whitespace) are
    /// the text's closing ones.
    tail_from: usize,
}

/// The most repairs a log holds in full: enough to show what a text needed, a bounded amount of
/// memory (16 KiB) whatever the text.
pub const MAX_LOGGED: usize = 1000;

impl RepairLog {
    pub(super) fn kept() -> Self {
        RepairLog {
            items: Vec::new(),
            keep: true,
            cap: MAX_LOGGED,
            elided: [(0, 0); RepairKind::ALL.len()],
            elided_total: 0,
            tail_from: usize::MAX,
        }
    }

    pub(super) fn dropped() -> Self {
        RepairLog {
            keep: false,
            ..RepairLog::kept()
        }
    }

    /// A log that keeps `cap` repairs in full rather than [`MAX_LOGGED`].
    #[cfg(test)]
    pub(super) fn capped(cap: usize) -> Self {
        RepairLog {
            cap,
            ..RepairLog::kept()
        }
    }

    /// An empty log that keeps repairs as this one does.
    pub(super) fn fresh(&self) -> Self {
        RepairLog {
            keep: self.keep,
            cap: self.cap,
            ..RepairLog::kept()
        }
    }

    /// Repairs at or past `end` close the text (see the type).
    pub(super) fn set_tail_from(&mut self, end: usize) {
        self.tail_from = end;
    }

    /// Maps the positions of the repairs kept from item `from` on, and the first positions of
    /// those counted past the cap, from the text read to the input (see `PositionMap`).
    pub(super) fn map_positions(&mut self, from: usize, map: impl Fn(usize) -> usize) {
        for r in &mut self.items[from..] {
            r.position = map(r.position);
        }
        for (count, first) in &mut self.elided {
            if *count > 0 {
                *first = map(*first);
            }
        }
    }

    #[inline(always)]
    pub(super) fn push(&mut self, repair: Repair) {
        if self.keep {
            if (self.items.len() < self.cap && self.elided_total == 0)
                || (repair.position >= self.tail_from
                    && repair.kind != RepairKind::ControlCharacter)
            {
                self.items.push(repair);
            } else {
                self.elide(repair);
            }
        }
    }

    #[cold]
    fn elide(&mut self, repair: Repair) {
        let (count, first) = &mut self.elided[repair.kind as usize];
        if *count == 0 {
            *first = repair.position;
        }
        *count = count.saturating_add(repair.count);
        self.elided_total += 1;
    }

    /// Takes back the repairs logged at or past `end` (the text from there is read again), of
    /// which there were `logged`, all of `kind`: those kept in full are dropped, the others no
    /// longer counted. They are the latest of their kind, so the first position stays right.
    pub(super) fn take_back_from(&mut self, end: usize, kind: RepairKind, logged: usize) {
        let held = self.items.len();
        // Only the repairs of `kind` are taken back: a record logged before the engine ran (an
        // escaping taken off, at its place in the input) may stand past `end`, a place in the text.
        self.items.retain(|r| r.position < end || r.kind != kind);
        let counted = logged.saturating_sub(held - self.items.len());
        if counted > 0 {
            let (count, _) = &mut self.elided[kind as usize];
            let taken = counted.min(*count as usize);
            *count -= taken as u32;
            self.elided_total = self.elided_total.saturating_sub(taken);
        }
    }

    /// The log: the repairs kept in full, in order, with one record per kind for those past the
    /// cap (by the position of the first) standing before the text's closing ones.
    pub(super) fn finish(self) -> Vec<Repair> {
        let mut items = self.items;
        if self.elided_total == 0 {
            return items;
        }
        let mut summary: Vec<Repair> = RepairKind::ALL
            .into_iter()
            .zip(self.elided)
            .filter(|(_, (count, _))| *count > 0)
            .map(|(kind, (count, position))| Repair {
                kind,
                position,
                count,
            })
            .collect();
        summary.sort_by_key(|r| r.position);
        let closing = items
            .iter()
            .rposition(|r| r.position < self.tail_from || r.kind == RepairKind::ControlCharacter)
            .map_or(0, |at| at + 1)
            // The first `cap` were held in full, a closing one among them too (`[T,"`: the
            // cut-off string logged before the comma dropped with it): the summary follows them.
            .max(self.cap.min(items.len()));
        items.splice(closing..closing, summary);
        items
    }
}

pub(super) struct Engine<'a, const STRICT: bool> {
    pub(super) src: &'a [u8],
    pub(super) pos: usize,
    pub(super) out: Vec<u8>,
    pub(super) stack: Vec<Frame>,
    /// Stack indices of open objects (including redundant braces) and of open arrays, so that
    /// "is there a container this closer matches?" is answered in O(1).
    pub(super) objects: Vec<usize>,
    pub(super) arrays: Vec<usize>,
    pub(super) repairs: RepairLog,
    /// Output offset and input offset of the last comma written, for trailing-comma removal.
    pub(super) last_comma: (usize, usize),
    pub(super) max_depth: usize,
    /// The deepest the stack has been, and the levels added around it in the output (one when
    /// several root values are wrapped in an array): the output nests no deeper than the limit.
    pub(super) deepest: usize,
    pub(super) wrapper_levels: usize,
    pub(super) deadline: Deadline,
    /// Work done so far: a unit per turn of an engine loop and per byte a look-ahead reads.
    /// Look-aheads cannot fail: they add to the count, or, when they find the deadline passed,
    /// set `next_check` to zero, and the next loop turn reports the timeout.
    pub(super) work: Cell<u64>,
    pub(super) next_check: Cell<u64>,
    /// Where `skip_ws_and_comments` already found that a run of whitespace and comments ends:
    /// a comment's end -> the end of the run from there.
    pub(super) comment_runs: RefCell<BTreeMap<usize, usize>>,
    /// The output's whitespace tail as last measured by `last_written`: `(len, start)` says
    /// `out[start..len]` is whitespace and `out[start - 1]`, if any, is not.
    pub(super) ws_tail: Cell<(usize, usize)>,
    /// The next string continues the one written last (`"a" + "b"`): no opening quote.
    pub(super) continues_string: bool,
    /// Calls (`ObjectId(`) whose `)` is still to come.
    pub(super) open_calls: usize,
    /// Arrays written for a Python tuple or set.
    pub(super) python_arrays: Vec<PythonArray>,
    /// How far a scan for JSON inside a string reached without finding its end (see
    /// `json_in_string_end`): later scans that start before it are not made.
    pub(super) json_scan_reached: Cell<usize>,
    /// A number was written that may not read back exactly as an i64 or a finite double (see
    /// `Mended::plain_numbers`).
    pub(super) wide_numbers: bool,
    /// A raw line feed was met in a string: string scans pass them from then on (see
    /// `StringStops::run_end`), and cost a little more per block.
    pub(super) raw_line_feeds: bool,
    /// Text around the root value (a fence, prose) was dropped.
    pub(super) unwrapped: bool,
    /// Where the root value starts (past a fence or prose before it).
    pub(super) root_at: usize,
    /// For the comma written last in an object (its output position): whether the member
    /// before it holds an array, once found.
    pub(super) array_before_comma: Cell<Option<(usize, bool)>>,
    /// How far a scan for an object written inline in a string reached without finding its
    /// end (see `inline_json_end`).
    pub(super) inline_scan_reached: Cell<usize>,
    /// A string left open to the end was looked at for a member it holds (at most once).
    pub(super) open_string_split: Cell<bool>,
}

impl<'a, const STRICT: bool> Engine<'a, STRICT> {
    pub(super) fn new(src: &'a [u8], limits: &Limits, deadline: Deadline) -> Self {
        Engine {
            src,
            pos: 0,
            out: if STRICT {
                Vec::new()
            } else {
                Vec::with_capacity(src.len() + 16)
            },
            stack: Vec::with_capacity(16),
            objects: Vec::new(),
            arrays: Vec::new(),
            repairs: RepairLog::kept(),
            last_comma: (0, 0),
            max_depth: limits.max_depth,
            deepest: 0,
            wrapper_levels: 0,
            deadline,
            work: Cell::new(0),
            next_check: Cell::new(CHECK_EVERY),
            comment_runs: RefCell::new(BTreeMap::new()),
            ws_tail: Cell::new((0, 0)),
            continues_string: false,
            open_calls: 0,
            python_arrays: Vec::new(),
            json_scan_reached: Cell::new(0),
            wide_numbers: false,
            raw_line_feeds: false,
            unwrapped: false,
            root_at: 0,
            array_before_comma: Cell::new(None),
            inline_scan_reached: Cell::new(0),
            open_string_split: Cell::new(false),
        }
    }

    pub(super) fn run(&mut self) -> Result<(), Error> {
        if !STRICT {
            self.prelude();
            self.root_at = self.pos;
        }
        self.value()?;
        self.epilogue()
    }

    // ---- output and faults -------------------------------------------------------------

    #[inline(always)]
    pub(super) fn emit(&mut self, bytes: &[u8]) {
        if !STRICT {
            self.out.extend_from_slice(bytes);
        }
    }

    #[inline(always)]
    pub(super) fn emit_byte(&mut self, b: u8) {
        if !STRICT {
            self.out.push(b);
        }
    }

    /// A fault at `position`: strict mode fails with what was expected; repair mode logs it and
    /// the caller mends it.
    #[inline]
    pub(super) fn fault(
        &mut self,
        kind: RepairKind,
        position: usize,
        expected: &'static str,
    ) -> Result<(), Error> {
        if STRICT {
            return Err(Error::unexpected(
                position,
                expected,
                scan::char_at(self.src, position),
            ));
        }
        self.repairs.push(Repair {
            kind,
            position,
            count: 1,
        });
        Ok(())
    }

    pub(super) fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }

    /// One turn of an engine loop; checks the deadline every `CHECK_EVERY` units of work.
    #[inline(always)]
    pub(super) fn tick(&mut self) -> Result<(), Error> {
        let work = self.work.get() + 1;
        self.work.set(work);
        if work >= self.next_check.get() {
            return self.check_deadline(work);
        }
        Ok(())
    }

    /// Out of line: the loops that tick stay small.
    #[cold]
    #[inline(never)]
    fn check_deadline(&self, work: u64) -> Result<(), Error> {
        self.next_check.set(work + CHECK_EVERY);
        self.deadline.check(self.pos)
    }

    /// For a look-ahead that has read far: whether the deadline has passed. If so, the next
    /// loop turn reports it, and the look-ahead may stop with any answer, since the engine
    /// fails before it writes anything more that counts.
    pub(super) fn lookahead_expired(&self) -> bool {
        let expired = self.deadline.check(self.pos).is_err();
        if expired {
            self.next_check.set(0);
        }
        expired
    }

    /// Counts `bytes` read by a look-ahead, so that a run of long look-aheads brings the next
    /// deadline check closer.
    #[inline]
    pub(super) fn charge(&self, bytes: usize) {
        self.work.set(self.work.get() + bytes as u64);
    }

    // ---- document level ----------------------------------------------------------------

    /// Skips what may stand before the value: a BOM, a markdown fence, leading prose.
    fn prelude(&mut self) {
        if self.src.starts_with(b"\xEF\xBB\xBF") {
            self.repairs.push(Repair {
                kind: RepairKind::ByteOrderMark,
                position: 0,
                count: 1,
            });
            self.pos = 3;
        }
        let start = scan::skip_ws(self.src, self.pos);
        let mut at = start;
        // `[```json ...` or `{```json ...`: a bracket typed before the fence is no container.
        if matches!(self.src.get(at), Some(b'{' | b'['))
            && self.src[scan::skip_ws(self.src, at + 1)..].starts_with(b"```")
        {
            self.repairs.push(Repair {
                kind: RepairKind::UnexpectedCharacter,
                position: at,
                count: 1,
            });
            at = scan::skip_ws(self.src, at + 1);
        }
        if self.src[at..].starts_with(b"```") {
            self.repairs.push(Repair {
                kind: RepairKind::MarkdownFence,
                position: at,
                count: 1,
            });
            at = fence_body(self.src, at);
        }
        if let Some(value) = list_marker_end(self.src, at) {
            self.repairs.push(Repair {
                kind: RepairKind::SurroundingText,
                position: at,
                count: 1,
            });
            at = value;
        }
        if let Some(&b) = self.src.get(at) {
            let starts_value = matches!(b, b'{' | b'[' | b'"' | b'-' | b'0'..=b'9')
                || literal_at(self.src, at).is_some();
            if !starts_value {
                if let Some(n) = memchr::memchr2(b'{', b'[', &self.src[at..]) {
                    self.repairs.push(Repair {
                        kind: RepairKind::SurroundingText,
                        position: at,
                        count: 1,
                    });
                    at += n;
                } else if let Some(n) = memchr::memmem::find(&self.src[at..], b"```") {
                    // Prose, then a fence around a value that opens no bracket (`(1, 2)`).
                    self.repairs.push(Repair {
                        kind: RepairKind::SurroundingText,
                        position: at,
                        count: 1,
                    });
                    self.repairs.push(Repair {
                        kind: RepairKind::MarkdownFence,
                        position: at + n,
                        count: 1,
                    });
                    at = fence_body(self.src, at + n);
                }
            }
        }
        if at != start {
            self.pos = at;
            self.unwrapped = true;
        }
    }

    /// After the root value: whitespace, or more values (wrapped in an array), fences, stray
    /// closers and trailing prose, which is dropped.
    fn epilogue(&mut self) -> Result<(), Error> {
        let mut wrapped = false;
        loop {
            self.tick()?;
            let before_ws = self.out.len();
            self.skip_ws()?;
            let Some(b) = self.peek() else { break };
            if STRICT {
                return Err(Error::unexpected(
                    self.pos,
                    "the end of the input",
                    scan::char_at(self.src, self.pos),
                ));
            }
            if b == b'+' && self.wrote_string_last() && self.concatenation_at(self.pos) {
                self.concatenate()?;
                continue;
            }
            let next = if b == b',' {
                self.skip_ws_and_comments(self.pos + 1)
            } else {
                // The next item of a bulleted list of values.
                list_marker_end(self.src, self.pos).unwrap_or(self.pos)
            };
            // The root object closed early and went on (`{"a": 1}, "b": 2}`): the members after
            // the closer are its own, never dropped.
            if b == b','
                && !wrapped
                && self.out.first() == Some(&b'{')
                && self.out[..before_ws].last() == Some(&b'}')
                && (looks_like_key(self.src, next) || key_missing_colon_at(self.src, next))
            {
                self.repairs.push(Repair {
                    kind: RepairKind::ExtraCloser,
                    position: self.pos,
                    count: 1,
                });
                self.out.truncate(before_ws - 1);
                self.rewrote_output_from(before_ws - 1);
                self.open(Frame::Object)?;
                // An object closed with no member (`{}, "b": 2}`) goes on at its first key: the
                // comma is then an extra one.
                let empty = self.out.trim_ascii_end().last() == Some(&b'{');
                self.value_from(if empty {
                    Expect::FirstKey
                } else {
                    Expect::AfterValue
                })?;
                continue;
            }
            // Another container, or after a comma any value but a key (`1, 2, 3`), or a number
            // or literal alone on the next line (`1\n2\n3`).
            let another_value = match self.src.get(next) {
                Some(b'{' | b'[') => true,
                Some(b'}' | b']') | None => false,
                Some(_) => {
                    (b == b','
                        && looks_like_element(self.src, next)
                        && !looks_like_key(self.src, next))
                        || (self.out[before_ws..].contains(&b'\n')
                            && scalar_alone_at(self.src, next))
                }
            };
            if another_value {
                self.another_root_value(&mut wrapped, before_ws, next)?;
            } else if self.src[self.pos..].starts_with(b"```") {
                self.unwrapped = true;
                self.repairs.push(Repair {
                    kind: RepairKind::MarkdownFence,
                    position: self.pos,
                    count: 1,
                });
                self.out.truncate(before_ws);
                self.rewrote_output_from(before_ws);
                let body = fence_body(self.src, self.pos);
                if matches!(self.src.get(body), Some(b'{' | b'[')) {
                    // The fence closed one block and opens the next (or a value follows it):
                    // several fenced values, all kept.
                    self.another_root_value(&mut wrapped, before_ws, body)?;
                } else {
                    self.pos += 3;
                }
            } else if b == b'}' || b == b']' {
                self.repairs.push(Repair {
                    kind: RepairKind::ExtraCloser,
                    position: self.pos,
                    count: 1,
                });
                self.pos += 1;
            } else {
                self.unwrapped = true;
                self.repairs.push(Repair {
                    kind: RepairKind::SurroundingText,
                    position: self.pos,
                    count: 1,
                });
                self.out.truncate(before_ws);
                self.rewrote_output_from(before_ws);
                // Prose between fenced blocks: the next fence that opens a value is read on.
                let fence = memchr::memmem::find(&self.src[self.pos..], b"```")
                    .map(|n| self.pos + n)
                    .filter(|&f| {
                        matches!(self.src.get(fence_body(self.src, f)), Some(b'{' | b'['))
                    });
                self.pos = fence.unwrap_or(self.src.len());
            }
        }
        if wrapped {
            self.out.push(b']');
        }
        Ok(())
    }

    /// Another root value starts at `next`: the values are wrapped in an array (once), a comma
    /// written where the whitespace after the last began (`before_ws`), and the value read.
    fn another_root_value(
        &mut self,
        wrapped: &mut bool,
        mut before_ws: usize,
        next: usize,
    ) -> Result<(), Error> {
        if !*wrapped {
            // The array around the values is one more level: what was read must fit.
            if self.deepest + 1 > self.max_depth {
                return Err(self.too_deep(next));
            }
            self.wrapper_levels = 1;
            self.repairs.push(Repair {
                kind: RepairKind::ConcatenatedValues,
                position: next,
                count: 1,
            });
            self.out.insert(0, b'[');
            self.rewrote_output_from(0);
            *wrapped = true;
            before_ws += 1;
        }
        self.out.insert(before_ws, b',');
        self.rewrote_output_from(before_ws);
        self.pos = next;
        self.value()
    }

    /// A Unicode space at `self.pos` (between tokens): dropped. Out of line, since text
    /// between tokens is almost always ASCII.
    #[cold]
    #[inline(never)]
    fn unicode_space(&mut self) -> Result<bool, Error> {
        let Some(n) = scan::unicode_space_len(self.src, self.pos) else {
            return Ok(false);
        };
        self.fault(RepairKind::UnexpectedCharacter, self.pos, "a JSON value")?;
        self.tick()?;
        self.pos += n;
        Ok(true)
    }

    /// Whitespace (copied) and comments (strict: a fault; repair: dropped).
    #[inline(always)]
    pub(super) fn skip_ws(&mut self) -> Result<(), Error> {
        // Most tokens follow no space or one, then a byte that starts no space or comment:
        // settled here, inline; the rest out of line.
        let plain = |b: &u8| *b > b' ' && *b != b'/' && *b != b'#' && *b < 0xC2;
        match self.src.get(self.pos) {
            Some(b) if plain(b) => Ok(()),
            Some(b' ') if self.src.get(self.pos + 1).is_some_and(plain) => {
                self.emit_byte(b' ');
                self.pos += 1;
                Ok(())
            }
            _ => self.consume_ws_and_comments(),
        }
    }

    #[inline(never)]
    fn consume_ws_and_comments(&mut self) -> Result<(), Error> {
        loop {
            let start = self.pos;
            self.pos = scan::skip_ws(self.src, self.pos);
            if !STRICT && self.pos > start {
                self.out.extend_from_slice(&self.src[start..self.pos]);
            }
            let rest = &self.src[self.pos..];
            if !STRICT && rest.first().is_some_and(|&b| b >= 0xC2) && self.unicode_space()? {
                continue;
            }
            let end = if rest.starts_with(b"//") || rest.starts_with(b"#") {
                line_comment_len(&rest[..memchr::memchr(b'\n', rest).unwrap_or(rest.len())])
            } else if rest.starts_with(b"/*") {
                rest.windows(2)
                    .skip(2)
                    .position(|w| w == b"*/")
                    .map_or(rest.len(), |n| n + 4)
            } else {
                return Ok(());
            };
            self.fault(RepairKind::Comment, self.pos, "a JSON value, not a comment")?;
            self.tick()?;
            self.pos += end;
        }
    }
}

/// Where the body of the fence opened at `at` (a run of backticks) starts: past the backticks
/// and a language word, on the same line when a value follows there (```` ```json {...}``` ````,
/// a whole text fenced with no line break), else on the next line.
pub(super) fn fence_body(src: &[u8], at: usize) -> usize {
    let mut j = at + src[at..].iter().take_while(|&&b| b == b'`').count();
    j += src[j..]
        .iter()
        .take(32)
        .take_while(|&&b| is_ident(b) || matches!(b, b'-' | b'+' | b'.'))
        .count();
    let k = j + src[j..]
        .iter()
        .take_while(|&&b| matches!(b, b' ' | b'\t'))
        .count();
    if matches!(src.get(k), Some(b'{' | b'[' | b'(')) {
        return k;
    }
    let line_end = memchr::memchr(b'\n', &src[j..]).map_or(src.len(), |n| j + n + 1);
    scan::skip_ws(src, line_end)
}

/// Whether a number or `true`/`false`/`null` stands alone at `i`: only spaces, then a line
/// break, a comma or the end of the text follow it.
fn scalar_alone_at(src: &[u8], i: usize) -> bool {
    let end = match src.get(i) {
        Some(b'-' | b'0'..=b'9') => super::scalars::strict_number_end(src, i),
        _ => scan::json_literal_len(src, i).map(|n| i + n),
    };
    end.is_some_and(|end| {
        let k = end
            + src[end..]
                .iter()
                .take_while(|&&b| matches!(b, b' ' | b'\t'))
                .count();
        matches!(src.get(k), None | Some(b'\n' | b'\r' | b','))
    })
}
