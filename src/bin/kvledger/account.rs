//! `kvledger account`: the contract result of each run (verdict, rates with bounds, counters).

use crate::batch::Batch;
use crate::input::{self, is_stdin};
use crate::out::say;
use crate::run_args::{select_runs, word, RunArgs};
use crate::Failure;
use kvledger::account::output::{Bounds, Counters};
use kvledger::account::rates::Rate;
use kvledger::account::{account_run_folded, Accounting, Policy};
use kvledger::read::Run;
use kvledger::utc;
use std::path::PathBuf;

pub const ABOUT: &str = "The contract result of each run: verdict, tier rates with bounds, \
                         per-role counters, token totals";

/// The detailed help after the options: what a run is, the policy fields with their defaults
/// (from the built-in policy itself), examples, exit codes.
pub fn after_help() -> String {
    let p = Policy::default();
    format!(
        "\
A RUN_DIR is one benchmark point laid out as AIPerf writes it (the folder itself,
aiperf_artifacts/ or aiperf_artifacts/run_0/), or a sweep holding several (conc1/, conc4/,
profile_runs/run_0001/, ...): each run is read on its own, an unreadable one is reported in its
place. Several runs (a sweep, a results tree, several RUN_DIRs) are read --jobs at a time and
printed in argument then path order, the same whatever --jobs; a progress bar shows on a
terminal, and a summary line (runs, failed, seconds, runs/s, MB/s) ends the batch on stderr
unless --quiet. FILEs given together form one run. Files kvledger
does not read (Parquet, CSV summary, inputs.json, plots, logs) are listed as ignored.

The text gives each run's verdict (cache_validity), tier rates with bounds, per-role counters,
the window in UTC and seconds, and token totals; --json gives the whole contract result
(docs/accounting.md) in the envelope of docs/cli.md.

Policy JSON (--policy; every field optional, an unknown field is refused by name):
  max_rate_width          a rate whose interval is wider is WINDOW_UNRESOLVED [default: {}]
  conservation_tolerance  tokens by which the client's prompt sum may fall outside the
                          server's prompt interval [default: {}]
  trust_phase_totals      take schema 1.1 phase totals as the exact window increase
                          [default: {}]
  cached_price_ratio      cached-input price as a share of the input price [default: {}]

Examples:
  kvledger account examples/synth/vllm-1p1d-cpu-offload
  kvledger account --json --policy policy.json tests/fixtures/sweep
  kvledger account --stdin-name server_metrics_export.json - < server_metrics_export.json

Exit codes: 0 success, whatever the verdicts (a verdict is data); 1 an input could not be read
(its stable error code is printed; several runs: after every run is printed); 2 the command
line is wrong, or the --policy file cannot be read or is invalid.",
        p.max_rate_width, p.conservation_tolerance, p.trust_phase_totals, p.cached_price_ratio
    )
}

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub run: RunArgs,

    /// Accounting policy JSON (fields below); `-` reads stdin [default: the built-in policy]
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
}

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

fn fmt_count<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map(|t| t.to_string()).unwrap_or_else(|| "-".into())
}

fn counters_line(text: &mut String, role: &str, c: &Counters) {
    say!(
        text,
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

/// The verdict, roles and window lines.
fn verdict_lines(text: &mut String, a: &Accounting) {
    let v = &a.cache_validity;
    say!(
        text,
        "  verdict: {}  pricing_eligible: {}  engine: {}  cpu: {}",
        v.status.as_str(),
        v.pricing_eligible,
        a.engine.map(|e| e.as_str()).unwrap_or("-"),
        word(&v.cpu_component)
    );
    say!(
        text,
        "  roles ({}): prefill {}  unified {}  decode {}  frontend {}  excluded {}  unresolved {}",
        word(&v.roles.source),
        word(&v.roles.prefill),
        word(&v.roles.unified),
        word(&v.roles.decode),
        word(&v.roles.frontend),
        word(&v.roles.excluded),
        word(&v.roles.unresolved)
    );
    say!(
        text,
        "  window ({}): {}  evidence {}  straddles {}  gaps {}",
        word(&v.window.source),
        utc::window_of(v.window.start_ns, v.window.end_ns),
        word(&v.window.evidence),
        v.window.straddles,
        v.window.gaps
    );
}

/// A run's accounting as text.
pub fn render(label: &str, a: &Accounting) -> String {
    let mut text = String::new();
    say!(text, "run: {label}");
    verdict_lines(&mut text, a);
    say!(text, "  rates: overall {}", fmt_rate(a.rates.overall));
    say!(
        text,
        "         gpu {}  cpu {}  external {}",
        fmt_rate(a.rates.gpu),
        fmt_rate(a.rates.cpu),
        fmt_rate(a.rates.external)
    );
    say!(text, "  counters:");
    for (role, c) in &a.counters {
        counters_line(&mut text, role, c);
    }
    let rs = &a.cache_validity.request_scope;
    say!(
        text,
        "  request scope: {} profiling records, {} errors, {} cancelled, client prompt {}, conserved {}",
        rs.profiling_records,
        rs.errors,
        rs.cancelled,
        fmt_count(rs.client_prompt_tokens),
        rs.conserved
    );
    say!(
        text,
        "  tokens ({}): prompt {}  generation {}   kv pool {}   theoretical {}",
        word(&a.tokens.source),
        fmt_count(a.legacy.total_prompt_tokens),
        fmt_count(a.legacy.total_generation_tokens),
        fmt_count(a.legacy.kv_cache_pool_tokens),
        a.theoretical_hit_rate
            .map(|t| format!("{t:.5}"))
            .unwrap_or_else(|| "-".into()),
    );
    for r in &a.cache_validity.reasons {
        let status = r.code.status().map(|s| s.as_str()).unwrap_or("note");
        let at = r
            .endpoint
            .as_deref()
            .map(|e| format!(" @ {e}"))
            .unwrap_or_default();
        say!(
            text,
            "  - {:<24} {:<40} {}{}",
            status,
            r.code.as_str(),
            r.detail,
            at
        );
    }
    text
}

/// The policy from `--policy` (a file or stdin), else the default. Its errors are the
/// command line's (exit 2), with the file's code and position.
fn policy(args: &Args) -> Result<Policy, Failure> {
    let Some(path) = &args.policy else {
        return Ok(Policy::default());
    };
    let (name, text) = input::read_text(path).map_err(Failure::OptionInput)?;
    Policy::from_json(&name, &text).map_err(Failure::OptionInput)
}

pub fn main(args: Args) -> Result<(), Failure> {
    let stdin_policy = args.policy.as_deref().is_some_and(is_stdin);
    args.run.check(&[("--policy", stdin_policy)])?;
    let policy = policy(&args)?;
    // Read as the WASM API reads (the same result, less memory: no scrape or record kept).
    let runs = select_runs(&args.run, kvledger::account::families_read())?.folding();
    Batch {
        command: "account",
        json: args.run.json,
        jobs: args.run.jobs(),
        quiet: args.run.quiet,
        process: &|run: Run, folded| account_run_folded(run, folded, &policy),
        table: render,
    }
    .run(&runs)
}
