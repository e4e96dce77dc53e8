//! The result JSON: parsed (its depth, strings and keys were checked on the raw bytes first),
//! then every cache field it may carry found and checked for type and range. Three layouts are
//! read, alone or together:
//!
//! - the producer's nested keys (`server_metrics.cache.*`, `server_metrics.kv_cache.*`,
//!   `server_metrics.tokens.*`, `server_metrics.sources[]`, `request_metrics.cache.*`,
//!   `kv_cache_pool_tokens`);
//! - the legacy flat keys the dashboard stores (`server_gpu_cache_hit_rate`, ...,
//!   `cache_pricing_eligible`, `cache_validity_status`) at the top level or in a `legacy`
//!   object (kvledger's own result);
//! - a `cache_validity` block (top level or in `server_metrics`) and kvledger's `rates`.

use super::codes::{ClaimStatus, Issue, UploadCode};
use crate::account::Status;
use crate::json_value::Json;
use crate::read::locate::{locate, Seg};
use serde_json::Value;
use std::collections::BTreeSet;

/// Which recomputed rate a claimed rate is compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateOf {
    Gpu,
    /// The CPU tier: C/F in the contract's keys, the whole non-GPU share in the producer's
    /// (it sets cpu = external); either is accepted.
    Cpu,
    /// The non-GPU tiers: X/F or (C + X)/F (the legacy key's meaning); either is accepted.
    External,
    Overall,
    Theoretical,
    /// Telemetry (frontend, router, per-endpoint rates): range-checked, never priced.
    Telemetry,
}

/// Which recomputed count a claimed count is compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CountOf {
    Prompt,
    Generation,
    KvPool,
    /// Range-checked only.
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Rate(RateOf),
    Count(CountOf),
    /// A non-negative number (bytes, seconds, bytes per second).
    NonNegative,
    /// A fraction in [0, 1] that is not a hit rate (KV cache usage).
    Fraction,
    Status,
    Eligible,
}

/// A cache field found in the result JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub path: String,
    /// The path as steps (to place an issue about it in the text).
    pub steps: Vec<Step>,
    pub value: Value,
    pub kind: Kind,
    /// `Invalid` or `OutOfRange` when the checks here refused it, else `Unverified` (until
    /// compared with a recomputation).
    pub status: ClaimStatus,
}

/// The fields found, and the schema and range issues met.
#[derive(Debug, Default)]
pub struct Checked {
    pub fields: Vec<Field>,
    pub issues: Vec<Issue>,
}

const RATE_GPU: Kind = Kind::Rate(RateOf::Gpu);
const RATE_CPU: Kind = Kind::Rate(RateOf::Cpu);
const RATE_EXT: Kind = Kind::Rate(RateOf::External);
const RATE_ALL: Kind = Kind::Rate(RateOf::Overall);
const RATE_THEO: Kind = Kind::Rate(RateOf::Theoretical);
const RATE_TEL: Kind = Kind::Rate(RateOf::Telemetry);
const COUNT: Kind = Kind::Count(CountOf::Other);
const NONNEG: Kind = Kind::NonNegative;

/// The legacy flat keys (the producer's `SERVER_CACHE_FLAT_FIELDS`, the dashboard's
/// `AGENTX_SERVER_METRIC_KEYS` and kvledger's `legacy` block).
const FLAT: &[(&str, Kind)] = &[
    ("server_gpu_cache_hit_rate", RATE_GPU),
    ("server_cpu_cache_hit_rate", RATE_CPU),
    ("server_external_cache_hit_rate", RATE_EXT),
    ("server_overall_cache_hit_rate", RATE_ALL),
    ("theoretical_cache_hit_rate", RATE_THEO),
    ("gpu_kv_cache_usage_pct", Kind::Fraction),
    ("cpu_kv_cache_usage_pct", Kind::Fraction),
    ("kv_offload_bytes_gpu_to_cpu", NONNEG),
    ("kv_offload_bytes_cpu_to_gpu", NONNEG),
    ("kv_offload_time_gpu_to_cpu", NONNEG),
    ("kv_offload_time_cpu_to_gpu", NONNEG),
    ("kv_offload_bandwidth_gpu_to_cpu_bytes_per_second", NONNEG),
    ("kv_offload_bandwidth_cpu_to_gpu_bytes_per_second", NONNEG),
    ("total_prompt_tokens", Kind::Count(CountOf::Prompt)),
    ("total_generation_tokens", Kind::Count(CountOf::Generation)),
    ("total_requests_completed", COUNT),
    ("kv_cache_pool_tokens", Kind::Count(CountOf::KvPool)),
    ("kv_cache_pool_prefill_tokens", COUNT),
    ("kv_cache_pool_decode_tokens", COUNT),
    ("cache_pricing_eligible", Kind::Eligible),
    ("cache_validity_status", Kind::Status),
];

/// The producer's nested `server_metrics` keys (research/producer.md section 6).
const NESTED: &[(&[&str], Kind)] = &[
    (&["cache", "gpu_cache_hit_rate"], RATE_GPU),
    (&["cache", "cpu_cache_hit_rate"], RATE_CPU),
    (&["cache", "external_cache_hit_rate"], RATE_EXT),
    (&["cache", "overall_cache_hit_rate"], RATE_ALL),
    (&["cache", "prefix_cache_hits"], COUNT),
    (&["cache", "prefix_cache_queries"], COUNT),
    (&["cache", "external_prefix_cache_hits"], COUNT),
    (&["cache", "external_prefix_cache_queries"], COUNT),
    (&["cache", "frontend_cache_hit_rate"], RATE_TEL),
    (&["cache", "router_kv_hit_rate"], RATE_TEL),
    (&["cache", "router_shared_cache_hit_rate"], RATE_TEL),
    (&["cache", "frontend_cached_tokens"], COUNT),
    (&["cache", "frontend_input_tokens"], COUNT),
    (&["kv_cache", "gpu_usage_pct"], Kind::Fraction),
    (&["kv_cache", "cpu_usage_pct"], Kind::Fraction),
    (
        &["kv_cache", "gpu_total_tokens"],
        Kind::Count(CountOf::KvPool),
    ),
    (&["kv_cache", "cpu_used_tokens"], COUNT),
    (&["kv_cache", "cpu_total_tokens"], COUNT),
    (&["kv_offload", "bytes_gpu_to_cpu"], NONNEG),
    (&["kv_offload", "bytes_cpu_to_gpu"], NONNEG),
    (&["kv_offload", "time_gpu_to_cpu"], NONNEG),
    (&["kv_offload", "time_cpu_to_gpu"], NONNEG),
    (
        &["kv_offload", "bandwidth_gpu_to_cpu_bytes_per_second"],
        NONNEG,
    ),
    (
        &["kv_offload", "bandwidth_cpu_to_gpu_bytes_per_second"],
        NONNEG,
    ),
    (&["tokens", "prompt_total"], Kind::Count(CountOf::Prompt)),
    (
        &["tokens", "generation_total"],
        Kind::Count(CountOf::Generation),
    ),
    (&["tokens", "requests_completed"], COUNT),
    (&["tokens", "prompt_by_source", "gpu_cache_hit"], COUNT),
    (
        &["tokens", "prompt_by_source", "cpu_or_external_cache_hit"],
        COUNT,
    ),
    (&["tokens", "prompt_by_source", "computed"], COUNT),
];

/// Maps of counts whose keys are the producer's (source names): every value is a count.
const NESTED_MAPS: &[&[&str]] = &[
    &["cache", "cached_tokens_by_source"],
    &["tokens", "prompt_by_source", "raw"],
];

/// Fields of each element of `server_metrics.sources`.
const SOURCE_FIELDS: &[(&str, Kind)] = &[
    ("prompt_tokens", COUNT),
    ("generation_tokens", COUNT),
    ("prefix_cache_hit_rate", RATE_TEL),
    ("gpu_kv_cache_usage_pct", Kind::Fraction),
];

/// A `cache_validity` block's claims.
const VALIDITY: &[(&str, Kind)] = &[
    ("status", Kind::Status),
    ("pricing_eligible", Kind::Eligible),
];

/// kvledger's `rates` (each `{value, lo, hi}`).
const RATES: &[(&str, Kind)] = &[
    ("gpu", RATE_GPU),
    ("cpu", RATE_CPU),
    ("external", RATE_EXT),
    ("overall", RATE_ALL),
];

/// Issues placed at a line and column, at most (placing one reads the text from its start:
/// a hostile result with thousands of bad values must not cost thousands of passes).
pub const PLACED_MAX: usize = 64;

/// The line and column of the value at `steps` in `text`.
pub fn place(issue: &mut Issue, text: &str, steps: &[Step]) {
    let segs: Vec<Seg<'_>> = steps
        .iter()
        .map(|s| match s {
            Step::Key(k) => Seg::key(k),
            Step::Index(i) => Seg::Index(*i),
        })
        .collect();
    if let Some(found) = locate(text, &segs) {
        issue.line = Some(found.value.line);
        issue.column = Some(found.value.column);
    }
}

/// The largest count a JSON number carries exactly (2^53 − 1).
pub const MAX_COUNT: u64 = (1 << 53) - 1;

/// One step of a path inside the result JSON.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Key(String),
    Index(usize),
}

fn path_text(steps: &[Step]) -> String {
    let mut out = String::new();
    for s in steps {
        match s {
            Step::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// Parse the result JSON and check every cache field. `Err` for a result that cannot be read
/// at all (not JSON, not an object).
pub fn check(bytes: &[u8], file: Option<&str>) -> Result<Checked, Issue> {
    let place = |issue: Issue| match file {
        Some(f) => issue.in_file(f),
        None => issue,
    };
    let text = std::str::from_utf8(bytes).map_err(|e| {
        place(
            Issue::new(
                UploadCode::MalformedJson,
                "the result JSON is not UTF-8 text",
            )
            .at_byte(e.valid_up_to() as u64),
        )
    })?;
    let root: Value = serde_json::from_slice::<Json>(text.as_bytes())
        .map(|j| j.0)
        .map_err(|e| {
            let mut issue = Issue::new(
                UploadCode::MalformedJson,
                format!(
                    "the result JSON cannot be parsed: {}",
                    crate::error::json_message(&e)
                ),
            );
            if let Some(lc) = crate::read::locate::from_serde(text.as_bytes(), e.line(), e.column())
            {
                issue.line = Some(lc.line);
                issue.column = Some(lc.column);
            }
            place(issue)
        })?;
    if !root.is_object() {
        return Err(place(Issue::new(
            UploadCode::Schema,
            "the result JSON is not an object",
        )));
    }
    let mut walk = Walk {
        text,
        file,
        out: Checked::default(),
        reported: BTreeSet::new(),
    };
    walk.all(&root);
    consistency(&mut walk.out, file, text);
    Ok(walk.out)
}

struct Walk<'a> {
    text: &'a str,
    file: Option<&'a str>,
    out: Checked,
    /// Containers already reported as not objects (each once).
    reported: BTreeSet<String>,
}

impl Walk<'_> {
    fn all(&mut self, root: &Value) {
        for &(key, kind) in FLAT {
            self.field(root, &[Step::Key(key.into())], kind);
            self.field(
                root,
                &[Step::Key("legacy".into()), Step::Key(key.into())],
                kind,
            );
        }
        let sm = [Step::Key("server_metrics".into())];
        for (keys, kind) in NESTED {
            let path: Vec<Step> = sm
                .iter()
                .cloned()
                .chain(keys.iter().map(|k| Step::Key((*k).into())))
                .collect();
            self.field(root, &path, *kind);
        }
        for keys in NESTED_MAPS {
            let path: Vec<Step> = sm
                .iter()
                .cloned()
                .chain(keys.iter().map(|k| Step::Key((*k).into())))
                .collect();
            self.map_of_counts(root, &path);
        }
        self.sources(root);
        let theo =
            ["request_metrics", "cache", "theoretical_cache_hit_rate"].map(|k| Step::Key(k.into()));
        self.field(root, &theo, RATE_THEO);
        self.field(root, &[Step::Key("theoretical_hit_rate".into())], RATE_THEO);
        for base in [vec![], vec![Step::Key("server_metrics".into())]] {
            for &(key, kind) in VALIDITY {
                let mut path = base.clone();
                path.push(Step::Key("cache_validity".into()));
                path.push(Step::Key(key.into()));
                self.field(root, &path, kind);
            }
        }
        for &(key, kind) in RATES {
            let path = ["rates", key, "value"].map(|k| Step::Key(k.into()));
            self.field(root, &path, kind);
        }
    }

    /// The value at `path`, if every container on the way is an object (a container of
    /// another type is reported once); absent or null containers give `None`.
    fn get<'v>(&mut self, root: &'v Value, path: &[Step]) -> Option<&'v Value> {
        let mut at = root;
        for (i, step) in path.iter().enumerate() {
            let next = match (step, at) {
                (Step::Key(k), Value::Object(m)) => m.get(k),
                (Step::Index(n), Value::Array(a)) => a.get(*n),
                (_, Value::Null) => return None,
                (_, other) => {
                    let container = &path[..i];
                    let expected = if matches!(step, Step::Key(_)) {
                        "an object"
                    } else {
                        "an array"
                    };
                    let text = path_text(container);
                    if self.reported.insert(text.clone()) {
                        let issue = self.issue(
                            UploadCode::Schema,
                            container,
                            format!("`{text}` is {}, expected {expected}", describe(other)),
                        );
                        self.out.issues.push(issue);
                    }
                    return None;
                }
            };
            at = next?;
        }
        Some(at)
    }

    fn field(&mut self, root: &Value, path: &[Step], kind: Kind) {
        let Some(value) = self.get(root, path) else {
            return;
        };
        let status = match judge(value, kind) {
            Ok(()) => ClaimStatus::Unverified,
            Err((status, code, why)) => {
                let field = path_text(path);
                let issue = self.issue(code, path, format!("`{field}`: {why}"));
                self.out.issues.push(issue);
                status
            }
        };
        self.out.fields.push(Field {
            path: path_text(path),
            steps: path.to_vec(),
            value: value.clone(),
            kind,
            status,
        });
    }

    fn map_of_counts(&mut self, root: &Value, path: &[Step]) {
        let Some(map) = self.get(root, path) else {
            return;
        };
        let Value::Object(m) = map else {
            let issue = self.issue(
                UploadCode::Schema,
                path,
                format!(
                    "`{}` is {}, expected an object",
                    path_text(path),
                    describe(map)
                ),
            );
            self.out.issues.push(issue);
            return;
        };
        let keys: Vec<String> = m.keys().cloned().collect();
        for key in keys {
            let mut p = path.to_vec();
            p.push(Step::Key(key));
            self.field(root, &p, COUNT);
        }
    }

    fn sources(&mut self, root: &Value) {
        let path = [
            Step::Key("server_metrics".into()),
            Step::Key("sources".into()),
        ];
        let Some(sources) = self.get(root, &path) else {
            return;
        };
        let Value::Array(list) = sources else {
            let issue = self.issue(
                UploadCode::Schema,
                &path,
                format!(
                    "`server_metrics.sources` is {}, expected an array",
                    describe(sources)
                ),
            );
            self.out.issues.push(issue);
            return;
        };
        for i in 0..list.len() {
            for &(key, kind) in SOURCE_FIELDS {
                let mut p = path.to_vec();
                p.push(Step::Index(i));
                p.push(Step::Key(key.into()));
                self.field(root, &p, kind);
            }
        }
    }

    /// An issue at `path`, placed in the text (line and column of the value).
    fn issue(&self, code: UploadCode, path: &[Step], message: String) -> Issue {
        let mut issue = Issue::new(code, message).at_path(path_text(path));
        if let Some(f) = self.file {
            issue = issue.in_file(f);
        }
        if self.out.issues.len() < PLACED_MAX {
            place(&mut issue, self.text, path);
        }
        issue
    }
}

fn describe(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

type Refusal = (ClaimStatus, UploadCode, String);

fn schema(expected: &str, v: &Value) -> Refusal {
    (
        ClaimStatus::Invalid,
        UploadCode::Schema,
        format!("expected {expected}, got {}", describe(v)),
    )
}

fn range(why: String) -> Refusal {
    (ClaimStatus::OutOfRange, UploadCode::OutOfRange, why)
}

/// Type and range of one value.
fn judge(v: &Value, kind: Kind) -> Result<(), Refusal> {
    match kind {
        Kind::Rate(_) | Kind::Fraction => match v {
            Value::Null => Ok(()),
            Value::Number(n) => {
                let x = n.as_f64().unwrap_or(f64::NAN);
                if (0.0..=1.0).contains(&x) {
                    Ok(())
                } else {
                    Err(range(format!("{n} is outside [0, 1]")))
                }
            }
            _ => Err(schema("a number in [0, 1] or null", v)),
        },
        Kind::Count(_) => match v {
            Value::Null => Ok(()),
            Value::Number(n) => count_in_range(n),
            _ => Err(schema("a token count (a whole number) or null", v)),
        },
        Kind::NonNegative => match v {
            Value::Null => Ok(()),
            Value::Number(n) if n.as_f64().is_some_and(|x| x >= 0.0) => Ok(()),
            Value::Number(n) => Err(range(format!("{n} is negative"))),
            _ => Err(schema("a number or null", v)),
        },
        Kind::Status => match v {
            Value::String(s) if parse_status(s).is_some() => Ok(()),
            Value::String(s) => Err((
                ClaimStatus::Invalid,
                UploadCode::Schema,
                format!(
                    "`{}` is not a status of the contract ({})",
                    s.escape_debug(),
                    status_names().join(", ")
                ),
            )),
            _ => Err(schema("a status string", v)),
        },
        Kind::Eligible => match v {
            Value::Bool(_) => Ok(()),
            _ => Err(schema("true or false", v)),
        },
    }
}

fn count_in_range(n: &serde_json::Number) -> Result<(), Refusal> {
    if let Some(u) = n.as_u64() {
        return if u <= MAX_COUNT {
            Ok(())
        } else {
            Err(range(format!(
                "{n} is above 2^53 - 1 (it cannot travel exactly as a JSON number)"
            )))
        };
    }
    if n.as_i64().is_some() {
        return Err(range(format!("{n} is negative")));
    }
    let x = n.as_f64().unwrap_or(f64::NAN);
    if x < 0.0 {
        Err(range(format!("{n} is negative")))
    } else if x.fract() != 0.0 {
        Err(range(format!("{n} is not a whole number of tokens")))
    } else if x > MAX_COUNT as f64 {
        Err(range(format!("{n} is above 2^53 - 1")))
    } else {
        Ok(())
    }
}

/// The contract status named `s`.
pub fn parse_status(s: &str) -> Option<Status> {
    serde_json::from_value(Value::String(s.to_string())).ok()
}

fn status_names() -> Vec<&'static str> {
    std::iter::once(Status::ValidComplete)
        .chain(Status::CHECK_ORDER)
        .map(Status::as_str)
        .collect()
}

/// The upload must not contradict itself: eligibility only with `VALID_COMPLETE`, and every
/// eligibility claim, every status claim, the same.
fn consistency(out: &mut Checked, file: Option<&str>, text: &str) {
    let valid = |f: &Field| f.status == ClaimStatus::Unverified;
    let eligible: Vec<(String, bool)> = out
        .fields
        .iter()
        .filter(|f| f.kind == Kind::Eligible && valid(f))
        .filter_map(|f| f.value.as_bool().map(|b| (f.path.clone(), b)))
        .collect();
    let statuses: Vec<(String, String)> = out
        .fields
        .iter()
        .filter(|f| f.kind == Kind::Status && valid(f))
        .filter_map(|f| f.value.as_str().map(|s| (f.path.clone(), s.to_string())))
        .collect();
    let mut bad: Vec<(String, String)> = Vec::new();
    if let Some((p, _)) = eligible.iter().find(|(_, b)| *b) {
        for (sp, s) in statuses.iter().filter(|(_, s)| s != "VALID_COMPLETE") {
            bad.push((
                p.clone(),
                format!("`{p}` is true but `{sp}` is {s}: only VALID_COMPLETE may be priced"),
            ));
        }
    }
    if let Some((p0, b0)) = eligible.first() {
        for (p, b) in eligible.iter().filter(|(_, b)| b != b0) {
            bad.push((p.clone(), format!("`{p}` is {b} but `{p0}` is {b0}")));
        }
    }
    if let Some((p0, s0)) = statuses.first() {
        for (p, s) in statuses.iter().filter(|(_, s)| s != s0) {
            bad.push((p.clone(), format!("`{p}` is {s} but `{p0}` is {s0}")));
        }
    }
    for (path, message) in bad {
        let mut issue = Issue::new(UploadCode::ClaimInconsistent, message).at_path(path.clone());
        if let Some(f) = file {
            issue = issue.in_file(f);
        }
        if let Some(field) = out.fields.iter().find(|f| f.path == path) {
            if out.issues.len() < PLACED_MAX {
                place(&mut issue, text, &field.steps);
            }
        }
        out.issues.push(issue);
        for f in out.fields.iter_mut().filter(|f| f.path == path) {
            f.status = ClaimStatus::Invalid;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(c: &Checked) -> Vec<&'static str> {
        c.issues.iter().map(|i| i.code.as_str()).collect()
    }

    #[test]
    fn a_producer_result_is_read_in_every_layout() {
        let text = r#"{
  "server_gpu_cache_hit_rate": 0.92,
  "legacy": {"cache_pricing_eligible": false, "cache_validity_status": "WINDOW_UNRESOLVED"},
  "server_metrics": {"cache": {"gpu_cache_hit_rate": 0.92, "cached_tokens_by_source": {"__proto__": 5}},
                     "sources": [{"prefix_cache_hit_rate": 0.9}]},
  "cache_validity": {"status": "WINDOW_UNRESOLVED", "pricing_eligible": false}
}"#;
        let c = check(text.as_bytes(), None).expect("readable");
        assert!(c.issues.is_empty(), "{:?}", c.issues);
        let paths: Vec<&str> = c.fields.iter().map(|f| f.path.as_str()).collect();
        assert!(paths.contains(&"server_metrics.cache.cached_tokens_by_source.__proto__"));
        assert!(paths.contains(&"server_metrics.sources[0].prefix_cache_hit_rate"));
        assert_eq!(c.fields.len(), 8);
    }

    #[test]
    fn ranges_types_and_consistency() {
        let text = r#"{"server_gpu_cache_hit_rate": 1.5, "total_prompt_tokens": 12.5,
            "kv_cache_pool_tokens": 9007199254740992, "server_metrics": {"cache": "x"},
            "cache_validity": {"status": "ROLES_UNRESOLVED", "pricing_eligible": true}}"#;
        let c = check(text.as_bytes(), Some("result.json")).expect("readable");
        assert_eq!(
            codes(&c),
            [
                "OUT_OF_RANGE",
                "OUT_OF_RANGE",
                "OUT_OF_RANGE",
                "SCHEMA",
                "CLAIM_INCONSISTENT"
            ]
        );
        let first = &c.issues[0];
        assert_eq!((first.line, first.column), (Some(1), Some(31)));
        assert_eq!(
            first.json_path.as_deref(),
            Some("server_gpu_cache_hit_rate")
        );
    }

    #[test]
    fn unreadable_results() {
        assert_eq!(check(b"[1]", None).unwrap_err().code, UploadCode::Schema);
        let e = check(b"{\"a\": }", None).unwrap_err();
        assert_eq!(
            (e.code, e.line, e.column),
            (UploadCode::MalformedJson, Some(1), Some(7))
        );
        assert_eq!(
            check(b"{\"a\": \"\xff\"}", None).unwrap_err().code,
            UploadCode::MalformedJson
        );
    }
}
