//! `enum` checked by hash: a value is looked up among the members, not compared with each.
//!
//! The validator crate compares a value with every member of an `enum` of objects, arrays or
//! mixed values (strings and integers it hashes or sorts itself): an array of `n` items against
//! an enum of `m` objects costs `n × m` comparisons, with the GIL held when the items are Python
//! objects. Such an enum (more than [`HASH_FROM`] members) is compiled instead as a keyword of
//! ours that files the members by a hash of their value, made when the schema is compiled: an
//! item is hashed once and compared only with the members filed under its hash.
//!
//! The comparison is still the crate's own (`Node::equals_value`), so the meaning is unchanged:
//! numbers compare mathematically (`1 == 1.0`), objects whatever their key order, integers
//! beyond 2^53 as the registry compares them (see `exact.rs`). The hash keeps every equality:
//! a number is hashed as the double nearest it (equal numbers have the same nearest double,
//! `-0` is `0`), an object as the sum of its members' hashes (no order), and it is keyed per
//! process, so no one can choose values that fall under one hash.

use std::borrow::Cow;
use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};

use jsonschema::json::{Array, Json, JsonNumber, Node, Object, SerdeJson};
use jsonschema::types::JsonType;
use jsonschema::{Keyword, ValidationError};
use serde_json::{Map, Value};

/// The keyword a hashed `enum` is compiled as. Definitions are held to draft 2020-12's keywords
/// (see `check::schema`), so no schema a caller gives holds it.
pub(crate) const KEYWORD: &str = "toolmend:enum";

/// Enums of more members than this are hashed; fewer cost a few comparisons anyway.
pub(crate) const HASH_FROM: usize = 16;

/// Nesting below this depth is hashed as one value: the hash only has to be equal for equal
/// values, and the registry's limits stop arguments far above it.
const DEEPEST: usize = 600;

/// `schema` with every `enum` the crate would compare member by member compiled as a hashed
/// one (see the module); borrowed when it has none.
pub(crate) fn hashed(schema: &Value) -> Cow<'_, Value> {
    if !holds_hashable(schema) {
        return Cow::Borrowed(schema);
    }
    let mut copy = schema.clone();
    rewrite(&mut copy);
    Cow::Owned(copy)
}

/// Whether the crate would compare a value with each member of `members` in turn: enums of
/// strings (and null) it hashes, of integers (and null) it sorts.
fn compared_one_by_one(members: &[Value]) -> bool {
    members.len() > HASH_FROM
        && !members
            .iter()
            .all(|v| matches!(v, Value::String(_) | Value::Null))
        && !members.iter().all(|v| v.is_null() || v.as_i64().is_some())
}

/// The subschemas of a schema object: the values of the keywords that hold schemas.
fn subschemas(map: &Map<String, Value>) -> impl Iterator<Item = &Value> {
    map.iter().flat_map(|(key, value)| {
        let one = super::check::ONE_SCHEMA.contains(&key.as_str());
        let many = super::check::SCHEMA_ARRAY.contains(&key.as_str());
        let named = super::check::SCHEMA_MAP.contains(&key.as_str());
        let found: Box<dyn Iterator<Item = &Value>> = match value {
            _ if one => Box::new(std::iter::once(value)),
            Value::Array(items) if many => Box::new(items.iter()),
            Value::Object(members) if named => Box::new(members.values()),
            _ => Box::new(std::iter::empty()),
        };
        found
    })
}

fn holds_hashable(schema: &Value) -> bool {
    let mut work = vec![schema];
    while let Some(node) = work.pop() {
        let Value::Object(map) = node else { continue };
        if let Some(Value::Array(members)) = map.get("enum") {
            if compared_one_by_one(members) {
                return true;
            }
        }
        work.extend(subschemas(map));
    }
    false
}

fn rewrite(schema: &mut Value) {
    let mut work = vec![schema];
    while let Some(node) = work.pop() {
        let Value::Object(map) = node else { continue };
        if matches!(map.get("enum"), Some(Value::Array(m)) if compared_one_by_one(m)) {
            // Renamed where it stands: keywords are checked, and report, in their order.
            *map = std::mem::take(map)
                .into_iter()
                .map(|(key, value)| match key.as_str() {
                    "enum" => (KEYWORD.to_owned(), value),
                    _ => (key, value),
                })
                .collect();
        }
        for (key, value) in map {
            let key = key.as_str();
            if super::check::ONE_SCHEMA.contains(&key) {
                work.push(value);
            } else if super::check::SCHEMA_ARRAY.contains(&key) {
                if let Value::Array(items) = value {
                    work.extend(items.iter_mut());
                }
            } else if super::check::SCHEMA_MAP.contains(&key) {
                if let Value::Object(members) = value {
                    work.extend(members.values_mut());
                }
            }
        }
    }
}

/// The keyword's factory, for `ValidationOptions::with_keyword`: the members filed by hash.
pub(crate) fn factory<'a, F: Json>(
    _: &'a Map<String, Value>,
    members: &'a Value,
    _: jsonschema::paths::Location,
) -> Result<Box<dyn for<'i> Keyword<'i, F>>, ValidationError<'a>> {
    let Value::Array(members) = members else {
        return Err(ValidationError::schema("enum must be an array"));
    };
    Ok(Box::new(HashedEnum::new(members.clone())))
}

/// An `enum` whose members are filed by the hash of their value.
pub(crate) struct HashedEnum {
    members: Vec<Value>,
    /// Hash -> the members filed under it (their places in `members`).
    by_hash: HashMap<u64, Vec<u32>>,
    keys: RandomState,
    /// What the error says the allowed values are (see `violations::enum_allowed`).
    allowed: String,
}

impl HashedEnum {
    fn new(members: Vec<Value>) -> Self {
        let keys = RandomState::new();
        let mut by_hash: HashMap<u64, Vec<u32>> = HashMap::with_capacity(members.len());
        for (at, member) in (0u32..).zip(&members) {
            by_hash
                .entry(hash::<SerdeJson, _>(&keys, &member, 0))
                .or_default()
                .push(at);
        }
        HashedEnum {
            allowed: super::violations::enum_allowed(&members),
            members,
            by_hash,
            keys,
        }
    }

    fn holds<'i, F: Json>(&self, instance: &F::Node<'i>) -> bool {
        let Some(filed) = self.by_hash.get(&hash::<F, _>(&self.keys, instance, 0)) else {
            return false;
        };
        filed
            .iter()
            .any(|&at| instance.equals_value(&self.members[at as usize]))
    }
}

impl<'i, F: Json> Keyword<'i, F> for HashedEnum {
    fn validate(&self, instance: F::Node<'i>) -> Result<(), ValidationError<'i>> {
        if self.holds::<F>(&instance) {
            Ok(())
        } else {
            Err(ValidationError::custom(self.allowed.clone()))
        }
    }

    fn is_valid(&self, instance: F::Node<'i>) -> bool {
        self.holds::<F>(&instance)
    }
}

/// A hash of `node` equal for every two values `equals_value` finds equal (see the module).
fn hash<'a, F: Json, N: Node<'a, F>>(keys: &RandomState, node: &N, depth: usize) -> u64 {
    let mut h = keys.build_hasher();
    if depth > DEEPEST {
        return h.finish();
    }
    match node.json_type() {
        JsonType::Null => h.write_u8(0),
        JsonType::Boolean => {
            h.write_u8(1);
            h.write_u8(u8::from(node.as_boolean() == Some(true)));
        }
        JsonType::Integer | JsonType::Number => {
            h.write_u8(2);
            h.write_u64(node.as_number().map_or(u64::MAX, |n| number_bits(&n)));
        }
        JsonType::String => {
            h.write_u8(3);
            if let Some(text) = node.as_string() {
                h.write_usize(text.len());
                h.write(text.as_bytes());
            }
        }
        JsonType::Array => {
            h.write_u8(4);
            if let Some(items) = node.as_array() {
                h.write_usize(items.len());
                for item in items.elements() {
                    h.write_u64(hash::<F, _>(keys, &item, depth + 1));
                }
            }
        }
        JsonType::Object => {
            h.write_u8(5);
            if let Some(object) = node.as_object() {
                h.write_usize(object.len());
                // Members in any order: the sum of each one's hash.
                let mut sum = 0u64;
                for (name, value) in object.members() {
                    let mut member = keys.build_hasher();
                    let name = name.as_ref();
                    member.write_usize(name.len());
                    member.write(name.as_bytes());
                    member.write_u64(hash::<F, _>(keys, &value, depth + 1));
                    sum = sum.wrapping_add(member.finish());
                }
                h.write_u64(sum);
            }
        }
    }
    h.finish()
}

/// The bits of the double nearest the number, read as the crate's comparison reads it (`u64`,
/// then `i64`, then `f64`); `-0` as `0`.
fn number_bits<N: JsonNumber>(n: &N) -> u64 {
    let nearest = if let Some(u) = n.as_u64() {
        u as f64
    } else if let Some(i) = n.as_i64() {
        i as f64
    } else if let Some(f) = n.as_f64() {
        f
    } else {
        // Past a double: equal to no member (the crate compares such numbers with none).
        return u64::MAX;
    };
    if nearest == 0.0 {
        0
    } else {
        nearest.to_bits()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn holds(members: &[Value], value: &Value) -> bool {
        Keyword::<SerdeJson>::is_valid(&HashedEnum::new(members.to_vec()), value)
    }

    #[test]
    fn membership_is_json_equality() {
        let members: Vec<Value> = (0..40)
            .map(|i| json!({"id": i, "tags": ["a", i], "w": 0.5}))
            .chain([
                json!(1),
                json!(-0.0),
                json!(18446744073709551615u64),
                json!(null),
            ])
            .collect();
        for (value, inside) in [
            (json!({"w": 0.5, "tags": ["a", 3], "id": 3}), true),
            (json!({"id": 3.0, "tags": ["a", 3.0], "w": 0.5}), true),
            (json!({"id": 3, "tags": [3, "a"], "w": 0.5}), false),
            (json!({"id": 3, "tags": ["a", 3]}), false),
            (json!({"id": 3, "tags": ["a", 3], "w": 0.5, "x": 1}), false),
            (json!(1.0), true),
            (json!(0), true),
            (json!(-0.0), true),
            (json!(18446744073709551615u64), true),
            (json!(18446744073709551614u64), false),
            (json!(null), true),
            (json!(false), false),
            (json!("1"), false),
        ] {
            assert_eq!(holds(&members, &value), inside, "{value}");
        }
    }

    #[test]
    fn only_enums_the_crate_compares_one_by_one_are_hashed() {
        let objects: Vec<Value> = (0..=HASH_FROM).map(|i| json!({"id": i})).collect();
        let strings: Vec<Value> = (0..100).map(|i| json!(format!("s{i}"))).collect();
        let integers: Vec<Value> = (0..100).map(|i| json!(i)).collect();
        let schema = json!({
            "properties": {
                "enum": {"enum": objects},
                "few": {"enum": objects[..HASH_FROM]},
                "s": {"enum": strings},
                "i": {"items": {"enum": integers}},
            },
            "$defs": {"d": {"anyOf": [{"enum": objects}]}},
            "default": {"enum": objects},
        });
        let Cow::Owned(out) = hashed(&schema) else {
            panic!("two enums are hashed");
        };
        assert_eq!(out["properties"]["enum"][KEYWORD], json!(objects));
        assert_eq!(out["$defs"]["d"]["anyOf"][0][KEYWORD], json!(objects));
        for kept in [
            &out["properties"]["few"],
            &out["properties"]["s"],
            &out["properties"]["i"]["items"],
            // Not a schema: a value.
            &out["default"],
        ] {
            assert!(kept.get("enum").is_some() && kept.get(KEYWORD).is_none());
        }
        assert!(matches!(
            hashed(&json!({"enum": strings})),
            Cow::Borrowed(_)
        ));
    }

    proptest::proptest! {
        #[test]
        fn hashed_membership_is_the_crates_comparison(
            members in proptest::collection::vec(small_value(), 0..40),
            value in small_value(),
        ) {
            let crates = members.iter().any(|m| jsonschema::json::cmp::equal(&value, m));
            proptest::prop_assert_eq!(holds(&members, &value), crates);
        }
    }

    fn small_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-3i64..3).prop_map(|i| json!(i)),
            (-3i64..3).prop_map(|i| json!(i as f64)),
            Just(json!(0.5)),
            Just(json!(-0.0)),
            "[ab]{0,2}".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 12, 3, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                proptest::collection::btree_map("[ab]", inner, 0..3)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }
}
