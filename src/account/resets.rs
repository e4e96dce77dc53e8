//! Where resets are decided. A counter that decreased between two raw samples, or whose
//! slices add up to more than its AIPerf total (AIPerf clamps a decrease to 0), is caught per
//! series in `interval` (`Bounded::reset`). A restart that no scrape caught lower than before
//! is seen here, per endpoint, in the process collector's `process_start_time_seconds`: a
//! change inside the window means every counter of the endpoint restarted at 0. Either way the
//! series is `INVALID_COUNTER` (`counter_reset`): lo keeps the observed increments and hi is
//! unbounded, since the mass before the restart was never observed.

use super::evidence::Evidence;
use super::interval::Window;
use super::lookup::{insert_sorted, Cursor};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Per endpoint: why its process is known to have restarted inside the window.
pub fn restarts(ev: &Evidence, window: Option<Window>) -> BTreeMap<Arc<str>, String> {
    // Both in URL order, as the endpoints.
    let mut stats = Cursor::new(&ev.process_start_stats);
    let mut samples = Cursor::new(&ev.process_start_samples);
    let found: Vec<(Arc<str>, String)> = ev
        .endpoints
        .iter()
        .filter_map(|url| {
            let (stats, samples) = (stats.get(url), samples.get(url));
            restart_evidence(stats, samples, window).map(|why| (Arc::clone(url), why))
        })
        .collect();
    let mut out = BTreeMap::new();
    insert_sorted(&mut out, found);
    out
}

/// Why one endpoint is known to have restarted, from its `process_start_time_seconds`
/// (min, max) over the export and its raw samples.
fn restart_evidence(
    stats: Option<&(f64, f64)>,
    samples: Option<&Vec<(u64, f64)>>,
    window: Option<Window>,
) -> Option<String> {
    let latest_start = stats
        .map(|s| s.1)
        .into_iter()
        .chain(samples.into_iter().flatten().map(|s| s.1))
        .filter(|v| v.is_finite())
        .fold(None, |acc: Option<f64>, v| {
            Some(acc.map_or(v, |a| a.max(v)))
        });
    if let (Some(w), Some(start_s)) = (window, latest_start) {
        // A process that started after the window began restarted its counters at 0 inside
        // it, whatever its earlier incarnation counted (1 ms of clock rounding allowed).
        if start_s * 1e9 > w.start_ns as f64 + 1e6 {
            let at = crate::utc::utc_seconds(start_s).unwrap_or_else(|| format!("{start_s} s"));
            return Some(format!(
                "the process started at {at}, inside the profiling window: its counters restarted at 0 after the window began"
            ));
        }
    }
    if let Some((lo, hi)) = stats {
        if hi > lo {
            let at = |s: f64| crate::utc::utc_seconds(s).unwrap_or_else(|| format!("{s} s"));
            return Some(format!(
                "the process restarted during the profiling phase (its start time went from {} to {}): its counters restarted at 0",
                at(*lo),
                at(*hi)
            ));
        }
    }
    let samples = samples?;
    let (from, to) = match window {
        Some(w) => (
            samples
                .iter()
                .rev()
                .find(|s| s.0 <= w.start_ns)
                .or(samples.first())?,
            samples
                .iter()
                .find(|s| s.0 >= w.end_ns)
                .or(samples.last())?,
        ),
        // Without a window every sample may be in it.
        None => (samples.first()?, samples.last()?),
    };
    let moved = samples
        .iter()
        .filter(|s| s.0 >= from.0 && s.0 <= to.0)
        .any(|s| s.1.to_bits() != from.1.to_bits());
    moved.then(|| {
        "the process restarted inside the window (process_start_time_seconds changed): its counters restarted at 0".to_string()
    })
}
