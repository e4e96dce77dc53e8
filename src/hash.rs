//! Hash tables keyed by what an upload chooses (label sets, family names, endpoint URLs):
//! SipHash-1-3, as std's `HashMap`, under keys drawn from the host's random source.
//!
//! std's `RandomState` draws its keys from the operating system. wasm32-unknown-unknown has
//! none, and std falls back to fixed keys there: every instance of the module hashed alike,
//! so label sets whose hashes collide could be computed once, offline, and uploaded to make
//! the edge worker's tables quadratic. [`Keyed`] takes its keys from the operating system
//! natively (through `RandomState`) and from the host in WASM (`crypto.getRandomValues`,
//! asked at the first table, not at instantiation: workerd refuses random values in a
//! module's global scope); see [`set_host_source`].

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hasher, RandomState};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::OnceLock;

/// A hash map under [`Keyed`].
pub type Map<K, V> = HashMap<K, V, Keyed>;
/// A hash set under [`Keyed`].
pub type Set<K> = HashSet<K, Keyed>;

/// A SipHash-1-3 builder with keys no input can know: the process's keys, the first one
/// offset per table (as `RandomState` does: a table filled by iterating another with the
/// same keys is quadratic).
#[derive(Clone, Debug)]
pub struct Keyed {
    k0: u64,
    k1: u64,
}

impl Default for Keyed {
    fn default() -> Self {
        let [k0, k1] = process_keys();
        let n = TABLES.fetch_add(1, Ordering::Relaxed);
        Keyed {
            k0: k0.wrapping_add(n),
            k1,
        }
    }
}

impl BuildHasher for Keyed {
    type Hasher = Sip13;

    fn build_hasher(&self) -> Sip13 {
        Sip13::new_with_keys(self.k0, self.k1)
    }
}

/// A text's keyed hash, made once and kept beside it (a value hashed into several tables,
/// and rehashed as each grows, hashes its text once). Under the process's keys, which no
/// input can know, as every table's. Clones keep it; it never enters equality. 32 bits: a
/// label set is 24 bytes with it natively and 12 in WASM (eight-byte alignment made it 16
/// there). Two sets of a run share a digest rarely (a few pairs among 200,000), and then
/// only cost a comparison of their texts.
#[derive(Debug, Default)]
pub struct Digest(AtomicU32);

impl Digest {
    /// The hash of `text`, which must be the same text at every call.
    #[inline]
    pub fn of(&self, text: &str) -> u64 {
        let d = match self.0.load(Ordering::Relaxed) {
            0 => {
                let [k0, k1] = process_keys();
                let mut h = Sip13::new_with_keys(k0, k1);
                h.write(text.as_bytes());
                let h = h.finish();
                // The high half folded in; 0 means "not made yet".
                let d = ((h ^ (h >> 32)) as u32).max(1);
                self.0.store(d, Ordering::Relaxed);
                d
            }
            d => d,
        };
        u64::from(d)
    }
}

impl Clone for Digest {
    fn clone(&self) -> Self {
        Digest(AtomicU32::new(self.0.load(Ordering::Relaxed)))
    }
}

/// A builder for tables whose keys hash as a [`Digest`] (label sets): it mixes the digest
/// with the table's own keys instead of hashing it again. The digest is already a keyed
/// SipHash of the text; the mix keeps each table's order its own (a table filled by
/// iterating another with one order is quadratic). A key that writes anything else is
/// mixed eight bytes at a time, which is no defence against chosen input: only keys whose
/// `Hash` writes a digest belong in such a table.
#[derive(Clone, Debug)]
pub struct Prehashed {
    k0: u64,
    k1: u64,
}

/// A hash map of keys that hash as a [`Digest`].
pub type DigestMap<K, V> = HashMap<K, V, Prehashed>;
/// A hash set of keys that hash as a [`Digest`].
pub type DigestSet<K> = HashSet<K, Prehashed>;

impl Default for Prehashed {
    fn default() -> Self {
        let Keyed { k0, k1 } = Keyed::default();
        Prehashed { k0, k1: k1 | 1 }
    }
}

impl BuildHasher for Prehashed {
    type Hasher = Mix;

    fn build_hasher(&self) -> Mix {
        Mix {
            k0: self.k0,
            k1: self.k1,
            state: 0,
        }
    }
}

/// See [`Prehashed`].
#[derive(Clone, Debug)]
pub struct Mix {
    k0: u64,
    k1: u64,
    state: u64,
}

impl Hasher for Mix {
    fn write(&mut self, bytes: &[u8]) {
        for w in bytes.chunks(8) {
            self.write_u64(le(w) ^ ((w.len() as u64) << 59));
        }
    }

    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.state = (self.state.rotate_left(23) ^ x).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    #[inline]
    fn finish(&self) -> u64 {
        // Every bit of the state reaches the low bits (the table's index) and the high ones
        // (its tag), under the table's keys.
        let x = (self.state ^ self.k0).wrapping_mul(self.k1);
        let x = (x ^ (x >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x ^ (x >> 32)
    }
}

/// Tables made so far (each one's offset of the first key).
static TABLES: AtomicU64 = AtomicU64::new(0);
/// The process's keys, drawn at the first table.
static KEYS: OnceLock<[u64; 2]> = OnceLock::new();
/// The host's random source, when the host is not an operating system (the WASM bindings).
static HOST: OnceLock<fn() -> Option<[u64; 2]>> = OnceLock::new();

/// Draw the process's keys from `source` (`None`: it failed, and `RandomState`'s keys are
/// used). Only the first source given counts; the bindings give it at instantiation.
pub fn set_host_source(source: fn() -> Option<[u64; 2]>) {
    let _ = HOST.set(source);
}

fn process_keys() -> [u64; 2] {
    *KEYS.get_or_init(|| {
        HOST.get()
            .and_then(|source| source())
            .unwrap_or_else(os_keys)
    })
}

/// Keys from `RandomState` (the operating system's random source; fixed on wasm32).
fn os_keys() -> [u64; 2] {
    let s = RandomState::new();
    [s.hash_one(0u64), s.hash_one(1u64)]
}

/// SipHash-1-3 (one compression round per eight bytes, three to finish), as std's
/// `DefaultHasher`, with the keys given.
#[derive(Clone, Debug)]
pub struct Sip13 {
    v: [u64; 4],
    /// Bytes written so far (only its low byte enters the hash).
    length: usize,
    /// The bytes of an unfinished eight, little-endian, and how many there are.
    tail: u64,
    ntail: usize,
}

impl Sip13 {
    pub fn new_with_keys(k0: u64, k1: u64) -> Self {
        Sip13 {
            v: [
                k0 ^ 0x736f_6d65_7073_6575,
                k1 ^ 0x646f_7261_6e64_6f6d,
                k0 ^ 0x6c79_6765_6e65_7261,
                k1 ^ 0x7465_6462_7974_6573,
            ],
            length: 0,
            tail: 0,
            ntail: 0,
        }
    }

    #[inline(always)]
    fn round(&mut self) {
        let [v0, v1, v2, v3] = &mut self.v;
        *v0 = v0.wrapping_add(*v1);
        *v1 = v1.rotate_left(13) ^ *v0;
        *v0 = v0.rotate_left(32);
        *v2 = v2.wrapping_add(*v3);
        *v3 = v3.rotate_left(16) ^ *v2;
        *v0 = v0.wrapping_add(*v3);
        *v3 = v3.rotate_left(21) ^ *v0;
        *v2 = v2.wrapping_add(*v1);
        *v1 = v1.rotate_left(17) ^ *v2;
        *v2 = v2.rotate_left(32);
    }

    #[inline(always)]
    fn compress(&mut self, m: u64) {
        self.v[3] ^= m;
        self.round();
        self.v[0] ^= m;
    }
}

/// The first eight bytes, or all of fewer, as a little-endian number (in at most three
/// loads: a copy of unknown length would be a call).
#[inline(always)]
fn le(bytes: &[u8]) -> u64 {
    if let Some(w) = bytes.first_chunk::<8>() {
        return u64::from_le_bytes(*w);
    }
    let mut out = 0;
    let mut i = 0;
    if let Some(w) = bytes.first_chunk::<4>() {
        out = u64::from(u32::from_le_bytes(*w));
        i = 4;
    }
    if let Some(w) = bytes.get(i..).and_then(|r| r.first_chunk::<2>()) {
        out |= u64::from(u16::from_le_bytes(*w)) << (8 * i);
        i += 2;
    }
    if let Some(&b) = bytes.get(i) {
        out |= u64::from(b) << (8 * i);
    }
    out
}

impl Sip13 {
    /// Write the `size` low bytes of `x` (1 to 8), as `write` of their little-endian bytes.
    #[inline(always)]
    fn short_write(&mut self, x: u64, size: usize) {
        self.length = self.length.wrapping_add(size);
        let needed = 8 - self.ntail;
        self.tail |= x << (8 * self.ntail);
        if size < needed {
            self.ntail += size;
            return;
        }
        let m = self.tail;
        self.compress(m);
        self.ntail = size - needed;
        self.tail = if needed < 8 { x >> (8 * needed) } else { 0 };
    }
}

impl Hasher for Sip13 {
    fn write(&mut self, mut msg: &[u8]) {
        self.length = self.length.wrapping_add(msg.len());
        if self.ntail != 0 {
            let needed = 8 - self.ntail;
            let (now, rest) = msg.split_at(needed.min(msg.len()));
            self.tail |= le(now) << (8 * self.ntail);
            if rest.is_empty() && now.len() < needed {
                self.ntail += now.len();
                return;
            }
            let m = self.tail;
            self.compress(m);
            self.ntail = 0;
            self.tail = 0;
            msg = rest;
        }
        let mut words = msg.chunks_exact(8);
        for w in &mut words {
            let w: &[u8; 8] = w.try_into().unwrap_or(&[0; 8]);
            self.compress(u64::from_le_bytes(*w));
        }
        let rest = words.remainder();
        self.tail = le(rest);
        self.ntail = rest.len();
    }

    fn write_u8(&mut self, i: u8) {
        self.short_write(u64::from(i), 1);
    }

    fn write_u32(&mut self, i: u32) {
        self.short_write(u64::from(i), 4);
    }

    fn write_u64(&mut self, i: u64) {
        self.short_write(i, 8);
    }

    fn write_usize(&mut self, i: usize) {
        self.short_write(i as u64, std::mem::size_of::<usize>());
    }

    fn finish(&self) -> u64 {
        let mut s = self.clone();
        let b = ((self.length as u64 & 0xff) << 56) | self.tail;
        s.compress(b);
        s.v[2] ^= 0xff;
        s.round();
        s.round();
        s.round();
        s.v[0] ^ s.v[1] ^ s.v[2] ^ s.v[3]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{DefaultHasher, Hash};

    /// Bytes from a small generator (no dependency).
    fn bytes(seed: &mut u64, n: usize) -> Vec<u8> {
        (0..n)
            .map(|_| {
                *seed = seed
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                (*seed >> 56) as u8
            })
            .collect()
    }

    #[test]
    fn is_std_siphash13_at_any_split() {
        // std's DefaultHasher is SipHash-1-3 under zero keys: the same writes, the same hash,
        // however the bytes are split between writes (every tail length on both sides).
        let mut seed = 7;
        for len in 0..70 {
            let msg = bytes(&mut seed, len);
            let mut want = DefaultHasher::new();
            want.write(&msg);
            for cut in 0..=len {
                for cut2 in cut..=len.min(cut + 9) {
                    let mut got = Sip13::new_with_keys(0, 0);
                    got.write(&msg[..cut]);
                    got.write(&msg[cut..cut2]);
                    got.write(&msg[cut2..]);
                    assert_eq!(got.finish(), want.finish(), "len {len} cuts {cut} {cut2}");
                }
            }
        }
    }

    #[test]
    fn integer_writes_are_their_bytes_at_any_offset() {
        let mut seed = 11;
        for round in 0..2000u64 {
            let (mut got, mut want) = (Sip13::new_with_keys(0, 0), DefaultHasher::new());
            for step in 0..(round % 13) {
                let x = u64::from_le_bytes(bytes(&mut seed, 8).try_into().unwrap());
                match (round + step) % 5 {
                    0 => (got.write_u8(x as u8), want.write_u8(x as u8)),
                    1 => (got.write_u32(x as u32), want.write_u32(x as u32)),
                    2 => (got.write_u64(x), want.write_u64(x)),
                    3 => (got.write_usize(x as usize), want.write_usize(x as usize)),
                    _ => {
                        let b = bytes(&mut seed, (x % 20) as usize);
                        (got.write(&b), want.write(&b))
                    }
                };
            }
            assert_eq!(got.finish(), want.finish(), "round {round}");
        }
    }

    #[test]
    fn hashes_values_as_std_does() {
        let value = ("http://10.0.0.1:8000/metrics", 7u32, [1u64, 2, 3], "vllm:x");
        let mut want = DefaultHasher::new();
        value.hash(&mut want);
        let mut got = Sip13::new_with_keys(0, 0);
        value.hash(&mut got);
        assert_eq!(got.finish(), want.finish());
    }

    #[test]
    fn keys_change_the_hash_and_tables_differ() {
        let h = |k0, k1| {
            let mut s = Sip13::new_with_keys(k0, k1);
            s.write(b"model=\"m\",tp_rank=\"0\"");
            s.finish()
        };
        assert_ne!(h(0, 0), h(1, 0));
        assert_ne!(h(0, 0), h(0, 1));
        let (a, b) = (Keyed::default(), Keyed::default());
        assert_ne!(a.hash_one("same"), b.hash_one("same"));
    }

    #[test]
    fn maps_under_keyed_work() {
        let mut m: Map<String, u32> = Map::default();
        for i in 0..1000u32 {
            m.insert(format!("set{i}"), i);
        }
        assert!((0..1000u32).all(|i| m.get(&format!("set{i}")) == Some(&i)));
    }

    #[test]
    fn equal_label_sets_hash_alike_made_apart() {
        use crate::model::Labels;
        use std::sync::Arc;
        let set = |i: u32| {
            Labels::from_pairs(vec![("model", "m".to_string()), ("tp_rank", i.to_string())])
        };
        let mut m: DigestMap<Arc<Labels>, u32> = DigestMap::default();
        for i in 0..5000u32 {
            m.insert(Arc::new(set(i)), i);
        }
        // Looked up with sets made anew (their digests not made yet), and with clones of them
        // (made, and kept by the clone).
        for i in 0..5000u32 {
            let fresh = set(i);
            assert_eq!(m.get(&fresh), Some(&i));
            assert_eq!(m.get(&fresh.clone()), Some(&i));
        }
        assert_eq!(m.get(&set(5000)), None);
        // The digest is the text's keyed hash: the same for equal texts, kept by clones.
        let (a, b) = (Digest::default(), Digest::default());
        assert_eq!(a.of("x"), b.of("x"));
        assert_eq!(a.clone().of("x"), a.of("x"));
        assert_ne!(Digest::default().of("x"), Digest::default().of("y"));
    }

    #[test]
    fn a_mix_takes_every_byte() {
        let h = |b: &[u8]| {
            let p = Prehashed::default();
            let mut m = p.build_hasher();
            m.write(b);
            (m.finish(), p)
        };
        let (x, p) = h(b"12345678");
        let mut m = p.build_hasher();
        m.write(b"12345679");
        assert_ne!(m.finish(), x);
        let mut m = p.build_hasher();
        m.write(b"1234567");
        assert_ne!(m.finish(), x);
    }
}
