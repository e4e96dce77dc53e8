//! Readers fed bytes in chunks: the one way every format is read.
//!
//! A [`PushReader`] takes a file's bytes in chunks split anywhere (a multi-byte character or a
//! line may straddle two chunks), then [`PushReader::finish`]es. The native CLI pushes a file
//! read in 1 MiB chunks, the whole-buffer API pushes the buffer as one chunk, the WASM
//! streaming API pushes what a `ReadableStream` yields: the same reader in all three, so the
//! results are the same byte for byte whatever the chunking. A reader keeps only what it has
//! not yet consumed (a partial line, a partial JSON value), so memory is bounded by the largest
//! record, not by the file.

use super::block16;
use crate::error::{ErrorCode, ReadError};
use std::io::Read;

/// A reader of one file, fed in chunks.
pub trait PushReader {
    type Output;

    /// Take the next bytes of the file.
    fn push(&mut self, chunk: &[u8]) -> Result<(), ReadError>;

    /// The file has ended: the result.
    fn finish(self) -> Result<Self::Output, ReadError>;
}

/// Chunk size of [`drive`]: large enough that few values (a series of an export can take a
/// MB) straddle two chunks, which costs them a second pass; small enough to bound memory.
pub const CHUNK: usize = 8 << 20;

/// Feed `reader` everything `input` yields, in [`CHUNK`]-sized pieces, then finish it.
pub fn drive<P: PushReader, R: Read>(
    file: &str,
    mut reader: P,
    mut input: R,
) -> Result<P::Output, ReadError> {
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                return Err(ReadError::whole(
                    ErrorCode::Io,
                    file,
                    format!("cannot read: {e}"),
                ))
            }
        };
        reader.push(&buf[..n])?;
    }
    reader.finish()
}

/// Splits pushed chunks into lines for line-oriented readers (JSONL, CSV, Prometheus text),
/// keeping only the unfinished last line between pushes.
///
/// A line is handed out without its `\n` (a `\r` before it is the reader's business: formats
/// differ), with its 1-based number. The last line of a file that does not end in `\n` is
/// handed out by [`Lines::finish`].
#[derive(Debug, Default)]
pub struct Lines {
    /// The start of a line whose end has not arrived yet.
    partial: Vec<u8>,
    /// Whether `partial` holds a byte that is not ASCII.
    partial_not_ascii: bool,
    /// Lines handed out so far.
    line_no: u64,
}

impl Lines {
    pub fn new() -> Self {
        Lines::default()
    }

    /// Hand every line completed by `chunk` to `each` (line bytes, 1-based line number); stop
    /// at the first error.
    pub fn push<E>(
        &mut self,
        chunk: &[u8],
        mut each: impl FnMut(&[u8], u64) -> Result<(), E>,
    ) -> Result<(), E> {
        self.push_text(chunk, |line, n, _| each(line, n))
    }

    /// [`Lines::push`], telling `each` also whether the line is ASCII (seen while looking for
    /// its end: a text line then needs no UTF-8 check, see [`line_text`]).
    pub fn push_text<E>(
        &mut self,
        chunk: &[u8],
        mut each: impl FnMut(&[u8], u64, bool) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut rest = chunk;
        loop {
            let (found, ascii) = find_newline_ascii(rest);
            let Some(nl) = found else {
                self.partial_not_ascii |= !ascii;
                self.partial.extend_from_slice(rest);
                return Ok(());
            };
            self.line_no += 1;
            if self.partial.is_empty() {
                each(&rest[..nl], self.line_no, ascii)?;
            } else {
                self.partial.extend_from_slice(&rest[..nl]);
                let line = std::mem::take(&mut self.partial);
                let ascii = ascii && !self.partial_not_ascii;
                self.partial_not_ascii = false;
                each(&line, self.line_no, ascii)?;
                // Keep the allocation for the next straddling line.
                self.partial = line;
                self.partial.clear();
            }
            rest = &rest[nl + 1..];
        }
    }

    /// The file has ended: hand out its last line if it did not end in `\n`.
    pub fn finish<E>(
        &mut self,
        mut each: impl FnMut(&[u8], u64) -> Result<(), E>,
    ) -> Result<(), E> {
        self.finish_text(|line, n, _| each(line, n))
    }

    /// [`Lines::finish`], telling `each` also whether the line is ASCII.
    pub fn finish_text<E>(
        &mut self,
        mut each: impl FnMut(&[u8], u64, bool) -> Result<(), E>,
    ) -> Result<(), E> {
        if self.partial.is_empty() {
            return Ok(());
        }
        self.line_no += 1;
        let line = std::mem::take(&mut self.partial);
        let ascii = !std::mem::take(&mut self.partial_not_ascii);
        each(&line, self.line_no, ascii)
    }

    /// Lines handed out so far.
    pub fn count(&self) -> u64 {
        self.line_no
    }

    /// Bytes held for an unfinished line.
    pub fn pending(&self) -> usize {
        self.partial.len()
    }
}

/// The first `\n` in `bytes`, looked for eight bytes at a time (every byte of a line-oriented
/// file goes through here).
pub fn find_newline(bytes: &[u8]) -> Option<usize> {
    find_newline_ascii(bytes).0
}

/// [`find_newline`], and whether every byte before it (every byte, when there is none) is
/// ASCII: noted on the words already loaded, so a reader of text lines need not go over a
/// line a second time to check its UTF-8 ([`line_text`]).
pub fn find_newline_ascii(bytes: &[u8]) -> (Option<usize>, bool) {
    let (start, ascii_before) = match scan_blocks(bytes) {
        Scan::Found(at, ascii) => return (Some(at), ascii),
        Scan::Passed(n, ascii) => (n, ascii),
    };
    let rest = bytes.get(start..).unwrap_or_default();
    let (found, ascii) = find_newline_words(rest);
    (found.map(|i| start + i), ascii_before && ascii)
}

/// The whole 16-byte blocks of `bytes` where the target compares that many at once
/// ([`block16`]: two compares and two mask moves per block, where the words below take a dozen
/// operations per eight bytes; the scan was 5 % of reading a scrape JSONL natively).
fn scan_blocks(bytes: &[u8]) -> Scan {
    let mut high = 0u32;
    for (at, block) in block16::blocks(bytes) {
        let newlines = block.equal(b'\n');
        let non_ascii = block.high();
        if newlines != 0 {
            let k = newlines.trailing_zeros();
            let before = (1u32 << k) - 1;
            return Scan::Found(at + k as usize, (high | (non_ascii & before)) == 0);
        }
        high |= non_ascii;
    }
    Scan::Passed(block16::passed(bytes), high == 0)
}

enum Scan {
    /// The first `\n` is at this index; whether every byte before it is ASCII.
    Found(usize, bool),
    /// No `\n` in the first this many bytes (whole blocks); whether they are ASCII.
    Passed(usize, bool),
}

/// [`find_newline_ascii`] eight bytes at a time.
fn find_newline_words(bytes: &[u8]) -> (Option<usize>, bool) {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let words = bytes.chunks_exact(8);
    let tail = words.remainder();
    let mut high = 0u64;
    for (k, word) in words.enumerate() {
        // An array from an 8-byte chunk is one load (`copy_from_slice` stayed a call per word
        // in the size-optimised .wasm: 7 % of reading a profile JSONL there).
        let w = u64::from_le_bytes(word.try_into().unwrap_or_default());
        let x = w ^ (ONES * u64::from(b'\n'));
        // The lowest flagged byte is the first zero byte of `x` (flags above it may be false).
        let zero = x.wrapping_sub(ONES) & !x & HIGH;
        if zero != 0 {
            let at = zero.trailing_zeros() / 8;
            // The bytes of this word before the newline (little-endian: the low ones).
            let before = (1u64 << (at * 8)) - 1;
            let ascii = (high | (w & before)) & HIGH == 0;
            return (Some(k * 8 + at as usize), ascii);
        }
        high |= w;
    }
    let i = bytes.len() - tail.len();
    let mut ascii = high & HIGH == 0;
    for (k, &b) in tail.iter().enumerate() {
        if b == b'\n' {
            return (Some(i + k), ascii);
        }
        ascii &= b.is_ascii();
    }
    (None, ascii)
}

/// A line as text: one [`Lines::push_text`] saw was ASCII is not checked again.
pub fn line_text(line: &[u8], ascii: bool) -> Result<&str, std::str::Utf8Error> {
    if ascii {
        debug_assert!(line.is_ascii());
        // SAFETY: ASCII bytes are UTF-8; `ascii` is only true for a line whose every byte
        // `find_newline_ascii` saw below 0x80 (tested against `is_ascii` on any split).
        return Ok(unsafe { std::str::from_utf8_unchecked(line) });
    }
    std::str::from_utf8(line)
}

/// A reader that needs the whole file at once (small files: launch facts, capture manifests,
/// the run summary until it streams): it gathers the chunks, then reads them in one go.
pub struct Gather<F> {
    bytes: Vec<u8>,
    read: F,
}

impl<T, F: FnOnce(&[u8]) -> Result<T, ReadError>> Gather<F> {
    pub fn new(read: F) -> Self {
        Gather {
            bytes: Vec::new(),
            read,
        }
    }
}

impl<T, F: FnOnce(&[u8]) -> Result<T, ReadError>> PushReader for Gather<F> {
    type Output = T;

    fn push(&mut self, chunk: &[u8]) -> Result<(), ReadError> {
        self.bytes.extend_from_slice(chunk);
        Ok(())
    }

    fn finish(self) -> Result<T, ReadError> {
        (self.read)(&self.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(chunks: &[&[u8]]) -> Vec<(String, u64)> {
        let mut out = Vec::new();
        let mut lines = Lines::new();
        let mut each = |l: &[u8], n: u64| -> Result<(), ()> {
            out.push((String::from_utf8(l.to_vec()).unwrap(), n));
            Ok(())
        };
        for c in chunks {
            lines.push(c, &mut each).unwrap();
        }
        lines.finish(&mut each).unwrap();
        out
    }

    /// Lines with their ASCII flags, for every way of cutting `text` into two or three chunks.
    fn flags_of(text: &[u8]) -> Vec<Vec<(Vec<u8>, u64, bool)>> {
        let mut all = Vec::new();
        for a in 0..=text.len() {
            for b in a..=text.len() {
                let mut out = Vec::new();
                let mut lines = Lines::new();
                let mut each = |l: &[u8], n: u64, ascii: bool| -> Result<(), ()> {
                    out.push((l.to_vec(), n, ascii));
                    Ok(())
                };
                for c in [&text[..a], &text[a..b], &text[b..]] {
                    lines.push_text(c, &mut each).unwrap();
                }
                lines.finish_text(&mut each).unwrap();
                all.push(out);
            }
        }
        all
    }

    #[test]
    fn the_ascii_flag_is_exactly_whether_the_line_is_ascii_whatever_the_split() {
        // Non-ASCII bytes before, at, and after the word holding the newline, in the tail,
        // and in a line straddling chunks; lines longer and shorter than a word.
        let text = "abcdefgh\u{e9}ijklmnop\nqrstuvwxyzABCDEF\nGHIJKLM\u{e9}\nNOP\n\u{1F600}\nxyz0123456789\n\nab\u{e9}\n0123456\n7\u{e9}".as_bytes();
        let cases = flags_of(text);
        assert!(cases.len() > 1000);
        for lines in cases {
            assert_eq!(lines.len(), 10);
            for (line, n, ascii) in lines {
                assert_eq!(ascii, line.is_ascii(), "line {n}: {line:?}");
                assert_eq!(
                    line_text(&line, ascii).is_ok(),
                    std::str::from_utf8(&line).is_ok()
                );
            }
        }
        let invalid = b"abcdefgh\xff\nabc\xc3\nabcdefghijklmnop\xe9q\n";
        for lines in flags_of(invalid) {
            for (line, n, ascii) in lines {
                assert!(!ascii, "line {n}");
                assert!(line_text(&line, ascii).is_err(), "line {n}");
            }
        }
    }

    /// The newline and the ASCII flag against a byte-by-byte scan, for a newline and a
    /// non-ASCII byte at every place of inputs around the 16-byte blocks and 8-byte words.
    #[test]
    fn the_scan_agrees_with_a_byte_by_byte_one() {
        for len in 0..50 {
            for nl in (0..len).map(Some).chain([None]) {
                for high in (0..len).map(Some).chain([None]) {
                    let mut b = vec![b'a'; len];
                    if let Some(h) = high {
                        b[h] = 0xc3;
                    }
                    if let Some(n) = nl {
                        b[n] = b'\n';
                    }
                    let first = b.iter().position(|&c| c == b'\n');
                    let before = &b[..first.unwrap_or(len)];
                    let want = (first, before.is_ascii());
                    assert_eq!(find_newline_ascii(&b), want, "{len} {nl:?} {high:?}");
                }
            }
        }
    }

    #[test]
    fn any_split_gives_the_same_lines() {
        let text = b"ab\r\nc\n\nd\xc3\xa9f";
        let whole = lines_of(&[text]);
        assert_eq!(
            whole,
            [
                ("ab\r".to_string(), 1),
                ("c".to_string(), 2),
                (String::new(), 3),
                ("d\u{e9}f".to_string(), 4)
            ]
        );
        for cut in 0..text.len() {
            let (a, b) = text.split_at(cut);
            assert_eq!(lines_of(&[a, b]), whole, "cut at {cut}");
        }
        let bytes: Vec<&[u8]> = text.chunks(1).collect();
        assert_eq!(lines_of(&bytes), whole);
    }

    #[test]
    fn finds_the_first_newline_anywhere() {
        for len in 0..40 {
            for at in 0..=len {
                let mut b = vec![b'x'; len];
                b.extend_from_slice(&[0x8A, 0x0B, 0x09]);
                if at < len {
                    b[at] = b'\n';
                    if at + 2 < len {
                        b[at + 2] = b'\n';
                    }
                }
                assert_eq!(
                    find_newline(&b),
                    b.iter().position(|&c| c == b'\n'),
                    "{len} {at}"
                );
            }
        }
    }

    #[test]
    fn a_final_newline_adds_no_empty_line() {
        assert_eq!(lines_of(&[b"a\n"]), [("a".to_string(), 1)]);
        assert!(lines_of(&[b""]).is_empty());
    }
}
