//! Reader for AIPerf's `server_metrics_export.csv` (per-series summary stats, no timeslices).
//!
//! Layout (AIPerf 0.4+, schema 1.0):
//!
//! ```text
//! # AIPerf Server Metrics Export (CSV)
//! # aiperf_version: 0.8.0
//! # schema_version: 1.0
//! # benchmark_id: <uuid|None>
//! # Note: …
//! #
//! Endpoint,Type,Metric,Unit,<stat columns>,<label columns…>,Description      (gauge section)
//! …rows…
//! <empty row>
//! Endpoint,Type,Metric,Unit,<stat columns>,<label columns…>,Description      (counter section)
//! …
//! Endpoint,Type,Metric,Unit,<stat columns>,<label columns…>,Description,buckets   (histogram)
//! …
//! Endpoint,Metric,Key,Value,Description                                       (info section)
//! ```
//!
//! How the CSV maps onto [`ServerMetricsExport`]:
//!
//! - Every column is located by its header name; stat columns not in the header, and empty
//!   cells, become `None`. The section's stat kind (gauge, counter or histogram) is the stat
//!   column set the header matches best; every other column that is not `Endpoint`, `Type`,
//!   `Metric`, `Unit`, `Description` or `buckets` is a label column, and an empty label cell
//!   means the label is absent.
//! - `Endpoint` holds AIPerf's display form (`host:port` plus any path, `/metrics` and the
//!   scheme removed). `endpoint_url` is rebuilt as `http://` + display + `/metrics`
//!   (`host:port/prefill` → `http://host:port/prefill/metrics`). A display value that already
//!   carries a scheme keeps it, one that already ends in `/metrics` gets no second suffix. The
//!   CSV does not record the original scheme, so an `https` endpoint comes back as `http`.
//! - The info section (one row per label) becomes gauge families: rows with the same
//!   `Endpoint` and `Metric` form one series whose labels are the rows' `Key`/`Value` pairs; a
//!   key seen again for that endpoint and metric starts a new series. An info metric's value is
//!   1 by convention, so the series gets `avg = min = max = 1` and no other stats.
//! - Families are sorted by name, series keep row order. The CSV has no summary block, no
//!   timeslices and no warmup families: those stay empty.
//! - A metric that appears with two different types is an error (AIPerf exports one type per
//!   name).
//! - Counts above 2^53 − 1 are refused (`COUNT_TOO_LARGE`, see [`crate::read::count`]): a
//!   counter's `total`, a histogram's `count` and bucket counts.
//!
//! - A lean read ([`FamilyFilter::lean`], what `account` reads) keeps the series as
//!   [`CsvLean`] (per series its family, endpoint, shared label set and the stats accounting
//!   reads; no buckets, no other stats) and the families without series. Every cell is checked
//!   as in a full read: the same rows are refused with the same errors.
//!
//! Errors carry the line and, for a cell, the character column where the cell starts (for a
//! bucket count, where the count starts).

use super::block16;
use crate::admission::{room_for_one, room_in_map, room_in_text};
use crate::error::{ErrorCode, Position, ReadError};
use crate::hash::{Keyed, Map as HashMap};
use crate::model::labels::push_pair;
use crate::model::server_metrics::{CsvLean, CsvSeries};
use crate::model::{
    Bucket, CounterStats, ExportSummary, Family, GaugeStats, HistogramStats, Labels, MetricType,
    Pieces, Series, ServerMetricsExport, ServerMetricsFormat, Stats,
};
use crate::read::count;
use crate::read::json_cursor::to_f64;
use crate::read::push::{drive, Lines, PushReader};
use crate::read::FamilyFilter;
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::Arc;

/// The stat columns of each CSV section, in AIPerf's order (the generator writes the same).
pub const GAUGE_STATS: [&str; 13] = [
    "avg", "min", "max", "std", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99",
];
pub const COUNTER_STATS: [&str; 6] = [
    "total", "rate", "rate_avg", "rate_min", "rate_max", "rate_std",
];
pub const HISTOGRAM_STATS: [&str; 14] = [
    "count",
    "count_rate",
    "sum",
    "sum_rate",
    "avg",
    "p1_estimate",
    "p5_estimate",
    "p10_estimate",
    "p25_estimate",
    "p50_estimate",
    "p75_estimate",
    "p90_estimate",
    "p95_estimate",
    "p99_estimate",
];
const FIXED_COLUMNS: [&str; 6] = [
    "Endpoint",
    "Type",
    "Metric",
    "Unit",
    "Description",
    "buckets",
];

/// What a section header promises.
const SECTION_HINT: &str =
    "a section starts with a header row `Endpoint,Type,Metric,Unit,…` or `Endpoint,Metric,Key,Value,Description`";

/// Reads a `server_metrics_export.csv` pushed in chunks (see [`PushReader`]). See the module
/// docs for the mapping. A lean read ([`FamilyFilter::lean`]) keeps the series as
/// [`CsvLean`]: only what accounting reads, every cell checked as in a full read.
pub struct ServerCsvReader {
    file: String,
    lines: Lines,
    records: CsvRecords,
    /// The cells of the plain row being read (reused from row to row).
    spans: Vec<Span>,
    state: State,
}

/// What the rows read so far have given.
struct State {
    filter: FamilyFilter,
    meta: Meta,
    saw_aiperf_comment: bool,
    saw_header: bool,
    saw_content: bool,
    section: Option<Section>,
    store: Store,
}

impl ServerCsvReader {
    pub fn new(file: &str, filter: &FamilyFilter) -> Self {
        ServerCsvReader {
            file: file.to_string(),
            lines: Lines::new(),
            records: CsvRecords::default(),
            spans: Vec::new(),
            state: State {
                filter: filter.clone(),
                meta: Meta::default(),
                saw_aiperf_comment: false,
                saw_header: false,
                saw_content: false,
                section: None,
                store: Store {
                    lean: filter.is_lean(),
                    ..Store::default()
                },
            },
        }
    }

    /// Take one physical line. A line that is not a comment, not inside a quoted field and
    /// not the first (with its possible byte-order mark) is split in place when its quoted
    /// cells (if any) are simple (see [`split_line`]): the rows of an export are almost all
    /// such; any other line goes through [`CsvRecords`].
    fn take_line(&mut self, bytes: &[u8], line_no: u64, ascii: bool) -> Result<(), ReadError> {
        let line_no = usize::try_from(line_no).unwrap_or(usize::MAX);
        if line_no > 1 && !self.records.is_open() && bytes.first() != Some(&b'#') {
            let text = line_text(&self.file, line_no, bytes, ascii)?;
            // Outside quotes a `\r` is dropped only as the line's last character (as `scan_line`).
            let text = text.strip_suffix('\r').unwrap_or(text);
            if split_line(text, &mut self.spans) {
                let row = Row {
                    file: &self.file,
                    line: line_no,
                    text,
                    spans: &self.spans,
                    at: &[],
                };
                return self.state.take_row(&row);
            }
        }
        match self.records.line(&self.file, line_no, bytes)? {
            Some(rec) => self.state.take_record(&self.file, &rec),
            None => Ok(()),
        }
    }
}

impl State {
    /// Take one record read by [`CsvRecords`]: a comment, or a row whose cells may have been
    /// quoted.
    fn take_record(&mut self, file: &str, rec: &Record) -> Result<(), ReadError> {
        if rec.is_comment {
            self.saw_content = true;
            if self.meta.take_comment(&rec.raw) {
                self.saw_aiperf_comment = true;
            }
            return Ok(());
        }
        let mut text = String::new();
        let mut spans = Vec::with_capacity(rec.cells.len());
        for c in &rec.cells {
            let start = text.len();
            text.push_str(c);
            spans.push(Span {
                start,
                end: text.len(),
            });
        }
        let row = Row {
            file,
            line: rec.line,
            text: &text,
            spans: &spans,
            at: &rec.at,
        };
        self.take_row(&row)
    }

    /// Take one row: a section header, an empty row or a data row.
    fn take_row(&mut self, row: &Row<'_>) -> Result<(), ReadError> {
        let (file, line) = (row.file, row.line);
        if (0..row.len()).all(|i| row.blank(i)) {
            // An empty row ends the section.
            self.section = None;
            return Ok(());
        }
        self.saw_content = true;
        if trim(row.cell(0)) == "Endpoint" {
            self.store.close_info();
            self.section = Some(Section::from_header(row)?);
            self.saw_header = true;
            return Ok(());
        }
        let Some(sec) = &self.section else {
            return Err(if !self.saw_header && !self.saw_aiperf_comment {
                csv_err(
                    file,
                    line,
                    format!(
                        "not an AIPerf server-metrics CSV: line {line} `{}` is not a section header ({SECTION_HINT})",
                        preview(row)
                    ),
                )
            } else {
                csv_err(
                    file,
                    line,
                    format!("data row before any section header ({SECTION_HINT})"),
                )
            });
        };
        if row.len() != sec.width {
            return Err(csv_err(
                file,
                line,
                format!(
                    "row has {} cells but its section header (line {}) has {} columns",
                    row.len(),
                    sec.header_line,
                    sec.width
                ),
            ));
        }
        match &sec.kind {
            SectionKind::Metrics(m) => self.store.metric_row(row, m, &self.filter),
            SectionKind::Info(i) => self.store.info_row(row, i, &self.filter),
        }
    }
}

impl PushReader for ServerCsvReader {
    type Output = ServerMetricsExport;

    fn push(&mut self, chunk: &[u8]) -> Result<(), ReadError> {
        let mut lines = std::mem::take(&mut self.lines);
        let r = lines.push_text(chunk, |line, n, ascii| self.take_line(line, n, ascii));
        self.lines = lines;
        r
    }

    fn finish(mut self) -> Result<ServerMetricsExport, ReadError> {
        let mut lines = std::mem::take(&mut self.lines);
        lines.finish_text(|line, n, ascii| self.take_line(line, n, ascii))?;
        self.records.finish(&self.file)?;
        let file = self.file.as_str();
        let state = self.state;
        if !state.saw_content {
            return Err(ReadError::whole(
                ErrorCode::EmptyInput,
                file,
                "the CSV file is empty",
            ));
        }
        if !state.saw_header && !state.saw_aiperf_comment {
            return Err(csv_err(
                file,
                1,
                format!("not an AIPerf server-metrics CSV: no AIPerf comment header and no section header ({SECTION_HINT})"),
            ));
        }
        let (metrics, csv_lean, skipped) = state.store.finish();
        Ok(ServerMetricsExport {
            format: ServerMetricsFormat::Csv,
            schema_version: state.meta.schema_version,
            aiperf_version: state.meta.aiperf_version,
            benchmark_id: state.meta.benchmark_id,
            summary: ExportSummary::default(),
            metrics_phase: None,
            metrics,
            warmup_metrics: Vec::new(),
            skipped_families: u32::try_from(skipped).unwrap_or(u32::MAX),
            merged_duplicates: Vec::new(),
            csv_lean,
        })
    }
}

/// Read a `server_metrics_export.csv`. See the module docs for the mapping.
pub fn read_server_metrics_csv<R: std::io::Read>(
    file: &str,
    reader: R,
    filter: &FamilyFilter,
) -> Result<ServerMetricsExport, ReadError> {
    drive(file, ServerCsvReader::new(file, filter), reader)
}

fn csv_err(file: &str, line: usize, message: impl Into<String>) -> ReadError {
    ReadError::new(ErrorCode::CsvSyntax, file, Position::line(line), message)
}

/// A line's text: UTF-8, without the byte-order mark a file may start with; `ascii`: the
/// line reader saw its every byte below 0x80 (then it needs no check).
fn line_text<'b>(
    file: &str,
    line_no: usize,
    bytes: &'b [u8],
    ascii: bool,
) -> Result<&'b str, ReadError> {
    let text = crate::read::push::line_text(bytes, ascii).map_err(|e| {
        ReadError::new(
            ErrorCode::NotUtf8,
            file,
            Position::line(line_no),
            format!("invalid UTF-8 at byte {} of the line", e.valid_up_to() + 1),
        )
    })?;
    Ok(if line_no == 1 {
        text.trim_start_matches('\u{feff}')
    } else {
        text
    })
}

/// The cells of a line (without its line end) into `spans`, as [`scan_line`] reads them, when
/// that needs no copy: every quoted cell closes on this line, right before a comma or the
/// line's end, and holds no doubled quote. Its span is then its content, which starts one
/// column after its quote, as [`CellAt`] counts it. False for any other line: [`CsvRecords`]
/// reads it (and reports what is wrong with it).
fn split_line(text: &str, spans: &mut Vec<Span>) -> bool {
    spans.clear();
    let b = text.as_bytes();
    let Some(first_quote) = split_unquoted(b, spans) else {
        return true;
    };
    // A quote: go on cell by cell from the cell holding it (the spans so far end before it).
    debug_assert!(spans.last().is_none_or(|s| s.end < first_quote));
    let mut start = spans.last().map_or(0, |s| s.end + 1);
    loop {
        let rest = b.get(start..).unwrap_or_default();
        if rest.first() == Some(&b'"') {
            let body = start + 1;
            let Some(close) = find_byte(b.get(body..).unwrap_or_default(), b'"') else {
                return false;
            };
            let close = body + close;
            spans.push(Span {
                start: body,
                end: close,
            });
            match b.get(close + 1) {
                None => return true,
                Some(b',') => start = close + 2,
                Some(_) => return false,
            }
            continue;
        }
        // An unquoted cell: a quote inside it is a character like any other.
        match find_byte(rest, b',') {
            Some(k) => {
                spans.push(Span {
                    start,
                    end: start + k,
                });
                start += k + 1;
            }
            None => {
                spans.push(Span {
                    start,
                    end: b.len(),
                });
                return true;
            }
        }
    }
}

const ONES: u64 = 0x0101_0101_0101_0101;
const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;

/// The bytes of `word` equal to `byte`, each flagged by its high bit (exactly: no false flags).
fn bytes_equal(word: u64, byte: u8) -> u64 {
    let x = word ^ (ONES * u64::from(byte));
    !(((x & LOW7) + LOW7) | x | LOW7)
}

/// Push the comma-separated spans of `b` (as if it held no quote), up to the first `"`: `None`
/// when there is none (the spans are then the line's cells), else its index (the spans pushed
/// end before it, and more may follow it). Whole 16-byte blocks first where the target compares
/// them at once ([`split_blocks`]), then eight bytes at a time.
fn split_unquoted(b: &[u8], spans: &mut Vec<Span>) -> Option<usize> {
    let mut start = 0;
    let passed = match split_blocks(b, &mut start, spans) {
        Ok(passed) => passed,
        Err(quote) => return Some(quote),
    };
    let rest = b.get(passed..).unwrap_or_default();
    let words = rest.chunks_exact(8);
    let tail = words.remainder();
    for (k, word) in words.enumerate() {
        let w = u64::from_le_bytes(word.try_into().unwrap_or_default());
        let quotes = bytes_equal(w, b'"');
        let mut commas = bytes_equal(w, b',');
        if quotes != 0 {
            // Only the commas before the quote.
            commas &= quotes.wrapping_sub(1) & !quotes;
        }
        let at_word = passed + k * 8;
        while commas != 0 {
            let at = at_word + (commas.trailing_zeros() / 8) as usize;
            spans.push(Span { start, end: at });
            start = at + 1;
            commas &= commas - 1;
        }
        if quotes != 0 {
            return Some(at_word + (quotes.trailing_zeros() / 8) as usize);
        }
    }
    let base = b.len() - tail.len();
    for (k, &c) in tail.iter().enumerate() {
        match c {
            b',' => {
                spans.push(Span {
                    start,
                    end: base + k,
                });
                start = base + k + 1;
            }
            b'"' => return Some(base + k),
            _ => {}
        }
    }
    spans.push(Span {
        start,
        end: b.len(),
    });
    None
}

/// Push the spans that end at a comma in the whole 16-byte blocks of `b` ([`block16`]: two
/// compares and two mask moves per block, where the words take a dozen operations per eight
/// bytes; the split was a tenth of reading the bench CSV natively), from `start`, up to the
/// first quote: `Err` with its index, else `Ok` with the bytes passed.
fn split_blocks(b: &[u8], start: &mut usize, spans: &mut Vec<Span>) -> Result<usize, usize> {
    for (at_block, block) in block16::blocks(b) {
        let quotes = block.equal(b'"');
        let mut commas = block.equal(b',');
        if quotes != 0 {
            // Only the commas before the quote.
            commas &= quotes.wrapping_sub(1) & !quotes;
        }
        while commas != 0 {
            let at = at_block + commas.trailing_zeros() as usize;
            spans.push(Span {
                start: *start,
                end: at,
            });
            *start = at + 1;
            commas &= commas - 1;
        }
        if quotes != 0 {
            return Err(at_block + quotes.trailing_zeros() as usize);
        }
    }
    Ok(block16::passed(b))
}

/// The first `byte` in `b`.
fn find_byte(b: &[u8], byte: u8) -> Option<usize> {
    let words = b.chunks_exact(8);
    let tail = words.remainder();
    for (k, word) in words.enumerate() {
        let hit = bytes_equal(
            u64::from_le_bytes(word.try_into().unwrap_or_default()),
            byte,
        );
        if hit != 0 {
            return Some(k * 8 + (hit.trailing_zeros() / 8) as usize);
        }
    }
    let base = b.len() - tail.len();
    tail.iter().position(|&c| c == byte).map(|k| base + k)
}

/// Where a cell starts: its line and character column, and whether it is quoted (its content
/// then starts one column later).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct CellAt {
    line: usize,
    column: usize,
    quoted: bool,
}

/// A cell's bytes in its row's text.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
}

/// One data or header row, for reading cells and pointing errors at them.
struct Row<'a> {
    file: &'a str,
    line: usize,
    /// The cells' text: the line itself for a plain row, the cells one after the other for
    /// a row read by [`CsvRecords`].
    text: &'a str,
    spans: &'a [Span],
    /// Where each cell starts, for a row read by [`CsvRecords`]; empty for a plain row,
    /// whose cells start where their spans do.
    at: &'a [CellAt],
}

impl Row<'_> {
    fn len(&self) -> usize {
        self.spans.len()
    }

    /// A cell by index, "" when out of range (rows are width-checked before this is used).
    /// Inlined: a call per cell of every row was 3 % of a CSV's accounting in Node.
    #[inline(always)]
    fn cell(&self, i: usize) -> &str {
        self.spans
            .get(i)
            .and_then(|s| self.text.get(s.start..s.end))
            .unwrap_or("")
    }

    /// Cell `i` is empty (or out of range), told from its span alone.
    fn blank(&self, i: usize) -> bool {
        self.spans.get(i).is_none_or(|s| s.end <= s.start)
    }

    /// Cell `i` as bytes: no character-boundary checks (its ends are delimiters or the line's).
    fn cell_bytes(&self, i: usize) -> &[u8] {
        self.spans
            .get(i)
            .and_then(|s| self.text.as_bytes().get(s.start..s.end))
            .unwrap_or_default()
    }

    fn cells(&self) -> impl Iterator<Item = &str> {
        (0..self.len()).map(|i| self.cell(i))
    }

    fn opt_cell(&self, i: Option<usize>) -> Option<&str> {
        i.map(|i| self.cell(i)).filter(|s| !s.is_empty())
    }

    /// The position of character `offset` of cell `i`'s content.
    fn pos(&self, i: usize, offset: usize) -> Position {
        if let Some(a) = self.at.get(i) {
            return Position::line_col(a.line, a.column + usize::from(a.quoted) + offset);
        }
        match self.spans.get(i).and_then(|s| self.text.get(..s.start)) {
            Some(before) if self.at.is_empty() => {
                Position::line_col(self.line, before.chars().count() + 1 + offset)
            }
            _ => Position::line(self.line),
        }
    }

    /// A `CSV_SYNTAX` error at cell `i`.
    fn err(&self, i: usize, message: impl Into<String>) -> ReadError {
        ReadError::new(ErrorCode::CsvSyntax, self.file, self.pos(i, 0), message)
    }
}

/// `s.trim()`, without looking at characters when `s` starts and ends with a visible ASCII
/// one (almost every cell).
fn trim(s: &str) -> &str {
    match (s.as_bytes().first(), s.as_bytes().last()) {
        (Some(a), Some(b)) if a.is_ascii_graphic() && b.is_ascii_graphic() => s,
        _ => s.trim(),
    }
}

/// The first cells of a row, for messages.
fn preview(row: &Row<'_>) -> String {
    let mut s = String::new();
    for (i, c) in row.cells().take(4).enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.extend(c.chars().take(40));
    }
    if row.len() > 4 {
        s.push_str(",…");
    }
    s
}

// ---------------------------------------------------------------------------------------------
// Comment header

#[derive(Default)]
struct Meta {
    aiperf_version: Option<String>,
    schema_version: Option<String>,
    benchmark_id: Option<String>,
}

impl Meta {
    /// Take one `# …` line; true if it is one AIPerf writes.
    fn take_comment(&mut self, raw: &str) -> bool {
        let body = raw.trim_start_matches('#').trim();
        if body.starts_with("AIPerf Server Metrics Export") {
            return true;
        }
        let Some((key, value)) = body.split_once(':') else {
            return false;
        };
        let value = value.trim();
        let value_opt = if value.is_empty() || value == "None" {
            None
        } else {
            Some(value.to_string())
        };
        match key.trim() {
            "aiperf_version" => self.aiperf_version = value_opt,
            "schema_version" => self.schema_version = value_opt,
            "benchmark_id" => self.benchmark_id = value_opt,
            _ => return false,
        }
        true
    }
}

// ---------------------------------------------------------------------------------------------
// Sections

struct Section {
    header_line: usize,
    width: usize,
    kind: SectionKind,
}

enum SectionKind {
    Metrics(MetricCols),
    Info(InfoCols),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum StatKind {
    Gauge,
    Counter,
    Histogram,
}

impl StatKind {
    fn of(t: MetricType) -> StatKind {
        match t {
            MetricType::Counter => StatKind::Counter,
            MetricType::Histogram => StatKind::Histogram,
            MetricType::Gauge | MetricType::Unknown => StatKind::Gauge,
        }
    }

    fn names(self) -> &'static [&'static str] {
        match self {
            StatKind::Gauge => &GAUGE_STATS,
            StatKind::Counter => &COUNTER_STATS,
            StatKind::Histogram => &HISTOGRAM_STATS,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            StatKind::Gauge => "gauge",
            StatKind::Counter => "counter",
            StatKind::Histogram => "histogram",
        }
    }

    /// Whether stat `i` of [`StatKind::names`] is a count (refused above 2^53 − 1): a
    /// counter's `total`, a histogram's `count`.
    fn is_count(self, i: usize) -> bool {
        i == 0 && self != StatKind::Gauge
    }

    /// Whether a lean read keeps stat `i` (see [`CsvSeries::values_of`]): a counter's `total`,
    /// a gauge's `avg`, `min` and `max`, a histogram's `count` and `sum`. The counts refused
    /// above 2^53 − 1 are among them.
    fn lean_keeps(self, i: usize) -> bool {
        match self {
            StatKind::Counter => i == 0,
            StatKind::Gauge => i <= 2,
            StatKind::Histogram => i == 0 || i == 2,
        }
    }

    /// Of a row's stats what a lean read keeps: [`CsvSeries::values_of`] of [`StatKind::stats`],
    /// without the whole set made (a row each).
    fn lean_values(self, v: &[Option<f64>; STATS_MAX]) -> [Option<f64>; 3] {
        match self {
            StatKind::Gauge => [v[0], v[1], v[2]],
            StatKind::Counter => [v[0], None, None],
            StatKind::Histogram => [v[0], v[2], None],
        }
    }

    /// The stats of a row, each by its index in [`StatKind::names`].
    fn stats(self, v: &[Option<f64>; STATS_MAX]) -> Stats {
        match self {
            StatKind::Gauge => Stats::Gauge(GaugeStats {
                avg: v[0].into(),
                min: v[1].into(),
                max: v[2].into(),
                std: v[3].into(),
                p1: v[4].into(),
                p5: v[5].into(),
                p10: v[6].into(),
                p25: v[7].into(),
                p50: v[8].into(),
                p75: v[9].into(),
                p90: v[10].into(),
                p95: v[11].into(),
                p99: v[12].into(),
            }),
            StatKind::Counter => Stats::Counter(CounterStats {
                total: v[0].into(),
                rate: v[1].into(),
                rate_avg: v[2].into(),
                rate_min: v[3].into(),
                rate_max: v[4].into(),
                rate_std: v[5].into(),
            }),
            StatKind::Histogram => Stats::Histogram(HistogramStats {
                count: v[0].into(),
                count_rate: v[1].into(),
                sum: v[2].into(),
                sum_rate: v[3].into(),
                avg: v[4].into(),
                p1_estimate: v[5].into(),
                p5_estimate: v[6].into(),
                p10_estimate: v[7].into(),
                p25_estimate: v[8].into(),
                p50_estimate: v[9].into(),
                p75_estimate: v[10].into(),
                p90_estimate: v[11].into(),
                p95_estimate: v[12].into(),
                p99_estimate: v[13].into(),
            }),
        }
    }
}

/// The most stat columns of a section kind (a histogram's).
const STATS_MAX: usize = HISTOGRAM_STATS.len();

struct MetricCols {
    endpoint: usize,
    metric_type: usize,
    metric: usize,
    unit: Option<usize>,
    description: Option<usize>,
    buckets: Option<usize>,
    stat_kind: StatKind,
    /// The column of each stat of the kind, in [`StatKind::names`] order.
    stats: Vec<Option<usize>>,
    /// (label name, column index) in name order (header order among equal names), as a
    /// [`Labels`] text has them (see [`row_pairs`]).
    labels: Vec<(String, usize)>,
    /// No label name is given twice (the header of every CSV AIPerf writes).
    unique_labels: bool,
}

struct InfoCols {
    endpoint: usize,
    metric: usize,
    key: usize,
    value: usize,
    description: Option<usize>,
}

impl Section {
    fn from_header(row: &Row<'_>) -> Result<Section, ReadError> {
        let (file, line) = (row.file, row.line);
        let names: Vec<String> = row.cells().map(|c| c.trim().to_string()).collect();
        let mut index: HashMap<&str, usize> = HashMap::default();
        for (i, n) in names.iter().enumerate() {
            if n.is_empty() {
                return Err(row.err(
                    i,
                    format!("section header has an empty column name (column {})", i + 1),
                ));
            }
            if index.insert(n.as_str(), i).is_some() {
                return Err(row.err(i, format!("section header names column `{n}` twice")));
            }
        }
        let need = |name: &str| -> Result<usize, ReadError> {
            index.get(name).copied().ok_or_else(|| {
                csv_err(
                    file,
                    line,
                    format!("section header lacks the `{name}` column ({SECTION_HINT})"),
                )
            })
        };
        let kind = if !index.contains_key("Type") && index.contains_key("Key") {
            SectionKind::Info(InfoCols {
                endpoint: need("Endpoint")?,
                metric: need("Metric")?,
                key: need("Key")?,
                value: need("Value")?,
                description: index.get("Description").copied(),
            })
        } else {
            let endpoint = need("Endpoint")?;
            let metric_type = need("Type")?;
            let metric = need("Metric")?;
            let kinds = [StatKind::Gauge, StatKind::Counter, StatKind::Histogram];
            let mut best: Option<(StatKind, usize)> = None;
            for k in kinds {
                let n = k.names().iter().filter(|s| index.contains_key(*s)).count();
                if n > 0 && best.is_none_or(|(_, b)| n > b) {
                    best = Some((k, n));
                }
            }
            let Some((stat_kind, _)) = best else {
                return Err(csv_err(
                    file,
                    line,
                    "section header has none of the known statistic columns (e.g. `avg`, `total`, `count`)",
                ));
            };
            let stats = stat_kind
                .names()
                .iter()
                .map(|s| index.get(s).copied())
                .collect();
            let mut labels: Vec<(String, usize)> = names
                .iter()
                .enumerate()
                .filter(|(_, n)| {
                    !FIXED_COLUMNS.contains(&n.as_str()) && !stat_kind.names().contains(&n.as_str())
                })
                .map(|(i, n)| (n.clone(), i))
                .collect();
            crate::sort::sort_by(&mut labels, |a, b| a.0.cmp(&b.0));
            let unique_labels = labels.windows(2).all(|w| w[0].0 != w[1].0);
            SectionKind::Metrics(MetricCols {
                endpoint,
                metric_type,
                metric,
                unit: index.get("Unit").copied(),
                description: index.get("Description").copied(),
                buckets: index.get("buckets").copied(),
                stat_kind,
                stats,
                labels,
                unique_labels,
            })
        };
        Ok(Section {
            header_line: line,
            width: row.len(),
            kind,
        })
    }
}

/// Rebuild the full scrape URL from AIPerf's display form.
pub(crate) fn endpoint_url_from_display(display: &str) -> String {
    const SCHEME: &str = "http://";
    const PATH: &str = "/metrics";
    let d = display.trim().trim_end_matches('/');
    // Built in place (once per endpoint of a CSV of thousands: `format!` was most of it).
    let mut url = String::with_capacity(SCHEME.len() + d.len() + PATH.len());
    // A byte search: `str::contains` sets up a two-way searcher per call (most of this function
    // in the first call of a CSV of thousands of endpoints, in V8's baseline code).
    if !d.as_bytes().windows(3).any(|w| w == b"://") {
        url.push_str(SCHEME);
    }
    url.push_str(d);
    if !url.ends_with(PATH) {
        url.push_str(PATH);
    }
    url
}

/// A stat cell's number; a count (`total` of a counter, `count` of a histogram) above
/// 2^53 − 1 is refused, naming the metric.
fn parse_number(
    row: &Row<'_>,
    i: usize,
    column: &str,
    count_of: Option<&str>,
) -> Result<f64, ReadError> {
    let s = row.cell(i);
    let v = to_f64(trim(s).as_bytes())
        .ok_or_else(|| row.err(i, format!("column `{column}`: `{s}` is not a number")))?;
    if let Some(metric) = count_of.filter(|_| count::too_large(v)) {
        let lead = s.len() - s.trim_start().len();
        return Err(count::refuse(
            row.file,
            row.pos(i, lead),
            &format!("`{column}` of `{metric}`"),
            s.trim(),
        ));
    }
    Ok(v)
}

/// `s` is a sign, digits and at most one `.` with at least one digit: a subset of what
/// `f64::from_str` accepts (no exponent, no `inf` or `nan`), told without parsing. Inlined:
/// it is asked of most stat cells of every row.
#[inline(always)]
fn is_plain_decimal(b: &[u8]) -> bool {
    let digits = match b.first() {
        Some(b'-' | b'+') => b.get(1..).unwrap_or_default(),
        _ => b,
    };
    let mut seen_dot = false;
    let mut seen_digit = false;
    for &c in digits {
        match c {
            b'0'..=b'9' => seen_digit = true,
            b'.' if !seen_dot => seen_dot = true,
            _ => return false,
        }
    }
    seen_digit
}

// ---------------------------------------------------------------------------------------------
// What the rows give

/// The families, endpoints, label sets and series read so far.
#[derive(Default)]
struct Store {
    /// Keep the series as [`CsvSeries`] (a lean read), not as [`Series`] in their families.
    lean: bool,
    families: Families,
    endpoints: Endpoints,
    /// Label sets of metric rows, one shared copy each (see [`LabelSets`]).
    label_sets: LabelSets,
    /// A lean read's series, in row order.
    lean_series: Vec<CsvSeries>,
    info: InfoSeries,
}

impl Store {
    fn metric_row(
        &mut self,
        row: &Row<'_>,
        cols: &MetricCols,
        filter: &FamilyFilter,
    ) -> Result<(), ReadError> {
        let name = trim(row.cell(cols.metric));
        if name.is_empty() {
            return Err(row.err(cols.metric, "column `Metric` is empty"));
        }
        let type_cell = row.cell(cols.metric_type);
        let Some(metric_type) = MetricType::parse(type_cell) else {
            return Err(row.err(
                cols.metric_type,
                format!("column `Type`: `{type_cell}` is not a metric type (gauge, counter, histogram, unknown)"),
            ));
        };
        if StatKind::of(metric_type) != cols.stat_kind {
            return Err(row.err(
                cols.metric_type,
                format!(
                    "a {} row in a section whose header has {} statistic columns",
                    metric_type.as_str(),
                    cols.stat_kind.as_str()
                ),
            ));
        }
        let Name::Wanted(known) = self.families.name(name, filter) else {
            return Ok(());
        };
        let endpoint = trim(row.cell(cols.endpoint));
        if endpoint.is_empty() {
            return Err(row.err(cols.endpoint, "column `Endpoint` is empty"));
        }
        // Every stat cell is read (and checked) in column-name order, lean or not.
        let mut values = [None; STATS_MAX];
        for (k, (stat, col)) in cols.stat_kind.names().iter().zip(&cols.stats).enumerate() {
            let Some(i) = *col else {
                continue;
            };
            if row.blank(i) {
                continue;
            }
            if self.lean && !cols.stat_kind.lean_keeps(k) {
                // Not kept: only checked, and a plain decimal needs no parse for that.
                let b = row.cell_bytes(i);
                let b = match (b.first(), b.last()) {
                    (Some(x), Some(y)) if x.is_ascii_graphic() && y.is_ascii_graphic() => b,
                    _ => trim(row.cell(i)).as_bytes(),
                };
                if !is_plain_decimal(b) {
                    parse_number(row, i, stat, None)?;
                }
                continue;
            }
            let count_of = cols.stat_kind.is_count(k).then_some(name);
            if let Some(slot) = values.get_mut(k) {
                *slot = Some(parse_number(row, i, stat, count_of)?);
            }
        }
        let mut buckets = None;
        if let (MetricType::Histogram, Some(i)) = (metric_type, cols.buckets) {
            if !row.cell(i).is_empty() {
                if self.lean {
                    parse_buckets(row, i, name, None)?;
                } else {
                    let mut kept = Vec::new();
                    let mut keep = |le: &str, count| {
                        kept.push(Bucket {
                            le: le.to_string(),
                            count,
                        })
                    };
                    parse_buckets(row, i, name, Some(&mut keep))?;
                    buckets = Some(kept);
                }
            }
        }
        // Refused under a memory budget: the file fails (see `crate::admission`).
        let Some(endpoint) = self.endpoints.id(endpoint) else {
            return Ok(());
        };
        let set = self.label_sets.of_row(row, cols);
        let family = self.families.family(name, known, || Family {
            name: name.to_string(),
            metric_type,
            description: row.opt_cell(cols.description).unwrap_or("").to_string(),
            unit: row.opt_cell(cols.unit).map(str::to_string),
            series: Vec::new(),
            lean_series: Pieces::default(),
        });
        let Some(fam) = self.families.list.get_mut(family as usize) else {
            return Ok(());
        };
        if fam.metric_type != metric_type {
            return Err(row.err(
                cols.metric_type,
                format!(
                    "metric `{name}` is {} here but {} on an earlier row",
                    metric_type.as_str(),
                    fam.metric_type.as_str()
                ),
            ));
        }
        if self.lean {
            // Refused under a memory budget: the file fails (see `crate::admission`).
            if !room_for_one(&mut self.lean_series) {
                return Ok(());
            }
            let values = cols.stat_kind.lean_values(&values);
            self.lean_series
                .push(CsvSeries::new(family, endpoint, set, values));
        } else {
            fam.series.push(Series {
                endpoint_url: self.endpoints.shared_url(endpoint),
                labels: self.label_sets.get(set),
                stats: cols.stat_kind.stats(&values),
                timeslices: Vec::new(),
                buckets,
            });
        }
        Ok(())
    }

    fn info_row(
        &mut self,
        row: &Row<'_>,
        cols: &InfoCols,
        filter: &FamilyFilter,
    ) -> Result<(), ReadError> {
        let name = trim(row.cell(cols.metric));
        if name.is_empty() {
            return Err(row.err(cols.metric, "column `Metric` is empty"));
        }
        let Name::Wanted(known) = self.families.name(name, filter) else {
            return Ok(());
        };
        let endpoint = trim(row.cell(cols.endpoint));
        if endpoint.is_empty() {
            return Err(row.err(cols.endpoint, "column `Endpoint` is empty"));
        }
        let key = trim(row.cell(cols.key));
        if key.is_empty() {
            return Err(row.err(cols.key, "column `Key` is empty"));
        }
        let value = row.cell(cols.value);
        // Refused under a memory budget: the file fails (see `crate::admission`).
        let Some(endpoint) = self.endpoints.id(endpoint) else {
            return Ok(());
        };
        let family = self.families.family(name, known, || Family {
            name: name.to_string(),
            metric_type: MetricType::Gauge,
            description: row.opt_cell(cols.description).unwrap_or("").to_string(),
            unit: None,
            series: Vec::new(),
            lean_series: Pieces::default(),
        });
        let Some(fam) = self.families.list.get_mut(family as usize) else {
            return Ok(());
        };
        if fam.metric_type != MetricType::Gauge {
            return Err(row.err(
                cols.metric,
                format!(
                    "info metric `{name}` is {} on an earlier row",
                    fam.metric_type.as_str()
                ),
            ));
        }
        // Refused under a memory budget: the file fails (see `crate::admission`).
        let (Some(key_id), Some(value_id)) =
            (self.info.strings.id(key, 0), self.info.strings.id(value, 1))
        else {
            return Ok(());
        };
        let pair = (key_id, value_id);
        let open = match self.info.current(endpoint, family, pair.0) {
            Some(i) => i,
            None => {
                if !self.info.room_to_open() {
                    return Ok(());
                }
                // An info metric's value is 1 by convention.
                let one = Some(1.0);
                let at = if self.lean {
                    if !room_for_one(&mut self.lean_series) {
                        return Ok(());
                    }
                    let values = [one, one, one];
                    // Its labels are set when the section ends (`close_info`).
                    let s = CsvSeries::new(family, endpoint, u32::MAX, values);
                    self.lean_series.push(s);
                    self.lean_series.len() - 1
                } else {
                    fam.series.push(Series {
                        endpoint_url: self.endpoints.shared_url(endpoint),
                        labels: Arc::default(),
                        stats: Stats::Gauge(GaugeStats {
                            avg: one.into(),
                            min: one.into(),
                            max: one.into(),
                            ..GaugeStats::default()
                        }),
                        timeslices: Vec::new(),
                        buckets: None,
                    });
                    fam.series.len() - 1
                };
                self.info.open(endpoint, family, at)
            }
        };
        self.info.add(open, pair);
        Ok(())
    }

    /// The info series of the section are complete: each gets its label set (one shared
    /// copy per distinct set).
    fn close_info(&mut self) {
        for o in self.info.close() {
            let set = self.info.labels(&o.pairs, &mut self.label_sets);
            if self.lean {
                if let Some(s) = self.lean_series.get_mut(o.at) {
                    s.labels = set;
                }
            } else {
                let family = self.families.list.get_mut(o.family as usize);
                if let Some(s) = family.and_then(|f| f.series.get_mut(o.at)) {
                    s.labels = self.label_sets.get(set);
                }
            }
        }
    }

    /// The families sorted by name, a lean read's series, and how many families were skipped.
    fn finish(mut self) -> (Vec<Family>, Option<CsvLean>, usize) {
        self.close_info();
        let Families { list, skipped, .. } = self.families;
        // Families sorted by name (each name is one family); `rank[i]`: where family `i` goes.
        let mut sorted: Vec<(usize, Family)> = list.into_iter().enumerate().collect();
        crate::sort::sort_by(&mut sorted, |a, b| a.1.name.cmp(&b.1.name));
        let mut rank = vec![u32::MAX; sorted.len()];
        for (r, (i, _)) in sorted.iter().enumerate() {
            if let Some(slot) = rank.get_mut(*i) {
                *slot = u32::try_from(r).unwrap_or(u32::MAX);
            }
        }
        let metrics = sorted.into_iter().map(|(_, f)| f).collect();
        let lean = self.lean.then(|| {
            let mut series = self.lean_series;
            for s in &mut series {
                s.family = rank.get(s.family as usize).copied().unwrap_or(u32::MAX);
            }
            // Stable: a family's series stay in row order.
            sort_by_family(&mut series, rank.len());
            // Kept while the run is accounted: no spare capacity.
            series.shrink_to_fit();
            CsvLean {
                endpoint_urls: self.endpoints.urls,
                label_sets: self.label_sets.list,
                series,
            }
        });
        (metrics, lean, skipped)
    }
}

/// Sort lean series stably by family (`families` of them; one past the last holds any other
/// index): a counting sort, then the moves in place (no second vector of series).
fn sort_by_family(series: &mut [CsvSeries], families: usize) {
    let slot = |s: &CsvSeries| (s.family as usize).min(families);
    // Where each family's series start in the sorted order.
    let mut next = vec![0usize; families + 1];
    for s in series.iter() {
        if let Some(n) = next.get_mut(slot(s)) {
            *n += 1;
        }
    }
    let mut start = 0;
    for n in &mut next {
        let count = *n;
        *n = start;
        start += count;
    }
    let mut dest: Vec<usize> = Vec::with_capacity(series.len());
    for s in series.iter() {
        let n = next.get_mut(slot(s));
        dest.push(n.map_or(0, |n| {
            *n += 1;
            *n - 1
        }));
    }
    // Each cycle of the permutation: swap the element at `i` to its place until `i` holds
    // its own.
    for i in 0..series.len() {
        loop {
            let d = dest.get(i).copied().unwrap_or(i);
            if d == i || d >= series.len() {
                break;
            }
            series.swap(i, d);
            dest.swap(i, d);
        }
    }
}

/// What the filter says of a metric name, and its family once made.
#[derive(Clone, Copy)]
enum Name {
    Skipped,
    /// Kept; the index of its family in [`Families::list`] once a row made it.
    Wanted(Option<u32>),
}

/// Families by name, in the order they were first read.
#[derive(Default)]
struct Families {
    /// Name → its index in `names`.
    by_name: HashMap<String, u32>,
    names: Vec<Name>,
    /// The last name looked up (the rows of a family come together).
    last: Option<(String, Name)>,
    list: Vec<Family>,
    /// Names the filter skipped.
    skipped: usize,
}

impl Families {
    /// Whether the filter keeps `name` (a skipped name is counted once), and its family.
    fn name(&mut self, name: &str, filter: &FamilyFilter) -> Name {
        if let Some((last, n)) = &self.last {
            if last == name {
                return *n;
            }
        }
        let n = match self.by_name.get(name) {
            Some(&k) => self.names.get(k as usize).copied().unwrap_or(Name::Skipped),
            None => {
                let n = if filter.wants(name) {
                    Name::Wanted(None)
                } else {
                    self.skipped += 1;
                    Name::Skipped
                };
                let k = u32::try_from(self.names.len()).unwrap_or(u32::MAX);
                self.by_name.insert(name.to_string(), k);
                self.names.push(n);
                n
            }
        };
        self.remember(name, n);
        n
    }

    /// The family of a kept `name` (`known` as [`Families::name`] gave it), made by `new`
    /// the first time.
    fn family(&mut self, name: &str, known: Option<u32>, new: impl FnOnce() -> Family) -> u32 {
        if let Some(i) = known {
            return i;
        }
        let i = u32::try_from(self.list.len()).unwrap_or(u32::MAX);
        self.list.push(new());
        let n = Name::Wanted(Some(i));
        // `name` was looked up first ([`Families::name`]), so it has its slot.
        if let Some(slot) = self
            .by_name
            .get(name)
            .and_then(|&k| self.names.get_mut(k as usize))
        {
            *slot = n;
        }
        self.remember(name, n);
        i
    }

    fn remember(&mut self, name: &str, n: Name) {
        match &mut self.last {
            Some((last, slot)) => {
                if last != name {
                    last.clear();
                    last.push_str(name);
                }
                *slot = n;
            }
            None => self.last = Some((name.to_string(), n)),
        }
    }
}

/// Endpoints by their display form, each with its URL once.
#[derive(Default)]
struct Endpoints {
    /// Display form → its index in `displays`.
    by_display: HashMap<String, u32>,
    /// Display forms in order of first sight, one after another: a family's rows name the
    /// endpoints in this order, and each row compares its cell with the next one here. In
    /// one text they are read in sequence; a string each was about a cache miss per row
    /// (cachegrind, the 100 MB CSV of 25,600 endpoints: 1.05 M fewer D1 misses of 22.3 M).
    display_text: String,
    /// Where each display form ends in `display_text` (it starts where the previous ends),
    /// with its endpoint.
    displays: Vec<(usize, u32)>,
    /// The index in `displays` of the last row's endpoint.
    last: usize,
    /// Two display forms may give one URL (`h:1` and `http://h:1/metrics`): one endpoint.
    by_url: HashMap<String, u32>,
    urls: Vec<Arc<str>>,
}

impl Endpoints {
    /// The endpoint `display` names; none when a new one's room was refused under a memory
    /// budget ([`crate::admission`]: the file then fails). A CSV can name hundreds of
    /// thousands of endpoints, and these tables doubling unadmitted took a stream's linear
    /// memory to 78 MB before its refusal.
    fn id(&mut self, display: &str) -> Option<u32> {
        // A family's rows list the endpoints in the order the previous family did: the next
        // endpoint, the same one again (another label set) or the first one is likely.
        for seq in [self.last + 1, self.last, 0] {
            if let Some((d, id)) = self.display(seq) {
                if same_from_end(d, display) {
                    self.last = seq;
                    return Some(id);
                }
            }
        }
        if let Some(&seq) = self.by_display.get(display) {
            self.last = seq as usize;
            return Some(self.displays.get(self.last).map_or(u32::MAX, |d| d.1));
        }
        if !room_in_map(&mut self.by_display)
            || !room_for_one(&mut self.displays)
            || !room_in_text(&mut self.display_text, display.len())
        {
            return None;
        }
        let url = endpoint_url_from_display(display);
        let id = match self.by_url.get(&url) {
            Some(&id) => id,
            None => {
                if !room_in_map(&mut self.by_url) || !room_for_one(&mut self.urls) {
                    return None;
                }
                let id = u32::try_from(self.urls.len()).unwrap_or(u32::MAX);
                self.urls.push(Arc::from(url.as_str()));
                self.by_url.insert(url, id);
                id
            }
        };
        self.last = self.displays.len();
        let seq = u32::try_from(self.last).unwrap_or(u32::MAX);
        self.by_display.insert(display.to_string(), seq);
        self.display_text.push_str(display);
        self.displays.push((self.display_text.len(), id));
        Some(id)
    }

    /// The display form first seen `seq`th, and its endpoint.
    fn display(&self, seq: usize) -> Option<(&str, u32)> {
        let &(end, id) = self.displays.get(seq)?;
        let start = match seq.checked_sub(1) {
            Some(before) => self.displays.get(before).map_or(0, |d| d.0),
            None => 0,
        };
        Some((self.display_text.get(start..end)?, id))
    }

    /// The endpoint's URL, one copy for all its series.
    fn shared_url(&self, id: u32) -> Arc<str> {
        self.urls
            .get(id as usize)
            .cloned()
            .unwrap_or_else(|| Arc::from(""))
    }
}

/// `a == b`, their last eight bytes first: endpoints of one deployment differ in their last
/// characters (the port), so a wrong guess is told by one word, and only a likely match is
/// compared whole.
fn same_from_end(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    match (a.last_chunk::<8>(), b.last_chunk::<8>()) {
        (Some(x), Some(y)) if x != y => false,
        _ => a == b,
    }
}

/// One label set per distinct combination of a section's label cells: a CSV of many endpoints
/// repeats the same few sets on every endpoint, and each row would otherwise hold its own map.
#[derive(Default)]
struct LabelSets {
    /// Each set once (the info series' too); a set's id is its index.
    list: Vec<Arc<Labels>>,
    /// The id of each set of label cells, found by its text. A key of its own beside each
    /// set (its cells, length-prefixed) held as many bytes again, and 32 more in the table:
    /// 9.5 MB of a CSV of 80,000 label sets.
    sets: HashMap<SetText, u32>,
    /// The text of the row's set (reused).
    key: String,
    /// The id of the last set given (the rows of a family mostly share one).
    last: Option<u32>,
}

/// A set of [`LabelSets`], found by its text (SipHash with the table's own keys: the texts
/// are an upload's).
struct SetText(Arc<Labels>);

impl std::borrow::Borrow<str> for SetText {
    fn borrow(&self) -> &str {
        self.0.text()
    }
}

impl Hash for SetText {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.0.text().hash(h);
    }
}

impl PartialEq for SetText {
    fn eq(&self, other: &Self) -> bool {
        self.0.text() == other.0.text()
    }
}

impl Eq for SetText {}

impl LabelSets {
    /// The id of the row's set.
    fn of_row(&mut self, row: &Row<'_>, cols: &MetricCols) -> u32 {
        // Most rows have the last row's set: their cells are compared with it in place, and a
        // text is written only for a row that differs (writing one per row was 4 % of reading
        // a many-endpoint CSV in the .wasm). A header that names a label twice (no CSV AIPerf
        // writes) has every row's text written and looked up.
        if let Some((id, l)) = self
            .last
            .and_then(|id| Some((id, self.list.get(id as usize)?)))
        {
            if cols.unique_labels {
                let cells = cols
                    .labels
                    .iter()
                    .map(|(label, i)| (label.as_str(), row.cell(*i)));
                if l.is_pairs(cells.filter(|(_, v)| !v.is_empty())) {
                    return id;
                }
            }
        }
        let mut key = std::mem::take(&mut self.key);
        key.clear();
        for (name, value) in row_pairs(row, cols) {
            push_pair(&mut key, name, value);
        }
        let id = self.id_of_text(&key);
        self.key = key;
        self.last = Some(id);
        id
    }

    /// The id of the set whose text is `text` ([`Labels::text`]), added if new; `u32::MAX`
    /// when a new set's room was refused under a memory budget (the file then fails, see
    /// `crate::admission`).
    fn id_of_text(&mut self, text: &str) -> u32 {
        match self.sets.get(text).copied() {
            Some(id) => id,
            None if !room_for_one(&mut self.list) || !room_in_map(&mut self.sets) => u32::MAX,
            None => {
                let labels = Arc::new(Labels::from_text(text));
                let id = self.add(Arc::clone(&labels));
                self.sets.insert(SetText(labels), id);
                id
            }
        }
    }

    /// A new set's id.
    fn add(&mut self, labels: Arc<Labels>) -> u32 {
        let id = u32::try_from(self.list.len()).unwrap_or(u32::MAX);
        self.list.push(labels);
        id
    }

    /// The set of an id (the empty set for an id not given).
    fn get(&self, id: u32) -> Arc<Labels> {
        self.list.get(id as usize).cloned().unwrap_or_default()
    }
}

/// The (label, value) pairs of a row's non-empty label cells, in name order; of a name given
/// twice the last non-empty cell stands, as `Labels::from_pairs` has it.
fn row_pairs<'r>(
    row: &'r Row<'_>,
    cols: &'r MetricCols,
) -> impl Iterator<Item = (&'r str, &'r str)> + 'r {
    let cells = cols
        .labels
        .iter()
        .map(|(label, i)| (label.as_str(), row.cell(*i)));
    let mut cells = cells.filter(|(_, v)| !v.is_empty()).peekable();
    std::iter::from_fn(move || loop {
        let pair = cells.next()?;
        if cells.peek().is_none_or(|next| next.0 != pair.0) {
            return Some(pair);
        }
    })
}

/// The info series of the current section: rows with the same endpoint and metric add their
/// `Key`/`Value` pair to one series until a key repeats.
#[derive(Default)]
struct InfoSeries {
    /// (endpoint, family) (see [`pair_key`]) → index in `open` of the series its next rows
    /// go to.
    current: HashMap<[u8; 8], u32>,
    open: Vec<OpenInfo>,
    /// Label names and values, each once (`OpenInfo::pairs` holds their ids).
    strings: Strings,
    /// The text of the set of the series last closed (reused).
    text: String,
    /// The pairs of the series last closed, in their rows' order (none when it had many),
    /// and their set's id.
    last_pairs: Vec<(u32, u32)>,
    last_set: u32,
    /// The keys of the open series with more than [`SCANNED_KEYS`] pairs, by (index in
    /// `open`, key id) (see [`pair_key`]): a set, its values unused, in the map type of
    /// `current`. Eight bytes a key in the table: a `Vec` key was 24 more and an allocation
    /// (an info metric of 100,000 keys held 6 MB in them).
    keys: HashMap<[u8; 8], u32>,
}

/// Keys an open info series has before they are found through [`InfoSeries::keys`]: below it a
/// scan of its pairs is cheaper; above it a scan per row was quadratic in a series' keys (an
/// info metric of 100,000 keys on one endpoint, 3 MB: 2.6 s).
const SCANNED_KEYS: usize = 16;

struct OpenInfo {
    family: u32,
    /// The series: its index in its family (full read) or among the lean series.
    at: usize,
    /// (name, value) ids of its labels so far.
    pairs: Vec<(u32, u32)>,
}

impl InfoSeries {
    /// The series (its index in `open`) the rows of (endpoint, family) go to, unless it
    /// already has `key`.
    fn current(&self, endpoint: u32, family: u32, key: u32) -> Option<usize> {
        let &i = self.current.get(&pair_key(endpoint, family))?;
        let o = self.open.get(i as usize)?;
        let has = if o.pairs.len() <= SCANNED_KEYS {
            o.pairs.iter().any(|p| p.0 == key)
        } else {
            self.keys.contains_key(&pair_key(i, key))
        };
        (!has).then_some(i as usize)
    }

    /// Add `pair` to open series `i` (a key's place refused under a memory budget fails the
    /// file: see `crate::admission`).
    fn add(&mut self, i: usize, pair: (u32, u32)) {
        let Some(o) = self.open.get_mut(i) else {
            return;
        };
        o.pairs.push(pair);
        if o.pairs.len() <= SCANNED_KEYS {
            return;
        }
        // Past the scan: every key the series has is put in `keys` (all of them the first time).
        let open = u32::try_from(i).unwrap_or(u32::MAX);
        let first = o.pairs.len() == SCANNED_KEYS + 1;
        let from = if first { 0 } else { o.pairs.len() - 1 };
        for &(key, _) in o.pairs.get(from..).unwrap_or(&[]) {
            if !room_in_map(&mut self.keys) {
                return;
            }
            self.keys.insert(pair_key(open, key), 0);
        }
    }

    /// Whether a series may be opened: its tables admitted under a memory budget
    /// ([`crate::admission`]; refused, the file fails).
    fn room_to_open(&mut self) -> bool {
        room_in_map(&mut self.current) && room_for_one(&mut self.open)
    }

    /// Start a series for (endpoint, family): its index in `open`.
    fn open(&mut self, endpoint: u32, family: u32, at: usize) -> usize {
        let i = self.open.len();
        let slot = u32::try_from(i).unwrap_or(u32::MAX);
        self.current.insert(pair_key(endpoint, family), slot);
        self.open.push(OpenInfo {
            family,
            at,
            pairs: Vec::new(),
        });
        i
    }

    /// End the section: its series, no longer open.
    fn close(&mut self) -> Vec<OpenInfo> {
        self.current.clear();
        self.keys = HashMap::default();
        std::mem::take(&mut self.open)
    }

    /// The id in `all` (the rows' sets, found by their text: one copy of each set) of the
    /// label set of (name, value) ids, each name once (`u32::MAX` when a new set's room was
    /// refused under a memory budget: the file then fails).
    fn labels(&mut self, pairs: &[(u32, u32)], all: &mut LabelSets) -> u32 {
        // Endpoints of one deployment mostly list the same pairs in the same order.
        if !pairs.is_empty() && self.last_pairs == pairs {
            return self.last_set;
        }
        let mut named: Vec<(&str, &str)> = pairs
            .iter()
            .map(|&(k, v)| (self.strings.get(k), self.strings.get(v)))
            .collect();
        crate::sort::sort_by(&mut named, |a, b| a.0.cmp(b.0));
        // The set's text written where the last one's was: a set is made only when new. (Each
        // length takes a byte below 64.)
        let mut text = std::mem::take(&mut self.text);
        text.clear();
        text.reserve(named.iter().map(|(n, v)| n.len() + v.len() + 2).sum());
        for (name, value) in named {
            push_pair(&mut text, name, value);
        }
        let id = all.id_of_text(&text);
        // A large set's buffer is not kept for the rest of the file.
        if text.capacity() <= 4096 {
            self.text = text;
        }
        // Remembered when small (a copy of a large set's pairs is not worth its memory).
        self.last_pairs.clear();
        if pairs.len() <= 64 {
            self.last_pairs.extend_from_slice(pairs);
        }
        self.last_set = id;
        id
    }
}

/// Two ids as one map key.
fn pair_key(a: u32, b: u32) -> [u8; 8] {
    let mut k = [0u8; 8];
    k[..4].copy_from_slice(&a.to_le_bytes());
    k[4..].copy_from_slice(&b.to_le_bytes());
    k
}

/// Strings, each kept once, by id: their bytes one after another in one text, found by a
/// keyed hash. A `String` in a table and another in a list held every name twice, 140 bytes
/// a string in all (an info metric of 100,000 keys, 5.5 MB, peaked at 46 MB).
#[derive(Default)]
struct Strings {
    text: String,
    /// Where each string ends in `text` (it begins where the one before it ends).
    ends: Vec<usize>,
    /// A string's hash under `hasher` → the last id given with that hash.
    by_hash: HashMap<[u8; 8], u32>,
    /// The id given before it with the same hash (`NO_STRING`: none). Two strings share a
    /// 64-bit keyed hash next to never, and are then told apart by their text.
    same_hash: Vec<u32>,
    hasher: Keyed,
    /// The ids last given for a key and for a value, checked before hashing, and the ids
    /// after them: an info section lists an endpoint's keys in the order the first endpoint
    /// listed them, so each key (and often its value) was given the id after the last one's.
    last: [u32; 2],
}

/// No string: the end of a chain of [`Strings::same_hash`].
const NO_STRING: u32 = u32::MAX;

impl Strings {
    /// The id of `s`; `slot` says which of the last ids to try first (0 key, 1 value). None
    /// when a new string's room was refused under a memory budget (the file then fails).
    fn id(&mut self, s: &str, slot: usize) -> Option<u32> {
        let last = self.last.get(slot).copied().unwrap_or(NO_STRING);
        let guessed = [last, last.wrapping_add(1)]
            .into_iter()
            .find(|&id| self.lookup(id) == Some(s));
        let id = match guessed {
            Some(id) => id,
            None => self.found_or_added(s)?,
        };
        if let Some(l) = self.last.get_mut(slot) {
            *l = id;
        }
        Some(id)
    }

    /// The id of `s` found by its hash, or given to it now (None: see [`Strings::id`]).
    fn found_or_added(&mut self, s: &str) -> Option<u32> {
        let hash = self.hasher.hash_one(s).to_le_bytes();
        let mut id = self.by_hash.get(&hash).copied().unwrap_or(NO_STRING);
        while id != NO_STRING {
            if self.lookup(id) == Some(s) {
                return Some(id);
            }
            id = self
                .same_hash
                .get(id as usize)
                .copied()
                .unwrap_or(NO_STRING);
        }
        if !room_in_map(&mut self.by_hash)
            || !room_for_one(&mut self.ends)
            || !room_for_one(&mut self.same_hash)
            || !room_in_text(&mut self.text, s.len())
        {
            return None;
        }
        let id = u32::try_from(self.ends.len()).unwrap_or(NO_STRING);
        self.text.push_str(s);
        self.ends.push(self.text.len());
        let before = self.by_hash.insert(hash, id);
        self.same_hash.push(before.unwrap_or(NO_STRING));
        Some(id)
    }

    /// The string of `id`, if it was given.
    fn lookup(&self, id: u32) -> Option<&str> {
        let i = id as usize;
        let end = *self.ends.get(i)?;
        let start = match i.checked_sub(1) {
            Some(before) => *self.ends.get(before)?,
            None => 0,
        };
        self.text.get(start..end)
    }

    fn get(&self, id: u32) -> &str {
        self.lookup(id).unwrap_or("")
    }
}

/// What takes each bucket of a cell: its `le` and count.
type BucketFn<'a> = dyn FnMut(&str, f64) + 'a;

/// `le=count;le=count;…` in cell order, each bucket handed to `each` (its `le` trimmed);
/// empty parts (a trailing `;`) are ignored. A count above 2^53 − 1 is refused at its
/// position in the cell. Without `each` (a lean read keeps no buckets) the cell is only
/// checked: a count that is a plain decimal of at most 15 integer digits (below 2^53) needs
/// no parse.
fn parse_buckets(
    row: &Row<'_>,
    cell: usize,
    metric: &str,
    mut each: Option<&mut BucketFn<'_>>,
) -> Result<(), ReadError> {
    let s = row.cell(cell);
    if each.is_none() && plain_small_buckets(s.as_bytes()) {
        return Ok(());
    }
    let ascii = s.is_ascii();
    // Character offset of each part in the cell.
    let mut offset = 0usize;
    // Split at the bytes `;` and `=` (ASCII: never inside a character): a `char` pattern
    // search per part was a twentieth of reading a CSV.
    let mut start = 0usize;
    while start <= s.len() {
        let end = s
            .as_bytes()
            .get(start..)
            .and_then(|rest| rest.iter().position(|&b| b == b';'))
            .map_or(s.len(), |k| start + k);
        let raw = s.get(start..end).unwrap_or_default();
        start = end + 1;
        let part_at = offset;
        offset += if ascii {
            raw.len()
        } else {
            raw.chars().count()
        } + 1;
        let part = trim(raw);
        if part.is_empty() {
            continue;
        }
        let split = part.bytes().position(|b| b == b'=');
        let Some((le, count)) = split.and_then(|k| Some((part.get(..k)?, part.get(k + 1..)?)))
        else {
            return Err(row.err(
                cell,
                format!("column `buckets`: `{part}` is not `le=count`"),
            ));
        };
        let count_text = trim(count);
        if each.is_none() && is_small_plain_decimal(count_text.as_bytes()) {
            continue;
        }
        let value = count_text.parse::<f64>().map_err(|_| {
            row.err(
                cell,
                format!("column `buckets`: count `{count}` of bucket `{le}` is not a number"),
            )
        })?;
        if count::too_large(value) {
            // The count's first character: after the part's leading blanks, `le`, `=` and
            // the count's own leading blanks.
            let lead = raw.chars().take_while(|c| c.is_whitespace()).count();
            let ws = count.chars().take_while(|c| c.is_whitespace()).count();
            let at = part_at + lead + le.chars().count() + 1 + ws;
            return Err(count::refuse(
                row.file,
                row.pos(cell, at),
                &format!("count of bucket `{}` of `{metric}`", le.trim()),
                count_text,
            ));
        }
        if let Some(each) = each.as_mut() {
            each(trim(le), value);
        }
    }
    Ok(())
}

/// A buckets cell that only checking would accept, told in one pass over its bytes: visible
/// ASCII only (so no part needs trimming), every non-empty `;`-separated part `le=count` with
/// a count that [`is_small_plain_decimal`] accepts. False sends the cell through the
/// part-by-part check, which also says what is wrong. (Split into parts first, the check
/// took about 2,500 instructions per row of fourteen buckets; in one pass about 1,400.)
fn plain_small_buckets(cell: &[u8]) -> bool {
    let at = |i: usize| cell.get(i).copied();
    let mut i = 0;
    while i <= cell.len() {
        // `le`: visible bytes up to its `=`; a part without one must be empty.
        let start = i;
        while let Some(b) = at(i).filter(|&b| b != b'=' && b != b';') {
            if !b.is_ascii_graphic() {
                return false;
            }
            i += 1;
        }
        if at(i) != Some(b'=') {
            if i != start {
                return false;
            }
            i += 1;
            continue;
        }
        i += 1;
        // The count: a sign, at most 15 digits, a point and digits, at least one digit.
        if matches!(at(i), Some(b'-' | b'+')) {
            i += 1;
        }
        let int_start = i;
        while at(i).is_some_and(|b| b.is_ascii_digit()) {
            i += 1;
        }
        let mut digits = i - int_start;
        if digits > 15 {
            return false;
        }
        if at(i) == Some(b'.') {
            i += 1;
            let frac_start = i;
            while at(i).is_some_and(|b| b.is_ascii_digit()) {
                i += 1;
            }
            digits += i - frac_start;
        }
        if digits == 0 || at(i).is_some_and(|b| b != b';') {
            return false;
        }
        i += 1;
    }
    true
}

/// [`is_plain_decimal`] with at most 15 digits before any `.`: below 10^15, so below 2^53.
fn is_small_plain_decimal(s: &[u8]) -> bool {
    let unsigned = match s.split_first() {
        Some((b'-' | b'+', rest)) => rest,
        _ => s,
    };
    let int_digits = unsigned.iter().take_while(|b| b.is_ascii_digit()).count();
    int_digits <= 15 && is_plain_decimal(s)
}

// ---------------------------------------------------------------------------------------------
// RFC 4180 record reader

struct Record {
    /// 1-based line the record starts on.
    line: usize,
    /// A `#` comment line (outside any quotes, at the start of a record).
    is_comment: bool,
    /// The comment text (comment lines only).
    raw: String,
    cells: Vec<String>,
    /// Where each cell starts.
    at: Vec<CellAt>,
}

/// Splits physical lines into RFC 4180 records. A quoted field may span lines, so a record
/// may take several lines: what has been read of it is kept until its last line arrives.
#[derive(Default)]
struct CsvRecords {
    /// The record whose quoted field continues on the next line.
    open: Option<OpenRecord>,
}

/// A record read up to the end of a line inside a quoted field.
struct OpenRecord {
    start: usize,
    cells: Vec<String>,
    at: Vec<CellAt>,
    field: String,
}

impl CsvRecords {
    /// Inside a quoted field that continues on the next line.
    fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// Take physical line `line_no` (without its `\n`): the record it completes, if any.
    fn line(
        &mut self,
        file: &str,
        line_no: usize,
        bytes: &[u8],
    ) -> Result<Option<Record>, ReadError> {
        let text = line_text(file, line_no, bytes, false)?;
        let (rec, in_quotes) = match self.open.take() {
            Some(open) => (open, true),
            None if text.starts_with('#') => {
                return Ok(Some(Record {
                    line: line_no,
                    is_comment: true,
                    raw: strip_eol(text).to_string(),
                    cells: Vec::new(),
                    at: Vec::new(),
                }))
            }
            None => {
                let at = CellAt {
                    line: line_no,
                    column: 1,
                    quoted: false,
                };
                let rec = OpenRecord {
                    start: line_no,
                    cells: Vec::new(),
                    at: vec![at],
                    field: String::new(),
                };
                (rec, false)
            }
        };
        let mut rec = rec;
        if scan_line(file, line_no, text, &mut rec, in_quotes)? {
            // The quoted field continues on the next line; the line break is part of it.
            rec.field.push('\n');
            self.open = Some(rec);
            return Ok(None);
        }
        let OpenRecord {
            start,
            mut cells,
            at,
            field,
        } = rec;
        cells.push(field);
        Ok(Some(Record {
            line: start,
            is_comment: false,
            raw: String::new(),
            cells,
            at,
        }))
    }

    /// The file has ended: a quoted field still open is an error.
    fn finish(&mut self, file: &str) -> Result<(), ReadError> {
        match self.open.take() {
            None => Ok(()),
            Some(rec) => Err(csv_err(
                file,
                rec.start,
                format!(
                    "unterminated quote: field {} opened on line {} is not closed before the end of the file",
                    rec.cells.len() + 1,
                    rec.start
                ),
            )),
        }
    }
}

/// Read the cells of one physical line into `rec`, starting inside a quoted field when
/// `in_quotes`. True when the line ends inside a quoted field.
fn scan_line(
    file: &str,
    line_no: usize,
    text: &str,
    rec: &mut OpenRecord,
    mut in_quotes: bool,
) -> Result<bool, ReadError> {
    // The current field was quoted and its closing quote has been seen.
    let mut closed = false;
    // Characters read so far on this line (the column of `c`).
    let mut column = 0usize;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        column += 1;
        if in_quotes {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    chars.next();
                    column += 1;
                    rec.field.push('"');
                } else {
                    in_quotes = false;
                    closed = true;
                }
            } else {
                // Line breaks inside quotes are kept as written.
                rec.field.push(c);
            }
            continue;
        }
        match c {
            '\r' if chars.peek().is_none() => {}
            ',' => {
                rec.cells.push(std::mem::take(&mut rec.field));
                closed = false;
                rec.at.push(CellAt {
                    line: line_no,
                    column: column + 1,
                    quoted: false,
                });
            }
            '"' if rec.field.is_empty() && !closed => {
                in_quotes = true;
                if let Some(a) = rec.at.last_mut() {
                    a.quoted = true;
                }
            }
            _ if closed => {
                return Err(ReadError::new(
                    ErrorCode::CsvSyntax,
                    file,
                    Position::line_col(line_no, column),
                    format!(
                        "unexpected `{}` after the closing quote of field {}",
                        c.escape_default(),
                        rec.cells.len() + 1
                    ),
                ));
            }
            _ => rec.field.push(c),
        }
    }
    Ok(in_quotes)
}

fn strip_eol(s: &str) -> &str {
    let s = s.strip_suffix('\n').unwrap_or(s);
    s.strip_suffix('\r').unwrap_or(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each string one id, whatever the order it comes again in, the empty string too; and
    /// two strings under one hash (forced here: a 64-bit keyed hash next to never collides)
    /// are still told apart by their text.
    #[test]
    fn strings_are_kept_once_and_told_apart_under_one_hash() {
        let mut strings = Strings::default();
        let words: Vec<String> = (0..1000).map(|i| format!("key_{i}")).collect();
        let ids: Vec<u32> = words.iter().filter_map(|w| strings.id(w, 0)).collect();
        assert_eq!(ids, (0..1000).collect::<Vec<u32>>());
        for (w, &id) in words.iter().zip(&ids).rev() {
            assert_eq!(strings.id(w, 1), Some(id));
            assert_eq!(strings.get(id), w);
        }
        let empty = strings.id("", 1);
        assert_eq!(empty, Some(1000));
        assert_eq!(strings.id("", 0), empty);
        assert_eq!(strings.get(1000), "");
        assert_eq!(strings.get(5000), "");
        assert_eq!(
            strings.text.len(),
            words.iter().map(String::len).sum::<usize>()
        );

        // "other" put first in the chain of "key_7"'s hash, as a string with that hash would
        // be: "key_7" is found past it, by its text, and no new id is given.
        let h7 = strings.hasher.hash_one("key_7").to_le_bytes();
        let other = strings.id("other", 0).unwrap_or(NO_STRING);
        strings.by_hash.insert(h7, other);
        if let Some(slot) = strings.same_hash.get_mut(other as usize) {
            *slot = 7;
        }
        strings.last = [NO_STRING; 2];
        assert_eq!(strings.id("key_7", 0), Some(7));
        assert_eq!(strings.ends.len(), 1002);
        assert_eq!(strings.get(other), "other");
    }

    /// A lean row keeps what a full row's stats give to the lean form, for every kind, each
    /// stat present or not.
    #[test]
    fn lean_values_are_those_of_the_full_stats() {
        for kind in [StatKind::Gauge, StatKind::Counter, StatKind::Histogram] {
            for present in 0u32..(1 << 4) {
                let mut v = [None; STATS_MAX];
                for (i, slot) in v.iter_mut().enumerate() {
                    let on = i >= 4 || present & (1 << i) != 0;
                    *slot = on.then_some(i as f64 + 0.5);
                }
                let full = CsvSeries::values_of(&kind.stats(&v));
                assert_eq!(kind.lean_values(&v), full);
            }
        }
    }

    fn records(s: &str) -> Result<Vec<(usize, Vec<String>)>, ReadError> {
        let mut r = CsvRecords::default();
        let mut out = Vec::new();
        let mut lines = Lines::new();
        let mut each = |line: &[u8], n: u64| -> Result<(), ReadError> {
            if let Some(rec) = r.line("t.csv", n as usize, line)? {
                out.push((rec.line, rec.cells));
            }
            Ok(())
        };
        lines.push(s.as_bytes(), &mut each)?;
        lines.finish(&mut each)?;
        r.finish("t.csv")?;
        Ok(out)
    }

    #[test]
    fn rfc4180_fields() {
        let got = records("a,\"b,c\",\"d\"\"e\"\r\n\"multi\r\nline\",x\n,\n").unwrap();
        assert_eq!(got.len(), 3);
        assert_eq!(got[0], (1, vec!["a".into(), "b,c".into(), "d\"e".into()]));
        assert_eq!(got[1], (2, vec!["multi\r\nline".into(), "x".into()]));
        assert_eq!(got[2], (4, vec![String::new(), String::new()]));
    }

    #[test]
    fn unterminated_quote() {
        let e = records("a,b\n\"open,\nmore\n").unwrap_err();
        assert_eq!(e.code, ErrorCode::CsvSyntax);
        assert_eq!(e.position.line, Some(2));
        assert!(e.message.contains("unterminated quote"), "{}", e.message);
    }

    #[test]
    fn junk_after_closing_quote() {
        let e = records("\"a\"b,c\n").unwrap_err();
        assert_eq!(e.code, ErrorCode::CsvSyntax);
    }

    /// Every string of `alphabet` up to `max` characters.
    fn all_strings(alphabet: &[char], max: u32) -> Vec<String> {
        let mut out = vec![String::new()];
        let mut last = vec![String::new()];
        for _ in 0..max {
            let next: Vec<String> = last
                .iter()
                .flat_map(|s| alphabet.iter().map(move |c| format!("{s}{c}")))
                .collect();
            out.extend(next.iter().cloned());
            last = next;
        }
        out
    }

    /// A row's label set is its own label cells whatever row came before: the in-place
    /// comparison with the last row's set (`Labels::is_pairs`) and the lookup by text hold it
    /// to what `Labels` makes of the cells, on every pair of rows whose cells are empty, a
    /// prefix of the other or equal, with two names or one name twice (the last non-empty
    /// cell stands).
    #[test]
    fn each_row_gets_the_label_set_of_its_cells() {
        for names in [["engine", "model_name"], ["engine", "engine"]] {
            let cols = MetricCols {
                endpoint: 0,
                metric_type: 0,
                metric: 0,
                unit: None,
                description: None,
                buckets: None,
                stat_kind: StatKind::Gauge,
                stats: Vec::new(),
                labels: vec![(names[0].into(), 1), (names[1].into(), 2)],
                unique_labels: names[0] != names[1],
            };
            rows_get_their_cells_sets(&cols);
        }
    }

    fn rows_get_their_cells_sets(cols: &MetricCols) {
        // A set whose text, read without its lengths, holds another's; a length of two bytes.
        let long = "x".repeat(70);
        let cells = [
            "",
            "a",
            "ab",
            "b",
            "\u{8}\0\0\0\0\0\0\0a",
            "a\0\0\0\0\0\0\0\0model_name\0\0\0\0\0\0\0\0v",
            "\u{1}a\u{5}engine",
            "v",
            &long,
        ];
        let lines: Vec<String> = cells
            .iter()
            .flat_map(|x| cells.iter().map(move |y| format!("e,{x},{y}")))
            .collect();
        let mut sets = LabelSets::default();
        let mut spans = Vec::new();
        for first in &lines {
            for second in &lines {
                for line in [first, second] {
                    assert!(split_line(line, &mut spans));
                    let row = Row {
                        file: "t.csv",
                        line: 1,
                        text: line,
                        spans: &spans,
                        at: &[],
                    };
                    let got = sets.of_row(&row, cols);
                    let want: Labels = cols
                        .labels
                        .iter()
                        .map(|(name, i)| (name.clone(), row.cell(*i).to_string()))
                        .filter(|(_, v)| !v.is_empty())
                        .collect();
                    assert_eq!(*sets.get(got), want, "{line} after {first}");
                }
            }
        }
    }

    #[test]
    fn in_place_split_reads_what_the_record_reader_reads() {
        // Every line of these characters: where the in-place split takes it, the record
        // reader gives the same cells, starting at the same columns.
        // The prefixes put the characters across and after a 16-byte block's end.
        let mut taken = 0;
        let lines = all_strings(&['a', ',', '"', '\r', 'é'], 7);
        let prefixed = [
            "",
            "a,aaaaaaaa",
            "a,aaaaaaaa,aaaaaa",
            "a,aaaaaaaaaaaaaa,aaaaaaaaaaa,aaaa",
        ]
        .iter()
        .flat_map(|p| lines.iter().map(move |l| format!("{p}{l}")));
        for line in prefixed {
            let text = line.strip_suffix('\r').unwrap_or(&line);
            let mut spans = Vec::new();
            if !split_line(text, &mut spans) {
                continue;
            }
            taken += 1;
            let mut r = CsvRecords::default();
            let rec = r.line("t.csv", 2, line.as_bytes());
            let rec = rec.ok().flatten().unwrap_or_else(|| panic!("{line:?}"));
            let cells: Vec<&str> = spans.iter().map(|s| &text[s.start..s.end]).collect();
            assert_eq!(cells, rec.cells, "{line:?}");
            let columns: Vec<usize> = spans
                .iter()
                .map(|s| text[..s.start].chars().count() + 1)
                .collect();
            let want: Vec<usize> = rec
                .at
                .iter()
                .map(|a| a.column + usize::from(a.quoted))
                .collect();
            assert_eq!(columns, want, "{line:?}");
        }
        assert!(taken > 40_000, "{taken}");
    }

    #[test]
    fn plain_decimals_are_numbers() {
        for s in all_strings(&['0', '9', '.', '-', '+', 'e', ' '], 6) {
            if is_plain_decimal(s.as_bytes()) {
                assert!(s.parse::<f64>().is_ok(), "{s:?}");
            }
        }
        assert!(is_plain_decimal(b"1781634703.0000"));
        assert!(!is_plain_decimal(b"."));
        assert!(!is_plain_decimal(b"1e5"));
    }

    /// A stat cell's number is what `f64::from_str` makes of it, bit for bit, or refused
    /// where it refuses: the exact division [`to_f64`] takes for short decimals included.
    #[test]
    fn stat_cells_read_as_from_str() {
        let check = |s: &str| {
            let want = s.parse::<f64>().ok().map(f64::to_bits);
            assert_eq!(to_f64(s.as_bytes()).map(f64::to_bits), want, "{s:?}");
        };
        for s in all_strings(&['0', '7', '9', '.', '-', '+', 'e'], 6) {
            check(&s);
        }
        let long = [
            "999999999999999",
            "0.1",
            "0.3",
            "1781634703.0001",
            "123456789012.345",
        ];
        for s in long {
            check(s);
            check(&format!("-{s}"));
            check(&format!("+{s}"));
        }
        for k in 0..=22 {
            check(&format!("{}.{}", "9".repeat(22 - k), "3".repeat(k)));
        }
        for s in [
            "9999999999999999",
            "0.0000000000000001",
            "inf",
            "-NaN",
            "1e400",
            "0x1",
            "",
        ] {
            check(s);
        }
    }

    #[test]
    fn endpoint_display_to_url() {
        assert_eq!(
            endpoint_url_from_display("localhost:8889"),
            "http://localhost:8889/metrics"
        );
        assert_eq!(
            endpoint_url_from_display("host:1/prefill"),
            "http://host:1/prefill/metrics"
        );
        assert_eq!(
            endpoint_url_from_display("https://h:1/metrics"),
            "https://h:1/metrics"
        );
        // Trimmed, trailing slashes dropped; the path is looked for after the scheme is added.
        assert_eq!(
            endpoint_url_from_display(" http://h:1// "),
            "http://h:1/metrics"
        );
        assert_eq!(endpoint_url_from_display("metrics"), "http://metrics");
        assert_eq!(endpoint_url_from_display("h/metrics/"), "http://h/metrics");
    }

    /// The buckets of `cell`; checked without keeping them too, which must find the same
    /// error (or none).
    fn buckets(cell: &str) -> Result<Vec<Bucket>, ReadError> {
        let kept = read_buckets(cell, true);
        let checked = read_buckets(cell, false);
        assert_eq!(kept.as_ref().err(), checked.as_ref().err(), "{cell}");
        kept
    }

    fn read_buckets(cell: &str, keep: bool) -> Result<Vec<Bucket>, ReadError> {
        let text = format!("m{cell}");
        let spans = [
            Span { start: 0, end: 1 },
            Span {
                start: 1,
                end: text.len(),
            },
        ];
        let at = [
            CellAt {
                line: 7,
                column: 1,
                quoted: false,
            },
            CellAt {
                line: 7,
                column: 3,
                quoted: false,
            },
        ];
        let row = Row {
            file: "t",
            line: 7,
            text: &text,
            spans: &spans,
            at: &at,
        };
        let mut out = Vec::new();
        let mut each = |le: &str, count| {
            out.push(Bucket {
                le: le.to_string(),
                count,
            })
        };
        parse_buckets(&row, 1, "m", keep.then_some(&mut each as &mut BucketFn<'_>))?;
        Ok(out)
    }

    #[test]
    fn buckets_cell() {
        let b = buckets("0.1=0;0.5=3;+Inf=196").unwrap();
        let les: Vec<_> = b.iter().map(|b| b.le.as_str()).collect();
        assert_eq!(les, ["0.1", "0.5", "+Inf"]);
        assert_eq!(b[2].count, 196.0);
        assert!(buckets("0.1=x").is_err());
        assert!(buckets("0.1").is_err());
        assert!(buckets("0.1=9007199254740991;+Inf=9007199254740991").is_ok());
        let e = buckets("0.1=0; +Inf= 9007199254740992").unwrap_err();
        assert_eq!(e.code, ErrorCode::CountTooLarge);
        assert_eq!(e.position, Position::line_col(7, 3 + 13));
        assert!(e.message.contains("9007199254740992"), "{}", e.message);
        // Sixteen integer digits are parsed to be told: these are below 2^53, then above.
        assert!(buckets("1=0000000000000001.0;2=1000000000000000").is_ok());
        assert!(buckets("1=-9007199254740993").is_ok());
        assert!(buckets("1=9007199254740993.0").is_err());
        assert!(buckets("1=1e16").is_err());
        assert!(buckets("1=.").is_err());
    }

    /// The part-by-part form of [`plain_small_buckets`] (its first version): the one pass
    /// must decide as it does.
    fn plain_small_buckets_by_parts(cell: &[u8]) -> bool {
        cell.split(|&b| b == b';').all(|part| {
            let Some(eq) = part.iter().position(|&b| b == b'=') else {
                return part.is_empty();
            };
            let (le, count) = part.split_at(eq);
            le.iter().all(u8::is_ascii_graphic)
                && is_small_plain_decimal(count.get(1..).unwrap_or_default())
        })
    }

    #[test]
    fn one_pass_buckets_check_decides_as_the_part_by_part_one() {
        let alphabet = ['1', '0', '.', '=', ';', '-', '+', ' ', 'I', 'é'];
        for cell in all_strings(&alphabet, 6) {
            assert_eq!(
                plain_small_buckets(cell.as_bytes()),
                plain_small_buckets_by_parts(cell.as_bytes()),
                "{cell:?}"
            );
        }
        for digits in 13..=17 {
            for cell in [
                format!("+Inf={}", "9".repeat(digits)),
                format!("1={}.5;2=-{}", "1".repeat(digits), "2".repeat(digits)),
                format!("0.5=3;{}=.{}", "7".repeat(digits), "0".repeat(digits)),
            ] {
                assert_eq!(
                    plain_small_buckets(cell.as_bytes()),
                    plain_small_buckets_by_parts(cell.as_bytes()),
                    "{cell:?}"
                );
            }
        }
    }

    /// The one-pass check of a lean read's buckets cell accepts only what the part-by-part
    /// reading accepts, on every short cell of these characters, and takes the usual cells.
    #[test]
    fn one_pass_buckets_check_accepts_only_what_the_reading_does() {
        let alphabet = ['1', '0', '.', '=', ';', '-', '+', ' ', 'I', 'é'];
        let mut taken = 0;
        for cell in all_strings(&alphabet, 5) {
            if plain_small_buckets(cell.as_bytes()) {
                taken += 1;
                assert!(read_buckets(&cell, true).is_ok(), "{cell:?}");
            }
        }
        assert!(taken > 1000, "{taken}");
        for cell in [
            "0.1=0;0.5=3;+Inf=196",
            "1=000000000000001.0;2=100000000000000;",
            "=5;;1=.5;2=5.;3=-0",
        ] {
            assert!(plain_small_buckets(cell.as_bytes()), "{cell}");
        }
        for cell in [
            "1=0000000000000001",
            "1= 2",
            " 1=2",
            "1=2=3",
            "1=.",
            "é=1",
            "1",
        ] {
            assert!(!plain_small_buckets(cell.as_bytes()), "{cell}");
        }
    }
}
