//! Batch re-accounting: a results tree of many runs accounted by `--jobs` workers gives the
//! same bytes whatever the number of workers and whatever order the tree lists in, a broken
//! run is its error line in its place, stderr carries no progress bar when it is not a
//! terminal, and each line is what the per-run CLI gives for that run alone.

#[path = "cli_support/mod.rs"]
mod cli_support;
use cli_support::{envelopes, kvledger, temp_dir};
use std::path::Path;

/// The bundled generated runs: each a full AIPerf folder with its launch facts.
const EXAMPLES: &str = "examples/synth";

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir") {
        let e = e.expect("entry");
        let target = to.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).expect("copy");
        }
    }
}

fn example_runs() -> Vec<std::path::PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(EXAMPLES);
    let mut runs: Vec<_> = std::fs::read_dir(&root)
        .expect("examples")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.join("aiperf_artifacts").is_dir())
        .collect();
    runs.sort();
    runs
}

/// A tree of `copies` × the example runs (`batch_NN/<example>/`) with one broken run,
/// `batch_01/broken/`, whose export stops mid-document. `reverse` creates the folders in the
/// opposite order, so a directory listing gives them in another order.
fn make_tree(name: &str, copies: usize, reverse: bool) -> std::path::PathBuf {
    let top = temp_dir(name);
    let mut jobs: Vec<(usize, Option<std::path::PathBuf>)> = Vec::new();
    for c in 0..copies {
        jobs.extend(example_runs().into_iter().map(|r| (c, Some(r))));
        if c == 1 {
            jobs.push((c, None));
        }
    }
    if reverse {
        jobs.reverse();
    }
    for (c, run) in jobs {
        let dir = top.join(format!("batch_{c:02}"));
        match run {
            Some(r) => copy_dir(&r, &dir.join(r.file_name().expect("name"))),
            None => {
                let broken = dir.join("broken/aiperf_artifacts");
                std::fs::create_dir_all(&broken).expect("mkdir");
                std::fs::write(
                    broken.join("server_metrics_export.json"),
                    "{\"schema_version\": \"1.1\", \"metrics\": {",
                )
                .expect("write");
            }
        }
    }
    top
}

fn run_labels(out: &str) -> Vec<String> {
    envelopes(out, "account")
        .iter()
        .map(|e| e["run"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn any_number_of_jobs_gives_the_same_bytes_with_the_broken_run_in_its_place() {
    let tree = make_tree("batch-jobs", 3, false);
    let t = tree.to_str().expect("utf-8 path");
    let (code, one, err) = kvledger(&["account", "--json", "--jobs", "1", t]);
    assert_eq!(code, 1, "a broken run fails the batch: {err}");
    let runs = example_runs().len() * 3 + 1;
    let labels = run_labels(&one);
    assert_eq!(labels.len(), runs);
    let mut sorted = labels.clone();
    sorted.sort();
    assert_eq!(labels, sorted, "runs are printed in path order");
    for jobs in ["2", "3", "8"] {
        let (code, out, err) = kvledger(&["account", "--json", "--jobs", jobs, t]);
        assert_eq!(code, 1, "{err}");
        assert!(out == one, "--jobs {jobs} changed the output");
    }
    let envs = envelopes(&one, "account");
    let broken = labels
        .iter()
        .position(|l| l == "batch_01/broken/aiperf_artifacts")
        .expect("the broken run has its line");
    assert!(broken > 0 && broken + 1 < runs, "in the middle: {broken}");
    assert_eq!(envs[broken]["error"]["code"], "JSON_SYNTAX");
    for (i, e) in envs.iter().enumerate().filter(|(i, _)| *i != broken) {
        assert!(
            e["result"]["cache_validity"]["status"].is_string(),
            "{i}: {e}"
        );
    }
    assert!(
        err.contains(&format!("1 of {runs} runs could not be read")),
        "{err}"
    );

    let (_, text1, _) = kvledger(&["account", "-j", "1", t]);
    let (_, text3, _) = kvledger(&["account", "-j", "3", t]);
    assert!(text1 == text3, "text output changed with --jobs");
    assert!(text1.contains("run: batch_01/broken/aiperf_artifacts\n  error JSON_SYNTAX"));
    let _ = std::fs::remove_dir_all(&tree);
}

#[test]
fn the_order_does_not_depend_on_how_the_tree_lists() {
    let a = make_tree("batch-order-a", 2, false);
    let b = make_tree("batch-order-b", 2, true);
    let (_, out_a, _) = kvledger(&["account", "--json", "-j", "2", a.to_str().expect("path")]);
    let (_, out_b, _) = kvledger(&["account", "--json", "-j", "2", b.to_str().expect("path")]);
    assert!(!out_a.is_empty());
    // File names inside error messages carry the tree's own path: compare without it.
    let a_rel = out_a.replace(a.to_str().expect("path"), "TREE");
    let b_rel = out_b.replace(b.to_str().expect("path"), "TREE");
    assert!(a_rel == b_rel, "the listing order changed the output");
    let _ = std::fs::remove_dir_all(&a);
    let _ = std::fs::remove_dir_all(&b);
}

#[test]
fn piped_stderr_has_no_progress_bar_only_the_summary_and_quiet_has_none() {
    let tree = temp_dir("batch-stderr");
    for r in example_runs().iter().take(4) {
        copy_dir(r, &tree.join(r.file_name().expect("name")));
    }
    let t = tree.to_str().expect("path");
    let (code, out, err) = kvledger(&["account", "--json", t]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(envelopes(&out, "account").len(), 4);
    assert!(!err.contains('\r') && !err.contains('\u{1b}'), "{err:?}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{err}");
    let summary = lines[0];
    assert!(
        summary.starts_with("kvledger account: 4 runs (0 failed), ")
            && summary.contains(" MB in ")
            && summary.contains(" runs/s, ")
            && summary.ends_with(" MB/s"),
        "{summary}"
    );
    let (code, quiet_out, err) = kvledger(&["account", "--json", "--quiet", t]);
    assert_eq!(code, 0);
    assert!(err.is_empty(), "{err}");
    assert!(quiet_out == out);
    // One run prints no summary: it is not a batch.
    let one = tree.join(example_runs()[0].file_name().expect("name"));
    let (code, _, err) = kvledger(&["account", one.to_str().expect("path")]);
    assert_eq!(code, 0);
    assert!(err.is_empty(), "{err}");
    let _ = std::fs::remove_dir_all(&tree);
}

#[test]
fn each_line_is_what_the_per_run_cli_gives_for_that_run() {
    // The unit of work of a distributed backfill: `kvledger account --json RUN_DIR`.
    let (code, out, err) = kvledger(&["account", "--json", "-j", "2", EXAMPLES]);
    assert_eq!(code, 0, "{err}");
    let batch = envelopes(&out, "account");
    assert_eq!(batch.len(), example_runs().len());
    for e in &batch {
        let run = e["run"].as_str().expect("run label");
        // The run folder is aiperf_artifacts/; its launch.json lies in the folder above.
        let dir = format!("{EXAMPLES}/{}", run.trim_end_matches("/aiperf_artifacts"));
        let (code, one, err) = kvledger(&["account", "--json", &dir]);
        assert_eq!(code, 0, "{dir}: {err}");
        let single = &envelopes(&one, "account")[0];
        assert_eq!(single["run"], dir.as_str());
        assert_eq!(single["result"], e["result"], "{dir}");
    }
}

#[test]
fn jobs_must_be_a_positive_count() {
    for bad in ["0", "-1", "two"] {
        let (code, out, err) = kvledger(&["account", "--json", "--jobs", bad, EXAMPLES]);
        assert_eq!(code, 2, "--jobs {bad}: {err}");
        let env = &envelopes(&out, "account")[0];
        assert_eq!(env["error"]["code"], "BAD_OPTIONS");
        assert!(err.contains(bad), "{err}");
    }
}
