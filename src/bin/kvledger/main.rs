//! The kvledger command line. Exit codes: 0 success; 1 an input could not be read (the
//! error's stable code is printed); 2 the command line is wrong.

mod account;
mod inspect;
mod price;
mod run_args;
mod synth;

use kvledger::ReadError;
use std::process::ExitCode;

const USAGE: &str = "\
kvledger: cache accounting for LLM-inference benchmark results

USAGE:
    kvledger inspect [OPTIONS] <RUN_DIR>...
    kvledger inspect [OPTIONS] <FILE>...
    kvledger account [OPTIONS] [--policy FILE] <RUN_DIR>... | <FILE>...
    kvledger price --rows FILE [--policy strict|theoretical|legacy] [--surface S] [--card NAME|FILE] [--json]
    kvledger synth --engine E --topology T [--fault F]... --seed N --duration S --out DIR
    kvledger --version | --help

A RUN_DIR is one benchmark point laid out as AIPerf writes it (the folder itself,
aiperf_artifacts/ or aiperf_artifacts/run_0/), or a sweep holding several (conc1/, conc4/,
profile_runs/run_0001/, ...): each run is read on its own, an unreadable one is reported in its
place. Several RUN_DIRs are read one by one; FILEs given together form one run. Files
kvledger does not read (Parquet, CSV summary, inputs.json, plots, logs) are listed as ignored.

OPTIONS:
    --json                    machine-readable JSON (one object per run; an array for several;
                              a sweep: one line per run, {run, result} or {run, error})
    --families A,B,...        keep only these metric families (any alias spelling)
    --family-prefix P,...     also keep families starting with these prefixes (e.g. vllm:)
    --launch FILE             launch facts JSON (replaces a launch.json in the run, unread)
    --launch-env              launch facts from this process's FRAMEWORK, DISAGG,
                              SRT_PREFILL_ENDPOINTS, SRT_DECODE_ENDPOINTS, SRT_AGG_ENDPOINTS,
                              KV_OFFLOADING, KV_OFFLOAD_BACKEND, ENABLE_PREFIX_CACHING
                              (replaces a launch.json in the run, unread)
    --capture FILE=URL[@NS]   endpoint URL and epoch-ns time of a Prometheus text capture
    --policy FILE             (account) policy JSON: max_rate_width, conservation_tolerance,
                              trust_phase_totals, cached_price_ratio

PRICE OPTIONS (see docs/pricing.md):
    --rows FILE               a JSON array of dashboard BenchmarkRows (or an object of arrays)
    --policy P                strict (default), theoretical or legacy
    --surface S               with legacy: the dashboard surface reproduced, chart, calculator
                              (default) or trend
    --card NAME|FILE          a shipped rate card (normalized, kimi-k3-moonshot, glm-5.2-zai,
                              minimax-m3, deepseek-v4-pro, deepseek-v4.1-flash) or a card JSON file
    --json                    machine-readable JSON

SYNTH (a deterministic run with known truth; see docs/synth.md):
    --engine vllm|sglang|trtllm|atom|dynamo   --variant current|legacy
    --topology agg|aggN|xPyD (e.g. 1P7D)      --tiers gpu[,cpu][,external]
    --fault F[,F]  (start_gap, straddle_proof, straddle_no_proof, counter_reset,
                    alias_collision, cpu_counter_absent, decode_recount, worker_missing,
                    frontend_duplicates, errors_warmup, errors_profiling, nan_gauges,
                    late_final_scrape, proto_labels, tp_disagree, conflicting_exports,
                    csv_json_disagree, restart_unseen, zero_traffic, duplicate_family,
                    duplicate_family_conflict, swapped_launch, benchmark_mismatch,
                    records_outside_window, duplicate_timestamp, prefix_caching_disabled)
    --seed N  --duration SECONDS  --target-bytes 100MB  --concurrency N  --dp N  --tp N
    --frontend  --schema 1.0|1.1  --exports json,csv,jsonl  --no-jsonl  --warmup-per-lane N
    --out DIR
    --examples DIR   regenerate the bundled example runs (examples/synth/)

`account` prints each run's verdict (cache_validity), tier rates with bounds, per-role
counters and token totals; --json gives the whole contract result.

EXIT CODES:
    0  success (whatever the verdicts: a verdict is data)
    1  an input could not be read (the stable error code is printed, e.g. JSON_SYNTAX); in a
       sweep: any run could not be read (every run is printed first)
    2  usage error
";

pub enum Failure {
    Usage(String),
    Read(ReadError),
    /// Errors already printed in their place (a sweep's unreadable runs); the summary line.
    Reported(String),
}

impl From<ReadError> for Failure {
    fn from(e: ReadError) -> Self {
        Failure::Read(e)
    }
}

fn main() -> ExitCode {
    let mut argv = std::env::args().skip(1);
    let cmd = argv.next();
    let result = match cmd.as_deref() {
        Some("inspect") => inspect::main(argv),
        Some("account") => account::main(argv),
        Some("price") => price::main(argv),
        Some("synth") => synth::main(argv),
        Some("--version" | "-V") => {
            println!(
                "kvledger {} ({})",
                env!("CARGO_PKG_VERSION"),
                kvledger::inspect::CONTRACT_VERSION
            );
            Ok(())
        }
        Some("--help" | "-h" | "help") => {
            print!("{USAGE}");
            Ok(())
        }
        Some(other) => Err(Failure::Usage(format!("unknown command `{other}`"))),
        None => Err(Failure::Usage("no command given".to_string())),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage(msg)) => {
            eprintln!("kvledger: {msg}\n\n{USAGE}");
            ExitCode::from(2)
        }
        Err(Failure::Read(e)) => {
            eprintln!("kvledger: error {e}");
            ExitCode::from(1)
        }
        Err(Failure::Reported(summary)) => {
            eprintln!("kvledger: {summary}");
            ExitCode::from(1)
        }
    }
}
