//! A map from strings, in key order, for cold paths: sorted keys beside their values, found by
//! one binary search that every value type shares.
//!
//! Each `BTreeMap<String, V>` compiles its own node code per value type (1.5–4 KB of wasm each,
//! issue 11); here only `Vec` insertion is per type. Iteration is in key order, as a
//! `BTreeMap`'s; inserting is linear in the map's length, so it is for maps grown in key order
//! (at their end, no move) or of a few keys, never for keys in an order an upload chooses:
//! filled in file order, an export's families, the families `inspect` met in scrapes and a
//! launch file's endpoints each made a run quadratic (sort them first, or find them by hash).

/// The keys, sorted and distinct, and `values[i]` for `keys[i]`.
#[derive(Debug, Clone, PartialEq)]
pub struct StrMap<V> {
    keys: Vec<String>,
    values: Vec<V>,
}

impl<V> Default for StrMap<V> {
    fn default() -> Self {
        StrMap {
            keys: Vec::new(),
            values: Vec::new(),
        }
    }
}

/// Where `key` is in the sorted `keys` (`Ok`), or where it would go (`Err`).
#[inline(never)]
fn slot(keys: &[String], key: &str) -> Result<usize, usize> {
    keys.binary_search_by(|k| k.as_str().cmp(key))
}

impl<V> StrMap<V> {
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty map with room for `n` keys.
    pub fn with_capacity(n: usize) -> Self {
        StrMap {
            keys: Vec::with_capacity(n),
            values: Vec::with_capacity(n),
        }
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    pub fn get(&self, key: &str) -> Option<&V> {
        slot(&self.keys, key).ok().map(|i| &self.values[i])
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut V> {
        slot(&self.keys, key).ok().map(|i| &mut self.values[i])
    }

    /// The value of `key`, made by `make` when absent (`entry(key).or_insert_with(make)`).
    pub fn get_or_insert_with(&mut self, key: &str, make: impl FnOnce() -> V) -> &mut V {
        let i = match slot(&self.keys, key) {
            Ok(i) => i,
            Err(i) => {
                self.keys.insert(i, key.to_owned());
                self.values.insert(i, make());
                i
            }
        };
        &mut self.values[i]
    }

    /// Set `key` to `value`, replacing an earlier value (`BTreeMap::insert`).
    pub fn insert(&mut self, key: &str, value: V) {
        match slot(&self.keys, key) {
            Ok(i) => self.values[i] = value,
            Err(i) => {
                self.keys.insert(i, key.to_owned());
                self.values.insert(i, value);
            }
        }
    }

    /// Set `key` to `value` for a key after every key in the map (a map built in key order
    /// grows at its end, with no search); otherwise as [`StrMap::insert`].
    pub fn push_sorted(&mut self, key: String, value: V) {
        if self.keys.last().is_none_or(|last| *last < key) {
            self.keys.push(key);
            self.values.push(value);
        } else {
            self.insert(&key, value);
        }
    }

    /// [`StrMap::get`] looking from place `*from` on, left at where `key` is or would be:
    /// keys asked for in increasing order walk the map once (a binary search each compared
    /// a many-endpoint run's URLs a dozen times per lookup, each a cold string). A key before
    /// `*from` is found by a search.
    pub fn get_from(&self, from: &mut usize, key: &str) -> Option<&V> {
        let start = *from;
        while let Some(k) = self.keys.get(*from) {
            match k.as_str().cmp(key) {
                std::cmp::Ordering::Less => *from += 1,
                std::cmp::Ordering::Equal => return self.values.get(*from),
                std::cmp::Ordering::Greater => break,
            }
        }
        // Not found on the way: absent, unless the walk never moved and there were keys
        // before its start.
        if *from != start || start == 0 {
            return None;
        }
        match slot(&self.keys, key) {
            Ok(i) => {
                *from = i;
                self.values.get(i)
            }
            Err(i) => {
                *from = i;
                None
            }
        }
    }

    /// The keys in order.
    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.keys.iter()
    }

    /// The pairs in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &V)> {
        self.keys.iter().zip(&self.values)
    }

    /// The pairs in key order, values mutable.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&String, &mut V)> {
        self.keys.iter().zip(self.values.iter_mut())
    }

    /// The pairs in key order, owned.
    pub fn into_pairs(self) -> impl Iterator<Item = (String, V)> {
        self.keys.into_iter().zip(self.values)
    }
}

impl<V: Default> StrMap<V> {
    /// The value of `key`, `V::default()` when absent (`entry(key).or_default()`).
    pub fn get_or_default(&mut self, key: &str) -> &mut V {
        self.get_or_insert_with(key, V::default)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn behaves_as_a_btreemap() {
        let mut ours: StrMap<u32> = StrMap::new();
        let mut theirs: BTreeMap<String, u32> = BTreeMap::new();
        let mut x: u64 = 7;
        for i in 0..2000u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let key = format!("k{}", (x >> 54) % 300);
            match i % 3 {
                0 => {
                    ours.insert(&key, i);
                    theirs.insert(key.clone(), i);
                }
                1 => {
                    *ours.get_or_default(&key) += i;
                    *theirs.entry(key.clone()).or_default() += i;
                }
                _ => {
                    if let Some(v) = ours.get_mut(&key) {
                        *v ^= i;
                    }
                    if let Some(v) = theirs.get_mut(&key) {
                        *v ^= i;
                    }
                }
            }
            assert_eq!(ours.get(&key), theirs.get(&key));
        }
        assert_eq!(ours.len(), theirs.len());
        assert!(ours.iter().eq(theirs.iter()));
        assert!(ours.keys().eq(theirs.keys()));
        assert!(ours.into_pairs().eq(theirs));
        assert!(StrMap::<u8>::new().is_empty());
    }

    #[test]
    fn get_from_finds_what_get_finds_in_any_order() {
        let mut map: StrMap<u32> = StrMap::new();
        for (i, k) in ["b", "d", "d:1", "f"].iter().enumerate() {
            map.insert(k, i as u32);
        }
        let asks = [
            "", "a", "b", "b", "c", "d", "d:1", "e", "f", "g", "a", "d", "b", "f", "e",
        ];
        // In increasing order, then from where each walk was left, whatever comes next.
        let mut from = 0;
        for k in asks {
            assert_eq!(map.get_from(&mut from, k), map.get(k), "{k} from {from}");
            assert!(from <= map.len());
        }
        for start in 0..=map.len() + 1 {
            for k in asks {
                let mut from = start;
                assert_eq!(map.get_from(&mut from, k), map.get(k), "{k} from {start}");
            }
        }
        assert_eq!(StrMap::<u8>::new().get_from(&mut 0, "a"), None);
    }
}
