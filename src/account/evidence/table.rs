//! Series-keyed evidence in key order, in one vector: one endpoint's series are a contiguous
//! run of it (a [`SeriesKey`] sorts by endpoint first), found by two binary searches. A map
//! node per series cost a many-series CSV more memory than the values, and time to build,
//! walk and drop.

use super::SeriesKey;
use crate::hash::Keyed;
use crate::read::names::canonical_family;
use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

/// Values by series key: those taken in key order (a CSV export's series) kept sorted in a
/// vector; those that come out of order (export families, scrapes) gathered apart and
/// merged into the vector once, by [`SeriesMap::settle`], before accounting reads any.
#[derive(Debug, Clone)]
pub struct SeriesMap<V> {
    /// Sorted by key, each key once.
    sorted: Vec<(SeriesKey, V)>,
    /// Keys not in `sorted`, until `settle`.
    pending: Pending<V>,
    /// The last endpoint run [`SeriesMap::of_endpoint`] found (see [`LastRun`]).
    last: LastRun,
    /// Each key spelling's canonical family, by the spelling's address (keys share their
    /// spellings): stages ask which family a key is of for every key they scan, and making
    /// the name each time was an allocation per key. The spelling itself is kept too, so
    /// its address is never reused for another.
    canonical: Spellings,
}

/// Spellings by address, each with its canonical family (see [`SeriesMap::canonical`]).
#[derive(Debug, Clone, Default)]
struct Spellings {
    /// Address → index in `list`.
    at: AddressMap,
    /// (spelling, its canonical family).
    list: Vec<(Arc<str>, Arc<str>)>,
}

impl Spellings {
    fn add(&mut self, spelling: &Arc<str>) {
        let at = Arc::as_ptr(spelling) as *const u8 as usize;
        if self.at.contains_key(&at) {
            return;
        }
        let i = u32::try_from(self.list.len()).unwrap_or(u32::MAX);
        let c: Arc<str> = Arc::from(canonical_family(spelling));
        self.list.push((Arc::clone(spelling), c));
        self.at.insert(at, i);
    }

    fn get(&self, spelling: &Arc<str>) -> Option<&str> {
        let at = Arc::as_ptr(spelling) as *const u8 as usize;
        let &i = self.at.get(&at)?;
        self.list.get(i as usize).map(|(_, c)| &**c)
    }
}

impl<V> Default for SeriesMap<V> {
    fn default() -> Self {
        SeriesMap {
            sorted: Vec::new(),
            pending: Pending::default(),
            last: LastRun::default(),
            canonical: Spellings::default(),
        }
    }
}

/// Where the last endpoint run found starts and how long it is, packed in one word (so that
/// threads sharing the map never read half of a write). Stages ask about endpoints in order,
/// each several times: the same run, or the one right after it, is tried (two key
/// comparisons each) before a binary search (about 20 on a many-series CSV). A hint is only
/// a guess: it is used when the keys around it prove it right.
#[derive(Debug, Default)]
struct LastRun(AtomicU64);

impl Clone for LastRun {
    fn clone(&self) -> Self {
        LastRun(AtomicU64::new(self.0.load(Relaxed)))
    }
}

impl LastRun {
    fn get(&self) -> (usize, usize) {
        let v = self.0.load(Relaxed);
        ((v >> 32) as usize, (v & 0xffff_ffff) as usize)
    }

    fn set(&self, start: usize, len: usize) {
        if let (Ok(start), Ok(len)) = (u32::try_from(start), u32::try_from(len)) {
            self.0
                .store((u64::from(start) << 32) | u64::from(len), Relaxed);
        }
    }
}

impl<V> SeriesMap<V> {
    fn position(&self, key: &SeriesKey) -> Result<usize, usize> {
        self.sorted.binary_search_by(|(k, _)| k.cmp(key))
    }

    /// The value of `key`, made `V::default()` on first use.
    pub fn entry(&mut self, key: SeriesKey) -> &mut V
    where
        V: Default,
    {
        let i = match self.position(&key) {
            Ok(i) => return &mut self.sorted[i].1,
            Err(_) => {
                let hash = self.pending.hash(&key);
                match self.pending.find_hashed(&key, hash) {
                    Some(i) => i,
                    None => self.pending.push_hashed(key, V::default(), hash),
                }
            }
        };
        &mut self.pending.items[i].1
    }

    /// Room for `additional` keys out of order (see [`SeriesMap::settle`]).
    pub fn reserve(&mut self, additional: usize) {
        let p = &mut self.pending;
        p.items.reserve_exact(additional);
        p.before.reserve_exact(additional);
        p.last_of.reserve(additional);
    }

    /// Set the value of `key`.
    pub fn insert(&mut self, key: SeriesKey, v: V) {
        match self.position(&key) {
            Ok(i) => self.sorted[i].1 = v,
            Err(_) => {
                // One hash for the search and the insert.
                let hash = self.pending.hash(&key);
                match self.pending.find_hashed(&key, hash) {
                    Some(i) => self.pending.items[i].1 = v,
                    None => {
                        self.pending.push_hashed(key, v, hash);
                    }
                }
            }
        }
    }

    pub fn get(&self, key: &SeriesKey) -> Option<&V> {
        match self.position(key) {
            Ok(i) => self.sorted.get(i).map(|(_, v)| v),
            Err(_) => {
                let i = self.pending.find(key)?;
                self.pending.items.get(i).map(|(_, v)| v)
            }
        }
    }

    pub fn get_mut(&mut self, key: &SeriesKey) -> Option<&mut V> {
        match self.position(key) {
            Ok(i) => self.sorted.get_mut(i).map(|(_, v)| v),
            Err(_) => {
                let i = self.pending.find(key)?;
                self.pending.items.get_mut(i).map(|(_, v)| v)
            }
        }
    }

    /// Take `items`, sorted by key (equal keys in the order given: the last holds, as with
    /// inserts one by one). Into an empty map they are the vector itself: no copy, no sort.
    pub fn extend_sorted(&mut self, mut items: Vec<(SeriesKey, V)>) {
        if !self.sorted.is_empty() || !self.pending.is_empty() {
            for (k, v) in items {
                self.insert(k, v);
            }
            return;
        }
        // `dedup_by` keeps the first of a run: the later value is moved into it first.
        items.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same {
                std::mem::swap(later, kept);
            }
            same
        });
        items.shrink_to_fit();
        self.sorted = items;
        self.index_spellings();
    }

    /// Add the spellings of the sorted keys to [`SeriesMap::canonical`].
    fn index_spellings(&mut self) {
        let mut last: Option<&Arc<str>> = None;
        for (k, _) in &self.sorted {
            if !last.is_some_and(|l| Arc::ptr_eq(l, &k.spelling)) {
                self.canonical.add(&k.spelling);
                last = Some(&k.spelling);
            }
        }
    }

    /// The canonical family of a key's spelling (see [`canonical_family`]).
    pub fn canonical<'a>(&'a self, spelling: &Arc<str>) -> Cow<'a, str> {
        match self.canonical.get(spelling) {
            Some(c) => Cow::Borrowed(c),
            None => Cow::Owned(canonical_family(spelling)),
        }
    }

    /// Merge `items` (sorted by key, each key once) in one pass: `apply` sets each item on
    /// its key's value, the one there or a new `V::default()`; the same as an
    /// [`SeriesMap::entry`] per item, without a search per item.
    pub fn merge_sorted<X>(&mut self, items: Vec<(SeriesKey, X)>, mut apply: impl FnMut(&mut V, X))
    where
        V: Default,
    {
        self.settle();
        if items.is_empty() {
            return;
        }
        let old = std::mem::take(&mut self.sorted);
        let mut out = Vec::with_capacity(old.len() + items.len());
        let mut had = old.into_iter().peekable();
        for (key, x) in items {
            while let Some(before) = had.next_if(|(k, _)| *k < key) {
                out.push(before);
            }
            let mut entry = match had.next_if(|(k, _)| *k == key) {
                Some(there) => there,
                None => (key, V::default()),
            };
            apply(&mut entry.1, x);
            out.push(entry);
        }
        out.extend(had);
        self.sorted = out;
        self.index_spellings();
    }

    /// [`SeriesMap::merge_sorted`] of values made as the map keeps them: `combine` puts a new
    /// value into the one there, and `combine(&mut V::default(), v)` must leave `v`. Into an
    /// empty map `items` is the vector itself ([`SeriesMap::extend_sorted`]): no second copy
    /// while the first is read.
    pub fn merge_sorted_values(
        &mut self,
        items: Vec<(SeriesKey, V)>,
        combine: impl FnMut(&mut V, V),
    ) where
        V: Default,
    {
        self.settle();
        if self.sorted.is_empty() {
            self.extend_sorted(items);
        } else {
            self.merge_sorted(items, combine);
        }
    }

    /// Merge the pending keys into the sorted vector (one pass; no key is in both).
    pub fn settle(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let pending = self.pending.take_sorted();
        if self.sorted.is_empty() {
            self.sorted = pending;
            self.index_spellings();
            return;
        }
        let old = std::mem::take(&mut self.sorted);
        let mut out = Vec::with_capacity(old.len() + pending.len());
        let mut a = old.into_iter().peekable();
        let mut b = pending.into_iter().peekable();
        loop {
            let take_a = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) => x.0 < y.0,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            let next = if take_a { a.next() } else { b.next() };
            out.extend(next);
        }
        self.sorted = out;
        self.index_spellings();
    }

    /// The entries of one endpoint, in key order (after [`SeriesMap::settle`]).
    pub fn of_endpoint(&self, endpoint: &str) -> &[(SeriesKey, V)] {
        debug_assert!(self.pending.is_empty());
        let url = |i: usize| self.sorted.get(i).map(|(k, _)| &*k.endpoint_url);
        match endpoint_run(self.sorted.len(), &url, &self.last, endpoint) {
            Some((start, len)) => self.sorted.get(start..start + len).unwrap_or_default(),
            None => &[],
        }
    }

    /// Every entry in key order (after [`SeriesMap::settle`]).
    pub fn iter(&self) -> impl Iterator<Item = (&SeriesKey, &V)> + Clone {
        debug_assert!(self.pending.is_empty());
        self.sorted.iter().map(|(k, v)| (k, v))
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&SeriesKey, &mut V)> {
        debug_assert!(self.pending.is_empty());
        self.sorted.iter_mut().map(|(k, v)| (&*k, v))
    }

    pub fn values(&self) -> impl Iterator<Item = &V> + Clone {
        self.iter().map(|(_, v)| v)
    }

    pub fn len(&self) -> usize {
        self.sorted.len() + self.pending.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Where `endpoint`'s entries start and how many there are, in a table of `len` keys sorted
/// by endpoint whose `i`-th endpoint is `url(i)` (not generic over the values: one copy in the
/// .wasm). The last run found, or the one right after it, is tried first (see [`LastRun`]);
/// else a binary search.
fn endpoint_run<'a>(
    len: usize,
    url: &dyn Fn(usize) -> Option<&'a str>,
    last: &LastRun,
    endpoint: &str,
) -> Option<(usize, usize)> {
    // Stages ask with the evidence's shared copy of the URL, the one the keys hold (see
    // `share_name`): equal without reading the bytes, which with many endpoints are cold.
    let is_endpoint =
        |u: Option<&str>| u.is_some_and(|u| std::ptr::eq(u, endpoint) || u == endpoint);
    // `endpoint`'s entries are one contiguous run: it starts at `i` when the key before is
    // another endpoint's.
    let starts_at = |i: usize| is_endpoint(url(i)) && !is_endpoint(i.checked_sub(1).and_then(url));
    let (hint, hint_len) = last.get();
    let start = match [hint, hint + hint_len].into_iter().find(|&i| starts_at(i)) {
        Some(i) => i,
        None => {
            // The first key not below `endpoint`.
            let (mut lo, mut hi) = (0, len);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                if url(mid).is_some_and(|u| u < endpoint) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            if !is_endpoint(url(lo)) {
                return None;
            }
            lo
        }
    };
    // The run's keys share one URL (see `SeriesKey::endpoint_url`): the same copy is equal
    // without comparing its bytes.
    let first = url(start)?;
    let n = (start..len)
        .take_while(|&i| url(i).is_some_and(|u| std::ptr::eq(u, first) || u == first))
        .count();
    last.set(start, n);
    Some((start, n))
}

/// Keys in the order they came, each found by the hash of its contents, until they are sorted
/// once by [`SeriesMap::settle`]. A B-tree of them cost about a dozen key comparisons per
/// insert, and at the merge its nodes and the sorted vector were held at once.
#[derive(Debug, Clone)]
struct Pending<V> {
    items: Vec<(SeriesKey, V)>,
    /// A hash of the key's contents → the last item with it. SipHash with this map's own
    /// keys ([`Keyed`]): the keys come from uploads, and a known hash can be made to collide.
    hasher: Keyed,
    last_of: AddressMap,
    /// Each item's previous item with the same hash ([`NONE`]: none).
    before: Vec<u32>,
}

impl<V> Default for Pending<V> {
    fn default() -> Self {
        Pending {
            items: Vec::new(),
            hasher: Keyed::default(),
            last_of: AddressMap::default(),
            before: Vec::new(),
        }
    }
}

/// No item (see [`Pending::before`]).
const NONE: u32 = u32::MAX;

impl<V> Pending<V> {
    fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// A hash of `key`'s contents: equal keys hash alike, their parts shared or not.
    fn hash(&self, key: &SeriesKey) -> usize {
        self.hasher
            .hash_one((&*key.endpoint_url, &*key.spelling, &*key.labels)) as usize
    }

    /// Where `key` is.
    fn find(&self, key: &SeriesKey) -> Option<usize> {
        self.find_hashed(key, self.hash(key))
    }

    /// [`Pending::find`] of a key whose hash is `hash`.
    fn find_hashed(&self, key: &SeriesKey, hash: usize) -> Option<usize> {
        let mut i = *self.last_of.get(&hash)?;
        loop {
            let (k, _) = self.items.get(i as usize)?;
            if k == key {
                return Some(i as usize);
            }
            i = *self.before.get(i as usize)?;
        }
    }

    /// Add `key`, not there yet, whose hash is `hash`; where it is.
    fn push_hashed(&mut self, key: SeriesKey, v: V, hash: usize) -> usize {
        let at = self.items.len();
        // Past 2^32 - 1 items (hundreds of GB) an item would not be found again.
        let id = u32::try_from(at).unwrap_or(NONE);
        let earlier = self.last_of.insert(hash, id);
        self.before.push(earlier.unwrap_or(NONE));
        self.items.push((key, v));
        at
    }

    /// The items sorted by key; `self` left empty.
    fn take_sorted(&mut self) -> Vec<(SeriesKey, V)> {
        let mut items = std::mem::take(&mut self.items);
        self.last_of = AddressMap::default();
        self.before = Vec::new();
        crate::sort::sort_by(&mut items, |a, b| a.0.cmp(&b.0));
        items
    }
}

/// A map keyed by address (see [`AddressHasher`]).
pub(crate) type AddressMap = HashMap<usize, u32, BuildHasherDefault<AddressHasher>>;

/// A hasher for addresses (distinct, aligned): one multiply per address. The keys it hashes
/// are not chosen by the input, so there is no flooding to defend against.
#[derive(Default)]
pub(crate) struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_usize(&mut self, n: usize) {
        // One address from the start state (0) is its product, rotated so that the product's
        // well-mixed high half picks the bucket; more addresses fold in one after another.
        self.0 = (self.0 ^ n as u64)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(32);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Labels;

    fn key(endpoint: &str, spelling: &str) -> SeriesKey {
        SeriesKey {
            endpoint_url: Arc::from(endpoint),
            spelling: Arc::from(spelling),
            labels: Arc::default(),
        }
    }

    /// A merge is an `entry` per item: on maps with keys sorted, pending, both or none, with
    /// items before, between, equal to and after the keys there, and label sets that order
    /// keys of one endpoint and spelling.
    #[test]
    fn a_merge_is_an_entry_per_item() {
        let labelled = |u: &str, s: &str, l: &str| SeriesKey {
            labels: Arc::new(Labels::from([("k".to_string(), l.to_string())])),
            ..key(u, s)
        };
        let there = [
            ("a", "x", "1"),
            ("a:1", "y", "2"),
            ("b", "x", "1"),
            ("b", "x", "3"),
        ];
        let items = [
            ("", "x", "0"),
            ("a", "x", "1"),
            ("a", "x", "2"),
            ("a:1", "y", "2"),
            ("a:10", "x", "0"),
            ("b", "x", "2"),
            ("b", "x", "3"),
            ("c", "z", "9"),
        ];
        for split in 0..=there.len() {
            for item_count in 0..=items.len() {
                let mut built: SeriesMap<Vec<u32>> = SeriesMap::default();
                let sorted: Vec<_> = there[..split]
                    .iter()
                    .map(|&(u, s, l)| (labelled(u, s, l), vec![0]))
                    .collect();
                built.extend_sorted(sorted);
                for &(u, s, l) in &there[split..] {
                    built.insert(labelled(u, s, l), vec![1]);
                }
                let mut by_entry = built.clone();
                let picked: Vec<_> = (0..item_count).map(|i| (items[i], i as u32)).collect();
                for &((u, s, l), i) in &picked {
                    by_entry.entry(labelled(u, s, l)).push(i);
                }
                by_entry.settle();
                let merged_items = picked
                    .iter()
                    .map(|&((u, s, l), i)| (labelled(u, s, l), i))
                    .collect();
                let mut by_values = built.clone();
                let value_items: Vec<_> = picked
                    .iter()
                    .map(|&((u, s, l), i)| (labelled(u, s, l), vec![i]))
                    .collect();
                by_values.merge_sorted_values(value_items.clone(), |v, new| v.extend(new));
                built.merge_sorted(merged_items, |v, i| v.push(i));
                let seen = |m: &SeriesMap<Vec<u32>>| -> Vec<(String, String, Labels, Vec<u32>)> {
                    m.iter()
                        .map(|(k, v)| {
                            let (u, s) = (k.endpoint_url.to_string(), k.spelling.to_string());
                            (u, s, (*k.labels).clone(), v.clone())
                        })
                        .collect()
                };
                assert_eq!(
                    seen(&built),
                    seen(&by_entry),
                    "{split} sorted, {item_count} items"
                );
                assert_eq!(built.len(), by_entry.len());
                assert_eq!(
                    seen(&by_values),
                    seen(&by_entry),
                    "{split} sorted, {item_count} values"
                );
                // Into an empty map the values are the map as given.
                let mut empty: SeriesMap<Vec<u32>> = SeriesMap::default();
                empty.merge_sorted_values(value_items.clone(), |_, _| unreachable!());
                let given: Vec<_> = value_items
                    .iter()
                    .map(|(k, v)| {
                        let (u, s) = (k.endpoint_url.to_string(), k.spelling.to_string());
                        (u, s, (*k.labels).clone(), v.clone())
                    })
                    .collect();
                assert_eq!(seen(&empty), given, "{item_count} values into an empty map");
            }
        }
    }

    /// Keys whose hashes collide are all found, each where it was put, and a key not put is
    /// not (on wasm32 the hash is 32 bits: a run of 100,000 series has some collisions).
    #[test]
    fn colliding_keys_are_each_found() {
        let mut p: Pending<u32> = Pending::default();
        let made = |i: u32| key(&format!("h:{}", i % 7), &format!("s{i}"));
        for i in 0..60 {
            assert_eq!(p.push_hashed(made(i), i, (i % 3) as usize), i as usize);
        }
        for i in 0..60 {
            let at = p.find_hashed(&made(i), (i % 3) as usize);
            assert_eq!(at.map(|a| p.items[a].1), Some(i), "{i}");
        }
        assert_eq!(p.find_hashed(&made(60), 0), None);
        assert_eq!(p.find_hashed(&made(1), 0), None, "another hash's chain");
        // Equal keys hash alike whether their parts are one copy or two.
        let (a, b) = (made(5), made(5));
        assert!(!Arc::ptr_eq(&a.spelling, &b.spelling));
        assert_eq!(p.hash(&a), p.hash(&b));
        let sorted = p.take_sorted();
        assert!(sorted.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(p.is_empty() && p.find(&made(5)).is_none());
    }

    #[test]
    fn an_endpoints_entries_whatever_was_asked_before() {
        let urls = ["a", "a:1", "a:10", "b", "c"];
        let mut items = Vec::new();
        for (n, u) in urls.iter().enumerate() {
            for s in 0..=n {
                items.push((key(u, &s.to_string()), n));
            }
        }
        let mut map = SeriesMap::default();
        map.extend_sorted(items);
        let asked = [
            "a", "a", "a:1", "a:10", "b", "c", "c", "b", "a:1", "x", "a:10", "", "a",
        ];
        for u in asked {
            let got: Vec<&str> = map
                .of_endpoint(u)
                .iter()
                .map(|(k, _)| &*k.endpoint_url)
                .collect();
            let n = urls.iter().position(|x| *x == u).map_or(0, |n| n + 1);
            assert_eq!(got, vec![u; n], "{u}");
        }
    }
}
