//! The CSV export's series as evidence: per series its stats, taken in key order.

use super::super::lookup::insert_sorted;
use super::{
    share_name, Evidence, FamilyMap, LabelSets, SeriesEvidence, SeriesKey, SeriesMap, StatPair,
    PROCESS_START,
};
use crate::model::server_metrics::{CsvLean, CsvSeries};
use crate::model::{Labels, MetricType, ServerMetricsExport};
use crate::read::names::canonical_family;
use std::sync::Arc;

impl Evidence {
    /// The CSV twin of the JSON export: its counter totals are kept beside the JSON's so a
    /// disagreement is seen (the CSV rounds floats to `%.4f`).
    pub(super) fn add_csv_totals(&mut self, csv: &ServerMetricsExport) {
        let lean = csv_lean(csv);
        for s in &lean.series {
            let Some(f) = csv.metrics.get(s.family as usize) else {
                continue;
            };
            if f.metric_type != MetricType::Counter {
                continue;
            }
            let key = SeriesKey {
                endpoint_url: share_name(&mut self.names, lean.url(s)),
                spelling: share_name(&mut self.names, &f.name),
                labels: self.intern_shared(&lean.labels(s).cloned().unwrap_or_default()),
            };
            if let Some(e) = self.series.get_mut(&key) {
                e.rare_mut().csv_total = s.value(CsvSeries::TOTAL);
            }
        }
    }

    /// The CSV export when the run has no JSON one: per series its stats (the same evidence
    /// as [`Evidence::add_export`] would take from it), gathered in key order, so every map
    /// is built in one pass instead of a search per row.
    pub(super) fn add_csv(&mut self, csv: &ServerMetricsExport) {
        let lean = csv_lean(csv);
        let series = &lean.series;
        let canonical: Vec<Arc<str>> = csv
            .metrics
            .iter()
            .map(|f| share_name(&mut self.names, &canonical_family(&f.name)))
            .collect();
        let spellings: Vec<Arc<str>> = csv
            .metrics
            .iter()
            .map(|f| share_name(&mut self.names, &f.name))
            .collect();
        // Sized exactly: the vectors become the evidence's tables as they are.
        let (mut n_counters, mut n_histograms) = (0, 0);
        for s in series {
            match csv.metrics.get(s.family as usize).map(|f| f.metric_type) {
                Some(MetricType::Counter) => n_counters += 1,
                Some(MetricType::Histogram) => n_histograms += 1,
                _ => {}
            }
        }
        if !super::admit_tables(n_counters, series.len() - n_counters) {
            return;
        }
        let mut counters = Vec::with_capacity(n_counters);
        let mut gauges = Vec::with_capacity(series.len() - n_counters - n_histograms);
        let mut histograms = Vec::with_capacity(n_histograms);
        // Reader label sets (by id: a reader shares each set already) → their interned
        // copies.
        let mut shared = SharedSets::new(&lean);
        let endpoint = |i: &u32| series.get(*i as usize).map(|s| s.endpoint);
        let order = csv_key_order(&lean);
        // The previous endpoint's families and label sets, shared by the next that has the
        // same: told by what they are made of, before any map is built.
        let mut last_families: Option<(Vec<FamilyType>, Arc<FamilyMap>)> = None;
        let mut last_sets: Option<(Vec<Arc<Labels>>, Arc<LabelSets>)> = None;
        let mut families = Vec::new();
        // Per endpoint in URL order, put into their maps at the end (`insert_sorted`).
        let endpoints = lean.endpoint_urls.len();
        let mut families_of = Vec::with_capacity(endpoints);
        let mut label_sets_of = Vec::with_capacity(endpoints);
        let mut process_starts = Vec::with_capacity(endpoints);
        let mut sets = Vec::new();
        for group in order.chunk_by(|a, b| endpoint(a) == endpoint(b)) {
            let Some(s) = group.first().and_then(|i| series.get(*i as usize)) else {
                continue;
            };
            // Each endpoint's series are one group, so its URL is new here: no search of the
            // names kept (in URL order that search was a walk down the right edge of a tree).
            // The reader's copy is kept: one allocation per URL for the whole run.
            let endpoint_url: Arc<str> = match lean.endpoint_urls.get(s.endpoint as usize) {
                Some(u) => Arc::clone(u),
                None => Arc::from(""),
            };
            // What `note_family` does per series, once per family of the endpoint.
            families.clear();
            let mut last_family = None;
            for s in group.iter().filter_map(|i| series.get(*i as usize)) {
                if last_family == Some(s.family) {
                    continue;
                }
                last_family = Some(s.family);
                let (Some(f), Some(key)) = (
                    csv.metrics.get(s.family as usize),
                    canonical.get(s.family as usize),
                ) else {
                    continue;
                };
                families.push((Arc::clone(key), f.metric_type));
            }
            let map = match &last_families {
                Some((made_of, map)) if *made_of == families => Arc::clone(map),
                _ => {
                    let map = Arc::new(family_map(&families));
                    last_families = Some((families.clone(), Arc::clone(&map)));
                    map
                }
            };
            families_of.push((Arc::clone(&endpoint_url), map));
            sets.clear();
            // The latest series in file order with both `min` and `max` (as a full read).
            let mut process_start: Option<(usize, f64, f64)> = None;
            for &i in group {
                let i = i as usize;
                let Some(s) = series.get(i) else {
                    continue;
                };
                let (Some(f), Some(spelling)) = (
                    csv.metrics.get(s.family as usize),
                    spellings.get(s.family as usize),
                ) else {
                    continue;
                };
                let labels = shared.get(s.labels, |l| self.intern_shared(l));
                // Series of one family and label set come together: most repeats are next
                // to each other (the set below takes the rest).
                if !sets.last().is_some_and(|l| Arc::ptr_eq(l, &labels)) {
                    sets.push(Arc::clone(&labels));
                }
                let key = SeriesKey {
                    endpoint_url: Arc::clone(&endpoint_url),
                    spelling: Arc::clone(spelling),
                    labels,
                };
                match f.metric_type {
                    MetricType::Counter => {
                        let e = SeriesEvidence {
                            stats_total: s.value(CsvSeries::TOTAL).into(),
                            ..SeriesEvidence::default()
                        };
                        counters.push((key, e));
                    }
                    MetricType::Histogram => histograms.push((
                        key,
                        StatPair::new(s.value(CsvSeries::COUNT), s.value(CsvSeries::SUM)),
                    )),
                    MetricType::Gauge | MetricType::Unknown => {
                        if f.name == PROCESS_START {
                            if let (Some(lo), Some(hi)) =
                                (s.value(CsvSeries::MIN), s.value(CsvSeries::MAX))
                            {
                                if process_start.is_none_or(|(p, _, _)| p < i) {
                                    process_start = Some((i, lo, hi));
                                }
                            }
                        }
                        gauges.push((
                            key,
                            StatPair::new(s.value(CsvSeries::AVG), s.value(CsvSeries::MAX)),
                        ));
                    }
                }
            }
            if let Some((_, lo, hi)) = process_start {
                process_starts.push((Arc::clone(&endpoint_url), (lo, hi)));
            }
            let known = match &last_sets {
                Some((made_of, known)) if same_sets(made_of, &sets) => Arc::clone(known),
                _ => {
                    let known = Arc::new(LabelSets::of(sets.clone()));
                    // Kept to compare with the next endpoint's; `sets` is made anew.
                    last_sets = Some((std::mem::take(&mut sets), Arc::clone(&known)));
                    known
                }
            };
            label_sets_of.push((Arc::clone(&endpoint_url), known));
        }
        insert_sorted(&mut self.families, families_of);
        insert_sorted(&mut self.label_sets, label_sets_of);
        insert_sorted(&mut self.process_start_stats, process_starts);
        put_counters(&mut self.series, counters);
        self.gauges.extend_sorted(gauges);
        self.histograms.extend_sorted(histograms);
        self.stats_source = Some("csv");
    }
}

/// Two lists of interned label sets are equal: by address first (interned sets are one copy
/// each), by content only where the addresses differ.
fn same_sets(a: &[Arc<Labels>], b: &[Arc<Labels>]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| Arc::ptr_eq(x, y) || x == y)
}

/// A family's canonical key and type, as an endpoint's series give them.
type FamilyType = (Arc<str>, MetricType);

/// An endpoint's families from its series' (canonical key, type) in family order, as
/// [`Evidence::note_family`] makes them: a key's type is the first one given that is not
/// `unknown` (or `unknown`).
fn family_map(families: &[FamilyType]) -> FamilyMap {
    let mut map = FamilyMap::new();
    for (key, t) in families {
        let info = match map.get_mut(&**key) {
            Some(info) => info,
            None => map.entry(Arc::clone(key)).or_default(),
        };
        if info.metric_type.is_none() || info.metric_type == Some(MetricType::Unknown) {
            info.metric_type = Some(*t);
        }
    }
    map
}

/// The interned copy of each reader label set, by the set's id (a reader shares each set
/// already: one interning per set, not per series).
struct SharedSets<'a> {
    read: &'a [Arc<Labels>],
    interned: Vec<Option<Arc<Labels>>>,
}

impl<'a> SharedSets<'a> {
    fn new(lean: &'a CsvLean) -> Self {
        SharedSets {
            read: &lean.label_sets,
            interned: vec![None; lean.label_sets.len()],
        }
    }

    fn get(&mut self, id: u32, intern: impl FnOnce(&Arc<Labels>) -> Arc<Labels>) -> Arc<Labels> {
        let (Some(slot), Some(read)) = (
            self.interned.get_mut(id as usize),
            self.read.get(id as usize),
        ) else {
            // An id beyond the list is the empty set (as the key order and the totals take it).
            return intern(&Arc::default());
        };
        match slot {
            Some(l) => Arc::clone(l),
            None => Arc::clone(slot.insert(intern(read))),
        }
    }
}

/// The series of a CSV export as accounting reads them: the lean read's, or those of a full
/// read made lean.
fn csv_lean(csv: &ServerMetricsExport) -> std::borrow::Cow<'_, CsvLean> {
    match &csv.csv_lean {
        Some(l) => std::borrow::Cow::Borrowed(l),
        None => std::borrow::Cow::Owned(CsvLean::of_families(&csv.metrics)),
    }
}

/// The indices of a CSV's series in the order of their keys (endpoint URL, family spelling,
/// labels); equal keys stay in file order. The series are bucketed by endpoint (a counting
/// sort: stable), then each endpoint's few series sorted by family and labels, which they
/// mostly already are (a lean read's series come by family).
fn csv_key_order(lean: &CsvLean) -> Vec<u32> {
    let mut by_url: Vec<(&str, u32)> = lean
        .endpoint_urls
        .iter()
        .zip(0u32..)
        .map(|(u, i)| (&**u, i))
        .collect();
    crate::sort::sort_by(&mut by_url, |a, b| a.cmp(b));
    let mut rank = vec![0usize; by_url.len()];
    for (r, (_, i)) in by_url.iter().enumerate() {
        if let Some(slot) = rank.get_mut(*i as usize) {
            *slot = r;
        }
    }
    let series = &lean.series;
    // Any endpoint index beyond the list sorts last, as one.
    let rank_of = |s: &CsvSeries| rank.get(s.endpoint as usize).copied().unwrap_or(rank.len());
    let mut start = vec![0usize; rank.len() + 2];
    for s in series {
        if let Some(n) = start.get_mut(rank_of(s) + 1) {
            *n += 1;
        }
    }
    for r in 1..start.len() {
        let before = start.get(r - 1).copied().unwrap_or(0);
        if let Some(n) = start.get_mut(r) {
            *n += before;
        }
    }
    // Four bytes an index (fewer than 2^32 series fit in memory): a 100 MB CSV has 435,000.
    let mut order = vec![0u32; series.len()];
    let mut next = start.clone();
    for (i, s) in (0u32..).zip(series) {
        if let Some(n) = next.get_mut(rank_of(s)) {
            if let Some(slot) = order.get_mut(*n) {
                *slot = i;
            }
            *n += 1;
        }
    }
    let empty = Labels::default();
    let key_cmp = |a: &u32, b: &u32| {
        let (Some(a), Some(b)) = (series.get(*a as usize), series.get(*b as usize)) else {
            return std::cmp::Ordering::Equal;
        };
        // Families are sorted by name in the export, so their index orders their spellings.
        a.family.cmp(&b.family).then_with(|| {
            if a.labels == b.labels {
                std::cmp::Ordering::Equal
            } else {
                let set = |s| lean.labels(s).map_or(&empty, |l| &**l);
                set(a).cmp(set(b))
            }
        })
    };
    for w in start.windows(2) {
        let (Some(&lo), Some(&hi)) = (w.first(), w.get(1)) else {
            continue;
        };
        let Some(group) = order.get_mut(lo..hi) else {
            continue;
        };
        let sorted = group
            .windows(2)
            .all(|p| key_cmp(&p[0], &p[1]) != std::cmp::Ordering::Greater);
        if !sorted {
            crate::sort::sort_by(group, key_cmp);
        }
    }
    order
}

/// The CSV's counters, sorted by key, into the series map: the map itself when it is empty
/// (as it is: the CSV is taken first), otherwise each merged as `add_export` does.
fn put_counters(map: &mut SeriesMap<SeriesEvidence>, items: Vec<(SeriesKey, SeriesEvidence)>) {
    if map.is_empty() {
        map.extend_sorted(items);
        return;
    }
    for (key, new) in items {
        let e = map.entry(key);
        e.stats_total = new.stats_total;
        e.slices = new.slices;
    }
}
