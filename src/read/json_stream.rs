//! Positions in a JSON file streamed through serde_json (server-metrics export, run summary):
//! the file may be several GB, so it is never held in memory, yet an error must say the line
//! and the character column of the fault.
//!
//! [`TrackedReader`] hands serde_json its bytes one at a time (as serde_json asks for them) from
//! its own 64 KiB buffer and keeps the chunk before the current one, so the last bytes read are
//! still at hand when an error is raised. Nothing is counted per byte: the line and character
//! count at the start of each chunk are computed when the chunk is left (one pass the compiler
//! vectorises), and a position inside the window is computed only when asked for (an error, or
//! a [`Marks`] request).
//!
//! serde_json reports a line and a byte column (the last byte it had read when the error
//! arose; it may read on a little while closing the objects around the fault): the reader
//! finds that byte in its window and counts characters. An error about a value (a count a
//! visitor refused, an unknown family type, a value of the wrong type) is moved back to the
//! value's first byte ([`value_start`]). Visitors that need the position of a token they just
//! read (the key of a repeated family) ask through [`Marks`], answered at the next byte read.

use crate::error::{json_code, json_message, ErrorCode, Position, ReadError};
use crate::read::count;
use crate::read::locate::{about_a_value, count_chars, value_start, LineCol};
use std::cell::Cell;
use std::io::{self, Read};

const CHUNK: usize = 64 * 1024;

/// A position request from a visitor, which cannot reach the reader (serde_json holds it):
/// the request is for the string token ending at the last byte read (a key just read), and is
/// answered before the next byte is handed out (or by [`TrackedReader::settle`] after an
/// error).
///
/// So that the byte-by-byte path does not also test for a request, a request lowers the
/// reader's fast-path limit to 0: the next read takes the slow path, which answers it.
#[derive(Default)]
pub(crate) struct Marks {
    requested: Cell<bool>,
    found: Cell<Option<LineCol>>,
    /// Bytes of the current chunk the reader may hand out without a check (0 when a request
    /// waits).
    limit: Cell<usize>,
}

impl Marks {
    /// Ask for the position of the string just read (its opening quote).
    pub(crate) fn request(&self) {
        self.requested.set(true);
        self.found.set(None);
        self.limit.set(0);
    }

    /// The answer to the last request, if there is one.
    pub(crate) fn get(&self) -> Option<LineCol> {
        self.found.get()
    }
}

/// Line and character count at a byte offset of the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Anchor {
    offset: u64,
    /// 1-based line of the byte at `offset`.
    line: u64,
    /// Characters before `offset` on its line.
    chars: u64,
    /// Bytes before `offset` on its line.
    bytes: u64,
}

impl Anchor {
    const START: Anchor = Anchor {
        offset: 0,
        line: 1,
        chars: 0,
        bytes: 0,
    };

    /// The anchor after `bytes`, which start at `self`.
    fn advance(self, bytes: &[u8]) -> Anchor {
        let len = bytes.len() as u64;
        match bytes.iter().rposition(|&b| b == b'\n') {
            Some(i) => Anchor {
                offset: self.offset + len,
                line: self.line + bytes.iter().filter(|&&b| b == b'\n').count() as u64,
                chars: count_chars(bytes.get(i + 1..).unwrap_or_default()) as u64,
                bytes: (bytes.len() - i - 1) as u64,
            },
            None => Anchor {
                offset: self.offset + len,
                line: self.line,
                chars: self.chars + count_chars(bytes) as u64,
                bytes: self.bytes + len,
            },
        }
    }

    fn line_col(self, byte: u8) -> LineCol {
        // A continuation byte's character was counted already: it is that character's column.
        let column = self.chars + u64::from(byte & 0xC0 != 0x80);
        LineCol {
            line: u32::try_from(self.line).unwrap_or(u32::MAX),
            column: u32::try_from(column.max(1)).unwrap_or(u32::MAX),
        }
    }
}

/// See the module docs. Reads `inner` in chunks of 64 KiB (waiting for a full chunk or the end,
/// so a trickling source still leaves a useful window).
pub(crate) struct TrackedReader<'m, R> {
    inner: R,
    cur: Vec<u8>,
    cur_len: usize,
    /// Next byte of `cur` to hand out.
    pos: usize,
    cur_at: Anchor,
    prev: Vec<u8>,
    prev_len: usize,
    prev_at: Anchor,
    /// A position computed earlier inside `cur`, to resume from (marks are asked in order).
    cache: Anchor,
    seen_content: bool,
    marks: &'m Marks,
}

impl<'m, R: Read> TrackedReader<'m, R> {
    pub(crate) fn new(inner: R, marks: &'m Marks) -> Self {
        TrackedReader {
            inner,
            cur: vec![0; CHUNK],
            cur_len: 0,
            pos: 0,
            cur_at: Anchor::START,
            prev: vec![0; CHUNK],
            prev_len: 0,
            prev_at: Anchor::START,
            cache: Anchor::START,
            seen_content: false,
            marks,
        }
    }

    /// Whether anything but JSON whitespace was read (an all-whitespace file is empty).
    pub(crate) fn seen_content(&self) -> bool {
        self.seen_content
    }

    /// Read the next chunk into the spare buffer; only when data came does the current chunk
    /// become the previous one (at the end of input the window stays as it is, however often
    /// serde_json asks again).
    fn refill(&mut self) -> io::Result<()> {
        let mut n = 0usize;
        while let Some(buf) = self.prev.get_mut(n..).filter(|b| !b.is_empty()) {
            match self.inner.read(buf) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        if n == 0 {
            return Ok(());
        }
        let next_at = self
            .cur_at
            .advance(self.cur.get(..self.cur_len).unwrap_or_default());
        std::mem::swap(&mut self.cur, &mut self.prev);
        self.prev_len = self.cur_len;
        self.prev_at = self.cur_at;
        self.cur_at = next_at;
        self.cache = next_at;
        self.pos = 0;
        self.cur_len = n;
        if !self.seen_content {
            self.seen_content = self
                .cur
                .get(..n)
                .unwrap_or_default()
                .iter()
                .any(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
        }
        Ok(())
    }

    /// Bytes handed out so far.
    fn consumed(&self) -> u64 {
        self.cur_at.offset + self.pos as u64
    }

    fn byte_at(&self, offset: u64) -> Option<u8> {
        if offset >= self.cur_at.offset {
            let i = usize::try_from(offset - self.cur_at.offset).ok()?;
            return self.cur.get(..self.cur_len)?.get(i).copied();
        }
        let i = usize::try_from(offset.checked_sub(self.prev_at.offset)?).ok()?;
        self.prev.get(..self.prev_len)?.get(i).copied()
    }

    /// The anchor of the byte at `offset`, if it is still in the window.
    fn anchor_at(&mut self, offset: u64) -> Option<Anchor> {
        self.byte_at(offset)?;
        let in_cur = offset >= self.cur_at.offset;
        let (base, start, chunk) = if in_cur {
            let start = if self.cache.offset <= offset {
                self.cache
            } else {
                self.cur_at
            };
            (self.cur_at.offset, start, &self.cur)
        } else {
            (self.prev_at.offset, self.prev_at, &self.prev)
        };
        let lo = usize::try_from(start.offset - base).ok()?;
        let hi = usize::try_from(offset - base).ok()?;
        let at = start.advance(chunk.get(lo..hi)?);
        if in_cur {
            self.cache = at;
        }
        Some(at)
    }

    /// Line and character column of the byte at `offset`, if it is still in the window.
    pub(crate) fn position_at(&mut self, offset: u64) -> Option<LineCol> {
        let byte = self.byte_at(offset)?;
        Some(self.anchor_at(offset)?.line_col(byte))
    }

    /// The offset of the byte serde_json's error points at. serde_json reports the line and
    /// the bytes read on it when the error arose (column 0: the line's first byte was not read
    /// yet, so the fault is the newline before it); it may read a little further before
    /// giving up (closing the containers around the fault), so the point is found by walking
    /// back from the last byte read.
    pub(crate) fn serde_point(&mut self, err: &serde_json::Error) -> Option<u64> {
        let (line, column) = (err.line() as u64, err.column() as u64);
        if line == 0 {
            return None;
        }
        let mut o = self.consumed().checked_sub(1)?;
        let start = loop {
            let a = self.anchor_at(o)?;
            let line_start = o - a.bytes;
            if a.line == line {
                break line_start;
            }
            if a.line < line {
                // The point is past the last byte read: only when serde_json stopped at a
                // line's start (column 0), the newline just read.
                return (a.line + 1 == line && column == 0).then_some(o);
            }
            o = line_start.checked_sub(1)?;
        };
        let point = match column {
            0 => start.checked_sub(1)?,
            c => start + c - 1,
        };
        (point < self.consumed()).then_some(point)
    }

    /// Position of the byte serde_json's error points at.
    pub(crate) fn serde_position(&mut self, err: &serde_json::Error) -> Option<LineCol> {
        let point = self.serde_point(err)?;
        self.position_at(point)
    }

    /// Start of the value serde_json's error is about (a refused count, a bad string, a
    /// value of the wrong type; see [`value_start`]).
    pub(crate) fn value_start(&mut self, err: &serde_json::Error) -> Option<LineCol> {
        let point = self.serde_point(err)?;
        let start = {
            let this = &*self;
            value_start(|o| this.byte_at(o), point)?
        };
        self.position_at(start)
    }

    /// Opening quote of the string whose closing quote is at `close`.
    fn string_ending_at(&mut self, close: u64) -> Option<LineCol> {
        if self.byte_at(close)? != b'"' {
            return None;
        }
        let start = {
            let this = &*self;
            value_start(|o| this.byte_at(o), close)?
        };
        self.position_at(start)
    }

    /// Answer a pending mark request (after an error, when no further byte will be read).
    pub(crate) fn settle(&mut self) {
        if self.marks.requested.replace(false) {
            let found = self
                .consumed()
                .checked_sub(1)
                .and_then(|close| self.string_ending_at(close));
            self.marks.found.set(found);
        }
    }
}

/// The error of a JSON file streamed through `input` that failed with `err` at `path`: empty
/// input, a count refused by a visitor (at its number; `what` names it from its path), or
/// serde_json's own error (at the last byte it read).
pub(crate) fn stream_error<R: Read>(
    file: &str,
    input: &mut TrackedReader<'_, R>,
    err: &serde_json::Error,
    path: Option<String>,
    what: impl FnOnce(&str) -> String,
) -> ReadError {
    input.settle();
    if !input.seen_content() && !err.is_io() {
        // Whitespace only counts as empty, though serde_json reports it as a syntax EOF.
        return ReadError::whole(ErrorCode::EmptyInput, file, "the file is empty");
    }
    if let Some(shown) = count::refused_in_visitor(err) {
        let what = what(path.as_deref().unwrap_or(""));
        return count::refuse(file, at(input.value_start(err), path), &what, &shown);
    }
    let pos = match about_a_value(err) {
        true => input.value_start(err).or_else(|| input.serde_position(err)),
        false => input.serde_position(err),
    };
    ReadError::new(json_code(err), file, at(pos, path), json_message(err))
}

/// A position from an optional line/column and an optional JSON path.
pub(crate) fn at(pos: Option<LineCol>, json_path: Option<String>) -> Position {
    Position {
        json_path,
        ..pos.map(LineCol::position).unwrap_or_default()
    }
}

impl<R: Read> Read for TrackedReader<'_, R> {
    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // serde_json asks for one byte at a time: that path is one comparison and a copy.
        if let ([dst], true) = (&mut *buf, self.pos < self.marks.limit.get()) {
            if let Some(&b) = self.cur.get(self.pos) {
                *dst = b;
                self.pos += 1;
                return Ok(1);
            }
        }
        if self.marks.requested.get() {
            self.settle();
        }
        if self.pos >= self.cur_len {
            self.refill()?;
        }
        self.marks.limit.set(self.cur_len);
        let avail = self.cur.get(self.pos..self.cur_len).unwrap_or_default();
        let n = avail.len().min(buf.len());
        if let (Some(dst), Some(src)) = (buf.get_mut(..n), avail.get(..n)) {
            dst.copy_from_slice(src);
        }
        self.pos += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::locate::from_serde;
    use serde::de::{self, IgnoredAny};
    use serde::Deserialize;

    /// Hands out `n` bytes per read.
    struct Trickle<'a>(&'a [u8], usize);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.0.len().min(buf.len()).min(self.1);
            let (head, tail) = self.0.split_at(n);
            buf[..n].copy_from_slice(head);
            self.0 = tail;
            Ok(n)
        }
    }

    /// Parse `text` as `T` through a tracked reader fed `step` bytes at a time; the error and
    /// the position the reader gives it.
    fn fail<T: for<'de> Deserialize<'de>>(
        text: &str,
        step: usize,
        place: impl FnOnce(&mut TrackedReader<'_, Trickle<'_>>, &serde_json::Error) -> Option<LineCol>,
    ) -> (serde_json::Error, Option<LineCol>) {
        let marks = Marks::default();
        let mut r = TrackedReader::new(Trickle(text.as_bytes(), step), &marks);
        let err = {
            let mut de = serde_json::Deserializer::from_reader(&mut r);
            match T::deserialize(&mut de).and_then(|_| de.end()) {
                Ok(()) => panic!("{text:?} must not parse"),
                Err(e) => e,
            }
        };
        let at = place(&mut r, &err);
        (err, at)
    }

    #[test]
    fn serde_errors_land_on_the_same_byte_in_characters() {
        for text in [
            "{\"a\": x}",
            "{\n  \"é😀\": [1, 2,, 3]\n}",
            "[\"ü\", tru]",
            "{\"a\": 1\n",
            "{} x",
            "{\"k\": \"é\u{1}\"}",
        ] {
            for step in [1, 3, CHUNK] {
                let (err, ours) = fail::<IgnoredAny>(text, step, |r, e| r.serde_position(e));
                assert_eq!(
                    ours,
                    from_serde(text.as_bytes(), err.line(), err.column()),
                    "{text:?} step {step}: {err}"
                );
                assert!(ours.is_some(), "{text:?}");
            }
        }
    }

    /// A field refused by its visitor: serde_json closes the objects around it (reading on)
    /// before it reports, at the byte where the error arose.
    #[derive(Debug)]
    struct Refuse;

    impl<'de> Deserialize<'de> for Refuse {
        fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let v = f64::deserialize(d)?;
            Err(de::Error::custom(format_args!("refused {v}")))
        }
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Inner {
        total: Refuse,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Outer {
        a: Vec<Inner>,
    }

    #[test]
    fn a_refused_number_is_found_behind_what_serde_read_on() {
        let text = "{\"a\": [{\"total\": 9007199254740992 ,\n\n   \"x\": 1}]}";
        for step in [1, CHUNK] {
            let (_, at) = fail::<Outer>(text, step, |r, e| r.value_start(e));
            assert_eq!(
                at,
                Some(LineCol {
                    line: 1,
                    column: 18
                }),
                "step {step}"
            );
        }
        // The number ends its line (serde_json saw the newline: column 0 of the next line).
        let text = "{\"a\": [{\"total\": -1.5e300\n}]}";
        let (_, at) = fail::<Outer>(text, CHUNK, |r, e| r.value_start(e));
        assert_eq!(
            at,
            Some(LineCol {
                line: 1,
                column: 18
            })
        );
    }

    #[test]
    fn positions_survive_chunk_boundaries() {
        // A syntax error beyond the first chunk, on a long line of multi-byte characters.
        let long = "é".repeat(CHUNK);
        let text = format!("[\"{long}\",\n\"{long}\", x]");
        let (err, ours) = fail::<IgnoredAny>(&text, CHUNK, |r, e| r.serde_position(e));
        assert_eq!(
            ours,
            Some(LineCol {
                line: 2,
                column: CHUNK as u32 + 5
            })
        );
        assert_eq!(ours, from_serde(text.as_bytes(), err.line(), err.column()));
    }

    #[test]
    fn walks_back_over_strings() {
        let marks = Marks::default();
        let text = "{\"t\": \"a\\\"b\\\\\"";
        let mut r = TrackedReader::new(text.as_bytes(), &marks);
        let mut sink = Vec::new();
        r.read_to_end(&mut sink).expect("reads");
        let close = r.consumed() - 1;
        assert_eq!(
            r.string_ending_at(close),
            Some(LineCol { line: 1, column: 7 })
        );
        assert_eq!(r.string_ending_at(0), None);
    }

    #[test]
    fn reads_past_the_end_keep_the_window() {
        let marks = Marks::default();
        let mut r = TrackedReader::new(&b"[1, 2"[..], &marks);
        let mut sink = Vec::new();
        r.read_to_end(&mut sink).expect("reads");
        for _ in 0..3 {
            assert_eq!(r.read(&mut [0u8; 4]).expect("eof"), 0);
        }
        assert_eq!(r.position_at(4), Some(LineCol { line: 1, column: 5 }));
    }

    #[test]
    fn marks_are_answered_at_the_next_read() {
        let marks = Marks::default();
        let mut r = TrackedReader::new("{\"kéy\": 1}".as_bytes(), &marks);
        let mut b = [0u8; 7];
        r.read_exact(&mut b).expect("reads");
        marks.request();
        assert_eq!(marks.get(), None);
        r.read_exact(&mut b[..1]).expect("reads");
        assert_eq!(marks.get(), Some(LineCol { line: 1, column: 2 }));
    }
}
