//! Eight bytes at a time, one `u64` holding them (first byte lowest): most of an export's
//! numbers are nineteen-digit nanosecond timestamps and long fractions, and a third of its
//! bytes indentation; passing them a byte at a time was a fifth of reading one (callgrind).

const ONES: u64 = u64::MAX / 255;
const HIGH: u64 = ONES * 0x80;
const ZEROS: u64 = ONES * b'0' as u64;

/// `10^k` for the digits one word holds.
pub(super) const TEN: [u64; 9] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
];

/// The eight bytes from `b[i]`, if there are eight.
#[inline(always)]
pub(super) fn word_at(b: &[u8], i: usize) -> Option<u64> {
    let bytes: [u8; 8] = b.get(i..i.checked_add(8)?)?.try_into().ok()?;
    Some(u64::from_le_bytes(bytes))
}

/// The index of the first byte from `b[i]` that is not a space (or the end): indentation.
#[inline(always)]
pub(super) fn past_spaces(b: &[u8], mut i: usize) -> usize {
    const SPACES: u64 = u64::from_le_bytes(*b"        ");
    while let Some(w) = word_at(b, i) {
        let x = w ^ SPACES;
        if x != 0 {
            return i + leading_zero_bytes(x);
        }
        i += 8;
    }
    while b.get(i) == Some(&b' ') {
        i += 1;
    }
    i
}

/// How many of the word's bytes, from its first, are zero (0 to 8).
#[inline(always)]
pub(super) fn leading_zero_bytes(x: u64) -> usize {
    // Bit 7 of a byte set exactly where `x`'s byte is not zero.
    let flagged = (((x & !HIGH) + !HIGH) | x) & HIGH;
    (flagged.trailing_zeros() / 8) as usize
}

/// How many of the word's bytes, from its first, are ASCII digits (0 to 8).
#[inline(always)]
pub(super) fn leading_digits(w: u64) -> usize {
    // A digit's high nibble is 3 and its low nibble plus 6 stays below 16: `other` is zero in
    // exactly the digit bytes (a low nibble plus 6 is at most 0x15, so no carry leaves a byte).
    let other =
        ((w & (ONES * 0xF0)) ^ (ONES * 0x30)) | (((w & (ONES * 0x0F)) + ONES * 6) & (ONES * 0xF0));
    leading_zero_bytes(other)
}

/// The value of the word's first `k` bytes, all digits (`1 <= k <= 8`).
#[inline(always)]
pub(super) fn value_of(w: u64, k: usize) -> u64 {
    // The `k` digits moved to the top of the word and '0's put before them: same value.
    let w = if k >= 8 {
        w
    } else {
        (w << (8 * (8 - k))) | (ZEROS >> (8 * k))
    };
    eight(w)
}

/// Eight digits' value: pairs, then fours, then the eight, each step one multiply
/// (the products' carries past a lane are what the shifts discard).
#[inline(always)]
fn eight(w: u64) -> u64 {
    const PAIRS: u64 = 0x0000_00FF_0000_00FF;
    const HUNDREDS: u64 = 100 + (1_000_000 << 32);
    const UNITS: u64 = 1 + (10_000 << 32);
    let w = w.wrapping_sub(ZEROS);
    let w = w.wrapping_mul(10).wrapping_add(w >> 8);
    let w = ((w & PAIRS).wrapping_mul(HUNDREDS))
        .wrapping_add(((w >> 16) & PAIRS).wrapping_mul(UNITS))
        >> 32;
    w & 0xFFFF_FFFF
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(text: &[u8]) -> u64 {
        let mut bytes = [b'x'; 8];
        bytes[..text.len()].copy_from_slice(text);
        u64::from_le_bytes(bytes)
    }

    #[test]
    fn every_byte_is_told_a_digit_or_not() {
        for b in 0..=255u8 {
            for at in 0..8 {
                let mut bytes = *b"01234567";
                bytes[at] = b;
                let want = if b.is_ascii_digit() { 8 } else { at };
                assert_eq!(
                    leading_digits(u64::from_le_bytes(bytes)),
                    want,
                    "{b} at {at}"
                );
                // A digit after a non-digit does not count.
                let mut bytes = [b; 8];
                bytes[7] = b'5';
                let run = if b.is_ascii_digit() { 8 } else { 0 };
                assert_eq!(leading_digits(u64::from_le_bytes(bytes)), run, "{b}");
            }
        }
    }

    #[test]
    fn values_are_the_digits_read_one_by_one() {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut texts: Vec<Vec<u8>> = vec![b"00000000".to_vec(), b"99999999".to_vec()];
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let k = (x % 8 + 1) as usize;
            texts.push(
                (0..k)
                    .map(|i| b'0' + ((x >> (8 + 4 * i)) % 10) as u8)
                    .collect(),
            );
        }
        for t in texts {
            let w = word(&t);
            assert_eq!(leading_digits(w), t.len().min(8));
            let want = t.iter().fold(0u64, |v, c| v * 10 + u64::from(c - b'0'));
            assert_eq!(
                value_of(w, t.len()),
                want,
                "{}",
                String::from_utf8_lossy(&t)
            );
            assert!(TEN[t.len()] > want);
        }
    }

    #[test]
    fn zero_bytes_are_counted_up_to_the_first_other() {
        for b in 1..=255u8 {
            for at in 0..8 {
                let mut bytes = [0u8; 8];
                bytes[at] = b;
                bytes[7] |= 1;
                assert_eq!(
                    leading_zero_bytes(u64::from_le_bytes(bytes)),
                    at,
                    "{b} at {at}"
                );
            }
        }
        assert_eq!(leading_zero_bytes(0), 8);
    }

    #[test]
    fn spaces_end_at_the_first_other_byte() {
        for n in 0..40 {
            for tail in ["", "x", "\n ", "\t "] {
                let text = format!("{}{tail}", " ".repeat(n));
                for from in 0..=n {
                    assert_eq!(
                        past_spaces(text.as_bytes(), from),
                        n,
                        "{text:?} from {from}"
                    );
                }
            }
        }
        assert_eq!(past_spaces(b"  ", 5), 5);
    }

    #[test]
    fn a_word_needs_eight_bytes() {
        assert_eq!(word_at(b"1234567", 0), None);
        assert_eq!(word_at(b"12345678", 1), None);
        assert_eq!(word_at(b"12345678", usize::MAX), None);
        assert_eq!(word_at(b"x12345678", 1), Some(word(b"12345678")));
    }
}
