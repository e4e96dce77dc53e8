//! Request scope (CONTRACT section 5): are the requests the counters saw the profiling
//! requests? From the per-request export, profiling phase only (records without a phase are
//! profiling, as InferenceX treats them; warmup errors never count against the window).

use super::fold::SampleBuf;
use super::interval::Interval;
use super::output::{Bounds, RequestScope};
use super::verdict::{Reason, ReasonCode};
use crate::model::{Phase, ProfileExport, RequestRecord};

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

/// What accounting reads of the per-request records, folded record by record (the streaming
/// API folds `profile_export.jsonl` as it is read and keeps no record): the client's scope,
/// the profiling records' first start and last end (the window when the export states none),
/// and the starts and ends of the profiling records not cancelled (compact: the window they
/// are compared with may come later).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecordFold {
    client: ClientScope,
    prompt: Option<u64>,
    output: Option<u64>,
    first_start: Option<u64>,
    last_end: Option<u64>,
    starts: SampleBuf,
    ends: SampleBuf,
}

impl RecordFold {
    pub fn new() -> Self {
        RecordFold {
            prompt: Some(0),
            output: Some(0),
            ..RecordFold::default()
        }
    }

    /// The fold of every record of an export.
    pub fn of(p: &ProfileExport) -> Self {
        let mut f = RecordFold::new();
        for r in &p.records {
            f.take(r);
        }
        f
    }

    pub fn take(&mut self, r: &RequestRecord) {
        let c = &mut self.client;
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
                    self.prompt = match (self.prompt, tokens) {
                        (Some(a), Some(b)) => a.checked_add(b),
                        _ => None,
                    };
                    self.output = match (self.output, r.output_sequence_length) {
                        (Some(a), Some(b)) => a.checked_add(b),
                        _ => None,
                    };
                }
                if let Some(s) = r.request_start_ns {
                    self.first_start = Some(self.first_start.map_or(s, |f| f.min(s)));
                    if !r.was_cancelled {
                        self.starts.push(s, 0.0);
                    }
                }
                if let Some(e) = r.request_end_ns {
                    self.last_end = Some(self.last_end.map_or(e, |l| l.max(e)));
                    if !r.was_cancelled {
                        self.ends.push(e, 0.0);
                    }
                }
            }
        }
    }

    /// What the client saw in the profiling phase.
    pub fn client_scope(&self) -> ClientScope {
        ClientScope {
            prompt_tokens: self.prompt,
            output_tokens: self.output,
            ..self.client.clone()
        }
    }

    /// The first start and last end of the profiling records, when both are known.
    pub fn span(&self) -> Option<(u64, u64)> {
        Some((self.first_start?, self.last_end?))
    }

    /// Profiling records not cancelled that start before `start`, and that end after `end`.
    pub fn outside(&self, start: u64, end: u64) -> (usize, usize) {
        let early = self.starts.iter().filter(|s| s.0 < start).count();
        let late = self.ends.iter().filter(|e| e.0 > end).count();
        (early, late)
    }
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
