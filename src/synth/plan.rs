//! The run plan: endpoints with roles, metric families and series, and the phase times.
//! Data only: `planner` builds it (it needs the engine models and a walk of the lanes, which
//! themselves read the plan, so the building lives above both).

use super::rng::hash;
use super::series::{FamilyDef, SeriesDef};
use super::spec::SynthSpec;
use crate::model::Role;

const SEC: u64 = 1_000_000_000;

#[derive(Debug, Clone, Default)]
pub struct Times {
    pub w0: u64,
    pub p0: u64,
    /// Profiling requests are issued before this.
    pub issue_end: u64,
    /// Profiling end: the last profiling response.
    pub p1: u64,
    /// Background traffic (late-final-scrape fault) is issued before this.
    pub bg_end: u64,
    pub reset_at: Option<u64>,
    /// The restarted endpoint's unscraped stretch `[a, b)` (`reset_at` + 2 s when `None`).
    pub reset_gap: Option<(u64, u64)>,
}

#[derive(Debug, Clone)]
pub struct Endpoint {
    pub url: String,
    pub host_port: String,
    /// AIPerf's display form (CSV `Endpoint` column).
    pub display: String,
    pub role: Role,
    pub pools: u16,
    /// False when the scrape never reached it (worker-missing fault).
    pub scraped: bool,
    pub reset: bool,
}

pub struct Plan {
    pub spec: SynthSpec,
    pub endpoints: Vec<Endpoint>,
    pub families: Vec<FamilyDef>,
    pub series: Vec<SeriesDef>,
    /// Family indices sorted by name (export order).
    pub family_order: Vec<usize>,
    /// Priced (prefill or unified) endpoints, decode endpoints, the frontend.
    pub priced: Vec<usize>,
    pub decode: Vec<usize>,
    pub frontend: Option<usize>,
    pub times: Times,
    pub block_size: u32,
    pub tiers_cpu: bool,
    pub tiers_ext: bool,
    pub legacy_requery: bool,
    pub model: String,
    pub benchmark_id: String,
    /// The run summary's `benchmark_id` (another one under the benchmark-mismatch fault).
    pub summary_benchmark_id: String,
}

impl Plan {
    /// The run's wall-clock origin (epoch ns), a function of the seed.
    pub fn epoch_base(seed: u64) -> u64 {
        1_781_000_000 * SEC + (hash(&[seed, 3]) % 1_000_000) * SEC + hash(&[seed, 4]) % SEC
    }

    pub fn route_priced(&self, session: u64) -> (usize, u16) {
        let ep = self.priced[(hash(&[session, 1]) % self.priced.len() as u64) as usize];
        let pool = (hash(&[session, 2]) % self.endpoints[ep].pools as u64) as u16;
        (ep, pool)
    }

    pub fn route_decode(&self, session: u64) -> (usize, u16) {
        let ep = self.decode[(hash(&[session, 3]) % self.decode.len() as u64) as usize];
        let pool = (hash(&[session, 4]) % self.endpoints[ep].pools as u64) as u16;
        (ep, pool)
    }
}
