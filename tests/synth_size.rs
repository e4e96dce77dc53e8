//! Size tests: a large run is generated with bounded memory (peak RSS measured from
//! `/proc/self/status` VmHWM, not timed). The default run is ~30 MB; the 1 GB run is ignored
//! by default: `KVLEDGER_SYNTH_BYTES=1GB cargo test --release --test synth_size -- --ignored`.

use kvledger::synth::{generate, Engine, SynthSpec, Topology};

fn vm_hwm_kb() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn run(target: u64, rss_limit_mb: u64) {
    let dir = std::env::temp_dir().join(format!(
        "kvledger-synth-size-{}-{target}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let spec = SynthSpec {
        engine: Engine::Sglang,
        topology: Topology::parse("1P1D").unwrap(),
        concurrency: 16,
        tier_cpu: true,
        target_bytes: Some(target),
        ..SynthSpec::default()
    };
    let before = vm_hwm_kb();
    let s = generate(&spec, &dir).expect("generate");
    let after = vm_hwm_kb();
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!(
        "size: target {target} bytes, wrote {} bytes, duration {} s, VmHWM {:?} -> {:?} kB",
        s.total_bytes, s.duration_s, before, after
    );
    assert!(
        s.total_bytes as f64 > target as f64 * 0.7 && (s.total_bytes as f64) < target as f64 * 1.3,
        "{} vs {target}",
        s.total_bytes
    );
    if let Some(kb) = after {
        assert!(
            kb / 1024 < rss_limit_mb,
            "peak RSS {} MB for a {} MB run",
            kb / 1024,
            s.total_bytes / 1_000_000
        );
    }
}

#[test]
fn moderate_run_has_bounded_memory() {
    run(30_000_000, 96);
}

#[test]
#[ignore]
fn large_run_has_bounded_memory() {
    let target = std::env::var("KVLEDGER_SYNTH_BYTES").ok().and_then(|v| {
        let v = v.to_ascii_uppercase();
        let (n, m) = if let Some(n) = v.strip_suffix("GB") {
            (n.to_string(), 1e9)
        } else if let Some(n) = v.strip_suffix("MB") {
            (n.to_string(), 1e6)
        } else {
            (v.clone(), 1.0)
        };
        n.parse::<f64>().ok().map(|x| (x * m) as u64)
    });
    run(target.unwrap_or(1_000_000_000), 256);
}
