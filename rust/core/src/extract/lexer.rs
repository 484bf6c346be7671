//! The lexer of a call block's body: it follows the body byte by byte (strings, Qwen3-Coder's
//! raw parameter values, bracket depth, what comes after a whole value) so that a block's
//! closer and markers count only outside them. The engine runs it on a block as the text
//! arrives; the formats run it (`find_outside`) to find a closer within a body.
//!
//! It knows nothing of the format table: the stops it looks for are handed to it.

use super::formats;
use memchr::{memchr2, memmem};

/// How far past a whole JSON value the reader looks for the block's closer (across whitespace
/// and separators) before it takes the value as the block's end.
const AFTER_VALUE: usize = 1024;

/// Bytes a call block's lexer reads before it lets the deadline be checked.
const LEX_BUDGET: usize = 1 << 16;

/// The buffer being read: the content from byte `base` on.
pub(super) struct Cx<'a> {
    pub b: &'a [u8],
    pub base: usize,
    pub at_end: bool,
}

impl Cx<'_> {
    pub(super) fn end(&self) -> usize {
        self.base + self.b.len()
    }

    pub(super) fn byte(&self, at: usize) -> Option<u8> {
        self.b.get(at - self.base).copied()
    }
}

/// The longest end of `text` that is the start of `pattern` but not all of it (the next token
/// may complete it).
pub(super) fn prefix_len(text: &[u8], pattern: &[u8]) -> usize {
    (1..pattern.len().min(text.len() + 1))
        .rev()
        .find(|&n| pattern.starts_with(&text[text.len() - n..]))
        .unwrap_or(0)
}

pub(super) enum Lexed {
    /// Read a budget's worth: call again (the deadline is checked between).
    More,
    /// Needs more text.
    Wait,
    /// The body ends at `body_end`, the block (with its closer) at `end`.
    End { body_end: usize, end: usize },
}

/// Follows a body byte by byte: strings (double quotes, and single quotes where a value may
/// start), Qwen3-Coder's raw parameter values, bracket depth, and what comes after a whole
/// value. Markers count only outside strings and parameter values.
#[derive(Clone, Debug)]
pub(super) struct Lexer {
    pos: usize,
    /// The quote of the string being read, or 0.
    quote: u8,
    /// Inside `<parameter=...>` up to `</parameter>`.
    param: bool,
    /// Parameter tags open around here: a value that holds a whole parameter tag (markup it
    /// saves) ends at the closer that balances its own opener, so a block's closer written in
    /// it ends nothing. With `flat_params` (read again when the text ended unbalanced: a
    /// closer was missing), a value ends at the first closer or the next opener.
    param_depth: u32,
    flat_params: bool,
    /// A parameter tag was opened inside a value.
    nested: bool,
    /// A parameter tag was seen: the body is tags around raw values, not JSON, so brackets
    /// and quotes between the tags are text and only a stop ends it.
    tagged: bool,
    /// A tagged body's `</function>` came: the call is whole, and the format's next opener
    /// starts the next call.
    function_closed: bool,
    /// Inside GLM's `<arg_value>` up to `</arg_value>` (or the next `<arg_key>`, its closer
    /// missing): raw text, like a parameter's value.
    arg_value: bool,
    depth: u32,
    /// A value may start here: a single quote opens a string.
    may_start: bool,
    /// After a whole value at depth 0: where it ended, and where separators after it end.
    after: Option<(usize, usize)>,
    /// Whether a whole value followed by prose ends the body.
    values_end: bool,
    /// A sample fence: a line that opens with a fence's run ends a string left open (the
    /// sample's text is not JSON, and a lone quote in it must not hide the fence's close).
    fence_lines: bool,
    /// The next `</parameter>` found, or how far the text is known to hold none: a missing
    /// close is looked for once, not from every `<parameter=`.
    param_close: Result<usize, usize>,
}

/// GLM's raw values.
const ARG_VALUE_OPEN: &[u8] = b"<arg_value>";
const ARG_VALUE_CLOSE: &[u8] = b"</arg_value>";
const ARG_KEY_OPEN: &[u8] = b"<arg_key>";

/// `<parameter=K>` (Qwen3-Coder) or `<parameter name="K">` (MiniMax): the value is raw text.
const PARAM_OPEN: &[u8] = b"<parameter";
const PARAM_CLOSE: &[u8] = b"</parameter>";

enum Stop {
    None,
    /// A closer (true) or the same format's next marker (false), of this length.
    At(usize, bool),
    /// The text ends with the start of a marker.
    Partial,
}

fn stop_at(cx: &Cx, i: usize, stops: &[(&'static [u8], bool)]) -> Stop {
    let rest = &cx.b[i - cx.base..];
    for &(pattern, closes) in stops {
        if rest.starts_with(pattern) {
            return Stop::At(pattern.len(), closes);
        }
    }
    if !cx.at_end
        && stops
            .iter()
            .any(|(p, _)| p.len() > rest.len() && p.starts_with(rest))
    {
        return Stop::Partial;
    }
    Stop::None
}

impl Lexer {
    pub(super) fn new(pos: usize) -> Self {
        Lexer {
            pos,
            quote: 0,
            param: false,
            param_depth: 0,
            flat_params: false,
            nested: false,
            arg_value: false,
            tagged: false,
            function_closed: false,
            depth: 0,
            may_start: true,
            after: None,
            values_end: true,
            fence_lines: false,
            param_close: Err(0),
        }
    }

    /// The lexer of a fence amid prose (see `fence_lines`).
    pub(super) fn sample_fence(pos: usize) -> Self {
        Lexer {
            values_end: false,
            fence_lines: true,
            ..Lexer::new(pos)
        }
    }

    /// A lexer that reads parameter values flat (see `param_depth`).
    pub(super) fn flat_params(pos: usize) -> Self {
        Lexer {
            flat_params: true,
            ..Lexer::new(pos)
        }
    }

    /// Parameter tags opened inside a value were never closed: read flat instead.
    pub(super) fn unbalanced(&self) -> bool {
        !self.flat_params && self.nested && self.param_depth > 0
    }

    /// The bytes certainly in the block.
    pub(super) fn committed(&self) -> usize {
        self.after.map_or(self.pos, |(_, junk_end)| junk_end)
    }

    pub(super) fn run(&mut self, cx: &Cx, stops: &[(&'static [u8], bool)]) -> Lexed {
        let end = cx.end();
        let budget_end = (self.pos + LEX_BUDGET).min(end);
        while self.pos < end {
            if self.pos >= budget_end {
                return Lexed::More;
            }
            let i = self.pos;
            if self.quote != 0 && self.fence_lines {
                let hay = &cx.b[i - cx.base..];
                if let Some(j) = memchr::memchr3(self.quote, b'\\', b'\n', hay) {
                    if hay[j] == b'\n' {
                        let line = &hay[j + 1..];
                        let spaces = line.iter().take(3).take_while(|&&b| b == b' ').count();
                        let run = line[spaces..]
                            .iter()
                            .take(3)
                            .take_while(|&&b| b == b'`')
                            .count();
                        if run < 3 && spaces + run == line.len() && !cx.at_end {
                            self.pos = i + j;
                            return Lexed::Wait; // the line's start has not all come
                        }
                        if run == 3 {
                            self.quote = 0;
                        }
                        self.pos = i + j;
                        if self.quote != 0 {
                            self.pos += 1;
                        }
                        continue;
                    }
                }
            }
            if self.quote != 0 {
                match memchr2(self.quote, b'\\', &cx.b[i - cx.base..]) {
                    None => self.pos = end,
                    Some(j) if cx.b[i + j - cx.base] == b'\\' => {
                        if i + j + 1 == end && !cx.at_end {
                            self.pos = i + j;
                            return Lexed::Wait; // what it escapes has not come
                        }
                        self.pos = (i + j + 2).min(end);
                    }
                    Some(j) => {
                        self.quote = 0;
                        self.may_start = false;
                        self.pos = i + j + 1;
                    }
                }
                continue;
            }
            if self.param {
                let close = self.param_close(cx, i);
                let hay = &cx.b[i - cx.base..close.unwrap_or(end) - cx.base];
                let next = memmem::find(hay, PARAM_OPEN).map(|j| (i + j, PARAM_OPEN.len(), true));
                let close = close.map(|c| (c, PARAM_CLOSE.len(), false));
                match next.or(close) {
                    Some((at, len, true)) if at + len == end && !cx.at_end => {
                        self.pos = at;
                        return Lexed::Wait; // whether it is a tag: the next byte says
                    }
                    Some((at, len, true)) => {
                        self.pos = at + len;
                        let tag = matches!(cx.byte(at + len), Some(b'=' | b' ' | b'\t'));
                        if tag && !self.flat_params {
                            self.param_depth += 1;
                            self.nested = true;
                        }
                    }
                    Some((at, len, false)) => {
                        self.pos = at + len;
                        self.param_depth = self.param_depth.saturating_sub(1);
                        if self.flat_params {
                            self.param_depth = 0;
                        }
                        self.param = self.param_depth > 0;
                    }
                    None if cx.at_end => self.pos = end,
                    None => {
                        let held = prefix_len(hay, PARAM_CLOSE).max(prefix_len(hay, PARAM_OPEN));
                        self.pos = end - held;
                        return Lexed::Wait;
                    }
                }
                continue;
            }
            if self.arg_value {
                let hay = &cx.b[i - cx.base..];
                let close = memmem::find(hay, ARG_VALUE_CLOSE).map(|j| j + ARG_VALUE_CLOSE.len());
                let next_key = memmem::find(hay, ARG_KEY_OPEN);
                match (close, next_key) {
                    (Some(c), Some(k)) if k < c => self.pos = i + k,
                    (Some(c), _) => self.pos = i + c,
                    (None, Some(k)) => self.pos = i + k,
                    (None, None) if cx.at_end => self.pos = end,
                    (None, None) => {
                        let held =
                            prefix_len(hay, ARG_VALUE_CLOSE).max(prefix_len(hay, ARG_KEY_OPEN));
                        self.pos = end - held;
                        return Lexed::Wait;
                    }
                }
                self.arg_value = false;
                continue;
            }
            if let Some((value_end, junk_end)) = self.after {
                match self.after_value(cx, stops, value_end, junk_end) {
                    Some(lexed) => return lexed,
                    None => continue,
                }
            }
            match stop_at(cx, i, stops) {
                Stop::At(len, true) => {
                    return Lexed::End {
                        body_end: i,
                        end: i + len,
                    }
                }
                // A tagged body ends only at its closer: its opener may be a value's text.
                Stop::At(_, false) if !self.tagged || self.function_closed => {
                    return Lexed::End {
                        body_end: i,
                        end: i,
                    }
                }
                Stop::At(..) => {}
                Stop::Partial => return Lexed::Wait,
                Stop::None => {}
            }
            let c = cx.b[i - cx.base];
            if c == b'<' {
                let rest = &cx.b[i - cx.base..];
                if rest.starts_with(PARAM_OPEN)
                    && matches!(rest.get(PARAM_OPEN.len()), Some(b'=' | b' '))
                {
                    self.param = true;
                    self.param_depth = 1;
                    self.tagged = true;
                    self.pos = i + PARAM_OPEN.len();
                    continue;
                }
                if rest.starts_with(ARG_VALUE_OPEN) {
                    self.arg_value = true;
                    self.tagged = true;
                    self.pos = i + ARG_VALUE_OPEN.len();
                    continue;
                }
                let partial = |open: &[u8]| rest.len() <= open.len() && open.starts_with(rest);
                if !cx.at_end && (partial(PARAM_OPEN) || partial(ARG_VALUE_OPEN)) {
                    return Lexed::Wait;
                }
            }
            if self.tagged {
                const FUNCTION_CLOSE: &[u8] = b"</function>";
                let rest = &cx.b[i - cx.base..];
                if rest.starts_with(FUNCTION_CLOSE) {
                    self.function_closed = true;
                } else if !cx.at_end
                    && rest.len() < FUNCTION_CLOSE.len()
                    && FUNCTION_CLOSE.starts_with(rest)
                {
                    return Lexed::Wait;
                }
                self.pos = i + 1;
                continue;
            }
            match c {
                b'"' => self.quote = b'"',
                b'\'' if self.may_start => self.quote = b'\'',
                b'{' | b'[' => {
                    self.depth += 1;
                    self.may_start = true;
                }
                b'}' | b']' => {
                    if self.depth > 0 {
                        self.depth -= 1;
                        if self.depth == 0 && self.values_end {
                            self.after = Some((i + 1, i + 1));
                        }
                    }
                    self.may_start = false;
                }
                b',' | b':' | b'=' | b'(' => self.may_start = true,
                b' ' | b'\t' | b'\r' | b'\n' => {}
                _ => self.may_start = false,
            }
            self.pos = i + 1;
        }
        if !cx.at_end {
            return Lexed::Wait;
        }
        match self.after {
            Some((_, junk_end)) => Lexed::End {
                body_end: junk_end,
                end: junk_end,
            },
            None => Lexed::End { body_end: end, end },
        }
    }

    /// The next `</parameter>` at or after `i`, searched for once over any stretch.
    fn param_close(&mut self, cx: &Cx, i: usize) -> Option<usize> {
        match self.param_close {
            Ok(at) if at >= i => return Some(at),
            Ok(_) => self.param_close = Err(i),
            Err(_) => {}
        }
        let Err(clear) = self.param_close else {
            unreachable!()
        };
        let from = clear.max(i);
        match memmem::find(&cx.b[from - cx.base..], PARAM_CLOSE) {
            Some(j) => {
                self.param_close = Ok(from + j);
                Some(from + j)
            }
            None => {
                let held = prefix_len(&cx.b[from - cx.base..], PARAM_CLOSE);
                self.param_close = Err(cx.end() - held);
                None
            }
        }
    }

    /// What follows a whole value: whitespace and separators (`;`, `,`, stray closers, a
    /// fence's closing backticks) stay in the block; then the closer ends it, the same format's
    /// next marker ends it before that marker, another value goes on, and anything else means
    /// the block ended with the value (a missing closer, prose after). None: go on reading.
    fn after_value(
        &mut self,
        cx: &Cx,
        stops: &[(&'static [u8], bool)],
        value_end: usize,
        junk_end: usize,
    ) -> Option<Lexed> {
        let i = self.pos;
        let ended = Lexed::End {
            body_end: junk_end,
            end: junk_end,
        };
        if i - value_end > AFTER_VALUE {
            return Some(ended);
        }
        match stop_at(cx, i, stops) {
            Stop::At(len, true) => {
                return Some(Lexed::End {
                    body_end: i,
                    end: i + len,
                })
            }
            Stop::At(..) => return Some(ended),
            Stop::Partial => return Some(Lexed::Wait),
            Stop::None => {}
        }
        match cx.b[i - cx.base] {
            b' ' | b'\t' | b'\r' | b'\n' => self.pos = i + 1,
            b';' | b',' | b'}' | b']' | b')' => {
                self.pos = i + 1;
                self.after = Some((value_end, i + 1));
            }
            b'`' => {
                // Measured only as far as the window, so a long run costs no more per token.
                let n = cx.b[i - cx.base..]
                    .iter()
                    .take(AFTER_VALUE + 1)
                    .take_while(|&&b| b == b'`')
                    .count();
                if i + n == cx.end() && !cx.at_end {
                    return Some(Lexed::Wait);
                }
                if n < 3 {
                    return Some(ended);
                }
                self.pos = i + n;
                self.after = Some((value_end, i + n));
            }
            b'{' | b'[' => {
                self.after = None;
                self.may_start = true;
            }
            // An inner call block's closer (`<TOOLCALL><tool_call>{...}</tool_call>`): the
            // call's own block closed inside this one, whose closer may never come.
            b'<' => match formats::call_closer_at(&cx.b[i - cx.base..]) {
                Ok(len) => {
                    self.pos = i + len;
                    self.after = Some((value_end, i + len));
                }
                Err(true) if !cx.at_end => return Some(Lexed::Wait),
                Err(_) => return Some(ended),
            },
            _ => return Some(ended),
        }
        None
    }
}

/// Where `pattern` first stands in `text[from..to]` outside strings and parameter values.
pub(super) fn find_outside(
    text: &str,
    from: usize,
    to: usize,
    pattern: &'static [u8],
) -> Option<usize> {
    let cx = Cx {
        b: &text.as_bytes()[..to],
        base: 0,
        at_end: true,
    };
    for flat in [false, true] {
        let mut lex = Lexer {
            values_end: false,
            flat_params: flat,
            ..Lexer::new(from)
        };
        loop {
            match lex.run(&cx, &[(pattern, true)]) {
                Lexed::More => {}
                Lexed::End { body_end, end } if end > body_end => return Some(body_end),
                Lexed::End { .. } | Lexed::Wait if lex.unbalanced() => break,
                Lexed::End { .. } | Lexed::Wait => return None,
            }
        }
    }
    None
}
