//! `kvledger inspect`: what a run's artifacts contain.

use crate::run_args::{emit, parse_args, read_runs, word};
use crate::Failure;
use kvledger::inspect::{inspect_run, RunInspection};

fn fmt_ns(ns: Option<u64>) -> String {
    ns.map(|n| n.to_string()).unwrap_or_else(|| "-".to_string())
}

pub fn print_table(label: &str, r: &RunInspection) {
    println!("run: {label}");
    for f in &r.files {
        println!("  file  {:<22} {}", f.kind.as_str(), f.name);
    }
    for f in &r.ignored {
        println!("  ignored  {}  ({})", f.name, f.reason);
    }
    for (file, id) in &r.benchmark_ids {
        println!("  benchmark_id  {id}  ({file})");
    }
    for s in &r.server_metrics {
        println!(
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
    if !r.endpoints.is_empty() {
        println!(
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
            println!(
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
    if let Some(p) = &r.phases.profiling {
        println!("  profiling window  {} .. {} ns", p.start_ns, p.end_ns);
    }
    if let Some(w) = &r.phases.warmup {
        println!("  warmup            {} .. {} ns", w.start_ns, w.end_ns);
    }
    for c in &r.window_candidates {
        println!(
            "  window candidate  {:<24} {} .. {}",
            word(&c.source),
            fmt_ns(Some(c.start_ns.0)),
            fmt_ns(Some(c.end_ns.0))
        );
    }
    let e = &r.evidence;
    println!(
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
        println!(
            "  requests: {} records ({} profiling, {} warmup, {} without phase), errors {} profiling / {} warmup, cancelled {}",
            q.records, q.profiling, q.warmup, q.without_phase, q.profiling_errors, q.warmup_errors, q.cancelled
        );
    }
    if let Some(s) = &r.run_summary {
        if let Some(t) = s.theoretical_prefix_cache_hit {
            println!("  theoretical prefix-cache hit (client): {t}");
        }
    }
    if let Some(l) = &r.launch {
        println!(
            "  launch: framework {} disaggregated {} prefill [{}] decode [{}] unified [{}] offloading {} backend {} prefix caching {}",
            l.framework.as_deref().unwrap_or("-"),
            l.disaggregated.map(|d| d.to_string()).unwrap_or_else(|| "-".into()),
            l.prefill.join(","),
            l.decode.join(","),
            l.unified.join(","),
            l.kv_offloading.as_deref().unwrap_or("-"),
            l.kv_offload_backend.as_deref().unwrap_or("-"),
            word(&l.enable_prefix_caching)
        );
    }
    for n in &r.notes {
        println!("  note: {n}");
    }
}

/// Run the subcommand with the arguments after `inspect`.
pub fn main(argv: impl Iterator<Item = String>) -> Result<(), Failure> {
    let args = parse_args(argv, false)?;
    let runs = read_runs(&args, kvledger::read::FamilyFilter::all())?;
    let results: Vec<(String, Result<RunInspection, _>)> = runs
        .runs
        .into_iter()
        .map(|(label, run)| (label, run.map(|r| inspect_run(&r))))
        .collect();
    emit(&results, runs.sweep, &runs.stray, args.json, print_table)
}
