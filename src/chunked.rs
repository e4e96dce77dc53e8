//! A byte buffer written in pieces of at most [`CHUNK`] bytes and joined once, at its exact
//! length, when it is done.
//!
//! The WASM calls return their result as one JSON text. Written into a `Vec` grown by
//! doubling, a many-endpoint run's 16.5 MB result took a 12.6 MB and then a 25.2 MB block,
//! both beside each other at the growth, the last a third unused: in linear memory, which
//! never shrinks, the call's high-water mark was that growth (91 MB for a 99 MB CSV). Pieces
//! of a megabyte fit where accounting freed memory; the joined text is one exact block. The
//! streaming API hands its reply to JavaScript piece by piece instead ([`json_handed_off`]):
//! a stream holds to a memory budget, and the joined block did not.

use serde::Serialize;
use std::io;

/// `value`'s JSON text between `open` and `close`, written as a [`ChunkedBuf`] (the WASM
/// replies' envelopes; one writer type, so serde_json's writing code is compiled once).
pub fn json_between<T: Serialize + ?Sized>(
    open: &[u8],
    value: &T,
    close: &[u8],
) -> serde_json::Result<Vec<u8>> {
    let mut out = ChunkedBuf::new(open);
    serde_json::to_writer(&mut out, value)?;
    out.append(close);
    Ok(out.into_vec())
}

/// `value`'s JSON text between `open` and `close`, handed to `sink` a piece of one to two
/// [`CHUNK`]s at a time (the first piece's room, kept for the next) as it is written, never
/// held whole (the streaming API's reply: see `crate::wasm::stream`). A piece may end inside
/// a character.
pub fn json_handed_off<T: Serialize + ?Sized>(
    open: &[u8],
    value: &T,
    close: &[u8],
    sink: &mut dyn FnMut(&[u8]),
) -> serde_json::Result<()> {
    let mut out = ChunkedBuf::new(open);
    out.sink = Some(sink);
    serde_json::to_writer(&mut out, value)?;
    out.append(close);
    if let Some(sink) = out.sink.take() {
        sink(&out.cur);
    }
    Ok(())
}

/// The size of every piece but the first, which grows as a `Vec` does up to it (a small
/// result stays one small allocation, returned as it is).
pub const CHUNK: usize = 1 << 20;

/// See the module documentation.
#[derive(Default)]
pub struct ChunkedBuf<'s> {
    /// The full pieces, in order.
    done: Vec<Vec<u8>>,
    /// The piece being written.
    cur: Vec<u8>,
    /// Where each full piece goes instead of `done`, when set (see [`json_handed_off`]): the
    /// piece's buffer is then reused.
    sink: Option<Sink<'s>>,
}

/// Where a [`ChunkedBuf`]'s full pieces go.
type Sink<'s> = &'s mut dyn FnMut(&[u8]);

impl ChunkedBuf<'_> {
    /// A buffer that starts with `start`.
    pub fn new(start: &[u8]) -> Self {
        ChunkedBuf {
            done: Vec::new(),
            cur: start.to_vec(),
            sink: None,
        }
    }

    /// Every byte written, in one vector of exactly their length (the pieces are freed as
    /// they are copied into it).
    pub fn into_vec(self) -> Vec<u8> {
        let ChunkedBuf { done, cur, .. } = self;
        if done.is_empty() {
            return cur;
        }
        let len = done.iter().map(Vec::len).sum::<usize>() + cur.len();
        let mut out = Vec::with_capacity(len);
        for piece in done {
            out.extend_from_slice(&piece);
        }
        out.extend_from_slice(&cur);
        out
    }

    /// Append `bytes`. One function, not inlined: serde_json writes through it from the
    /// serialiser of every result type, and a copy at each of those places was kilobytes of
    /// the .wasm. It writes a few bytes at a time (a comma, a number): those are copied byte
    /// by byte, as `memory.copy` costs more than such a copy in V8.
    #[inline(never)]
    fn append(&mut self, bytes: &[u8]) {
        if bytes.len() <= self.cur.capacity() - self.cur.len() {
            if bytes.len() <= 16 {
                for &b in bytes {
                    self.cur.push(b);
                }
            } else {
                self.cur.extend_from_slice(bytes);
            }
            return;
        }
        self.append_grown(bytes);
    }

    /// [`ChunkedBuf::append`] where the piece being written has no room: it grows (the
    /// first piece, as a `Vec` does, up to [`CHUNK`]) or is put with the full ones.
    #[inline(never)]
    fn append_grown(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            if self.cur.len() >= CHUNK {
                if let Some(sink) = &mut self.sink {
                    sink(&self.cur);
                    self.cur.clear();
                } else {
                    let full = std::mem::replace(&mut self.cur, Vec::with_capacity(CHUNK));
                    self.done.push(full);
                }
            }
            let room = CHUNK - self.cur.len();
            let (now, later) = bytes.split_at(room.min(bytes.len()));
            self.cur.extend_from_slice(now);
            bytes = later;
        }
    }
}

impl io::Write for ChunkedBuf<'_> {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.append(buf);
        Ok(buf.len())
    }

    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.append(buf);
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn joins_what_was_written_in_order_at_its_length() {
        // Pieces of every size around the chunk's, the text a counter.
        let mut want = b"{\"ok\":".to_vec();
        let mut buf = ChunkedBuf::new(&want);
        let mut n = 0u32;
        for size in [1, 7, CHUNK - 3, 5, CHUNK, 2 * CHUNK + 1, 0, 3, CHUNK - 1, 1] {
            let piece: Vec<u8> = (0..size)
                .map(|_| {
                    n = n.wrapping_add(1);
                    (n % 251) as u8
                })
                .collect();
            buf.write_all(&piece).unwrap();
            want.extend_from_slice(&piece);
        }
        // Every piece after the first is a chunk; the first grew as a `Vec` and is filled to
        // its room.
        assert!(buf.done.iter().skip(1).all(|p| p.len() == CHUNK));
        assert!(buf
            .done
            .first()
            .is_some_and(|p| p.len() >= CHUNK && p.len() <= 2 * CHUNK));
        let got = buf.into_vec();
        assert_eq!(got.len(), want.len());
        assert!(got == want);
        assert_eq!(got.capacity(), want.len());
    }

    #[test]
    fn json_between_its_ends() {
        let json = json_between(b"{\"ok\":", &["a\"b", "c"], b"}").unwrap();
        assert_eq!(json, br#"{"ok":["a\"b","c"]}"#);
        assert_eq!(json_between(b"", "k", b"").unwrap(), br#""k""#);
    }

    /// Handed off in pieces of one to two chunks (the last one shorter), some ending inside a
    /// character, which together are the text `json_between` writes.
    #[test]
    fn handed_off_pieces_are_the_text_in_order() {
        // One string of four-byte characters after the seven bytes `{"ok":"`: the first
        // piece (a chunk) ends inside one.
        let value = "😀".repeat(1_000_000);
        let mut pieces: Vec<Vec<u8>> = Vec::new();
        let written = json_handed_off(b"{\"ok\":", &value, b"}", &mut |p: &[u8]| {
            pieces.push(p.to_vec())
        });
        assert!(written.is_ok());
        let want = json_between(b"{\"ok\":", &value, b"}");
        assert!(want.as_ref().is_ok_and(|w| *w == pieces.concat()));
        assert!(pieces.len() > 1);
        let (full, last) = pieces.split_at(pieces.len() - 1);
        assert!(full
            .iter()
            .all(|p| p.len() >= CHUNK && p.len() <= 2 * CHUNK));
        assert!(last.iter().all(|p| !p.is_empty() && p.len() <= 2 * CHUNK));
        assert!(pieces.iter().any(|p| std::str::from_utf8(p).is_err()));
    }

    #[test]
    fn a_small_text_is_its_one_piece() {
        let mut buf = ChunkedBuf::new(b"[");
        buf.write_all(b"1,2]").unwrap();
        assert_eq!(buf.into_vec(), b"[1,2]");
        assert_eq!(ChunkedBuf::default().into_vec(), b"");
    }
}
