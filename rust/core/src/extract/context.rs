//! What the prose read so far says about the marker that comes next: whether it stands inside
//! a string of a value written in the prose (a pythonic call's argument, a JSON object's
//! string), or inside a quotation on its line. Neither makes a call: a value's text is opaque,
//! and a quoted call is a call being talked about.
//!
//! The state moves byte by byte over the prose as it goes out, so a reply read whole or token
//! by token reaches the same state at each marker. A string or a quotation ends with its line:
//! a quote left open never hides the lines after it.

/// Why a call-like text was not taken as a call (see `super::Note`).
pub mod why {
    pub const THINKING: &str = "inside reasoning";
    pub const TOOL_RESULT: &str = "inside an echoed tool result";
    pub const INLINE_CODE: &str = "inside inline code";
    pub const FENCE: &str = "inside a fence amid prose";
    pub const BLOCKQUOTE: &str = "inside a blockquote";
    pub const QUOTATION: &str = "inside a quotation";
    pub const MARKUP: &str = "inside an HTML comment, <code> or <pre>";
    pub const OBSERVATION: &str = "inside an echoed observation";
    pub const VALUE: &str = "inside a string value written in the prose";
    pub const EXAMPLE: &str = "a fence or object the sentence before introduces as an example";
    pub const NOT_LAST: &str = "a fence amid prose that is not the reply's last block";
    pub const UNKNOWN: &str = "a fence amid prose that names no registered tool";
    pub const BEFORE_LONE_CLOSER: &str = "before a lone reasoning closer: reasoning";
    pub const IN_DATA: &str = "inside a fence or block that reads as no call";
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct ProseContext {
    /// Brackets open in a value written in the prose (0: plain prose).
    depth: u32,
    /// The quote of the value's string being read, or 0.
    string: u8,
    escaped: bool,
    /// A value may start here (a single quote opens a string only where one may).
    may_start: bool,
    /// The quotation open on this line: the byte (or the last byte of the character) that
    /// closes it, or 0.
    quotation: u8,
    /// The last byte seen, and the one before it (a multi-byte quote is read by its tail).
    prev: [u8; 3],
    /// A bracket in plain prose whose next bytes tell whether it opens a value: `[` before a
    /// value or a name and `(` (a pythonic call), `{` before a quoted key. `i`: a name after
    /// `[`. Prose brackets (`[a, b`, `{the`) open nothing, so their quotes hide nothing.
    pending: u8,
}

/// The bytes that may change plain prose's state: brackets, quotes, the last byte of `“`/`‘`.
static OPENS_SOMETHING: [bool; 256] = {
    let mut t = [false; 256];
    t[b'{' as usize] = true;
    t[b'[' as usize] = true;
    t[b'"' as usize] = true;
    t[b'\'' as usize] = true;
    t[0x9c] = true;
    t[0x98] = true;
    t
};

/// Bytes after which a quote opens a quotation: the line's start, a space, an opening bracket.
fn opens_after(b: u8) -> bool {
    matches!(
        b,
        0 | b' ' | b'\t' | b'\n' | b'(' | b'[' | b':' | b'=' | b'>'
    )
}

impl ProseContext {
    /// Inside a string of a value written in the prose.
    pub(super) fn in_value_string(&self) -> bool {
        self.string != 0
    }

    /// Inside a quotation on this line.
    pub(super) fn in_quotation(&self) -> bool {
        self.quotation != 0
    }

    /// Why a marker here is no call, if it is not.
    pub(super) fn quoting(&self) -> Option<&'static str> {
        if self.in_value_string() {
            Some(why::VALUE)
        } else if self.in_quotation() {
            Some(why::QUOTATION)
        } else {
            None
        }
    }

    /// Text that went out as something other than prose (a block, a quoted stretch): what
    /// was open in the prose before it stays open, the line is not the same.
    pub(super) fn interrupt(&mut self) {
        self.prev = [b'>', 0, 0];
    }

    pub(super) fn advance(&mut self, bytes: &[u8]) {
        let mut i = 0;
        while i < bytes.len() {
            if self.depth == 0 && self.string == 0 && self.quotation == 0 && self.pending == 0 {
                // Plain prose changes only at a bracket or an opening quote: skip to one.
                let skip = bytes[i..]
                    .iter()
                    .position(|&b| OPENS_SOMETHING[usize::from(b)]);
                let at = skip.map_or(bytes.len(), |k| i + k);
                self.seen_up_to(bytes, i, at);
                if at == bytes.len() {
                    return;
                }
                i = at;
            } else if self.string != 0 && !self.escaped {
                // Inside a value's string only its quote, an escape or a line's end changes
                // anything: skip to one (a megabyte of code in one string is one skip a line).
                let skip = memchr::memchr3(self.string, b'\\', b'\n', &bytes[i..]);
                let at = skip.map_or(bytes.len(), |k| i + k);
                self.seen_up_to(bytes, i, at);
                if at == bytes.len() {
                    return;
                }
                i = at;
            }
            self.byte(bytes[i]);
            i += 1;
        }
    }

    /// `bytes[from..to]` were read with nothing to change but the last bytes seen.
    fn seen_up_to(&mut self, bytes: &[u8], from: usize, to: usize) {
        let n = (to - from).min(3);
        let old = self.prev;
        for k in 0..3 {
            self.prev[k] = if k < n { bytes[to - 1 - k] } else { old[k - n] };
        }
    }

    fn byte(&mut self, b: u8) {
        let before = self.prev[0];
        self.prev = [b, self.prev[0], self.prev[1]];
        if b == b'\n' {
            // A line ends every string and quotation left open on it.
            if self.string != 0 {
                self.depth = 0;
            }
            self.string = 0;
            self.escaped = false;
            self.quotation = 0;
            self.pending = 0;
            return;
        }
        if self.depth == 0 && self.pending != 0 {
            let p = self.pending;
            let opens = match (p, b) {
                (b'[' | b'{', b' ' | b'\t' | b'\r') => return,
                (b'[', b'{' | b'[' | b'"' | b'\'' | b'0'..=b'9' | b'-') => true,
                (b'[', c) if c.is_ascii_alphabetic() || c == b'_' => {
                    self.pending = b'i';
                    return;
                }
                (b'{', b'"' | b'\'' | b'}') => true,
                (b'i', c) if c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.') => return,
                (b'i', b'(') => true,
                _ => false,
            };
            self.pending = 0;
            if opens {
                self.depth = 1;
                self.may_start = true;
            }
        }
        if self.string != 0 {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == self.string {
                self.string = 0;
                self.may_start = false;
            }
            return;
        }
        if self.depth > 0 {
            match b {
                b'"' => self.string = b'"',
                b'\'' if self.may_start => self.string = b'\'',
                b'{' | b'[' | b'(' => {
                    self.depth += 1;
                    self.may_start = true;
                }
                b'}' | b']' | b')' => {
                    self.depth -= 1;
                    self.may_start = false;
                }
                b',' | b':' | b'=' => self.may_start = true,
                b' ' | b'\t' | b'\r' => {}
                _ => self.may_start = false,
            }
            return;
        }
        match b {
            b'{' | b'[' if self.quotation == 0 => self.pending = b,
            b'"' | b'\'' if self.quotation == b => self.quotation = 0,
            // An apostrophe in a word (`I'll`) opens nothing; a quote after a space does.
            b'"' | b'\'' if self.quotation == 0 && opens_after(before) => self.quotation = b,
            // “ ” ‘ ’ are E2 80 9C / 9D / 98 / 99: read by their last byte.
            0x9c | 0x98 if self.prev[1] == 0x80 && self.prev[2] == 0xe2 && self.quotation == 0 => {
                self.quotation = b + 1;
            }
            0x9d | 0x99 if self.prev[1] == 0x80 && self.prev[2] == 0xe2 && self.quotation == b => {
                self.quotation = 0;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ProseContext;

    fn after(text: &str) -> ProseContext {
        let mut c = ProseContext::default();
        c.advance(text.as_bytes());
        c
    }

    proptest::proptest! {
        /// Skipping plain prose reaches the state byte-by-byte reading does, however split.
        #[test]
        fn skipping_plain_prose_reads_as_every_byte(
            parts in proptest::collection::vec(r#"[ab'"{}\\\[\]()=,:\n“”‘’ x]{0,12}"#, 0..8),
        ) {
            let mut skipping = ProseContext::default();
            let mut each = ProseContext::default();
            for part in &parts {
                skipping.advance(part.as_bytes());
                for &b in part.as_bytes() {
                    each.byte(b);
                }
                proptest::prop_assert_eq!(skipping, each);
            }
        }
    }

    #[test]
    fn strings_of_values_and_quotations_are_seen_and_end_with_their_line() {
        assert!(after("[write_file(content='x ").in_value_string());
        assert!(after(r#"{"name": "w", "arguments": {"c": "x \" "#).in_value_string());
        assert!(!after("[write_file(content='x')] ").in_value_string());
        assert!(!after("[f(a='x\n").in_value_string());
        assert!(!after("Options are [a, b. And she said \"ok. ").in_value_string());
        assert!(after("[ {\"a\": \"x ").in_value_string());
        assert!(after("He wrote \"").in_quotation());
        assert!(after("He wrote “").in_quotation());
        assert!(after("He wrote 'a ").in_quotation());
        assert!(!after("I'll read the 'notes' file. ").in_quotation());
        assert!(!after("Set \"mode\" to fast. ").in_quotation());
        assert!(!after("He wrote \"x\n").in_quotation());
        assert!(!after("it is 5\" long ").in_quotation());
        assert!(!after("He wrote “x” ").in_quotation());
    }
}
