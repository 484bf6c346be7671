//! Arguments a caller gives (`validate`, `try_validate`, and each call's check) against a tool:
//! which way they are checked, in which order. The host (the binding) holds them as it holds
//! them (text, or its own objects) and says what its parsers and its in-place validator make of
//! them; the core decides.
//!
//! Text: within the size limit, strict text the fast parser builds and the in-place validator
//! passes is the answer (the objects are the result, the least work at any size); otherwise the
//! core validates the text itself (every error reported) and the exact parser builds it.
//! Objects: the limits first (a walk, nothing copied); objects holding integers past 64 bits are
//! validated as their JSON text (a double would compare `2**64 + 1` equal to `2**64`); objects the
//! in-place validator passes are the answer; the rest are read into a value once and validated
//! with every error reported. Big inputs are validated without the host (the GIL let go of).

use std::borrow::Cow;

use serde_json::Value;

use super::{Tool, Violation};
use crate::error::{Error, ErrorCode};
use crate::limits::Limits;
use crate::walk::not_json;

/// What a host holds of the arguments given, and what it can do with them. (A violation is
/// returned by value as everywhere in the registry: one per check, never in a loop.)
#[allow(clippy::result_large_err)]
pub trait GivenArguments {
    type Object;
    type Error;

    /// The arguments' JSON text when they were given as text: its bytes, or the size error when
    /// it is over `max_size` (found without copying). None when they were given as objects.
    #[allow(clippy::type_complexity)]
    fn text(&self, max_size: usize) -> Result<Option<Result<Cow<'_, [u8]>, Error>>, Self::Error>;
    /// Objects of strict text by the fast parser, standing for the text within `max_depth`;
    /// None when it refuses them.
    fn strict_objects(
        &self,
        bytes: &[u8],
        max_depth: usize,
    ) -> Result<Option<Self::Object>, Self::Error>;
    /// Objects of valid text by the exact parser.
    fn exact_objects(&self, bytes: &[u8]) -> Result<Self::Object, Self::Error>;
    /// The objects as given.
    fn given(&self) -> Self::Object;
    /// Whether the host can check objects against `tool`'s schema in place.
    fn checks_in_place(&self, tool: &Tool) -> bool;
    /// Whether `object` passes `tool`'s schema, checked in place.
    fn valid_in_place(&self, tool: &Tool, object: &Self::Object) -> bool;
    /// The given objects held to the limits: the bytes left of `max_size` and whether they hold
    /// an integer past 64 bits; the violation of a limit.
    fn walk_limits(&self, limits: &Limits) -> Result<(usize, bool), Violation>;
    /// The given objects as JSON text; None when they are no JSON.
    fn json_text(&self) -> Result<Option<String>, Self::Error>;
    /// The given objects read into a value (held to the limits).
    fn value(&self, limits: &Limits) -> Result<Value, Violation>;
    /// Runs `work` over `size` bytes, touching no host object (the GIL let go of when big).
    fn detached<T: Send>(&self, size: usize, work: impl FnOnce() -> T + Send) -> T;
}

/// The arguments checked against `tool` under `limits`: the objects to call it with, or every
/// violation.
pub fn check_given<A: GivenArguments>(
    args: &A,
    tool: &Tool,
    limits: &Limits,
) -> Result<Result<A::Object, Vec<Violation>>, A::Error> {
    if let Some(bytes) = args.text(limits.max_size)? {
        let bytes = match bytes {
            Ok(bytes) => bytes,
            Err(too_large) => {
                let violation = Violation::limit(ErrorCode::TooLarge, too_large.to_string());
                return Ok(Err(vec![violation]));
            }
        };
        if args.checks_in_place(tool) {
            if let Some(object) = args.strict_objects(&bytes, limits.max_depth)? {
                if args.valid_in_place(tool, &object) {
                    return Ok(Ok(object));
                }
            }
        }
        let checked = args.detached(bytes.len(), || tool.validate_json(&bytes, limits).map(drop));
        return match checked {
            Ok(()) => args.exact_objects(&bytes).map(Ok),
            Err(errors) => Ok(Err(errors)),
        };
    }
    let (left, big_ints) = match args.walk_limits(limits) {
        Ok(walked) => walked,
        Err(violation) => return Ok(Err(vec![violation])),
    };
    if big_ints {
        let Some(text) = args.json_text()? else {
            return Ok(Err(vec![not_json("", "an integer too large")]));
        };
        let checked = args.detached(text.len(), || {
            tool.validate_json(text.as_bytes(), limits).map(drop)
        });
        return Ok(checked.map(|()| args.given()));
    }
    let given = args.given();
    if args.checks_in_place(tool) && args.valid_in_place(tool, &given) {
        return Ok(Ok(given));
    }
    let value = match args.value(limits) {
        Ok(value) => value,
        Err(violation) => return Ok(Err(vec![violation])),
    };
    let size = limits.max_size - left;
    let checked = args.detached(size, || tool.validate_value(&value));
    Ok(checked.map(|()| given))
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use serde_json::json;

    use super::*;
    use crate::schema::{Definition, Registry};

    /// Arguments over serde values that record the ways taken: text or objects as given, an
    /// in-place check that is the core's own validation.
    struct Recording {
        text: Option<String>,
        object: Value,
        /// The objects hold an integer past 64 bits (serde's values cannot).
        big: bool,
        ways: RefCell<Vec<&'static str>>,
    }

    impl Recording {
        fn text(text: &str) -> Self {
            let object = serde_json::from_str(text).unwrap_or(Value::Null);
            Recording {
                text: Some(text.into()),
                object,
                big: false,
                ways: RefCell::default(),
            }
        }

        fn object(object: Value) -> Self {
            Recording {
                text: None,
                object,
                big: false,
                ways: RefCell::default(),
            }
        }

        fn way(&self, way: &'static str) {
            self.ways.borrow_mut().push(way);
        }
    }

    impl GivenArguments for Recording {
        type Object = Value;
        type Error = ();

        fn text(&self, max_size: usize) -> Result<Option<Result<Cow<'_, [u8]>, Error>>, ()> {
            let limits = Limits {
                max_size,
                ..Limits::default()
            };
            Ok(self.text.as_ref().map(|t| {
                limits.check_size(t.len())?;
                Ok(Cow::Borrowed(t.as_bytes()))
            }))
        }

        fn strict_objects(&self, bytes: &[u8], _: usize) -> Result<Option<Value>, ()> {
            self.way("strict");
            Ok(serde_json::from_slice(bytes).ok())
        }

        fn exact_objects(&self, bytes: &[u8]) -> Result<Value, ()> {
            self.way("exact");
            serde_json::from_slice(bytes).map_err(drop)
        }

        fn given(&self) -> Value {
            self.object.clone()
        }

        fn checks_in_place(&self, _: &Tool) -> bool {
            true
        }

        fn valid_in_place(&self, tool: &Tool, object: &Value) -> bool {
            self.way("in place");
            tool.validate_value(object).is_ok()
        }

        fn walk_limits(&self, _: &Limits) -> Result<(usize, bool), Violation> {
            self.way("walk");
            Ok((0, self.big))
        }

        fn json_text(&self) -> Result<Option<String>, ()> {
            self.way("as text");
            Ok(Some(self.object.to_string()))
        }

        fn value(&self, _: &Limits) -> Result<Value, Violation> {
            self.way("value");
            Ok(self.object.clone())
        }

        fn detached<T: Send>(&self, _: usize, work: impl FnOnce() -> T + Send) -> T {
            self.way("core");
            work()
        }
    }

    fn check(args: &Recording) -> (Result<Value, Vec<&'static str>>, Vec<&'static str>) {
        let registry = Registry::new(true, Limits::default());
        let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        let tool = registry
            .register(Definition {
                name: "t".into(),
                description: String::new(),
                version: "1.0.0".into(),
                category: None,
                schema,
                annotations: None,
                allow_truncated: false,
            })
            .unwrap();
        let checked = check_given(args, &tool, registry.limits()).unwrap();
        let checked = checked.map_err(|v| v.iter().map(|v| v.code.as_str()).collect());
        (checked, args.ways.take())
    }

    #[test]
    fn valid_text_is_built_once_and_checked_in_place() {
        let (checked, ways) = check(&Recording::text(r#"{"n": 1}"#));
        assert_eq!(checked.unwrap(), json!({"n": 1}));
        assert_eq!(ways, ["strict", "in place"]);
    }

    #[test]
    fn invalid_text_is_validated_by_the_core_with_every_error() {
        let (checked, ways) = check(&Recording::text(r#"{"n": "x", "m": 2}"#));
        assert_eq!(checked.unwrap_err().len(), 2);
        assert_eq!(ways, ["strict", "in place", "core"]);
    }

    #[test]
    fn objects_are_held_to_the_limits_first_and_big_integers_compared_as_text() {
        let (checked, ways) = check(&Recording::object(json!({"n": 1})));
        assert!(checked.is_ok());
        assert_eq!(ways, ["walk", "in place"]);
        let mut big = Recording::object(json!({"n": 1}));
        big.big = true;
        let (checked, ways) = check(&big);
        assert!(checked.is_ok());
        assert_eq!(ways, ["walk", "as text", "core"]);
        let (checked, ways) = check(&Recording::object(json!({"n": "x"})));
        assert_eq!(checked.unwrap_err(), ["TSR-004"]);
        assert_eq!(ways, ["walk", "in place", "value", "core"]);
    }

    #[test]
    fn text_over_the_size_limit_is_refused_unread() {
        let mut args = Recording::text(r#"{"n": 1}"#);
        args.text = Some(format!(
            "{{\"n\": \"{}\"}}",
            "x".repeat(Limits::default().max_size)
        ));
        let (checked, ways) = check(&args);
        assert_eq!(checked.unwrap_err(), ["TLP-007"]);
        assert!(ways.is_empty());
    }
}
