//! Claims against evidence: each cache field the result JSON claims, compared with the
//! accounting of the raw artifacts the upload carries (kvledger's own `account_run`: no
//! verdict logic is repeated here). Without raw artifacts a priced claim is only unverified.
//!
//! Priced claims (status, eligibility, tier and overall rates, the theoretical rate: what a
//! pricing policy reads) that the evidence contradicts are errors; informational counts that
//! differ are warnings.

use super::codes::{Claim, ClaimStatus, Issue, UploadCode};
use super::result::{parse_status, place, CountOf, Field, Kind, RateOf, PLACED_MAX};
use crate::account::rates::Rate;
use crate::account::{Accounting, Policy};
use serde_json::{json, Value};

/// Tokens by which a claimed total may differ from the recomputed one (relative, at least one
/// token): the producer rounds float sums.
const COUNT_TOLERANCE: f64 = 1e-3;

/// Every field as a claim, with the errors and warnings the comparison gives.
/// `text` is the result JSON, to place the first issues at their line and column.
pub fn compare(
    fields: Vec<Field>,
    recomputed: Option<&Accounting>,
    policy: &Policy,
    file: Option<&str>,
    text: &str,
) -> (Vec<Claim>, Vec<Issue>) {
    let mut issues = Vec::new();
    let claims = fields
        .into_iter()
        .map(|f| {
            let steps = f.steps.clone();
            let (claim, issue) = judge(f, recomputed, policy);
            if let Some(mut issue) = issue {
                if let Some(name) = file {
                    issue = issue.in_file(name);
                }
                if issues.len() < PLACED_MAX {
                    place(&mut issue, text, &steps);
                }
                issues.push(issue);
            }
            claim
        })
        .collect();
    (claims, issues)
}

fn priced(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::Status
            | Kind::Eligible
            | Kind::Rate(
                RateOf::Gpu
                    | RateOf::Cpu
                    | RateOf::External
                    | RateOf::Overall
                    | RateOf::Theoretical
            )
    )
}

fn judge(f: Field, acc: Option<&Accounting>, policy: &Policy) -> (Claim, Option<Issue>) {
    let recomputed = acc.and_then(|a| recomputed_value(&f, a));
    let mut claim = Claim {
        field: f.path.clone(),
        claimed: f.value.clone(),
        recomputed,
        status: f.status,
    };
    if f.status != ClaimStatus::Unverified || f.value.is_null() {
        return (claim, None);
    }
    let Some(acc) = acc else {
        let issue = priced(f.kind).then(|| {
            issue(
                UploadCode::ClaimUnverified,
                &f,
                "no raw artifacts came with the upload to check it: accepted as unverified".into(),
            )
        });
        return (claim, issue);
    };
    let (status, issue) = match f.kind {
        Kind::Status => status_claim(&f, acc),
        Kind::Eligible => eligibility_claim(&f, acc),
        Kind::Rate(RateOf::Telemetry) => (ClaimStatus::Unverified, None),
        Kind::Rate(of) => rate_claim(&f, &candidates(of, acc), policy.max_rate_width),
        Kind::Count(of) if of != CountOf::Other => count_claim(&f, count_of(of, acc)),
        _ => (ClaimStatus::Unverified, None),
    };
    claim.status = status;
    (claim, issue)
}

fn issue(code: UploadCode, f: &Field, why: String) -> Issue {
    Issue::new(code, format!("`{}`: {why}", f.path)).at_path(f.path.clone())
}

fn status_claim(f: &Field, acc: &Accounting) -> (ClaimStatus, Option<Issue>) {
    let claimed = f.value.as_str().and_then(parse_status);
    let actual = acc.cache_validity.status;
    if claimed == Some(actual) {
        return (ClaimStatus::Verified, None);
    }
    let why = format!(
        "claimed {} but the raw artifacts give {} ({})",
        f.value.as_str().unwrap_or(""),
        actual.as_str(),
        reasons(acc)
    );
    (
        ClaimStatus::Contradicted,
        Some(issue(UploadCode::ClaimContradicted, f, why)),
    )
}

fn eligibility_claim(f: &Field, acc: &Accounting) -> (ClaimStatus, Option<Issue>) {
    let claimed = f.value.as_bool().unwrap_or(false);
    let actual = acc.cache_validity.pricing_eligible;
    if claimed == actual {
        return (ClaimStatus::Verified, None);
    }
    let (code, why) = if claimed {
        (
            UploadCode::EligibilityUnsupported,
            format!(
                "claims the rate may be priced, but the raw artifacts give {} ({})",
                acc.cache_validity.status.as_str(),
                reasons(acc)
            ),
        )
    } else {
        (
            UploadCode::ClaimContradicted,
            "claims the rate may not be priced, but the raw artifacts give VALID_COMPLETE".into(),
        )
    };
    (ClaimStatus::Contradicted, Some(issue(code, f, why)))
}

/// The verdict's failing reason codes, for messages.
fn reasons(acc: &Accounting) -> String {
    let mut codes: Vec<&str> = Vec::new();
    for r in acc
        .cache_validity
        .reasons
        .iter()
        .filter(|r| r.code.status().is_some())
    {
        if !codes.contains(&r.code.as_str()) {
            codes.push(r.code.as_str());
        }
    }
    if codes.is_empty() {
        "no failed check".into()
    } else {
        format!("reasons: {}", codes.join(", "))
    }
}

fn rate_claim(f: &Field, candidates: &[(f64, f64)], w: f64) -> (ClaimStatus, Option<Issue>) {
    let Some(x) = f.value.as_f64() else {
        return (ClaimStatus::Unverified, None);
    };
    if candidates.is_empty() {
        let why = "the raw artifacts measure no such rate: accepted as unverified".into();
        return (
            ClaimStatus::Unverified,
            Some(issue(UploadCode::ClaimUnverified, f, why)),
        );
    }
    let within = candidates
        .iter()
        .find(|(lo, hi)| x >= lo - w && x <= hi + w);
    match within {
        Some((lo, hi)) if hi - lo <= w => (ClaimStatus::Verified, None),
        Some((lo, hi)) => {
            let why = format!(
                "the raw artifacts bound it only to [{lo:.6}, {hi:.6}], wider than max_rate_width {w}: accepted as unverified"
            );
            (
                ClaimStatus::Unverified,
                Some(issue(UploadCode::ClaimUnverified, f, why)),
            )
        }
        None => {
            let shown: Vec<String> = candidates
                .iter()
                .map(|(lo, hi)| format!("[{lo:.6}, {hi:.6}]"))
                .collect();
            let why = format!(
                "claimed {x} but the raw artifacts give {} (widened by max_rate_width {w})",
                shown.join(" or ")
            );
            (
                ClaimStatus::Contradicted,
                Some(issue(UploadCode::ClaimContradicted, f, why)),
            )
        }
    }
}

fn count_claim(f: &Field, actual: Option<u64>) -> (ClaimStatus, Option<Issue>) {
    let (Some(x), Some(actual)) = (f.value.as_f64(), actual) else {
        return (ClaimStatus::Unverified, None);
    };
    let a = actual as f64;
    if (x - a).abs() <= (a * COUNT_TOLERANCE).max(1.0) {
        return (ClaimStatus::Verified, None);
    }
    let why = format!("claimed {x} but the raw artifacts give {actual}");
    (
        ClaimStatus::Contradicted,
        Some(issue(UploadCode::ClaimMismatch, f, why)),
    )
}

/// The recomputed intervals a claimed rate may match (several where the claim's meaning
/// differs between the contract's keys and the producer's).
fn candidates(of: RateOf, acc: &Accounting) -> Vec<(f64, f64)> {
    let r = &acc.rates;
    let iv = |rate: Option<Rate>| rate.map(|r| (r.lo, r.hi));
    let non_gpu = match (r.cpu, r.external) {
        (None, None) => None,
        (c, x) => {
            let (cl, ch) = iv(c).unwrap_or((0.0, 0.0));
            let (xl, xh) = iv(x).unwrap_or((0.0, 0.0));
            Some(((cl + xl).min(1.0), (ch + xh).min(1.0)))
        }
    };
    let list = match of {
        RateOf::Gpu => vec![iv(r.gpu)],
        RateOf::Cpu => vec![iv(r.cpu), non_gpu],
        RateOf::External => vec![iv(r.external), non_gpu],
        RateOf::Overall => vec![iv(r.overall)],
        RateOf::Theoretical => vec![acc.theoretical_hit_rate.map(|v| (v, v))],
        RateOf::Telemetry => vec![],
    };
    list.into_iter().flatten().collect()
}

fn count_of(of: CountOf, acc: &Accounting) -> Option<u64> {
    match of {
        CountOf::Prompt => acc.legacy.total_prompt_tokens,
        CountOf::Generation => acc.legacy.total_generation_tokens,
        CountOf::KvPool => acc.legacy.kv_cache_pool_tokens,
        CountOf::Other => None,
    }
}

/// What the recomputation gives for a field, as shown in the verdict.
fn recomputed_value(f: &Field, acc: &Accounting) -> Option<Value> {
    match f.kind {
        Kind::Status => Some(json!(acc.cache_validity.status.as_str())),
        Kind::Eligible => Some(json!(acc.cache_validity.pricing_eligible)),
        Kind::Rate(RateOf::Telemetry) => None,
        Kind::Rate(of) => {
            let list = candidates(of, acc);
            let x = f.value.as_f64();
            let pick = list
                .iter()
                .find(|(lo, hi)| x.is_some_and(|x| x >= *lo && x <= *hi))
                .or(list.first())?;
            Some(json!({"lo": pick.0, "hi": pick.1}))
        }
        Kind::Count(of) => count_of(of, acc).map(|n| json!(n)),
        _ => None,
    }
}
