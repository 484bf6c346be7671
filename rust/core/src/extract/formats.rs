//! The text formats models write tool calls in, one table entry each (markers and sources in
//! ../shared/research/wire_formats.md). Adding a format is one entry here, and at most one body
//! reader below.

use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, MatchKind};
use serde_json::Value;

use super::shape::{looks_pythonic, names_a_tool, pythonic_calls, value_end, Context, JsonCalls};
use super::{FoundCall, TextCalls};
use crate::limits::Limits;

/// How the text after a format's opening marker is read.
#[derive(Clone, Copy)]
enum Body {
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
    /// A marker with no call of its own (section begin/end): removed from the text.
    Strip,
    /// `<think>...</think>`: kept as text, and nothing inside it is a call.
    Think,
}

struct Format {
    name: &'static str,
    open: &'static str,
    /// The first of these after the body ends it (and is cut with it). With none found, the body
    /// runs to the next marker or the end of the text: closing tags are often missing.
    close: &'static [&'static str],
    body: Body,
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
    }
}

const MARKED: Body = Body::Calls(Context::Marked);
const DEEPSEEK_END: &[&str] = &["<｜tool▁call▁end｜>", "<|tool▁call▁end|>"];

static FORMATS: &[Format] = &[
    format("hermes", "<tool_call>", &["</tool_call>"], MARKED),
    format("granite", "<|tool_call|>", &[], MARKED),
    format(
        "granite_fc",
        "<function_call>",
        &["</function_call>"],
        MARKED,
    ),
    format("nemotron", "<TOOLCALL>", &["</TOOLCALL>"], MARKED),
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
    format("phi4", "functools", &[], MARKED),
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
    format("fenced_tool_call", "```tool_call", &["```"], MARKED),
    format(
        "fenced_json",
        "```json",
        &["```"],
        Body::Calls(Context::Prose),
    ),
    format("think", "<think>", &["</think>"], Body::Think),
];

/// A format's opening marker as the streaming text reader needs it: where the marker ends, the
/// closing markers, and whether it opens no call (thinking).
pub(super) struct Opening {
    pub start: usize,
    pub end: usize,
    pub close: &'static [&'static str],
    pub is_think: bool,
    /// A section marker with no call of its own: dropped from the text.
    pub is_strip: bool,
}

/// The first opening marker in `text`.
pub(super) fn first_opening(text: &str) -> Option<Opening> {
    markers().find(text).map(|m| {
        let fmt = &FORMATS[m.pattern().as_usize()];
        Opening {
            start: m.start(),
            end: m.end(),
            close: fmt.close,
            is_think: matches!(fmt.body, Body::Think),
            is_strip: matches!(fmt.body, Body::Strip),
        }
    })
}

/// The longest end of `text` that is the start of some marker (text to hold back, since the
/// next token may complete the marker).
pub(super) fn marker_prefix_len(text: &str) -> usize {
    let bytes = text.as_bytes();
    let shape = marker_shape();
    (1..bytes.len().min(shape.longest_open) + 1)
        .rev()
        .find(|&n| {
            let tail = &bytes[bytes.len() - n..];
            // Most ends start with no marker's first byte: one table lookup settles them.
            shape.first_bytes[usize::from(tail[0])]
                && text.is_char_boundary(bytes.len() - n)
                && FORMATS.iter().any(|f| f.open.as_bytes().starts_with(tail))
        })
        .unwrap_or(0)
}

/// The longest closing marker, in bytes (how far back a closer split across tokens may start).
pub(super) fn longest_close() -> usize {
    marker_shape().longest_close
}

/// What the streaming reader needs to know about the table, derived from it once.
struct MarkerShape {
    first_bytes: [bool; 256],
    longest_open: usize,
    longest_close: usize,
}

fn marker_shape() -> &'static MarkerShape {
    static SHAPE: OnceLock<MarkerShape> = OnceLock::new();
    SHAPE.get_or_init(|| {
        let mut first_bytes = [false; 256];
        for f in FORMATS {
            first_bytes[usize::from(f.open.as_bytes()[0])] = true;
        }
        MarkerShape {
            first_bytes,
            longest_open: FORMATS.iter().map(|f| f.open.len()).max().unwrap_or(0),
            longest_close: FORMATS
                .iter()
                .flat_map(|f| f.close.iter())
                .map(|c| c.len())
                .max()
                .unwrap_or(0),
        }
    })
}

fn markers() -> &'static AhoCorasick {
    static MARKERS: OnceLock<AhoCorasick> = OnceLock::new();
    MARKERS.get_or_init(|| {
        AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(FORMATS.iter().map(|f| f.open))
            .expect("the marker table builds")
    })
}

/// Collects the text between calls; a stretch of plain text is searched for bare JSON calls
/// once, when it is closed.
struct Output<'a> {
    content: &'a str,
    limits: &'a Limits,
    is_tool: Option<&'a dyn Fn(&str) -> bool>,
    result: TextCalls,
}

impl Output<'_> {
    /// Adds `content[from..to]` as prose: JSON objects in it that are shaped like calls (and
    /// name a known tool, with a registry) become calls; the rest is text.
    fn prose(&mut self, from: usize, to: usize) {
        let bytes = self.content.as_bytes();
        let whole = self.content[from..to].trim();
        let mut kept = from;
        let mut i = from;
        while let Some(offset) = memchr::memchr2(b'{', b'[', &bytes[i..to]) {
            let start = i + offset;
            let end = value_end(&bytes[..to], start);
            let calls = if bytes[start] == b'{'
                || bytes.get(crate::scan::skip_ws(bytes, start + 1)) == Some(&b'{')
            {
                JsonCalls {
                    content: self.content,
                    context: Context::Prose,
                    format: "bare_json",
                    limits: self.limits,
                    is_tool: self.is_tool,
                }
                .in_span(start, end)
            } else if looks_pythonic(&self.content[start..end]) {
                // `[get_weather(city='Paris')]`: taken when it is the whole reply, or when a
                // registry knows every name in it (prose has brackets and parentheses too).
                let calls = pythonic_calls(self.content, start, end, "pythonic");
                let alone = self.content[start..end].trim() == whole;
                let all_known =
                    self.is_tool.is_some() && calls.iter().all(|c| names_a_tool(c, self.is_tool));
                if alone || all_known {
                    calls
                } else {
                    Vec::new()
                }
            } else {
                i = start + 1;
                continue;
            };
            if !calls.is_empty() {
                self.result.text.push_str(&self.content[kept..start]);
                self.result.calls.extend(calls);
                kept = end;
            }
            i = end.max(start + 1);
        }
        self.result.text.push_str(&self.content[kept..to]);
    }
}

pub(super) fn scan(
    content: &str,
    limits: &Limits,
    is_tool: Option<&dyn Fn(&str) -> bool>,
) -> TextCalls {
    let bytes = content.as_bytes();
    let mut out = Output {
        content,
        limits,
        is_tool,
        result: TextCalls::default(),
    };
    let mut text_from = 0; // where the text not yet added starts
    let mut pos = 0;
    while let Some(m) = markers().find(&content[pos..]) {
        let (open_at, body_start) = (pos + m.start(), pos + m.end());
        let fmt = &FORMATS[m.pattern().as_usize()];
        if let Body::Think = fmt.body {
            // Thinking is text; markers and JSON inside it are not calls.
            let end = memchr::memmem::find(&bytes[body_start..], b"</think>")
                .map_or(bytes.len(), |e| body_start + e + 8);
            out.prose(text_from, open_at);
            out.result.text.push_str(&content[open_at..end]);
            text_from = end;
            pos = end;
            continue;
        }
        if let Body::Strip = fmt.body {
            out.prose(text_from, open_at);
            text_from = body_start;
            pos = body_start;
            continue;
        }
        // The body runs to its closing marker, looked for only before the next opening marker
        // of the same format: a missing closer then costs one look up to there, not a scan to
        // the end per marker, and other formats' markers may nest inside (a fence in DeepSeek).
        let next_same = memchr::memmem::find(&bytes[body_start..], fmt.open.as_bytes())
            .map_or(bytes.len(), |n| body_start + n);
        let close = fmt
            .close
            .iter()
            .filter_map(|c| {
                memchr::memmem::find(&bytes[body_start..next_same], c.as_bytes())
                    .map(|at| (at, c.len()))
            })
            .min();
        let (body_end, span_end) = close.map_or((next_same, next_same), |(at, len)| {
            (body_start + at, body_start + at + len)
        });
        // None: not a call after all (a ```json fence of data), and it stays text.
        if let Some(calls) = read_body(fmt, content, body_start, body_end, limits) {
            out.prose(text_from, open_at);
            out.result
                .calls
                .extend(calls.into_iter().map(|c| FoundCall {
                    position: open_at,
                    ..c
                }));
            text_from = span_end;
        }
        pos = span_end.max(body_start);
    }
    out.prose(text_from, bytes.len());
    let text = out.result.text.trim();
    if text.len() != out.result.text.len() {
        out.result.text = text.to_string();
    }
    out.result
}

/// The calls in one format's body; None when the body holds no call and stays text.
fn read_body(
    fmt: &Format,
    content: &str,
    start: usize,
    end: usize,
    limits: &Limits,
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
        }
    };
    let calls = match fmt.body {
        Body::Strip | Body::Think => return None, // handled by the scan
        Body::Calls(context) => {
            if body.trim_start().starts_with("<function=") {
                let inner = start + body.find("<function=").unwrap_or(0) + "<function=".len();
                return read_body(&FORMATS[function_tag_index()], content, inner, end, limits);
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
            if trimmed.starts_with('[') || trimmed.starts_with('{') {
                JsonCalls {
                    content,
                    context: Context::Marked,
                    format: fmt.name,
                    limits,
                    is_tool: None,
                }
                .in_span(start, end)
            } else {
                let args_at = body.find('{').map_or(end, |i| start + i);
                let name_end = body.find("[ARGS]").map_or(args_at, |i| start + i);
                let args_end = if args_at < end {
                    value_end(&content.as_bytes()[..end], args_at)
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
            let end = body.find("</function>").map_or(end, |i| start + i);
            let body = &content[start..end];
            let gt = body.find('>')?;
            let name = body[..gt].trim().trim_matches(|c| c == '"' || c == '\'');
            let rest = body[gt + 1..].trim_start();
            if rest.starts_with("<parameter=") {
                let mut call = named(name, end, end);
                call.arguments = Some(parameter_tags_as_json(rest));
                vec![call]
            } else {
                vec![named(name, start + gt + 1, end)]
            }
        }
        Body::Pythonic => pythonic_calls(content, start, end, fmt.name),
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

/// `<parameter=path>\na.txt\n</parameter>` pairs as a JSON object: a value that is itself JSON
/// (a number, true, a list) is kept as JSON, anything else becomes a string.
fn parameter_tags_as_json(text: &str) -> String {
    let mut object = serde_json::Map::new();
    let mut rest = text;
    while let Some(at) = rest.find("<parameter=") {
        let after = &rest[at + "<parameter=".len()..];
        let Some(gt) = after.find('>') else { break };
        let key = after[..gt].trim().trim_matches(|c| c == '"' || c == '\'');
        let value_text = &after[gt + 1..];
        let value_end = value_text
            .find("</parameter>")
            .or_else(|| value_text.find("<parameter="))
            .unwrap_or(value_text.len());
        let raw = value_text[..value_end].trim_matches('\n');
        let value = match serde_json::from_str::<Value>(raw.trim()) {
            Ok(v) if !v.is_string() => v,
            _ => Value::String(raw.to_string()),
        };
        object.insert(key.to_string(), value);
        rest = &value_text[value_end..];
    }
    Value::Object(object).to_string()
}
