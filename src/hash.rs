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
use std::sync::atomic::{AtomicU64, Ordering};
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

/// Up to eight bytes as a little-endian number (in at most three loads: a copy of unknown
/// length would be a call).
#[inline(always)]
fn le(bytes: &[u8]) -> u64 {
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
}
