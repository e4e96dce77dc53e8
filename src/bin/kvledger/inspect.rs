//! `kvledger inspect`: what a run's artifacts contain.

use crate::Failure;
use kvledger::inspect::{inspect_run, RunInspection};
use kvledger::read::launch::{launch_from_env, read_launch_json};
use kvledger::read::run_dir::discover;
use kvledger::read::{read_run, CaptureMeta, FamilyFilter, InputFile, RunOptions};
use kvledger::ReadError;
use std::path::{Path, PathBuf};

pub struct Args {
    pub json: bool,
    families: Option<Vec<String>>,
    prefixes: Vec<String>,
    launch_file: Option<PathBuf>,
    launch_env: bool,
    captures: Vec<(String, CaptureMeta)>,
    paths: Vec<PathBuf>,
}

fn split_list(v: &str) -> Vec<String> {
    v.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

fn parse_capture(v: &str) -> Result<(String, CaptureMeta), Failure> {
    let (file, rest) = v
        .split_once('=')
        .ok_or_else(|| Failure::Usage(format!("--capture {v}: expected FILE=URL[@NS]")))?;
    let (url, ns) = match rest.rsplit_once('@') {
        Some((u, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
            let ns = n
                .parse::<u64>()
                .map_err(|_| Failure::Usage(format!("--capture {v}: time {n} is not epoch ns")))?;
            (u, Some(ns))
        }
        _ => (rest, None),
    };
    let meta = CaptureMeta {
        endpoint_url: (!url.is_empty()).then(|| url.to_string()),
        timestamp_ns: ns,
    };
    Ok((file.to_string(), meta))
}

pub fn parse_args(mut argv: impl Iterator<Item = String>) -> Result<Args, Failure> {
    let mut args = Args {
        json: false,
        families: None,
        prefixes: Vec::new(),
        launch_file: None,
        launch_env: false,
        captures: Vec::new(),
        paths: Vec::new(),
    };
    while let Some(a) = argv.next() {
        let mut value = |name: &str| {
            argv.next()
                .ok_or_else(|| Failure::Usage(format!("{name} needs a value")))
        };
        match a.as_str() {
            "--json" => args.json = true,
            "--families" => args.families = Some(split_list(&value("--families")?)),
            "--family-prefix" => args.prefixes.extend(split_list(&value("--family-prefix")?)),
            "--launch" => args.launch_file = Some(PathBuf::from(value("--launch")?)),
            "--launch-env" => args.launch_env = true,
            "--capture" => args.captures.push(parse_capture(&value("--capture")?)?),
            s if s.starts_with("--") => return Err(Failure::Usage(format!("unknown option {s}"))),
            _ => args.paths.push(PathBuf::from(a)),
        }
    }
    if args.paths.is_empty() {
        return Err(Failure::Usage("give a run directory or files".to_string()));
    }
    if args.launch_file.is_some() && args.launch_env {
        return Err(Failure::Usage(
            "give --launch or --launch-env, not both".to_string(),
        ));
    }
    Ok(args)
}

fn options(args: &Args) -> Result<RunOptions, Failure> {
    let mut families = match &args.families {
        Some(names) => FamilyFilter::only(names),
        None => FamilyFilter::all(),
    };
    if !args.prefixes.is_empty() {
        families = families.with_prefixes(&args.prefixes);
    }
    let launch = if let Some(path) = &args.launch_file {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| {
            ReadError::whole(kvledger::ErrorCode::Io, &name, format!("cannot read: {e}"))
        })?;
        Some(read_launch_json(&name, &text)?)
    } else if args.launch_env {
        let vars: Vec<(String, String)> = std::env::vars().collect();
        Some(launch_from_env(
            vars.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        )?)
    } else {
        None
    };
    Ok(RunOptions {
        families,
        captures: args.captures.iter().cloned().collect(),
        launch,
    })
}

/// Each directory is one run; loose files together form one more.
fn runs(paths: &[PathBuf]) -> Result<Vec<(String, Vec<PathBuf>)>, Failure> {
    let mut out = Vec::new();
    let mut loose = Vec::new();
    for p in paths {
        if p.is_dir() {
            out.push((p.display().to_string(), discover(p)?));
        } else {
            loose.push(p.clone());
        }
    }
    if !loose.is_empty() {
        let label = loose
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(" ");
        out.push((label, loose));
    }
    Ok(out)
}

fn file_label(path: &Path) -> String {
    path.display().to_string()
}

pub fn inspect(args: &Args) -> Result<Vec<(String, RunInspection)>, Failure> {
    let opts = options(args)?;
    let mut results = Vec::new();
    for (label, files) in runs(&args.paths)? {
        let inputs: Vec<InputFile<'_>> = files
            .iter()
            .map(|p| InputFile::path(file_label(p), p.clone()))
            .collect();
        let run = read_run(&inputs, &opts)?;
        results.push((label, inspect_run(&run)));
    }
    Ok(results)
}

fn fmt_ns(ns: Option<u64>) -> String {
    ns.map(|n| n.to_string()).unwrap_or_else(|| "-".to_string())
}

pub fn print_table(label: &str, r: &RunInspection) {
    println!("run: {label}");
    for f in &r.files {
        println!("  file  {:<22} {}", f.kind.as_str(), f.name);
    }
    for s in &r.server_metrics {
        println!(
            "  server metrics ({:?}): schema {} aiperf {}  families {} (+{} warmup, {} skipped)  series {}  timeslices {}",
            s.format,
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
                .map(|r| format!(" [{}]", format!("{r:?}").to_lowercase()))
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
            format!("{:?}", c.source),
            fmt_ns(Some(c.start_ns)),
            fmt_ns(Some(c.end_ns))
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
            "  launch: framework {} disaggregated {} prefill [{}] decode [{}] unified [{}] offloading {} backend {}",
            l.framework.as_deref().unwrap_or("-"),
            l.disaggregated.map(|d| d.to_string()).unwrap_or_else(|| "-".into()),
            l.prefill.join(","),
            l.decode.join(","),
            l.unified.join(","),
            l.kv_offloading.as_deref().unwrap_or("-"),
            l.kv_offload_backend.as_deref().unwrap_or("-")
        );
    }
    for n in &r.notes {
        println!("  note: {n}");
    }
}

/// Run the subcommand with the arguments after `inspect`.
pub fn main(argv: impl Iterator<Item = String>) -> Result<(), Failure> {
    let args = parse_args(argv)?;
    let results = inspect(&args)?;
    if args.json {
        let text = if results.len() == 1 {
            serde_json::to_string_pretty(&results[0].1)
        } else {
            serde_json::to_string_pretty(&results.iter().map(|(_, r)| r).collect::<Vec<_>>())
        };
        match text {
            Ok(t) => println!("{t}"),
            Err(e) => return Err(Failure::Usage(format!("cannot serialise: {e}"))),
        }
    } else {
        for (i, (label, r)) in results.iter().enumerate() {
            if i > 0 {
                println!();
            }
            print_table(label, r);
        }
    }
    Ok(())
}
