//! Native discovery of the runs in a directory, as AIPerf and its harnesses lay them out.
//!
//! The tree is walked (hidden entries and symlinked folders skipped, depth and file count
//! bounded), then grouped by the pure [`group_runs_by`] with
//! names recognised by name and extension and, where the name does not tell, by the first
//! 4 KiB. A folder that is one run (`dir`, `dir/aiperf_artifacts/`,
//! `dir/aiperf_artifacts/run_0/`, with `dir/launch.json` and captures) gives one run; a sweep
//! gives one per run folder.
//!
//! Plain `std::fs`: it compiles for wasm32 too, where it is simply never called.

use super::artifact::{recognise, recognise_name, Recognition};
use super::discover::{group_runs_by, Discovery};
use crate::error::{ErrorCode, ReadError};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Folders below a directory searched, at most (`sweep/point/aiperf_artifacts/run_0/` is 4; a
/// producer's results tree by platform, date, model, shape and concurrency about 9). Deeper
/// is refused, not skipped: a run there would be missing from a batch without a word.
const MAX_DEPTH: usize = 32;
/// A directory with more files than this is not a results folder (e.g. a home directory). A
/// producer's tree of 40,000 runs of a dozen files each fits.
const MAX_FILES: usize = 1_000_000;

fn io_err(path: &Path, what: &str, e: &std::io::Error) -> ReadError {
    ReadError::whole(
        ErrorCode::Io,
        &path.display().to_string(),
        format!("cannot {what}: {e}"),
    )
}

fn head(path: &Path) -> Result<Vec<u8>, ReadError> {
    let f = std::fs::File::open(path).map_err(|e| io_err(path, "open", &e))?;
    let mut buf = Vec::with_capacity(4096);
    f.take(4096)
        .read_to_end(&mut buf)
        .map_err(|e| io_err(path, "read", &e))?;
    Ok(buf)
}

/// Every regular file below `dir`, as sorted `/`-separated relative paths.
pub fn walk(dir: &Path) -> Result<Vec<String>, ReadError> {
    let meta = std::fs::metadata(dir).map_err(|e| io_err(dir, "open the directory", &e))?;
    if !meta.is_dir() {
        return Err(ReadError::whole(
            ErrorCode::Io,
            &dir.display().to_string(),
            "not a directory",
        ));
    }
    let mut out = Vec::new();
    let mut stack: Vec<(PathBuf, String, usize)> = vec![(dir.to_path_buf(), String::new(), 0)];
    while let Some((folder, rel, depth)) = stack.pop() {
        let entries = std::fs::read_dir(&folder).map_err(|e| io_err(&folder, "list", &e))?;
        for entry in entries {
            let entry = entry.map_err(|e| io_err(&folder, "list", &e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let path = entry.path();
            let rel_path = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            // symlink_metadata: a link to a folder is not followed (no cycles).
            let ft = std::fs::symlink_metadata(&path).map_err(|e| io_err(&path, "stat", &e))?;
            if ft.is_dir() {
                if depth >= MAX_DEPTH {
                    return Err(ReadError::whole(
                        ErrorCode::Io,
                        &dir.display().to_string(),
                        format!("`{rel_path}` is more than {MAX_DEPTH} folders below this directory: not a results folder"),
                    ));
                }
                stack.push((path, rel_path, depth + 1));
            } else if std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
                out.push(rel_path);
                if out.len() > MAX_FILES {
                    return Err(ReadError::whole(
                        ErrorCode::Io,
                        &dir.display().to_string(),
                        format!("more than {MAX_FILES} files below this directory: not a results folder"),
                    ));
                }
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Recognition of a file below `dir`: by name, else by its first bytes. A file that cannot be
/// read stays unknown here; reading its run reports the error.
fn recognise_file(dir: &Path, rel: &str) -> Recognition {
    match recognise_name(rel) {
        Recognition::Unknown => match head(&dir.join(rel)) {
            Ok(h) => match recognise(rel, &h) {
                Ok(kind) => Recognition::Read(kind),
                Err(reason) => Recognition::Ignored(reason),
            },
            Err(_) => Recognition::Unknown,
        },
        known => known,
    }
}

/// The runs below `dir` (paths relative to `dir`); an error only when `dir` cannot be walked.
pub fn discover_runs(dir: &Path) -> Result<Discovery, ReadError> {
    let paths = walk(dir)?;
    Ok(group_runs_by(&paths, |rel| recognise_file(dir, rel)))
}

/// The error for a directory holding no run.
pub fn no_artifacts(dir: &Path) -> ReadError {
    ReadError::whole(
        ErrorCode::NoArtifacts,
        &dir.display().to_string(),
        "no AIPerf artifact in this directory or below it (expected server_metrics_export.{json,csv,jsonl}, profile_export.jsonl, profile_export_aiperf.json or Prometheus captures)",
    )
}

/// The files to read of the one run in `dir` (ignored files left out), sorted.
pub fn discover(dir: &Path) -> Result<Vec<PathBuf>, ReadError> {
    let d = discover_runs(dir)?;
    match d.runs.as_slice() {
        [] => Err(no_artifacts(dir)),
        [run] => Ok(run
            .files
            .iter()
            .filter(|f| matches!(recognise_file(dir, f), Recognition::Read(_)))
            .map(|f| dir.join(f))
            .collect()),
        runs => Err(ReadError::whole(
            ErrorCode::DuplicateInput,
            &dir.display().to_string(),
            format!(
                "this directory holds {} runs ({}): read them with discover_runs",
                runs.len(),
                runs.iter()
                    .map(|r| r.root.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}
