//! The walk over arguments a caller hands in as values (Python objects in the binding, serde
//! values here): what JSON cannot hold is refused (TSR-002) and what is over the limits (TLP-007,
//! TLP-008) as soon as it is seen, with the JSON Pointer of the place; optionally the values are
//! built as serde values on the way. A backend says only what each of its values is
//! ([`Tree::node`]); every decision is here, once.
//!
//! No nesting of the input can overflow the thread's stack before the depth limit refuses it:
//! the first `RECURSION_LEVELS` levels are walked by recursion (cheapest per value, and as deep
//! as real arguments go), deeper ones on a stack of the walk's own.

// A violation is returned once, at the end of a walk, never on its hot path.
#![allow(clippy::result_large_err)]

use std::borrow::Cow;

use serde_json::{Map, Number, Value};

use crate::error::ErrorCode;
use crate::limits::Limits;
use crate::pointer::escape_pointer;
use crate::schema::Violation;

/// A value as a walk reads it.
pub enum Node<'a, T: Tree> {
    Null,
    Bool(bool),
    Str(&'a str),
    Int(Number),
    /// An integer past 64 bits: its bit length, and the nearest double (None when it has none).
    BigInt {
        bits: usize,
        approx: Option<f64>,
    },
    Float(f64),
    /// An object: its entries and how many there are.
    Object(T::Entries, usize),
    Array(T::Items),
    /// Something JSON cannot hold, said as "a string with lone surrogates".
    NotJson(Cow<'static, str>),
    /// A value of a type JSON has not (named: "a value of type set"); below the depth limit
    /// only, like a container.
    Other(String),
}

/// A backend's values, as a walk reads them.
pub trait Tree: Sized {
    type Key: Key;
    type Entries: Iterator<Item = (Self::Key, Self)>;
    /// An array's items; `Err` when one cannot be read.
    type Items: Iterator<Item = Result<Self, ()>>;

    /// What this value is. Containers are opened only below the depth limit.
    fn node(&self) -> Node<'_, Self>;

    /// The decimal digits of an integer past 64 bits (a `BigInt` node), for `json_text`; None
    /// when the backend cannot give them.
    fn digits(&self) -> Option<String> {
        None
    }
}

/// An object's key.
pub trait Key {
    /// Its text; `Err` says what JSON cannot hold ("a key that is not a string").
    fn text(&self) -> Result<&str, &'static str>;
}

/// What is left of the limits as a walk goes.
#[derive(Clone)]
pub struct Budget {
    pub bytes: usize,
    pub max_depth: usize,
    /// Whether an integer past 64 bits was seen: serde values hold it only as a double, so
    /// such arguments are validated as JSON text, where integers are compared exactly.
    pub big_ints: bool,
}

impl Budget {
    pub fn new(limits: &Limits) -> Self {
        Budget {
            bytes: limits.max_size,
            max_depth: limits.max_depth,
            big_ints: false,
        }
    }
}

/// Walks `value` (at `depth`, pointed at by `path`) within the budget. With `BUILD` it returns
/// the values as serde values; without, it only checks (and returns null), copying nothing.
/// `path` is built only when an error reports it.
pub fn walk<T: Tree, const BUILD: bool>(
    value: &T,
    depth: usize,
    path: &dyn Fn() -> String,
    budget: &mut Budget,
) -> Result<Value, Violation> {
    walk_recursive::<T, BUILD>(value, depth, RECURSION_LEVELS, path, budget)
}

/// Checks `value` within the budget without building anything. A quick pass first (no pointers,
/// small frames, what valid arguments take); only when it refuses, or the nesting goes past its
/// recursion, does the walk run again to say where and why.
pub fn check<T: Tree>(value: &T, budget: &mut Budget) -> Result<(), Violation> {
    check_by(value, value, budget)
}

/// [`check`] whose quick pass reads `quick`: the same values seen through a cheaper backend,
/// which may answer `Node::Other` wherever it cannot tell (the walk over `value` then does).
pub fn check_by<Q: Tree, T: Tree>(
    quick: &Q,
    value: &T,
    budget: &mut Budget,
) -> Result<(), Violation> {
    let start = budget.clone();
    if fits(quick, 0, budget) {
        return Ok(());
    }
    *budget = start;
    walk::<T, false>(value, 0, &String::new, budget).map(drop)
}

/// Whether `value` (at `depth`) is within the budget, priced as `walk` prices it; false also
/// when it nests past `RECURSION_LEVELS`, for `walk` to settle.
fn fits<T: Tree>(value: &T, depth: usize, budget: &mut Budget) -> bool {
    match read::<T, false>(value, depth, budget) {
        Ok(Read::Value(_)) => true,
        Ok(Read::Object(mut entries, _)) => {
            depth < RECURSION_LEVELS
                && entries.all(|(k, v)| key_text(&k, budget).is_ok() && fits(&v, depth + 1, budget))
        }
        Ok(Read::Array(mut items)) => {
            depth < RECURSION_LEVELS
                && items.all(|item| {
                    array_item(item, budget).is_ok_and(|item| fits(&item, depth + 1, budget))
                })
        }
        Err(_) => false,
    }
}

/// Levels walked by recursion before the walk's own stack takes over: even a debug build's
/// frames (about 11 KB each) stay far below any thread's stack size.
const RECURSION_LEVELS: usize = 16;

fn walk_recursive<T: Tree, const BUILD: bool>(
    value: &T,
    depth: usize,
    levels: usize,
    path: &dyn Fn() -> String,
    budget: &mut Budget,
) -> Result<Value, Violation> {
    let read = read::<T, BUILD>(value, depth, budget).map_err(|f| f.violation(&path(), budget))?;
    match read {
        Read::Value(value) => Ok(value),
        container if levels == 0 => walk_iterative::<T, BUILD>(container, depth, path, budget),
        Read::Object(entries, len) => {
            let mut map = Map::with_capacity(if BUILD { len } else { 0 });
            for (k, v) in entries {
                let key = key_text(&k, budget).map_err(|f| f.violation(&path(), budget))?;
                let child = || format!("{}/{}", path(), escape_pointer(key));
                let value = walk_recursive::<T, BUILD>(&v, depth + 1, levels - 1, &child, budget)?;
                if BUILD {
                    map.insert(key.to_owned(), value);
                }
            }
            Ok(Value::Object(map))
        }
        Read::Array(items) => {
            let mut values = Vec::new();
            for (i, item) in items.enumerate() {
                let item = array_item(item, budget).map_err(|f| f.violation(&path(), budget))?;
                let child = || format!("{}/{i}", path());
                let value =
                    walk_recursive::<T, BUILD>(&item, depth + 1, levels - 1, &child, budget)?;
                if BUILD {
                    values.push(value);
                }
            }
            Ok(Value::Array(values))
        }
    }
}

/// The walk below `first` (a container at `depth`, pointed at by `path`) on a stack of open
/// containers kept on the heap.
fn walk_iterative<T: Tree, const BUILD: bool>(
    first: Read<T>,
    depth: usize,
    path: &dyn Fn() -> String,
    budget: &mut Budget,
) -> Result<Value, Violation> {
    let mut open: Vec<Open<T>> = Vec::new();
    let mut done = open_or_value::<T, BUILD>(first, &mut open);
    loop {
        // Finished values go into their containers until one has an entry left to read.
        let child = loop {
            let Some(top) = open.last_mut() else {
                return Ok(done.unwrap_or(Value::Null));
            };
            if let Some(value) = done.take() {
                top.place::<BUILD>(value);
            }
            match top.advance(budget) {
                Ok(Some(child)) => break child,
                Ok(None) => done = open.pop().map(Open::close),
                // About the container itself: its pointer leaves out its own entry.
                Err(fault) => {
                    let container = &open[..open.len() - 1];
                    return Err(fault.violation(&pointer(path, container), budget));
                }
            }
        };
        let read = read::<T, BUILD>(&child, depth + open.len(), budget)
            .map_err(|f| f.violation(&pointer(path, &open), budget))?;
        done = open_or_value::<T, BUILD>(read, &mut open);
    }
}

/// A scalar's value, or None after opening the container on the stack.
fn open_or_value<T: Tree, const BUILD: bool>(
    read: Read<T>,
    open: &mut Vec<Open<T>>,
) -> Option<Value> {
    match read {
        Read::Value(value) => return Some(value),
        Read::Object(entries, len) => open.push(Open::Object {
            map: Map::with_capacity(if BUILD { len } else { 0 }),
            entries,
            key: None,
        }),
        Read::Array(items) => open.push(Open::Array {
            items,
            values: Vec::new(),
            taken: 0,
        }),
    }
    None
}

/// An object's key as text, spent from the budget.
#[inline]
fn key_text<'k, K: Key>(k: &'k K, budget: &mut Budget) -> Result<&'k str, Fault> {
    let text = k.text().map_err(|what| Fault::NotJson(what.into()))?;
    spend(text.len() + 3, budget)?;
    Ok(text)
}

/// An array's item, spent from the budget.
#[inline]
fn array_item<T>(item: Result<T, ()>, budget: &mut Budget) -> Result<T, Fault> {
    let item = item.map_err(|()| Fault::NotJson("an array".into()))?;
    spend(1, budget)?;
    Ok(item)
}

/// A container being walked: the entries not yet read, what was built of it so far, and which
/// entry is being read (for the pointer of an error).
enum Open<T: Tree> {
    Object {
        entries: T::Entries,
        map: Map<String, Value>,
        /// The key of the entry being read (text: checked when it was taken).
        key: Option<T::Key>,
    },
    Array {
        items: T::Items,
        values: Vec<Value>,
        /// Items taken so far: the one being read is `taken - 1`.
        taken: usize,
    },
}

/// One value read: a scalar as it is, or a container to open.
enum Read<T: Tree> {
    Value(Value),
    Object(T::Entries, usize),
    Array(T::Items),
}

/// What is wrong, before its pointer is known (kept small: it is returned on every step).
enum Fault {
    TooLarge,
    TooDeep,
    /// Something JSON cannot hold, said as "a key that is not a string".
    NotJson(Cow<'static, str>),
}

impl Fault {
    #[cold]
    fn violation(self, path: &str, budget: &Budget) -> Violation {
        match self {
            Fault::TooLarge => Violation {
                path: String::new(),
                code: ErrorCode::TooLarge,
                message: "Arguments are over the size limit".into(),
                expected: None,
                actual: None,
                suggestion: "send smaller arguments".into(),
            },
            Fault::TooDeep => Violation {
                path: path.to_owned(),
                code: ErrorCode::TooDeepOrTimeout,
                message: format!(
                    "Arguments nest deeper than the depth limit of {}",
                    budget.max_depth
                ),
                expected: None,
                actual: None,
                suggestion: "flatten the arguments".into(),
            },
            Fault::NotJson(what) => not_json(path, &what),
        }
    }
}

impl<T: Tree> Open<T> {
    /// The next entry to read, its key or index spent from the budget; None when all are read.
    fn advance(&mut self, budget: &mut Budget) -> Result<Option<T>, Fault> {
        match self {
            Open::Object { entries, key, .. } => {
                let Some((k, v)) = entries.next() else {
                    return Ok(None);
                };
                key_text(&k, budget)?;
                *key = Some(k);
                Ok(Some(v))
            }
            Open::Array { items, taken, .. } => {
                let Some(item) = items.next() else {
                    return Ok(None);
                };
                let item = array_item(item, budget)?;
                *taken += 1;
                Ok(Some(item))
            }
        }
    }

    /// Stores the value of the entry just read.
    fn place<const BUILD: bool>(&mut self, value: Value) {
        if !BUILD {
            return;
        }
        match self {
            Open::Object { map, key, .. } => {
                if let Some(k) = key.as_ref().and_then(|k| k.text().ok()) {
                    map.insert(k.to_owned(), value);
                }
            }
            Open::Array { values, .. } => values.push(value),
        }
    }

    fn close(self) -> Value {
        match self {
            Open::Object { map, .. } => Value::Object(map),
            Open::Array { values, .. } => Value::Array(values),
        }
    }
}

/// The JSON Pointer of the entry being read in the innermost of `open`.
fn pointer<T: Tree>(path: &dyn Fn() -> String, open: &[Open<T>]) -> String {
    let mut pointer = path();
    for container in open {
        match container {
            Open::Object { key: Some(k), .. } => {
                pointer.push('/');
                pointer.push_str(&escape_pointer(k.text().unwrap_or_default()));
            }
            Open::Object { key: None, .. } => {}
            Open::Array { taken, .. } => {
                pointer.push('/');
                pointer.push_str(&taken.saturating_sub(1).to_string());
            }
        }
    }
    pointer
}

#[inline]
fn spend(n: usize, budget: &mut Budget) -> Result<(), Fault> {
    budget.bytes = budget.bytes.checked_sub(n).ok_or(Fault::TooLarge)?;
    Ok(())
}

/// One value: a scalar as it is (built only with `BUILD`), a container to open.
#[inline(always)]
fn read<T: Tree, const BUILD: bool>(
    value: &T,
    depth: usize,
    budget: &mut Budget,
) -> Result<Read<T>, Fault> {
    Ok(Read::Value(match value.node() {
        Node::Null => {
            spend(4, budget)?;
            Value::Null
        }
        Node::Bool(b) => {
            spend(5, budget)?;
            scalar::<BUILD>(Value::Bool(b))
        }
        Node::Str(text) => {
            spend(text.len() + 2, budget)?;
            if BUILD {
                Value::String(text.to_owned())
            } else {
                Value::Null
            }
        }
        Node::Int(n) => {
            spend(8, budget)?;
            scalar::<BUILD>(Value::Number(n))
        }
        Node::BigInt { bits, approx } => {
            spend(8, budget)?;
            // Its decimal digits count against the size limit (about 0.302 per bit).
            spend(bits * 302 / 1000 + 2, budget)?;
            budget.big_ints = true;
            let too_large = || Fault::NotJson("an integer too large".into());
            scalar::<BUILD>(Value::Number(
                approx.and_then(Number::from_f64).ok_or_else(too_large)?,
            ))
        }
        Node::Float(f) => {
            spend(8, budget)?;
            let number = Number::from_f64(f).ok_or(Fault::NotJson("NaN or infinity".into()))?;
            scalar::<BUILD>(Value::Number(number))
        }
        Node::Object(..) | Node::Array(_) | Node::Other(_) if depth >= budget.max_depth => {
            return Err(Fault::TooDeep);
        }
        Node::Other(what) => return Err(Fault::NotJson(what.into())),
        Node::Object(entries, len) => return Ok(Read::Object(entries, len)),
        Node::Array(items) => return Ok(Read::Array(items)),
        Node::NotJson(what) => return Err(Fault::NotJson(what)),
    }))
}

/// A scalar as read: itself when building, else null (so that nothing is left to drop).
#[inline(always)]
fn scalar<const BUILD: bool>(value: Value) -> Value {
    if BUILD {
        value
    } else {
        Value::Null
    }
}

/// TSR-002 at `path`: the arguments hold `what`.
pub fn not_json(path: &str, what: &str) -> Violation {
    Violation {
        path: path.to_string(),
        code: ErrorCode::InvalidArguments,
        message: format!("Arguments hold {what}, which JSON cannot represent"),
        expected: Some("JSON values: dict with str keys, list, str, int, float, bool, None".into()),
        actual: None,
        suggestion: "send JSON-compatible arguments".into(),
    }
}

/// Compact JSON text of a backend's value, nested to any depth (open containers are kept on a
/// stack of the writer's own, not the thread's), integers of any size exactly. None when the
/// value holds what JSON cannot (a key that is not text, a value of another type, an integer
/// whose digits the backend cannot give). NaN and infinity are written as null.
pub fn json_text<T: Tree>(value: &T) -> Option<String> {
    enum Open<T: Tree> {
        Object(T::Entries),
        Array(T::Items),
    }
    let mut out = String::new();
    let mut open: Vec<(Open<T>, bool)> = Vec::new();
    let mut next: Option<T> = None;
    let mut first = Some(value);
    loop {
        let current = first.take().or(next.as_ref());
        if let Some(value) = current {
            let opened = match value.node() {
                Node::Null => {
                    out.push_str("null");
                    None
                }
                Node::Bool(b) => {
                    out.push_str(if b { "true" } else { "false" });
                    None
                }
                Node::Str(text) => {
                    push_json_string(&mut out, text);
                    None
                }
                Node::Int(n) => {
                    out.push_str(&n.to_string());
                    None
                }
                Node::BigInt { .. } => {
                    out.push_str(&value.digits()?);
                    None
                }
                Node::Float(f) => {
                    match Number::from_f64(f) {
                        Some(n) => out.push_str(&n.to_string()),
                        None => out.push_str("null"),
                    }
                    None
                }
                Node::Object(entries, _) => {
                    out.push('{');
                    Some(Open::Object(entries))
                }
                Node::Array(items) => {
                    out.push('[');
                    Some(Open::Array(items))
                }
                Node::NotJson(_) | Node::Other(_) => return None,
            };
            if let Some(opened) = opened {
                open.push((opened, true));
            }
        }
        next = None;
        let Some((top, first_member)) = open.last_mut() else {
            return Some(out);
        };
        let comma = !std::mem::replace(first_member, false);
        match top {
            Open::Object(entries) => match entries.next() {
                Some((key, value)) => {
                    if comma {
                        out.push(',');
                    }
                    push_json_string(&mut out, key.text().ok()?);
                    out.push(':');
                    next = Some(value);
                }
                None => {
                    out.push('}');
                    open.pop();
                }
            },
            Open::Array(items) => match items.next() {
                Some(item) => {
                    if comma {
                        out.push(',');
                    }
                    next = Some(item.ok()?);
                }
                None => {
                    out.push(']');
                    open.pop();
                }
            },
        }
    }
}

fn push_json_string(out: &mut String, s: &str) {
    // serde_json escapes exactly what JSON requires; writing to a String cannot fail.
    out.push_str(&serde_json::to_string(s).unwrap_or_default());
}

/// serde values: what the serde host and the fuzzers walk.
impl<'a> Tree for &'a Value {
    type Key = &'a String;
    type Entries = serde_json::map::Iter<'a>;
    type Items =
        std::iter::Map<std::slice::Iter<'a, Value>, fn(&'a Value) -> Result<&'a Value, ()>>;

    fn node(&self) -> Node<'_, Self> {
        match self {
            Value::Null => Node::Null,
            Value::Bool(b) => Node::Bool(*b),
            Value::String(s) => Node::Str(s),
            Value::Number(n) if n.is_f64() => Node::Float(n.as_f64().unwrap_or(f64::NAN)),
            Value::Number(n) => Node::Int(n.clone()),
            Value::Object(map) => Node::Object(map.iter(), map.len()),
            Value::Array(items) => Node::Array(
                items
                    .iter()
                    .map(Ok as fn(&'a Value) -> Result<&'a Value, ()>),
            ),
        }
    }
}

impl Key for &String {
    fn text(&self) -> Result<&str, &'static str> {
        Ok(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn check(value: &Value, max_size: usize, max_depth: usize) -> Result<Value, Violation> {
        let limits = Limits {
            max_size,
            max_depth,
            timeout_ms: 0,
        };
        walk::<&Value, true>(&value, 0, &String::new, &mut Budget::new(&limits))
    }

    #[test]
    fn values_are_built_and_held_to_the_limits() {
        let value = json!({"a": [1, "x", {"b/c": null}], "~d": 1.5, "e": true});
        assert_eq!(check(&value, 1000, 8).unwrap(), value);
        let too_large = check(&value, 10, 8).unwrap_err();
        assert_eq!(
            (too_large.code, too_large.path.as_str()),
            (ErrorCode::TooLarge, "")
        );
        let too_deep = check(&value, 1000, 2).unwrap_err();
        assert_eq!(
            (too_deep.code, too_deep.path.as_str()),
            (ErrorCode::TooDeepOrTimeout, "/a/2")
        );
    }

    #[test]
    fn the_quick_check_agrees_with_the_walk_at_every_limit() {
        let mut deep = json!([1, {"z": "é"}]);
        for _ in 0..(RECURSION_LEVELS + 3) {
            deep = json!({"k": deep, "n": null});
        }
        let values = [
            json!({"a": [1, "x", {"b/c": null}], "~d": 1.5, "e": true}),
            json!([[], {}, [[2]], "long string here"]),
            deep,
        ];
        for value in &values {
            for max_size in 0..160 {
                for max_depth in 0..(RECURSION_LEVELS + 8) {
                    let limits = Limits {
                        max_size,
                        max_depth,
                        timeout_ms: 0,
                    };
                    let (mut quick, mut slow) = (Budget::new(&limits), Budget::new(&limits));
                    let checked = super::check(&value, &mut quick).map_err(|v| (v.code, v.path));
                    let walked = walk::<&Value, false>(&value, 0, &String::new, &mut slow)
                        .map(drop)
                        .map_err(|v| (v.code, v.path));
                    assert_eq!(
                        checked, walked,
                        "{value} at {max_size} bytes, {max_depth} levels"
                    );
                    if checked.is_ok() {
                        assert_eq!(quick.bytes, slow.bytes);
                    }
                }
            }
        }
    }

    #[test]
    fn json_text_writes_any_depth_compactly() {
        let value = json!({"a": [1, "x\"\n", {"b": null}], "c": 1.5, "d": true, "e": {}, "f": []});
        let text = json_text(&&value).unwrap();
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), value);
        assert!(!text.contains(' '));
        let mut deep = json!(1);
        for _ in 0..100_000 {
            deep = Value::Array(vec![deep]);
        }
        let text = json_text(&&deep).unwrap();
        assert_eq!(text.len(), 200_001);
        // serde values drop deep nesting recursively: unwind it by hand.
        while let Value::Array(mut items) = deep {
            deep = items.pop().unwrap_or(Value::Null);
        }
    }

    #[test]
    fn the_pointer_is_right_past_the_recursion_levels() {
        // Deeper than RECURSION_LEVELS: the iterative part builds the pointer.
        let mut value = json!({"x~/y": [0, {"leaf": 1}]});
        for _ in 0..40 {
            value = json!({"k": value});
        }
        let out = check(&value, 1 << 20, 200).unwrap();
        assert_eq!(out, value);
        let err = check(&value, 1 << 20, 42).unwrap_err();
        let expected = format!("{}/x~0~1y/1", "/k".repeat(40));
        assert_eq!(
            (err.code, err.path),
            (ErrorCode::TooDeepOrTimeout, expected)
        );
    }
}
