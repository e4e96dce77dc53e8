//! Series-keyed evidence in key order, in one vector: one endpoint's series are a contiguous
//! run of it (a [`SeriesKey`] sorts by endpoint first), found by two binary searches. A map
//! node per series cost a many-series CSV more memory than the values, and time to build,
//! walk and drop.

use super::SeriesKey;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Values by series key: those taken in key order (a CSV export's series) kept sorted in a
/// vector; those that come out of order (export families, scrapes) gathered in a map and
/// merged into the vector once, by [`SeriesMap::settle`], before accounting reads any.
#[derive(Debug, Clone)]
pub struct SeriesMap<V> {
    /// Sorted by key, each key once.
    sorted: Vec<(SeriesKey, V)>,
    /// Keys not in `sorted`, until `settle`.
    pending: BTreeMap<SeriesKey, V>,
}

impl<V> Default for SeriesMap<V> {
    fn default() -> Self {
        SeriesMap {
            sorted: Vec::new(),
            pending: BTreeMap::new(),
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
        match self.position(&key) {
            Ok(i) => &mut self.sorted[i].1,
            Err(_) => self.pending.entry(key).or_default(),
        }
    }

    /// Set the value of `key`.
    pub fn insert(&mut self, key: SeriesKey, v: V) {
        match self.position(&key) {
            Ok(i) => self.sorted[i].1 = v,
            Err(_) => {
                self.pending.insert(key, v);
            }
        }
    }

    pub fn get(&self, key: &SeriesKey) -> Option<&V> {
        match self.position(key) {
            Ok(i) => self.sorted.get(i).map(|(_, v)| v),
            Err(_) => self.pending.get(key),
        }
    }

    pub fn get_mut(&mut self, key: &SeriesKey) -> Option<&mut V> {
        match self.position(key) {
            Ok(i) => self.sorted.get_mut(i).map(|(_, v)| v),
            Err(_) => self.pending.get_mut(key),
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
    }

    /// Merge the pending keys into the sorted vector (one pass; no key is in both).
    pub fn settle(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let pending = std::mem::take(&mut self.pending);
        if self.sorted.is_empty() {
            self.sorted = pending.into_iter().collect();
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
    }

    /// The entries of one endpoint, in key order (after [`SeriesMap::settle`]).
    pub fn of_endpoint(&self, endpoint: &str) -> &[(SeriesKey, V)] {
        debug_assert!(self.pending.is_empty());
        let start = self
            .sorted
            .partition_point(|(k, _)| &*k.endpoint_url < endpoint);
        let rest = self.sorted.get(start..).unwrap_or_default();
        // An endpoint has few series, all with one shared URL: a scan is cheaper than a
        // second search, and its equal pointers end most comparisons at once.
        let Some((first, _)) = rest.first().filter(|(k, _)| &*k.endpoint_url == endpoint) else {
            return &[];
        };
        let url = &first.endpoint_url;
        let len = rest
            .iter()
            .take_while(|(k, _)| Arc::ptr_eq(&k.endpoint_url, url) || *k.endpoint_url == *endpoint)
            .count();
        rest.get(..len).unwrap_or_default()
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
        self.sorted.len() + self.pending.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
