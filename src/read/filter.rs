//! Which metric families a caller wants. Readers test each family name against the filter
//! before building anything for it, so unrelated families in a multi-GB export cost only the
//! time to skip over them.

use super::names::canonical_family;
use serde::Serialize;
use std::collections::BTreeSet;

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct FamilyFilter {
    /// Canonical names to keep; `None` keeps every family not excluded by `prefixes`.
    names: Option<BTreeSet<String>>,
    /// Canonical-name prefixes to keep (e.g. `vllm:`); empty = no prefix rule.
    prefixes: Vec<String>,
    /// Keep only the stats of gauge and histogram series, not their timeslices (see
    /// [`FamilyFilter::lean`]).
    lean: bool,
}

impl FamilyFilter {
    /// Keep every family.
    pub fn all() -> Self {
        FamilyFilter::default()
    }

    /// Keep only the named families (any alias spelling matches).
    pub fn only<I, S>(names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        FamilyFilter {
            names: Some(
                names
                    .into_iter()
                    .map(|n| canonical_family(n.as_ref()))
                    .collect(),
            ),
            prefixes: Vec::new(),
            lean: false,
        }
    }

    /// Also keep families whose canonical name starts with one of these prefixes.
    pub fn with_prefixes<I, S>(mut self, prefixes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        if self.names.is_none() {
            self.names = Some(BTreeSet::new());
        }
        self.prefixes
            .extend(prefixes.into_iter().map(|p| canonical_family(p.as_ref())));
        self
    }

    /// Keep only what accounting reads: of an export's series the stats accounting reads
    /// and of a counter's timeslices their bounds and totals (a JSON export's series as
    /// [`crate::model::LeanSeries`], a CSV's as [`crate::model::server_metrics::CsvSeries`];
    /// a histogram's buckets, per timeslice most of an export's bytes, are dropped), of a raw
    /// histogram sample its sum and count. The skipped gauge and histogram timeslices are
    /// syntax-checked but not built, so their values are not refused as counts above
    /// 2^53 − 1: no result reports them; everything else is checked as in a full read. A
    /// repeated family is compared on what is kept. (Inspection keeps everything.)
    pub fn lean(mut self) -> Self {
        self.lean = true;
        self
    }

    /// Whether [`FamilyFilter::lean`] was asked for.
    pub fn is_lean(&self) -> bool {
        self.lean
    }

    pub fn keeps_everything(&self) -> bool {
        self.names.is_none()
    }

    /// Does the caller want this family (as spelled in the file)?
    pub fn wants(&self, family_name: &str) -> bool {
        let Some(names) = &self.names else {
            return true;
        };
        let key = canonical_family(family_name);
        names.contains(&key) || self.prefixes.iter().any(|p| key.starts_with(p.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_keeps_everything() {
        assert!(FamilyFilter::all().wants("anything_at_all"));
    }

    #[test]
    fn only_matches_aliases() {
        let f = FamilyFilter::only(["vllm:prompt_tokens", "atom:prefix_cache_full_tokens"]);
        assert!(f.wants("vllm:prompt_tokens_total"));
        assert!(f.wants("atom_prefix_cache_full_tokens_total"));
        assert!(!f.wants("vllm:generation_tokens"));
    }

    #[test]
    fn prefixes() {
        let f = FamilyFilter::only(["process_open_fds"]).with_prefixes(["sglang:"]);
        assert!(f.wants("sglang:cached_tokens_total"));
        assert!(f.wants("process_open_fds"));
        assert!(!f.wants("vllm:prompt_tokens"));
        let p = FamilyFilter::all().with_prefixes(["atom:"]);
        assert!(p.wants("atom_prompt_tokens"));
        assert!(!p.wants("vllm:prompt_tokens"));
    }
}
