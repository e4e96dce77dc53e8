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
//! Families the filter does not want are skipped token by token without being built.
//! The file is read line by line; only one line is held in memory at a time.

use crate::error::{ErrorCode, Position, ReadError};
use crate::model::{
    Bucket, Labels, Phase, Sample, SampleValue, Scrape, ScrapeFamily, ScrapeSet, ScrapeSource,
};
use crate::read::FamilyFilter;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::collections::BTreeSet;
use std::fmt;

/// Read a `server_metrics_export.jsonl`. See the module docs.
pub fn read_scrapes_jsonl<R: std::io::BufRead>(
    file: &str,
    mut reader: R,
    filter: &FamilyFilter,
) -> Result<ScrapeSet, ReadError> {
    let mut skipped: BTreeSet<String> = BTreeSet::new();
    let mut scrapes = Vec::new();
    let mut buf: Vec<u8> = Vec::new();
    let mut line_no: usize = 0;
    loop {
        buf.clear();
        let n = reader.read_until(b'\n', &mut buf).map_err(|e| {
            ReadError::new(
                ErrorCode::Io,
                file,
                Position::line(line_no + 1),
                e.to_string(),
            )
        })?;
        if n == 0 {
            break;
        }
        line_no += 1;
        if buf.iter().all(|b| b.is_ascii_whitespace()) {
            continue;
        }
        let text = std::str::from_utf8(&buf).map_err(|e| {
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
        scrapes.push(parse_line(file, line_no, text, filter, &mut skipped)?);
    }
    Ok(ScrapeSet {
        source: ScrapeSource::Jsonl,
        scrapes,
        skipped_families: u32::try_from(skipped.len()).unwrap_or(u32::MAX),
    })
}

fn parse_line(
    file: &str,
    line: usize,
    text: &str,
    filter: &FamilyFilter,
    skipped: &mut BTreeSet<String>,
) -> Result<Scrape, ReadError> {
    let mut json = serde_json::Deserializer::from_str(text);
    let mut track = serde_path_to_error::Track::new();
    let seed = RecordSeed { filter, skipped };
    let result = seed
        .deserialize(serde_path_to_error::Deserializer::new(
            &mut json, &mut track,
        ))
        .and_then(|r| json.end().map(|_| r));
    let raw = match result {
        Ok(raw) => raw,
        Err(e) => {
            let path = track.path().to_string();
            let mut err = ReadError::from_json(file, &e, Some(path));
            err.code = ErrorCode::JsonlRecord;
            err.position.line = Some(crate::error::clamp_u32(line));
            if err.position.column.is_none() && e.column() > 0 {
                err.position.column = Some(crate::error::clamp_u32(e.column()));
            }
            return Err(err);
        }
    };
    let bad_ts = |msg: String| {
        let mut pos = Position::line(line);
        pos.json_path = Some("timestamp_ns".to_string());
        ReadError::new(ErrorCode::BadTimestamp, file, pos, msg)
    };
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
    Ok(Scrape {
        endpoint_url,
        timestamp_ns: Some(timestamp_ns),
        phase: raw.phase,
        families,
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
    skipped: &'a mut BTreeSet<String>,
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
                        skipped: &mut *self.skipped,
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
    skipped: &'a mut BTreeSet<String>,
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

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out: Vec<ScrapeFamily> = Vec::new();
        while let Some(KeyName(name)) = map.next_key::<KeyName>()? {
            if !self.filter.wants(&name) {
                map.next_value::<IgnoredAny>()?;
                self.skipped.insert(name);
                continue;
            }
            let samples = map.next_value::<FamilySamples>()?;
            if samples.samples.is_empty() && samples.skipped_summaries > 0 {
                continue;
            }
            match out.iter_mut().find(|f| f.name == name) {
                Some(f) => f.samples.extend(samples.samples),
                None => out.push(ScrapeFamily {
                    name,
                    metric_type: None,
                    help: None,
                    samples: samples.samples,
                }),
            }
        }
        Ok(out)
    }
}

struct FamilySamples {
    samples: Vec<Sample>,
    skipped_summaries: usize,
}

impl<'de> Deserialize<'de> for FamilySamples {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = FamilySamples;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array of samples")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<FamilySamples, A::Error> {
                let mut out = FamilySamples {
                    samples: Vec::new(),
                    skipped_summaries: 0,
                };
                while let Some(s) = seq.next_element::<RawSample>()? {
                    match s.0 {
                        Some(sample) => out.samples.push(sample),
                        None => out.skipped_summaries += 1,
                    }
                }
                Ok(out)
            }
        }
        d.deserialize_seq(V)
    }
}

/// One sample; `None` for a legacy summary sample (skipped).
struct RawSample(Option<Sample>);

impl<'de> Deserialize<'de> for RawSample {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(SampleVisitor)
    }
}

struct SampleVisitor;

impl<'de> Visitor<'de> for SampleVisitor {
    type Value = RawSample;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a sample object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawSample, A::Error> {
        let mut labels: Option<Labels> = None;
        let mut value: Option<f64> = None;
        let mut buckets: Option<Vec<Bucket>> = None;
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
                    buckets = Some(map.next_value::<BucketList>()?.0)
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
        let value = if let Some(buckets) = buckets {
            SampleValue::Histogram {
                buckets,
                sum,
                count,
            }
        } else if let Some(value) = value {
            SampleValue::Scalar { value }
        } else if summary {
            return Ok(RawSample(None));
        } else {
            return Err(de::Error::custom(
                "sample has neither `value` nor `buckets` (or legacy `histogram`)",
            ));
        };
        Ok(RawSample(Some(Sample { labels, value })))
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
