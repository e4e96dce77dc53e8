//! One benchmark point ("run") assembled from its files, whatever order they come in.

use super::artifact::{recognise, ArtifactKind};
use super::filter::FamilyFilter;
use super::launch::read_launch_json;
use super::profile_jsonl::read_profile_jsonl;
use super::profile_summary::read_run_summary;
use super::prometheus_text::read_prometheus_text;
use super::scrape_jsonl::read_scrapes_jsonl;
use super::server_csv::read_server_metrics_csv;
use super::server_json::{read_export, Refusal};
use crate::error::{ErrorCode, Position, ReadError};
use crate::model::{
    LaunchFacts, MetricType, ProfileExport, RunSummary, Scrape, ServerMetricsExport,
};
use crate::read::count;
use crate::read::locate::locate_bytes;
use crate::read::names::canonical_family;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;

/// Bytes of one input file, or (native only) a path to stream it from.
#[derive(Debug, Clone)]
pub enum InputData<'a> {
    Bytes(&'a [u8]),
    Path(PathBuf),
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
            InputData::Path(p) => {
                let f = std::fs::File::open(p).map_err(|e| {
                    ReadError::whole(ErrorCode::Io, &self.name, format!("cannot open: {e}"))
                })?;
                Ok(Box::new(BufReader::with_capacity(1 << 20, f)))
            }
        }
    }

    /// The file's size in bytes, when it can be known without reading it.
    pub fn size(&self) -> Option<u64> {
        match &self.data {
            InputData::Bytes(b) => Some(b.len() as u64),
            InputData::Path(p) => std::fs::metadata(p).ok().map(|m| m.len()),
        }
    }

    /// The content, telling `progress` (if any) the run's bytes read so far, `before` of them
    /// in earlier files.
    fn open_counted(
        &self,
        progress: &Option<Progress>,
        before: u64,
    ) -> Result<Box<dyn BufRead + 'a>, ReadError> {
        let inner = self.open()?;
        Ok(match progress {
            None => inner,
            Some(p) => Box::new(Counted {
                inner,
                read: before,
                progress: p.clone(),
            }),
        })
    }

    /// The first bytes, for format sniffing.
    pub(crate) fn head(&self) -> Result<Vec<u8>, ReadError> {
        let mut buf = Vec::with_capacity(4096);
        self.open()?.take(4096).read_to_end(&mut buf).map_err(|e| {
            ReadError::whole(ErrorCode::Io, &self.name, format!("cannot read: {e}"))
        })?;
        Ok(buf)
    }

    fn read_text(&self) -> Result<String, ReadError> {
        let mut buf = Vec::new();
        self.open()?.read_to_end(&mut buf).map_err(|e| {
            ReadError::whole(ErrorCode::Io, &self.name, format!("cannot read: {e}"))
        })?;
        String::from_utf8(buf).map_err(|e| {
            let pos = Position {
                byte_offset: Some(crate::error::clamp_u32(e.utf8_error().valid_up_to())),
                ..Position::default()
            };
            ReadError::new(
                ErrorCode::NotUtf8,
                &self.name,
                pos,
                "the file is not UTF-8 text",
            )
        })
    }
}

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

/// A reader that tells a [`Progress`] the bytes handed out so far: `read` starts at the bytes
/// of the run's files read before this one.
struct Counted<R> {
    inner: R,
    read: u64,
    progress: Progress,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        (self.progress.0)(self.read);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counted<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        self.inner.consume(amt);
        self.read += amt as u64;
        (self.progress.0)(self.read);
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
#[derive(Deserialize)]
#[serde(expecting = "a capture object (`file`, `endpoint_url`, `timestamp_ns`)")]
struct CaptureManifestEntry {
    file: String,
    #[serde(default)]
    endpoint_url: Option<String>,
    #[serde(default)]
    timestamp_ns: Option<u64>,
}

#[derive(Deserialize)]
#[serde(expecting = "a capture manifest object (`captures`)")]
struct CaptureManifest {
    captures: Vec<CaptureManifestEntry>,
}

fn base_name(name: &str) -> &str {
    name.rsplit(['/', '\\']).next().unwrap_or(name)
}

fn only_once<T>(slot: &mut Option<(String, T)>, name: &str, value: T) -> Result<(), ReadError> {
    if let Some((first, _)) = slot {
        return Err(ReadError::whole(
            ErrorCode::DuplicateInput,
            name,
            format!("a run takes one file of this kind; `{first}` was given too"),
        ));
    }
    *slot = Some((name.to_string(), value));
    Ok(())
}

/// What each input is (in `order`), and the inputs not read with their reasons.
fn recognise_all(
    order: &[&InputFile<'_>],
    options: &RunOptions,
) -> Result<(Vec<ArtifactKind>, Vec<IgnoredFile>), ReadError> {
    let mut kinds = Vec::with_capacity(order.len());
    let mut ignored = Vec::new();
    for f in order {
        let kind = match recognise(&f.name, &f.head()?) {
            // Explicit launch facts replace a launch file unread: a broken one must not fail.
            Ok(ArtifactKind::LaunchFacts) if options.launch.is_some() => {
                Err("launch facts replaced by the ones given explicitly")
            }
            other => other,
        };
        match kind {
            Ok(kind) => kinds.push(kind),
            Err(reason) => {
                kinds.push(ArtifactKind::Other);
                ignored.push(IgnoredFile {
                    name: f.name.clone(),
                    reason: reason.to_string(),
                });
            }
        }
    }
    Ok((kinds, ignored))
}

/// Capture metadata by base name: from `captures.json` manifests, then the caller's.
fn capture_meta(
    order: &[&InputFile<'_>],
    kinds: &[ArtifactKind],
    options: &RunOptions,
) -> Result<BTreeMap<String, CaptureMeta>, ReadError> {
    let mut captures = BTreeMap::new();
    for (f, kind) in order.iter().zip(kinds) {
        if *kind == ArtifactKind::CaptureManifest {
            let text = f.read_text()?;
            let de = &mut serde_json::Deserializer::from_str(&text);
            let manifest: CaptureManifest = serde_path_to_error::deserialize(de).map_err(|e| {
                ReadError::from_json_text(&f.name, &text, e.inner(), Some(e.path()))
            })?;
            for entry in manifest.captures {
                let meta = CaptureMeta {
                    endpoint_url: entry.endpoint_url,
                    timestamp_ns: entry.timestamp_ns,
                };
                captures.insert(base_name(&entry.file).to_string(), meta);
            }
        }
    }
    for (k, v) in &options.captures {
        captures.insert(base_name(k).to_string(), v.clone());
    }
    Ok(captures)
}

/// Raw scrapes sorted by endpoint, then time (untimed last), then file and file order, with
/// the file each came from (parallel vector).
fn sort_scrapes(mut scrapes: Vec<(Scrape, String, usize)>) -> (Vec<Scrape>, Vec<String>) {
    scrapes.sort_by(|(a, fa, sa), (b, fb, sb)| {
        (
            &a.endpoint_url,
            a.timestamp_ns.is_none(),
            a.timestamp_ns,
            fa,
            sa,
        )
            .cmp(&(
                &b.endpoint_url,
                b.timestamp_ns.is_none(),
                b.timestamp_ns,
                fb,
                sb,
            ))
    });
    scrapes.into_iter().map(|(s, f, _)| (s, f)).unzip()
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
    scrapes: &[(Scrape, String, usize)],
    server_json: &Option<(String, ServerMetricsExport)>,
    server_csv: &Option<(String, ServerMetricsExport)>,
) -> Result<(), ReadError> {
    if scrapes.iter().all(|(s, _, _)| s.untyped_large.is_empty()) {
        return Ok(());
    }
    let mut counters: BTreeSet<String> = BTreeSet::new();
    for (_, export) in server_json.iter().chain(server_csv) {
        for (_, fam) in export.families() {
            if fam.metric_type == MetricType::Counter {
                counters.insert(canonical_family(&fam.name));
            }
        }
    }
    for (s, _, _) in scrapes {
        for fam in s.families() {
            if fam.metric_type == Some(MetricType::Counter) {
                counters.insert(canonical_family(fam.name));
            }
        }
    }
    for (s, file, _) in scrapes {
        for large in &s.untyped_large {
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
    }
    Ok(())
}

/// Read every file of one run. Files are processed in name order, so the result does not
/// depend on the order the caller lists them in.
pub fn read_run(inputs: &[InputFile<'_>], options: &RunOptions) -> Result<Run, ReadError> {
    let mut order: Vec<&InputFile<'_>> = inputs.iter().collect();
    order.sort_by(|a, b| a.name.cmp(&b.name));

    let (kinds, mut ignored) = recognise_all(&order, options)?;
    let captures = capture_meta(&order, &kinds, options)?;

    let mut server_json = None;
    let mut server_csv = None;
    let mut profile = None;
    let mut summary = None;
    let mut launch_file = None;
    let mut scrapes: Vec<(Scrape, String, usize)> = Vec::new();
    let mut files = Vec::with_capacity(order.len());
    let mut benchmark_ids = BTreeMap::new();
    let mut note_id = |name: &str, id: &Option<String>| {
        if let Some(id) = id.as_deref().map(str::trim).filter(|i| !i.is_empty()) {
            if id != "None" {
                benchmark_ids.insert(name.to_string(), id.to_string());
            }
        }
    };

    let mut before = 0u64;
    for (f, kind) in order.iter().zip(kinds) {
        let start = before;
        before += f.size().unwrap_or(0);
        if kind == ArtifactKind::Other {
            continue;
        }
        files.push(RunFile {
            name: f.name.clone(),
            kind,
        });
        match kind {
            ArtifactKind::ServerMetricsJson => {
                let export = read_export(
                    &f.name,
                    f.open_counted(&options.progress, start)?,
                    &options.families,
                )
                .map_err(|r| place_late_refusal(f, r))?;
                note_id(&f.name, &export.benchmark_id);
                only_once(&mut server_json, &f.name, export)?;
            }
            ArtifactKind::ServerMetricsCsv => {
                let export = read_server_metrics_csv(
                    &f.name,
                    f.open_counted(&options.progress, start)?,
                    &options.families,
                )?;
                note_id(&f.name, &export.benchmark_id);
                only_once(&mut server_csv, &f.name, export)?;
            }
            ArtifactKind::ServerMetricsJsonl => {
                let set = read_scrapes_jsonl(
                    &f.name,
                    f.open_counted(&options.progress, start)?,
                    &options.families,
                )?;
                for s in set.scrapes {
                    let seq = scrapes.len();
                    scrapes.push((s, f.name.clone(), seq));
                }
            }
            ArtifactKind::PrometheusText => {
                let meta = captures
                    .get(base_name(&f.name))
                    .cloned()
                    .unwrap_or_default();
                let s = read_prometheus_text(
                    &f.name,
                    f.open_counted(&options.progress, start)?,
                    &meta,
                    &options.families,
                )?;
                let seq = scrapes.len();
                scrapes.push((s, f.name.clone(), seq));
            }
            ArtifactKind::ProfileJsonl => {
                let p = read_profile_jsonl(&f.name, f.open_counted(&options.progress, start)?)?;
                only_once(&mut profile, &f.name, p)?;
            }
            ArtifactKind::RunSummary => {
                let s = read_run_summary(&f.name, f.open_counted(&options.progress, start)?)?;
                note_id(&f.name, &s.benchmark_id);
                only_once(&mut summary, &f.name, s)?;
            }
            ArtifactKind::LaunchFacts => {
                let l = read_launch_json(&f.name, &f.read_text()?)?;
                only_once(&mut launch_file, &f.name, l)?;
            }
            ArtifactKind::CaptureManifest | ArtifactKind::Other => {}
        }
    }

    let recognised = files
        .iter()
        .any(|f| f.kind != ArtifactKind::CaptureManifest);
    if !recognised {
        let names: Vec<&str> = order.iter().map(|f| f.name.as_str()).collect();
        return Err(ReadError::whole(
            ErrorCode::NoArtifacts,
            &names.join(", "),
            "no AIPerf artifact among the inputs (expected server_metrics_export.{json,csv,jsonl}, profile_export.jsonl, profile_export_aiperf.json or Prometheus captures)",
        ));
    }

    refuse_typed_counters(&scrapes, &server_json, &server_csv)?;
    let (scrapes, scrape_files) = sort_scrapes(scrapes);

    ignored.sort();
    Ok(Run {
        files,
        ignored,
        benchmark_ids,
        server_json: server_json.map(|(_, v)| v),
        server_csv: server_csv.map(|(_, v)| v),
        scrapes,
        scrape_files,
        profile: profile.map(|(_, v)| v),
        summary: summary.map(|(_, v)| v),
        launch: options.launch.clone().or(launch_file.map(|(_, v)| v)),
    })
}
