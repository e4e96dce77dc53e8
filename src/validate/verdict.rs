//! The verdict: the result JSON's checks, the recomputation from the raw artifacts and the
//! claims' comparison put together, errors apart from warnings, and the outcome decided by
//! the gravest error (a limit, then a malformed upload, then refused claims).

use super::bundle::Parts;
use super::claims;
use super::codes::{Claim, ClaimStatus, Issue, Outcome, UploadCode, UploadVerdict};
use super::limits::UploadLimits;
use super::result::{self, Kind, RateOf};
use crate::account::fold::Folded;
use crate::account::{account_run_folded, Accounting, Policy};
use crate::admission::{self, HeapLimit};
use crate::error::ErrorCode;
use crate::read::run::RunReader;
use crate::read::Run;

/// A verdict decided by one error met while reading (nothing after it was read).
pub fn refused(issue: Issue, limits: &UploadLimits) -> UploadVerdict {
    build(vec![issue], Vec::new(), None, limits)
}

/// The verdict of an upload read to its end; `memory` counts the heap against
/// `limits.memory_budget` while the raw artifacts are accounted, as while they were read.
pub fn assemble(
    parts: Parts,
    limits: &UploadLimits,
    policy: &Policy,
    memory: Option<HeapLimit>,
) -> UploadVerdict {
    let Some((bytes, file)) = parts.result else {
        let issue = Issue::new(UploadCode::ResultMissing, "the upload has no result JSON");
        return refused(issue, limits);
    };
    let checked = match result::check(&bytes, file.as_deref()) {
        Ok(c) => c,
        Err(issue) => return refused(issue, limits),
    };
    let mut issues = checked.issues;
    let recomputed = parts
        .run
        .and_then(|run| recompute(run, policy, limits, memory, &mut issues));
    let priced_claims = checked.fields.iter().any(|f| priced(f.kind));
    // `check` has read the bytes as UTF-8 already.
    let text = std::str::from_utf8(&bytes).unwrap_or_default();
    let (claims, claim_issues) = claims::compare(
        checked.fields,
        recomputed.as_ref(),
        policy,
        file.as_deref(),
        text,
    );
    issues.extend(claim_issues);
    if !priced_claims {
        let mut issue = Issue::new(
            UploadCode::NoClaims,
            "the result JSON carries no cache claim (no hit rate, status or eligibility)",
        );
        if let Some(f) = &file {
            issue = issue.in_file(f);
        }
        issues.push(issue);
    }
    build(issues, claims, recomputed.map(Box::new), limits)
}

fn priced(kind: Kind) -> bool {
    matches!(kind, Kind::Status | Kind::Eligible)
        || matches!(kind, Kind::Rate(of) if of != RateOf::Telemetry)
}

/// The accounting of the bundle's raw artifacts; `None` when it has none (or they cannot be
/// read: that is an error pushed to `issues`).
fn recompute(
    run: RunReader,
    policy: &Policy,
    limits: &UploadLimits,
    memory: Option<HeapLimit>,
    issues: &mut Vec<Issue>,
) -> Option<Accounting> {
    match run.finish_folded() {
        Ok((run, fold)) => {
            for f in &run.ignored {
                issues.push(
                    Issue::new(
                        UploadCode::FileIgnored,
                        format!("`{}` is not read: {}", f.name, f.reason),
                    )
                    .in_file(&f.name),
                );
            }
            account_within(run, fold, policy, limits, memory, issues)
        }
        Err(e) if e.code == ErrorCode::NoArtifacts => None,
        // The run reader's own budget is the upload's `memory_budget` limit: a 413, not a
        // malformed artifact.
        Err(e) if e.code == ErrorCode::InputTooLarge => {
            let mut issue = Issue::limit(
                limits.hit("memory_budget", None),
                format!("`{}`: {}", e.file, e.message),
            )
            .in_file(&e.file)
            .at(&e.position);
            issue.artifact_code = Some(e.code);
            issues.push(issue);
            None
        }
        Err(e) => {
            let mut issue = Issue::new(
                UploadCode::ArtifactUnreadable,
                format!("`{}` cannot be read: {} ({})", e.file, e.message, e.code),
            )
            .in_file(&e.file)
            .at(&e.position);
            issue.artifact_code = Some(e.code);
            issues.push(issue);
            None
        }
    }
}

/// The run accounted, its tables admitted under `memory_budget` as `accountStream`'s are
/// under its budget: past it, the named limit (413), not an accounting made in memory an edge
/// isolate may not have.
fn account_within(
    run: Run,
    fold: Folded,
    policy: &Policy,
    limits: &UploadLimits,
    memory: Option<HeapLimit>,
    issues: &mut Vec<Issue>,
) -> Option<Accounting> {
    let account = || account_run_folded(run, fold, policy);
    let Some(limit) = memory else {
        return Some(account());
    };
    let accounted = admission::under(limit, account);
    if accounted.is_none() {
        issues.push(Issue::limit(
            limits.hit("memory_budget", None),
            format!(
                "accounting the raw artifacts needs more memory than the budget of {} allows: a table of their series would pass it",
                limit.budget_text()
            ),
        ));
    }
    accounted
}

/// How grave an outcome is: the verdict takes the gravest of its errors.
fn rank(o: Outcome) -> u8 {
    match o {
        Outcome::Accepted => 0,
        Outcome::ClaimsRefused => 1,
        Outcome::Malformed => 2,
        Outcome::LimitExceeded => 3,
    }
}

fn build(
    issues: Vec<Issue>,
    claims: Vec<Claim>,
    recomputed: Option<Box<Accounting>>,
    limits: &UploadLimits,
) -> UploadVerdict {
    let (errors, warnings): (Vec<Issue>, Vec<Issue>) =
        issues.into_iter().partition(|i| i.code.outcome().is_some());
    let outcome = errors
        .iter()
        .filter_map(|i| i.code.outcome())
        .max_by_key(|o| rank(*o))
        .unwrap_or(Outcome::Accepted);
    debug_assert!(claims
        .iter()
        .all(|c| c.status != ClaimStatus::Verified || recomputed.is_some()));
    UploadVerdict {
        accepted: outcome == Outcome::Accepted,
        outcome,
        errors,
        warnings,
        claims,
        recomputed,
        limits: *limits,
    }
}
