//! A counter's timeslice in its common shape, read by hand ([`Cursor`]) in a lean read:
//! deriving [`super::RawTimeslice`] through serde_json was four-tenths of reading an export.
//! The shape read here is an object of keys without escapes: `start_ns` and `end_ns` as
//! non-negative integers, the flag `is_complete` as a boolean or `null`, the stat fields as
//! numbers or `null`, and any other member passed over (as the derive ignores it). Anything
//! else gives `None` and serde_json reads the slice, which also says what is wrong with it:
//! a repeated or missing field, `buckets`, a count at or above 2^53 (by the family's type, as
//! [`super::checks`] decides), a number no `f64` holds, a key with an escape, nesting
//! deeper than the cursor follows, or a slice not followed by a delimiter in the bytes at
//! hand. The cursor accepts only text serde_json accepts, and its numbers are serde_json's.

use crate::model::MetricType;
use crate::read::count;
use crate::read::json_cursor::Cursor;

/// A timeslice as a lean read keeps it.
pub(super) struct Slice {
    pub start_ns: u64,
    pub end_ns: u64,
    pub total: Option<f64>,
}

/// Every field of [`super::RawTimeslice`]: a repeat of any of them is serde's error.
const FIELDS: [&[u8]; 11] = [
    b"start_ns",
    b"end_ns",
    b"is_complete",
    b"total",
    b"rate",
    b"avg",
    b"min",
    b"max",
    b"count",
    b"sum",
    b"buckets",
];

/// The timeslice at the start of `bytes`, in a family of type `kind`, and its length in
/// bytes; `None` when serde_json must read it.
pub(super) fn counter_slice(bytes: &[u8], kind: MetricType) -> Option<(Slice, usize)> {
    let mut c = Cursor::indented(bytes);
    c.open(b'{')?;
    let (mut start_ns, mut end_ns, mut total) = (None, None, None);
    let mut seen = 0u16;
    loop {
        let key = c.key()?;
        let name = bytes.get(key)?;
        match FIELDS.iter().position(|f| *f == name) {
            Some(k) if seen & (1 << k) != 0 => return None,
            Some(k) => seen |= 1 << k,
            None => c.skip_value(1)?,
        }
        match name {
            b"start_ns" => start_ns = Some(c.u64()?),
            b"end_ns" => end_ns = Some(c.u64()?),
            // A `null` is read by the guard itself.
            b"is_complete" if !c.null() => {
                c.bool()?;
            }
            b"buckets" => return None,
            b"total" | b"rate" | b"avg" | b"min" | b"max" | b"count" | b"sum" => {
                let v = c.optional_value()?;
                let counted = match name {
                    b"total" => kind == MetricType::Counter,
                    b"count" => kind == MetricType::Histogram,
                    _ => false,
                };
                if counted && v.is_some_and(count::too_large) {
                    return None;
                }
                if name == b"total" {
                    total = v;
                }
            }
            _ => {}
        }
        if !c.next(b'}')? {
            break;
        }
    }
    let delimited = matches!(
        bytes.get(c.i),
        Some(b' ' | b'\n' | b'\t' | b'\r' | b',' | b']' | b'}')
    );
    let slice = Slice {
        start_ns: start_ns?,
        end_ns: end_ns?,
        total,
    };
    delimited.then_some((slice, c.i))
}

#[cfg(test)]
mod tests {
    use super::super::{checks, total, RawTimeslice};
    use super::*;

    /// What serde_json makes of the slice at the start of `text` (as `parse_in` reads it):
    /// its bounds and total, and its length.
    fn by_serde(text: &str, kind: MetricType) -> Option<(u64, u64, Option<f64>, usize)> {
        let _counting = checks::Counting::set(Some(kind));
        let mut stream = serde_json::Deserializer::from_str(text).into_iter::<RawTimeslice>();
        let t = stream.next()?.ok()?;
        Some((t.start_ns, t.end_ns, total(t.total), stream.byte_offset()))
    }

    fn by_hand(text: &str, kind: MetricType) -> Option<(u64, u64, Option<f64>, usize)> {
        let (s, took) = counter_slice(text.as_bytes(), kind)?;
        Some((s.start_ns, s.end_ns, s.total, took))
    }

    /// Where the hand reading takes a slice, serde_json reads the same one; the common shapes
    /// are taken; everything serde_json refuses or that needs its reading is left to it.
    #[test]
    fn a_slice_read_by_hand_is_the_one_serde_json_reads() {
        let big = "9007199254740993";
        let members = [
            r#""start_ns": 1781635329142036427"#,
            r#""end_ns": 1781635330142036427"#,
            r#""total": 135.0"#,
            r#""total": null"#,
            r#""total": 1e3"#,
            &format!(r#""total": {big}"#),
            r#""rate": 0.5"#,
            r#""avg": -0.0"#,
            r#""min": null"#,
            r#""count": 9007199254740993.0"#,
            r#""sum": 2.675"#,
            r#""is_complete": false"#,
            r#""is_complete": null"#,
            r#""buckets": {"0.5": 1}"#,
            r#""note": {"a": [1, "x", null, {"b": true}]}"#,
            r#""note": 1"#,
            r#""start\u005fns": 5"#,
            r#""end_ns": -1"#,
            r#""end_ns": 1.0"#,
            r#""end_ns": 01"#,
            r#""total": 1e400"#,
            r#""total": "5""#,
            r#""is_complete": 1"#,
            r#""total": 5.""#,
        ];
        let kinds = [
            MetricType::Counter,
            MetricType::Histogram,
            MetricType::Gauge,
        ];
        let (mut taken, mut compared) = (0, 0);
        let start = members[0];
        let end = members[1];
        let mut check = |text: String| {
            for kind in kinds {
                for tail in [",", "]", " ", "}", "", "x"] {
                    let text = format!("{text}{tail}");
                    compared += 1;
                    if let Some(hand) = by_hand(&text, kind) {
                        taken += 1;
                        let serde = by_serde(&text, kind);
                        let same = serde.is_some_and(|s| {
                            s.0 == hand.0
                                && s.1 == hand.1
                                && s.2.map(f64::to_bits) == hand.2.map(f64::to_bits)
                                && s.3 == hand.3
                        });
                        assert!(same, "{text:?} {kind:?}: {hand:?} vs {serde:?}");
                    }
                }
            }
        };
        // Every pair and triple of members, in both orders, around the two bounds.
        for a in members {
            for b in members {
                check(format!("{{{a}, {b}}}"));
                check(format!("{{{start}, {a}, {end}, {b}}}"));
                check(format!("{{\n  {b},\n  {start},{end}  ,{a}\n}}"));
            }
        }
        check("{}".to_string());
        check(format!("[{start}]"));
        assert!(taken > 2_000, "{taken} of {compared}");
        // The common shapes are taken.
        let common = [
            format!("{{{start}, {end}, \"total\": 135.0, \"rate\": 0.5}}"),
            format!("{{\n  {start},\n  {end},\n  \"is_complete\": false,\n  \"total\": 7\n}}"),
        ];
        for text in common {
            let hand = by_hand(&format!("{text},"), MetricType::Counter);
            assert!(hand.is_some(), "{text}");
        }
        // A count at or above 2^53 is left to serde_json's refusal in its own family type.
        let text = format!("{{{start}, {end}, \"total\": {big}}},");
        assert!(by_hand(&text, MetricType::Counter).is_none());
        assert!(by_hand(&text, MetricType::Gauge).is_some());
    }
}
