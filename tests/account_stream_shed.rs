//! A streaming read out of memory gives memory back instead of failing: it thins the folded
//! raw samples, then drops the export's counter timeslices (`crate::read::run`). Measured with
//! this binary's own heap (a counting allocator, as the WASM build counts its heap): a
//! generated run whose export alone passes the budget is still accounted, says
//! `evidence_coarsened`, and every interval contains the generator's truth.

#![cfg(not(target_arch = "wasm32"))]

use kvledger::account::{account_run_folded, families_read, Policy};
use kvledger::read::run::{MemoryBudget, RunReader};
use kvledger::read::RunOptions;
use kvledger::synth::{generate, Engine, SynthSpec, Topology};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to `System` unchanged; only a counter is updated beside it.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            LIVE.fetch_add(new_size, Ordering::Relaxed);
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn in_use() -> u64 {
    LIVE.load(Ordering::Relaxed) as u64
}

fn files_of(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if !p.ends_with("truth.json") {
                let name = p.strip_prefix(dir).unwrap().display().to_string();
                out.push((name, std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_run_past_the_budget_drops_slices_and_stays_sound() {
    let dir = std::env::temp_dir().join(format!("kvledger-shed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let spec = SynthSpec {
        engine: Engine::Vllm,
        topology: Topology {
            agg: 0,
            prefill: 1,
            decode: 1,
        },
        tier_cpu: true,
        seed: 3,
        duration_s: 1500.0,
        ..SynthSpec::default()
    };
    generate(&spec, &dir).unwrap();
    let truth: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("truth.json")).unwrap()).unwrap();
    let files = files_of(&dir);
    let options = RunOptions {
        families: families_read(),
        ..RunOptions::default()
    };
    // What the files take, beside them: a budget far below what the export's slices need.
    let limit = in_use() + (3 << 20);
    let mut reader = RunReader::new(&options)
        .with_fold()
        .with_memory_budget(MemoryBudget {
            limit,
            in_use,
            ceiling: None,
        });
    for (name, bytes) in &files {
        reader.begin_file(name);
        for c in bytes.chunks(1 << 16) {
            reader.push(c);
        }
        reader.end_file();
    }
    let (run, fold) = reader.finish_folded().expect("accounted, not refused");
    let slices = run
        .server_json
        .iter()
        .flat_map(|e| e.metrics.iter())
        .flat_map(|f| f.lean_series.iter())
        .map(|s| s.counter_slices.len())
        .sum::<usize>();
    let a = account_run_folded(run, fold, &Policy::default());
    let _ = std::fs::remove_dir_all(&dir);
    let codes: Vec<&str> = a
        .cache_validity
        .reasons
        .iter()
        .map(|r| r.code.as_str())
        .collect();
    assert!(codes.contains(&"evidence_coarsened"), "{codes:?}");
    assert_eq!(slices, 0, "the counter timeslices were dropped");
    for (name, r) in [
        ("gpu", a.rates.gpu),
        ("cpu", a.rates.cpu),
        ("overall", a.rates.overall),
    ] {
        let (Some(r), Some(t)) = (r, truth["rates"][name].as_f64()) else {
            continue;
        };
        assert!(
            r.lo <= t + 1e-9 && t <= r.hi + 1e-9,
            "{name}: truth {t} not in [{}, {}]",
            r.lo,
            r.hi
        );
    }
    let prefill = &truth["roles"]["prefill"]["canonical"];
    let ours = a.counters.get("prefill").expect("prefill counters");
    for (name, b) in [("prompt", ours.prompt), ("hit_gpu", ours.hit_gpu)] {
        let (Some(b), Some(t)) = (b, prefill[name].as_f64()) else {
            panic!("{name} missing");
        };
        assert!(
            b.lo <= t + 1e-6 && b.hi.is_none_or(|h| t <= h + 1e-6),
            "{name}: {t} not in [{}, {:?}]",
            b.lo,
            b.hi
        );
    }
}
