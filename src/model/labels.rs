//! A series' label set, compact: a capture or export of many series keeps one per series, and
//! a map of strings per series (a B-tree leaf of 544 B, plus an allocation per name and value)
//! held uploads made of new series at 6-27x their size. Here the names and values sit in one
//! string, each after its length.

use crate::hash::Digest;
use std::cmp::Ordering;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};

/// A series' label set: names unique, in byte order, so output is deterministic. Names and
/// values are plain data (`__proto__` or `constructor` too: they cross to JS as a `Map`).
/// Ordered and compared as the sequence of its (name, value) pairs, as a map of them would be.
#[derive(Clone, Default)]
pub struct Labels {
    /// Each name and each value after its length, written as [`put_number`] does. One
    /// allocation per set (offsets beside the text were a second, and a set is kept per
    /// series); equal sets have equal texts.
    text: Box<str>,
    /// The text's keyed hash, made at the first `hash` and kept: a set is looked up in the
    /// reader's, the fold's and the evidence's tables, and each table grown rehashes it.
    digest: Digest,
}

impl PartialEq for Labels {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for Labels {}

impl std::hash::Hash for Labels {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        h.write_u64(self.digest.of(&self.text));
    }
}

/// The lengths in a [`Labels`] text: six bits a byte, low bits first, [`MORE`] set on every
/// byte but the last. Each byte is ASCII, so the text stays a `str` and is sliced at its
/// pieces' bounds; a length below 64 takes one byte.
fn put_number(out: &mut String, mut n: usize) {
    loop {
        let low = (n & usize::from(BITS)) as u8;
        n >>= 6;
        if n == 0 {
            out.push(char::from(low));
            return;
        }
        out.push(char::from(low | MORE));
    }
}

/// Write one pair of a [`Labels`] text: pairs written in name order, each name once, make the
/// text of the set of them (see [`Labels::from_text`]).
pub(crate) fn push_pair(text: &mut String, name: &str, value: &str) {
    put_number(text, name.len());
    text.push_str(name);
    put_number(text, value.len());
    text.push_str(value);
}

const MORE: u8 = 0x40;
const BITS: u8 = 0x3F;

/// The bytes [`put_number`] writes for `n`.
fn number_len(mut n: usize) -> usize {
    let mut len = 1;
    while n > usize::from(BITS) {
        n >>= 6;
        len += 1;
    }
    len
}

/// The number at `at` and the position after it.
#[inline]
fn take_number(text: &[u8], at: usize) -> Option<(usize, usize)> {
    let byte = *text.get(at)?;
    if byte & MORE == 0 {
        return Some((usize::from(byte), at + 1));
    }
    take_long_number(text, at)
}

/// [`take_number`] of a number of more than one byte.
fn take_long_number(text: &[u8], mut at: usize) -> Option<(usize, usize)> {
    let (mut n, mut shift) = (0usize, 0u32);
    loop {
        let byte = *text.get(at)?;
        at += 1;
        n |= usize::from(byte & BITS).checked_shl(shift)?;
        if byte & MORE == 0 {
            return Some((n, at));
        }
        shift += 6;
    }
}

impl Labels {
    pub fn new() -> Self {
        Self::default()
    }

    /// Pairs in any order; of a repeated name the last value stands, as a map's insert would.
    /// (Borrowed names and values too: a capture's are slices of its lines.)
    pub fn from_pairs<N: AsRef<str>, V: AsRef<str>>(mut pairs: Vec<(N, V)>) -> Self {
        // Most sets come sorted. The sort is stable, so the last of equal names can win, and
        // crate::sort's, not std's compiled anew for the pair type (about 5 KB of wasm).
        if !pairs.is_sorted_by(|a, b| a.0.as_ref() <= b.0.as_ref()) {
            crate::sort::sort_by(&mut pairs, |a, b| a.0.as_ref().cmp(b.0.as_ref()));
        }
        let name = |i: usize| pairs.get(i).map(|p| p.0.as_ref());
        let kept = |i: usize| name(i + 1).is_none_or(|next| Some(next) != name(i));
        let mut len = 0;
        for (i, (name, value)) in pairs.iter().enumerate() {
            if kept(i) {
                let (name, value) = (name.as_ref(), value.as_ref());
                len += number_len(name.len()) + name.len() + number_len(value.len()) + value.len();
            }
        }
        let mut text = String::with_capacity(len);
        for (i, (name, value)) in pairs.iter().enumerate() {
            if kept(i) {
                push_pair(&mut text, name.as_ref(), value.as_ref());
            }
        }
        Self {
            text: text.into_boxed_str(),
            digest: Digest::default(),
        }
    }

    /// The set whose text is `text`, written by [`push_pair`] (names in byte order, each
    /// once).
    pub(crate) fn from_text(text: &str) -> Self {
        Self {
            text: text.into(),
            digest: Digest::default(),
        }
    }

    /// The set's text: equal sets have equal texts (a reader finds its sets by it).
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// Whether the set is `pairs` (names in byte order, each once), compared with the text in
    /// place: a reader tests most rows against the set of the row before.
    #[inline]
    pub(crate) fn is_pairs<'p>(&self, pairs: impl Iterator<Item = (&'p str, &'p str)>) -> bool {
        let text = self.text.as_bytes();
        let mut at = 0;
        for (name, value) in pairs {
            for part in [name, value] {
                let Some((len, start)) = take_number(text, at) else {
                    return false;
                };
                let end = start.saturating_add(len);
                if len != part.len() || text.get(start..end) != Some(part.as_bytes()) {
                    return false;
                }
                at = end;
            }
        }
        at == text.len()
    }

    pub fn len(&self) -> usize {
        self.iter().count()
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// The value of `name`: a scan of the names, in order, until one is not below it (sets
    /// are small; a scan is as fast as a search up to a dozen names or so).
    pub fn get(&self, name: &str) -> Option<&str> {
        let text = self.text.as_bytes();
        let mut at = 0;
        loop {
            let (len, name_at) = take_number(text, at)?;
            let name_end = name_at.checked_add(len)?;
            let (len, value_at) = take_number(text, name_end)?;
            let value_end = value_at.checked_add(len)?;
            match text.get(name_at..name_end)?.cmp(name.as_bytes()) {
                Ordering::Less => at = value_end,
                Ordering::Equal => return self.text.get(value_at..value_end),
                Ordering::Greater => return None,
            }
        }
    }

    pub fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// (name, value) pairs in name order.
    pub fn iter(&self) -> Pairs<'_> {
        Pairs {
            text: &self.text,
            at: 0,
        }
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> + '_ {
        self.iter().map(|(n, _)| n)
    }

    pub fn values(&self) -> impl Iterator<Item = &str> + '_ {
        self.iter().map(|(_, v)| v)
    }

    /// The set without the pairs whose name `drop` accepts.
    pub fn without(&self, drop: impl Fn(&str) -> bool) -> Labels {
        self.iter().filter(|(n, _)| !drop(n)).collect()
    }
}

/// The pairs of a [`Labels`], in name order.
pub struct Pairs<'a> {
    text: &'a str,
    /// Where the next pair starts.
    at: usize,
}

impl<'a> Pairs<'a> {
    /// The next name or value.
    fn piece(&mut self) -> Option<&'a str> {
        let (len, start) = take_number(self.text.as_bytes(), self.at)?;
        let end = start.checked_add(len)?;
        let piece = self.text.get(start..end)?;
        self.at = end;
        Some(piece)
    }
}

impl<'a> Iterator for Pairs<'a> {
    type Item = (&'a str, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        Some((self.piece()?, self.piece()?))
    }
}

impl<'a> IntoIterator for &'a Labels {
    type Item = (&'a str, &'a str);
    type IntoIter = Pairs<'a>;

    fn into_iter(self) -> Pairs<'a> {
        self.iter()
    }
}

impl Ord for Labels {
    /// The pairs' order is the order of their names and values read in turn. Label sets are
    /// compared often (sorted, and kept in ordered sets), so the texts are compared as bytes
    /// first: the pieces before their first difference are equal, and only the piece it is
    /// in is compared as a string.
    fn cmp(&self, other: &Self) -> Ordering {
        let (a, b) = (self.text.as_bytes(), other.text.as_bytes());
        let Some(differ) = first_difference(a, b) else {
            return Ordering::Equal;
        };
        let mut start = 0;
        while let Some((len, after)) = take_number(a, start) {
            let end = after + len;
            if end > differ {
                // Inside the piece's text: its length is the same in both (equal bytes), so
                // the first differing byte orders the pieces.
                if differ >= after {
                    if let (Some(x), Some(y)) = (a.get(differ), b.get(differ)) {
                        return x.cmp(y);
                    }
                }
                break;
            }
            start = end;
        }
        // Both texts are the same up to `start`, where a piece starts or one text ends.
        piece_at(a, start).cmp(&piece_at(b, start))
    }
}

/// The piece (name or value) whose length is at `start`; `None` at the end.
fn piece_at(text: &[u8], start: usize) -> Option<&[u8]> {
    let (len, after) = take_number(text, start)?;
    text.get(after..after.checked_add(len)?)
}

/// The first position at which `a` and `b` differ (the shorter one's end if one begins the
/// other), eight bytes at a time.
fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    let mut at = 0;
    while let (Some(x), Some(y)) = (a.get(at..at + 8), b.get(at..at + 8)) {
        let (Ok(x), Ok(y)) = (<[u8; 8]>::try_from(x), <[u8; 8]>::try_from(y)) else {
            break;
        };
        let diff = u64::from_le_bytes(x) ^ u64::from_le_bytes(y);
        if diff != 0 {
            return Some(at + (diff.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    while let (Some(x), Some(y)) = (a.get(at), b.get(at)) {
        if x != y {
            return Some(at);
        }
        at += 1;
    }
    (a.len() != b.len()).then_some(at)
}

impl PartialOrd for Labels {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<N: Into<String>, V: Into<String>> FromIterator<(N, V)> for Labels {
    fn from_iter<I: IntoIterator<Item = (N, V)>>(pairs: I) -> Self {
        Self::from_pairs(
            pairs
                .into_iter()
                .map(|(n, v)| (n.into(), v.into()))
                .collect(),
        )
    }
}

impl<N: Into<String>, V: Into<String>, const K: usize> From<[(N, V); K]> for Labels {
    fn from(pairs: [(N, V); K]) -> Self {
        pairs.into_iter().collect()
    }
}

impl fmt::Debug for Labels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl Serialize for Labels {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.len()))?;
        for (name, value) in self {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Labels {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(LabelsVisitor)
    }
}

struct LabelsVisitor;

impl<'de> Visitor<'de> for LabelsVisitor {
    type Value = Labels;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Labels, A::Error> {
        let mut pairs = Vec::with_capacity(map.size_hint().unwrap_or(0).min(64));
        while let Some(pair) = map.next_entry::<String, String>()? {
            pairs.push(pair);
        }
        Ok(Labels::from_pairs(pairs))
    }
}

impl schemars::JsonSchema for Labels {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        <std::collections::BTreeMap<String, String>>::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        <std::collections::BTreeMap<String, String>>::json_schema(generator)
    }

    fn inline_schema() -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Sets of this many pairs have a count of two bytes.
    const LONG: usize = 64;

    fn as_map(l: &Labels) -> BTreeMap<String, String> {
        l.iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    /// Random pair lists (repeated names, empty strings, multi-byte text, short and long): the set must agree
    /// with a map built by inserting the same pairs, in content, lookup, order and JSON.
    #[test]
    fn agrees_with_a_map_of_strings() {
        // Pieces of 64 and 4,096 bytes and sets of 64 pairs or more take numbers of more than
        // one byte.
        let (at_64, at_4096) = ("x".repeat(64), "é".repeat(2100));
        let words = [
            at_64.as_str(),
            at_4096.as_str(),
            "",
            "a",
            "b",
            "ab",
            "é",
            "model_name",
            "engine",
            "\u{0}",
            "zz",
        ];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |m: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % m as u64) as usize
        };
        // Names beyond the words, so that long sets have more than LONG distinct names.
        let names: Vec<String> = words
            .iter()
            .map(|w| w.to_string())
            .chain((0..120).map(|i| format!("k{i}")))
            .collect();
        let mut sets = Vec::new();
        let mut long = 0;
        for i in 0..2000 {
            // Every tenth with many names.
            let (n, pool) = match i % 10 {
                0 => (next(3 * LONG), names.len()),
                _ => (next(6), words.len()),
            };
            let pairs: Vec<(String, String)> = (0..n)
                .map(|_| (names[next(pool)].clone(), words[next(words.len())].into()))
                .collect();
            let map: BTreeMap<String, String> = pairs.iter().cloned().collect();
            let labels = Labels::from_pairs(pairs);
            assert_eq!(as_map(&labels), map);
            assert_eq!(labels.len(), map.len());
            long += usize::from(labels.len() >= LONG);
            for w in names.iter().chain([&"k".to_string(), &"zzz".to_string()]) {
                assert_eq!(labels.get(w), map.get(w).map(String::as_str));
            }
            assert_eq!(
                serde_json::to_string(&labels).unwrap(),
                serde_json::to_string(&map).unwrap()
            );
            let back: Labels = serde_json::from_str(&serde_json::to_string(&map).unwrap()).unwrap();
            assert_eq!(back, labels);
            sets.push((labels, map));
        }
        assert!(long > 20, "{long} sets of {LONG} pairs or more");
        for (a, am) in sets.iter().take(300) {
            for (b, bm) in &sets {
                assert_eq!(a.cmp(b), am.cmp(bm));
                assert_eq!(a == b, am == bm);
            }
        }
    }

    #[test]
    fn repeated_names_in_json_keep_the_last_value() {
        let l: Labels = serde_json::from_str(r#"{"b":"1","a":"2","b":"3"}"#).unwrap();
        assert_eq!(serde_json::to_string(&l).unwrap(), r#"{"a":"2","b":"3"}"#);
        let map: BTreeMap<String, String> =
            serde_json::from_str(r#"{"b":"1","a":"2","b":"3"}"#).unwrap();
        assert_eq!(as_map(&l), map);
    }

    #[test]
    fn errors_read_as_a_map_of_strings_would() {
        for text in [
            r#"{"a":1}"#,
            r#"["a"]"#,
            r#""a""#,
            r#"{"a":null}"#,
            r#"{"a":"b""#,
        ] {
            let ours = serde_json::from_str::<Labels>(text)
                .unwrap_err()
                .to_string();
            let map = serde_json::from_str::<BTreeMap<String, String>>(text)
                .unwrap_err()
                .to_string();
            assert_eq!(ours, map, "{text}");
        }
    }

    #[test]
    fn without_drops_only_the_named_pairs() {
        let l = Labels::from([("a", "1"), ("replica", "2"), ("z", "3")]);
        let w = l.without(|n| n == "replica");
        assert_eq!(w, Labels::from([("a", "1"), ("z", "3")]));
        assert_eq!(w.get("z"), Some("3"));
        assert_eq!(Labels::new().get(""), None);
    }
}
