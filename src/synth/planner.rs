//! Building the run plan (`plan.rs` holds its data): endpoints with roles, the engine
//! models' families and series, and the phase times found by a first, cheap walk of the lanes.

use super::engines;
use super::faults::Fault;
use super::plan::{Endpoint, Plan, Times};
use super::rng::Rng;
use super::spec::{Engine, SynthSpec};
use super::workload::Lane;
use crate::model::Role;

const SEC: u64 = 1_000_000_000;
const MS: u64 = 1_000_000;

/// Build the plan of a spec: endpoints and roles, the engine's families and series, then the
/// phase times from a first, cheap walk of the lanes.
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
    if spec.has(Fault::CounterReset) || spec.has(Fault::RestartUnseen) {
        endpoints[priced[0]].reset = true;
    }
    let block_size = match engine {
        Engine::Sglang => 1,
        Engine::Trtllm => 32,
        _ => 16,
    };
    let mut idrng = Rng::new(spec.seed, 7);
    let benchmark_id = idrng.uuid();
    let summary_benchmark_id = if spec.has(Fault::BenchmarkMismatch) {
        idrng.uuid()
    } else {
        benchmark_id.clone()
    };
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
        benchmark_id,
        summary_benchmark_id,
    };
    let (fams, series) = engines::build(&plan);
    plan.families = fams;
    plan.series = series;
    let mut order: Vec<usize> = (0..plan.families.len()).collect();
    order.sort_by(|a, b| plan.families[*a].name.cmp(&plan.families[*b].name));
    plan.family_order = order;
    compute_times(&mut plan);
    plan
}

fn compute_times(plan: &mut Plan) {
    let base = Plan::epoch_base(plan.spec.seed);
    plan.times.w0 = base;
    plan.times.bg_end = 0;
    let n = plan.spec.concurrency;
    // Pass 0a: warmup only.
    let mut ends: Vec<u64> = Vec::new();
    if plan.spec.warmup_per_lane > 0 {
        for id in 0..n {
            let mut lane = Lane::new(plan, id, true);
            while lane.peek(plan).is_some() {
                lane.pop();
            }
            ends.push(lane.warm_end);
        }
    }
    ends.sort_unstable();
    let mut r = Rng::new(plan.spec.seed, 5);
    let straddle = plan.spec.has(Fault::StraddleProof) || plan.spec.has(Fault::StraddleNoProof);
    plan.times.p0 = if ends.is_empty() {
        base + SEC / 2
    } else if straddle {
        ends[ends.len() / 2]
    } else {
        ends[ends.len() - 1] + 25 * MS + r.range(0, 50) * MS
    };
    plan.times.issue_end = plan.times.p0 + (plan.spec.duration_s * 1e9) as u64;
    plan.times.p1 = 0;
    // Pass 0b: the profiling end.
    let mut p1 = plan.times.p0;
    for id in 0..n {
        let mut lane = Lane::new(plan, id, false);
        while lane.peek(plan).is_some() {
            lane.pop();
        }
        p1 = p1.max(lane.last_prof_end);
    }
    // An idle window has no last response; a phase that ends at the issue deadline leaves
    // the in-flight requests' records outside it.
    if plan.spec.has(Fault::ZeroTraffic) || plan.spec.has(Fault::RecordsOutsideWindow) {
        p1 = plan.times.issue_end;
    }
    plan.times.p1 = p1;
    plan.times.bg_end = if plan.spec.has(Fault::LateFinalScrape) {
        p1 + 3 * SEC
    } else {
        0
    };
    if plan.spec.has(Fault::CounterReset) {
        plan.times.reset_at = Some(plan.times.p0 + (plan.spec.duration_s * 0.45e9) as u64);
    } else if plan.spec.has(Fault::RestartUnseen) {
        // Early, so that the traffic left in the window can climb past the old values.
        plan.times.reset_at = Some(plan.times.p0 + (plan.spec.duration_s * 0.15e9) as u64);
    }
}
