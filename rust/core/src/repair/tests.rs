use super::*;
use crate::limits::Deadline;

/// Repairs `input` with default limits; returns the JSON and the kinds logged.
fn fix(input: &str) -> (String, Vec<&'static str>) {
    let repaired =
        repair(input.as_bytes(), &Limits::default()).unwrap_or_else(|e| panic!("{input:?}: {e}"));
    serde_json::from_str::<serde_json::Value>(&repaired.json)
        .unwrap_or_else(|e| panic!("{input:?} -> {:?} is not strict JSON: {e}", repaired.json));
    (
        repaired.json.into_owned(),
        repaired.repairs.iter().map(|r| r.kind.as_str()).collect(),
    )
}

fn fixed(input: &str) -> String {
    fix(input).0
}

#[test]
fn every_kind_has_a_distinct_name_that_maps_back() {
    for kind in RepairKind::ALL {
        assert_eq!(RepairKind::from_name(kind.as_str()), Some(kind));
    }
    assert_eq!(RepairKind::from_name("no_such_kind"), None);
}

#[test]
fn valid_json_is_borrowed_unchanged_with_an_empty_log() {
    let input = r#"{"path": "test.txt", "content": "hello world", "n": [1, -2.5e3, true, null]}"#;
    let repaired = repair(input.as_bytes(), &Limits::default()).unwrap();
    assert!(matches!(repaired.json, Cow::Borrowed(_)));
    assert_eq!(repaired.json, input);
    assert!(repaired.repairs.is_empty());
}

#[test]
fn trailing_comma_in_object_and_nested_array_is_removed() {
    assert_eq!(
        fix(r#"{"path": "test.txt",}"#),
        (r#"{"path": "test.txt"}"#.into(), vec!["trailing_comma"])
    );
    assert_eq!(
        fix(r#"{"items": [1, 2, 3,]}"#),
        (r#"{"items": [1, 2, 3]}"#.into(), vec!["trailing_comma"])
    );
    assert_eq!(fixed("[[1,],\n]"), "[[1]\n]");
}

#[test]
fn missing_closers_are_added_innermost_first() {
    assert_eq!(
        fix(r#"{"path": "test.txt""#),
        (
            r#"{"path": "test.txt"}"#.into(),
            vec!["missing_closing_brace"]
        )
    );
    assert_eq!(
        fixed(r#"{"outer": {"inner": {"deep": "value"}"#),
        r#"{"outer": {"inner": {"deep": "value"}}}"#
    );
    assert_eq!(fixed(r#"{"a": [1, {"b": [2"#), r#"{"a": [1, {"b": [2]}]}"#);
}

#[test]
fn array_closed_by_a_brace_gets_its_bracket() {
    assert_eq!(
        fix(r#"{"items": [1, 2, 3}"#),
        (
            r#"{"items": [1, 2, 3]}"#.into(),
            vec!["missing_closing_bracket"]
        )
    );
}

#[test]
fn wrong_closer_followed_by_more_members_is_replaced() {
    let (json, kinds) = fix(r#"{"a": [1, 2}, "b": 3}"#);
    assert_eq!(json, r#"{"a": [1, 2], "b": 3}"#);
    assert_eq!(kinds, vec!["mismatched_closer"]);
    assert_eq!(fixed(r#"[{"a": 1], {"b": 2}]"#), r#"[{"a": 1}, {"b": 2}]"#);
    assert_eq!(fixed("[1, 2}"), "[1, 2]");
}

#[test]
fn stray_closers_are_dropped() {
    assert_eq!(
        fix(r#"{"a": [1]], "b": 2}"#),
        (r#"{"a": [1], "b": 2}"#.into(), vec!["extra_closer"])
    );
    assert_eq!(
        fix(r#"{"a": 1}}"#),
        (r#"{"a": 1}"#.into(), vec!["extra_closer"])
    );
    assert_eq!(fixed("[}1]"), "[1]");
    assert_eq!(fixed("[\"a\",}"), "[\"a\"]");
}

#[test]
fn doubled_template_braces_are_collapsed() {
    assert_eq!(
        fix(r#"{{"name": "x"}}"#),
        (r#"{"name": "x"}"#.into(), vec!["redundant_brace"])
    );
    assert_eq!(fixed(r#"{"a": 1, {"b": 2}}"#), r#"{"a": 1, "b": 2}"#);
    assert_eq!(fixed(r#"{{}, "a": 1}"#), r#"{ "a": 1}"#);
}

#[test]
fn single_quoted_strings_and_keys_are_double_quoted() {
    assert_eq!(fixed(r#"{'path': 'test.txt'}"#), r#"{"path": "test.txt"}"#);
    assert_eq!(
        fixed(r#"{'say': 'a "quoted" word'}"#),
        r#"{"say": "a \"quoted\" word"}"#
    );
    assert_eq!(
        fixed(r#"{'text': 'it's fine'}"#),
        r#"{"text": "it's fine"}"#
    );
    assert_eq!(fixed(r#"['don\'t']"#), r#"["don't"]"#);
}

#[test]
fn typographic_quotes_delimit_strings() {
    assert_eq!(
            fix("{\u{201c}path\u{201d}: \u{201c}a.txt\u{201d}, \u{2018}n\u{2019}: \u{2018}it\u{2019}s\u{2019}}"),
            (r#"{"path": "a.txt", "n": "it’s"}"#.into(), vec!["special_quotes", "special_quotes", "special_quotes", "special_quotes", "unescaped_quotes"])
        );
    // Inside an ordinary string they are ordinary characters.
    assert!(validate("[\"\u{201c}x\u{201d}\"]".as_bytes(), &Limits::default()).is_ok());
}

#[test]
fn json_escaped_twice_is_unescaped_then_repaired() {
    let (json, kinds) = fix(r#"{\"path\": \"a.txt\", \"content\": \"line\\nnext \\\"q\\\"\"}"#);
    assert_eq!(
        json,
        "{\"path\": \"a.txt\", \"content\": \"line\\nnext \\\"q\\\"\"}"
    );
    assert_eq!(kinds[0], "escaped_json");
}

#[test]
fn unquoted_keys_are_quoted() {
    assert_eq!(
        fix(r#"{path: "test.txt", content: "hello"}"#),
        (
            r#"{"path": "test.txt", "content": "hello"}"#.into(),
            vec!["unquoted_key", "unquoted_key"]
        )
    );
    assert_eq!(
        fixed(r#"{max_tokens: 5, $ref: "x"}"#),
        r#"{"max_tokens": 5, "$ref": "x"}"#
    );
}

#[test]
fn words_with_no_colon_where_a_key_would_be_are_prose_not_a_key() {
    // A sentence in braces is refused, where it stands, rather than passed as `{"...": null}`.
    for (input, at) in [
        ("}}}{{{ not json at all", 7),
        ("{not json at all", 1),
        ("{foo bar}", 1),
    ] {
        let error = repair(input.as_bytes(), &Limits::default()).unwrap_err();
        assert_eq!(
            (error.code(), error.position),
            (ErrorCode::Unparseable, at),
            "{input}"
        );
        assert!(!error.is_incomplete(), "{input}");
    }
    // Between members they are junk: dropped, and the members on either side kept.
    assert_eq!(
        fix(r#"{"a": 1, see above, "b": 2}"#),
        (
            r#"{"a": 1,  "b": 2}"#.into(),
            vec!["unexpected_character", "extra_comma"]
        )
    );
    // With a colon they are a key; one word alone is a key with no value, as before.
    assert_eq!(fixed("{first name: 1}"), r#"{"first name": 1}"#);
    assert_eq!(fixed("{a b\n: 1}"), "{\"a b\"\n: 1}");
    assert_eq!(fixed("{a}"), r#"{"a":null}"#);
}

#[test]
fn unquoted_values_become_strings() {
    assert_eq!(
        fix(r#"{"name": John Smith}"#),
        (r#"{"name": "John Smith"}"#.into(), vec!["unquoted_string"])
    );
    assert_eq!(
        fixed(r#"{"size": 10MB, "url": http://x.io/a}"#),
        r#"{"size": "10MB", "url": "http://x.io/a"}"#
    );
    assert_eq!(fixed("[a, b]"), r#"["a", "b"]"#);
}

#[test]
fn truncated_string_is_closed_then_its_containers() {
    let (json, kinds) = fix(r#"{"content": "Hello, this is a test"#);
    assert_eq!(json, r#"{"content": "Hello, this is a test"}"#);
    assert_eq!(kinds, vec!["truncated_string", "missing_closing_brace"]);
    assert_eq!(fixed(r#"["a\"#), r#"["a"]"#);
    assert_eq!(fixed(r#"["a\u00"#), r#"["a"]"#);
}

#[test]
fn truncated_key_or_member_gets_a_null_value() {
    assert_eq!(fixed(r#"{"a": 1, "ke"#), r#"{"a": 1, "ke":null}"#);
    assert_eq!(fixed(r#"{"a": 1, "b":"#), r#"{"a": 1, "b":null}"#);
    assert_eq!(fixed(r#"{"a": 1, "b""#), r#"{"a": 1, "b":null}"#);
    assert_eq!(fixed(r#"{"a": 1,"#), r#"{"a": 1}"#);
}

#[test]
fn truncated_literals_are_completed() {
    assert_eq!(
        fix("[tr"),
        (
            "[true]".into(),
            vec!["truncated_literal", "missing_closing_bracket"]
        )
    );
    assert_eq!(fixed(r#"{"a": nu"#), r#"{"a": null}"#);
    assert_eq!(fixed(r#"{"a": f"#), r#"{"a": false}"#);
}

#[test]
fn inner_quotes_are_escaped() {
    let (json, kinds) = fix(r#"{"message": "He said "hello" to me"}"#);
    assert_eq!(json, r#"{"message": "He said \"hello\" to me"}"#);
    assert_eq!(kinds, vec!["unescaped_quotes", "unescaped_quotes"]);
    assert_eq!(
        fixed(r#"{"a": "say "hi", then go", "b": 1}"#),
        r#"{"a": "say \"hi\", then go", "b": 1}"#
    );
    assert_eq!(fixed(r#"["a "b" c", "d"]"#), r#"["a \"b\" c", "d"]"#);
    assert_eq!(fixed(r#"{"q": "quote: "x""}"#), r#"{"q": "quote: \"x\""}"#);
    let code = r#"{"content": "return {"body": f"Hi {name}!"}\nnext", "mode": "w"}"#;
    assert_eq!(
        fixed(code),
        r#"{"content": "return {\"body\": f\"Hi {name}!\"}\nnext", "mode": "w"}"#
    );
}

#[test]
fn control_characters_in_strings_are_escaped() {
    assert_eq!(
        fix("{\"a\": \"line1\nline2\tx\u{1}\"}"),
        (
            "{\"a\": \"line1\\nline2\\tx\\u0001\"}".into(),
            vec!["control_character"; 3]
        )
    );
}

#[test]
fn raw_line_feeds_in_long_runs_are_escaped_and_logged_where_they_stand() {
    // Code pasted into a string: line feeds are passed by the block scan and escaped as the
    // run is copied, among escapes, tabs and runs of backslashes, across blocks of 16 and 64.
    let mut content = String::new();
    for i in 0..40 {
        content.push_str(&format!(r#"    x{i} = f(\"a\\\\b\")"#));
        content.push_str(&format!("\t# {}\n", "y".repeat(i % 23)));
    }
    let input = format!("{{\"content\": \"{content}\", \"n\": 1}}");
    let repaired = repair(input.as_bytes(), &Limits::default()).unwrap();
    let expected = input.replace('\n', "\\n").replace('\t', "\\t");
    assert_eq!(repaired.json, expected);
    let at = |c: char| input.match_indices(c).map(|(i, _)| i);
    let mut controls: Vec<usize> = at('\n').chain(at('\t')).collect();
    controls.sort_unstable();
    let logged: Vec<(&str, usize)> = repaired
        .repairs
        .iter()
        .map(|r| (r.kind.as_str(), r.position))
        .collect();
    assert_eq!(
        logged,
        controls
            .iter()
            .map(|&p| ("control_character", p))
            .collect::<Vec<_>>()
    );
    // The same text with the log dropped, as `loads` mends it.
    assert_eq!(
        mend_unlogged(input.as_bytes(), &Limits::default())
            .unwrap()
            .json,
        expected
    );
}

#[test]
fn invalid_escapes_keep_their_characters() {
    assert_eq!(
        fixed(r#"{"p": "C:\Users\me"}"#),
        r#"{"p": "C:\\Users\\me"}"#
    );
    assert_eq!(fixed(r#"["\x41"]"#), r#"["\\x41"]"#);
    assert_eq!(fixed(r#"["\uZZZZ"]"#), r#"["\\uZZZZ"]"#);
}

#[test]
fn lone_surrogate_escapes_become_replacement_characters() {
    assert_eq!(fixed(r#"["\ud800"]"#), r#"["\ufffd"]"#);
    assert_eq!(fixed(r#"["\udc00x"]"#), r#"["\ufffdx"]"#);
    assert_eq!(fixed(r#"["\ud83d\ude00"]"#), r#"["\ud83d\ude00"]"#);
    assert!(validate(br#"["\ud83d\ude00"]"#, &Limits::default()).is_ok());
    assert!(validate(br#"["\ud800"]"#, &Limits::default()).is_err());
}

#[test]
fn comments_are_removed() {
    assert_eq!(fix("{\"a\": 1, // one\n\"b\": 2}").1, vec!["comment"]);
    assert_eq!(
        fixed("{\"a\": 1, // one\n\"b\": 2}"),
        "{\"a\": 1, \n\"b\": 2}"
    );
    assert_eq!(fixed("[1, /* two */ 2] # done"), "[1,  2] ");
    assert_eq!(fixed("[1 /* unterminated"), "[1 ]");
}

#[test]
fn python_and_js_literals_are_mapped() {
    assert_eq!(
        fix("[True, False, None]"),
        ("[true, false, null]".into(), vec!["python_literal"; 3])
    );
    assert_eq!(
        fix("[undefined, NaN, Infinity, -Infinity]"),
        ("[null, null, null, null]".into(), vec!["js_literal"; 4])
    );
    assert_eq!(fixed(r#"{"a": Truest}"#), r#"{"a": "Truest"}"#);
}

#[test]
fn numbers_are_mended_or_kept_as_strings() {
    assert_eq!(
        fixed("[+1, .5, -.5, 1., 1e, 2E+]"),
        "[1, 0.5, -0.5, 1.0, 1, 2]"
    );
    assert_eq!(
        fixed("[007, 1.2.3, 2024-01-01]"),
        r#"["007", "1.2.3", "2024-01-01"]"#
    );
    assert_eq!(fix("[1, 2, ...]").0, "[1, 2 ]");
}

#[test]
fn missing_commas_and_colons_are_inserted() {
    assert_eq!(
        fix(r#"{"a": 1 "b": 2}"#),
        (r#"{"a": 1 ,"b": 2}"#.into(), vec!["missing_comma"])
    );
    assert_eq!(fixed("[1 2 3]"), "[1 ,2 ,3]");
    assert_eq!(
        fixed("{\"a\": \"x\"\n\"b\": 2}"),
        "{\"a\": \"x\"\n,\"b\": 2}"
    );
    assert_eq!(
        fix(r#"{"a" 1}"#),
        (r#"{"a" :1}"#.into(), vec!["missing_colon"])
    );
    assert_eq!(fixed(r#"{"a" = 1}"#), r#"{"a" : 1}"#);
}

#[test]
fn keys_without_values_get_null() {
    assert_eq!(
        fix(r#"{"a"}"#),
        (r#"{"a":null}"#.into(), vec!["missing_value"])
    );
    assert_eq!(fixed(r#"{"a": , "b": 1}"#), r#"{"a": null, "b": 1}"#);
    assert_eq!(fixed("[1,,2]"), "[1,2]");
}

#[test]
fn fences_and_prose_around_the_value_are_removed() {
    assert_eq!(
        fix("```json\n{\"a\": 1}\n```"),
        (
            "{\"a\": 1}".into(),
            vec!["markdown_fence", "markdown_fence"]
        )
    );
    let (json, kinds) = fix("Sure! Here you go: {\"a\": 1} Hope this helps.");
    assert_eq!(json, "{\"a\": 1}");
    assert_eq!(kinds, vec!["surrounding_text", "surrounding_text"]);
}

/// Found by the repair fuzz target: wrapping several root values in an array added a level
/// past the depth limit, so the output was refused when repaired again.
#[test]
fn wrapping_root_values_keeps_the_output_within_the_depth_limit() {
    let limits = Limits {
        max_depth: 3,
        ..Limits::default()
    };
    let code = |text: &str| repair(text.as_bytes(), &limits).map(|r| r.json.into_owned());
    assert_eq!(code("1 [[1]]").unwrap(), "[1, [[1]]]");
    assert_eq!(
        code("[[[1]]] [2]").unwrap_err().kind,
        ErrorKind::TooDeep { limit: 3 }
    );
    assert_eq!(
        code("1 [[[1]]]").unwrap_err().kind,
        ErrorKind::TooDeep { limit: 3 }
    );
    for text in ["NaN}[[[", "1 [[", "[[1]] {\"a\": [2"] {
        if let Ok(json) = code(text) {
            assert!(
                repair(json.as_bytes(), &limits).is_ok(),
                "{text:?} -> {json:?}"
            );
        }
    }
}

/// Found by the repair fuzz target: a value cut back to an earlier comma was cut by its
/// length in the source, but escaped control characters had made it longer in the output:
/// the cut landed inside an escape and the output was not JSON.
#[test]
fn a_value_cut_back_to_a_comma_after_escapes_stays_json() {
    for input in [
        "{a\",\r\r\"\":",
        "{\"a\": \"x,\t\"b\": 1}",
        "{\"a\": 'x,\"\"b': 1}",
    ] {
        let repaired = repair(input.as_bytes(), &Limits::default()).unwrap();
        assert!(
            serde_json::from_str::<serde_json::Value>(&repaired.json).is_ok(),
            "{input:?} -> {:?}",
            repaired.json
        );
    }
}

#[test]
fn concatenated_values_are_wrapped_in_an_array() {
    assert_eq!(
        fix("{\"a\": 1}\n{\"b\": 2}"),
        (
            "[{\"a\": 1},\n{\"b\": 2}]".into(),
            vec!["concatenated_values"]
        )
    );
    assert_eq!(fixed("[1], [2]"), "[[1],[2]]");
}

#[test]
fn bom_and_invalid_utf8_are_mended() {
    assert_eq!(
        fix("\u{feff}{\"a\": 1}"),
        ("{\"a\": 1}".into(), vec!["byte_order_mark"])
    );
    let repaired = repair(b"{\"a\": \"\xff\"}", &Limits::default()).unwrap();
    assert_eq!(repaired.json, "{\"a\": \"\u{fffd}\"}");
    assert_eq!(
        repaired.repairs,
        vec![Repair {
            kind: RepairKind::InvalidUtf8,
            position: 7,
            count: 1,
        }]
    );
}

#[test]
fn an_encoded_lone_surrogate_is_one_replacement_character() {
    // ED A0 80 is U+D800 written on its own (WTF-8, CESU-8, Python's surrogatepass).
    let repaired = repair(
        b"[\"a\xed\xa0\x80b\", \"\xed\xbf\xbf\", \"\xed\xa0\"]",
        &Limits::default(),
    )
    .unwrap();
    assert_eq!(
        repaired.json,
        "[\"a\u{fffd}b\",\"\u{fffd}\",\"\u{fffd}\u{fffd}\"]".replace(',', ", ")
    );
    let positions: Vec<usize> = repaired.repairs.iter().map(|r| r.position).collect();
    assert_eq!(positions, vec![3], "one repair, at the first invalid byte");
}

/// Found by the repair fuzz target: after invalid bytes were replaced (3 bytes each), error
/// and repair positions pointed into the replaced text, past the input's end.
#[test]
fn positions_refer_to_the_input_after_invalid_utf8_or_unescaping() {
    let positions = |input: &[u8]| -> Vec<(RepairKind, usize)> {
        let repaired = repair(input, &Limits::default()).unwrap();
        repaired
            .repairs
            .iter()
            .map(|r| (r.kind, r.position))
            .collect()
    };
    let kinds = positions(b"{\"a\xff\xfe\": 'x', \"b\": }}");
    assert_eq!(kinds[1], (RepairKind::SingleQuotes, 8));
    assert_eq!(
        kinds.iter().map(|k| k.1).collect::<Vec<_>>(),
        [3, 8, 18, 19]
    );
    let err = repair(b"\xff\xff\xff\xff :", &Limits::default()).unwrap_err();
    assert!(err.position <= 6, "position {}", err.position);
    // One level of escaping taken off: `{\"a\": 'x'}` -> `{"a": 'x'}`.
    let kinds = positions(br#"{\"a\": 'x'}"#);
    assert!(kinds.contains(&(RepairKind::SingleQuotes, 8)), "{kinds:?}");
}

#[test]
fn several_faults_at_once_are_all_mended() {
    let (json, kinds) = fix("{path: 'test.txt',}");
    assert_eq!(json, r#"{"path": "test.txt"}"#);
    assert_eq!(
        kinds,
        vec!["unquoted_key", "single_quotes", "trailing_comma"]
    );
}

#[test]
fn text_without_json_is_refused_with_a_position() {
    for input in ["", "   ", "hello there"] {
        let err = repair(input.as_bytes(), &Limits::default()).unwrap_err();
        assert_eq!(err.code(), ErrorCode::Unparseable, "{input:?}");
        assert!(err.to_string().contains("expected a JSON value"), "{err}");
    }
}

#[test]
fn limits_are_enforced_with_their_codes() {
    let limits = Limits {
        max_size: 10,
        ..Limits::default()
    };
    let err = repair(br#"{"a": "0123456789"}"#, &limits).unwrap_err();
    assert_eq!(
        (err.code().as_str(), err.kind.clone()),
        (
            "TLP-007",
            ErrorKind::TooLarge {
                size: 19,
                limit: 10
            }
        )
    );
    let deep = "[".repeat(65);
    let err = repair(deep.as_bytes(), &Limits::default()).unwrap_err();
    assert_eq!((err.code().as_str(), err.position), ("TLP-008", 64));
    assert!(repair("[".repeat(64).as_bytes(), &Limits::default()).is_ok());
}

#[test]
fn ten_thousand_braces_fail_on_depth_or_finish_fast_when_allowed() {
    // A pathological case: 10,000 '{' then 9,999 '}' with a 10 ms deadline. With the
    // default depth limit it is refused at once (TLP-008, depth); with the limit lifted the
    // engine is linear and finishes inside the deadline instead of timing out.
    let input = format!("{}{}", "{".repeat(10_000), "}".repeat(9_999));
    let strict = Limits {
        timeout_ms: 10,
        ..Limits::default()
    };
    let err = repair(input.as_bytes(), &strict).unwrap_err();
    assert_eq!(err.kind, ErrorKind::TooDeep { limit: 64 });
    // A generous deadline: a loaded machine's debug build must not fail it; a quadratic
    // engine (10^8 steps) would.
    let lifted = Limits {
        timeout_ms: 2_000,
        max_depth: 20_000,
        ..Limits::default()
    };
    let repaired = repair(input.as_bytes(), &lifted).unwrap();
    assert_eq!(repaired.json, "{}");
}

#[test]
fn a_passed_deadline_is_a_timeout_error() {
    let input = "[1,".repeat(20_000);
    let limits = Limits {
        timeout_ms: 1,
        max_depth: 1 << 20,
        ..Limits::default()
    };
    let deadline = Deadline::expired(1);
    let err = Engine::<false>::new(input.as_bytes(), &limits, deadline)
        .run()
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::TooDeepOrTimeout);
    assert!(err.to_string().contains("timeout"));
}

#[test]
fn strict_errors_say_what_was_expected_and_where() {
    let err = validate(br#"{"a": 1,}"#, &Limits::default()).unwrap_err();
    assert_eq!(err.position, 7);
    assert_eq!(
        err.to_string(),
        "expected a value after ',' at byte 7, found ','"
    );
    let err = validate(br#"{"a": 1"#, &Limits::default()).unwrap_err();
    assert!(err.is_incomplete());
}

mod closing_quote_tests {
    use super::*;

    fn fixed(input: &str) -> String {
        let limits = Limits::default();
        repair(input.as_bytes(), &limits).unwrap().json.into_owned()
    }

    #[test]
    fn a_quote_before_structure_closes_even_when_junk_follows_it() {
        assert_eq!(fixed(r#"["a" 2]"#), r#"["a" ,2]"#);
        assert_eq!(
            fixed(r#"{"k": ["x","y" comment], "n": 1}"#),
            r#"{"k": ["x","y" ,"comment"], "n": 1}"#
        );
        assert_eq!(
            fixed(
                r#"{"a": "b" // note
}"#
            ),
            "{\"a\": \"b\" \n}"
        );
        assert_eq!(
            fixed(r#"{"a":"foo",/*x*/"b":"bar"}"#),
            r#"{"a":"foo","b":"bar"}"#
        );
    }

    #[test]
    fn inner_quotes_with_commas_or_code_stay_inside_the_string() {
        assert_eq!(
            fixed(r#"{"a": "He said "Hi, Bob" and left", "b": 1}"#),
            r#"{"a": "He said \"Hi, Bob\" and left", "b": 1}"#
        );
        assert_eq!(
            fixed(r#"{"c": "print(f"{name}")", "d": 2}"#),
            r#"{"c": "print(f\"{name}\")", "d": 2}"#
        );
    }

    #[test]
    fn string_concatenation_is_joined() {
        assert_eq!(fixed(r#"{"s": "ab" + "cd"}"#), r#"{"s": "abcd"}"#);
        assert_eq!(
            fixed(
                r#""ab" +
 "cd""#
            ),
            r#""abcd""#
        );
    }

    #[test]
    fn a_key_after_a_comma_ends_a_value_left_open() {
        assert_eq!(
            fixed(r#"{"city": "New York, "zip": "10001"}"#),
            r#"{"city": "New York", "zip": "10001"}"#
        );
        assert_eq!(
            fixed(r#"{"key": value "key2" : "v"}"#),
            r#"{"key": "value" ,"key2" : "v"}"#
        );
    }

    #[test]
    fn calls_ellipses_and_stringified_strings() {
        assert_eq!(
            fixed(r#"{"_id": ObjectId("123"), "n": NumberLong(2)}"#),
            r#"{"_id": "123", "n": 2}"#
        );
        assert_eq!(fixed("callback_1(true);"), "true");
        assert_eq!(fixed(r#"{"a": 2, ..., "z": 26}"#), r#"{"a": 2,  "z": 26}"#);
        assert_eq!(fixed(r#"\"hello\""#), r#""hello""#);
        assert_eq!(fixed("{'g': 'he' + /* c */ 'llo'}"), r#"{"g": "hello"}"#);
        assert_eq!(fixed("{},\n/* 2 */\n{}"), "[{},{}]");
    }

    #[test]
    fn top_level_comma_lists_become_arrays_and_digit_separators_are_dropped() {
        assert_eq!(fixed("1,2,3"), "[1,2,3]");
        assert_eq!(fixed(r#"{"n": 82_461_110}"#), r#"{"n": 82461110}"#);
        // Closed early and continued: no member after the early closer is dropped.
        assert_eq!(fixed(r#"{"a": 1}, "b": 2}"#), r#"{"a": 1, "b": 2}"#);
        assert_eq!(
            fixed(r#"{"a": {"b": 1}}, "c": 2, "d": 3}"#),
            r#"{"a": {"b": 1}, "c": 2, "d": 3}"#
        );
        assert_eq!(fixed(r#"{"a": 1}, "note""#), r#"[{"a": 1},"note"]"#);
        // A stray word before a quoted key and its colon is junk, not a key that swallows it.
        assert_eq!(
            fixed(r#"{"a": true, COMMENT "b": "c"}"#),
            r#"{"a": true, "b": "c"}"#
        );
        assert_eq!(
            fixed(r#"[{"k": "v", NOTE "n": "m" }]"#),
            r#"[{"k": "v", "n": "m" }]"#
        );
    }
}

#[test]
fn every_kind_has_its_own_one_line_description() {
    let mut seen = std::collections::HashSet::new();
    for kind in RepairKind::ALL {
        let text = kind.description();
        assert!(
            text.ends_with('.') && !text.contains('\n'),
            "{kind:?}: {text:?}"
        );
        assert!(seen.insert(text), "{kind:?} shares its description");
    }
    assert_eq!(RepairKind::ALL.len(), 37);
    assert_eq!(RepairKind::ALL[0], RepairKind::TrailingComma);
    assert_eq!(RepairKind::InvalidUtf8.as_str(), "invalid_utf8");
}

/// Inputs built to make look-aheads re-read the rest of the text: quotes inside `//` or `/* */`
/// comments inside a string left open (each quote asks "does this close the string?", and the
/// answer skips the comments after it), and redundant `{}` pairs (each closing one looks back
/// over the whitespace written since the last value).
mod hostile {
    use super::*;

    fn family(name: &str, units: usize) -> String {
        let (head, unit, tail) = match name {
            "line comments, double quotes" => ("{\"a\": \"", "\n//\"", "\nx y}"),
            "line comments, single quotes" => ("{\"a\": '", "\n//'", "\nx y}"),
            "block comments" => ("{\"a\": \"", "/*\"/**/", "\nx y}"),
            "comments after a quote" => ("{\"a\": \"", "//\" //\n", "\nx y}"),
            "comments after a comma" => ("['", ",\n//'", "\nx y]"),
            "empty brace pairs" => ("{\"a\":1, ", "{} ", "}"),
            "spaced brace pairs" => ("{\"a\":1, ", "{ } ", "}"),
            // Each string looks like JSON written into it, whose end is never found.
            "json in strings, open" => ("[", "\"{\"a\": 1, ", "]"),
            "json in strings, cut short" => ("[", "\"{\"}x ", "]"),
            // Issue 35's look-aheads: each reads a bounded window, or bytes consumed next.
            "elements missing a quote" => ("[", "\"a\" b\", ", "1]"),
            "objects inline in a value" => ("{\"a\": \"", "x {\"k\": 1} ", "\"}"),
            "arrays closed early" => ("{\"a\": [1], ", "[2], [], ", "\"b\": 1}"),
            "sets of strings" => ("[", "{'a', 'b'}, ", "1]"),
            "backticks with accents" => ("[", "`a\u{b4}, ", "1]"),
            "line comments before closers" => ("[", "{\"a\": 1 # x }, \"b\": 1},\n", "1]"),
            "objects left open in an array" => ("[", "{\"i\": 1, ", "1]"),
            "parentheses around one value" => ("{", "\"a\": (1), ", "\"b\": 1}"),
            // The third round's look-aheads: each reads a bounded window.
            "quotes doubled at a string's start" => ("[", "\"\"a b c, ", "1]"),
            "unquoted values with commas" => ("{", "\"k\": a, b c, ", "\"z\": 1}"),
            "elements with no quotes after a quote" => ("[", "\"a\", b c, ", "1]"),
            "quotes inside a key" => ("{", "\"k\"e\"y\": 1, ", "\"z\": 1}"),
            "pairs of quotes in a value" => ("{\"a\": \"", "x \"y\" z ", "}"),
            "brackets in a bare value" => ("{", "\"a\": w{x}[y], ", "\"z\": 1}"),
            _ => unreachable!("{name}"),
        };
        format!("{head}{}{tail}", unit.repeat(units))
    }

    const FAMILIES: [&str; 23] = [
        "line comments, double quotes",
        "line comments, single quotes",
        "block comments",
        "comments after a quote",
        "comments after a comma",
        "empty brace pairs",
        "spaced brace pairs",
        "json in strings, open",
        "json in strings, cut short",
        "elements missing a quote",
        "objects inline in a value",
        "arrays closed early",
        "sets of strings",
        "backticks with accents",
        "line comments before closers",
        "objects left open in an array",
        "parentheses around one value",
        "quotes doubled at a string's start",
        "unquoted values with commas",
        "elements with no quotes after a quote",
        "quotes inside a key",
        "pairs of quotes in a value",
        "brackets in a bare value",
    ];

    #[test]
    fn quotes_in_comment_chains_inside_a_string_stay_inside_it() {
        let cases = [
            (
                "line comments, double quotes",
                r#"{"a": "\n//\"\n//\"\n//"
}"#,
            ),
            (
                "line comments, single quotes",
                r#"{"a": "\n//'\n//'\n//"
}"#,
            ),
            (
                "block comments",
                r#"{"a": "/*\"/**//*\"/**//*"
}"#,
            ),
            (
                "comments after a quote",
                "{\"a\": \"//\\\" //\\n//\\\" //\\n//\" \n\n}",
            ),
            (
                "comments after a comma",
                r#"[",\n//',\n//',\n//"
,"x y"]"#,
            ),
        ];
        for (name, want) in cases {
            assert_eq!(fixed(&family(name, 3)), want, "{name}");
        }
        let (_, kinds) = fix(&family("line comments, double quotes", 3));
        assert_eq!(
            kinds.iter().filter(|&&k| k == "unescaped_quotes").count(),
            2
        );
    }

    #[test]
    fn redundant_brace_pairs_are_dropped_keeping_their_whitespace() {
        assert_eq!(fixed(&family("empty brace pairs", 3)), "{\"a\":1    }");
        assert_eq!(fixed(&family("spaced brace pairs", 3)), "{\"a\":1       }");
        let (_, kinds) = fix(&family("empty brace pairs", 3));
        assert_eq!(
            &kinds[..3],
            ["redundant_brace", "trailing_comma", "missing_comma"]
        );
    }

    #[test]
    fn long_comment_blocks_between_members_are_still_skipped() {
        // Hundreds of bytes of short comments after a value: each comment is short, so the
        // whole block is skipped and the quote before it still closes the string.
        let lines = format!("{{\"a\": \"x\", {}\"b\": 1}}", "// c\n".repeat(100));
        assert_eq!(
            fixed(&lines),
            format!("{{\"a\": \"x\", {}\"b\": 1}}", "\n".repeat(100))
        );
        let blocks = format!("{{\"a\": \"x\" {}, \"b\": 1}}", "/* c */ ".repeat(60));
        assert_eq!(
            fixed(&blocks),
            format!("{{\"a\": \"x\"{}, \"b\": 1}}", " ".repeat(61))
        );
    }

    /// The engine's count of work (loop turns and bytes read by look-aheads) at `units` units.
    fn work(name: &str, units: usize) -> f64 {
        let input = family(name, units);
        let limits = Limits {
            max_size: usize::MAX,
            max_depth: 1 << 20,
            timeout_ms: 0,
        };
        let mut engine = Engine::<false>::new(input.as_bytes(), &limits, limits.deadline());
        engine.run().unwrap();
        engine.work.get() as f64
    }

    #[test]
    fn work_grows_linearly_on_every_hostile_family() {
        // Counted, not timed: four times the input must cost about four times the work (a
        // look-ahead that re-read the rest of the input would cost sixteen times).
        for name in FAMILIES {
            let (small, large) = (work(name, 4 << 10), work(name, 16 << 10));
            let bytes = family(name, 16 << 10).len() as f64;
            assert!(large < small * 5.0, "{name}: work {small} -> {large}");
            assert!(
                large < bytes * 16.0,
                "{name}: work {large} for {bytes} bytes"
            );
        }
    }

    #[test]
    fn a_passed_deadline_stops_every_hostile_family() {
        let limits = Limits {
            max_depth: 1 << 20,
            ..Limits::default()
        };
        for name in FAMILIES {
            let input = family(name, 16 << 10);
            let err = Engine::<false>::new(input.as_bytes(), &limits, Deadline::expired(1))
                .run()
                .expect_err(name);
            assert_eq!(err.code(), ErrorCode::TooDeepOrTimeout, "{name}");
            assert!(err.to_string().contains("timeout"), "{name}: {err}");
        }
    }
}

#[test]
fn python_containers_backticks_spaces_units_and_keys_after_an_open_array() {
    let cases = [
        ("{'a': (1, 2)}", r#"{"a": [1, 2]}"#, "python_container"),
        ("{'a': {1, 2}}", r#"{"a": [1, 2]}"#, "python_container"),
        (r#"{"a": (1,)}"#, r#"{"a": [1]}"#, "python_container"),
        ("{`a`: `b`}", r#"{"a": "b"}"#, "special_quotes"),
        (r#"{"a": NULL}"#, r#"{"a": null}"#, "python_literal"),
        (
            "{\u{a0}\"a\":\u{2002}1}",
            r#"{"a":1}"#,
            "unexpected_character",
        ),
        (r#"{"w": 5 kg}"#, r#"{"w": "5 kg"}"#, "unquoted_string"),
        (
            r#"{"a": [1, 2 "b": 3}"#,
            r#"{"a": [1, 2 ],"b": 3}"#,
            "missing_closing_bracket",
        ),
        (
            r#"{"j": "{"s": "m", "n": 2}"}"#,
            r#"{"j": "{\"s\": \"m\", \"n\": 2}"}"#,
            "unescaped_quotes",
        ),
        (
            r#"{"a": "b", "c"#,
            r#"{"a": "b", "c":null}"#,
            "truncated_string",
        ),
    ];
    for (input, want, kind) in cases {
        let (got, kinds) = fix(input);
        assert_eq!(got, want, "{input}");
        assert!(kinds.contains(&kind), "{input}: {kinds:?}");
    }
    // Valid JSON through the repair engine itself (not only the strict check) comes out as it
    // went in, where a string's text starts like JSON.
    for valid in [
        r#"{"a": "{", "b": "}"}"#,
        r#"["[", "]"]"#,
        r#"{"a": "{\"x\": 1}", "b": "}"}"#,
    ] {
        let limits = Limits::default();
        let mut engine = Engine::<false>::new(valid.as_bytes(), &limits, limits.deadline());
        engine.run().unwrap();
        assert_eq!(std::str::from_utf8(&engine.out).unwrap(), valid);
        assert!(engine.repairs.items.is_empty(), "{valid}");
    }
    // Readings that stay: prose in parentheses, numeric keys, a valid "{" value, arrays of
    // strings with a missing comma.
    for (input, want) in [
        (r#"{"a": (see below)}"#, r#"{"a": "(see below)"}"#),
        (r#"{1: "a"}"#, r#"{"1": "a"}"#),
        (r#"{"a": "{", "b": tru"#, r#"{"a": "{", "b": true}"#),
        (r#"{"a": ["x" "y"]}"#, r#"{"a": ["x" ,"y"]}"#),
        (r#"{"a": 1 b: 2}"#, r#"{"a": 1 ,"b": 2}"#),
    ] {
        assert_eq!(fixed(input), want, "{input}");
    }
}

#[test]
fn plainly_broken_is_never_said_of_valid_text() {
    for valid in [
        r#"{"a": 1}"#,
        " [1, 2] \n",
        r#""{""#,
        r#"{"a": ",}"}"#,
        "[[],{}]",
        "12",
        "{}",
        "[]",
    ] {
        assert!(!plainly_broken(valid.as_bytes()), "{valid}");
        assert!(
            validate(valid.as_bytes(), &Limits::DEFAULT).is_ok(),
            "{valid}"
        );
    }
    for cut in [
        r#"{"a": 1"#,
        r#"{"a": "x"#,
        "[1, 2,",
        "{",
        "[",
        r#"{"a": [1]"#,
        r#"{"a": 1,}"#,
        "[1, ]",
        r#"{"a": }"#,
        "{'a': 1}",
        "{path: 1}",
        "[// x\n1]",
        "[True]",
        "{ /* c */ \"a\": 1}",
    ] {
        assert!(plainly_broken(cut.as_bytes()), "{cut}");
    }
    // Faults in the last bytes, found by the walk back from the end.
    let head = format!(r#"{{"content": "{}", "#, "x\\\"y ".repeat(4000));
    for tail in [
        r#""ratio": 0.75 // the end
}"#,
        r#""backup": None, "ratio": 0.75}"#,
        r#""ok": True}"#,
        r#""a": 'b'}"#,
        r#""a": 1 # note
}"#,
        r#""a": 1\"}"#,
    ] {
        let text = head.clone() + tail;
        assert!(plainly_broken(text.as_bytes()), "{tail}");
        assert!(
            validate(text.as_bytes(), &Limits::DEFAULT).is_err(),
            "{tail}"
        );
    }
    // Not plainly: left to the strict parse (a cut inside a string may end with a brace).
    for unsure in [
        "",
        "   ",
        r#"{"a": 1}}"#,
        r#"{"a": "x}"#,
        "tru",
        r#"'{"a": 1'"#,
    ] {
        assert!(!plainly_broken(unsure.as_bytes()), "{unsure}");
    }
}

fn json_value() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
    use proptest::prelude::*;
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<i64>().prop_map(serde_json::Value::from),
        "[a-z,:{}\\[\\] \"\\\\'#/NT\u{e9}]{0,6}".prop_map(serde_json::Value::from),
        any::<f64>().prop_map(serde_json::Value::from),
    ];
    leaf.prop_recursive(4, 40, 5, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(serde_json::Value::from),
            proptest::collection::btree_map("[a-z,}\\]]{0,4}", inner, 0..5)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest::proptest! {
    #[test]
    fn valid_text_is_never_plainly_broken(value in json_value(), pretty: bool) {
        let text = if pretty {
            serde_json::to_string_pretty(&value).unwrap()
        } else {
            serde_json::to_string(&value).unwrap()
        };
        proptest::prop_assert!(!plainly_broken(text.as_bytes()), "{}", text);
        for window in 0..=text.len() {
            proptest::prop_assert!(!tail_broken(text.as_bytes(), window), "{} ({})", text, window);
        }
    }
}

/// The log `mend` keeps with `cap` repairs in full, checked against the whole log: the same
/// text; the first `cap` repairs as they were; then, per kind, one record counting the rest from
/// the first of them (in the order of those positions); then the repairs closing the text at its
/// end (all but control characters) as they were.
fn assert_capped_log_summarises(input: &[u8], cap: usize) -> Result<(), String> {
    let limits = Limits {
        max_size: 1 << 26,
        max_depth: 500,
        timeout_ms: 0,
    };
    let (Ok(whole), Ok(capped)) = (
        mend_capped(input, &limits, usize::MAX),
        mend_capped(input, &limits, cap),
    ) else {
        return Ok(());
    };
    if whole.json != capped.json {
        return Err("the text differs".into());
    }
    let tail = input.trim_ascii_end().len();
    let closing = |r: &&Repair| r.position >= tail && r.kind != RepairKind::ControlCharacter;
    let mut expected: Vec<Repair> = whole.repairs.iter().take(cap).copied().collect();
    let rest = whole.repairs.get(cap..).unwrap_or_default();
    let mut summary: Vec<Repair> = Vec::new();
    for r in rest.iter().filter(|r| !closing(r)) {
        match summary.iter_mut().find(|s| s.kind == r.kind) {
            Some(s) => s.count += 1,
            None => summary.push(*r),
        }
    }
    summary.sort_by_key(|r| (r.position, r.kind as usize));
    expected.extend(summary);
    expected.extend(rest.iter().filter(closing));
    if capped.repairs != expected {
        return Err(format!("log {:?}\nexpected {:?}", capped.repairs, expected));
    }
    if capped.repairs.iter().any(|r| r.count == 0) {
        return Err("a record of no repairs".into());
    }
    Ok(())
}

#[test]
fn megabytes_of_commas_log_a_thousand_repairs_and_a_summary() {
    let commas = 3 << 20;
    let input = format!("[1{}2]", ",".repeat(commas));
    let limits = Limits {
        max_size: 4 << 20,
        max_depth: 64,
        timeout_ms: 0,
    };
    let mended = mend(input.as_bytes(), &limits).unwrap();
    assert_eq!(mended.json, "[1,2]");
    assert_eq!(mended.repairs.len(), MAX_LOGGED + 1);
    assert!(mended.repairs[..MAX_LOGGED].iter().all(|r| r.count == 1));
    let summary = mended.repairs[MAX_LOGGED];
    assert_eq!(summary.kind, RepairKind::ExtraComma);
    assert_eq!(summary.count as usize, commas - 1 - MAX_LOGGED);
    assert_eq!(summary.position, 3 + MAX_LOGGED);
    // `repair` (valid text aside, the same pass) and the cut-off rule read the same log.
    let cut = format!("{{\"a\": [1{}2], \"b\"", ",".repeat(5000));
    let mended = repair(cut.as_bytes(), &limits).unwrap();
    assert_eq!(mended.repairs.len(), MAX_LOGGED + 1 + 2);
    assert!(ends_cut_off(cut.as_bytes(), &mended.repairs));
    let kinds: Vec<_> = mended.repairs[MAX_LOGGED..]
        .iter()
        .map(|r| r.kind)
        .collect();
    assert_eq!(
        kinds,
        [
            RepairKind::ExtraComma,
            RepairKind::MissingValue,
            RepairKind::MissingClosingBrace
        ]
    );
}

#[test]
fn a_capped_log_counts_what_it_does_not_hold() {
    // A closing repair among those held in full (the cut-off string of `[T,"`, logged before
    // the comma dropped with it): the summary of those past the cap follows all of them.
    assert_capped_log_summarises(b"\x01[T,\"", 3).unwrap();
    for input in [
        // Several kinds past the cap, and closers and a missing value at the end.
        format!("{{'a': [{}", "1,, True, 'x', ".repeat(40)),
        // Control characters in a string that runs into a fence: the part given back (closers,
        // newlines) is read again, and its repairs are taken back, counted ones included.
        format!(
            "{{\"a\": [{}], \"b\": \"v\n{}}}\n\n```",
            "1,,".repeat(30),
            "\t".repeat(30)
        ),
        format!("{{\"b\": \"v{}}}{}\n```", "\t".repeat(80), "\n".repeat(50)),
        // Some of the string's control characters before where it ends, some given back.
        format!(
            "{{\"b\": \"v{}x}}{}```",
            "\u{1}".repeat(40),
            "\n".repeat(40)
        ),
        // An unclosed string of whitespace to the end.
        format!(
            "{{\"a\": [{}], \"b\": \"x{}",
            "1,,".repeat(30),
            "\n".repeat(100)
        ),
    ] {
        for cap in [0, 1, 7, 31, 64] {
            assert_capped_log_summarises(input.as_bytes(), cap)
                .unwrap_or_else(|e| panic!("{input:?} cap {cap}: {e}"));
        }
    }
    // The string that runs into the fence ends before the whitespace, closers and fence, which
    // it gives back: the 130 control characters it escaped there, past every cap above, are
    // taken back.
    let fenced = format!("{{\"b\": \"v{}}}{}\n```", "\t".repeat(80), "\n".repeat(50));
    let whole = mend(fenced.as_bytes(), &Limits::default()).unwrap();
    assert_eq!(whole.json, format!("{{\"b\": \"v\"{}}}", "\t".repeat(80)));
    let kinds = |kind| whole.repairs.iter().filter(|r| r.kind == kind).count();
    assert_eq!(kinds(RepairKind::ControlCharacter), 0);
    assert_eq!(kinds(RepairKind::UnclosedString), 1);
}

proptest::proptest! {
    #[test]
    fn any_capped_log_counts_what_it_does_not_hold(
        input in "[\\[\\]{}:,'\"a1 \n\t\u{1}`#/TN]{0,120}",
        cap in 0usize..12,
    ) {
        if let Err(e) = assert_capped_log_summarises(input.as_bytes(), cap) {
            proptest::prop_assert!(false, "{:?} cap {}: {}", input, cap, e);
        }
    }
}

#[test]
fn fences_with_no_line_break_several_fenced_blocks_and_a_bracket_before_the_fence() {
    assert_eq!(fixed("```{\"a\":\"b\"}```"), "{\"a\":\"b\"}");
    assert_eq!(fixed("````json {\"a\": 1}```"), "{\"a\": 1}");
    assert_eq!(fixed("[```json\n{\"a\":\"b\"}\n```]"), "{\"a\":\"b\"}");
    assert_eq!(fixed("{```\n{\"a\":\"b\"}\n```}"), "{\"a\":\"b\"}");
    assert_eq!(
        fixed("First:\n```json\n{\"a\": 1}\n```\nThen:\n```json\n{\"b\": 2}\n```\nDone."),
        "[{\"a\": 1},{\"b\": 2}]"
    );
    assert_eq!(
        fixed("```json\n{\"a\": 1}\n```\n```json\n[2]\n```"),
        "[{\"a\": 1},[2]]"
    );
    // A fence after prose, around a value that opens no bracket.
    assert_eq!(fixed("The pair:\n```python\n(1, 2)\n```"), "[1, 2]");
    // Prose with no fence after it is still dropped, values in it too.
    assert_eq!(fixed("{\"a\": 1} and then {\"c\": 3}"), "{\"a\": 1}");
}

#[test]
fn values_alone_on_their_lines_and_glued_containers_are_several_values() {
    assert_eq!(fixed("1\n2\n3"), "[1,\n2,\n3]");
    assert_eq!(fixed("true\nnull"), "[true,\nnull]");
    assert_eq!(fixed("{\"a\":\"x\"}[1,2]"), "[{\"a\":\"x\"},[1,2]]");
    // A numbered line of prose is no value.
    assert_eq!(fixed("{\"a\": 1}\n1. Do this"), "{\"a\": 1}");
}

#[test]
fn parentheses_around_one_value_sets_of_strings_and_members_in_an_array() {
    assert_eq!(fixed("(1)"), " 1");
    assert_eq!(fixed("{\"g\": (\"x\")}"), "{\"g\":  \"x\"}");
    assert_eq!(fixed("{\"p\": (1,)}"), "{\"p\": [1]}");
    assert_eq!(fixed("((1, 2))"), " [1, 2]");
    // Two values missing their comma are a tuple, not a value in parentheses.
    assert_eq!(fixed("{\"a\": (1 2)}"), "{\"a\": [1 ,2]}");
    assert_eq!(
        fixed("[({\"i\": 1 {\"i\": 2})]"),
        "[[{\"i\": 1 },{\"i\": 2}]]"
    );
    // The same after a comma, where the object's `}` went missing (found by the fuzzer).
    assert_eq!(
        fixed("{\"a\": ({\"i\": 1, {\"i\": 2})}"),
        "{\"a\": [{\"i\": 1  },{\"i\": 2}]}"
    );
    assert_eq!(
        fixed("{'a'({n:0\n- ({''})"),
        "{\"a\":[{\"n\":0\n },{\"\":null}]}"
    );
    assert_eq!(fixed("{'a', 'b', 'c'}"), "[\"a\", \"b\", \"c\"]");
    // One string, or a string and a key, is an object whose keys lack values.
    assert_eq!(fixed("{\"a\"}"), "{\"a\":null}");
    assert_eq!(fixed("{\"a\", \"b\": 1}"), "{\"a\":null, \"b\": 1}");
    let (json, kinds) = fix("[\"key\": \"value\"]");
    assert_eq!(json, "[{\"key\": \"value\"}]");
    assert!(kinds.contains(&"missing_opening_brace"), "{kinds:?}");
    assert_eq!(fixed("[\"key\":\"value\"}]"), "[{\"key\":\"value\"}]");
}

#[test]
fn invisible_spaces_exponents_of_nothing_and_values_with_no_key() {
    for space in ["\u{200b}", "\u{180e}", "\u{feff}", "\u{2060}"] {
        assert_eq!(
            fixed(&format!("{{\"a\":{space}\"foo\"}}")),
            "{\"a\":\"foo\"}"
        );
    }
    assert_eq!(fixed("[-e5]"), "[\"-e5\"]");
    assert_eq!(fixed("[1e5, .5e1]"), "[1e5, 0.5e1]");
    let refused = repair(b"{:2}", &Limits::default()).unwrap_err();
    assert_eq!(refused.code(), crate::error::ErrorCode::Unparseable);
    assert_eq!(fixed("{:}"), "{}");
}

#[test]
fn a_quote_missing_at_an_element_s_start_or_end_eats_no_neighbour() {
    // An element with its opening quote missing (a word stuck to a quote before `,` or `]`).
    assert_eq!(
        fixed(r#"["value1" value2", "value3"]"#),
        r#"["value1" ,"value2", "value3"]"#
    );
    // A number or literal alone after an element: its comma went missing.
    assert_eq!(fixed(r#"["a" 2"#), r#"["a" ,2]"#);
    assert_eq!(fixed(r#"["a" "b" true]"#), r#"["a" ,"b" ,true]"#);
    // An element whose closing quote is missing before a comma and a whole element.
    assert_eq!(fixed(r#"["hello,"world"]"#), r#"["hello","world"]"#);
    assert_eq!(fixed("[\n\"abc,\n\"def\"\n]"), "[\n\"abc\",\n\"def\"\n]");
    // Before the closers that end the text, whitespace is layout.
    assert_eq!(fixed("[\"abc  ]\n"), "[\"abc\"  ]\n");
    assert_eq!(fixed("[\n[\n\"abc\n]\n]"), "[\n[\n\"abc\"\n]\n]");
    // Inner quotes that pair up stay inside, numbers after them too.
    assert_eq!(
        fixed(r#"["say "hi" now", "x"]"#),
        r#"["say \"hi\" now", "x"]"#
    );
    assert_eq!(
        fixed(r#"["He said "hi" 2 times", "x"]"#),
        r#"["He said \"hi\" 2 times", "x"]"#
    );
}

#[test]
fn keys_and_members_around_a_missing_quote_are_kept() {
    assert_eq!(fixed(r#"{a":"foo","b":"bar"}"#), r#"{"a":"foo","b":"bar"}"#);
    assert_eq!(fixed(r#"{"a":"foo",b":"bar"}"#), r#"{"a":"foo","b":"bar"}"#);
    assert_eq!(
        fixed(r#"{"w": abc", "n": 12345", "v": x" }"#),
        r#"{"w": "abc", "n": 12345, "v": "x" }"#
    );
    assert_eq!(
        fixed(r#"{"a": "first, b: "second"}"#),
        r#"{"a": "first", "b": "second"}"#
    );
    // With no quoted value after it, `, word:` inside a value left open stays text.
    assert_eq!(
        fixed(r#"{"msg": "Hello, note: at 5}"#),
        r#"{"msg": "Hello, note: at 5"}"#
    );
}

#[test]
fn junk_after_the_last_member_is_dropped_and_arrays_closed_early_go_on() {
    let (json, kinds) = fix(r#"{"b": "x" true}"#);
    assert_eq!(json, r#"{"b": "x" }"#);
    assert_eq!(kinds, vec!["unexpected_character"]);
    assert_eq!(
        fixed(r#"{"b": "x", "c": "y" AAAA }"#),
        r#"{"b": "x", "c": "y"  }"#
    );
    // After a comma a bare word is still a key with no value.
    assert_eq!(fixed(r#"{"a": 1, b}"#), r#"{"a": 1, "b":null}"#);
    assert_eq!(
        fixed(r#"{"a": ["x"], ["y"], ["z"], "b": 1}"#),
        r#"{"a": ["x" , "y" , "z"], "b": 1}"#
    );
    assert_eq!(
        fixed(r#"{"k": [[1], "a"], [[2], [3]] }"#),
        r#"{"k": [[1], "a" , [2], [3]] }"#
    );
    // The root object closed early and continued with a colon missing.
    assert_eq!(fixed(r#"{"a": "x"}, "b" "y"}"#), r#"{"a": "x", "b" :"y"}"#);
    // A block comment cut off at the end of the text.
    assert_eq!(fixed(r#"{"a": "x" /* note"#), r#"{"a": "x" }"#);
}

#[test]
fn arguments_encoded_twice_behind_prose_or_in_a_fence_are_decoded() {
    let (json, kinds) = fix("```json\n\"{\\\"a\\\": [1], \\\"b\\\": \\\"x\\\"}\"\n```");
    assert_eq!(json, r#"{"a": [1], "b": "x"}"#);
    assert!(kinds.contains(&"escaped_json"), "{kinds:?}");
    assert_eq!(fixed("Here it is: \"{\\\"a\\\": 1}\""), "{\"a\": 1} ");
    // The quotes of the string it was written into, found behind prose, are no text of it.
    assert_eq!(
        fixed("Here it is: \"{\\\"a\\\": \\\"x\\\"}\""),
        "{\"a\": \"x\"} "
    );
    assert_eq!(fixed("Here: [\"a\", 1] and \"b\""), "[\"a\", 1]");
    assert_eq!(fixed("[\"\"\"]"), "[\"\\\"\"]");
    assert_eq!(
        fixed("[\"Taj \"Mahal\"\", \"India\"]"),
        "[\"Taj \\\"Mahal\\\"\", \"India\"]"
    );
    assert_eq!(
        fixed("{\"t\": \"at \"12:00\"\", \"n\": 1}"),
        "{\"t\": \"at \\\"12:00\\\"\", \"n\": 1}"
    );
    assert_eq!(
        fixed("[\u{201c}M\u{201d}, \u{201c}L\u{201d}]"),
        "[\"M\", \"L\"]"
    );
    assert_eq!(
        fixed("Sure: {\\\"a\\\": 1, \\\"b\\\": true"),
        r#"{"a": 1, "b": true}"#
    );
    assert_eq!(
        fixed("```json\n{\\n  \\\"a\\\": \\\"x\\\"\\n}\n```"),
        "{\n  \"a\": \"x\"\n}"
    );
    // A JSON string alone is valid JSON, and stays a string; so does one with no JSON in it.
    assert_eq!(fixed("\"{\\\"a\\\": 1}\""), "\"{\\\"a\\\": 1}\"");
    assert_eq!(fixed("```json\n\"hello\"\n```"), "\"hello\"");
}

#[test]
fn backticks_closed_otherwise_objects_left_open_in_arrays_and_cut_empty_strings() {
    assert_eq!(fixed("{`a\u{b4}:`b\u{b4}}"), r#"{"a":"b"}"#);
    assert_eq!(fixed("[`foo', 1]"), r#"["foo", 1]"#);
    assert_eq!(fixed("[`it's`]"), r#"["it's"]"#);
    assert_eq!(fixed(r#"[{"i":1{"i":2}]"#), r#"[{"i":1},{"i":2}]"#);
    assert_eq!(fixed(r#"[{"i":1,{"i":2}]"#), r#"[{"i":1 },{"i":2}]"#);
    // Outside an array a doubled brace is still a template's.
    assert_eq!(fixed(r#"{{"a": 1}}"#), r#"{"a": 1}"#);
    assert_eq!(fixed("{a \u{201c}b\u{201d}}"), r#"{"a" :"b"}"#);
    assert_eq!(
        fixed("{\"a\": TRUE, \"b\": Null}"),
        r#"{"a": true, "b": null}"#
    );
    assert_eq!(fixed("\"first\\\nsecond\""), r#""first\nsecond""#);
    assert_eq!(fixed("{\""), "{}");
    assert_eq!(fixed(r#"{"a": 1, ""#), r#"{"a": 1 }"#);
    assert_eq!(fixed("[1, \""), "[1 ]");
    // An empty string written whole is kept.
    assert_eq!(fixed(r#"["a", """#), r#"["a", ""]"#);
    assert_eq!(fixed(r#"{"a": ""#), r#"{"a": ""}"#);
    assert_eq!(
        fixed(r#"{"a": sic. "b": x, quick brown fox. "c": y}"#),
        r#"{"a": "sic." ,"b": "x", "c": "y"}"#
    );
}

#[test]
fn objects_written_inline_in_a_value_keep_their_quotes() {
    assert_eq!(
        fixed(r#"{"x": "the answer is {"a": "b"}, not a string"}"#),
        r#"{"x": "the answer is {\"a\": \"b\"}, not a string"}"#
    );
    assert_eq!(
        fixed(r#"{"x": "a, {"k": 1}, "y": 2}"#),
        r#"{"x": "a, {\"k\": 1}", "y": 2}"#
    );
    // A brace whose balance is the text's own closer is no inline object.
    assert_eq!(fixed(r#"{"a": "x {", "b": 1}"#), r#"{"a": "x {", "b": 1}"#);
}

#[test]
fn a_string_left_open_before_the_closers_gives_back_the_member_it_holds() {
    assert_eq!(fixed(r#"{"a": "first, b: 1}"#), r#"{"a": "first", "b": 1}"#);
    assert_eq!(
        fixed(r#"{"a": "first, b: [1]}"#),
        r#"{"a": "first", "b": [1]}"#
    );
    assert_eq!(fixed(r#"{"key:value}"#), r#"{"key":"value"}"#);
    // Words after the colon are the value's; a text cut off mid-value stays cut, its value whole.
    assert_eq!(
        fixed(r#"{"a": "Hello, note: at 5}"#),
        r#"{"a": "Hello, note: at 5"}"#
    );
    let (json, kinds) = fix(r#"{"a": "hello, b: 5"#);
    assert_eq!(json, r#"{"a": "hello, b: 5"}"#);
    assert!(kinds.contains(&"truncated_string"), "{kinds:?}");
    // A key's raw line break at its end is dropped.
    assert_eq!(fixed("{\"key_1\n\": \"v\"}"), r#"{"key_1": "v"}"#);
    // A line comment ends before a closer that a comma and a key follow.
    assert_eq!(
        fixed(r#"{"k": {"a": "x" # note }, "b": 1}"#),
        r#"{"k": {"a": "x" }, "b": 1}"#
    );
    assert_eq!(
        fixed(r#"{"k": {"a": "x" // note }, "b": 1}"#),
        r#"{"k": {"a": "x" }, "b": 1}"#
    );
    // A `[` after a value's quote and comma starts what comes next.
    assert_eq!(fixed(r#"{"a": "x", ["y"] }"#), r#"{"a": "x", "y":null} "#);
}

#[test]
fn a_key_after_a_comma_in_an_array_closes_the_array() {
    assert_eq!(
        fixed(r#"{"a": [null, "e": null}"#),
        r#"{"a": [null  ],"e": null}"#
    );
    // In an array no object holds, it is still an element.
    assert_eq!(fixed(r#"[1, "e": 2]"#), r#"[1, "e\": 2"]"#);
}

#[test]
fn an_empty_array_closed_early_goes_on_without_an_empty_element() {
    assert_eq!(
        fixed(r#"{"a": [], [1], "b": 2}"#),
        r#"{"a": [   1], "b": 2}"#
    );
    assert_eq!(
        fixed(r#"[{"a": 1, [2], null]"#),
        r#"[{"a": 1  },[2], null]"#
    );
}

/// Found by the property law: an escaped quote closing a cut-off key is no empty key.
#[test]
fn an_escaped_quote_at_the_end_is_no_empty_string() {
    let json = fixed("{'\\\"");
    assert!(json.starts_with("{\""), "{json}");
    assert_eq!(fixed("[\"\\\""), "[\"\\\"\"]");
}

#[test]
fn an_empty_root_object_closed_early_goes_on_at_its_first_key() {
    assert_eq!(fixed("{},'':"), "{\"\":null}");
    assert_eq!(fixed("{}, \"b\": 2}"), "{ \"b\": 2}");
}

#[test]
fn a_fault_inside_arguments_encoded_twice_points_at_their_string() {
    let input = format!("Here: \"{}\"", "[".repeat(100));
    let err = repair(input.as_bytes(), &Limits::default()).unwrap_err();
    assert!(err.position <= input.len(), "{err:?}");
}

/// Issue 35's third round: readings of the peers' suites' families that keep what was meant.
mod third_round {
    use super::*;

    #[test]
    fn a_pair_of_quotes_kept_in_a_value_does_not_end_it() {
        // The second quote of a pair closes the pair, though a word and a closer follow it.
        assert_eq!(
            fixed(r#"{"note": "size} "large" please}"#),
            r#"{"note": "size} \"large\" please"}"#
        );
        assert_eq!(
            fixed(r#"{"q": "why "so " serious}"#),
            r#"{"q": "why \"so \" serious"}"#
        );
        // With no pair open, a word and the closer after a quote are junk, as before.
        assert_eq!(fixed(r#"{"b": "x" true}"#), r#"{"b": "x" }"#);
        // In an array, a quote before another closes the pair open, not the element.
        assert_eq!(fixed(r#"["say "hi" "there"]"#), r#"["say \"hi\" \"there"]"#);
        assert_eq!(fixed(r#"["a" "b"]"#), r#"["a" ,"b"]"#);
    }

    #[test]
    fn a_word_ending_the_text_after_a_value_is_junk() {
        assert_eq!(fixed(r#"{"path": "a.txt" later"#), r#"{"path": "a.txt" }"#);
        assert_eq!(fixed(r#"{"n": 5 more"#), r#"{"n": "5 more"}"#);
        // A word stuck to the quote (`"best`) is no junk after it: the text stays the value's.
        assert_eq!(
            fixed(r#"{"q": "say "hi" and"#),
            r#"{"q": "say \"hi\" and"}"#
        );
    }

    #[test]
    fn an_escaped_typographic_quote_is_the_quote() {
        let (json, kinds) = fix("{\"t\": \"a \\\u{201e}b\\\u{201c} c\", \"n\": 1}");
        assert_eq!(json, "{\"t\": \"a \u{201e}b\u{201c} c\", \"n\": 1}");
        assert_eq!(kinds, ["invalid_escape", "invalid_escape"]);
        // Other unknown escapes keep their backslash.
        assert_eq!(fixed(r#"["C:\Users"]"#), r#"["C:\\Users"]"#);
    }

    #[test]
    fn a_doubled_opening_quote_is_one() {
        let (json, kinds) = fix(r#"{"city": ""Paris", "n": 1}"#);
        assert_eq!(json, r#"{"city": "Paris", "n": 1}"#);
        assert_eq!(kinds, ["unexpected_character"]);
        assert_eq!(fixed(r#"{"" name":"Ann"}"#), r#"{" name":"Ann"}"#);
        // Every quote doubled, as CSV writes JSON, single quotes too.
        assert_eq!(
            fixed(r#"{""tags"":[''red'',""blue""]}"#),
            r#"{"tags":["red","blue"]}"#
        );
        // A quoted word opening the text is its own, not a doubled quote.
        assert_eq!(
            fixed(r#"{"title": ""Dune" by Herbert", "n": 1}"#),
            r#"{"title": "\"Dune\" by Herbert", "n": 1}"#
        );
        assert_eq!(fixed(r#"{"a": "", "b": 1}"#), r#"{"a": "", "b": 1}"#);
    }

    #[test]
    fn an_unquoted_value_keeps_the_commas_before_its_closing_quote() {
        assert_eq!(
            fixed(r#"{"who": Ann, Bob, Cy.", "n": 1}"#),
            r#"{"who": "Ann, Bob, Cy.", "n": 1}"#
        );
        // A key after the comma, quoted or missing its opening quote, ends the value there.
        assert_eq!(fixed(r#"{"a": x, "b": 1}"#), r#"{"a": "x", "b": 1}"#);
        assert_eq!(fixed(r#"{"a": x, b": 1}"#), r#"{"a": "x", "b": 1}"#);
        // A quote after a space opens a string: the commas are no value's.
        assert_eq!(fixed(r#"{"a": x, "y",}"#), r#"{"a": "x", "y":null}"#);
    }

    #[test]
    fn an_element_written_with_no_quotes_after_a_quote_is_its_own() {
        assert_eq!(
            fixed(r#"["step (1)", run step (2), "x"]"#),
            r#"["step (1)", "run step (2)", "x"]"#
        );
        // A pair of quotes left open in the text keeps the comma and the words in it.
        assert_eq!(
            fixed(r#"["He said "stop", then left]"#),
            r#"["He said \"stop\", then left"]"#
        );
    }

    #[test]
    fn brackets_a_bare_value_opens_are_its_text() {
        assert_eq!(
            fixed("{note: see{the list}, n: 1}"),
            r#"{"note": "see{the list}", "n": 1}"#
        );
        assert_eq!(fixed("{q: x[0]y}"), r#"{"q": "x[0]y"}"#);
        // A closer the word did not open still ends it.
        assert_eq!(fixed(r#"{"a": [b]}"#), r#"{"a": ["b"]}"#);
    }

    #[test]
    fn a_key_holds_quotes_up_to_the_one_its_colon_follows() {
        let (json, kinds) = fix(r#"{"user"s id": 7}"#);
        assert_eq!(json, r#"{"user\"s id": 7}"#);
        assert_eq!(kinds, ["unescaped_quotes"]);
        // A quote with a word and no colon after it still ends the key.
        assert!(fixed(r#"{"a" b, "c": 1}"#).contains(r#""c": 1"#));
    }
}
