//! The one pass both readers share. It cuts a reply into prose, quoted text, section markers and
//! call blocks as the text arrives: the batch reader gives it the whole content at once, the
//! token reader what has come so far, and each gets back only what is decided. Since both run
//! the same steps on the same bytes, a reply reads alike whole or token by token.
//!
//! Where a call is only quoted, it is text (the places are listed in `QUOTING`). Inside a call
//! block, markers count only outside JSON strings (and Qwen3-Coder's raw parameter values):
//! nothing inside a string is ever a call, and no closer inside one ends the block.
//!
//! Every byte is looked at a bounded number of times: searches resume where they stopped, a
//! look-ahead that failed is not repeated from a later start, and the text held back while a
//! decision waits is capped by `max_hold`.

use memchr::{memchr, memchr2, memmem};

use super::context::{why, ProseContext};
use super::formats::{self, Body, FORMATS};
use super::lexer::{prefix_len, Cx, Lexed, Lexer};
use super::{Clock, Note};

/// The places where a model quotes a call rather than makes it; each keeps its text and yields
/// no call. The markers of the tool-result and thinking blocks are rows of `formats::FORMATS`.
///
/// Indented code blocks are not on the list: a call written inside a list item or after a
/// colon is often indented, so four spaces would hide real calls, and models fence code.
pub const QUOTING: &[(&str, &str)] = &[
    (
        "thinking",
        "`<think>...</think>`: reasoning, not the answer",
    ),
    (
        "tool result",
        "`<tool_response>`, `<tool_result>`, `[TOOL_RESULTS]`, DeepSeek's tool outputs, Llama's \
         ipython header, LFM2's and gpt-oss' tool messages: a result echoed back",
    ),
    (
        "inline code",
        "a run of one or two backticks up to the next run of as many, within a paragraph",
    ),
    (
        "fence amid prose",
        "a run of three or more backticks when the reply has prose outside its fences: a JSON \
         fence (```` ```json ```` or no language) up to its closing run outside its strings, a \
         code fence (```` ```python ````, ...) up to the next run. A reply that is only fences \
         (and thinking, and whitespace) makes their calls; ```` ```tool_call ```` says what it \
         holds and is a call anywhere",
    ),
    (
        "blockquote",
        "a line whose first mark, after up to three spaces, is `>`",
    ),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// Text the model wrote: the batch reader searches it for bare JSON calls.
    Prose,
    /// Text not searched: quoted, thinking, fence marks, a block given back.
    Text,
    /// A section marker with no call of its own: dropped.
    Strip,
    /// Reasoning: a think block's body (its markers are `Strip`). Never text, never calls.
    Reasoning,
    /// A reasoning block's closer with no opener before it: everything before it was
    /// reasoning, the text and the calls it gave included.
    ReasoningEnd,
    /// A call block: its format and its body, the marker and closer around it. A quoted
    /// block is text (why it is quoted is said): its calls are only counted.
    Block {
        fmt: usize,
        body_start: usize,
        body_end: usize,
        quoted: Option<&'static str>,
    },
    /// The deadline passed here; everything after it is text.
    Timeout,
}

/// A stretch of the content, by absolute byte positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Seg {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
    /// Text the model wrote as its answer, outside fences and thinking, with more than
    /// whitespace in it (a pythonic list is a call when it is the only such stretch).
    pub prose_like: bool,
}

/// What a stretch is, for the rules that look across stretches.
#[derive(Clone, Copy)]
struct How {
    /// Inside a fence that may be the whole reply.
    fenced: bool,
    /// Counts as prose when it holds more than whitespace.
    prose: bool,
    /// Quoted, and why: its call markers are counted.
    quoted: Option<&'static str>,
}

const PROSE: How = How {
    fenced: false,
    prose: true,
    quoted: None,
};
const ASIDE: How = How {
    fenced: false,
    prose: false,
    quoted: None,
};

/// Where the current line stands for the blockquote rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Line {
    /// At the start, after this many spaces.
    Start(u8),
    /// Its first mark is `>`.
    Quote,
    Plain,
}

impl Line {
    fn advance(&mut self, bytes: &[u8]) {
        let rest = match memchr::memrchr(b'\n', bytes) {
            Some(nl) => {
                *self = Line::Start(0);
                &bytes[nl + 1..]
            }
            None => bytes,
        };
        for &b in rest {
            let Line::Start(n) = *self else { break };
            *self = match b {
                b' ' if n < 3 => Line::Start(n + 1),
                b'>' => Line::Quote,
                _ => Line::Plain,
            };
        }
    }
}

/// Fences seen before any prose: they may be the whole reply, which makes their calls real.
/// What follows them is held until prose (then the fences were samples in a reply, and are
/// text) or the end (then they were the reply).
struct Candidacy {
    from: usize,
    held: Vec<(Seg, bool)>,
    /// Between a plain fence's opening and closing runs.
    in_fence: bool,
    /// Held longer than `max_hold`: fences go out as text at once.
    forced: bool,
}

enum Mode {
    Prose,
    /// Quoted text up to and including one of its closers (or the end).
    Quote(Quoting),
    /// A fence amid prose: quoted up to and including the next run of three or more backticks,
    /// looked for from `search`.
    Fence {
        search: usize,
    },
    /// An inline code span of `k` backticks opened at `open`.
    Inline {
        open: usize,
        k: usize,
        search: usize,
        overflowed: bool,
        /// The newline after which only whitespace has come (a blank line may be arriving).
        blank: Option<usize>,
    },
    Block(Box<BlockState>),
}

#[derive(Clone, Copy)]
struct Quoting {
    closes: &'static [&'static str],
    think: bool,
    why: &'static str,
    /// Where its opener starts and ends: nothing of it has gone out while `held`.
    open: usize,
    body: usize,
    held: bool,
    /// How far the text is known to hold no closer.
    search: usize,
    /// Opened amid a line's text: with no closer before the end, the opener was only
    /// mentioned (`the <think> tag`), and what follows it is read as usual.
    mention: bool,
}

/// The quote of a blockquote's line.
const BLOCKQUOTE_LINE: &[&str] = &["\n"];

struct BlockState {
    fmt: usize,
    open: usize,
    body_start: usize,
    lex: Lexer,
    fenced: bool,
    quoted: Option<&'static str>,
    /// Past `max_hold`: given back as text as it comes, up to here.
    shown: Option<usize>,
}

/// The next marker the automaton found, and how far the text is known to hold none.
#[derive(Default)]
struct MarkerCache {
    found: Option<(usize, usize, usize)>,
    clear_to: usize,
}

pub(super) struct Engine {
    max_hold: usize,
    pos: usize,
    /// Where the next stretch must start (every byte goes out in exactly one stretch).
    put_to: usize,
    mode: Mode,
    line: Line,
    seen_prose: bool,
    fence: Option<Candidacy>,
    /// A reasoning block was opened or closed: a closer after this is no lone closer.
    pub reasoning_seen: bool,
    /// A wrapper tag (`<tool_calls>`) was taken as one and its closer has not come.
    wrapper_open: bool,
    markers: MarkerCache,
    /// Call markers seen in quoted text.
    pub quoted: usize,
    /// Where they were, and why they were quoted (the first `super::MAX_NOTES`).
    pub notes: Vec<Note>,
    context: ProseContext,
    steps: u32,
    /// A run of backticks that reached the end of the text: where it starts, and how long it
    /// was then (a run that arrives a backtick at a time is measured once).
    run: (usize, usize),
    /// The byte before the first one the reader keeps, with its position (the reader drops
    /// the text before `needed_from`, and the rule for `>>>` looks one byte back).
    before_kept: (usize, u8),
}

impl Engine {
    pub(super) fn new(max_hold: usize) -> Self {
        Engine {
            max_hold,
            pos: 0,
            put_to: 0,
            mode: Mode::Prose,
            line: Line::Start(0),
            seen_prose: false,
            fence: None,
            reasoning_seen: false,
            wrapper_open: false,
            markers: MarkerCache::default(),
            quoted: 0,
            notes: Vec::new(),
            context: ProseContext::default(),
            steps: 0,
            run: (usize::MAX, 0),
            before_kept: (usize::MAX, 0),
        }
    }

    /// The byte before `at`, where it is still known (None at the start of the text).
    fn byte_before(&self, cx: &Cx, at: usize) -> Option<u8> {
        if at > cx.base {
            cx.byte(at - 1)
        } else {
            (at > 0 && self.before_kept.0 == at).then_some(self.before_kept.1)
        }
    }

    /// The first byte still needed: the reader may drop the text before it.
    pub(super) fn needed_from(&self) -> usize {
        let mode = match &self.mode {
            Mode::Block(st) => st.shown.unwrap_or(st.open),
            Mode::Inline {
                open,
                overflowed: false,
                ..
            } => *open,
            Mode::Quote(q) if q.held => q.open,
            _ => self.pos,
        };
        let held = self
            .fence
            .as_ref()
            .and_then(|c| c.held.first())
            .map_or(usize::MAX, |(s, _)| s.start);
        mode.min(held).min(self.pos)
    }

    /// Cuts what can be decided of `buf` (the content from byte `base` on; `at_end` when no
    /// more will come) into stretches, appended to `out`.
    pub(super) fn step(
        &mut self,
        buf: &str,
        base: usize,
        at_end: bool,
        clock: &Clock,
        out: &mut Vec<Seg>,
    ) {
        let b = buf.as_bytes();
        debug_assert!(base <= self.needed_from());
        let cx = Cx { b, base, at_end };
        loop {
            self.steps = self.steps.wrapping_add(1);
            if self.steps.is_multiple_of(32) && clock.expired() {
                self.time_out(&cx, out);
                return;
            }
            let more = match self.mode {
                Mode::Prose => self.prose(&cx, out),
                Mode::Quote(q) => self.quote(&cx, q, out),
                Mode::Fence { search } => self.quoted_fence(&cx, search, out),
                Mode::Inline { .. } => self.inline(&cx, out),
                Mode::Block(_) => self.block(&cx, out),
            };
            if !more {
                break;
            }
        }
        let keep = self.needed_from();
        if keep > cx.base && keep <= cx.end() {
            if let Some(b) = cx.byte(keep - 1) {
                self.before_kept = (keep, b);
            }
        }
        if at_end && self.pos == cx.end() {
            if let Some(c) = self.fence.take() {
                // The fences were the reply: their calls stand.
                out.extend(c.held.into_iter().map(|(s, _)| s));
            }
        }
    }

    fn time_out(&mut self, cx: &Cx, out: &mut Vec<Seg>) {
        // Nothing held is decided: it goes out as text, and so does the rest.
        let from = self.put_to;
        if let Some(c) = self.fence.take() {
            out.extend(c.held.into_iter().map(|(s, _)| as_text(s)));
        }
        out.push(Seg {
            kind: Kind::Timeout,
            start: from,
            end: from,
            prose_like: false,
        });
        let end = cx.end();
        if end > from {
            out.push(Seg {
                kind: Kind::Text,
                start: from,
                end,
                prose_like: false,
            });
        }
        self.line.advance(&cx.b[from - cx.base..]);
        self.pos = end;
        self.put_to = end;
        self.mode = Mode::Prose;
    }

    fn in_fence(&self) -> bool {
        self.fence.as_ref().is_some_and(|c| c.in_fence)
    }

    /// Sends out `[start, end)` as one stretch, through the fence rule.
    fn put(&mut self, cx: &Cx, kind: Kind, start: usize, end: usize, how: How, out: &mut Vec<Seg>) {
        debug_assert_eq!(start, self.put_to, "stretches must follow one another");
        if start == end && !matches!(kind, Kind::Block { .. }) {
            return;
        }
        self.put_to = end;
        let bytes = &cx.b[start - cx.base..end - cx.base];
        self.line.advance(bytes);
        if kind == Kind::Prose {
            self.context.advance(bytes);
        } else {
            self.context.interrupt();
        }
        if let Some(why) = how.quoted {
            self.count(cx, start, end, why);
        }
        // Whitespace and control characters show nothing: they are not prose.
        let prose_like = how.prose
            && !how.fenced
            && bytes
                .iter()
                .any(|b| !b.is_ascii_whitespace() && !b.is_ascii_control());
        let seg = Seg {
            kind,
            start,
            end,
            prose_like,
        };
        if let Some(c) = &mut self.fence {
            if prose_like {
                // Prose after the fences: they were samples in a reply, not the reply.
                let held = std::mem::take(&mut c.held);
                self.fence = None;
                for (s, fenced) in held {
                    let s = if fenced { self.quote_seg(cx, s) } else { s };
                    out.push(s);
                }
                self.seen_prose = true;
                out.push(seg);
                return;
            }
            if c.forced {
                let s = if how.fenced {
                    self.quote_seg(cx, seg)
                } else {
                    seg
                };
                out.push(s);
                return;
            }
            c.held.push((seg, how.fenced));
            if end - c.from > self.max_hold {
                // Held too long to wait for the end: the fences are given back as text.
                c.forced = true;
                let held = std::mem::take(&mut c.held);
                for (s, fenced) in held {
                    let s = if fenced { self.quote_seg(cx, s) } else { s };
                    out.push(s);
                }
            }
            return;
        }
        if prose_like {
            self.seen_prose = true;
        }
        out.push(seg);
    }

    /// A fenced stretch that turned out to be quoted: text, its calls counted (a block's by
    /// its reader; text stretches were counted when they went out). A sample in the answer
    /// is prose for the rule on pythonic lists.
    fn quote_seg(&mut self, cx: &Cx, seg: Seg) -> Seg {
        let visible = cx.b[seg.start - cx.base..seg.end - cx.base]
            .iter()
            .any(|b| !b.is_ascii_whitespace() && !b.is_ascii_control());
        let seg = Seg {
            prose_like: visible,
            ..seg
        };
        match seg.kind {
            Kind::Block {
                fmt,
                body_start,
                body_end,
                ..
            } => Seg {
                kind: Kind::Block {
                    fmt,
                    body_start,
                    body_end,
                    quoted: Some(why::FENCE),
                },
                ..seg
            },
            Kind::Text | Kind::Reasoning => Seg {
                kind: Kind::Text,
                ..seg
            },
            _ => {
                self.count(cx, seg.start, seg.end, why::FENCE);
                Seg {
                    kind: Kind::Text,
                    ..seg
                }
            }
        }
    }

    fn count(&mut self, cx: &Cx, start: usize, end: usize, why: &'static str) {
        for at in call_markers(cx, start, end) {
            self.note(at, why);
        }
    }

    /// A call-like text at `at` that is not a call, and why.
    pub(super) fn note(&mut self, at: usize, why: &'static str) {
        super::note(&mut self.notes, &mut self.quoted, at, why);
    }

    // ---- prose --------------------------------------------------------------------------------

    fn prose(&mut self, cx: &Cx, out: &mut Vec<Seg>) -> bool {
        let p = self.pos;
        let end = cx.end();
        if p == end {
            return false;
        }
        let fenced = self.in_fence();
        let how = How { fenced, ..PROSE };
        match self.line {
            Line::Quote => {
                self.mode = Mode::Quote(blockquote(p));
                return true;
            }
            Line::Start(n) => {
                let spaces = cx.b[p - cx.base..]
                    .iter()
                    .take(usize::from(3 - n))
                    .take_while(|&&b| b == b' ')
                    .count();
                let q = p + spaces;
                if q == end && !cx.at_end {
                    self.put(cx, Kind::Prose, p, q, how, out);
                    self.pos = q;
                    return false;
                }
                let rest = &cx.b[q - cx.base..];
                // `>>>NAME` is Functionary's call marker, not a blockquote.
                let arrow = rest.starts_with(b">>>")
                    && rest
                        .get(3)
                        .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_');
                if !cx.at_end && rest.len() < 4 && rest.iter().all(|&b| b == b'>') {
                    self.put(cx, Kind::Prose, p, q, how, out);
                    self.pos = q;
                    // A lone `>` is not held as a marker's start elsewhere: search it again.
                    self.markers.clear_to = self.markers.clear_to.min(q);
                    return false;
                }
                if cx.byte(q) == Some(b'>') && !arrow {
                    self.put(cx, Kind::Prose, p, q, how, out);
                    self.pos = q;
                    self.mode = Mode::Quote(blockquote(q));
                    return true;
                }
            }
            Line::Plain => {}
        }
        let (marker, clear_to) = self.next_marker(cx, p);
        let limit = marker.map_or(clear_to, |m| m.0);
        let tick = memchr2(b'`', b'\n', &cx.b[p - cx.base..limit - cx.base]).map(|i| p + i);
        match (tick, marker) {
            (Some(t), _) if cx.b[t - cx.base] == b'\n' => {
                // One stretch per line: the next line's start may open a blockquote.
                self.put(cx, Kind::Prose, p, t + 1, how, out);
                self.pos = t + 1;
                true
            }
            (Some(t), _) => {
                self.put(cx, Kind::Prose, p, t, how, out);
                self.pos = t;
                if self.context.in_value_string() {
                    // Backticks in a value's string are its text.
                    self.put(cx, Kind::Prose, t, t + 1, how, out);
                    self.pos = t + 1;
                    return true;
                }
                self.backticks(cx, out)
            }
            (None, Some((s, e, fmt))) => {
                self.put(cx, Kind::Prose, p, s, how, out);
                self.pos = s;
                self.open_marker(cx, s, e, fmt, out)
            }
            (None, None) => {
                // Up to a marker's possible start: the rest waits for more text.
                self.put(cx, Kind::Prose, p, limit, how, out);
                self.pos = limit;
                false
            }
        }
    }

    /// The first marker at or after `from`, and how far the text is known to hold no marker.
    fn next_marker(&mut self, cx: &Cx, from: usize) -> (Option<(usize, usize, usize)>, usize) {
        if let Some(m) = self.markers.found {
            if m.0 >= from {
                return (Some(m), m.0);
            }
            self.markers.found = None;
        }
        let start = from.max(self.markers.clear_to);
        let t = formats::table();
        let hay = &cx.b[start - cx.base..];
        // `>>>` right after a word or a tag's end (`</b>>>x`) is no call marker: skipped, and
        // the search goes on past it.
        let arrow_here = |at: usize| {
            !formats::ends_a_word_or_tag(if at > start {
                cx.byte(at - 1)
            } else {
                self.byte_before(cx, at)
            })
        };
        let mut found_at = t.markers.find(hay);
        while let Some(m) = found_at {
            if !hay[m.start()..].starts_with(b">>>") || arrow_here(start + m.start()) {
                break;
            }
            found_at = t
                .markers
                .find(aho_corasick::Input::new(hay).span(m.start() + 1..hay.len()));
        }
        if let Some(m) = found_at {
            // A longer marker may still be arriving where this one matched (`>>>all\n`
            // after `>>>`): wait for the text that settles it.
            if !cx.at_end && formats::longer_marker_may_follow(&hay[m.start()..]) {
                self.markers.clear_to = start + m.start();
                return (None, start + m.start());
            }
            let found = (
                start + m.start(),
                start + m.end(),
                t.marker_format[m.pattern().as_usize()],
            );
            self.markers.found = Some(found);
            self.markers.clear_to = found.0;
            return (Some(found), found.0);
        }
        // A marker may be arriving: its start is held back.
        let held = if cx.at_end {
            0
        } else {
            formats::marker_prefix_len(hay, self.byte_before(cx, start))
        };
        self.markers.clear_to = cx.end() - held;
        (None, self.markers.clear_to)
    }

    /// Opens what the marker at `s..e` starts; false: wait for the text that settles it.
    fn open_marker(&mut self, cx: &Cx, s: usize, e: usize, fmt: usize, out: &mut Vec<Seg>) -> bool {
        let format = &FORMATS[fmt];
        let how = How {
            fenced: self.in_fence(),
            ..PROSE
        };
        let quoting = self.context.quoting();
        if (format.line_start && !matches!(self.line, Line::Start(_)))
            || (quoting.is_some() && !format.opens_a_call())
        {
            // Not where this marker means anything: it is text.
            self.put(cx, Kind::Prose, s, e, how, out);
            self.pos = e;
            return true;
        }
        match quoting {
            Some(why::VALUE) => {
                // Markup in a value's string is the value's text, read on as prose.
                self.note(s, why::VALUE);
                self.put(cx, Kind::Prose, s, e, how, out);
                self.pos = e;
                return true;
            }
            Some(why) => {
                let fenced = self.in_fence();
                self.start_block(fmt, s, e - format.keep, fenced, Some(why));
                return true;
            }
            None => {}
        }
        match format.body {
            Body::Strip => {
                if is_plain_tag(format.open) && matches!(self.line, Line::Plain) && self.seen_prose
                {
                    // A wrapper tag named amid prose ("wrap them in <tool_calls> tags") is text:
                    // it wraps calls only when a call follows it (or, a closer, when it closes
                    // one that did).
                    let wraps = if format.open.starts_with("</") {
                        Some(self.wrapper_open)
                    } else {
                        call_follows(cx, e)
                    };
                    match wraps {
                        None => return false,
                        Some(false) => {
                            self.put(cx, Kind::Prose, s, e, how, out);
                            self.pos = e;
                            return true;
                        }
                        Some(true) => {}
                    }
                }
                if is_plain_tag(format.open) {
                    self.wrapper_open = !format.open.starts_with("</");
                }
                let how = How {
                    fenced: self.in_fence(),
                    ..ASIDE
                };
                self.put(cx, Kind::Strip, s, e, how, out);
                self.pos = e;
            }
            Body::Quote { think, why } => {
                if think {
                    self.reasoning_seen = true;
                }
                self.mode = Mode::Quote(Quoting {
                    closes: format.close,
                    think,
                    why,
                    open: s,
                    body: e,
                    held: true,
                    search: e,
                    mention: matches!(self.line, Line::Plain) && self.seen_prose,
                });
            }
            Body::ReasoningEnd => {
                let lone = !self.reasoning_seen && !self.in_fence();
                self.reasoning_seen = true;
                if lone {
                    // What came before was reasoning, fences held as a possible reply too.
                    if let Some(c) = self.fence.take() {
                        out.extend(c.held.into_iter().map(|(s, _)| as_text(s)));
                    }
                    self.seen_prose = false;
                }
                let kind = if lone {
                    Kind::ReasoningEnd
                } else {
                    Kind::Strip
                };
                let how = How {
                    fenced: self.in_fence(),
                    ..ASIDE
                };
                self.put(cx, kind, s, e, how, out);
                self.pos = e;
            }
            Body::Arrow => match arrow_opens_a_call(cx, e) {
                None => return false,
                Some(true) => self.start_block(fmt, s, e - format.keep, self.in_fence(), None),
                Some(false) => {
                    // No call follows: the marker is text, and what follows it is read on.
                    self.put(cx, Kind::Prose, s, e, how, out);
                    self.pos = e;
                }
            },
            _ => {
                let fenced = self.in_fence();
                self.start_block(fmt, s, e - format.keep, fenced, None);
            }
        }
        true
    }

    /// A run of backticks at `pos`: inline code, a fence, or a fenced call.
    fn backticks(&mut self, cx: &Cx, out: &mut Vec<Seg>) -> bool {
        let t = self.pos;
        let end = cx.end();
        let k = self.run_len(cx, t);
        if t + k == end && !cx.at_end {
            return false; // the run may go on
        }
        if k < 3 {
            self.inline_at(t, k);
            return true;
        }
        if let Some(c) = &mut self.fence {
            if c.in_fence {
                c.in_fence = false;
                let how = How {
                    fenced: true,
                    ..ASIDE
                };
                self.put(cx, Kind::Text, t, t + k, how, out);
                self.pos = t + k;
                return true;
            }
        }
        // The language word, measured as far as `INFO` bytes: longer, it names no language
        // that matters here, and a long word arriving a byte at a time is not measured again.
        const INFO: usize = 32;
        let info_len = cx.b[t + k - cx.base..]
            .iter()
            .take(INFO)
            .take_while(|&&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'+' | b'.'))
            .count();
        let after = t + k + info_len;
        if after == end && info_len < INFO && !cx.at_end {
            return false; // the language may go on
        }
        let info = &cx.b[t + k - cx.base..after - cx.base];
        // A fence that says it holds JSON, or says nothing, is read for calls; others are code.
        let json = info == b"json" || info.is_empty();
        if info == b"tool_call" {
            self.start_block(formats::FENCED_TOOL_CALL, t, after, false, None);
            return true;
        }
        if !matches!(self.line, Line::Start(_)) {
            // A fence opens a line: a run amid a line's text is an inline code span's, or text.
            self.inline_at(t, k);
            return true;
        }
        if self.seen_prose {
            // Amid prose: a sample. A JSON one is read to its end (outside its strings) and
            // its calls counted; code is quoted up to the next run of backticks.
            if json {
                self.start_block(formats::FENCED_JSON, t, after, false, Some(why::FENCE));
            } else {
                self.mode = Mode::Fence { search: t + k };
            }
            return true;
        }
        self.fence.get_or_insert(Candidacy {
            from: t,
            held: Vec::new(),
            in_fence: false,
            forced: false,
        });
        if json {
            self.start_block(formats::FENCED_JSON, t, after, true, None);
            return true;
        }
        let how = How {
            fenced: true,
            ..ASIDE
        };
        self.put(cx, Kind::Text, t, after, how, out);
        self.pos = after;
        if let Some(c) = &mut self.fence {
            c.in_fence = true;
        }
        true
    }

    /// An inline code span of `k` backticks, opened at `t`.
    fn inline_at(&mut self, t: usize, k: usize) {
        self.mode = Mode::Inline {
            open: t,
            k,
            search: t + k,
            overflowed: false,
            blank: None,
        };
    }

    // ---- quoted text --------------------------------------------------------------------------

    /// Sends out quoted text from `pos` up to `limit`, keeping back an end that may start a
    /// call marker (so that markers are counted however the text is split).
    fn put_quoted(&mut self, cx: &Cx, limit: usize, how: How, out: &mut Vec<Seg>) {
        self.put_quoted_as(cx, Kind::Text, limit, how, out);
    }

    /// `put_quoted`, the stretches of `kind` (reasoning is quoted too).
    fn put_quoted_as(&mut self, cx: &Cx, kind: Kind, limit: usize, how: How, out: &mut Vec<Seg>) {
        let p = self.pos;
        let limit = if cx.at_end {
            limit
        } else {
            let mut limit = limit.min(cx.end() - formats::call_prefix_len(&cx.b[p - cx.base..]));
            // Nor inside a marker already there (`functools[` ends with the start of
            // `[TOOL_CALLS]`).
            let t = formats::table();
            let stop = (limit + t.longest_marker).min(cx.end());
            if let Some(m) = t
                .calls
                .find_iter(&cx.b[p - cx.base..stop - cx.base])
                .find(|m| p + m.end() > limit)
            {
                limit = limit.min(p + m.start());
            }
            limit
        };
        if limit > p {
            self.put(cx, kind, p, limit, how, out);
            self.pos = limit;
        }
    }

    fn quoted_how(&self, prose: bool, why: &'static str) -> How {
        How {
            fenced: self.in_fence(),
            prose,
            quoted: Some(why),
        }
    }

    /// The opener of a held quote goes out before its first text: markers of reasoning are
    /// dropped, an echo's opener is part of its text.
    fn release(&mut self, cx: &Cx, q: &mut Quoting, how: How, out: &mut Vec<Seg>) {
        if q.held {
            q.held = false;
            if q.think {
                self.put(cx, Kind::Strip, q.open, q.body, how, out);
                self.pos = q.body;
            }
        }
    }

    fn quote(&mut self, cx: &Cx, mut q: Quoting, out: &mut Vec<Seg>) -> bool {
        let how = self.quoted_how(!q.think, q.why);
        let body = if q.think { Kind::Reasoning } else { Kind::Text };
        let from = self.pos.max(q.body).max(q.search);
        let hay = &cx.b[from - cx.base..];
        let found = q
            .closes
            .iter()
            .filter_map(|c| memmem::find(hay, c.as_bytes()).map(|i| (from + i, c.len())))
            .min();
        match found {
            Some((at, len)) => {
                self.release(cx, &mut q, how, out);
                let p = self.pos;
                if q.think {
                    self.put(cx, body, p, at, how, out);
                    self.put(cx, Kind::Strip, at, at + len, how, out);
                } else {
                    self.put(cx, body, p, at + len, how, out);
                }
                self.pos = at + len;
                self.mode = Mode::Prose;
                true
            }
            None if cx.at_end && q.held && q.mention => {
                // No closer came: the opener was only named. It is text, and so is the rest.
                let prose = How {
                    fenced: self.in_fence(),
                    ..PROSE
                };
                self.put(cx, Kind::Prose, q.open, q.body, prose, out);
                self.pos = q.body;
                self.mode = Mode::Prose;
                true
            }
            None if cx.at_end => {
                self.release(cx, &mut q, how, out);
                self.put_quoted_as(cx, body, cx.end(), how, out);
                self.mode = Mode::Prose;
                true
            }
            None => {
                // A mention is held until its closer settles it, at most `max_hold` bytes.
                let held = q
                    .closes
                    .iter()
                    .map(|c| prefix_len(&cx.b[from - cx.base..], c.as_bytes()))
                    .max()
                    .unwrap_or(0);
                q.search = cx.end() - held;
                if !(q.held && q.mention) || cx.end() - q.open > self.max_hold {
                    self.release(cx, &mut q, how, out);
                    self.put_quoted_as(cx, body, cx.end() - held, how, out);
                }
                self.mode = Mode::Quote(q);
                false
            }
        }
    }

    fn quoted_fence(&mut self, cx: &Cx, search: usize, out: &mut Vec<Seg>) -> bool {
        let how = self.quoted_how(true, why::FENCE);
        let end = cx.end();
        let mut i = search;
        loop {
            let Some(j) = memchr(b'`', &cx.b[i - cx.base..]) else {
                if cx.at_end {
                    self.put_quoted(cx, end, how, out);
                    self.mode = Mode::Prose;
                    return true;
                }
                self.put_quoted(cx, end, how, out);
                self.mode = Mode::Fence { search: end };
                return false;
            };
            let r = i + j;
            let k = self.run_len(cx, r);
            if r + k == end && !cx.at_end {
                self.put_quoted(cx, r, how, out);
                self.mode = Mode::Fence { search: r };
                return false;
            }
            if k >= 3 {
                let p = self.pos;
                self.put(cx, Kind::Text, p, r + k, how, out);
                self.pos = r + k;
                self.mode = Mode::Prose;
                return true;
            }
            i = r + k;
        }
    }

    /// Inline code: quoted if a run of as many backticks closes it before a blank line; the
    /// backticks alone are text otherwise, and what follows them is read as usual. While that
    /// is not known, the text is held (up to `max_hold`; past it, the span is quoted up to its
    /// close or the paragraph's end).
    fn inline(&mut self, cx: &Cx, out: &mut Vec<Seg>) -> bool {
        let Mode::Inline {
            open,
            k,
            search,
            overflowed,
            blank,
        } = self.mode
        else {
            unreachable!()
        };
        let end = cx.end();
        let how = self.quoted_how(true, why::INLINE_CODE);
        let (mut i, mut blank) = (search, blank);
        // Where what settles the span starts, and whether it closed the span (and where).
        let settled: Option<(usize, Option<usize>)> = loop {
            if let Some(nl) = blank {
                // After a newline: only whitespace so far on this line.
                let q = i + cx.b[i - cx.base..]
                    .iter()
                    .take_while(|&&b| matches!(b, b' ' | b'\t' | b'\r'))
                    .count();
                if q == end && !cx.at_end {
                    i = q;
                    break None;
                }
                if q == end || cx.b[q - cx.base] == b'\n' {
                    break Some((nl, None)); // a blank line (or the end) ends the paragraph
                }
                blank = None;
                i = q;
            }
            let Some(j) = memchr2(b'`', b'\n', &cx.b[i - cx.base..]) else {
                if cx.at_end {
                    break Some((end, None));
                }
                i = end;
                break None;
            };
            let r = i + j;
            if cx.b[r - cx.base] == b'\n' {
                blank = Some(r);
                i = r + 1;
                continue;
            }
            let n = self.run_len(cx, r);
            if r + n == end && !cx.at_end {
                i = r;
                break None;
            }
            if n == k {
                break Some((r, Some(r + n)));
            }
            i = r + n;
        };
        // Held past the cap when what settles the span (its close, a blank line, the end)
        // starts more than `max_hold` bytes after it opened, however the text was split.
        let settles_at = settled.map_or(blank.unwrap_or(i), |(at, _)| at);
        let overflowed = overflowed || settles_at - open > self.max_hold;
        match settled {
            Some((_, Some(stop))) => {
                let p = self.pos;
                self.put(cx, Kind::Text, p, stop, how, out);
                self.pos = stop;
                self.mode = Mode::Prose;
            }
            Some((at, None)) if overflowed => {
                let p = self.pos;
                self.put(cx, Kind::Text, p, at, how, out);
                self.pos = at;
                self.mode = Mode::Prose;
            }
            Some(_) => {
                // No close: the backticks are just text.
                let how = How {
                    fenced: self.in_fence(),
                    ..PROSE
                };
                self.put(cx, Kind::Prose, open, open + k, how, out);
                self.pos = open + k;
                self.mode = Mode::Prose;
            }
            None => {
                if overflowed {
                    self.put_quoted(cx, blank.unwrap_or(i), how, out);
                }
                self.mode = Mode::Inline {
                    open,
                    k,
                    search: i,
                    overflowed,
                    blank,
                };
                return false;
            }
        }
        true
    }

    // ---- call blocks --------------------------------------------------------------------------

    fn start_block(
        &mut self,
        fmt: usize,
        open: usize,
        body_start: usize,
        fenced: bool,
        quoted: Option<&'static str>,
    ) {
        self.pos = open;
        self.mode = Mode::Block(Box::new(BlockState {
            fmt,
            open,
            body_start,
            lex: match quoted {
                // A sample fence runs to its closing run, whatever values it shows.
                Some(why::FENCE) if fmt == formats::FENCED_JSON => Lexer::sample_fence(body_start),
                _ => Lexer::new(body_start),
            },
            fenced,
            quoted,
            shown: None,
        }));
    }

    fn block(&mut self, cx: &Cx, out: &mut Vec<Seg>) -> bool {
        let Mode::Block(st) = &mut self.mode else {
            unreachable!()
        };
        let stops = &formats::table().stops[st.fmt];
        let lexed = st.lex.run(cx, stops);
        let (fmt, open, body_start, fenced, quoted) =
            (st.fmt, st.open, st.body_start, st.fenced, st.quoted);
        // A quoted fence is a sample amid prose, and counts as prose; a block does not.
        let how = How {
            fenced,
            prose: quoted.is_some(),
            quoted: None,
        };
        match lexed {
            Lexed::More => true,
            Lexed::Wait => {
                let committed = st.lex.committed();
                if st.shown.is_none() && committed - open > self.max_hold {
                    st.shown = Some(open);
                }
                let Some(shown) = st.shown else {
                    return false;
                };
                let to = committed.max(shown);
                st.shown = Some(to);
                self.put(cx, Kind::Text, shown, to, how, out);
                self.pos = to;
                false
            }
            Lexed::End { end, .. }
                if cx.at_end && end == cx.end() && st.shown.is_none() && st.lex.unbalanced() =>
            {
                // A parameter tag in a value never closed: a closer was missing, not markup
                // saved. Read again, each value ending at its first closer.
                st.lex = Lexer::flat_params(st.body_start);
                true
            }
            Lexed::End { body_end, end } => {
                let shown = match st.shown {
                    None if end - open > self.max_hold => Some(open),
                    s => s,
                };
                self.mode = Mode::Prose;
                match shown {
                    // Longer than the cap: the block is text, and what follows is read on.
                    Some(s) => self.put(cx, Kind::Text, s, end, how, out),
                    None => self.put(
                        cx,
                        Kind::Block {
                            fmt,
                            body_start,
                            body_end,
                            quoted,
                        },
                        open,
                        end,
                        how,
                        out,
                    ),
                }
                self.pos = end;
                true
            }
        }
    }
}

/// Where the call markers wholly inside `[start, end)` start. A piece of quoted text never
/// ends inside a marker (an end that may start one is held back), so the pieces of a quote
/// find what the whole of it would.
fn call_markers<'a>(cx: &'a Cx, start: usize, end: usize) -> impl Iterator<Item = usize> + 'a {
    formats::table()
        .calls
        .find_iter(&cx.b[start - cx.base..end - cx.base])
        .map(move |m| start + m.start())
}

/// A blockquote's line, from `at`.
fn blockquote(at: usize) -> Quoting {
    Quoting {
        closes: BLOCKQUOTE_LINE,
        think: false,
        why: why::BLOCKQUOTE,
        open: at,
        body: at,
        held: false,
        search: at,
        mention: false,
    }
}

fn as_text(seg: Seg) -> Seg {
    Seg {
        kind: match seg.kind {
            Kind::Timeout => Kind::Timeout,
            _ => Kind::Text,
        },
        prose_like: false,
        ..seg
    }
}

impl Engine {
    /// The length of the run of backticks at `at`, resuming a measure that reached the end.
    fn run_len(&mut self, cx: &Cx, at: usize) -> usize {
        let known = if self.run.0 == at { self.run.1 } else { 0 };
        let n = known
            + cx.b[at + known - cx.base..]
                .iter()
                .take_while(|&&b| b == b'`')
                .count();
        self.run = (at, n);
        n
    }
}

/// Whether Functionary's `>>>` at `e` opens a call: a name, the line's end, then an object
/// (`>>>NAME\n{...}`). Anything else is text read on, so that a call after it is not swallowed
/// by a block that holds none. None: the text so far cannot tell.
/// A marker written as a plain tag (`<tool_calls>`), which prose may name, unlike a special
/// token (`<|tool_calls_section_begin|>`).
fn is_plain_tag(marker: &str) -> bool {
    let name = marker
        .strip_prefix("</")
        .or_else(|| marker.strip_prefix('<'));
    name.is_some_and(|n| n.starts_with(|c: char| c.is_ascii_alphabetic()))
}

/// Whether what follows `e`, past blanks, starts a call (markup, an object or a list); None
/// while the text that says has not come.
fn call_follows(cx: &Cx, e: usize) -> Option<bool> {
    /// How far to look: a wrapper is followed by its calls, not by a paragraph first.
    const LOOK: usize = 64;
    let rest = &cx.b[e - cx.base..];
    match rest.iter().take(LOOK).find(|b| !b.is_ascii_whitespace()) {
        Some(b) => Some(matches!(b, b'<' | b'{' | b'[')),
        None if cx.at_end || rest.len() >= LOOK => Some(false),
        None => None,
    }
}

fn arrow_opens_a_call(cx: &Cx, e: usize) -> Option<bool> {
    /// How far to look: a longer name, or a longer gap before the object, is no call.
    const LOOK: usize = 128;
    let rest = &cx.b[e - cx.base..];
    let seen = rest.len().min(LOOK);
    let name = rest[..seen]
        .iter()
        .take_while(|&&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
        .count();
    let blank = |at: usize, newline: bool| {
        rest[at..seen]
            .iter()
            .take_while(|&&b| matches!(b, b' ' | b'\t' | b'\r') || (newline && b == b'\n'))
            .count()
    };
    let eol = name + blank(name, false);
    let verdict = match rest.get(eol) {
        _ if name == 0 && !rest.is_empty() => Some(false),
        Some(b'\n') if eol < seen => {
            let object = eol + 1 + blank(eol + 1, true);
            match rest.get(object) {
                Some(&b) if object < seen => Some(b == b'{'),
                _ => None,
            }
        }
        Some(_) if eol < seen => Some(false),
        _ => None,
    };
    match verdict {
        None if cx.at_end || rest.len() >= LOOK => Some(false),
        v => v,
    }
}
