//! The checks every tool call goes through, in order: a function (TLP-001), a name that is a
//! string (TLP-003), not empty (TLP-002), of allowed characters (TLP-003) and length (TLP-005),
//! text that could be read (what the stream or the text format found), arguments (missing or
//! blank: `{}`; an object: held to the limits; text: parsed, repaired; anything else, or text
//! that is not an object: TLP-004), the tool (TSR-001) and its schema. A call Ollama left in the
//! content after it parsed it runs once. Calls keep their wire index; calls found in the text
//! continue after it.
//!
//! The checks are written over [`JsonLike`] values and a [`Host`] for the steps that belong to
//! the backend (parsing argument text into its values, walking them, validating them in place),
//! so serde values run them here and Python objects in the binding.

mod reply;
mod serde_host;
#[cfg(test)]
mod tests;

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use crate::error::{Error, ErrorCode};
use crate::extract::{Formats, FoundCall};
use crate::limits::Limits;
use crate::names::NameRule;
use crate::repair::{ends_cut_off, Repair, RepairKind};
use crate::schema::{Registry, RegistryError, Tool, Violation};
use crate::stream::{glued_objects, repeated_object, AssembledCall, FailedCall};
use crate::wire::{ErrorOf, JsonLike};

pub use reply::{
    check_message, check_reply, check_stream, check_stream_reply, check_text_events, finish_text,
    known_tool, MessageText, TextItem,
};
pub use serde_host::SerdeHost;

/// Where a call was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CallSource {
    /// The reply's structured `tool_calls` field.
    ToolCalls,
    /// Assembled from a stream's fragments.
    Stream,
    /// Written in the text, in the named format ("hermes", "mistral", "bare_json", ...).
    Text(&'static str),
}

impl CallSource {
    /// The source a name stands for: "tool_calls", "stream" or a text format's name.
    pub fn from_name(name: &str) -> Option<CallSource> {
        match name {
            "tool_calls" => Some(CallSource::ToolCalls),
            "stream" => Some(CallSource::Stream),
            _ => Formats::names()
                .iter()
                .find(|format| **format == name)
                .map(|format| CallSource::Text(format)),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            CallSource::ToolCalls => "tool_calls",
            CallSource::Stream => "stream",
            CallSource::Text(format) => format,
        }
    }
}

/// Why a call could not be used: a code, a message, where, the schema's complaints, a fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub code: ErrorCode,
    pub message: String,
    /// Byte offset of the fault in the raw arguments (or in the content, for a call written in
    /// text); None when the fault has no place.
    pub position: Option<usize>,
    /// The schema violations, when the arguments did not match the tool's schema.
    pub violations: Vec<Violation>,
    pub suggestion: String,
}

impl Failure {
    pub fn new(code: ErrorCode, message: impl Into<String>, suggestion: &str) -> Self {
        Failure {
            code,
            message: message.into(),
            position: None,
            violations: Vec::new(),
            suggestion: suggestion.into(),
        }
    }

    /// Arguments the repair pass could not read (or over a limit), at the error's position.
    pub fn unparsed(e: &Error) -> Self {
        Failure {
            position: Some(e.position),
            ..Failure::new(
                e.code(),
                format!("Arguments could not be parsed: {e}"),
                e.suggestion(),
            )
        }
    }
}

/// The arguments of a call as found.
#[derive(Clone, Debug, PartialEq)]
pub enum Arguments<V> {
    /// The call has no function at all (TLP-001).
    NoFunction,
    /// The function gave no arguments: `{}`.
    Missing,
    Given(V),
}

/// A call as found: on the wire, in a stream or in text.
#[derive(Clone, Debug)]
pub struct Candidate<V> {
    /// The id as given (any value; the binding reads it as text).
    pub id: Option<V>,
    pub name: Option<V>,
    pub arguments: Arguments<V>,
    /// The arguments as received, where `arguments` holds them already read and held to the
    /// limits (a stream's live view); None means they are `arguments`.
    pub raw: Option<V>,
    pub index: usize,
    pub source: CallSource,
    /// Repairs made to find the call (to the text around it, or to its streamed arguments).
    pub repairs: Vec<Repair>,
    /// Why the call's text could not be read at all (a text format's JSON beyond repair, a
    /// streamed call over the limits); reported once the name has been checked.
    pub unreadable: Option<Failure>,
    /// A call found in text: the text it was cut out of (see `FoundCall::written`).
    pub written: Option<std::sync::Arc<str>>,
    /// The text the call was found in ended inside its arguments (a text format's block, a
    /// stream's arguments); the `tool_calls` field's text arguments are looked at when read.
    pub cut: bool,
}

impl<V> Candidate<V> {
    /// A call found in text. Values its format wrote without JSON types take the type the
    /// tool's schema gives them, when the registry knows the tool.
    pub fn found<H: Host<Value = V>>(host: &H, call: FoundCall, index: usize) -> Self {
        let tool = match (host.registry(), &call.name) {
            (Some(registry), Some(name)) if !call.untyped.is_empty() => registry.get(name).ok(),
            _ => None,
        };
        let arguments = match (call.arguments, tool) {
            (Some(a), Some(tool)) => Some(typed_by_schema(a, &call.untyped, &tool)),
            (a, _) => a,
        };
        Candidate {
            id: call.id.map(|id| host.string(&id)),
            name: call.name.map(|n| host.string(&n)),
            arguments: match arguments {
                Some(a) => Arguments::Given(host.string(&a)),
                None => Arguments::Missing,
            },
            raw: None,
            index,
            source: CallSource::Text(call.format),
            cut: call.cut,
            repairs: call.repairs,
            unreadable: call.error.as_ref().map(Failure::unparsed),
            written: call.written,
        }
    }

    /// One call as a caller gives it: a name and arguments (JSON text, or an object), read as
    /// a call of the `tool_calls` field is.
    pub fn given(name: V, arguments: V, index: usize) -> Self {
        Self::field(None, Some(name), Arguments::Given(arguments), index)
    }

    /// A call of a reply's `tool_calls` field, as its entry gives it.
    pub fn field(id: Option<V>, name: Option<V>, arguments: Arguments<V>, index: usize) -> Self {
        Candidate {
            id,
            name,
            arguments,
            raw: None,
            index,
            source: CallSource::ToolCalls,
            repairs: Vec::new(),
            unreadable: None,
            cut: false,
            written: None,
        }
    }

    /// A call assembled from a stream. `arguments` is the value already read from its text,
    /// when the host has one (the binding's live view); otherwise the text is read.
    pub fn assembled<H: Host<Value = V>>(
        host: &H,
        call: AssembledCall,
        arguments: Option<V>,
    ) -> Self {
        Candidate {
            id: call.id.map(|id| host.string(&id)),
            name: Some(host.string(&call.name)),
            arguments: Arguments::Given(arguments.unwrap_or_else(|| host.string(&call.arguments))),
            raw: Some(host.string(&call.raw_arguments)),
            index: call.index,
            source: CallSource::Stream,
            cut: ends_cut_off(call.raw_arguments.as_bytes(), &call.repairs),
            repairs: call.repairs,
            unreadable: None,
            written: None,
        }
    }

    /// A streamed call that failed while it was assembled.
    pub fn failed<H: Host<Value = V>>(host: &H, call: FailedCall) -> Self {
        Candidate {
            id: call.id.map(|id| host.string(&id)),
            name: Some(host.string(&call.name)),
            arguments: Arguments::Given(host.string(&call.raw_arguments)),
            raw: None,
            index: call.index,
            source: CallSource::Stream,
            repairs: Vec::new(),
            cut: false,
            unreadable: Some(Failure {
                position: call.position,
                ..Failure::new(call.code, call.message, call.suggestion)
            }),
            written: None,
        }
    }
}

/// A call ready to run: its arguments an object that matched the tool's schema (when there is
/// a registry).
#[derive(Clone, Debug)]
pub struct CheckedCall<V> {
    /// The id as given; None when the call came without one (the binding makes one).
    pub id: Option<V>,
    /// The name: a string, the registered tool's name when a registry found the tool (a
    /// registry finds a tool whatever the case of the name the model wrote).
    pub name: V,
    /// The name as the call gave it, when that is not `name` (the model wrote it in another
    /// case): a `tool_name` repair is recorded then. None when the two are the same.
    pub raw_name: Option<V>,
    pub arguments: V,
    /// The arguments as received.
    pub raw: Option<V>,
    pub index: usize,
    /// Which choice of the reply the call came from (0 for a reply with one).
    pub choice: usize,
    pub source: CallSource,
    /// Repairs made to find the call and to its arguments.
    pub repairs: Vec<Repair>,
    /// The arguments were cut off and mended into what they held so far (taken only with
    /// `allow_truncated`).
    pub truncated: bool,
}

/// A call that cannot be used, and why. Other calls are not affected.
#[derive(Clone, Debug)]
pub struct RejectedCall<V> {
    pub failure: Failure,
    /// The id the reply gave the call, so that an agent can answer it by id; None when it gave
    /// none (no id is made up for a call that cannot run).
    pub id: Option<V>,
    pub tool_name: Option<String>,
    pub raw: Option<V>,
    pub index: usize,
    /// Which choice of the reply the call came from.
    pub choice: usize,
    /// The arguments mended into what they held so far, for a call that was cut off (TLP-010).
    pub partial: Option<V>,
    /// A call found in text: the text it was cut out of, to be handed on as text where the
    /// reply is (see `FoundCall::written`).
    pub written: Option<std::sync::Arc<str>>,
}

/// The steps that belong to a backend: making values, reading argument text into them,
/// walking them for the limits, validating them against a tool's schema, comparing them.
pub trait Host {
    type Value: JsonLike;

    /// The tool registry calls are checked against, if any.
    fn registry(&self) -> Option<&Registry>;
    /// A string value.
    fn string(&self, text: &str) -> Self::Value;
    /// An empty object: the arguments of a call that gave none.
    fn empty_object(&self) -> Self::Value;
    /// An object given as arguments, held to the size and depth limits.
    fn walk_limits(&self, object: &Self::Value, limits: &Limits) -> Result<(), Failure>;
    /// The bytes of argument text (`JsonLike::is_text`); text over `max_size` may be refused
    /// here, before it is copied.
    fn text_bytes<'v>(
        &self,
        text: &'v Self::Value,
        max_size: usize,
    ) -> Result<std::borrow::Cow<'v, [u8]>, Failure>;
    /// Argument text (`bytes`, not blank) as a value: strict JSON directly, the rest through the
    /// repair pass when `repair` is on; with the repairs made.
    fn parse_arguments(
        &self,
        text: &Self::Value,
        bytes: &[u8],
        limits: &Limits,
        repair: bool,
    ) -> Result<(Self::Value, Vec<Repair>), Failure>;
    /// Validates an object against the tool's schema (under the registry's own limits): the
    /// violations, or the message of a failure to check at all.
    fn validate(
        &self,
        tool: &Arc<Tool>,
        arguments: &Self::Value,
    ) -> Result<Result<(), Vec<Violation>>, String>;
    /// Whether two argument values are equal (for the duplicate-call rule).
    fn same_value(&self, a: &Self::Value, b: &Self::Value) -> bool;
    /// Text that equal argument values share and unequal ones do not (JSON with sorted keys),
    /// so the duplicate-call rule finds a repeat by hashing, not by comparing with every call;
    /// None when the value cannot be written, and then it is compared one by one.
    fn equality_key(&self, value: &Self::Value) -> Option<String>;
}

/// Runs calls through the checks and keeps the outcome of each.
pub struct Pipeline<'h, H: Host> {
    host: &'h H,
    limits: Limits,
    repair: bool,
    pub calls: Vec<CheckedCall<H::Value>>,
    pub errors: Vec<RejectedCall<H::Value>>,
    /// Calls that stood in the text only quoted (an echoed tool result, inline code, a fence
    /// amid prose): left in the text, never run.
    pub quoted: usize,
    /// Where those stood and why they were not taken (see `extract::Note`).
    pub notes: Vec<crate::extract::Note>,
    /// The calls of the `tool_calls` field by name (positions in `calls`), so that a call found
    /// in text is compared only with the field's calls of its name.
    field_calls: HashMap<String, Vec<usize>>,
    /// The equality keys of the field's calls of a name, made when a call found in text first
    /// has that name (None when one of them has no key).
    field_keys: HashMap<String, Option<HashSet<String>>>,
    /// The ids the calls so far were given.
    ids: HashSet<String>,
    /// The choice whose calls are being checked.
    choice: usize,
    /// The reply said it stopped at the token limit (`length`): a call mended in any way that
    /// the end of the text explains was cut off, even one that only lacks its closers.
    cut_by_length: bool,
    /// Calls cut off are taken (marked `truncated`) rather than refused with TLP-010.
    allow_truncated: bool,
}

impl<'h, H: Host> Pipeline<'h, H> {
    pub fn new(host: &'h H, limits: Limits, repair: bool) -> Self {
        Pipeline {
            host,
            limits,
            repair,
            calls: Vec::new(),
            errors: Vec::new(),
            quoted: 0,
            notes: Vec::new(),
            field_calls: HashMap::new(),
            field_keys: HashMap::new(),
            ids: HashSet::new(),
            choice: 0,
            cut_by_length: false,
            allow_truncated: false,
        }
    }

    /// Takes calls whose arguments were cut off, marked `truncated`, instead of refusing them.
    pub fn allow_truncated(mut self, allow: bool) -> Self {
        self.allow_truncated = allow;
        self
    }

    /// Whether the reply (or the choice) stopped at the token limit.
    pub fn set_cut_by_length(&mut self, cut: bool) {
        self.cut_by_length = cut;
    }

    /// Starts on the calls of another choice of the reply: the choices are alternative answers,
    /// so a call repeats a call, or an id an id, only within one.
    pub fn start_choice(&mut self, choice: usize) {
        if choice != self.choice {
            self.choice = choice;
            self.field_calls.clear();
            self.field_keys.clear();
            self.ids.clear();
        }
    }

    pub fn host(&self) -> &'h H {
        self.host
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Checks one call and keeps it as a call or an error. A call found in text that repeats a
    /// call of the `tool_calls` field (same name, equal arguments) is dropped: Ollama can leave
    /// a call it parsed in the content too, and it runs once. An id an earlier call of the reply
    /// already has is dropped, so the call gets a fresh one: an agent answers each call by id.
    pub fn run(&mut self, c: Candidate<H::Value>) -> Result<(), ErrorOf<H::Value>> {
        let name = match &c.name {
            Some(n) => n.as_str()?,
            None => None,
        };
        let name = name.as_deref();
        let raw = c.raw.clone().or_else(|| match &c.arguments {
            Arguments::Given(a) => Some(a.clone()),
            _ => None,
        });
        let (failure, partial) = match self.check(&c, name) {
            Ok((arguments, _, Cut::Refused, _)) => (cut_off(), Some(arguments)),
            Ok((arguments, repairs, cut, tool)) => {
                let truncated = cut == Cut::Taken;
                // The registered name, where the call wrote it in another case: the call is
                // given it, so that policies and dispatch by name see the name registered.
                let registered = tool
                    .filter(|t| Some(t.definition.name.as_str()) != name)
                    .map(|t| t.definition.name.clone());
                let name = registered.as_deref().or(name);
                // The field's calls, whole or streamed, and the text's repeats of them.
                let field = matches!(c.source, CallSource::ToolCalls | CallSource::Stream);
                if !field && self.repeats_a_call(name, &arguments) {
                    return Ok(());
                }
                if field {
                    if let Some(name) = name {
                        let at = self.calls.len();
                        self.field_calls
                            .entry(name.to_owned())
                            .or_default()
                            .push(at);
                        self.field_keys.remove(name);
                    }
                }
                let Some(given_name) = c.name else {
                    unreachable!("a call passes the checks only with a name");
                };
                let mut all = c.repairs;
                let (name_value, raw_name) = match &registered {
                    Some(registered) => {
                        // The name comes before the arguments: its repair stands first.
                        all.insert(
                            0,
                            Repair {
                                kind: RepairKind::ToolName,
                                position: 0,
                                count: 1,
                            },
                        );
                        (self.host.string(registered), Some(given_name))
                    }
                    None => (given_name, None),
                };
                all.extend(repairs);
                let id = c.id.filter(|id| match id.as_str() {
                    Ok(Some(text)) => self.ids.insert(text.into_owned()),
                    _ => true,
                });
                self.calls.push(CheckedCall {
                    id,
                    name: name_value,
                    raw_name,
                    arguments,
                    raw,
                    index: c.index,
                    choice: self.choice,
                    source: c.source,
                    repairs: all,
                    truncated,
                });
                return Ok(());
            }
            Err(failure) => (failure, None),
        };
        let tool_name = name
            .map(str::to_owned)
            .or_else(|| c.name.as_ref().and_then(JsonLike::display));
        self.errors.push(RejectedCall {
            failure,
            id: c.id,
            tool_name,
            raw,
            index: c.index,
            choice: self.choice,
            partial,
            written: c.written,
        });
        Ok(())
    }

    /// Settles what the token limit cut, once a choice's calls are all checked, when the reply
    /// said it stopped there (`length`). Calls whose text ends cut off were refused already (see
    /// `check`); besides them, the choice's last call is cut when anything in it needed
    /// mending (the mending may have closed what the limit cut), and arguments that could not
    /// be read at all are cut off, not unparseable. A cut call is refused with TLP-010 holding
    /// its arguments, or taken marked `truncated` where cut calls are allowed.
    pub fn settle_cut_off(&mut self) {
        if !self.cut_by_length {
            return;
        }
        let choice = self.choice;
        for e in &mut self.errors {
            if e.choice == choice && e.failure.code == ErrorCode::Unparseable {
                e.failure = Failure {
                    position: e.failure.position,
                    ..cut_off()
                };
            }
        }
        let last = (self.calls.iter().map(|c| (c.choice, c.index)))
            .chain(self.errors.iter().map(|e| (e.choice, e.index)))
            .filter(|(c, _)| *c == choice)
            .map(|(_, index)| index)
            .max();
        let Some(at) = self.calls.iter().position(|c| {
            c.choice == choice
                && Some(c.index) == last
                // Naming the tool rightly, or dropping a repeat of whole arguments, mends
                // nothing the token limit could have cut.
                && c.repairs.iter().any(|r| {
                    !matches!(r.kind, RepairKind::ToolName | RepairKind::RepeatedArguments)
                })
                && !c.truncated
        }) else {
            return;
        };
        let name = self.calls[at]
            .name
            .as_str()
            .ok()
            .flatten()
            .map(Cow::into_owned);
        let tool_allows = match (self.host.registry(), &name) {
            (Some(registry), Some(name)) => registry
                .get(name)
                .is_ok_and(|tool| tool.definition.allow_truncated),
            _ => false,
        };
        if self.allow_truncated || tool_allows {
            self.calls[at].truncated = true;
            return;
        }
        let call = self.calls.remove(at);
        // The field's calls by name hold positions in `calls`: those after it move down one.
        for positions in self.field_calls.values_mut() {
            positions.retain(|&p| p != at);
            positions
                .iter_mut()
                .filter(|p| **p > at)
                .for_each(|p| *p -= 1);
        }
        self.field_keys.clear();
        self.errors.push(RejectedCall {
            failure: cut_off(),
            id: call.id,
            tool_name: name,
            raw: call.raw,
            index: call.index,
            choice: call.choice,
            partial: Some(call.arguments),
            written: None,
        });
    }

    /// Records a fault that is no call's own (a stream's line too long to read) at `index`.
    pub fn reject(&mut self, index: usize, failure: Failure) {
        self.errors.push(RejectedCall {
            failure,
            id: None,
            tool_name: None,
            raw: None,
            index,
            choice: self.choice,
            partial: None,
            written: None,
        });
    }

    fn repeats_a_call(&mut self, name: Option<&str>, arguments: &H::Value) -> bool {
        let (Some(name), host) = (name, self.host) else {
            return false;
        };
        let Some(at) = self.field_calls.get(name) else {
            return false;
        };
        let calls = &self.calls;
        let keys = self.field_keys.entry(name.to_owned()).or_insert_with(|| {
            at.iter()
                .map(|&i| host.equality_key(&calls[i].arguments))
                .collect()
        });
        match (keys, host.equality_key(arguments)) {
            (Some(keys), Some(key)) => keys.contains(&key),
            // A value with no key (or a field call without one): compared one by one.
            _ => at
                .iter()
                .any(|&i| host.same_value(&calls[i].arguments, arguments)),
        }
    }

    /// The checks in the order of the pipeline: function, name, arguments, tool, schema. Also
    /// says whether the arguments were cut off: such a call is not checked further unless cut
    /// calls are allowed (it is refused with TLP-010 then); and the registry's tool, when it
    /// has the call's.
    fn check(
        &self,
        c: &Candidate<H::Value>,
        name: Option<&str>,
    ) -> Result<Checked<H::Value>, Failure> {
        if matches!(c.arguments, Arguments::NoFunction) {
            return Err(Failure::new(
                ErrorCode::MissingFunction,
                "Tool call has no function: a function with a name is required",
                "send each call as {\"function\": {\"name\": ..., \"arguments\": {...}}}",
            ));
        }
        let name = match (name, &c.name) {
            (Some(n), _) => n,
            (None, Some(other)) if !other.is_null() => {
                return Err(Failure::new(
                    ErrorCode::InvalidName,
                    format!("Function name must be a string, not {}", other.type_name()),
                    "give the tool's name as a string",
                ));
            }
            (None, _) => {
                // A marker promised a call whose text could not be read at all: where reading
                // stopped says more than a missing name.
                if let Some(failure) = &c.unreadable {
                    return Err(failure.clone());
                }
                return Err(Failure::new(
                    ErrorCode::EmptyName,
                    "Function name is required: the call has no name",
                    "name the tool to call",
                ));
            }
        };
        let names = self
            .host
            .registry()
            .map_or(NameRule::Default, Registry::names);
        names.check(name).map_err(|(code, message)| {
            Failure::new(
                code,
                message,
                "use the tool's name exactly as it was declared",
            )
        })?;
        if let Some(failure) = &c.unreadable {
            return Err(failure.clone());
        }
        if !self.repair && !c.repairs.is_empty() {
            self.refuse_mended(c)?;
        }
        // Looked up now, reported after the limits (the pipeline's order). A registry that
        // validates an object under the same limits walks it once for both.
        let registry = self.host.registry();
        let tool = registry.map(|r| r.get(name));
        let registry_walks = matches!(tool, Some(Ok(_)))
            && registry.is_some_and(|r| *r.limits() == self.limits_no_deadline());
        let (value, repairs, cut) = match &c.arguments {
            Arguments::NoFunction | Arguments::Missing => {
                (self.host.empty_object(), Vec::new(), false)
            }
            // No walk where the registry walks anyway or the stream held the limits.
            Arguments::Given(a) if a.is_object() && (registry_walks || c.raw.is_some()) => {
                (a.clone(), Vec::new(), false)
            }
            Arguments::Given(a) if a.is_object() => {
                self.host.walk_limits(a, &self.limits)?;
                (a.clone(), Vec::new(), false)
            }
            Arguments::Given(a) if a.is_text() => self.parse_arguments(a)?,
            Arguments::Given(a) => return Err(not_an_object(a)),
        };
        if !value.is_object() {
            return Err(not_an_object(&value));
        }
        let cut = cut
            || c.cut
            || (self.cut_by_length
                && repairs
                    .iter()
                    .chain(&c.repairs)
                    .any(|r| TRUNCATION.contains(&r.kind)));
        let taken = self.allow_truncated
            || matches!(&tool, Some(Ok(tool)) if tool.definition.allow_truncated);
        if cut && !taken {
            return Ok((value, repairs, Cut::Refused, None));
        }
        let tool = match tool {
            Some(tool) => {
                let tool = tool.map_err(|e| {
                    Failure::new(e.code, e.message, RegistryError::UNKNOWN_TOOL_FIX)
                })?;
                self.validate(&tool, &value, name)?;
                Some(tool)
            }
            None => None,
        };
        let cut = if cut { Cut::Taken } else { Cut::Whole };
        Ok((value, repairs, cut, tool))
    }

    /// With repair off, a call that needed repair to be found or assembled is refused
    /// (TLP-004), wherever it was written: a streamed call with the parse error of its text as
    /// sent (Ok when that text is strict after all), a call written in text with the repairs
    /// its JSON needed.
    fn refuse_mended(&self, c: &Candidate<H::Value>) -> Result<(), Failure> {
        if let (CallSource::Stream, Some(raw)) = (c.source, &c.raw) {
            let bytes = self.host.text_bytes(raw, self.limits.max_size)?;
            return self
                .host
                .parse_arguments(raw, &bytes, &self.limits, false)
                .map(drop);
        }
        let mut kinds: Vec<String> = c
            .repairs
            .iter()
            .take(3)
            .map(|r| format!("{} at byte {}", r.kind.as_str(), r.position))
            .collect();
        if c.repairs.len() > 3 {
            let more: usize = c.repairs[3..].iter().map(|r| r.count as usize).sum();
            kinds.push(format!("{more} more"));
        }
        Err(Failure {
            position: Some(c.repairs[0].position),
            ..Failure::new(
                ErrorCode::Unparseable,
                format!(
                    "The call's JSON needed repair ({}) and repair is off",
                    kinds.join(", ")
                ),
                "write the call as strict JSON",
            )
        })
    }

    /// The limits without the repair deadline, as a registry holds them.
    fn limits_no_deadline(&self) -> Limits {
        Limits {
            timeout_ms: 0,
            ..self.limits
        }
    }

    /// JSON text arguments; blank text (OpenAI-compatible servers send "" for a call without
    /// arguments) is `{}`.
    /// Also says whether the text was cut off.
    fn parse_arguments(&self, text: &H::Value) -> Result<(H::Value, Vec<Repair>, bool), Failure> {
        let bytes = self.host.text_bytes(text, self.limits.max_size)?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok((self.host.empty_object(), Vec::new(), false));
        }
        let (value, mut repairs) =
            self.host
                .parse_arguments(text, &bytes, &self.limits, self.repair)?;
        if !repairs.is_empty() {
            if let Some(glued) = glued_objects(&bytes) {
                if let Some(repeated) = repeated_object(&bytes, glued) {
                    // The whole arguments sent again (proxies repeat them): the object, once.
                    let first = &bytes[..repeated.first_end];
                    let once = self.host.string(&String::from_utf8_lossy(first));
                    let (value, _) =
                        self.host
                            .parse_arguments(&once, first, &self.limits, self.repair)?;
                    return Ok((value, vec![repeated.repair()], false));
                }
                let count = glued.count;
                return Err(Failure {
                    position: Some(glued.second_start),
                    ..Failure::new(
                        ErrorCode::Unparseable,
                        format!(
                            "The arguments hold {count} JSON objects one after another: a \
                             call's arguments are one object, and merging them would run \
                             what neither said"
                        ),
                        "send one call per object",
                    )
                });
            }
        }
        let cut = !repairs.is_empty() && ends_cut_off(&bytes, &repairs);
        if value.is_text() {
            // Encoded twice (a JSON string whose text is the object, as some servers send):
            // where an object is required, its text is read once more.
            let inner = self.host.text_bytes(&value, self.limits.max_size)?;
            if let Ok((object, more)) =
                self.host
                    .parse_arguments(&value, &inner, &self.limits, self.repair)
            {
                if object.is_object() {
                    repairs.push(Repair {
                        kind: RepairKind::EscapedJson,
                        position: 0,
                        count: 1,
                    });
                    repairs.extend(more);
                    return Ok((object, repairs, cut));
                }
            }
        }
        Ok((value, repairs, cut))
    }

    fn validate(&self, tool: &Arc<Tool>, value: &H::Value, name: &str) -> Result<(), Failure> {
        match self.host.validate(tool, value) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(violations)) => {
                let first = &violations[0];
                let message = format!(
                    "Arguments of '{name}' do not match its schema: {} error{} ({}: {})",
                    violations.len(),
                    if violations.len() == 1 { "" } else { "s" },
                    first.path,
                    first.message
                );
                let (code, suggestion) = (first.code, first.suggestion.clone());
                Err(Failure {
                    violations,
                    ..Failure::new(code, message, &suggestion)
                })
            }
            Err(message) => Err(Failure::new(ErrorCode::CallConstruction, message, "")),
        }
    }
}

/// `arguments` (JSON text of an object) with the values in `untyped` (key, text as written)
/// written back as strings where the tool's schema says the property is a string and not
/// what the text was read as (`02139` for a zip code, `true` for a title). Valid JSON given
/// with its types is never passed here: a `"42"` for an integer stays an error.
fn typed_by_schema(arguments: String, untyped: &[(String, String)], tool: &Tool) -> String {
    let properties = tool.definition.schema.get("properties");
    let Ok(serde_json::Value::Object(mut object)) = serde_json::from_str(&arguments) else {
        return arguments;
    };
    let mut changed = false;
    for (key, text) in untyped {
        let Some(schema) = properties.and_then(|p| p.get(key)) else {
            continue;
        };
        let read = object.get(key).map(json_type);
        if takes_string(schema) && !read.is_some_and(|t| takes_type(schema, t)) {
            object.insert(key.clone(), serde_json::Value::String(text.clone()));
            changed = true;
        }
    }
    if changed {
        serde_json::Value::Object(object).to_string()
    } else {
        arguments
    }
}

/// The JSON Schema type name of a value ("integer" for whole numbers).
fn json_type(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "boolean",
        serde_json::Value::Number(n) if n.is_f64() => "number",
        serde_json::Value::Number(_) => "integer",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    }
}

/// Whether a property schema's `type` names `kind` (an integer is a number too).
fn takes_type(schema: &serde_json::Value, kind: &str) -> bool {
    let names = |t: &serde_json::Value| match t {
        serde_json::Value::String(s) => s == kind || (kind == "integer" && s == "number"),
        _ => false,
    };
    match schema.get("type") {
        Some(serde_json::Value::Array(types)) => types.iter().any(names),
        Some(t) => names(t),
        None => false,
    }
}

/// Whether a property schema says its value is a string: its `type`, or an `enum` or `const`
/// of strings.
fn takes_string(schema: &serde_json::Value) -> bool {
    takes_type(schema, "string")
        || schema
            .get("enum")
            .and_then(|e| e.as_array())
            .is_some_and(|e| !e.is_empty() && e.iter().all(serde_json::Value::is_string))
        || schema
            .get("const")
            .is_some_and(serde_json::Value::is_string)
}

/// What `Pipeline::check` gives for a call that passed: the arguments as a value, the repairs
/// made to read them, whether they were cut off, and the registry's tool.
type Checked<V> = (V, Vec<Repair>, Cut, Option<Arc<Tool>>);

/// Whether a call's arguments were cut off, and what is done with such a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cut {
    Whole,
    /// Cut off, and taken (marked truncated): allowed for the call site or the tool.
    Taken,
    /// Cut off, and refused with TLP-010.
    Refused,
}

/// Repairs that mean the text ended early: with a reply stopped at the token limit, a call
/// mended with one of them was cut off.
const TRUNCATION: [RepairKind; 5] = [
    RepairKind::MissingClosingBrace,
    RepairKind::MissingClosingBracket,
    RepairKind::TruncatedString,
    RepairKind::TruncatedLiteral,
    RepairKind::MissingValue,
];

/// A call whose arguments were cut off, refused (TLP-010).
fn cut_off() -> Failure {
    Failure::new(
        ErrorCode::CutOff,
        "Arguments were cut off: the reply ended inside them, so this is the start of a call, \
         not a whole one (the mended part is in `arguments`)",
        "raise the output token limit, or pass allow_truncated=True to take the mended part",
    )
}

fn not_an_object<V: JsonLike>(value: &V) -> Failure {
    Failure::new(
        ErrorCode::Unparseable,
        format!("Arguments must be a JSON object, not {}", value.type_name()),
        "send the arguments as one JSON object",
    )
}

/// "call_" and 16 hex digits, unique in the process (a counter mixed with a per-process key):
/// the id of a call that came without one.
pub fn new_call_id() -> String {
    static KEY: OnceLock<RandomState> = OnceLock::new();
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!(
        "call_{:016x}",
        KEY.get_or_init(RandomState::new).hash_one(n)
    )
}
