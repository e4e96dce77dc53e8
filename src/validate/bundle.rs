//! The decompressed body: a result JSON alone, or a tar bundle of the result JSON
//! (`result.json`, at the top or in one folder) and the run's raw artifacts by relative path.
//! Artifacts stream into the run reader (`RunReader`, as `accountStream` reads: scrapes and
//! records folded as they pass, not kept), each scanned on the way for the shape limits; the
//! result JSON is gathered (it is small) and scanned.

use super::codes::{Issue, UploadCode};
use super::limits::UploadLimits;
use super::scan::{Counts, JsonScanner, ScanStop};
use super::tar::{TarReader, TarSink};
use crate::account::families_read;
use crate::admission::HeapLimit;
use crate::read::run::RunReader;
use crate::read::{recognise_name, Recognition, RunOptions};

/// The name of the result JSON in a bundle (or `<folder>/result.json`).
pub const RESULT_NAME: &str = "result.json";

/// Bytes a body must show before its format is decided (a tar header's magic is at 257).
const SNIFF: usize = 263;

/// How to read the heap in use and the size of the memory holding it (the WASM build's
/// counting allocator and linear memory).
#[derive(Debug, Clone, Copy)]
pub struct MemoryProbe {
    pub in_use: fn() -> u64,
    pub memory: fn() -> u64,
}

/// The result JSON being gathered, scanned as it comes.
pub struct ResultBuf {
    bytes: Vec<u8>,
    scan: JsonScanner,
    counts: Counts,
    file: Option<String>,
}

impl ResultBuf {
    fn new(limits: &UploadLimits, file: Option<String>) -> Self {
        ResultBuf {
            bytes: Vec::new(),
            scan: JsonScanner::new(limits, true),
            counts: Counts::default(),
            file,
        }
    }

    fn push(&mut self, piece: &[u8], limits: &UploadLimits) -> Result<(), Issue> {
        let room = limits
            .result_json_bytes
            .saturating_sub(self.bytes.len() as u64);
        // The bytes within the limit are scanned first, whatever the chunking.
        let within = &piece[..piece.len().min(room as usize)];
        self.scan
            .push(within, &mut self.counts)
            .map_err(|stop| self.place(scan_issue(stop, limits)))?;
        self.bytes.extend_from_slice(within);
        if piece.len() as u64 > room {
            let issue = Issue::limit(
                limits.hit("result_json_bytes", None),
                format!(
                    "the result JSON is larger than {} bytes",
                    limits.result_json_bytes
                ),
            );
            return Err(self.place(issue));
        }
        Ok(())
    }

    fn place(&self, issue: Issue) -> Issue {
        match &self.file {
            Some(f) => issue.in_file(f),
            None => issue,
        }
    }
}

/// A scanner's stop as an issue (the position is in the file scanned).
pub fn scan_issue(stop: ScanStop, limits: &UploadLimits) -> Issue {
    let (issue, at) = match stop {
        ScanStop::Limit { name, observed, at } => (
            Issue::limit(
                limits.hit(name, Some(observed)),
                format!(
                    "{name} limit of {} reached ({observed})",
                    limits.get(name).unwrap_or(0)
                ),
            ),
            at,
        ),
        ScanStop::DuplicateKey { key, at } => (
            Issue::new(
                UploadCode::DuplicateKey,
                format!("the key `{}` is repeated in one object", key.escape_debug()),
            ),
            at,
        ),
    };
    let mut issue = issue.at_byte(at.byte_offset).at_path(at.json_path);
    issue.line = u32::try_from(at.line).ok();
    issue.column = u32::try_from(at.column).ok();
    issue
}

/// What the body turned out to hold, once it has ended.
pub struct Parts {
    /// The result JSON's bytes and its name in the bundle (none for a plain upload).
    pub result: Option<(Vec<u8>, Option<String>)>,
    /// The run reader, when the body was a bundle.
    pub run: Option<RunReader>,
}

pub enum Body {
    Sniff(Vec<u8>),
    Json(Box<ResultBuf>),
    Tar(Box<Bundle>),
}

impl Body {
    pub fn new() -> Self {
        Body::Sniff(Vec::new())
    }

    pub fn push(
        &mut self,
        piece: &[u8],
        limits: &UploadLimits,
        memory: Option<HeapLimit>,
    ) -> Result<(), Issue> {
        match self {
            Body::Sniff(head) => {
                head.extend_from_slice(piece);
                if head.len() >= SNIFF {
                    let head = std::mem::take(head);
                    self.decide(&head, limits, memory)?;
                    self.push(&head, limits, memory)?;
                }
                Ok(())
            }
            Body::Json(r) => r.push(piece, limits),
            Body::Tar(b) => b.push(piece),
        }
    }

    /// Decide what the body is from its first bytes.
    fn decide(
        &mut self,
        head: &[u8],
        limits: &UploadLimits,
        memory: Option<HeapLimit>,
    ) -> Result<(), Issue> {
        if head.len() >= SNIFF && &head[257..262] == b"ustar" {
            *self = Body::Tar(Box::new(Bundle::new(limits, memory)));
            return Ok(());
        }
        match head.iter().find(|b| !b.is_ascii_whitespace()) {
            Some(b'{' | b'[') | None => {
                *self = Body::Json(Box::new(ResultBuf::new(limits, None)));
                Ok(())
            }
            Some(_) => Err(Issue::new(
                UploadCode::UnknownFormat,
                "the upload is neither gzip, nor a tar bundle, nor a JSON object",
            )
            .at_byte(0)),
        }
    }

    pub fn finish(
        mut self,
        limits: &UploadLimits,
        memory: Option<HeapLimit>,
    ) -> Result<Parts, Issue> {
        if let Body::Sniff(head) = &mut self {
            let head = std::mem::take(head);
            if head.is_empty() {
                return Err(Issue::new(UploadCode::EmptyUpload, "the upload is empty"));
            }
            self.decide(&head, limits, memory)?;
            self.push(&head, limits, memory)?;
        }
        match self {
            Body::Sniff(_) => Err(Issue::new(UploadCode::EmptyUpload, "the upload is empty")),
            Body::Json(r) => Ok(Parts {
                result: Some((r.bytes, None)),
                run: None,
            }),
            Body::Tar(b) => b.finish(),
        }
    }
}

impl Default for Body {
    fn default() -> Self {
        Self::new()
    }
}

/// How an artifact's bytes are scanned for the shape limits.
enum Scan {
    Json(Box<JsonScanner>),
    /// Line formats (CSV export, Prometheus text): each line may be a series.
    Lines,
    None,
}

enum Current {
    None,
    Result,
    Artifact {
        name: String,
        scan: Scan,
        wants: bool,
    },
}

/// Where a tar bundle's members go.
struct Sink {
    limits: UploadLimits,
    memory: Option<HeapLimit>,
    counts: Counts,
    result: Option<ResultBuf>,
    current: Current,
    run: RunReader,
}

pub struct Bundle {
    tar: TarReader,
    sink: Sink,
}

fn is_result_name(name: &str) -> bool {
    let mut parts = name.split('/');
    matches!(
        (parts.next(), parts.next(), parts.next()),
        (Some(RESULT_NAME), None, _) | (Some(_), Some(RESULT_NAME), None)
    )
}

impl Bundle {
    fn new(limits: &UploadLimits, memory: Option<HeapLimit>) -> Self {
        let options = RunOptions {
            families: families_read(),
            ..RunOptions::default()
        };
        // Folded as `accountStream` folds: kept whole, a bundle's 400,000 per-request records
        // (3.6 MB gzip'd) grew the record list by doubling to 162 MiB of linear memory before
        // the budget of 48 MiB was checked.
        let mut run = RunReader::new(&options).with_fold();
        if let Some(budget) = memory {
            run = run.with_memory_budget(budget);
        }
        Bundle {
            tar: TarReader::new(limits),
            sink: Sink {
                limits: *limits,
                memory,
                counts: Counts::default(),
                result: None,
                current: Current::None,
                run,
            },
        }
    }

    fn push(&mut self, piece: &[u8]) -> Result<(), Issue> {
        self.tar.push(piece, &mut self.sink)
    }

    fn finish(self) -> Result<Parts, Issue> {
        self.tar.finish()?;
        let Sink { result, run, .. } = self.sink;
        let Some(result) = result else {
            return Err(Issue::new(
                UploadCode::ResultMissing,
                format!("the bundle has no `{RESULT_NAME}` (at its top or in one folder)"),
            ));
        };
        let name = result.file.clone();
        Ok(Parts {
            result: Some((result.bytes, name)),
            run: Some(run),
        })
    }
}

impl Sink {
    fn memory_check(&self, name: &str) -> Result<(), Issue> {
        let Some(heap) = self.memory else {
            return Ok(());
        };
        let in_use = (heap.in_use)();
        if in_use <= self.limits.memory_budget {
            return Ok(());
        }
        Err(Issue::limit(
            self.limits.hit("memory_budget", Some(in_use)),
            format!(
                "reading the raw artifacts took {in_use} bytes of heap, more than the budget of {}",
                self.limits.memory_budget
            ),
        )
        .in_file(name))
    }

    fn scan(&mut self, piece: &[u8]) -> Result<(), Issue> {
        let Current::Artifact { name, scan, .. } = &mut self.current else {
            return Ok(());
        };
        match scan {
            Scan::Json(s) => s
                .push(piece, &mut self.counts)
                .map_err(|stop| scan_issue(stop, &self.limits).in_file(name)),
            Scan::Lines => {
                self.counts.series += piece.iter().filter(|&&b| b == b'\n').count() as u64;
                if self.counts.series > self.limits.series {
                    return Err(Issue::limit(
                        self.limits.hit("series", Some(self.counts.series)),
                        format!(
                            "more than {} series in the raw artifacts",
                            self.limits.series
                        ),
                    )
                    .in_file(name));
                }
                Ok(())
            }
            Scan::None => Ok(()),
        }
    }
}

fn scan_for(name: &str, limits: &UploadLimits) -> Scan {
    if matches!(recognise_name(name), Recognition::Ignored(_)) {
        return Scan::None;
    }
    let lower = name.to_ascii_lowercase();
    if lower.ends_with(".json") || lower.ends_with(".jsonl") {
        Scan::Json(Box::new(JsonScanner::new(limits, false)))
    } else if [".csv", ".prom", ".metrics", ".txt"]
        .iter()
        .any(|ext| lower.ends_with(ext))
    {
        Scan::Lines
    } else {
        Scan::None
    }
}

impl TarSink for Sink {
    fn begin(&mut self, name: &str, size: u64) -> Result<(), Issue> {
        if is_result_name(name) {
            if let Some(r) = &self.result {
                return Err(Issue::new(
                    UploadCode::BadBundle,
                    format!(
                        "two result JSONs: `{}` and `{name}`",
                        r.file.as_deref().unwrap_or(RESULT_NAME)
                    ),
                ));
            }
            if size > self.limits.result_json_bytes {
                return Err(Issue::limit(
                    self.limits.hit("result_json_bytes", Some(size)),
                    format!(
                        "`{name}` states {size} bytes (result_json_bytes limit {})",
                        self.limits.result_json_bytes
                    ),
                )
                .in_file(name));
            }
            self.result = Some(ResultBuf::new(&self.limits, Some(name.to_string())));
            self.current = Current::Result;
            return Ok(());
        }
        self.run.begin_file(name);
        self.current = Current::Artifact {
            name: name.to_string(),
            scan: scan_for(name, &self.limits),
            wants: true,
        };
        Ok(())
    }

    fn data(&mut self, bytes: &[u8]) -> Result<(), Issue> {
        match &mut self.current {
            Current::Result => match &mut self.result {
                Some(r) => r.push(bytes, &self.limits),
                None => Ok(()),
            },
            Current::Artifact { wants, .. } => {
                // Scanned whole whatever the reader wants: a limit must not depend on where
                // the chunks split (the reader stops wanting bytes once a file fails).
                let wanted = *wants;
                self.scan(bytes)?;
                if !wanted {
                    return Ok(());
                }
                let more = self.run.push(bytes);
                if let Current::Artifact { wants, name, .. } = &mut self.current {
                    *wants = more;
                    let name = name.clone();
                    self.memory_check(&name)?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn end(&mut self) -> Result<(), Issue> {
        if let Current::Artifact { name, .. } = std::mem::replace(&mut self.current, Current::None)
        {
            self.run.end_file();
            self.memory_check(&name)?;
        }
        Ok(())
    }
}
