//! Stage 5, the priced role's sums (contract sections 3–4): the canonical counters of the
//! prefill and unified endpoints added as intervals (decode never, it re-counts prompts), and
//! a summary of the evidence behind them.

use super::interval::{Interval, Method};
use super::pools::EndpointCounters;
use super::verdict::{Reason, ReasonCode};
use crate::engines::Counter;
use crate::strmap::StrMap;

/// F, G, C, X and admissions over the priced endpoints, with their evidence.
#[derive(Debug, Clone, Default)]
pub struct PricedSums {
    pub prompt: Option<Interval>,
    pub hit_gpu: Option<Interval>,
    pub hit_cpu: Option<Interval>,
    pub hit_external: Option<Interval>,
    pub admissions: Option<Interval>,
    /// The weakest evidence that bounded a priced counter.
    pub weakest: Option<Method>,
    pub straddles: u32,
    pub gaps: u32,
    /// Every priced endpoint's counters are aligned (see `EndpointCounters::aligned`).
    pub aligned: bool,
}

impl PricedSums {
    /// G + C + X, over the tiers present.
    pub fn hits_all(&self) -> Option<Interval> {
        [self.hit_gpu, self.hit_cpu, self.hit_external]
            .into_iter()
            .flatten()
            .reduce(Interval::plus)
    }
}

/// Sum the priced endpoints' counters; `increase_unbounded` for every priced counter nothing
/// bounds from above.
/// `missing` priced workers (listed, never scraped) add an unknown mass to every counter.
pub fn sum(
    per_endpoint: &StrMap<EndpointCounters>,
    priced: &[String],
    missing: usize,
    reasons: &mut Vec<Reason>,
) -> PricedSums {
    // Both in URL order: the map is walked once.
    let mut at = 0;
    let endpoints: Vec<(&String, &EndpointCounters)> = priced
        .iter()
        .filter_map(|u| per_endpoint.get_from(&mut at, u).map(|e| (u, e)))
        .collect();
    let unknown = (missing > 0).then_some(Interval::unbounded(0.0));
    let total = |c: Counter| {
        let seen = endpoints
            .iter()
            .filter_map(|(_, e)| e.counters.get(c).map(|(i, _)| *i))
            .reduce(Interval::plus)?;
        Some(unknown.map_or(seen, |u| seen.plus(u)))
    };
    let mut out = PricedSums {
        prompt: total(Counter::Prompt),
        hit_gpu: total(Counter::HitGpu),
        hit_cpu: total(Counter::HitCpu),
        hit_external: total(Counter::HitExternal),
        admissions: total(Counter::Admissions),
        aligned: missing == 0 && endpoints.iter().all(|(_, e)| e.aligned()),
        ..PricedSums::default()
    };
    for (url, e) in &endpoints {
        out.straddles += e.straddles;
        out.gaps += e.gaps;
        for (counter, (iv, m)) in e.counters.iter().filter(|(c, _)| c.is_priced()) {
            if out.weakest.is_none_or(|w| m.rank() > w.rank()) {
                out.weakest = Some(*m);
            }
            if !iv.is_bounded() {
                reasons.push(
                    Reason::new(
                        ReasonCode::IncreaseUnbounded,
                        format!(
                            "no evidence bounds the in-window increase of {} from above (evidence: {})",
                            counter.as_str(),
                            m.as_str()
                        ),
                    )
                    .at((*url).clone()),
                );
            }
        }
    }
    out
}
