//! The run plan: endpoints with roles, metric families and series, and the phase times
//! (found by a first, cheap walk of the lanes).

use super::engines::{self, FamilyDef, SeriesDef};
use super::rng::{hash, Rng};
use super::workload::Lane;
use super::{Engine, Fault, SynthSpec};
use crate::model::Role;

const SEC: u64 = 1_000_000_000;
const MS: u64 = 1_000_000;

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
}

impl Plan {
    pub fn build(spec: &SynthSpec) -> Plan {
        let spec = spec.resolved();
        let engine = spec.engine;
        let path = if engine == Engine::Trtllm {
            "/prometheus/metrics"
        } else {
            "/metrics"
        };
        let mut endpoints = Vec::new();
        let mk = |net: u32, i: u32, role: Role, pools: u32| {
            let host_port = format!("10.0.{net}.{}:8000", i + 1);
            Endpoint {
                url: format!("http://{host_port}{path}"),
                display: format!("{host_port}{}", path.trim_end_matches("/metrics")),
                host_port,
                role,
                pools: pools as u16,
                scraped: true,
                reset: false,
            }
        };
        let t = spec.topology;
        for i in 0..t.agg {
            endpoints.push(mk(0, i, Role::Unified, spec.dp));
        }
        for i in 0..t.prefill {
            endpoints.push(mk(1, i, Role::Prefill, spec.dp));
        }
        for i in 0..t.decode {
            endpoints.push(mk(2, i, Role::Decode, spec.dp));
        }
        let priced: Vec<usize> = (0..endpoints.len())
            .filter(|&i| matches!(endpoints[i].role, Role::Unified | Role::Prefill))
            .collect();
        let decode: Vec<usize> = (0..endpoints.len())
            .filter(|&i| endpoints[i].role == Role::Decode)
            .collect();
        let frontend = if spec.frontend {
            endpoints.push(Endpoint {
                url: "http://10.0.0.250:8080/metrics".into(),
                host_port: "10.0.0.250:8080".into(),
                display: "10.0.0.250:8080".into(),
                role: Role::Frontend,
                pools: 1,
                scraped: true,
                reset: false,
            });
            Some(endpoints.len() - 1)
        } else {
            None
        };
        if spec.has(Fault::WorkerMissing) {
            if let Some(&last) = priced.last() {
                endpoints[last].scraped = false;
            }
        }
        if spec.has(Fault::CounterReset) {
            endpoints[priced[0]].reset = true;
        }
        let block_size = match engine {
            Engine::Sglang => 1,
            Engine::Trtllm => 32,
            _ => 16,
        };
        let mut idrng = Rng::new(spec.seed, 7);
        let mut plan = Plan {
            tiers_cpu: spec.tier_cpu,
            tiers_ext: spec.tier_external,
            legacy_requery: spec.variant_legacy && matches!(engine, Engine::Vllm | Engine::Dynamo),
            spec,
            endpoints,
            families: Vec::new(),
            series: Vec::new(),
            family_order: Vec::new(),
            priced,
            decode,
            frontend,
            times: Times::default(),
            block_size,
            model: "synth/Agentic-8B".into(),
            benchmark_id: idrng.uuid(),
        };
        let (fams, series) = engines::build(&plan);
        plan.families = fams;
        plan.series = series;
        let mut order: Vec<usize> = (0..plan.families.len()).collect();
        order.sort_by(|a, b| plan.families[*a].name.cmp(&plan.families[*b].name));
        plan.family_order = order;
        plan.compute_times();
        plan
    }

    /// The run's wall-clock origin (epoch ns), a function of the seed.
    pub fn epoch_base(seed: u64) -> u64 {
        1_781_000_000 * SEC + (hash(&[seed, 3]) % 1_000_000) * SEC + hash(&[seed, 4]) % SEC
    }

    fn compute_times(&mut self) {
        let base = Plan::epoch_base(self.spec.seed);
        self.times.w0 = base;
        self.times.bg_end = 0;
        let n = self.spec.concurrency;
        // Pass 0a: warmup only.
        let mut ends: Vec<u64> = Vec::new();
        if self.spec.warmup_per_lane > 0 {
            for id in 0..n {
                let mut lane = Lane::new(self, id, true);
                while lane.peek(self).is_some() {
                    lane.pop();
                }
                ends.push(lane.warm_end);
            }
        }
        ends.sort_unstable();
        let mut r = Rng::new(self.spec.seed, 5);
        let straddle = self.spec.has(Fault::StraddleProof) || self.spec.has(Fault::StraddleNoProof);
        self.times.p0 = if ends.is_empty() {
            base + SEC / 2
        } else if straddle {
            ends[ends.len() / 2]
        } else {
            ends[ends.len() - 1] + 25 * MS + r.range(0, 50) * MS
        };
        self.times.issue_end = self.times.p0 + (self.spec.duration_s * 1e9) as u64;
        self.times.p1 = 0;
        // Pass 0b: the profiling end.
        let mut p1 = self.times.p0;
        for id in 0..n {
            let mut lane = Lane::new(self, id, false);
            while lane.peek(self).is_some() {
                lane.pop();
            }
            p1 = p1.max(lane.last_prof_end);
        }
        self.times.p1 = p1;
        self.times.bg_end = if self.spec.has(Fault::LateFinalScrape) {
            p1 + 3 * SEC
        } else {
            0
        };
        if self.spec.has(Fault::CounterReset) {
            self.times.reset_at = Some(self.times.p0 + (self.spec.duration_s * 0.45e9) as u64);
        }
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

    /// Whether a family name is one of the engine's priced counters (F or a hit tier).
    pub fn is_priced_family(&self, name: &str) -> bool {
        engines::priced_families(self.spec.engine).contains(&name)
    }
}
