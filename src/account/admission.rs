//! Admission of accounting's largest allocations under a heap limit (the WASM stream's memory
//! budget). The per-series tables of the evidence, the scrape fold's intakes and an
//! endpoint's mapped series are each sized before they are made: under a limit, a table that
//! would take the heap past it is not made, and from then on nothing more is. The accounting
//! then hurries to its end on what it has, and [`under`] says the run was refused: its result
//! is incomplete and is dropped, never answered. Without a limit (the CLI, the whole-buffer
//! calls) every allocation is admitted.
//!
//! Why: a stream's evidence is held to its budget while it is read, but accounting it builds
//! tables of its own per series. Measured after the fact, a refused run of 300,000 series had
//! already grown linear memory to 78 MB, past the 64 MiB a stream promises.

use std::cell::Cell;

/// A limit on the heap in use, and how to read the heap in use.
#[derive(Clone, Copy)]
pub struct HeapLimit {
    pub limit: u64,
    pub in_use: fn() -> u64,
}

thread_local! {
    static LIMIT: Cell<Option<HeapLimit>> = const { Cell::new(None) };
    static REFUSED: Cell<bool> = const { Cell::new(false) };
}

/// Whether a table of `bytes` may be made now: always without a limit; under one, while the
/// heap in use plus `bytes` stays within it and nothing has been refused before.
pub fn admit(bytes: usize) -> bool {
    let Some(h) = LIMIT.with(Cell::get) else {
        return true;
    };
    if REFUSED.with(Cell::get) {
        return false;
    }
    let fits = (h.in_use)().saturating_add(bytes as u64) <= h.limit;
    if !fits {
        REFUSED.with(|r| r.set(true));
    }
    fits
}

/// [`admit`] of `n` items of `T` each.
pub fn admit_items<T>(n: usize) -> bool {
    admit(n.saturating_mul(std::mem::size_of::<T>()))
}

/// `f` run with its tables admitted under `limit`: `None` when one was refused (what `f`
/// made then is incomplete, and dropped here).
pub fn under<T>(limit: HeapLimit, f: impl FnOnce() -> T) -> Option<T> {
    let outer = LIMIT.with(|l| l.replace(Some(limit)));
    let outer_refused = REFUSED.with(|r| r.replace(false));
    let out = f();
    LIMIT.with(|l| l.set(outer));
    let refused = REFUSED.with(|r| r.replace(outer_refused));
    (!refused).then_some(out)
}

#[cfg(all(test, target_pointer_width = "64"))]
mod tests {
    use super::*;

    fn ten() -> u64 {
        10
    }

    #[test]
    fn a_refusal_is_sticky_and_scoped() {
        assert!(admit(usize::MAX));
        let limit = HeapLimit {
            limit: 100,
            in_use: ten,
        };
        assert_eq!(under(limit, || (admit(90), admit(0))), Some((true, true)));
        // Once refused, nothing more is admitted in that call, and the call is refused.
        assert_eq!(under(limit, || (admit(91), admit(0))), None);
        assert_eq!(under(limit, || admit_items::<u64>(12)), None);
        assert_eq!(under(limit, || admit_items::<u64>(11)), Some(true));
        // Outside a call nothing is limited.
        assert!(admit(usize::MAX));
    }
}
