//! The text formats models write tool calls in, one table entry each (markers and sources in
//! ../shared/research/wire_formats.md), the places where a call is only quoted, and the body
//! readers. Adding a format is one entry here, and at most one body reader below.

use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, MatchKind};
use serde_json::Value;

use super::lexer::find_outside;
use super::shape::{pythonic_calls, value_end, Context, JsonCalls};
use super::FoundCall;
use crate::error::{Error, ErrorKind};
use crate::limits::Limits;

/// How the text after a format's opening marker is read.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Body {
    /// JSON: a call object, a list of them, or several separated by `;` or newlines.
    Calls(Context),
    /// `NAME[ARGS]{...}` or `NAME{...}` (Mistral v11+).
    MistralNamed,
    /// `function<sep>NAME\n```json{...}```` (DeepSeek V3) or `NAME<sep>{...}` (V3.1).
    DeepSeek,
    /// `functions.NAME:IDX <|tool_call_argument_begin|>{...}` (Kimi K2).
    Kimi,
    /// `NAME <|constrain|>json<|message|>{...}` after `to=functions.` (gpt-oss harmony).
    Harmony,
    /// `NAME>{...}` or `NAME>` then `<parameter=K>V</parameter>`s (Functionary, Qwen3-Coder).
    FunctionTag,
    /// `[name(k=v, ...), ...]` (Llama 4, LFM2).
    Pythonic,
    /// `<invoke name="NAME"><parameter name="K">V</parameter></invoke>`s (MiniMax M2).
    Invoke,
    /// `call:NAME{k:v,...}` with strings between `quote`s (Gemma 4's `<|"|>`, FunctionGemma's
    /// `<escape>`), plain JSON values otherwise.
    Gemma { quote: &'static str },
    /// `NAME\n{...}` after `>>>` (Functionary v3.2); anything else after it is text.
    Arrow,
    /// A marker with no call of its own (section begin/end): removed from the text.
    Strip,
    /// Text that only quotes: reasoning (`think`), or a tool's result echoed back. Nothing
    /// inside it is a call. An echoed result is kept as text up to its closing marker;
    /// reasoning goes out as reasoning, never text, its markers dropped. Reasoning is not part
    /// of the answer, so it does not stop a fenced call from being the whole reply; an echoed
    /// result does.
    Quote { think: bool, why: &'static str },
    /// A reasoning block's closer met with no opener before it: the reply began inside the
    /// block (the chat template opened it in the prompt), so everything before it was
    /// reasoning. After an opener or a first closer, a closer is only dropped.
    ReasoningEnd,
}

pub(super) struct Format {
    pub name: &'static str,
    pub open: &'static str,
    /// The first of these after the body, outside strings, ends it (and is cut with it). With
    /// none found, the body ends after its JSON when prose follows, at the next marker of the
    /// same format, or at the end of the text: closing tags are often missing.
    pub close: &'static [&'static str],
    pub body: Body,
    /// How many bytes at the end of the marker belong to the body (`functools[` opens a list).
    pub keep: usize,
    /// A marker only at a line's start (after up to three spaces); elsewhere it is text.
    pub line_start: bool,
}

const fn format(
    name: &'static str,
    open: &'static str,
    close: &'static [&'static str],
    body: Body,
) -> Format {
    Format {
        name,
        open,
        close,
        body,
        keep: 0,
        line_start: false,
    }
}

const MARKED: Body = Body::Calls(Context::Marked);
use super::context::why;
const QUOTE: Body = Body::Quote {
    think: false,
    why: why::TOOL_RESULT,
};
const THINK: Body = Body::Quote {
    think: true,
    why: why::THINKING,
};
const MARKUP: Body = Body::Quote {
    think: false,
    why: why::MARKUP,
};
const DEEPSEEK_END: &[&str] = &["<｜tool▁call▁end｜>", "<|tool▁call▁end|>"];

/// The marker of a fence whose language says it holds a call, and of one that holds JSON.
/// Fences are found by their backticks (see `engine`), not by the marker automaton.
pub(super) const FENCED_TOOL_CALL: usize = 0;
pub(super) const FENCED_JSON: usize = 1;

pub(super) static FORMATS: &[Format] = &[
    format("fenced_tool_call", "```tool_call", &["```"], MARKED),
    format(
        "fenced_json",
        "```json",
        &["```"],
        Body::Calls(Context::Prose),
    ),
    format("hermes", "<tool_call>", &["</tool_call>"], MARKED),
    // A wrapper some templates put around `<tool_call>` blocks: no call of its own.
    format("hermes", "<tool_calls>", &[], Body::Strip),
    format("hermes", "</tool_calls>", &[], Body::Strip),
    format("granite", "<|tool_call|>", &[], MARKED),
    format(
        "granite_fc",
        "<function_call>",
        &["</function_call>"],
        MARKED,
    ),
    format("nemotron", "<TOOLCALL>", &["</TOOLCALL>"], MARKED),
    // Apertus: a list of objects, each named by its one key.
    format("apertus", "<|tools_prefix|>", &["<|tools_suffix|>"], MARKED),
    format(
        "mistral",
        "[TOOL_CALLS]",
        &["[/TOOL_CALLS]"],
        Body::MistralNamed,
    ),
    format(
        "llama3",
        "<|python_tag|>",
        &["<|eom_id|>", "<|eot_id|>"],
        MARKED,
    ),
    // The list bracket is part of the marker: the word alone is a Python module in prose.
    Format {
        keep: 1,
        ..format("phi4", "functools[", &[], MARKED)
    },
    format(
        "deepseek",
        "<｜tool▁call▁begin｜>",
        DEEPSEEK_END,
        Body::DeepSeek,
    ),
    format(
        "deepseek",
        "<|tool▁call▁begin|>",
        DEEPSEEK_END,
        Body::DeepSeek,
    ),
    format("deepseek", "<｜tool▁calls▁begin｜>", &[], Body::Strip),
    format("deepseek", "<｜tool▁calls▁end｜>", &[], Body::Strip),
    format("deepseek", "<|tool▁calls▁begin|>", &[], Body::Strip),
    format("deepseek", "<|tool▁calls▁end|>", &[], Body::Strip),
    format(
        "kimi_k2",
        "<|tool_call_begin|>",
        &["<|tool_call_end|>"],
        Body::Kimi,
    ),
    format("kimi_k2", "<|tool_calls_section_begin|>", &[], Body::Strip),
    format("kimi_k2", "<|tool_calls_section_end|>", &[], Body::Strip),
    format(
        "gpt_oss",
        "<|channel|>commentary to=functions.",
        &["<|call|>"],
        Body::Harmony,
    ),
    format(
        "functionary",
        "<function=",
        &["</function>"],
        Body::FunctionTag,
    ),
    format(
        "minimax",
        "<minimax:tool_call>",
        &["</minimax:tool_call>"],
        Body::Invoke,
    ),
    // Functionary v3.2: `>>>NAME\n{...}` per call, `>>>all\n` before plain text.
    format("functionary_v32", ">>>", &[], Body::Arrow),
    format("functionary_v32", ">>>all\n", &[], Body::Strip),
    format(
        "lfm2",
        "<|tool_call_start|>",
        &["<|tool_call_end|>"],
        Body::Pythonic,
    ),
    format(
        "llama4",
        "<|python_start|>",
        &["<|python_end|>"],
        Body::Pythonic,
    ),
    // Olmo 3: `name(k=v)` a line; Claude-style prompts put `<invoke>`s in the same tag.
    format(
        "olmo3",
        "<function_calls>",
        &["</function_calls>"],
        Body::Pythonic,
    ),
    format(
        "gemma4",
        "<|tool_call>",
        &["<tool_call|>"],
        Body::Gemma { quote: "<|\"|>" },
    ),
    format(
        "functiongemma",
        "<start_function_call>",
        &["<end_function_call>"],
        Body::Gemma { quote: "<escape>" },
    ),
    // Command R / R+ / A: a JSON list of `{"tool_name", "parameters"}` between action markers.
    format("command_r", "<|START_ACTION|>", &["<|END_ACTION|>"], MARKED),
    // Command R's older form: a fenced list after `Action:` at a line's start.
    Format {
        line_start: true,
        ..format("command_r", "Action: ```json", &["```"], MARKED)
    },
    format("command_r", "<|START_TEXT|>", &[], Body::Strip),
    format("command_r", "<|END_TEXT|>", &[], Body::Strip),
    format("command_r", "<|START_RESPONSE|>", &[], Body::Strip),
    format("command_r", "<|END_RESPONSE|>", &[], Body::Strip),
    // Reasoning blocks (research/reasoning_and_provider_quirks.md): DeepSeek-R1, Qwen3 and QwQ
    // `<think>`; Magistral `[THINK]`; Claude-style prompts `<thinking>`; Kimi `◁think▷`;
    // Seed-OSS `<seed:think>`; gpt-oss' analysis channel.
    format("think", "<think>", &["</think>"], THINK),
    format("think", "[THINK]", &["[/THINK]"], THINK),
    format("think", "<thinking>", &["</thinking>"], THINK),
    format("think", "◁think▷", &["◁/think▷"], THINK),
    format("think", "<seed:think>", &["</seed:think>"], THINK),
    // Command A's reasoning, and Gemma 4's thought channel.
    format("think", "<|START_THINKING|>", &["<|END_THINKING|>"], THINK),
    format("think", "<|channel>thought", &["<channel|>"], THINK),
    format(
        "think",
        "<|channel|>analysis<|message|>",
        &["<|end|>"],
        THINK,
    ),
    format("think", "</think>", &[], Body::ReasoningEnd),
    format("think", "[/THINK]", &[], Body::ReasoningEnd),
    format("think", "</thinking>", &[], Body::ReasoningEnd),
    format("think", "◁/think▷", &[], Body::ReasoningEnd),
    format("think", "</seed:think>", &[], Body::ReasoningEnd),
    format("think", "<|END_THINKING|>", &[], Body::ReasoningEnd),
    // gpt-oss' answer channel and message frame: markers around the answer, not text.
    format("gpt_oss", "<|channel|>final<|message|>", &[], Body::Strip),
    format("gpt_oss", "<|start|>assistant", &[], Body::Strip),
    format("gpt_oss", "<|return|>", &[], Body::Strip),
    // A tool's result as each format writes it back into the conversation: a model that
    // echoes one quotes the calls in it, it does not make them.
    format("hermes", "<tool_response>", &["</tool_response>"], QUOTE),
    format("tool_result", "<tool_result>", &["</tool_result>"], QUOTE),
    format("mistral", "[TOOL_RESULTS]", &["[/TOOL_RESULTS]"], QUOTE),
    format(
        "deepseek",
        "<｜tool▁outputs▁begin｜>",
        &["<｜tool▁outputs▁end｜>"],
        QUOTE,
    ),
    format(
        "deepseek",
        "<|tool▁outputs▁begin|>",
        &["<|tool▁outputs▁end|>"],
        QUOTE,
    ),
    format(
        "deepseek",
        "<｜tool▁output▁begin｜>",
        &["<｜tool▁output▁end｜>"],
        QUOTE,
    ),
    format(
        "deepseek",
        "<|tool▁output▁begin|>",
        &["<|tool▁output▁end|>"],
        QUOTE,
    ),
    format(
        "llama3",
        "<|start_header_id|>ipython<|end_header_id|>",
        &["<|eot_id|>"],
        QUOTE,
    ),
    format(
        "lfm2",
        "<|tool_response_start|>",
        &["<|tool_response_end|>"],
        QUOTE,
    ),
    format("gpt_oss", "<|start|>functions.", &["<|end|>"], QUOTE),
    format("gemma4", "<|tool_response>", &["<tool_response|>"], QUOTE),
    format(
        "functiongemma",
        "<start_function_response>",
        &["<end_function_response>"],
        QUOTE,
    ),
    format(
        "command_r",
        "<|START_TOOL_RESULT|>",
        &["<|END_TOOL_RESULT|>"],
        QUOTE,
    ),
    format(
        "tool_result",
        "<function_results>",
        &["</function_results>"],
        QUOTE,
    ),
    // Markup that shows text rather than says it: comments, code, preformatted text.
    format("markup", "<!--", &["-->"], MARKUP),
    format("markup", "<code>", &["</code>"], MARKUP),
    format("markup", "<pre>", &["</pre>"], MARKUP),
    // A ReAct observation echoes a tool's result, up to the agent's next step.
    Format {
        line_start: true,
        ..format(
            "react",
            "Observation:",
            &["\nThought:", "\nAction:", "\nFinal Answer:", "\n\n"],
            Body::Quote {
                think: false,
                why: why::OBSERVATION,
            },
        )
    },
    // A tilde fence is a sample, like a code fence amid prose.
    Format {
        line_start: true,
        ..format(
            "tilde_fence",
            "~~~",
            &["\n~~~"],
            Body::Quote {
                think: false,
                why: why::FENCE,
            },
        )
    },
];

/// The written forms outside any marker, named like formats: JSON call objects in prose (or
/// the whole reply) and bare pythonic lists.
pub const BARE_JSON: &str = "bare_json";
/// JSON call objects anywhere in prose, even amid other text with no registry to vouch for
/// the name (the most lenient preset).
pub const ANY_JSON: &str = "any_json";
pub const PYTHONIC: &str = "pythonic";

/// Which written formats a reading takes as calls: a set of names (see [`Formats::names`]).
/// A format not taken leaves its text as it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Formats {
    taken: u64,
}

impl Formats {
    /// Every name a set may hold: the call formats of the table, then the bare forms.
    pub fn names() -> &'static [&'static str] {
        static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
        NAMES.get_or_init(|| {
            let mut names: Vec<&'static str> = Vec::new();
            for f in FORMATS.iter().filter(|f| f.opens_a_call()) {
                if !names.contains(&f.name) {
                    names.push(f.name);
                }
            }
            names.extend([BARE_JSON, PYTHONIC, ANY_JSON]);
            assert!(names.len() <= 64, "a format set is a 64-bit mask");
            names
        })
    }

    fn bit(name: &str) -> Option<u64> {
        Self::names()
            .iter()
            .position(|n| *n == name)
            .map(|i| 1 << i)
    }

    /// No format: the content is all text.
    pub const NONE: Formats = Formats { taken: 0 };

    /// A preset: "strict" (a model's own call markers and ```` ```tool_call ```` fences only),
    /// "default" (also ```` ```json ```` fences, and calls in prose when they are the whole
    /// reply or a registry knows the name) or "lenient" (also any call-shaped JSON in prose).
    pub fn preset(name: &str) -> Option<Formats> {
        // Worked out once: every reading takes a preset (the default one by default).
        static PRESETS: OnceLock<[Formats; 3]> = OnceLock::new();
        let [strict, default, lenient] = *PRESETS.get_or_init(|| {
            let all = Self::names()
                .iter()
                .filter_map(|n| Self::bit(n))
                .fold(0, |a, b| a | b);
            let without = |names: &[&str]| Formats {
                taken: names
                    .iter()
                    .filter_map(|n| Self::bit(n))
                    .fold(all, |a, b| a & !b),
            };
            [
                without(&["fenced_json", BARE_JSON, PYTHONIC, ANY_JSON]),
                without(&[ANY_JSON]),
                Formats { taken: all },
            ]
        });
        match name {
            "strict" => Some(strict),
            "default" => Some(default),
            "lenient" => Some(lenient),
            _ => None,
        }
    }

    /// The set of these names; Err names the first that is no format.
    pub fn of<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<Formats, &'a str> {
        let mut taken = 0;
        for name in names {
            taken |= Self::bit(name).ok_or(name)?;
        }
        Ok(Formats { taken })
    }

    pub fn takes(&self, name: &str) -> bool {
        Self::bit(name).is_some_and(|b| self.taken & b != 0)
    }

    /// The names in the set, in the order of [`Formats::names`].
    pub fn taken(&self) -> impl Iterator<Item = &'static str> + '_ {
        Self::names().iter().copied().filter(move |n| self.takes(n))
    }
}

impl Default for Formats {
    fn default() -> Self {
        Formats::preset("default").expect("a preset")
    }
}

impl Format {
    /// Whether the marker promises a call: what follows it is reported even when unreadable.
    fn promises_a_call(&self) -> bool {
        !matches!(
            self.body,
            Body::Strip
                | Body::Quote { .. }
                | Body::ReasoningEnd
                | Body::Calls(Context::Prose)
                | Body::Arrow
        )
    }

    pub(super) fn opens_a_call(&self) -> bool {
        !matches!(
            self.body,
            Body::Strip | Body::Quote { .. } | Body::ReasoningEnd
        )
    }
}

/// What the scan needs to know about the table, derived from it once.
pub(super) struct Table {
    /// Every marker but the fences' (found by their backticks), leftmost-longest.
    pub markers: AhoCorasick,
    /// The format of each of `markers`' patterns.
    pub marker_format: Vec<usize>,
    /// The markers that open a call, fences included: counted where they are only quoted.
    pub calls: AhoCorasick,
    /// Per format: what ends its body (closers first, then its own openers).
    pub stops: Vec<Vec<(&'static [u8], bool)>>,
    first_marker_byte: [bool; 256],
    first_call_byte: [bool; 256],
    marker_patterns: Vec<&'static [u8]>,
    call_patterns: Vec<&'static [u8]>,
    pub longest_marker: usize,
}

pub(super) fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let automaton = |patterns: &[&str]| {
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(patterns)
                .expect("the marker table builds")
        };
        let marker_format: Vec<usize> = (0..FORMATS.len())
            .filter(|&i| !FORMATS[i].open.starts_with('`'))
            .collect();
        let markers: Vec<&str> = marker_format.iter().map(|&i| FORMATS[i].open).collect();
        let calls: Vec<&str> = FORMATS
            .iter()
            .filter(|f| {
                // `>>>` in quoted text is far more often a Python prompt than a call.
                f.opens_a_call() && !matches!(f.body, Body::Calls(Context::Prose) | Body::Arrow)
            })
            .map(|f| f.open)
            .collect();
        let stops = FORMATS
            .iter()
            .map(|f| {
                let same = FORMATS
                    .iter()
                    .filter(|g| g.name == f.name && g.opens_a_call() && !f.open.starts_with('`'))
                    .map(|g| (g.open.as_bytes(), false));
                f.close
                    .iter()
                    .map(|c| (c.as_bytes(), true))
                    .chain(same)
                    .collect()
            })
            .collect();
        let first = |patterns: &[&str]| {
            let mut first = [false; 256];
            for p in patterns {
                first[usize::from(p.as_bytes()[0])] = true;
            }
            first
        };
        Table {
            marker_patterns: markers.iter().map(|p| p.as_bytes()).collect(),
            call_patterns: calls.iter().map(|p| p.as_bytes()).collect(),
            first_marker_byte: first(&markers),
            first_call_byte: first(&calls),
            longest_marker: FORMATS.iter().map(|f| f.open.len()).max().unwrap_or(0),
            markers: automaton(&markers),
            calls: automaton(&calls),
            marker_format,
            stops,
        }
    })
}

/// Whether `b` (the byte before a `>`) ends a word or a tag (`</b>`, `<br/>`, `-->`,
/// `href="x">`): then a `>>>` there is no Functionary call marker, and a lone `>` is not held
/// back for one. None: the start of the text.
pub(super) fn ends_a_word_or_tag(b: Option<u8>) -> bool {
    b.is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'"' | b'\'' | b'/' | b'-' | b'_'))
}

/// `before`: the byte before `text`, where known.
fn prefix_of_any(
    text: &[u8],
    before: Option<u8>,
    first: &[bool; 256],
    patterns: &[&[u8]],
) -> usize {
    (1..table().longest_marker.min(text.len() + 1))
        .rev()
        .find(|&n| {
            let tail = &text[text.len() - n..];
            // A lone `>` after a word or a tag's end is not held for `>>>`, which cannot start
            // there (see `ends_a_word_or_tag`).
            let lone_tag_end = tail == b">"
                && ends_a_word_or_tag(if text.len() >= 2 {
                    Some(text[text.len() - 2])
                } else {
                    before
                });
            // Most ends start with no marker's first byte: one table lookup settles them.
            !lone_tag_end
                && first[usize::from(tail[0])]
                && patterns.iter().any(|p| p.len() > n && p.starts_with(tail))
        })
        .unwrap_or(0)
}

/// Whether `text` (from a marker's match to the end of what has arrived) is the start of a
/// longer marker that it does not yet hold whole.
pub(super) fn longer_marker_may_follow(text: &[u8]) -> bool {
    text.len() < table().longest_marker
        && table()
            .marker_patterns
            .iter()
            .any(|p| p.len() > text.len() && p.starts_with(text))
}

/// The longest end of `text` that may be the start of a marker.
pub(super) fn marker_prefix_len(text: &[u8], before: Option<u8>) -> usize {
    let t = table();
    prefix_of_any(text, before, &t.first_marker_byte, &t.marker_patterns)
}

/// The longest end of `text` that may be the start of a call's marker (fences included).
pub(super) fn call_prefix_len(text: &[u8]) -> usize {
    let t = table();
    prefix_of_any(text, None, &t.first_call_byte, &t.call_patterns)
}

/// Reads a call block: `text` runs from the marker to the block's end and starts at byte `at`
/// of the content; the body is `text[body_start..body_end]`. The calls come back with positions
/// in the content. None: the block holds no call and stays text (a fence of data). A marker
/// that promises a call and gives none is reported as a call that cannot be read.
/// `open_at_end`: the text ended inside the block, its closer never came, so a number that
/// ends the text may be the start of a longer one: a call mended there was cut off.
pub(super) fn read_block(
    fmt: usize,
    text: &str,
    at: usize,
    body_start: usize,
    body_end: usize,
    limits: &Limits,
    open_at_end: bool,
) -> Option<Vec<FoundCall>> {
    let format = &FORMATS[fmt];
    let mut calls = read_body(format, text, body_start, body_end, limits).unwrap_or_default();
    if open_at_end && !format.close.is_empty() && ends_in_number(&text[body_start..body_end]) {
        if let Some(last) = calls.last_mut() {
            last.cut |= last.error.is_none() && !last.repairs.is_empty();
        }
    }
    let calls = if calls.is_empty() && format.promises_a_call() {
        let body = &text[body_start..body_end];
        let lead = body.len() - body.trim_start().len();
        let found = text[body_start + lead..].chars().next();
        vec![FoundCall {
            name: None,
            arguments: (!body.trim().is_empty()).then(|| body.trim().to_string()),
            id: None,
            position: 0,
            format: format.name,
            repairs: Vec::new(),
            error: Some(Error {
                kind: ErrorKind::Unexpected {
                    expected: "a tool call after the call marker",
                    found,
                },
                position: body_start + lead,
            }),
            cut: false,
            untyped: Vec::new(),
            written: None,
        }]
    } else {
        calls
    };
    if calls.is_empty() {
        return None;
    }
    Some(
        calls
            .into_iter()
            .map(|mut c| {
                c.position = at;
                for r in &mut c.repairs {
                    r.position += at;
                }
                if let Some(e) = &mut c.error {
                    e.position += at;
                }
                c
            })
            .collect(),
    )
}

/// The length of a call format's tag closer (`</tool_call>`) at the start of `rest`; Err(true)
/// when `rest` is cut inside one.
pub(super) fn call_closer_at(rest: &[u8]) -> Result<usize, bool> {
    static CLOSERS: OnceLock<Vec<&'static [u8]>> = OnceLock::new();
    let closers = CLOSERS.get_or_init(|| {
        FORMATS
            .iter()
            .filter(|f| f.opens_a_call())
            .flat_map(|f| f.close.iter().map(|c| c.as_bytes()))
            .filter(|c| c.first() == Some(&b'<'))
            .collect()
    });
    if let Some(c) = closers.iter().find(|c| rest.starts_with(c)) {
        return Ok(c.len());
    }
    Err(closers
        .iter()
        .any(|c| rest.len() < c.len() && c.starts_with(rest)))
}

/// Where call markers stand in `body`, a block's body that read as no call: the block held
/// them as its data, so each is a call seen only quoted.
pub(super) fn markers_in(body: &str) -> impl Iterator<Item = usize> + '_ {
    table().calls.find_iter(body.as_bytes()).map(|m| m.start())
}

/// Whether `body` ends in a number right after a `:`, `,` or `[` (a value the text may have cut).
fn ends_in_number(body: &str) -> bool {
    let body = body.trim_end();
    let digits = body
        .trim_end_matches(|c: char| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E'));
    let tail = &body[digits.len()..];
    tail.bytes().any(|b| b.is_ascii_digit())
        && matches!(digits.trim_end().chars().last(), Some(':' | ',' | '['))
}

/// The calls in one format's body; None when the body holds no call and stays text.
fn read_body(
    fmt: &Format,
    content: &str,
    start: usize,
    end: usize,
    limits: &Limits,
) -> Option<Vec<FoundCall>> {
    read_body_at(fmt, content, start, end, limits, true)
}

/// `read_body`; `nest`: whether blocks inside this one are looked for (one level only, so
/// markers of two formats alternating cannot recurse without end).
fn read_body_at(
    fmt: &Format,
    content: &str,
    start: usize,
    end: usize,
    limits: &Limits,
    nest: bool,
) -> Option<Vec<FoundCall>> {
    let body = &content[start..end];
    let named = |name: &str, args_from: usize, args_to: usize| {
        let name = name.trim();
        let args = content[args_from..args_to].trim();
        let args = strip_fence(args);
        FoundCall {
            name: (!name.is_empty()).then(|| name.to_string()),
            arguments: (!args.is_empty()).then(|| args.to_string()),
            id: None,
            position: start,
            format: fmt.name,
            repairs: Vec::new(),
            error: None,
            cut: false,
            untyped: Vec::new(),
            written: None,
        }
    };
    if nest && fmt.opens_a_call() {
        if let Some(calls) = nested_blocks(fmt, content, start, end, limits) {
            return Some(calls);
        }
    }
    let calls = match fmt.body {
        Body::Strip | Body::Quote { .. } | Body::ReasoningEnd => return None, // read by the scan
        Body::Calls(context) => {
            let lead = body.trim_start();
            if lead.starts_with("<function=") {
                let inner = start + body.find("<function=").unwrap_or(0) + "<function=".len();
                return read_body(&FORMATS[function_tag_index()], content, inner, end, limits);
            }
            if let Some(calls) = builtin_call(lead, start + body.len() - lead.len(), content, fmt) {
                return Some(calls);
            }
            if let Some(call) = arg_key_call(body, start, fmt.name) {
                return Some(vec![call]);
            }
            if let Some(call) = name_line_call(body, fmt.name) {
                return Some(vec![call]);
            }
            JsonCalls {
                content,
                context,
                format: fmt.name,
                limits,
                is_tool: None,
            }
            .in_span(start, end)
        }
        Body::MistralNamed => {
            let trimmed = body.trim_start();
            let json_at = if trimmed.starts_with('[') || trimmed.starts_with('{') {
                Some(start)
            } else {
                mistral_list_after_junk(body).map(|at| start + at)
            };
            if let Some(json_at) = json_at {
                JsonCalls {
                    content,
                    context: Context::Marked,
                    format: fmt.name,
                    limits,
                    is_tool: None,
                }
                .in_span(json_at, end)
            } else {
                let args_at = body.find('{').map_or(end, |i| start + i);
                let name_end = body.find("[ARGS]").map_or(args_at, |i| start + i);
                let args_end = if args_at < end {
                    let first_end = value_end(&content.as_bytes()[..end], args_at);
                    // Another value after the first (`f[ARGS]{...}{...}`, glued or spaced)
                    // belongs to the arguments, which the pipeline then refuses as several
                    // objects: one call's arguments are never two, and neither is dropped.
                    let rest = &content[first_end..end];
                    if rest.contains(['{', '[']) {
                        first_end + rest.trim_end().len()
                    } else {
                        first_end
                    }
                } else {
                    end
                };
                vec![named(
                    &content[start..name_end.min(args_at)],
                    args_at,
                    args_end,
                )]
            }
        }
        Body::DeepSeek => {
            let (sep_at, sep_len) = ["<｜tool▁sep｜>", "<|tool▁sep|>"]
                .iter()
                .find_map(|s| body.find(s).map(|i| (i, s.len())))?;
            let (left, right) = (&body[..sep_at], start + sep_at + sep_len);
            if left.trim() == "function" || left.trim().is_empty() {
                // V3: the name is the rest of the sep's line, the arguments follow (often fenced).
                let line_end = content[right..end].find('\n').map_or(end, |i| right + i);
                vec![named(&content[right..line_end], line_end, end)]
            } else {
                vec![named(left, right, end)]
            }
        }
        Body::Kimi => {
            let marker = "<|tool_call_argument_begin|>";
            let at = body.find(marker)?;
            let id = body[..at].trim();
            let name = id.strip_prefix("functions.").unwrap_or(id);
            let name = name.rsplit_once(':').map_or(name, |(n, _)| n);
            let mut call = named(name, start + at + marker.len(), end);
            call.id = Some(id.to_string());
            vec![call]
        }
        Body::Harmony => {
            let name_len = body
                .find(|c: char| c.is_whitespace() || c == '<')
                .unwrap_or(body.len());
            let args_from = body
                .find("<|message|>")
                .map_or(start + name_len, |i| start + i + "<|message|>".len());
            vec![named(&body[..name_len], args_from, end)]
        }
        Body::FunctionTag => {
            // Its own closer ends it only outside strings and parameter values.
            let end = find_outside(content, start, end, b"</function>").unwrap_or(end);
            let body = &content[start..end];
            let gt = body.find('>')?;
            let name = body[..gt].trim().trim_matches(|c| c == '"' || c == '\'');
            let rest = body[gt + 1..].trim_start();
            if rest.starts_with("<parameter=") {
                let mut call = named(name, end, end);
                let rest_at = end - rest.len();
                call.arguments = Some(rest.to_string());
                tags_to_call(&mut call, parameter_tags(rest), rest_at);
                vec![call]
            } else {
                vec![named(name, start + gt + 1, end)]
            }
        }
        Body::Pythonic if body.trim_start().starts_with("<invoke") => {
            let invoke = Format {
                body: Body::Invoke,
                ..format(fmt.name, fmt.open, fmt.close, Body::Invoke)
            };
            return read_body(&invoke, content, start, end, limits);
        }
        Body::Pythonic => pythonic_calls(content, start, end, fmt.name),
        Body::Gemma { quote } => gemma_calls(body, quote)
            .into_iter()
            .map(|(name, args)| {
                let mut call = named(name, end, end);
                call.arguments = Some(args);
                call
            })
            .collect(),
        Body::Invoke => match invoke_calls(body) {
            Ok(calls) => calls
                .into_iter()
                .map(|(name, tags_at, tags)| {
                    let mut call = named(name, end, end);
                    call.arguments = Some(body[tags_at..].to_string());
                    tags_to_call(&mut call, tags, start + tags_at);
                    call
                })
                .collect(),
            Err(i) => {
                // The first invoke's name, for the error to say which tool it was.
                let name = body
                    .find("<invoke")
                    .and_then(|at| {
                        let rest = &body[at + "<invoke".len()..];
                        rest.find('>').map(|gt| &rest[..gt])
                    })
                    .map_or("", |n| {
                        let n = n.trim_start();
                        let n = n.strip_prefix("name").map_or(n, str::trim_start);
                        let n = n.strip_prefix('=').unwrap_or(n);
                        n.trim().trim_matches(|c| c == '"' || c == '\'')
                    });
                let mut call = named(name, start, end);
                tags_to_call(&mut call, Err(i), start);
                vec![call]
            }
        },
        Body::Arrow => {
            let (name, rest) = body.split_once('\n')?;
            let name = name.trim();
            let is_name = !name.is_empty()
                && name != "all"
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
            let args = rest.trim_start();
            if !is_name || !args.starts_with('{') {
                return None;
            }
            let args_at = start + body.len() - args.len();
            let args_end = value_end(&content.as_bytes()[..end], args_at);
            vec![named(name, args_at, args_end)]
        }
    };
    if calls.is_empty() {
        None
    } else {
        Some(calls)
    }
}

fn function_tag_index() -> usize {
    FORMATS
        .iter()
        .position(|f| matches!(f.body, Body::FunctionTag))
        .expect("a <function= format")
}

/// The text inside a ```json fence, or the text itself.
fn strip_fence(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let rest = rest.find('\n').map_or(rest, |i| &rest[i + 1..]);
    rest.trim_end().strip_suffix("```").unwrap_or(rest).trim()
}

/// Where the list of calls starts after junk between `[TOOL_CALLS]` and it (a stray token,
/// `json`, a fence): a `[` that is not `[ARGS]`, within a short run that holds no call of the
/// named form (`NAME[ARGS]{...}`, `NAME{...}`). None when the body is not such a list.
fn mistral_list_after_junk(body: &str) -> Option<usize> {
    let at = body.find('[')?;
    let junk = &body[..at];
    let named = junk.contains('{') || body[at..].starts_with("[ARGS]");
    (!named && junk.len() <= 32 && body[at + 1..].trim_start().starts_with('{')).then_some(at)
}

/// Where a tag format's arguments cannot be told apart from markup written in a value: the
/// byte (in the text read) of a parameter given twice, or of a closer that closes no value.
/// Either means a value held the format's own tags (or a tag is missing): reading on would
/// let the value's text choose the arguments, so the call is refused (TLP-004).
type Ambiguous = usize;

/// One `<parameter ...>V</parameter>` tag: its key and where its value stands in the text.
struct Tag<'a> {
    key: &'a str,
    value: std::ops::Range<usize>,
}

/// The `<parameter=K>V</parameter>` (Qwen3-Coder) or `<parameter name="K">V</parameter>`
/// (MiniMax) tags of `text`, in one pass each over opens and closes. A value ends at its
/// `</parameter>` (the last one's may be missing at the end); a value that holds other
/// formats' markup (`<tool_call>`, `<invoke`) is read whole. A key given twice, a
/// `</parameter>` that closes no value, or a parameter opened before the one before it closed,
/// is `Err` (see `Ambiguous`).
fn parameter_spans(text: &str, only_tags: bool) -> Result<Vec<Tag<'_>>, Ambiguous> {
    let bytes = text.as_bytes();
    // With `only_tags`, nothing but space stands between a closer and the next tag: text there
    // is what a value's markup left after a closer it held.
    let mut last_end: Option<usize> = None;
    let between = |from: Option<usize>, to: usize| match from {
        Some(e) if only_tags && !text[e..to].trim().is_empty() => Err(e),
        _ => Ok(()),
    };
    let opens: Vec<usize> = memchr::memmem::find_iter(bytes, "<parameter")
        .filter(|&at| matches!(bytes.get(at + 10), Some(b'=' | b' ' | b'\t')))
        .collect();
    let mut closes = memchr::memmem::find_iter(bytes, "</parameter>").peekable();
    let mut tags: Vec<Tag<'_>> = Vec::new();
    let mut keys = std::collections::HashSet::new();
    // The close that ended the last value: any other close before the next value is stray.
    let mut used: Option<usize> = None;
    for (n, &at) in opens.iter().enumerate() {
        if let Some(&c) = closes.peek() {
            if c < at && Some(c) != used {
                return Err(c);
            }
        }
        between(last_end, at)?;
        let after = &text[at + "<parameter".len()..];
        let Some(gt) = after.find('>') else { break };
        let key = after[..gt].trim_start();
        let key = key.strip_prefix("name").map_or(key, str::trim_start);
        let key = key.strip_prefix('=').unwrap_or(key);
        let key = key.trim().trim_matches(|c| c == '"' || c == '\'');
        if !keys.insert(key) {
            return Err(at);
        }
        let value_from = at + "<parameter".len() + gt + 1;
        while let Some(c) = closes.next_if(|&c| c < value_from) {
            if Some(c) != used {
                return Err(c);
            }
        }
        let next_open = opens.get(n + 1).copied().unwrap_or(text.len());
        let close = closes.peek().copied().filter(|&c| c < next_open);
        if close.is_none() && next_open < text.len() {
            // Another parameter opens before this one closed: a closer forgotten, or a value
            // holding a parameter tag. Nothing tells them apart, and guessing would let the
            // value's text choose the arguments.
            return Err(next_open);
        }
        used = close;
        if let Some(c) = close {
            closes.next();
            last_end = Some(c + "</parameter>".len());
        }
        let value_end = close.unwrap_or(next_open.min(text.len()));
        tags.push(Tag {
            key,
            value: value_from..value_end.max(value_from),
        });
    }
    match closes.next() {
        Some(c) => Err(c),
        None => between(last_end, text.len()).map(|()| tags),
    }
}

/// Tag pairs as a JSON object: a value that is itself JSON (a number, true, a list) is kept as
/// JSON, anything else becomes a string. Also the values read as JSON, by key, as written
/// (see `FoundCall::untyped`).
fn tags_as_json(pairs: Vec<(&str, &str)>) -> (String, Vec<(String, String)>) {
    let mut object = serde_json::Map::new();
    let mut untyped = Vec::new();
    for (key, raw) in pairs {
        let raw = raw.trim_matches('\n');
        let value = match serde_json::from_str::<Value>(raw.trim()) {
            Ok(v) if !v.is_string() => {
                untyped.push((key.to_string(), raw.to_string()));
                v
            }
            _ => Value::String(raw.to_string()),
        };
        object.insert(key.to_string(), value);
    }
    (Value::Object(object).to_string(), untyped)
}

/// The arguments of a tag format's call, as JSON (see `tags_as_json`), or the error that
/// refuses them: `text` starts at byte `at` of the content.
fn tags_to_call(call: &mut FoundCall, tags: Result<Vec<(&str, &str)>, Ambiguous>, at: usize) {
    match tags {
        Ok(pairs) => {
            let (arguments, untyped) = tags_as_json(pairs);
            call.arguments = Some(arguments);
            call.untyped = untyped;
        }
        Err(i) => {
            call.error = Some(crate::Error::unexpected(
                at + i,
                "each parameter once and a closer only after its value (a value holding the \
                 call's own parameter tags cannot be told from them)",
                Some('<'),
            ));
        }
    }
}

/// `<parameter=path>\na.txt\n</parameter>` pairs (see `parameter_spans`).
fn parameter_tags(text: &str) -> Result<Vec<(&str, &str)>, Ambiguous> {
    Ok(parameter_spans(text, true)?
        .into_iter()
        .map(|t| (t.key, &text[t.value]))
        .collect())
}

/// MiniMax's `<invoke name="NAME">` blocks: each name, where its tags start in `body`, and its
/// parameter tags. A block ends at its `</invoke>` or at the next `<invoke`; both count only
/// outside parameter values, so a value that holds an `<invoke` is read whole.
#[allow(clippy::type_complexity)]
fn invoke_calls(
    body: &str,
) -> Result<Vec<(&str, usize, Result<Vec<(&str, &str)>, Ambiguous>)>, Ambiguous> {
    let values: Vec<std::ops::Range<usize>> = parameter_spans(body, false)?
        .into_iter()
        .map(|t| t.value)
        .collect();
    let outside = |at: &usize| {
        let i = values.partition_point(|v| v.end <= *at);
        values.get(i).is_none_or(|v| *at < v.start)
    };
    let opens: Vec<usize> = memchr::memmem::find_iter(body.as_bytes(), "<invoke")
        .filter(outside)
        .collect();
    let ends: Vec<usize> = memchr::memmem::find_iter(body.as_bytes(), "</invoke>")
        .filter(outside)
        .collect();
    let mut calls = Vec::new();
    for (n, &at) in opens.iter().enumerate() {
        let next = opens.get(n + 1).copied().unwrap_or(body.len());
        let stop = ends
            .get(ends.partition_point(|&e| e < at))
            .copied()
            .filter(|&e| e < next)
            .unwrap_or(next);
        let from = at + "<invoke".len();
        let block = &body[from..stop];
        let Some(gt) = block.find('>') else { continue };
        let name = block[..gt].trim_start();
        let name = name.strip_prefix("name").map_or(name, str::trim_start);
        let name = name.strip_prefix('=').unwrap_or(name);
        let name = name.trim().trim_matches(|c| c == '"' || c == '\'');
        let tags_at = from + gt + 1;
        // Between one invoke's closer and the next invoke, only space: text there is what a
        // value's markup left after an `</invoke>` it held.
        if stop < next {
            let after = stop + "</invoke>".len();
            if !body[after.min(next)..next].trim().is_empty() {
                return Err(after);
            }
        }
        calls.push((name, tags_at, parameter_tags(&body[tags_at..stop])));
    }
    Ok(calls)
}

/// GLM 4.5+: `NAME<arg_key>K</arg_key><arg_value>V</arg_value>...` inside `<tool_call>`. None
/// when the body holds no `<arg_key>` before any JSON. A value ends at its `</arg_value>` (the
/// last one's may be missing at the end); a key given twice, a key before a value closed, or
/// text between a closer and the next key is refused (see `Ambiguous`).
fn arg_key_call(body: &str, at: usize, format: &'static str) -> Option<FoundCall> {
    let first = body.find("<arg_key>")?;
    let name = body[..first].trim();
    if name.is_empty() || name.contains(['{', '[', '<', '"']) {
        return None;
    }
    let mut pairs = Vec::new();
    let mut keys = std::collections::HashSet::new();
    let mut ambiguous = None;
    let mut from = first;
    while let Some(k) = body[from..].find("<arg_key>").map(|k| from + k) {
        if from > first && !body[from..k].trim().is_empty() {
            // Text between a value's closer and the next key: a closer the value held.
            ambiguous = Some(from);
            break;
        }
        let key_from = k + "<arg_key>".len();
        let Some(k_end) = body[key_from..].find("</arg_key>").map(|e| key_from + e) else {
            break;
        };
        let key = body[key_from..k_end].trim();
        if !keys.insert(key) {
            ambiguous = Some(k);
            break;
        }
        let after = k_end + "</arg_key>".len();
        let Some(v) = body[after..].find("<arg_value>").map(|v| after + v) else {
            break;
        };
        let value_from = v + "<arg_value>".len();
        let rest = &body[value_from..];
        let (v_len, closed) = match (rest.find("</arg_value>"), rest.find("<arg_key>")) {
            // A key before this value closed: a closer forgotten, or a value holding a key.
            (Some(c), Some(o)) if o < c => {
                ambiguous = Some(value_from + o);
                break;
            }
            (None, Some(o)) => {
                ambiguous = Some(value_from + o);
                break;
            }
            (Some(c), _) => (c, true),
            (None, None) => (rest.len(), false),
        };
        pairs.push((key, &rest[..v_len]));
        from = value_from + v_len + if closed { "</arg_value>".len() } else { 0 };
    }
    if ambiguous.is_none() && !body[from..].trim().is_empty() {
        ambiguous = Some(from);
    }
    let mut call = FoundCall {
        name: Some(name.to_string()),
        arguments: None,
        id: None,
        position: 0,
        format,
        repairs: Vec::new(),
        error: None,
        cut: false,
        untyped: Vec::new(),
        written: None,
    };
    tags_to_call(&mut call, ambiguous.map_or(Ok(pairs), Err), at);
    if call.error.is_some() {
        call.arguments = Some(body[first..].to_string());
    }
    Some(call)
}

/// Llama 3.1's built-in tools after `<|python_tag|>`: `brave_search.call(query="x")` is the
/// call `brave_search` (also `wolfram_alpha`, `code_interpreter`). None for anything else.
fn builtin_call(lead: &str, at: usize, content: &str, fmt: &Format) -> Option<Vec<FoundCall>> {
    if fmt.name != "llama3" {
        return None;
    }
    let ident = lead
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    if ident == 0 || !lead[ident..].starts_with(".call(") {
        return None;
    }
    let close = lead.rfind(')')?;
    let mut calls = pythonic_calls(content, at, at + close + 1, fmt.name);
    for call in &mut calls {
        if let Some(name) = &mut call.name {
            if let Some(base) = name.strip_suffix(".call") {
                *name = base.to_string();
            }
        }
    }
    Some(calls).filter(|c| !c.is_empty())
}

/// Gemma's calls in a block's body: `call:NAME{k:v,...}`, one or more, each with its arguments
/// written out as JSON text for the pipeline to parse: bare keys quoted, strings between the quote
/// tokens taken as written. A call cut off keeps its JSON cut (an open string, no closing brace),
/// so it is reported as cut like any other.
fn gemma_calls<'a>(body: &'a str, quote: &str) -> Vec<(&'a str, String)> {
    let mut calls = Vec::new();
    let mut rest = body.trim_start();
    while let Some(after) = rest.strip_prefix("call:") {
        let Some(open) = after.find('{') else {
            break;
        };
        let name = after[..open].trim();
        if name.is_empty() || name.contains(char::is_whitespace) {
            break;
        }
        let (json, used) = gemma_to_json(&after[open..], quote);
        calls.push((name, json));
        rest = after[open + used..].trim_start();
    }
    calls
}

/// Gemma's value syntax as JSON text, and how many bytes of `text` it took (up to the brace that
/// closes the first value, or all of it when none does).
fn gemma_to_json(text: &str, quote: &str) -> (String, usize) {
    let mut out = String::with_capacity(text.len() + 16);
    // Per open container: true for an object (a key comes next after `{` or `,`).
    let mut stack: Vec<bool> = Vec::new();
    let mut key_next = false;
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        let c = rest.chars().next().unwrap_or(' ');
        if c.is_whitespace() {
            out.push(c);
            i += c.len_utf8();
            continue;
        }
        if let Some(s) = rest.strip_prefix(quote) {
            key_next = false;
            match s.find(quote) {
                Some(end) => {
                    out.push_str(&Value::String(s[..end].to_string()).to_string());
                    i += quote.len() * 2 + end;
                }
                None => {
                    // Cut inside a string: the JSON string stays open.
                    let whole = Value::String(s.to_string()).to_string();
                    out.push_str(&whole[..whole.len() - 1]);
                    return (out, text.len());
                }
            }
            continue;
        }
        match c {
            '{' | '[' => {
                stack.push(c == '{');
                key_next = c == '{';
                out.push(c);
                i += 1;
            }
            '}' | ']' => {
                stack.pop();
                key_next = false;
                out.push(c);
                i += 1;
                if stack.is_empty() {
                    return (out, i);
                }
            }
            ',' => {
                key_next = stack.last() == Some(&true);
                out.push(c);
                i += 1;
            }
            ':' => {
                out.push(c);
                i += 1;
            }
            '"' => {
                // A JSON string as it stands, escapes and all.
                let j = (crate::scan::quoted_end(rest.as_bytes(), 1, b'"') + 1).min(rest.len());
                out.push_str(&rest[..j]);
                i += j;
                key_next = false;
            }
            _ => {
                // A bare word: a key before its `:`, else a scalar up to the next separator.
                let stop: &[char] = if key_next {
                    &[':', ',', '}', ']']
                } else {
                    &[',', '}', ']']
                };
                let len = rest.find(stop).unwrap_or(rest.len());
                let len = rest[..len].find(quote).unwrap_or(len).max(c.len_utf8());
                let word = rest[..len].trim_end();
                if key_next || serde_json::from_str::<Value>(word).is_err() {
                    out.push_str(&Value::String(word.to_string()).to_string());
                } else {
                    out.push_str(word);
                }
                key_next = false;
                i += len;
            }
        }
    }
    (out, text.len())
}

/// Calls whose own blocks stand inside another format's block (`<tool_calls><tool_call>{...}
/// </tool_call>`, `<TOOLCALL><tool_call>...`): each inner block is read as its own format, up to
/// its own closer, so the outer closer may be missing. None unless the body is only such blocks.
fn nested_blocks(
    fmt: &Format,
    content: &str,
    start: usize,
    end: usize,
    limits: &Limits,
) -> Option<Vec<FoundCall>> {
    let mut calls = Vec::new();
    let mut i = start;
    loop {
        let rest = &content[i..end];
        i += rest.len() - rest.trim_start().len();
        if i >= end {
            break;
        }
        let rest = &content[i..end];
        let inner = FORMATS
            .iter()
            .filter(|f| {
                f.open != fmt.open
                    && !f.open.starts_with('`')
                    && (f.opens_a_call() || matches!(f.body, Body::Strip))
                    && !matches!(f.body, Body::Calls(Context::Prose))
                    && rest.starts_with(f.open)
            })
            .max_by_key(|f| f.open.len())?;
        let from = i + inner.open.len() - inner.keep;
        if matches!(inner.body, Body::Strip) {
            i = from;
            continue;
        }
        let (to, after) = inner
            .close
            .iter()
            .filter_map(|c| {
                find_outside(content, from, end, c.as_bytes()).map(|at| (at, at + c.len()))
            })
            .min()
            .unwrap_or((end, end));
        calls.extend(read_body_at(inner, content, from, to, limits, false)?);
        i = after;
    }
    (!calls.is_empty()).then_some(calls)
}

/// `NAME\n{...}`: a name on its own line and its arguments after it (GLM and Laguna write this
/// inside `<tool_call>`). None unless the body is just that.
fn name_line_call(body: &str, format: &'static str) -> Option<FoundCall> {
    let lead = body.trim_start();
    let name_len = lead
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
        .count();
    let (name, rest) = lead.split_at(name_len);
    let args = rest.trim_start();
    if name_len == 0 || !rest.starts_with(['\n', '\r']) || !args.starts_with('{') {
        return None;
    }
    let args_end = value_end(args.as_bytes(), 0);
    if !args[args_end..].trim().is_empty() {
        return None;
    }
    Some(FoundCall {
        name: Some(name.to_string()),
        arguments: Some(args.to_string()),
        id: None,
        position: 0,
        format,
        repairs: Vec::new(),
        error: None,
        cut: false,
        untyped: Vec::new(),
        written: None,
    })
}
