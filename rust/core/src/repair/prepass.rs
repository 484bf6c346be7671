//! Rewrites of the whole text before the engine reads it (invalid UTF-8 replaced, one level of
//! escaping taken off), and the maps that carry positions in the rewritten text back to the input.

/// Where a rewrite of the text moved positions: each point pairs a position in the rewritten
/// text with the one it came from; between points both advance together.
#[derive(Debug, Default)]
pub(super) struct PositionMap {
    points: Vec<(usize, usize)>,
}

impl PositionMap {
    fn before(&self, position: usize) -> usize {
        let i = self.points.partition_point(|&(new, _)| new <= position);
        if i == 0 {
            return position;
        }
        let (new, old) = self.points[i - 1];
        let mapped = old + (position - new);
        // Inside a rewritten run: never past where the next unchanged text starts.
        self.points
            .get(i)
            .map_or(mapped, |&(_, next_old)| mapped.min(next_old))
    }
}

/// A position in the text after every rewrite in `maps` (applied in order), in the input.
pub(super) fn original_position(maps: &[PositionMap], position: usize) -> usize {
    maps.iter().rev().fold(position, |p, map| map.before(p))
}

/// Each invalid UTF-8 sequence replaced by U+FFFD, as `String::from_utf8_lossy` does, except
/// that a surrogate encoded on its own (`ED A0..BF 80..BF`: how WTF-8, CESU-8 and Python's
/// `surrogatepass` write a lone surrogate of a `str`) is one character, so one U+FFFD, not three.
pub(super) fn replace_invalid_utf8(input: &[u8]) -> (Vec<u8>, PositionMap) {
    let mut out = Vec::with_capacity(input.len() + 8);
    let mut map = PositionMap::default();
    // Bytes of an encoded surrogate already replaced: each comes as an invalid chunk of its own.
    let mut surrogate_rest = 0;
    for chunk in input.utf8_chunks() {
        out.extend_from_slice(chunk.valid().as_bytes());
        let invalid = chunk.invalid();
        if invalid.is_empty() {
            continue;
        }
        if surrogate_rest > 0 && chunk.valid().is_empty() {
            surrogate_rest -= invalid.len().min(surrogate_rest);
            continue;
        }
        let old = invalid.as_ptr() as usize - input.as_ptr() as usize;
        let len = match input[old..] {
            [0xED, 0xA0..=0xBF, 0x80..=0xBF, ..] => {
                surrogate_rest = 3 - invalid.len();
                3
            }
            _ => invalid.len(),
        };
        map.points.push((out.len(), old));
        out.extend_from_slice("\u{FFFD}".as_bytes());
        map.points.push((out.len(), old + len));
    }
    (out, map)
}

/// Removes one level of JSON string escaping: `\"` -> `"`, `\\` -> `\`, `\n` -> a newline, and
/// so on; escapes of the inner level come out as raw characters, which the repair pass escapes again.
pub(super) fn unescape_once(text: &[u8]) -> (Vec<u8>, PositionMap) {
    let mut out = Vec::with_capacity(text.len());
    let mut map = PositionMap::default();
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        let next = text.get(i + 1).copied();
        let (bytes, used): (&[u8], usize) = match (b, next) {
            (b'\\', Some(b'"')) => (b"\"", 2),
            (b'\\', Some(b'\\')) => (b"\\", 2),
            (b'\\', Some(b'/')) => (b"/", 2),
            (b'\\', Some(b'n')) => (b"\n", 2),
            (b'\\', Some(b't')) => (b"\t", 2),
            (b'\\', Some(b'r')) => (b"\r", 2),
            _ => (&text[i..i + 1], 1),
        };
        out.extend_from_slice(bytes);
        i += used;
        if used == 2 {
            map.points.push((out.len(), i));
        }
    }
    (out, map)
}
