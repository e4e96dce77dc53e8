//! `profile_export.jsonl`: one AIPerf request record per line → [`ProfileExport`].
//!
//! Read per line (streamed; blank lines skipped):
//! - phase: `metadata.benchmark_phase`, else legacy `metadata.credit_phase` (case-insensitive;
//!   missing or null → `None`; any other value is a `PROFILE_RECORD` error);
//! - `metadata.request_start_ns` / `request_end_ns`: epoch ns taken as `u64` straight from the
//!   JSON integer token (never through `f64`); a float, negative or too-large value is
//!   `BAD_TIMESTAMP`. Legacy lines carry one `metadata.timestamp_ns`, used as the start; the
//!   end is `start + request_latency × 10^6` only when `metrics.request_latency.value` is a
//!   JSON integer (exact); a fractional latency (the usual case) leaves the end `None`,
//!   since a millisecond float cannot give exact nanoseconds;
//! - `metadata.was_cancelled` (missing or null → false), `conversation_id`, `turn_index`,
//!   `x_correlation_id`;
//! - `error`: `{code?, type?, message?}` or null/missing;
//! - `metrics.usage_prompt_tokens`, `input_sequence_length`, `output_sequence_length`
//!   `.value`: an integer or an integral float (`123.0`); a fractional, negative or non-number
//!   value is a `PROFILE_RECORD` error naming the tag, a count above 2^53 − 1 is
//!   `COUNT_TOO_LARGE` (it cannot travel exactly as a JSON number).
//!
//! Every error has the line, the character column of the value and its JSON path (a JSON
//! syntax error: where serde_json stopped).
//!
//! Era per line: `credit_phase` in the metadata → legacy; otherwise any explicit `null` in the
//! line → explicit nulls (AIPerf before 0.3.0); otherwise omitted nulls. The file's era is the
//! one all lines share, `Mixed` when they differ, `Empty` without records.

use crate::error::{json_message, ErrorCode, ReadError};
use crate::model::{Phase, ProfileEra, ProfileExport, RecordError, RequestRecord};
use crate::read::count;
use crate::read::locate::{in_line, serde_in_line, Seg};
use crate::read::push::{drive, line_text, Lines, PushReader};
use serde::Deserialize;
use serde_json::{Number, Value};
use std::borrow::Cow;

/// The common shape of a record read by hand.
mod fast;

// Strings are borrowed from the line (copied only when they hold escapes), and copied out
// only when the reader keeps them: most records are folded, and a fold keeps none of them.
#[derive(Deserialize, Default)]
#[cfg_attr(test, derive(Debug, PartialEq))]
#[serde(expecting = "a request record object")]
struct LineDe<'a> {
    #[serde(default, borrow)]
    metadata: Option<MetaDe<'a>>,
    #[serde(default)]
    metrics: Option<MetricsDe>,
    #[serde(default, borrow)]
    error: Option<ErrorDe<'a>>,
}

#[derive(Deserialize, Default)]
#[cfg_attr(test, derive(Debug, PartialEq))]
#[serde(expecting = "a metadata object")]
struct MetaDe<'a> {
    #[serde(default, borrow)]
    benchmark_phase: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    credit_phase: Option<Cow<'a, str>>,
    #[serde(default)]
    request_start_ns: Option<Number>,
    #[serde(default)]
    request_end_ns: Option<Number>,
    #[serde(default)]
    timestamp_ns: Option<Number>,
    #[serde(default)]
    was_cancelled: Option<bool>,
    #[serde(default, borrow)]
    conversation_id: Option<Cow<'a, str>>,
    #[serde(default)]
    turn_index: Option<u32>,
    #[serde(default, borrow)]
    x_correlation_id: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Default)]
#[cfg_attr(test, derive(Debug, PartialEq))]
#[serde(expecting = "a metrics object")]
struct MetricsDe {
    #[serde(default)]
    usage_prompt_tokens: Option<MetricDe>,
    #[serde(default)]
    input_sequence_length: Option<MetricDe>,
    #[serde(default)]
    output_sequence_length: Option<MetricDe>,
    #[serde(default)]
    request_latency: Option<MetricDe>,
}

#[derive(Deserialize)]
#[cfg_attr(test, derive(Debug, PartialEq))]
#[serde(expecting = "a metric object (`value`, `unit`)")]
struct MetricDe {
    #[serde(default, deserialize_with = "crate::json_value::optional")]
    value: Option<Value>,
}

#[derive(Deserialize, Default)]
#[cfg_attr(test, derive(Debug, PartialEq))]
#[serde(expecting = "an error object")]
struct ErrorDe<'a> {
    #[serde(default)]
    code: Option<i64>,
    #[serde(default, rename = "type", borrow)]
    error_type: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    message: Option<Cow<'a, str>>,
}

/// True when the JSON text holds a `null` literal outside strings; `text`: the line as text,
/// when it is UTF-8.
fn has_explicit_null(line: &[u8], text: Option<&str>) -> bool {
    // Most lines hold no `null` at all: a plain search rules them out faster than the scan
    // (a text search: std's substring search is vectorised where the target allows; the
    // byte-window search was a tenth of reading a profile JSONL).
    let mentioned = match text {
        Some(t) => t.contains("null"),
        None => line.windows(4).any(|w| w == b"null"),
    };
    if !mentioned {
        return false;
    }
    let mut in_str = false;
    let mut escaped = false;
    let mut i = 0;
    while let Some(&b) = line.get(i) {
        if in_str {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_str = false;
            }
        } else if b == b'"' {
            in_str = true;
        } else if b == b'n' && line.get(i..i + 4) == Some(b"null") {
            return true;
        }
        i += 1;
    }
    false
}

/// One line being read: where errors point.
struct At<'a> {
    file: &'a str,
    line_no: usize,
    bytes: &'a [u8],
}

impl At<'_> {
    /// An error at the value under the keys `path` of this line.
    fn err(&self, code: ErrorCode, path: &[&str], msg: impl Into<String>) -> ReadError {
        let segs: Vec<Seg<'_>> = path.iter().map(|k| Seg::key(k)).collect();
        ReadError::new(
            code,
            self.file,
            in_line(self.bytes, self.line_no, &segs),
            msg,
        )
    }
}

fn ns_value(at: &At<'_>, path: [&str; 2], n: &Option<Number>) -> Result<Option<u64>, ReadError> {
    match n {
        None => Ok(None),
        Some(n) => n.as_u64().map(Some).ok_or_else(|| {
            at.err(
                ErrorCode::BadTimestamp,
                &path,
                format!(
                    "`{}` is {n}; epoch nanoseconds must be a non-negative integer",
                    path.join(".")
                ),
            )
        }),
    }
}

/// A token count: an integer or an integral float, non-negative, at most 2^53 − 1.
fn count_value(at: &At<'_>, tag: &str, m: &Option<MetricDe>) -> Result<Option<u64>, ReadError> {
    let Some(v) = m.as_ref().and_then(|m| m.value.as_ref()) else {
        return Ok(None);
    };
    let path = ["metrics", tag, "value"];
    let bad = |what: &str| {
        at.err(
            ErrorCode::ProfileRecord,
            &path,
            format!("metric `{tag}` value {v} is {what}"),
        )
    };
    let too_large = || {
        at.err(
            ErrorCode::CountTooLarge,
            &path,
            count::message(&format!("token count `{tag}`"), &v.to_string()),
        )
    };
    match v {
        Value::Null => Ok(None),
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                return if count::too_large_u64(u) {
                    Err(too_large())
                } else {
                    Ok(Some(u))
                };
            }
            if n.is_i64() {
                return Err(bad("negative"));
            }
            let f = n.as_f64().unwrap_or(f64::NAN);
            if count::too_large(f) {
                Err(too_large())
            } else if !f.is_finite() || f.fract() != 0.0 {
                Err(bad("not an integer"))
            } else if f < 0.0 {
                Err(bad("negative"))
            } else {
                // Integral, in [0, 2^53 − 1]: exact as u64.
                Ok(Some(f as u64))
            }
        }
        _ => Err(bad("not a number")),
    }
}

fn parse_phase(
    at: &At<'_>,
    key: &str,
    s: &Option<Cow<'_, str>>,
) -> Result<Option<Phase>, ReadError> {
    match s {
        None => Ok(None),
        Some(s) => Phase::parse(s).map(Some).ok_or_else(|| {
            at.err(
                ErrorCode::ProfileRecord,
                &["metadata", key],
                format!("unknown phase `{s}` (warmup or profiling expected)"),
            )
        }),
    }
}

/// Parse one line the fast reading left (see [`fast`]). It reads it without tracking the JSON
/// path; only a line that fails is parsed again with tracking, so its error names the path
/// (the result is the same).
fn parse_record<'a>(
    file: &str,
    line_no: usize,
    bytes: &'a [u8],
    terminated: bool,
) -> Result<LineDe<'a>, ReadError> {
    // Bytes after the record are not looked at (nor were they when every line was tracked).
    // Read as bytes, even a line known to be UTF-8: serde_json then checks its strings' UTF-8
    // again, on the few lines the fast reading leaves, where a text reader was a second copy of
    // every derived record parser in the .wasm (14 KB).
    LineDe::deserialize(&mut serde_json::Deserializer::from_slice(bytes))
        .map_err(|_| record_error(file, line_no, bytes, terminated))
}

/// The error of a line that does not parse, with its JSON path. The line is parsed as it is
/// in the file, with its `\n` when it has one (serde_json places an end-of-input error after
/// it).
#[cold]
fn record_error(file: &str, line_no: usize, bytes: &[u8], terminated: bool) -> ReadError {
    let mut text = bytes.to_vec();
    if terminated {
        text.push(b'\n');
    }
    let de = &mut serde_json::Deserializer::from_slice(&text);
    match LineDe::deserialize(de) {
        Ok(_) => ReadError::new(
            ErrorCode::ProfileRecord,
            file,
            crate::error::Position::line(line_no),
            "not a request record",
        ),
        Err(e) => {
            let mut pos = serde_in_line(&text, line_no, &e);
            pos.json_path = crate::json_path::shown(&crate::json_path::path_of_error(&text, &e));
            ReadError::new(
                ErrorCode::ProfileRecord,
                file,
                pos,
                format!("not a request record: {}", json_message(&e)),
            )
        }
    }
}

/// One line: its bytes, the same as text when they are UTF-8, and whether it ended in `\n`.
struct LineIn<'a> {
    no: usize,
    bytes: &'a [u8],
    text: Option<&'a str>,
    terminated: bool,
}

/// Read one record; `keep_names`: copy out its identifiers and error texts (a fold reads none).
fn read_line(
    file: &str,
    line: &LineIn<'_>,
    keep_names: bool,
) -> Result<(RequestRecord, ProfileEra), ReadError> {
    let (line_no, bytes) = (line.no, line.bytes);
    let at = At {
        file,
        line_no,
        bytes,
    };
    let (parsed, nulls) = match line.text.and_then(fast::record) {
        Some((parsed, nulls)) => (parsed, Some(nulls)),
        None => (parse_record(file, line_no, bytes, line.terminated)?, None),
    };
    let legacy = parsed
        .metadata
        .as_ref()
        .is_some_and(|m| m.credit_phase.is_some());
    let era = if legacy {
        ProfileEra::LegacyCreditPhase
    } else if nulls.unwrap_or_else(|| has_explicit_null(bytes, line.text)) {
        ProfileEra::ExplicitNulls
    } else {
        ProfileEra::OmittedNulls
    };
    let meta = parsed.metadata.unwrap_or_default();
    let phase = match &meta.benchmark_phase {
        Some(_) => parse_phase(&at, "benchmark_phase", &meta.benchmark_phase)?,
        None => parse_phase(&at, "credit_phase", &meta.credit_phase)?,
    };
    let mut start = ns_value(
        &at,
        ["metadata", "request_start_ns"],
        &meta.request_start_ns,
    )?;
    let mut end = ns_value(&at, ["metadata", "request_end_ns"], &meta.request_end_ns)?;
    let legacy_ts = ns_value(&at, ["metadata", "timestamp_ns"], &meta.timestamp_ns)?;
    let metrics = parsed.metrics;
    if start.is_none() && meta.request_start_ns.is_none() {
        start = legacy_ts;
        if end.is_none() {
            let latency_ms = metrics
                .as_ref()
                .and_then(|m| m.request_latency.as_ref())
                .and_then(|l| l.value.as_ref())
                .and_then(Value::as_u64);
            end = match (start, latency_ms) {
                (Some(s), Some(ms)) => ms.checked_mul(1_000_000).and_then(|d| s.checked_add(d)),
                _ => None,
            };
        }
    }
    let (usage, isl, osl) = match &metrics {
        Some(m) => (
            count_value(&at, "usage_prompt_tokens", &m.usage_prompt_tokens)?,
            count_value(&at, "input_sequence_length", &m.input_sequence_length)?,
            count_value(&at, "output_sequence_length", &m.output_sequence_length)?,
        ),
        None => (None, None, None),
    };
    let owned = |s: Option<Cow<'_, str>>| s.filter(|_| keep_names).map(Cow::into_owned);
    let record = RequestRecord {
        line: crate::error::clamp_u32(line_no),
        phase,
        request_start_ns: start,
        request_end_ns: end,
        error: parsed.error.map(|e| RecordError {
            code: e.code,
            error_type: owned(e.error_type),
            message: owned(e.message),
        }),
        was_cancelled: meta.was_cancelled.unwrap_or(false),
        usage_prompt_tokens: usage,
        input_sequence_length: isl,
        output_sequence_length: osl,
        conversation_id: owned(meta.conversation_id),
        turn_index: meta.turn_index,
        x_correlation_id: owned(meta.x_correlation_id),
    };
    Ok((record, era))
}

/// Reads `profile_export.jsonl` pushed in chunks (see [`PushReader`]).
pub struct ProfileJsonlReader {
    file: String,
    lines: Lines,
    records: Vec<RequestRecord>,
    era: Option<ProfileEra>,
    /// Keep each record's identifiers and error texts (see [`ProfileJsonlReader::folding`]).
    keep_names: bool,
}

impl ProfileJsonlReader {
    pub fn new(file: &str) -> Self {
        ProfileJsonlReader {
            file: file.to_string(),
            lines: Lines::new(),
            records: Vec::new(),
            era: None,
            keep_names: true,
        }
    }

    /// A reader whose records are folded ([`crate::account::request_scope::RecordFold`]):
    /// their `conversation_id`, `x_correlation_id` and error `type` and `message` are checked
    /// as before but not copied out (left `None`), since the fold reads none of them.
    pub fn folding(file: &str) -> Self {
        ProfileJsonlReader {
            keep_names: false,
            ..ProfileJsonlReader::new(file)
        }
    }

    /// Take one line (`terminated` when it ended in `\n`, `ascii` when its every byte is).
    fn take(
        &mut self,
        line: &[u8],
        line_no: u64,
        terminated: bool,
        ascii: bool,
    ) -> Result<(), ReadError> {
        let line_no = usize::try_from(line_no).unwrap_or(usize::MAX);
        let mut bytes = line;
        if line_no == 1 {
            bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
        }
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        let line = LineIn {
            no: line_no,
            bytes,
            text: line_text(bytes, ascii).ok(),
            terminated,
        };
        let (record, line_era) = read_line(&self.file, &line, self.keep_names)?;
        self.era = Some(match self.era {
            None => line_era,
            Some(e) if e == line_era => e,
            Some(_) => ProfileEra::Mixed,
        });
        self.records.push(record);
        Ok(())
    }
}

impl ProfileJsonlReader {
    /// The records read so far, taken out (for a caller that folds them as they come instead
    /// of keeping them; [`PushReader::finish`] then gives the era and the records not taken).
    pub fn drain(&mut self) -> Vec<RequestRecord> {
        std::mem::take(&mut self.records)
    }

    /// Read the file's last line if it did not end in `\n` (then [`ProfileJsonlReader::drain`]
    /// it); [`PushReader::finish`] after this reads nothing more.
    pub fn end_lines(&mut self) -> Result<(), ReadError> {
        let mut lines = std::mem::take(&mut self.lines);
        let r = lines.finish_text(|line, n, ascii| self.take(line, n, false, ascii));
        self.lines = lines;
        r
    }
}

impl PushReader for ProfileJsonlReader {
    type Output = ProfileExport;

    fn push(&mut self, chunk: &[u8]) -> Result<(), ReadError> {
        let mut lines = std::mem::take(&mut self.lines);
        let r = lines.push_text(chunk, |line, n, ascii| self.take(line, n, true, ascii));
        self.lines = lines;
        r
    }

    fn finish(mut self) -> Result<ProfileExport, ReadError> {
        let mut lines = std::mem::take(&mut self.lines);
        lines.finish_text(|line, n, ascii| self.take(line, n, false, ascii))?;
        Ok(ProfileExport {
            era: self.era.unwrap_or(ProfileEra::Empty),
            records: self.records,
        })
    }
}

/// Read a whole `profile_export.jsonl`, line by line.
pub fn read_profile_jsonl<R: std::io::Read>(
    file: &str,
    reader: R,
) -> Result<ProfileExport, ReadError> {
    drive(file, ProfileJsonlReader::new(file), reader)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records of every shape the fast reading takes or leaves: current and legacy, nulls,
    /// escapes, errors, unknown keys at every level, integral and fractional counts.
    const SHAPES: [&str; 4] = [
        r#"{"metadata":{"session_num":0,"x_request_id":"0573590b","x_correlation_id":"118f099c","conversation_id":"dea5c0da","turn_index":0,"credit_issued_ns":1781635312709161427,"request_start_ns":1781635312710161427,"request_ack_ns":1781635313135861427,"request_end_ns":1781635313553861427,"worker_id":"worker_3c702d66","benchmark_phase":"warmup","was_cancelled":false},"metrics":{"request_latency":{"value":843.7,"unit":"ms"},"output_sequence_length":{"value":38,"unit":"tokens"},"input_sequence_length":{"value":10988,"unit":"tokens"},"usage_prompt_tokens":{"value":10988.0,"unit":"tokens"},"usage_total_tokens":{"value":11026,"unit":"tokens"}}}"#,
        r#"{"metadata": {"timestamp_ns": 1759000000000000000, "credit_phase": "PROFILING", "conversation_id": null, "turn_index": null, "was_cancelled": null, "x_correlation_id": "a"b"}, "metrics": {"request_latency": {"value": 1200, "unit": "ms"}, "input_sequence_length": {"value": 1e3}}, "error": null}"#,
        r#"{"metadata":{"benchmark_phase":"profiling","request_start_ns":1,"request_end_ns":2,"extra":[{"a":[null,true,-1.5e-3]}]},"metrics":null,"error":{"code":500,"type":"InternalServerError","message":"boom","details":{}},"z":"é"}"#,
        r#"{"metrics":{"usage_prompt_tokens":{"value":-1},"output_sequence_length":{"value":2.5},"input_sequence_length":{"value":"7"}},"metadata":{"turn_index":4294967296,"request_start_ns":18446744073709551616}}"#,
    ];

    /// A line as the derived parsers read it, with whether it holds a `null`.
    fn derived(text: &str) -> Option<(LineDe<'_>, bool)> {
        let line = LineDe::deserialize(&mut serde_json::Deserializer::from_str(text)).ok()?;
        Some((line, has_explicit_null(text.as_bytes(), Some(text))))
    }

    #[test]
    fn the_fast_reading_is_the_derived_one_on_every_mutation() {
        let (mut taken, mut compared) = (0, 0);
        for valid in SHAPES {
            for text in crate::json_path::testing::mutations(valid) {
                compared += 1;
                if let Some(fast) = fast::record(&text) {
                    assert_eq!(Some(fast), derived(&text), "{text}");
                    taken += 1;
                }
            }
        }
        assert!(compared > 5_000 && taken > 1_000, "{taken} of {compared}");
    }

    #[test]
    fn the_fast_reading_is_the_derived_one_on_every_profile_file() {
        let mut files = Vec::new();
        for dir in ["tests/fixtures", "examples"] {
            let mut stack = vec![std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir)];
            while let Some(d) = stack.pop() {
                for e in std::fs::read_dir(&d).unwrap().flatten() {
                    let p = e.path();
                    if p.is_dir() {
                        stack.push(p);
                    } else if p.file_name().is_some_and(|n| n == "profile_export.jsonl") {
                        files.push(p);
                    }
                }
            }
        }
        assert!(files.len() >= 10, "{files:?}");
        let (mut taken, mut lines) = (0, 0);
        for path in &files {
            let text = std::fs::read_to_string(path).unwrap();
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                lines += 1;
                if let Some(fast) = fast::record(line) {
                    assert_eq!(Some(fast), derived(line), "{}: {line}", path.display());
                    taken += 1;
                }
            }
        }
        assert!(
            taken * 10 > lines * 9,
            "the fast reading took {taken} of {lines} lines"
        );
        for shape in [SHAPES[0], SHAPES[2]] {
            assert!(fast::record(shape).is_some(), "{shape}");
        }
        for shape in [SHAPES[1], SHAPES[3]] {
            assert!(fast::record(shape).is_none(), "{shape}");
        }
    }

    #[test]
    fn null_scan() {
        for text in [false, true] {
            let null = |s: &'static str| has_explicit_null(s.as_bytes(), text.then_some(s));
            assert!(null(r#"{"a": null}"#));
            assert!(!null(r#"{"a": "null"}"#));
            assert!(!null(r#"{"a": "x\"null"}"#));
            assert!(!null(r#"{"a": "nul", "b": 1}"#));
        }
    }

    /// A record read and dropped: [`LineDe`] borrows from the text it is read from.
    struct Record;

    impl<'de> Deserialize<'de> for Record {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            LineDe::deserialize(d).map(|_| Record)
        }
    }

    #[test]
    fn record_error_paths_match_serde_path_to_error() {
        let n = crate::json_path::testing::compare::<Record>(
            r#"{"metadata": {"benchmark_phase": "profiling", "request_start_ns": 1765529006843416914, "was_cancelled": false, "turn_index": 2},
                "metrics": {"usage_prompt_tokens": {"value": 812, "unit": "tokens"}, "request_latency": {"value": 1.5, "unit": "ms"}},
                "error": {"code": 500, "type": "x", "message": "m"}}"#,
            true,
        );
        assert!(n > 1000, "only {n} broken records were compared");
    }
}
