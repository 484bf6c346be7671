//! Hard limits, checked before and during work.

use std::time::{Duration, Instant};

use crate::error::{Error, ErrorKind};

/// Size, depth and time limits for one call. Defaults follow the seed specification (FR-034, NFR-002).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest input accepted, in bytes (default 1 MiB).
    pub max_size: usize,
    /// Deepest nesting of objects and arrays accepted (default 64).
    pub max_depth: usize,
    /// Deadline for one repair in milliseconds (default 100); 0 disables it.
    pub timeout_ms: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_size: 1 << 20,
            max_depth: 64,
            timeout_ms: 100,
        }
    }
}

impl Limits {
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

/// Whether `json`, already known to be valid, nests deeper than `max_depth`. For a fast path
/// that parses with a library which does not limit depth; brackets inside strings are skipped.
pub fn exceeds_depth(json: &[u8], max_depth: usize) -> bool {
    // Fewer opening brackets than the limit cannot nest deeper. memchr2 jumps between brackets
    // (SIMD) and stops at the limit, so string-heavy arguments cost a fraction of a byte each.
    if memchr::memchr2_iter(b'{', b'[', json)
        .nth(max_depth)
        .is_none()
    {
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
    use super::exceeds_depth;

    #[test]
    fn depth_counts_brackets_outside_strings_only() {
        assert!(!exceeds_depth(br#"[[1], {"a": [2]}]"#, 3));
        assert!(exceeds_depth(br#"[[1], {"a": [[2]]}]"#, 3));
        assert!(!exceeds_depth(br#"["[[[[", {"k\"[[[": "\\"}]"#, 2));
        assert!(!exceeds_depth(b"", 0));
    }
}
