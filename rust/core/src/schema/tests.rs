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
