//! `server_metrics_export.csv` as AIPerf's Python writer produces it: LF comment header,
//! then gauge, counter, histogram and info sections separated by an empty row, rows CRLF
//! (Python `csv`), floats `%.4f`, ints exact, missing cells empty. Label columns are the
//! section's union in first-appearance order (AIPerf orders them by a co-occurrence
//! heuristic: a simplification).

use super::json::CsvRow;
use crate::model::MetricType;
use crate::synth::fmt::csv_cell;
use crate::synth::out::{rel, Out, Sink};
use crate::synth::plan::Plan;
use crate::synth::spec::Schema;
use std::io::{self, Write};

use crate::read::server_csv::{
    COUNTER_STATS as COUNTER, GAUGE_STATS as GAUGE, HISTOGRAM_STATS as HIST,
};

fn row(out: &mut Out, cells: &[String]) -> io::Result<()> {
    let line: Vec<String> = cells.iter().map(|c| csv_cell(c)).collect();
    out.write_all(line.join(",").as_bytes())?;
    out.write_all(b"\r\n")
}

pub fn write(plan: &Plan, sink: &Sink, rows: &[CsvRow]) -> io::Result<(String, u64)> {
    let mut out = Out::open(sink, &rel("server_metrics_export.csv"))?;
    write!(
        out,
        "# AIPerf Server Metrics Export (CSV)\n# aiperf_version: {}\n# schema_version: 1.0\n# benchmark_id: {}\n# Note: Same benchmark_id and version appear in JSON and Parquet exports\n#\n",
        if plan.spec.schema == Schema::V1_1 { "0.12.0" } else { "0.7.0" },
        plan.benchmark_id
    )?;
    let mut first = true;
    let sections: [(&[&str], fn(&CsvRow) -> bool, bool); 3] = [
        (
            &GAUGE,
            |r| !r.info && matches!(r.mtype, MetricType::Gauge | MetricType::Unknown),
            false,
        ),
        (&COUNTER, |r| r.mtype == MetricType::Counter, false),
        (&HIST, |r| r.mtype == MetricType::Histogram, true),
    ];
    for (stats, pick, hist) in sections {
        let sel: Vec<&CsvRow> = rows.iter().filter(|r| pick(r)).collect();
        if sel.is_empty() {
            continue;
        }
        if !first {
            out.write_all(b"\r\n")?;
        }
        first = false;
        let mut labels: Vec<String> = Vec::new();
        for r in &sel {
            for (k, _) in &r.labels {
                if !labels.contains(k) {
                    labels.push(k.clone());
                }
            }
        }
        let mut header: Vec<String> = ["Endpoint", "Type", "Metric", "Unit"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        header.extend(stats.iter().map(|s| s.to_string()));
        header.extend(labels.iter().cloned());
        header.push("Description".into());
        if hist {
            header.push("buckets".into());
        }
        row(&mut out, &header)?;
        for r in sel {
            let mut cells = vec![
                r.display.clone(),
                r.mtype.as_str().to_string(),
                r.metric.clone(),
                r.unit.clone(),
            ];
            for s in stats {
                cells.push(
                    r.stats
                        .iter()
                        .find(|(k, _)| k == s)
                        .map(|(_, v)| v.clone())
                        .unwrap_or_default(),
                );
            }
            for l in &labels {
                cells.push(
                    r.labels
                        .iter()
                        .find(|(k, _)| k == l)
                        .map(|(_, v)| v.clone())
                        .unwrap_or_default(),
                );
            }
            cells.push(r.desc.clone());
            if hist {
                cells.push(r.buckets.clone());
            }
            row(&mut out, &cells)?;
        }
    }
    let info: Vec<&CsvRow> = rows.iter().filter(|r| r.info).collect();
    if !info.is_empty() {
        if !first {
            out.write_all(b"\r\n")?;
        }
        row(
            &mut out,
            &["Endpoint", "Metric", "Key", "Value", "Description"].map(String::from),
        )?;
        for r in info {
            for (k, v) in &r.labels {
                row(
                    &mut out,
                    &[
                        r.display.clone(),
                        r.metric.clone(),
                        k.clone(),
                        v.clone(),
                        r.desc.clone(),
                    ],
                )?;
            }
        }
    }
    out.finish()
}
