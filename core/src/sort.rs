//! Sorting through one compiled sort.
//!
//! The standard library's sorts are generic over the element and the comparison: every call site
//! with its own closure compiles its own copy of driftsort (or ipnsort), some 4 KB of wasm each.
//! The engine and the page sort short lists in a score of places (fixes' values, findings,
//! advice, search results, compare fields), so each place here sorts indices instead, through the
//! one copy in `sort_indices` that calls the comparison behind a `dyn`, then moves the elements
//! into place. The hot sorts (the search's pass over every plan's memory) keep the standard ones.

use std::cmp::Ordering;

/// Sorts `v` by `cmp`, stably: equal elements keep their order (as [`slice::sort_by`]).
pub fn sort_by<T>(v: &mut [T], mut cmp: impl FnMut(&T, &T) -> Ordering) {
    // Already in order (findings usually are): nothing to allocate.
    if v.is_sorted_by(|a, b| cmp(a, b) != Ordering::Greater) {
        return;
    }
    let mut order: Vec<usize> = (0..v.len()).collect();
    sort_indices(&mut order, &mut |a, b| cmp(&v[a], &v[b]));
    permute(v, &mut order);
}

/// Sorts `v` by the key `key` gives each element, stably (as [`slice::sort_by_key`]).
pub fn sort_by_key<T, K: Ord>(v: &mut [T], mut key: impl FnMut(&T) -> K) {
    sort_by(v, |a, b| key(a).cmp(&key(b)));
}

/// Sorts `v` in its own order, stably (as [`slice::sort`]).
pub fn sort<T: Ord>(v: &mut [T]) {
    sort_by(v, T::cmp);
}

/// The one compiled sort: indices ordered by a comparison of what they index.
#[inline(never)]
fn sort_indices(order: &mut [usize], cmp: &mut dyn FnMut(usize, usize) -> Ordering) {
    order.sort_by(|&a, &b| cmp(a, b));
}

/// Puts `v[order[i]]` at `i` for every `i`, following each cycle of the permutation once; leaves
/// `order` as the identity.
fn permute<T>(v: &mut [T], order: &mut [usize]) {
    for start in 0..order.len() {
        let mut at = start;
        loop {
            let from = order[at];
            order[at] = at;
            if from == start {
                break;
            }
            v.swap(at, from);
            at = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every permutation of five elements with repeated keys (120 orders) sorts as the standard
    /// library's stable sort does, ties in their first order.
    #[test]
    fn sorts_as_the_standard_stable_sort() {
        let base = [(2, 'a'), (0, 'b'), (2, 'c'), (1, 'd'), (0, 'e')];
        let mut seen = 0;
        for p in permutations(5) {
            let items: Vec<(u8, char)> = p.iter().map(|&i| base[i]).collect();
            let mut ours = items.clone();
            sort_by_key(&mut ours, |x| x.0);
            let mut std = items.clone();
            std.sort_by_key(|x| x.0);
            assert_eq!(ours, std, "{items:?}");
            let mut whole = items.clone();
            sort(&mut whole);
            let mut std_whole = items;
            std_whole.sort();
            assert_eq!(whole, std_whole);
            seen += 1;
        }
        assert_eq!(seen, 120);
        let mut empty: Vec<u8> = vec![];
        sort(&mut empty);
        assert!(empty.is_empty());
    }

    fn permutations(n: usize) -> Vec<Vec<usize>> {
        if n == 0 {
            return vec![vec![]];
        }
        let mut res = Vec::new();
        for p in permutations(n - 1) {
            for at in 0..=p.len() {
                let mut q = p.clone();
                q.insert(at, n - 1);
                res.push(q);
            }
        }
        res
    }
}
