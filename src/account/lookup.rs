//! Per-endpoint lookups in the series-keyed tables of [`Evidence`](super::evidence::Evidence).
//! A [`SeriesKey`] sorts by endpoint first, so one endpoint's series are a contiguous run of
//! the table: a stage asking about one endpoint pays O(log n + its series), never a scan of
//! every series of the run (which made accounting quadratic in endpoints).
//!
//! Also the walks of the maps keyed by endpoint URL: stages go through the endpoints in URL
//! order, so a [`Cursor`] finds each one's value by stepping forward, and [`insert_sorted`]
//! fills such a map from pairs made in that order.

use super::evidence::{SeriesKey, SeriesMap};
use std::collections::{btree_map, BTreeMap, BTreeSet};
use std::iter::Peekable;
use std::sync::Arc;

/// The entries of `map` whose key is on `endpoint`, in key order.
pub fn of_endpoint<'a, V>(
    map: &'a SeriesMap<V>,
    endpoint: &str,
) -> impl Iterator<Item = (&'a SeriesKey, &'a V)> + 'a {
    map.of_endpoint(endpoint).iter().map(|(k, v)| (k, v))
}

/// The entries of `map` on `endpoint` under any spelling of the canonical `family`. An
/// endpoint's entries come by spelling, so each spelling's canonical name is looked up once
/// (see [`SeriesMap::canonical`]), not per series.
pub fn of_family<'a, V>(
    map: &'a SeriesMap<V>,
    endpoint: &str,
    family: &'a str,
) -> impl Iterator<Item = (&'a SeriesKey, &'a V)> + 'a {
    of_endpoint(map, endpoint).filter(in_family(map, family))
}

/// The entries of `map` on every endpoint under any spelling of the canonical `family`, in
/// key order (spellings looked up as in [`of_family`]: no name made per series).
pub fn all_of_family<'a, V>(
    map: &'a SeriesMap<V>,
    family: &'a str,
) -> impl Iterator<Item = (&'a SeriesKey, &'a V)> + 'a {
    map.iter().filter(in_family(map, family))
}

/// Is an entry's key of the canonical `family`? Keys of one spelling come in runs (they share
/// it), so the answer for the last spelling is kept.
fn in_family<'a, V>(
    map: &'a SeriesMap<V>,
    family: &'a str,
) -> impl FnMut(&(&'a SeriesKey, &'a V)) -> bool + 'a {
    let mut last: Option<(&'a Arc<str>, bool)> = None;
    move |(k, _)| match last {
        Some((s, yes)) if Arc::ptr_eq(s, &k.spelling) => yes,
        _ => {
            let yes = map.canonical(&k.spelling) == family;
            last = Some((&k.spelling, yes));
            yes
        }
    }
}

/// The values of a map keyed by endpoint URL, asked for in URL order (as stages walk the
/// endpoints): each found by stepping forward from the last, not by a search from the root
/// (which compares the URL with a dozen or more others). A key that is the very copy asked
/// for (the evidence's shared URL, see `share_name`) is found without reading its bytes.
pub struct Cursor<'a, V> {
    rest: Peekable<btree_map::Iter<'a, Arc<str>, V>>,
}

impl<'a, V> Cursor<'a, V> {
    pub fn new(map: &'a BTreeMap<Arc<str>, V>) -> Self {
        Cursor {
            rest: map.iter().peekable(),
        }
    }

    /// The value of `key`; keys asked for must not decrease (an earlier key is not found).
    pub fn get(&mut self, key: &str) -> Option<&'a V> {
        while let Some(&(k, v)) = self.rest.peek() {
            if std::ptr::eq(&**k, key) {
                return Some(v);
            }
            match (**k).cmp(key) {
                std::cmp::Ordering::Less => {
                    self.rest.next();
                }
                std::cmp::Ordering::Equal => return Some(v),
                std::cmp::Ordering::Greater => return None,
            }
        }
        None
    }
}

/// Insert `pairs`, sorted by key, into `map`, as inserting them in order would (a later pair
/// of an equal key replaces the value). They go in from the last: each search then stops at
/// the first key of every node on its way, where in ascending order every search walks the
/// right edge of the tree comparing with each key there (with many endpoints, most of the
/// string comparisons of a run).
pub fn insert_sorted<K: Ord, V>(map: &mut BTreeMap<K, V>, mut pairs: Vec<(K, V)>) {
    while let Some((k, v)) = pairs.pop() {
        // Of equal keys the last holds: the earlier ones are dropped.
        while pairs.last().is_some_and(|(p, _)| *p == k) {
            pairs.pop();
        }
        map.insert(k, v);
    }
}

/// [`insert_sorted`] for a set: `items` sorted.
pub fn insert_sorted_set<T: Ord>(set: &mut BTreeSet<T>, mut items: Vec<T>) {
    while let Some(item) = items.pop() {
        set.insert(item);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(endpoint: &str, spelling: &str, labels: &[(&str, &str)]) -> SeriesKey {
        SeriesKey {
            endpoint_url: Arc::from(endpoint),
            spelling: Arc::from(spelling),
            labels: std::sync::Arc::new(
                labels
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
        }
    }

    fn keys() -> Vec<SeriesKey> {
        vec![
            key("http://a:1/metrics", "x", &[]),
            key("http://a:1/metrics", "", &[("l", "1")]),
            key("http://a:1/metricsz", "x", &[]),
            key("http://a:10/metrics", "x", &[]),
            key("http://a:1/metric", "zz", &[("z", "9")]),
            key("http://b:1/metrics", "", &[]),
        ]
    }

    fn check(map: &SeriesMap<usize>) {
        let got: Vec<usize> = of_endpoint(map, "http://a:1/metrics")
            .map(|(_, v)| *v)
            .collect();
        assert_eq!(got, vec![1, 0]);
        let scan: Vec<usize> = map
            .iter()
            .filter(|(k, _)| &*k.endpoint_url == "http://a:1/metrics")
            .map(|(_, v)| *v)
            .collect();
        assert_eq!(got, scan);
        assert_eq!(of_endpoint(map, "http://c:1/metrics").count(), 0);
        assert_eq!(of_endpoint(map, "").count(), 0);
        let all: Vec<&SeriesKey> = map.iter().map(|(k, _)| k).collect();
        assert!(
            all.windows(2).all(|w| w[0] < w[1]),
            "in key order, each once"
        );
    }

    #[test]
    fn a_cursor_finds_what_get_finds_for_increasing_keys() {
        let map: BTreeMap<Arc<str>, u32> = ["a", "a:1", "b", "d"]
            .iter()
            .zip(0..)
            .map(|(k, v)| (Arc::from(*k), v))
            .collect();
        let mut cursor = Cursor::new(&map);
        for k in ["", "a", "a", "a:0", "a:1", "c", "d", "e"] {
            assert_eq!(cursor.get(k), map.get(k), "{k}");
        }
        // The map's own copies of its keys, as stages ask with the evidence's shared URLs.
        let mut cursor = Cursor::new(&map);
        for k in map.keys() {
            assert_eq!(cursor.get(k), map.get(k), "{k}");
        }
    }

    #[test]
    fn sorted_inserts_build_what_inserts_in_order_build() {
        let pairs = vec![(1, "a"), (2, "b"), (2, "c"), (5, "d"), (7, "e"), (7, "f")];
        let mut ours = BTreeMap::from([(5, "x"), (9, "y")]);
        let mut theirs = ours.clone();
        insert_sorted(&mut ours, pairs.clone());
        for (k, v) in pairs {
            theirs.insert(k, v);
        }
        assert_eq!(ours, theirs);
        let mut set = BTreeSet::from([3, 8]);
        insert_sorted_set(&mut set, vec![1, 3, 3, 4, 9]);
        assert_eq!(set, BTreeSet::from([1, 3, 4, 8, 9]));
    }

    #[test]
    fn yields_exactly_the_endpoints_keys_in_order() {
        // Inserted out of order, then settled.
        let mut map = SeriesMap::default();
        for (i, k) in keys().into_iter().enumerate() {
            map.insert(k, i);
        }
        map.settle();
        check(&map);
        // Taken sorted (a repeated key: the last holds), then merged with more out of order.
        let mut sorted: Vec<(SeriesKey, usize)> = keys().into_iter().zip(0..).collect();
        sorted.sort_by(|a, b| a.0.cmp(&b.0));
        let (early, late) = sorted.split_at(3);
        let mut taken = early.to_vec();
        if let Some(first) = taken.first().cloned() {
            taken.insert(0, (first.0, 99));
        }
        let mut map = SeriesMap::default();
        map.extend_sorted(taken);
        for (k, v) in late.iter().rev() {
            *map.entry(k.clone()) = *v;
        }
        map.settle();
        check(&map);
        assert_eq!(map.len(), 6);
    }

    #[test]
    fn of_family_takes_every_spelling_of_the_family() {
        let url = "http://a:1/metrics";
        let mut map = SeriesMap::default();
        let spellings = [
            "vllm:prompt_tokens",
            "vllm:prompt_tokens_total",
            "vllm_prompt_tokens_total",
            "vllm:x",
        ];
        for (i, s) in spellings.iter().enumerate() {
            let shared: Arc<str> = Arc::from(*s);
            for l in ["1", "2"] {
                let mut k = key(url, s, &[("l", l)]);
                k.spelling = Arc::clone(&shared);
                map.insert(k, i);
            }
        }
        map.insert(key("http://b:1/metrics", "vllm:prompt_tokens", &[]), 9);
        map.settle();
        let got: Vec<usize> = of_family(&map, url, "vllm:prompt_tokens")
            .map(|(_, v)| *v)
            .collect();
        let scan: Vec<usize> = of_endpoint(&map, url)
            .filter(|(k, _)| {
                crate::read::names::canonical_family(&k.spelling) == "vllm:prompt_tokens"
            })
            .map(|(_, v)| *v)
            .collect();
        assert_eq!(got.len(), 6);
        assert_eq!(got, scan);
    }
}
