//! Batches: `repair_many` and `loads_many`, the repair passes spread over worker threads (pure
//! Rust, no GIL; toolmend_core::batch) while this thread, holding the GIL, builds each result as
//! soon as it is ready. Results are the same as a loop of `repair` / `loads`.

use std::borrow::Cow;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use toolmend_core::batch::overlapped;
use toolmend_core::loads::{build_stage, fast_stage, loads_limits, mend_stage, Mending};
use toolmend_core::{Error, Limits};

use crate::convert::bounded_input;
use crate::repair::{load_error, repair_result, LoadError, PyObjects, RepairResult};

fn checked_threads(threads: Option<usize>) -> PyResult<Option<usize>> {
    match threads {
        Some(0) => Err(PyValueError::new_err("threads must be at least 1")),
        other => Ok(other),
    }
}

/// `repair` of every text (str, bytes or bytearray), the passes run on `threads` threads (all
/// cores by default) with the GIL released: the same results as `[repair(t) for t in texts]`.
#[pyfunction]
#[pyo3(signature = (texts, *, max_size = Limits::DEFAULT.max_size, max_depth = Limits::DEFAULT.max_depth, timeout_ms = Limits::DEFAULT.timeout_ms, threads = None))]
pub fn repair_many(
    py: Python<'_>,
    texts: &Bound<'_, PyAny>,
    max_size: usize,
    max_depth: usize,
    timeout_ms: u64,
    threads: Option<usize>,
) -> PyResult<Vec<Py<RepairResult>>> {
    let threads = checked_threads(threads)?;
    let texts = texts.try_iter()?.collect::<PyResult<Vec<_>>>()?;
    let inputs = texts
        .iter()
        .map(|t| bounded_input(t, max_size))
        .collect::<PyResult<Vec<Result<Cow<'_, [u8]>, Error>>>>()?;
    let limits = Limits {
        max_size,
        max_depth,
        timeout_ms,
    };
    let mut results = Vec::with_capacity(texts.len());
    let mut texts_in_order = texts.iter();
    overlapped::<_, _, PyErr>(
        &inputs,
        threads,
        |input| match input {
            Ok(bytes) => toolmend_core::repair(bytes, &limits),
            Err(too_large) => Err(too_large.clone()),
        },
        |outcome| {
            let text = texts_in_order.next().expect("one outcome per text");
            results.push(repair_result(py, text, outcome)?);
            Ok(())
        },
    )?;
    Ok(results)
}

/// `loads` of every text: valid texts are parsed by orjson, the others mended on `threads`
/// threads with the GIL released, then built into objects. With `errors="raise"` the first
/// failure raises its ParseError, as a loop of `loads` would; with `errors="return"` the
/// ParseError takes the text's place in the list.
#[pyfunction]
#[pyo3(signature = (texts, *, max_size = Limits::DEFAULT.max_size, max_depth = Limits::DEFAULT.max_depth, timeout_ms = Limits::DEFAULT.timeout_ms, threads = None, errors = "raise"))]
#[allow(clippy::too_many_arguments)]
pub fn loads_many<'py>(
    py: Python<'py>,
    texts: &Bound<'py, PyAny>,
    max_size: usize,
    max_depth: usize,
    timeout_ms: u64,
    threads: Option<usize>,
    errors: &str,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let threads = checked_threads(threads)?;
    let raise = match errors {
        "raise" => true,
        "return" => false,
        other => {
            return Err(PyValueError::new_err(format!(
                "errors must be 'raise' or 'return', not {other:?}"
            )))
        }
    };
    let limits = loads_limits(&Limits {
        max_size,
        max_depth,
        timeout_ms,
    });
    let texts = texts.try_iter()?.collect::<PyResult<Vec<_>>>()?;
    let inputs = texts
        .iter()
        .map(|t| bounded_input(t, max_size))
        .collect::<PyResult<Vec<_>>>()?;
    // Valid texts first, under the GIL (orjson); the rest wait for the mending pass.
    let mut loaded: Vec<Option<Result<Bound<'py, PyAny>, LoadError>>> = Vec::new();
    let mut to_mend: Vec<(usize, &[u8])> = Vec::new();
    for (i, (text, input)) in texts.iter().zip(&inputs).enumerate() {
        loaded.push(match input {
            Err(too_large) => Some(Err(LoadError::Core(too_large.clone()))),
            Ok(bytes) => match fast_stage(&PyObjects { py, text }, bytes, &limits)? {
                Some(value) => Some(Ok(value)),
                None => {
                    to_mend.push((i, bytes));
                    None
                }
            },
        });
    }
    let mut mended = to_mend.iter();
    overlapped::<_, _, PyErr>(
        &to_mend,
        threads,
        |(_, bytes)| mend_stage(bytes, &limits, Mending::Unlogged),
        |outcome| {
            let (i, bytes) = mended.next().expect("one outcome per text to mend");
            let objects = PyObjects {
                py,
                text: &texts[*i],
            };
            let built = build_stage(&objects, bytes, outcome, &limits);
            loaded[*i] = Some(built.map(|(value, _)| value));
            Ok(())
        },
    )?;
    loaded
        .into_iter()
        .flatten()
        .map(|result| match result {
            Ok(value) => Ok(value),
            Err(e) if raise => Err(load_error(py, e)),
            Err(e) => Ok(load_error(py, e).into_value(py).into_bound(py).into_any()),
        })
        .collect()
}
