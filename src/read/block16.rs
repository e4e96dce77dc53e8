//! Sixteen bytes compared at once, where the target has the vector instructions for it: SSE2
//! on x86-64 (part of its baseline) and WebAssembly's `simd128` (the npm package's modules are
//! built with it: `.cargo/config.toml`). A block gives a bit per byte, lowest byte first: the
//! bytes equal to a value, or the bytes with their high bit set (not ASCII). The line scan
//! (`push::find_newline_ascii`) and the CSV's cell split take whole blocks through here and the
//! rest eight bytes at a time; where there are no such instructions ([`AVAILABLE`] is false)
//! they take no blocks.

pub(crate) use vector::{Block, AVAILABLE};

#[cfg(target_arch = "x86_64")]
mod vector {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8,
    };

    pub const AVAILABLE: bool = true;

    #[derive(Clone, Copy)]
    pub struct Block(__m128i);

    impl Block {
        #[inline(always)]
        pub fn load(bytes: &[u8; 16]) -> Self {
            // SAFETY: SSE2 is part of the x86-64 baseline; the load reads the 16 bytes of
            // `bytes` (unaligned load, any address).
            Block(unsafe { _mm_loadu_si128(bytes.as_ptr().cast()) })
        }

        #[inline(always)]
        pub fn equal(self, byte: u8) -> u32 {
            // SAFETY: SSE2 is part of the x86-64 baseline.
            unsafe { _mm_movemask_epi8(_mm_cmpeq_epi8(self.0, _mm_set1_epi8(byte as i8))) as u32 }
        }

        #[inline(always)]
        pub fn high(self) -> u32 {
            // SAFETY: SSE2 is part of the x86-64 baseline.
            unsafe { _mm_movemask_epi8(self.0) as u32 }
        }
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod vector {
    use core::arch::wasm32::{u8x16_bitmask, u8x16_eq, u8x16_splat, v128, v128_load};

    pub const AVAILABLE: bool = true;

    #[derive(Clone, Copy)]
    pub struct Block(v128);

    impl Block {
        #[inline(always)]
        pub fn load(bytes: &[u8; 16]) -> Self {
            // SAFETY: the load reads the 16 bytes of `bytes` (`v128.load` takes any address).
            Block(unsafe { v128_load(bytes.as_ptr().cast()) })
        }

        #[inline(always)]
        pub fn equal(self, byte: u8) -> u32 {
            u32::from(u8x16_bitmask(u8x16_eq(self.0, u8x16_splat(byte))))
        }

        #[inline(always)]
        pub fn high(self) -> u32 {
            u32::from(u8x16_bitmask(self.0))
        }
    }
}

#[cfg(not(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
)))]
mod vector {
    pub const AVAILABLE: bool = false;

    #[derive(Clone, Copy)]
    pub struct Block;

    impl Block {
        pub fn load(_: &[u8; 16]) -> Self {
            Block
        }

        pub fn equal(self, _: u8) -> u32 {
            0
        }

        pub fn high(self) -> u32 {
            0
        }
    }
}

/// The whole blocks of `bytes` (none where [`AVAILABLE`] is false), each with its offset;
/// the bytes after them are `bytes[passed(bytes)..]`.
pub(crate) fn blocks(bytes: &[u8]) -> impl Iterator<Item = (usize, Block)> + '_ {
    const NONE: [u8; 16] = [0; 16];
    let bytes = if AVAILABLE { bytes } else { &[] };
    // `chunks_exact(16)` gives 16-byte slices only: the conversion never fails.
    bytes
        .chunks_exact(16)
        .enumerate()
        .map(|(k, b)| (k * 16, Block::load(b.try_into().unwrap_or(&NONE))))
}

/// Where the bytes that [`blocks`] does not give start.
pub(crate) fn passed(bytes: &[u8]) -> usize {
    if AVAILABLE {
        bytes.len() - bytes.len() % 16
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_flag_exactly_the_bytes_asked_for() {
        let mut bytes = [b'a'; 40];
        bytes[0] = b',';
        bytes[15] = b',';
        bytes[17] = b'"';
        bytes[31] = 0xC3;
        bytes[35] = b',';
        let got: Vec<(usize, u32, u32, u32)> = blocks(&bytes)
            .map(|(at, b)| (at, b.equal(b','), b.equal(b'"'), b.high()))
            .collect();
        if AVAILABLE {
            assert_eq!(
                got,
                vec![(0, 1 | 1 << 15, 0, 0), (16, 0, 1 << 1, 1 << 15)],
                "two whole blocks; the last 8 bytes are left to the caller"
            );
            assert_eq!(passed(&bytes), 32);
        } else {
            assert!(got.is_empty());
            assert_eq!(passed(&bytes), 0);
        }
    }
}
