//! Admission of the largest allocations of reading and accounting under a heap limit (the
//! WASM build's memory budget). The per-series tables of the evidence, the scrape fold's
//! intakes and an endpoint's mapped series are each sized before they are made, and the lists
//! and hash tables a reader grows by series are admitted before each growth ([`room_for_one`],
//! [`room_in_map`]): under a limit, a table that would take the heap past it is not made, and
//! from then on nothing more is. The work then hurries to its end on what it has, and
//! [`under`] says it was refused: its result is incomplete and is dropped, never answered (the
//! file being read, or the run, is `INPUT_TOO_LARGE`). Without a limit (the CLI) every
//! allocation is admitted.
//!
//! Why: the budget is otherwise compared with the heap in use between steps, after memory has
//! grown. Measured after the fact, a refused run of 300,000 series had already grown a
//! stream's linear memory to 78 MB in accounting, and a capture of 800,000 series to 79 MB
//! while it was read (its tables doubled, old and new copies alive at once), past the 64 MiB a
//! stream promises.
//!
//! The heap in use is not the memory taken: the allocator's free room may be in pieces too
//! small for a large table, which then goes above all of it. Accounting 3,000 captures of 100
//! series kept at most 36.5 MB of heap live, under the budget of 48 MiB, and grew a stream's
//! linear memory to 74.4 MiB. So under a [`MemoryCeiling`] a table is admitted only if
//! linear memory would stay within the ceiling even with the table placed above it.

use std::cell::Cell;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hash};

/// A limit on the heap in use, and how to read the heap in use (a reader's
/// `crate::read::run::MemoryBudget`).
#[derive(Debug, Clone, Copy)]
pub struct HeapLimit {
    /// Bytes.
    pub limit: u64,
    /// The bytes in use now (the WASM build: its heap's live bytes).
    pub in_use: fn() -> u64,
    /// How far the memory holding the heap may grow (the WASM build's linear memory).
    pub ceiling: Option<MemoryCeiling>,
}

/// The most bytes the memory holding the heap may reach, and how to read its size.
#[derive(Debug, Clone, Copy)]
pub struct MemoryCeiling {
    pub bytes: u64,
    /// The memory's size now, in bytes.
    pub size: fn() -> u64,
}

/// Memory above a heap limit left to the allocator's slack (free pieces too small for a
/// table), the module's static data and its stack: a limit of 48 MiB keeps linear memory
/// within 64 MiB.
pub const SLACK: u64 = 16 << 20;

impl HeapLimit {
    /// `limit` bytes of heap (read by `in_use`), in memory (its size read by `size`) grown at
    /// most to `limit` + [`SLACK`], or by `limit` beyond its size now when that is more (an
    /// instance grown before by a larger call holds that memory free).
    pub fn within_memory(limit: u64, in_use: fn() -> u64, size: fn() -> u64) -> Self {
        let bytes = limit
            .saturating_add(SLACK)
            .max(size().saturating_add(limit));
        HeapLimit {
            limit,
            in_use,
            ceiling: Some(MemoryCeiling { bytes, size }),
        }
    }

    /// The budget in words, for a refusal: "N bytes of heap and M of linear memory", or
    /// "N bytes" without a ceiling.
    pub fn budget_text(&self) -> String {
        match self.ceiling {
            Some(c) => format!(
                "{} bytes of heap and {} of linear memory",
                self.limit, c.bytes
            ),
            None => format!("{} bytes", self.limit),
        }
    }

    /// Whether `bytes` more fit: in the heap, and in memory when placed above all it holds.
    fn fits(&self, bytes: u64) -> bool {
        (self.in_use)().saturating_add(bytes) <= self.limit
            && self
                .ceiling
                .is_none_or(|c| (c.size)().saturating_add(bytes) <= c.bytes)
    }
}

/// The memory ceiling of the limit tables are admitted under now, if any (the WASM build's
/// allocator grows memory ahead of need only up to it).
pub fn ceiling_now() -> Option<u64> {
    LIMIT
        .with(Cell::get)
        .and_then(|h| h.ceiling)
        .map(|c| c.bytes)
}

thread_local! {
    static LIMIT: Cell<Option<HeapLimit>> = const { Cell::new(None) };
    static REFUSED: Cell<bool> = const { Cell::new(false) };
}

/// Whether a table of `bytes` may be made now: always without a limit; under one, while the
/// heap in use plus `bytes` stays within it (and memory within its ceiling: see
/// [`HeapLimit::fits`]) and nothing has been refused before.
pub fn admit(bytes: usize) -> bool {
    let Some(h) = LIMIT.with(Cell::get) else {
        return true;
    };
    if REFUSED.with(Cell::get) {
        return false;
    }
    let fits = h.fits(bytes as u64);
    if !fits {
        REFUSED.with(|r| r.set(true));
    }
    fits
}

/// Whether a table of `bytes` would be admitted now, refusing nothing when not: for room
/// made ahead of need, which the work can do without.
pub fn would_admit(bytes: usize) -> bool {
    let Some(h) = LIMIT.with(Cell::get) else {
        return true;
    };
    !REFUSED.with(Cell::get) && h.fits(bytes as u64)
}

/// [`admit`] of `n` items of `T` each.
pub fn admit_items<T>(n: usize) -> bool {
    admit(n.saturating_mul(std::mem::size_of::<T>()))
}

/// Room for one more item in `v`: when it is full, it grows (doubling, as `push` would) only
/// if the new block is admitted; false when it was refused (nothing is pushed then).
#[inline(never)]
pub fn room_for_one<T>(v: &mut Vec<T>) -> bool {
    if v.len() < v.capacity() {
        return true;
    }
    match list_growth(v.capacity(), std::mem::size_of::<T>()) {
        Some(more) => {
            v.reserve_exact(more);
            true
        }
        None => false,
    }
}

/// Room for `more` bytes at the end of `text`: when they do not fit, it grows (doubling, or to
/// what they need, as `push_str` would) only if the new block is admitted; false when it was
/// refused (nothing is written then).
#[inline(never)]
pub fn room_in_text(text: &mut String, more: usize) -> bool {
    if more <= text.capacity() - text.len() {
        return true;
    }
    let grown = text
        .capacity()
        .saturating_mul(2)
        .max(text.len().saturating_add(more))
        .max(8);
    if !admit(grown) {
        return false;
    }
    text.reserve_exact(grown - text.len());
    true
}

/// The items a full list of `cap` items of `size` bytes grows by, if the grown block is
/// admitted (one copy of this for every item type).
#[inline(never)]
fn list_growth(cap: usize, size: usize) -> Option<usize> {
    let more = cap.max(4);
    admit(cap.saturating_add(more).saturating_mul(size)).then_some(more)
}

/// Room for one more entry in `m`: when it is full, its table (entries and a control byte
/// each, buckets a power of two at most 7/8 full) doubles only if the new table is admitted;
/// false when it was refused (nothing is inserted then).
#[inline(never)]
pub fn room_in_map<K: Eq + Hash, V, S: BuildHasher>(m: &mut HashMap<K, V, S>) -> bool {
    if m.len() < m.capacity() {
        return true;
    }
    if !table_growth(m.capacity(), std::mem::size_of::<(K, V)>()) {
        return false;
    }
    m.reserve(1);
    true
}

/// Whether the doubled table of a full hash map of `cap` entries of `size` bytes is admitted.
#[inline(never)]
fn table_growth(cap: usize, size: usize) -> bool {
    let buckets = (cap.saturating_add(1).saturating_mul(8) / 7).next_power_of_two();
    admit(buckets.saturating_mul(size + 1))
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

    /// A limit of `limit` bytes with 10 in use.
    fn limit_of(limit: u64) -> HeapLimit {
        HeapLimit {
            limit,
            in_use: ten,
            ceiling: None,
        }
    }

    #[test]
    fn a_refusal_is_sticky_and_scoped() {
        assert!(admit(usize::MAX));
        let limit = HeapLimit {
            limit: 100,
            in_use: ten,
            ceiling: None,
        };
        assert_eq!(under(limit, || (admit(90), admit(0))), Some((true, true)));
        // Once refused, nothing more is admitted in that call, and the call is refused.
        assert_eq!(under(limit, || (admit(91), admit(0))), None);
        assert_eq!(under(limit, || admit_items::<u64>(12)), None);
        assert_eq!(under(limit, || admit_items::<u64>(11)), Some(true));
        // Outside a call nothing is limited.
        assert!(admit(usize::MAX));
    }

    #[test]
    fn texts_grow_only_when_admitted() {
        let mut t = String::with_capacity(16);
        t.push_str("0123456789");
        // Fits: nothing is asked.
        assert_eq!(under(limit_of(0), || room_in_text(&mut t, 6)), Some(true));
        assert_eq!(t.capacity(), 16);
        // Doubles to 32 bytes, admitted within 10 + 32.
        assert_eq!(under(limit_of(42), || room_in_text(&mut t, 7)), Some(true));
        assert!(t.capacity() >= 32);
        // Past the limit: refused, and the text is as it was.
        let cap = t.capacity();
        assert_eq!(under(limit_of(50), || room_in_text(&mut t, 100)), None);
        assert_eq!((t.as_str(), t.capacity()), ("0123456789", cap));
        // More than doubling: grown to what is needed.
        assert_eq!(
            under(limit_of(1000), || room_in_text(&mut t, 100)),
            Some(true)
        );
        assert!(t.capacity() >= 110);
    }

    #[test]
    fn lists_and_maps_grow_only_when_admitted() {
        let mut v: Vec<u64> = Vec::new();
        for i in 0..100 {
            assert!(room_for_one(&mut v));
            v.push(i);
        }
        let mut m: HashMap<u64, u64> = HashMap::new();
        for i in 0..100 {
            assert!(room_in_map(&mut m));
            m.insert(i, i);
        }
        // Under a limit of 100 bytes with 10 in use: 4 u64s (32 B) fit, then 8 (64 B), not 16.
        let limit = HeapLimit {
            limit: 100,
            in_use: ten,
            ceiling: None,
        };
        let grown = under(limit, || {
            let mut v: Vec<u64> = Vec::new();
            let mut n = 0;
            while room_for_one(&mut v) && n < 100 {
                v.push(n);
                n += 1;
            }
            (n, v.capacity(), room_for_one(&mut v))
        });
        assert_eq!(
            grown, None,
            "the list's growth past the limit refuses the call"
        );
        let mut seen = (0, 0);
        let _ = under(limit, || {
            let mut v: Vec<u64> = Vec::new();
            while room_for_one(&mut v) {
                v.push(0);
            }
            seen = (v.len(), v.capacity());
        });
        assert_eq!(seen, (8, 8));
        let mut entries = 0;
        let refused = under(limit, || {
            let mut m: HashMap<u64, u64> = HashMap::new();
            while room_in_map(&mut m) {
                m.insert(entries, 0);
                entries += 1;
            }
        });
        assert!(refused.is_none());
        assert!(entries < 8, "{entries} entries of 16 B in 90 B of room");
    }

    fn memory_of_500() -> u64 {
        500
    }

    #[test]
    fn memory_stays_within_its_ceiling() {
        // 10 bytes of heap in use in 500 of memory: the ceiling is the larger of the limit
        // plus the slack and the memory now plus the limit.
        let limit = HeapLimit::within_memory(1000, ten, memory_of_500);
        assert_eq!(limit.ceiling.map(|c| c.bytes), Some(1000 + SLACK));
        let grown = HeapLimit::within_memory(100, ten, memory_of_500);
        let Some(ceiling) = grown.ceiling else {
            panic!("no ceiling");
        };
        assert_eq!(ceiling.bytes, (100 + SLACK).max(600));
        // A table is admitted only if memory stays within the ceiling with it placed above
        // everything: the heap's own limit alone would admit 90 bytes here.
        let tight = HeapLimit {
            limit: 100,
            in_use: ten,
            ceiling: Some(MemoryCeiling {
                bytes: 550,
                size: memory_of_500,
            }),
        };
        assert_eq!(
            under(tight, || (would_admit(51), admit(50))),
            Some((false, true))
        );
        assert_eq!(under(tight, || admit(51)), None);
        assert_eq!(under(tight, ceiling_now), Some(Some(550)));
        assert_eq!(ceiling_now(), None);
    }
}
