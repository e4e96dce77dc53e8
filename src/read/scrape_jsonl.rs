//! Reader for AIPerf's raw-scrape `server_metrics_export.jsonl`: one JSON object per line, one
//! line per (scrape, endpoint), raw cumulative values, no type or HELP information.
//!
//! Record keys: `endpoint_url`, `timestamp_ns` (epoch ns, read from the integer token as `u64`,
//! never through `f64`), `metrics` (`{family: [sample, …]}`), optional `benchmark_phase`
//! (`"warmup"` | `"profiling"` | `null`, any case; native 0.12 writers only). Unknown keys
//! (`endpoint_latency_ns`, `request_sent_ns`, `first_byte_ns`, `is_duplicate`, …) are ignored.
//!
//! Samples: scalar `{"labels"?: {…}|null, "value": number}`; histogram
//! `{"labels"?, "buckets": {le: cumulative}, "sum"?, "count"?}` (pre-0.4 writers used the key
//! `histogram` instead of `buckets`: read the same way). Legacy summary samples
//! (`"summary": {…}`) are skipped, and a family left with no sample by that is dropped. Bucket
//! keys are kept exactly as written, in file order. A `null` value, sum, count or bucket count
//! is read as NaN (orjson and msgspec write non-finite floats as `null`).
//!
//! Counts above 2^53 − 1 are refused (`COUNT_TOO_LARGE`, see [`crate::read::count`]): a
//! histogram sample's bucket values and `count`, and the `value` of a counter. The file has no
//! types, so a family is a counter when its name says so ([`counter_by_name`]: `_total`, or a
//! known counter such as `vllm:prompt_tokens`); the large values of other families are kept in
//! [`Scrape::untyped_large`] for [`crate::read::read_run`], which refuses them when another
//! export of the run types the family as a counter (a gauge may exceed 2^53).
//!
//! Families the filter does not want are skipped token by token without being built.
//! The file is pushed in chunks and read line by line; only the unfinished line is held. A
//! series' family and labels are interned once per file ([`SeriesTable`]): a line's labels
//! are looked up by their JSON text, and parsed only the first time that text is seen. Lines
//! are parsed fast; a line that fails is parsed again more carefully, so errors carry the line,
//! the character column and the JSON path.

use crate::error::{json_message, ErrorCode, Position, ReadError};
use crate::hash::{DigestMap, Map as HashMap};
use crate::json_path;
use crate::model::{
    FamilyGroup, FamilyMeta, Histogram, Labels, Phase, SampleValue, Scrape, ScrapeSample,
    ScrapeSet, ScrapeSource, SeriesMeta, SeriesTable, UntypedLarge,
};
use crate::read::count;
use crate::read::locate::{in_line, serde_in_line, OwnedPath, Seg};
use crate::read::names::counter_by_name;
use crate::read::push::{drive, line_text, Lines, PushReader};
use crate::read::FamilyFilter;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

/// The common shape of a line read by hand.
mod fast;

/// Reads a `server_metrics_export.jsonl` pushed in chunks (see [`PushReader`]).
pub struct ScrapeJsonlReader {
    file: String,
    filter: FamilyFilter,
    lines: Lines,
    interner: Interner,
    /// What one line is being read into (reused: its buffers keep their allocations).
    line: LineBuf,
    /// The scrapes read so far, their table still being built (set by `finish`).
    scrapes: Vec<Scrape>,
    /// See [`Ctx::fast`].
    fast: bool,
}

impl ScrapeJsonlReader {
    pub fn new(file: &str, filter: &FamilyFilter) -> Self {
        ScrapeJsonlReader {
            file: file.to_string(),
            filter: filter.clone(),
            lines: Lines::new(),
            interner: Interner::default(),
            line: LineBuf::default(),
            scrapes: Vec::new(),
            fast: true,
        }
    }

    /// Take one line (`terminated` when it ended in `\n`; `ascii` when every byte is).
    fn take(
        &mut self,
        line: &[u8],
        line_no: u64,
        terminated: bool,
        ascii: bool,
    ) -> Result<(), ReadError> {
        let line_no = usize::try_from(line_no).unwrap_or(usize::MAX);
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            return Ok(());
        }
        let text = line_text(line, ascii).map_err(|e| {
            ReadError::new(
                ErrorCode::NotUtf8,
                &self.file,
                Position::line(line_no),
                format!("invalid UTF-8 at byte {} of the line", e.valid_up_to() + 1),
            )
        })?;
        // A UTF-8 byte-order mark at the start of the file is not content.
        let text = if line_no == 1 {
            text.trim_start_matches('\u{feff}')
        } else {
            text
        };
        let scrape = parse_line(
            &self.file,
            line_no,
            text,
            terminated,
            &mut Ctx {
                filter: &self.filter,
                interner: &mut self.interner,
                line: &mut self.line,
                fast: self.fast,
            },
        )?;
        self.scrapes.push(scrape);
        Ok(())
    }
}

impl ScrapeJsonlReader {
    /// The scrapes read so far, taken out as they are (their `table` still unset), with the
    /// table their series and families are indices into (it only grows: indices stay valid).
    /// For a caller that folds scrapes as they come instead of keeping them.
    pub fn drain(&mut self) -> (Vec<Scrape>, &SeriesTable) {
        (std::mem::take(&mut self.scrapes), &self.interner.table)
    }

    /// Read the file's last line if it did not end in `\n` (then [`ScrapeJsonlReader::drain`]
    /// it); [`PushReader::finish`] after this reads nothing more.
    pub fn end_lines(&mut self) -> Result<(), ReadError> {
        let mut lines = std::mem::take(&mut self.lines);
        let r = lines.finish_text(|line, n, ascii| self.take(line, n, false, ascii));
        self.lines = lines;
        r
    }
}

impl PushReader for ScrapeJsonlReader {
    type Output = ScrapeSet;

    fn push(&mut self, chunk: &[u8]) -> Result<(), ReadError> {
        let mut lines = std::mem::take(&mut self.lines);
        let r = lines.push_text(chunk, |line, n, ascii| self.take(line, n, true, ascii));
        self.lines = lines;
        r
    }

    fn finish(mut self) -> Result<ScrapeSet, ReadError> {
        let mut lines = std::mem::take(&mut self.lines);
        lines.finish_text(|line, n, ascii| self.take(line, n, false, ascii))?;
        let Interner { table, skipped, .. } = self.interner;
        let table = Arc::new(table);
        for s in &mut self.scrapes {
            s.table = Arc::clone(&table);
        }
        Ok(ScrapeSet {
            source: ScrapeSource::Jsonl,
            scrapes: self.scrapes,
            skipped_families: u32::try_from(skipped.len()).unwrap_or(u32::MAX),
        })
    }
}

/// Read a `server_metrics_export.jsonl`. See the module docs.
pub fn read_scrapes_jsonl<R: std::io::Read>(
    file: &str,
    reader: R,
    filter: &FamilyFilter,
) -> Result<ScrapeSet, ReadError> {
    drive(file, ScrapeJsonlReader::new(file, filter), reader)
}

/// A family name as the file's lines meet it.
#[derive(Clone, Copy)]
struct FamilyEntry {
    /// Index in the table; `None` when the filter does not want the family.
    index: Option<u32>,
    /// A counter by its name (see [`counter_by_name`]).
    counter: bool,
}

/// The file's families, series and bucket key lists, each kept once.
#[derive(Default)]
struct Interner {
    table: SeriesTable,
    families: HashMap<String, FamilyEntry>,
    /// Per family: labels as written (their JSON text) → series.
    by_text: Vec<HashMap<Box<str>, u32>>,
    /// The family key last met at each position of a `metrics` object: lines repeat their
    /// families in the same order, so most keys are found here without hashing.
    by_position: Vec<Option<(Box<str>, FamilyEntry)>>,
    /// Per family: the labels text and series last met at each sample index (likewise).
    by_index: Vec<Vec<Option<LastLabels>>>,
    /// Per family: labels → series (the same labels written differently are one series).
    by_labels: Vec<DigestMap<Arc<Labels>, u32>>,
    /// Distinct bucket key lists, the last used first.
    les: Vec<Arc<[String]>>,
    /// Families present but not wanted by the filter.
    skipped: BTreeSet<String>,
}

impl Interner {
    /// The family of the key at `position` of a `metrics` object.
    fn family_at(&mut self, position: usize, name: &str, filter: &FamilyFilter) -> FamilyEntry {
        if let Some(Some((last, entry))) = self.by_position.get(position) {
            if **last == *name {
                return *entry;
            }
        }
        let entry = self.family(name, filter);
        if self.by_position.len() <= position {
            self.by_position.resize(position + 1, None);
        }
        if let Some(slot) = self.by_position.get_mut(position) {
            *slot = Some((name.into(), entry));
        }
        entry
    }

    fn family(&mut self, name: &str, filter: &FamilyFilter) -> FamilyEntry {
        if let Some(e) = self.families.get(name) {
            return *e;
        }
        let index = if filter.wants(name) {
            let i = u32::try_from(self.table.families.len()).unwrap_or(u32::MAX);
            self.table.families.push(FamilyMeta {
                name: name.to_string(),
                metric_type: None,
                help: None,
            });
            self.by_text.push(HashMap::default());
            self.by_labels.push(DigestMap::default());
            self.by_index.push(Vec::new());
            Some(i)
        } else {
            self.skipped.insert(name.to_string());
            None
        };
        let entry = FamilyEntry {
            index,
            counter: counter_by_name(name),
        };
        self.families.insert(name.to_string(), entry);
        entry
    }

    /// The series of `family` with these labels as written (`None`: no labels), for the
    /// sample at `index` of its family.
    fn series_at(&mut self, family: u32, index: usize, text: Option<&str>) -> Result<u32, String> {
        let text = text.unwrap_or("null");
        let f = family as usize;
        let Some(slots) = self.by_index.get_mut(f) else {
            return self.series_by_text(family, text);
        };
        if let Some(Some((last, s))) = slots.get(index) {
            if **last == *text {
                return Ok(*s);
            }
        }
        let s = self.series_by_text(family, text)?;
        if let Some(slots) = self.by_index.get_mut(f) {
            if slots.len() <= index {
                slots.resize(index + 1, None);
            }
            if let Some(slot) = slots.get_mut(index) {
                *slot = Some((text.into(), s));
            }
        }
        Ok(s)
    }

    /// The series of `family` with these labels as written.
    fn series_by_text(&mut self, family: u32, text: &str) -> Result<u32, String> {
        let f = family as usize;
        if let Some(&s) = self.by_text.get(f).and_then(|m| m.get(text)) {
            return Ok(s);
        }
        let labels: Option<Labels> =
            serde_json::from_slice(text.as_bytes()).map_err(|e| e.to_string())?;
        let s = self.series(family, labels.unwrap_or_default());
        if let Some(m) = self.by_text.get_mut(f) {
            m.insert(text.into(), s);
        }
        Ok(s)
    }

    fn series(&mut self, family: u32, labels: Labels) -> u32 {
        let f = family as usize;
        if let Some(&s) = self.by_labels.get(f).and_then(|m| m.get(&labels)) {
            return s;
        }
        let s = u32::try_from(self.table.series.len()).unwrap_or(u32::MAX);
        let labels = Arc::new(labels);
        self.table.series.push(SeriesMeta {
            family,
            labels: Arc::clone(&labels),
        });
        if let Some(m) = self.by_labels.get_mut(f) {
            m.insert(labels, s);
        }
        s
    }

    /// The shared list of these bucket keys.
    fn les(&mut self, keys: &[Key<'_>]) -> Arc<[String]> {
        let same = |l: &Arc<[String]>| {
            l.len() == keys.len() && l.iter().zip(keys).all(|(a, b)| a.as_str() == b.as_str())
        };
        if let Some(i) = self.les.iter().position(same) {
            if i > 0 {
                let hit = self.les.remove(i);
                self.les.insert(0, hit);
            }
            if let Some(l) = self.les.first() {
                return Arc::clone(l);
            }
        }
        let list: Arc<[String]> = keys.iter().map(|k| k.as_str().to_string()).collect();
        self.les.insert(0, Arc::clone(&list));
        list
    }
}

/// The labels text last met at one sample index of a family, and its series.
type LastLabels = (Box<str>, u32);

/// One line's families and samples as they are read.
#[derive(Default)]
struct LineBuf {
    /// Families in order of first appearance: (family, kept occurrences of its key,
    /// occurrences whose samples were all legacy summaries, when it was first kept).
    families: Vec<(u32, usize, usize, usize)>,
    /// Each family's position in `families` + 1 by its index (0: not in the line): a search of
    /// `families` per key was quadratic in a line's families (20,000 in a line: 74 % of
    /// `inspect`'s time).
    at: Vec<u32>,
    /// Samples with the position of their family in `families`.
    samples: Vec<(u32, ScrapeSample)>,
    /// Families kept so far.
    kept: usize,
    /// Scratch of `take` (kept to reuse their allocations).
    order: Vec<(usize, usize)>,
    rank: Vec<u32>,
    counts: Vec<u32>,
    /// The fast reading's parts of the line.
    fast: fast::Scratch,
}

impl LineBuf {
    fn clear(&mut self) {
        for f in &self.families {
            if let Some(slot) = self.at.get_mut(f.0 as usize) {
                *slot = 0;
            }
        }
        self.families.clear();
        self.samples.clear();
        self.kept = 0;
    }

    /// The groups and samples of the line: families in the order they were first kept (a
    /// repeated key's samples join its first occurrence's).
    fn take(&mut self) -> (Vec<FamilyGroup>, Vec<ScrapeSample>) {
        let LineBuf {
            families,
            samples,
            order,
            rank,
            counts,
            ..
        } = self;
        order.clear();
        order.extend(
            (families.iter().enumerate())
                .filter(|(_, f)| f.1 > 0)
                .map(|(pos, f)| (f.3, pos)),
        );
        order.sort_unstable();
        rank.clear();
        rank.resize(families.len(), u32::MAX);
        counts.clear();
        counts.resize(order.len(), 0);
        for (r, (_, pos)) in order.iter().enumerate() {
            if let Some(slot) = rank.get_mut(*pos) {
                *slot = u32::try_from(r).unwrap_or(u32::MAX);
            }
        }
        let rank_of = |pos: u32| rank.get(pos as usize).copied().unwrap_or(u32::MAX);
        let in_order = samples
            .windows(2)
            .all(|w| rank_of(w[0].0) <= rank_of(w[1].0));
        if !in_order {
            samples.sort_by_key(|(pos, _)| rank_of(*pos));
        }
        for (pos, _) in samples.iter() {
            if let Some(c) = counts.get_mut(rank_of(*pos) as usize) {
                *c += 1;
            }
        }
        let mut end = 0u32;
        let groups = order
            .iter()
            .zip(counts.iter())
            .map(|((_, pos), n)| {
                end += n;
                let family = families.get(*pos).map_or(0, |f| f.0);
                FamilyGroup { family, end }
            })
            .collect();
        let samples = samples.drain(..).map(|(_, s)| s).collect();
        (groups, samples)
    }
}

/// What the visitors read one line with.
struct Ctx<'a> {
    filter: &'a FamilyFilter,
    interner: &'a mut Interner,
    line: &'a mut LineBuf,
    /// Lines are tried by [`fast`] first (always but in the tests that compare the two).
    fast: bool,
}

/// A family key of a line's `metrics` being read: where its samples go.
struct FamilyOpen {
    family: u32,
    /// Position of the family in the line's buffer.
    pos: usize,
    /// A counter by its name.
    counter: bool,
    /// Occurrences of the key before this one (for paths).
    nth: usize,
    /// Samples of the line before this key's.
    before: usize,
}

/// What a line's families and samples do to the line's buffer and the file's tables: the
/// same calls, in the same order, whichever reading of the line ([`fast`] or the visitors)
/// makes them.
impl Ctx<'_> {
    /// The family of the `position`-th key of `metrics`; `None` when the filter skips it.
    fn open_family(&mut self, position: usize, name: &str) -> Option<FamilyOpen> {
        let entry = self.interner.family_at(position, name, self.filter);
        let family = entry.index?;
        let line = &mut *self.line;
        let i = family as usize;
        if line.at.len() <= i {
            line.at.resize(i + 1, 0);
        }
        let pos = match line.at.get(i).copied().unwrap_or(0) {
            0 => {
                line.families.push((family, 0, 0, 0));
                if let Some(slot) = line.at.get_mut(i) {
                    *slot = u32::try_from(line.families.len()).unwrap_or(0);
                }
                line.families.len() - 1
            }
            p => p as usize - 1,
        };
        let (_, kept, summaries, _) = line.families.get(pos).copied().unwrap_or_default();
        Some(FamilyOpen {
            family,
            pos,
            counter: entry.counter,
            nth: kept + summaries,
            before: line.samples.len(),
        })
    }

    /// The key's samples are read; `skipped_summaries` of them were legacy summaries.
    fn close_family(&mut self, open: &FamilyOpen, skipped_summaries: usize) {
        let line = &mut *self.line;
        if let Some(f) = line.families.get_mut(open.pos) {
            if line.samples.len() == open.before && skipped_summaries > 0 {
                f.2 += 1;
            } else {
                if f.1 == 0 {
                    f.3 = line.kept;
                    line.kept += 1;
                }
                f.1 += 1;
            }
        }
    }

    /// The `index`-th sample of an open family; the error is a message (labels that are not
    /// a map of strings).
    fn push_sample(
        &mut self,
        open: &FamilyOpen,
        index: usize,
        sample: ReadSample<'_>,
    ) -> Result<(), String> {
        let interner = &mut *self.interner;
        let series = match sample.labels {
            SampleLabels::Text(text) => interner.series_at(open.family, index, text)?,
            SampleLabels::Read(labels) => interner.series(open.family, labels),
        };
        let value = match sample.value {
            ReadValue::Scalar(value) => SampleValue::Scalar { value },
            ReadValue::Histogram { sum, count, .. } if self.filter.is_lean() => {
                // Accounting reads a histogram sample's sum and count only; its buckets were
                // checked as they were read.
                SampleValue::Histogram(Box::new(Histogram {
                    les: Arc::default(),
                    counts: Vec::new(),
                    sum,
                    count,
                }))
            }
            ReadValue::Histogram {
                les,
                counts,
                sum,
                count,
            } => SampleValue::Histogram(Box::new(Histogram {
                les: interner.les(&les),
                counts,
                sum,
                count,
            })),
        };
        let pos = u32::try_from(open.pos).unwrap_or(u32::MAX);
        self.line
            .samples
            .push((pos, ScrapeSample { series, value }));
        Ok(())
    }
}

struct SampleAt {
    family: String,
    nth: usize,
    index: usize,
}

impl SampleAt {
    fn path(&self, below: &OwnedPath) -> OwnedPath {
        let mut p = OwnedPath::default()
            .key("metrics", 0)
            .key(&self.family, self.nth)
            .index(self.index);
        for seg in below.segs() {
            p = match seg {
                Seg::Key { name, nth } => p.key(name, nth),
                Seg::Index(i) => p.index(i),
            };
        }
        p
    }
}

/// A count a sample visitor refused (serde carries only a message).
struct Refused {
    at: SampleAt,
    /// The value's path below the sample.
    below: OwnedPath,
    what: &'static str,
    shown: String,
}

/// What the visitors note while reading one line.
#[derive(Default)]
struct Notes {
    refused: Option<Refused>,
    /// Large values of families that are not counters by name.
    large: Vec<(SampleAt, String)>,
}

fn parse_line(
    file: &str,
    line: usize,
    text: &str,
    terminated: bool,
    ctx: &mut Ctx<'_>,
) -> Result<Scrape, ReadError> {
    let bytes = text.as_bytes();
    ctx.line.clear();
    let read = if ctx.fast {
        fast::record(text, ctx)
    } else {
        None
    };
    let (raw, notes) = match read {
        Some(raw) => (raw, Notes::default()),
        None => match visit_line(text, ctx, false) {
            (Ok(raw), notes) => (raw, notes),
            (Err(_), _) => return Err(line_error(file, line, text, terminated, ctx)),
        },
    };
    let at = |path: &str| in_line(bytes, line, &[Seg::key(path)]);
    let bad_ts =
        |msg: String| ReadError::new(ErrorCode::BadTimestamp, file, at("timestamp_ns"), msg);
    let timestamp_ns = match raw.timestamp {
        Some(Timestamp::Ok(t)) => t,
        Some(Timestamp::Bad(why)) => {
            return Err(bad_ts(format!(
                "`timestamp_ns` must be a non-negative integer of epoch nanoseconds; found {why}"
            )))
        }
        None => return Err(bad_ts("the record has no `timestamp_ns`".to_string())),
    };
    let Some(endpoint_url) = raw.endpoint_url else {
        return Err(ReadError::new(
            ErrorCode::JsonlRecord,
            file,
            Position::line(line),
            "the record has no `endpoint_url`",
        ));
    };
    if !raw.has_metrics {
        return Err(ReadError::new(
            ErrorCode::JsonlRecord,
            file,
            Position::line(line),
            "the record has no `metrics` object",
        ));
    }
    let untyped_large = notes
        .large
        .into_iter()
        .map(|(s, value)| {
            let path = s.path(&OwnedPath::default().key("value", 0));
            UntypedLarge {
                position: in_line(bytes, line, &path.segs()),
                family: s.family,
                value,
            }
        })
        .collect();
    let (groups, samples) = ctx.line.take();
    Ok(Scrape {
        endpoint_url,
        timestamp_ns: Some(timestamp_ns),
        phase: raw.phase,
        table: Arc::default(),
        groups,
        samples,
        untyped_large,
    })
}

/// The error of a line that does not parse: it is parsed again, as it is in the file (with
/// its `\n`, where serde_json places an end-of-input error), labels read as a map, and the
/// JSON path is found from the error's position ([`json_path::path_of_error`]): no path
/// tracking wrapper, whose copy of every visitor the `.wasm` would carry (issue 11).
#[cold]
fn line_error(
    file: &str,
    line: usize,
    text: &str,
    terminated: bool,
    ctx: &mut Ctx<'_>,
) -> ReadError {
    let owned;
    let text = if terminated {
        owned = format!("{text}\n");
        owned.as_str()
    } else {
        text
    };
    let bytes = text.as_bytes();
    let (result, notes) = visit_line(text, ctx, true);
    let Err(e) = result else {
        return ReadError::new(
            ErrorCode::JsonlRecord,
            file,
            Position::line(line),
            "the record does not parse",
        );
    };
    if let Some(r) = notes.refused {
        let path = r.at.path(&r.below);
        let pos = in_line(bytes, line, &path.segs());
        let what = format!("{} at `{}`", r.what, path.display());
        return count::refuse(file, pos, &what, &r.shown);
    }
    let mut pos = serde_in_line(bytes, line, &e);
    pos.json_path = json_path::shown(&json_path::path_of_error(bytes, &e));
    ReadError::new(ErrorCode::JsonlRecord, file, pos, json_message(&e))
}

/// A line read by the visitors (`tracked`: see [`RecordSeed`]), the line's buffer cleared
/// first: the record or serde_json's error, and what the visitors noted.
fn visit_line(
    text: &str,
    ctx: &mut Ctx<'_>,
    tracked: bool,
) -> (Result<RawRecord, serde_json::Error>, Notes) {
    ctx.line.clear();
    let notes = RefCell::new(Notes::default());
    let mut json = serde_json::Deserializer::from_str(text);
    let seed = RecordSeed {
        ctx: &mut *ctx,
        notes: &notes,
        tracked,
    };
    let result = seed
        .deserialize(&mut json)
        .and_then(|r| json.end().map(|_| r));
    (result, notes.into_inner())
}

/// A record as read, before the required-field checks.
struct RawRecord {
    endpoint_url: Option<String>,
    timestamp: Option<Timestamp>,
    phase: Option<Phase>,
    has_metrics: bool,
}

/// How a line is read: `tracked` for the second reading of a line that failed (labels then
/// read as a map, so an error inside them has its path).
struct RecordSeed<'a, 'c> {
    ctx: &'a mut Ctx<'c>,
    notes: &'a RefCell<Notes>,
    tracked: bool,
}

impl<'de> DeserializeSeed<'de> for RecordSeed<'_, '_> {
    type Value = RawRecord;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<RawRecord, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for RecordSeed<'_, '_> {
    type Value = RawRecord;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a scrape record object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawRecord, A::Error> {
        let mut rec = RawRecord {
            endpoint_url: None,
            timestamp: None,
            phase: None,
            has_metrics: false,
        };
        while let Some(key) = map.next_key::<Key<'de>>()? {
            match key.as_str() {
                "endpoint_url" => rec.endpoint_url = Some(map.next_value::<String>()?),
                "timestamp_ns" => rec.timestamp = Some(map.next_value::<Timestamp>()?),
                "benchmark_phase" => {
                    rec.phase = match map.next_value::<Option<Key<'de>>>()? {
                        None => None,
                        Some(s) => Some(Phase::parse(s.as_str()).ok_or_else(|| {
                            de::Error::custom(format!(
                                "benchmark_phase `{}` is not warmup, profiling or null",
                                s.as_str()
                            ))
                        })?),
                    }
                }
                "metrics" => {
                    // A repeated `metrics` key replaces the families read before it.
                    self.ctx.line.clear();
                    map.next_value_seed(MetricsSeed {
                        ctx: &mut *self.ctx,
                        notes: self.notes,
                        tracked: self.tracked,
                    })?;
                    rec.has_metrics = true;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(rec)
    }
}

/// A string (a map key, a phase), borrowed from the line unless it has escapes.
struct Key<'de>(Cow<'de, str>);

impl Key<'_> {
    fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_string())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

enum Timestamp {
    Ok(u64),
    Bad(String),
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TimestampVisitor)
    }
}

struct TimestampVisitor;

impl<'de> Visitor<'de> for TimestampVisitor {
    type Value = Timestamp;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an integer of epoch nanoseconds")
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Timestamp, E> {
        Ok(Timestamp::Ok(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Timestamp, E> {
        Ok(match u64::try_from(v) {
            Ok(u) => Timestamp::Ok(u),
            Err(_) => Timestamp::Bad(format!("negative {v}")),
        })
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Timestamp, E> {
        Ok(Timestamp::Bad(format!(
            "non-integer or out-of-range number {v}"
        )))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Timestamp, E> {
        Ok(Timestamp::Bad(format!("boolean {v}")))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Timestamp, E> {
        Ok(Timestamp::Bad(format!("string `{v}`")))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Timestamp, E> {
        Ok(Timestamp::Bad("null".to_string()))
    }
    fn visit_none<E: de::Error>(self) -> Result<Timestamp, E> {
        Ok(Timestamp::Bad("null".to_string()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Timestamp, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Timestamp::Bad("an array".to_string()))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Timestamp, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Timestamp::Bad("an object".to_string()))
    }
}

/// The `metrics` object: `{family: [sample…]}`, filtered as it is read, into the line's
/// buffer.
struct MetricsSeed<'a, 'c> {
    ctx: &'a mut Ctx<'c>,
    notes: &'a RefCell<Notes>,
    tracked: bool,
}

impl<'de> DeserializeSeed<'de> for MetricsSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for MetricsSeed<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object of metric families")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        // A family key may repeat (its samples merge); keys whose samples were all legacy
        // summaries are not kept.
        let mut position = 0usize;
        while let Some(name) = map.next_key::<Key<'de>>()? {
            let name = name.as_str();
            let open = self.ctx.open_family(position, name);
            position += 1;
            let Some(open) = open else {
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            let read = map.next_value_seed(SamplesSeed {
                ctx: &mut *self.ctx,
                open: &open,
                name,
                notes: self.notes,
                tracked: self.tracked,
            })?;
            self.ctx.close_family(&open, read.skipped_summaries);
        }
        Ok(())
    }
}

struct FamilySamples {
    skipped_summaries: usize,
}

/// One family's samples, pushed to the line's buffer; `counter` when its name makes it a
/// counter.
struct SamplesSeed<'a, 'c> {
    ctx: &'a mut Ctx<'c>,
    open: &'a FamilyOpen,
    name: &'a str,
    notes: &'a RefCell<Notes>,
    tracked: bool,
}

impl<'de> DeserializeSeed<'de> for SamplesSeed<'_, '_> {
    type Value = FamilySamples;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<FamilySamples, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for SamplesSeed<'_, '_> {
    type Value = FamilySamples;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of samples")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<FamilySamples, A::Error> {
        let mut out = FamilySamples {
            skipped_summaries: 0,
        };
        let mut index = 0usize;
        loop {
            let at = || SampleAt {
                family: self.name.to_string(),
                nth: self.open.nth,
                index,
            };
            let seed = SampleSeed {
                counter: self.open.counter,
                notes: self.notes,
                at: &at,
                tracked: self.tracked,
                keep_buckets: self.tracked || !self.ctx.filter.is_lean(),
            };
            match seq.next_element_seed(seed)? {
                None => return Ok(out),
                Some(Some(sample)) => self
                    .ctx
                    .push_sample(self.open, index, sample)
                    .map_err(de::Error::custom)?,
                Some(None) => out.skipped_summaries += 1,
            }
            index += 1;
        }
    }
}

/// A sample's labels: their JSON text (`None`: absent or null), or (tracked) the map.
enum SampleLabels<'de> {
    Text(Option<&'de str>),
    Read(Labels),
}

enum ReadValue<'de> {
    Scalar(f64),
    Histogram {
        les: Vec<Key<'de>>,
        counts: Vec<f64>,
        sum: Option<f64>,
        count: Option<f64>,
    },
}

struct ReadSample<'de> {
    labels: SampleLabels<'de>,
    value: ReadValue<'de>,
}

/// One sample; `None` for a legacy summary sample (skipped). Counts are checked once the
/// whole sample is read (a `count` is a histogram's only when `buckets` come with it).
struct SampleSeed<'a> {
    counter: bool,
    notes: &'a RefCell<Notes>,
    /// Where the sample is (built only when a note needs it).
    at: &'a dyn Fn() -> SampleAt,
    tracked: bool,
    /// Keep a histogram's buckets (not when accounting reads the line: see [`BucketsSeed`]).
    keep_buckets: bool,
}

impl<'de> DeserializeSeed<'de> for SampleSeed<'_> {
    type Value = Option<ReadSample<'de>>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl SampleSeed<'_> {
    fn refuse<E: de::Error>(&self, below: OwnedPath, what: &'static str, v: f64) -> E {
        let shown = count::show(v);
        let err = E::custom(count::message(what, &shown));
        self.notes.borrow_mut().refused = Some(Refused {
            at: (self.at)(),
            below,
            what,
            shown,
        });
        err
    }

    /// Refuse a bucket count or histogram count above 2^53 − 1.
    fn check_histogram<E: de::Error>(
        &self,
        key: &'static str,
        les: &[Key<'_>],
        counts: &[f64],
        count: Option<f64>,
    ) -> Result<(), E> {
        for (j, (le, c)) in les.iter().zip(counts).enumerate() {
            if count::too_large(*c) {
                let nth = les
                    .iter()
                    .take(j)
                    .filter(|o| o.as_str() == le.as_str())
                    .count();
                let below = OwnedPath::default().key(key, 0).key(le.as_str(), nth);
                return Err(self.refuse(below, "histogram bucket count", *c));
            }
        }
        if let Some(c) = count.filter(|c| count::too_large(*c)) {
            let below = OwnedPath::default().key("count", 0);
            return Err(self.refuse(below, "histogram count", c));
        }
        Ok(())
    }
}

impl<'de> Visitor<'de> for SampleSeed<'_> {
    type Value = Option<ReadSample<'de>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a sample object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut labels = SampleLabels::Text(None);
        let mut value: Option<f64> = None;
        // The bucket key as written (`buckets`, or legacy `histogram`) and the buckets.
        let mut buckets: Option<(&'static str, BucketList<'de>)> = None;
        let mut sum: Option<f64> = None;
        let mut count: Option<f64> = None;
        let mut summary = false;
        while let Some(key) = map.next_key::<Key<'de>>()? {
            match key.as_str() {
                "labels" if self.tracked => {
                    labels =
                        SampleLabels::Read(map.next_value::<Option<Labels>>()?.unwrap_or_default())
                }
                "labels" => {
                    labels = SampleLabels::Text(
                        map.next_value::<Option<&'de RawValue>>()?
                            .map(RawValue::get),
                    )
                }
                "value" => value = Some(map.next_value::<NullableF64>()?.0),
                "buckets" | "histogram" => {
                    if buckets.is_some() {
                        return Err(de::Error::custom(
                            "sample has both `buckets` and `histogram`",
                        ));
                    }
                    let name = if key.as_str() == "buckets" {
                        "buckets"
                    } else {
                        "histogram"
                    };
                    let seed = BucketsSeed {
                        keep: self.keep_buckets,
                    };
                    buckets = Some((name, map.next_value_seed(seed)?))
                }
                "sum" => sum = map.next_value::<Option<NullableF64>>()?.map(|v| v.0),
                "count" => count = map.next_value::<Option<NullableF64>>()?.map(|v| v.0),
                "summary" => {
                    map.next_value::<IgnoredAny>()?;
                    summary = true;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let value = if let Some((key, list)) = buckets {
            if list.too_large {
                // Buckets not kept: the careful reading of the line (`line_error`) keeps them
                // and says which count, where.
                return Err(de::Error::custom(
                    "a histogram bucket count is above 2^53 - 1",
                ));
            }
            let BucketList { les, counts, .. } = list;
            self.check_histogram(key, &les, &counts, count)?;
            ReadValue::Histogram {
                les,
                counts,
                sum,
                count,
            }
        } else if let Some(value) = value {
            if count::too_large(value) {
                let below = OwnedPath::default().key("value", 0);
                if self.counter {
                    return Err(self.refuse(below, "counter value", value));
                }
                let note = ((self.at)(), count::show(value));
                self.notes.borrow_mut().large.push(note);
            }
            ReadValue::Scalar(value)
        } else if summary {
            return Ok(None);
        } else {
            return Err(de::Error::custom(
                "sample has neither `value` nor `buckets` (or legacy `histogram`)",
            ));
        };
        Ok(Some(ReadSample { labels, value }))
    }
}

/// A number, or `null` read as NaN. Never `Option` at the top: `"sum": null` is handled by
/// the caller's `Option<NullableF64>` (serde maps `null` to `None` there).
struct NullableF64(f64);

impl<'de> Deserialize<'de> for NullableF64 {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Option::<f64>::deserialize(d).map(|v| NullableF64(v.unwrap_or(f64::NAN)))
    }
}

/// `{le: cumulative}` in file order, keys exactly as written.
struct BucketList<'de> {
    les: Vec<Key<'de>>,
    counts: Vec<f64>,
    /// A count above 2^53 − 1 was met (noted only when the buckets are not kept).
    too_large: bool,
}

/// The buckets of a histogram sample; `keep`: build their lists. Accounting reads a
/// histogram sample's sum and count only, so a lean fast reading checks the buckets as it
/// goes (the same syntax and the same counts refused) and builds nothing: the two lists grew
/// sample by sample, a tenth of reading a scrape JSONL in reallocations.
struct BucketsSeed {
    keep: bool,
}

impl<'de> DeserializeSeed<'de> for BucketsSeed {
    type Value = BucketList<'de>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for BucketsSeed {
    type Value = BucketList<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object of `le` → cumulative count")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = BucketList {
            les: Vec::new(),
            counts: Vec::new(),
            too_large: false,
        };
        while let Some((le, NullableF64(count))) = map.next_entry::<Key<'de>, NullableF64>()? {
            if self.keep {
                out.les.push(le);
                out.counts.push(count);
            } else {
                out.too_large |= count::too_large(count);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `read` given a context with fresh tables, as a file's first line has.
    fn with_fresh_ctx<R>(filter: &FamilyFilter, read: impl FnOnce(&mut Ctx<'_>) -> R) -> R {
        let (mut interner, mut line) = (Interner::default(), LineBuf::default());
        read(&mut Ctx {
            filter,
            interner: &mut interner,
            line: &mut line,
            fast: true,
        })
    }

    /// The error of a broken line as the reader built it before, tracking the path with
    /// `serde_path_to_error` through the whole record.
    fn tracked_line_error(text: &str, ctx: &mut Ctx<'_>) -> ReadError {
        let notes = RefCell::new(Notes::default());
        let mut json = serde_json::Deserializer::from_str(text);
        let mut track = serde_path_to_error::Track::new();
        let seed = RecordSeed {
            ctx: &mut *ctx,
            notes: &notes,
            tracked: true,
        };
        let result = seed
            .deserialize(serde_path_to_error::Deserializer::new(
                &mut json, &mut track,
            ))
            .and_then(|r| json.end().map(|_| r));
        let notes = notes.into_inner();
        let Err(e) = result else {
            return ReadError::new(
                ErrorCode::JsonlRecord,
                "t",
                Position::line(1),
                "the record does not parse",
            );
        };
        if let Some(r) = notes.refused {
            let path = r.at.path(&r.below);
            let pos = in_line(text.as_bytes(), 1, &path.segs());
            let what = format!("{} at `{}`", r.what, path.display());
            return count::refuse("t", pos, &what, &r.shown);
        }
        let mut pos = serde_in_line(text.as_bytes(), 1, &e);
        pos.json_path = crate::error::json_path(&track.path());
        ReadError::new(ErrorCode::JsonlRecord, "t", pos, json_message(&e))
    }

    /// The same error, its path the tracked one or going on inside it. The tracker has no
    /// path for an error the record's visitor raises once a value is read (a bad
    /// `benchmark_phase`: it names none), nor steps inside a value skipped unread (a legacy
    /// `summary`); found from the text, the path names the value at fault in both.
    fn same_or_deeper(tracked: &ReadError, found: &ReadError) -> bool {
        let path = |e: &ReadError| e.position.json_path.clone().unwrap_or_default();
        let (t, f) = (path(tracked), path(found));
        let mut rest = found.clone();
        rest.position.json_path = tracked.position.json_path.clone();
        rest == *tracked && (t == f || t.is_empty() || f.starts_with(&format!("{t}.")))
    }

    #[test]
    fn line_errors_match_the_tracked_reading() {
        let valid = r#"{"endpoint_url": "http://a/metrics", "timestamp_ns": 1781000000000000001, "benchmark_phase": "profiling", "metrics": {"vllm:prompt_tokens_total": [{"labels": {"model": "m", "x": "1"}, "value": 5}], "vllm:h": [{"labels": null, "buckets": {"0.5": 1, "+Inf": 3}, "sum": 2.5, "count": 3}], "vllm:g": [{"value": null}, {"summary": {"0.5": 1}}]}, "is_duplicate": false}"#;
        let filter = FamilyFilter::all();
        let mut failures = Vec::new();
        let mut n = 0;
        for text in crate::json_path::testing::mutations(valid) {
            let errors = with_fresh_ctx(&filter, |ctx| {
                parse_line("t", 1, &text, false, ctx).is_err().then(|| {
                    let found = line_error("t", 1, &text, false, ctx);
                    (found, tracked_line_error(&text, ctx))
                })
            });
            let Some((found, tracked)) = errors else {
                continue;
            };
            n += 1;
            if !same_or_deeper(&tracked, &found) {
                failures.push(format!(
                    "{text}\n  tracked {tracked:?}\n  found   {found:?}"
                ));
            }
        }
        assert!(
            failures.is_empty(),
            "{} of {n} differ:\n{}",
            failures.len(),
            failures.join("\n")
        );
        assert!(n > 1000, "only {n} broken lines were compared");
    }

    /// Lines of every shape the fast reading takes or leaves: compact and spaced, escapes,
    /// histograms (current and legacy keys), summaries, nulls, unknown keys at every level,
    /// a repeated family, non-ASCII text, a large untyped value, numbers of every form.
    const SHAPES: [&str; 5] = [
        r#"{"endpoint_url": "http://a/metrics", "timestamp_ns": 1781000000000000001, "benchmark_phase": "profiling", "metrics": {"vllm:prompt_tokens_total": [{"labels": {"model": "m", "x": "1"}, "value": 5}], "vllm:h": [{"labels": null, "buckets": {"0.5": 1, "+Inf": 3}, "sum": 2.5, "count": 3}], "vllm:g": [{"value": null}, {"summary": {"0.5": 1}}]}, "is_duplicate": false}"#,
        r#"{"endpoint_url":"http://10.0.0.1:8000/metrics","timestamp_ns":1781635311834142356,"endpoint_latency_ns":7197,"metrics":{"vllm:prefix_cache_queries":[{"labels":{"engine":"0","model_name":"synth/Agentic-8B"},"value":1234.5},{"labels":{"engine":"1","model_name":"é"},"value":-0.0}],"vllm:num_requests_running":[{"value":1e3},{"value":0.000123,"extra":[1,{"a":true}]}],"vllm:prefix_cache_queries":[{"labels":{},"value":18014398509481984}]},"first_byte_ns":1}"#,
        r#"{"metrics":{"dynamo_component_requests":[{"labels":{"dynamo_component":"prefill","model":"openai/gpt-oss-20b"},"value":360.0}],"x":{"y":[]},"dynamo_component_request_duration_seconds":[{"histogram":{"0.005":0.0,"+Inf":360.0},"sum":12.232215459,"count":360.0}]},"timestamp_ns":0,"endpoint_url":"http://localhost:8081/metrics","benchmark_phase":null}"#,
        "  \t{ \"endpoint_url\" : \"u\\/v\" , \"timestamp_ns\" : 5 , \"metrics\" : { \"a_total\" : [ { \"value\" : 0.1 } , { \"labels\" : { \"k\" : \"v\" } , \"value\" : 123456789.123456789 } ] } } \r",
        r#"{"endpoint_url":"u","timestamp_ns":7,"metrics":{"vllm:kv_cache_usage_perc":[{"labels":{"a":"b","a":"c"},"value":0.72}],"w":[{"value":3,"value":4}],"vllm:kv_cache_usage_perc":[{"labels":{"a":"c"},"value":-12.5e-3}],"z":[{"labels":{"n":1},"value":1}]}}"#,
    ];

    /// One file's lines read with or without the fast reading: each line's result, then the
    /// tables and the lines' buffer.
    fn read_lines(lines: &[&str], filter: &FamilyFilter, fast: bool) -> String {
        let (mut interner, mut line) = (Interner::default(), LineBuf::default());
        let mut out = String::new();
        for (i, text) in lines.iter().enumerate() {
            let mut ctx = Ctx {
                filter,
                interner: &mut interner,
                line: &mut line,
                fast,
            };
            let r = parse_line("t", i + 1, text, true, &mut ctx);
            out.push_str(&format!("{r:?}\n"));
        }
        format!(
            "{out}{:?}\n{:?}\n{:?} {:?}",
            interner.table, interner.skipped, line.families, line.samples
        )
    }

    /// The filters a file is read with: everything, accounting's (lean, few families), none.
    fn filters() -> [FamilyFilter; 3] {
        [
            FamilyFilter::all(),
            crate::account::families_read(),
            FamilyFilter::only(["nothing"]),
        ]
    }

    #[test]
    fn the_fast_reading_agrees_with_the_visitors_on_every_mutation() {
        let mut compared = 0;
        for valid in SHAPES {
            for text in crate::json_path::testing::mutations(valid) {
                for filter in &filters() {
                    // Between two valid lines: what a line leaves in the tables shows in the
                    // line after it.
                    let lines = [SHAPES[1], text.as_str(), valid];
                    let fast = read_lines(&lines, filter, true);
                    let visitors = read_lines(&lines, filter, false);
                    assert_eq!(fast, visitors, "line: {text}");
                    compared += 1;
                }
            }
        }
        assert!(compared > 10_000, "only {compared} readings compared");
    }

    #[test]
    fn the_fast_reading_takes_the_common_shape_and_leaves_the_rest() {
        let filter = FamilyFilter::all();
        let taken = |text: &str| with_fresh_ctx(&filter, |ctx| fast::record(text, ctx).is_some());
        // Scalar samples, unknown keys, repeated families, labels written twice: taken.
        assert!(taken(&SHAPES[1].replace("18014398509481984", "3")));
        assert!(!taken(SHAPES[1]), "a value of 2^54 is the visitors'");
        assert!(
            !taken(SHAPES[4]),
            "a sample repeating `value` is the visitors'"
        );
        // A histogram of a wanted family, an escape: left to the visitors.
        assert!(!taken(SHAPES[0]));
        assert!(!taken(SHAPES[3]));
        // The histogram family skipped by the filter: taken.
        let lean = crate::account::families_read();
        assert!(with_fresh_ctx(&lean, |ctx| fast::record(SHAPES[2], ctx).is_some()));
        for bad in [
            "{",
            "{}x",
            r#"{"a":01}"#,
            r#"{"a":[1,]}"#,
            r#"{"a":tru}"#,
            "{\"a\":\"\t\"}",
        ] {
            assert!(!taken(bad), "{bad}");
        }
    }

    #[test]
    fn the_fast_reading_agrees_with_the_visitors_on_every_scrape_file() {
        let mut files = Vec::new();
        for dir in ["tests/fixtures", "examples"] {
            let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
            let mut stack = vec![root];
            while let Some(d) = stack.pop() {
                for e in std::fs::read_dir(&d).unwrap().flatten() {
                    let p = e.path();
                    if p.is_dir() {
                        stack.push(p);
                    } else if p.to_string_lossy().ends_with("server_metrics_export.jsonl") {
                        files.push(p);
                    }
                }
            }
        }
        assert!(files.len() >= 10, "{files:?}");
        let mut taken = 0;
        for path in &files {
            let text = std::fs::read_to_string(path).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            for filter in &filters() {
                assert_eq!(
                    read_lines(&lines, filter, true),
                    read_lines(&lines, filter, false),
                    "{}",
                    path.display()
                );
            }
            let lean = crate::account::families_read();
            let (mut interner, mut line) = (Interner::default(), LineBuf::default());
            for l in &lines {
                let mut ctx = Ctx {
                    filter: &lean,
                    interner: &mut interner,
                    line: &mut line,
                    fast: true,
                };
                taken += usize::from(fast::record(l, &mut ctx).is_some());
            }
        }
        assert!(taken > 100, "the fast reading took only {taken} lines");
    }

    #[test]
    fn big_timestamp_is_exact() {
        let s = r#"{"endpoint_url":"u","timestamp_ns":18446744073709551615,"metrics":{}}"#;
        let set = read_scrapes_jsonl("t", s.as_bytes(), &FamilyFilter::all()).unwrap();
        assert_eq!(set.scrapes[0].timestamp_ns, Some(u64::MAX));
    }

    #[test]
    fn sum_null_is_none_value_null_is_nan() {
        let s = r#"{"endpoint_url":"u","timestamp_ns":1,"metrics":{"a":[{"value":null}],"h":[{"buckets":{"1":1,"+Inf":2},"sum":null,"count":2}]}}"#;
        let set = read_scrapes_jsonl("t", s.as_bytes(), &FamilyFilter::all()).unwrap();
        let f: Vec<_> = set.scrapes[0].families().collect();
        let a = f[0].samples.get(0).unwrap();
        assert!(matches!(a.value, SampleValue::Scalar { value } if value.is_nan()));
        let h = f[1].samples.get(0).unwrap();
        assert!(matches!(
            h.value,
            SampleValue::Histogram(h) if h.sum.is_none() && h.count == Some(2.0)
        ));
    }

    #[test]
    fn a_series_is_kept_once_whatever_its_labels_look_like() {
        let s = concat!(
            r#"{"endpoint_url":"u","timestamp_ns":1,"metrics":{"a":[{"labels":{"x":"1","y":"2"},"value":1}]}}"#,
            "\n",
            r#"{"endpoint_url":"u","timestamp_ns":2,"metrics":{"a":[{"labels":{"y":"2", "x":"1"},"value":2}]}}"#,
        );
        let set = read_scrapes_jsonl("t", s.as_bytes(), &FamilyFilter::all()).unwrap();
        assert_eq!(set.scrapes[0].table.series.len(), 1);
        assert_eq!(
            set.scrapes[0].samples[0].series,
            set.scrapes[1].samples[0].series
        );
    }
}
