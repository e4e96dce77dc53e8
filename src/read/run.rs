//! One benchmark point ("run") assembled from its files, whatever order they come in.

use super::artifact::{recognise, recognise_name, ArtifactKind, Recognition, UNRECOGNISED};
use super::filter::FamilyFilter;
use super::launch::read_launch_json;
use super::profile_jsonl::ProfileJsonlReader;
use super::profile_summary::RunSummaryReader;
use super::prometheus_text::PrometheusTextReader;
use super::push::{Gather, PushReader};
use super::scrape_jsonl::ScrapeJsonlReader;
use super::server_csv::ServerCsvReader;
use super::server_json::{ExportReader, Refusal};
use crate::account::fold::Folded;
use crate::account::request_scope::RecordFold;
use crate::admission::{self, HeapLimit};
use crate::error::{ErrorCode, Position, ReadError};
use crate::model::{
    LaunchFacts, MetricType, ProfileExport, RunSummary, Scrape, ServerMetricsExport, UntypedLarge,
};
use crate::read::count;
use crate::read::locate::locate_bytes;
use crate::read::names::canonical_family;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;

/// Bytes of one input file, or (native only) a path to stream it from, or a source of bytes
/// the core does not know (the WASM build: a JavaScript array or string) to stream it from.
#[derive(Debug, Clone)]
pub enum InputData<'a> {
    Bytes(&'a [u8]),
    Path(PathBuf),
    Source(&'a dyn ByteSource),
}

/// A file's content read from its start as it streams, as often as needed (a late refusal's
/// position is found by reading the file again). The WASM build reads a JavaScript typed
/// array through it a chunk at a time, instead of copying the whole array into its memory.
/// (`RefUnwindSafe`, as the other inputs are: a caller may read inside `catch_unwind`.)
pub trait ByteSource: std::panic::RefUnwindSafe {
    /// The content's size in bytes, when known without reading it.
    fn size(&self) -> Option<u64>;
    /// A reader of the content from its first byte.
    fn reader(&self) -> Box<dyn Read + '_>;
}

impl std::fmt::Debug for dyn ByteSource + '_ {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ByteSource")
    }
}

/// One input file: the name used for format recognition and in errors, and its content.
#[derive(Debug, Clone)]
pub struct InputFile<'a> {
    pub name: String,
    pub data: InputData<'a>,
}

impl<'a> InputFile<'a> {
    pub fn bytes(name: impl Into<String>, bytes: &'a [u8]) -> Self {
        InputFile {
            name: name.into(),
            data: InputData::Bytes(bytes),
        }
    }

    pub fn path(name: impl Into<String>, path: PathBuf) -> Self {
        InputFile {
            name: name.into(),
            data: InputData::Path(path),
        }
    }

    fn open(&self) -> Result<Box<dyn BufRead + 'a>, ReadError> {
        match &self.data {
            InputData::Bytes(b) => Ok(Box::new(*b)),
            InputData::Source(s) => {
                let capacity = buffer_capacity(s.size().unwrap_or(u64::MAX));
                Ok(Box::new(BufReader::with_capacity(capacity, s.reader())))
            }
            InputData::Path(p) => {
                let f = std::fs::File::open(p).map_err(|e| {
                    ReadError::whole(ErrorCode::Io, &self.name, format!("cannot open: {e}"))
                })?;
                let size = f.metadata().map_or(0, |m| m.len());
                Ok(Box::new(BufReader::with_capacity(buffer_capacity(size), f)))
            }
        }
    }

    /// The file's size in bytes, when it can be known without reading it.
    pub fn size(&self) -> Option<u64> {
        match &self.data {
            InputData::Bytes(b) => Some(b.len() as u64),
            InputData::Path(p) => std::fs::metadata(p).ok().map(|m| m.len()),
            InputData::Source(s) => s.size(),
        }
    }

    /// The first bytes, for format sniffing.
    pub(crate) fn head(&self) -> Result<Vec<u8>, ReadError> {
        let mut buf = Vec::with_capacity(4096);
        self.open()?.take(4096).read_to_end(&mut buf).map_err(|e| {
            ReadError::whole(ErrorCode::Io, &self.name, format!("cannot read: {e}"))
        })?;
        Ok(buf)
    }
}

/// The largest piece of a whole buffer a folding reader or the export's reader is pushed at
/// once: pushed at once (the whole-buffer API, the benchmarks), every scrape or record of the
/// file was read and held before any was folded; in pieces, what waits to be folded stays
/// small (and in cache), and the export's framer scans each piece in place.
const FOLD_PIECE: usize = 1 << 20;

/// The read buffer of a streamed file of `size` bytes: no larger than the file, for a tree of
/// thousands of small runs would otherwise map and unmap a MiB per file (and, with --jobs,
/// shoot down TLBs); at most 1 MiB, since every page of it is resident once filled (an 8 MiB
/// buffer was most of the CLI's peak memory on a 10 MB file).
fn buffer_capacity(size: u64) -> usize {
    usize::try_from(size.saturating_add(1))
        .unwrap_or(usize::MAX)
        .clamp(8 << 10, READ_PIECE)
}

/// The most a streamed file is read at once ([`buffer_capacity`]).
const READ_PIECE: usize = 1 << 20;

/// Where and when a Prometheus text capture was taken. Captures carry neither in their text
/// (unless samples have timestamps), so the caller says it, or a `captures.json` manifest does.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CaptureMeta {
    /// Full scrape URL, e.g. `http://10.0.0.5:8000/metrics`.
    #[serde(default)]
    pub endpoint_url: Option<String>,
    /// Epoch ns at which the capture was taken.
    #[serde(default)]
    pub timestamp_ns: Option<u64>,
}

/// Told the bytes of the run's files read so far, as reading goes (a CLI progress line on a
/// terminal, a visualizer's bar). Called at most once per read chunk.
#[derive(Clone)]
pub struct Progress(pub std::sync::Arc<dyn Fn(u64) + Send + Sync>);

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress")
    }
}

#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub families: FamilyFilter,
    /// Told the bytes read so far (see [`Progress`]); none by default.
    pub progress: Option<Progress>,
    /// Capture metadata by file name (base name); overrides a manifest in the inputs.
    pub captures: BTreeMap<String, CaptureMeta>,
    /// Launch facts given by the caller; override a launch file among the inputs.
    pub launch: Option<LaunchFacts>,
    /// The heap the read may use (see [`MemoryBudget`]): the WASM build's whole-buffer calls
    /// set it, so that a file past it is `INPUT_TOO_LARGE` instead of a trap. None by default.
    pub memory_budget: Option<MemoryBudget>,
}

/// A file the run was assembled from, with what it was recognised as.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
pub struct RunFile {
    pub name: String,
    pub kind: ArtifactKind,
}

/// A file of the run that kvledger does not read, and why (e.g. `profile_export_aiperf.csv`:
/// "run summary as CSV: the JSON one is read"). Never an error.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct IgnoredFile {
    pub name: String,
    pub reason: String,
}

/// Everything read for one benchmark point.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Run {
    /// Inputs that were read, sorted by name.
    pub files: Vec<RunFile>,
    /// Inputs that were not read (other formats, plots, logs, a `launch.json` replaced by
    /// explicit launch facts), sorted by name.
    pub ignored: Vec<IgnoredFile>,
    /// The `benchmark_id` each file states (server JSON and run summary top level, CSV header
    /// comment), by file name; files stating none (`null`, `None`, absent) are not listed.
    /// Files of one run should agree; accounting flags a mismatch.
    pub benchmark_ids: BTreeMap<String, String>,
    pub server_json: Option<ServerMetricsExport>,
    pub server_csv: Option<ServerMetricsExport>,
    /// Raw scrapes from the JSONL and from Prometheus text captures, sorted by endpoint,
    /// then time (untimed captures last), then file order.
    pub scrapes: Vec<Scrape>,
    /// Which file each scrape of `scrapes` came from (parallel vector).
    pub scrape_files: Vec<String>,
    pub profile: Option<ProfileExport>,
    pub summary: Option<RunSummary>,
    pub launch: Option<LaunchFacts>,
}

/// One capture of `captures.json`. (Not `#[serde(flatten)]` over [`CaptureMeta`]: flatten
/// loses the JSON path of an error inside it.)
struct CaptureManifestEntry {
    file: String,
    endpoint_url: Option<String>,
    timestamp_ns: Option<u64>,
}

crate::fields!(CaptureManifestEntry, expecting: "a capture object (`file`, `endpoint_url`, `timestamp_ns`)", deny_unknown: false, empty: CaptureManifestEntry { file: String::new(), endpoint_url: None, timestamp_ns: None }, required: [file], [file, endpoint_url, timestamp_ns]);

struct CaptureManifest {
    captures: Vec<CaptureManifestEntry>,
}

crate::fields!(CaptureManifest, expecting: "a capture manifest object (`captures`)", deny_unknown: false, empty: CaptureManifest { captures: Vec::new() }, required: [captures], [captures]);

#[cfg(test)]
#[test]
fn manifest_error_paths_match_serde_path_to_error() {
    let n = crate::json_path::testing::compare::<CaptureManifest>(
        r#"{"captures": [{"file": "a.prom", "endpoint_url": "http://h/metrics", "timestamp_ns": 1781000000000000001}, {"file": "b.prom"}]}"#,
        true,
    );
    assert!(n > 1000, "only {n} broken manifests were compared");
}

fn base_name(name: &str) -> &str {
    name.rsplit(['/', '\\']).next().unwrap_or(name)
}

/// Raw scrapes sorted by endpoint, then time (untimed last), then file and file order, with
/// the file each came from (parallel vector).
fn sort_scrapes(scrapes: &mut [Scrape], files: &mut [String]) {
    crate::sort::sort_pairs_by(scrapes, files, |(a, fa), (b, fb)| {
        (
            &a.endpoint_url,
            a.timestamp_ns.is_none(),
            a.timestamp_ns,
            fa,
        )
            .cmp(&(
                &b.endpoint_url,
                b.timestamp_ns.is_none(),
                b.timestamp_ns,
                fb,
            ))
    });
}

/// A refusal the server-metrics JSON reader decided after the value streamed by (see
/// `server_json`): read the file again to give it its line and column.
fn place_late_refusal(f: &InputFile<'_>, r: Refusal) -> ReadError {
    let mut err = r.error;
    if let (Some(path), Ok(reader)) = (r.relocate, f.open()) {
        let bytes = reader.bytes().map_while(Result::ok);
        if let Some(found) = locate_bytes(bytes, &path.segs()) {
            err.position.line = Some(found.value.line);
            err.position.column = Some(found.value.column);
        }
    }
    err
}

/// Refuse the large values of untyped scrape families (`Scrape::untyped_large`: not counters
/// by their name) that another export of the run types as counters: the server-metrics JSON
/// or CSV, or a Prometheus capture with `# TYPE` (any endpoint; families are matched by
/// canonical name). The first in file order is reported.
fn refuse_typed_counters(
    (scrapes, scrape_files): (&[Scrape], &[String]),
    folded: &[(String, Vec<UntypedLarge>)],
    server_json: &Option<(String, ServerMetricsExport)>,
    server_csv: &Option<(String, ServerMetricsExport)>,
) -> Result<(), ReadError> {
    // Files in name order (stable: a file's values stay in file order).
    let mut larges: Vec<(&str, &UntypedLarge)> = scrapes
        .iter()
        .zip(scrape_files)
        .flat_map(|(s, file)| s.untyped_large.iter().map(move |l| (file.as_str(), l)))
        .chain(
            folded
                .iter()
                .flat_map(|(file, ls)| ls.iter().map(move |l| (file.as_str(), l))),
        )
        .collect();
    if larges.is_empty() {
        return Ok(());
    }
    crate::sort::sort_by(&mut larges, |a, b| a.0.cmp(b.0));
    let mut counters: BTreeSet<String> = BTreeSet::new();
    for (_, export) in server_json.iter().chain(server_csv) {
        for (_, fam) in export.families() {
            if fam.metric_type == MetricType::Counter {
                counters.insert(canonical_family(&fam.name));
            }
        }
    }
    for s in scrapes {
        for fam in s.families() {
            if fam.metric_type == Some(MetricType::Counter) {
                counters.insert(canonical_family(fam.name));
            }
        }
    }
    for (file, large) in larges {
        if counters.contains(&canonical_family(&large.family)) {
            return Err(count::refuse(
                file,
                large.position.clone(),
                &format!(
                    "counter value of `{}` (a counter in another export of the run)",
                    large.family
                ),
                &large.value,
            ));
        }
    }
    Ok(())
}

/// Bytes of a file's start that decide its format when its name does not (see [`recognise`]).
const HEAD: usize = 4096;

/// What one file of the run gave.
///
/// The large models are boxed: every file read is held as one until the run is assembled, and
/// the enum was as large as an export's model (424 bytes) for each of a run's thousands of
/// captures.
enum Output {
    ServerJson(Box<ServerMetricsExport>),
    ServerCsv(Box<ServerMetricsExport>),
    Scrapes(Vec<Scrape>),
    /// A Prometheus capture read without its metadata: [`RunReader::finish`] applies it, once
    /// every manifest has been read.
    Capture(Scrape),
    Profile(ProfileExport),
    Summary(Box<RunSummary>),
    Launch(Box<LaunchFacts>),
    Manifest(Vec<(String, CaptureMeta)>),
    /// A scrape JSONL folded as it was read ([`RunReader::with_fold`]): its scrapes are in the
    /// fold; kept here are its large untyped values, in file order.
    Folded(Vec<UntypedLarge>),
}

/// The reader of one file inside [`RunReader`]: the [`PushReader`] of its format.
trait FileRead {
    fn push(&mut self, chunk: &[u8]) -> Result<(), Refusal>;
    fn finish(self: Box<Self>) -> Result<Output, Refusal>;

    /// Give memory back by dropping counter timeslices read so far ([`shed_slices`]); whether
    /// any were dropped.
    fn shed(&mut self) -> bool {
        false
    }

    /// Whether [`FileRead::drain`] folds (a folding reader is pushed in pieces of at most
    /// [`FOLD_PIECE`], each folded before the next is read).
    fn folds(&self) -> bool {
        false
    }

    /// Fold what has been read so far into `fold`, when the reader folds ([`FoldingJsonl`],
    /// [`FoldingProfile`]); `at_end`: the file has ended, read its last line first.
    fn drain(
        &mut self,
        _at_end: bool,
        _fold: &mut Folded,
        _cursor: &mut FoldCursor<'_>,
    ) -> Result<(), Refusal> {
        Ok(())
    }
}

/// The last resort of a streaming read out of memory: drop the profiling and warmup timeslices
/// of counter series (24 B each, kept whole by the export's reader). Sound: a series without
/// slices is bounded by its other evidence (raw samples, else nothing), only more widely; a
/// series with a total that is not a finite non-negative number keeps its slices (they say
/// so). Whether any were dropped.
fn shed_slices<'s>(
    series: impl Iterator<Item = &'s mut std::sync::Arc<[crate::model::CounterSlice]>>,
) -> bool {
    let mut dropped = false;
    for slices in series {
        let ok = slices.iter().all(|c| c.total.is_finite() && c.total >= 0.0);
        if ok && !slices.is_empty() {
            *slices = std::sync::Arc::from(Vec::new());
            dropped = true;
        }
    }
    dropped
}

/// Where a file's scrapes go in the fold: the file's name, and once its first scrape came,
/// its source index and the scrapes folded so far.
struct FoldCursor<'a> {
    name: &'a str,
    source: &'a mut Option<(u32, u64)>,
}

/// A `profile_export.jsonl` whose records are folded as they are read
/// ([`RecordFold`]: what accounting reads of them) instead of kept.
struct FoldingProfile(ProfileJsonlReader);

impl FileRead for FoldingProfile {
    fn push(&mut self, chunk: &[u8]) -> Result<(), Refusal> {
        self.0.push(chunk).map_err(Refusal::from)
    }

    fn finish(self: Box<Self>) -> Result<Output, Refusal> {
        self.0.finish().map(Output::Profile).map_err(Refusal::from)
    }

    fn folds(&self) -> bool {
        true
    }

    fn drain(
        &mut self,
        at_end: bool,
        fold: &mut Folded,
        _cursor: &mut FoldCursor<'_>,
    ) -> Result<(), Refusal> {
        if at_end {
            self.0.end_lines().map_err(Refusal::from)?;
        }
        let records = fold.records.get_or_insert_with(RecordFold::new);
        for r in self.0.drain() {
            records.take(&r);
        }
        Ok(())
    }
}

/// A scrape JSONL whose scrapes are handed on as they are read instead of kept: the
/// streaming API folds them into per-series evidence at once (see [`RunReader::with_fold`]).
struct FoldingJsonl {
    reader: ScrapeJsonlReader,
    untyped_large: Vec<UntypedLarge>,
}

impl FileRead for FoldingJsonl {
    fn push(&mut self, chunk: &[u8]) -> Result<(), Refusal> {
        self.reader.push(chunk).map_err(Refusal::from)
    }

    fn finish(self: Box<Self>) -> Result<Output, Refusal> {
        let FoldingJsonl {
            reader,
            untyped_large,
        } = *self;
        reader.finish().map_err(Refusal::from)?;
        Ok(Output::Folded(untyped_large))
    }

    fn folds(&self) -> bool {
        true
    }

    fn drain(
        &mut self,
        at_end: bool,
        fold: &mut Folded,
        cursor: &mut FoldCursor<'_>,
    ) -> Result<(), Refusal> {
        if at_end {
            self.reader.end_lines().map_err(Refusal::from)?;
        }
        let (scrapes, table) = self.reader.drain();
        for mut scrape in scrapes {
            let fold = &mut fold.scrapes;
            let (source, seq) = cursor
                .source
                .get_or_insert_with(|| (fold.source(cursor.name), 0));
            fold.take(*source, *seq, &scrape, table);
            *seq += 1;
            self.untyped_large.append(&mut scrape.untyped_large);
        }
        Ok(())
    }
}

/// The server-metrics JSON export keeps, with an error, the JSON path of a count refused after
/// it streamed by, so that a file read from a path or a buffer gets its line and column too.
impl FileRead for ExportReader {
    fn push(&mut self, chunk: &[u8]) -> Result<(), Refusal> {
        PushReader::push(self, chunk).map_err(|e| self.refusal(e))
    }

    fn shed(&mut self) -> bool {
        shed_slices(self.slices_read_mut())
    }

    fn finish(self: Box<Self>) -> Result<Output, Refusal> {
        self.finish_export()
            .map(|export| Output::ServerJson(Box::new(export)))
    }
}

/// A streaming reader of a format, its output turned into an [`Output`].
struct Streamed<P, M> {
    reader: P,
    into: M,
}

impl<P: PushReader + 'static, M: FnOnce(P::Output) -> Output + 'static> FileRead
    for Streamed<P, M>
{
    fn push(&mut self, chunk: &[u8]) -> Result<(), Refusal> {
        self.reader.push(chunk).map_err(Refusal::from)
    }

    fn finish(self: Box<Self>) -> Result<Output, Refusal> {
        let Streamed { reader, into } = *self;
        reader.finish().map(into).map_err(Refusal::from)
    }
}

fn streamed<P, M>(reader: P, into: M) -> Box<dyn FileRead>
where
    P: PushReader + 'static,
    M: FnOnce(P::Output) -> Output + 'static,
{
    Box::new(Streamed { reader, into })
}

/// `bytes` as text, or `NOT_UTF8` at the first byte that is not.
fn utf8<'b>(name: &str, bytes: &'b [u8]) -> Result<&'b str, ReadError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let pos = Position {
            byte_offset: Some(crate::error::clamp_u32(e.valid_up_to())),
            ..Position::default()
        };
        ReadError::new(ErrorCode::NotUtf8, name, pos, "the file is not UTF-8 text")
    })
}

/// The captures of a `captures.json` manifest, by base name.
fn read_manifest(name: &str, bytes: &[u8]) -> Result<Vec<(String, CaptureMeta)>, ReadError> {
    let text = utf8(name, bytes)?;
    let de = &mut serde_json::Deserializer::from_slice(text.as_bytes());
    let manifest: CaptureManifest = crate::json_path::deserialize(text, de).map_err(|e| {
        ReadError::from_json_text_at(name, text, &e.error, crate::json_path::shown(&e.path))
    })?;
    Ok(manifest
        .captures
        .into_iter()
        .map(|entry| {
            let meta = CaptureMeta {
                endpoint_url: entry.endpoint_url,
                timestamp_ns: entry.timestamp_ns,
            };
            (base_name(&entry.file).to_string(), meta)
        })
        .collect())
}

/// The reader of a file of `kind`. Each format's reader is one line: today's whole-file
/// readers ([`whole`]) are swapped for streaming ones ([`streamed`]) as they land.
fn reader_for(
    kind: ArtifactKind,
    name: &str,
    filter: &FamilyFilter,
    fold: bool,
) -> Option<Box<dyn FileRead>> {
    let (name, filter) = (name.to_string(), filter.clone());
    Some(match kind {
        ArtifactKind::ServerMetricsJsonl if fold => Box::new(FoldingJsonl {
            reader: ScrapeJsonlReader::new(&name, &filter),
            untyped_large: Vec::new(),
        }),
        ArtifactKind::ProfileJsonl if fold => {
            Box::new(FoldingProfile(ProfileJsonlReader::folding(&name)))
        }
        ArtifactKind::ServerMetricsJson => Box::new(ExportReader::new(&name, filter)),
        ArtifactKind::ServerMetricsCsv => {
            streamed(ServerCsvReader::new(&name, &filter), |export| {
                Output::ServerCsv(Box::new(export))
            })
        }
        ArtifactKind::ServerMetricsJsonl => streamed(
            ScrapeJsonlReader::new(&name, &filter),
            |set: crate::model::ScrapeSet| Output::Scrapes(set.scrapes),
        ),
        // Capture metadata is applied at finish (a manifest may come after the capture).
        ArtifactKind::PrometheusText => streamed(
            PrometheusTextReader::new(&name, &CaptureMeta::default(), &filter),
            Output::Capture,
        ),
        ArtifactKind::ProfileJsonl => streamed(ProfileJsonlReader::new(&name), Output::Profile),
        ArtifactKind::RunSummary => streamed(RunSummaryReader::new(&name), |summary| {
            Output::Summary(Box::new(summary))
        }),
        ArtifactKind::LaunchFacts => streamed(
            Gather::new(move |b: &[u8]| read_launch_json(&name, utf8(&name, b)?)),
            |launch| Output::Launch(Box::new(launch)),
        ),
        ArtifactKind::CaptureManifest => streamed(
            Gather::new(move |b: &[u8]| read_manifest(&name, b)),
            Output::Manifest,
        ),
        ArtifactKind::Other => return None,
    })
}

/// A limit on the memory a [`RunReader`] may have in use while it reads: past it, the file
/// being read fails with `INPUT_TOO_LARGE` instead of the process (or a WebAssembly
/// instance, which cannot grow past 4 GiB) running out of memory. The readers' tables are
/// admitted under the same limit as they grow ([`crate::admission`]).
pub type MemoryBudget = HeapLimit;

/// How one file of the run ended.
enum Outcome {
    Read(Box<Output>),
    /// Read without error; its output was dropped because another file failed the run.
    Dropped,
    Failed(Refusal),
    /// Not read: a file earlier in name order failed, so this one cannot change the outcome.
    Skipped,
    Ignored(&'static str),
}

struct FileDone {
    name: String,
    kind: ArtifactKind,
    outcome: Outcome,
}

/// The file being pushed.
struct Current {
    name: String,
    /// Bytes pushed so far.
    bytes: u64,
    state: State,
    /// The file's source index in the fold, and the scrapes folded from it so far.
    folded: Option<(u32, u64)>,
}

enum State {
    /// The name does not decide the format: the first [`HEAD`] bytes will.
    Sniffing(Vec<u8>),
    Reading(ArtifactKind, Box<dyn FileRead>),
    /// Its bytes are not needed (ignored, skipped, failed, or too large).
    Ended(ArtifactKind, Outcome),
}

/// A run assembled from its files pushed in chunks: [`RunReader::begin_file`], any number of
/// [`RunReader::push`]es, [`RunReader::end_file`], for each file in any order, then
/// [`RunReader::finish`]. The result (or the error) does not depend on the order the files
/// come in nor on how they are split into chunks: files are recognised by name and their first
/// 4096 bytes, capture manifests are applied when the run finishes, and the files' results are
/// put in name order then, as [`read_run`] does (it is built on this).
///
/// A file's error is kept and the run's error decided at [`RunReader::finish`], by the same
/// rules whatever the order: a capture manifest's error first, then the first failing file in
/// name order. Once a file has failed, files later in name order are not read
/// ([`RunReader::push`] says so: their bytes can be skipped).
///
/// One difference with [`read_run`]: a count the server-metrics JSON reader refuses after its
/// value has streamed by (`COUNT_TOO_LARGE`) keeps its JSON path but has no line and column
/// here; `read_run`, which can read the file again, adds them.
pub struct RunReader {
    options: RunOptions,
    budget: Option<MemoryBudget>,
    /// Scrape JSONL and per-request files are folded into this as they are read (see
    /// [`RunReader::with_fold`]).
    fold: Option<Folded>,
    current: Option<Current>,
    done: Vec<FileDone>,
    /// The places in `done` of the files that failed: asked of every file begun, a scan of
    /// `done` was quadratic in a run's files (20,000 captures: 7.7 % of its time).
    failed: Vec<usize>,
    /// The places in `done` of the JSON and CSV exports read (their counter timeslices may be
    /// shed): a scan of `done` each time memory was under pressure was quadratic in a run's
    /// files (80,000 captures streamed: a third of the time).
    exports: Vec<usize>,
    bytes_read: u64,
}

impl RunReader {
    pub fn new(options: &RunOptions) -> Self {
        RunReader {
            options: options.clone(),
            budget: options.memory_budget,
            fold: None,
            current: None,
            done: Vec::new(),
            failed: Vec::new(),
            exports: Vec::new(),
            bytes_read: 0,
        }
    }

    /// Fail the file being read with `INPUT_TOO_LARGE` when `budget` is exceeded after a push.
    pub fn with_memory_budget(mut self, budget: MemoryBudget) -> Self {
        self.budget = Some(budget);
        self
    }

    /// Fold scrape JSONL files into per-series evidence as they are read, instead of keeping
    /// their scrapes, and `profile_export.jsonl` into what accounting reads of its records:
    /// memory then grows by a few bytes per sample and per record, and past three quarters of
    /// the memory budget the scrape fold is thinned soundly
    /// ([`crate::account::fold::ScrapeFold::coarsen`]) before the budget refuses anything.
    /// [`RunReader::finish_folded`] gives the fold beside the run (whose `scrapes` then hold
    /// only the other scrapes, Prometheus captures, and whose `profile` no records).
    pub fn with_fold(mut self) -> Self {
        self.fold = Some(Folded::default());
        self
    }

    /// Bytes read so far, every file together (bytes of a file that is not read, once that is
    /// known, are not counted unless pushed). `options.progress` is told the same.
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// Start the next file. A file still open is ended first.
    pub fn begin_file(&mut self, name: &str) {
        self.end_file();
        let state = match recognise_name(name) {
            Recognition::Read(kind) => self.start(name, kind),
            Recognition::Ignored(reason) => {
                State::Ended(ArtifactKind::Other, Outcome::Ignored(reason))
            }
            Recognition::Unknown => State::Sniffing(Vec::new()),
        };
        self.current = Some(Current {
            name: name.to_string(),
            bytes: 0,
            state,
            folded: None,
        });
    }

    /// The next bytes of the file begun. Returns whether more of its bytes are wanted: `false`
    /// when the file is not read (ignored, not needed after another file failed, or failed
    /// itself); its remaining bytes may then be skipped (pushing them does nothing).
    pub fn push(&mut self, chunk: &[u8]) -> bool {
        let Some(cur) = self.current.as_mut() else {
            return false;
        };
        cur.bytes += chunk.len() as u64;
        if let State::Sniffing(head) = &mut cur.state {
            let room = HEAD - head.len();
            if chunk.len() < room {
                head.extend_from_slice(chunk);
            } else {
                let mut head = std::mem::take(head);
                head.extend_from_slice(&chunk[..room]);
                self.decide(&head);
                self.feed(&head);
                self.feed(&chunk[room..]);
            }
        } else {
            self.feed(chunk);
        }
        self.count(chunk.len() as u64);
        self.check_budget();
        self.wants_more()
    }

    /// The file begun has ended.
    pub fn end_file(&mut self) {
        let Some(mut cur) = self.current.take() else {
            return;
        };
        if let State::Sniffing(head) = &mut cur.state {
            // Shorter than the head: its bytes decide, then are its content.
            let head = std::mem::take(head);
            self.current = Some(cur);
            self.decide(&head);
            self.feed(&head);
            self.check_budget();
            let Some(decided) = self.current.take() else {
                return;
            };
            cur = decided;
        }
        let (kind, outcome) = match cur.state {
            State::Sniffing(_) => (ArtifactKind::Other, Outcome::Ignored(UNRECOGNISED)),
            State::Reading(kind, mut reader) => {
                let fold = &mut self.fold;
                let ended = admitted(self.budget, (&cur.name, cur.bytes), || {
                    drain(fold, &cur.name, &mut cur.folded, reader.as_mut(), true)
                        .and_then(|()| reader.finish())
                });
                match ended {
                    Ok(out) => (kind, Outcome::Read(Box::new(out))),
                    Err(r) => (kind, Outcome::Failed(r)),
                }
            }
            State::Ended(kind, outcome) => (kind, outcome),
        };
        if let Outcome::Read(out) = &outcome {
            if let Output::ServerJson(_) | Output::ServerCsv(_) = **out {
                self.exports.push(self.done.len());
            }
        }
        self.done.push(FileDone {
            name: cur.name,
            kind,
            outcome,
        });
        self.check_budget_after(cur.bytes);
        if self
            .done
            .last()
            .is_some_and(|d| matches!(d.outcome, Outcome::Failed(_)))
        {
            self.failed.push(self.done.len() - 1);
            self.drop_outputs();
        }
    }

    /// A whole file at once: the same as `begin_file`, `push` and `end_file` (a reader that
    /// reads whole files reads it in place).
    pub fn file(&mut self, name: &str, bytes: &[u8]) {
        let head = &bytes[..bytes.len().min(HEAD)];
        // Reading a slice cannot fail.
        let _ = self.read_from(name, head, &mut &bytes[..]);
    }

    /// A whole file from `input`, its first bytes `head` read apart (for recognition; `input`
    /// still starts at the file's start): a reader of whole files reads `input` itself (a
    /// buffer in place, a file as it streams), a streaming reader is pushed what `input`
    /// yields. An I/O error of `input` between chunks stops and is returned.
    pub(crate) fn read_from(
        &mut self,
        name: &str,
        head: &[u8],
        input: &mut dyn BufRead,
    ) -> std::io::Result<()> {
        self.begin_file(name);
        let Some(mut cur) = self.current.take() else {
            return Ok(());
        };
        if matches!(cur.state, State::Sniffing(_)) {
            self.current = Some(cur);
            self.decide(head);
            let Some(decided) = self.current.take() else {
                return Ok(());
            };
            cur = decided;
        }
        let reading = matches!(cur.state, State::Reading(..));
        self.current = Some(cur);
        if reading {
            self.pump(input)?;
        }
        self.end_file();
        Ok(())
    }

    /// Push what `input` yields until it ends or the file wants no more.
    fn pump(&mut self, input: &mut dyn BufRead) -> std::io::Result<()> {
        loop {
            let chunk = match input.fill_buf() {
                Ok([]) => return Ok(()),
                Ok(chunk) => chunk,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            let n = chunk.len();
            let more = self.push(chunk);
            input.consume(n);
            if !more {
                return Ok(());
            }
        }
    }

    fn count(&mut self, n: u64) {
        self.bytes_read += n;
        if let Some(p) = &self.options.progress {
            (p.0)(self.bytes_read);
        }
    }

    /// Whether the file begun, or being pushed, still wants bytes: false for a file its name
    /// says is not read, one that can no longer change the outcome (a file that sorts after
    /// one that failed), and one whose reader has stopped.
    pub fn wants_more(&self) -> bool {
        matches!(
            &self.current,
            Some(Current {
                state: State::Sniffing(_) | State::Reading(..),
                ..
            })
        )
    }

    /// The reader of a file recognised as `kind`, unless its bytes are not needed.
    fn start(&self, name: &str, kind: ArtifactKind) -> State {
        if kind == ArtifactKind::LaunchFacts && self.options.launch.is_some() {
            // Explicit launch facts replace a launch file unread: a broken one must not fail.
            let reason = "launch facts replaced by the ones given explicitly";
            return State::Ended(ArtifactKind::Other, Outcome::Ignored(reason));
        }
        if !self.could_matter(name, kind) {
            return State::Ended(kind, Outcome::Skipped);
        }
        let (families, fold) = (&self.options.families, self.fold.is_some());
        match reader_for(kind, name, families, fold) {
            Some(r) => State::Reading(kind, r),
            None => State::Ended(ArtifactKind::Other, Outcome::Ignored(UNRECOGNISED)),
        }
    }

    /// Decide the sniffed file's format from its first bytes.
    fn decide(&mut self, head: &[u8]) {
        let Some(name) = self.current.as_ref().map(|c| c.name.clone()) else {
            return;
        };
        let state = match recognise(&name, head) {
            Ok(kind) => self.start(&name, kind),
            Err(reason) => State::Ended(ArtifactKind::Other, Outcome::Ignored(reason)),
        };
        if let Some(cur) = self.current.as_mut() {
            cur.state = state;
        }
    }

    /// Whether the file `name` of `kind` can still change the run's outcome, given the files
    /// that have failed (errors are reported in the order [`assemble`] gives).
    fn could_matter(&self, name: &str, kind: ArtifactKind) -> bool {
        let manifest = kind == ArtifactKind::CaptureManifest;
        let mut failed = self.failed.iter().filter_map(|&i| self.done.get(i));
        failed.all(|d| {
            if d.kind == ArtifactKind::CaptureManifest {
                manifest && name < d.name.as_str()
            } else {
                manifest || name < d.name.as_str()
            }
        })
    }

    /// Hand `bytes` to the current file's reader; a failure ends the file.
    fn feed(&mut self, bytes: &[u8]) {
        let Some(cur) = self.current.as_mut() else {
            return;
        };
        if bytes.is_empty() {
            return;
        }
        if let State::Reading(kind, reader) = &mut cur.state {
            let fold = &mut self.fold;
            // A folding reader folds each piece before the next is read; the export's framer
            // scans each in place, opening its series (a whole buffer at once, its series
            // parsed whole, read the 10 MB export at 535-620 MB/s in the criterion bench, in
            // 1 MiB pieces at 769).
            let pieces =
                (fold.is_some() && reader.folds()) || *kind == ArtifactKind::ServerMetricsJson;
            let piece = if pieces { FOLD_PIECE } else { bytes.len() };
            let mut pushed = Ok(());
            for part in bytes.chunks(piece) {
                pushed = admitted(self.budget, (&cur.name, cur.bytes), || {
                    reader.push(part).and_then(|()| {
                        drain(fold, &cur.name, &mut cur.folded, reader.as_mut(), false)
                    })
                });
                if pushed.is_err() {
                    break;
                }
            }
            if let Err(r) = pushed {
                cur.state = State::Ended(*kind, Outcome::Failed(r));
            }
        }
    }

    /// Under memory pressure (past three quarters of the budget): thin the fold (see
    /// [`crate::account::fold::ScrapeFold::coarsen`]) once it has grown by half since it was
    /// last thinned; under pressure still, drop the counter timeslices read so far
    /// ([`shed_slices`]); past the budget still, thin the fold until it is back under or
    /// cannot give more. (Pressure, not the budget, sheds: one push can take several MB more
    /// before the budget is checked, and linear memory never shrinks.)
    fn relieve(&mut self) {
        let Some(budget) = self.budget else {
            return;
        };
        let pressure = budget.limit / 4 * 3;
        let thin = |fold: &mut Folded, bound: u64, always: bool| loop {
            let in_use = (budget.in_use)();
            let due = always || fold.scrapes.grew_since_thinned();
            if in_use <= bound || !due || !fold.scrapes.coarsen() {
                break;
            }
        };
        let Some(fold) = self.fold.as_mut() else {
            return;
        };
        thin(fold, pressure, false);
        if (budget.in_use)() > pressure && self.shed() {
            if let Some(fold) = self.fold.as_mut() {
                fold.scrapes.note_thinned();
            }
        }
        if let Some(fold) = self.fold.as_mut() {
            thin(fold, budget.limit, true);
        }
    }

    /// Drop the counter timeslices read so far, in the file being read and in the exports
    /// already read ([`shed_slices`]); whether any were dropped.
    fn shed(&mut self) -> bool {
        let mut shed = false;
        if let Some(Current {
            state: State::Reading(_, reader),
            ..
        }) = self.current.as_mut()
        {
            shed |= reader.shed();
        }
        for &at in &self.exports {
            let Some(d) = self.done.get_mut(at) else {
                continue;
            };
            if let Outcome::Read(out) = &mut d.outcome {
                if let Output::ServerJson(export) | Output::ServerCsv(export) = out.as_mut() {
                    let families = export.metrics.iter_mut().chain(&mut export.warmup_metrics);
                    let lean = families.flat_map(|f| f.lean_series.iter_mut());
                    shed |= shed_slices(lean.map(|s| &mut s.counter_slices));
                }
            }
        }
        shed
    }

    fn over_budget(&self) -> Option<MemoryBudget> {
        let budget = self.budget?;
        ((budget.in_use)() > budget.limit).then_some(budget)
    }

    /// Past the memory budget, the file being read fails with `INPUT_TOO_LARGE`.
    fn check_budget(&mut self) {
        self.relieve();
        let Some(limit) = self.over_budget() else {
            return;
        };
        let Some(cur) = self.current.as_mut() else {
            return;
        };
        if let State::Reading(kind, _) = &cur.state {
            let err = too_large(&cur.name, cur.bytes, limit);
            cur.state = State::Ended(*kind, Outcome::Failed(err.into()));
        }
    }

    /// Past the memory budget once a file has been read (`bytes` long), it fails with
    /// `INPUT_TOO_LARGE`.
    fn check_budget_after(&mut self, bytes: u64) {
        self.relieve();
        let Some(limit) = self.over_budget() else {
            return;
        };
        if let Some(last) = self.done.last_mut() {
            if matches!(last.outcome, Outcome::Read(_)) {
                last.outcome = Outcome::Failed(too_large(&last.name, bytes, limit).into());
            }
        }
    }

    /// The run fails (a file failed): what was read is no longer needed, and the memory it
    /// holds is given back at once.
    fn drop_outputs(&mut self) {
        if self.fold.is_some() {
            self.fold = Some(Folded::default());
        }
        for d in &mut self.done {
            if matches!(d.outcome, Outcome::Read(_)) {
                d.outcome = Outcome::Dropped;
            }
        }
    }

    /// The run read from every file given.
    pub fn finish(self) -> Result<Run, ReadError> {
        self.finish_refusal().map_err(|r| r.error)
    }

    /// [`RunReader::finish`], a late refusal kept with its JSON path for [`read_run`] to place.
    fn finish_refusal(mut self) -> Result<Run, Refusal> {
        self.end_file();
        let RunReader {
            options,
            done,
            budget,
            ..
        } = self;
        assemble_within(budget, done, &options)
    }

    /// The run and the scrapes folded while reading ([`RunReader::with_fold`]; an empty fold
    /// without it): account them with `crate::account::account_run_folded`.
    pub fn finish_folded(self) -> Result<(Run, Folded), ReadError> {
        self.finish_folded_refusal().map_err(|r| r.error)
    }

    /// [`RunReader::finish_folded`], a late refusal kept for [`read_run_folded`] to place.
    fn finish_folded_refusal(mut self) -> Result<(Run, Folded), Refusal> {
        self.end_file();
        self.relieve();
        let fold = self.fold.take().unwrap_or_default();
        let RunReader {
            options,
            done,
            budget,
            ..
        } = self;
        assemble_within(budget, done, &options).map(|run| (run, fold))
    }
}

/// Fold what `reader` has read into `fold` (when there is one); `name` is the file's, and
/// `folded` its source index and scrape count in the fold.
fn drain(
    fold: &mut Option<Folded>,
    name: &str,
    folded: &mut Option<(u32, u64)>,
    reader: &mut dyn FileRead,
    at_end: bool,
) -> Result<(), Refusal> {
    let Some(fold) = fold.as_mut() else {
        return Ok(());
    };
    let mut cursor = FoldCursor {
        name,
        source: folded,
    };
    reader.drain(at_end, fold, &mut cursor)
}

/// `step` of the file `name` (read up to byte `at`) with the growth of the tables it makes
/// admitted under `budget` ([`crate::admission`]): one refused fails the file with
/// `INPUT_TOO_LARGE` before memory grows past the budget (checked only between steps, a
/// table's doubling took linear memory past it).
fn admitted<T>(
    budget: Option<MemoryBudget>,
    (name, at): (&str, u64),
    step: impl FnOnce() -> Result<T, Refusal>,
) -> Result<T, Refusal> {
    let Some(b) = budget else {
        return step();
    };
    match admission::under(b, step) {
        Some(done) => done,
        None => Err(too_large(name, at, b).into()),
    }
}

/// [`assemble`] with its lists admitted under `budget`: past it, `INPUT_TOO_LARGE` of the
/// file `accounting` (the step after the last byte), before memory grows.
fn assemble_within(
    budget: Option<MemoryBudget>,
    done: Vec<FileDone>,
    options: &RunOptions,
) -> Result<Run, Refusal> {
    let Some(b) = budget else {
        return assemble(done, options);
    };
    let mut assembled = None;
    let admitted = admission::under(b, || assembled = Some(assemble(done, options)));
    match (assembled, admitted) {
        // A file's own failure stands (the heap may be past the budget because of it).
        (Some(Err(r)), _) => Err(r),
        (Some(Ok(run)), Some(())) => Ok(run),
        _ => Err(ReadError::whole(
            ErrorCode::InputTooLarge,
            "accounting",
            format!(
                "the run's scrapes need more memory than the budget of {} allows",
                b.budget_text()
            ),
        )
        .into()),
    }
}

fn too_large(name: &str, at: u64, budget: MemoryBudget) -> ReadError {
    let budget = budget.budget_text();
    let position = Position {
        byte_offset: Some(u32::try_from(at).unwrap_or(u32::MAX)),
        ..Position::default()
    };
    ReadError::new(
        ErrorCode::InputTooLarge,
        name,
        position,
        format!(
            "the run's evidence needs more memory than the budget of {budget} allows (reached by byte {at} of this file)"
        ),
    )
}

/// Capture metadata by base name: from the `captures.json` manifests (in name order), then the
/// caller's. A manifest that failed is the run's error, before any other file's.
fn capture_meta(
    done: &mut [FileDone],
    options: &RunOptions,
) -> Result<BTreeMap<String, CaptureMeta>, Refusal> {
    let mut captures = BTreeMap::new();
    for d in done.iter_mut() {
        if d.kind != ArtifactKind::CaptureManifest {
            continue;
        }
        match std::mem::replace(&mut d.outcome, Outcome::Dropped) {
            Outcome::Failed(r) => return Err(r),
            Outcome::Read(out) => {
                if let Output::Manifest(entries) = *out {
                    captures.extend(entries);
                }
            }
            _ => {}
        }
    }
    for (k, v) in &options.captures {
        captures.insert(base_name(k).to_string(), v.clone());
    }
    Ok(captures)
}

/// The capture's metadata, where the manifests or the caller give it (as the reader would
/// have applied it: a given URL or time replaces the one it found).
fn apply_capture_meta(scrape: &mut Scrape, meta: Option<&CaptureMeta>) {
    let Some(meta) = meta else {
        return;
    };
    if let Some(url) = &meta.endpoint_url {
        scrape.endpoint_url = url.clone();
    }
    if let Some(t) = meta.timestamp_ns {
        scrape.timestamp_ns = Some(t);
    }
}

/// Kinds a run takes one file of.
fn once_only(kind: ArtifactKind) -> bool {
    matches!(
        kind,
        ArtifactKind::ServerMetricsJson
            | ArtifactKind::ServerMetricsCsv
            | ArtifactKind::ProfileJsonl
            | ArtifactKind::RunSummary
            | ArtifactKind::LaunchFacts
    )
}

/// The run from its files' outcomes, in name order: a capture manifest's error first, then
/// the first file in name order that failed or repeats a kind taken once
/// (`DUPLICATE_INPUT`), then `NO_ARTIFACTS`, then a large untyped value typed as a counter
/// elsewhere.
fn assemble(mut done: Vec<FileDone>, options: &RunOptions) -> Result<Run, Refusal> {
    // Stable: files of one name stay in the order they came.
    crate::sort::sort_by(&mut done, |a, b| a.name.cmp(&b.name));
    let captures = capture_meta(&mut done, options)?;

    let mut server_json = None;
    let mut server_csv = None;
    let mut profile = None;
    let mut summary = None;
    let mut launch_file = None;
    // Each scrape beside its file's name, in file order (a stable sort keeps it for equal
    // keys). Sized once, and admitted under a memory limit: grown by doubling, the list of
    // 80,000 captures' scrapes left its old copies as holes a stream's memory grew past.
    let count = scrape_count(&done);
    let keep = crate::admission::admit_items::<(Scrape, String)>(count);
    let mut scrapes: Vec<Scrape> = Vec::with_capacity(if keep { count } else { 0 });
    let mut scrape_files: Vec<String> = Vec::with_capacity(if keep { count } else { 0 });
    let mut folded: Vec<(String, Vec<UntypedLarge>)> = Vec::new();
    let mut files = Vec::with_capacity(done.len());
    let mut ignored = Vec::new();
    // The first file of each once-only kind (a handful: a list, not a map of its own).
    let mut first_of_kind: Vec<(ArtifactKind, String)> = Vec::new();
    let mut benchmark_ids = BTreeMap::new();
    let mut note_id = |name: &str, id: &Option<String>| {
        if let Some(id) = id.as_deref().map(str::trim).filter(|i| !i.is_empty()) {
            if id != "None" {
                benchmark_ids.insert(name.to_string(), id.to_string());
            }
        }
    };

    for d in done {
        let FileDone {
            name,
            kind,
            outcome,
        } = d;
        let output = match outcome {
            Outcome::Ignored(reason) => {
                ignored.push(IgnoredFile {
                    name,
                    reason: reason.to_string(),
                });
                continue;
            }
            Outcome::Failed(r) => return Err(r),
            Outcome::Read(out) => Some(*out),
            Outcome::Dropped | Outcome::Skipped => None,
        };
        files.push(RunFile {
            name: name.clone(),
            kind,
        });
        if once_only(kind) {
            if let Some((_, first)) = first_of_kind.iter().find(|(k, _)| *k == kind) {
                return Err(ReadError::whole(
                    ErrorCode::DuplicateInput,
                    &name,
                    format!("a run takes one file of this kind; `{first}` was given too"),
                )
                .into());
            }
            first_of_kind.push((kind, name.clone()));
        }
        match output {
            Some(Output::ServerJson(export)) => {
                note_id(&name, &export.benchmark_id);
                server_json = Some((name, *export));
            }
            Some(Output::ServerCsv(export)) => {
                note_id(&name, &export.benchmark_id);
                server_csv = Some((name, *export));
            }
            // Refused (the call is then refused too): what is left is hurried through.
            Some(Output::Scrapes(_) | Output::Capture(_)) if !keep => {}
            Some(Output::Scrapes(set)) => {
                for s in set {
                    scrapes.push(s);
                    scrape_files.push(name.clone());
                }
            }
            Some(Output::Capture(mut s)) => {
                apply_capture_meta(&mut s, captures.get(base_name(&name)));
                scrapes.push(s);
                scrape_files.push(name);
            }
            Some(Output::Profile(p)) => profile = Some(p),
            Some(Output::Summary(s)) => {
                note_id(&name, &s.benchmark_id);
                summary = Some(*s);
            }
            Some(Output::Launch(l)) => launch_file = Some(*l),
            Some(Output::Folded(larges)) => folded.push((name, larges)),
            Some(Output::Manifest(_)) | None => {}
        }
    }

    if files
        .iter()
        .all(|f| f.kind == ArtifactKind::CaptureManifest)
    {
        return Err(ReadError::whole(
            ErrorCode::NoArtifacts,
            &all_names(&files, &ignored),
            "no AIPerf artifact among the inputs (expected server_metrics_export.{json,csv,jsonl}, profile_export.jsonl, profile_export_aiperf.json or Prometheus captures)",
        )
        .into());
    }

    refuse_typed_counters(
        (&scrapes, &scrape_files),
        &folded,
        &server_json,
        &server_csv,
    )?;
    sort_scrapes(&mut scrapes, &mut scrape_files);

    crate::sort::sort_by(&mut ignored, |a, b| a.cmp(b));
    Ok(Run {
        files,
        ignored,
        benchmark_ids,
        server_json: server_json.map(|(_, v)| v),
        server_csv: server_csv.map(|(_, v)| v),
        scrapes,
        scrape_files,
        profile,
        summary,
        launch: options.launch.clone().or(launch_file),
    })
}

/// The scrapes the files of `done` hold (a scrape JSONL's, and one per capture).
fn scrape_count(done: &[FileDone]) -> usize {
    done.iter()
        .map(|d| match &d.outcome {
            Outcome::Read(out) => match &**out {
                Output::Scrapes(set) => set.len(),
                Output::Capture(_) => 1,
                _ => 0,
            },
            _ => 0,
        })
        .sum()
}

/// Every file's name, in name order, for a message about them all (the run's files and
/// those ignored: every file given).
fn all_names(files: &[RunFile], ignored: &[IgnoredFile]) -> String {
    let mut names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
    names.extend(ignored.iter().map(|i| i.name.as_str()));
    crate::sort::sort_by(&mut names, |a, b| a.cmp(b));
    names.join(", ")
}

/// Read every file of one run: a [`RunReader`] given the files in name order (so an error
/// stops the reading of the files after it), each whole buffer in place and each path or
/// source as it streams. Files are processed in name order, so the result does not depend on
/// the order the caller lists them in. A file that cannot be opened or read is an `IO` error
/// at once.
pub fn read_run(inputs: &[InputFile<'_>], options: &RunOptions) -> Result<Run, ReadError> {
    let mut reader = RunReader::new(options);
    let order = feed(&mut reader, inputs)?;
    reader.finish_refusal().map_err(|r| place(&order, r))
}

/// [`read_run`], folding scrape JSONL and per-request records as they are read
/// ([`RunReader::with_fold`]): the run and the fold, for
/// `crate::account::account_run_folded`. The same accounting as [`read_run`]'s run, in a few
/// bytes per sample instead of the samples.
pub fn read_run_folded(
    inputs: &[InputFile<'_>],
    options: &RunOptions,
) -> Result<(Run, Folded), ReadError> {
    let mut reader = RunReader::new(options).with_fold();
    let order = feed(&mut reader, inputs)?;
    reader.finish_folded_refusal().map_err(|r| place(&order, r))
}

/// Give `reader` the files in name order (returned).
fn feed<'i, 'a>(
    reader: &mut RunReader,
    inputs: &'i [InputFile<'a>],
) -> Result<Vec<&'i InputFile<'a>>, ReadError> {
    let mut order: Vec<&InputFile<'_>> = inputs.iter().collect();
    crate::sort::sort_by(&mut order, |a, b| a.name.cmp(&b.name));
    for f in &order {
        match &f.data {
            InputData::Bytes(b) => reader.file(&f.name, b),
            InputData::Path(_) | InputData::Source(_) => {
                let head = f.head()?;
                reader
                    .read_from(&f.name, &head, &mut f.open()?)
                    .map_err(|e| {
                        ReadError::whole(ErrorCode::Io, &f.name, format!("cannot read: {e}"))
                    })?;
            }
        }
    }
    Ok(order)
}

/// A run's refusal, placed in its file when it came late (see [`place_late_refusal`]).
fn place(order: &[&InputFile<'_>], r: Refusal) -> ReadError {
    match order.iter().find(|f| f.name == r.error.file) {
        Some(f) => place_late_refusal(f, r),
        None => r.error,
    }
}
