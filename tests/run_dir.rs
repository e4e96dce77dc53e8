use kvledger::read::run_dir::discover;
use kvledger::ErrorCode;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// A temporary directory removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        static N: AtomicU32 = AtomicU32::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let p = std::env::temp_dir().join(format!(
            "kvledger-run-dir-{tag}-{}-{nanos}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }

    fn file(&self, rel: &str, content: &str) {
        let p = self.0.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const PROFILE_LINE: &str = "{\"metadata\":{\"benchmark_phase\":\"profiling\"},\"metrics\":{}}\n";
const SUMMARY: &str = "{\"request_count\":{\"avg\":1}}";

fn names(root: &Path, files: &[PathBuf]) -> Vec<String> {
    files
        .iter()
        .map(|p| {
            p.strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/")
        })
        .collect()
}

#[test]
fn aiperf_artifacts_layout() {
    let d = TempDir::new("a");
    d.file("aiperf_artifacts/profile_export.jsonl", PROFILE_LINE);
    d.file("aiperf_artifacts/profile_export_aiperf.json", SUMMARY);
    d.file("aiperf_artifacts/server_metrics_export.json", "{}");
    d.file("aiperf_artifacts/inputs.json", "{}");
    d.file("aiperf_artifacts/gpu_telemetry_export.jsonl", "{}");
    d.file("launch.json", "{}");
    d.file("conc4.before.prom", "m 1\n");
    d.file("notes.txt", "hello");
    let files = discover(&d.0).unwrap();
    assert_eq!(
        names(&d.0, &files),
        [
            "aiperf_artifacts/profile_export.jsonl",
            "aiperf_artifacts/profile_export_aiperf.json",
            "aiperf_artifacts/server_metrics_export.json",
            "conc4.before.prom",
            "launch.json",
        ]
    );
}

#[test]
fn run_0_layout_is_deepest() {
    let d = TempDir::new("b");
    d.file(
        "aiperf_artifacts/run_0/server_metrics_export.csv",
        "# AIPerf Server Metrics Export\n",
    );
    d.file("aiperf_artifacts/run_0/profile_export_aiperf.json", SUMMARY);
    // A shallower summary (e.g. an aggregate) is not part of run_0.
    d.file("aiperf_artifacts/profile_export_aiperf.json", SUMMARY);
    d.file("captures.json", "{\"captures\":[]}");
    let files = discover(&d.0).unwrap();
    assert_eq!(
        names(&d.0, &files),
        [
            "aiperf_artifacts/run_0/profile_export_aiperf.json",
            "aiperf_artifacts/run_0/server_metrics_export.csv",
            "captures.json",
        ]
    );
    // Pointing at aiperf_artifacts itself finds run_0 too.
    let files = discover(&d.0.join("aiperf_artifacts")).unwrap();
    assert_eq!(files.len(), 2);
    assert!(files.iter().all(|p| p.parent().unwrap().ends_with("run_0")));
}

#[test]
fn flat_dir_with_prefix_names() {
    let d = TempDir::new("c");
    d.file("run7_server_metrics.json", "{}");
    d.file("run7_aiperf.json", SUMMARY);
    d.file("run7.jsonl", PROFILE_LINE);
    d.file("run7_timeslices.json", "{}");
    d.file("readme.md", "# not an artifact");
    let files = discover(&d.0).unwrap();
    assert_eq!(
        names(&d.0, &files),
        ["run7.jsonl", "run7_aiperf.json", "run7_server_metrics.json"]
    );
}

#[test]
fn empty_and_missing_dirs() {
    let d = TempDir::new("d");
    let e = discover(&d.0).unwrap_err();
    assert_eq!(e.code, ErrorCode::NoArtifacts);
    assert!(e.file.contains("kvledger-run-dir-d"));
    // Only launch facts: still no run.
    d.file("launch.json", "{}");
    d.file("aiperf_artifacts/inputs.json", "{}");
    assert_eq!(discover(&d.0).unwrap_err().code, ErrorCode::NoArtifacts);
    let missing = d.0.join("does-not-exist");
    assert_eq!(discover(&missing).unwrap_err().code, ErrorCode::Io);
    d.file("plain.txt", "x");
    assert_eq!(
        discover(&d.0.join("plain.txt")).unwrap_err().code,
        ErrorCode::Io
    );
}
