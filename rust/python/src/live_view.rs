//! partial()'s live view: Python objects built from the incremental reader's tokens as a
//! call's arguments stream in. Complete values are built once and kept in the same containers;
//! only the open string is rebuilt. When the call completes as strict JSON, the view's dict is
//! its arguments (not read again from the text).

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use toolmend_core::partial::{Reader, Token};
use toolmend_core::stream::{Accumulator, AssembledCall};

/// Python objects built from the incremental reader's tokens, kept between calls.
#[derive(Default)]
pub(crate) struct LiveView {
    reader: Reader,
    /// Bytes of the call's arguments read so far.
    fed: usize,
    built: Built,
    /// A value could not be built as a Python object; the view stopped there.
    unbuildable: bool,
}

/// The objects of a live view and where the next value goes.
#[derive(Default)]
struct Built {
    root: Option<Py<PyAny>>,
    /// Open containers, innermost last.
    stack: Vec<Open>,
    /// The open string value.
    open: Option<OpenString>,
}

/// An open object or array and the member being written in it.
struct Open {
    container: Py<PyAny>,
    is_dict: bool,
    member: Member,
}

/// Where in its container the value being written goes.
enum Member {
    /// Between members of an object (after a value, before the next key).
    None,
    Key(Py<PyString>),
    /// An array's element (an array keeps its last index between elements).
    Index(usize),
}

/// A string value still arriving. It is put in its container only when shown (by partial() or
/// its end), so a string that opens and closes between two looks is built once.
#[derive(Default)]
struct OpenString {
    text: String,
    /// The container holds all of `text`.
    shown: bool,
    /// The container holds some version of it (an array has its element).
    placed: bool,
}

impl LiveView {
    /// Reads more text. A value Python cannot hold (an int of more digits than Python converts)
    /// stops the view, as text that is not strict JSON does: partial() then falls back to the
    /// repair pass, and completion reads the text again.
    fn read(&mut self, py: Python<'_>, text: &str) {
        if self.unbuildable {
            return;
        }
        let built = &mut self.built;
        let mut failed = false;
        self.reader.feed_with(text, |token| {
            failed = failed || built.apply(py, token).is_err();
        });
        self.unbuildable = failed;
    }

    /// The view follows the text: strict JSON so far, every value built.
    pub(crate) fn is_live(&self) -> bool {
        !self.unbuildable && !self.reader.is_broken()
    }

    /// Where the text read last ended: the JSON Pointer of the innermost member being written.
    pub(crate) fn path(&self, py: Python<'_>) -> Option<String> {
        if !self.is_live() {
            return None;
        }
        let mut path = String::new();
        for open in &self.built.stack {
            match &open.member {
                Member::None => {}
                Member::Key(k) => {
                    path.push('/');
                    let key = k.bind(py).to_cow().unwrap_or_default();
                    for c in key.chars() {
                        match c {
                            '~' => path.push_str("~0"),
                            '/' => path.push_str("~1"),
                            c => path.push(c),
                        }
                    }
                }
                Member::Index(i) => {
                    use std::fmt::Write;
                    let _ = write!(path, "/{i}");
                }
            }
        }
        Some(path)
    }

    pub(crate) fn value<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.built.show_open_string(py)?;
        Ok(self.built.root.as_ref().map(|r| r.bind(py).clone()))
    }
}

impl Built {
    fn apply(&mut self, py: Python<'_>, token: Token<'_>) -> PyResult<()> {
        match token {
            Token::ObjectStart => self.open_container(py, PyDict::new(py).into_any(), true),
            Token::ArrayStart => self.open_container(py, PyList::empty(py).into_any(), false),
            Token::End => {
                self.stack.pop();
                self.member_done();
                Ok(())
            }
            Token::Key(k) => {
                if let Some(top) = self.stack.last_mut() {
                    // Keys repeat (records): jiter's cache hands out one str per key text.
                    top.member = Member::Key(jiter::cached_py_string(py, &k).unbind());
                }
                Ok(())
            }
            Token::StringStart => {
                self.open = Some(OpenString::default());
                // Not in its array yet, but the path already points at it.
                if let Some(top) = self.stack.last_mut().filter(|top| !top.is_dict) {
                    top.member = Member::Index(top.container.bind(py).cast::<PyList>()?.len());
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
                self.show_open_string(py)?;
                self.open = None;
                self.member_done();
                Ok(())
            }
            Token::Number(n) => self.scalar(py, number(py, &n)?),
            Token::Bool(b) => {
                let value = pyo3::types::PyBool::new(py, b)
                    .to_owned()
                    .into_any()
                    .unbind();
                self.scalar(py, value)
            }
            Token::Null => self.scalar(py, py.None()),
        }
    }

    fn open_container(
        &mut self,
        py: Python<'_>,
        container: Bound<'_, PyAny>,
        is_dict: bool,
    ) -> PyResult<()> {
        let container = container.unbind();
        self.place(py, container.clone_ref(py))?;
        self.stack.push(Open {
            container,
            is_dict,
            member: Member::None,
        });
        Ok(())
    }

    fn scalar(&mut self, py: Python<'_>, value: Py<PyAny>) -> PyResult<()> {
        self.place(py, value)?;
        self.member_done();
        Ok(())
    }

    /// Puts a new value where the innermost container expects it (or at the root).
    fn place(&mut self, py: Python<'_>, value: Py<PyAny>) -> PyResult<()> {
        let Some(top) = self.stack.last_mut() else {
            self.root = Some(value);
            return Ok(());
        };
        let container = top.container.bind(py);
        if top.is_dict {
            match &top.member {
                Member::Key(k) => container.cast::<PyDict>()?.set_item(k, value),
                // The reader hands out a key before every member value.
                _ => Ok(()),
            }
        } else {
            let list = container.cast::<PyList>()?;
            top.member = Member::Index(list.len());
            list.append(value)
        }
    }

    /// A member of the innermost object is complete: the path points at the object until the
    /// next key (an array keeps its last index).
    fn member_done(&mut self) {
        if let Some(top) = self.stack.last_mut() {
            if top.is_dict {
                top.member = Member::None;
            }
        }
    }

    /// Puts the open string's text in its container (O(its length)), if it is not there yet.
    fn show_open_string(&mut self, py: Python<'_>) -> PyResult<()> {
        let Some(open) = &mut self.open else {
            return Ok(());
        };
        if open.shown {
            return Ok(());
        }
        let value = PyString::new(py, &open.text).into_any().unbind();
        open.shown = true;
        if !std::mem::replace(&mut open.placed, true) {
            return self.place(py, value);
        }
        match self.stack.last() {
            None => {
                self.root = Some(value); // the arguments are one string
                Ok(())
            }
            Some(top) => {
                let container = top.container.bind(py);
                match &top.member {
                    Member::Key(k) => container.cast::<PyDict>()?.set_item(k, value),
                    Member::Index(i) => container.cast::<PyList>()?.set_item(*i, value),
                    Member::None => Ok(()),
                }
            }
        }
    }
}

/// True when the live view of `slot` has read all of `text` and found it one whole strict JSON
/// value (what the reader completes, the strict validator accepts).
pub(crate) fn read_whole(views: &[LiveView], slot: usize, text: &str) -> bool {
    views
        .get(slot)
        .is_some_and(|view| view.fed == text.len() && view.is_live() && view.reader.is_complete())
}

/// A JSON number as Python's int or float (ints of any size, as json.loads reads them). A number
/// past the range of a double is an error: it stops the view, and the call's text is then read
/// again, where it is refused.
fn number(py: Python<'_>, text: &str) -> PyResult<Py<PyAny>> {
    let integer = !text.contains(['.', 'e', 'E']);
    if integer {
        if let Ok(i) = text.parse::<i64>() {
            return Ok(i.into_pyobject(py)?.into_any().unbind());
        }
    }
    let f = text.parse::<f64>().unwrap_or(f64::NAN);
    if f.is_infinite() {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "number out of range",
        ));
    }
    if integer {
        return Ok(py.get_type::<pyo3::types::PyInt>().call1((text,))?.unbind());
    }
    Ok(f.into_pyobject(py)?.into_any().unbind())
}

/// The live view of the call in `slot`, brought up to date with its arguments text.
pub(crate) fn catch_up<'v>(
    py: Python<'_>,
    views: &'v mut Vec<LiveView>,
    calls: &Accumulator,
    slot: usize,
) -> &'v mut LiveView {
    let text = calls.arguments(slot).unwrap_or_default();
    if views.len() <= slot {
        views.resize_with(slot + 1, LiveView::default);
    }
    let view = &mut views[slot];
    if text.len() < view.fed {
        *view = LiveView::default(); // the buffer was freed (the call failed)
    }
    view.read(py, &text[view.fed..]);
    view.fed = text.len();
    view
}

/// The live view's value of an assembled call, when it holds exactly its arguments: all of the
/// text read, strict JSON (nothing repaired), one whole object.
pub(crate) fn whole_view<'py>(
    py: Python<'py>,
    views: &[LiveView],
    call: &AssembledCall,
) -> Option<Bound<'py, PyAny>> {
    if !call.repairs.is_empty() || !read_whole(views, call.slot, &call.raw_arguments) {
        return None;
    }
    let root = views[call.slot].built.root.as_ref()?.bind(py);
    root.is_instance_of::<PyDict>().then(|| root.clone())
}
