//! A list grown a piece at a time, for the lists a hostile input can make huge (a JSON export's
//! family of hundreds of thousands of series). A vector grown by doubling is copied at each
//! growth and its old block freed: in WASM's linear memory, which never shrinks, a 12.6 MB
//! vector doubled to 25.2 MB left both blocks' room behind, and the blocks accounting made next
//! fitted none of the holes (a stream of an export of 320,000 label sets reached 93 MB of a
//! 64 MB promise). Here no block is larger than [`PIECE_BYTES`] and no full piece is ever
//! copied, and whoever takes the list can free it a piece at a time as it is used.

/// The most bytes one piece holds in WASM (the first piece grows to it by doubling, as a
/// `Vec` does). Natively a list is one piece, a `Vec` as before: glibc maps a large block on
/// its own, grows it in place and gives back what a shrink or a free leaves, where pieces freed
/// into its heap stayed resident (the export of 320,000 label sets: 116 MB of RSS, 98 MB as
/// one vector).
#[cfg(target_arch = "wasm32")]
pub const PIECE_BYTES: usize = 1 << 20;
#[cfg(not(target_arch = "wasm32"))]
pub const PIECE_BYTES: usize = isize::MAX as usize;

/// Items in order, in pieces of at most [`PIECE_BYTES`] (at least one item each).
#[derive(Debug, Clone, PartialEq)]
pub struct Pieces<T> {
    pieces: Vec<Vec<T>>,
    len: usize,
}

impl<T> Default for Pieces<T> {
    fn default() -> Self {
        Pieces {
            pieces: Vec::new(),
            len: 0,
        }
    }
}

impl<T> Pieces<T> {
    /// Items in one full piece.
    fn piece_len() -> usize {
        (PIECE_BYTES / std::mem::size_of::<T>().max(1)).max(1)
    }

    pub fn push(&mut self, item: T) {
        self.push_within(item, Self::piece_len());
    }

    /// Push `item`, no piece holding more than `full` items.
    fn push_within(&mut self, item: T, full: usize) {
        match self.pieces.last_mut() {
            Some(last) if last.len() < last.capacity() => last.push(item),
            // Short of a full piece: doubled as a `Vec` is, up to one (small families stay small).
            Some(last) if last.capacity() < full => {
                let more = last.capacity().max(4).min(full - last.capacity());
                last.reserve_exact(more);
                last.push(item);
            }
            _ => {
                let mut piece = Vec::with_capacity(if self.pieces.is_empty() {
                    full.min(4)
                } else {
                    full
                });
                piece.push(item);
                self.pieces.push(piece);
            }
        }
        self.len += 1;
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.pieces.iter().flatten()
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> + '_ {
        self.pieces.iter_mut().flatten()
    }

    /// The items a piece at a time, in order.
    pub fn pieces(&self) -> impl Iterator<Item = &[T]> + '_ {
        self.pieces.iter().map(Vec::as_slice)
    }

    /// The pieces themselves, in order: each can be dropped once used.
    pub fn into_pieces(self) -> Vec<Vec<T>> {
        self.pieces
    }

    /// Gives back the room the last piece grew into (the others are full, or the first).
    pub fn shrink_to_fit(&mut self) {
        if let Some(last) = self.pieces.last_mut() {
            last.shrink_to_fit();
        }
        self.pieces.shrink_to_fit();
    }
}

impl<T> FromIterator<T> for Pieces<T> {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        let mut pieces = Pieces::default();
        items.into_iter().for_each(|x| pieces.push(x));
        pieces
    }
}

impl<T> Extend<T> for Pieces<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, items: I) {
        items.into_iter().for_each(|x| self.push(x));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn made(n: u64, full: usize) -> Pieces<u64> {
        let mut p = Pieces::default();
        (0..n).for_each(|x| p.push_within(x, full));
        p
    }

    #[test]
    fn items_keep_their_order_and_no_piece_passes_its_size() {
        for full in [1usize, 3, 4, 1000, 65_536] {
            for n in [0u64, 1, 3, 4, 5, 100, 65_536, 65_537, 300_001] {
                let p = made(n, full);
                assert_eq!(p.len(), n as usize);
                assert_eq!(p.is_empty(), n == 0);
                assert!(p.iter().copied().eq(0..n), "{n}");
                // Every piece holds one item or more, at most `full`; all but the last are full.
                let k = p.pieces.len();
                for (i, piece) in p.pieces.iter().enumerate() {
                    assert!(!piece.is_empty() && piece.len() <= full, "{n} {full}");
                    assert!(i + 1 == k || piece.len() == full, "{n} {full}");
                    // Past the first, a piece is made at its full size (never copied).
                    assert!(i == 0 || piece.capacity() == full, "{n} {full}");
                }
                let flat: Vec<u64> = p.pieces().flatten().copied().collect();
                assert!(flat.iter().copied().eq(0..n));
                let owned: Vec<u64> = p.into_pieces().into_iter().flatten().collect();
                assert_eq!(owned, flat);
            }
        }
    }

    #[test]
    fn push_keeps_pieces_to_their_bytes() {
        let p: Pieces<[u8; 4096]> = (0..300).map(|_| [0; 4096]).collect();
        assert_eq!(p.len(), 300);
        let most = (PIECE_BYTES / 4096).max(1);
        assert!(p.pieces().all(|x| x.len() <= most));
        assert_eq!(p.pieces.len(), 300usize.div_ceil(most));
    }

    #[test]
    fn a_small_list_is_one_small_piece_and_shrinks() {
        let mut p: Pieces<[u8; 48]> = (0..5).map(|i| [i; 48]).collect();
        assert_eq!(p.pieces.len(), 1);
        assert_eq!(p.pieces[0].capacity(), 8);
        p.shrink_to_fit();
        assert_eq!(p.pieces[0].capacity(), 5);
        p.iter_mut().for_each(|x| x[0] = 9);
        assert!(p.iter().all(|x| x[0] == 9 && x[1] == x[47]));
        p.extend([[7; 48]]);
        assert_eq!(p.len(), 6);
    }
}
