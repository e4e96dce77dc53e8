//! A series' label set, compact: a capture or export of many series keeps one per series, and
//! a map of strings per series (a B-tree leaf of 544 B, plus an allocation per name and value)
//! held uploads made of new series at 6-27x their size. Here the names and values sit in one
//! string with their end offsets beside it.

use std::cmp::Ordering;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};

/// A series' label set: names unique, in byte order, so output is deterministic. Names and
/// values are plain data (`__proto__` or `constructor` too: they cross to JS as a `Map`).
/// Ordered and compared as the sequence of its (name, value) pairs, as a map of them would be.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Labels {
    /// Each name followed by its value, pair after pair.
    text: Box<str>,
    /// The end of each name and of each value in `text`: two per pair.
    ends: Box<[usize]>,
}

impl Labels {
    pub fn new() -> Self {
        Self::default()
    }

    /// Pairs in any order; of a repeated name the last value stands, as a map's insert would.
    pub fn from_pairs(mut pairs: Vec<(String, String)>) -> Self {
        // Most sets come sorted. The sort is stable, so the last of equal names can win, and
        // crate::sort's, not std's compiled anew for the pair type (about 5 KB of wasm).
        if !pairs.is_sorted_by(|a, b| a.0 <= b.0) {
            crate::sort::sort_by(&mut pairs, |a, b| a.0.cmp(&b.0));
        }
        let len = pairs.iter().map(|(n, v)| n.len() + v.len()).sum();
        let mut text = String::with_capacity(len);
        let mut ends = Vec::with_capacity(pairs.len() * 2);
        for (i, (name, value)) in pairs.iter().enumerate() {
            if pairs.get(i + 1).is_some_and(|next| next.0 == *name) {
                continue;
            }
            text.push_str(name);
            ends.push(text.len());
            text.push_str(value);
            ends.push(text.len());
        }
        Self {
            text: text.into_boxed_str(),
            ends: ends.into_boxed_slice(),
        }
    }

    pub fn len(&self) -> usize {
        self.ends.len() / 2
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The pair at `i` (below `len()`).
    fn pair(&self, i: usize) -> (&str, &str) {
        let start = if i == 0 { 0 } else { self.ends[2 * i - 1] };
        let mid = self.ends[2 * i];
        (
            &self.text[start..mid],
            &self.text[mid..self.ends[2 * i + 1]],
        )
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        if self.len() <= SMALL {
            return self.scan(name);
        }
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let (n, v) = self.pair(mid);
            match n.cmp(name) {
                Ordering::Less => lo = mid + 1,
                Ordering::Greater => hi = mid,
                Ordering::Equal => return Some(v),
            }
        }
        None
    }

    /// `get` of a small set: names in order, until one is not below `name`.
    fn scan(&self, name: &str) -> Option<&str> {
        let text = self.text.as_bytes();
        let mut start = 0;
        for ends in self.ends.chunks_exact(2) {
            let (mid, end) = (ends[0], ends[1]);
            match text.get(start..mid)?.cmp(name.as_bytes()) {
                Ordering::Less => start = end,
                Ordering::Equal => return self.text.get(mid..end),
                Ordering::Greater => return None,
            }
        }
        None
    }

    pub fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// (name, value) pairs in name order.
    pub fn iter(&self) -> Pairs<'_> {
        Pairs {
            labels: self,
            next: 0,
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

/// Label sets up to this size are looked up by a scan of their names.
const SMALL: usize = 16;

/// The pairs of a [`Labels`], in name order.
pub struct Pairs<'a> {
    labels: &'a Labels,
    next: usize,
}

impl<'a> Iterator for Pairs<'a> {
    type Item = (&'a str, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        if self.next >= self.labels.len() {
            return None;
        }
        self.next += 1;
        Some(self.labels.pair(self.next - 1))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.labels.len() - self.next;
        (left, Some(left))
    }
}

impl ExactSizeIterator for Pairs<'_> {}

impl<'a> IntoIterator for &'a Labels {
    type Item = (&'a str, &'a str);
    type IntoIter = Pairs<'a>;

    fn into_iter(self) -> Pairs<'a> {
        self.iter()
    }
}

impl Ord for Labels {
    /// The pairs' order is the order of their names and values read in turn, compared here
    /// piece by piece (label sets are compared often: sorted, and kept in ordered sets).
    fn cmp(&self, other: &Self) -> Ordering {
        let (a, b) = (self.text.as_bytes(), other.text.as_bytes());
        let (mut a0, mut b0) = (0, 0);
        for (&a1, &b1) in self.ends.iter().zip(other.ends.iter()) {
            match a.get(a0..a1).cmp(&b.get(b0..b1)) {
                Ordering::Equal => (a0, b0) = (a1, b1),
                unequal => return unequal,
            }
        }
        self.ends.len().cmp(&other.ends.len())
    }
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

    fn as_map(l: &Labels) -> BTreeMap<String, String> {
        l.iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    /// Random pair lists (repeated names, empty strings, multi-byte text, short and long): the set must agree
    /// with a map built by inserting the same pairs, in content, lookup, order and JSON.
    #[test]
    fn agrees_with_a_map_of_strings() {
        let words = [
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
        // Names beyond the words, so that long sets have more than SMALL distinct names.
        let names: Vec<String> = words
            .iter()
            .map(|w| w.to_string())
            .chain((0..40).map(|i| format!("k{i}")))
            .collect();
        let mut sets = Vec::new();
        let mut long = 0;
        for i in 0..2000 {
            // Every tenth with many names, so both lookups are checked.
            let (n, pool) = match i % 10 {
                0 => (next(4 * SMALL), names.len()),
                _ => (next(6), words.len()),
            };
            let pairs: Vec<(String, String)> = (0..n)
                .map(|_| (names[next(pool)].clone(), words[next(words.len())].into()))
                .collect();
            let map: BTreeMap<String, String> = pairs.iter().cloned().collect();
            let labels = Labels::from_pairs(pairs);
            assert_eq!(as_map(&labels), map);
            assert_eq!(labels.len(), map.len());
            long += usize::from(labels.len() > SMALL);
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
        assert!(long > 50, "{long} sets past SMALL");
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
