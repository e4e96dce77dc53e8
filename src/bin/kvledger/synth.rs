//! `kvledger synth`: generate a complete AIPerf run with known truth.
//!
//! Every option given is honoured or refused: the generator adjusts a spec for its faults and
//! engine (`SynthSpec::resolved`); an adjustment of a value the user gave explicitly is refused
//! naming the option, and the defaults it adjusts are printed with the run.

mod checks;

use crate::out::{self, envelope, say};
use crate::Failure;
use checks::{check_explicit, check_fault_needs, check_target, schema_text, tiers_text, yes_no};
use clap::ArgMatches;
use kvledger::synth::{
    generate, Engine, Fault, Schema, SynthError, SynthSpec, SynthSummary, Topology,
};
use kvledger::{ErrorCode, ReadError};
use serde::Serialize;
use std::path::{Path, PathBuf};

pub const ABOUT: &str = "Generate a deterministic AIPerf run with known truth (truth.json): \
                         every engine, topology and fault";

/// The detailed help after the options: the faults (from the generator's list), examples,
/// exit codes.
pub fn after_help() -> String {
    let faults: Vec<&str> = Fault::ALL.iter().map(|f| f.as_str()).collect();
    let mut list = String::new();
    let mut line = String::from(" ");
    for f in faults {
        if line.len() + f.len() > 92 {
            say!(list, "{}", line.trim_end_matches(','));
            line = String::from(" ");
        }
        line.push_str(&format!(" {f},"));
    }
    list.push_str(line.trim_end_matches(','));
    format!(
        "\
Faults (--fault; what each does and the verdict it must give: docs/synth.md):
{list}

A fault or engine that needs a setting (a schema, an export, a tier, a topology, tp >= 2)
changes that setting when it is left at its default, and the run's settings line shows it;
when the option was given explicitly the command is refused and names the option. The
folder written holds aiperf_artifacts/ (AIPerf's files), launch.json and truth.json.

Examples:
  kvledger synth --engine vllm --topology agg --seed 1 --duration 60 --out /tmp/run
  kvledger synth --engine sglang --topology 1P7D --tiers gpu,cpu,external --dp 2 --tp 2 --out /tmp/pd
  kvledger synth --engine atom --variant legacy --fault counter_reset,errors_profiling --out /tmp/f
  kvledger synth --engine trtllm --topology agg4 --target-bytes 100MB --out /tmp/big
  kvledger synth --examples examples/synth --force   # regenerate the bundled examples

Exit codes: 0 success; 1 the output cannot be written (code IO); 2 the command line is wrong
(a value, a combination the generator cannot honour, a non-empty --out without --force)."
    )
}

/// Cache tiers besides the GPU's (always present).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tier {
    Gpu,
    Cpu,
    External,
}

/// The server-metrics exports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Export {
    Json,
    Csv,
    Jsonl,
}

fn parse_engine(v: &str) -> Result<Engine, String> {
    Engine::parse(v).ok_or_else(|| "expected vllm, sglang, trtllm, atom or dynamo".to_string())
}

fn parse_topology(v: &str) -> Result<Topology, String> {
    Topology::parse(v)
        .ok_or_else(|| "expected agg, aggN or xPyD (e.g. agg4, 1P7D), counts 1 to 64".to_string())
}

fn parse_tier(v: &str) -> Result<Tier, String> {
    match v.trim() {
        "gpu" => Ok(Tier::Gpu),
        "cpu" => Ok(Tier::Cpu),
        "external" | "storage" => Ok(Tier::External),
        _ => Err("expected gpu, cpu or external".to_string()),
    }
}

fn parse_export(v: &str) -> Result<Export, String> {
    match v.trim() {
        "json" => Ok(Export::Json),
        "csv" => Ok(Export::Csv),
        "jsonl" => Ok(Export::Jsonl),
        _ => Err("expected json, csv or jsonl".to_string()),
    }
}

fn parse_fault(v: &str) -> Result<Fault, String> {
    Fault::parse(v).ok_or_else(|| "not a fault (the list is in --help)".to_string())
}

/// The generator refuses durations outside [2, 1e7] s.
fn parse_duration(v: &str) -> Result<f64, String> {
    let d: f64 = v
        .trim_end_matches('s')
        .parse()
        .map_err(|_| "expected seconds, e.g. 60 or 60s".to_string())?;
    if d.is_finite() && (2.0..=1.0e7).contains(&d) {
        Ok(d)
    } else {
        Err("expected 2 to 10000000 seconds".to_string())
    }
}

/// `100MB` (10^6), `100MiB` / `100M` (2^20), `1.5GB`, `5000` (bytes).
fn parse_bytes(v: &str) -> Result<u64, String> {
    let s = v.trim().to_ascii_uppercase();
    let (num, mult) = [
        ("GIB", 1u64 << 30),
        ("MIB", 1 << 20),
        ("KIB", 1 << 10),
        ("GB", 1_000_000_000),
        ("MB", 1_000_000),
        ("KB", 1_000),
        ("G", 1 << 30),
        ("M", 1 << 20),
        ("K", 1 << 10),
        ("B", 1),
    ]
    .iter()
    .find_map(|(suf, m)| s.strip_suffix(suf).map(|n| (n.trim().to_string(), *m)))
    .unwrap_or((s.clone(), 1));
    num.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x > 0.0 && x * (mult as f64) < 1.0e18)
        .map(|x| (x * mult as f64) as u64)
        .ok_or_else(|| "expected a size like 100MB, 64MiB or 5000".to_string())
}

#[derive(clap::Args)]
pub struct Args {
    /// Engine whose metrics are generated: vllm, sglang, trtllm, atom or dynamo (Dynamo
    /// frontend with vLLM workers)
    #[arg(long, value_name = "ENGINE", default_value = "vllm", value_parser = parse_engine)]
    engine: Engine,

    /// Metric variant: current or legacy, or the engine's own variant name (vllm/dynamo:
    /// by_source, no_by_source; sglang: cache_source, no_cache_source; trtllm: token_counters,
    /// no_token_counters; atom: offload_counter, no_offload_counter)
    #[arg(long, value_name = "VARIANT", default_value = "current")]
    variant: String,

    /// Endpoints: agg, aggN (N aggregated endpoints) or xPyD (x prefill, y decode), e.g. 1P7D
    #[arg(long, value_name = "TOPOLOGY", default_value = "agg", value_parser = parse_topology)]
    topology: Topology,

    /// Cache tiers, comma-separated: gpu (always present), cpu, external
    #[arg(long, value_name = "gpu[,cpu][,external]", default_value = "gpu",
          value_delimiter = ',', value_parser = parse_tier)]
    tiers: Vec<Tier>,

    /// Faults to inject, comma-separated or repeated (list below) [default: none]
    #[arg(long, value_name = "F[,F]", value_delimiter = ',', value_parser = parse_fault)]
    fault: Vec<Fault>,

    /// Seed of every random choice (the same seed and options give the same bytes)
    #[arg(long, value_name = "N", default_value_t = 1)]
    seed: u64,

    /// Profiling phase length in seconds, 2 to 10000000 (requests are issued this long)
    #[arg(long, value_name = "SECONDS", default_value = "60", value_parser = parse_duration,
          conflicts_with = "target_bytes")]
    duration: f64,

    /// Choose the duration so that the run's files total about this size (e.g. 100MB; MB is
    /// 10^6, MiB 2^20); replaces --duration, so the two cannot be given together; a size below
    /// the run's shortest calibrated length (5 s) is refused [default: sized by --duration]
    #[arg(long, value_name = "SIZE", value_parser = parse_bytes)]
    target_bytes: Option<u64>,

    /// Concurrent request lanes, 1 to 4096
    #[arg(long, value_name = "N", default_value_t = 8,
          value_parser = clap::value_parser!(u32).range(1..=4096))]
    concurrency: u32,

    /// DP ranks (KV pools) per engine endpoint, 1 to 64
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=64))]
    dp: u32,

    /// TP replica series per pool (engines that repeat a pool's values per tp_rank), 1 to 16
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=16))]
    tp: u32,

    /// Warmup requests per lane before profiling
    #[arg(long, value_name = "N", default_value_t = 2)]
    warmup_per_lane: u32,

    /// Add a frontend endpoint (always present for dynamo) [default: no frontend]
    #[arg(long)]
    frontend: bool,

    /// AIPerf server-metrics JSON schema: 1.0 or 1.1
    #[arg(long, value_name = "VERSION", default_value = "1.1",
          value_parser = ["1.0", "1.1"])]
    schema: String,

    /// Server-metrics exports written, comma-separated: json, csv, jsonl
    #[arg(long, value_name = "json,csv,jsonl", default_value = "json,csv,jsonl",
          value_delimiter = ',', value_parser = parse_export)]
    exports: Vec<Export>,

    /// Write no server_metrics_export.jsonl (the same as --exports json,csv)
    #[arg(long, conflicts_with = "exports")]
    no_jsonl: bool,

    /// Folder to write the run into (created if needed; must be empty unless --force)
    #[arg(long, value_name = "DIR", required_unless_present = "examples")]
    out: Option<PathBuf>,

    /// Regenerate the bundled example runs into DIR/<name>/ (examples/synth); takes no other
    /// run option
    #[arg(long, value_name = "DIR", conflicts_with_all = [
        "engine", "variant", "topology", "tiers", "fault", "seed", "duration", "target_bytes",
        "concurrency", "dp", "tp", "warmup_per_lane", "frontend", "schema", "exports",
        "no_jsonl", "out"])]
    examples: Option<PathBuf>,

    /// Write into a non-empty folder: the files of an earlier synth run there are removed
    /// first, other files are left as they are [default: a non-empty folder is refused]
    #[arg(long)]
    force: bool,

    /// Print one JSON envelope per run written: {"kvledger":"1","command":"synth","out":DIR,
    /// "result":{name, settings, duration_s, requests, scrapes, total_bytes, expected_status,
    /// files}}
    #[arg(long)]
    json: bool,
}

/// Every file the generator may write, relative to the run folder (`--force` removes these).
const SYNTH_FILES: [&str; 7] = [
    "aiperf_artifacts/profile_export.jsonl",
    "aiperf_artifacts/profile_export_aiperf.json",
    "aiperf_artifacts/server_metrics_export.csv",
    "aiperf_artifacts/server_metrics_export.json",
    "aiperf_artifacts/server_metrics_export.jsonl",
    "launch.json",
    "truth.json",
];

/// `--variant`: current or legacy, in the generic or the engine's own spelling.
fn variant_legacy(engine: Engine, v: &str) -> Result<bool, Failure> {
    let (cur, leg) = engine.variants();
    match v {
        "current" => Ok(false),
        "legacy" => Ok(true),
        _ if v == cur => Ok(false),
        _ if v == leg => Ok(true),
        _ => Err(Failure::Usage(format!(
            "--variant {v}: expected current, legacy, {cur} or {leg} for engine {}",
            engine.as_str()
        ))),
    }
}

/// The spec exactly as the options say (before the generator's adjustments).
pub(crate) fn spec_of(a: &Args) -> Result<SynthSpec, Failure> {
    let exports = |e: Export| a.exports.contains(&e);
    Ok(SynthSpec {
        engine: a.engine,
        variant_legacy: variant_legacy(a.engine, &a.variant)?,
        topology: a.topology,
        tier_cpu: a.tiers.contains(&Tier::Cpu),
        tier_external: a.tiers.contains(&Tier::External),
        faults: a.fault.clone(),
        seed: a.seed,
        duration_s: a.duration,
        warmup_per_lane: a.warmup_per_lane,
        concurrency: a.concurrency,
        dp: a.dp,
        tp: a.tp,
        frontend: a.frontend,
        schema: if a.schema == "1.0" {
            Schema::V1_0
        } else {
            Schema::V1_1
        },
        json: exports(Export::Json),
        csv: exports(Export::Csv),
        jsonl: exports(Export::Jsonl) && !a.no_jsonl,
        target_bytes: a.target_bytes,
        ..SynthSpec::default()
    })
}

pub(crate) fn synth_failure(e: SynthError, dir: &Path) -> Failure {
    match e {
        SynthError::Spec(m) => Failure::Usage(m),
        SynthError::Io(e) => Failure::Read(ReadError::whole(
            ErrorCode::Io,
            &dir.display().to_string(),
            format!("cannot write: {e}"),
        )),
    }
}

/// Whether a folder may be written: absent or empty, or non-empty with `--force`.
fn check_out(option: &str, dir: &Path, force: bool) -> Result<(), Failure> {
    let empty = match std::fs::read_dir(dir) {
        Ok(mut entries) => entries.next().is_none(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
        Err(_) if dir.exists() => {
            return Err(Failure::Usage(format!(
                "{option} {}: not a folder",
                dir.display()
            )))
        }
        Err(e) => return Err(synth_failure(SynthError::Io(e), dir)),
    };
    if empty || force {
        return Ok(());
    }
    Err(Failure::Usage(format!(
        "{option} {}: the folder is not empty; give --force to write into it (the files of an \
         earlier synth run there are replaced, other files are kept)",
        dir.display()
    )))
}

/// Remove the files of an earlier synth run from `dir`, so that none is left stale beside
/// the new run (e.g. a JSONL export the new options do not write).
fn clear_synth_files(dir: &Path) -> Result<(), Failure> {
    for rel in SYNTH_FILES {
        match std::fs::remove_file(dir.join(rel)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(synth_failure(SynthError::Io(e), dir))
            }
            _ => {}
        }
    }
    Ok(())
}

/// Generate one run into `dir` after clearing an earlier synth run there.
fn write_into(spec: &SynthSpec, dir: &Path) -> Result<SynthSummary, Failure> {
    clear_synth_files(dir)?;
    generate(spec, dir).map_err(|e| synth_failure(e, dir))
}

/// The settings the run was generated with (after the generator's adjustments).
#[derive(Serialize)]
struct Settings {
    engine: &'static str,
    variant: &'static str,
    topology: String,
    tiers: Vec<String>,
    faults: Vec<&'static str>,
    seed: u64,
    schema: String,
    exports: Vec<String>,
    concurrency: u32,
    dp: u32,
    tp: u32,
    frontend: bool,
    warmup_per_lane: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    target_bytes: Option<u64>,
}

impl Settings {
    fn of(s: &SynthSpec) -> Settings {
        let (cur, leg) = s.engine.variants();
        let list = |t: String| {
            t.split(',')
                .filter(|x| !x.is_empty())
                .map(str::to_string)
                .collect()
        };
        Settings {
            engine: s.engine.as_str(),
            variant: if s.variant_legacy { leg } else { cur },
            topology: s.topology.to_string(),
            tiers: list(tiers_text(s)),
            faults: s.faults.iter().map(|f| f.as_str()).collect(),
            seed: s.seed,
            schema: schema_text(s),
            exports: list(s.exports()),
            concurrency: s.concurrency,
            dp: s.dp,
            tp: s.tp,
            frontend: s.frontend,
            warmup_per_lane: s.warmup_per_lane,
            target_bytes: s.target_bytes,
        }
    }

    fn line(&self) -> String {
        let faults = if self.faults.is_empty() {
            "-".to_string()
        } else {
            self.faults.join(",")
        };
        format!(
            "engine {}, variant {}, topology {}, tiers {}, faults {}, seed {}, schema {}, exports {}, \
             concurrency {}, dp {}, tp {}, frontend {}, warmup per lane {}",
            self.engine,
            self.variant,
            self.topology,
            self.tiers.join(","),
            faults,
            self.seed,
            self.schema,
            self.exports.join(","),
            self.concurrency,
            self.dp,
            self.tp,
            yes_no(self.frontend),
            self.warmup_per_lane
        )
    }
}

#[derive(Serialize)]
struct FileReport<'a> {
    path: &'a str,
    bytes: u64,
}

/// The `result` of `synth --json`.
#[derive(Serialize)]
struct Report<'a> {
    name: String,
    settings: Settings,
    duration_s: f64,
    requests: u64,
    scrapes: u64,
    total_bytes: u64,
    expected_status: &'a str,
    files: Vec<FileReport<'a>>,
}

#[derive(Serialize)]
struct Payload<'a> {
    out: String,
    result: Report<'a>,
}

/// Seconds as text with at least one decimal (`60.0`, `2.25`).
fn secs(d: f64) -> String {
    let s = d.to_string();
    if s.contains('.') {
        s
    } else {
        format!("{s}.0")
    }
}

fn render(resolved: &SynthSpec, out: &Path, s: &SynthSummary) -> String {
    let mut text = String::new();
    say!(
        text,
        "kvledger synth: {} ({} s profiling, {} requests, {} scrapes) -> {} ({} bytes); expected {}",
        resolved.name(),
        secs(s.duration_s),
        s.requests,
        s.scrapes,
        out.display(),
        s.total_bytes,
        s.expected_status
    );
    say!(text, "  settings: {}", Settings::of(resolved).line());
    if let Some(t) = resolved.target_bytes {
        say!(
            text,
            "  target {t} bytes: duration chosen {} s, {} bytes written",
            secs(s.duration_s),
            s.total_bytes
        );
    }
    for (f, b) in &s.files {
        say!(text, "  {f}  {b}");
    }
    text
}

fn report(resolved: &SynthSpec, out: &Path, s: &SynthSummary, json: bool) -> Result<(), Failure> {
    if !json {
        return out::print(&render(resolved, out, s));
    }
    let payload = Payload {
        out: out.display().to_string(),
        result: Report {
            name: resolved.name(),
            settings: Settings::of(resolved),
            duration_s: s.duration_s,
            requests: s.requests,
            scrapes: s.scrapes,
            total_bytes: s.total_bytes,
            expected_status: &s.expected_status,
            files: s
                .files
                .iter()
                .map(|(path, bytes)| FileReport {
                    path,
                    bytes: *bytes,
                })
                .collect(),
        },
    };
    out::print(&envelope(Some("synth"), payload)?)
}

/// Regenerate the bundled example runs into `dir/<name>/`.
fn examples(dir: &Path, force: bool, json: bool) -> Result<(), Failure> {
    let all = kvledger::synth::examples();
    for (name, _) in &all {
        check_out("--examples", &dir.join(name), force)?;
    }
    for (name, spec) in all {
        let out = dir.join(name);
        let summary = write_into(&spec, &out)?;
        if json {
            report(&spec.resolved(), &out, &summary, true)?;
        } else {
            out::print(&format!(
                "{name}: {} bytes, expected {}\n",
                summary.total_bytes, summary.expected_status
            ))?;
        }
    }
    Ok(())
}

pub fn main(args: Args, matches: &ArgMatches) -> Result<(), Failure> {
    if let Some(dir) = &args.examples {
        return examples(dir, args.force, args.json);
    }
    let spec = spec_of(&args)?;
    let resolved = spec.resolved();
    check_explicit(&spec, &resolved, matches)?;
    check_fault_needs(&spec, &resolved)?;
    check_target(&resolved)?;
    let Some(out) = &args.out else {
        return Err(Failure::Usage("give --out DIR".to_string()));
    };
    check_out("--out", out, args.force)?;
    let summary = write_into(&spec, out)?;
    report(&resolved, out, &summary, args.json)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use clap::{CommandFactory, FromArgMatches, Parser};
    use kvledger::synth::out::Sink;
    use kvledger::synth::{planner, scrape, write_run};

    #[derive(Parser)]
    struct Cmd {
        #[command(flatten)]
        args: Args,
    }

    pub(crate) fn parse(argv: &[&str]) -> (Args, ArgMatches) {
        let m = Cmd::command()
            .try_get_matches_from(std::iter::once("synth").chain(argv.iter().copied()))
            .expect("parses");
        (Cmd::from_arg_matches(&m).expect("args").args, m)
    }

    #[test]
    fn the_option_defaults_are_the_generator_defaults() {
        let (a, _) = parse(&["--out", "x"]);
        let spec = spec_of(&a).expect("spec");
        let d = SynthSpec::default();
        assert_eq!(Settings::of(&spec).line(), Settings::of(&d).line());
        assert_eq!(spec.duration_s, d.duration_s);
        assert_eq!(spec.target_bytes, d.target_bytes);
    }

    #[test]
    fn synth_files_cover_every_file_written() {
        let spec = SynthSpec {
            duration_s: 2.0,
            ..SynthSpec::default()
        }
        .resolved();
        let mut plan = planner::build(&spec);
        scrape::settle_unseen_restart(&mut plan);
        let written = write_run(&plan, &Sink::Count).expect("dry run");
        for (f, _) in &written.files {
            assert!(SYNTH_FILES.contains(&f.as_str()), "{f}");
        }
        assert_eq!(written.files.len(), SYNTH_FILES.len());
    }
}
