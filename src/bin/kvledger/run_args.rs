//! Options and run selection shared by the commands that read runs (`inspect`, `account`).

use crate::Failure;
use kvledger::read::launch::{launch_from_env, read_launch_json};
use kvledger::read::run_dir::discover;
use kvledger::read::{read_run, CaptureMeta, FamilyFilter, InputFile, Run, RunOptions};
use kvledger::ReadError;
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

/// Each directory is one run; loose files together form one more.
pub fn runs(paths: &[PathBuf]) -> Result<Vec<(String, Vec<PathBuf>)>, Failure> {
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

pub fn file_label(path: &Path) -> String {
    path.display().to_string()
}

/// Read every run the arguments name, labelled for display.
pub fn read_runs(
    args: &Args,
    default_families: FamilyFilter,
) -> Result<Vec<(String, Run)>, Failure> {
    let opts = options(args, default_families)?;
    let mut out = Vec::new();
    for (label, files) in runs(&args.paths)? {
        let inputs: Vec<InputFile<'_>> = files
            .iter()
            .map(|p| InputFile::path(file_label(p), p.clone()))
            .collect();
        out.push((label, read_run(&inputs, &opts)?));
    }
    Ok(out)
}

/// Print one result per run: pretty JSON (an object for one run, an array for several) or the
/// command's readable table.
pub fn emit<T: serde::Serialize>(
    results: &[(String, T)],
    json: bool,
    table: fn(&str, &T),
) -> Result<(), Failure> {
    if json {
        let text = match results {
            [(_, one)] => serde_json::to_string_pretty(one),
            _ => serde_json::to_string_pretty(&results.iter().map(|(_, r)| r).collect::<Vec<_>>()),
        };
        let text = text.map_err(|e| Failure::Usage(format!("cannot serialise: {e}")))?;
        println!("{text}");
    } else {
        for (i, (label, r)) in results.iter().enumerate() {
            if i > 0 {
                println!();
            }
            table(label, r);
        }
    }
    Ok(())
}
