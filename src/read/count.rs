//! Counts above 2^53 − 1 are refused (`COUNT_TOO_LARGE`, CONTRACT section 7 r2).
//!
//! Token counts and counter values travel as JSON numbers, which hold integers exactly only up
//! to 2^53 − 1 (9007199254740991, `Number.MAX_SAFE_INTEGER`): a larger count would reach
//! JavaScript, the dashboard and its database rounded. So every reader refuses, with the
//! value's position, a *count* above it:
//!
//! - a counter's cumulative value: server-metrics JSON `stats.total` and `timeslices[].total`
//!   of `counter` families (profiling and warmup), the CSV's counter `total`, a raw scrape
//!   sample or Prometheus text sample of a counter;
//! - a histogram's counts: bucket values and `count` (never `sum`, which is not a count);
//! - the per-request token counts kvledger reads (`profile_export.jsonl`
//!   `input_sequence_length`, `output_sequence_length`, `usage_prompt_tokens`; the record's
//!   other metrics are not read, so they never travel) and the run summary's counts
//!   (`request_count`, `completed_request_count`, `error_request_count`, `total_isl`,
//!   `total_osl`, warmup `request_count` and `error_request_count`).
//!
//! Gauges are not counts and may legitimately exceed 2^53 (bytes; `process_virtual_memory_max_bytes`
//! is 2^64 − 1 on many hosts): they are never refused. Non-finite and negative counts are not
//! refused here either: the accounting treats them as evidence of a fault.
//!
//! Which untyped family is a counter (raw JSONL scrapes carry no types; a Prometheus sample may
//! have no `# TYPE`) is decided by [`crate::read::names::counter_by_name`], and in a run by the
//! type another export of the run gives the family (`crate::read::run`).

use crate::error::{ErrorCode, Position, ReadError};
use crate::wire::MAX_SAFE_INTEGER;
use serde::de;

/// True when a count cannot travel exactly as a JSON number. NaN, infinities and negative
/// values are not this reader's concern (see the module docs).
pub fn too_large(v: f64) -> bool {
    // `MAX_SAFE_INTEGER` is exact as an f64, so this is `v >= 2^53`.
    v.is_finite() && v > MAX_SAFE_INTEGER as f64
}

/// [`too_large`] for an integer read exactly.
pub fn too_large_u64(v: u64) -> bool {
    v > MAX_SAFE_INTEGER
}

/// A count as written in messages: in full when integral (below 10^21), else in exponent form.
pub fn show(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e21 {
        format!("{v:.0}")
    } else {
        format!("{v:e}")
    }
}

/// The message of a refusal; `what` names the count (e.g. "counter `vllm:prompt_tokens`
/// total").
pub fn message(what: &str, shown: &str) -> String {
    format!(
        "{what} is {shown}, above 2^53 − 1 (9007199254740991): a count this large cannot travel exactly as a JSON number"
    )
}

/// A `COUNT_TOO_LARGE` error.
pub fn refuse(file: &str, position: Position, what: &str, shown: &str) -> ReadError {
    ReadError::new(
        ErrorCode::CountTooLarge,
        file,
        position,
        message(what, shown),
    )
}

/// How a visitor's refusal starts inside serde (which carries only a message): the reader that
/// maps the error recognises it by this lead, which no serde message starts with.
const VISITOR_LEAD: &str = "count above 2^53 - 1: ";

/// The error a visitor returns for a count it refuses, shown as `shown` (the reader adds
/// what and where).
pub(crate) fn visitor_refusal<E: de::Error>(shown: impl std::fmt::Display) -> E {
    E::custom(format_args!("{VISITOR_LEAD}{shown}"))
}

/// The value of a count a visitor refused, if `err` is that refusal.
pub(crate) fn refused_in_visitor(err: &serde_json::Error) -> Option<String> {
    if err.classify() != serde_json::error::Category::Data {
        return None;
    }
    let msg = err.to_string();
    let rest = msg.strip_prefix(VISITOR_LEAD)?;
    // serde_json appends " at line L column C".
    let shown = rest.split(' ').next().unwrap_or(rest);
    Some(shown.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_boundary_is_2_pow_53_minus_1() {
        assert!(!too_large(9_007_199_254_740_991.0));
        assert!(too_large(9_007_199_254_740_992.0));
        assert!(!too_large_u64(9_007_199_254_740_991));
        assert!(too_large_u64(9_007_199_254_740_992));
        assert!(too_large(1.8446744073709552e19));
        // Not counts this check refuses: faults the accounting reports.
        assert!(!too_large(f64::NAN));
        assert!(!too_large(f64::INFINITY));
        assert!(!too_large(-1e300));
    }

    #[test]
    fn values_are_shown_exactly_or_in_exponent_form() {
        assert_eq!(show(9_007_199_254_740_992.0), "9007199254740992");
        assert_eq!(show(1e300), "1e300");
        assert_eq!(show(1.5e16 + 0.5), "15000000000000000");
    }

    #[test]
    fn a_visitor_refusal_is_recognised_after_serde() {
        let err: serde_json::Error = visitor_refusal(show(9_007_199_254_740_992.0));
        assert_eq!(
            refused_in_visitor(&err).as_deref(),
            Some("9007199254740992")
        );
        let other: serde_json::Error = de::Error::custom("count above something else");
        assert_eq!(refused_in_visitor(&other), None);
    }
}
