//! `cargo bench --bench formats`: the native throughput of kvledger's readers (`read`: the run
//! read whole and kept) and of the whole accounting as the `account` command and the WASM API
//! run it (`account`: scrape JSONL and per-request records folded as they are read, then
//! accounted), per input format, beside a baseline run in the same process on the same bytes:
//! serde_json validating them into `IgnoredAny` (per line for JSONL, the CSV's bytes as one
//! JSON string). Criterion times each item; the deliverable is the ratio table printed at the
//! end (kvledger's throughput ÷ the baseline's), also written as TSV for `scripts/bench`.
//! The CSV has a second baseline, closer to what it asks of a reader: the `csv` crate (the
//! field's CSV reader) splitting every record into fields, building nothing.
//!
//! Inputs are generated at the start with `kvledger::synth` (deterministic, seed 1), one file
//! per format and size: the server-metrics JSON export, its CSV twin, the scrape JSONL, and the
//! profile JSONL (`profile_export.jsonl`). Environment:
//! - `KVLEDGER_BENCH_SIZES`: sizes in MB, comma-separated (default `10`).
//! - `KVLEDGER_BENCH_DATA`: folder holding the inputs (`<size>mb/<format>/<file>`); files
//!   already there are reused, missing ones generated and kept. Default: a temporary folder,
//!   removed at the end.
//! - `KVLEDGER_BENCH_FORMATS`: formats to run, comma-separated (default all four:
//!   `json,csv,jsonl,profile`).

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use criterion::{Criterion, Throughput};
    use kvledger::account::fold::Folded;
    use kvledger::account::{account_run_folded, families_read, Policy};
    use kvledger::read::{read_run, read_run_folded, InputFile, Run, RunOptions};
    use kvledger::synth::{generate, SynthSpec, Topology};
    use serde::de::IgnoredAny;
    use std::cell::RefCell;
    use std::collections::BTreeMap;
    use std::fmt::Write as _;
    use std::hint::black_box;
    use std::path::{Path, PathBuf};
    use std::rc::Rc;
    use std::time::{Duration, Instant};

    const MB: u64 = 1_000_000;

    /// One input format: its name in the table and the file name kvledger recognises it by.
    #[derive(Clone, Copy)]
    struct Format {
        name: &'static str,
        file: &'static str,
        /// The baseline parses it line by line.
        lines: bool,
    }

    const FORMATS: [Format; 4] = [
        Format {
            name: "json",
            file: "server_metrics_export.json",
            lines: false,
        },
        Format {
            name: "csv",
            file: "server_metrics_export.csv",
            lines: false,
        },
        Format {
            name: "jsonl",
            file: "server_metrics_export.jsonl",
            lines: true,
        },
        Format {
            name: "profile",
            file: "profile_export.jsonl",
            lines: true,
        },
    ];

    fn env_list(name: &str, default: &str) -> Vec<String> {
        std::env::var(name)
            .unwrap_or_else(|_| default.to_string())
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect()
    }

    fn fail(what: String) -> ! {
        eprintln!("formats bench: {what}");
        std::process::exit(2)
    }

    /// A synth run of about `bytes` whose files are the profile export and the exports asked.
    fn synth_run(dir: &Path, bytes: u64, json: bool, csv: bool, jsonl: bool) {
        let spec = SynthSpec {
            json,
            csv,
            jsonl,
            target_bytes: Some(bytes),
            ..SynthSpec::default()
        };
        if let Err(e) = generate(&spec, dir) {
            fail(format!("synth into {}: {e}", dir.display()));
        }
    }

    /// The CSV export does not grow with the run's length (one row per series), so a large
    /// one is a 64-endpoint run's rows repeated for further endpoints (the same host on the
    /// next ports) until the size is reached: what a deployment of that many endpoints exports.
    fn csv_of_size(work: &Path, bytes: u64) -> Vec<u8> {
        let spec = SynthSpec {
            json: false,
            csv: true,
            jsonl: false,
            duration_s: 2.0,
            topology: Topology::parse("agg64").unwrap_or_else(|| fail("topology agg64".into())),
            ..SynthSpec::default()
        };
        if let Err(e) = generate(&spec, work) {
            fail(format!("synth into {}: {e}", work.display()));
        }
        let base = read(&work.join("aiperf_artifacts/server_metrics_export.csv"));
        let text = String::from_utf8(base).unwrap_or_else(|_| fail("CSV not UTF-8".into()));
        let copies = bytes.div_ceil(text.len().max(1) as u64).max(1) as u32;
        let mut out = String::with_capacity(text.len() * copies as usize);
        // Comments and each type section's header come once; data rows once per endpoint copy.
        for line in text.lines() {
            match line.split_once(":8000,") {
                Some((host, rest)) if !line.starts_with('#') => {
                    for copy in 0..copies {
                        let _ = writeln!(out, "{host}:{},{rest}", 8000 + copy);
                    }
                }
                _ => {
                    out.push_str(line);
                    out.push('\n');
                }
            }
        }
        out.into_bytes()
    }

    fn read(path: &Path) -> Vec<u8> {
        std::fs::read(path).unwrap_or_else(|e| fail(format!("read {}: {e}", path.display())))
    }

    /// The input of one format and size: reused from `data` when there, else generated.
    fn input(data: &Path, f: Format, mb: u64) -> Vec<u8> {
        let dir = data.join(format!("{mb}mb")).join(f.name);
        let path = dir.join(f.file);
        if path.is_file() {
            return read(&path);
        }
        let work = data
            .join(format!("{mb}mb"))
            .join(format!(".{}-work", f.name));
        let _ = std::fs::remove_dir_all(&work);
        let bytes = mb * MB;
        let out = match f.name {
            "csv" => csv_of_size(&work, bytes),
            name => {
                let (json, jsonl) = (name == "json", name == "jsonl");
                // The profile export is the bulk of a run whose server evidence is a CSV.
                synth_run(&work, bytes, json, name == "profile", jsonl);
                read(&work.join("aiperf_artifacts").join(f.file))
            }
        };
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| fail(format!("mkdir: {e}")));
        std::fs::write(&path, &out).unwrap_or_else(|e| fail(format!("write: {e}")));
        let _ = std::fs::remove_dir_all(&work);
        out
    }

    /// The baseline: serde_json validating the bytes without building anything. The CSV is
    /// not JSON: it is validated as the one JSON string it would be, quoted (the same bytes
    /// scanned once, which is what any reader must at least do).
    fn ignored_any(f: Format, bytes: &[u8], csv_as_json: &[u8]) -> usize {
        if f.name == "csv" {
            let _: IgnoredAny = serde_json::from_slice(csv_as_json).unwrap_or(IgnoredAny);
            return 1;
        }
        if !f.lines {
            let _: IgnoredAny = serde_json::from_slice(bytes).unwrap_or(IgnoredAny);
            return 1;
        }
        let mut n = 0;
        for line in bytes.split(|b| *b == b'\n') {
            if line.iter().any(|b| !b.is_ascii_whitespace()) {
                let _: IgnoredAny = serde_json::from_slice(line).unwrap_or(IgnoredAny);
                n += 1;
            }
        }
        n
    }

    /// The CSV's text as one JSON string (for the baseline only).
    fn csv_json_string(bytes: &[u8]) -> Vec<u8> {
        let text = String::from_utf8_lossy(bytes);
        serde_json::to_vec(&text).unwrap_or_default()
    }

    /// The CSV baseline a CSV reader can be held to: every record split into its fields by the
    /// `csv` crate (quotes, `#` comments, ragged rows as AIPerf's sections have), nothing kept.
    fn csv_crate_fields(bytes: &[u8]) -> usize {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .comment(Some(b'#'))
            .from_reader(bytes);
        let mut record = csv::ByteRecord::new();
        let mut fields = 0;
        while reader.read_byte_record(&mut record).unwrap_or(false) {
            fields += record.len();
        }
        fields
    }

    /// The options the `account` command reads with (only the families accounting reads).
    fn account_options() -> RunOptions {
        RunOptions {
            families: families_read(),
            ..RunOptions::default()
        }
    }

    fn failed(f: Format, e: kvledger::ReadError) -> ! {
        fail(format!("{}: {} {}", f.file, e.code.as_str(), e.message))
    }

    /// kvledger's reader alone: the whole run read and kept (`read_run`).
    fn read_only(f: Format, bytes: &[u8]) -> Run {
        read_run(&[InputFile::bytes(f.file, bytes)], &account_options())
            .unwrap_or_else(|e| failed(f, e))
    }

    /// The run read as the `account` command and the WASM API read it: scrape JSONL and
    /// per-request records folded as they are read (`read_run_folded`; for the JSON and CSV
    /// exports the same as `read_run`).
    fn read_folded(f: Format, bytes: &[u8]) -> (Run, Folded) {
        read_run_folded(&[InputFile::bytes(f.file, bytes)], &account_options())
            .unwrap_or_else(|e| failed(f, e))
    }

    /// Per item: the per-iteration seconds of every criterion sample.
    type Samples = Rc<RefCell<BTreeMap<(String, u64, &'static str), Vec<f64>>>>;

    fn median(v: &[f64]) -> f64 {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    }

    /// One row of the table: a format and size, the seconds per pass of each item.
    struct Row {
        format: &'static str,
        bytes: usize,
        ignored_any: f64,
        read: f64,
        account: f64,
        /// The `csv` crate reading every record (CSV only; NaN otherwise).
        csv_crate: f64,
    }

    /// Time `work` as criterion item `item` of the group, keeping every sample's seconds.
    fn timed(
        group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
        samples: &Samples,
        key: (String, u64, &'static str),
        mut work: impl FnMut(),
    ) {
        let item = key.2;
        group.bench_function(item, |b| {
            b.iter_custom(|iters| {
                let t = Instant::now();
                for _ in 0..iters {
                    work();
                }
                let d = t.elapsed();
                samples
                    .borrow_mut()
                    .entry(key.clone())
                    .or_default()
                    .push(d.as_secs_f64() / iters.max(1) as f64);
                d
            })
        });
    }

    fn bench_one(c: &mut Criterion, samples: &Samples, f: Format, mb: u64, bytes: &[u8]) {
        let mut group = c.benchmark_group(format!("{}/{mb}MB", f.name));
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.sample_size(10);
        // Large inputs: criterion's minimum of 10 samples of one pass each.
        let pass = Duration::from_secs_f64((bytes.len() as f64 / 1e8).max(0.05));
        group.warm_up_time(pass.min(Duration::from_secs(3)));
        group.measurement_time((pass * 12).max(Duration::from_secs(2)));
        group.sampling_mode(criterion::SamplingMode::Flat);
        let csv_json = if f.name == "csv" {
            csv_json_string(bytes)
        } else {
            Vec::new()
        };
        let key = |item| (f.name.to_string(), mb, item);
        timed(&mut group, samples, key("ignored_any"), || {
            black_box(ignored_any(f, black_box(bytes), &csv_json));
        });
        if f.name == "csv" {
            timed(&mut group, samples, key("csv_crate"), || {
                black_box(csv_crate_fields(black_box(bytes)));
            });
        }
        timed(&mut group, samples, key("read"), || {
            black_box(read_only(f, black_box(bytes)));
        });
        let policy = Policy::default();
        timed(&mut group, samples, key("account"), || {
            let (run, folded) = read_folded(f, black_box(bytes));
            black_box(account_run_folded(run, folded, &policy));
        });
        group.finish();
    }

    fn table(rows: &[Row]) -> (String, String) {
        let mut text = String::new();
        let mut tsv = String::from(
            "format\tbytes\tignored_any_s\tread_s\taccount_s\tread_vs_ignored_any\taccount_vs_ignored_any\tcsv_crate_s\taccount_vs_csv_crate\n",
        );
        let _ = writeln!(
            text,
            "\n{:<8} {:>9} {:>15} {:>10} {:>13} {:>14} {:>17}",
            "format",
            "size_MB",
            "ignored_any_MB/s",
            "read_MB/s",
            "account_MB/s",
            "read/ignored",
            "account/ignored"
        );
        for r in rows {
            let mbs = |s: f64| r.bytes as f64 / 1e6 / s;
            let _ = writeln!(
                text,
                "{:<8} {:>9.1} {:>15.1} {:>10.1} {:>13.1} {:>14.3} {:>17.3}",
                r.format,
                r.bytes as f64 / 1e6,
                mbs(r.ignored_any),
                mbs(r.read),
                mbs(r.account),
                r.ignored_any / r.read,
                r.ignored_any / r.account
            );
            let _ = writeln!(
                tsv,
                "{}\t{}\t{:.6}\t{:.6}\t{:.6}\t{:.4}\t{:.4}\t{:.6}\t{:.4}",
                r.format,
                r.bytes,
                r.ignored_any,
                r.read,
                r.account,
                r.ignored_any / r.read,
                r.ignored_any / r.account,
                r.csv_crate,
                r.csv_crate / r.account
            );
        }
        for r in rows.iter().filter(|r| r.csv_crate.is_finite()) {
            let _ = writeln!(
                text,
                "{} {:.1} MB: the csv crate reads every record at {:.1} MB/s; read/csv_crate {:.3}, account/csv_crate {:.3}",
                r.format,
                r.bytes as f64 / 1e6,
                r.bytes as f64 / 1e6 / r.csv_crate,
                r.csv_crate / r.read,
                r.csv_crate / r.account
            );
        }
        text.push_str(
            "\nratios: kvledger's throughput / serde_json IgnoredAny's on the same bytes (1.0 = as fast as\n\
             validating the JSON; higher is faster); times are criterion samples' medians.\n",
        );
        (text, tsv)
    }

    pub fn main() {
        let sizes: Vec<u64> = env_list("KVLEDGER_BENCH_SIZES", "10")
            .iter()
            .map(|s| {
                s.trim_end_matches(['M', 'B', 'm', 'b'])
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .unwrap_or_else(|| fail(format!("size {s:?}: expected MB, e.g. 10")))
            })
            .collect();
        let names = env_list("KVLEDGER_BENCH_FORMATS", "json,csv,jsonl,profile");
        let formats: Vec<Format> = FORMATS
            .iter()
            .copied()
            .filter(|f| names.iter().any(|n| n == f.name))
            .collect();
        let (data, temporary): (PathBuf, bool) = match std::env::var_os("KVLEDGER_BENCH_DATA") {
            Some(d) => (PathBuf::from(d), false),
            None => (
                std::env::temp_dir().join(format!("kvledger-bench-{}", std::process::id())),
                true,
            ),
        };
        let samples: Samples = Rc::default();
        let mut c = Criterion::default().configure_from_args();
        let mut rows = Vec::new();
        for &mb in &sizes {
            for &f in &formats {
                let bytes = input(&data, f, mb);
                bench_one(&mut c, &samples, f, mb, &bytes);
                let s = samples.borrow();
                let get = |item| {
                    s.get(&(f.name.to_string(), mb, item))
                        .map_or(f64::NAN, |v| median(v))
                };
                let row = Row {
                    format: f.name,
                    bytes: bytes.len(),
                    ignored_any: get("ignored_any"),
                    read: get("read"),
                    account: get("account"),
                    csv_crate: get("csv_crate"),
                };
                if row.account.is_finite() {
                    rows.push(row);
                }
            }
        }
        c.final_summary();
        let (text, tsv) = table(&rows);
        print!("{text}");
        if !temporary {
            let _ = std::fs::write(data.join("native.tsv"), tsv);
        } else {
            let _ = std::fs::remove_dir_all(&data);
        }
    }
}

fn main() {
    #[cfg(not(target_arch = "wasm32"))]
    native::main();
}
