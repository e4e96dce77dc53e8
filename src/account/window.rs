//! Stage 3, the profiling window (contract section 4): `summary.phase_time_ranges.profiling`,
//! else the profiling records of the per-request export (first start, last end), with the
//! source recorded. Also whether the profiling records lie inside the window the counters are
//! bounded over.

use super::interval::Window;
use super::output::WindowSource;
use super::request_scope::RecordFold;
use super::verdict::{Reason, ReasonCode};
use crate::read::Run;

/// The window and where it came from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProfilingWindow {
    pub window: Option<Window>,
    pub source: WindowSource,
}

/// Find the profiling window; `window_missing` when there is none. `records`: the fold of
/// the run's per-request records.
pub fn profiling_window(
    run: &Run,
    records: Option<&RecordFold>,
    reasons: &mut Vec<Reason>,
) -> ProfilingWindow {
    let found = from_phase_ranges(run)
        .map(|w| (w, WindowSource::PhaseTimeRanges))
        .or_else(|| from_records(records?).map(|w| (w, WindowSource::ProfileRecords)));
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

/// The profiling records' first start and last end.
fn from_records(records: &RecordFold) -> Option<Window> {
    let (start, end) = records.span()?;
    (start <= end).then_some(Window {
        start_ns: start,
        end_ns: end,
    })
}

/// Profiling records (not cancelled) that start before or end after a window stated by the
/// server export: the counters were bounded over a window that does not hold every request
/// the client counted (`records_outside_window`).
pub fn check_records(records: Option<&RecordFold>, w: &ProfilingWindow, reasons: &mut Vec<Reason>) {
    let (Some(win), WindowSource::PhaseTimeRanges) = (w.window, w.source) else {
        return;
    };
    let Some(records) = records else {
        return;
    };
    let (early, late) = records.outside(win.start_ns, win.end_ns);
    if early + late > 0 {
        reasons.push(Reason::new(
            ReasonCode::RecordsOutsideWindow,
            format!(
                "{early} profiling record(s) start before the profiling window and {late} end after it"
            ),
        ));
    }
}
