//! toolmend-core: every algorithm of toolmend, with no Python in it.
//!
//! The Python bindings (`rust/python`) only convert values at the boundary; everything that
//! decides anything about JSON lives here, so `cargo test` and the fuzzers exercise it directly.

pub mod batch;
pub mod error;
pub mod extract;
pub mod limits;
pub mod loads;
pub mod names;
pub mod partial;
pub mod pipeline;
mod pointer;
pub mod repair;
mod scan;
pub mod schema;
pub mod stream;
pub mod walk;
pub mod wire;

pub use error::{Error, ErrorCode, ErrorKind};
pub use limits::Limits;
pub use names::{NameRule, MAX_TOOL_NAME_LEN};
pub use repair::{mend, mend_unlogged, repair, validate, Mended, Repair, RepairKind, Repaired};
