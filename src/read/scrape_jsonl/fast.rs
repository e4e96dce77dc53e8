//! The fast reading of a scrape line: the common shape (strings without escapes, scalar
//! samples of the wanted families) read by hand instead of through serde's visitors, which
//! were two thirds of reading a scrape JSONL. Anything else gives `None` and the line is read
//! by the visitors, which also say what is wrong with a line: an escape in any string, a
//! wanted family's histogram or summary sample (or one with a repeated key, or a value at or
//! above 2^53, or a number no `f64` holds), a repeated record key, nesting deeper than
//! [`MAX_DEPTH`].
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
use std::ops::Range;

/// Nesting the fast reading follows (serde_json refuses beyond 128).
const MAX_DEPTH: u32 = 64;

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
    let mut c = Cursor {
        b: text.as_bytes(),
        i: 0,
        lean,
    };
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
                    head.timestamp_ns = Some(c.timestamp()?);
                }
                b"benchmark_phase" if !head.has_phase => {
                    head.has_phase = true;
                    head.phase = if c.literal(b"null") {
                        None
                    } else {
                        let s = c.string()?;
                        Some(Phase::parse(text.get(s)?)?)
                    };
                }
                b"metrics" if !head.has_metrics => {
                    head.has_metrics = true;
                    c.metrics(scratch)?;
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
    c.ws();
    (c.i == c.b.len()).then_some(head)
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

/// A position in a line; every method checks the grammar and gives `None` where the text
/// leaves the shape read here.
struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
    /// Histogram samples are read (see [`find`]).
    lean: bool,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    /// JSON's whitespace.
    fn ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        self.ws();
        (self.peek() == Some(c)).then(|| self.i += 1)
    }

    fn open(&mut self, c: u8) -> Option<()> {
        self.eat(c)
    }

    /// The container ends here (an empty one, right after its opening).
    fn close(&mut self, c: u8) -> bool {
        self.eat(c).is_some()
    }

    /// After a member: `true` at a `,` (another follows), `false` at the closing `end`.
    fn next(&mut self, end: u8) -> Option<bool> {
        self.ws();
        match self.peek()? {
            b',' => {
                self.i += 1;
                Some(true)
            }
            c if c == end => {
                self.i += 1;
                Some(false)
            }
            _ => None,
        }
    }

    /// An object key and its colon: the key's range.
    fn key(&mut self) -> Option<Range<usize>> {
        let key = self.string()?;
        self.eat(b':')?;
        Some(key)
    }

    fn literal(&mut self, word: &[u8]) -> bool {
        self.ws();
        let hit = self.b.get(self.i..self.i + word.len()) == Some(word);
        if hit {
            self.i += word.len();
        }
        hit
    }

    /// A string without escapes or control characters: the range of its contents.
    fn string(&mut self) -> Option<Range<usize>> {
        self.eat(b'"')?;
        let start = self.i;
        // Eight bytes at a time: the lowest byte flagged as a quote, a backslash or a control
        // character is one (a borrow may flag bytes above it, never below).
        while let Some(word) = self.b.get(self.i..self.i + 8) {
            let w = u64::from_le_bytes(word.try_into().ok()?);
            const ONES: u64 = u64::MAX / 255;
            let ctrl = w.wrapping_sub(ONES * 0x20) & !w;
            let q = w ^ (ONES * u64::from(b'"'));
            let quote = q.wrapping_sub(ONES) & !q;
            let s = w ^ (ONES * u64::from(b'\\'));
            let slash = s.wrapping_sub(ONES) & !s;
            let flagged = (ctrl | quote | slash) & (ONES << 7);
            if flagged == 0 {
                self.i += 8;
                continue;
            }
            self.i += (flagged.trailing_zeros() / 8) as usize;
            return self.string_end(start);
        }
        while let Some(c) = self.peek() {
            if c == b'"' || c == b'\\' || c < 0x20 {
                return self.string_end(start);
            }
            self.i += 1;
        }
        None
    }

    /// At the first byte of a string that is not plain text: its end, or `None` at an
    /// escape or a control character.
    fn string_end(&mut self, start: usize) -> Option<Range<usize>> {
        (self.peek()? == b'"').then(|| {
            self.i += 1;
            start..self.i - 1
        })
    }

    /// A number in JSON's grammar: its text's range.
    fn number(&mut self) -> Option<Range<usize>> {
        self.ws();
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek()? {
            b'0' => self.i += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            self.some_digits()?;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            self.some_digits()?;
        }
        Some(start..self.i)
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
    }

    fn some_digits(&mut self) -> Option<()> {
        let start = self.i;
        self.digits();
        (self.i > start).then_some(())
    }

    /// `timestamp_ns`: an integer that fits `u64` (anything else the visitors say is wrong).
    fn timestamp(&mut self) -> Option<u64> {
        let r = self.number()?;
        let digits = self.b.get(r)?;
        if !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(digits).ok()?.parse().ok()
    }

    /// A sample's `value`: a number as `f64` (NaN for `null`); `None` when no finite `f64`
    /// holds it (serde_json refuses it).
    fn value(&mut self) -> Option<f64> {
        self.ws();
        if self.peek()? == b'n' {
            return self.literal(b"null").then_some(f64::NAN);
        }
        let start = self.i;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.i += 1;
        }
        // The common decimal is read as it is checked (see [`to_f64`]).
        let mut mantissa = 0u64;
        let mut digits = 0u32;
        match self.peek()? {
            b'0' => {
                self.i += 1;
                digits = 1;
            }
            b'1'..=b'9' => self.accumulate(&mut mantissa, &mut digits),
            _ => return None,
        }
        let mut scale = 0u32;
        if self.peek() == Some(b'.') {
            self.i += 1;
            let before = digits;
            self.accumulate(&mut mantissa, &mut digits);
            scale = digits - before;
            if scale == 0 {
                return None;
            }
        }
        let v = if let Some(b'e' | b'E') = self.peek() {
            self.i = start;
            let r = self.number()?;
            to_f64(self.b.get(r)?)?
        } else {
            let power = POW10
                .get(scale as usize)
                .filter(|_| digits <= 19 && mantissa <= 1 << 53);
            match power {
                // Both operands are exact, so the quotient is the correctly rounded value.
                Some(p) => {
                    let v = mantissa as f64 / p;
                    if negative {
                        -v
                    } else {
                        v
                    }
                }
                None => std::str::from_utf8(self.b.get(start..self.i)?)
                    .ok()?
                    .parse()
                    .ok()?,
            }
        };
        v.is_finite().then_some(v)
    }

    /// Digits, into `mantissa` while it cannot overflow (`digits` counts them all).
    fn accumulate(&mut self, mantissa: &mut u64, digits: &mut u32) {
        while let Some(c @ b'0'..=b'9') = self.peek() {
            if *digits < 19 {
                *mantissa = *mantissa * 10 + u64::from(c - b'0');
            }
            *digits += 1;
            self.i += 1;
        }
    }

    /// Any JSON value, checked and passed over; `depth`: the containers it is inside.
    fn skip_value(&mut self, depth: u32) -> Option<()> {
        self.ws();
        match self.peek()? {
            b'"' => {
                self.string()?;
            }
            b'{' => {
                self.nest(depth)?;
                self.i += 1;
                if !self.close(b'}') {
                    loop {
                        self.key()?;
                        self.skip_value(depth + 1)?;
                        if !self.next(b'}')? {
                            break;
                        }
                    }
                }
            }
            b'[' => {
                self.nest(depth)?;
                self.i += 1;
                if !self.close(b']') {
                    loop {
                        self.skip_value(depth + 1)?;
                        if !self.next(b']')? {
                            break;
                        }
                    }
                }
            }
            b't' => self.literal(b"true").then_some(())?,
            b'f' => self.literal(b"false").then_some(())?,
            b'n' => self.literal(b"null").then_some(())?,
            _ => {
                self.number()?;
            }
        }
        Some(())
    }

    fn nest(&self, depth: u32) -> Option<()> {
        (depth < MAX_DEPTH).then_some(())
    }

    /// `metrics`: each family's key and samples into `scratch`.
    fn metrics(&mut self, scratch: &mut Scratch) -> Option<()> {
        self.open(b'{')?;
        if self.close(b'}') {
            return Some(());
        }
        loop {
            let name = self.key()?;
            let start = scratch.samples.len();
            let samples = self
                .samples(&mut scratch.samples)?
                .then_some(start..scratch.samples.len());
            scratch.families.push(Family { name, samples });
            if !self.next(b'}')? {
                return Some(());
            }
        }
    }

    /// A family's value: `true` when it is an array of scalar samples, all pushed to `out`;
    /// `false` when it is other valid JSON.
    fn samples(&mut self, out: &mut Vec<Sample>) -> Option<bool> {
        self.ws();
        if self.peek()? != b'[' {
            self.skip_value(3)?;
            return Some(false);
        }
        self.i += 1;
        if self.close(b']') {
            return Some(true);
        }
        let mut scalar = true;
        loop {
            self.ws();
            if self.peek()? == b'{' {
                match self.sample()? {
                    Some(s) => out.push(s),
                    None => scalar = false,
                }
            } else {
                self.skip_value(4)?;
                scalar = false;
            }
            if !self.next(b']')? {
                return Some(scalar);
            }
        }
    }

    /// A sample object: `Some(sample)` for a scalar sample, or (lean) a histogram sample, as
    /// the visitors read it (other keys ignored); `None` inside when it is valid JSON but
    /// left to them.
    fn sample(&mut self) -> Option<Option<Sample>> {
        self.open(b'{')?;
        let mut labels: Option<Option<Range<usize>>> = None;
        let mut value: Option<f64> = None;
        let (mut buckets, mut sum, mut count) = (false, None, None);
        let mut readable = true;
        if !self.close(b'}') {
            loop {
                let key = self.key()?;
                self.ws();
                let start = self.i;
                let read = match self.b.get(key)? {
                    b"labels" if labels.is_none() => match self.peek()? {
                        b'{' => {
                            self.skip_value(5)?;
                            labels = Some(Some(start..self.i));
                            true
                        }
                        _ => {
                            labels = Some(None);
                            self.literal(b"null")
                        }
                    },
                    b"value" if value.is_none() => {
                        value = self.value().filter(|v| !count::too_large(*v));
                        value.is_some()
                    }
                    b"buckets" | b"histogram" if self.lean && !buckets => {
                        buckets = true;
                        self.buckets()
                    }
                    b"sum" if sum.is_none() => {
                        sum = self.optional_value();
                        sum.is_some()
                    }
                    b"count" if count.is_none() => {
                        count = self.optional_value();
                        count.is_some_and(|c| !c.is_some_and(count::too_large))
                    }
                    b"labels" | b"value" | b"buckets" | b"histogram" | b"sum" | b"count"
                    | b"summary" => false,
                    _ => {
                        self.skip_value(5)?;
                        true
                    }
                };
                if !read {
                    // Read again as any value: the sample is the visitors', the line may
                    // still be valid JSON.
                    self.i = start;
                    self.skip_value(5)?;
                    readable = false;
                }
                if !self.next(b'}')? {
                    break;
                }
            }
        }
        let value = match (value, buckets) {
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

    /// `sum` or `count`: `Some(None)` for `null`, `Some(Some(v))` for a number an `f64`
    /// holds.
    fn optional_value(&mut self) -> Option<Option<f64>> {
        if self.literal(b"null") {
            return Some(None);
        }
        self.value().map(Some)
    }

    /// A histogram's buckets checked as a lean reading checks them: `true` when each is
    /// `le: count` with a count (or `null`) below 2^53.
    fn buckets(&mut self) -> bool {
        if self.open(b'{').is_none() {
            return false;
        }
        if self.close(b'}') {
            return true;
        }
        loop {
            if self.key().is_none() {
                return false;
            }
            if self.value().is_none_or(count::too_large) {
                return false;
            }
            match self.next(b'}') {
                Some(true) => {}
                Some(false) => return true,
                None => return false,
            }
        }
    }
}

/// The powers of ten an `f64` holds exactly.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// A JSON number's text as the nearest `f64` (what serde_json gives with `float_roundtrip`):
/// a decimal of at most 2^53 in digits and at most 22 after the point is one exact division;
/// the rest go through the standard library's parse (correctly rounded too).
fn to_f64(text: &[u8]) -> Option<f64> {
    let (negative, unsigned) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    let mut mantissa = 0u64;
    let mut after_point: Option<i32> = None;
    let mut simple = unsigned.len() <= 19;
    for &c in unsigned {
        match c {
            b'0'..=b'9' if simple => {
                mantissa = mantissa * 10 + u64::from(c - b'0');
                if let Some(n) = after_point.as_mut() {
                    *n += 1;
                }
            }
            b'.' if after_point.is_none() => after_point = Some(0),
            _ => simple = false,
        }
    }
    let power = usize::try_from(after_point.unwrap_or(0))
        .ok()
        .and_then(|p| POW10.get(p));
    if let Some(power) = power.filter(|_| simple && mantissa <= 1 << 53) {
        // Both operands are exact, so the quotient is the correctly rounded value.
        let v = mantissa as f64 / power;
        return Some(if negative { -v } else { v });
    }
    std::str::from_utf8(text).ok()?.parse().ok()
}

/// A number's text as both readings of a number here give it (they must agree).
#[cfg(test)]
pub(super) fn to_f64_for_tests(text: &[u8]) -> Option<f64> {
    let mut c = Cursor {
        b: text,
        i: 0,
        lean: true,
    };
    let read = c.value().filter(|_| c.i == text.len());
    let whole = to_f64(text);
    assert_eq!(read.map(f64::to_bits), whole.map(f64::to_bits));
    whole
}

#[cfg(test)]
mod tests {
    use super::*;

    fn string(text: &str) -> Option<Range<usize>> {
        let mut c = Cursor {
            b: text.as_bytes(),
            i: 0,
            lean: true,
        };
        c.string()
    }

    #[test]
    fn a_string_ends_at_its_first_quote_and_is_refused_at_an_escape_or_control() {
        for n in 0..24 {
            let plain = "é".repeat(n % 3) + &"a".repeat(n);
            let tail = "bcdefghijklmnop\u{7f}";
            assert_eq!(
                string(&format!("\"{plain}\"{tail}\"")),
                Some(1..1 + plain.len()),
                "{n}"
            );
            for special in ['\\', '\u{1}', '\u{1f}', '\n', '\t'] {
                let text = format!("\"{plain}{special}{tail}\"");
                assert_eq!(string(&text), None, "{text:?}");
            }
            assert_eq!(string(&format!("\"{plain}{tail}")), None, "unterminated");
        }
    }
}
