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
//! Errors carry the line and, for a cell, the character column where the cell starts (for a
//! bucket count, where the count starts).

use crate::error::{ErrorCode, Position, ReadError};
use crate::model::{
    Bucket, CounterStats, ExportSummary, Family, GaugeStats, HistogramStats, Labels, MetricType,
    Series, ServerMetricsExport, ServerMetricsFormat, Stats,
};
use crate::read::count;
use crate::read::push::{drive, Lines, PushReader};
use crate::read::FamilyFilter;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
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
/// docs for the mapping.
pub struct ServerCsvReader {
    file: String,
    filter: FamilyFilter,
    lines: Lines,
    records: CsvRecords,
    meta: Meta,
    saw_aiperf_comment: bool,
    saw_header: bool,
    saw_content: bool,
    section: Option<Section>,
    families: BTreeMap<String, Family>,
    skipped: BTreeSet<String>,
    /// Label sets of metric rows, one shared copy each (see [`LabelSets`]).
    label_sets: LabelSets,
    /// (endpoint_url, metric) → index of the current info series in its family.
    info_series: HashMap<(String, String), usize>,
}

impl ServerCsvReader {
    pub fn new(file: &str, filter: &FamilyFilter) -> Self {
        ServerCsvReader {
            file: file.to_string(),
            filter: filter.clone(),
            lines: Lines::new(),
            records: CsvRecords::default(),
            meta: Meta::default(),
            saw_aiperf_comment: false,
            saw_header: false,
            saw_content: false,
            section: None,
            families: BTreeMap::new(),
            skipped: BTreeSet::new(),
            label_sets: LabelSets::default(),
            info_series: HashMap::new(),
        }
    }

    /// Take one physical line.
    fn take_line(&mut self, bytes: &[u8], line_no: u64) -> Result<(), ReadError> {
        let line_no = usize::try_from(line_no).unwrap_or(usize::MAX);
        match self.records.line(&self.file, line_no, bytes)? {
            Some(rec) => self.take_record(&rec),
            None => Ok(()),
        }
    }

    /// Take one record: a comment, a section header, an empty row or a data row.
    fn take_record(&mut self, rec: &Record) -> Result<(), ReadError> {
        let file = self.file.as_str();
        let line = rec.line;
        if rec.is_comment {
            self.saw_content = true;
            if self.meta.take_comment(&rec.raw) {
                self.saw_aiperf_comment = true;
            }
            return Ok(());
        }
        let row = Row {
            file,
            line,
            cells: &rec.cells,
            at: &rec.at,
        };
        let cells = &rec.cells;
        if cells.iter().all(|c| c.is_empty()) {
            // An empty row ends the section.
            self.section = None;
            return Ok(());
        }
        self.saw_content = true;
        if cells.first().map(|c| c.trim()) == Some("Endpoint") {
            self.section = Some(Section::from_header(&row)?);
            self.info_series.clear();
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
                        preview(cells)
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
        if cells.len() != sec.width {
            return Err(csv_err(
                file,
                line,
                format!(
                    "row has {} cells but its section header (line {}) has {} columns",
                    cells.len(),
                    sec.header_line,
                    sec.width
                ),
            ));
        }
        match &sec.kind {
            SectionKind::Metrics(m) => {
                let into = RowsInto {
                    families: &mut self.families,
                    skipped: &mut self.skipped,
                    label_sets: &mut self.label_sets,
                };
                read_metric_row(&row, m, &self.filter, into)
            }
            SectionKind::Info(i) => read_info_row(
                &row,
                i,
                &self.filter,
                &mut self.families,
                &mut self.skipped,
                &mut self.info_series,
            ),
        }
    }
}

impl PushReader for ServerCsvReader {
    type Output = ServerMetricsExport;

    fn push(&mut self, chunk: &[u8]) -> Result<(), ReadError> {
        let mut lines = std::mem::take(&mut self.lines);
        let r = lines.push(chunk, |line, n| self.take_line(line, n));
        self.lines = lines;
        r
    }

    fn finish(mut self) -> Result<ServerMetricsExport, ReadError> {
        let mut lines = std::mem::take(&mut self.lines);
        lines.finish(|line, n| self.take_line(line, n))?;
        self.records.finish(&self.file)?;
        let file = self.file.as_str();
        if !self.saw_content {
            return Err(ReadError::whole(
                ErrorCode::EmptyInput,
                file,
                "the CSV file is empty",
            ));
        }
        if !self.saw_header && !self.saw_aiperf_comment {
            return Err(csv_err(
                file,
                1,
                format!("not an AIPerf server-metrics CSV: no AIPerf comment header and no section header ({SECTION_HINT})"),
            ));
        }
        Ok(ServerMetricsExport {
            format: ServerMetricsFormat::Csv,
            schema_version: self.meta.schema_version,
            aiperf_version: self.meta.aiperf_version,
            benchmark_id: self.meta.benchmark_id,
            summary: ExportSummary::default(),
            metrics_phase: None,
            metrics: self.families.into_values().collect(),
            warmup_metrics: Vec::new(),
            skipped_families: u32::try_from(self.skipped.len()).unwrap_or(u32::MAX),
            merged_duplicates: Vec::new(),
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

/// Where a cell starts: its line and character column, and whether it is quoted (its content
/// then starts one column later).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct CellAt {
    line: usize,
    column: usize,
    quoted: bool,
}

/// One data or header row, for reading cells and pointing errors at them.
struct Row<'a> {
    file: &'a str,
    line: usize,
    cells: &'a [String],
    at: &'a [CellAt],
}

impl Row<'_> {
    /// A cell by index, "" when out of range (rows are width-checked before this is used).
    fn cell(&self, i: usize) -> &str {
        self.cells.get(i).map(String::as_str).unwrap_or("")
    }

    fn opt_cell(&self, i: Option<usize>) -> Option<&str> {
        i.map(|i| self.cell(i)).filter(|s| !s.is_empty())
    }

    /// The position of character `offset` of cell `i`'s content.
    fn pos(&self, i: usize, offset: usize) -> Position {
        match self.at.get(i) {
            Some(a) => Position::line_col(a.line, a.column + usize::from(a.quoted) + offset),
            None => Position::line(self.line),
        }
    }

    /// A `CSV_SYNTAX` error at cell `i`.
    fn err(&self, i: usize, message: impl Into<String>) -> ReadError {
        ReadError::new(ErrorCode::CsvSyntax, self.file, self.pos(i, 0), message)
    }
}

/// The first cells of a row, for messages.
fn preview(cells: &[String]) -> String {
    let mut s = String::new();
    for (i, c) in cells.iter().take(4).enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.extend(c.chars().take(40));
    }
    if cells.len() > 4 {
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
}

struct MetricCols {
    endpoint: usize,
    metric_type: usize,
    metric: usize,
    unit: Option<usize>,
    description: Option<usize>,
    buckets: Option<usize>,
    stat_kind: StatKind,
    /// Stat name → column index (only the section kind's stats).
    stats: HashMap<&'static str, usize>,
    /// (label name, column index) in header order.
    labels: Vec<(String, usize)>,
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
        let (file, line, cells) = (row.file, row.line, row.cells);
        let names: Vec<String> = cells.iter().map(|c| c.trim().to_string()).collect();
        let mut index: HashMap<&str, usize> = HashMap::new();
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
            let mut stats = HashMap::new();
            for s in stat_kind.names() {
                if let Some(&i) = index.get(s) {
                    stats.insert(*s, i);
                }
            }
            let labels = names
                .iter()
                .enumerate()
                .filter(|(_, n)| {
                    !FIXED_COLUMNS.contains(&n.as_str()) && !stat_kind.names().contains(&n.as_str())
                })
                .map(|(i, n)| (n.clone(), i))
                .collect();
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
            })
        };
        Ok(Section {
            header_line: line,
            width: cells.len(),
            kind,
        })
    }
}

/// Rebuild the full scrape URL from AIPerf's display form.
pub(crate) fn endpoint_url_from_display(display: &str) -> String {
    let d = display.trim().trim_end_matches('/');
    let with_scheme = if d.contains("://") {
        d.to_string()
    } else {
        format!("http://{d}")
    };
    if with_scheme.ends_with("/metrics") {
        with_scheme
    } else {
        format!("{with_scheme}/metrics")
    }
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
    let v = s
        .trim()
        .parse::<f64>()
        .map_err(|_| row.err(i, format!("column `{column}`: `{s}` is not a number")))?;
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

/// One label set per distinct combination of a section's label cells: a CSV of many endpoints
/// repeats the same few sets on every endpoint, and each row would otherwise hold its own map.
#[derive(Default)]
struct LabelSets {
    /// `len:name len:value …` of the row's non-empty label cells → the set.
    by_text: HashMap<String, Arc<Labels>>,
    /// The text of the row being read (reused).
    text: String,
}

impl LabelSets {
    fn of_row(&mut self, row: &Row<'_>, cols: &MetricCols) -> Arc<Labels> {
        self.text.clear();
        for (label, i) in &cols.labels {
            let v = row.cell(*i);
            if !v.is_empty() {
                // Length-prefixed: no cell content can make two different sets one text.
                for part in [label.as_str(), v] {
                    let _ = write!(self.text, "{}:{part}", part.len());
                }
            }
        }
        if let Some(l) = self.by_text.get(self.text.as_str()) {
            return Arc::clone(l);
        }
        let mut labels = Labels::new();
        for (label, i) in &cols.labels {
            let v = row.cell(*i);
            if !v.is_empty() {
                labels.insert(label.clone(), v.to_string());
            }
        }
        let labels = Arc::new(labels);
        self.by_text.insert(self.text.clone(), Arc::clone(&labels));
        labels
    }
}

/// Where a metric row goes.
struct RowsInto<'a> {
    families: &'a mut BTreeMap<String, Family>,
    skipped: &'a mut BTreeSet<String>,
    label_sets: &'a mut LabelSets,
}

fn read_metric_row(
    row: &Row<'_>,
    cols: &MetricCols,
    filter: &FamilyFilter,
    into: RowsInto<'_>,
) -> Result<(), ReadError> {
    let RowsInto {
        families,
        skipped,
        label_sets,
    } = into;
    let name = row.cell(cols.metric).trim();
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
    if !filter.wants(name) {
        skipped.insert(name.to_string());
        return Ok(());
    }
    let endpoint = row.cell(cols.endpoint).trim();
    if endpoint.is_empty() {
        return Err(row.err(cols.endpoint, "column `Endpoint` is empty"));
    }

    let stat = |s: &'static str| -> Result<Option<f64>, ReadError> {
        let is_count = matches!(
            (cols.stat_kind, s),
            (StatKind::Counter, "total") | (StatKind::Histogram, "count")
        );
        match cols.stats.get(s).copied() {
            Some(i) if !row.cell(i).is_empty() => {
                parse_number(row, i, s, is_count.then_some(name)).map(Some)
            }
            _ => Ok(None),
        }
    };
    let stats = match cols.stat_kind {
        StatKind::Gauge => Stats::Gauge(GaugeStats {
            avg: stat("avg")?,
            min: stat("min")?,
            max: stat("max")?,
            std: stat("std")?,
            p1: stat("p1")?,
            p5: stat("p5")?,
            p10: stat("p10")?,
            p25: stat("p25")?,
            p50: stat("p50")?,
            p75: stat("p75")?,
            p90: stat("p90")?,
            p95: stat("p95")?,
            p99: stat("p99")?,
        }),
        StatKind::Counter => Stats::Counter(CounterStats {
            total: stat("total")?,
            rate: stat("rate")?,
            rate_avg: stat("rate_avg")?,
            rate_min: stat("rate_min")?,
            rate_max: stat("rate_max")?,
            rate_std: stat("rate_std")?,
        }),
        StatKind::Histogram => Stats::Histogram(HistogramStats {
            count: stat("count")?,
            count_rate: stat("count_rate")?,
            sum: stat("sum")?,
            sum_rate: stat("sum_rate")?,
            avg: stat("avg")?,
            p1_estimate: stat("p1_estimate")?,
            p5_estimate: stat("p5_estimate")?,
            p10_estimate: stat("p10_estimate")?,
            p25_estimate: stat("p25_estimate")?,
            p50_estimate: stat("p50_estimate")?,
            p75_estimate: stat("p75_estimate")?,
            p90_estimate: stat("p90_estimate")?,
            p95_estimate: stat("p95_estimate")?,
            p99_estimate: stat("p99_estimate")?,
        }),
    };
    let buckets = match (metric_type, cols.buckets) {
        (MetricType::Histogram, Some(i)) if !row.cell(i).is_empty() => {
            Some(parse_buckets(row, i, name)?)
        }
        _ => None,
    };
    let series = Series {
        endpoint_url: endpoint_url_from_display(endpoint),
        labels: label_sets.of_row(row, cols),
        stats,
        timeslices: Vec::new(),
        counter_slices: Default::default(),
        buckets,
    };
    let family = families.entry(name.to_string()).or_insert_with(|| Family {
        name: name.to_string(),
        metric_type,
        description: row.opt_cell(cols.description).unwrap_or("").to_string(),
        unit: row.opt_cell(cols.unit).map(str::to_string),
        series: Vec::new(),
    });
    if family.metric_type != metric_type {
        return Err(row.err(
            cols.metric_type,
            format!(
                "metric `{name}` is {} here but {} on an earlier row",
                metric_type.as_str(),
                family.metric_type.as_str()
            ),
        ));
    }
    family.series.push(series);
    Ok(())
}

/// `le=count;le=count;…` in cell order; empty parts (a trailing `;`) are ignored. A count
/// above 2^53 − 1 is refused at its position in the cell.
fn parse_buckets(row: &Row<'_>, cell: usize, metric: &str) -> Result<Vec<Bucket>, ReadError> {
    let s = row.cell(cell);
    let mut out = Vec::new();
    // Character offset of each part in the cell.
    let mut offset = 0usize;
    for raw in s.split(';') {
        let part_at = offset;
        offset += raw.chars().count() + 1;
        let part = raw.trim();
        if part.is_empty() {
            continue;
        }
        let Some((le, count)) = part.split_once('=') else {
            return Err(row.err(
                cell,
                format!("column `buckets`: `{part}` is not `le=count`"),
            ));
        };
        let count_text = count.trim();
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
        out.push(Bucket {
            le: le.trim().to_string(),
            count: value,
        });
    }
    Ok(out)
}

fn read_info_row(
    row: &Row<'_>,
    cols: &InfoCols,
    filter: &FamilyFilter,
    families: &mut BTreeMap<String, Family>,
    skipped: &mut BTreeSet<String>,
    info_series: &mut HashMap<(String, String), usize>,
) -> Result<(), ReadError> {
    let name = row.cell(cols.metric).trim();
    if name.is_empty() {
        return Err(row.err(cols.metric, "column `Metric` is empty"));
    }
    if !filter.wants(name) {
        skipped.insert(name.to_string());
        return Ok(());
    }
    let endpoint = row.cell(cols.endpoint).trim();
    if endpoint.is_empty() {
        return Err(row.err(cols.endpoint, "column `Endpoint` is empty"));
    }
    let key = row.cell(cols.key).trim();
    if key.is_empty() {
        return Err(row.err(cols.key, "column `Key` is empty"));
    }
    let value = row.cell(cols.value);
    let url = endpoint_url_from_display(endpoint);
    let family = families.entry(name.to_string()).or_insert_with(|| Family {
        name: name.to_string(),
        metric_type: MetricType::Gauge,
        description: row.opt_cell(cols.description).unwrap_or("").to_string(),
        unit: None,
        series: Vec::new(),
    });
    if family.metric_type != MetricType::Gauge {
        return Err(row.err(
            cols.metric,
            format!(
                "info metric `{name}` is {} on an earlier row",
                family.metric_type.as_str()
            ),
        ));
    }
    let group = (url.clone(), name.to_string());
    let current = info_series.get(&group).copied().filter(|&i| {
        family
            .series
            .get(i)
            .is_some_and(|s| !s.labels.contains_key(key))
    });
    let idx = match current {
        Some(i) => i,
        None => {
            family.series.push(Series {
                endpoint_url: url,
                labels: Arc::default(),
                stats: Stats::Gauge(GaugeStats {
                    avg: Some(1.0),
                    min: Some(1.0),
                    max: Some(1.0),
                    ..GaugeStats::default()
                }),
                timeslices: Vec::new(),
                counter_slices: Default::default(),
                buckets: None,
            });
            let i = family.series.len() - 1;
            info_series.insert(group, i);
            i
        }
    };
    if let Some(s) = family.series.get_mut(idx) {
        Arc::make_mut(&mut s.labels).insert(key.to_string(), value.to_string());
    }
    Ok(())
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
    /// Take physical line `line_no` (without its `\n`): the record it completes, if any.
    fn line(
        &mut self,
        file: &str,
        line_no: usize,
        bytes: &[u8],
    ) -> Result<Option<Record>, ReadError> {
        let text = std::str::from_utf8(bytes).map_err(|e| {
            ReadError::new(
                ErrorCode::NotUtf8,
                file,
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
    }

    fn buckets(cell: &str) -> Result<Vec<Bucket>, ReadError> {
        let cells = ["m".to_string(), cell.to_string()];
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
            cells: &cells,
            at: &at,
        };
        parse_buckets(&row, 1, "m")
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
    }
}
