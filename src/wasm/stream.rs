//! The streaming API's raw class (`AccountStream`; `js/api.js` wraps it as `accountStream`
//! and the public `AccountStream`): a run's files pushed chunk by chunk into a
//! [`RunReader`], then accounted as `accountRun` accounts them. Each method answers the same
//! JSON envelope as the raw functions (`{"ok": …}` / `{"error": …}`).
//!
//! Memory: the module's heap is counted ([`Counting`]). A stream folds its scrape JSONL into
//! per-series evidence as it is read (`RunReader::with_fold`: a few bytes per sample, never
//! the scrapes), thins that evidence soundly past three quarters of the stream's memory budget
//! (`evidence_coarsened`), and fails the file being read with `INPUT_TOO_LARGE` once the heap
//! in use passes the budget all the same, before the instance (4 GiB at most) could run out
//! and trap; the tables its readers grow by series are admitted before each growth
//! (`crate::admission`, in `RunReader`). The accounting step after the last byte is held to
//! the same budget: its tables of series are admitted before they are made (one that would
//! pass the budget refuses the run with `INPUT_TOO_LARGE` before it grows memory), and its
//! heap's high-water mark is measured after it all the same. Linear memory is held within
//! the budget plus `crate::admission::SLACK` as well (`HeapLimit::within_memory`): the
//! allocator's free room may be too fragmented for a large table, so a table is admitted only
//! if it fits placed above everything. The
//! whole-buffer calls read through the same reader with a budget of their own
//! (`super::files`).

use super::{options_arg, reply};
use crate::account::{
    account_run_detailed_folded, account_run_folded, families_read, fold::Folded, Policy,
};
use crate::admission::{self, HeapLimit};
use crate::chunked::json_handed_off;
use crate::error::{ErrorCode, ReadError};
use crate::options::{AccountOptions, CallError, OptionsError};
use crate::read::discover::{group_runs, Discovery};
use crate::read::run::RunReader;
use js_sys::{Array, Uint8Array};
use serde::Serialize;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// The system allocator, counting the bytes allocated and not yet freed (one add per call).
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

/// The most bytes [`LIVE`] has reached since [`reset_high_water`].
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let now = LIVE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call is forwarded to `System` unchanged; only a counter is updated beside it.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let pages = memory_pages();
        let p = System.alloc(layout);
        if !p.is_null() {
            grew(layout.size());
        }
        grow_ahead(pages);
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let pages = memory_pages();
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            grew(layout.size());
        }
        grow_ahead(pages);
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let pages = memory_pages();
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            // Both blocks are live while the old one is copied into the new one.
            grew(new_size);
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        grow_ahead(pages);
        p
    }
}

/// Linear memory's size in 64 KiB pages.
fn memory_pages() -> usize {
    core::arch::wasm32::memory_size(0)
}

/// Linear memory's size in bytes.
pub(crate) fn linear_memory() -> u64 {
    (memory_pages() as u64) << 16
}

/// Linear memory up to this size grows as the allocator asks; past it, by an eighth at a time.
const GROW_AHEAD_FROM: u64 = 64 << 20;

/// After the allocator grew linear memory (it had `pages_before`), grow it once more by an
/// eighth of itself (never past the memory ceiling of a call held to one), so that a call
/// that ends at N bytes grows memory about ln(N) times, not once per 64 KiB it needs. Each grow hands JavaScript a new `ArrayBuffer` over the whole
/// memory, which V8 counts as that much new external memory: growing page by page set off a
/// full garbage collection every few grows (288 collections, a fifth of the time, accounting a
/// 79 MB scrape JSONL in Node). Up to [`GROW_AHEAD_FROM`] (a stream's memory) nothing is
/// grown ahead. The block is allocated and freed at once: the allocator keeps the pages as
/// free room at its top; [`LIVE`] never counts it.
fn grow_ahead(pages_before: usize) {
    let pages = memory_pages();
    // In u64: 4 GiB of pages is one past usize::MAX on wasm32.
    let bytes = (pages as u64) << 16;
    if pages == pages_before || bytes < GROW_AHEAD_FROM {
        return;
    }
    let ahead = match crate::admission::ceiling_now() {
        Some(ceiling) => (bytes / 8).min(ceiling.saturating_sub(bytes)),
        None => bytes / 8,
    };
    if ahead == 0 {
        return;
    }
    let Ok(layout) = Layout::from_size_align(ahead as usize, 8) else {
        return;
    };
    // SAFETY: a block of a valid layout, freed with that layout; a null (no memory left to
    // grow into) is not freed, and the caller's own allocation has already succeeded.
    unsafe {
        let block = System.alloc(layout);
        if !block.is_null() {
            System.dealloc(block, layout);
        }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

pub(crate) fn heap_in_use() -> u64 {
    LIVE.load(Ordering::Relaxed) as u64
}

/// Start measuring the heap's high-water mark from what is in use now.
fn reset_high_water() {
    PEAK.store(LIVE.load(Ordering::Relaxed), Ordering::Relaxed);
}

/// The most heap in use since [`reset_high_water`].
fn heap_high_water() -> u64 {
    PEAK.load(Ordering::Relaxed) as u64
}

/// The default memory budget of a stream: heap in use at most 48 MiB, so that with the
/// module's static data, its stack and the allocator's slack, linear memory stays within
/// 64 MiB.
pub const DEFAULT_MEMORY_BUDGET: u64 = 48 << 20;

/// The most linear memory a wasm32 instance can have.
const MAX_LINEAR_MEMORY: u64 = 4 << 30;

/// The memory budget argument: absent takes the default; else a whole number of bytes.
fn memory_budget(arg: Option<f64>) -> Result<u64, OptionsError> {
    match arg {
        None => Ok(DEFAULT_MEMORY_BUDGET),
        Some(b)
            if b.is_finite() && b >= 1.0 && b.fract() == 0.0 && b <= MAX_LINEAR_MEMORY as f64 =>
        {
            Ok(b as u64)
        }
        Some(b) => Err(OptionsError::new(
            "options.memory_budget",
            format!("expected a whole number of bytes from 1 to 4294967296, got {b}"),
        )),
    }
}

/// What `push` answers.
#[derive(Serialize)]
struct Pushed {
    /// Whether the file's remaining bytes are wanted (else they may be skipped).
    wants_more: bool,
    /// Bytes pushed so far, every file together.
    bytes_read: u64,
}

/// A stream's state: reading (with its memory budget), or why it cannot be used.
enum Stream {
    Reading(Box<RunReader>, Policy, HeapLimit),
    Refused(CallError),
    Finished,
}

/// A run's files pushed in chunks, then accounted (`accountRun`'s result).
#[wasm_bindgen(js_name = AccountStream, skip_typescript)]
pub struct AccountStream {
    stream: Stream,
}

fn finished() -> CallError {
    OptionsError::new("", "the stream has finished: start a new one").into()
}

#[wasm_bindgen(js_class = AccountStream)]
impl AccountStream {
    /// `options`: the JSON of `accountRun`'s options; `memory_budget`: bytes of heap the
    /// stream may use. A malformed option is reported by `start`.
    #[wasm_bindgen(constructor)]
    pub fn new(options: Option<String>, memory_budget_bytes: Option<f64>) -> AccountStream {
        let made = (|| -> Result<Stream, CallError> {
            let budget = HeapLimit::within_memory(
                memory_budget(memory_budget_bytes)?,
                heap_in_use,
                linear_memory,
            );
            let opts: AccountOptions = options_arg("options", options)?;
            let (run, policy) = opts.split()?;
            let run = run.into_run_options(families_read())?;
            let reader = RunReader::new(&run).with_memory_budget(budget).with_fold();
            Ok(Stream::Reading(Box::new(reader), policy, budget))
        })();
        AccountStream {
            stream: made.unwrap_or_else(Stream::Refused),
        }
    }

    /// `{"ok": null}`, or why the options were refused.
    pub fn start(&self) -> String {
        match &self.stream {
            Stream::Refused(e) => reply::<()>(Err(e.clone())),
            _ => reply(Ok(())),
        }
    }

    fn reader(&mut self) -> Result<&mut RunReader, CallError> {
        match &mut self.stream {
            Stream::Reading(r, _, _) => Ok(r),
            Stream::Refused(e) => Err(e.clone()),
            Stream::Finished => Err(finished()),
        }
    }

    /// `{"ok": <whether the file's bytes are wanted>}`: not for a file its name says is not
    /// read, nor one that can no longer change the outcome (after a refusal).
    #[wasm_bindgen(js_name = beginFile)]
    pub fn begin_file(&mut self, name: String) -> String {
        reply(self.reader().map(|r| {
            r.begin_file(&name);
            r.wants_more()
        }))
    }

    /// `{"ok": {"wants_more", "bytes_read"}}`.
    pub fn push(&mut self, chunk: &[u8]) -> String {
        reply(self.reader().map(|r| {
            let wants_more = r.push(chunk);
            Pushed {
                wants_more,
                bytes_read: r.bytes_read(),
            }
        }))
    }

    #[wasm_bindgen(js_name = endFile)]
    pub fn end_file(&mut self) -> String {
        reply(self.reader().map(|r| r.end_file()))
    }

    /// The accounting of the run (`accountRun`'s envelope, in pieces: see
    /// [`reply_in_pieces`]); the stream cannot be used after.
    pub fn finish(&mut self) -> Array {
        let outcome = self.account(account_run_folded);
        reply_in_pieces(outcome)
    }

    /// The run read, then accounted by `how` within the stream's memory budget: the heap's
    /// high-water mark over the accounting step is measured, and past the budget the result is
    /// `INPUT_TOO_LARGE` (never a result computed in memory the caller did not grant).
    fn account<T>(
        &mut self,
        how: impl FnOnce(crate::read::Run, Folded, &Policy) -> T,
    ) -> Result<T, CallError> {
        let (reader, policy, limit) = match std::mem::replace(&mut self.stream, Stream::Finished) {
            Stream::Reading(reader, policy, limit) => (reader, policy, limit),
            Stream::Refused(e) => return Err(e),
            Stream::Finished => return Err(finished()),
        };
        let (run, fold) = reader.finish_folded()?;
        reset_high_water();
        let budget = limit.limit;
        let refused = |detail: String| {
            ReadError::whole(ErrorCode::InputTooLarge, "accounting", detail).into()
        };
        let Some(result) = admission::under(limit, || how(run, fold, &policy)) else {
            return Err(refused(format!(
                "accounting the run needs more memory than the budget of {} allows: a table of its series would pass it",
                limit.budget_text()
            )));
        };
        let high = heap_high_water();
        if high > budget {
            return Err(refused(format!(
                "accounting the run needed {high} bytes of heap, more than the budget of {budget} bytes"
            )));
        }
        Ok(result)
    }

    /// `{"ok": {"accounting", "detail"}}`: `finish`'s accounting, and the run's files and
    /// counters over time (`RunDetail`) for the visualizer; the stream cannot be used after.
    #[wasm_bindgen(js_name = finishDetailed)]
    pub fn finish_detailed(&mut self) -> Array {
        let outcome = self.account(|run, fold, policy| {
            let (accounting, detail) = account_run_detailed_folded(run, fold, policy);
            Detailed { accounting, detail }
        });
        reply_in_pieces(outcome)
    }
}

/// `reply`'s envelope as `Uint8Array`s of its UTF-8 text, each handed to JavaScript as it is
/// written (a piece may end inside a character: `js/api.js` decodes them as one stream).
/// Joined in linear memory, the reply of a run of 25,600 endpoints (16.5 MB) was one block
/// beside the accounting's, and grew a stream accounting the 99 MB bench CSV to 78.6 MB.
fn reply_in_pieces<T: Serialize>(outcome: Result<T, CallError>) -> Array {
    let pieces = Array::new();
    let mut hand_off = |piece: &[u8]| {
        pieces.push(&Uint8Array::from(piece));
    };
    let written = match &outcome {
        Ok(value) => json_handed_off(b"{\"ok\":", value, b"}", &mut hand_off).is_ok(),
        Err(_) => false,
    };
    if !written {
        // An error's envelope is small; a result that could not be written is answered as
        // `reply` answers it.
        pieces.set_length(0);
        pieces.push(&Uint8Array::from(reply(outcome).as_bytes()));
    }
    pieces
}

/// `{"ok": {"runs": [{root, files, ignored}], "ignored"}}`: the runs a tree of relative paths
/// holds, decided from the names alone as `accountRuns` groups them (names that do not tell
/// their format are left to the run's reader), so that each run can be streamed on its own.
#[wasm_bindgen(js_name = groupRuns, skip_typescript)]
pub fn group_runs_raw(paths: JsValue) -> String {
    let outcome = (|| -> Result<Discovery, CallError> {
        let array = paths.dyn_ref::<Array>().ok_or_else(|| {
            OptionsError::new("paths", "expected an array of relative paths (strings)")
        })?;
        let names = array
            .iter()
            .enumerate()
            .map(|(i, p)| {
                p.as_string().ok_or_else(|| {
                    OptionsError::new(format!("paths[{i}]"), "expected a relative path (a string)")
                })
            })
            .collect::<Result<Vec<String>, OptionsError>>()?;
        Ok(group_runs(&names))
    })();
    reply(outcome)
}

/// What `finishDetailed` answers.
#[derive(Serialize)]
struct Detailed {
    accounting: crate::account::Accounting,
    detail: crate::account::timeline::RunDetail,
}
