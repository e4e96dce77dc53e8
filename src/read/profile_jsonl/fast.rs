//! The fast reading of a profile record: the common shape (strings without escapes, the
//! fields' usual types) read by hand instead of through the derived parsers, and with it
//! whether the line holds a `null` (the era; the text search for it was a tenth of reading a
//! profile JSONL in WebAssembly). Anything else gives `None` and the line is read by serde,
//! which also says what is wrong with a line: an escape in any string, a field of another
//! type than its usual one (a negative or fractional timestamp or count, a string where a
//! number is usual), a repeated field, nesting deeper than the cursor follows.
//!
//! The record read here is the one the derived parsers give: only text serde_json accepts
//! is accepted ([`Cursor`] checks every token), unknown keys are passed over at every level
//! as the derive passes them, `null` is `None` for every field.

use super::{ErrorDe, LineDe, MetaDe, MetricDe, MetricsDe};
use crate::read::json_cursor::Cursor;
use serde_json::{Number, Value};
use std::borrow::Cow;

/// The record on `text`, and whether the text holds a `null` token; `None`: serde reads it.
pub(super) fn record(text: &str) -> Option<(LineDe<'_>, bool)> {
    let mut c = Cursor::new(text.as_bytes());
    let mut line = LineDe::default();
    let mut seen = Seen::default();
    object(&mut c, |c, key| {
        match key {
            b"metadata" => seen.set(0, &mut line.metadata, optional(c, |c| meta(c, text)))?,
            b"metrics" => seen.set(1, &mut line.metrics, optional(c, metrics))?,
            b"error" => seen.set(2, &mut line.error, optional(c, |c| error(c, text)))?,
            _ => c.skip_value(1)?,
        }
        Some(())
    })?;
    c.at_end().then_some((line, c.saw_null))
}

/// The fields of one object met so far (the derive refuses a repeated field).
#[derive(Default)]
struct Seen(u16);

impl Seen {
    /// Field `n` is met; `None` when it was met before.
    fn first(&mut self, n: u32) -> Option<()> {
        let bit = 1u16.checked_shl(n)?;
        let new = self.0 & bit == 0;
        self.0 |= bit;
        new.then_some(())
    }

    /// Field `n` met, its value `read` (`None` inside: `null`) into `slot`; `None` when the
    /// field was met before or its value is left to serde.
    fn set<T>(&mut self, n: u32, slot: &mut Option<T>, read: Option<Option<T>>) -> Option<()> {
        self.first(n)?;
        *slot = read?;
        Some(())
    }
}

/// An object, each member's key handed to `member`, which reads its value.
fn object<'a>(
    c: &mut Cursor<'a>,
    mut member: impl FnMut(&mut Cursor<'a>, &[u8]) -> Option<()>,
) -> Option<()> {
    c.open(b'{')?;
    if c.close(b'}') {
        return Some(());
    }
    loop {
        let key = c.key()?;
        let b = c.b;
        member(c, b.get(key)?)?;
        if !c.next(b'}')? {
            return Some(());
        }
    }
}

/// `Option<T>` as serde reads it: `null` is `None`.
fn optional<'a, T>(
    c: &mut Cursor<'a>,
    read: impl FnOnce(&mut Cursor<'a>) -> Option<T>,
) -> Option<Option<T>> {
    if c.null() {
        Some(None)
    } else {
        read(c).map(Some)
    }
}

/// A string without escapes, borrowed from the line.
fn text_value<'t>(c: &mut Cursor<'_>, text: &'t str) -> Option<Cow<'t, str>> {
    let r = c.string()?;
    text.get(r).map(Cow::Borrowed)
}

fn meta<'t>(c: &mut Cursor<'_>, text: &'t str) -> Option<MetaDe<'t>> {
    let mut m = MetaDe::default();
    let mut seen = Seen::default();
    // Epoch nanoseconds as serde_json's `Number` holds a non-negative integer.
    let ns = |c: &mut Cursor<'_>| c.u64().map(Number::from);
    let string = |c: &mut Cursor<'_>| text_value(c, text);
    object(c, |c, key| {
        match key {
            b"benchmark_phase" => seen.set(0, &mut m.benchmark_phase, optional(c, string))?,
            b"credit_phase" => seen.set(1, &mut m.credit_phase, optional(c, string))?,
            b"request_start_ns" => seen.set(2, &mut m.request_start_ns, optional(c, ns))?,
            b"request_end_ns" => seen.set(3, &mut m.request_end_ns, optional(c, ns))?,
            b"timestamp_ns" => seen.set(4, &mut m.timestamp_ns, optional(c, ns))?,
            b"was_cancelled" => seen.set(5, &mut m.was_cancelled, optional(c, Cursor::bool))?,
            b"conversation_id" => seen.set(6, &mut m.conversation_id, optional(c, string))?,
            b"turn_index" => seen.set(
                7,
                &mut m.turn_index,
                optional(c, |c| c.u64().and_then(|n| u32::try_from(n).ok())),
            )?,
            b"x_correlation_id" => seen.set(8, &mut m.x_correlation_id, optional(c, string))?,
            _ => c.skip_value(2)?,
        }
        Some(())
    })?;
    Some(m)
}

fn metrics(c: &mut Cursor<'_>) -> Option<MetricsDe> {
    let mut m = MetricsDe::default();
    let mut seen = Seen::default();
    object(c, |c, key| {
        match key {
            b"usage_prompt_tokens" => {
                seen.set(0, &mut m.usage_prompt_tokens, optional(c, metric))?
            }
            b"input_sequence_length" => {
                seen.set(1, &mut m.input_sequence_length, optional(c, metric))?
            }
            b"output_sequence_length" => {
                seen.set(2, &mut m.output_sequence_length, optional(c, metric))?
            }
            b"request_latency" => seen.set(3, &mut m.request_latency, optional(c, metric))?,
            _ => c.skip_value(2)?,
        }
        Some(())
    })?;
    Some(m)
}

/// A metric: its `value` a non-negative number (an integer as `u64`, as serde_json reads it;
/// the rest as `f64`).
fn metric(c: &mut Cursor<'_>) -> Option<MetricDe> {
    let mut value = None;
    let mut seen = Seen::default();
    object(c, |c, key| {
        if key == b"value" {
            seen.set(0, &mut value, optional(c, number))?;
        } else {
            c.skip_value(3)?;
        }
        Some(())
    })?;
    Some(MetricDe { value })
}

fn number(c: &mut Cursor<'_>) -> Option<Value> {
    c.ws();
    let start = c.i;
    if let Some(n) = c.u64() {
        return Some(Value::from(n));
    }
    c.i = start;
    if c.peek()? == b'-' {
        return None;
    }
    c.value().map(Value::from)
}

fn error<'t>(c: &mut Cursor<'_>, text: &'t str) -> Option<ErrorDe<'t>> {
    let mut e = ErrorDe::default();
    let mut seen = Seen::default();
    let string = |c: &mut Cursor<'_>| text_value(c, text);
    object(c, |c, key| {
        match key {
            b"code" => seen.set(
                0,
                &mut e.code,
                optional(c, |c| c.u64().and_then(|n| i64::try_from(n).ok())),
            )?,
            b"type" => seen.set(1, &mut e.error_type, optional(c, string))?,
            b"message" => seen.set(2, &mut e.message, optional(c, string))?,
            _ => c.skip_value(2)?,
        }
        Some(())
    })?;
    Some(e)
}
