//! Pass 1: one walk of the whole run. Writes `server_metrics_export.jsonl` (every
//! non-duplicate scrape, raw cumulative values, `*_info` families removed; compact orjson;
//! schema 1.1 runs add the native `benchmark_phase`) and `profile_export.jsonl` (one record
//! per request at its end, nulls omitted), and gathers what later files need: per-endpoint
//! fetch statistics, per-phase request aggregates, true counters at the phase boundaries
//! (probes) and the priced counters' values around the window edges (evidence bounds).

use crate::synth::engines::{price_moment, priced_families};
use crate::synth::faults::Fault;
use crate::synth::fmt::{jstr, py_float};
use crate::synth::out::{rel, Out, Sink};
use crate::synth::plan::Plan;
use crate::synth::rng::{hash, Rng};
use crate::synth::scrape::{Cum, Step, Val, Walker};
use crate::synth::series::{Field, HistKind, Moment, SeriesDef, Src};
use crate::synth::spec::{Schema, SynthError};
use crate::synth::workload::{Phase, ReqRecord};
use std::collections::{BTreeMap, VecDeque};
use std::io::Write;

#[derive(Debug, Clone, Default)]
pub struct EpInfo {
    pub fetches: u64,
    pub first_fetch: u64,
    pub last_fetch: u64,
    pub lat_sum: u64,
    pub updates: u64,
    pub first_update: u64,
    pub last_update: u64,
    pub intervals: Vec<u64>,
    last_hash: u64,
}

#[derive(Debug, Clone, Default)]
pub struct PhaseAgg {
    pub records: u64,
    pub errors: u64,
    pub cancelled: u64,
    pub ok: u64,
    /// Sum of `usage_prompt_tokens` over successful records.
    pub client_prompt: u64,
    pub total_osl: u64,
    pub isl: Vec<f64>,
    pub osl: Vec<f64>,
    pub lat_ms: Vec<f64>,
    pub ttft_ms: Vec<f64>,
    pub itl_ms: Vec<f64>,
    pub min_start: u64,
    pub max_end: u64,
    pub theory_blocks: u64,
    pub theory_hit: u64,
    pub errors_by: BTreeMap<(i64, String, String), u64>,
}

/// Priced counters (prompt, hits) of one endpoint around the window edges.
#[derive(Debug, Clone, Default)]
pub struct Edges {
    pub le_p0: Option<(u64, u64, u64)>,
    pub ge_p0: Option<(u64, u64, u64)>,
    pub le_p0s: Option<(u64, u64, u64)>,
    pub le_p1: Option<(u64, u64, u64)>,
    pub ge_p1: Option<(u64, u64, u64)>,
    pub ring: VecDeque<(u64, u64, u64)>,
    /// Every scrape written to the JSONL (what an accountant sees as raw evidence).
    pub recorded: Vec<(u64, u64, u64)>,
}

pub struct Pass1 {
    pub info: Vec<EpInfo>,
    pub prof: PhaseAgg,
    pub warm: PhaseAgg,
    /// `[probe][endpoint][moment]` true cumulative counts; probes: W0 (strict), P0 (strict), P1.
    pub probes: Vec<Vec<[Cum; 3]>>,
    pub edges: Vec<Edges>,
    /// Whether any counter decreased between two scrapes of an endpoint (reset seen).
    pub decreased: Vec<bool>,
    /// The duplicate-timestamp fault's second sample was written.
    pub duplicate_timestamp: bool,
}

pub fn labels_json(labels: &[(String, String)]) -> String {
    let parts: Vec<String> = labels
        .iter()
        .map(|(k, v)| format!("{}:{}", jstr(k), jstr(v)))
        .collect();
    format!("{{{}}}", parts.join(","))
}

fn jf(x: f64) -> String {
    if x.is_finite() {
        py_float(x)
    } else {
        "null".into()
    }
}

pub fn pass1(
    plan: &Plan,
    sink: &Sink,
    files: &mut Vec<(String, u64)>,
) -> Result<Pass1, SynthError> {
    let n_ep = plan.endpoints.len();
    let all: Vec<usize> = (0..n_ep).collect();
    let t = &plan.times;
    let probes = vec![(t.w0, true), (t.p0, true), (t.p1, false)];
    let mut w = Walker::new(plan, &all, true, probes);
    let mut jl = if plan.spec.jsonl {
        Some(Out::open(sink, &rel("server_metrics_export.jsonl"))?)
    } else {
        None
    };
    let mut pj = Out::open(sink, &rel("profile_export.jsonl"))?;
    let groups = groups_of(plan);
    let parts = LineParts::of(plan);
    let mut info = vec![EpInfo::default(); n_ep];
    let mut edges = vec![Edges::default(); n_ep];
    let mut decreased = vec![false; n_ep];
    let mut last_ctr: Vec<Vec<f64>> = vec![Vec::new(); n_ep];
    let mut probe_out: Vec<Vec<[Cum; 3]>> = Vec::new();
    let (mut prof, mut warm) = (PhaseAgg::default(), PhaseAgg::default());
    let pm = price_moment(plan.spec.engine);
    let mut dup_ts = DupTs::default();
    let mut session_nums: BTreeMap<u64, u64> = BTreeMap::new();
    while let Some(step) = w.next() {
        match step {
            Step::Probe { .. } => {
                probe_out.push(
                    (0..n_ep)
                        .map(|e| {
                            [
                                w.truth(e, Moment::Adm),
                                w.truth(e, Moment::Ftk),
                                w.truth(e, Moment::Fin),
                            ]
                        })
                        .collect(),
                );
            }
            Step::Record(r) => {
                let n = session_nums.len() as u64;
                let sn = *session_nums.entry(r.session).or_insert(n);
                if session_nums.len() > 100_000 {
                    session_nums.clear();
                }
                write_record(plan, &mut pj, &r, sn)?;
                let agg = if r.phase == Phase::Warmup {
                    &mut warm
                } else {
                    &mut prof
                };
                aggregate(agg, &r);
            }
            Step::Scrape { ep, t: ts, idx } => {
                let lat = w
                    .scheds
                    .iter()
                    .find(|s| s.ep == ep)
                    .map(|s| s.latency_ns(idx))
                    .unwrap_or(3_000_000);
                let (line, ctr_vals) = metrics_line(plan, &parts, &w, &groups[ep], idx, None);
                // Counter decreases (a restart) between consecutive scrapes.
                if !last_ctr[ep].is_empty()
                    && last_ctr[ep].len() == ctr_vals.len()
                    && ctr_vals.iter().zip(&last_ctr[ep]).any(|(a, b)| a < b)
                {
                    decreased[ep] = true;
                }
                last_ctr[ep] = ctr_vals;
                let dup = info[ep].fetched(ts, lat, hash(&[hash_str(&line)]));
                // The native 1.1 runner's forced phase-boundary snapshots are written even
                // when their body repeats the previous scrape: they are the phase evidence.
                let forced = plan.spec.schema == Schema::V1_1 && (ts == t.p0 || ts == t.p1);
                if !dup || forced {
                    if let Some(out) = jl.as_mut() {
                        // The altered copy first: in file order too, no value decreases.
                        if dup_ts.due(plan, ep, ts) {
                            if let Some(alt) = dup_ts.pick(plan, &w, &groups[ep], idx) {
                                let (l2, _) =
                                    metrics_line(plan, &parts, &w, &groups[ep], idx, Some(alt));
                                write_scrape(plan, out, ep, ts, &l2, lat)?;
                                dup_ts.written = true;
                            }
                        }
                        write_scrape(plan, out, ep, ts, &line, lat)?;
                        dup_ts.remember(plan, &w, &groups[ep], ep, idx);
                    }
                }
                if plan.priced.contains(&ep) {
                    let c = w.exported(ep, None, pm);
                    edges[ep].observe(plan, (ts, c.prompt, c.hits()), !dup || forced);
                }
            }
        }
    }
    let _ = Field::Zero;
    if let Some(out) = jl {
        files.push(out.finish()?);
    }
    files.push(pj.finish()?);
    Ok(Pass1 {
        info,
        prof,
        warm,
        probes: probe_out,
        edges,
        decreased,
        duplicate_timestamp: dup_ts.written,
    })
}

/// Per endpoint: (family, series ids) in series order.
type Groups = [(usize, Vec<usize>)];

/// The JSONL's families per endpoint, in series order, `_info` families removed.
fn groups_of(plan: &Plan) -> Vec<Vec<(usize, Vec<usize>)>> {
    let mut groups: Vec<Vec<(usize, Vec<usize>)>> = vec![Vec::new(); plan.endpoints.len()];
    for (sid, s) in plan.series.iter().enumerate() {
        if plan.families[s.fam].info {
            continue;
        }
        let g = &mut groups[s.ep];
        match g.iter_mut().find(|(f, _)| *f == s.fam) {
            Some((_, v)) => v.push(sid),
            None => g.push((s.fam, vec![sid])),
        }
    }
    groups
}

impl EpInfo {
    /// Count one fetch of body hash `h`; `true` when it repeats the previous update (AIPerf
    /// counts it in `total_fetches` but not as an update, and keeps it out of the JSONL).
    fn fetched(&mut self, ts: u64, lat: u64, h: u64) -> bool {
        if self.fetches == 0 {
            self.first_fetch = ts;
        }
        self.fetches += 1;
        self.last_fetch = ts;
        self.lat_sum += lat;
        let dup = self.updates > 0 && self.last_hash == h;
        if !dup {
            if self.updates == 0 {
                self.first_update = ts;
            } else {
                self.intervals.push(ts - self.last_update);
            }
            self.updates += 1;
            self.last_update = ts;
            self.last_hash = h;
        }
        dup
    }
}

impl Edges {
    /// One scrape's `(time, prompt, hits)` of a priced endpoint; `written`: in the JSONL.
    fn observe(&mut self, plan: &Plan, v: (u64, u64, u64), written: bool) {
        let t = &plan.times;
        let ts = v.0;
        let slice_ns = (plan.spec.slice_s * 1e9) as u64;
        if written {
            self.recorded.push(v);
        }
        if ts <= t.p0 {
            self.le_p0 = Some(v);
        }
        if ts >= t.p0 && self.ge_p0.is_none() {
            self.ge_p0 = Some(v);
        }
        if ts <= t.p0 + slice_ns {
            self.le_p0s = Some(v);
        }
        if ts <= t.p1 {
            self.le_p1 = Some(v);
        }
        if ts >= t.p1 && self.ge_p1.is_none() {
            self.ge_p1 = Some(v);
        }
        self.ring.push_back(v);
        if self.ring.len() > 512 {
            self.ring.pop_front();
        }
    }
}

/// What every scrape line repeats, built once per run: each series' `"labels":{...},`
/// prefix and each histogram kind's bucket keys (`"0.5":`). Formatting them per scrape was
/// most of a long run's time.
pub(crate) struct LineParts {
    labels: Vec<String>,
    le_keys: Vec<Vec<String>>,
}

impl LineParts {
    pub(crate) fn of(plan: &Plan) -> LineParts {
        let labels = plan
            .series
            .iter()
            .map(|s| {
                if s.labels.is_empty() {
                    String::new()
                } else {
                    format!("\"labels\":{},", labels_json(&s.labels))
                }
            })
            .collect();
        let le_keys = HistKind::ALL
            .iter()
            .map(|k| {
                k.le_strings()
                    .iter()
                    .map(|le| format!("{}:", jstr(le)))
                    .collect()
            })
            .collect();
        LineParts { labels, le_keys }
    }
}

/// The `metrics` object of one scrape (compact orjson) and its counter values in series
/// order; `alt` replaces one series' value (the duplicate-timestamp fault's copy).
fn metrics_line(
    plan: &Plan,
    parts: &LineParts,
    w: &Walker,
    groups: &Groups,
    idx: u32,
    alt: Option<(usize, f64)>,
) -> (String, Vec<f64>) {
    let mut line = String::with_capacity(1 << 12);
    let mut ctr_vals = Vec::new();
    let mut samples = String::new();
    line.push('{');
    let mut first_f = true;
    for (fam, sids) in groups {
        samples.clear();
        for &sid in sids {
            let s = &plan.series[sid];
            let v = match alt {
                Some((a, x)) if a == sid => Val::S(x),
                _ => w.eval(sid, s, idx),
            };
            if matches!(s.src, Src::Ctr(..) | Src::Scaled(..)) {
                if let Val::S(x) = v {
                    ctr_vals.push(x);
                }
            }
            if matches!(v, Val::Absent) {
                continue;
            }
            if !samples.is_empty() {
                samples.push(',');
            }
            sample_json(&mut samples, parts, sid, s, &v);
        }
        if samples.is_empty() {
            continue;
        }
        if !first_f {
            line.push(',');
        }
        first_f = false;
        line.push_str(&jstr(&plan.families[*fam].name));
        line.push_str(":[");
        line.push_str(&samples);
        line.push(']');
    }
    line.push('}');
    (line, ctr_vals)
}

/// Append one exported sample's JSON object to `out`.
fn sample_json(out: &mut String, parts: &LineParts, sid: usize, s: &SeriesDef, v: &Val) {
    let lab = &parts.labels[sid];
    match v {
        Val::Absent => {}
        Val::S(x) => {
            out.push('{');
            out.push_str(lab);
            out.push_str("\"value\":");
            out.push_str(&jf(*x));
            out.push('}');
        }
        Val::H { cum, sum, count } => {
            out.push('{');
            out.push_str(lab);
            out.push_str("\"buckets\":{");
            if let Src::Hist(k) = s.src {
                for (i, (key, c)) in parts.le_keys[k as usize].iter().zip(cum).enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(key);
                    out.push_str(&py_float(*c as f64));
                }
            }
            out.push_str("},\"sum\":");
            out.push_str(&jf(*sum));
            out.push_str(",\"count\":");
            out.push_str(&py_float(*count as f64));
            out.push('}');
        }
    }
}

/// One JSONL line: a scrape of endpoint `ep` at `ts`.
fn write_scrape(
    plan: &Plan,
    out: &mut Out,
    ep: usize,
    ts: u64,
    line: &str,
    lat: u64,
) -> std::io::Result<()> {
    let t = &plan.times;
    let phase = if plan.spec.schema == Schema::V1_1 {
        let p = if ts < t.w0 {
            "null"
        } else if ts < t.p0 {
            "\"warmup\""
        } else {
            "\"profiling\""
        };
        format!(",\"benchmark_phase\":{p}")
    } else {
        String::new()
    };
    writeln!(
        out,
        "{{\"endpoint_url\":{},\"timestamp_ns\":{},\"metrics\":{},\"endpoint_latency_ns\":{},\"request_sent_ns\":{},\"first_byte_ns\":{}{}}}",
        jstr(&plan.endpoints[ep].url),
        ts,
        line,
        lat,
        ts - lat,
        ts,
        phase
    )
}

/// The duplicate-timestamp fault: after the window's midpoint, the first written scrape of
/// the first priced endpoint in which a priced counter series rose by at least 2 since the
/// previous written scrape is written again with that series halfway between the two values
/// (so neither copy reads lower than its neighbours: no decrease, only a conflict).
#[derive(Default)]
struct DupTs {
    /// Last written value of each priced counter series of the first priced endpoint.
    last: BTreeMap<usize, f64>,
    written: bool,
}

impl DupTs {
    fn due(&self, plan: &Plan, ep: usize, ts: u64) -> bool {
        let t = &plan.times;
        plan.spec.has(Fault::DuplicateTimestamp)
            && !self.written
            && plan.priced.first() == Some(&ep)
            && ts >= t.p0 + (t.p1 - t.p0) / 2
            && ts <= t.p1
    }

    fn priced_counters<'a>(plan: &'a Plan, groups: &'a Groups) -> impl Iterator<Item = usize> + 'a {
        let names = priced_families(plan.spec.engine);
        groups
            .iter()
            .filter(move |(f, _)| names.contains(&plan.families[*f].name.as_str()))
            .flat_map(|(_, sids)| sids.iter().copied())
            .filter(move |&sid| matches!(plan.series[sid].src, Src::Ctr(..)))
    }

    fn pick(&self, plan: &Plan, w: &Walker, groups: &Groups, idx: u32) -> Option<(usize, f64)> {
        Self::priced_counters(plan, groups).find_map(|sid| {
            let Val::S(v) = w.eval(sid, &plan.series[sid], idx) else {
                return None;
            };
            let prev = self.last.get(&sid).copied().unwrap_or(0.0);
            (v - prev >= 2.0).then(|| (sid, prev + ((v - prev) / 2.0).floor()))
        })
    }

    fn remember(&mut self, plan: &Plan, w: &Walker, groups: &Groups, ep: usize, idx: u32) {
        if !plan.spec.has(Fault::DuplicateTimestamp) || plan.priced.first() != Some(&ep) {
            return;
        }
        for sid in Self::priced_counters(plan, groups) {
            if let Val::S(v) = w.eval(sid, &plan.series[sid], idx) {
                self.last.insert(sid, v);
            }
        }
    }
}

fn hash_str(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.as_bytes() {
        h ^= *b as u64;
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    h
}

fn aggregate(a: &mut PhaseAgg, r: &ReqRecord) {
    a.records += 1;
    if a.min_start == 0 || r.start < a.min_start {
        a.min_start = r.start;
    }
    a.max_end = a.max_end.max(r.end);
    if r.error {
        a.errors += 1;
        *a.errors_by
            .entry((
                500,
                "InternalServerError".into(),
                "Internal Server Error".into(),
            ))
            .or_default() += 1;
        return;
    }
    if r.cancelled {
        a.cancelled += 1;
        a.errors += 1;
        *a.errors_by
            .entry((
                499,
                "RequestCancellationError".into(),
                "Request was cancelled".into(),
            ))
            .or_default() += 1;
        return;
    }
    a.ok += 1;
    a.client_prompt += r.isl as u64;
    a.total_osl += r.osl as u64;
    a.isl.push(r.isl as f64);
    a.osl.push(r.osl as f64);
    let lat = (r.end - r.start) as f64 / 1e6;
    let ttft = (r.ack - r.start) as f64 / 1e6;
    a.lat_ms.push(lat);
    a.ttft_ms.push(ttft);
    if r.osl > 1 {
        a.itl_ms.push((lat - ttft) / (r.osl - 1) as f64);
    }
    a.theory_blocks += r.theory_blocks as u64;
    a.theory_hit += r.theory_hit_blocks as u64;
}

fn write_record(
    plan: &Plan,
    out: &mut Out,
    r: &ReqRecord,
    session_num: u64,
) -> std::io::Result<()> {
    let mut rng = Rng::new(plan.spec.seed, hash(&[r.session, r.turn as u64, 31]));
    let xid = rng.uuid();
    let corr = Rng::new(plan.spec.seed, hash(&[r.session, 32])).uuid();
    let worker = format!(
        "worker_{:08x}",
        hash(&[plan.spec.seed, r.lane as u64 % 4]) & 0xffff_ffff
    );
    let proc_id = format!(
        "record_processor_{:08x}",
        hash(&[plan.spec.seed, r.lane as u64 % 2, 9]) & 0xffff_ffff
    );
    let phase = if r.phase == Phase::Warmup {
        "warmup"
    } else {
        "profiling"
    };
    let mut meta = format!(
        "{{\"session_num\":{},\"x_request_id\":{},\"x_correlation_id\":{},\"conversation_id\":\"{:016x}\",\"turn_index\":{},\"credit_issued_ns\":{},\"request_start_ns\":{},",
        session_num,
        jstr(&xid),
        jstr(&corr),
        r.session,
        r.turn,
        r.start - 1_000_000,
        r.start
    );
    if !r.error {
        meta.push_str(&format!("\"request_ack_ns\":{},", r.ack));
    }
    meta.push_str(&format!(
        "\"request_end_ns\":{},\"worker_id\":{},\"record_processor_id\":{},\"benchmark_phase\":\"{}\",\"was_cancelled\":{}",
        r.end,
        jstr(&worker),
        jstr(&proc_id),
        phase,
        r.cancelled
    ));
    if r.cancelled {
        meta.push_str(&format!(",\"cancellation_time_ns\":{}", r.end));
    }
    meta.push('}');
    let m = |tag: &str, v: String, unit: &str| {
        format!("{}:{{\"value\":{},\"unit\":{}}}", jstr(tag), v, jstr(unit))
    };
    let metrics: Vec<String> = if r.error || r.cancelled {
        vec![m("error_isl", r.isl.to_string(), "tokens")]
    } else {
        let lat = (r.end - r.start) as f64 / 1e6;
        let ttft = (r.ack - r.start) as f64 / 1e6;
        let mut v = vec![
            m("request_latency", py_float(lat), "ms"),
            m("time_to_first_token", py_float(ttft), "ms"),
        ];
        if r.osl > 1 {
            v.push(m(
                "inter_token_latency",
                py_float((lat - ttft) / (r.osl - 1) as f64),
                "ms",
            ));
        }
        v.push(m("output_sequence_length", r.osl.to_string(), "tokens"));
        v.push(m("input_sequence_length", r.isl.to_string(), "tokens"));
        v.push(m("usage_prompt_tokens", r.isl.to_string(), "tokens"));
        v.push(m("usage_completion_tokens", r.osl.to_string(), "tokens"));
        v.push(m(
            "usage_total_tokens",
            (r.isl + r.osl).to_string(),
            "tokens",
        ));
        v
    };
    let err = if r.error {
        ",\"error\":{\"code\":500,\"type\":\"InternalServerError\",\"message\":\"Internal Server Error\"}"
    } else if r.cancelled {
        ",\"error\":{\"code\":499,\"type\":\"RequestCancellationError\",\"message\":\"Request was cancelled\"}"
    } else {
        ""
    };
    writeln!(
        out,
        "{{\"metadata\":{},\"metrics\":{{{}}}{}}}",
        meta,
        metrics.join(","),
        err
    )
}
