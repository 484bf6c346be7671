//! Any bytes: repair gives strict JSON that repairs to itself, or a coded error; the strict
//! check agrees with serde_json. The log is bounded: `MAX_LOGGED` records one repair each, then
//! one record per kind counting the rest, and the closing repairs; positions inside the input.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;
use toolmend_core::repair::MAX_LOGGED;
use toolmend_core::{mend, repair, validate, ErrorCode, Limits, RepairKind};

fuzz_target!(|data: &[u8]| {
    // No deadline: a fuzzer's instrumented build is slow, and results must not depend on time.
    let limits = Limits {
        timeout_ms: 0,
        ..Limits::default()
    };
    let strict = common::strict_json(data);
    match validate(data, &limits) {
        Ok(()) => assert!(strict, "validate accepted what serde_json refuses"),
        Err(e) if e.code() == ErrorCode::Unparseable => {
            assert!(!strict, "validate refused strict JSON: {e}")
        }
        Err(e) => assert_eq!(e.code(), ErrorCode::TooDeepOrTimeout),
    }
    match repair(data, &limits) {
        Ok(once) => {
            assert!(
                common::strict_json(once.json.as_bytes()),
                "repair output is not strict JSON: {:?}",
                once.json
            );
            assert_eq!(
                once.repairs.is_empty(),
                strict,
                "repairs logged for valid input, or none for invalid"
            );
            // Past the first MAX_LOGGED: a record per kind counting the rest, and the repairs
            // that close the text at its end (bounded by the open containers).
            let bound = MAX_LOGGED + RepairKind::ALL.len() + limits.max_depth + 1;
            assert!(once.repairs.len() <= bound, "{} records", once.repairs.len());
            assert!(once.repairs.iter().all(|r| r.count >= 1 && r.position <= data.len()));
            let twice = mend(once.json.as_bytes(), &limits).expect("repaired output is refused");
            assert_eq!(twice.json, once.json.as_ref(), "repair is not idempotent");
            assert!(
                twice.repairs.is_empty(),
                "valid output logged repairs: {:?}",
                twice.repairs
            );
        }
        Err(e) => {
            assert!(matches!(
                e.code(),
                ErrorCode::Unparseable | ErrorCode::TooDeepOrTimeout
            ));
            assert!(
                e.position <= data.len(),
                "error position {} past the input",
                e.position
            );
        }
    }
});
