//! Lines out of a byte stream split anywhere, and what each line of an Ollama NDJSON or OpenAI
//! server-sent-events stream says.
//!
//! Each byte is searched for a newline once, whatever the chunking (only the new bytes are
//! searched; the pending line never holds a newline), and the pending line is held to a limit:
//! a line that grows past it is refused at once and its bytes dropped until its newline.

use memchr::memchr;

/// What the framer hands out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame<'a> {
    /// One line, without its newline (a `\r` before it stays; readers trim it).
    Line(&'a [u8]),
    /// A line grew past the limit: it is dropped, up to and with its newline.
    TooLong,
}

/// Splits a byte stream into lines, whatever the chunks, in time linear in the bytes.
#[derive(Clone, Debug, Default)]
pub struct LineFramer {
    /// The start of a line whose newline has not arrived (never holds a newline).
    pending: Vec<u8>,
    /// The longest line taken, in bytes without the newline.
    limit: usize,
    /// The line being received was refused: its bytes are dropped until its newline.
    skipping: bool,
}

impl LineFramer {
    pub fn new(limit: usize) -> Self {
        LineFramer {
            pending: Vec::new(),
            limit,
            skipping: false,
        }
    }

    /// Takes the next chunk and hands out every line it completes, in order. A line is refused
    /// (`TooLong`, once) as soon as it is longer than the limit, however it was split.
    pub fn push<E>(
        &mut self,
        bytes: &[u8],
        mut each: impl FnMut(Frame<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut rest = bytes;
        while let Some(newline) = memchr(b'\n', rest) {
            let part = &rest[..newline];
            rest = &rest[newline + 1..];
            if std::mem::replace(&mut self.skipping, false) {
                continue; // the end of a refused line
            }
            if self.pending.len() + part.len() > self.limit {
                self.pending.clear();
                each(Frame::TooLong)?;
            } else if self.pending.is_empty() {
                each(Frame::Line(part))?; // whole in this chunk: not copied
            } else {
                self.pending.extend_from_slice(part);
                let line = std::mem::take(&mut self.pending);
                let handed = each(Frame::Line(&line));
                self.pending = line; // the buffer is kept for the next line
                self.pending.clear();
                handed?;
            }
        }
        if self.skipping {
            return Ok(());
        }
        if self.pending.len() + rest.len() > self.limit {
            self.pending = Vec::new(); // freed: the line will not be read
            self.skipping = true;
            return each(Frame::TooLong);
        }
        self.pending.extend_from_slice(rest);
        Ok(())
    }

    /// The stream ended: the last line, when it had no newline.
    pub fn finish<E>(&mut self, each: impl FnOnce(Frame<'_>) -> Result<(), E>) -> Result<(), E> {
        self.skipping = false;
        if self.pending.is_empty() {
            return Ok(());
        }
        let line = std::mem::take(&mut self.pending);
        each(Frame::Line(&line))
    }
}

/// What one line of a stream says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineKind<'a> {
    /// A blank line: the end of a server-sent event.
    Blank,
    /// A comment (`:`), an `event:` or `id:` field, or `data:` with nothing after it.
    Ignored,
    /// `[DONE]` (with or without `data:`): the end of the turn.
    Done,
    /// The payload of a `data:` line, trimmed.
    Data(&'a [u8]),
    /// A line with no field name: an NDJSON line (Ollama), trimmed.
    Bare(&'a [u8]),
}

/// Reads one line of an Ollama NDJSON or OpenAI SSE stream (CRLF or LF; space after the colon
/// or not).
pub fn line_kind(line: &[u8]) -> LineKind<'_> {
    let line = line.trim_ascii();
    if line.is_empty() {
        return LineKind::Blank;
    }
    if line.starts_with(b":") || line.starts_with(b"event:") || line.starts_with(b"id:") {
        return LineKind::Ignored;
    }
    let (payload, data) = match line.strip_prefix(b"data:") {
        Some(payload) => (payload.trim_ascii(), true),
        None => (line, false),
    };
    if payload.is_empty() {
        LineKind::Ignored
    } else if payload == b"[DONE]" {
        LineKind::Done
    } else if data {
        LineKind::Data(payload)
    } else {
        LineKind::Bare(payload)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every frame, lines as strings and refusals as "!".
    fn frames(framer: &mut LineFramer, chunks: &[&[u8]]) -> Vec<String> {
        let mut out = Vec::new();
        let mut take = |f: Frame<'_>| {
            out.push(match f {
                Frame::Line(l) => String::from_utf8_lossy(l).into_owned(),
                Frame::TooLong => "!".into(),
            });
            Ok::<(), ()>(())
        };
        for chunk in chunks {
            framer.push(chunk, &mut take).unwrap();
        }
        framer.finish(&mut take).unwrap();
        out
    }

    #[test]
    fn lines_come_out_the_same_however_the_bytes_are_split() {
        let text = b"one\r\ntwo\n\nthree-is-long\nfour";
        let whole = frames(&mut LineFramer::new(8), &[text]);
        assert_eq!(whole, ["one\r", "two", "", "!", "four"]);
        for step in 1..text.len() {
            let chunks: Vec<&[u8]> = text.chunks(step).collect();
            assert_eq!(
                frames(&mut LineFramer::new(8), &chunks),
                whole,
                "step {step}"
            );
        }
    }

    #[test]
    fn a_line_is_refused_once_as_soon_as_it_grows_past_the_limit() {
        let mut framer = LineFramer::new(4);
        let mut seen = Vec::new();
        for chunk in [&b"ab"[..], b"cd", b"e", b"fgh", b"i\nok\n"] {
            framer
                .push(chunk, |f| {
                    seen.push(matches!(f, Frame::TooLong));
                    Ok::<(), ()>(())
                })
                .unwrap();
            if chunk == b"e" {
                assert_eq!(seen, [true], "refused when the fifth byte arrived");
            }
        }
        assert_eq!(seen, [true, false]);
        assert!(
            framer.pending.capacity() <= 4,
            "the refused bytes are not kept"
        );
    }

    #[test]
    fn a_long_line_in_small_chunks_costs_time_linear_in_its_length() {
        // The same bytes as sixteen short lines or one long one, in 256-byte chunks. Rescanning
        // the pending line per chunk would make the long line sixteen times as slow; each byte
        // searched once makes them about equal.
        fn fastest(line_len: usize, lines: usize) -> std::time::Duration {
            let mut stream = vec![b'x'; line_len];
            stream.push(b'\n');
            let stream = stream.repeat(lines);
            (0..5)
                .map(|_| {
                    let start = std::time::Instant::now();
                    let mut framer = LineFramer::new(usize::MAX);
                    let mut found = 0;
                    for chunk in stream.chunks(256) {
                        framer
                            .push(chunk, |f| {
                                found +=
                                    usize::from(matches!(f, Frame::Line(l) if l.len() == line_len));
                                Ok::<(), ()>(())
                            })
                            .unwrap();
                    }
                    assert_eq!(found, lines);
                    start.elapsed()
                })
                .min()
                .unwrap()
        }
        let short = fastest(1 << 18, 16);
        let long = fastest(1 << 22, 1);
        let ratio = long.as_secs_f64() / short.as_secs_f64().max(1e-9);
        assert!(
            ratio < 8.0,
            "one long line took {ratio:.1}x as long as short ones"
        );
    }

    #[test]
    fn sse_and_ndjson_lines() {
        assert_eq!(
            line_kind(b"data: {\"a\":1}\r"),
            LineKind::Data(b"{\"a\":1}")
        );
        assert_eq!(line_kind(b"data:{}"), LineKind::Data(b"{}"));
        assert_eq!(line_kind(b"data: [DONE]"), LineKind::Done);
        assert_eq!(line_kind(b"[DONE]"), LineKind::Done);
        assert_eq!(line_kind(b": keep-alive"), LineKind::Ignored);
        assert_eq!(line_kind(b"event: message"), LineKind::Ignored);
        assert_eq!(line_kind(b"id: 7"), LineKind::Ignored);
        assert_eq!(line_kind(b"data:"), LineKind::Ignored);
        assert_eq!(line_kind(b" \r"), LineKind::Blank);
        assert_eq!(
            line_kind(b" {\"done\":true} "),
            LineKind::Bare(b"{\"done\":true}")
        );
    }
}
