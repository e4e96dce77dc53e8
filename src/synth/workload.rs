//! The workload: agentic multi-turn sessions on `concurrency` lanes, a warmup phase then a
//! profiling phase, each request a handful of timed events on the endpoints it touches.
//!
//! Model (simplifications documented in `docs/synth.md`):
//! - a lane runs sessions back to back; a session's prompt grows by the previous output
//!   plus a new tool/user chunk each turn, and every session starts with one shared system
//!   prompt, so a turn can reuse its whole previous context (hit rates ~0.8-0.97 in steady
//!   state, lower in the cold warmup, where the first turns dominate);
//! - GPU eviction is a per-request coin (more likely in warmup); an evicted prefix is served
//!   from the CPU or external tier when that tier is on, else recomputed;
//! - sessions stick to one priced endpoint, one DP pool and one decode endpoint (hashing);
//! - a lane's events depend only on `(seed, lane)`, so any walk regenerates them exactly.

use super::faults::Fault;
use super::plan::{Plan, Times};
use super::rng::{hash, Rng};
use super::series::{Delta, Moment};
use super::spec::{Engine, SynthSpec};

pub const SYS_PROMPT: u32 = 3072;
pub const THEORY_BLOCK: u32 = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Warmup,
    Profiling,
    /// Unrecorded traffic after the profiling end (late-final-scrape fault).
    Background,
}

/// A client-side request record (profile export).
#[derive(Debug, Clone)]
pub struct ReqRecord {
    pub lane: u32,
    pub session: u64,
    pub turn: u32,
    pub phase: Phase,
    pub start: u64,
    pub ack: u64,
    pub end: u64,
    pub isl: u32,
    pub osl: u32,
    pub error: bool,
    pub cancelled: bool,
    pub theory_blocks: u32,
    pub theory_hit_blocks: u32,
    /// Whether the server counted it (errored requests are rejected before admission).
    pub server_counted: bool,
}

#[derive(Debug, Clone)]
pub enum Item {
    Ev {
        t: u64,
        ep: u16,
        pool: u16,
        m: Moment,
        d: Delta,
    },
    Rec(Box<ReqRecord>),
}

impl Item {
    pub fn t(&self) -> u64 {
        match self {
            Item::Ev { t, .. } => *t,
            Item::Rec(r) => r.end,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LanePhase {
    Warmup(u32),
    Profiling,
    Background,
    Done,
}

pub struct Lane {
    pub id: u32,
    rng: Rng,
    phase: LanePhase,
    session_idx: u64,
    session: u64,
    turn: u32,
    turns: u32,
    context: u32,
    next_start: u64,
    first_request: bool,
    first_in_phase: bool,
    pending: std::collections::VecDeque<Item>,
    /// End of this lane's last warmup request (for pass 0).
    pub warm_end: u64,
    pub last_prof_end: u64,
    /// Only warmup (pass 0a).
    warm_only: bool,
}

const MS: u64 = 1_000_000;

impl Lane {
    pub fn new(plan: &Plan, id: u32, warm_only: bool) -> Lane {
        let mut rng = Rng::new(plan.spec.seed, 10_000 + id as u64);
        let start = plan.times.w0 + id as u64 * 7 * MS + rng.range(0, 40) * MS;
        let mut l = Lane {
            id,
            rng,
            phase: LanePhase::Warmup(plan.spec.warmup_per_lane),
            session_idx: 0,
            session: 0,
            turn: 0,
            turns: 0,
            context: 0,
            next_start: start,
            first_request: true,
            first_in_phase: true,
            pending: Default::default(),
            warm_end: start,
            last_prof_end: 0,
            warm_only,
        };
        l.new_session(plan);
        if plan.spec.warmup_per_lane == 0 {
            l.phase = LanePhase::Profiling;
        }
        l
    }

    fn new_session(&mut self, plan: &Plan) {
        self.session = hash(&[plan.spec.seed, self.id as u64, self.session_idx]);
        self.session_idx += 1;
        self.turn = 0;
        self.turns = self.rng.range(6, 40) as u32;
        self.context = 0;
    }

    /// Time of the next item, generating the next request if needed; `None` when done.
    pub fn peek(&mut self, plan: &Plan) -> Option<u64> {
        while self.pending.is_empty() {
            if !self.generate(plan) {
                return None;
            }
        }
        self.pending.front().map(Item::t)
    }

    pub fn pop(&mut self) -> Option<Item> {
        self.pending.pop_front()
    }

    fn generate(&mut self, plan: &Plan) -> bool {
        let t: &Times = &plan.times;
        let spec = &plan.spec;
        // Phase transitions.
        loop {
            match self.phase {
                LanePhase::Warmup(0) => {
                    if self.warm_only {
                        self.phase = LanePhase::Done;
                        continue;
                    }
                    self.phase = LanePhase::Profiling;
                    self.first_in_phase = true;
                    let stagger = self.id as u64 * 3 * MS + self.rng.range(0, 20) * MS;
                    self.next_start = self.next_start.max(t.p0 + stagger);
                }
                // An idle profiling window (zero-traffic fault): warmup only.
                LanePhase::Profiling if spec.has(Fault::ZeroTraffic) => {
                    self.phase = LanePhase::Done
                }
                LanePhase::Profiling if self.next_start >= t.issue_end => {
                    if spec.has(Fault::LateFinalScrape) {
                        self.phase = LanePhase::Background;
                        self.next_start = self
                            .next_start
                            .max(t.p1 + 100 * MS + self.rng.range(0, 200) * MS);
                    } else {
                        self.phase = LanePhase::Done;
                    }
                }
                LanePhase::Background if self.next_start >= t.bg_end => {
                    self.phase = LanePhase::Done
                }
                LanePhase::Done => return false,
                _ => break,
            }
        }
        let phase = match self.phase {
            LanePhase::Warmup(_) => Phase::Warmup,
            LanePhase::Profiling => Phase::Profiling,
            _ => Phase::Background,
        };
        self.make_request(plan, phase);
        if let LanePhase::Warmup(n) = self.phase {
            self.phase = LanePhase::Warmup(n - 1);
        }
        true
    }

    fn make_request(&mut self, plan: &Plan, phase: Phase) {
        let spec = &plan.spec;
        let r = &mut self.rng;
        let block = plan.block_size;
        let start = self.next_start;
        // Prompt growth.
        let first_turn = self.turn == 0;
        let add = if first_turn {
            SYS_PROMPT + r.log_range(1500, 24000) as u32
        } else {
            r.log_range(150, 4000) as u32
        };
        let prompt = self.context + add;
        let reuse_theory = if first_turn {
            if self.first_request {
                0
            } else {
                SYS_PROMPT
            }
        } else {
            self.context
        };
        // With prefix caching disabled nothing is reused (the theoretical rate still counts).
        let reuse = if spec.has(Fault::PrefixCachingDisabled) {
            0
        } else {
            (reuse_theory / block * block).min(prompt - 1)
        };
        // Tier split on the priced endpoint.
        let p_evict = match phase {
            Phase::Warmup => 0.30,
            _ => 0.05 + 0.05 * r.f64(),
        };
        let sys_part = (SYS_PROMPT / block * block).min(reuse);
        let (gpu, cpu, ext) = tier_split(plan, r, reuse, sys_part, p_evict);
        let out = r.log_range(30, 700) as u32;
        let compute = prompt - gpu - cpu - ext;
        let queue = r.range(2, 30) * MS
            + if phase == Phase::Warmup {
                r.range(0, 200) * MS
            } else {
                0
            };
        let prefill = (compute as u64 * 1_000_000_000) / 40_000 + 12 * MS;
        let itl = r.range(9, 18) * MS;
        let adm = start + queue;
        let ftk = adm + prefill;
        let mut end = ftk + out as u64 * itl;
        let (error, cancelled) = client_fault(spec, phase, self.first_in_phase, self.id, r);
        if error {
            end = start + r.range(20, 80) * MS;
        } else if cancelled {
            end = ftk + (out as u64 / 2).max(1) * itl;
        }
        let osl = if error {
            0
        } else if cancelled {
            (out / 2).max(1)
        } else {
            out
        };
        let ttft_us = ((ftk - start) / 1000) as u32;
        let e2e_us = ((end - start) / 1000) as u32;
        let base = Delta {
            prompt,
            gpu,
            cpu,
            ext,
            gen: osl,
            requery: 0,
            ttft_us,
            e2e_us,
        };
        let mut priced = base;
        if plan.legacy_requery && r.chance(0.12) {
            priced.requery = prompt * r.range(1, 3) as u32;
        }
        let server = !error;
        let mut items: Vec<Item> = Vec::with_capacity(10);
        if server {
            let at = At {
                start,
                adm,
                ftk,
                end,
            };
            let local = r_local(self.session, reuse, sys_part);
            server_events(plan, self.session, at, &base, &priced, local, &mut items);
        }
        if phase != Phase::Background {
            let theory_blocks = prompt.div_ceil(THEORY_BLOCK);
            let theory_hit_blocks = (reuse_theory / THEORY_BLOCK).min(theory_blocks);
            items.push(Item::Rec(Box::new(ReqRecord {
                lane: self.id,
                session: self.session,
                turn: self.turn,
                phase,
                start,
                ack: ftk,
                end,
                isl: prompt,
                osl,
                error,
                cancelled,
                theory_blocks,
                theory_hit_blocks,
                server_counted: server,
            })));
        }
        items.sort_by_key(|i| (i.t(), matches!(i, Item::Rec(_))));
        self.pending.extend(items);
        match phase {
            Phase::Warmup => self.warm_end = end,
            Phase::Profiling => self.last_prof_end = self.last_prof_end.max(end),
            Phase::Background => {}
        }
        // Session progress.
        self.first_request = false;
        self.first_in_phase = false;
        self.context = prompt + osl;
        self.turn += 1;
        if self.turn >= self.turns || error {
            self.new_session(plan);
        }
        let think = self.rng.range(20, 400) * MS;
        self.next_start = end + think;
    }
}

/// `(error, cancelled)` of a request under the errors faults: the first request of the phase
/// on lane 0 errors and on lane 1 is cancelled (so each shows), others by chance.
fn client_fault(
    spec: &SynthSpec,
    phase: Phase,
    first_in_phase: bool,
    lane: u32,
    r: &mut Rng,
) -> (bool, bool) {
    let err_phase = match phase {
        Phase::Warmup => spec.has(Fault::ErrorsWarmup),
        Phase::Profiling => spec.has(Fault::ErrorsProfiling),
        Phase::Background => false,
    };
    if !err_phase {
        return (false, false);
    }
    let forced_err = first_in_phase && lane == 0;
    let forced_can = first_in_phase && lane == 1 % spec.concurrency.max(1);
    let u = r.f64();
    if forced_err || (!forced_can && u < 0.03) {
        (true, false)
    } else if forced_can || u < 0.06 {
        (false, true)
    } else {
        (false, false)
    }
}

/// How the reused prefix was served on the priced endpoint: the GPU unless a coin
/// (`p_evict`) evicted the part beyond the system prompt, which the CPU or external tier then
/// serves when on (else it is recomputed).
fn tier_split(
    plan: &Plan,
    r: &mut Rng,
    reuse: u32,
    sys_part: u32,
    p_evict: f64,
) -> (u32, u32, u32) {
    let (mut gpu, mut cpu, mut ext) = (reuse, 0u32, 0u32);
    if reuse > sys_part && r.chance(p_evict) {
        gpu = sys_part;
        let rest = reuse - sys_part;
        let u = r.f64();
        let (c, x) = (plan.tiers_cpu, plan.tiers_ext);
        if c && x {
            if u < 0.6 {
                cpu = rest
            } else if u < 0.9 {
                ext = rest
            }
        } else if c && u < 0.85 {
            cpu = rest;
        } else if x && u < 0.85 {
            ext = rest;
        }
    }
    (gpu, cpu, ext)
}

/// A served request's client-side times.
#[derive(Clone, Copy)]
struct At {
    start: u64,
    adm: u64,
    ftk: u64,
    end: u64,
}

/// The endpoint events of a served request: the priced endpoint (a disaggregated prefill
/// finishes after its one generated token), the decode endpoint, the frontend.
fn server_events(
    plan: &Plan,
    session: u64,
    at: At,
    base: &Delta,
    priced: &Delta,
    local: u32,
    items: &mut Vec<Item>,
) {
    let ev = |t: u64, ep: usize, pool: u16, m: Moment, d: Delta| Item::Ev {
        t,
        ep: ep as u16,
        pool,
        m,
        d,
    };
    let At {
        start,
        adm,
        ftk,
        end,
    } = at;
    let (pep, ppool) = plan.route_priced(session);
    let disagg = plan.spec.topology.is_disagg();
    let pfin = if disagg { ftk + MS } else { end };
    items.push(ev(start, pep, ppool, Moment::Arrive, *priced));
    items.push(ev(adm, pep, ppool, Moment::Adm, *priced));
    items.push(ev(ftk, pep, ppool, Moment::Ftk, *priced));
    let mut pf = *priced;
    if disagg {
        pf.gen = 1;
        pf.e2e_us = ((pfin - start) / 1000) as u32;
    }
    items.push(ev(pfin, pep, ppool, Moment::Fin, pf));
    if disagg {
        let (dep, dpool) = plan.route_decode(session);
        let d = decode_delta(plan, base, local);
        let mut dfin = d;
        if d.prompt == 0 {
            // ATOM @ffdf3bb5: no prefix-cache accounting, but `prompt_tokens` at completion.
            dfin.prompt = base.prompt;
        }
        let dadm = ftk + 3 * MS;
        items.push(ev(dadm, dep, dpool, Moment::Arrive, d));
        items.push(ev(dadm, dep, dpool, Moment::Adm, d));
        items.push(ev(dadm, dep, dpool, Moment::Ftk, d));
        items.push(ev(end, dep, dpool, Moment::Fin, dfin));
    }
    if let Some(fe) = plan.frontend {
        items.push(ev(start, fe, 0, Moment::Arrive, *base));
        items.push(ev(start + MS, fe, 0, Moment::Adm, *base));
        items.push(ev(ftk, fe, 0, Moment::Ftk, *base));
        items.push(ev(end, fe, 0, Moment::Fin, *base));
    }
}

/// The decode worker's own local prefix hit (it caches the session's earlier turns).
fn r_local(session: u64, reuse: u32, sys_part: u32) -> u32 {
    if hash(&[session, 77]) % 10 < 7 {
        reuse
    } else {
        sys_part
    }
}

/// How a decode worker counts a request it received from a prefill worker.
fn decode_delta(plan: &Plan, base: &Delta, local: u32) -> Delta {
    let mut d = *base;
    if plan.spec.has(Fault::DecodeRecount) {
        // Mirror of the prefill's split (SGLang's behaviour, forced for every engine).
        return d;
    }
    match plan.spec.engine {
        Engine::Vllm | Engine::Dynamo => {
            // Full prompt; received KV is `external_kv_transfer`; local_compute 0 (>= 0.21).
            d.gpu = local;
            d.cpu = 0;
            d.ext = base.prompt - local;
        }
        Engine::Sglang => {}
        Engine::Trtllm => {
            // Not verified in source: counted as a prompt with no cache hits.
            d.gpu = 0;
            d.cpu = 0;
            d.ext = 0;
        }
        Engine::Atom => {
            if plan.spec.variant_legacy {
                // @ffdf3bb5: the decode path never calls the cache accounting.
                d.prompt = 0;
                d.gpu = 0;
                d.cpu = 0;
                d.ext = 0;
            } else {
                d.gpu = local;
                d.cpu = 0;
                d.ext = 0;
            }
        }
    }
    d
}
