//! Reading calls in text costs time linear in the text, for every family of hostile input,
//! whole and token by token. A binary of its own: timing checks must not share the machine
//! with the unit tests (some of which have tight deadlines).

use std::time::Instant;

use toolmend_core::extract::{markers, text_calls, TextCallParser};
use toolmend_core::Limits;

const UNTIMED: Limits = Limits {
    max_size: 1 << 20,
    max_depth: 64,
    timeout_ms: 0,
};

fn batch(text: &str) {
    text_calls(text, &UNTIMED, None);
}

/// Feeds `text` in pieces of `step` bytes (moved to char boundaries), then flushes.
fn streamed(text: &str, step: usize) {
    let mut parser = TextCallParser::new(UNTIMED, 1 << 30);
    let mut from = 0;
    while from < text.len() {
        let mut to = (from + step).min(text.len());
        while !text.is_char_boundary(to) {
            to += 1;
        }
        parser.feed(&text[from..to]);
        from = to;
    }
    parser.flush();
}

/// One run of `run` on the text `make(n)` gives, in seconds.
fn time_of(make: &dyn Fn(usize) -> String, n: usize, run: &dyn Fn(&str)) -> f64 {
    let text = make(n);
    let start = Instant::now();
    run(&text);
    start.elapsed().as_secs_f64()
}

/// Text four times longer must cost about four times as much: a scan that repeats a failed
/// look-ahead from each later start costs sixteen times as much. The bound is loose (10x, plus
/// a floor for timer noise on small figures). A pair over it is measured again four times
/// larger, where a small text's advantage of fitting in the cache is gone: a quadratic scan
/// fails every time, a busy machine or a cache once in a while.
fn assert_linear(family: &str, make: &dyn Fn(usize) -> String, n: usize, run: &dyn Fn(&str)) {
    let mut figures = (0, 0.0, 0.0);
    for size in [n, 4 * n, 4 * n] {
        figures = (size, time_of(make, size, run), time_of(make, 4 * size, run));
        if figures.2 < 10.0 * figures.1 + 0.03 {
            return;
        }
    }
    panic!(
        "{family}: {} units took {:.4}s, {} took {:.4}s",
        figures.0,
        figures.1,
        4 * figures.0,
        figures.2
    );
}

/// A family of texts: its name, and the text of `n` units.
type Family = (String, Box<dyn Fn(usize) -> String>);

/// Every format's opening marker repeated, and followed by unclosed brackets, quotes and raw
/// parameter values; pythonic lists, bare braces, backticks and blockquote marks.
fn hostile_families() -> Vec<Family> {
    let mut families: Vec<Family> = Vec::new();
    let mut openers: Vec<&'static str> = markers().collect();
    openers.extend(["```\n", "```python\n"]);
    for open in openers {
        families.push((
            format!("{open:?} repeated"),
            Box::new(move |n| open.repeat(n)),
        ));
        for tail in ["[w(", "{\"a\": \"", "<parameter=a>"] {
            families.push((
                format!("{open:?} then {tail:?}, repeated"),
                Box::new(move |n| format!("{open}{tail}").repeat(n)),
            ));
        }
        for tail in ["[w(", "\"", "'"] {
            families.push((
                format!("{open:?} then {tail:?} repeated"),
                Box::new(move |n| format!("{open}{}", tail.repeat(n))),
            ));
        }
    }
    for unit in [
        "[w(",
        "[w(p='x'), ",
        "{",
        "[",
        "[{",
        "{\"name\": ",
        "{\"name\": \"f\", \"arguments\": {",
        "\"",
        "`",
        "` ",
        "``",
        "`a\n",
        "```",
        "``` x\n",
        "`\n ",
        "\n> ",
        "> [w(",
        "</tool_call>",
        "<parameter=a>",
    ] {
        families.push((
            format!("{unit:?} repeated"),
            Box::new(move |n| unit.repeat(n)),
        ));
    }
    families
}

// Units are a few bytes: 1,500 of them make 5-60 KiB, where a quadratic scan takes seconds.
const UNITS: usize = 1500;

#[test]
fn every_scan_grows_linearly() {
    // One test, the readers one after another: timings taken side by side would disturb
    // each other.
    type Reader<'a> = (&'a str, &'a dyn Fn(&str));
    let readers: [Reader; 3] = [
        ("batch", &batch),
        ("one token", &|text| streamed(text, usize::MAX)),
        ("7-byte tokens", &|text| streamed(text, 7)),
    ];
    for (family, make) in hostile_families() {
        for (reader, run) in readers {
            assert_linear(&format!("{reader}, {family}"), &*make, UNITS, run);
        }
    }
}
