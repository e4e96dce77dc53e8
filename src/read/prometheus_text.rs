//! Prometheus text exposition (a capture of `/metrics`) → one [`Scrape`].
//!
//! Families are grouped the way AIPerf's parser (Python `prometheus_client`) groups them:
//!
//! - `# HELP` / `# TYPE` open a family; a sample belongs to the open family when its name is
//!   one that family's type allows (counter `x`, `x_total`, `x_created`; histogram
//!   `x_bucket`, `x_sum`, `x_count`, `x_created`; summary `x`, `x_sum`, `x_count`,
//!   `x_created`; gauge / untyped `x`). Any other sample closes the open family and belongs to
//!   an untyped family named exactly as the sample (type `Unknown`, `_total` kept).
//! - A counter's family name has `_total` stripped (`# TYPE x_total counter` → `x`); a
//!   counter TYPE line without `_total` keeps its name.
//! - Dropped: `_created` samples, families whose name ends with `_created` or contains
//!   `_uptime`, and summary families (AIPerf drops them; nothing is counted).
//! - Histograms: `x_bucket{le}`, `x_sum`, `x_count` are grouped by their labels minus `le`
//!   into [`SampleValue::Histogram`]; bucket `le` keys are kept exactly as printed, in file
//!   order. `le` is an ordinary label in every other family type.
//! - Families seen twice are merged; a label set seen twice in one family: last value wins.
//!   NaN and infinities are kept as read.
//!
//! The scrape's `endpoint_url` is `capture.endpoint_url`, or `capture:<file base name>` for a
//! capture of unknown origin. Its `timestamp_ns` is `capture.timestamp_ns`, else (when every
//! kept sample carries a millisecond timestamp) the largest sample timestamp × 10^6, else
//! `None`. Families the filter does not want are skipped before their samples are built
//! (their lines are still checked for syntax, so errors do not depend on the filter). A lean
//! read ([`FamilyFilter::lean`]) keeps of a histogram its sum and count, not its buckets.
//!
//! Counts above 2^53 − 1 are refused (`COUNT_TOO_LARGE`, at the value; see
//! [`crate::read::count`]): counter values, histogram bucket and `_count` values, and the
//! values of untyped families that are counters by their name ([`counter_by_name`]); the
//! large values of other untyped families are kept in [`Scrape::untyped_large`] for the run
//! to decide. Like syntax, this is checked whatever the family filter.
//!
//! Errors are `PROM_SYNTAX` with a 1-based line and a 1-based column counted in characters;
//! a line that is not UTF-8 is `NOT_UTF8`.

use crate::admission::{admit, room_for_one, room_in_map};
use crate::error::{ErrorCode, Position, ReadError};
use crate::hash::{DigestMap, Map as HashMap};
use crate::model::{
    Bucket, FamilyGroup, FamilyMeta, Histogram, Labels, MetricType, SampleValue, Scrape,
    ScrapeSample, SeriesMeta, SeriesTable, UntypedLarge,
};
use crate::read::count;
use crate::read::names::counter_by_name;
use crate::read::push::{drive, line_text, Lines, PushReader};
use crate::read::{CaptureMeta, FamilyFilter};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Parse a Prometheus sample value (or a bucket `le` key): decimal and exponent notation,
/// `NaN`, `+Inf`, `-Inf`, `Inf` (case-insensitive, as Go's `ParseFloat` accepts them).
pub fn parse_prom_float(s: &str) -> Option<f64> {
    let t = s.trim();
    if t.is_empty() {
        return None;
    }
    let (sign, body) = match t.as_bytes().first() {
        Some(b'+') => (1.0, t.get(1..)?),
        Some(b'-') => (-1.0, t.get(1..)?),
        _ => (1.0, t),
    };
    let lower = body.to_ascii_lowercase();
    match lower.as_str() {
        "inf" | "infinity" => return Some(sign * f64::INFINITY),
        "nan" => return Some(f64::NAN),
        _ => {}
    }
    // Digits, '.', exponent, with an optional leading sign (already split off).
    if !body
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-' | b'_'))
    {
        return None;
    }
    if !body.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    // Go accepts `_` between digits only with a base prefix; Python accepts it between
    // digits. Accept it between two digits and nowhere else.
    let cleaned: String = if body.contains('_') {
        let bytes = body.as_bytes();
        let mut out = String::with_capacity(body.len());
        for (i, &b) in bytes.iter().enumerate() {
            if b == b'_' {
                let prev = i.checked_sub(1).and_then(|j| bytes.get(j));
                let next = bytes.get(i + 1);
                if !(prev.is_some_and(u8::is_ascii_digit) && next.is_some_and(u8::is_ascii_digit)) {
                    return None;
                }
            } else {
                out.push(char::from(b));
            }
        }
        out
    } else {
        body.to_string()
    };
    cleaned.parse::<f64>().ok().map(|v| sign * v)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DeclType {
    Counter,
    Gauge,
    Histogram,
    Summary,
    Untyped,
}

/// The family opened by the last `# HELP` / `# TYPE` line.
struct Open {
    /// Name as written on the HELP/TYPE line.
    raw: String,
    typ: DeclType,
    help: Option<String>,
}

impl Open {
    /// The family's name (borrowed: it is asked for on every sample line).
    fn final_name(&self) -> &str {
        if self.typ == DeclType::Counter {
            if let Some(stripped) = self.raw.strip_suffix("_total") {
                return stripped;
            }
        }
        &self.raw
    }

    /// What a sample named `name` is within this family, or `None` when it is not part of it.
    fn role(&self, name: &str) -> Option<SampleRole> {
        let raw = self.raw.as_str();
        let rest = name.strip_prefix(raw)?;
        match (self.typ, rest) {
            (_, "_created") if self.typ != DeclType::Gauge && self.typ != DeclType::Untyped => {
                Some(SampleRole::Created)
            }
            (DeclType::Counter, "" | "_total") => Some(SampleRole::Value),
            (DeclType::Gauge | DeclType::Untyped, "") => Some(SampleRole::Value),
            (DeclType::Histogram, "_bucket") => Some(SampleRole::Bucket),
            (DeclType::Histogram, "_sum") => Some(SampleRole::Sum),
            (DeclType::Histogram, "_count") => Some(SampleRole::Count),
            (DeclType::Summary, "" | "_sum" | "_count") => Some(SampleRole::Value),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SampleRole {
    Value,
    Bucket,
    Sum,
    Count,
    Created,
}

struct FamilyAcc {
    metric_type: MetricType,
    help: Option<String>,
    /// Values by label set (last wins), in first-seen order.
    values: Vec<(Arc<Labels>, AccValue)>,
    /// Each label set's place in `values`: found by hash (SipHash: captures come from uploads),
    /// not by comparing whole label maps a dozen times per line.
    at: DigestMap<Arc<Labels>, u32>,
}

impl FamilyAcc {
    fn new(metric_type: MetricType, help: Option<String>) -> Self {
        FamilyAcc {
            metric_type,
            help,
            values: Vec::new(),
            at: DigestMap::default(),
        }
    }

    /// The value of `labels`, made by `init` on first sight; none when a new label set's
    /// room was refused under a memory budget ([`crate::admission`]: the file then fails).
    fn slot(&mut self, labels: Labels, init: fn() -> AccValue) -> Option<&mut AccValue> {
        let i = match self.at.get(&labels) {
            Some(i) => *i as usize,
            None => {
                if !room_for_one(&mut self.values) || !room_in_map(&mut self.at) {
                    return None;
                }
                let i = self.values.len();
                let labels = Arc::new(labels);
                self.values.push((Arc::clone(&labels), init()));
                self.at.insert(labels, u32::try_from(i).unwrap_or(u32::MAX));
                i
            }
        };
        // Every place `at` holds was pushed to `values` (fewer than 2^32 sets fit in memory).
        self.values.get_mut(i).map(|v| &mut v.1)
    }
}

/// A sample's value while the capture is read (a histogram's buckets arrive line by line).
/// 16 bytes: a histogram's parts are boxed, since most samples are scalars (a capture of
/// 200,000 scalar series held 88 unused bytes each, 17.6 MB, while it was read).
enum AccValue {
    Scalar { value: f64 },
    Histogram(Box<HistogramAcc>),
}

/// A histogram's parts while the capture is read.
#[derive(Default)]
struct HistogramAcc {
    buckets: Vec<Bucket>,
    /// Each bucket's position by `le`, once there are many (see [`set_bucket`]).
    by_le: Option<HashMap<Box<str>, u32>>,
    sum: Option<f64>,
    count: Option<f64>,
}

/// Buckets a histogram has before they are found by `le` through an index: below it a scan
/// is cheaper; above it a scan per bucket line was quadratic in the buckets (50,000 buckets,
/// 1.9 MB: 3.0 s; 200,000: 44 s).
const INDEXED_BUCKETS: usize = 32;

/// A bucket line's count: the bucket of that `le` takes it (the later line wins), or a new
/// bucket is added after the others.
fn set_bucket(
    buckets: &mut Vec<Bucket>,
    by_le: &mut Option<HashMap<Box<str>, u32>>,
    le: &str,
    count: f64,
) {
    let at = match by_le {
        Some(index) => index.get(le).map(|i| *i as usize),
        None => buckets.iter().position(|b| b.le == le),
    };
    if let Some(b) = at.and_then(|i| buckets.get_mut(i)) {
        b.count = count;
        return;
    }
    if let Some(index) = by_le {
        index.insert(le.into(), u32::try_from(buckets.len()).unwrap_or(u32::MAX));
    }
    buckets.push(Bucket {
        le: le.to_string(),
        count,
    });
    if by_le.is_none() && buckets.len() >= INDEXED_BUCKETS {
        let index = buckets.iter().enumerate();
        let index =
            index.map(|(i, b)| (b.le.as_str().into(), u32::try_from(i).unwrap_or(u32::MAX)));
        *by_le = Some(index.collect());
    }
}

impl AccValue {
    fn into_value(self) -> SampleValue {
        match self {
            AccValue::Scalar { value } => SampleValue::Scalar { value },
            AccValue::Histogram(h) => {
                let HistogramAcc {
                    buckets,
                    sum,
                    count,
                    ..
                } = *h;
                let counts = buckets.iter().map(|b| b.count).collect();
                let les = buckets.into_iter().map(|b| b.le).collect();
                SampleValue::Histogram(Box::new(Histogram {
                    les,
                    counts,
                    sum,
                    count,
                }))
            }
        }
    }
}

fn empty_histogram() -> AccValue {
    AccValue::Histogram(Box::default())
}

fn zero() -> AccValue {
    AccValue::Scalar { value: 0.0 }
}

/// Where the parser is inside the file, for errors.
struct Ctx<'a> {
    file: &'a str,
    line_no: usize,
}

impl Ctx<'_> {
    /// Line and character column of byte `byte` of `line`.
    fn at(&self, line: &str, byte: usize) -> Position {
        let col = line.get(..byte).map_or(1, |s| s.chars().count() + 1);
        Position::line_col(self.line_no, col)
    }

    fn err_at(&self, line: &str, byte: usize, msg: impl Into<String>) -> ReadError {
        ReadError::new(ErrorCode::PromSyntax, self.file, self.at(line, byte), msg)
    }
}

fn is_name_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b == b':'
}

fn is_name_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b':'
}

fn skip_ws(bytes: &[u8], mut i: usize) -> usize {
    while matches!(bytes.get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    i
}

/// A parsed sample line. Labels are only built when `build` was asked for.
struct RawSample<'a> {
    /// (name, value), borrowed from the line unless the value has escapes.
    labels: Vec<(&'a str, Cow<'a, str>)>,
    value: f64,
    /// Byte index of the value in the line.
    value_at: usize,
    timestamp_ms: Option<i64>,
}

/// Parse `name{labels} value [timestamp]`. When `build` is false, label strings are checked
/// but not collected.
fn parse_sample<'a>(ctx: &Ctx<'_>, line: &'a str, build: bool) -> Result<RawSample<'a>, ReadError> {
    let bytes = line.as_bytes();
    let mut i = skip_ws(bytes, 0);
    if !bytes.get(i).copied().is_some_and(is_name_start) {
        return Err(ctx.err_at(line, i, "expected a metric name"));
    }
    while bytes.get(i).copied().is_some_and(is_name_char) {
        i += 1;
    }
    let name_end = i;
    i = skip_ws(bytes, i);
    let mut labels = Vec::new();
    if bytes.get(i) == Some(&b'{') {
        i = parse_labels(ctx, line, i + 1, build, &mut labels)?;
        i = skip_ws(bytes, i);
    } else if i == name_end && i < bytes.len() {
        // Name directly followed by something that is neither `{` nor whitespace.
        return Err(ctx.err_at(line, i, "unexpected character after the metric name"));
    }
    // Value.
    let v_start = i;
    while i < bytes.len() && !matches!(bytes.get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    if v_start == i {
        return Err(ctx.err_at(line, v_start, "missing sample value"));
    }
    let v_text = line
        .get(v_start..i)
        .ok_or_else(|| ctx.err_at(line, v_start, "bad sample value"))?;
    let value = parse_prom_float(v_text)
        .ok_or_else(|| ctx.err_at(line, v_start, format!("bad sample value `{v_text}`")))?;
    i = skip_ws(bytes, i);
    let mut timestamp_ms = None;
    if i < bytes.len() {
        let t_start = i;
        while i < bytes.len() && !matches!(bytes.get(i), Some(b' ' | b'\t')) {
            i += 1;
        }
        let t_text = line
            .get(t_start..i)
            .ok_or_else(|| ctx.err_at(line, t_start, "bad timestamp"))?;
        let ts = t_text.parse::<i64>().map_err(|_| {
            ctx.err_at(
                line,
                t_start,
                format!("bad timestamp `{t_text}` (integer milliseconds expected)"),
            )
        })?;
        timestamp_ms = Some(ts);
        i = skip_ws(bytes, i);
        if i < bytes.len() {
            return Err(ctx.err_at(line, i, "unexpected text after the timestamp"));
        }
    }
    Ok(RawSample {
        labels,
        value,
        value_at: v_start,
        timestamp_ms,
    })
}

/// Parse labels after `{`; returns the index after `}`.
fn parse_labels<'a>(
    ctx: &Ctx<'_>,
    line: &'a str,
    mut i: usize,
    build: bool,
    out: &mut Vec<(&'a str, Cow<'a, str>)>,
) -> Result<usize, ReadError> {
    let bytes = line.as_bytes();
    loop {
        i = skip_ws(bytes, i);
        match bytes.get(i) {
            Some(b'}') => return Ok(i + 1),
            None => return Err(ctx.err_at(line, i, "unterminated label set (missing `}`)")),
            _ => {}
        }
        // Label name.
        let n_start = i;
        if !bytes
            .get(i)
            .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
        {
            return Err(ctx.err_at(line, i, "expected a label name"));
        }
        while bytes
            .get(i)
            .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
        {
            i += 1;
        }
        let lname = line
            .get(n_start..i)
            .ok_or_else(|| ctx.err_at(line, n_start, "bad label name"))?;
        i = skip_ws(bytes, i);
        if bytes.get(i) != Some(&b'=') {
            return Err(ctx.err_at(line, i, format!("expected `=` after label `{lname}`")));
        }
        i = skip_ws(bytes, i + 1);
        if bytes.get(i) != Some(&b'"') {
            return Err(ctx.err_at(
                line,
                i,
                format!("expected `\"` to open the value of label `{lname}`"),
            ));
        }
        let q_start = i;
        i += 1;
        let rest = line
            .get(i..)
            .ok_or_else(|| ctx.err_at(line, i, "bad label value"))?;
        let (value, closed_at) = label_value(rest);
        let closed_at = closed_at.map(|end| i + end);
        let Some(after) = closed_at else {
            return Err(ctx.err_at(
                line,
                q_start,
                format!("unterminated quote in the value of label `{lname}`"),
            ));
        };
        if build {
            out.push((lname, value));
        }
        i = skip_ws(bytes, after);
        match bytes.get(i) {
            Some(b',') => i += 1,
            Some(b'}') => return Ok(i + 1),
            None => return Err(ctx.err_at(line, i, "unterminated label set (missing `}`)")),
            Some(_) => return Err(ctx.err_at(line, i, "expected `,` or `}` after a label value")),
        }
    }
}

/// A quoted label value from after its opening `"`: the value unescaped, and the position after
/// its closing `"` (`None` when unterminated). Borrowed when it has no escapes, as most have.
fn label_value(rest: &str) -> (Cow<'_, str>, Option<usize>) {
    // `"` and `\` are ASCII: the first of either is a character boundary.
    let stop = rest.bytes().position(|b| b == b'"' || b == b'\\');
    if let Some(end) = stop.filter(|&at| rest.as_bytes().get(at) == Some(&b'"')) {
        return (Cow::Borrowed(rest.get(..end).unwrap_or("")), Some(end + 1));
    }
    // Scanned by characters (never splits a multi-byte char).
    let mut value = String::new();
    let mut chars = rest.char_indices();
    while let Some((off, c)) = chars.next() {
        match c {
            '"' => return (Cow::Owned(value), Some(off + 1)),
            '\\' => match chars.next() {
                Some((_, 'n')) => value.push('\n'),
                Some((_, '\\')) => value.push('\\'),
                Some((_, '"')) => value.push('"'),
                Some((_, other)) => {
                    // Unknown escape: kept verbatim, as prometheus_client does.
                    value.push('\\');
                    value.push(other);
                }
                None => break,
            },
            other => value.push(other),
        }
    }
    (Cow::Owned(value), None)
}

/// Refuse a count above 2^53 − 1 (`COUNT_TOO_LARGE`, at the value): the value of a counter
/// (declared, or untyped and a counter by its name), a histogram bucket or `_count`. Returns
/// the large value of an untyped family that is not a counter by name (it may be a gauge; the
/// run decides). Summaries, `_created` samples and dropped families are not counted.
fn check_count(
    ctx: &Ctx<'_>,
    line: &str,
    family: &str,
    decl: DeclType,
    role: SampleRole,
    sample: &RawSample,
) -> Result<Option<UntypedLarge>, ReadError> {
    if !count::too_large(sample.value) || dropped_family(family) {
        return Ok(None);
    }
    let what = match (decl, role) {
        (DeclType::Counter, SampleRole::Value) => "counter value",
        (DeclType::Histogram, SampleRole::Bucket) => "histogram bucket count",
        (DeclType::Histogram, SampleRole::Count) => "histogram count",
        (DeclType::Untyped, SampleRole::Value) if counter_by_name(family) => "counter value",
        (DeclType::Untyped, SampleRole::Value) => {
            return Ok(Some(UntypedLarge {
                family: family.to_string(),
                value: value_text(line, sample.value_at).to_string(),
                position: ctx.at(line, sample.value_at),
            }))
        }
        _ => return Ok(None),
    };
    Err(count::refuse(
        ctx.file,
        ctx.at(line, sample.value_at),
        &format!("{what} of `{family}`"),
        value_text(line, sample.value_at),
    ))
}

/// The sample value as written, from its first byte.
fn value_text(line: &str, at: usize) -> &str {
    let rest = line.get(at..).unwrap_or("");
    rest.split([' ', '\t']).next().unwrap_or(rest)
}

fn unescape_help(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('\\') => out.push('\\'),
                Some(other) => {
                    out.push('\\');
                    out.push(other);
                }
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn dropped_family(name: &str) -> bool {
    name.ends_with("_created") || name.contains("_uptime")
}

fn base_name(file: &str) -> &str {
    file.rsplit(['/', '\\']).next().unwrap_or(file)
}

/// Reads one Prometheus text capture pushed in chunks (see [`PushReader`]).
pub struct PrometheusTextReader {
    file: String,
    capture: CaptureMeta,
    filter: FamilyFilter,
    lines: Lines,
    families: BTreeMap<String, FamilyAcc>,
    open: Option<Open>,
    /// Whether the open family is kept (wanted and not dropped); cached per family.
    open_keep: bool,
    kept_samples: usize,
    timed_samples: usize,
    max_ts: Option<i64>,
    untyped_large: Vec<UntypedLarge>,
}

impl PrometheusTextReader {
    pub fn new(file: &str, capture: &CaptureMeta, filter: &FamilyFilter) -> Self {
        PrometheusTextReader {
            file: file.to_string(),
            capture: capture.clone(),
            filter: filter.clone(),
            lines: Lines::new(),
            families: BTreeMap::new(),
            open: None,
            open_keep: false,
            kept_samples: 0,
            timed_samples: 0,
            max_ts: None,
            untyped_large: Vec::new(),
        }
    }

    /// Take one line (without its `\n`; `ascii` when every byte is).
    fn take(&mut self, raw: &[u8], line_no: u64, ascii: bool) -> Result<(), ReadError> {
        let line_no = usize::try_from(line_no).unwrap_or(usize::MAX);
        let file = self.file.as_str();
        let line = line_text(raw, ascii).map_err(|e| {
            ReadError::new(
                ErrorCode::NotUtf8,
                file,
                Position::line(line_no),
                format!(
                    "line is not UTF-8 (byte {} of the line)",
                    e.valid_up_to() + 1
                ),
            )
        })?;
        let line = line.strip_suffix('\r').unwrap_or(line);
        let line = if line_no == 1 {
            line.strip_prefix('\u{feff}').unwrap_or(line)
        } else {
            line
        };
        let trimmed = line.trim_start_matches([' ', '\t']);
        if trimmed.trim_end().is_empty() {
            return Ok(());
        }
        match trimmed.strip_prefix('#') {
            Some(comment) => self.take_comment(line_no, line, trimmed, comment),
            None => self.take_sample(line_no, line),
        }
    }

    /// A `# HELP` / `# TYPE` line opens (or describes) a family; other comments are skipped.
    fn take_comment(
        &mut self,
        line_no: usize,
        line: &str,
        trimmed: &str,
        comment: &str,
    ) -> Result<(), ReadError> {
        let ctx = &Ctx {
            file: &self.file,
            line_no,
        };
        let filter = &self.filter;
        let open = &mut self.open;
        let open_keep = &mut self.open_keep;
        let comment = comment.trim_start_matches([' ', '\t']);
        let (kw, rest) = split_word(comment);
        if kw != "HELP" && kw != "TYPE" {
            return Ok(());
        }
        let (name, rest) = split_word(rest);
        if name.is_empty() {
            // `# HELP` with nothing after it: an ordinary comment for prometheus_client.
            return Ok(());
        }
        let name_ok =
            name.bytes().next().is_some_and(is_name_start) && name.bytes().all(is_name_char);
        if !name_ok {
            let col = line.len() - trimmed.len() + (trimmed.len() - comment.len());
            return Err(ctx.err_at(line, col, format!("bad metric name `{name}` in # {kw}")));
        }
        let same = open.as_ref().is_some_and(|o| o.raw == name);
        if !same {
            *open = Some(Open {
                raw: name.to_string(),
                typ: DeclType::Untyped,
                help: None,
            });
        }
        if let Some(o) = open.as_mut() {
            if kw == "HELP" {
                o.help = Some(unescape_help(rest));
            } else {
                let t = rest.trim();
                o.typ = match t.to_ascii_lowercase().as_str() {
                    "counter" => DeclType::Counter,
                    "gauge" => DeclType::Gauge,
                    "histogram" => DeclType::Histogram,
                    "summary" => DeclType::Summary,
                    "untyped" | "unknown" => DeclType::Untyped,
                    _ => {
                        let col = line.len() - rest.trim_start().len();
                        return Err(ctx.err_at(
                        line,
                        col,
                        format!("unknown TYPE `{t}` for `{name}` (counter, gauge, histogram, summary or untyped expected)"),
                    ));
                    }
                };
            }
            let fname = o.final_name();
            *open_keep =
                o.typ != DeclType::Summary && !dropped_family(fname) && filter.wants(fname);
        }
        Ok(())
    }

    /// A sample line: its family is decided from the name before anything is built.
    fn take_sample(&mut self, line_no: usize, line: &str) -> Result<(), ReadError> {
        let ctx = &Ctx {
            file: &self.file,
            line_no,
        };
        let filter = &self.filter;
        let families = &mut self.families;
        let open = &mut self.open;
        let open_keep = &mut self.open_keep;
        let bytes = line.as_bytes();
        let ns = skip_ws(bytes, 0);
        let mut ne = ns;
        while bytes.get(ne).copied().is_some_and(is_name_char) {
            ne += 1;
        }
        let sname = line.get(ns..ne).unwrap_or("");
        let role = open.as_ref().and_then(|o| o.role(sname));
        if role.is_none() {
            // Not part of the open family: an untyped family of its own.
            *open = None;
            *open_keep = false;
        }
        let open = open.as_ref();
        let (fam_name, keep, role, decl) = match (role, open) {
            (Some(r), Some(o)) => (o.final_name(), *open_keep, r, o.typ),
            _ => {
                let keep = !dropped_family(sname) && filter.wants(sname);
                (sname, keep, SampleRole::Value, DeclType::Untyped)
            }
        };
        let keep = keep && role != SampleRole::Created;
        let sample = parse_sample(ctx, line, keep)?;
        if let Some(large) = check_count(ctx, line, fam_name, decl, role, &sample)? {
            if keep {
                self.untyped_large.push(large);
            }
        }
        if !keep {
            return Ok(());
        }
        self.kept_samples += 1;
        if let Some(ts) = sample.timestamp_ms {
            self.timed_samples += 1;
            self.max_ts = Some(self.max_ts.map_or(ts, |m| m.max(ts)));
        }
        let metric_type = match decl {
            DeclType::Counter => MetricType::Counter,
            DeclType::Gauge => MetricType::Gauge,
            DeclType::Histogram => MetricType::Histogram,
            DeclType::Summary | DeclType::Untyped => MetricType::Unknown,
        };
        let help = open.and_then(|o| o.help.as_ref());
        // Found by name first: an entry by key made the name a `String` per sample.
        let acc = match families.get_mut(fam_name) {
            Some(acc) => acc,
            None => families
                .entry(fam_name.to_string())
                .or_insert_with(|| FamilyAcc::new(metric_type, None)),
        };
        if acc.help.is_none() {
            acc.help = help.cloned();
        }
        let mut pairs = Vec::with_capacity(sample.labels.len());
        let mut le: Option<Cow<'_, str>> = None;
        let histogram = decl == DeclType::Histogram;
        for (k, v) in sample.labels {
            if histogram && role == SampleRole::Bucket && k == "le" {
                le = Some(v);
            } else {
                pairs.push((k, v));
            }
        }
        let labels = Labels::from_pairs(pairs);
        match role {
            SampleRole::Value | SampleRole::Created => {
                if let Some(slot) = acc.slot(labels, zero) {
                    *slot = AccValue::Scalar {
                        value: sample.value,
                    };
                }
            }
            SampleRole::Bucket | SampleRole::Sum | SampleRole::Count => {
                if role == SampleRole::Bucket && le.is_none() {
                    return Err(ctx.err_at(
                        line,
                        ns,
                        format!("histogram bucket `{sname}` without an `le` label"),
                    ));
                }
                let Some(slot) = acc.slot(labels, empty_histogram) else {
                    return Ok(());
                };
                if !matches!(slot, AccValue::Histogram(_)) {
                    *slot = empty_histogram();
                }
                if let AccValue::Histogram(h) = slot {
                    match (role, le) {
                        // Accounting reads a histogram's sum and count only
                        // (`FamilyFilter::lean`); the bucket line was checked above.
                        (SampleRole::Bucket, _) if filter.is_lean() => {}
                        (SampleRole::Bucket, Some(le)) => {
                            set_bucket(&mut h.buckets, &mut h.by_le, &le, sample.value);
                        }
                        (SampleRole::Sum, _) => h.sum = Some(sample.value),
                        (SampleRole::Count, _) => h.count = Some(sample.value),
                        _ => {}
                    }
                }
            }
        }
        Ok(())
    }

    /// The capture has ended: its scrape.
    fn into_scrape(self) -> Scrape {
        let timestamp_ns = match self.capture.timestamp_ns {
            Some(t) => Some(t),
            None if self.kept_samples > 0 && self.timed_samples == self.kept_samples => self
                .max_ts
                .and_then(|ms| u64::try_from(ms).ok())
                .and_then(|ms| ms.checked_mul(1_000_000)),
            None => None,
        };
        let endpoint_url = self
            .capture
            .endpoint_url
            .clone()
            .unwrap_or_else(|| format!("capture:{}", base_name(&self.file)));
        let (table, groups, samples) = flatten(self.families);
        Scrape {
            endpoint_url,
            timestamp_ns,
            phase: None,
            table: Arc::new(table),
            groups,
            samples,
            untyped_large: self.untyped_large,
        }
    }
}

/// The capture's families (sorted by name), each series once, samples in first-seen order.
fn flatten(
    mut families: BTreeMap<String, FamilyAcc>,
) -> (SeriesTable, Vec<FamilyGroup>, Vec<ScrapeSample>) {
    // The lookups are done with: their room goes before the table is made.
    for acc in families.values_mut() {
        acc.at = DigestMap::default();
    }
    let mut table = SeriesTable::default();
    let mut groups = Vec::with_capacity(families.len());
    // Room for every series at once: grown by doubling, the vectors' last growth would be
    // about half unused at the capture's peak.
    let n: usize = families.values().map(|f| f.values.len()).sum();
    let per_series = std::mem::size_of::<SeriesMeta>() + std::mem::size_of::<ScrapeSample>();
    if !admit(n.saturating_mul(per_series)) {
        // Refused under a memory budget: the file fails (see `crate::admission`).
        return (table, Vec::new(), Vec::new());
    }
    table.series.reserve_exact(n);
    // Exactly: a first push reserves four, and a run holds thousands of captures of a few
    // families each until it is assembled.
    table.families.reserve_exact(families.len());
    let mut samples = Vec::with_capacity(n);
    for (name, acc) in families {
        let family = u32::try_from(table.families.len()).unwrap_or(u32::MAX);
        table.families.push(FamilyMeta {
            name,
            metric_type: Some(acc.metric_type),
            help: acc.help,
        });
        for (labels, value) in acc.values {
            let series = u32::try_from(table.series.len()).unwrap_or(u32::MAX);
            table.series.push(SeriesMeta { family, labels });
            samples.push(ScrapeSample {
                series,
                value: value.into_value(),
            });
        }
        groups.push(FamilyGroup {
            family,
            end: u32::try_from(samples.len()).unwrap_or(u32::MAX),
        });
    }
    (table, groups, samples)
}

impl PushReader for PrometheusTextReader {
    type Output = Scrape;

    fn push(&mut self, chunk: &[u8]) -> Result<(), ReadError> {
        let mut lines = std::mem::take(&mut self.lines);
        let r = lines.push_text(chunk, |line, n, ascii| self.take(line, n, ascii));
        self.lines = lines;
        r
    }

    fn finish(mut self) -> Result<Scrape, ReadError> {
        let mut lines = std::mem::take(&mut self.lines);
        lines.finish_text(|line, n, ascii| self.take(line, n, ascii))?;
        Ok(self.into_scrape())
    }
}

/// Read one Prometheus text capture.
pub fn read_prometheus_text<R: std::io::Read>(
    file: &str,
    reader: R,
    capture: &CaptureMeta,
    filter: &FamilyFilter,
) -> Result<Scrape, ReadError> {
    drive(
        file,
        PrometheusTextReader::new(file, capture, filter),
        reader,
    )
}

/// Split off the first whitespace-delimited word; the rest keeps its text after one run of
/// separating whitespace.
fn split_word(s: &str) -> (&str, &str) {
    let s = s.trim_start_matches([' ', '\t']);
    match s.find([' ', '\t']) {
        Some(i) => {
            let (w, rest) = s.split_at(i);
            (w, rest.trim_start_matches([' ', '\t']))
        }
        None => (s, ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Scrape, ReadError> {
        read_prometheus_text(
            "t.prom",
            text.as_bytes(),
            &CaptureMeta::default(),
            &FamilyFilter::all(),
        )
    }

    /// A histogram of many buckets (found through the index) takes a repeated bucket line as
    /// one of few does (by a scan): the later count, in the place the bucket first came.
    #[test]
    fn repeated_buckets_of_many_and_few() {
        for n in [
            3usize,
            INDEXED_BUCKETS - 1,
            INDEXED_BUCKETS,
            3 * INDEXED_BUCKETS,
        ] {
            let mut text = String::from("# TYPE h histogram\n");
            for i in 0..n {
                text.push_str(&format!("h_bucket{{le=\"{i}\"}} {i}\n"));
            }
            text.push_str("h_bucket{le=\"1\"} 100\nh_bucket{le=\"+Inf\"} 200\n");
            text.push_str(&format!("h_bucket{{le=\"{}\"}} 300\nh_count 200\n", n - 1));
            let scrape = read(&text).unwrap_or_else(|e| panic!("{e}"));
            let Some(SampleValue::Histogram(h)) = scrape.samples.first().map(|s| &s.value) else {
                panic!("no histogram for {n} buckets");
            };
            let mut les: Vec<String> = (0..n).map(|i| i.to_string()).collect();
            les.push("+Inf".into());
            let mut counts: Vec<f64> = (0..n).map(|i| i as f64).collect();
            counts[1] = 100.0;
            counts[n - 1] = 300.0;
            counts.push(200.0);
            assert_eq!(&h.les[..], &les[..], "{n} buckets");
            assert_eq!(h.counts, counts, "{n} buckets");
        }
    }

    /// A lean read keeps a histogram's sum and count and none of its buckets; the bucket
    /// lines are still checked (a bucket without `le`, a count above 2^53 − 1).
    #[test]
    fn lean_histograms_keep_sum_and_count() {
        let text = "# TYPE h histogram\nh_bucket{le=\"1\",x=\"a\"} 2\nh_bucket{le=\"+Inf\",x=\"a\"} 3\nh_sum{x=\"a\"} 4.5\nh_count{x=\"a\"} 3\n";
        let lean = FamilyFilter::all().lean();
        let meta = CaptureMeta::default();
        let scrape = read_prometheus_text("t.prom", text.as_bytes(), &meta, &lean);
        let scrape = scrape.unwrap_or_else(|e| panic!("{e}"));
        let Some(SampleValue::Histogram(h)) = scrape.samples.first().map(|s| &s.value) else {
            panic!("no histogram");
        };
        assert!(h.les.is_empty() && h.counts.is_empty());
        assert_eq!((h.sum, h.count), (Some(4.5), Some(3.0)));
        let full = read(text).unwrap_or_else(|e| panic!("{e}"));
        let Some(SampleValue::Histogram(f)) = full.samples.first().map(|s| &s.value) else {
            panic!("no histogram");
        };
        assert_eq!((f.counts.len(), f.sum, f.count), (2, Some(4.5), Some(3.0)));
        for bad in [
            "# TYPE h histogram\nh_bucket{x=\"a\"} 2\n",
            "# TYPE h histogram\nh_bucket{le=\"1\"} 9007199254740993\n",
        ] {
            let got = read_prometheus_text("t.prom", bad.as_bytes(), &meta, &lean);
            assert!(got.is_err(), "{bad}");
        }
    }

    #[test]
    fn floats() {
        assert_eq!(parse_prom_float("+Inf"), Some(f64::INFINITY));
        assert_eq!(parse_prom_float("-Inf"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_prom_float("Inf"), Some(f64::INFINITY));
        assert!(parse_prom_float("NaN").is_some_and(f64::is_nan));
        assert_eq!(parse_prom_float("3.829888e+06"), Some(3_829_888.0));
        assert_eq!(parse_prom_float("1E3"), Some(1000.0));
        assert_eq!(parse_prom_float("-0.5"), Some(-0.5));
        assert_eq!(parse_prom_float("1_000"), Some(1000.0));
        assert_eq!(parse_prom_float(""), None);
        assert_eq!(parse_prom_float("abc"), None);
        assert_eq!(parse_prom_float("1__0"), None);
        assert_eq!(parse_prom_float("+"), None);
        assert_eq!(parse_prom_float("."), None);
    }

    #[test]
    fn counter_family() {
        let s = read("# TYPE a_total counter\na_total{x=\"1\"} 2\na_created{x=\"1\"} 3\n").unwrap();
        assert_eq!(s.families().len(), 1);
        assert_eq!(s.families().next().unwrap().name, "a");
        assert_eq!(s.endpoint_url, "capture:t.prom");
    }

    #[test]
    fn label_values_borrowed_or_unescaped() {
        let borrowed = |v: &Cow<'_, str>| matches!(v, Cow::Borrowed(_));
        let (v, end) = label_value("plain é\",x=\"1\"}");
        assert_eq!((&*v, end, borrowed(&v)), ("plain é", Some(9), true));
        let (v, end) = label_value("a\\\\b\\nc\\\"d\\qe\"} 1");
        assert_eq!(
            (&*v, end, borrowed(&v)),
            ("a\\b\nc\"d\\qe", Some(14), false)
        );
        assert_eq!(label_value("no end").1, None);
        assert_eq!(label_value("ends in \\").1, None);
        assert_eq!(label_value("escaped end \\\"").1, None);
        assert_eq!(label_value("\"").1, Some(1));
    }

    #[test]
    fn utf8_label_never_splits() {
        let s = read("m{a=\"é😀\\\"\"} 1\n").unwrap();
        let f = s.families().next().unwrap();
        assert_eq!(f.samples.get(0).unwrap().labels.get("a"), Some("é😀\""));
        let e = read("m{a=\"é😀} 1\n").unwrap_err();
        assert_eq!(e.code, ErrorCode::PromSyntax);
    }
}
