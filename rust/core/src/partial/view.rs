//! Live views of streamed arguments: values built from the reader's tokens as a call's arguments
//! arrive, kept between looks. A complete value is built once and stays in its container; only
//! the open string is rebuilt, and only when it is looked at. When the call completes as strict
//! JSON, the view's value is its arguments (not read again from the text).
//!
//! The values are the host's (Python objects in the binding), made through `Builder`; every
//! decision about where a value goes, what path the text ended in and whether the view still
//! follows the text is made here.

use std::borrow::Cow;

use super::{Reader, Token};
use crate::pointer::escape_pointer;
use crate::stream::{Accumulator, AssembledCall};

/// How a host makes and fills values. Containers are shared handles: a container put in its
/// parent is still filled through the handle the view keeps.
pub trait Builder {
    type Value;
    type Key;
    type Error;

    fn object(&mut self) -> Result<Self::Value, Self::Error>;
    fn array(&mut self) -> Result<Self::Value, Self::Error>;
    fn key(&mut self, text: &str) -> Self::Key;
    /// The key's text, for paths.
    fn key_text<'k>(&self, key: &'k Self::Key) -> Cow<'k, str>;
    fn string(&mut self, text: &str) -> Result<Self::Value, Self::Error>;
    /// A JSON number as the host holds it; an error (a number it cannot hold) stops the view.
    fn number(&mut self, text: &str) -> Result<Self::Value, Self::Error>;
    fn boolean(&mut self, value: bool) -> Self::Value;
    fn null(&mut self) -> Self::Value;
    /// A second handle to the same value.
    fn share(&self, value: &Self::Value) -> Self::Value;
    fn is_object(&self, value: &Self::Value) -> bool;
    fn set(
        &mut self,
        object: &Self::Value,
        key: &Self::Key,
        value: Self::Value,
    ) -> Result<(), Self::Error>;
    fn push(&mut self, array: &Self::Value, value: Self::Value) -> Result<(), Self::Error>;
    fn replace(
        &mut self,
        array: &Self::Value,
        index: usize,
        value: Self::Value,
    ) -> Result<(), Self::Error>;
}

/// The values built from one call's arguments so far, and where the next one goes.
pub struct View<V, K> {
    reader: Reader,
    /// Bytes of the call's arguments read so far.
    fed: usize,
    root: Option<V>,
    /// Open containers, innermost last.
    stack: Vec<Open<V, K>>,
    /// The string value still arriving.
    open: Option<OpenString>,
    /// A value could not be built; the view stopped there.
    unbuildable: bool,
}

impl<V, K> Default for View<V, K> {
    fn default() -> Self {
        View {
            reader: Reader::default(),
            fed: 0,
            root: None,
            stack: Vec::new(),
            open: None,
            unbuildable: false,
        }
    }
}

/// An open object or array and the member being written in it.
struct Open<V, K> {
    container: V,
    is_object: bool,
    /// Elements an array holds (its next index).
    len: usize,
    member: Member<K>,
}

/// Where in its container the value being written goes.
enum Member<K> {
    /// Between members of an object (after a value, before the next key).
    None,
    Key(K),
    /// An array's element (an array keeps its last index between elements).
    Index(usize),
}

/// A string value still arriving. It is put in its container only when shown (by a look or its
/// end), so a string that opens and closes between two looks is built once.
#[derive(Default)]
struct OpenString {
    text: String,
    /// The container holds all of `text`.
    shown: bool,
    /// The container holds some version of it (an array has its element).
    placed: bool,
}

impl<V, K> View<V, K> {
    /// Reads more text. A value the host cannot build stops the view, as text that is not
    /// strict JSON does: a look then falls back to the repair pass, and completion reads the
    /// text again.
    pub fn read<B: Builder<Value = V, Key = K>>(&mut self, builder: &mut B, text: &str) {
        self.fed += text.len();
        if self.unbuildable {
            return;
        }
        let mut failed = false;
        let mut reader = std::mem::take(&mut self.reader);
        reader.feed_with(text, |token| {
            failed = failed || self.apply(builder, token).is_err();
        });
        self.reader = reader;
        self.unbuildable = failed;
    }

    /// The view follows the text: strict JSON so far, every value built.
    pub fn is_live(&self) -> bool {
        !self.unbuildable && !self.reader.is_broken()
    }

    /// All of `text` read, and one whole strict JSON value in it.
    pub fn holds_whole(&self, text: &str) -> bool {
        self.fed == text.len() && self.is_live() && self.reader.is_complete()
    }

    /// Where the text read last ended: the JSON Pointer of the innermost member being written.
    pub fn path<B: Builder<Value = V, Key = K>>(&self, builder: &B) -> Option<String> {
        if !self.is_live() {
            return None;
        }
        let mut path = String::with_capacity(8 * self.stack.len());
        for open in &self.stack {
            match &open.member {
                Member::None => {}
                Member::Key(k) => {
                    path.push('/');
                    path.push_str(&escape_pointer(&builder.key_text(k)));
                }
                Member::Index(i) => {
                    path.push('/');
                    path.push_str(itoa::Buffer::new().format(*i));
                }
            }
        }
        Some(path)
    }

    /// The value so far, the open string shown in full.
    pub fn value<B: Builder<Value = V, Key = K>>(
        &mut self,
        builder: &mut B,
    ) -> Result<Option<V>, B::Error> {
        self.show_open_string(builder)?;
        Ok(self.root.as_ref().map(|r| builder.share(r)))
    }

    fn apply<B: Builder<Value = V, Key = K>>(
        &mut self,
        b: &mut B,
        token: Token<'_>,
    ) -> Result<(), B::Error> {
        match token {
            Token::ObjectStart => {
                let object = b.object()?;
                self.open_container(b, object, true)
            }
            Token::ArrayStart => {
                let array = b.array()?;
                self.open_container(b, array, false)
            }
            Token::End => {
                self.stack.pop();
                self.member_done();
                Ok(())
            }
            Token::Key(k) => {
                if let Some(top) = self.stack.last_mut() {
                    top.member = Member::Key(b.key(&k));
                }
                Ok(())
            }
            Token::StringStart => {
                self.open = Some(OpenString::default());
                // Not in its array yet, but the path already points at it.
                if let Some(top) = self.stack.last_mut().filter(|top| !top.is_object) {
                    top.member = Member::Index(top.len);
                }
                Ok(())
            }
            Token::StringText(t) => {
                if let Some(open) = &mut self.open {
                    open.text.push_str(&t);
                    open.shown = false;
                }
                Ok(())
            }
            Token::StringEnd => {
                self.show_open_string(b)?;
                self.open = None;
                self.member_done();
                Ok(())
            }
            Token::Number(n) => {
                let value = b.number(&n)?;
                self.scalar(b, value)
            }
            Token::Bool(v) => {
                let value = b.boolean(v);
                self.scalar(b, value)
            }
            Token::Null => {
                let value = b.null();
                self.scalar(b, value)
            }
        }
    }

    fn open_container<B: Builder<Value = V, Key = K>>(
        &mut self,
        b: &mut B,
        container: V,
        is_object: bool,
    ) -> Result<(), B::Error> {
        self.place(b, b.share(&container))?;
        self.stack.push(Open {
            container,
            is_object,
            len: 0,
            member: Member::None,
        });
        Ok(())
    }

    fn scalar<B: Builder<Value = V, Key = K>>(
        &mut self,
        b: &mut B,
        value: V,
    ) -> Result<(), B::Error> {
        self.place(b, value)?;
        self.member_done();
        Ok(())
    }

    /// Puts a new value where the innermost container expects it (or at the root).
    fn place<B: Builder<Value = V, Key = K>>(
        &mut self,
        b: &mut B,
        value: V,
    ) -> Result<(), B::Error> {
        let Some(top) = self.stack.last_mut() else {
            self.root = Some(value);
            return Ok(());
        };
        if top.is_object {
            match &top.member {
                Member::Key(k) => b.set(&top.container, k, value),
                // The reader hands out a key before every member value.
                _ => Ok(()),
            }
        } else {
            top.member = Member::Index(top.len);
            top.len += 1;
            b.push(&top.container, value)
        }
    }

    /// A member of the innermost object is complete: the path points at the object until the
    /// next key (an array keeps its last index).
    fn member_done(&mut self) {
        if let Some(top) = self.stack.last_mut() {
            if top.is_object {
                top.member = Member::None;
            }
        }
    }

    /// Puts the open string's text in its container (O(its length)), if it is not there yet.
    fn show_open_string<B: Builder<Value = V, Key = K>>(
        &mut self,
        b: &mut B,
    ) -> Result<(), B::Error> {
        let Some(open) = &mut self.open else {
            return Ok(());
        };
        if open.shown {
            return Ok(());
        }
        let value = b.string(&open.text)?;
        open.shown = true;
        if !std::mem::replace(&mut open.placed, true) {
            return self.place(b, value);
        }
        match self.stack.last() {
            None => {
                self.root = Some(value); // the arguments are one string
                Ok(())
            }
            Some(top) => match &top.member {
                Member::Key(k) => b.set(&top.container, k, value),
                Member::Index(i) => b.replace(&top.container, *i, value),
                Member::None => Ok(()),
            },
        }
    }
}

/// The live views of a stream's calls, by the accumulator's call slot.
pub struct Views<V, K> {
    views: Vec<View<V, K>>,
}

impl<V, K> Default for Views<V, K> {
    fn default() -> Self {
        Views { views: Vec::new() }
    }
}

impl<V, K> Views<V, K> {
    /// The view of the call in `slot`, brought up to date with its arguments text.
    pub fn catch_up<B: Builder<Value = V, Key = K>>(
        &mut self,
        builder: &mut B,
        calls: &Accumulator,
        slot: usize,
    ) -> &mut View<V, K> {
        let text = calls.arguments(slot).unwrap_or_default();
        if self.views.len() <= slot {
            self.views.resize_with(slot + 1, View::default);
        }
        let view = &mut self.views[slot];
        if text.len() < view.fed {
            *view = View::default(); // the buffer was freed (the call failed)
        }
        view.read(builder, &text[view.fed..]);
        view
    }

    /// True when the view of `slot` has read all of `text` and found it one whole strict JSON
    /// value (what the reader completes, the strict validator accepts).
    pub fn holds_whole(&self, slot: usize, text: &str) -> bool {
        self.views.get(slot).is_some_and(|v| v.holds_whole(text))
    }

    /// The view's value of an assembled call when it is exactly its arguments: all of the text
    /// read, strict JSON (nothing repaired), one whole object.
    pub fn whole_object<B: Builder<Value = V, Key = K>>(
        &self,
        builder: &B,
        call: &AssembledCall,
    ) -> Option<V> {
        if !call.repairs.is_empty() || !self.holds_whole(call.slot, &call.raw_arguments) {
            return None;
        }
        let root = self.views[call.slot].root.as_ref()?;
        builder.is_object(root).then(|| builder.share(root))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// Values in an arena, handles are indices: containers are shared as a host's objects are.
    #[derive(Default)]
    struct Arena {
        nodes: Vec<Node>,
    }

    enum Node {
        Object(Vec<(String, usize)>),
        Array(Vec<usize>),
        Scalar(Value),
    }

    impl Arena {
        fn add(&mut self, node: Node) -> usize {
            self.nodes.push(node);
            self.nodes.len() - 1
        }

        fn json(&self, handle: usize) -> Value {
            match &self.nodes[handle] {
                Node::Object(members) => {
                    let mut map = serde_json::Map::new();
                    for (k, v) in members {
                        map.insert(k.clone(), self.json(*v));
                    }
                    Value::Object(map)
                }
                Node::Array(items) => Value::Array(items.iter().map(|i| self.json(*i)).collect()),
                Node::Scalar(v) => v.clone(),
            }
        }
    }

    impl Builder for Arena {
        type Value = usize;
        type Key = String;
        type Error = String;

        fn object(&mut self) -> Result<usize, String> {
            Ok(self.add(Node::Object(Vec::new())))
        }
        fn array(&mut self) -> Result<usize, String> {
            Ok(self.add(Node::Array(Vec::new())))
        }
        fn key(&mut self, text: &str) -> String {
            text.to_owned()
        }
        fn key_text<'k>(&self, key: &'k String) -> Cow<'k, str> {
            Cow::Borrowed(key)
        }
        fn string(&mut self, text: &str) -> Result<usize, String> {
            Ok(self.add(Node::Scalar(json!(text))))
        }
        fn number(&mut self, text: &str) -> Result<usize, String> {
            // This host holds no number past a double's range.
            match text.parse::<f64>() {
                Ok(f) if f.is_finite() => {
                    let value = serde_json::from_str(text).map_err(|e| e.to_string())?;
                    Ok(self.add(Node::Scalar(value)))
                }
                _ => Err(format!("cannot hold {text}")),
            }
        }
        fn boolean(&mut self, value: bool) -> usize {
            self.add(Node::Scalar(json!(value)))
        }
        fn null(&mut self) -> usize {
            self.add(Node::Scalar(Value::Null))
        }
        fn share(&self, value: &usize) -> usize {
            *value
        }
        fn is_object(&self, value: &usize) -> bool {
            matches!(self.nodes[*value], Node::Object(_))
        }
        fn set(&mut self, object: &usize, key: &String, value: usize) -> Result<(), String> {
            let Node::Object(members) = &mut self.nodes[*object] else {
                return Err("not an object".into());
            };
            match members.iter_mut().find(|(k, _)| k == key) {
                Some(member) => member.1 = value,
                None => members.push((key.clone(), value)),
            }
            Ok(())
        }
        fn push(&mut self, array: &usize, value: usize) -> Result<(), String> {
            let Node::Array(items) = &mut self.nodes[*array] else {
                return Err("not an array".into());
            };
            items.push(value);
            Ok(())
        }
        fn replace(&mut self, array: &usize, index: usize, value: usize) -> Result<(), String> {
            let Node::Array(items) = &mut self.nodes[*array] else {
                return Err("not an array".into());
            };
            items[index] = value;
            Ok(())
        }
    }

    /// The view's value after reading `pieces` one by one, looked at after each.
    fn looks(pieces: &[&str]) -> (Vec<Value>, View<usize, String>, Arena) {
        let mut arena = Arena::default();
        let mut view = View::default();
        let mut seen = Vec::new();
        for piece in pieces {
            view.read(&mut arena, piece);
            let value = view.value(&mut arena).unwrap();
            seen.push(value.map_or(Value::Null, |v| arena.json(v)));
        }
        (seen, view, arena)
    }

    #[test]
    fn a_value_read_a_byte_at_a_time_ends_as_the_whole_text_reads() {
        let text = r#"{"a": [1, "xy", {"b": null}, true], "c": "h\u00e9llo", "d": -2.5e3}"#;
        let pieces: Vec<String> = text.chars().map(String::from).collect();
        let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
        let (seen, view, _) = looks(&pieces);
        let whole: Value = serde_json::from_str(text).unwrap();
        assert_eq!(seen.last(), Some(&whole));
        assert!(view.holds_whole(text));
        assert!(!view.holds_whole(&text[1..]));
    }

    #[test]
    fn an_open_string_is_shown_whole_and_replaced_in_place() {
        let (seen, ..) = looks(&[r#"{"s": "ab"#, r#"cd", "t": ["x"#, r#"y", "z"#, r#""]}"#]);
        assert_eq!(
            seen,
            vec![
                json!({"s": "ab"}),
                json!({"s": "abcd", "t": ["x"]}),
                json!({"s": "abcd", "t": ["xy", "z"]}),
                json!({"s": "abcd", "t": ["xy", "z"]}),
            ]
        );
    }

    #[test]
    fn the_path_points_at_the_member_being_written() {
        let mut arena = Arena::default();
        let mut view = View::default();
        let mut path = |piece: &str| {
            view.read(&mut arena, piece);
            view.path(&arena)
        };
        assert_eq!(path(r#"{"a/b~": [1, "x"#).as_deref(), Some("/a~1b~0/1"));
        assert_eq!(path(r#"", 2"#).as_deref(), Some("/a~1b~0/1"));
        assert_eq!(path(r#", 3], "#).as_deref(), Some(""));
        assert_eq!(path(r#""c": {"d": tr"#).as_deref(), Some("/c/d"));
    }

    #[test]
    fn a_number_the_host_cannot_hold_or_text_not_json_stops_the_view() {
        let (_, view, arena) = looks(&[r#"{"n": 1e999, "m": 1}"#]);
        assert!(!view.is_live() && view.path(&arena).is_none());
        let text = "{'a': 1}";
        let (seen, view, _) = looks(&[text]);
        assert!(!view.is_live() && !view.holds_whole(text));
        assert_eq!(seen, vec![json!({})]);
    }

    fn json_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            (-1e12f64..1e12).prop_map(|f| json!(f)),
            ".{0,12}".prop_map(Value::String),
        ];
        leaf.prop_recursive(5, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::btree_map("[a-z/~\"]{0,5}", inner, 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    use proptest::strategy::Strategy;

    proptest::proptest! {
        /// Split anywhere (on char boundaries) and looked at after every piece, an object or
        /// array ends as the value it is. (A bare number may go on: it is never whole alone.)
        #[test]
        fn any_split_ends_as_the_whole_value(
            value in json_value().prop_filter("a container", |v| v.is_object() || v.is_array()),
            cuts in proptest::collection::vec(0usize..200, 0..12),
        ) {
            let text = value.to_string();
            let mut at: Vec<usize> = cuts
                .into_iter()
                .map(|c| c % (text.len() + 1))
                .filter(|&c| text.is_char_boundary(c))
                .collect();
            at.push(0);
            at.push(text.len());
            at.sort_unstable();
            at.dedup();
            let pieces: Vec<&str> = at.windows(2).map(|w| &text[w[0]..w[1]]).collect();
            let (seen, view, _) = looks(&pieces);
            proptest::prop_assert_eq!(seen.last(), Some(&value));
            proptest::prop_assert!(view.holds_whole(&text));
        }
    }
}
