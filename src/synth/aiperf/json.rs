//! `server_metrics_export.json`, schema 1.1 (`metrics_phase`, `warmup_metrics`,
//! `phase_time_ranges`) or 1.0, as orjson writes it (2-space indent, no trailing newline,
//! families sorted by name, series by endpoint then Python `str(labels)`, nulls omitted).
//!
//! Semantics follow AIPerf 0.7.0 as observed (`research/aiperf.md` section 6) for both
//! schemas: a counter's total is the last in-window value minus the last value strictly
//! before the window start (else the first in-window value), clamped at 0; timeslices are a
//! grid from the window start, each boundary valued at the last sample at or before it, the
//! last slice clipped and marked `is_complete: false`; the window end per endpoint is the
//! later of the profiling end and the endpoint's last changed scrape. Simplification: the
//! native 1.1 runner's forced boundary snapshots are not modelled (its warmup export ends at
//! the last warmup-range sample), so 1.1 shows the same straddles 1.0 does; slices before a
//! series' first sample are dropped in both schemas; histogram percentile estimates are
//! linear within buckets (not AIPerf's polynomial estimator).

use super::jsonl::Pass1;
use super::Shown;
use crate::model::MetricType;
use crate::synth::engines::priced_families;
use crate::synth::faults::Fault;
use crate::synth::fmt::{f4, iso_local, jstr, py_dict_str, Pretty};
use crate::synth::out::{rel, Out, Sink};
use crate::synth::plan::Plan;
use crate::synth::scrape::{Step, Val, Walker};
use crate::synth::series::Src;
use crate::synth::spec::{Schema, SynthError};
use std::io::{self, Write};

/// One CSV row (profiling stats), gathered while the JSON is written.
#[derive(Debug, Clone)]
pub struct CsvRow {
    pub mtype: MetricType,
    pub info: bool,
    pub display: String,
    pub metric: String,
    pub unit: String,
    pub stats: Vec<(&'static str, String)>,
    pub labels: Vec<(String, String)>,
    pub desc: String,
    pub buckets: String,
}

enum Samples {
    S(Vec<(u64, f64)>),
    H {
        t: Vec<u64>,
        count: Vec<u64>,
        sum: Vec<f64>,
        cum: Vec<u64>,
        nb: usize,
    },
}

struct Window {
    ws: u64,
    we: u64,
    slice: u64,
    schema: Schema,
    /// Native writer: non-finite gauge samples dropped.
    native: bool,
}

fn grid(w: &Window) -> Vec<(u64, u64, bool)> {
    let mut out = Vec::new();
    if w.we <= w.ws {
        return out;
    }
    let mut s = w.ws;
    while s < w.we {
        let e = (s + w.slice).min(w.we);
        out.push((s, e, e - s == w.slice));
        s += w.slice;
    }
    out
}

fn at_or_before(ts: &[u64], b: u64) -> Option<usize> {
    let n = ts.partition_point(|t| *t <= b);
    n.checked_sub(1)
}

fn pctl(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    if n == 1 {
        return sorted[0];
    }
    let r = q / 100.0 * (n - 1) as f64;
    let lo = r.floor() as usize;
    let hi = (lo + 1).min(n - 1);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (r - lo as f64)
}

fn mean_std(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    if v.len() < 2 {
        return (m, 0.0);
    }
    let var = v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
    (m, var.sqrt())
}

const PCTS: [(&str, f64); 9] = [
    ("p1", 1.0),
    ("p5", 5.0),
    ("p10", 10.0),
    ("p25", 25.0),
    ("p50", 50.0),
    ("p75", 75.0),
    ("p90", 90.0),
    ("p95", 95.0),
    ("p99", 99.0),
];

/// Stat fields in order; `None` = NaN (written as null by the 1.0 writer, omitted by 1.1).
type StatList = Vec<(&'static str, Option<f64>)>;

struct SliceOut {
    s: u64,
    e: u64,
    complete: bool,
    fields: Vec<(&'static str, f64)>,
    buckets: Option<Vec<(String, u64)>>,
}

struct SeriesOut {
    stats: StatList,
    /// Stats only the CSV carries (counter `rate_*` in 1.1 runs).
    csv_extra: StatList,
    int_fields: Vec<&'static str>,
    buckets: Option<Vec<(String, u64)>>,
    slices: Vec<SliceOut>,
}

fn counter_out(v: &[(u64, f64)], w: &Window) -> Option<SeriesOut> {
    let ts: Vec<u64> = v.iter().map(|x| x.0).collect();
    let last = at_or_before(&ts, w.we)?;
    if ts[last] < w.ws {
        return None;
    }
    let refi = match ts.partition_point(|t| *t < w.ws).checked_sub(1) {
        Some(i) => i,
        None => ts.partition_point(|t| *t < w.ws),
    };
    let total = (v[last].1 - v[refi].1).max(0.0);
    let dt = (ts[last] - ts[refi]) as f64 / 1e9;
    let rate = if dt > 0.0 { total / dt } else { 0.0 };
    let mut slices = Vec::new();
    for (s, e, complete) in grid(w) {
        let (Some(a), Some(b)) = (at_or_before(&ts, s), at_or_before(&ts, e)) else {
            continue;
        };
        let tot = (v[b].1 - v[a].1).max(0.0);
        slices.push(SliceOut {
            s,
            e,
            complete,
            fields: vec![("total", tot), ("rate", tot / ((e - s) as f64 / 1e9))],
            buckets: None,
        });
    }
    let rates: Vec<f64> = slices
        .iter()
        .filter(|s| s.complete)
        .map(|s| s.fields[1].1)
        .collect();
    let mut extra: StatList = Vec::new();
    if !rates.is_empty() {
        let (m, sd) = mean_std(&rates);
        extra.push(("rate_avg", Some(m)));
        extra.push((
            "rate_min",
            Some(rates.iter().cloned().fold(f64::INFINITY, f64::min)),
        ));
        extra.push((
            "rate_max",
            Some(rates.iter().cloned().fold(f64::NEG_INFINITY, f64::max)),
        ));
        if rates.len() >= 2 {
            extra.push(("rate_std", Some(sd)));
        }
    }
    let mut stats: StatList = vec![("total", Some(total)), ("rate", Some(rate))];
    let mut csv_extra = Vec::new();
    if w.schema == Schema::V1_0 {
        stats.extend(extra);
    } else {
        csv_extra = extra;
    }
    Some(SeriesOut {
        stats,
        csv_extra,
        int_fields: vec![],
        buckets: None,
        slices,
    })
}

fn gauge_out(v: &[(u64, f64)], w: &Window) -> Option<SeriesOut> {
    let inw: Vec<(u64, f64)> = v
        .iter()
        .filter(|(t, x)| *t >= w.ws && *t <= w.we && (!w.native || x.is_finite()))
        .cloned()
        .collect();
    if inw.is_empty() {
        return None;
    }
    let vals: Vec<f64> = inw.iter().map(|x| x.1).collect();
    let stats: StatList = if vals.iter().any(|x| !x.is_finite()) {
        ["avg", "min", "max", "std"]
            .iter()
            .chain(PCTS.iter().map(|p| &p.0))
            .map(|k| (*k, None))
            .collect()
    } else {
        let mut sorted = vals.clone();
        sorted.sort_by(|a, b| a.total_cmp(b));
        let (m, sd) = mean_std(&vals);
        let mut st: StatList = vec![
            ("avg", Some(m)),
            ("min", Some(sorted[0])),
            ("max", Some(sorted[sorted.len() - 1])),
            ("std", Some(sd)),
        ];
        for (k, q) in PCTS {
            st.push((k, Some(pctl(&sorted, q))));
        }
        st
    };
    let mut slices = Vec::new();
    if inw.len() >= 2 {
        let g = grid(w);
        let n = g.len();
        for (i, (s, e, complete)) in g.into_iter().enumerate() {
            // Samples are in scrape order, so a slice's samples are one run of them: found by
            // bisection, not by a scan of every sample per slice (quadratic in the duration).
            let from = inw.partition_point(|(t, _)| *t < s);
            let to = if i + 1 == n {
                inw.partition_point(|(t, _)| *t <= e)
            } else {
                inw.partition_point(|(t, _)| *t < e)
            };
            let xs: Vec<f64> = inw[from..to.max(from)].iter().map(|x| x.1).collect();
            if xs.is_empty() {
                continue;
            }
            let avg = xs.iter().sum::<f64>() / xs.len() as f64;
            let mn = xs.iter().cloned().fold(f64::INFINITY, f64::min);
            let mx = xs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            slices.push(SliceOut {
                s,
                e,
                complete,
                fields: vec![("avg", avg), ("min", mn), ("max", mx)],
                buckets: None,
            });
        }
    }
    Some(SeriesOut {
        stats,
        csv_extra: vec![],
        int_fields: vec![],
        buckets: None,
        slices,
    })
}

fn hist_pct(bounds: &[f64], deltas: &[u64], count: u64, q: f64) -> f64 {
    let target = q / 100.0 * count as f64;
    let mut acc = 0.0;
    for (i, d) in deltas.iter().enumerate() {
        let d = *d as f64;
        if d > 0.0 && acc + d >= target {
            let lb = if i == 0 { 0.0 } else { bounds[i - 1] };
            let ub = if i < bounds.len() { bounds[i] } else { lb };
            return lb + (ub - lb) * ((target - acc) / d).clamp(0.0, 1.0);
        }
        acc += d;
    }
    bounds.last().copied().unwrap_or(0.0)
}

#[allow(clippy::too_many_arguments)]
fn hist_out(
    t: &[u64],
    count: &[u64],
    sum: &[f64],
    cum: &[u64],
    nb: usize,
    les: &[String],
    bounds: &[f64],
    w: &Window,
) -> Option<SeriesOut> {
    let last = at_or_before(t, w.we)?;
    if t[last] < w.ws {
        return None;
    }
    let refi = match t.partition_point(|x| *x < w.ws).checked_sub(1) {
        Some(i) => i,
        None => t.partition_point(|x| *x < w.ws),
    };
    let row = |i: usize| &cum[i * nb..(i + 1) * nb];
    let diff = |a: usize, b: usize| -> Option<Vec<(String, u64)>> {
        let (ra, rb) = (row(a), row(b));
        let mut out = Vec::with_capacity(nb);
        for k in 0..nb {
            if rb[k] < ra[k] {
                return None;
            }
            out.push((les[k].clone(), rb[k] - ra[k]));
        }
        Some(out)
    };
    let c = count[last].saturating_sub(count[refi]);
    let sm = (sum[last] - sum[refi]).max(0.0);
    let dt = (t[last] - t[refi]) as f64 / 1e9;
    let buckets = diff(refi, last);
    let stats: StatList = if c == 0 {
        vec![("count", Some(0.0))]
    } else {
        let mut st: StatList = vec![
            ("count", Some(c as f64)),
            ("sum", Some(sm)),
            ("avg", Some(sm / c as f64)),
            (
                "count_rate",
                Some(if dt > 0.0 { c as f64 / dt } else { 0.0 }),
            ),
            ("sum_rate", Some(if dt > 0.0 { sm / dt } else { 0.0 })),
        ];
        if let Some(b) = &buckets {
            let cumd: Vec<u64> = b.iter().map(|x| x.1).collect();
            let mut deltas = Vec::with_capacity(nb);
            let mut prev = 0;
            for x in &cumd {
                deltas.push(x.saturating_sub(prev));
                prev = *x;
            }
            for (k, q) in PCTS {
                let name: &'static str = match k {
                    "p1" => "p1_estimate",
                    "p5" => "p5_estimate",
                    "p10" => "p10_estimate",
                    "p25" => "p25_estimate",
                    "p50" => "p50_estimate",
                    "p75" => "p75_estimate",
                    "p90" => "p90_estimate",
                    "p95" => "p95_estimate",
                    _ => "p99_estimate",
                };
                st.push((name, Some(hist_pct(bounds, &deltas, c, q))));
            }
        }
        st
    };
    let mut slices = Vec::new();
    for (s, e, complete) in grid(w) {
        let (Some(a), Some(b)) = (at_or_before(t, s), at_or_before(t, e)) else {
            continue;
        };
        if count[b] < count[a] || sum[b] < sum[a] {
            continue;
        }
        let cc = count[b] - count[a];
        let ss = sum[b] - sum[a];
        let mut fields = vec![("count", cc as f64), ("sum", ss)];
        if cc > 0 {
            fields.push(("avg", ss / cc as f64));
        }
        slices.push(SliceOut {
            s,
            e,
            complete,
            fields,
            buckets: diff(a, b),
        });
    }
    Some(SeriesOut {
        stats,
        csv_extra: vec![],
        int_fields: vec!["count"],
        buckets,
        slices,
    })
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// The family the duplicate-family faults write twice: the first priced family in export
/// order with a scraped series, else the first family with one.
fn duplicate_target(plan: &Plan) -> Option<usize> {
    let s = &plan.spec;
    if !(s.has(Fault::DuplicateFamily) || s.has(Fault::DuplicateFamilyConflict)) {
        return None;
    }
    let scraped = |fi: usize| {
        plan.series
            .iter()
            .any(|x| x.fam == fi && plan.endpoints[x.ep].scraped)
    };
    let priced = priced_families(s.engine);
    let order = &plan.family_order;
    order
        .iter()
        .copied()
        .find(|&fi| scraped(fi) && priced.contains(&plan.families[fi].name.as_str()))
        .or_else(|| order.iter().copied().find(|&fi| scraped(fi)))
}

/// Change the first stat of the first series (the conflicting duplicate's content).
fn bump_first(series: &mut [(usize, SeriesOut)]) {
    if let Some((_, o)) = series.first_mut() {
        if let Some((_, Some(v))) = o.stats.iter_mut().find(|(_, v)| v.is_some()) {
            *v += 1000.0;
        }
    }
}

/// Write the JSON export (to `sink`, or only counted when the spec writes no JSON: the CSV
/// rows are still gathered here). Returns the CSV rows and what the faults made visible.
pub fn write(
    plan: &Plan,
    sink: &Sink,
    p1: &Pass1,
    files: &mut Vec<(String, u64)>,
) -> Result<(Vec<CsvRow>, Shown), SynthError> {
    let mut shown = Shown::default();
    let dup_target = duplicate_target(plan);
    let sink = if plan.spec.json { sink } else { &Sink::Count };
    let out = Out::open(sink, &rel("server_metrics_export.json"))?;
    let mut p = Pretty::new(out);
    let v11 = plan.spec.schema == Schema::V1_1;
    p.obj()?;
    p.kv_str("schema_version", if v11 { "1.1" } else { "1.0" })?;
    p.kv_str("aiperf_version", if v11 { "0.12.0" } else { "0.7.0" })?;
    p.kv_str("benchmark_id", &plan.benchmark_id)?;
    write_summary(&mut p, plan, p1)?;
    if v11 {
        p.kv_str("metrics_phase", "profiling")?;
    }
    p.key("metrics")?;
    p.obj()?;
    let mut warm = Pretty::nested(Vec::<u8>::new(), 2);
    let mut warm_any = false;
    warm.mark_items();
    let mut rows = Vec::new();
    for &fi in &plan.family_order {
        let (mut prof_series, warm_series) = family_outputs(plan, p1, fi, &mut rows, &mut shown);
        if !prof_series.is_empty() {
            write_family(&mut p, plan, fi, &prof_series, v11)?;
            if dup_target == Some(fi) {
                if plan.spec.has(Fault::DuplicateFamilyConflict) {
                    bump_first(&mut prof_series);
                }
                write_family(&mut p, plan, fi, &prof_series, v11)?;
                shown.duplicate_family = true;
            }
        }
        if !warm_series.is_empty() {
            warm_any = true;
            write_family(&mut warm, plan, fi, &warm_series, v11)?;
        }
    }
    p.end_obj()?;
    if v11 && warm_any {
        p.key("warmup_metrics")?;
        p.obj()?;
        // Splice the buffered warmup families (written at the same depth).
        let buf = std::mem::take(&mut warm.w);
        let text = String::from_utf8_lossy(&buf);
        p.w.write_all(text.trim_start_matches(',').as_bytes())?;
        p.mark_items();
        p.end_obj()?;
    }
    write_input_config(&mut p, plan)?;
    p.end_obj()?;
    let written = p.w.finish()?;
    if plan.spec.json {
        files.push(written);
    }
    Ok((rows, shown))
}

/// The `summary` object: endpoints, their fetch statistics, the 1.1 phase ranges.
fn write_summary<W: Write>(p: &mut Pretty<W>, plan: &Plan, p1: &Pass1) -> io::Result<()> {
    let t = &plan.times;
    p.key("summary")?;
    p.obj()?;
    p.key("endpoints_configured")?;
    p.arr()?;
    for e in &plan.endpoints {
        p.raw(&jstr(&e.url))?;
    }
    p.end_arr()?;
    p.key("endpoints_successful")?;
    p.arr()?;
    for e in plan.endpoints.iter().filter(|e| e.scraped) {
        p.raw(&jstr(&e.url))?;
    }
    p.end_arr()?;
    p.kv_str("start_time", &iso_local(t.p0))?;
    p.kv_str("end_time", &iso_local(t.p1))?;
    write_endpoint_info(p, plan, p1)?;
    if plan.spec.schema == Schema::V1_1 {
        p.key("phase_time_ranges")?;
        p.obj()?;
        p.key("profiling")?;
        p.obj()?;
        p.kv_raw("start_ns", &t.p0.to_string())?;
        p.kv_raw("end_ns", &t.p1.to_string())?;
        p.end_obj()?;
        if t.p0 > t.w0 + 1 && plan.spec.warmup_per_lane > 0 {
            p.key("warmup")?;
            p.obj()?;
            p.kv_raw("start_ns", &t.w0.to_string())?;
            p.kv_raw("end_ns", &(t.p0 - 1).to_string())?;
            p.end_obj()?;
        }
        p.end_obj()?;
    }
    p.end_obj()
}

fn write_endpoint_info<W: Write>(p: &mut Pretty<W>, plan: &Plan, p1: &Pass1) -> io::Result<()> {
    p.key("endpoint_info")?;
    p.obj()?;
    let mut urls: Vec<usize> = (0..plan.endpoints.len())
        .filter(|&e| plan.endpoints[e].scraped && p1.info[e].fetches > 0)
        .collect();
    urls.sort_by(|a, b| plan.endpoints[*a].url.cmp(&plan.endpoints[*b].url));
    for &e in &urls {
        let i = &p1.info[e];
        p.key(&plan.endpoints[e].url)?;
        p.obj()?;
        p.kv_raw("total_fetches", &i.fetches.to_string())?;
        p.kv_raw("first_fetch_ns", &i.first_fetch.to_string())?;
        p.kv_raw("last_fetch_ns", &i.last_fetch.to_string())?;
        p.kv_f(
            "avg_fetch_latency_ms",
            round2(i.lat_sum as f64 / i.fetches as f64 / 1e6),
        )?;
        p.kv_raw("unique_updates", &i.updates.to_string())?;
        p.kv_raw("first_update_ns", &i.first_update.to_string())?;
        p.kv_raw("last_update_ns", &i.last_update.to_string())?;
        let dur = (i.last_fetch - i.first_fetch) as f64 / 1e9;
        p.kv_f("duration_seconds", round2(dur))?;
        if i.updates >= 2 {
            p.kv_f(
                "avg_update_interval_ms",
                round2((i.last_update - i.first_update) as f64 / (i.updates - 1) as f64 / 1e6),
            )?;
        }
        if i.intervals.len() >= 2 {
            let mut iv: Vec<f64> = i.intervals.iter().map(|x| *x as f64 / 1e6).collect();
            iv.sort_by(|a, b| a.total_cmp(b));
            p.kv_f("median_update_interval_ms", round2(pctl(&iv, 50.0)))?;
        }
        p.end_obj()?;
    }
    p.end_obj()
}

fn write_input_config<W: Write>(p: &mut Pretty<W>, plan: &Plan) -> io::Result<()> {
    p.key("input_config")?;
    p.obj()?;
    p.key("endpoint")?;
    p.obj()?;
    p.key("model_names")?;
    p.arr()?;
    p.raw(&jstr(&plan.model))?;
    p.end_arr()?;
    p.kv_raw("streaming", "true")?;
    p.end_obj()?;
    p.key("server_metrics")?;
    p.arr()?;
    for e in &plan.endpoints {
        p.raw(&jstr(&e.url))?;
    }
    p.end_arr()?;
    p.kv_f("slice_duration", plan.spec.slice_s)?;
    p.end_obj()
}

/// The scraped series of family `fi` in export order (endpoint, then Python `str(labels)`)
/// and their samples, from a walk of the run as the exporter sees it.
fn family_samples(plan: &Plan, fi: usize) -> (Vec<usize>, Vec<Samples>) {
    let mut sids: Vec<usize> = (0..plan.series.len())
        .filter(|&s| plan.series[s].fam == fi && plan.endpoints[plan.series[s].ep].scraped)
        .collect();
    if sids.is_empty() {
        return (sids, Vec::new());
    }
    sids.sort_by(|a, b| {
        let (x, y) = (&plan.series[*a], &plan.series[*b]);
        (&plan.endpoints[x.ep].url, py_dict_str(&x.labels))
            .cmp(&(&plan.endpoints[y.ep].url, py_dict_str(&y.labels)))
    });
    let mut eps: Vec<usize> = sids.iter().map(|s| plan.series[*s].ep).collect();
    eps.sort_unstable();
    eps.dedup();
    let mut samples: Vec<Samples> = sids
        .iter()
        .map(|s| match plan.series[*s].src {
            Src::Hist(k) => Samples::H {
                t: vec![],
                count: vec![],
                sum: vec![],
                cum: vec![],
                nb: k.bounds().len() + 1,
            },
            _ => Samples::S(Vec::new()),
        })
        .collect();
    let mut w = Walker::new(plan, &eps, false, vec![]);
    w.export_view = true;
    while let Some(step) = w.next() {
        let Step::Scrape { ep, t: ts, idx } = step else {
            continue;
        };
        for (j, &sid) in sids.iter().enumerate() {
            let s = &plan.series[sid];
            if s.ep != ep {
                continue;
            }
            match (w.eval(sid, s, idx), &mut samples[j]) {
                (Val::S(x), Samples::S(v)) => v.push((ts, x)),
                (
                    Val::H { cum: c, sum, count },
                    Samples::H {
                        t,
                        count: cn,
                        sum: sm,
                        cum,
                        ..
                    },
                ) => {
                    t.push(ts);
                    cn.push(count);
                    sm.push(sum);
                    cum.extend_from_slice(&c);
                }
                _ => {}
            }
        }
    }
    (sids, samples)
}

/// The profiling and (1.1) warmup outputs of family `fi`'s series; the profiling ones also
/// become CSV rows.
fn family_outputs(
    plan: &Plan,
    p1: &Pass1,
    fi: usize,
    rows: &mut Vec<CsvRow>,
    shown: &mut Shown,
) -> (Vec<(usize, SeriesOut)>, Vec<(usize, SeriesOut)>) {
    let fam = &plan.families[fi];
    let t = &plan.times;
    let v11 = plan.spec.schema == Schema::V1_1;
    let slice = (plan.spec.slice_s * 1e9) as u64;
    let (sids, samples) = family_samples(plan, fi);
    let mut prof_series = Vec::new();
    let mut warm_series = Vec::new();
    for (j, &sid) in sids.iter().enumerate() {
        let s = &plan.series[sid];
        let win = |ws: u64, we: u64| Window {
            ws,
            we,
            slice,
            schema: plan.spec.schema,
            native: v11,
        };
        let wp = win(t.p0, t.p1.max(p1.info[s.ep].last_update));
        let ww = win(t.w0, t.p0 - 1);
        let run = |win: &Window| -> Option<SeriesOut> {
            match (&samples[j], fam.mtype) {
                (Samples::S(v), MetricType::Counter) => counter_out(v, win),
                (Samples::S(v), _) => gauge_out(v, win),
                (
                    Samples::H {
                        t,
                        count,
                        sum,
                        cum,
                        nb,
                    },
                    _,
                ) => {
                    let Src::Hist(k) = s.src else { return None };
                    hist_out(t, count, sum, cum, *nb, &k.le_strings(), k.bounds(), win)
                }
            }
        };
        if let Some(o) = run(&wp) {
            let (row, halved) = csv_row(plan, sid, &o);
            shown.csv_disagrees |= halved;
            rows.push(row);
            prof_series.push((sid, o));
        }
        if v11 && plan.spec.warmup_per_lane > 0 {
            if let Some(o) = run(&ww) {
                warm_series.push((sid, o));
            }
        }
    }
    (prof_series, warm_series)
}

fn write_family<W: Write>(
    p: &mut Pretty<W>,
    plan: &Plan,
    fi: usize,
    series: &[(usize, SeriesOut)],
    v11: bool,
) -> io::Result<()> {
    let fam = &plan.families[fi];
    p.key(&fam.name)?;
    p.obj()?;
    p.kv_str("type", fam.mtype.as_str())?;
    p.kv_str("description", &fam.desc)?;
    if let Some(u) = &fam.unit {
        p.kv_str("unit", u)?;
    }
    p.key("series")?;
    p.arr()?;
    for (sid, o) in series {
        let s = &plan.series[*sid];
        p.obj()?;
        p.kv_str("endpoint_url", &plan.endpoints[s.ep].url)?;
        if !s.labels.is_empty() {
            p.key("labels")?;
            p.obj()?;
            for (k, v) in &s.labels {
                p.kv_str(k, v)?;
            }
            p.end_obj()?;
        }
        p.key("stats")?;
        p.obj()?;
        for (k, v) in &o.stats {
            match v {
                Some(x) if o.int_fields.contains(k) => p.kv_raw(k, &(*x as u64).to_string())?,
                Some(x) if x.is_finite() => p.kv_f(k, *x)?,
                _ if !v11 => p.kv_raw(k, "null")?,
                _ => {}
            }
        }
        p.end_obj()?;
        if let Some(b) = &o.buckets {
            p.key("buckets")?;
            p.obj()?;
            for (le, c) in b {
                p.kv_raw(le, &c.to_string())?;
            }
            p.end_obj()?;
        }
        if !o.slices.is_empty() {
            p.key("timeslices")?;
            p.arr()?;
            for sl in &o.slices {
                p.obj()?;
                p.kv_raw("start_ns", &sl.s.to_string())?;
                p.kv_raw("end_ns", &sl.e.to_string())?;
                if !sl.complete {
                    p.kv_raw("is_complete", "false")?;
                }
                for (k, v) in &sl.fields {
                    if o.int_fields.contains(k) {
                        p.kv_raw(k, &(*v as u64).to_string())?;
                    } else if v.is_finite() {
                        p.kv_f(k, *v)?;
                    } else if !v11 {
                        p.kv_raw(k, "null")?;
                    }
                }
                if let Some(b) = &sl.buckets {
                    p.key("buckets")?;
                    p.obj()?;
                    for (le, c) in b {
                        p.kv_raw(le, &c.to_string())?;
                    }
                    p.end_obj()?;
                }
                p.end_obj()?;
            }
            p.end_arr()?;
        }
        p.end_obj()?;
    }
    p.end_arr()?;
    p.end_obj()
}

/// One CSV row; `true` when the csv-json-disagree fault halved a non-zero priced total.
fn csv_row(plan: &Plan, sid: usize, o: &SeriesOut) -> (CsvRow, bool) {
    let s = &plan.series[sid];
    let fam = &plan.families[s.fam];
    let halve = plan.spec.has(Fault::CsvJsonDisagree)
        && plan.priced.first() == Some(&s.ep)
        && fam.mtype == MetricType::Counter
        && priced_families(plan.spec.engine).contains(&fam.name.as_str());
    let mut halved = false;
    let mut stats: Vec<(&'static str, String)> = Vec::new();
    for (k, v) in o.stats.iter().chain(o.csv_extra.iter()) {
        let cell = match v {
            Some(x) if o.int_fields.contains(k) => (*x as u64).to_string(),
            Some(x) if halve && matches!(*k, "total" | "rate") => {
                halved |= *k == "total" && *x >= 2.0;
                f4(if *k == "total" {
                    (*x / 2.0).floor()
                } else {
                    *x / 2.0
                })
            }
            Some(x) => f4(*x),
            None => String::new(),
        };
        stats.push((k, cell));
    }
    let buckets = o
        .buckets
        .as_ref()
        .map(|b| {
            b.iter()
                .map(|(le, c)| format!("{le}={c}"))
                .collect::<Vec<_>>()
                .join(";")
        })
        .unwrap_or_default();
    let row = CsvRow {
        mtype: fam.mtype,
        info: fam.info,
        display: plan.endpoints[s.ep].display.clone(),
        metric: fam.name.clone(),
        unit: fam.unit.clone().unwrap_or_default(),
        stats,
        labels: s.labels.clone(),
        desc: fam.desc.clone(),
        buckets,
    };
    (row, halved)
}
