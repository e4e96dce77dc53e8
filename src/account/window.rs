//! Stage 3, the profiling window (contract section 4): `summary.phase_time_ranges.profiling`,
//! else the profiling records of the per-request export (first start, last end), with the
//! source recorded. Also whether the profiling records lie inside the window the counters are
//! bounded over.

use super::interval::Window;
use super::output::WindowSource;
use super::verdict::{Reason, ReasonCode};
use crate::model::Phase;
use crate::read::Run;

/// The window and where it came from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProfilingWindow {
    pub window: Option<Window>,
    pub source: WindowSource,
}

/// Find the profiling window; `window_missing` when there is none.
pub fn profiling_window(run: &Run, reasons: &mut Vec<Reason>) -> ProfilingWindow {
    let found = from_phase_ranges(run)
        .map(|w| (w, WindowSource::PhaseTimeRanges))
        .or_else(|| from_records(run).map(|w| (w, WindowSource::ProfileRecords)));
    match found {
        Some((w, source)) => ProfilingWindow {
            window: Some(w),
            source,
        },
        None => {
            reasons.push(Reason::new(
                ReasonCode::WindowMissing,
                "no phase_time_ranges.profiling and no timed profiling records: the window is unknown",
            ));
            ProfilingWindow {
                window: None,
                source: WindowSource::None,
            }
        }
    }
}

fn from_phase_ranges(run: &Run) -> Option<Window> {
    let p = run
        .server_json
        .as_ref()?
        .summary
        .phase_time_ranges
        .profiling?;
    Some(Window {
        start_ns: p.start_ns,
        end_ns: p.end_ns,
    })
}

fn is_profiling(phase: Option<Phase>) -> bool {
    matches!(phase, Some(Phase::Profiling) | None)
}

fn from_records(run: &Run) -> Option<Window> {
    let records = &run.profile.as_ref()?.records;
    let profiling = records.iter().filter(|r| is_profiling(r.phase));
    let start = profiling.clone().filter_map(|r| r.request_start_ns).min()?;
    let end = profiling.filter_map(|r| r.request_end_ns).max()?;
    (start <= end).then_some(Window {
        start_ns: start,
        end_ns: end,
    })
}

/// Profiling records (not cancelled) that start before or end after a window stated by the
/// server export: the counters were bounded over a window that does not hold every request
/// the client counted (`records_outside_window`).
pub fn check_records(run: &Run, w: &ProfilingWindow, reasons: &mut Vec<Reason>) {
    let (Some(win), WindowSource::PhaseTimeRanges) = (w.window, w.source) else {
        return;
    };
    let Some(profile) = &run.profile else {
        return;
    };
    let profiling = profile
        .records
        .iter()
        .filter(|r| is_profiling(r.phase) && !r.was_cancelled);
    let early = profiling
        .clone()
        .filter(|r| r.request_start_ns.is_some_and(|s| s < win.start_ns))
        .count();
    let late = profiling
        .filter(|r| r.request_end_ns.is_some_and(|e| e > win.end_ns))
        .count();
    if early + late > 0 {
        reasons.push(Reason::new(
            ReasonCode::RecordsOutsideWindow,
            format!(
                "{early} profiling record(s) start before the profiling window and {late} end after it"
            ),
        ));
    }
}
