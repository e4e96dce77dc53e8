//! Raw scrapes folded into per-series evidence as they arrive, in bounded memory.
//!
//! A scrape file repeats every series in every scrape; accounting needs of it, per series,
//! the cumulative samples (time, value), a gauge's first and largest value, a histogram's last
//! (count, sum), and per endpoint the scrape times and `process_start_time_seconds`. A
//! [`ScrapeFold`] takes scrapes one at a time, in any order, and keeps only that: the
//! streaming API folds a JSONL file line by line and never holds its scrapes; the whole-buffer
//! path folds a run's scrapes the same way, so both give the same evidence byte for byte.
//! Everything order-dependent is decided by an explicit order (time, file name, position in
//! the file): the result does not depend on the order scrapes come in.
//!
//! Samples are kept compact ([`SampleBuf`]: about 4 to 6 bytes each instead of 16). Under
//! memory pressure [`ScrapeFold::coarsen`] thins every series soundly (see
//! [`SampleBuf::decimate`]); the evidence then says so (`coarsened`, reason
//! `evidence_coarsened`): every bound drawn from it still contains the truth, only wider.

use super::evidence::{Evidence, LabelSets, SeriesEvidence, SeriesKey, StatPair, PROCESS_START};
use super::request_scope::RecordFold;
use crate::admission::{room_for_one, room_in_map};
use crate::hash::{DigestMap, Map as HashMap};
use crate::model::{Labels, MetricType, SampleValue, Scrape, SeriesTable};
use crate::read::names::canonical_family;
use std::sync::Arc;

/// What a streaming read folded instead of keeping: the scrape JSONL's evidence and the
/// per-request records' (see `RunReader::with_fold`).
#[derive(Default)]
pub struct Folded {
    pub scrapes: ScrapeFold,
    /// `None` when no `profile_export.jsonl` was folded.
    pub records: Option<RecordFold>,
}

/// Cumulative samples (epoch ns, value) of one series, delta-encoded: each sample is the
/// zigzag varint of its time step, then either the zigzag varint of its integral value's step
/// (shifted left one bit) or the tag 1 and the value's eight bytes. Lossless for every `f64`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SampleBuf {
    held: Held,
}

/// What a [`SampleBuf`] holds. Two words: most series of a many-series CSV export have no
/// samples and pay no more; a capture's series have one sample each, held in a box of 16
/// bytes, not in the 88 of [`SampleData`] (a capture of 200,000 series held 14.4 MB of them
/// in WASM).
#[derive(Debug, Clone, PartialEq, Default)]
enum Held {
    #[default]
    Empty,
    /// One sample (time, value's bits), its samples not yet final: no `first_carried_ns`.
    Lone(Box<(u64, u64)>),
    /// One sample, final, and carried by the series from its own time on: `first_carried_ns`
    /// is that time. Any other state of one sample (0s before it, carried from elsewhere) is
    /// held as `Many`.
    LoneFinal(Box<(u64, u64)>),
    Many(Box<SampleData>),
}

/// The state of a [`SampleBuf`] with samples encoded. 88 bytes (a box of 96 with its header).
#[derive(Debug, Clone, PartialEq)]
struct SampleData {
    /// The samples encoded.
    bytes: Vec<u8>,
    last_t: u64,
    /// The last integral value.
    last_int: i64,
    len: u32,
    /// Every sample came at or after the one before it.
    sorted: bool,
    /// See [`SampleBuf::first_carried_ns`].
    first_carried_ns: Option<u64>,
    /// The 0s before the first sample (see [`SampleBuf::set_leading_zeros`]), not counted in
    /// `len`.
    zeros: Option<LeadingZeros>,
}

/// The 0s a lazily created series stood at before its first sample: the first `len` of its
/// endpoint's scrape times, one array shared by every series of the endpoint. Held as samples,
/// a file that adds a series in every scrape held the square of its scrapes in memory.
#[derive(Debug, Clone, PartialEq)]
struct LeadingZeros {
    times: Arc<[u64]>,
    len: usize,
}

impl LeadingZeros {
    fn times(&self) -> &[u64] {
        self.times.get(..self.len).unwrap_or(&[])
    }
}

/// Largest integral value kept as a step (exactly representable in both `f64` and `i64`).
const EXACT_INT: f64 = 9_007_199_254_740_992.0;

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    let mut shift = 0u32;
    loop {
        let b = *bytes.get(*at)?;
        *at += 1;
        v |= u64::from(b & 0x7f).checked_shl(shift)?;
        if b < 0x80 {
            return Some(v);
        }
        shift += 7;
    }
}

/// The value as an exact integer step, when it is one (not `-0.0`, which must come back).
/// Tested by a round trip through `i64`, not `fract()`: that is a call to libm's `trunc` where
/// the target does not assume SSE4.1, once per sample folded (1 % of reading a scrape JSONL).
fn as_int(v: f64) -> Option<i64> {
    if v.is_nan() || v.abs() > EXACT_INT {
        return None;
    }
    let i = v as i64;
    (i as f64 == v && !(v == 0.0 && v.is_sign_negative())).then_some(i)
}

/// Push sample `(t, v)` after `d`'s samples.
fn push_encoded(d: &mut SampleData, t: u64, v: f64) {
    if t < d.last_t {
        d.sorted = false;
    }
    encode(d, t, v);
    // Past 2^32 - 1 samples (tens of GB of them) the count stays there.
    d.len = d.len.saturating_add(1);
}

/// Append sample `(t, v)` to `d`'s bytes (see [`SampleBuf`] for the encoding).
fn encode(d: &mut SampleData, t: u64, v: f64) {
    put_varint(&mut d.bytes, zigzag(t.wrapping_sub(d.last_t) as i64));
    d.last_t = t;
    match as_int(v) {
        Some(i) => {
            put_varint(&mut d.bytes, zigzag(i.wrapping_sub(d.last_int)) << 1);
            d.last_int = i;
        }
        None => {
            d.bytes.push(1);
            d.bytes.extend_from_slice(&v.to_bits().to_le_bytes());
        }
    }
}

impl SampleBuf {
    pub fn new() -> Self {
        SampleBuf::default()
    }

    pub fn push(&mut self, t: u64, v: f64) {
        // Most pushes come to a series with samples encoded already: that case first, with
        // no other step (the general order cost a scrape fold 4 % more instructions).
        if let Held::Many(d) = &mut self.held {
            push_encoded(d, t, v);
            return;
        }
        if matches!(self.held, Held::Empty) {
            self.held = Held::Lone(Box::new((t, v.to_bits())));
            return;
        }
        self.encode_lone();
        if let Held::Many(d) = &mut self.held {
            push_encoded(d, t, v);
        }
    }

    /// Hold a lone sample encoded, as it would have been pushed (any other state stays).
    fn encode_lone(&mut self) {
        let (s, first_carried_ns) = match &self.held {
            Held::Lone(s) => (**s, None),
            Held::LoneFinal(s) => (**s, Some(s.0)),
            Held::Empty | Held::Many(_) => return,
        };
        let mut d = SampleData {
            // Room for the first two samples (an epoch time alone takes nine bytes): grown
            // from nothing, the bytes were allocated and moved three times by the second.
            bytes: Vec::with_capacity(32),
            last_t: 0,
            last_int: 0,
            len: 1,
            sorted: true,
            first_carried_ns,
            zeros: None,
        };
        encode(&mut d, s.0, f64::from_bits(s.1));
        self.held = Held::Many(Box::new(d));
    }

    /// The lone sample, when there is exactly one held apart.
    fn lone(&self) -> Option<(u64, f64)> {
        match &self.held {
            Held::Lone(s) | Held::LoneFinal(s) => Some((s.0, f64::from_bits(s.1))),
            Held::Empty | Held::Many(_) => None,
        }
    }

    fn data(&self) -> Option<&SampleData> {
        match &self.held {
            Held::Many(d) => Some(d),
            _ => None,
        }
    }

    /// Samples held, the leading 0s included.
    pub fn len(&self) -> usize {
        match &self.held {
            Held::Empty => 0,
            Held::Lone(_) | Held::LoneFinal(_) => 1,
            Held::Many(d) => d.len as usize + d.zeros.as_ref().map_or(0, |z| z.len),
        }
    }

    /// Whether every sample came at or after the one before it.
    pub fn is_sorted(&self) -> bool {
        self.data().is_none_or(|d| d.sorted)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The samples: the leading 0s, then the others in the order they were pushed.
    pub fn iter(&self) -> impl Iterator<Item = (u64, f64)> + '_ {
        let zeros = self.leading_zero_times().iter();
        zeros.map(|t| (*t, 0.0)).chain(self.carried())
    }

    /// The samples without the leading 0s.
    pub fn carried(&self) -> SampleIter<'_> {
        SampleIter {
            lone: self.lone(),
            bytes: self.data().map_or(&[], |d| &d.bytes),
            at: 0,
            t: 0,
            int: 0,
        }
    }

    /// The times of the leading 0s (see [`Self::set_leading_zeros`]).
    pub fn leading_zero_times(&self) -> &[u64] {
        self.data()
            .and_then(|d| d.zeros.as_ref())
            .map_or(&[], LeadingZeros::times)
    }

    /// The shared array the leading 0s' times are a prefix of (series of one endpoint share
    /// one), when there are any.
    pub fn leading_zeros_source(&self) -> Option<&Arc<[u64]>> {
        let z = self.data()?.zeros.as_ref()?;
        (z.len > 0).then_some(&z.times)
    }

    /// The samples a bound over the window `[start, end]` reads the same as all of them:
    /// every sample after the leading 0s, and of the 0s only the last at or before `start`,
    /// the first at or after it, the last at or before `end`, and the last 0 (the step to the
    /// first sample, and a 0 at or after `end` when there is one). Between two 0s a counter
    /// adds 0 and cannot decrease, so the others change no lower or upper bound,
    /// interpolation or reset; two 0s inside the window keep one in-window step that adds 0
    /// (the sum's sign of zero). So a bound costs the series' own samples, not one per scrape
    /// before it appeared.
    pub fn for_window(&self, start: u64, end: u64) -> Vec<(u64, f64)> {
        let zeros = self.leading_zero_times();
        let k = zeros.len();
        let at_or_before = |t: u64| zeros.partition_point(|z| *z <= t).checked_sub(1);
        let after_start = zeros.partition_point(|z| *z < start);
        // In index order: the last at or before `start` comes before both others.
        let (mid, late) = match at_or_before(end) {
            Some(e) => (after_start.min(e), Some(after_start.max(e))),
            None => (after_start, None),
        };
        let keep = [at_or_before(start), Some(mid), late, k.checked_sub(1)];
        let mut out = Vec::with_capacity(4 + self.len() - k);
        let mut last = None;
        for i in keep.into_iter().flatten() {
            if let (Some(t), true) = (zeros.get(i), last.is_none_or(|l| i > l)) {
                out.push((*t, 0.0));
                last = Some(i);
            }
        }
        out.extend(self.carried());
        out
    }

    pub fn to_vec(&self) -> Vec<(u64, f64)> {
        let mut v = Vec::with_capacity(self.len());
        v.extend(self.iter());
        v
    }

    /// Time of the first raw sample that carried the series (the samples before it are the
    /// 0s a lazily created series stood at); set once the samples are final. Kept here, not
    /// beside the buffer: a many-series CSV export's series have no samples, and 16 bytes each
    /// for it were a tenth of their evidence.
    pub fn first_carried_ns(&self) -> Option<u64> {
        match &self.held {
            Held::Empty | Held::Lone(_) => None,
            Held::LoneFinal(s) => Some(s.0),
            Held::Many(d) => d.first_carried_ns,
        }
    }

    pub(crate) fn set_first_carried_ns(&mut self, t: Option<u64>) {
        match (std::mem::take(&mut self.held), t) {
            (Held::Empty, _) => {}
            (Held::Lone(s) | Held::LoneFinal(s), None) => self.held = Held::Lone(s),
            (Held::Lone(s) | Held::LoneFinal(s), Some(t)) if t == s.0 => {
                self.held = Held::LoneFinal(s)
            }
            (held, t) => {
                self.held = held;
                self.encode_lone();
                if let Held::Many(d) = &mut self.held {
                    d.first_carried_ns = t;
                }
            }
        }
    }

    /// Precede the samples (all later than `times[..len]`) with a 0 at each of `times[..len]`.
    pub(crate) fn set_leading_zeros(&mut self, times: &Arc<[u64]>, len: usize) {
        let no_zeros_held = self.data().is_none_or(|d| d.zeros.is_none());
        if matches!(self.held, Held::Empty) || (len == 0 && no_zeros_held) {
            return;
        }
        self.encode_lone();
        if let Held::Many(d) = &mut self.held {
            d.zeros = (len > 0).then(|| LeadingZeros {
                times: Arc::clone(times),
                len: len.min(times.len()),
            });
        }
    }

    /// Bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.data().map_or(0, |d| d.bytes.capacity())
    }

    /// Keep about half of the samples, soundly for a cumulative counter: between two kept
    /// samples nothing dropped decreased, so the counter went monotonically from one to the
    /// other and every bound drawn from the kept samples contains the truth. Always kept: the
    /// first and the last sample, both samples of every decrease, every value that is not a
    /// finite non-negative number and its neighbours, and samples sharing a time with a
    /// neighbour (a contradiction must stay visible). Samples not in time order are sorted
    /// first. Returns whether anything was dropped.
    pub fn decimate(&mut self) -> bool {
        if self.len() < 3 {
            return false;
        }
        // The fold thins its buffers before any leading 0s are set.
        debug_assert!(self.leading_zero_times().is_empty());
        let out = if self.is_sorted() {
            thin(self.carried())
        } else {
            let mut all = self.to_vec();
            all.sort_by(by_time_then_value);
            thin(all.into_iter())
        };
        let dropped = out.len() < self.len();
        let first = self.first_carried_ns();
        *self = out;
        self.set_first_carried_ns(first);
        if let Held::Many(d) = &mut self.held {
            d.bytes.shrink_to_fit();
        }
        dropped
    }
}

/// The samples of [`SampleBuf::decimate`] kept from `samples` (in time order), looked at three
/// at a time so a series is never decoded whole.
fn thin(mut samples: impl Iterator<Item = (u64, f64)>) -> SampleBuf {
    let ok = |v: f64| v.is_finite() && v >= 0.0;
    let mut out = SampleBuf::new();
    let mut prev: Option<(u64, f64)> = None;
    let mut cur = samples.next();
    let mut alternate = false;
    while let Some((t, v)) = cur {
        let next = samples.next();
        let forced = match (prev, next) {
            (Some((pt, pv)), Some((nt, nv))) => {
                !ok(v) || !ok(pv) || !ok(nv) || pt == t || nt == t || v < pv || nv < v
            }
            // The first and the last sample.
            _ => true,
        };
        let keep = forced || {
            alternate = !alternate;
            !alternate
        };
        if keep {
            out.push(t, v);
        }
        prev = Some((t, v));
        cur = next;
    }
    out
}

impl From<Vec<(u64, f64)>> for SampleBuf {
    fn from(v: Vec<(u64, f64)>) -> Self {
        let mut b = SampleBuf::new();
        for (t, x) in v {
            b.push(t, x);
        }
        b
    }
}

/// Decoder of a [`SampleBuf`]'s samples after its leading 0s.
pub struct SampleIter<'a> {
    /// A lone sample, not encoded (see [`Held::Lone`]).
    lone: Option<(u64, f64)>,
    bytes: &'a [u8],
    at: usize,
    t: u64,
    int: i64,
}

impl Iterator for SampleIter<'_> {
    type Item = (u64, f64);

    fn next(&mut self) -> Option<(u64, f64)> {
        if let Some(s) = self.lone.take() {
            return Some(s);
        }
        let dt = get_varint(self.bytes, &mut self.at)?;
        self.t = self.t.wrapping_add(unzigzag(dt) as u64);
        let tag = get_varint(self.bytes, &mut self.at)?;
        let v = if tag == 1 {
            let raw: [u8; 8] = self.bytes.get(self.at..self.at + 8)?.try_into().ok()?;
            self.at += 8;
            f64::from_bits(u64::from_le_bytes(raw))
        } else {
            self.int = self.int.wrapping_add(unzigzag(tag >> 1));
            self.int as f64
        };
        Some((self.t, v))
    }
}

/// Where a scrape sits in the order the whole-buffer path sorts scrapes in: time, file name,
/// position among the scrapes of that file (the file's index breaks ties between files of
/// one name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Order {
    t: u64,
    source: u32,
    seq: u64,
}

/// What the samples of one series said.
#[derive(Debug, Default)]
struct Intake {
    /// The series' key by the ids of its parts (see [`KeyIds`]): 12 bytes where the key's
    /// shared parts took 40, on each of a capture's hundreds of thousands of series.
    key: KeyIds,
    samples: SampleBuf,
    /// A gauge's value at the earliest scrape, and its largest value.
    /// Boxed, as is `histogram`: a series is mostly one kind, and a capture of many new
    /// counter series held 88 unused bytes each inline.
    gauge: Option<Box<(Order, f64, f64)>>,
    /// A histogram's (count, sum) at the latest scrape.
    histogram: Option<Box<HistogramAt>>,
}

/// A histogram's (count, sum) and the scrape they are from.
type HistogramAt = (Order, Option<f64>, Option<f64>);

/// A series key by ids: its endpoint's index in `ScrapeFold::endpoints`, its spelling's in
/// `ScrapeFold::spellings`, its label set's rank in `ScrapeFold::interned`. Equal keys of one
/// fold have equal ids (each part is kept once).
type KeyIds = [u32; 3];

/// No id yet (in the id vectors below; a fold never holds 2^32 − 1 of anything).
const NO_ID: u32 = u32::MAX;

/// What has been seen of one file's table on one endpoint (by the table's own indices).
#[derive(Default)]
struct Seen {
    /// Each table series' intake, or [`NO_ID`].
    intakes: Vec<u32>,
    families: Vec<bool>,
    /// The address of the table that numbered these series (0: none yet; see
    /// [`ScrapeFold::keyed`]).
    table: usize,
}

/// One file's series table's parts as the fold keeps them (by series and family index): each
/// series' label set rank and each family's spelling id, or [`NO_ID`].
#[derive(Default)]
struct SharedParts {
    labels: Vec<u32>,
    spellings: Vec<u32>,
}

/// Slot `i` of `v`, made (empty) first if `v` is shorter.
fn slot_at<T: Default>(v: &mut Vec<T>, i: usize) -> &mut T {
    if v.len() <= i {
        v.resize_with(i + 1, T::default);
    }
    &mut v[i]
}

/// Id slot `i` of `v`, made ([`NO_ID`]) first if `v` is shorter than `len` or `i`.
fn id_slot(v: &mut Vec<u32>, i: usize, len: usize) -> &mut u32 {
    if v.len() <= i {
        v.resize(len.max(i + 1), NO_ID);
    }
    &mut v[i]
}

/// `u32` of an index the fold made (fewer than 2^32 − 1 of anything fit in memory).
fn id(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(NO_ID)
}

/// One file's `process_start_time_seconds` samples of an endpoint: (file name, source, samples).
type FileSamples<'a> = (&'a str, u32, Vec<(u64, f64)>);

/// What the scrapes of one endpoint said besides their series' samples. A scrape finds its
/// endpoint's entry by one hash of its URL: per-endpoint ordered maps cost a many-endpoint run
/// several URL comparisons per scrape, and the log factor showed in its time.
#[derive(Default)]
struct EndpointFold {
    /// Its index in `ScrapeFold::endpoints` (which are sorted by URL when the fold ends).
    id: u32,
    /// Shared by the keys of the endpoint's series.
    url: Arc<str>,
    timed: bool,
    untimed: bool,
    /// Scrape times (the 0s a lazily created series stood at).
    scrape_times: Vec<u64>,
    /// By source, in the order first met: what has been seen of that file's table. (Indexed by
    /// source, an endpoint held a place for every file registered before its own: a run of
    /// 20,000 capture files, each its own endpoint, held 200 million places, 11.5 GB.)
    seen: Vec<(u32, Seen)>,
    /// Families noted, in the order they were first seen: (spelling, type). (Its label sets
    /// are its intakes': found from them once, in `into_evidence`.)
    families: Vec<(u32, Option<MetricType>)>,
    /// By source, in the order first met: `process_start_time_seconds` samples in file order.
    process_start: Vec<(u32, Vec<(u64, f64)>)>,
}

/// Scrapes folded into per-series evidence (see the module docs).
#[derive(Default)]
pub struct ScrapeFold {
    /// File names by source index.
    sources: Vec<String>,
    /// Endpoint URL → index in `endpoints`.
    endpoint_ids: HashMap<Arc<str>, u32>,
    /// In the order first seen.
    endpoints: Vec<EndpointFold>,
    intakes: Vec<Intake>,
    /// An intake by its key's ids, once [`ScrapeFold::keyed`]. SipHash with the map's own
    /// keys: ids are small integers whose combinations an upload chooses.
    by_key: HashMap<KeyIds, u32>,
    /// Whether intakes are found by key. Within one table's numbering of one endpoint's
    /// series (one file's, or one capture's) a new series is a new key: the table holds each
    /// (family, label set) once. A key can come again only through a second numbering of an
    /// endpoint's series (a second file, a second capture), and only then is every intake
    /// put in `by_key`. A capture (one scrape, one numbering) never needs it: 200,000
    /// hashes and a 4.5 MB table fewer at 200,000 series.
    keyed: bool,
    /// The keys' label sets, kept once, each with its rank in the order first seen; ordered
    /// once, when the fold ends (found by hash: an ordered set compared whole label maps a
    /// dozen times per new set). The sort starts from the order first seen, mostly the order
    /// a file lists them, and finds its runs (the hash's order has none). The rank rides in
    /// the table: a vector of the sets in that order, growing beside the intakes' vector,
    /// left the intakes' old copies as holes in WASM's linear memory (+8 MB on a capture of
    /// 200,000 series).
    interned: DigestMap<Arc<Labels>, u32>,
    /// The keys' spellings, kept once, by id (in the order first seen).
    spellings: Vec<Arc<str>>,
    /// The id of each spelling in `spellings`.
    spelling_ids: HashMap<Arc<str>, u32>,
    /// By source: each table series' label set in `interned` and each table family's
    /// spelling in `spellings`, found once per file, not once per endpoint.
    shared_parts: Vec<SharedParts>,
    /// Some evidence was thinned under memory pressure.
    coarsened: bool,
    /// [`ScrapeFold::sample_bytes`] after the last thinning.
    thinned_to: usize,
}

/// Push onto a list made with room for one on first use, as `vec![x]` makes it: the bytes
/// held ([`ScrapeFold::sample_bytes`]) decide when evidence is thinned.
fn push_first_one<T>(v: &mut Vec<T>, x: T) {
    if v.capacity() == 0 {
        v.reserve_exact(1);
    }
    v.push(x);
}

impl ScrapeFold {
    pub fn new() -> Self {
        ScrapeFold::default()
    }

    /// Register a file scrapes will come from; its index is the `source` of [`ScrapeFold::take`].
    pub fn source(&mut self, name: &str) -> u32 {
        self.sources.push(name.to_string());
        u32::try_from(self.sources.len() - 1).unwrap_or(u32::MAX)
    }

    fn order_cmp(&self, a: &Order, b: &Order) -> std::cmp::Ordering {
        let name = |s: u32| self.sources.get(s as usize).map(String::as_str);
        a.t.cmp(&b.t)
            .then_with(|| name(a.source).cmp(&name(b.source)))
            .then(a.source.cmp(&b.source))
            .then(a.seq.cmp(&b.seq))
    }

    /// The rank in `interned` of the label set of series `series` of `source`'s table
    /// (`len` series long).
    fn labels_of(&mut self, source: u32, (series, len): (u32, usize), labels: &Arc<Labels>) -> u32 {
        let parts = slot_at(&mut self.shared_parts, source as usize);
        let slot = id_slot(&mut parts.labels, series as usize, len);
        if *slot != NO_ID {
            return *slot;
        }
        // One hash: the entry takes a copy of the pointer, given back when the set is known.
        let next = id(self.interned.len());
        let rank = *self.interned.entry(Arc::clone(labels)).or_insert(next);
        *slot = rank;
        rank
    }

    /// The id of the spelling of family `family` of `source`'s table (`len` families long).
    fn spelling_of(&mut self, source: u32, (family, len): (u32, usize), name: &str) -> u32 {
        let parts = slot_at(&mut self.shared_parts, source as usize);
        let slot = id_slot(&mut parts.spellings, family as usize, len);
        if *slot != NO_ID {
            return *slot;
        }
        let n = match self.spelling_ids.get(name) {
            Some(n) => *n,
            None => {
                let n = id(self.spellings.len());
                let name: Arc<str> = Arc::from(name);
                self.spellings.push(Arc::clone(&name));
                self.spelling_ids.insert(name, n);
                n
            }
        };
        *slot = n;
        n
    }

    /// The index of the endpoint `url` in `endpoints`, made on first sight.
    /// The index of the endpoint `url` in `endpoints`, made on first sight; none when a new
    /// one's room was refused under a memory budget ([`crate::admission`]: the file then
    /// fails). A scrape JSONL of a million endpoints grew these tables unadmitted to 74.5 MB
    /// of a stream's linear memory before its refusal.
    fn endpoint_id(&mut self, url: &str) -> Option<usize> {
        if let Some(&id) = self.endpoint_ids.get(url) {
            return Some(id as usize);
        }
        if !room_in_map(&mut self.endpoint_ids) || !room_for_one(&mut self.endpoints) {
            return None;
        }
        let url: Arc<str> = Arc::from(url);
        let at = self.endpoints.len();
        self.endpoint_ids.insert(Arc::clone(&url), id(at));
        self.endpoints.push(EndpointFold {
            id: id(at),
            url,
            ..EndpointFold::default()
        });
        Some(at)
    }

    /// From now on, find intakes by key (see [`ScrapeFold::keyed`]): every intake so far is
    /// put in `by_key` (their keys are distinct: each came from one numbering).
    fn key_all(&mut self) {
        if self.keyed {
            return;
        }
        self.keyed = true;
        self.by_key.reserve(self.intakes.len());
        for (i, intake) in self.intakes.iter().enumerate() {
            self.by_key.insert(intake.key, id(i));
        }
    }

    /// The intake of series `series` of `table` on endpoint `ep`, made on first sight.
    fn intake_of(
        &mut self,
        seen: &mut Seen,
        (ep, source): (usize, u32),
        table: &SeriesTable,
        series: u32,
    ) -> Option<usize> {
        let slot = id_slot(&mut seen.intakes, series as usize, table.series.len());
        if *slot != NO_ID {
            return Some(*slot as usize);
        }
        let meta = table.series.get(series as usize)?;
        let family = table.families.get(meta.family as usize)?;
        // A new series may grow the intakes and both key tables: each growth is admitted
        // under a memory budget, or the sample is not taken (the file then fails).
        let room = room_for_one(&mut self.intakes)
            && room_in_map(&mut self.interned)
            && (!self.keyed || room_in_map(&mut self.by_key));
        if !room {
            return None;
        }
        let labels = self.labels_of(source, (series, table.series.len()), &meta.labels);
        let families = table.families.len();
        let spelling = self.spelling_of(source, (meta.family, families), &family.name);
        let key = [id(ep), spelling, labels];
        let next = id(self.intakes.len());
        let at = if self.keyed {
            *self.by_key.entry(key).or_insert(next)
        } else {
            next
        };
        if at == next {
            self.intakes.push(Intake {
                key,
                ..Intake::default()
            });
        }
        *id_slot(&mut seen.intakes, series as usize, table.series.len()) = at;
        Some(at as usize)
    }

    /// Room for `n` series' intakes made at once, when none is made yet and the table would
    /// be admitted ([`crate::admission`]; else they grow as they come): grown by doubling
    /// past a few MB, its old copies were holes a large table could not use, and WASM's
    /// linear memory grew past them.
    pub fn expect_series(&mut self, n: usize) {
        let bytes = n.saturating_mul(std::mem::size_of::<Intake>());
        if self.intakes.is_empty() && crate::admission::would_admit(bytes) {
            self.intakes.reserve_exact(n);
        }
    }

    /// Whether `scrape` may be taken under the accounting's heap limit
    /// ([`crate::admission`]): each of its samples may be a new series' intake, its lone
    /// sample's box and its ids.
    pub fn admit(&self, scrape: &Scrape) -> bool {
        let per_series = std::mem::size_of::<Intake>() + std::mem::size_of::<(u64, u64)>() + 8;
        crate::admission::admit(scrape.samples.len().saturating_mul(per_series))
    }

    /// Take in one scrape of file `source` (its `seq`-th in the file), its series and families
    /// described by `table` (the scrape's own table, or its reader's while it is still read).
    /// Every scrape of one source is numbered by one table (which may grow): its series'
    /// intakes are found by their numbers.
    pub fn take(&mut self, source: u32, seq: u64, scrape: &Scrape, table: &SeriesTable) {
        let Some(ep) = self.endpoint_id(&scrape.endpoint_url) else {
            return;
        };
        let Some(endpoint) = self.endpoints.get_mut(ep) else {
            return;
        };
        match scrape.timestamp_ns {
            Some(t) => {
                endpoint.timed = true;
                push_first_one(&mut endpoint.scrape_times, t);
            }
            None => endpoint.untimed = true,
        }
        // Files are read one after another, their sources numbered in that order: the source
        // is the endpoint's last one, or new when it comes after it (a search of the list was
        // quadratic in the files of one endpoint: 20,000 scrape files, 24 % of the run).
        let found = match endpoint.seen.last() {
            Some((last, _)) if *last == source => Some(endpoint.seen.len() - 1),
            Some((last, _)) if *last < source => None,
            _ => endpoint.seen.iter().rposition(|(s, _)| *s == source),
        };
        let at = match found {
            Some(at) => at,
            None => {
                // Most endpoints are in one file, and a first push reserves four places (144
                // unused bytes per endpoint, 2.9 MB of a 20,000-endpoint scrape JSONL).
                push_first_one(&mut endpoint.seen, (source, Seen::default()));
                endpoint.seen.len() - 1
            }
        };
        let mut seen = endpoint
            .seen
            .get_mut(at)
            .map(|o| std::mem::take(&mut o.1))
            .unwrap_or_default();
        let here = std::ptr::from_ref(table) as usize;
        if seen.table != here {
            // A second numbering of this endpoint's series: its keys may come again.
            // Every other place was given its table when it was made (and put back below).
            let second = seen.table != 0 || endpoint.seen.len() > 1;
            seen.table = here;
            if second {
                self.key_all();
            }
        }
        if self.intakes.is_empty() {
            // A capture is one scrape: its series are known at once. Grown by doubling, the
            // intakes' old copies were left as holes in WASM's linear memory, and the label
            // sets' table held its old and new copies at the peak (2.2 MB more at 200,000).
            self.intakes.reserve_exact(scrape.samples.len());
            self.interned.reserve(scrape.samples.len());
        }
        let mut start = 0usize;
        for group in &scrape.groups {
            let end = (group.end as usize).clamp(start, scrape.samples.len());
            let samples = scrape.samples.get(start..end).unwrap_or(&[]);
            start = end;
            let Some(fam) = table.families.get(group.family as usize) else {
                continue;
            };
            let f = group.family as usize;
            if seen.families.len() <= f {
                seen.families.resize(table.families.len().max(f + 1), false);
            }
            if !seen.families[f] {
                seen.families[f] = true;
                let families = (group.family, table.families.len());
                let spelling = self.spelling_of(source, families, &fam.name);
                if let Some(endpoint) = self.endpoints.get_mut(ep) {
                    endpoint.families.push((spelling, fam.metric_type));
                }
            }
            for sample in samples {
                let Some(at) = self.intake_of(&mut seen, (ep, source), table, sample.series) else {
                    continue;
                };
                let Some(t) = scrape.timestamp_ns else {
                    // An untimed capture shows which families and label sets exist (roles,
                    // engine), not when values held: it bounds nothing.
                    continue;
                };
                let order = Order { t, source, seq };
                self.take_value(at, ep, source, order, fam, &sample.value);
            }
        }
        if let Some(slot) = self.endpoints.get_mut(ep).and_then(|e| e.seen.get_mut(at)) {
            slot.1 = seen;
        }
    }

    fn take_value(
        &mut self,
        at: usize,
        ep: usize,
        source: u32,
        order: Order,
        fam: &crate::model::FamilyMeta,
        value: &SampleValue,
    ) {
        match value {
            SampleValue::Scalar { value } if fam.name == PROCESS_START => {
                let Some(endpoint) = self.endpoints.get_mut(ep) else {
                    return;
                };
                let files = &mut endpoint.process_start;
                let i = match files.iter().position(|f| f.0 == source) {
                    Some(i) => i,
                    None => {
                        files.push((source, Vec::new()));
                        files.len() - 1
                    }
                };
                if let Some((_, samples)) = files.get_mut(i) {
                    push_first_one(samples, (order.t, *value));
                }
            }
            SampleValue::Scalar { value } => {
                let v = *value;
                if fam.metric_type == Some(MetricType::Gauge) {
                    let earlier = match self.intakes.get(at).and_then(|i| i.gauge.as_deref()) {
                        Some((o, _, _)) => self.order_cmp(&order, o).is_lt(),
                        None => true,
                    };
                    if let Some(i) = self.intakes.get_mut(at) {
                        let g = i.gauge.get_or_insert_with(|| Box::new((order, v, v)));
                        if earlier {
                            g.0 = order;
                            g.1 = v;
                        }
                        g.2 = g.2.max(v);
                    }
                } else if let Some(i) = self.intakes.get_mut(at) {
                    i.samples.push(order.t, v);
                }
            }
            SampleValue::Histogram(h) => {
                let later = match self.intakes.get(at).and_then(|i| i.histogram.as_deref()) {
                    Some((o, _, _)) => self.order_cmp(&order, o).is_gt(),
                    None => true,
                };
                if later {
                    if let Some(i) = self.intakes.get_mut(at) {
                        i.histogram = Some(Box::new((order, h.count, h.sum)));
                    }
                }
            }
        }
    }

    /// Bytes of samples held (what [`ScrapeFold::coarsen`] can give back).
    pub fn sample_bytes(&self) -> usize {
        self.intakes
            .iter()
            .map(|i| i.samples.heap_bytes())
            .sum::<usize>()
            + self
                .endpoints
                .iter()
                .map(|e| {
                    e.scrape_times.capacity() * 8
                        + e.process_start
                            .iter()
                            .map(|f| f.1.capacity() * 16)
                            .sum::<usize>()
                })
                .sum::<usize>()
    }

    /// Whether the evidence was thinned.
    pub fn coarsened(&self) -> bool {
        self.coarsened
    }

    /// Say that other evidence of the run was thinned (the export's counter timeslices
    /// dropped under memory pressure: `crate::read::run`), so the evidence says so.
    pub fn note_thinned(&mut self) {
        self.coarsened = true;
    }

    /// Whether the samples grew by half since they were last thinned: thinning again only
    /// then keeps their density even over the run (thinning at every push would thin the
    /// early samples over and over).
    pub fn grew_since_thinned(&self) -> bool {
        self.sample_bytes() > self.thinned_to / 2 * 3
    }

    /// Thin the evidence soundly to about half (see [`SampleBuf::decimate`]): per endpoint the
    /// scrape times (fewer implied 0s only widen bounds), and `process_start_time_seconds`
    /// down to the first and last sample of each value (lossless for restart detection).
    /// Returns whether anything was given back.
    pub fn coarsen(&mut self) -> bool {
        let mut dropped = false;
        for i in &mut self.intakes {
            dropped |= i.samples.decimate();
        }
        for times in self.endpoints.iter_mut().map(|e| &mut e.scrape_times) {
            times.sort_unstable();
            times.dedup();
            let n = times.len();
            if n > 2 {
                let last = times[n - 1];
                let mut k = 0usize;
                times.retain(|_| {
                    k += 1;
                    k % 2 == 1
                });
                if times.last() != Some(&last) {
                    times.push(last);
                }
                times.shrink_to_fit();
                dropped |= times.len() < n;
            }
        }
        let files = self.endpoints.iter_mut().flat_map(|e| &mut e.process_start);
        for samples in files.map(|f| &mut f.1) {
            let n = samples.len();
            crate::sort::sort_by_key(samples, |s| s.0);
            let mut out: Vec<(u64, f64)> = Vec::with_capacity(n);
            for (i, s) in samples.iter().enumerate() {
                let same =
                    |o: Option<&(u64, f64)>| o.is_some_and(|o| o.1.to_bits() == s.1.to_bits());
                let interior = i > 0 && same(samples.get(i - 1)) && same(samples.get(i + 1));
                if !interior {
                    out.push(*s);
                }
            }
            out.shrink_to_fit();
            dropped |= out.len() < n;
            *samples = out;
        }
        self.coarsened |= dropped;
        self.thinned_to = self.sample_bytes();
        dropped
    }

    /// Put what was folded into `ev` (after the exports), as the whole-buffer path always
    /// has: families and labels noted, gauges and histograms merged, samples sorted with the
    /// 0s of lazily created series, `process_start_time_seconds` in scrape order.
    pub fn into_evidence(self, ev: &mut Evidence) {
        let ScrapeFold {
            sources,
            endpoint_ids,
            endpoints,
            intakes,
            by_key,
            interned,
            spellings,
            spelling_ids,
            shared_parts,
            coarsened,
            ..
        } = self;
        // The lookups of scrapes are done with: their memory goes before the merge needs more
        // (unbound fields would be dropped only at the end).
        drop((endpoint_ids, by_key, shared_parts, spelling_ids));
        // The keys' ranks and order, then the series' table ([`crate::admission`]).
        let per_intake = std::mem::size_of::<([u32; 3], u32)>()
            + std::mem::size_of::<u32>()
            + std::mem::size_of::<(SeriesKey, SeriesEvidence)>();
        if !crate::admission::admit(intakes.len().saturating_mul(per_intake)) {
            return;
        }
        ev.coarsened |= coarsened;
        let mut parts = KeyParts::of(&endpoints, spellings, first_seen_order(interned));
        parts.share_labels(ev);
        let mut endpoints = endpoints;
        crate::sort::sort_by(&mut endpoints, |a, b| a.url.cmp(&b.url));
        // Each spelling's canonical key made once, not once per endpoint.
        let canonical: Vec<String> = parts
            .spellings
            .iter()
            .map(|s| canonical_family(s))
            .collect();
        let ranks = KeyRanks::of(&endpoints, &parts);
        let ranked = ranked_keys(&intakes, &ranks);
        let mut sets = label_sets_by_endpoint(&ranked).peekable();
        let (mut last_families, mut last_sets) = (None, None);
        for (i, e) in endpoints.iter().enumerate() {
            ev.endpoints.insert(Arc::clone(&e.url));
            let keys = e.families.iter().map(|(spelling, t)| {
                let key = canonical.get(*spelling as usize);
                (key.map_or("", String::as_str), *t)
            });
            // Shared with the endpoint before's when equal, as `collect_from` does once every
            // endpoint is in: a copy each until then was most of what a run of many endpoints
            // held at the peak of its merge.
            ev.note_canonical_families(&e.url, keys, &mut last_families);
            let mut mine = Vec::new();
            while let Some((_, l)) = sets.next_if(|(ep, _)| *ep as usize == i) {
                let rank = ranks.labels_sorted.get(l as usize);
                if let Some(l) = rank.and_then(|r| parts.labels(*r)) {
                    mine.push(Arc::clone(l));
                }
            }
            // In rank order, which is the sets' order: taken as they are.
            ev.note_label_sets(&e.url, LabelSets::of(mine), &mut last_sets);
        }
        // What ranked the keys is done with before the merge makes the series table (the
        // table's peak): 5.6 MB natively on a capture of 200,000 series, and the order a
        // vector of its own (collected in place, it kept the ranks' four times larger one).
        drop((sets, ranks, canonical));
        let order: Vec<u32> = ranked.iter().map(|(_, at)| *at).collect();
        drop(ranked);
        merge_intakes(ev, (intakes, &parts), order, coarsened);
        finish_all_samples(ev, &mut endpoints);
        for e in &mut endpoints {
            let mut files: Vec<FileSamples<'_>> = std::mem::take(&mut e.process_start)
                .into_iter()
                .map(|(source, samples)| {
                    let name = sources.get(source as usize).map_or("", String::as_str);
                    (name, source, samples)
                })
                .collect();
            if files.is_empty() {
                continue;
            }
            crate::sort::sort_by(&mut files, |a, b| (a.0, a.1).cmp(&(b.0, b.1)));
            let mut all: Vec<(u64, f64)> = files.into_iter().flat_map(|f| f.2).collect();
            // Stable: equal times keep file-name order, then file order.
            crate::sort::sort_by_key(&mut all, |s| s.0);
            ev.process_start_samples.insert(Arc::clone(&e.url), all);
        }
        let untimed = endpoints.iter().filter(|e| e.untimed && !e.timed);
        ev.untimed_endpoints
            .extend(untimed.map(|e| Arc::clone(&e.url)));
    }
}

/// The sets of `interned` in the order of their ranks (see [`ScrapeFold::interned`]): each
/// rank is a position, so they are placed, not sorted (every rank below the count is one).
fn first_seen_order(interned: DigestMap<Arc<Labels>, u32>) -> Vec<Option<Arc<Labels>>> {
    let mut placed: Vec<Option<Arc<Labels>>> = vec![None; interned.len()];
    for (l, rank) in interned {
        if let Some(slot) = placed.get_mut(rank as usize) {
            *slot = Some(l);
        }
    }
    placed
}

/// The parts of the fold's keys by their ids (see [`KeyIds`]).
struct KeyParts {
    urls: Vec<Arc<str>>,
    spellings: Vec<Arc<str>>,
    /// By rank; the evidence's shared copies once [`KeyParts::share_labels`] has run.
    labels: Vec<Option<Arc<Labels>>>,
}

impl KeyParts {
    fn of(
        endpoints: &[EndpointFold],
        spellings: Vec<Arc<str>>,
        labels: Vec<Option<Arc<Labels>>>,
    ) -> KeyParts {
        let mut urls: Vec<Arc<str>> = vec![Arc::from(""); endpoints.len()];
        for e in endpoints {
            if let Some(u) = urls.get_mut(e.id as usize) {
                *u = Arc::clone(&e.url);
            }
        }
        KeyParts {
            urls,
            spellings,
            labels,
        }
    }

    /// Each label set becomes the evidence's shared copy, looked up once per set.
    fn share_labels(&mut self, ev: &mut Evidence) {
        for l in self.labels.iter_mut().flatten() {
            *l = ev.intern_shared(l);
        }
    }

    /// The label set of rank `rank`.
    fn labels(&self, rank: u32) -> Option<&Arc<Labels>> {
        self.labels.get(rank as usize)?.as_ref()
    }

    /// The key of `ids`, if every id is known.
    fn key(&self, [e, s, l]: KeyIds) -> Option<SeriesKey> {
        Some(SeriesKey {
            endpoint_url: Arc::clone(self.urls.get(e as usize)?),
            spelling: Arc::clone(self.spellings.get(s as usize)?),
            labels: Arc::clone(self.labels(l)?),
        })
    }
}

/// Each id's place in its part's order (endpoints by URL, spellings as strings, label sets as
/// label sets): the keys' order is then a sort of integers, not of URLs that share long
/// prefixes.
struct KeyRanks {
    endpoints: Vec<u32>,
    spellings: Vec<u32>,
    labels: Vec<u32>,
    /// The label sets' ids in order (the inverse of `labels`).
    labels_sorted: Vec<u32>,
}

impl KeyRanks {
    /// `endpoints` sorted by URL.
    fn of(endpoints: &[EndpointFold], parts: &KeyParts) -> KeyRanks {
        let mut by_id = vec![NO_ID; endpoints.len()];
        for (i, e) in endpoints.iter().enumerate() {
            if let Some(r) = by_id.get_mut(e.id as usize) {
                *r = id(i);
            }
        }
        let spellings = sorted_ids(&parts.spellings);
        // The sort starts from the order first seen, mostly the order a file lists them, and
        // finds its runs.
        let labels_sorted = sorted_ids(&parts.labels);
        KeyRanks {
            endpoints: by_id,
            spellings: inverse(&spellings),
            labels: inverse(&labels_sorted),
            labels_sorted,
        }
    }
}

/// The ids of `items` (their indices) in the items' order.
fn sorted_ids<T: Ord>(items: &[T]) -> Vec<u32> {
    let mut ids: Vec<u32> = (0..id(items.len())).collect();
    crate::sort::sort_by(&mut ids, |a, b| {
        items.get(*a as usize).cmp(&items.get(*b as usize))
    });
    ids
}

/// Each id's position in `order`.
fn inverse(order: &[u32]) -> Vec<u32> {
    let mut at = vec![NO_ID; order.len()];
    for (i, o) in order.iter().enumerate() {
        if let Some(slot) = at.get_mut(*o as usize) {
            *slot = id(i);
        }
    }
    at
}

/// The intakes' indices in key order, each with its key's ranks (endpoint, spelling, label
/// set).
fn ranked_keys(intakes: &[Intake], ranks: &KeyRanks) -> Vec<([u32; 3], u32)> {
    let rank = |m: &[u32], i: u32| m.get(i as usize).copied().unwrap_or(NO_ID);
    let mut ranked: Vec<([u32; 3], u32)> = intakes
        .iter()
        .enumerate()
        .map(|(at, i)| {
            let [u, s, l] = i.key;
            let r = [
                rank(&ranks.endpoints, u),
                rank(&ranks.spellings, s),
                rank(&ranks.labels, l),
            ];
            (r, id(at))
        })
        .collect();
    // Each key once, so the order is total: an unstable sort is deterministic.
    ranked.sort_unstable_by_key(|r| r.0);
    ranked
}

/// The distinct (endpoint, label set) ranks of keys ranked by [`ranked_keys`], in order: an
/// endpoint's label sets are those of its series.
fn label_sets_by_endpoint(ranked: &[([u32; 3], u32)]) -> impl Iterator<Item = (u32, u32)> {
    let mut pairs: Vec<(u32, u32)> = ranked.iter().map(|([u, _, l], _)| (*u, *l)).collect();
    pairs.sort_unstable();
    pairs.dedup();
    pairs.into_iter()
}

/// Merge the intakes, taken in `order` (their keys' order), into the evidence's series,
/// gauges and histograms, one pass each.
fn merge_intakes(
    ev: &mut Evidence,
    (mut intakes, parts): (Vec<Intake>, &KeyParts),
    order: Vec<u32>,
    coarsened: bool,
) {
    // Each vector sized exactly, its entries made as the evidence keeps them: into an empty
    // table a vector is taken as it is. Grown by doubling, and then copied into the table,
    // the series were two copies, the larger half unused, at the peak of a run of many.
    let (mut n_gauges, mut n_histograms, mut n_series) = (0, 0, 0);
    for i in &intakes {
        n_gauges += usize::from(i.gauge.is_some());
        n_histograms += usize::from(i.histogram.is_some());
        n_series += usize::from(!i.samples.is_empty());
    }
    let mut gauges = Vec::with_capacity(n_gauges);
    let mut histograms = Vec::with_capacity(n_histograms);
    let mut series = Vec::with_capacity(n_series);
    for at in order {
        let Some(intake) = intakes.get_mut(at as usize).map(std::mem::take) else {
            continue;
        };
        let Some(key) = parts.key(intake.key) else {
            continue;
        };
        if let Some((_, first, max)) = intake.gauge.as_deref().copied() {
            gauges.push((key.clone(), StatPair::new(Some(first), Some(max))));
        }
        if let Some((_, count, sum)) = intake.histogram.as_deref().copied() {
            histograms.push((key.clone(), StatPair::new(count, sum)));
        }
        if !intake.samples.is_empty() {
            let e = SeriesEvidence {
                samples: intake.samples,
                coarsened,
                ..SeriesEvidence::default()
            };
            series.push((key, e));
        }
    }
    // Each taken: the tables' vectors need the room.
    drop(intakes);
    ev.gauges.merge_sorted_values(gauges, |g, new| {
        let (avg, seen_max) = g.get();
        let (first, max) = new.get();
        *g = StatPair::new(
            avg.or(first),
            match (seen_max, max) {
                (Some(m), Some(max)) => Some(m.max(max)),
                (m, max) => max.or(m),
            },
        );
    });
    ev.histograms
        .merge_sorted_values(histograms, |h, new| *h = new);
    ev.series.merge_sorted_values(series, |e, new| {
        e.samples = new.samples;
        e.coarsened = new.coarsened;
    });
}

/// Every series' samples finished with its endpoint's scrape times (see [`finish_samples`]);
/// `endpoints` sorted by URL. The series are in endpoint order: one search per endpoint.
fn finish_all_samples(ev: &mut Evidence, endpoints: &mut [EndpointFold]) {
    let times: Vec<(&str, Arc<[u64]>)> = endpoints
        .iter_mut()
        .filter(|e| e.timed)
        .map(|e| {
            let mut t = std::mem::take(&mut e.scrape_times);
            t.sort_unstable();
            t.dedup();
            (&*e.url, Arc::from(t))
        })
        .collect();
    ev.series.settle();
    // Both in URL order (the series by key, endpoint first): the next endpoint's times are at
    // or after the last one's, found by walking on (a binary search per endpoint was half the
    // string comparisons of the fold's merge on a run of 10,000 endpoints).
    let mut next = 0;
    let mut last: Option<(Arc<str>, Option<usize>)> = None;
    for (key, e) in ev.series.iter_mut() {
        let at = match &last {
            Some((url, at)) if Arc::ptr_eq(url, &key.endpoint_url) => *at,
            _ => {
                let url = &*key.endpoint_url;
                while times.get(next).is_some_and(|(u, _)| *u < url) {
                    next += 1;
                }
                let at = times
                    .get(next)
                    .is_some_and(|(u, _)| *u == url)
                    .then_some(next);
                last = Some((Arc::clone(&key.endpoint_url), at));
                at
            }
        };
        finish_samples(e, at.and_then(|i| times.get(i)).map(|(_, t)| t));
    }
}

/// A series' samples as accounting reads them: with the 0s of the scrapes before its first
/// sample (a labelled Prometheus counter is created on its first increment: a scrape of the
/// endpoint that does not carry the series yet saw it at 0), sorted by time; the same instant
/// twice with the same value is one sample (a re-scrape); with different values the samples
/// contradict each other, and the order of lines must not decide which holds: the series is
/// flagged and keeps the smaller value. The 0s are all earlier than the first sample, so they
/// are kept apart (a prefix of `times`, see [`SampleBuf::set_leading_zeros`]).
fn finish_samples(e: &mut super::evidence::SeriesEvidence, times: Option<&Arc<[u64]>>) {
    let sorted = e.samples.is_sorted();
    let first = if sorted {
        e.samples.carried().next().map(|s| s.0)
    } else {
        e.samples.carried().map(|s| s.0).min()
    };
    let Some(first) = first else {
        return;
    };
    // Samples pushed in time order, one per instant (the common case), are what the rebuild
    // would make of them, byte for byte: decoded once to check, not decoded and encoded again.
    if !(sorted && one_per_instant_already(&e.samples)) {
        let (out, conflict) = if sorted {
            one_per_instant(e.samples.carried())
        } else {
            let mut all = e.samples.to_vec();
            all.sort_by(by_time_then_value);
            one_per_instant(all.into_iter())
        };
        e.samples = out;
        e.sample_conflict |= conflict;
    }
    e.samples.set_first_carried_ns(Some(first));
    if let Some(times) = times {
        e.samples
            .set_leading_zeros(times, times.partition_point(|t| *t < first));
    }
}

/// Whether samples pushed in time order have no instant twice.
fn one_per_instant_already(samples: &SampleBuf) -> bool {
    let mut last = None;
    samples.carried().all(|(t, _)| last.replace(t) != Some(t))
}

/// Samples in time order (any order within one instant) reduced to one per instant: the
/// smallest value (by `total_cmp`), and whether two values of one instant differ (NaNs are
/// one value).
fn one_per_instant(samples: impl Iterator<Item = (u64, f64)>) -> (SampleBuf, bool) {
    let same = |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
    let mut out = SampleBuf::new();
    let mut conflict = false;
    let mut group: Option<(u64, f64)> = None;
    for (t, v) in samples {
        match group.as_mut() {
            Some(g) if g.0 == t => {
                conflict |= !same(g.1, v);
                if v.total_cmp(&g.1).is_lt() {
                    g.1 = v;
                }
            }
            _ => {
                if let Some((gt, gv)) = group.replace((t, v)) {
                    out.push(gt, gv);
                }
            }
        }
    }
    if let Some((gt, gv)) = group {
        out.push(gt, gv);
    }
    (out, conflict)
}

/// Time, then value (`total_cmp`): the order samples are sorted in.
fn by_time_then_value(a: &(u64, f64), b: &(u64, f64)) -> std::cmp::Ordering {
    a.0.cmp(&b.0).then(a.1.total_cmp(&b.1))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key that comes again through a second numbering (another capture of the endpoint) is
    /// the same intake, found by key only from then on; one numbering never keys.
    #[test]
    fn keys_repeated_across_numberings_are_one_series() {
        use crate::read::filter::FamilyFilter;
        use crate::read::prometheus_text::read_prometheus_text;
        use crate::read::run::CaptureMeta;
        let capture = |t: u64, lines: &[&str]| {
            let text = format!("# TYPE vllm:prompt_tokens counter\n{}\n", lines.join("\n"));
            let meta = CaptureMeta {
                endpoint_url: Some("http://e:8000/metrics".into()),
                timestamp_ns: Some(t),
            };
            read_prometheus_text("c.prom", text.as_bytes(), &meta, &FamilyFilter::all()).unwrap()
        };
        let a = capture(
            1_000,
            &[
                "vllm:prompt_tokens_total{r=\"1\"} 5",
                "vllm:prompt_tokens_total{r=\"2\"} 7",
            ],
        );
        let b = capture(
            2_000,
            &[
                "vllm:prompt_tokens_total{r=\"3\"} 1",
                "vllm:prompt_tokens_total{r=\"1\"} 9",
            ],
        );
        let series = |fold: ScrapeFold| -> Vec<(String, Vec<(u64, f64)>)> {
            let mut ev = Evidence::default();
            fold.into_evidence(&mut ev);
            ev.series.settle();
            ev.series
                .iter()
                .map(|(k, e)| (format!("{:?}", k.labels), e.samples.to_vec()))
                .collect()
        };
        let want = vec![
            (
                "{\"r\": \"1\"}".to_string(),
                vec![(1_000, 5.0), (2_000, 9.0)],
            ),
            ("{\"r\": \"2\"}".to_string(), vec![(1_000, 7.0)]),
            // Absent from the endpoint's first scrape: a 0 there (see `set_leading_zeros`).
            (
                "{\"r\": \"3\"}".to_string(),
                vec![(1_000, 0.0), (2_000, 1.0)],
            ),
        ];
        // Two files.
        let mut fold = ScrapeFold::new();
        let (s0, s1) = (fold.source("a.prom"), fold.source("b.prom"));
        fold.take(s0, 0, &a, &a.table);
        assert!(!fold.keyed);
        fold.take(s1, 0, &b, &b.table);
        assert!(fold.keyed);
        assert_eq!(series(fold), want);
        // One numbering again and again: never keyed.
        let mut fold = ScrapeFold::new();
        let s0 = fold.source("a.prom");
        fold.take(s0, 0, &a, &a.table);
        fold.take(s0, 1, &a, &a.table);
        assert!(!fold.keyed);
    }

    /// An endpoint keeps a place for each file its scrapes came from, not for every file
    /// registered before: a run of many captures, each its own endpoint, is linear in them.
    /// (Indexed by source, 20,000 captures held 200 million places, 11.5 GB.)
    #[test]
    fn an_endpoint_keeps_places_for_its_own_files_only() {
        use crate::read::filter::FamilyFilter;
        use crate::read::prometheus_text::read_prometheus_text;
        use crate::read::run::CaptureMeta;
        let capture = |i: u64| {
            let text = "# TYPE vllm:prompt_tokens counter\nvllm:prompt_tokens_total 5\n";
            let meta = CaptureMeta {
                endpoint_url: Some(format!("http://e{i}:8000/metrics")),
                timestamp_ns: Some(1_000 + i),
            };
            read_prometheus_text("c.prom", text.as_bytes(), &meta, &FamilyFilter::all()).unwrap()
        };
        let mut fold = ScrapeFold::new();
        let n = 300u64;
        for i in 0..n {
            let c = capture(i);
            let s = fold.source(&format!("c{i}.prom"));
            fold.take(s, 0, &c, &c.table);
        }
        // And one endpoint in two files, the first met again after the second.
        let (a, b) = (capture(0), capture(0));
        let (sa, sb) = (fold.source("again-a.prom"), fold.source("again-b.prom"));
        fold.take(sa, 0, &a, &a.table);
        fold.take(sb, 0, &b, &b.table);
        fold.take(sa, 1, &a, &a.table);
        let places: Vec<usize> = fold.endpoints.iter().map(|e| e.seen.len()).collect();
        assert_eq!(places.len(), n as usize);
        assert_eq!(places.iter().sum::<usize>(), n as usize + 2, "{places:?}");
        assert_eq!(places[0], 3);
        assert!(fold.keyed);
    }

    /// Every sequence comes back to the bit, whatever its first sample (integral, not, -0.0,
    /// NaN, infinite), when held alone and when more follow it; a lone sample holds no bytes.
    #[test]
    fn samples_come_back_lone_or_followed() {
        let values = [
            0.0,
            -0.0,
            7.0,
            -3.0,
            2.5,
            f64::NAN,
            f64::INFINITY,
            9.007e15,
            1e300,
        ];
        let times = [u64::MAX - 1, 1_781_634_703_000_000_000, 0, 5];
        let bits = |v: &[(u64, f64)]| -> Vec<(u64, u64)> {
            v.iter().map(|(t, x)| (*t, x.to_bits())).collect()
        };
        for (i, first) in values.iter().enumerate() {
            for n in 1..5usize {
                let want: Vec<(u64, f64)> = (0..n)
                    .map(|k| {
                        let v = if k == 0 {
                            *first
                        } else {
                            values[(i + 3 * k) % values.len()]
                        };
                        (times[(i + k) % times.len()], v)
                    })
                    .collect();
                let b = SampleBuf::from(want.clone());
                assert_eq!(b.len(), n);
                assert_eq!(bits(&b.to_vec()), bits(&want), "{want:?}");
                assert_eq!(b.is_sorted(), want.windows(2).all(|w| w[0].0 <= w[1].0));
                if n == 1 {
                    assert_eq!(b.heap_bytes(), 0);
                }
            }
        }
        #[cfg(target_pointer_width = "64")]
        assert_eq!(std::mem::size_of::<SampleData>(), 88);
        assert_eq!(
            std::mem::size_of::<SampleBuf>(),
            2 * std::mem::size_of::<usize>()
        );
    }

    /// Samples kept as read (in time order, one per instant, no 0s before them) are what the
    /// rebuild makes of them; the other cases are rebuilt.
    #[test]
    fn finishing_keeps_or_rebuilds_to_the_same_samples() {
        type Case = (&'static [(u64, f64)], &'static [u64]);
        let cases: [Case; 7] = [
            (&[(10, 1.0), (20, 2.0), (30, 2.0)], &[10, 20, 30]),
            (&[(10, 1.0), (20, 2.0)], &[]),
            (&[(10, 1.0), (20, 2.0)], &[5, 10, 20]),
            (&[(10, 1.0), (10, 1.0), (20, 2.0)], &[10, 20]),
            (&[(10, 3.0), (10, 1.0), (20, 2.0)], &[10, 20]),
            (&[(20, 2.0), (10, 1.0)], &[10, 20]),
            (&[(10, f64::NAN), (20, -0.0)], &[10, 20]),
        ];
        let bits = |v: Vec<(u64, f64)>| -> Vec<(u64, u64)> {
            v.into_iter().map(|(t, x)| (t, x.to_bits())).collect()
        };
        for (samples, times) in cases {
            let mut e = crate::account::evidence::SeriesEvidence {
                samples: SampleBuf::from(samples.to_vec()),
                ..Default::default()
            };
            finish_samples(&mut e, Some(&Arc::from(times)));
            let first = samples.iter().map(|s| s.0).min().unwrap();
            let mut all: Vec<(u64, f64)> = (times.iter().filter(|t| **t < first))
                .map(|t| (*t, 0.0))
                .chain(samples.iter().copied())
                .collect();
            all.sort_by(by_time_then_value);
            let (want, conflict) = one_per_instant(all.into_iter());
            assert_eq!(bits(e.samples.to_vec()), bits(want.to_vec()), "{samples:?}");
            assert_eq!(e.sample_conflict, conflict, "{samples:?}");
            assert_eq!(e.samples.first_carried_ns(), Some(first));
        }
    }

    /// A series that appears late and its explicit 0s: the same samples, and every window's
    /// bound drawn from the few 0s [`SampleBuf::for_window`] keeps is the bound drawn from all
    /// of them, to the bit (windows on, between and around the scrape times).
    #[test]
    fn leading_zeros_bound_as_explicit_ones() {
        use crate::account::interval::{bound, SeriesContext, Window};
        let mut rng = crate::synth::rng::Rng::new(11, 0);
        let policy = crate::account::policy::Policy::default();
        for case in 0..400u64 {
            let scrapes = 2 + rng.next_u64() % 12;
            let times: Vec<u64> = (0..scrapes).map(|i| 100 + 10 * i).collect();
            let appears = 1 + rng.next_u64() % (scrapes - 1);
            let samples: Vec<(u64, f64)> = times[appears as usize..]
                .iter()
                .map(|t| {
                    (
                        *t,
                        [0.0, -0.0, 5.0, 3.0, 7.5][(rng.next_u64() % 5) as usize],
                    )
                })
                .collect();
            let mut e = crate::account::evidence::SeriesEvidence {
                samples: SampleBuf::from(samples.clone()),
                ..Default::default()
            };
            finish_samples(&mut e, Some(&Arc::from(times.as_slice())));
            let mut explicit = crate::account::evidence::SeriesEvidence {
                samples: SampleBuf::from(e.samples.to_vec()),
                ..Default::default()
            };
            explicit
                .samples
                .set_first_carried_ns(e.samples.first_carried_ns());
            assert_eq!(e.samples.leading_zero_times(), &times[..appears as usize]);
            assert_eq!(
                format!("{:?}", e.samples.to_vec()),
                format!("{:?}", explicit.samples.to_vec())
            );
            for _ in 0..20 {
                let mut edge = || 95 + rng.next_u64() % (10 * scrapes + 10);
                let (a, b) = (edge(), edge());
                let window = Some(Window {
                    start_ns: a.min(b),
                    end_ns: a.max(b),
                });
                let at = SeriesContext {
                    window: window.filter(|_| case % 10 != 0),
                    ..SeriesContext::default()
                };
                let (got, want) = (bound(&e, &at, &policy), bound(&explicit, &at, &policy));
                assert_eq!(
                    format!("{got:?}"),
                    format!("{want:?}"),
                    "{samples:?} {window:?}"
                );
            }
        }
    }

    /// A series first seen at the 100,000th scrape of its endpoint holds its 0s as a prefix of
    /// the endpoint's scrape times, not as samples; a bound reads four of them.
    #[test]
    fn leading_zeros_are_not_held_per_series() {
        let times: Arc<[u64]> = Arc::from((0..100_000u64).collect::<Vec<_>>());
        let mut e = crate::account::evidence::SeriesEvidence {
            samples: SampleBuf::from(vec![(100_000, 1.0)]),
            ..Default::default()
        };
        finish_samples(&mut e, Some(&times));
        assert_eq!(e.samples.len(), 100_001);
        assert_eq!(e.samples.iter().nth(99_999), Some((99_999, 0.0)));
        assert!(e.samples.heap_bytes() < 64, "{}", e.samples.heap_bytes());
        let read = e.samples.for_window(50_000, 60_000);
        assert_eq!(
            read,
            [(50_000, 0.0), (60_000, 0.0), (99_999, 0.0), (100_000, 1.0)]
        );
    }

    #[test]
    fn every_value_comes_back() {
        let values = [
            (1_781_938_006_649_142_179u64, 0.0),
            (1_781_938_006_649_142_179, -0.0),
            (5, 1e300),
            (u64::MAX, f64::NAN),
            (0, -3.0),
            (7, 9_007_199_254_740_992.0),
            (8, -9_007_199_254_740_992.0),
            (9, 0.5),
            (10, f64::INFINITY),
            (11, 123_456_789.0),
            (12, -0.5),
            (13, 4_503_599_627_370_495.5),
            (14, f64::NEG_INFINITY),
            (15, 18_014_398_509_481_984.0),
        ];
        let b = SampleBuf::from(values.to_vec());
        let back = b.to_vec();
        assert_eq!(back.len(), values.len());
        for (a, b) in values.iter().zip(&back) {
            assert_eq!(a.0, b.0);
            assert_eq!(a.1.to_bits(), b.1.to_bits());
        }
    }

    #[test]
    fn decimation_keeps_ends_decreases_and_oddities() {
        let mut v: Vec<(u64, f64)> = (0..100u64).map(|i| (i * 10, i as f64)).collect();
        v[50].1 = 3.0; // a restart: 49 → 3
        v[70].1 = f64::NAN;
        let mut b = SampleBuf::from(v.clone());
        assert!(b.decimate());
        let kept = b.to_vec();
        assert!(kept.len() < 70);
        let has = |t: u64| kept.iter().any(|s| s.0 == t);
        for t in [0, 490, 500, 690, 700, 710, 990] {
            assert!(has(t), "{t} dropped");
        }
    }
}
