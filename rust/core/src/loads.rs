//! `loads`: JSON text into a host's objects, stage by stage. The stages and their order are
//! decided here; the host (the binding) only builds objects, with the parsers it has.
//!
//! 1. Valid text within the limits (and not plainly broken, see `repair::plainly_broken`) is
//!    built by the host's fastest strict parser, whose objects must stand for the text exactly.
//! 2. Anything else is mended (or, with mending off, checked) into strict JSON, without the host.
//! 3. The mended text is built by the fast parser (its objects walked for the depth limit unless
//!    the repair pass wrote only plain numbers), else by an exact parser, whose objects must hold
//!    no number past the range of a double (reported at its place in the input).

use crate::error::Error;
use crate::limits::{first_number_out_of_range, Limits};
use crate::repair::{mend, mend_unlogged, plainly_broken, validate, Mended, Repair};

/// The deepest nesting loads turns into objects: the exact parser's fixed recursion limit.
pub const LOADS_MAX_DEPTH: usize = 200;

/// What `load` does with text that is not valid JSON within the limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mending {
    /// Refuse it (repair turned off): the strict check says why.
    Off,
    /// Mend it, keeping no log (`loads` hands back objects alone).
    Unlogged,
    /// Mend it and log the repairs (a tool call carries them).
    Logged,
}

/// Why JSON text did not become objects.
#[derive(Debug)]
pub enum LoadError<E> {
    /// Not JSON even after repair (or, with repair off, not strict JSON), or over a limit.
    Core(Error),
    /// Strict JSON that the exact parser could not build.
    Build(E),
}

/// What a host builds objects with.
pub trait Objects {
    type Object;
    /// Why the host could not run a parser at all (a Python exception).
    type Error;
    /// Why the exact parser refused strict JSON.
    type BuildError;

    /// Stage 1: the objects of text by the fastest strict parser, when they stand for it
    /// exactly within `max_depth`; None when the parser refuses it or they do not stand.
    fn strict(&self, bytes: &[u8], max_depth: usize) -> Result<Option<Self::Object>, Self::Error>;
    /// Stage 3: mended text by the fast parser, its objects walked to `walk` levels for the
    /// depth limit and numbers it could not hold (None: no walk); None when it refuses them.
    fn fast(&self, json: &[u8], walk: Option<usize>) -> Option<Self::Object>;
    /// Stage 3, else: mended text by the exact parser (it holds any number).
    fn exact(&self, json: &[u8]) -> Result<Self::Object, Self::BuildError>;
    /// Whether objects hold a number past the range of a double (looked at to `room` levels).
    fn out_of_range(&self, object: &Self::Object, room: usize) -> bool;
    /// Runs `work` over `size` bytes, which touches no host object (the binding lets go of the
    /// GIL for big inputs).
    fn detached<T: Send>(&self, size: usize, work: impl FnOnce() -> T + Send) -> T;
}

/// Objects of JSON text and the repairs it needed, or why not.
pub type Loaded<O> =
    Result<(<O as Objects>::Object, Vec<Repair>), LoadError<<O as Objects>::BuildError>>;

/// The limits `loads` works under: nesting capped at what the exact parser can build.
pub fn loads_limits(limits: &Limits) -> Limits {
    Limits {
        max_depth: limits.max_depth.min(LOADS_MAX_DEPTH),
        ..*limits
    }
}

/// JSON text as objects, through the three stages.
pub fn load<O: Objects>(
    host: &O,
    bytes: &[u8],
    limits: &Limits,
    mending: Mending,
) -> Result<Loaded<O>, O::Error> {
    let limits = loads_limits(limits);
    if let Some(object) = fast_stage(host, bytes, &limits)? {
        return Ok(Ok((object, Vec::new())));
    }
    // The fast parser refused the text (or it is over a limit, which the core reports).
    let mended = host.detached(bytes.len(), || mend_stage(bytes, &limits, mending));
    Ok(build_stage(host, bytes, mended, &limits))
}

/// Stage 1 alone (batches run stage 2 of many texts on threads): None when it does not apply.
pub fn fast_stage<O: Objects>(
    host: &O,
    bytes: &[u8],
    limits: &Limits,
) -> Result<Option<O::Object>, O::Error> {
    if bytes.len() > limits.max_size || plainly_broken(bytes) {
        return Ok(None);
    }
    host.strict(bytes, limits.max_depth)
}

/// Stage 2 alone: the text mended (or, with mending off, checked) into strict JSON.
pub fn mend_stage(bytes: &[u8], limits: &Limits, mending: Mending) -> Result<Mended, Error> {
    match mending {
        Mending::Logged => mend(bytes, limits),
        Mending::Unlogged => mend_unlogged(bytes, limits),
        Mending::Off => validate(bytes, limits).map(|()| Mended {
            json: String::from_utf8_lossy(bytes).into_owned(),
            repairs: Vec::new(),
            plain_numbers: false,
        }),
    }
}

/// Stage 3 alone: the mended text as objects, numbers past a double refused.
pub fn build_stage<O: Objects>(
    host: &O,
    input: &[u8],
    mended: Result<Mended, Error>,
    limits: &Limits,
) -> Loaded<O> {
    let Mended {
        json,
        repairs,
        plain_numbers,
    } = mended.map_err(LoadError::Core)?;
    // The repair pass held its output to the depth limit: when every number it wrote is plain,
    // the fast parser's objects need no walk.
    if let Some(object) = host.fast(
        json.as_bytes(),
        (!plain_numbers).then_some(limits.max_depth),
    ) {
        return Ok((object, repairs));
    }
    let object = host.exact(json.as_bytes()).map_err(LoadError::Build)?;
    if host.out_of_range(&object, limits.max_depth) {
        // Positions are the input's; a number the repair pass moved is found in its output.
        let position = first_number_out_of_range(input)
            .or_else(|| first_number_out_of_range(json.as_bytes()))
            .unwrap_or(0);
        return Err(LoadError::Core(Error::number_out_of_range(position)));
    }
    Ok((object, repairs))
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use serde_json::Value;

    use super::*;

    /// A host over serde values that says which stages ran: its fast parser refuses numbers
    /// past 64 bits (as orjson does), its exact parser reads them as infinite doubles or keeps them.
    #[derive(Default)]
    struct Recording {
        stages: RefCell<Vec<&'static str>>,
    }

    impl Objects for Recording {
        type Object = Value;
        type Error = ();
        type BuildError = String;

        fn strict(&self, bytes: &[u8], _: usize) -> Result<Option<Value>, ()> {
            self.stages.borrow_mut().push("strict");
            Ok(serde_json::from_slice(bytes).ok())
        }

        fn fast(&self, json: &[u8], _: Option<usize>) -> Option<Value> {
            self.stages.borrow_mut().push("fast");
            let text = std::str::from_utf8(json).ok()?;
            // Refuses what a 64-bit parser would: a long run of digits.
            let long = text
                .split(|c: char| !c.is_ascii_digit())
                .any(|d| d.len() > 18);
            (!long).then(|| serde_json::from_str(text).ok()).flatten()
        }

        fn exact(&self, json: &[u8]) -> Result<Value, String> {
            self.stages.borrow_mut().push("exact");
            // An infinite double, as a Python parser reads 1e400 (serde's values hold none).
            let text = String::from_utf8_lossy(json).replace("1e400", "\"inf\"");
            serde_json::from_str(&text).map_err(|e| e.to_string())
        }

        fn out_of_range(&self, object: &Value, _: usize) -> bool {
            match object {
                Value::String(s) => s == "inf",
                Value::Array(items) => items.iter().any(|v| self.out_of_range(v, 0)),
                Value::Object(members) => members.values().any(|v| self.out_of_range(v, 0)),
                _ => false,
            }
        }

        fn detached<T: Send>(&self, _: usize, work: impl FnOnce() -> T + Send) -> T {
            self.stages.borrow_mut().push("detached");
            work()
        }
    }

    fn run(text: &str, mending: Mending) -> (Result<(Value, usize), String>, Vec<&'static str>) {
        let host = Recording::default();
        let loaded = load(&host, text.as_bytes(), &Limits::DEFAULT, mending).unwrap();
        let loaded = loaded
            .map(|(v, repairs)| (v, repairs.len()))
            .map_err(|e| match e {
                LoadError::Core(e) => e.code().as_str().to_string(),
                LoadError::Build(e) => e,
            });
        (loaded, host.stages.into_inner())
    }

    #[test]
    fn valid_text_takes_the_fast_parser_alone() {
        let (loaded, stages) = run(r#"{"a": [1, 2.5, "x"]}"#, Mending::Unlogged);
        assert_eq!(loaded.unwrap().1, 0);
        assert_eq!(stages, ["strict"]);
    }

    #[test]
    fn broken_text_is_mended_then_built_and_plainly_broken_text_skips_the_strict_parser() {
        let (loaded, stages) = run(r#"{"a": [1,], "b": 2}"#, Mending::Logged);
        assert_eq!(loaded.unwrap(), (serde_json::json!({"a": [1], "b": 2}), 1));
        assert_eq!(stages, ["strict", "detached", "fast"]);
        let (loaded, stages) = run("{'a': None}", Mending::Logged);
        assert_eq!(loaded.unwrap().0, serde_json::json!({"a": null}));
        assert_eq!(stages, ["detached", "fast"]);
    }

    #[test]
    fn mending_off_refuses_what_needs_repair() {
        let (loaded, _) = run(r#"{"a": 1,}"#, Mending::Off);
        assert_eq!(loaded.unwrap_err(), "TLP-004");
    }

    #[test]
    fn what_the_fast_parser_refuses_is_built_exactly_and_held_to_a_doubles_range() {
        let (loaded, stages) = run(
            r#"{"a": [12345678901234567890123,], "b": 2}"#,
            Mending::Unlogged,
        );
        assert!(loaded.is_ok());
        assert_eq!(stages, ["strict", "detached", "fast", "exact"]);
        let (loaded, _) = run(r#"{"a": [1e400,], "b": 2}"#, Mending::Unlogged);
        assert_eq!(
            loaded.unwrap_err(),
            Error::number_out_of_range(0).code().as_str()
        );
    }

    #[test]
    fn loads_never_goes_deeper_than_the_exact_parser_can() {
        let limits = Limits {
            max_depth: 10_000,
            ..Limits::DEFAULT
        };
        assert_eq!(loads_limits(&limits).max_depth, LOADS_MAX_DEPTH);
    }
}
