//! Validation: arguments of any bytes against a fixed tool, and schemas of any bytes
//! registered, give a value that passes or coded violations; never a panic. Strict mode only
//! adds restrictions: what a strict registry accepts, the schema as written (a lax registry)
//! accepts too.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use serde_json::json;
use toolmend_core::schema::{Definition, Registry, Tool, MAX_VIOLATIONS};
use toolmend_core::Limits;

fn limits() -> Limits {
    Limits {
        max_size: 1 << 16,
        max_depth: 16,
        timeout_ms: 0,
    }
}

fn definition(schema: serde_json::Value) -> Definition {
    Definition {
        name: "write_file".into(),
        description: "Writes a file".into(),
        version: "1.0.0".into(),
        category: None,
        schema,
        annotations: None,
        allow_truncated: false,
    }
}

fn fixed_tool() -> &'static std::sync::Arc<Tool> {
    static TOOL: OnceLock<std::sync::Arc<Tool>> = OnceLock::new();
    TOOL.get_or_init(|| {
        let schema = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "pattern": "^[a-z/._-]+$", "maxLength": 64},
                "content": {"type": "string"},
                "mode": {"enum": ["overwrite", "append"]},
                "lines": {"type": "array", "items": {"type": "integer", "minimum": 0}, "maxItems": 8},
                "options": {"type": "object", "additionalProperties": {"type": "boolean"}}
            },
            "required": ["path", "content"]
        });
        Registry::new(true, limits()).register(definition(schema)).unwrap()
    })
}

fn check(tool: &Tool, args: &[u8]) {
    match tool.validate_json(args, &limits()) {
        Ok(value) => {
            // The same value validates the same way again, and as re-serialised text.
            assert!(tool.validate_value(&value).is_ok());
            let text = serde_json::to_vec(&value).unwrap();
            assert!(tool.validate_json(&text, &limits()).is_ok());
        }
        Err(violations) => {
            assert!(!violations.is_empty() && violations.len() <= MAX_VIOLATIONS);
            for v in &violations {
                let code = v.code.as_str();
                assert!(
                    code.starts_with("TSR-") || code.starts_with("TLP-"),
                    "{code}"
                );
                assert!(!v.message.is_empty());
            }
            assert_eq!(
                tool.validate_json(args, &limits()),
                Err(violations),
                "not deterministic"
            );
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode & 1 == 0 {
        check(fixed_tool(), rest);
        return;
    }
    // A schema from the input (then, after a NUL byte, arguments of its own): refused with a
    // code, or compiled and usable.
    let (schema, own_args) = match rest.iter().position(|&b| b == 0) {
        Some(at) => (&rest[..at], Some(&rest[at + 1..])),
        None => (rest, None),
    };
    let Ok(schema) = serde_json::from_slice::<serde_json::Value>(schema) else {
        return;
    };
    let registry = Registry::new(mode & 2 != 0, limits());
    let Ok(tool) = registry.register(definition(schema.clone())) else {
        return;
    };
    let fixed: [&[u8]; 4] = [
        b"{}",
        br#"{"path": "a", "content": "b"}"#,
        b"[1, {\"a\": null}]",
        b"\"x\"",
    ];
    let all = fixed.into_iter().chain(own_args);
    let as_written = Registry::new(false, limits())
        .register(definition(schema))
        .ok();
    for args in all {
        check(&tool, args);
        if let Some(lax) = &as_written {
            if registry.strict() && tool.validate_json(args, &limits()).is_ok() {
                assert!(
                    lax.validate_json(args, &limits()).is_ok(),
                    "strict accepted what the schema as written refuses"
                );
            }
        }
    }
});
