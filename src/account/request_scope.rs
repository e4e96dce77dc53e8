//! Request scope (CONTRACT section 5): are the requests the counters saw the profiling
//! requests? From the per-request export, profiling phase only (records without a phase are
//! profiling, as InferenceX treats them; warmup errors never count against the window).

use super::interval::Interval;
use super::output::{Bounds, RequestScope};
use super::verdict::{Reason, ReasonCode};
use crate::model::{Phase, ProfileExport};

/// What the client saw in the profiling phase.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClientScope {
    pub profiling_records: u64,
    pub errors: u64,
    pub cancelled: u64,
    pub warmup_errors: u64,
    /// Σ server-counted prompt tokens (`usage_prompt_tokens`, else `input_sequence_length`)
    /// of successful profiling records; `None` if any of them has neither.
    pub prompt_tokens: Option<u64>,
    /// Σ `output_sequence_length` of successful profiling records, when every one has it.
    pub output_tokens: Option<u64>,
    pub successful: u64,
}

pub fn client_scope(p: &ProfileExport) -> ClientScope {
    let mut c = ClientScope::default();
    let mut prompt: Option<u64> = Some(0);
    let mut output: Option<u64> = Some(0);
    for r in &p.records {
        match r.phase {
            Some(Phase::Warmup) => {
                if r.error.is_some() {
                    c.warmup_errors += 1;
                }
            }
            Some(Phase::Profiling) | None => {
                c.profiling_records += 1;
                if r.was_cancelled {
                    c.cancelled += 1;
                }
                if r.error.is_some() {
                    c.errors += 1;
                }
                if r.error.is_none() && !r.was_cancelled {
                    c.successful += 1;
                    let tokens = r.usage_prompt_tokens.or(r.input_sequence_length);
                    prompt = match (prompt, tokens) {
                        (Some(a), Some(b)) => a.checked_add(b),
                        _ => None,
                    };
                    output = match (output, r.output_sequence_length) {
                        (Some(a), Some(b)) => a.checked_add(b),
                        _ => None,
                    };
                }
            }
        }
    }
    c.prompt_tokens = prompt;
    c.output_tokens = output;
    c
}

/// Check conservation and build the verdict's `request_scope` block.
pub fn check(
    client: Option<&ClientScope>,
    server_prompt: Option<Interval>,
    admissions: Option<Interval>,
    tolerance: f64,
    reasons: &mut Vec<Reason>,
) -> RequestScope {
    let Some(c) = client else {
        reasons.push(Reason::new(
            ReasonCode::NoRequestRecords,
            "no profile_export.jsonl: the requests behind the counters cannot be proven to be the profiling requests",
        ));
        return RequestScope {
            profiling_records: 0,
            errors: 0,
            cancelled: 0,
            client_prompt_tokens: None,
            server_prompt: server_prompt.map(Bounds::from),
            admissions: admissions.map(Bounds::from),
            conserved: false,
        };
    };
    let mut conserved = true;
    if c.profiling_records == 0 {
        conserved = false;
        reasons.push(Reason::new(
            ReasonCode::NoRequestRecords,
            "the per-request export has no profiling records: the requests behind the counters cannot be proven to be the profiling requests",
        ));
    }
    if c.errors > 0 {
        conserved = false;
        reasons.push(Reason::new(
            ReasonCode::ProfilingErrors,
            format!(
                "{} of {} profiling records failed",
                c.errors, c.profiling_records
            ),
        ));
    }
    if c.cancelled > 0 {
        conserved = false;
        reasons.push(Reason::new(
            ReasonCode::ProfilingCancellations,
            format!(
                "{} of {} profiling requests were cancelled",
                c.cancelled, c.profiling_records
            ),
        ));
    }
    if c.warmup_errors > 0 {
        reasons.push(Reason::new(
            ReasonCode::WarmupErrorsIgnored,
            format!(
                "{} warmup record(s) failed; warmup errors do not count against the window",
                c.warmup_errors
            ),
        ));
    }
    match (c.prompt_tokens, server_prompt) {
        (None, _) => {
            conserved = false;
            reasons.push(Reason::new(
                ReasonCode::ClientPromptUnknown,
                "a successful profiling record has neither usage_prompt_tokens nor input_sequence_length",
            ));
        }
        (Some(tokens), Some(s)) => {
            let t = tokens as f64;
            if t < s.lo - tolerance || t > s.hi + tolerance {
                conserved = false;
                reasons.push(Reason::new(
                    ReasonCode::PromptNotConserved,
                    format!(
                        "client prompt tokens {tokens} outside the server's priced-role prompt interval [{}, {}] (tolerance {tolerance})",
                        s.lo,
                        if s.hi.is_finite() { s.hi.to_string() } else { "unbounded".into() }
                    ),
                ));
            }
        }
        (Some(_), None) => conserved = false,
    }
    if let Some(a) = admissions {
        let n = c.successful as f64;
        if n < a.lo - tolerance || n > a.hi + tolerance {
            conserved = false;
            reasons.push(Reason::new(
                ReasonCode::AdmissionsNotConserved,
                format!(
                    "{} successful profiling records outside the admissions interval [{}, {}]",
                    c.successful,
                    a.lo,
                    if a.hi.is_finite() {
                        a.hi.to_string()
                    } else {
                        "unbounded".into()
                    }
                ),
            ));
        }
    }
    RequestScope {
        profiling_records: c.profiling_records,
        errors: c.errors,
        cancelled: c.cancelled,
        client_prompt_tokens: c.prompt_tokens,
        server_prompt: server_prompt.map(Bounds::from),
        admissions: admissions.map(Bounds::from),
        conserved,
    }
}

/// The run's files name one benchmark (`benchmark_mismatch` otherwise): artifacts of two
/// benchmarks prove nothing about each other's requests.
pub fn check_benchmark(
    ids: &std::collections::BTreeMap<String, String>,
    reasons: &mut Vec<Reason>,
) {
    let distinct: std::collections::BTreeSet<&String> = ids.values().collect();
    if distinct.len() > 1 {
        let list = ids
            .iter()
            .map(|(file, id)| {
                let name = file.rsplit(['/', '\\']).next().unwrap_or(file);
                format!("{name}: {id}")
            })
            .collect::<Vec<_>>()
            .join("; ");
        reasons.push(Reason::new(
            ReasonCode::BenchmarkMismatch,
            format!("the run's files carry different benchmark_id values ({list})"),
        ));
    }
}
