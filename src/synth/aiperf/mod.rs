//! The files AIPerf would write from the generated scrapes and requests (`research/aiperf.md`
//! sections 1-2 and 6), plus `launch.json` and `truth.json`. Every file is streamed through a
//! `BufWriter`; a counting sink measures sizes without writing (for `--target-bytes`).

pub mod csv;
pub mod json;
pub mod jsonl;
pub mod profile;

use super::plan::Plan;
use super::{SynthError, SynthSummary};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

pub const AIPERF_DIR: &str = "aiperf_artifacts";

#[derive(Debug, Clone)]
pub enum Sink {
    Dir(PathBuf),
    /// Count bytes only.
    Count,
}

/// A file being written (or only counted).
pub struct Out {
    inner: Option<BufWriter<File>>,
    pub bytes: u64,
    pub rel: String,
}

impl Out {
    pub fn open(sink: &Sink, rel: &str) -> io::Result<Out> {
        let inner = match sink {
            Sink::Dir(d) => {
                let p = d.join(rel);
                if let Some(parent) = p.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                Some(BufWriter::with_capacity(1 << 16, File::create(p)?))
            }
            Sink::Count => None,
        };
        Ok(Out {
            inner,
            bytes: 0,
            rel: rel.to_string(),
        })
    }

    pub fn finish(mut self) -> io::Result<(String, u64)> {
        if let Some(w) = self.inner.as_mut() {
            w.flush()?;
        }
        Ok((self.rel.clone(), self.bytes))
    }
}

impl Write for Out {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.bytes += buf.len() as u64;
        match self.inner.as_mut() {
            Some(w) => w.write_all(buf).map(|_| buf.len()),
            None => Ok(buf.len()),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self.inner.as_mut() {
            Some(w) => w.flush(),
            None => Ok(()),
        }
    }
}

pub fn rel(name: &str) -> String {
    format!("{AIPERF_DIR}/{name}")
}

/// Write every file of the run.
pub fn write_run(plan: &Plan, sink: &Sink) -> Result<SynthSummary, SynthError> {
    let mut files = Vec::new();
    let p1 = jsonl::pass1(plan, sink, &mut files)?;
    let rows = json::write(plan, sink, &p1, &mut files)?;
    files.push(csv::write(plan, sink, &rows)?);
    files.push(profile::write_summary(plan, sink, &p1)?);
    files.push(super::truth::write_launch(plan, sink)?);
    let (tf, status) = super::truth::write_truth(plan, sink, &p1)?;
    files.push(tf);
    files.sort();
    let total_bytes = files.iter().map(|(_, b)| b).sum();
    Ok(SynthSummary {
        files,
        total_bytes,
        duration_s: plan.spec.duration_s,
        requests: p1.prof.records + p1.warm.records,
        scrapes: p1.info.iter().map(|i| i.fetches).sum(),
        expected_status: status,
    })
}
