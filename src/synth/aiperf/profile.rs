//! `profile_export_aiperf.json`: the run summary (profiling-only top-level metrics; the fork's
//! `warmup_metrics` block when the server export is schema 1.1), with
//! `theoretical_prefix_cache_hit` (`%`, `count` = prompt blocks of 64 tokens, `sum` = blocks a
//! prefix cache of infinite size would hit). Epoch-ns timestamps are exact integers.
//! Memory: per-request latencies and lengths of the profiling phase are held for the
//! percentiles (the only state that grows with the run).

use super::jsonl::{Pass1, PhaseAgg};
use crate::synth::fmt::{iso_local, jstr, py_float, Pretty};
use crate::synth::out::{rel, Out, Sink};
use crate::synth::plan::Plan;
use crate::synth::spec::Schema;
use std::io;

fn pct_block<W: io::Write>(p: &mut Pretty<W>, tag: &str, unit: &str, v: &[f64]) -> io::Result<()> {
    if v.is_empty() {
        return Ok(());
    }
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len() as f64;
    let avg = s.iter().sum::<f64>() / n;
    let std = (s.iter().map(|x| (x - avg) * (x - avg)).sum::<f64>() / n).sqrt();
    let q = |q: f64| {
        let r = q / 100.0 * (s.len() - 1) as f64;
        let lo = r.floor() as usize;
        let hi = (lo + 1).min(s.len() - 1);
        s[lo] + (s[hi] - s[lo]) * (r - lo as f64)
    };
    p.key(tag)?;
    p.obj()?;
    p.kv_str("unit", unit)?;
    p.kv_f("avg", avg)?;
    for (k, x) in [
        ("p1", 1.0),
        ("p5", 5.0),
        ("p10", 10.0),
        ("p25", 25.0),
        ("p50", 50.0),
        ("p75", 75.0),
        ("p90", 90.0),
        ("p95", 95.0),
        ("p99", 99.0),
    ] {
        p.kv_f(k, q(x))?;
    }
    p.kv_f("min", s[0])?;
    p.kv_f("max", s[s.len() - 1])?;
    p.kv_f("std", std)?;
    p.end_obj()
}

fn scalar<W: io::Write>(p: &mut Pretty<W>, tag: &str, unit: &str, v: &str) -> io::Result<()> {
    p.key(tag)?;
    p.obj()?;
    p.kv_str("unit", unit)?;
    p.kv_raw("avg", v)?;
    p.end_obj()
}

fn metrics<W: io::Write>(p: &mut Pretty<W>, a: &PhaseAgg, full: bool) -> io::Result<()> {
    let dur = a.max_end.saturating_sub(a.min_start) as f64 / 1e9;
    if full && dur > 0.0 {
        scalar(
            p,
            "request_throughput",
            "requests/sec",
            &py_float(a.ok as f64 / dur),
        )?;
    }
    pct_block(p, "request_latency", "ms", &a.lat_ms)?;
    scalar(p, "request_count", "requests", &py_float(a.ok as f64))?;
    pct_block(p, "time_to_first_token", "ms", &a.ttft_ms)?;
    pct_block(p, "inter_token_latency", "ms", &a.itl_ms)?;
    if full && dur > 0.0 {
        scalar(
            p,
            "output_token_throughput",
            "tokens/sec",
            &py_float(a.total_osl as f64 / dur),
        )?;
    }
    pct_block(p, "output_sequence_length", "tokens", &a.osl)?;
    pct_block(p, "input_sequence_length", "tokens", &a.isl)?;
    if full && a.records > 0 {
        scalar(p, "min_request_timestamp", "ns", &a.min_start.to_string())?;
        scalar(p, "max_response_timestamp", "ns", &a.max_end.to_string())?;
        scalar(
            p,
            "total_output_tokens",
            "tokens",
            &py_float(a.total_osl as f64),
        )?;
        scalar(p, "benchmark_duration", "sec", &py_float(dur))?;
        scalar(p, "total_isl", "tokens", &py_float(a.client_prompt as f64))?;
        scalar(p, "total_osl", "tokens", &py_float(a.total_osl as f64))?;
    }
    if a.errors > 0 {
        scalar(
            p,
            "error_request_count",
            "requests",
            &py_float(a.errors as f64),
        )?;
    }
    pct_block(p, "usage_prompt_tokens", "tokens", &a.isl)?;
    if full {
        scalar(
            p,
            "total_usage_prompt_tokens",
            "tokens",
            &py_float(a.client_prompt as f64),
        )?;
        if a.theory_blocks > 0 {
            p.key("theoretical_prefix_cache_hit")?;
            p.obj()?;
            p.kv_str("unit", "%")?;
            p.kv_f("avg", a.theory_hit as f64 / a.theory_blocks as f64 * 100.0)?;
            p.kv_raw("count", &a.theory_blocks.to_string())?;
            p.kv_raw("sum", &a.theory_hit.to_string())?;
            p.end_obj()?;
        }
    }
    Ok(())
}

pub fn write_summary(plan: &Plan, sink: &Sink, p1: &Pass1) -> io::Result<(String, u64)> {
    let out = Out::open(sink, &rel("profile_export_aiperf.json"))?;
    let mut p = Pretty::new(out);
    let v11 = plan.spec.schema == Schema::V1_1;
    p.obj()?;
    p.kv_str("schema_version", if v11 { "1.4" } else { "1.0" })?;
    p.kv_str("aiperf_version", if v11 { "0.12.0" } else { "0.7.0" })?;
    p.kv_str("benchmark_id", &plan.summary_benchmark_id)?;
    metrics(&mut p, &p1.prof, true)?;
    p.key("input_config")?;
    p.obj()?;
    p.key("endpoint")?;
    p.obj()?;
    p.key("model_names")?;
    p.arr()?;
    p.raw(&jstr(&plan.model))?;
    p.end_arr()?;
    p.kv_raw("streaming", "true")?;
    p.kv_raw("use_server_token_count", "true")?;
    p.end_obj()?;
    p.key("loadgen")?;
    p.obj()?;
    p.kv_raw("concurrency", &plan.spec.concurrency.to_string())?;
    p.kv_f("benchmark_duration", plan.spec.duration_s)?;
    p.kv_raw(
        "warmup_requests_per_lane",
        &plan.spec.warmup_per_lane.to_string(),
    )?;
    p.end_obj()?;
    p.kv_str(
        "cli_command",
        &format!(
            "aiperf profile (generated by kvledger synth, seed {})",
            plan.spec.seed
        ),
    )?;
    p.end_obj()?;
    p.kv_raw("was_cancelled", "false")?;
    p.key("error_summary")?;
    p.arr()?;
    for ((code, ty, msg), n) in &p1.prof.errors_by {
        p.obj()?;
        p.key("error_details")?;
        p.obj()?;
        p.kv_raw("code", &code.to_string())?;
        p.kv_str("type", ty)?;
        p.kv_str("message", msg)?;
        p.end_obj()?;
        p.kv_raw("count", &n.to_string())?;
        p.end_obj()?;
    }
    p.end_arr()?;
    p.kv_str("start_time", &iso_local(plan.times.p0))?;
    p.kv_str("end_time", &iso_local(plan.times.p1))?;
    if v11 && p1.warm.records > 0 {
        p.key("warmup_metrics")?;
        p.obj()?;
        metrics(&mut p, &p1.warm, false)?;
        p.end_obj()?;
    }
    p.end_obj()?;
    p.w.finish()
}
