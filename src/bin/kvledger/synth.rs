//! `kvledger synth`: generate a complete AIPerf run with known truth.

use crate::Failure;
use kvledger::synth::{generate, Engine, Fault, Schema, SynthSpec, Topology};
use std::path::PathBuf;

fn parse_bytes(v: &str) -> Option<u64> {
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
        .filter(|x| *x > 0.0)
        .map(|x| (x * mult as f64) as u64)
}

pub fn main(mut argv: impl Iterator<Item = String>) -> Result<(), Failure> {
    let mut spec = SynthSpec::default();
    let mut out: Option<PathBuf> = None;
    let usage = |m: String| Failure::Usage(m);
    while let Some(a) = argv.next() {
        let mut value = |name: &str| {
            argv.next()
                .ok_or_else(|| Failure::Usage(format!("{name} needs a value")))
        };
        match a.as_str() {
            "--engine" => {
                let v = value("--engine")?;
                spec.engine = Engine::parse(&v).ok_or_else(|| {
                    usage(format!(
                        "--engine {v}: expected vllm, sglang, trtllm, atom or dynamo"
                    ))
                })?;
            }
            "--variant" => {
                let v = value("--variant")?;
                spec.variant_legacy = match v.as_str() {
                    "current" | "by_source" | "cache_source" | "token_counters"
                    | "offload_counter" => false,
                    "legacy" | "no_by_source" | "no_cache_source" | "no_token_counters"
                    | "no_offload_counter" => true,
                    _ => {
                        return Err(usage(format!(
                        "--variant {v}: expected current or legacy (or the engine's variant name)"
                    )))
                    }
                };
            }
            "--topology" => {
                let v = value("--topology")?;
                spec.topology = Topology::parse(&v).ok_or_else(|| {
                    usage(format!(
                        "--topology {v}: expected agg, aggN or xPyD (e.g. 1P7D)"
                    ))
                })?;
            }
            "--tiers" => {
                let v = value("--tiers")?;
                spec.tier_cpu = false;
                spec.tier_external = false;
                for t in v.split(',').map(str::trim).filter(|t| !t.is_empty()) {
                    match t {
                        "gpu" => {}
                        "cpu" => spec.tier_cpu = true,
                        "external" | "storage" => spec.tier_external = true,
                        _ => {
                            return Err(usage(format!(
                                "--tiers: unknown tier {t} (gpu, cpu, external)"
                            )))
                        }
                    }
                }
            }
            "--fault" => {
                let v = value("--fault")?;
                for f in v.split(',').map(str::trim).filter(|t| !t.is_empty()) {
                    let names: Vec<&str> = Fault::ALL.iter().map(|f| f.as_str()).collect();
                    spec.faults.push(Fault::parse(f).ok_or_else(|| {
                        usage(format!("--fault {f}: expected one of {}", names.join(", ")))
                    })?);
                }
            }
            "--seed" => {
                spec.seed = value("--seed")?
                    .parse()
                    .map_err(|_| usage("--seed: expected an integer".into()))?
            }
            "--duration" => {
                let v = value("--duration")?;
                spec.duration_s = v
                    .trim_end_matches('s')
                    .parse()
                    .map_err(|_| usage(format!("--duration {v}: expected seconds")))?;
            }
            "--concurrency" => {
                spec.concurrency = value("--concurrency")?
                    .parse()
                    .map_err(|_| usage("--concurrency: expected an integer".into()))?
            }
            "--warmup-per-lane" => {
                spec.warmup_per_lane = value("--warmup-per-lane")?
                    .parse()
                    .map_err(|_| usage("--warmup-per-lane: expected an integer".into()))?
            }
            "--dp" => {
                spec.dp = value("--dp")?
                    .parse()
                    .map_err(|_| usage("--dp: expected an integer".into()))?
            }
            "--tp" => {
                spec.tp = value("--tp")?
                    .parse()
                    .map_err(|_| usage("--tp: expected an integer".into()))?
            }
            "--frontend" => spec.frontend = true,
            "--schema" => {
                spec.schema = match value("--schema")?.as_str() {
                    "1.0" => Schema::V1_0,
                    "1.1" => Schema::V1_1,
                    v => return Err(usage(format!("--schema {v}: expected 1.0 or 1.1"))),
                }
            }
            "--no-jsonl" => spec.jsonl = false,
            "--exports" => {
                // The server-metrics files to write: json, csv, jsonl (any non-empty subset).
                let v = value("--exports")?;
                let (mut json, mut csv, mut jsonl) = (false, false, false);
                for e in v.split(',').map(str::trim).filter(|t| !t.is_empty()) {
                    match e {
                        "json" => json = true,
                        "csv" => csv = true,
                        "jsonl" => jsonl = true,
                        _ => {
                            return Err(usage(format!(
                                "--exports: unknown export {e} (json, csv, jsonl)"
                            )))
                        }
                    }
                }
                if !(json || csv || jsonl) {
                    return Err(usage(
                        "--exports: name at least one of json, csv, jsonl".into(),
                    ));
                }
                (spec.json, spec.csv, spec.jsonl) = (json, csv, jsonl);
            }
            "--target-bytes" => {
                let v = value("--target-bytes")?;
                spec.target_bytes = Some(parse_bytes(&v).ok_or_else(|| {
                    usage(format!("--target-bytes {v}: expected a size like 100MB"))
                })?);
            }
            "--out" => out = Some(PathBuf::from(value("--out")?)),
            "--examples" => {
                // Regenerate the bundled example runs into DIR/<name>/.
                let dir = PathBuf::from(value("--examples")?);
                for (name, spec) in kvledger::synth::examples() {
                    let s = generate(&spec, &dir.join(name))
                        .map_err(|e| Failure::Usage(e.to_string()))?;
                    println!(
                        "{name}: {} bytes, expected {}",
                        s.total_bytes, s.expected_status
                    );
                }
                return Ok(());
            }
            s => return Err(usage(format!("unknown synth option {s}"))),
        }
    }
    let out = out.ok_or_else(|| usage("synth needs --out DIR".into()))?;
    let summary = generate(&spec, &out).map_err(|e| Failure::Usage(e.to_string()))?;
    use std::io::Write;
    let mut so = std::io::stdout().lock();
    let _ = writeln!(
        so,
        "kvledger synth: {} ({} s profiling, {} requests, {} scrapes) -> {} ({} bytes); expected {}",
        spec.resolved().name(),
        summary.duration_s,
        summary.requests,
        summary.scrapes,
        out.display(),
        summary.total_bytes,
        summary.expected_status
    );
    for (f, b) in &summary.files {
        let _ = writeln!(so, "  {f}  {b}");
    }
    Ok(())
}
