//! What a point to price is made of, from either input the contract names: a dashboard row
//! ([`BenchmarkRow`], flat metric keys) or an observation from an accounting result
//! ([`ObservedPoint`] with a [`CacheObservation`] mirroring the verdict and tier rates).
//! Both become [`PointFacts`], the one shape the policies read.

use crate::account::verdict::Status;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// Whether the workload reuses prompt prefixes (agentic traces) or not (fixed sequences).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub enum Workload {
    /// Agentic traces: a cache discount applies and needs a rate.
    #[default]
    PrefixReuse,
    /// Fixed input/output sequence lengths: no cache telemetry by design.
    FixedSequence,
    /// Not stated and not inferable.
    Unknown,
}

/// A dashboard row (`/api/v1/benchmarks` `BenchmarkRow`). Unknown keys are accepted and
/// ignored; `metrics` holds the flat metric keys (`tput_per_gpu`, `input_tput_per_gpu`,
/// `server_gpu_cache_hit_rate`, ...). Non-numeric metric values count as absent.
#[derive(Debug, Clone, PartialEq, Serialize, Default, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct BenchmarkRow {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        target_arch = "wasm32",
        tsify(optional, type = "number | string | null")
    )]
    pub id: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional, type = "string | null"))]
    pub hardware: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional, type = "string | null"))]
    pub framework: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional, type = "string | null"))]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional, type = "string | null"))]
    pub precision: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional, type = "string | null"))]
    pub spec_method: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional, type = "boolean | null"))]
    pub disagg: Option<bool>,
    /// `"single_turn"` or `"agentic_traces"`; absent on older rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional, type = "string | null"))]
    pub benchmark_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional, type = "number | null"))]
    pub isl: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional, type = "number | null"))]
    pub osl: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional, type = "number | null"))]
    pub conc: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional, type = "string | null"))]
    pub offload_mode: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional, type = "string | null"))]
    pub date: Option<String>,
    /// Flat contract-section-7 key, if stored on the row rather than in `metrics`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        target_arch = "wasm32",
        tsify(optional, type = "boolean | number | null")
    )]
    pub cache_pricing_eligible: Option<Value>,
    /// Flat contract-section-7 key, if stored on the row rather than in `metrics`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional, type = "string | null"))]
    pub cache_validity_status: Option<Value>,
    #[serde(default)]
    #[cfg_attr(
        target_arch = "wasm32",
        tsify(type = "Record<string, number | string | boolean | null>")
    )]
    pub metrics: BTreeMap<String, Value>,
}

crate::fields!(BenchmarkRow, deny_unknown: false, empty: BenchmarkRow::default(), required: [], [id as crate::json_value::OptionalJson, hardware, framework, model, precision, spec_method, disagg, benchmark_type, isl, osl, conc, offload_mode, date, cache_pricing_eligible as crate::json_value::OptionalJson, cache_validity_status as crate::json_value::OptionalJson, metrics as crate::json_value::JsonMap]);

/// `{value, lo, hi}` as the accounting result reports a rate. Like [`TierRates`] and
/// [`TokenTotals`] it reads an accounting result's block as it is, so other fields of that block
/// are ignored.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct RateInterval {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub value: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub lo: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub hi: Option<f64>,
}

crate::fields!(RateInterval, deny_unknown: false, empty: RateInterval::default(), required: [], [value, lo, hi]);

/// The accounting result's tier rates (contract section 2): disjoint tiers,
/// `overall = gpu + cpu + external`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct TierRates {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub gpu: Option<RateInterval>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub cpu: Option<RateInterval>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub external: Option<RateInterval>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub overall: Option<RateInterval>,
}

crate::fields!(TierRates, deny_unknown: false, empty: TierRates::default(), required: [], [gpu, cpu, external, overall]);

/// Where token totals come from (contract section 7): the accounting's own type.
pub use crate::account::output::TokenSource;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub struct TokenTotals {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub prompt: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub generation: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub source: Option<TokenSource>,
}

crate::fields!(TokenTotals, deny_unknown: false, empty: TokenTotals::default(), required: [], [prompt, generation, source]);

/// The part of an accounting result (contract sections 6 and 7) pricing needs: the verdict's
/// status, `pricing_eligible` and reason codes, the tier rates, the theoretical hit rate and
/// the token totals. An accounting result converts into this field by field.
#[derive(Debug, Clone, PartialEq, Serialize, Default, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub struct CacheObservation {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub status: Option<Status>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "pricing_eligible"
    )]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub pricing_eligible: Option<bool>,
    /// The verdict's reason codes, carried verbatim into refusals.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub reasons: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub rates: Option<TierRates>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "theoretical_hit_rate"
    )]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub theoretical_hit_rate: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub tokens: Option<TokenTotals>,
}

crate::fields!(CacheObservation, deny_unknown: true, empty: CacheObservation::default(), required: [], [status, pricing_eligible, reasons, rates, theoretical_hit_rate, tokens]);

/// A point described directly (e.g. from an accounting result plus the benchmark's throughput).
#[derive(Debug, Clone, PartialEq, Serialize, Default, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub struct ObservedPoint {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub label: Option<String>,
    /// Base hardware key (`gb300`, `b200`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub hardware: Option<String>,
    /// Default `prefix_reuse`.
    #[serde(default)]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub workload: Workload,
    /// Total tokens per second per GPU (T).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub throughput_per_gpu: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub input_throughput_per_gpu: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub output_throughput_per_gpu: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub isl: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub osl: Option<f64>,
    /// An input share known by other means; used before any derivation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub input_share: Option<f64>,
    /// The frontier's x (interactivity, tok/s/user).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub interactivity: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub concurrency: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub cache: Option<CacheObservation>,
}

crate::fields!(ObservedPoint, deny_unknown: true, empty: ObservedPoint::default(), required: [], [label, hardware, workload, throughput_per_gpu, input_throughput_per_gpu, output_throughput_per_gpu, isl, osl, input_share, interactivity, concurrency, cache]);

/// A point to price: `{ row: BenchmarkRow }` or `{ observed: ObservedPoint }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub enum PointInput {
    Row(BenchmarkRow),
    Observed(ObservedPoint),
}

/// Whether the evidence allows pricing the measured rate.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum Validity {
    /// `pricing_eligible` true (or status `VALID_COMPLETE`).
    Eligible,
    /// `pricing_eligible` false (or a status other than `VALID_COMPLETE`).
    Ineligible {
        status: Option<String>,
        reasons: Vec<String>,
    },
    /// No validity information at all (rows written before kvledger).
    Missing,
    /// Present but unusable: fail closed.
    Malformed { detail: String },
}

/// The dashboard's three tier keys (contract section 7 legacy block).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, schemars::JsonSchema)]
pub struct LegacyTiers {
    pub gpu: Option<f64>,
    pub cpu: Option<f64>,
    pub external: Option<f64>,
}

/// The one shape the policies read.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct PointFacts {
    pub label: Option<String>,
    pub hardware: Option<String>,
    pub workload: Workload,
    pub throughput: Option<f64>,
    pub input_tput: Option<f64>,
    pub output_tput: Option<f64>,
    pub isl: Option<f64>,
    pub osl: Option<f64>,
    pub explicit_share: Option<f64>,
    pub prompt_tokens: Option<f64>,
    pub generation_tokens: Option<f64>,
    pub x: Option<f64>,
    pub concurrency: Option<f64>,
    pub tiers: LegacyTiers,
    /// The measured rate the `strict` policy prices, unclamped: kvledger's overall rate, or
    /// for a row the dashboard's tier combination (contract section 7 makes them equal).
    pub measured: Option<RateInterval>,
    pub theoretical: Option<f64>,
    pub validity: Validity,
    /// Any cache key at all (tier rates, theoretical, validity).
    pub has_cache_telemetry: bool,
}

fn num(v: Option<&Value>) -> Option<f64> {
    v.and_then(Value::as_f64).filter(|x| x.is_finite())
}

fn status_validity(s: &str, reasons: Vec<String>) -> Validity {
    if Status::CHECK_ORDER.iter().any(|k| k.as_str() == s) {
        Validity::Ineligible {
            status: Some(s.to_string()),
            reasons,
        }
    } else if s == Status::ValidComplete.as_str() {
        Validity::Eligible
    } else {
        Validity::Malformed {
            detail: format!("unknown cache_validity_status `{s}`"),
        }
    }
}

/// The flag (`true`/`false`, or `1`/`0` as the numeric metrics store it) and the status.
fn validity_of(flag: Option<&Value>, status: Option<&Value>) -> Validity {
    let flag = flag.filter(|v| !v.is_null());
    let status = status.filter(|v| !v.is_null());
    let status_str = match status {
        None => None,
        Some(Value::String(s)) => Some(s.as_str()),
        Some(other) => {
            return Validity::Malformed {
                detail: format!("cache_validity_status {other} is not a string"),
            }
        }
    };
    let flag = match flag {
        None => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(v) if v.as_f64() == Some(1.0) => Some(true),
        Some(v) if v.as_f64() == Some(0.0) => Some(false),
        Some(other) => {
            return Validity::Malformed {
                detail: format!("cache_pricing_eligible {other} is not a boolean"),
            }
        }
    };
    combine(flag, status_str, Vec::new())
}

fn combine(flag: Option<bool>, status: Option<&str>, reasons: Vec<String>) -> Validity {
    match (flag, status) {
        (None, None) => Validity::Missing,
        (None, Some(s)) => status_validity(s, reasons),
        (Some(true), None) => Validity::Eligible,
        (Some(true), Some(s)) if s == Status::ValidComplete.as_str() => Validity::Eligible,
        (Some(true), Some(s)) => Validity::Malformed {
            detail: format!("pricing_eligible is true but the status is `{s}`"),
        },
        (Some(false), s) => {
            if s == Some(Status::ValidComplete.as_str()) {
                Validity::Malformed {
                    detail: "pricing_eligible is false but the status is VALID_COMPLETE"
                        .to_string(),
                }
            } else {
                Validity::Ineligible {
                    status: s.map(str::to_string),
                    reasons,
                }
            }
        }
    }
}

/// Dashboard rule (consumer.md b.1) without the clamp: g + (x if x is a number, else c).
pub fn legacy_tier_sum(t: &LegacyTiers) -> Option<f64> {
    let secondary = t.external.or(t.cpu);
    if t.gpu.is_none() && secondary.is_none() {
        return None;
    }
    Some(t.gpu.unwrap_or(0.0) + secondary.unwrap_or(0.0))
}

impl BenchmarkRow {
    pub fn metric(&self, key: &str) -> Option<f64> {
        num(self.metrics.get(key))
    }

    /// Where the frontier puts this row: agentic rows at p90 interactivity, fixed sequences
    /// at the median (consumer.md a.5); `1 / itl` when the interactivity key is absent.
    pub fn interactivity(&self, workload: Workload) -> Option<f64> {
        let p = if workload == Workload::PrefixReuse {
            "p90"
        } else {
            "median"
        };
        self.metric(&format!("{p}_intvty")).or_else(|| {
            self.metric(&format!("{p}_itl"))
                .filter(|v| *v > 0.0)
                .map(|v| 1.0 / v)
        })
    }

    pub fn facts(&self) -> PointFacts {
        let tiers = LegacyTiers {
            gpu: self.metric("server_gpu_cache_hit_rate"),
            cpu: self.metric("server_cpu_cache_hit_rate"),
            external: self.metric("server_external_cache_hit_rate"),
        };
        let theoretical = self.metric("theoretical_cache_hit_rate");
        let flag = self
            .metrics
            .get("cache_pricing_eligible")
            .filter(|v| !v.is_null())
            .or(self.cache_pricing_eligible.as_ref());
        let status = self
            .metrics
            .get("cache_validity_status")
            .filter(|v| !v.is_null())
            .or(self.cache_validity_status.as_ref());
        let validity = validity_of(flag, status);
        let has_cache_telemetry = tiers.gpu.is_some()
            || tiers.cpu.is_some()
            || tiers.external.is_some()
            || theoretical.is_some()
            || validity != Validity::Missing;
        let isl = finite(self.isl);
        let osl = finite(self.osl);
        let workload = match self.benchmark_type.as_deref() {
            Some("agentic_traces") => Workload::PrefixReuse,
            Some("single_turn") => Workload::FixedSequence,
            Some(_) => Workload::Unknown,
            None if has_cache_telemetry => Workload::PrefixReuse,
            None if isl.is_some() && osl.is_some() => Workload::FixedSequence,
            None => Workload::Unknown,
        };
        let label = self.id.as_ref().map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
        PointFacts {
            label,
            hardware: self.hardware.clone(),
            workload,
            throughput: self.metric("tput_per_gpu"),
            input_tput: self.metric("input_tput_per_gpu"),
            output_tput: self.metric("output_tput_per_gpu"),
            isl,
            osl,
            explicit_share: None,
            prompt_tokens: self.metric("total_prompt_tokens"),
            generation_tokens: self.metric("total_generation_tokens"),
            x: self.interactivity(workload),
            concurrency: finite(self.conc),
            measured: legacy_tier_sum(&tiers).map(|v| RateInterval {
                value: Some(v),
                lo: None,
                hi: None,
            }),
            tiers,
            theoretical,
            validity,
            has_cache_telemetry,
        }
    }
}

fn finite(v: Option<f64>) -> Option<f64> {
    v.filter(|x| x.is_finite())
}

fn val(r: &Option<RateInterval>) -> Option<f64> {
    r.as_ref().and_then(|r| finite(r.value))
}

impl CacheObservation {
    pub fn validity(&self) -> Validity {
        combine(
            self.pricing_eligible,
            self.status.map(Status::as_str),
            self.reasons.clone(),
        )
    }

    /// The dashboard keys this observation stores (contract section 7): external carries
    /// (C + X) / F whenever a non-GPU tier exists, else it is absent. An observation with
    /// only an overall rate (no tier split) is stored as the GPU key, so that the dashboard's
    /// rule reads the same rate.
    pub fn legacy_tiers(&self) -> LegacyTiers {
        let r = self.rates.unwrap_or_default();
        let (g, c, x) = (val(&r.gpu), val(&r.cpu), val(&r.external));
        if g.is_none() && c.is_none() && x.is_none() {
            return LegacyTiers {
                gpu: val(&r.overall),
                cpu: None,
                external: None,
            };
        }
        LegacyTiers {
            gpu: g,
            cpu: c,
            external: if c.is_some() || x.is_some() {
                Some(c.unwrap_or(0.0) + x.unwrap_or(0.0))
            } else {
                None
            },
        }
    }

    /// The overall rate with its bounds; without `overall`, the sum of the tiers present.
    pub fn measured(&self) -> Option<RateInterval> {
        let r = self.rates.unwrap_or_default();
        if let Some(o) = r.overall.filter(|o| finite(o.value).is_some()) {
            return Some(RateInterval {
                value: o.value,
                lo: finite(o.lo),
                hi: finite(o.hi),
            });
        }
        let g = val(&r.gpu)?;
        Some(RateInterval {
            value: Some(g + val(&r.cpu).unwrap_or(0.0) + val(&r.external).unwrap_or(0.0)),
            lo: None,
            hi: None,
        })
    }
}

impl ObservedPoint {
    pub fn facts(&self) -> PointFacts {
        let cache = self.cache.clone().unwrap_or_default();
        let tokens = cache.tokens.unwrap_or_default();
        PointFacts {
            label: self.label.clone(),
            hardware: self.hardware.clone(),
            workload: self.workload,
            throughput: finite(self.throughput_per_gpu),
            input_tput: finite(self.input_throughput_per_gpu),
            output_tput: finite(self.output_throughput_per_gpu),
            isl: finite(self.isl),
            osl: finite(self.osl),
            explicit_share: self.input_share,
            prompt_tokens: finite(tokens.prompt),
            generation_tokens: finite(tokens.generation),
            x: finite(self.interactivity),
            concurrency: finite(self.concurrency),
            tiers: cache.legacy_tiers(),
            measured: cache.measured(),
            theoretical: finite(cache.theoretical_hit_rate),
            validity: cache.validity(),
            has_cache_telemetry: self.cache.is_some(),
        }
    }
}

impl PointInput {
    pub fn facts(&self) -> PointFacts {
        match self {
            PointInput::Row(r) => r.facts(),
            PointInput::Observed(o) => o.facts(),
        }
    }
}

/// The fields of an accounting result (`kvledger account --json`, `accountRun`) that pricing
/// reads. Deserialised from the result's own JSON shape, so the dashboard can hand a stored
/// result over unchanged; everything else in it is ignored.
#[derive(Debug, Clone, schemars::JsonSchema)]
pub struct AccountingView {
    pub cache_validity: ValidityView,
    #[serde(default)]
    pub rates: TierRates,
    #[serde(default)]
    pub theoretical_hit_rate: Option<f64>,
    #[serde(default)]
    pub tokens: Option<AccountingTokens>,
}

crate::fields!(AccountingView, deny_unknown: false, empty: AccountingView { cache_validity: ValidityView { status: Status::NotMeasured, pricing_eligible: false, reasons: Vec::new() }, rates: TierRates::default(), theoretical_hit_rate: None, tokens: None }, required: [cache_validity], [cache_validity, rates, theoretical_hit_rate, tokens]);

#[derive(Debug, Clone, schemars::JsonSchema)]
pub struct ValidityView {
    pub status: Status,
    pub pricing_eligible: bool,
    #[serde(default)]
    pub reasons: Vec<ReasonView>,
}

crate::fields!(ValidityView, deny_unknown: false, empty: ValidityView { status: Status::NotMeasured, pricing_eligible: false, reasons: Vec::new() }, required: [status, pricing_eligible], [status, pricing_eligible, reasons]);

#[derive(Debug, Clone, schemars::JsonSchema)]
pub struct ReasonView {
    pub code: String,
}

crate::fields!(ReasonView, deny_unknown: false, empty: ReasonView { code: String::new() }, required: [code], [code]);

#[derive(Debug, Clone, schemars::JsonSchema)]
pub struct AccountingTokens {
    #[serde(default)]
    pub prompt_total: Option<f64>,
    #[serde(default)]
    pub generation_total: Option<f64>,
    #[serde(default)]
    pub source: Option<TokenSource>,
}

crate::fields!(AccountingTokens, deny_unknown: false, empty: AccountingTokens { prompt_total: None, generation_total: None, source: None }, required: [], [prompt_total, generation_total, source]);

impl From<AccountingView> for CacheObservation {
    fn from(a: AccountingView) -> Self {
        CacheObservation {
            status: Some(a.cache_validity.status),
            pricing_eligible: Some(a.cache_validity.pricing_eligible),
            reasons: a
                .cache_validity
                .reasons
                .into_iter()
                .map(|r| r.code)
                .collect(),
            rates: Some(a.rates),
            theoretical_hit_rate: a.theoretical_hit_rate,
            tokens: a.tokens.map(|t| TokenTotals {
                prompt: t.prompt_total,
                generation: t.generation_total,
                source: t.source,
            }),
        }
    }
}

impl CacheObservation {
    /// What pricing reads of an accounting result.
    pub fn from_accounting(a: &crate::account::Accounting) -> Result<Self, serde_json::Error> {
        let view: AccountingView = serde_json::from_value(serde_json::to_value(a)?)?;
        Ok(view.into())
    }
}
