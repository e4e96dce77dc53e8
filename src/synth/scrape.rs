//! Engine state and the walker: request events advance each pool's true cumulative
//! counters, gauges and histograms; scrapes sample them on a jittered schedule per endpoint
//! (AIPerf's default 0.333 s interval, endpoints not in lockstep, a baseline scrape before
//! warmup and a final scrape after the profiling end). The walker regenerates the whole run
//! from the seed, so every exporter pass sees identical values.

use super::engines::engine_capacity_tokens;
use super::faults::Fault;
use super::plan::Plan;
use super::rng::{hash, Rng};
use super::series::{Delta, Field, HistKind, Moment, SeriesDef, Src};
use super::spec::Schema;
use super::workload::{Item, Lane, ReqRecord};

const SEC: u64 = 1_000_000_000;
/// Prompt tokens per second of the conflicting run's extra traffic.
pub const CONFLICT_RAMP: f64 = 50_000.0;

#[derive(Debug, Clone, Copy, Default)]
pub struct Cum {
    pub prompt: u64,
    pub gpu: u64,
    pub cpu: u64,
    pub ext: u64,
    pub reqs: u64,
    pub gen: u64,
    pub requery: u64,
}

impl Cum {
    fn add(&mut self, d: &Delta) {
        self.prompt += d.prompt as u64;
        self.gpu += d.gpu as u64;
        self.cpu += d.cpu as u64;
        self.ext += d.ext as u64;
        self.reqs += 1;
        self.gen += d.gen as u64;
        self.requery += d.requery as u64;
    }
    pub fn plus(&mut self, o: &Cum) {
        self.prompt += o.prompt;
        self.gpu += o.gpu;
        self.cpu += o.cpu;
        self.ext += o.ext;
        self.reqs += o.reqs;
        self.gen += o.gen;
        self.requery += o.requery;
    }
    pub fn minus(&self, o: &Cum) -> Cum {
        Cum {
            prompt: self.prompt - o.prompt,
            gpu: self.gpu - o.gpu,
            cpu: self.cpu - o.cpu,
            ext: self.ext - o.ext,
            reqs: self.reqs - o.reqs,
            gen: self.gen - o.gen,
            requery: self.requery - o.requery,
        }
    }
    pub fn hits(&self) -> u64 {
        self.gpu + self.cpu + self.ext
    }
    pub fn field(&self, f: Field) -> u64 {
        let h = self.hits();
        match f {
            Field::Zero => 0,
            Field::Prompt => self.prompt,
            Field::Gpu => self.gpu,
            Field::Cpu => self.cpu,
            Field::Ext => self.ext,
            Field::Reqs => self.reqs,
            Field::Gen => self.gen,
            Field::Hits => h,
            Field::GpuCpu => self.gpu + self.cpu,
            Field::GpuExt => self.gpu + self.ext,
            Field::CpuExt => self.cpu + self.ext,
            Field::Compute => self.prompt.saturating_sub(h),
            Field::ComputeCpu => self.prompt.saturating_sub(self.gpu + self.ext),
            Field::NotGpu => self.prompt.saturating_sub(self.gpu),
            Field::Queries => self.prompt + self.requery,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Hist {
    pub counts: Vec<u64>,
    pub sum: f64,
    pub count: u64,
}

impl Hist {
    fn new(k: HistKind) -> Hist {
        Hist {
            counts: vec![0; k.bounds().len() + 1],
            sum: 0.0,
            count: 0,
        }
    }
    fn observe(&mut self, k: HistKind, v: f64) {
        let i = k
            .bounds()
            .iter()
            .position(|b| v <= *b)
            .unwrap_or(k.bounds().len());
        self.counts[i] += 1;
        self.sum += v;
        self.count += 1;
    }
}

/// One pool's state. `moment` cumulatives are the truth; `off` is what a restart zeroed
/// (exported values are `cum - off`).
#[derive(Debug, Clone)]
pub struct PoolState {
    pub cum: [Cum; 3],
    pub off: [Cum; 3],
    pub running: i64,
    pub waiting: i64,
    pub inflight: i64,
    pub last_ratio: f64,
    pub last_ratio_t: u64,
    pub hists: Vec<Hist>,
    pub hist_off: Vec<Hist>,
}

pub fn mi(m: Moment) -> usize {
    match m {
        Moment::Adm | Moment::Arrive => 0,
        Moment::Ftk => 1,
        Moment::Fin => 2,
    }
}

impl PoolState {
    fn new() -> PoolState {
        let hists: Vec<Hist> = HistKind::ALL.iter().map(|k| Hist::new(*k)).collect();
        PoolState {
            cum: [Cum::default(); 3],
            off: [Cum::default(); 3],
            running: 0,
            waiting: 0,
            inflight: 0,
            last_ratio: 0.0,
            last_ratio_t: 0,
            hist_off: hists.clone(),
            hists,
        }
    }
    pub fn exported(&self, m: Moment) -> Cum {
        self.cum[mi(m)].minus(&self.off[mi(m)])
    }
}

/// A sampled value.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    S(f64),
    H { cum: Vec<u64>, sum: f64, count: u64 },
    Absent,
}

/// Per-endpoint scrape schedule.
#[derive(Debug, Clone)]
pub struct Sched {
    pub ep: usize,
    rng: Rng,
    pub next: Option<u64>,
    pub idx: u32,
    final_t: u64,
    done_final: bool,
    gaps: Vec<(u64, u64)>,
    interval: u64,
    p1: u64,
    /// Regular schedule position and pending boundary snapshots (schema 1.1 native runner).
    reg: Option<u64>,
    snaps: Vec<u64>,
}

impl Sched {
    pub fn new(plan: &Plan, ep: usize) -> Sched {
        let mut rng = Rng::new(plan.spec.seed, 1000 + ep as u64);
        let interval = (plan.spec.scrape_interval_s * 1e9) as u64;
        let t = &plan.times;
        let first = t.w0 - SEC + rng.range(0, interval);
        let final_t = if plan.spec.has(Fault::LateFinalScrape) {
            t.p1 + rng.range(3000, 6000) * 1_000_000
        } else {
            t.p1 + rng.range(300, 900) * 1_000_000
        };
        let mut gaps = Vec::new();
        if plan.spec.has(Fault::StartGap) {
            let g = ((plan.spec.duration_s * 0.1).max(5.0) * 1e9) as u64;
            gaps.push((t.p0 - SEC / 2, t.p0 + g));
        }
        if plan.spec.has(Fault::StraddleProof) || plan.spec.has(Fault::StraddleNoProof) {
            gaps.push((t.p0 - 3 * SEC / 2, t.p0));
        }
        if let (true, Some(r)) = (plan.endpoints[ep].reset, t.reset_at) {
            gaps.push(t.reset_gap.unwrap_or((r, r + 2 * SEC)));
        }
        // The native 1.1 runner snapshots every endpoint at the phase boundaries; the faults
        // that model a missing boundary sample drop them.
        let s = &plan.spec;
        let mut snaps = Vec::new();
        if s.schema == Schema::V1_1 {
            if !(s.has(Fault::StartGap)
                || s.has(Fault::StraddleProof)
                || s.has(Fault::StraddleNoProof))
            {
                snaps.push(t.p0);
            }
            if !s.has(Fault::LateFinalScrape) {
                snaps.push(t.p1);
            }
        }
        // An unreachable endpoint cannot be snapshotted either (restart-unseen fault).
        if let (true, true, Some((a, b))) = (
            s.has(Fault::RestartUnseen),
            plan.endpoints[ep].reset,
            t.reset_gap,
        ) {
            snaps.retain(|x| !(*x >= a && *x < b));
        }
        snaps.reverse();
        let mut sc = Sched {
            ep,
            rng,
            next: None,
            idx: 0,
            final_t,
            done_final: false,
            gaps,
            interval,
            p1: t.p1,
            reg: Some(first),
            snaps,
        };
        sc.pick();
        sc
    }

    fn pick(&mut self) {
        self.next = match (self.reg, self.snaps.last()) {
            (Some(r), Some(&s)) => Some(r.min(s)),
            (r, s) => r.or(s.copied()),
        };
    }

    fn advance(&mut self) {
        let Some(cur) = self.next else { return };
        self.idx += 1;
        if self.snaps.last() == Some(&cur) {
            self.snaps.pop();
            if self.reg == Some(cur) {
                self.advance_regular();
            }
        } else {
            self.advance_regular();
        }
        self.pick();
    }

    fn advance_regular(&mut self) {
        let Some(mut t) = self.reg else { return };
        if self.done_final {
            self.reg = None;
            return;
        }
        loop {
            let j = 0.9 + 0.2 * self.rng.f64();
            t += (self.interval as f64 * j) as u64;
            if t > self.p1 {
                self.reg = Some(self.final_t);
                self.done_final = true;
                return;
            }
            if !self.gaps.iter().any(|(a, b)| t >= *a && t < *b) {
                self.reg = Some(t);
                return;
            }
        }
    }

    /// Fetch latency of scrape `idx` (ms-scale), deterministic.
    pub fn latency_ns(&self, idx: u32) -> u64 {
        2_000_000 + hash(&[self.ep as u64, idx as u64, 5]) % 6_000_000
    }
}

pub enum Step {
    Scrape {
        ep: usize,
        t: u64,
        idx: u32,
    },
    Record(Box<ReqRecord>),
    /// A probe time: `strict` probes see events strictly before `t`.
    Probe {
        i: usize,
        t: u64,
    },
}

pub struct Walker<'p> {
    pub plan: &'p Plan,
    lanes: Vec<Lane>,
    lane_t: Vec<Option<u64>>,
    pub scheds: Vec<Sched>,
    pub state: Vec<Vec<PoolState>>,
    reset: Option<(usize, u64)>,
    /// When each endpoint's process restarted (after an injected reset).
    restarted_at: Vec<Option<u64>>,
    probes: Vec<(u64, bool)>,
    next_probe: usize,
    records: bool,
    /// The JSON exporter's view: series marked `conflict` read another run's values.
    pub export_view: bool,
    /// Time of the scrape last returned by `next` (the conflicting run's traffic ramp).
    scrape_t: u64,
}

impl<'p> Walker<'p> {
    /// Walk the run, reporting scrapes of `eps` and (if `records`) request records. Probes are
    /// `(time, strict)` pairs in time order.
    pub fn new(
        plan: &'p Plan,
        eps: &[usize],
        records: bool,
        probes: Vec<(u64, bool)>,
    ) -> Walker<'p> {
        let mut lanes: Vec<Lane> = (0..plan.spec.concurrency)
            .map(|i| Lane::new(plan, i, false))
            .collect();
        let lane_t = lanes.iter_mut().map(|l| l.peek(plan)).collect();
        let scheds = eps
            .iter()
            .filter(|&&e| plan.endpoints[e].scraped)
            .map(|&e| Sched::new(plan, e))
            .collect();
        let state = plan
            .endpoints
            .iter()
            .map(|e| (0..e.pools).map(|_| PoolState::new()).collect())
            .collect();
        let reset = plan.times.reset_at.and_then(|t| {
            plan.endpoints
                .iter()
                .position(|e| e.reset)
                .map(|ep| (ep, t))
        });
        Walker {
            plan,
            lanes,
            lane_t,
            scheds,
            state,
            reset,
            restarted_at: vec![None; plan.endpoints.len()],
            probes,
            next_probe: 0,
            records,
            export_view: false,
            scrape_t: 0,
        }
    }

    pub fn next(&mut self) -> Option<Step> {
        loop {
            let (li, lt) = self
                .lane_t
                .iter()
                .enumerate()
                .filter_map(|(i, t)| t.map(|t| (i, t)))
                .min_by_key(|(i, t)| (*t, *i))
                .map(|(i, t)| (Some(i), t))
                .unwrap_or((None, u64::MAX));
            let (si, st) = self
                .scheds
                .iter()
                .enumerate()
                .filter_map(|(i, s)| s.next.map(|t| (i, t)))
                .min_by_key(|(i, t)| (*t, *i))
                .map(|(i, t)| (Some(i), t))
                .unwrap_or((None, u64::MAX));
            if let Some(&(pt, strict)) = self.probes.get(self.next_probe) {
                let due = if strict {
                    lt >= pt && st >= pt
                } else {
                    lt > pt && st > pt
                };
                if due {
                    self.next_probe += 1;
                    return Some(Step::Probe {
                        i: self.next_probe - 1,
                        t: pt,
                    });
                }
            }
            if let Some((ep, rt)) = self.reset {
                if lt >= rt && st >= rt {
                    for ps in &mut self.state[ep] {
                        ps.off = ps.cum;
                        ps.hist_off = ps.hists.clone();
                    }
                    self.restarted_at[ep] = Some(rt);
                    self.reset = None;
                    continue;
                }
            }
            if li.is_none() && si.is_none() {
                return None;
            }
            if let (Some(li), true) = (li, lt <= st) {
                let item = self.lanes[li].pop();
                self.lane_t[li] = self.lanes[li].peek(self.plan);
                match item {
                    Some(Item::Ev { t, ep, pool, m, d }) => {
                        self.apply(t, ep as usize, pool as usize, m, &d)
                    }
                    Some(Item::Rec(r)) if self.records => return Some(Step::Record(r)),
                    Some(Item::Rec(_)) => {}
                    None => {}
                }
                continue;
            }
            let si = si?;
            let s = &mut self.scheds[si];
            let (ep, idx) = (s.ep, s.idx);
            s.advance();
            self.scrape_t = st;
            return Some(Step::Scrape { ep, t: st, idx });
        }
    }

    fn apply(&mut self, t: u64, ep: usize, pool: usize, m: Moment, d: &Delta) {
        let ps = &mut self.state[ep][pool];
        match m {
            Moment::Arrive => ps.waiting += 1,
            Moment::Adm => {
                ps.waiting -= 1;
                ps.running += 1;
                ps.inflight += d.prompt as i64;
                ps.cum[0].add(d);
            }
            Moment::Ftk => {
                ps.cum[1].add(d);
                if d.prompt > 0 {
                    ps.last_ratio = d.hits() as f64 / d.prompt as f64;
                    ps.last_ratio_t = t;
                }
            }
            Moment::Fin => {
                ps.cum[2].add(d);
                ps.running -= 1;
                ps.inflight = (ps.inflight - d.prompt as i64).max(0);
            }
        }
        for k in HistKind::ALL {
            if let Some(v) = k.observe(m, d) {
                ps.hists[k as usize].observe(k, v);
            }
        }
    }

    /// Exported cumulative counts of a pool set at a moment.
    pub fn exported(&self, ep: usize, pool: Option<u16>, m: Moment) -> Cum {
        let mut c = Cum::default();
        for (i, ps) in self.state[ep].iter().enumerate() {
            if pool.is_none_or(|p| p as usize == i) {
                c.plus(&ps.exported(m));
            }
        }
        c
    }

    /// True (never reset) cumulative counts.
    pub fn truth(&self, ep: usize, m: Moment) -> Cum {
        let mut c = Cum::default();
        for ps in &self.state[ep] {
            c.plus(&ps.cum[mi(m)]);
        }
        c
    }

    /// Another run's value of a priced counter (conflicting-exports fault): 1.25 x the hits
    /// and prompts, plus 50k prompt tokens/s since before the first scrape on the fields that
    /// count non-hit prompt tokens, so hits never exceed prompts.
    fn conflicting(&self, f: Field, x: f64) -> f64 {
        let base = self.plan.times.w0.saturating_sub(2 * SEC);
        let secs = self.scrape_t.saturating_sub(base) as f64 / 1e9;
        let ramp = match f {
            Field::Prompt | Field::Compute | Field::ComputeCpu | Field::Queries => {
                (CONFLICT_RAMP * secs).floor()
            }
            _ => 0.0,
        };
        (x * 1.25).floor() + ramp
    }

    /// The value of series `sid` at scrape `idx`.
    pub fn eval(&self, sid: usize, s: &SeriesDef, idx: u32) -> Val {
        let pools: Vec<&PoolState> = self.state[s.state_ep]
            .iter()
            .enumerate()
            .filter(|(i, _)| s.pool.is_none_or(|p| p as usize == *i))
            .map(|(_, p)| p)
            .collect();
        let n = pools.len().max(1) as f64;
        let cap = engine_capacity_tokens() as f64;
        let nan = self.plan.spec.has(Fault::NanGauges)
            && s.src.is_ratio_gauge()
            && hash(&[sid as u64, idx as u64]) % 5 == 0;
        let v = match s.src {
            Src::Ctr(m, f) | Src::Scaled(m, f, _) => {
                let mut c = Cum::default();
                for p in &pools {
                    c.plus(&p.exported(m));
                }
                let mut x = c.field(f) as f64;
                if let Src::Scaled(_, _, k) = s.src {
                    x = (x * k).floor();
                }
                if s.lag {
                    x = (x * 0.995).floor();
                }
                if s.conflict && self.export_view {
                    x = self.conflicting(f, x);
                }
                if s.lazy && x == 0.0 {
                    return Val::Absent;
                }
                x
            }
            Src::Running => pools.iter().map(|p| p.running.max(0) as f64).sum(),
            Src::Waiting => pools.iter().map(|p| p.waiting.max(0) as f64).sum(),
            Src::KvUsage => {
                let used: f64 = pools.iter().map(|p| p.inflight as f64).sum();
                ((used / (cap * n)).min(1.0) * 1e6).round() / 1e6
            }
            Src::KvUsedBlocks => {
                let used: f64 = pools.iter().map(|p| p.inflight as f64).sum();
                (used.min(cap * n) / self.plan.block_size.max(1) as f64).ceil()
            }
            Src::Const(c) => c,
            Src::ProcessStart(start) => match self.restarted_at[s.state_ep] {
                Some(rt) => (rt / 1_000_000) as f64 / 1000.0,
                None => start,
            },
            Src::HitRatioCum(m) => {
                let mut c = Cum::default();
                for p in &pools {
                    c.plus(&p.exported(m));
                }
                if c.prompt == 0 {
                    0.0
                } else {
                    c.hits() as f64 / c.prompt as f64
                }
            }
            Src::LastHitRatio => pools
                .iter()
                .max_by_key(|p| p.last_ratio_t)
                .map(|p| p.last_ratio)
                .unwrap_or(0.0),
            Src::Hist(k) => {
                let nb = k.bounds().len() + 1;
                let mut counts = vec![0u64; nb];
                let (mut sum, mut count) = (0.0, 0u64);
                for p in &pools {
                    let (h, o) = (&p.hists[k as usize], &p.hist_off[k as usize]);
                    for i in 0..nb {
                        counts[i] += h.counts[i] - o.counts[i];
                    }
                    sum += h.sum - o.sum;
                    count += h.count - o.count;
                }
                let mut acc = 0;
                let cum: Vec<u64> = counts
                    .iter()
                    .map(|c| {
                        acc += c;
                        acc
                    })
                    .collect();
                // Sums print like the engine's float accumulation; round to keep them stable.
                return Val::H {
                    cum,
                    sum: (sum * 1e6).round() / 1e6,
                    count,
                };
            }
        };
        if nan {
            return Val::S(f64::NAN);
        }
        Val::S(v)
    }
}

/// The restart-unseen fault: the endpoint is unreachable from just after its last scrape
/// that every later reading will exceed, until the first scheduled scrape 2 s after the
/// restart. So no scrape (nor a 1.1 boundary snapshot inside that stretch) shows a counter
/// or histogram lower than an earlier one: only `process_start_time_seconds` tells. With
/// little traffic the stretch reaches back to the baseline scrape before warmup. When no
/// scrape follows within the window, the restart stays visible (the usual 2 s stretch).
pub fn settle_unseen_restart(plan: &mut Plan) {
    if !plan.spec.has(Fault::RestartUnseen) {
        return;
    }
    let Some(r) = plan.times.reset_at else { return };
    let Some(ep) = plan.endpoints.iter().position(|e| e.reset) else {
        return;
    };
    // Probe with no stretch at all: every scheduled scrape is a candidate.
    plan.times.reset_gap = Some((r, r));
    let gap = unseen_stretch(plan, ep, r).unwrap_or((r, r + 2 * SEC));
    plan.times.reset_gap = Some(gap);
}

/// Every counter and histogram reading of `ep` at scrape `idx`, flattened (absent = 0).
fn readings(plan: &Plan, w: &Walker, sids: &[usize], idx: u32) -> Vec<f64> {
    let mut vals = Vec::with_capacity(sids.len());
    for &sid in sids {
        match w.eval(sid, &plan.series[sid], idx) {
            Val::S(x) => vals.push(x),
            Val::Absent => vals.push(0.0),
            Val::H { cum, sum, count } => {
                vals.push(count as f64);
                vals.push(sum);
                vals.extend(cum.iter().map(|c| *c as f64));
            }
        }
    }
    vals
}

fn unseen_stretch(plan: &Plan, ep: usize, r: u64) -> Option<(u64, u64)> {
    let sids: Vec<usize> = (0..plan.series.len())
        .filter(|&i| {
            let s = &plan.series[i];
            s.ep == ep && matches!(s.src, Src::Ctr(..) | Src::Scaled(..) | Src::Hist(_))
        })
        .collect();
    let mut w = Walker::new(plan, &[ep], false, vec![]);
    let mut pre: Vec<(u64, Vec<f64>)> = Vec::new();
    while let Some(step) = w.next() {
        let Step::Scrape { t, idx, .. } = step else {
            continue;
        };
        if t > plan.times.p1 {
            return None;
        }
        let vals = readings(plan, &w, &sids, idx);
        if t < r {
            pre.push((t, vals));
        } else if t >= r + 2 * SEC {
            let below =
                |p: &Vec<f64>| p.len() == vals.len() && p.iter().zip(&vals).all(|(a, b)| a <= b);
            let last_ok = pre.iter().rev().find(|(_, p)| below(p))?.0;
            return Some((last_ok + 1, t));
        }
    }
    None
}
