//! Tool calls assembled from streamed fragments: names and argument text appended per call as
//! they arrive, keyed on (index, id), completed by a flag, by the end of the turn, or by a later
//! call starting once the arguments form a whole JSON value. Every byte is looked at once (the
//! scanner keeps its state between fragments), so a whole stream costs time linear in its size.

use std::collections::BTreeMap;

use crate::error::{Error, ErrorCode, ErrorKind};
use crate::limits::Limits;
use crate::repair::{repair, Repair, RepairKind};

/// One fragment of one tool call, in wire-neutral form.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Delta {
    pub index: usize,
    /// Sent with a call's first fragment only (OpenAI); a new id at a seen index is a new call
    /// (servers that reuse index 0 for every parallel call).
    pub id: Option<String>,
    /// A piece of the name; pieces are joined.
    pub name: Option<String>,
    /// A piece of the arguments text; pieces are joined as they are (they split tokens anywhere).
    pub arguments: Option<String>,
    /// The sender says the call is whole.
    pub complete: bool,
}

/// What a fragment caused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    Started {
        slot: usize,
        index: usize,
        id: Option<String>,
    },
    NameGrew {
        slot: usize,
        appended: String,
    },
    ArgumentsGrew {
        slot: usize,
        appended: String,
    },
    Completed {
        slot: usize,
    },
    Failed {
        slot: usize,
        code: ErrorCode,
        message: String,
    },
}

/// The kind of an event, as the binding names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventKind {
    Started,
    Name,
    Arguments,
    Completed,
    Failed,
}

impl EventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Started => "started",
            EventKind::Name => "name",
            EventKind::Arguments => "arguments",
            EventKind::Completed => "completed",
            EventKind::Failed => "failed",
        }
    }

    /// The kind named `name` ("started", ...).
    pub fn from_name(name: &str) -> Option<EventKind> {
        [
            EventKind::Started,
            EventKind::Name,
            EventKind::Arguments,
            EventKind::Completed,
            EventKind::Failed,
        ]
        .into_iter()
        .find(|k| k.as_str() == name)
    }
}

impl Event {
    pub fn kind(&self) -> EventKind {
        match self {
            Event::Started { .. } => EventKind::Started,
            Event::NameGrew { .. } => EventKind::Name,
            Event::ArgumentsGrew { .. } => EventKind::Arguments,
            Event::Completed { .. } => EventKind::Completed,
            Event::Failed { .. } => EventKind::Failed,
        }
    }

    /// The slot of the call the event is about.
    pub fn slot(&self) -> usize {
        match self {
            Event::Started { slot, .. }
            | Event::NameGrew { slot, .. }
            | Event::ArgumentsGrew { slot, .. }
            | Event::Completed { slot }
            | Event::Failed { slot, .. } => *slot,
        }
    }
}

/// A call whose fragments are all in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssembledCall {
    /// The call's place in the accumulator (see `arguments`).
    pub slot: usize,
    pub index: usize,
    pub id: Option<String>,
    pub name: String,
    /// Strict JSON text (repaired when the stream left it broken or cut off).
    pub arguments: String,
    /// The arguments exactly as streamed.
    pub raw_arguments: String,
    pub repairs: Vec<Repair>,
}

/// A call that could not be assembled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FailedCall {
    pub index: usize,
    pub id: Option<String>,
    pub name: String,
    pub raw_arguments: String,
    pub code: ErrorCode,
    pub message: String,
    pub position: Option<usize>,
    /// How to fix it, for a person or a reflection prompt.
    pub suggestion: &'static str,
    /// Not a call that was seen but a line of the stream that was too long to read: whatever
    /// calls it held are lost, and it has no name or arguments to check.
    pub lost_line: bool,
    /// The report on a call handed out before, whose fragment came after it: not the call
    /// again, only what became of the fragment (see `refuse_late`).
    pub handed_out: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Open,
    Complete,
    Failed,
    /// Handed out by `take_completed`; later fragments for it are errors.
    Taken,
}

#[derive(Debug)]
struct Call {
    index: usize,
    id: Option<String>,
    name: String,
    arguments: String,
    scan: ValueScan,
    state: State,
    /// Why the call failed while streaming (its buffer is then freed).
    failure: Option<Failure>,
    /// Stands for a line of the stream that was refused (see `refuse_line`).
    lost_line: bool,
    /// The whole arguments sent again after them (see `repeats_arguments`): where the first
    /// repeat came, and how many came.
    repeated: Option<(usize, u32)>,
}

/// Why a call failed while streaming: its code, a message and the core's suggestion.
#[derive(Clone, Debug)]
struct Failure {
    code: ErrorCode,
    message: String,
    suggestion: &'static str,
}

/// Tracks, one byte at a time across fragments, whether JSON text holds one whole value and how
/// deep it nests; it does not validate (the repair pass does, at completion).
#[derive(Clone, Debug, Default)]
pub struct ValueScan {
    depth: usize,
    max_depth: usize,
    in_string: bool,
    escaped: bool,
    /// A container was opened and closed back to depth 0.
    closed: bool,
    /// Bytes fed so far, and how many had been fed when the first container closed.
    fed: usize,
    closed_at: usize,
}

impl ValueScan {
    pub fn feed(&mut self, text: &[u8]) {
        for (i, &b) in text.iter().enumerate() {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                }
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'{' | b'[' => {
                    self.depth += 1;
                    self.max_depth = self.max_depth.max(self.depth);
                }
                b'}' | b']' => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 && !self.closed {
                        self.closed = true;
                        self.closed_at = self.fed + i + 1;
                    }
                }
                _ => {}
            }
        }
        self.fed += text.len();
    }

    /// Where the first whole container ended, in bytes fed.
    pub fn closed_at(&self) -> Option<usize> {
        self.closed.then_some(self.closed_at)
    }

    /// The text so far is one whole container (more may follow, but it could end here).
    pub fn is_whole(&self) -> bool {
        self.closed && self.depth == 0 && !self.in_string
    }

    pub fn max_depth(&self) -> usize {
        self.max_depth
    }
}

/// The calls of one streamed turn.
#[derive(Debug, Default)]
pub struct Accumulator {
    limits: Limits,
    /// Calls in arrival order of their first fragment; a slot is a call's place here.
    calls: Vec<Call>,
    /// (index, id) -> slot of the newest call at that index.
    by_index: BTreeMap<usize, usize>,
    /// Slots of calls that may still be open, in order: a new call looks only at these for
    /// earlier calls it completes (so many calls in one stream cost linear time).
    maybe_open: Vec<usize>,
    /// Slots in the order calls are handed out, by (index, slot), kept sorted as calls come;
    /// those before `untaken_from` are all handed out, so handing out looks at the rest only.
    by_order: Vec<usize>,
    untaken_from: usize,
    /// Calls handed out before a fragment of theirs came: `finish` reports each once.
    late: Vec<usize>,
}

impl Accumulator {
    pub fn new(limits: Limits) -> Self {
        Accumulator {
            limits,
            calls: Vec::new(),
            by_index: BTreeMap::new(),
            maybe_open: Vec::new(),
            by_order: Vec::new(),
            untaken_from: 0,
            late: Vec::new(),
        }
    }

    /// The limits each call is held to.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Adds one fragment and returns what it caused.
    pub fn feed(&mut self, mut delta: Delta) -> Vec<Event> {
        // DeepSeek and DashScope send `"id": ""` on every delta after a call's first: the
        // index ties them, and an empty id says nothing.
        if delta.id.as_deref() == Some("") {
            delta.id = None;
        }
        let mut events = Vec::new();
        let slot = self.slot_for(&delta, &mut events);
        // A name some proxies send again, whole, in every delta of a call is no new piece of it
        // (nor a late fragment of a call already complete).
        let known = &self.calls[slot].name;
        if delta
            .name
            .as_ref()
            .is_some_and(|n| n.is_empty() || (!known.is_empty() && n == known))
        {
            delta.name = None;
        }
        if delta
            .arguments
            .as_deref()
            .is_some_and(|piece| self.repeats_arguments(slot, piece))
        {
            delta.arguments = None;
        }
        let has_text =
            delta.name.is_some() || delta.arguments.as_deref().is_some_and(|a| !a.is_empty());
        if has_text {
            if let Some(refused) = self.refuse_late(slot) {
                events.push(refused);
                return events;
            }
        }
        let call = &mut self.calls[slot];
        if call.state == State::Failed {
            return events;
        }
        if let Some(name) = delta.name {
            call.name.push_str(&name);
            events.push(Event::NameGrew {
                slot,
                appended: name,
            });
        }
        if let Some(arguments) = delta.arguments.filter(|a| !a.is_empty()) {
            if let Err(failed) = self.append_arguments(slot, &arguments) {
                events.push(failed);
                return events;
            }
            events.push(Event::ArgumentsGrew {
                slot,
                appended: arguments,
            });
        }
        let call = &mut self.calls[slot];
        if delta.complete && call.state == State::Open {
            call.state = State::Complete;
            events.push(Event::Completed { slot });
        }
        events
    }

    /// Appends argument text to the newest call at `index` (starting one if there is none) and
    /// returns the failure it caused, if any: `feed` with arguments only, minus the events a
    /// caller that reads the arguments itself does not need (nothing is copied but the text).
    pub fn extend_arguments(&mut self, index: usize, text: &str) -> Option<Event> {
        let slot = match self.by_index.get(&index) {
            Some(&slot) => slot,
            None => self.slot_for(
                &Delta {
                    index,
                    ..Delta::default()
                },
                &mut Vec::new(),
            ),
        };
        if text.is_empty()
            || self.calls[slot].state == State::Failed
            || self.repeats_arguments(slot, text)
        {
            return None;
        }
        if let Some(refused) = self.refuse_late(slot) {
            return Some(refused);
        }
        self.append_arguments(slot, text).err()
    }

    /// The error for text that arrives for a call already complete.
    /// What to do about a fragment for a call that was complete already (TLP-006).
    pub const LATE_FRAGMENT_FIX: &'static str =
        "start a new call at a new index, or a new id at this one";

    /// Text for a call already complete is refused, and never silently: a call not yet handed
    /// out fails (its arguments were not whole), and one handed out already has the refusal
    /// among `finish`'s failures.
    fn refuse_late(&mut self, slot: usize) -> Option<Event> {
        let call = &mut self.calls[slot];
        let message = match call.state {
            State::Complete => format!(
                "A fragment arrived for call {} after it was complete: its arguments were not whole",
                call.index
            ),
            State::Taken => format!(
                "A fragment arrived for call {} after it was handed out: it was taken with the \
                 arguments it had, without this part of them",
                call.index
            ),
            State::Open | State::Failed => return None,
        };
        let failure = Failure {
            code: ErrorCode::CallConstruction,
            message: message.clone(),
            suggestion: Self::LATE_FRAGMENT_FIX,
        };
        if call.state == State::Complete {
            call.state = State::Failed;
            call.failure = Some(failure);
        } else if call.failure.is_none() {
            call.failure = Some(failure);
            self.late.push(slot);
        }
        Some(Event::Failed {
            slot,
            code: ErrorCode::CallConstruction,
            message,
        })
    }

    /// Whether `piece` is the call's whole arguments sent again (by value: a proxy may write
    /// them anew), as proxies send them in a closing chunk, even after the call completed. It
    /// is noted on the call, for its repairs, and not appended.
    fn repeats_arguments(&mut self, slot: usize, piece: &str) -> bool {
        let call = &self.calls[slot];
        // Where the repeat starts, as in the joined text (see `repeated_object`).
        let at = call.arguments.len() + piece.len() - piece.trim_start().len();
        let (piece, so_far) = (piece.trim(), call.arguments.trim());
        // Written anew, the same value changes only its spaces: the sizes are close.
        let close = piece.len() <= 2 * so_far.len() && so_far.len() <= 2 * piece.len();
        let repeat = close
            && piece.starts_with('{')
            && call.scan.is_whole()
            && same_object(so_far.as_bytes(), piece.as_bytes());
        if repeat {
            let call = &mut self.calls[slot];
            call.repeated = Some(call.repeated.map_or((at, 1), |(at, n)| (at, n + 1)));
        }
        repeat
    }

    /// Appends to an open call's arguments; a call that goes over a limit fails here, and its
    /// buffer is freed.
    fn append_arguments(&mut self, slot: usize, text: &str) -> Result<(), Event> {
        let call = &mut self.calls[slot];
        // Only the bytes within the size limit are scanned: the limit crossed first in the text
        // is the one reported, however the text was split.
        let room = self.limits.max_size.saturating_sub(call.arguments.len());
        call.scan.feed(&text.as_bytes()[..text.len().min(room)]);
        call.arguments.push_str(text);
        let Some(failure) = over_limits(call, &self.limits) else {
            return Ok(());
        };
        let (code, message) = (failure.code, failure.message.clone());
        call.state = State::Failed;
        call.arguments = String::new(); // freed: nothing more is kept for it
        call.failure = Some(failure);
        Err(Event::Failed {
            slot,
            code,
            message,
        })
    }

    /// The slot of the call a fragment belongs to, starting a call when needed. A call that
    /// starts at a later index completes the open calls before it whose arguments are whole.
    fn slot_for(&mut self, delta: &Delta, events: &mut Vec<Event>) -> usize {
        if let Some(&slot) = self.by_index.get(&delta.index) {
            let same = match (&delta.id, &self.calls[slot].id) {
                (Some(new), Some(old)) => new == old,
                (Some(_), None) => {
                    self.calls[slot].name.is_empty() && self.calls[slot].arguments.is_empty()
                }
                (None, _) => true,
            };
            if same {
                if self.calls[slot].id.is_none() {
                    self.calls[slot].id.clone_from(&delta.id);
                }
                return slot;
            }
        }
        let calls = &mut self.calls;
        self.maybe_open.retain(|&call_slot| {
            let call = &mut calls[call_slot];
            if call.state == State::Open && call.scan.is_whole() && call.index <= delta.index {
                call.state = State::Complete;
                events.push(Event::Completed { slot: call_slot });
            }
            call.state == State::Open
        });
        let slot = self.add_call(Call {
            index: delta.index,
            id: delta.id.clone(),
            name: String::new(),
            arguments: String::new(),
            scan: ValueScan::default(),
            state: State::Open,
            failure: None,
            lost_line: false,
            repeated: None,
        });
        self.maybe_open.push(slot);
        self.by_index.insert(delta.index, slot);
        events.push(Event::Started {
            slot,
            index: delta.index,
            id: delta.id.clone(),
        });
        slot
    }

    /// A line of the stream longer than `limit` bytes was dropped unread. Every open call may
    /// have had a fragment in it, so each fails (TLP-007) rather than complete without it; when
    /// none is open, the line may have held whole calls, and a failed entry after the last index
    /// reports the loss. Returns the events and the index of that entry, if one was made.
    pub fn refuse_line(&mut self, limit: usize) -> (Vec<Event>, Option<usize>) {
        let error = Error {
            kind: ErrorKind::TooLarge {
                size: limit + 1,
                limit,
            },
            position: 0,
        };
        let mut events = Vec::new();
        for (slot, call) in self.calls.iter_mut().enumerate() {
            if call.state != State::Open {
                continue;
            }
            let message = format!(
                "A line of the stream went over {limit} bytes while call {} was open: its \
                 fragments in that line were lost",
                call.index
            );
            call.state = State::Failed;
            call.arguments = String::new();
            call.failure = Some(Failure {
                code: error.code(),
                message: message.clone(),
                suggestion: error.suggestion(),
            });
            events.push(Event::Failed {
                slot,
                code: error.code(),
                message,
            });
        }
        if !events.is_empty() {
            return (events, None);
        }
        let index = self.calls.iter().map(|c| c.index + 1).max().unwrap_or(0);
        let message = format!(
            "A line of the stream went over {limit} bytes and was dropped unread: any tool call \
             in it is lost"
        );
        // Not keyed by its index: a call that arrives at that index later is a call of its own.
        let slot = self.add_call(Call {
            index,
            id: None,
            name: String::new(),
            arguments: String::new(),
            scan: ValueScan::default(),
            state: State::Failed,
            failure: Some(Failure {
                code: error.code(),
                message: message.clone(),
                suggestion: error.suggestion(),
            }),
            lost_line: true,
            repeated: None,
        });
        events.push(Event::Started {
            slot,
            index,
            id: None,
        });
        events.push(Event::Failed {
            slot,
            code: error.code(),
            message,
        });
        (events, Some(index))
    }

    /// Adds a call and gives its slot, placed in the order calls are handed out (after the last
    /// one but for a call at a lower index than some before it, which is rare).
    fn add_call(&mut self, call: Call) -> usize {
        let slot = self.calls.len();
        let key = (call.index, slot);
        self.calls.push(call);
        let calls = &self.calls;
        let at = self
            .by_order
            .partition_point(|&s| (calls[s].index, s) < key);
        self.by_order.insert(at, slot);
        self.untaken_from = self.untaken_from.min(at);
        slot
    }

    /// The end of the turn was announced (finish_reason, done): every open call is complete.
    pub fn end_of_turn(&mut self) -> Vec<Event> {
        let mut events = Vec::new();
        for (slot, call) in self.calls.iter_mut().enumerate() {
            if call.state == State::Open {
                call.state = State::Complete;
                events.push(Event::Completed { slot });
            }
        }
        events
    }

    /// The complete calls not yet handed out, in index order (then arrival order); calls before
    /// an open one wait for it, so calls come out in order. Their arguments are repaired here.
    pub fn take_completed(&mut self) -> Vec<Result<AssembledCall, FailedCall>> {
        self.take_completed_with(|_, _| false)
    }

    /// `take_completed`, told by `known_valid(slot, arguments)` which arguments the caller has
    /// read as strict JSON already (an incremental reader that completed them): those are not
    /// validated again.
    pub fn take_completed_with(
        &mut self,
        known_valid: impl Fn(usize, &str) -> bool,
    ) -> Vec<Result<AssembledCall, FailedCall>> {
        let mut out = Vec::new();
        for &slot in &self.by_order[self.untaken_from..] {
            match self.calls[slot].state {
                State::Open => break,
                State::Complete | State::Failed => {
                    let valid = known_valid(slot, &self.calls[slot].arguments);
                    out.push(self.assemble(slot, valid));
                }
                State::Taken => {}
            }
            self.calls[slot].state = State::Taken;
            self.untaken_from += 1;
        }
        out
    }

    /// The stream ended: every call that is left, complete or not, repaired where cut off.
    pub fn finish(&mut self) -> Vec<Result<AssembledCall, FailedCall>> {
        self.finish_with(|_, _| false)
    }

    /// `finish`, with `known_valid` as for `take_completed_with`.
    pub fn finish_with(
        &mut self,
        known_valid: impl Fn(usize, &str) -> bool,
    ) -> Vec<Result<AssembledCall, FailedCall>> {
        self.end_of_turn();
        let mut out = self.take_completed_with(known_valid);
        for slot in std::mem::take(&mut self.late) {
            out.push(self.assemble(slot, false));
        }
        out
    }

    /// The arguments text so far of the call in `slot`.
    pub fn arguments(&self, slot: usize) -> Option<&str> {
        self.calls.get(slot).map(|c| c.arguments.as_str())
    }

    /// The index and id of the call in `slot`.
    pub fn call_key(&self, slot: usize) -> (usize, Option<String>) {
        let call = &self.calls[slot];
        (call.index, call.id.clone())
    }

    /// The slot of the newest call at `index`.
    pub fn slot_of(&self, index: usize) -> Option<usize> {
        self.by_index.get(&index).copied()
    }

    // A failed call carries as much as an assembled one; both are handed out by value.
    #[allow(clippy::result_large_err)]
    fn assemble(&self, slot: usize, known_valid: bool) -> Result<AssembledCall, FailedCall> {
        let call = &self.calls[slot];
        let failed = |code, message: String, position, suggestion| FailedCall {
            index: call.index,
            id: call.id.clone(),
            name: call.name.clone(),
            raw_arguments: call.arguments.clone(),
            code,
            message,
            position,
            suggestion,
            lost_line: call.lost_line,
            handed_out: call.state == State::Taken,
        };
        if let Some(f) = &call.failure {
            return Err(failed(f.code, f.message.clone(), None, f.suggestion));
        }
        let text = if call.arguments.trim().is_empty() {
            "{}"
        } else {
            call.arguments.as_str()
        };
        let (arguments, mut repairs) = if known_valid {
            (text.to_owned(), Vec::new())
        } else if let Some(repeated) =
            glued_objects(text.as_bytes()).and_then(|g| repeated_object(text.as_bytes(), g))
        {
            // The whole arguments and their repeats, split differently across the deltas.
            let repair = repeated.repair();
            (text[..repeated.first_end].trim().to_owned(), vec![repair])
        } else {
            match repair(text.as_bytes(), &self.limits) {
                Ok(r) => (r.json.into_owned(), r.repairs),
                Err(e) => {
                    return Err(failed(
                        e.code(),
                        format!("Arguments could not be parsed: {e}"),
                        Some(e.position),
                        e.suggestion(),
                    ))
                }
            }
        };
        if let Some((position, count)) = call.repeated {
            repairs.push(Repair {
                kind: RepairKind::RepeatedArguments,
                position,
                count,
            });
        }
        Ok(AssembledCall {
            slot,
            index: call.index,
            id: call.id.clone(),
            name: call.name.clone(),
            arguments,
            raw_arguments: call.arguments.clone(),
            repairs,
        })
    }
}

/// Several whole JSON objects one after another, glued or spaced (`{"city":"Paris"}{"city":
/// "Rome"}`, as some proxies join parallel calls): how many, where the first ends and where
/// the second starts. Read without building values, so text that is something else costs a
/// scan only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Glued {
    pub count: usize,
    pub first_end: usize,
    pub second_start: usize,
}

/// The objects glued in `bytes` (see [`Glued`]); None for one value, anything but objects, or
/// text that is not strict JSON.
pub fn glued_objects(bytes: &[u8]) -> Option<Glued> {
    let mut values =
        serde_json::Deserializer::from_slice(bytes).into_iter::<serde::de::IgnoredAny>();
    let mut glued = Glued {
        count: 0,
        first_end: 0,
        second_start: 0,
    };
    loop {
        let start = crate::scan::skip_ws(bytes, values.byte_offset());
        match values.next() {
            None => break,
            Some(Ok(_)) if bytes.get(start) == Some(&b'{') => {
                glued.count += 1;
                match glued.count {
                    1 => glued.first_end = values.byte_offset(),
                    2 => glued.second_start = start,
                    _ => {}
                }
            }
            Some(_) => return None,
        }
    }
    (glued.count >= 2).then_some(glued)
}

/// Glued objects that are one object and its repeats (by value): where the first ends, where
/// the second starts and how many follow it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repeated {
    pub first_end: usize,
    pub second_start: usize,
    pub repeats: u32,
}

impl Repeated {
    /// The repair record of the repeats dropped.
    pub fn repair(self) -> Repair {
        Repair {
            kind: RepairKind::RepeatedArguments,
            position: self.second_start,
            count: self.repeats,
        }
    }
}

/// The objects glued in `bytes` when each is the first again; None when any differs.
pub fn repeated_object(bytes: &[u8], glued: Glued) -> Option<Repeated> {
    let mut values = serde_json::Deserializer::from_slice(bytes).into_iter::<serde_json::Value>();
    let first = values.next()?.ok()?;
    values
        .all(|value| value.is_ok_and(|v| v == first))
        .then_some(Repeated {
            first_end: glued.first_end,
            second_start: glued.second_start,
            repeats: u32::try_from(glued.count - 1).unwrap_or(u32::MAX),
        })
}

/// Whether two texts are each one JSON object, and the same one.
fn same_object(a: &[u8], b: &[u8]) -> bool {
    let object = |text| {
        serde_json::from_slice::<serde_json::Value>(text)
            .ok()
            .filter(|v| v.is_object())
    };
    matches!((object(a), object(b)), (Some(a), Some(b)) if a == b)
}

fn over_limits(call: &Call, limits: &Limits) -> Option<Failure> {
    // Depth first: the scan saw only bytes within the size limit, so a depth it reports over the
    // limit was crossed before the size was.
    let (kind, message) = if call.scan.max_depth() > limits.max_depth {
        let kind = ErrorKind::TooDeep {
            limit: limits.max_depth,
        };
        let message = format!(
            "Arguments of call {} nest deeper than the depth limit of {}",
            call.index, limits.max_depth
        );
        (kind, message)
    } else if call.arguments.len() > limits.max_size {
        let kind = ErrorKind::TooLarge {
            size: call.arguments.len(),
            limit: limits.max_size,
        };
        let message = format!(
            "Arguments of call {} went over the size limit of {} bytes while streaming",
            call.index, limits.max_size
        );
        (kind, message)
    } else {
        return None;
    };
    let error = Error { kind, position: 0 };
    Some(Failure {
        code: error.code(),
        message,
        suggestion: error.suggestion(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delta(index: usize, name: Option<&str>, arguments: Option<&str>, complete: bool) -> Delta {
        Delta {
            index,
            id: None,
            name: name.map(String::from),
            arguments: arguments.map(String::from),
            complete,
        }
    }

    fn names(calls: &[Result<AssembledCall, FailedCall>]) -> Vec<String> {
        calls
            .iter()
            .map(|c| c.as_ref().map(|c| c.name.clone()).unwrap_or_default())
            .collect()
    }

    #[test]
    fn fragments_in_order() {
        let mut acc = Accumulator::new(Limits::default());
        for d in [
            delta(0, Some("read"), None, false),
            delta(0, Some("_file"), None, false),
            delta(0, None, Some("{\"pa"), false),
            delta(0, None, Some("th\": "), false),
            delta(0, None, Some("\"test.txt\"}"), false),
        ] {
            acc.feed(d);
        }
        assert!(
            acc.take_completed().is_empty(),
            "nothing complete until complete"
        );
        acc.feed(delta(0, None, None, true));
        let calls = acc.take_completed();
        let call = calls[0].as_ref().unwrap();
        assert_eq!(
            (call.name.as_str(), call.arguments.as_str()),
            ("read_file", "{\"path\": \"test.txt\"}")
        );
    }

    #[test]
    fn interleaved_calls_come_out_by_index() {
        let mut acc = Accumulator::new(Limits::default());
        acc.feed(delta(1, Some("write_file"), None, false));
        acc.feed(delta(0, Some("read_file"), None, false));
        acc.feed(delta(0, None, Some("{\"path\": \"a.txt\"}"), false));
        acc.feed(delta(
            1,
            None,
            Some("{\"path\": \"b.txt\", \"content\": \"hi\"}"),
            false,
        ));
        acc.feed(delta(1, None, None, true));
        assert!(acc.take_completed().is_empty(), "call 0 is still open");
        acc.feed(delta(0, None, None, true));
        assert_eq!(names(&acc.take_completed()), ["read_file", "write_file"]);
    }

    #[test]
    fn a_later_index_completes_a_whole_earlier_call() {
        let mut acc = Accumulator::new(Limits::default());
        acc.feed(delta(0, Some("a"), Some("{\"x\": \"}\"}"), false));
        let events = acc.feed(delta(1, Some("b"), Some("{"), false));
        assert!(events.contains(&Event::Completed { slot: 0 }));
        assert_eq!(names(&acc.take_completed()), ["a"]);
        let rest = acc.finish();
        let b = rest[0].as_ref().unwrap();
        assert_eq!((b.name.as_str(), b.arguments.as_str()), ("b", "{}"));
        assert!(!b.repairs.is_empty());
    }

    #[test]
    fn empty_ids_and_names_repeated_whole_belong_to_the_call_at_their_index() {
        // DeepSeek / DashScope: `"id": ""` after the first delta; proxies: the whole name again.
        let mut acc = Accumulator::new(Limits::default());
        let piece = |id: &str, name: &str, arguments: &str| Delta {
            index: 0,
            id: Some(id.into()),
            name: Some(name.into()),
            arguments: Some(arguments.into()),
            complete: false,
        };
        acc.feed(piece("call_1", "get_weather", ""));
        acc.feed(piece("", "", "{\"city\": "));
        acc.feed(piece("", "get_weather", "\"Paris\"}"));
        let calls = acc.finish();
        assert_eq!(calls.len(), 1);
        let call = calls[0].as_ref().unwrap();
        assert_eq!(
            (
                call.id.as_deref(),
                call.name.as_str(),
                call.arguments.as_str()
            ),
            (Some("call_1"), "get_weather", "{\"city\": \"Paris\"}")
        );
        // A name streamed in pieces is still joined.
        let mut acc = Accumulator::new(Limits::default());
        acc.feed(delta(0, Some("get_"), None, false));
        acc.feed(delta(0, Some("weather"), Some("{}"), false));
        assert_eq!(names(&acc.finish()), ["get_weather"]);
    }

    #[test]
    fn whole_arguments_sent_again_are_dropped_and_noted() {
        let repeated = |position, count| Repair {
            kind: RepairKind::RepeatedArguments,
            position,
            count,
        };
        let only_call = |mut acc: Accumulator| {
            let calls = acc.finish();
            let call = calls[0].as_ref().unwrap();
            (call.arguments.clone(), call.repairs.clone())
        };
        // Streamed in pieces, then sent again whole and written anew (LiteLLM's closing chunk).
        let mut acc = Accumulator::new(Limits::default());
        acc.feed(delta(0, Some("get_weather"), Some("{\"city\": "), false));
        acc.feed(delta(0, None, Some("\"Paris\"}"), false));
        let events = acc.feed(delta(0, None, Some("{\"city\":\"Paris\"}"), false));
        assert!(events.is_empty(), "{events:?}");
        assert_eq!(
            only_call(acc),
            ("{\"city\": \"Paris\"}".into(), vec![repeated(17, 1)])
        );
        // The lean way in drops it too.
        let mut acc = Accumulator::new(Limits::default());
        assert_eq!(acc.extend_arguments(0, "{\"x\": 1}"), None);
        assert_eq!(acc.extend_arguments(0, " {\"x\":1}"), None);
        assert_eq!(only_call(acc), ("{\"x\": 1}".into(), vec![repeated(9, 1)]));
        // Sent again after a later call completed it: no late fragment, no failure.
        let mut acc = Accumulator::new(Limits::default());
        acc.feed(delta(0, Some("a"), Some("{\"x\": 1}"), false));
        acc.feed(delta(1, Some("b"), Some("{}"), false));
        let events = acc.feed(delta(0, None, Some("{\"x\": 1}"), false));
        assert!(events.is_empty(), "{events:?}");
        assert_eq!(names(&acc.finish()), ["a", "b"]);
        // The same text split anywhere else: read from the joined text.
        let mut acc = Accumulator::new(Limits::default());
        acc.feed(delta(0, Some("f"), Some("{\"x\": 1}{\"x"), false));
        acc.feed(delta(0, None, Some("\": 1} {\"x\":1}"), false));
        assert_eq!(only_call(acc), ("{\"x\": 1}".into(), vec![repeated(8, 2)]));
        // Different objects are no repeat: they stay glued (and are refused when checked).
        let mut acc = Accumulator::new(Limits::default());
        acc.feed(delta(0, Some("f"), Some("{\"x\": 1}"), false));
        acc.feed(delta(0, None, Some("{\"x\": 2}"), false));
        let calls = acc.finish();
        let call = calls[0].as_ref().unwrap();
        assert_eq!(call.raw_arguments, "{\"x\": 1}{\"x\": 2}");
        assert!(call
            .repairs
            .iter()
            .all(|r| r.kind != RepairKind::RepeatedArguments));
    }

    #[test]
    fn a_late_fragment_is_never_silent() {
        let failures = |calls: &[Result<AssembledCall, FailedCall>]| {
            calls
                .iter()
                .filter_map(|c| c.as_ref().err().map(|f| (f.index, f.code)))
                .collect::<Vec<_>>()
        };
        // Complete (a later call started) but not handed out: the call fails, whole.
        let mut acc = Accumulator::new(Limits::default());
        acc.feed(delta(0, Some("a"), Some("{\"x\": 1}"), false));
        acc.feed(delta(1, Some("b"), Some("{}"), false));
        let events = acc.feed(delta(0, None, Some(", \"y\": 2}"), false));
        assert!(matches!(events[..], [Event::Failed { .. }]));
        let calls = acc.finish();
        assert_eq!(failures(&calls), [(0, ErrorCode::CallConstruction)]);
        assert_eq!(names(&calls), ["", "b"]);
        // Handed out already: taken as it was, and the refusal is among finish's failures, once.
        let mut acc = Accumulator::new(Limits::default());
        acc.feed(delta(0, Some("a"), Some("{\"x\": 1}"), true));
        assert_eq!(names(&acc.take_completed()), ["a"]);
        acc.feed(delta(0, None, Some(", \"y\": 2}"), false));
        acc.feed(delta(0, None, Some("more"), false));
        assert_eq!(failures(&acc.finish()), [(0, ErrorCode::CallConstruction)]);
    }

    #[test]
    fn many_calls_complete_in_linear_time() {
        // Each new index completes the whole calls before it; only the open ones are looked at.
        let mut acc = Accumulator::new(Limits::default());
        let mut completed = 0;
        let mut taken = 0;
        for i in 0..20_000 {
            for e in acc.feed(delta(i, Some("f"), Some("{}"), false)) {
                completed += usize::from(matches!(e, Event::Completed { .. }));
            }
            assert!(acc.maybe_open.len() <= 1);
            // Handing out starts after the calls already handed out.
            taken += acc.take_completed().len();
            assert_eq!((acc.untaken_from, taken), (i, i));
        }
        assert_eq!(completed, 19_999);
        assert_eq!(acc.finish().len(), 1);
        // A call at a lower index than those handed out is handed out in its turn.
        acc.feed(Delta {
            id: Some("late".into()),
            ..delta(3, Some("late"), Some("{}"), true)
        });
        assert_eq!(names(&acc.take_completed()), ["late"]);
    }

    #[test]
    fn reused_index_with_a_new_id_is_a_new_call() {
        let mut acc = Accumulator::new(Limits::default());
        let with_id = |id: &str, name: &str| Delta {
            index: 0,
            id: Some(id.into()),
            name: Some(name.into()),
            arguments: Some("{}".into()),
            complete: false,
        };
        acc.feed(with_id("c1", "a"));
        acc.feed(with_id("c2", "b"));
        assert_eq!(names(&acc.finish()), ["a", "b"]);
    }

    #[test]
    fn fragment_after_completion_is_an_error_event() {
        let mut acc = Accumulator::new(Limits::default());
        acc.feed(delta(0, Some("a"), Some("{}"), true));
        let events = acc.feed(delta(0, None, Some("x"), false));
        assert!(matches!(
            events[0],
            Event::Failed {
                code: ErrorCode::CallConstruction,
                ..
            }
        ));
    }

    #[test]
    fn limits_fail_the_call_at_the_fragment_that_crosses_them() {
        let mut acc = Accumulator::new(Limits {
            max_size: 10,
            ..Limits::default()
        });
        acc.feed(delta(0, Some("a"), Some("{\"k\": \""), false));
        let events = acc.feed(delta(0, None, Some("0123456789"), false));
        assert!(matches!(
            events.last(),
            Some(Event::Failed {
                code: ErrorCode::TooLarge,
                ..
            })
        ));
        assert_eq!(acc.arguments(0), Some(""));
        let mut deep = Accumulator::new(Limits {
            max_depth: 3,
            ..Limits::default()
        });
        let events = deep.feed(delta(0, Some("a"), Some("[[[["), false));
        assert!(matches!(
            events.last(),
            Some(Event::Failed {
                code: ErrorCode::TooDeepOrTimeout,
                ..
            })
        ));
        let done = deep.finish();
        assert_eq!(
            done[0].as_ref().unwrap_err().code,
            ErrorCode::TooDeepOrTimeout
        );
    }

    /// Found by the accumulator fuzz target: a fragment crossing both limits was failed for its
    /// size when whole and for its depth when split. The limit crossed first in the text wins.
    #[test]
    fn the_limit_crossed_first_is_reported_however_the_text_is_split() {
        let limits = Limits {
            max_size: 8,
            max_depth: 2,
            ..Limits::default()
        };
        let code = |pieces: &[&str]| {
            let mut acc = Accumulator::new(limits);
            for piece in pieces {
                acc.feed(delta(0, None, Some(piece), false));
            }
            acc.finish()[0].as_ref().unwrap_err().code
        };
        let deep_then_large = "[[[ 1234567890";
        assert_eq!(code(&[deep_then_large]), ErrorCode::TooDeepOrTimeout);
        assert_eq!(code(&["[[[", " 1234567890"]), ErrorCode::TooDeepOrTimeout);
        let large_then_deep = "[ 1234567[[[[";
        assert_eq!(code(&[large_then_deep]), ErrorCode::TooLarge);
        assert_eq!(code(&["[ 1234567", "[[[["]), ErrorCode::TooLarge);
    }

    #[test]
    fn finish_repairs_and_reports() {
        let mut acc = Accumulator::new(Limits::default());
        acc.feed(delta(0, Some("t1"), Some("{}"), true));
        acc.feed(delta(1, Some("t2"), Some("{\"a\": 1,"), false));
        acc.feed(delta(2, Some("t3"), Some("nonsense"), false));
        let all = acc.finish();
        assert_eq!(all.len(), 3);
        assert_eq!(all[1].as_ref().unwrap().arguments, "{\"a\": 1}");
        assert_eq!(all[2].as_ref().unwrap_err().code, ErrorCode::Unparseable);
    }

    #[test]
    fn scan_follows_strings_across_fragments() {
        let mut scan = ValueScan::default();
        for piece in ["{\"a\": \"x\\", "\"}", "\"}"] {
            scan.feed(piece.as_bytes());
        }
        assert!(scan.is_whole());
    }
}
