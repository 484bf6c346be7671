//! Work spread over threads with results handed back in order as they are ready: the batch
//! calls (`repair_many`, `loads_many`) run the repair passes here, pure Rust, while the caller's
//! thread turns each result into what it returns.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Items handed to a thread at a time, at least: small enough to balance uneven items, large
/// enough that taking work costs nothing next to doing it.
const TAKE: usize = 16;

/// Items handed to a thread at a time, at most: a batch's results wait for it whole.
const TAKE_AT_MOST: usize = 1024;

/// Batches per worker over a whole run: enough to balance uneven items; fewer, bigger batches
/// when there are many items, as each batch handed back may wake the taking thread (a few µs).
const BATCHES_PER_WORKER: usize = 64;

/// Items a worker takes at a time for `items` spread over `workers`.
fn take_size(items: usize, workers: usize) -> usize {
    (items / (workers * BATCHES_PER_WORKER)).clamp(TAKE, TAKE_AT_MOST)
}

/// How many worker threads for `items`: `threads`, or every core; never more than there are
/// batches of work.
fn workers<T>(items: &[T], threads: Option<usize>) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    threads
        .unwrap_or(cores)
        .clamp(1, items.len().div_ceil(TAKE).max(1))
}

/// `work` over every item on worker threads, while this thread hands each result to `take`, in
/// input order, as soon as it and those before it are done. The caller's thread runs `take` (the
/// binding builds Python objects there, holding the GIL), so that work overlaps the workers'
/// instead of following it. An error from `take` stops the batch and is returned.
pub fn overlapped<'a, T: Sync, R: Send, E>(
    items: &'a [T],
    threads: Option<usize>,
    work: impl Fn(&'a T) -> R + Sync,
    mut take: impl FnMut(R) -> Result<(), E>,
) -> Result<(), E> {
    let workers = workers(items, threads);
    if workers == 1 && items.len() <= TAKE {
        return items.iter().map(&work).try_for_each(take);
    }
    let batch = take_size(items.len(), workers);
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let (done, arrived) = std::sync::mpsc::channel::<(usize, Vec<R>)>();
        for _ in 0..workers {
            let done = done.clone();
            let (next, work) = (&next, &work);
            scope.spawn(move || loop {
                let start = next.fetch_add(batch, Ordering::Relaxed);
                if start >= items.len() {
                    break;
                }
                let end = (start + batch).min(items.len());
                let results = items[start..end].iter().map(work).collect();
                if done.send((start, results)).is_err() {
                    break; // the taker stopped on an error: nothing more is wanted
                }
            });
        }
        drop(done);
        // Batches arrive in any order; each is handed on once those before it were.
        let mut waiting: BTreeMap<usize, Vec<R>> = BTreeMap::new();
        let mut expected = 0;
        for (start, results) in arrived {
            waiting.insert(start, results);
            while let Some(results) = waiting.remove(&expected) {
                expected += results.len();
                results.into_iter().try_for_each(&mut take)?;
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_in_input_order_from_any_number_of_threads() {
        let items: Vec<u64> = (0..1000).collect();
        for threads in [None, Some(1), Some(2), Some(7)] {
            let mut out = Vec::new();
            let done: Result<(), ()> = overlapped(
                &items,
                threads,
                |i| i * i,
                |r| {
                    out.push(r);
                    Ok(())
                },
            );
            assert!(done.is_ok());
            assert_eq!(out, items.iter().map(|i| i * i).collect::<Vec<_>>());
        }
    }

    #[test]
    fn an_error_from_take_stops_the_batch_and_is_returned() {
        let items: Vec<u32> = (0..500).collect();
        let mut taken = 0;
        let done = overlapped(
            &items,
            Some(2),
            |i| *i,
            |i| {
                taken += 1;
                if i == 40 {
                    Err(format!("stopped at {i}"))
                } else {
                    Ok(())
                }
            },
        );
        assert_eq!(done, Err("stopped at 40".to_owned()));
        assert_eq!(taken, 41);
    }

    #[test]
    fn batches_grow_with_the_work_between_bounds() {
        assert_eq!(take_size(100, 2), TAKE);
        assert_eq!(take_size(50_000, 2), 390);
        assert_eq!(take_size(280_000, 2), TAKE_AT_MOST);
        assert_eq!(take_size(280_000, 64), 68);
    }

    #[test]
    fn workers_never_outnumber_the_batches_of_work() {
        assert_eq!(workers(&[0; 10], Some(8)), 1);
        assert_eq!(workers(&[0; 100], Some(8)), 7);
        assert_eq!(workers::<u8>(&[], Some(3)), 1);
    }
}
