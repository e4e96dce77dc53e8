//! `kvledger account`: the contract result of each run (verdict, rates with bounds, counters).

use crate::run_args::{emit, parse_args, read_runs, word};
use crate::Failure;
use kvledger::account::output::{Bounds, Counters};
use kvledger::account::rates::Rate;
use kvledger::account::{account_run, Accounting, Policy};
use kvledger::{ErrorCode, ReadError};

fn fmt_rate(r: Option<Rate>) -> String {
    match r {
        Some(Rate {
            value: Some(v),
            lo,
            hi,
        }) if lo == hi => format!("{v:.5} (exact)"),
        Some(Rate {
            value: Some(v),
            lo,
            hi,
        }) => format!("{v:.5} [{lo:.5}, {hi:.5}]"),
        Some(Rate {
            value: None,
            lo,
            hi,
        }) => format!("no value [{lo:.5}, {hi:.5}]"),
        None => "-".to_string(),
    }
}

fn fmt_bounds(b: Option<Bounds>) -> String {
    match b {
        Some(b) => match b.hi {
            Some(hi) if hi == b.lo => format!("{}", b.lo),
            Some(hi) => format!("[{}, {}]", b.lo, hi),
            None => format!("[{}, unbounded] ~{}", b.lo, b.value),
        },
        None => "-".to_string(),
    }
}

fn print_counters(role: &str, c: &Counters) {
    println!(
        "    {:<10} prompt {}  hit_gpu {}  hit_cpu {}  hit_external {}{}",
        role,
        fmt_bounds(c.prompt),
        fmt_bounds(c.hit_gpu),
        fmt_bounds(c.hit_cpu),
        fmt_bounds(c.hit_external),
        c.admissions
            .map(|a| format!("  admissions {}", fmt_bounds(Some(a))))
            .unwrap_or_default()
    );
}

pub fn print_table(label: &str, a: &Accounting) {
    let v = &a.cache_validity;
    println!("run: {label}");
    println!(
        "  verdict: {}  pricing_eligible: {}  engine: {}  cpu: {}",
        v.status.as_str(),
        v.pricing_eligible,
        a.engine.map(|e| e.as_str()).unwrap_or("-"),
        word(&v.cpu_component)
    );
    println!(
        "  roles ({}): prefill {}  unified {}  decode {}  frontend {}  excluded {}  unresolved {}",
        word(&v.roles.source),
        word(&v.roles.prefill),
        word(&v.roles.unified),
        word(&v.roles.decode),
        word(&v.roles.frontend),
        word(&v.roles.excluded),
        word(&v.roles.unresolved)
    );
    println!(
        "  window ({}): {} .. {}  evidence {}  straddles {}  gaps {}",
        word(&v.window.source),
        v.window
            .start_ns
            .map(|n| n.to_string())
            .unwrap_or_else(|| "-".into()),
        v.window
            .end_ns
            .map(|n| n.to_string())
            .unwrap_or_else(|| "-".into()),
        word(&v.window.evidence),
        v.window.straddles,
        v.window.gaps
    );
    println!("  rates: overall {}", fmt_rate(a.rates.overall));
    println!(
        "         gpu {}  cpu {}  external {}",
        fmt_rate(a.rates.gpu),
        fmt_rate(a.rates.cpu),
        fmt_rate(a.rates.external)
    );
    println!("  counters:");
    for (role, c) in &a.counters {
        print_counters(role, c);
    }
    let rs = &v.request_scope;
    println!(
        "  request scope: {} profiling records, {} errors, {} cancelled, client prompt {}, conserved {}",
        rs.profiling_records,
        rs.errors,
        rs.cancelled,
        rs.client_prompt_tokens.map(|t| t.to_string()).unwrap_or_else(|| "-".into()),
        rs.conserved
    );
    println!(
        "  tokens ({}): prompt {}  generation {}   kv pool {}   theoretical {}",
        word(&a.tokens.source),
        a.legacy
            .total_prompt_tokens
            .map(|t| t.to_string())
            .unwrap_or_else(|| "-".into()),
        a.legacy
            .total_generation_tokens
            .map(|t| t.to_string())
            .unwrap_or_else(|| "-".into()),
        a.legacy
            .kv_cache_pool_tokens
            .map(|t| t.to_string())
            .unwrap_or_else(|| "-".into()),
        a.theoretical_hit_rate
            .map(|t| format!("{t:.5}"))
            .unwrap_or_else(|| "-".into()),
    );
    for r in &v.reasons {
        let status = r.code.status().map(|s| s.as_str()).unwrap_or("note");
        let at = r
            .endpoint
            .as_deref()
            .map(|e| format!(" @ {e}"))
            .unwrap_or_default();
        println!(
            "  - {:<24} {:<40} {}{}",
            status,
            r.code.as_str(),
            r.detail,
            at
        );
    }
}

pub fn main(argv: impl Iterator<Item = String>) -> Result<(), Failure> {
    let args = parse_args(argv, true)?;
    let policy = match &args.policy_file {
        Some(p) => {
            let name = p.display().to_string();
            let text = std::fs::read_to_string(p)
                .map_err(|e| ReadError::whole(ErrorCode::Io, &name, format!("cannot read: {e}")))?;
            Policy::from_json(&name, &text)?
        }
        None => Policy::default(),
    };
    let runs = read_runs(&args, kvledger::account::families_read())?;
    let results: Vec<(String, Result<Accounting, _>)> = runs
        .runs
        .into_iter()
        .map(|(label, run)| (label, run.map(|r| account_run(&r, &policy))))
        .collect();
    emit(&results, runs.sweep, &runs.stray, args.json, print_table)
}
