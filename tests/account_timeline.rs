//! The counters over time (`account_run_detailed`, the visualizer's `RunDetail`): the result
//! beside it is `account_run`'s, and the timeline agrees with the bounds: with timeslices as the
//! evidence, the in-window slices not marked as edges add up to the counter's `lo` and every
//! slice of the window to its `hi`; raw scrapes mark the counter's restart as a reset.

use kvledger::account::timeline::{CounterTimeline, RunDetail};
use kvledger::account::{account_run, account_run_detailed, Accounting, Policy};
use kvledger::engines::Counter;
use kvledger::read::{read_run, InputFile, RunOptions};
use std::path::Path;

fn example(name: &str, skip: &[&str]) -> (Accounting, Accounting, RunDetail) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/synth")
        .join(name);
    let mut files: Vec<(String, Vec<u8>)> = vec![(
        "launch.json".into(),
        std::fs::read(dir.join("launch.json")).expect("launch"),
    )];
    for e in std::fs::read_dir(dir.join("aiperf_artifacts")).expect("dir") {
        let p = e.expect("entry").path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if !skip.contains(&name.as_str()) {
            files.push((name, std::fs::read(&p).expect("file")));
        }
    }
    let inputs: Vec<InputFile<'_>> = files.iter().map(|(n, b)| InputFile::bytes(n, b)).collect();
    let run = read_run(&inputs, &RunOptions::default()).expect("run");
    let plain = account_run(&run, &Policy::default());
    let (detailed, detail) = account_run_detailed(&run, &Policy::default());
    (plain, detailed, detail)
}

fn counter(d: &RunDetail, c: Counter) -> &CounterTimeline {
    let ep = &d.timeline.endpoints[0];
    ep.counters
        .iter()
        .find(|x| x.counter == c)
        .expect("counter")
}

#[test]
fn timeslice_edges_are_the_bounds_edges() {
    // Without the JSONL the timeslices are the evidence: lo = the slices surely inside,
    // hi = lo + the edge slices (no gaps, no warmup proof by default).
    let (plain, a, d) = example("vllm-agg-clean", &["server_metrics_export.jsonl"]);
    assert_eq!(plain, a, "the detailed call gives account_run's result");
    assert_eq!(
        a.cache_validity.window.evidence.map(|m| m.as_str()),
        Some("timeslices")
    );
    assert_eq!(d.timeline.endpoints.len(), 1);
    for c in [Counter::Prompt, Counter::HitGpu] {
        let t = counter(&d, c);
        let b = match c {
            Counter::Prompt => a.counters["unified"].prompt,
            _ => a.counters["unified"].hit_gpu,
        }
        .expect("bounds");
        let profiling: Vec<_> = t.slices.iter().filter(|s| !s.warmup).collect();
        let inner: f64 = profiling
            .iter()
            .filter(|s| !s.edge)
            .map(|s| s.increase)
            .sum();
        let all: f64 = profiling.iter().map(|s| s.increase).sum();
        assert!(
            (inner - b.lo).abs() < 1e-6,
            "{c:?}: inner {inner} vs lo {}",
            b.lo
        );
        assert!(
            (all - b.hi.expect("hi")).abs() < 1e-6,
            "{c:?}: all {all} vs hi {:?}",
            b.hi
        );
        assert!(profiling.first().expect("slices").edge && profiling.last().expect("slices").edge);
        assert!(t.slices.iter().any(|s| s.warmup), "warmup slices are shown");
        assert!(t.gaps.is_empty() && t.samples.is_empty() && t.merged == 1);
    }
    let w = d.timeline.window.expect("window");
    let (start, end) = (
        a.cache_validity.window.start_ns.expect("start").0,
        a.cache_validity.window.end_ns.expect("end").0,
    );
    assert!(((w.end_s - w.start_s) - (end - start) as f64 / 1e9).abs() < 1e-6);
    assert_eq!(
        d.timeline.origin_ns.expect("origin").0 + (w.start_s * 1e9).round() as u64,
        start
    );
    assert!(d.timeline.warmup.expect("warmup").end_s <= w.start_s);
    let names: Vec<&str> = d.files.iter().map(|f| f.name.as_str()).collect();
    assert!(names.contains(&"server_metrics_export.json") && !names.contains(&"truth.json"));
}

#[test]
fn raw_scrapes_show_the_reset() {
    let (_, a, d) = example("vllm-agg-counter-reset", &[]);
    assert!(a
        .cache_validity
        .reasons
        .iter()
        .any(|r| r.code.as_str() == "counter_reset"));
    let resets: usize = d.timeline.endpoints[0]
        .counters
        .iter()
        .map(|c| c.samples.iter().filter(|s| s.reset).count())
        .sum();
    assert!(resets > 0, "a reset is marked on the samples");
    let prompt = counter(&d, Counter::Prompt);
    assert!(prompt.samples.windows(2).all(|w| w[0].t_s < w[1].t_s));
}
