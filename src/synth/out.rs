//! Where generated files go: a directory, or a counting sink that measures sizes without
//! writing (for `--target-bytes`). Every file is streamed through a `BufWriter`. A leaf module.

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
