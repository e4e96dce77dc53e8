//! The fast reading of a scrape line: the common shape (strings without escapes, scalar
//! samples of the wanted families) read by hand instead of through serde's visitors, which
//! were two thirds of reading a scrape JSONL. Anything else gives `None` and the line is read
//! by the visitors, which also say what is wrong with a line: an escape in any string, a
//! wanted family's histogram or summary sample (or one with a repeated key, or a value at or
//! above 2^53, or a number no `f64` holds), a repeated record key, nesting deeper than
//! the cursor follows ([`Cursor`]).
//!
//! Two rules keep the two readings the same. Only text serde_json accepts is accepted: every
//! token of the line is checked against the JSON grammar (the skipped families' too), and
//! nothing is changed until it is. Then the line's families and samples make the same calls
//! on [`Ctx`], in the same order, as the visitors do; a sample refused there (labels that
//! are not a map of strings) stops the line after calls the visitors make too, and they
//! make them again, to the same effect, before they refuse it.

use super::{Ctx, RawRecord, ReadSample, ReadValue, SampleLabels, Timestamp};
use crate::model::Phase;
use crate::read::count;
use crate::read::json_cursor::Cursor;
use std::ops::Range;

/// A line's families and samples as found, before any is taken (kept between lines for
/// their allocations).
#[derive(Default)]
pub(super) struct Scratch {
    families: Vec<Family>,
    samples: Vec<Sample>,
}

/// A key of `metrics`: its name, and its samples when they are all scalar samples read here.
struct Family {
    name: Range<usize>,
    samples: Option<Range<usize>>,
}

struct Sample {
    /// The labels' JSON text (`None`: absent or `null`).
    labels: Option<Range<usize>>,
    value: Value,
}

/// A sample's value as a lean reading keeps it (see [`super::BucketsSeed`]).
#[derive(Clone, Copy)]
enum Value {
    /// `null` is NaN, as the visitors read it.
    Scalar(f64),
    /// The buckets were checked, not kept.
    Histogram {
        sum: Option<f64>,
        count: Option<f64>,
    },
}

/// The record's own fields.
#[derive(Default)]
struct Head {
    endpoint_url: Option<Range<usize>>,
    timestamp_ns: Option<u64>,
    phase: Option<Phase>,
    has_phase: bool,
    has_metrics: bool,
}

/// Reads `text` into `ctx` as the visitors would; `None`: the visitors must read it.
pub(super) fn record(text: &str, ctx: &mut Ctx<'_>) -> Option<RawRecord> {
    let mut scratch = std::mem::take(&mut ctx.line.fast);
    scratch.families.clear();
    scratch.samples.clear();
    let lean = ctx.filter.is_lean();
    let read = find(text, lean, &mut scratch).and_then(|head| take(text, head, &scratch, ctx));
    ctx.line.fast = scratch;
    read
}

/// Checks the whole line and finds its parts; changes nothing outside `scratch`. `lean`:
/// histogram samples are read (a lean reading keeps their sum and count only).
fn find(text: &str, lean: bool, scratch: &mut Scratch) -> Option<Head> {
    let mut c = Cursor::new(text.as_bytes());
    let mut head = Head::default();
    c.open(b'{')?;
    if !c.close(b'}') {
        loop {
            let key = c.key()?;
            match c.b.get(key)? {
                b"endpoint_url" if head.endpoint_url.is_none() => {
                    head.endpoint_url = Some(c.string()?);
                }
                b"timestamp_ns" if head.timestamp_ns.is_none() => {
                    head.timestamp_ns = Some(c.u64()?);
                }
                b"benchmark_phase" if !head.has_phase => {
                    head.has_phase = true;
                    head.phase = if c.null() {
                        None
                    } else {
                        let s = c.string()?;
                        Some(Phase::parse(text.get(s)?)?)
                    };
                }
                b"metrics" if !head.has_metrics => {
                    head.has_metrics = true;
                    metrics(&mut c, lean, scratch)?;
                }
                b"endpoint_url" | b"timestamp_ns" | b"benchmark_phase" | b"metrics" => {
                    return None;
                }
                _ => c.skip_value(1)?,
            }
            if !c.next(b'}')? {
                break;
            }
        }
    }
    c.at_end().then_some(head)
}

/// Makes the line's calls on `ctx`: the families in order, each one's samples in order.
fn take(text: &str, head: Head, scratch: &Scratch, ctx: &mut Ctx<'_>) -> Option<RawRecord> {
    let endpoint_url = text.get(head.endpoint_url?)?.to_string();
    let timestamp_ns = head.timestamp_ns?;
    if !head.has_metrics {
        return None;
    }
    for (position, family) in scratch.families.iter().enumerate() {
        let Some(open) = ctx.open_family(position, text.get(family.name.clone())?) else {
            continue;
        };
        let samples = scratch.samples.get(family.samples.clone()?)?;
        for (index, s) in samples.iter().enumerate() {
            let labels = match &s.labels {
                Some(r) => Some(text.get(r.clone())?),
                None => None,
            };
            let value = match s.value {
                Value::Scalar(v) => ReadValue::Scalar(v),
                Value::Histogram { sum, count } => ReadValue::Histogram {
                    les: Vec::new(),
                    counts: Vec::new(),
                    sum,
                    count,
                },
            };
            let sample = ReadSample {
                labels: SampleLabels::Text(labels),
                value,
            };
            ctx.push_sample(&open, index, sample).ok()?;
        }
        ctx.close_family(&open, 0);
    }
    Some(RawRecord {
        endpoint_url: Some(endpoint_url),
        timestamp: Some(Timestamp::Ok(timestamp_ns)),
        phase: head.phase,
        has_metrics: true,
    })
}

/// `metrics`: each family's key and samples into `scratch`.
fn metrics(c: &mut Cursor<'_>, lean: bool, scratch: &mut Scratch) -> Option<()> {
    c.open(b'{')?;
    if c.close(b'}') {
        return Some(());
    }
    loop {
        let name = c.key()?;
        let start = scratch.samples.len();
        let samples =
            samples(c, lean, &mut scratch.samples)?.then_some(start..scratch.samples.len());
        scratch.families.push(Family { name, samples });
        if !c.next(b'}')? {
            return Some(());
        }
    }
}

/// A family's value: `true` when it is an array of scalar samples, all pushed to `out`;
/// `false` when it is other valid JSON.
fn samples(c: &mut Cursor<'_>, lean: bool, out: &mut Vec<Sample>) -> Option<bool> {
    c.ws();
    if c.peek()? != b'[' {
        c.skip_value(3)?;
        return Some(false);
    }
    c.i += 1;
    if c.close(b']') {
        return Some(true);
    }
    let mut scalar = true;
    loop {
        c.ws();
        if c.peek()? == b'{' {
            match sample(c, lean)? {
                Some(s) => out.push(s),
                None => scalar = false,
            }
        } else {
            c.skip_value(4)?;
            scalar = false;
        }
        if !c.next(b']')? {
            return Some(scalar);
        }
    }
}

/// A sample object: `Some(sample)` for a scalar sample, or (lean) a histogram sample, as
/// the visitors read it (other keys ignored); `None` inside when it is valid JSON but
/// left to them.
fn sample(c: &mut Cursor<'_>, lean: bool) -> Option<Option<Sample>> {
    c.open(b'{')?;
    let mut labels: Option<Option<Range<usize>>> = None;
    let mut value: Option<f64> = None;
    let (mut has_buckets, mut sum, mut count) = (false, None, None);
    let mut readable = true;
    if !c.close(b'}') {
        loop {
            let key = c.key()?;
            c.ws();
            let start = c.i;
            let read = match c.b.get(key)? {
                b"labels" if labels.is_none() => match c.peek()? {
                    b'{' => {
                        c.skip_value(5)?;
                        labels = Some(Some(start..c.i));
                        true
                    }
                    _ => {
                        labels = Some(None);
                        c.null()
                    }
                },
                b"value" if value.is_none() => {
                    value = c.value().filter(|v| !count::too_large(*v));
                    value.is_some()
                }
                b"buckets" | b"histogram" if lean && !has_buckets => {
                    has_buckets = true;
                    buckets(c)
                }
                b"sum" if sum.is_none() => {
                    sum = c.optional_value();
                    sum.is_some()
                }
                b"count" if count.is_none() => {
                    count = c.optional_value();
                    count.is_some_and(|c| !c.is_some_and(count::too_large))
                }
                b"labels" | b"value" | b"buckets" | b"histogram" | b"sum" | b"count"
                | b"summary" => false,
                _ => {
                    c.skip_value(5)?;
                    true
                }
            };
            if !read {
                // Read again as any value: the sample is the visitors', the line may
                // still be valid JSON.
                c.i = start;
                c.skip_value(5)?;
                readable = false;
            }
            if !c.next(b'}')? {
                break;
            }
        }
    }
    let value = match (value, has_buckets) {
        (Some(v), false) => Value::Scalar(v),
        (None, true) => Value::Histogram {
            sum: sum.flatten(),
            count: count.flatten(),
        },
        _ => return Some(None),
    };
    Some(readable.then_some(Sample {
        labels: labels.flatten(),
        value,
    }))
}

/// A histogram's buckets checked as a lean reading checks them: `true` when each is
/// `le: count` with a count (or `null`) below 2^53.
fn buckets(c: &mut Cursor<'_>) -> bool {
    if c.open(b'{').is_none() {
        return false;
    }
    if c.close(b'}') {
        return true;
    }
    loop {
        if c.key().is_none() {
            return false;
        }
        if c.value().is_none_or(count::too_large) {
            return false;
        }
        match c.next(b'}') {
            Some(true) => {}
            Some(false) => return true,
            None => return false,
        }
    }
}
