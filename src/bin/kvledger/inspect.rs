//! `kvledger inspect`: what a run's artifacts contain.

use crate::batch::Batch;
use crate::out::say;
use crate::run_args::{select_runs, word, RunArgs};
use crate::Failure;
use kvledger::inspect::{inspect_run, RunInspection};
use kvledger::utc;

pub const ABOUT: &str = "What a run's artifacts contain: files read and ignored, endpoints, \
                         families, phases, window candidates, evidence";

pub const AFTER_HELP: &str = "\
A RUN_DIR is one benchmark point laid out as AIPerf writes it (the folder itself,
aiperf_artifacts/ or aiperf_artifacts/run_0/), or a sweep holding several (conc1/, conc4/,
profile_runs/run_0001/, ...): each run is read on its own, an unreadable one is reported in its
place. Several runs (a sweep, a results tree, several RUN_DIRs) are read --jobs at a time and
printed in argument then path order, the same whatever --jobs; a progress bar shows on a
terminal, and a summary line (runs, failed, seconds, runs/s, MB/s) ends the batch on stderr
unless --quiet. FILEs given together form one run. Files kvledger
does not read (Parquet, CSV summary, inputs.json, plots, logs) are listed as ignored; a FILE
named on the command line that matches no format is refused (UNKNOWN_FORMAT).

Times are shown in UTC, spans in seconds; --json gives the whole inspection in the envelope of
docs/cli.md.

Examples:
  kvledger inspect examples/vllm-mi355x-conc1
  kvledger inspect --json examples/vllm-doc-timeslices
  kvledger inspect server_metrics_export.json profile_export.jsonl --launch launch.json
  SRT_AGG_ENDPOINTS=localhost:8000 DISAGG=false kvledger inspect --launch-env run/
  kvledger inspect --capture before.prom=http://h:8000/metrics@1781000000000000000 before.prom
  curl -s http://h:8000/metrics | kvledger inspect --stdin-name now.prom -

Exit codes: 0 success; 1 an input could not be read (its stable error code is printed; several
runs: after every run is printed); 2 the command line is wrong.";

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub run: RunArgs,
}

fn files_lines(text: &mut String, r: &RunInspection) {
    for f in &r.files {
        say!(text, "  file  {:<22} {}", f.kind.as_str(), f.name);
    }
    for f in &r.ignored {
        say!(text, "  ignored  {}  ({})", f.name, f.reason);
    }
    for (file, id) in &r.benchmark_ids {
        say!(text, "  benchmark_id  {id}  ({file})");
    }
    for s in &r.server_metrics {
        say!(
            text,
            "  server metrics ({}): schema {} aiperf {}  families {} (+{} warmup, {} skipped)  series {}  timeslices {}",
            word(&s.format),
            s.schema_version.as_deref().unwrap_or("-"),
            s.aiperf_version.as_deref().unwrap_or("-"),
            s.families,
            s.warmup_families,
            s.skipped_families,
            s.series,
            s.timeslices
        );
    }
}

fn endpoint_lines(text: &mut String, r: &RunInspection) {
    if r.endpoints.is_empty() {
        return;
    }
    say!(
        text,
        "  {:<44} {:<14} {:>8} {:>7} {:>8} {:>6} {:>10} {:>7}  sources",
        "endpoint",
        "engines",
        "families",
        "series",
        "counters",
        "hists",
        "timeslices",
        "scrapes"
    );
    for e in &r.endpoints {
        let mut engines = e.engines.join(",");
        if engines.is_empty() {
            engines.push('-');
        }
        let role = e
            .path_role
            .map(|r| format!(" [{}]", word(&r)))
            .unwrap_or_default();
        say!(
            text,
            "  {:<44} {:<14} {:>8} {:>7} {:>8} {:>6} {:>10} {:>7}  {}{}",
            e.endpoint_url,
            engines,
            e.families,
            e.series,
            e.counter_series,
            e.histogram_series,
            e.timeslices,
            e.scrapes,
            e.sources.join(","),
            role
        );
    }
}

fn window_lines(text: &mut String, r: &RunInspection) {
    let span = utc::window_of;
    if let Some(p) = &r.phases.profiling {
        say!(text, "  profiling window  {}", span(p.start_ns, p.end_ns));
    }
    if let Some(w) = &r.phases.warmup {
        say!(text, "  warmup            {}", span(w.start_ns, w.end_ns));
    }
    for c in &r.window_candidates {
        say!(
            text,
            "  window candidate  {:<24} {}",
            word(&c.source),
            span(c.start_ns, c.end_ns)
        );
    }
}

fn evidence_lines(text: &mut String, r: &RunInspection) {
    let e = &r.evidence;
    say!(
        text,
        "  evidence: raw scrapes {}, untimed captures {}, counter series with timeslices {}, with totals {}, phase totals {}, warmup metrics {}, records {}, summary {}, launch {}",
        e.raw_scrapes,
        e.untimed_captures,
        e.counter_series_with_timeslices,
        e.counter_series_with_totals,
        e.phase_totals,
        e.warmup_metrics,
        e.profile_records,
        e.run_summary,
        e.launch_facts
    );
    if let Some(q) = &r.requests {
        say!(
            text,
            "  requests: {} records ({} profiling, {} warmup, {} without phase), errors {} profiling / {} warmup, cancelled {}",
            q.records, q.profiling, q.warmup, q.without_phase, q.profiling_errors, q.warmup_errors, q.cancelled
        );
    }
    if let Some(t) = r
        .run_summary
        .as_ref()
        .and_then(|s| s.theoretical_prefix_cache_hit)
    {
        say!(text, "  theoretical prefix-cache hit (client): {t}");
    }
}

fn launch_lines(text: &mut String, r: &RunInspection) {
    if let Some(l) = &r.launch {
        say!(
            text,
            "  launch: framework {} disaggregated {} prefill [{}] decode [{}] unified [{}] offloading {} backend {} prefix caching {}",
            l.framework.as_deref().unwrap_or("-"),
            word(&l.disaggregated),
            l.prefill.join(","),
            l.decode.join(","),
            l.unified.join(","),
            l.kv_offloading.as_deref().unwrap_or("-"),
            l.kv_offload_backend.as_deref().unwrap_or("-"),
            word(&l.enable_prefix_caching)
        );
    }
    for n in &r.notes {
        say!(text, "  note: {n}");
    }
}

/// A run's inspection as text.
pub fn render(label: &str, r: &RunInspection) -> String {
    let mut text = String::new();
    say!(text, "run: {label}");
    files_lines(&mut text, r);
    endpoint_lines(&mut text, r);
    window_lines(&mut text, r);
    evidence_lines(&mut text, r);
    launch_lines(&mut text, r);
    text
}

pub fn main(args: Args) -> Result<(), Failure> {
    args.run.check(&[])?;
    let runs = select_runs(&args.run, kvledger::read::FamilyFilter::all())?;
    Batch {
        command: "inspect",
        json: args.run.json,
        jobs: args.run.jobs(),
        quiet: args.run.quiet,
        process: &|run, _| inspect_run(&run),
        table: render,
    }
    .run(&runs)
}
