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
//! The file is read line by line; only one line is held in memory at a time. Errors carry the
//! line, the character column and the JSON path.

use crate::error::{json_message, json_path, ErrorCode, Position, ReadError};
use crate::model::{
    Bucket, Labels, Phase, Sample, SampleValue, Scrape, ScrapeFamily, ScrapeSet, ScrapeSource,
    UntypedLarge,
};
use crate::read::count;
use crate::read::locate::{in_line, serde_in_line, OwnedPath, Seg};
use crate::read::names::counter_by_name;
use crate::read::push::{drive, Lines, PushReader};
use crate::read::FamilyFilter;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// Reads a `server_metrics_export.jsonl` pushed in chunks (see [`PushReader`]).
pub struct ScrapeJsonlReader {
    file: String,
    filter: FamilyFilter,
    lines: Lines,
    skipped: BTreeSet<String>,
    /// Whether each family name is a counter by name (decided once per file, not per line).
    counters: BTreeMap<String, bool>,
    scrapes: Vec<Scrape>,
}

impl ScrapeJsonlReader {
    pub fn new(file: &str, filter: &FamilyFilter) -> Self {
        ScrapeJsonlReader {
            file: file.to_string(),
            filter: filter.clone(),
            lines: Lines::new(),
            skipped: BTreeSet::new(),
            counters: BTreeMap::new(),
            scrapes: Vec::new(),
        }
    }

    /// Take one line (`terminated` when it ended in `\n`).
    fn take(&mut self, line: &[u8], line_no: u64, terminated: bool) -> Result<(), ReadError> {
        let line_no = usize::try_from(line_no).unwrap_or(usize::MAX);
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            return Ok(());
        }
        let text = std::str::from_utf8(line).map_err(|e| {
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
        let seen = Seen {
            skipped: &mut self.skipped,
            counters: &mut self.counters,
        };
        let scrape = parse_line(&self.file, line_no, text, terminated, &self.filter, seen)?;
        self.scrapes.push(scrape);
        Ok(())
    }
}

impl PushReader for ScrapeJsonlReader {
    type Output = ScrapeSet;

    fn push(&mut self, chunk: &[u8]) -> Result<(), ReadError> {
        let mut lines = std::mem::take(&mut self.lines);
        let r = lines.push(chunk, |line, n| self.take(line, n, true));
        self.lines = lines;
        r
    }

    fn finish(mut self) -> Result<ScrapeSet, ReadError> {
        let mut lines = std::mem::take(&mut self.lines);
        lines.finish(|line, n| self.take(line, n, false))?;
        Ok(ScrapeSet {
            source: ScrapeSource::Jsonl,
            scrapes: self.scrapes,
            skipped_families: u32::try_from(self.skipped.len()).unwrap_or(u32::MAX),
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

/// What the reader keeps across lines: skipped family names, and which names are counters.
struct Seen<'a> {
    skipped: &'a mut BTreeSet<String>,
    counters: &'a mut BTreeMap<String, bool>,
}

impl Seen<'_> {
    fn is_counter(&mut self, name: &str) -> bool {
        if let Some(&c) = self.counters.get(name) {
            return c;
        }
        let c = counter_by_name(name);
        self.counters.insert(name.to_string(), c);
        c
    }
}

/// Where a sample sits in its record: the family key (and which occurrence of it) and the
/// sample's index, so a value can be located in the line after the parse.
#[derive(Clone)]
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
    filter: &FamilyFilter,
    seen: Seen<'_>,
) -> Result<Scrape, ReadError> {
    let owned;
    let text = if terminated {
        owned = format!("{text}\n");
        owned.as_str()
    } else {
        text
    };
    let bytes = text.as_bytes();
    let notes = RefCell::new(Notes::default());
    let mut json = serde_json::Deserializer::from_str(text);
    let mut track = serde_path_to_error::Track::new();
    let seed = RecordSeed {
        filter,
        seen,
        notes: &notes,
    };
    let result = seed
        .deserialize(serde_path_to_error::Deserializer::new(
            &mut json, &mut track,
        ))
        .and_then(|r| json.end().map(|_| r));
    let notes = notes.into_inner();
    let raw = match result {
        Ok(raw) => raw,
        Err(e) => {
            if let Some(r) = notes.refused {
                let path = r.at.path(&r.below);
                let pos = in_line(bytes, line, &path.segs());
                let what = format!("{} at `{}`", r.what, path.display());
                return Err(count::refuse(file, pos, &what, &r.shown));
            }
            let mut pos = serde_in_line(bytes, line, &e);
            pos.json_path = json_path(&track.path());
            return Err(ReadError::new(
                ErrorCode::JsonlRecord,
                file,
                pos,
                json_message(&e),
            ));
        }
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
    let Some(families) = raw.families else {
        return Err(ReadError::new(
            ErrorCode::JsonlRecord,
            file,
            Position::line(line),
            "the record has no `metrics` object",
        ));
    };
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
    Ok(Scrape {
        endpoint_url,
        timestamp_ns: Some(timestamp_ns),
        phase: raw.phase,
        families,
        untyped_large,
    })
}

/// A record as read, before the required-field checks.
struct RawRecord {
    endpoint_url: Option<String>,
    timestamp: Option<Timestamp>,
    phase: Option<Phase>,
    families: Option<Vec<ScrapeFamily>>,
}

struct RecordSeed<'a> {
    filter: &'a FamilyFilter,
    seen: Seen<'a>,
    notes: &'a RefCell<Notes>,
}

impl<'de> DeserializeSeed<'de> for RecordSeed<'_> {
    type Value = RawRecord;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<RawRecord, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for RecordSeed<'_> {
    type Value = RawRecord;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a scrape record object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawRecord, A::Error> {
        let mut rec = RawRecord {
            endpoint_url: None,
            timestamp: None,
            phase: None,
            families: None,
        };
        while let Some(key) = map.next_key::<KeyName>()? {
            match key.0.as_str() {
                "endpoint_url" => rec.endpoint_url = Some(map.next_value::<String>()?),
                "timestamp_ns" => rec.timestamp = Some(map.next_value::<Timestamp>()?),
                "benchmark_phase" => {
                    rec.phase = match map.next_value::<Option<String>>()? {
                        None => None,
                        Some(s) => Some(Phase::parse(&s).ok_or_else(|| {
                            de::Error::custom(format!(
                                "benchmark_phase `{s}` is not warmup, profiling or null"
                            ))
                        })?),
                    }
                }
                "metrics" => {
                    rec.families = Some(map.next_value_seed(MetricsSeed {
                        filter: self.filter,
                        seen: Seen {
                            skipped: &mut *self.seen.skipped,
                            counters: &mut *self.seen.counters,
                        },
                        notes: self.notes,
                    })?)
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(rec)
    }
}

/// A map key as an owned string (keys with escapes cannot be borrowed).
struct KeyName(String);

impl<'de> Deserialize<'de> for KeyName {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(KeyName)
    }
}

/// `timestamp_ns` as read: an exact `u64`, or a description of what was there instead.
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

/// The `metrics` object: `{family: [sample…]}`, filtered as it is read.
struct MetricsSeed<'a> {
    filter: &'a FamilyFilter,
    seen: Seen<'a>,
    notes: &'a RefCell<Notes>,
}

impl<'de> DeserializeSeed<'de> for MetricsSeed<'_> {
    type Value = Vec<ScrapeFamily>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for MetricsSeed<'_> {
    type Value = Vec<ScrapeFamily>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object of metric families")
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out: Vec<ScrapeFamily> = Vec::new();
        // Occurrences of each kept family key so far (a key may repeat; its samples merge),
        // and of keys whose samples were all legacy summaries (rare; not kept).
        let mut occurrences: Vec<usize> = Vec::new();
        let mut summaries_only: Vec<(String, usize)> = Vec::new();
        while let Some(KeyName(name)) = map.next_key::<KeyName>()? {
            if !self.filter.wants(&name) {
                map.next_value::<IgnoredAny>()?;
                self.seen.skipped.insert(name);
                continue;
            }
            let known = out.iter().position(|f| f.name == name);
            let nth = known.and_then(|i| occurrences.get(i).copied()).unwrap_or(0)
                + summaries_only
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map_or(0, |(_, c)| *c);
            let samples = map.next_value_seed(SamplesSeed {
                counter: self.seen.is_counter(&name),
                family: &name,
                nth,
                notes: self.notes,
            })?;
            if samples.samples.is_empty() && samples.skipped_summaries > 0 {
                match summaries_only.iter_mut().find(|(n, _)| *n == name) {
                    Some((_, c)) => *c += 1,
                    None => summaries_only.push((name, 1)),
                }
                continue;
            }
            match known.and_then(|i| Some((out.get_mut(i)?, occurrences.get_mut(i)?))) {
                Some((f, n)) => {
                    f.samples.extend(samples.samples);
                    *n += 1;
                }
                None => {
                    out.push(ScrapeFamily {
                        name,
                        metric_type: None,
                        help: None,
                        samples: samples.samples,
                    });
                    occurrences.push(1);
                }
            }
        }
        Ok(out)
    }
}

struct FamilySamples {
    samples: Vec<Sample>,
    skipped_summaries: usize,
}

/// One family's samples; `counter` when its name makes it a counter.
struct SamplesSeed<'a> {
    counter: bool,
    family: &'a str,
    nth: usize,
    notes: &'a RefCell<Notes>,
}

impl<'de> DeserializeSeed<'de> for SamplesSeed<'_> {
    type Value = FamilySamples;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<FamilySamples, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for SamplesSeed<'_> {
    type Value = FamilySamples;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of samples")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<FamilySamples, A::Error> {
        let mut out = FamilySamples {
            samples: Vec::new(),
            skipped_summaries: 0,
        };
        let mut index = 0usize;
        loop {
            let at = || SampleAt {
                family: self.family.to_string(),
                nth: self.nth,
                index,
            };
            let seed = SampleSeed {
                counter: self.counter,
                notes: self.notes,
                at: &at,
            };
            match seq.next_element_seed(seed)? {
                None => return Ok(out),
                Some(Some(sample)) => out.samples.push(sample),
                Some(None) => out.skipped_summaries += 1,
            }
            index += 1;
        }
    }
}

/// One sample; `None` for a legacy summary sample (skipped). Counts are checked once the
/// whole sample is read (a `count` is a histogram's only when `buckets` come with it).
struct SampleSeed<'a> {
    counter: bool,
    notes: &'a RefCell<Notes>,
    /// Where the sample is (built only when a note needs it).
    at: &'a dyn Fn() -> SampleAt,
}

impl<'de> DeserializeSeed<'de> for SampleSeed<'_> {
    type Value = Option<Sample>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Option<Sample>, D::Error> {
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
}

impl<'de> Visitor<'de> for SampleSeed<'_> {
    type Value = Option<Sample>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a sample object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<Sample>, A::Error> {
        let mut labels: Option<Labels> = None;
        let mut value: Option<f64> = None;
        // The bucket key as written (`buckets`, or legacy `histogram`) and the buckets.
        let mut buckets: Option<(&'static str, Vec<Bucket>)> = None;
        let mut sum: Option<f64> = None;
        let mut count: Option<f64> = None;
        let mut summary = false;
        while let Some(KeyName(key)) = map.next_key::<KeyName>()? {
            match key.as_str() {
                "labels" => labels = map.next_value::<Option<Labels>>()?,
                "value" => value = Some(map.next_value::<NullableF64>()?.0),
                "buckets" | "histogram" => {
                    if buckets.is_some() {
                        return Err(de::Error::custom(
                            "sample has both `buckets` and `histogram`",
                        ));
                    }
                    let name = if key == "buckets" {
                        "buckets"
                    } else {
                        "histogram"
                    };
                    buckets = Some((name, map.next_value::<BucketList>()?.0))
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
        let labels = labels.unwrap_or_default();
        let value = if let Some((key, buckets)) = buckets {
            for (j, b) in buckets.iter().enumerate() {
                if count::too_large(b.count) {
                    let nth = buckets.iter().take(j).filter(|o| o.le == b.le).count();
                    let below = OwnedPath::default().key(key, 0).key(&b.le, nth);
                    return Err(self.refuse(below, "histogram bucket count", b.count));
                }
            }
            if let Some(c) = count.filter(|c| count::too_large(*c)) {
                let below = OwnedPath::default().key("count", 0);
                return Err(self.refuse(below, "histogram count", c));
            }
            SampleValue::Histogram {
                buckets,
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
            SampleValue::Scalar { value }
        } else if summary {
            return Ok(None);
        } else {
            return Err(de::Error::custom(
                "sample has neither `value` nor `buckets` (or legacy `histogram`)",
            ));
        };
        Ok(Some(Sample { labels, value }))
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
struct BucketList(Vec<Bucket>);

impl<'de> Deserialize<'de> for BucketList {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = BucketList;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object of `le` → cumulative count")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<BucketList, A::Error> {
                let mut out = Vec::new();
                while let Some((KeyName(le), NullableF64(count))) =
                    map.next_entry::<KeyName, NullableF64>()?
                {
                    out.push(Bucket { le, count });
                }
                Ok(BucketList(out))
            }
        }
        d.deserialize_map(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let f = &set.scrapes[0].families;
        assert!(matches!(f[0].samples[0].value, SampleValue::Scalar { value } if value.is_nan()));
        assert!(matches!(
            &f[1].samples[0].value,
            SampleValue::Histogram { sum: None, count: Some(c), .. } if *c == 2.0
        ));
    }
}
