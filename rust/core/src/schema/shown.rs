//! How a value or a name is shown in a message: as JSON, cut at a readable length.

use serde_json::Value;

/// Longest rendering of a value in `actual` (and of a name in a message), in characters.
pub const MAX_SHOWN: usize = 200;

/// The value as JSON, cut at [`MAX_SHOWN`] characters. Only the part shown is written: the
/// instance of an error about an object is the whole object, arguments of any size.
pub fn render(v: &Value) -> String {
    // MAX_SHOWN + 1 characters fit in this many bytes, so the cut falls where `clip` puts it.
    const ENOUGH: usize = (MAX_SHOWN + 1) * 4;
    struct Bounded(Vec<u8>);
    impl std::io::Write for Bounded {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let room = ENOUGH - self.0.len();
            if room == 0 {
                return Err(std::io::ErrorKind::WriteZero.into());
            }
            let n = buf.len().min(room);
            self.0.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut out = Bounded(Vec::with_capacity(64));
    // An error here only says the writer is full.
    let _ = serde_json::to_writer(&mut out, v);
    clip(&String::from_utf8_lossy(&out.0))
}

/// At most [`MAX_SHOWN`] characters, with "..." when cut.
pub fn clip(s: &str) -> String {
    match s.char_indices().nth(MAX_SHOWN) {
        Some((at, _)) => format!("{}...", &s[..at]),
        None => s.to_string(),
    }
}
