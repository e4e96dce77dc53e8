//! Options and run selection shared by the commands that read runs (`inspect`, `account`).

use crate::Failure;
use kvledger::error::RunOutcome;
use kvledger::read::artifact::UNRECOGNISED;
use kvledger::read::launch::{launch_from_env, read_launch_json};
use kvledger::read::run_dir::{discover_runs, no_artifacts};
use kvledger::read::{
    read_run, recognise, CaptureMeta, FamilyFilter, IgnoredFile, InputFile, Run, RunOptions,
};
use kvledger::ReadError;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Options shared by every command that reads runs.
pub struct Args {
    pub json: bool,
    families: Option<Vec<String>>,
    prefixes: Vec<String>,
    launch_file: Option<PathBuf>,
    launch_env: bool,
    captures: Vec<(String, CaptureMeta)>,
    pub policy_file: Option<PathBuf>,
    pub paths: Vec<PathBuf>,
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

/// Parse run-reading options; `allow_policy` accepts `--policy FILE`.
pub fn parse_args(
    mut argv: impl Iterator<Item = String>,
    allow_policy: bool,
) -> Result<Args, Failure> {
    let mut args = Args {
        json: false,
        families: None,
        prefixes: Vec::new(),
        launch_file: None,
        launch_env: false,
        captures: Vec::new(),
        policy_file: None,
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
            "--policy" if allow_policy => {
                args.policy_file = Some(PathBuf::from(value("--policy")?))
            }
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

/// Run options; `default_families` is the filter used when the caller names none.
pub fn options(args: &Args, default_families: FamilyFilter) -> Result<RunOptions, Failure> {
    let mut families = match &args.families {
        Some(names) => FamilyFilter::only(names),
        None => default_families,
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

/// One run to read: its label, the files to read (display name, path) and the files found
/// with it that discovery already decided not to read.
struct RunInput {
    label: String,
    files: Vec<PathBuf>,
    ignored: Vec<IgnoredFile>,
}

/// What the arguments name: runs, whether any directory was a sweep (several runs), and the
/// files of sweeps that belong to no run.
struct Selection {
    runs: Vec<RunInput>,
    sweep: bool,
    stray: Vec<IgnoredFile>,
}

/// Each directory gives its runs (one, or several for a sweep); loose files together form one
/// more run. A loose file named on the command line must be recognisable.
fn select(paths: &[PathBuf]) -> Result<Selection, Failure> {
    let mut sel = Selection {
        runs: Vec::new(),
        sweep: false,
        stray: Vec::new(),
    };
    let dirs = paths.iter().filter(|p| p.is_dir()).count();
    let mut loose = Vec::new();
    for p in paths {
        if !p.is_dir() {
            check_loose(p)?;
            loose.push(p.clone());
            continue;
        }
        let found = discover_runs(p)?;
        if found.runs.is_empty() {
            return Err(no_artifacts(p).into());
        }
        let display = |rel: &str| file_label(&p.join(rel));
        let several = found.runs.len() > 1;
        sel.sweep |= several;
        for g in found.runs {
            let label = match (several, dirs) {
                (false, _) => file_label(p),
                (true, 1) if !g.root.is_empty() => g.root.clone(),
                _ => display(&g.root),
            };
            sel.runs.push(RunInput {
                label,
                files: g.files.iter().map(|f| p.join(f)).collect(),
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
    }
    if !loose.is_empty() {
        let label = loose
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(" ");
        sel.runs.push(RunInput {
            label,
            files: loose,
            ignored: Vec::new(),
        });
    }
    Ok(sel)
}

/// A file given by name must be a format kvledger knows (read, or ignored for a stated
/// reason): an unrecognisable one is refused rather than silently dropped.
fn check_loose(p: &Path) -> Result<(), Failure> {
    let name = file_label(p);
    let mut head = Vec::with_capacity(4096);
    let f = std::fs::File::open(p).map_err(|e| {
        ReadError::whole(kvledger::ErrorCode::Io, &name, format!("cannot open: {e}"))
    })?;
    f.take(4096).read_to_end(&mut head).map_err(|e| {
        ReadError::whole(kvledger::ErrorCode::Io, &name, format!("cannot read: {e}"))
    })?;
    match recognise(&name, &head) {
        Err(UNRECOGNISED) => Err(ReadError::whole(
            kvledger::ErrorCode::UnknownFormat,
            &name,
            "not an AIPerf artifact, launch facts, capture manifest or Prometheus capture",
        )
        .into()),
        _ => Ok(()),
    }
}

pub fn file_label(path: &Path) -> String {
    path.display().to_string()
}

/// Every run the arguments name, each read on its own.
pub struct Runs {
    /// Label and run, or the error that stopped reading it, in argument then path order.
    pub runs: Vec<(String, Result<Run, ReadError>)>,
    /// A directory held several runs: output one result per run, errors in their place.
    pub sweep: bool,
    /// Files of sweeps that belong to no run.
    pub stray: Vec<IgnoredFile>,
}

/// Read every run the arguments name. Outside a sweep the first unreadable run stops the
/// command (as a single run always did); in a sweep each run's error is kept in its place.
pub fn read_runs(args: &Args, default_families: FamilyFilter) -> Result<Runs, Failure> {
    let opts = options(args, default_families)?;
    let sel = select(&args.paths)?;
    let mut runs = Vec::with_capacity(sel.runs.len());
    for r in sel.runs {
        let inputs: Vec<InputFile<'_>> = r
            .files
            .iter()
            .map(|p| InputFile::path(file_label(p), p.clone()))
            .collect();
        let result = read_run(&inputs, &opts).map(|mut run| {
            run.ignored.extend(r.ignored);
            run.ignored.sort();
            run
        });
        match result {
            Err(e) if !sel.sweep => return Err(e.into()),
            result => runs.push((r.label, result)),
        }
    }
    Ok(Runs {
        runs,
        sweep: sel.sweep,
        stray: sel.stray,
    })
}

/// A run's error as the sweep outputs show it: code, file, position, message.
pub fn error_line(e: &ReadError) -> String {
    format!("error {e}")
}

/// Print one result per run: pretty JSON (an object for one run, an array for several) or the
/// command's readable table. In a sweep, `--json` prints one line per run (`{"run", "result"}`
/// or `{"run", "error"}`) and the text shows each run's error in its place; the command fails
/// (exit 1, after printing every run) when any run could not be read.
pub fn emit<T: serde::Serialize>(
    results: &[(String, Result<T, ReadError>)],
    sweep: bool,
    stray: &[IgnoredFile],
    json: bool,
    table: fn(&str, &T),
) -> Result<(), Failure> {
    let ser = |e: serde_json::Error| Failure::Usage(format!("cannot serialise: {e}"));
    if json && !sweep {
        let ok: Vec<&T> = results
            .iter()
            .filter_map(|(_, r)| r.as_ref().ok())
            .collect();
        let text = match ok.as_slice() {
            [one] => serde_json::to_string_pretty(one),
            _ => serde_json::to_string_pretty(&ok),
        };
        println!("{}", text.map_err(ser)?);
    } else if json {
        for (label, r) in results {
            let line = serde_json::to_string(&RunOutcome::new(label.as_str(), r.as_ref()));
            println!("{}", line.map_err(ser)?);
        }
    } else {
        for (i, (label, r)) in results.iter().enumerate() {
            if i > 0 {
                println!();
            }
            match r {
                Ok(v) => table(label, v),
                Err(e) => {
                    println!("run: {label}");
                    println!("  {}", error_line(e));
                }
            }
        }
        if !stray.is_empty() {
            println!();
            println!("not in any run:");
            for s in stray {
                println!("  ignored  {}  ({})", s.name, s.reason);
            }
        }
    }
    let failed = results.iter().filter(|(_, r)| r.is_err()).count();
    if failed > 0 {
        return Err(Failure::Reported(format!(
            "{failed} of {} runs could not be read",
            results.len()
        )));
    }
    Ok(())
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
