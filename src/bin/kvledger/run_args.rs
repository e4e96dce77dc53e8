//! Options and run selection shared by the commands that read runs (`inspect`, `account`),
//! and their output: one text block or one `--json` envelope per run.

use crate::input::{self, is_stdin, stdin_once, STDIN_LABEL};
use crate::Failure;
use kvledger::account::fold::Folded;
use kvledger::read::artifact::UNRECOGNISED;
use kvledger::read::launch::{launch_from_env, read_launch_json};
use kvledger::read::run::Progress;
use kvledger::read::run_dir::{discover_runs, no_artifacts};
use kvledger::read::{
    read_run, read_run_folded, recognise, CaptureMeta, FamilyFilter, IgnoredFile, InputFile, Run,
    RunOptions,
};
use kvledger::{ErrorCode, ReadError};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Options shared by every command that reads runs.
#[derive(clap::Args)]
pub struct RunArgs {
    /// A run directory (one benchmark point, or a sweep holding several) or artifact files
    /// (together one run); `-` reads one artifact from stdin
    #[arg(value_name = "RUN_DIR|FILE", required = true)]
    pub paths: Vec<PathBuf>,

    /// Print one JSON envelope per run, one per line: {"kvledger":"1","command":...,"run":...,
    /// "result":...} or {...,"error":...} (docs/cli.md)
    #[arg(long)]
    pub json: bool,

    /// Keep only these metric families, comma-separated, any alias spelling [default: the
    /// command's own set: every family for inspect, the families accounting reads for account]
    #[arg(long, value_name = "A,B,...", value_delimiter = ',')]
    families: Option<Vec<String>>,

    /// Also keep the families starting with these prefixes, comma-separated (e.g. vllm:);
    /// repeatable [default: none]
    #[arg(long = "family-prefix", value_name = "P,...", value_delimiter = ',')]
    prefixes: Vec<String>,

    /// Launch facts JSON for every run (a launch.json in a run is then not read); `-` reads
    /// stdin [default: the run's own launch.json, if any]
    #[arg(long, value_name = "FILE", conflicts_with = "launch_env")]
    launch: Option<PathBuf>,

    /// Launch facts from this process's environment: FRAMEWORK, DISAGG, SRT_PREFILL_ENDPOINTS,
    /// SRT_DECODE_ENDPOINTS, SRT_AGG_ENDPOINTS, KV_OFFLOADING, KV_OFFLOAD_BACKEND,
    /// ENABLE_PREFIX_CACHING (a launch.json in a run is then not read)
    #[arg(long)]
    launch_env: bool,

    /// Endpoint URL and epoch-ns time of a Prometheus text capture, by file name (e.g.
    /// before.prom=http://h:8000/metrics@1781000000000000000); repeatable; overrides a
    /// captures.json [default: the run's captures.json]
    #[arg(long, value_name = "FILE=URL[@NS]", value_parser = parse_capture)]
    capture: Vec<(String, CaptureMeta)>,

    /// The file name a stdin artifact (`-`) would have, so its format is known by name (e.g.
    /// server_metrics_export.json, before.prom) [default: the format is recognised from the
    /// content, which works for every AIPerf export but not for a capture without # HELP]
    #[arg(long, value_name = "NAME")]
    stdin_name: Option<String>,

    /// Runs read at the same time when there are several (a sweep, a results tree, several
    /// RUN_DIRs); the output is the same whatever N [default: the number of cores]
    #[arg(long, short = 'j', value_name = "N", value_parser = parse_jobs)]
    jobs: Option<usize>,

    /// No progress bar and no summary line on stderr (errors are still printed)
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

fn parse_jobs(v: &str) -> Result<usize, String> {
    match v.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err("expected a whole number of runs at a time, at least 1".to_string()),
    }
}

fn parse_capture(v: &str) -> Result<(String, CaptureMeta), String> {
    let (file, rest) = v
        .split_once('=')
        .filter(|(f, _)| !f.is_empty())
        .ok_or_else(|| "expected FILE=URL[@NS]".to_string())?;
    let (url, ns) = match rest.rsplit_once('@') {
        Some((u, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
            let ns = n
                .parse::<u64>()
                .map_err(|_| format!("time {n} is not an epoch-ns u64"))?;
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

impl RunArgs {
    /// Workers for a batch of runs: `--jobs`, else the cores.
    pub fn jobs(&self) -> usize {
        self.jobs.unwrap_or_else(crate::batch::default_jobs)
    }

    fn stdin_paths(&self) -> usize {
        self.paths.iter().filter(|p| is_stdin(p)).count()
    }

    /// Refuse what cannot be honoured: stdin twice, `--stdin-name` without a `-`. `extra`
    /// names the command's own stdin-capable options.
    pub fn check(&self, extra: &[(&str, bool)]) -> Result<(), Failure> {
        if self.stdin_paths() > 1 {
            return Err(Failure::Usage(
                "`-` (stdin) given twice among the inputs: stdin can be read once".to_string(),
            ));
        }
        if let Some(name) = &self.stdin_name {
            if self.stdin_paths() == 0 {
                return Err(Failure::Usage(format!(
                    "--stdin-name {name}: no `-` among the inputs to name"
                )));
            }
        }
        let mut uses = vec![
            ("the inputs", self.stdin_paths() > 0),
            ("--launch", self.launch.as_deref().is_some_and(is_stdin)),
        ];
        uses.extend_from_slice(extra);
        stdin_once(&uses)
    }

    /// The name a stdin artifact is read under: `<stdin>`, or `<stdin>/NAME` so that the
    /// readers recognise it by name.
    fn stdin_label(&self) -> String {
        match &self.stdin_name {
            Some(n) => format!("{STDIN_LABEL}/{n}"),
            None => STDIN_LABEL.to_string(),
        }
    }
}

/// Run options; `default_families` is the filter used when the caller names none.
fn options(args: &RunArgs, default_families: FamilyFilter) -> Result<RunOptions, Failure> {
    let names: Vec<String> = args
        .families
        .iter()
        .flatten()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    let mut families = match &args.families {
        // Accounting's leanness holds whichever families are kept.
        Some(_) if default_families.is_lean() => FamilyFilter::only(&names).lean(),
        Some(_) => FamilyFilter::only(&names),
        None => default_families,
    };
    let prefixes: Vec<String> = args
        .prefixes
        .iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    if !prefixes.is_empty() {
        families = families.with_prefixes(&prefixes);
    }
    let launch = if let Some(path) = &args.launch {
        let (name, text) = input::read_text(path)?;
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
        captures: args.capture.iter().cloned().collect(),
        launch,
        progress: None,
        memory_budget: None,
    })
}

/// A file of a run: on disk, or the stdin artifact.
#[derive(Clone)]
enum FileRef {
    Path(PathBuf),
    Stdin,
}

/// One run to read: its label, its files and the files found with it that discovery already
/// decided not to read.
struct RunInput {
    label: String,
    files: Vec<FileRef>,
    ignored: Vec<IgnoredFile>,
}

/// What the arguments name: runs, the files of sweeps that belong to no run, and the stdin
/// artifact's name and bytes (empty unless `-` was given).
struct Selection {
    runs: Vec<RunInput>,
    stray: Vec<IgnoredFile>,
    stdin: (String, Vec<u8>),
}

/// Each directory gives its runs (one, or several for a sweep); loose files (and `-`)
/// together form one more run. A loose file named on the command line must be recognisable.
fn select(args: &RunArgs) -> Result<Selection, Failure> {
    let mut sel = Selection {
        runs: Vec::new(),
        stray: Vec::new(),
        stdin: (STDIN_LABEL.to_string(), Vec::new()),
    };
    let dirs = args.paths.iter().filter(|p| p.is_dir()).count();
    let mut loose = Vec::new();
    let mut loose_labels = Vec::new();
    for p in &args.paths {
        if is_stdin(p) {
            let name = args.stdin_label();
            let bytes = input::stdin_bytes()?;
            check_recognisable(&name, &bytes)?;
            loose_labels.push(name.clone());
            sel.stdin = (name, bytes);
            loose.push(FileRef::Stdin);
        } else if p.is_dir() {
            add_dir(&mut sel, p, dirs)?;
        } else {
            check_loose(p)?;
            loose_labels.push(file_label(p));
            loose.push(FileRef::Path(p.clone()));
        }
    }
    if !loose.is_empty() {
        sel.runs.push(RunInput {
            label: loose_labels.join(" "),
            files: loose,
            ignored: Vec::new(),
        });
    }
    Ok(sel)
}

/// The runs of one directory, labelled by their path (relative to the directory when it is
/// the only directory given).
fn add_dir(sel: &mut Selection, p: &Path, dirs: usize) -> Result<(), Failure> {
    let found = discover_runs(p)?;
    if found.runs.is_empty() {
        return Err(no_artifacts(p).into());
    }
    let display = |rel: &str| file_label(&p.join(rel));
    let several = found.runs.len() > 1;
    for g in found.runs {
        let label = match (several, dirs) {
            (false, _) => file_label(p),
            (true, 1) if !g.root.is_empty() => g.root.clone(),
            _ => display(&g.root),
        };
        sel.runs.push(RunInput {
            label,
            files: g.files.iter().map(|f| FileRef::Path(p.join(f))).collect(),
            ignored: g
                .ignored
                .iter()
                .map(|i| IgnoredFile {
                    name: display(&i.name),
                    reason: i.reason.clone(),
                })
                .collect(),
        });
    }
    sel.stray
        .extend(found.ignored.into_iter().map(|i| IgnoredFile {
            name: display(&i.name),
            reason: i.reason,
        }));
    Ok(())
}

/// A file given by name must be a format kvledger knows (read, or ignored for a stated
/// reason): an unrecognisable one is refused rather than silently dropped.
fn check_loose(p: &Path) -> Result<(), Failure> {
    let name = file_label(p);
    let mut head = Vec::with_capacity(4096);
    let f = std::fs::File::open(p)
        .map_err(|e| ReadError::whole(ErrorCode::Io, &name, format!("cannot open: {e}")))?;
    f.take(4096)
        .read_to_end(&mut head)
        .map_err(|e| ReadError::whole(ErrorCode::Io, &name, format!("cannot read: {e}")))?;
    check_recognisable(&name, &head)
}

fn check_recognisable(name: &str, head: &[u8]) -> Result<(), Failure> {
    match recognise(name, &head[..head.len().min(4096)]) {
        Err(UNRECOGNISED) => {
            let hint = if name == STDIN_LABEL {
                " (name its format with --stdin-name, e.g. --stdin-name before.prom)"
            } else {
                ""
            };
            Err(ReadError::whole(
                ErrorCode::UnknownFormat,
                name,
                format!(
                    "not an AIPerf artifact, launch facts, capture manifest or Prometheus \
                     capture{hint}"
                ),
            )
            .into())
        }
        _ => Ok(()),
    }
}

pub fn file_label(path: &Path) -> String {
    path.display().to_string()
}

/// The runs the arguments name, not read yet: each is read when [`Runs::read`] is called, so
/// a tree of thousands of runs is never held in memory at once. In argument then path order;
/// the files of sweeps that belong to no run beside.
pub struct Runs {
    opts: RunOptions,
    sel: Selection,
    /// Fold scrape JSONL and per-request records while reading (see [`Runs::folding`]).
    fold: bool,
}

/// Select the runs the arguments name (walking the directories, reading no run yet).
pub fn select_runs(args: &RunArgs, default_families: FamilyFilter) -> Result<Runs, Failure> {
    let opts = options(args, default_families)?;
    let sel = select(args)?;
    Ok(Runs {
        opts,
        sel,
        fold: false,
    })
}

impl Runs {
    /// Read each run as the streaming API does ([`read_run_folded`]): its scrape JSONL and
    /// per-request records folded as they are read into what accounting reads of them (a
    /// few bytes per sample and record) instead of kept. No memory budget is set, so the fold
    /// is never thinned: accounting gives the same result as of the run read whole.
    pub fn folding(mut self) -> Self {
        self.fold = true;
        self
    }

    pub fn len(&self) -> usize {
        self.sel.runs.len()
    }

    pub fn label(&self, i: usize) -> &str {
        &self.sel.runs[i].label
    }

    pub fn stray(&self) -> &[IgnoredFile] {
        &self.sel.stray
    }

    fn inputs(&self, i: usize) -> Vec<InputFile<'_>> {
        self.sel.runs[i]
            .files
            .iter()
            .map(|f| match f {
                FileRef::Path(p) => InputFile::path(file_label(p), p.clone()),
                FileRef::Stdin => InputFile::bytes(self.sel.stdin.0.clone(), &self.sel.stdin.1),
            })
            .collect()
    }

    /// The size of run `i`'s files in bytes (a file that cannot be stat'ed counts 0: reading
    /// it reports the error).
    pub fn bytes(&self, i: usize) -> u64 {
        self.inputs(i).iter().filter_map(|f| f.size()).sum()
    }

    /// Read run `i` on its own, telling `progress` (if any) the bytes read so far: the run,
    /// and what was folded while reading it (empty unless [`Runs::folding`]).
    pub fn read(&self, i: usize, progress: Option<Progress>) -> Result<(Run, Folded), ReadError> {
        let r = &self.sel.runs[i];
        let inputs = self.inputs(i);
        let progressing;
        let opts = match progress {
            None => &self.opts,
            Some(p) => {
                progressing = RunOptions {
                    progress: Some(p),
                    ..self.opts.clone()
                };
                &progressing
            }
        };
        let read = if self.fold {
            read_run_folded(&inputs, opts)
        } else {
            read_run(&inputs, opts).map(|run| (run, Folded::default()))
        };
        read.map(|(mut run, folded)| {
            run.ignored.extend(r.ignored.iter().cloned());
            run.ignored.sort();
            (run, folded)
        })
    }
}

/// A value as the JSON output spells it, for text output: a string or number as is, `null`
/// as `-`, a list joined with ", " (`-` when empty). Never a Rust debug form.
pub fn word<T: serde::Serialize + ?Sized>(v: &T) -> String {
    fn plain(v: &serde_json::Value) -> String {
        match v {
            serde_json::Value::Null => "-".to_string(),
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Array(items) if items.is_empty() => "-".to_string(),
            serde_json::Value::Array(items) => {
                items.iter().map(plain).collect::<Vec<_>>().join(", ")
            }
            other => other.to_string(),
        }
    }
    serde_json::to_value(v)
        .map(|v| plain(&v))
        .unwrap_or_else(|_| "-".to_string())
}
