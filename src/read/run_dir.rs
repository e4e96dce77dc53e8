//! Native discovery of one run directory as AIPerf writes it.
//!
//! Candidate folders, shallow to deep: `dir`, `dir/run_0`, `dir/aiperf_artifacts`,
//! `dir/aiperf_artifacts/run_0`. The deepest candidate holding a recognised artifact (by
//! [`classify`] on the file name and its first 4 KiB) is the run; its recognised files are
//! returned, plus launch facts (`launch.json` & co.), `captures.json` manifests and
//! Prometheus captures lying in `dir` itself. Paths are sorted. Only regular files directly in
//! a folder are considered (no recursion beyond the candidates).
//!
//! Plain `std::fs`: it compiles for wasm32 too, where it is simply never called.

use super::artifact::{classify, ArtifactKind};
use crate::error::{ErrorCode, ReadError};
use std::io::Read;
use std::path::{Path, PathBuf};

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

/// Recognised files directly in `folder` (kind ≠ Other), sorted.
fn recognised(folder: &Path) -> Result<Vec<(PathBuf, ArtifactKind)>, ReadError> {
    let entries = std::fs::read_dir(folder).map_err(|e| io_err(folder, "list", &e))?;
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| io_err(folder, "list", &e))?;
        let path = entry.path();
        let ft = std::fs::metadata(&path).map_err(|e| io_err(&path, "stat", &e))?;
        if !ft.is_file() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = classify(&name, &head(&path)?);
        if kind != ArtifactKind::Other {
            out.push((path, kind));
        }
    }
    out.sort();
    Ok(out)
}

/// The artifact files of the one run in `dir`.
pub fn discover(dir: &Path) -> Result<Vec<PathBuf>, ReadError> {
    let meta = std::fs::metadata(dir).map_err(|e| io_err(dir, "open the directory", &e))?;
    if !meta.is_dir() {
        return Err(ReadError::whole(
            ErrorCode::Io,
            &dir.display().to_string(),
            "not a directory",
        ));
    }
    let top = recognised(dir)?;
    let candidates = [
        dir.join("aiperf_artifacts").join("run_0"),
        dir.join("aiperf_artifacts"),
        dir.join("run_0"),
    ];
    let mut chosen: Option<Vec<(PathBuf, ArtifactKind)>> = None;
    for c in &candidates {
        if c.is_dir() {
            let found = recognised(c)?;
            // A folder with only launch facts / manifests is not a run.
            if found.iter().any(|(_, k)| is_metrics_or_records(*k)) {
                chosen = Some(found);
                break;
            }
        }
    }
    let mut files: Vec<(PathBuf, ArtifactKind)> = match chosen {
        Some(mut found) => {
            found.extend(top.into_iter().filter(|(_, k)| {
                matches!(
                    k,
                    ArtifactKind::LaunchFacts
                        | ArtifactKind::CaptureManifest
                        | ArtifactKind::PrometheusText
                )
            }));
            found
        }
        None => top,
    };
    files.sort();
    files.dedup();
    if !files.iter().any(|(_, k)| is_metrics_or_records(*k)) {
        return Err(ReadError::whole(
            ErrorCode::NoArtifacts,
            &dir.display().to_string(),
            "no AIPerf artifact in this directory, its run_0/, aiperf_artifacts/ or aiperf_artifacts/run_0/",
        ));
    }
    let files: Vec<PathBuf> = files.into_iter().map(|(p, _)| p).collect();
    Ok(files)
}

fn is_metrics_or_records(k: ArtifactKind) -> bool {
    !matches!(
        k,
        ArtifactKind::Other | ArtifactKind::LaunchFacts | ArtifactKind::CaptureManifest
    )
}
