//! Which runs a folder tree holds, decided from relative paths alone (plus what each file is),
//! so the native directory walker and the WASM build (dropped files carrying relative paths)
//! group files the same way.
//!
//! Rules, in order:
//! - a folder directly holding metrics or records (a server-metrics export, raw scrapes, a
//!   Prometheus capture, `profile_export.jsonl`, a run summary) is a *run root* — unless another
//!   run root lies below it: then the deeper ones are the runs (`aiperf_artifacts/run_0/` under
//!   `aiperf_artifacts/`, `conc4/` under a sweep folder), and its own metrics are ignored;
//! - every file in a run root or below it (plots, logs, Parquet twins) belongs to that run:
//!   the run's reader reads it or lists it as ignored;
//! - a file in a folder above runs: launch facts apply to every run below (the nearest
//!   `launch.json` wins), and anything else joins the run when exactly one run lies below (the
//!   AIPerf layout `DIR/aiperf_artifacts/` with `DIR/launch.json` and captures), else it is
//!   ignored with a reason;
//! - a file neither in, below nor above a run is ignored with a reason.
//!
//! Output is sorted (runs by root, files and ignored entries by path) whatever the input order.

use super::artifact::{recognise, recognise_name, ArtifactKind, Recognition, UNRECOGNISED};
use super::run::{read_run, IgnoredFile, InputFile, Run, RunOptions};
use crate::error::ReadError;
use crate::strmap::StrMap;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;

/// One run found: its folder relative to the top (`""` when the top folder is the run), the
/// files to read (relative to the top), and files attached to it that are not to be read
/// (they belong in the run's ignored list).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct RunGroup {
    pub root: String,
    pub files: Vec<String>,
    pub ignored: Vec<IgnoredFile>,
}

/// Every run of a tree, and the files that belong to none.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct Discovery {
    pub runs: Vec<RunGroup>,
    pub ignored: Vec<IgnoredFile>,
}

/// Normalise a relative path: `/` separators, no empty or `.` components.
pub fn normalise_path(p: &str) -> String {
    p.split(['/', '\\'])
        .filter(|c| !c.is_empty() && *c != ".")
        .collect::<Vec<_>>()
        .join("/")
}

fn parent(p: &str) -> &str {
    p.rsplit_once('/').map(|(d, _)| d).unwrap_or("")
}

/// `dir` is `ancestor` or lies below it.
fn within(dir: &str, ancestor: &str) -> bool {
    ancestor.is_empty()
        || dir == ancestor
        || (dir.len() > ancestor.len()
            && dir.starts_with(ancestor)
            && dir.as_bytes().get(ancestor.len()) == Some(&b'/'))
}

/// The folders of `set` strictly below `dir`, in order: one range of the sorted set (every
/// path below `dir` starts with `dir/`), not a scan of it per folder asked about, which was
/// quadratic in a tree's runs (40,000 runs: 76 s in the WASM build).
fn below<'a>(set: &'a BTreeSet<&'a str>, dir: &str) -> impl Iterator<Item = &'a str> + 'a {
    let prefix = if dir.is_empty() {
        String::new()
    } else {
        format!("{dir}/")
    };
    set.range::<str, _>((Bound::Included(prefix.as_str()), Bound::Unbounded))
        .copied()
        .filter(|o| !o.is_empty())
        .take_while(move |o| o.starts_with(prefix.as_str()))
}

/// The folder of `set` that is `dir` or lies above it, nearest first.
fn at_or_above<'a>(set: &BTreeSet<&'a str>, dir: &str) -> Option<&'a str> {
    let mut d = dir;
    loop {
        if let Some(found) = set.get(d) {
            return Some(found);
        }
        if d.is_empty() {
            return None;
        }
        d = parent(d);
    }
}

/// A launch file lies in a folder between `dir` and `run` (deeper than `dir`, `run` below
/// `dir`): it is nearer to the run than one in `dir`, and wins.
fn nearer_launch(launch_dirs: &BTreeSet<&str>, dir: &str, run: &str) -> bool {
    let mut d = run;
    while d != dir && within(d, dir) {
        if launch_dirs.contains(d) {
            return true;
        }
        d = parent(d);
    }
    false
}

/// Group paths into runs, recognising files by name and extension only.
pub fn group_runs<S: AsRef<str>>(paths: &[S]) -> Discovery {
    group_runs_by(paths, recognise_name)
}

/// Group paths into runs with the caller's recognition (e.g. one that sniffs content for names
/// that do not tell: [`Recognition::Unknown`]).
pub fn group_runs_by<S: AsRef<str>>(
    paths: &[S],
    recognition: impl Fn(&str) -> Recognition,
) -> Discovery {
    let paths: Vec<&str> = paths.iter().map(|p| p.as_ref()).collect();
    group_paths(&paths, &recognition)
}

/// The grouping itself, compiled once whatever the callers' path and recognition types.
fn group_paths(paths: &[&str], recognition: &dyn Fn(&str) -> Recognition) -> Discovery {
    let normalised = paths
        .iter()
        .map(|p| normalise_path(p))
        .filter(|p| !p.is_empty());
    let files: BTreeMap<String, Recognition> =
        crate::sort::map_of(crate::sort::set_of(normalised).into_iter().map(|p| {
            let r = recognition(&p);
            (p, r)
        }));
    let roots: BTreeSet<&str> = crate::sort::set_of(
        files
            .iter()
            .filter(|(_, r)| matches!(r, Recognition::Read(k) if k.defines_run()))
            .map(|(p, _)| parent(p)),
    );
    // Runs are the deepest roots: a root with another root below it only holds runs. No
    // run lies below another, so a folder is in one run at most.
    let leaves: BTreeSet<&str> = crate::sort::set_of(
        roots
            .iter()
            .copied()
            .filter(|r| below(&roots, r).next().is_none()),
    );
    let launch_dirs: BTreeSet<&str> = crate::sort::set_of(
        files
            .iter()
            .filter(|(_, r)| **r == Recognition::Read(ArtifactKind::LaunchFacts))
            .map(|(p, _)| parent(p)),
    );

    let mut groups: StrMap<RunGroup> = StrMap::new();
    for r in &leaves {
        let group = RunGroup {
            root: r.to_string(),
            files: Vec::new(),
            ignored: Vec::new(),
        };
        groups.insert(r, group);
    }
    let mut ignored = Vec::new();
    let ignore = |list: &mut Vec<IgnoredFile>, name: &str, reason: &str| {
        list.push(IgnoredFile {
            name: name.to_string(),
            reason: reason.to_string(),
        })
    };

    for (path, rec) in &files {
        let dir = parent(path);
        if let Some(run) = at_or_above(&leaves, dir) {
            if let Some(g) = groups.get_mut(run) {
                g.files.push(path.clone());
            }
            continue;
        }
        // Which runs lie below: every one for launch facts, else whether none, one or more.
        let launch = *rec == Recognition::Read(ArtifactKind::LaunchFacts);
        let wanted = if launch { usize::MAX } else { 2 };
        let below: Vec<&str> = below(&leaves, dir).take(wanted).collect();
        let reason = match rec {
            Recognition::Ignored(reason) => reason,
            Recognition::Unknown | Recognition::Read(_) => UNRECOGNISED,
        };
        match (*rec, below.as_slice()) {
            (Recognition::Read(_), []) => ignore(
                &mut ignored,
                path,
                "not beside or above a run's metrics or records",
            ),
            (Recognition::Read(ArtifactKind::LaunchFacts), _) => {
                for run in below
                    .iter()
                    .filter(|r| !nearer_launch(&launch_dirs, dir, r))
                {
                    if let Some(g) = groups.get_mut(run) {
                        g.files.push(path.clone());
                    }
                }
            }
            (Recognition::Read(kind), [one]) => {
                let Some(g) = groups.get_mut(one) else {
                    continue;
                };
                if kind.defines_run() && kind != ArtifactKind::PrometheusText {
                    ignore(
                        &mut g.ignored,
                        path,
                        "beside a run in a subfolder: the subfolder's files are read",
                    );
                } else {
                    g.files.push(path.clone());
                }
            }
            (Recognition::Read(_), _) => ignore(
                &mut ignored,
                path,
                "beside several runs in subfolders: each subfolder is read as its own run",
            ),
            (_, [one]) => {
                if let Some(g) = groups.get_mut(one) {
                    ignore(&mut g.ignored, path, reason);
                }
            }
            (_, _) => ignore(&mut ignored, path, reason),
        }
    }
    let runs = groups
        .into_pairs()
        .map(|(_, mut g)| {
            crate::sort::sort_by(&mut g.files, |a, b| a.cmp(b));
            crate::sort::sort_by(&mut g.ignored, |a, b| a.cmp(b));
            g
        })
        .collect();
    crate::sort::sort_by(&mut ignored, |a, b| a.cmp(b));
    Discovery { runs, ignored }
}

/// One run of a set of files: its root (`.` for the top folder) and the run (or what was
/// made of it), or the error that stopped reading it.
#[derive(Debug)]
pub struct RunRead<T = Run> {
    pub run: String,
    pub result: Result<T, ReadError>,
}

/// Group files whose names are relative paths into runs (names recognised as [`group_runs`]
/// does, content sniffed where the name does not tell) and read each run on its own: one
/// unreadable run never stops the others. Sorted by root. The files of no run are returned
/// beside.
pub fn read_runs(
    inputs: &[InputFile<'_>],
    options: &RunOptions,
) -> (Vec<RunRead>, Vec<IgnoredFile>) {
    read_runs_with(inputs, options, |files, options, ignored| {
        read_run(files, options).map(|mut run| {
            add_ignored(&mut run, ignored);
            run
        })
    })
}

/// [`read_runs`], each run given to `read` (its files, and the files its folders hold that are
/// not read) one after the other: what `read` returns is all that is kept of a run while the
/// next is read (an accounting, not the run's evidence).
pub fn read_runs_with<T>(
    inputs: &[InputFile<'_>],
    options: &RunOptions,
    mut read: impl FnMut(&[InputFile<'_>], &RunOptions, Vec<IgnoredFile>) -> Result<T, ReadError>,
) -> (Vec<RunRead<T>>, Vec<IgnoredFile>) {
    let (runs, ignored) = run_files(inputs);
    let runs = runs
        .into_iter()
        .map(|r| RunRead {
            result: read(&r.files, options, r.ignored),
            run: r.run,
        })
        .collect();
    (runs, ignored)
}

/// One run's files among a set of inputs: its root (`.` for the top folder), the files read,
/// and the files of its folders not read.
struct RunFiles<'a> {
    run: String,
    files: Vec<InputFile<'a>>,
    ignored: Vec<IgnoredFile>,
}

/// The runs of a set of inputs and the files of none (not generic: one copy, whatever
/// [`read_runs_with`] is given).
fn run_files<'a>(inputs: &[InputFile<'a>]) -> (Vec<RunFiles<'a>>, Vec<IgnoredFile>) {
    let by_path: BTreeMap<String, &InputFile<'_>> =
        crate::sort::map_of(inputs.iter().map(|f| (normalise_path(&f.name), f)));
    let names: Vec<&String> = by_path.keys().collect();
    let discovery = group_runs_by(&names, |p| match recognise_name(p) {
        Recognition::Unknown => match by_path.get(p).map(|f| f.head()) {
            Some(Ok(head)) => match recognise(p, &head) {
                Ok(kind) => Recognition::Read(kind),
                Err(reason) => Recognition::Ignored(reason),
            },
            // Unreadable: left to its run's reader, which reports the error.
            _ => Recognition::Unknown,
        },
        known => known,
    });
    let runs = discovery
        .runs
        .into_iter()
        .map(|g| RunFiles {
            files: g
                .files
                .iter()
                .filter_map(|p| by_path.get(p).map(|f| (*f).clone()))
                .collect(),
            ignored: g.ignored,
            run: if g.root.is_empty() {
                ".".to_string()
            } else {
                g.root
            },
        })
        .collect();
    (runs, discovery.ignored)
}

/// A run's files not read, with those of its folders that no run reads (sorted by name).
pub fn add_ignored(run: &mut Run, ignored: Vec<IgnoredFile>) {
    run.ignored.extend(ignored);
    crate::sort::sort_by(&mut run.ignored, |a, b| a.cmp(b));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roots(d: &Discovery) -> Vec<&str> {
        d.runs.iter().map(|r| r.root.as_str()).collect()
    }

    #[test]
    fn one_aiperf_folder_is_one_run_with_its_launch_and_captures() {
        let d = group_runs(&[
            "launch.json",
            "captures.json",
            "before.prom",
            "server.log",
            "aiperf_artifacts/profile_export.jsonl",
            "aiperf_artifacts/profile_export_aiperf.json",
            "aiperf_artifacts/profile_export_aiperf.csv",
            "aiperf_artifacts/plots/ttft.png",
        ]);
        assert_eq!(roots(&d), ["aiperf_artifacts"]);
        let run = &d.runs[0];
        assert_eq!(
            run.files,
            [
                "aiperf_artifacts/plots/ttft.png",
                "aiperf_artifacts/profile_export.jsonl",
                "aiperf_artifacts/profile_export_aiperf.csv",
                "aiperf_artifacts/profile_export_aiperf.json",
                "before.prom",
                "captures.json",
                "launch.json",
            ]
        );
        assert_eq!(run.ignored.len(), 1);
        assert_eq!(run.ignored[0].name, "server.log");
        assert!(d.ignored.is_empty());
    }

    #[test]
    fn deepest_folder_with_metrics_is_the_run() {
        let d = group_runs(&[
            "aiperf_artifacts/profile_export_aiperf.json",
            "aiperf_artifacts/run_0/server_metrics_export.csv",
            "aiperf_artifacts/run_0/profile_export.jsonl",
        ]);
        assert_eq!(roots(&d), ["aiperf_artifacts/run_0"]);
        assert_eq!(
            d.runs[0].ignored[0].name,
            "aiperf_artifacts/profile_export_aiperf.json"
        );
    }

    #[test]
    fn sweep_layouts_and_order_independence() {
        let mut paths = vec![
            "launch.json",
            "README.md",
            "conc1/server_metrics_export.csv",
            "conc1/profile_export_aiperf.json",
            "conc4/aiperf_artifacts/server_metrics_export.json",
            "conc4/launch.json",
            "profile_runs/run_0001/profile_export.jsonl",
            "profile_runs/run_0002/profile_export.jsonl",
            "stray.prom",
            "results/agentic/aiperf_artifacts/run_0/server_metrics_export.json",
            "results/agentic/server.log",
        ];
        let d = group_runs(&paths);
        assert_eq!(
            roots(&d),
            [
                "conc1",
                "conc4/aiperf_artifacts",
                "profile_runs/run_0001",
                "profile_runs/run_0002",
                "results/agentic/aiperf_artifacts/run_0",
            ]
        );
        // The nearest launch.json wins; the top one applies to the others.
        assert!(d.runs[0].files.contains(&"launch.json".to_string()));
        assert!(d.runs[1].files.contains(&"conc4/launch.json".to_string()));
        assert!(!d.runs[1].files.contains(&"launch.json".to_string()));
        // A capture above several runs belongs to none of them.
        let top: Vec<&str> = d.ignored.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(top, ["README.md", "stray.prom"]);
        assert_eq!(d.runs[4].ignored[0].name, "results/agentic/server.log");
        paths.reverse();
        let backslashed: Vec<String> = paths.iter().map(|p| p.replace('/', "\\")).collect();
        assert_eq!(group_runs(&paths), d);
        assert_eq!(group_runs(&backslashed), d);
    }

    /// The sorted-set answers the grouping asks (`below`, `at_or_above`, `nearer_launch`) are
    /// the plain ones, every folder against every folder as the grouping asked them before (a
    /// tree of 40,000 runs took 76 s), on random sets of folders whose names sort around `/`
    /// (`a`, `a-1`, `a.b`, `a b`, `a~`: a folder's descendants are not next to it in order).
    #[test]
    fn sorted_set_answers_are_the_plain_ones() {
        let names = ["a", "a-1", "a.b", "a b", "a~"];
        let mut x = 7u64;
        let mut next = |n: usize| {
            x = crate::synth::rng::splitmix(x);
            (x % n as u64) as usize
        };
        for _ in 0..2000 {
            let count = 1 + next(12);
            let mut folder = || -> String {
                let depth = next(4);
                let parts: Vec<&str> = (0..depth).map(|_| names[next(names.len())]).collect();
                parts.join("/")
            };
            let dirs: Vec<String> = (0..count).map(|_| folder()).collect();
            let asked: Vec<String> = (0..6).map(|_| folder()).collect();
            let set: BTreeSet<&str> = crate::sort::set_of(dirs.iter().map(String::as_str));
            for dir in asked.iter().chain(&dirs).map(String::as_str) {
                let plain: Vec<&str> = set
                    .iter()
                    .copied()
                    .filter(|o| *o != dir && within(o, dir))
                    .collect();
                assert_eq!(below(&set, dir).collect::<Vec<_>>(), plain, "below {dir:?}");
                let nearest = set
                    .iter()
                    .copied()
                    .filter(|r| within(dir, r))
                    .max_by_key(|r| r.len());
                assert_eq!(at_or_above(&set, dir), nearest, "above {dir:?}");
                for run in plain {
                    let nearer = set
                        .iter()
                        .any(|d| *d != dir && within(d, dir) && within(run, d));
                    assert_eq!(nearer_launch(&set, dir, run), nearer, "{dir:?} {run:?}");
                }
            }
        }
    }

    #[test]
    fn nothing_to_read() {
        let d = group_runs(&["plots/a.png", "inputs.json", "notes"]);
        assert!(d.runs.is_empty());
        assert_eq!(d.ignored.len(), 3);
    }
}
