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
        Limits { max_size: 1 << 20, max_depth: 64, timeout_ms: 100 }
    }
}

impl Limits {
    /// Refuses an input over `max_size` before any work is done on it.
    pub fn check_size(&self, len: usize) -> Result<(), Error> {
        if len > self.max_size {
            return Err(Error { kind: ErrorKind::TooLarge { size: len, limit: self.max_size }, position: 0 });
        }
        Ok(())
    }

    pub(crate) fn deadline(&self) -> Deadline {
        Deadline {
            at: (self.timeout_ms > 0).then(|| Instant::now() + Duration::from_millis(self.timeout_ms)),
            limit_ms: self.timeout_ms,
        }
    }
}

/// A deadline that is cheap to poll: callers check it every few thousand steps, not every byte.
pub(crate) struct Deadline {
    at: Option<Instant>,
    limit_ms: u64,
}

impl Deadline {
    pub(crate) fn check(&self, position: usize) -> Result<(), Error> {
        match self.at {
            Some(at) if Instant::now() >= at => {
                Err(Error { kind: ErrorKind::Timeout { limit_ms: self.limit_ms }, position })
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
impl Deadline {
    /// A deadline that has already passed, for testing the timeout path without sleeping.
    pub(crate) fn expired(limit_ms: u64) -> Self {
        Deadline { at: Some(Instant::now()), limit_ms }
    }
}
