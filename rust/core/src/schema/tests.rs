use serde_json::{json, Value};

use super::*;

fn registry_with(name: &str, schema: Value) -> Registry {
    let r = Registry::new(true, Limits::default());
    r.register(def(name, schema)).expect("valid definition");
    r
}

fn def(name: &str, schema: Value) -> Definition {
    Definition {
        name: name.into(),
        description: "test tool".into(),
        version: "1.0.0".into(),
        category: None,
        schema,
        annotations: None,
        allow_truncated: false,
    }
}

fn errors(r: &Registry, name: &str, args: &str) -> Vec<Violation> {
    r.get(name)
        .unwrap()
        .validate_json(args.as_bytes(), r.limits())
        .err()
        .unwrap_or_default()
}

fn codes_and_paths(v: &[Violation]) -> Vec<(&'static str, &str)> {
    v.iter()
        .map(|v| (v.code.as_str(), v.path.as_str()))
        .collect()
}

fn write_file() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "pattern": "^[a-zA-Z0-9_./-]+$", "maxLength": 10},
            "content": {"type": "string"},
            "mode": {"enum": ["overwrite", "append"]},
            "options": {"type": "object", "properties": {"timeout": {"type": "integer", "minimum": 1, "maximum": 300}}}
        },
        "required": ["path", "content"]
    })
}

#[test]
fn valid_arguments_come_back_parsed() {
    let r = registry_with("write_file", write_file());
    let v = r
        .get("write_file")
        .unwrap()
        .validate_json(br#"{"path": "a.txt", "content": "hi"}"#, r.limits())
        .unwrap();
    assert_eq!(v, json!({"path": "a.txt", "content": "hi"}));
}

#[test]
fn every_violation_is_reported_in_document_order_with_pointers() {
    let r = registry_with("write_file", write_file());
    let got = errors(
        &r,
        "write_file",
        r#"{"mode": "APPEND", "path": "../x y", "options": {"timeout": "invalid", "retry": 1}}"#,
    );
    assert_eq!(
        codes_and_paths(&got),
        vec![
            ("TSR-005", "/mode"),
            ("TSR-005", "/path"),
            ("TSR-004", "/options/timeout"),
            ("TSR-005", "/options/retry"),
            ("TSR-003", "/content"),
        ]
    );
    let ty = &got[2];
    assert_eq!(ty.expected.as_deref(), Some("integer"));
    assert_eq!(ty.actual.as_deref(), Some("string"));
    assert!(
        ty.message.contains("expected integer, got string"),
        "{}",
        ty.message
    );
    assert!(got[0].message.contains("overwrite, append"));
    assert!(got[3].message.starts_with("additional property 'retry'"));
    assert_eq!(got[4].expected.as_deref(), Some("string"));
}

#[test]
fn strict_mode_closes_nested_objects_but_not_free_maps_or_composed_branches() {
    let schema = json!({
        "type": "object",
        "properties": {
            "meta": {"type": "object"},
            "both": {"allOf": [{"properties": {"a": {"type": "integer"}}}, {"properties": {"b": {"type": "integer"}}}]}
        }
    });
    let r = registry_with("t", schema);
    assert!(errors(
        &r,
        "t",
        r#"{"meta": {"anything": 1}, "both": {"a": 1, "b": 2}}"#
    )
    .is_empty());
    assert_eq!(
        codes_and_paths(&errors(&r, "t", r#"{"both": {"a": 1, "c": 3}}"#)),
        vec![("TSR-005", "/both/c")]
    );
    assert_eq!(
        codes_and_paths(&errors(&r, "t", r#"{"x": 1}"#)),
        vec![("TSR-005", "/x")]
    );
    let lax = Registry::new(false, Limits::default());
    lax.register(def("t", json!({"type": "object", "properties": {"a": {}}})))
        .unwrap();
    assert!(lax
        .get("t")
        .unwrap()
        .validate_json(br#"{"x": 1}"#, lax.limits())
        .is_ok());
}

#[test]
fn no_coercion_and_case_sensitive_enums() {
    let r = registry_with(
        "t",
        json!({"type": "object", "properties": {"n": {"type": "integer"}, "m": {"enum": ["read"]}}}),
    );
    assert_eq!(
        codes_and_paths(&errors(&r, "t", r#"{"n": "42"}"#)),
        vec![("TSR-004", "/n")]
    );
    assert_eq!(
        codes_and_paths(&errors(&r, "t", r#"{"n": 42.5}"#)),
        vec![("TSR-004", "/n")]
    );
    assert!(errors(&r, "t", r#"{"n": 42}"#).is_empty());
    assert_eq!(
        codes_and_paths(&errors(&r, "t", r#"{"m": "READ"}"#)),
        vec![("TSR-005", "/m")]
    );
}

#[test]
fn catastrophic_patterns_run_in_linear_time() {
    let r = registry_with(
        "t",
        json!({"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}}}),
    );
    let evil = format!(r#"{{"s": "{}!"}}"#, "a".repeat(50_000));
    let t = std::time::Instant::now();
    assert_eq!(
        codes_and_paths(&errors(&r, "t", &evil)),
        vec![("TSR-005", "/s")]
    );
    // A backtracking engine needs 2^50000 steps here; generous bound for a noisy machine.
    assert!(t.elapsed() < std::time::Duration::from_secs(2));
}

#[test]
fn definitions_are_checked_with_codes() {
    let r = Registry::new(true, Limits::default());
    let code = |d: Definition| r.register(d).unwrap_err().code.as_str();
    let ok = json!({"type": "object"});
    assert_eq!(code(def("", ok.clone())), "TSR-006");
    assert_eq!(code(def(&"a".repeat(65), ok.clone())), "TSR-006");
    assert_eq!(code(def("bad-name", ok.clone())), "TSR-006");
    assert_eq!(
        code(Definition {
            version: "1.0".into(),
            ..def("v", ok.clone())
        }),
        "TSR-006"
    );
    assert_eq!(
        code(Definition {
            description: "d".repeat(501),
            ..def("d", ok.clone())
        }),
        "TSR-006"
    );
    assert_eq!(
        code(def("remote", json!({"$ref": "https://example.com/s.json"}))),
        "TSR-006"
    );
    assert_eq!(
        code(def(
            "file",
            json!({"properties": {"p": {"$ref": "file:///etc/passwd"}}})
        )),
        "TSR-006"
    );
    assert_eq!(
        code(def("typo", json!({"type": "object", "maxlength": 3}))),
        "TSR-006"
    );
    assert_eq!(
        code(def(
            "draft7",
            json!({"$schema": "http://json-schema.org/draft-07/schema#"})
        )),
        "TSR-006"
    );
    let bad_type = r
        .register(def(
            "ty",
            json!({"properties": {"value": {"type": "invalid_type"}}}),
        ))
        .unwrap_err();
    assert_eq!(
        (bad_type.code.as_str(), bad_type.path.as_deref()),
        ("TSR-006", Some("/properties/value/type"))
    );
    assert_eq!(
        code(def("cycle", json!({"type": "object", "$ref": "#"}))),
        "TSR-008"
    );
    assert_eq!(
        code(def("dangling", json!({"$ref": "#/$defs/missing"}))),
        "TSR-008"
    );
    assert_eq!(
        code(def(
            "lookaround",
            json!({"type": "string", "pattern": "(?=a)b"})
        )),
        "TSR-008"
    );
    let mut deep = json!({"type": "string"});
    for _ in 0..12 {
        deep = json!({"type": "object", "properties": {"x": deep}});
    }
    assert_eq!(code(def("deep", deep)), "TSR-006");
    let big: serde_json::Map<String, Value> = (0..3000)
        .map(|i| (format!("p{i}"), json!({"type": "string"})))
        .collect();
    assert_eq!(
        code(def("big", json!({"type": "object", "properties": big}))),
        "TSR-006"
    );
    assert!(r.is_empty(), "no refused definition is visible");
}

#[test]
fn same_definition_twice_is_a_no_op_and_a_different_one_is_a_duplicate() {
    let r = registry_with("read_file", json!({"type": "object"}));
    r.register(def("read_file", json!({"type": "object"})))
        .unwrap();
    let e = r
        .register(def("READ_FILE", json!({"type": "array"})))
        .unwrap_err();
    assert_eq!(e.code.as_str(), "TSR-007");
    assert!(e.message.contains("already registered"));
    assert_eq!(r.len(), 1);
}

#[test]
fn replace_puts_another_version_in_place_of_the_tool() {
    let r = registry_with("read_file", json!({"type": "object", "required": ["path"]}));
    r.register(def("b_tool", json!({"type": "object"})))
        .unwrap();
    let held = r.get("read_file").unwrap();
    let revision = r.revision();
    let newer = Definition {
        version: "2.0.0".into(),
        ..def(
            "read_file",
            json!({"type": "object", "required": ["paths"]}),
        )
    };
    r.replace(newer.clone()).unwrap();
    assert_eq!(r.revision(), revision + 1);
    assert_eq!(r.len(), 2);
    let listed: Vec<_> = r
        .tools(None)
        .iter()
        .map(|t| t.definition.version.clone())
        .collect();
    assert_eq!(listed, ["1.0.0", "2.0.0"]); // b_tool, then read_file at its new version
    assert_eq!(errors(&r, "read_file", r#"{"paths": []}"#), vec![]);
    assert!(!errors(&r, "read_file", r#"{"path": "a"}"#).is_empty());
    // A reader that found the old tool keeps it.
    assert_eq!(held.definition.version, "1.0.0");
    // The same definition again changes nothing; another spelling of the name is refused.
    r.replace(newer).unwrap();
    assert_eq!(r.revision(), revision + 1);
    let e = r
        .replace(def("READ_FILE", json!({"type": "array"})))
        .unwrap_err();
    assert_eq!(e.code.as_str(), "TSR-007");
    // A free name is added.
    r.replace(def("c_tool", json!({"type": "object"}))).unwrap();
    assert_eq!((r.len(), r.revision()), (3, revision + 2));
}

#[test]
fn lookups_fall_back_to_any_case_and_suggest_a_near_name() {
    let r = registry_with("File_Read", json!({"type": "object"}));
    assert_eq!(r.get("file_read").unwrap().definition.name, "File_Read");
    let e = r.get("file_reed").unwrap_err();
    assert_eq!(e.code.as_str(), "TSR-001");
    assert!(
        e.message.contains("did you mean 'File_Read'"),
        "{}",
        e.message
    );
    // As the one violation of arguments sent to that name: about the whole call, with the fix.
    let v = Violation::from(e.clone());
    assert_eq!((v.code, v.path.as_str()), (e.code, ""));
    assert_eq!(v.message, e.message);
    assert_eq!(v.suggestion, RegistryError::UNKNOWN_TOOL_FIX);
}

#[test]
fn arguments_over_the_limits_are_refused_before_validation() {
    let r = Registry::new(
        true,
        Limits {
            max_size: 100,
            max_depth: 5,
            timeout_ms: 0,
        },
    );
    r.register(def("t", json!({"type": "object"}))).unwrap();
    let t = r.get("t").unwrap();
    let big = format!(r#"{{"a": "{}"}}"#, "x".repeat(200));
    assert_eq!(
        t.validate_json(big.as_bytes(), r.limits()).unwrap_err()[0]
            .code
            .as_str(),
        "TLP-007"
    );
    let deep = format!("{}{}", "[".repeat(50), "]".repeat(50));
    assert_eq!(
        t.validate_json(deep.as_bytes(), r.limits()).unwrap_err()[0]
            .code
            .as_str(),
        "TLP-008"
    );
    let e = t.validate_json(b"{\"a\": ", r.limits()).unwrap_err();
    assert_eq!((e[0].code.as_str(), e[0].path.as_str()), ("TSR-002", ""));
    assert!(e[0].message.contains("at byte 6"), "{}", e[0].message);
}

#[test]
fn formats_are_asserted() {
    let r = registry_with(
        "t",
        json!({"type": "object", "properties": {"u": {"type": "string", "format": "email"}}}),
    );
    assert_eq!(
        codes_and_paths(&errors(&r, "t", r#"{"u": "not an email"}"#)),
        vec![("TSR-005", "/u")]
    );
    assert!(errors(&r, "t", r#"{"u": "a@example.com"}"#).is_empty());
}

#[test]
fn schema_hint_is_one_line() {
    let r = registry_with(
        "read_file",
        json!({"type": "object", "properties": {"path": {"type": "string"}, "encoding": {"enum": ["utf-8", "ascii", "utf-16"]}}, "required": ["path"]}),
    );
    assert_eq!(
        r.get("read_file").unwrap().schema_hint(),
        "read_file expects: {path: string (required), encoding?: 'utf-8'|'ascii'|'utf-16'}"
    );
}

#[test]
fn threads_register_and_validate_at_once() {
    let r = std::sync::Arc::new(Registry::new(true, Limits::default()));
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let r = std::sync::Arc::clone(&r);
            std::thread::spawn(move || {
                for j in 0..50 {
                    let name = format!("tool_{}", (i * 50 + j) % 100);
                    r.register(def(
                        &name,
                        json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
                    ))
                    .unwrap();
                    let t = r.get(&name).unwrap();
                    assert!(t.validate_json(br#"{"n": 1}"#, r.limits()).is_ok());
                    assert_eq!(
                        t.validate_json(br#"{"n": "1"}"#, r.limits())
                            .unwrap_err()
                            .len(),
                        1
                    );
                }
            })
        })
        .collect();
    handles.into_iter().for_each(|h| h.join().unwrap());
    assert_eq!(r.len(), 100);
}

/// Each level an `allOf` of two references to the next: 2^levels paths to the last level.
fn diamond(levels: usize) -> Value {
    let mut defs = serde_json::Map::new();
    for i in 0..levels {
        defs.insert(
            format!("l{i}"),
            json!({"allOf": [{"$ref": format!("#/$defs/l{}", i + 1)}, {"$ref": format!("#/$defs/l{}", i + 1)}]}),
        );
    }
    defs.insert(
        format!("l{levels}"),
        json!({"type": "object", "properties": {"a": {"type": "integer"}, "o": {"type": "object", "properties": {"x": {}}}}}),
    );
    json!({"$defs": defs, "$ref": "#/$defs/l0"})
}

#[test]
fn strict_copy_of_a_reference_diamond_is_made_once_per_reference() {
    for levels in [8, 16, 40] {
        let schema = diamond(levels);
        let strict = super::strict::strict_schema(&schema).unwrap();
        let (before, after) = (schema.to_string().len(), strict.to_string().len());
        // Each definition copied at most twice (as written and rewritten), never per path.
        assert!(
            after < 3 * before,
            "{levels} levels: {before} -> {after} bytes"
        );
    }
}

#[test]
fn schemas_that_would_cost_exponential_validation_are_refused_in_both_modes() {
    for strict in [true, false] {
        let r = Registry::new(strict, Limits::default());
        r.register(def("small", diamond(8))).unwrap();
        let t = r.get("small").unwrap();
        assert!(t
            .validate_json(br#"{"a": 1, "o": {"x": 1}}"#, r.limits())
            .is_ok());
        assert_eq!(
            codes_and_paths(&errors(&r, "small", r#"{"a": "1"}"#)),
            vec![("TSR-004", "/a")]
        );
        let extra = errors(&r, "small", r#"{"a": 1, "b": 2, "o": {"y": 1}}"#);
        if strict {
            assert_eq!(
                codes_and_paths(&extra),
                vec![("TSR-005", "/b"), ("TSR-005", "/o/y")]
            );
        } else {
            assert!(extra.is_empty());
        }
        let e = r.register(def("big", diamond(16))).unwrap_err();
        assert_eq!(e.code.as_str(), "TSR-006", "{e}");
        assert!(e.message.contains("subschemas for one value"), "{e}");
        // The same doubling through nesting: each level's property applies its parent twice.
        let nested = json!({
            "$defs": {"n": {"type": "object", "properties": {"c": {"allOf": [{"$ref": "#/$defs/n"}, {"$ref": "#/$defs/n"}]}}}},
            "$ref": "#/$defs/n"
        });
        assert_eq!(
            r.register(def("nested", nested)).unwrap_err().code.as_str(),
            "TSR-006"
        );
    }
}

#[test]
fn recursive_schemas_that_branch_by_property_are_not_refused() {
    let tree = json!({
        "$defs": {"node": {"type": "object", "properties": {
            "v": {"type": "integer"},
            "left": {"$ref": "#/$defs/node"},
            "right": {"$ref": "#/$defs/node"},
            "kids": {"type": "array", "items": {"anyOf": [{"$ref": "#/$defs/node"}, {"type": "null"}]}}
        }}},
        "$ref": "#/$defs/node"
    });
    let r = registry_with("tree", tree);
    let mut deep = json!({"v": 0});
    for i in 0..40 {
        deep = if i % 2 == 0 {
            json!({"v": i, "left": deep, "kids": [null]})
        } else {
            json!({"v": i, "kids": [null, deep]})
        };
    }
    let t = r.get("tree").unwrap();
    assert!(t.validate_value(&deep).is_ok());
    assert_eq!(
        codes_and_paths(&errors(&r, "tree", r#"{"left": {"right": {"w": 1}}}"#)),
        vec![("TSR-005", "/left/right/w")]
    );
}

/// Strict and as-written verdicts for one instance.
fn verdicts(schema: &Value, instance: &Value) -> (bool, bool) {
    let strict = Registry::new(true, Limits::default());
    let lax = Registry::new(false, Limits::default());
    let ok = |r: &Registry| {
        r.register(def("t", schema.clone())).unwrap();
        r.get("t").unwrap().validate_value(instance).is_ok()
    };
    (ok(&strict), ok(&lax))
}

#[test]
fn strict_mode_never_closes_a_schema_where_refusing_more_accepts_more() {
    let cases = [
        // `not`: closing the forbidden shape would let any extra property bypass it.
        (
            json!({"type": "object", "properties": {"path": {"type": "string"}, "mode": {}},
                   "not": {"properties": {"path": {"const": "/"}}, "required": ["path"]}}),
            json!({"path": "/", "mode": 1}),
        ),
        // `if`: a closed condition fails on extra properties, and its `then` is skipped.
        (
            json!({"type": "object", "properties": {"role": {}, "token": {}, "note": {}},
                   "if": {"properties": {"role": {"const": "admin"}}, "required": ["role"]},
                   "then": {"required": ["token"]}}),
            json!({"role": "admin", "note": "x"}),
        ),
        // `contains` with `maxContains`: a closed item schema matches fewer items.
        (
            json!({"type": "array", "contains": {"properties": {"a": {"const": 1}}, "required": ["a"]},
                   "maxContains": 1}),
            json!([{"a": 1}, {"a": 1, "b": 2}]),
        ),
        // `oneOf`: closing one member can leave exactly one member matching.
        (
            json!({"type": "object", "properties": {"o": {"oneOf": [
                {"properties": {"x": {"properties": {"p": {}}}}},
                {"properties": {"x": {"type": "object"}}}
            ]}}}),
            json!({"o": {"x": {"q": 1}}}),
        ),
        // A `$ref` from inside `not` reaches the same definition as a positive `$ref`.
        (
            json!({"$defs": {"slash": {"properties": {"path": {"const": "/"}}, "required": ["path"]}},
                   "type": "object", "properties": {"path": {}, "mode": {}, "p": {"$ref": "#/$defs/slash"}},
                   "not": {"$ref": "#/$defs/slash"}}),
            json!({"path": "/", "mode": 1}),
        ),
    ];
    for (schema, instance) in cases {
        assert_eq!(
            verdicts(&schema, &instance),
            (false, false),
            "{schema} / {instance}"
        );
    }
}

#[test]
fn strict_mode_accepts_properties_declared_in_any_part_and_refuses_the_rest() {
    let base = json!({"base": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}});
    let cases = [
        json!({"$defs": base, "$ref": "#/$defs/base", "properties": {"b": {"type": "string"}}}),
        json!({"$defs": base, "allOf": [{"$ref": "#/$defs/base"}, {"properties": {"b": {"type": "string"}}}]}),
        json!({"type": "object", "properties": {"a": {"type": "integer"}},
               "dependentSchemas": {"a": {"properties": {"b": {"type": "string"}}}}}),
        json!({"type": "object", "properties": {"a": {"type": "integer"}},
               "if": {"properties": {"a": {"const": 1}}}, "then": {"properties": {"b": {"type": "string"}}},
               "else": {"properties": {"b": {"type": "integer"}}}}),
    ];
    for schema in cases {
        let r = registry_with("t", schema.clone());
        assert!(
            errors(&r, "t", r#"{"a": 1, "b": "x"}"#).is_empty(),
            "{schema}"
        );
        let refused = errors(&r, "t", r#"{"a": 1, "b": "x", "c": 3}"#);
        assert_eq!(
            codes_and_paths(&refused),
            vec![("TSR-005", "/c")],
            "{schema}"
        );
        let (_, allowed) = refused[0].suggestion.split_once("allowed: ").unwrap();
        let mut allowed: Vec<&str> = allowed.split(", ").collect();
        allowed.sort_unstable();
        assert_eq!(allowed, ["a", "b"], "{schema}");
    }
    // A name only an `if` tests is declared too: the object may hold it when the `if` fails.
    let r = registry_with(
        "t",
        json!({"type": "object", "properties": {"token": {}},
               "if": {"properties": {"role": {"const": "admin"}}, "required": ["role"]},
               "then": {"required": ["token"]}}),
    );
    assert!(errors(&r, "t", r#"{"role": "guest"}"#).is_empty());
    assert_eq!(
        codes_and_paths(&errors(&r, "t", r#"{"role": "admin"}"#)),
        vec![("TSR-003", "/token")]
    );
    assert_eq!(
        codes_and_paths(&errors(&r, "t", r#"{"role": "guest", "x": 1}"#)),
        vec![("TSR-005", "/x")]
    );
}

mod differential {
    //! Strict mode only ever adds restrictions: for generated schemas and instances, whatever
    //! the strict copy accepts, the schema as written (compiled by the jsonschema crate
    //! directly) accepts.
    use super::*;
    use proptest::prelude::*;

    fn key() -> impl Strategy<Value = &'static str> {
        prop_oneof![Just("a"), Just("b"), Just("c")]
    }

    fn leaf() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(json!(true)),
            Just(json!(false)),
            Just(json!({"type": "integer"})),
            Just(json!({"type": "string"})),
            Just(json!({"type": "object"})),
            Just(json!({"type": "array"})),
            (0..3i64).prop_map(|n| json!({"const": n})),
            key().prop_map(|k| json!({"required": [k]})),
            key().prop_map(|k| json!({"properties": {k: {}}})),
            Just(json!({"maxProperties": 1})),
            Just(json!({"$ref": "#/$defs/d"})),
        ]
    }

    fn schema() -> impl Strategy<Value = Value> {
        leaf().prop_recursive(4, 40, 3, |inner| {
            let pair = (inner.clone(), inner.clone());
            prop_oneof![
                (key(), inner.clone(), proptest::option::of(key())).prop_map(|(k, s, r)| {
                    let mut m = json!({"type": "object", "properties": {k: s}});
                    if let Some(r) = r {
                        m["required"] = json!([r]);
                    }
                    m
                }),
                pair.clone()
                    .prop_map(|(a, b)| json!({"properties": {"a": a, "b": b}})),
                pair.clone().prop_map(|(a, b)| json!({"allOf": [a, b]})),
                pair.clone().prop_map(|(a, b)| json!({"anyOf": [a, b]})),
                pair.clone().prop_map(|(a, b)| json!({"oneOf": [a, b]})),
                inner.clone().prop_map(|a| json!({"not": a})),
                (inner.clone(), pair.clone())
                    .prop_map(|(c, (t, e))| json!({"if": c, "then": t, "else": e})),
                (inner.clone(), 0..3u64)
                    .prop_map(|(c, n)| json!({"contains": c, "maxContains": n, "minContains": 0})),
                inner.clone().prop_map(|a| json!({"items": a})),
                (key(), inner.clone()).prop_map(|(k, a)| json!({"dependentSchemas": {k: a}})),
                pair.clone().prop_map(
                    |(a, b)| json!({"$ref": "#/$defs/d", "properties": {"c": a}, "else": b})
                ),
                (key(), inner.clone())
                    .prop_map(|(k, a)| json!({"properties": {k: {}}, "additionalProperties": a})),
                inner
                    .clone()
                    .prop_map(|a| json!({"properties": {"a": {}}, "unevaluatedProperties": a})),
            ]
        })
    }

    fn instance() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            (0..3i64).prop_map(|n| json!(n)),
            Just(json!("x")),
        ];
        leaf.prop_recursive(3, 20, 3, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                proptest::collection::btree_map(key(), inner, 0..3).prop_map(|m| {
                    Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
                }),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]
        #[test]
        fn strict_accepts_only_what_the_schema_as_written_accepts(
            body in schema(),
            definition in schema(),
            instances in proptest::collection::vec(instance(), 1..6),
        ) {
            let mut schema = body;
            if let Value::Object(m) = &mut schema {
                m.insert("$defs".into(), json!({"d": definition}));
            } else {
                schema = json!({"allOf": [schema], "$defs": {"d": definition}});
            }
            let reference = jsonschema::options()
                .with_draft(jsonschema::Draft::Draft202012)
                .build(&schema);
            let strict = Registry::new(true, Limits::default());
            // Self-referencing definitions are refused (TSR-008): nothing to compare.
            if let (Ok(reference), Ok(tool)) = (reference, strict.register(def("t", schema.clone()))) {
                for instance in &instances {
                    if tool.validate_value(instance).is_ok() {
                        prop_assert!(
                            reference.is_valid(instance),
                            "strict accepted what the schema refuses: {} / {}",
                            schema,
                            instance
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn a_registered_name_of_the_longest_length_is_suggested_for_a_near_miss() {
    let name = format!("fs.{}files", "read_directory-tree_".repeat(6));
    assert_eq!(name.len(), crate::names::MAX_TOOL_NAME_LEN);
    let r = Registry::new(true, Limits::default()).with_names(NameRule::Mcp);
    r.register(def(&name, json!({"type": "object"})))
        .expect("an MCP name of 128 characters registers");
    let typo = name.replacen("directory", "direcotry", 1);
    let longer = format!("{name}s");
    for near in [&typo, &longer] {
        let e = r.get(near).unwrap_err();
        assert_eq!(e.code.as_str(), "TSR-001");
        assert!(
            e.message.contains(&format!("did you mean '{name}'")),
            "{}",
            e.message
        );
    }
    let mut names = suggestions::Suggestions::default();
    names.insert(&name);
    assert_eq!(names.closest(&typo), Some(name.as_str()));
}

#[test]
fn suggestions_find_the_closest_name_under_the_typo_bound() {
    let mut names = suggestions::Suggestions::default();
    for name in ["File_Read", "file_write", "fetch", "list_dir"] {
        names.insert(name);
    }
    let closest = |q: &str| names.closest(q);
    assert_eq!(closest("file_reed"), Some("File_Read"));
    assert_eq!(closest("FILE_WRIT"), Some("file_write"));
    assert_eq!(closest("fecth"), Some("fetch"));
    assert_eq!(closest("list_dirs"), Some("list_dir"));
    assert_eq!(closest("completely_else"), None);
    assert_eq!(closest(&"x".repeat(10_000)), None);
    assert_eq!(closest("fïle_read"), Some("File_Read"));
}

proptest::proptest! {
    #[test]
    fn bounded_distance_is_levenshtein_within_its_bound(
        a in "[ab_]{0,12}",
        b in "[ab_]{0,12}",
        k in 0usize..6,
    ) {
        let full = {
            let (a, b) = (a.as_bytes(), b.as_bytes());
            let mut row: Vec<usize> = (0..=b.len()).collect();
            for i in 1..=a.len() {
                let mut prev = row[0];
                row[0] = i;
                for j in 1..=b.len() {
                    let cur = row[j];
                    row[j] = (prev + usize::from(a[i - 1] != b[j - 1])).min(row[j - 1] + 1).min(cur + 1);
                    prev = cur;
                }
            }
            row[b.len()]
        };
        let bounded = suggestions::bounded_distance(a.as_bytes(), b.as_bytes(), k);
        proptest::prop_assert_eq!(bounded, (full <= k).then_some(full));
    }
}

#[test]
fn idn_formats_are_known_and_checked() {
    let r = registry_with(
        "t",
        json!({"type": "object", "properties": {
            "mail": {"type": "string", "format": "idn-email"},
            "host": {"type": "string", "format": "idn-hostname"}
        }}),
    );
    for ok in [
        r#"{"mail": "用户@例子.广告", "host": "例子.广告"}"#,
        r#"{"mail": "joe.bloggs@example.com", "host": "xn--ls8h.la"}"#,
        r#"{"mail": "\"joe bloggs\"@[127.0.0.1]", "host": "münchen.de"}"#,
    ] {
        assert!(errors(&r, "t", ok).is_empty(), "{ok}");
    }
    assert_eq!(
        codes_and_paths(&errors(
            &r,
            "t",
            r#"{"mail": "no at sign", "host": "-bad-.example"}"#
        )),
        vec![("TSR-005", "/mail"), ("TSR-005", "/host")]
    );
    assert!(!check::is_idn_hostname("a b.com"));
    assert!(!check::is_idn_hostname(&"a".repeat(64)));
    assert!(!check::is_idn_email("a..b@example.com"));
    assert!(!check::is_idn_email("@example.com"));
}

#[test]
fn integers_beyond_64_bits_are_compared_exactly() {
    let two_64 = "18446744073709551616";
    let r = registry_with(
        "t",
        serde_json::from_str(&format!(
            r#"{{"type": "object", "properties": {{
                "c": {{"const": {two_64}}},
                "e": {{"enum": [{two_64}, "x"]}},
                "m": {{"type": "integer", "maximum": {two_64}}},
                "n": {{"type": "integer", "minimum": -{two_64}}}
            }}}}"#
        ))
        .unwrap(),
    );
    let args = |field: &str, n: &str| format!(r#"{{"{field}": {n}}}"#);
    for field in ["c", "e", "m"] {
        assert!(errors(&r, "t", &args(field, two_64)).is_empty(), "{field}");
        let got = errors(&r, "t", &args(field, "18446744073709551617"));
        assert_eq!(
            codes_and_paths(&got),
            vec![("TSR-005", &*format!("/{field}"))]
        );
        assert_eq!(got[0].actual.as_deref(), Some("18446744073709551617"));
    }
    assert!(errors(&r, "t", &args("m", "18446744073709551615")).is_empty());
    // Within 64 bits but rounded to 2^64 when compared with the schema's double.
    assert_eq!(errors(&r, "t", &args("c", "18446744073709551615")).len(), 1);
    assert!(errors(&r, "t", &args("m", "9007199254740993")).is_empty());
    assert!(errors(&r, "t", &args("n", "-18446744073709551617")).len() == 1);
    assert!(errors(&r, "t", &args("n", "-18446744073709551615")).is_empty());
    // Big integers elsewhere (a string of digits, a nested array) change nothing.
    assert!(errors(&r, "t", r#"{"e": "x", "z": "184467440737095516170"}"#).len() == 1);
}

#[test]
fn a_value_is_rendered_only_as_far_as_it_is_shown() {
    use super::shown::{clip, render};
    let long = "é€😀x".repeat(200);
    for v in [
        serde_json::json!({"content": long, "mode": "x"}),
        serde_json::json!([long.clone()]),
        serde_json::json!("short"),
        serde_json::json!({"a": 1}),
        serde_json::json!("\u{1}\"quoted\"".repeat(100)),
    ] {
        assert_eq!(render(&v), clip(&v.to_string()));
    }
}

#[test]
fn a_large_enum_of_objects_is_looked_up_with_the_meaning_and_the_errors_of_enum() {
    let members: Vec<Value> = (0..40).map(|i| json!({"id": i, "k": "x"})).collect();
    let few = members[..3].to_vec();
    let schema = |members: &[Value]| json!({"type": "object", "properties": {"items": {"type": "array", "items": {"enum": members}}}});
    let (hashed, compared) = (
        registry_with("t", schema(&members)),
        registry_with("t", schema(&few)),
    );
    let ok = r#"{"items": [{"k": "x", "id": 2}, {"id": 1.0, "k": "x"}, {"id": 39, "k": "x"}]}"#;
    assert!(errors(&hashed, "t", ok).is_empty());
    // 2^64 + 1 is no member: the registry compares integers past 2^53 exactly.
    let bad = r#"{"items": [{"id": 2, "k": "y"}, {"id": 18446744073709551617, "k": "x"}]}"#;
    let (e, f) = (errors(&hashed, "t", bad), errors(&compared, "t", bad));
    assert_eq!(e.len(), 2);
    // The same violations as the enum compared member by member gives, but for the list.
    let shape = |v: &Violation| (v.path.clone(), v.code, v.actual.clone());
    assert_eq!(
        e.iter().map(shape).collect::<Vec<_>>(),
        f.iter().map(shape).collect::<Vec<_>>()
    );
    for (v, w) in e.iter().zip(&f) {
        assert!(v
            .message
            .starts_with("Value must be one of: {\"id\":0,\"k\":\"x\"}, "));
        assert!(w
            .message
            .starts_with("Value must be one of: {\"id\":0,\"k\":\"x\"}, "));
        assert_eq!(
            v.suggestion.split(": ").next(),
            w.suggestion.split(": ").next()
        );
        assert!(v
            .suggestion
            .starts_with("use one of the allowed values for "));
    }
    let members = [json!(18446744073709551616u128 as f64)]
        .into_iter()
        .chain((0..20).map(|i| json!([i])))
        .collect::<Vec<_>>();
    let big = registry_with(
        "b",
        json!({"type": "object", "properties": {"n": {"enum": members}}}),
    );
    assert!(errors(&big, "b", r#"{"n": 18446744073709551616}"#).is_empty());
    assert_eq!(errors(&big, "b", r#"{"n": 18446744073709551617}"#).len(), 1);
}
