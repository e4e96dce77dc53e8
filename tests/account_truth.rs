//! Property test of the accounting against generated runs with known truth (issue: the
//! accounting core). Over random engines, variants, topologies, tiers, schemas, evidence and
//! faults: the status and required reasons are the truth's; on every run, faulty ones too,
//! every counter and rate interval contains the truth; every eligible rate is within
//! `max_rate_width` of the truth; the result does not depend on file or line order.
//!
//! `KVLEDGER_PROPERTY_RUNS` sets the number of runs (default 1000, split over 4 tests);
//! `KVLEDGER_PROPERTY_SEED` moves the sequence.

mod common;

use kvledger::account::{account_run, account_run_folded, Accounting, Policy};
use kvledger::read::run::{MemoryBudget, RunReader};
use kvledger::read::{read_run, InputFile, RunOptions};
use kvledger::synth::{generate, Engine, Fault, Schema, SynthSpec, Topology};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Runs whose status differs from the truth's by bound tightness alone, by
/// "truth status -> our status".
static WIDTH_DIVERGENCES: std::sync::Mutex<std::collections::BTreeMap<String, u64>> =
    std::sync::Mutex::new(std::collections::BTreeMap::new());

fn divergences() -> String {
    let map = WIDTH_DIVERGENCES
        .lock()
        .map(|m| m.clone())
        .unwrap_or_default();
    let total: u64 = map.values().sum();
    let parts: Vec<String> = map.iter().map(|(k, v)| format!("{k}: {v}")).collect();
    format!("{total} ({})", parts.join(", "))
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
}

fn runs_total() -> u64 {
    std::env::var("KVLEDGER_PROPERTY_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000)
}

fn base_seed() -> u64 {
    std::env::var("KVLEDGER_PROPERTY_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20261129)
}

fn spec(i: u64, rng: &mut Rng) -> SynthSpec {
    let engine = Engine::ALL[(i % 5) as usize];
    let topology = match rng.below(10) {
        0..=3 => Topology {
            agg: 1,
            prefill: 0,
            decode: 0,
        },
        4..=5 => Topology {
            agg: 2,
            prefill: 0,
            decode: 0,
        },
        6..=7 => Topology {
            agg: 0,
            prefill: 1,
            decode: 1,
        },
        8 => Topology {
            agg: 0,
            prefill: 2,
            decode: 3,
        },
        _ => Topology {
            agg: 0,
            prefill: 1,
            decode: 7,
        },
    };
    let faults = if rng.chance(0.45) {
        vec![Fault::ALL[rng.below(Fault::ALL.len() as u64) as usize]]
    } else {
        Vec::new()
    };
    let mut spec = SynthSpec {
        engine,
        variant_legacy: rng.chance(0.2),
        topology,
        tier_cpu: rng.chance(0.35),
        tier_external: rng.chance(0.2),
        faults,
        seed: rng.next(),
        duration_s: 6.0 + rng.below(10) as f64,
        warmup_per_lane: 1 + rng.below(2) as u32,
        concurrency: 2 + rng.below(4) as u32,
        dp: 1 + rng.below(2) as u32,
        tp: 1 + rng.below(2) as u32,
        frontend: rng.chance(0.2),
        schema: if rng.chance(0.7) {
            Schema::V1_1
        } else {
            Schema::V1_0
        },
        // Every evidence kind alone and together: JSON + CSV + JSONL, JSONL only, CSV only.
        jsonl: rng.chance(0.7),
        json: rng.chance(0.85),
        csv: rng.chance(0.5),
        ..SynthSpec::default()
    };
    if !(spec.json || spec.csv || spec.jsonl) {
        spec.jsonl = true;
    }
    spec
}

fn read(files: &[(String, Vec<u8>)]) -> Result<kvledger::read::Run, kvledger::ReadError> {
    let inputs: Vec<InputFile<'_>> = files
        .iter()
        .map(|(n, b)| InputFile::bytes(n.clone(), b))
        .collect();
    read_run(&inputs, &RunOptions::default())
}

fn account(files: &[(String, Vec<u8>)]) -> Accounting {
    let run = read(files).expect("generated run reads");
    account_run(&run, &Policy::default())
}

/// The same run with its files in reverse order and its JSONL lines reversed.
fn permuted(files: &[(String, Vec<u8>)]) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = files
        .iter()
        .map(|(n, b)| {
            if n.ends_with(".jsonl") {
                let text = String::from_utf8_lossy(b);
                let mut lines: Vec<&str> = text.lines().collect();
                lines.reverse();
                (n.clone(), (lines.join("\n") + "\n").into_bytes())
            } else {
                (n.clone(), b.clone())
            }
        })
        .collect();
    out.reverse();
    out
}

fn f(v: &Value) -> Option<f64> {
    v.as_f64()
}

/// Intervals compared with the truth, over all runs.
static INTERVALS_CHECKED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn contains(lo: f64, hi: Option<f64>, v: f64) -> bool {
    INTERVALS_CHECKED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tol = 1e-6 * v.abs().max(1.0);
    lo <= v + tol && hi.is_none_or(|h| v <= h + tol)
}

fn check_one(i: u64, rng: &mut Rng, tmp: &Path) -> Result<(), String> {
    check_spec(i, spec(i, rng), tmp)
}

fn check_spec(i: u64, spec: SynthSpec, tmp: &Path) -> Result<(), String> {
    let dir = tmp.join(format!("run{i}"));
    let _ = std::fs::remove_dir_all(&dir);
    generate(&spec, &dir).map_err(|e| format!("generate: {e:?}"))?;
    let truth: Value =
        serde_json::from_slice(&std::fs::read(dir.join("truth.json")).map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
    let files = common::run_files(&dir);
    // A run the truth says cannot be read must fail with that code, and nothing else.
    if let Some(code) = truth["expected"]["read_error"].as_str() {
        return match read(&files) {
            Err(e) if e.code.as_str() == code => Ok(()),
            Err(e) => Err(format!(
                "run {i}: read error {} expected {code}",
                e.code.as_str()
            )),
            Ok(_) => Err(format!("run {i}: read, but the truth expects {code}")),
        };
    }
    let a = account(&files);
    let v = &a.cache_validity;
    let expected = &truth["expected"];
    let what = || {
        format!(
            "run {i} {:?}/{}/{}: ",
            spec.engine,
            spec.topology,
            spec.faults
                .iter()
                .map(|f| format!("{f:?}"))
                .collect::<Vec<_>>()
                .join(",")
        )
    };

    // The truth's own evidence bound and the accountant's may differ in tightness: a run the
    // truth calls VALID may come out WINDOW_UNRESOLVED for width alone (and vice versa), or
    // not prove a non-conservation the truth's tighter bound proves. That is allowed
    // (soundness is checked below), and counted.
    let status = serde_json::to_value(v.status).map_err(|e| e.to_string())?;
    // Non-conservation too is proven only by bounds tight enough to exclude the client count.
    let bound_dependent = |c: &str| {
        matches!(
            c,
            "rate_too_wide"
                | "increase_unbounded"
                | "no_prompt_in_window"
                | "prompt_not_conserved"
                | "admissions_not_conserved"
        )
    };
    let ours_fixed: std::collections::BTreeSet<&str> = v
        .reasons
        .iter()
        .filter(|r| r.code.status().is_some() && !bound_dependent(r.code.as_str()))
        .map(|r| r.code.as_str())
        .collect();
    let expected_fixed: std::collections::BTreeSet<&str> = expected["reasons"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c.as_str())
        .filter(|c| !bound_dependent(c))
        .collect();
    // Statuses may differ only through the bound-dependent codes.
    if status != expected["status"] && ours_fixed == expected_fixed {
        let key = format!(
            "{} -> {}",
            expected["status"].as_str().unwrap_or("?"),
            status.as_str().unwrap_or("?")
        );
        if let Ok(mut m) = WIDTH_DIVERGENCES.lock() {
            *m.entry(key).or_default() += 1;
        }
    } else if status != expected["status"] {
        return Err(format!(
            "{}status {} expected {} (ours: {:?})",
            what(),
            status,
            expected["status"],
            v.reasons
                .iter()
                .map(|r| r.code.as_str())
                .collect::<Vec<_>>()
        ));
    }
    for code in expected["reasons"].as_array().into_iter().flatten() {
        let code = code.as_str().unwrap_or_default();
        if matches!(
            code,
            "rate_too_wide" | "increase_unbounded" | "no_prompt_in_window"
        ) {
            continue;
        }
        // Non-conservation can be proven only from bounds tight enough to exclude the
        // client's count; looser (still sound) bounds may not.
        let loose =
            |b: Option<kvledger::account::output::Bounds>| b.is_none_or(|b| b.hi != Some(b.lo));
        if code == "prompt_not_conserved" && loose(v.request_scope.server_prompt) {
            continue;
        }
        if code == "admissions_not_conserved" && loose(v.request_scope.admissions) {
            continue;
        }
        if !v.reasons.iter().any(|r| r.code.as_str() == code) {
            return Err(format!("{}missing reason {code}", what()));
        }
    }

    // Every interval contains the truth, whatever the status: faulty runs too.
    check_contains(&what(), &truth, &a)?;
    // The same run streamed with its scrapes folded and thinned as far as they go (a memory
    // budget always three quarters full): still sound, and it says so. It was read whole, so
    // it must be read streamed (a refusal would skip the check).
    let Some(thin) = account_thinned(&files) else {
        return Err(format!(
            "{}not read streamed under the squeezed budget",
            what()
        ));
    };
    {
        let coarsened = thin
            .cache_validity
            .reasons
            .iter()
            .any(|r| r.code.as_str() == "evidence_coarsened");
        let has_jsonl = files
            .iter()
            .any(|(n, _)| n.ends_with("server_metrics_export.jsonl"));
        if has_jsonl && !coarsened {
            return Err(format!("{}thinned run without evidence_coarsened", what()));
        }
        check_contains(&format!("{}(thinned) ", what()), &truth, &thin)?;
    }

    if i % 5 == 0 {
        let again = account(&permuted(&files));
        let x = serde_json::to_string(&a).map_err(|e| e.to_string())?;
        let y = serde_json::to_string(&again).map_err(|e| e.to_string())?;
        if x != y {
            return Err(format!("{}result depends on file/line order", what()));
        }
    }
    if std::env::var_os("KVLEDGER_PROPERTY_KEEP").is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(())
}

/// Every counter and rate interval of `a` contains the truth; an eligible rate is within
/// `max_rate_width` of it.
fn check_contains(what: &str, truth: &Value, a: &Accounting) -> Result<(), String> {
    let v = &a.cache_validity;
    for role in ["prefill", "unified"] {
        let (Some(t), Some(ours)) = (
            truth["roles"][role]["canonical"].as_object(),
            a.counters.get(role),
        ) else {
            continue;
        };
        let pairs = [
            ("prompt", ours.prompt),
            ("hit_gpu", ours.hit_gpu),
            ("hit_cpu", ours.hit_cpu),
            ("hit_external", ours.hit_external),
        ];
        for (name, b) in pairs {
            let Some(tv) = t.get(name).and_then(f) else {
                continue;
            };
            match b {
                Some(b) if !contains(b.lo, b.hi, tv) => {
                    return Err(format!(
                        "{}{role}.{name}: truth {tv} not in [{}, {:?}]",
                        what, b.lo, b.hi
                    ));
                }
                None if tv > 0.0 && name != "hit_cpu" && name != "hit_external" => {
                    return Err(format!("{}{role}.{name} missing (truth {tv})", what));
                }
                _ => {}
            }
        }
    }
    let rates = [
        ("gpu", a.rates.gpu),
        ("cpu", a.rates.cpu),
        ("external", a.rates.external),
        ("overall", a.rates.overall),
    ];
    for (name, r) in rates {
        let (Some(r), Some(tv)) = (r, f(&truth["rates"][name])) else {
            continue;
        };
        if !contains(r.lo, Some(r.hi), tv) {
            return Err(format!(
                "{}{name} rate: truth {tv} not in [{}, {}]",
                what, r.lo, r.hi
            ));
        }
    }
    if v.pricing_eligible {
        let Some(o) = a.rates.overall else {
            return Err(format!("{}eligible without an overall rate", what));
        };
        // A null canonical overall in the truth: the fault is undetectable by design
        // (e.g. an engine that silently leaves a tier uncounted) and no rate is canonical.
        if let Some(tv) = f(&truth["rates"]["overall"]) {
            let Some(value) = o.value else {
                return Err(format!("{}eligible rate without a value", what));
            };
            if (value - tv).abs() > a.policy.max_rate_width {
                return Err(format!("{}eligible rate {value} vs truth {tv}", what));
            }
        }
    }
    Ok(())
}

/// The run pushed in 64 KiB chunks into a reader that folds its JSONL, under a memory budget
/// that is always more than three quarters full: the fold is thinned as far as it goes (with
/// room left for the readers' tables, admitted under the budget as they grow). `None` when the
/// run is not read.
fn account_thinned(files: &[(String, Vec<u8>)]) -> Option<Accounting> {
    let budget = MemoryBudget {
        limit: 1 << 30,
        in_use: || 800 << 20,
        ceiling: None,
    };
    let mut reader = RunReader::new(&RunOptions::default())
        .with_fold()
        .with_memory_budget(budget);
    for (name, bytes) in files {
        reader.begin_file(name);
        for c in bytes.chunks(65536) {
            reader.push(c);
        }
        reader.end_file();
    }
    let (run, fold) = reader.finish_folded().ok()?;
    Some(account_run_folded(run, fold, &Policy::default()))
}

fn run_share(part: u64, parts: u64) {
    let total = runs_total();
    // KVLEDGER_PROPERTY_KEEP=DIR keeps every generated run there (for debugging failures).
    let keep = std::env::var("KVLEDGER_PROPERTY_KEEP")
        .ok()
        .map(PathBuf::from);
    let tmp: PathBuf = keep.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("kvledger-truth-{}-{part}", std::process::id()))
    });
    let mut failures = Vec::new();
    let mut checked = 0;
    // KVLEDGER_PROPERTY_ONLY=N checks run N alone (to reproduce a reported failure).
    let only: Option<u64> = std::env::var("KVLEDGER_PROPERTY_ONLY")
        .ok()
        .and_then(|v| v.parse().ok());
    for i in (part..total).step_by(parts as usize) {
        if only.is_some_and(|o| o != i) {
            continue;
        }
        let mut rng = Rng(base_seed() ^ i.wrapping_mul(0x2545_F491_4F6C_DD1D));
        if let Err(e) = check_one(i, &mut rng, &tmp) {
            failures.push(e);
        }
        checked += 1;
    }
    if keep.is_none() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    assert!(checked > 0 || only.is_some());
    eprintln!(
        "part {part}: {checked} runs checked, {} failed; intervals checked so far: {}; runs so far whose status differs from the truth's by bound tightness alone: {}",
        failures.len(),
        INTERVALS_CHECKED.load(std::sync::atomic::Ordering::Relaxed),
        divergences()
    );
    assert!(
        failures.is_empty(),
        "{} of {checked} runs failed:\n{}",
        failures.len(),
        failures
            .iter()
            .take(15)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn truth_property_part_0() {
    run_share(0, 4);
}

#[test]
fn truth_property_part_1() {
    run_share(1, 4);
}

#[test]
fn truth_property_part_2() {
    run_share(2, 4);
}

#[test]
fn truth_property_part_3() {
    run_share(3, 4);
}

/// Every generator fault on every engine (aggregated and 1P2D, current variant, CPU tier on):
/// the status and reason codes the contract requires, deterministically.
#[test]
fn every_fault_of_every_engine() {
    let tmp = std::env::temp_dir().join(format!("kvledger-faults-{}", std::process::id()));
    let mut failures = Vec::new();
    let mut i = 0;
    for engine in Engine::ALL {
        for fault in Fault::ALL {
            for topology in [
                Topology {
                    agg: 1,
                    prefill: 0,
                    decode: 0,
                },
                Topology {
                    agg: 0,
                    prefill: 1,
                    decode: 2,
                },
            ] {
                let spec = SynthSpec {
                    engine,
                    topology,
                    tier_cpu: true,
                    faults: vec![fault],
                    seed: 1000 + i,
                    duration_s: 12.0,
                    concurrency: 4,
                    ..SynthSpec::default()
                };
                if let Err(e) = check_spec(100_000 + i, spec, &tmp) {
                    failures.push(e);
                }
                i += 1;
            }
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(
        failures.is_empty(),
        "{} of {i} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
