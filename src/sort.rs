//! A stable sort whose code is shared by every element type: for cold paths (file lists,
//! candidates, frontier points), where the `.wasm`'s size matters more than the sort's speed.
//!
//! `slice::sort_by` is compiled anew for each element type and comparator (about 3 KB of wasm
//! each, issue 11); here one `sort_by` over indices with a `dyn` comparator serves all, and
//! only the small permutation below is generic.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

/// Sort `v` stably by `cmp`, as `v.sort_by(cmp)` does.
pub fn sort_by<T>(v: &mut [T], mut cmp: impl FnMut(&T, &T) -> Ordering) {
    let mut order = sorted_indices(v.len(), &mut |a, b| cmp(&v[a], &v[b]));
    permute(v, &mut order);
}

/// Sort the pairs `(a[i], b[i])` stably by `cmp`, rearranging both slices in place (no
/// vector of pairs is made: a run of 80,000 captures held 6 MB more in WASM while one was).
/// Slices of unequal length are sorted over the shorter one's length.
pub fn sort_pairs_by<A, B>(
    a: &mut [A],
    b: &mut [B],
    mut cmp: impl FnMut((&A, &B), (&A, &B)) -> Ordering,
) {
    let n = a.len().min(b.len());
    let (a, b) = (&mut a[..n], &mut b[..n]);
    let mut order = sorted_indices(n, &mut |i, j| cmp((&a[i], &b[i]), (&a[j], &b[j])));
    let mut again = order.clone();
    permute(a, &mut order);
    permute(b, &mut again);
}

/// Sort `v` stably by the key `f` gives, as `v.sort_by_key(f)` does.
pub fn sort_by_key<T, K: Ord>(v: &mut [T], mut f: impl FnMut(&T) -> K) {
    sort_by(v, |a, b| f(a).cmp(&f(b)));
}

/// `pairs.collect::<BTreeMap<_, _>>()` by insertion. `collect` first sorts the pairs with a
/// stable sort compiled anew for each pair type (~3 KB of wasm each, issue 11); inserting
/// builds the same map (a later pair with an equal key replaces the value, as in `collect`).
/// For the small maps of cold paths.
pub fn map_of<K: Ord, V>(pairs: impl IntoIterator<Item = (K, V)>) -> BTreeMap<K, V> {
    let mut map = BTreeMap::new();
    for (k, v) in pairs {
        map.insert(k, v);
    }
    map
}

/// `items.collect::<BTreeSet<_>>()` by insertion, as [`map_of`] (equal items are one).
pub fn set_of<T: Ord>(items: impl IntoIterator<Item = T>) -> BTreeSet<T> {
    let mut set = BTreeSet::new();
    for item in items {
        set.insert(item);
    }
    set
}

/// The indices `0..n` in the stable order `cmp` gives them.
fn sorted_indices(n: usize, cmp: &mut dyn FnMut(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| cmp(a, b));
    order
}

/// Rearrange `v` so that position `k` holds what was at `order[k]`, following each cycle of
/// the permutation with swaps; `order` is left as the identity.
fn permute<T>(v: &mut [T], order: &mut [usize]) {
    for start in 0..order.len() {
        let mut cur = start;
        while order[cur] != start {
            let next = order[cur];
            v.swap(cur, next);
            order[cur] = cur;
            cur = next;
        }
        order[cur] = cur;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_as_the_standard_stable_sort_does() {
        // A small linear congruential sequence: many ties, so stability shows.
        let mut x: u64 = 12345;
        for len in [0usize, 1, 2, 3, 7, 20, 64, 257, 1000] {
            let v: Vec<(u8, usize)> = (0..len)
                .map(|i| {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    ((x >> 59) as u8, i)
                })
                .collect();
            let mut expected = v.clone();
            expected.sort_by_key(|a| a.0);
            let mut got = v.clone();
            sort_by(&mut got, |a, b| a.0.cmp(&b.0));
            assert_eq!(got, expected, "len {len}");
            let mut got = v.clone();
            sort_by_key(&mut got, |a| std::cmp::Reverse(a.0));
            let mut expected = v;
            expected.sort_by_key(|a| std::cmp::Reverse(a.0));
            assert_eq!(got, expected, "len {len}, by key");
        }
    }

    #[test]
    fn builds_the_maps_and_sets_collect_builds() {
        let pairs = [(3, "a"), (1, "b"), (3, "c"), (2, "d"), (1, "e")];
        assert_eq!(map_of(pairs), pairs.into_iter().collect::<BTreeMap<_, _>>());
        let items = [5, 1, 5, 0, 3, 1];
        assert_eq!(set_of(items), items.into_iter().collect::<BTreeSet<_>>());
        assert!(map_of(Vec::<(u8, u8)>::new()).is_empty());
    }

    #[test]
    fn moves_owned_values_without_cloning() {
        let mut v: Vec<String> = ["b", "a", "c", "a"].iter().map(|s| s.to_string()).collect();
        sort_by(&mut v, |a, b| a.cmp(b));
        assert_eq!(v, ["a", "a", "b", "c"]);
    }

    #[test]
    fn pairs_sort_as_a_vector_of_pairs_does() {
        let mut x: u64 = 777;
        for len in [0usize, 1, 2, 5, 64, 301] {
            let keys: Vec<u8> = (0..len)
                .map(|_| {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    (x >> 60) as u8
                })
                .collect();
            let mut a = keys.clone();
            let mut b: Vec<usize> = (0..len).collect();
            sort_pairs_by(&mut a, &mut b, |p, q| p.0.cmp(q.0));
            let mut want: Vec<(u8, usize)> = keys.into_iter().zip(0..len).collect();
            want.sort_by_key(|p| p.0);
            let got: Vec<(u8, usize)> = a.into_iter().zip(b).collect();
            assert_eq!(got, want, "len {len}");
        }
    }
}
