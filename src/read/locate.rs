//! Where a value sits in JSON text: line and column of the value (and of its key) at a JSON
//! path, for errors found after parsing (a launch value refused, a timestamp or a count out of
//! range, a repeated key). Also the conversion of serde_json's positions (byte columns) to
//! [`Position`]'s (character columns).
//!
//! Lines and columns are 1-based; a column counts UTF-8 characters (not bytes) from the start of
//! its line. The locator scans the bytes once, without allocating per token and without
//! recursion (nesting depth is a counter, so hostile nesting cannot overflow the stack); strings
//! are skipped with their escapes, keys are compared after unescaping (`"a\u0062"` is key `ab`).
//! It never panics: malformed or truncated text gives `None` (or the position reached), never an
//! error.

use crate::error::{clamp_u32, Position};

/// One step of a JSON path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seg<'a> {
    /// The `nth` (0-based) occurrence of `name` among an object's keys (JSON allows repeats).
    Key { name: &'a str, nth: usize },
    /// Element `i` (0-based) of an array.
    Index(usize),
}

impl<'a> Seg<'a> {
    /// The first occurrence of a key.
    pub fn key(name: &'a str) -> Self {
        Seg::Key { name, nth: 0 }
    }
}

/// A 1-based line and character column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineCol {
    pub line: u32,
    pub column: u32,
}

impl LineCol {
    /// As a position (no JSON path).
    pub fn position(self) -> Position {
        Position {
            line: Some(self.line),
            column: Some(self.column),
            ..Position::default()
        }
    }

    /// Shift a position found in a slice that starts at `origin` (e.g. one line of a JSONL
    /// file, whose own line 1 is the file's line `origin.line`).
    pub fn offset_by(self, origin: LineCol) -> LineCol {
        if self.line <= 1 {
            LineCol {
                line: origin.line,
                column: origin.column.saturating_add(self.column.saturating_sub(1)),
            }
        } else {
            LineCol {
                line: origin.line.saturating_add(self.line - 1),
                column: self.column,
            }
        }
    }
}

/// Where a value was found: its first character and, for a value under a key, the key's
/// opening quote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Located {
    pub value: LineCol,
    pub key: Option<LineCol>,
}

/// Locate the value at `path` in `text`. `None` when the path is not in the text (or the text
/// is too malformed to follow to it).
pub fn locate(text: &str, path: &[Seg<'_>]) -> Option<Located> {
    locate_bytes(text.bytes(), path)
}

/// [`locate`] over any byte stream (e.g. a file re-read after an error): stops reading as soon
/// as the value is reached.
pub fn locate_bytes<I: IntoIterator<Item = u8>>(bytes: I, path: &[Seg<'_>]) -> Option<Located> {
    let mut s = Scanner::new(bytes.into_iter());
    let mut key = None;
    for seg in path {
        s.skip_ws();
        key = match *seg {
            Seg::Key { name, nth } => Some(s.enter_key(name, nth)?),
            Seg::Index(i) => {
                s.enter_index(i)?;
                None
            }
        };
    }
    s.skip_ws();
    Some(Located {
        value: s.here(),
        key,
    })
}

/// Position of the byte at `offset` of UTF-8 `text` (clamped to the end), as a line and
/// character column; a byte inside a multi-byte character gives that character's column.
pub fn position_of_byte(text: &[u8], offset: usize) -> LineCol {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
    // Characters up to and including the byte's own (a continuation byte is not counted: it
    // gives the column of its character); at the end of the text, one past the last.
    let upto = text
        .get(line_start..(offset + 1).min(text.len()))
        .unwrap_or_default();
    let column = count_chars(upto) + usize::from(offset >= text.len());
    LineCol {
        line: clamp_u32(line),
        column: clamp_u32(column.max(1)),
    }
}

/// The byte of `text` serde_json's error position points at (1-based line; column = bytes
/// read on that line, so the last byte read is the fault). Column 0 (the last byte read was a
/// newline) is that newline. `None` for line 0 (serde_json's "no position").
pub(crate) fn serde_offset(text: &[u8], line: usize, column: usize) -> Option<usize> {
    if line == 0 {
        return None;
    }
    let mut start = 0usize;
    for _ in 1..line {
        let next = text.get(start..)?.iter().position(|&b| b == b'\n')?;
        start += next + 1;
    }
    match column {
        0 => start.checked_sub(1),
        c => Some(start + c - 1),
    }
}

/// Convert serde_json's error position in `text` (1-based line; column = bytes read on that
/// line, 0 for the newline before it) to a character position.
pub fn from_serde(text: &[u8], line: usize, column: usize) -> Option<LineCol> {
    serde_offset(text, line, column).map(|o| position_of_byte(text, o))
}

/// Whether a serde_json error is about the value just read (`invalid type: …`, `invalid
/// value: …`): its position is then moved back to the start of that value.
pub(crate) fn about_a_value(err: &serde_json::Error) -> bool {
    if err.classify() != serde_json::error::Category::Data {
        return false;
    }
    let msg = err.to_string();
    msg.starts_with("invalid type: ") || msg.starts_with("invalid value: ")
}

/// The position of a serde_json error in `text`: the start of the value for an error about a
/// value, else where serde_json stopped.
pub(crate) fn serde_error_position(text: &[u8], err: &serde_json::Error) -> Option<LineCol> {
    let point = serde_offset(text, err.line(), err.column())?;
    let byte_at = |o: u64| usize::try_from(o).ok().and_then(|i| text.get(i).copied());
    let at = match about_a_value(err) {
        true => value_start(byte_at, point as u64).map_or(point, |o| o as usize),
        false => point,
    };
    Some(position_of_byte(text, at))
}

/// The first byte of the value serde_json had just read when it placed an error at `point`.
/// serde_json places an error raised after a value (by a visitor) once it has closed the
/// object around it, i.e. at the next significant byte (`,`, `}` or `]`, past whitespace);
/// one raised while reading the value, at its last byte or the byte after a number. `byte_at`
/// gives the bytes still at hand; `None` when the value's start is not among them or the
/// bytes there are not a value.
pub(crate) fn value_start(byte_at: impl Fn(u64) -> Option<u8>, point: u64) -> Option<u64> {
    let mut end = point;
    if matches!(byte_at(end)?, b',' | b'}' | b']') {
        end = end.checked_sub(1)?;
    }
    while matches!(byte_at(end)?, b' ' | b'\t' | b'\n' | b'\r') {
        end = end.checked_sub(1)?;
    }
    // Walk back while `part` holds; a value running past the bytes at hand has no known start.
    let back = |part: fn(u8) -> bool| {
        let mut at = end;
        while at > 0 {
            match byte_at(at - 1) {
                Some(b) if part(b) => at -= 1,
                Some(_) => return Some(at),
                None => return None,
            }
        }
        Some(at)
    };
    match byte_at(end)? {
        b'"' => string_start(&byte_at, end),
        b'0'..=b'9' => {
            back(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E'))
                .filter(|&s| matches!(byte_at(s), Some(b'0'..=b'9' | b'-')))
        }
        b'a'..=b'z' => back(|b| b.is_ascii_lowercase()),
        b'{' | b'[' => Some(end),
        _ => None,
    }
}

/// The opening quote of the string whose closing quote is at `close` (a quote after an odd
/// run of backslashes is escaped).
fn string_start(byte_at: &impl Fn(u64) -> Option<u8>, close: u64) -> Option<u64> {
    let mut at = close;
    loop {
        at = at.checked_sub(1)?;
        if byte_at(at)? != b'"' {
            continue;
        }
        let mut backslashes = 0u64;
        while at > backslashes && byte_at(at - backslashes - 1)? == b'\\' {
            backslashes += 1;
        }
        if backslashes % 2 == 0 {
            return Some(at);
        }
    }
}

/// The position of the value at `path` in one line of a JSONL file (its 1-based `line_no`):
/// line, column and JSON path, or the line and path alone when the value cannot be found.
pub(crate) fn in_line(line: &[u8], line_no: usize, path: &[Seg<'_>]) -> Position {
    let origin = LineCol {
        line: clamp_u32(line_no),
        column: 1,
    };
    let mut pos = match locate_bytes(line.iter().copied(), path) {
        Some(found) => found.value.offset_by(origin).position(),
        None => Position::line(line_no),
    };
    pos.json_path = Some(display_path(path)).filter(|p| !p.is_empty());
    pos
}

/// The position of a serde_json error in one line of a JSONL file (its 1-based `line_no`).
pub(crate) fn serde_in_line(line: &[u8], line_no: usize, err: &serde_json::Error) -> Position {
    let origin = LineCol {
        line: clamp_u32(line_no),
        column: 1,
    };
    match serde_error_position(line, err) {
        Some(at) => at.offset_by(origin).position(),
        None => Position::line(line_no),
    }
}

fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// Characters in UTF-8 bytes: every byte that is not a continuation byte (`10xxxxxx`) starts
/// one. Counted eight bytes at a time: this runs over every byte of a streamed export.
pub(crate) fn count_chars(bytes: &[u8]) -> usize {
    // Bit 7 set and bit 6 clear: `w << 1` moves each byte's bit 6 to its bit 7.
    let continuation = count_flagged(bytes, |w| w & !(w << 1) & HIGH, is_continuation);
    bytes.len() - continuation
}

/// The `\n` bytes in `bytes`, counted eight at a time.
pub(crate) fn count_newlines(bytes: &[u8]) -> usize {
    count_flagged(
        bytes,
        |w| {
            let x = w ^ 0x0A0A_0A0A_0A0A_0A0A;
            // Bit 7 of a byte of `nonzero` is set exactly when that byte of `x` is not zero.
            let nonzero = ((x & LOW7) + LOW7) | x;
            !nonzero & HIGH
        },
        |b| b == b'\n',
    )
}

/// The bytes `one` holds for, eight at a time: `flag` sets bit 7 of exactly those bytes of a
/// word. Each byte of `lanes` counts its position's flags, added up every 255 words (before one
/// can overflow): `count_ones` per word is a dozen instructions on CPUs without a popcount
/// instruction (the x86-64 baseline, WebAssembly engines on such CPUs).
#[inline(always)]
fn count_flagged(bytes: &[u8], flag: impl Fn(u64) -> u64, one: impl Fn(u8) -> bool) -> usize {
    let mut count = 0;
    for block in bytes.chunks(8 * 255) {
        let words = block.chunks_exact(8);
        let tail = words.remainder();
        let mut lanes = 0u64;
        for w in words {
            lanes += flag(u64::from_le_bytes(w.try_into().unwrap_or([0; 8]))) >> 7;
        }
        count += sum_of_bytes(lanes) + tail.iter().filter(|&&b| one(b)).count();
    }
    count
}

/// The sum of a word's eight bytes.
fn sum_of_bytes(w: u64) -> usize {
    const EVEN: u64 = 0x00FF_00FF_00FF_00FF;
    // Four sums of two bytes (each below 2^9), then their sum (below 2^11) in the top 16 bits.
    let pairs = (w & EVEN) + ((w >> 8) & EVEN);
    (pairs.wrapping_mul(0x0001_0001_0001_0001) >> 48) as usize
}

/// A byte cursor with a one-byte lookahead and the line/column of the next byte.
struct Scanner<I> {
    bytes: I,
    peeked: Option<u8>,
    line: usize,
    /// Characters consumed on the current line.
    chars: usize,
}

impl<I: Iterator<Item = u8>> Scanner<I> {
    fn new(bytes: I) -> Self {
        Scanner {
            bytes,
            peeked: None,
            line: 1,
            chars: 0,
        }
    }

    fn peek(&mut self) -> Option<u8> {
        if self.peeked.is_none() {
            self.peeked = self.bytes.next();
        }
        self.peeked
    }

    fn bump(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.peeked = None;
        if b == b'\n' {
            self.line += 1;
            self.chars = 0;
        } else if !is_continuation(b) {
            self.chars += 1;
        }
        Some(b)
    }

    /// Position of the next byte.
    fn here(&self) -> LineCol {
        LineCol {
            line: clamp_u32(self.line),
            column: clamp_u32(self.chars + 1),
        }
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.bump();
        }
    }

    fn expect(&mut self, b: u8) -> Option<()> {
        (self.bump()? == b).then_some(())
    }

    /// Consume the rest of a string whose opening quote was consumed; `None` if unterminated.
    fn skip_string(&mut self) -> Option<()> {
        loop {
            match self.bump()? {
                b'"' => return Some(()),
                b'\\' => {
                    self.bump()?;
                }
                _ => {}
            }
        }
    }

    /// Consume one value, whatever it is (containers by depth count, not recursion).
    fn skip_value(&mut self) -> Option<()> {
        self.skip_ws();
        match self.peek()? {
            b'"' => {
                self.bump();
                self.skip_string()
            }
            b'{' | b'[' => {
                self.bump();
                let mut depth = 1usize;
                while depth > 0 {
                    match self.bump()? {
                        b'"' => self.skip_string()?,
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => depth -= 1,
                        _ => {}
                    }
                }
                Some(())
            }
            _ => {
                // A number or literal (or junk): up to the next delimiter.
                while !matches!(
                    self.peek(),
                    None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                ) {
                    self.bump();
                }
                Some(())
            }
        }
    }

    /// Compare the rest of a string (opening quote consumed) with `name` after unescaping, and
    /// consume it. `None` if unterminated.
    fn string_equals(&mut self, name: &str) -> Option<bool> {
        let want = name.as_bytes();
        let mut i = 0usize;
        let mut same = true;
        let push = |b: u8, i: &mut usize, same: &mut bool| {
            *same &= want.get(*i) == Some(&b);
            *i += 1;
        };
        loop {
            match self.bump()? {
                b'"' => return Some(same && i == want.len()),
                b'\\' => {
                    let decoded = match self.bump()? {
                        b'u' => self.unicode_escape()?,
                        e => simple_escape(e),
                    };
                    match decoded {
                        Some(c) => {
                            let mut buf = [0u8; 4];
                            for &b in c.encode_utf8(&mut buf).as_bytes() {
                                push(b, &mut i, &mut same);
                            }
                        }
                        None => same = false,
                    }
                }
                b => push(b, &mut i, &mut same),
            }
        }
    }

    /// After `\u`: the escaped character (a surrogate pair is joined); `Some(None)` for an
    /// invalid escape (the string cannot equal any key), `None` at the end of input.
    fn unicode_escape(&mut self) -> Option<Option<char>> {
        let Some(hi) = self.hex4()? else {
            return Some(None);
        };
        if !(0xD800..0xDC00).contains(&hi) {
            return Some(char::from_u32(hi));
        }
        // A high surrogate must be followed by `\u` and a low surrogate.
        if self.peek()? != b'\\' {
            return Some(None);
        }
        self.bump();
        if self.bump()? != b'u' {
            return Some(None);
        }
        let Some(lo) = self.hex4()? else {
            return Some(None);
        };
        if !(0xDC00..0xE000).contains(&lo) {
            return Some(None);
        }
        Some(char::from_u32(
            0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00),
        ))
    }

    /// Four hex digits; `Some(None)` if one is not hex (only the digits read are consumed).
    fn hex4(&mut self) -> Option<Option<u32>> {
        let mut v = 0u32;
        for _ in 0..4 {
            let d = match self.peek()? {
                b @ b'0'..=b'9' => b - b'0',
                b @ b'a'..=b'f' => b - b'a' + 10,
                b @ b'A'..=b'F' => b - b'A' + 10,
                _ => return Some(None),
            };
            self.bump();
            v = v * 16 + u32::from(d);
        }
        Some(Some(v))
    }

    /// At an object: move to the value of the `nth` occurrence of key `name`; returns the key's
    /// position.
    fn enter_key(&mut self, name: &str, nth: usize) -> Option<LineCol> {
        self.expect(b'{')?;
        let mut seen = 0usize;
        loop {
            self.skip_ws();
            if self.peek()? != b'"' {
                return None;
            }
            let at = self.here();
            self.bump();
            let equal = self.string_equals(name)?;
            self.skip_ws();
            self.expect(b':')?;
            if equal {
                if seen == nth {
                    return Some(at);
                }
                seen += 1;
            }
            self.skip_value()?;
            self.skip_ws();
            self.expect(b',')?;
        }
    }

    /// At an array: move to element `i`.
    fn enter_index(&mut self, i: usize) -> Option<()> {
        self.expect(b'[')?;
        for _ in 0..i {
            self.skip_ws();
            if self.peek()? == b']' {
                return None;
            }
            self.skip_value()?;
            self.skip_ws();
            self.expect(b',')?;
        }
        self.skip_ws();
        (self.peek()? != b']').then_some(())
    }
}

fn simple_escape(e: u8) -> Option<char> {
    Some(match e {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        _ => return None,
    })
}

/// An owned JSON path, for a refusal decided after its value was read (the segments outlive
/// the parse, so a caller that can read the file again can place the value).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OwnedPath(Vec<(Option<String>, usize)>);

impl OwnedPath {
    /// Append the `nth` (0-based) occurrence of key `name`.
    pub fn key(mut self, name: &str, nth: usize) -> Self {
        self.0.push((Some(name.to_string()), nth));
        self
    }

    /// Append array element `i`.
    pub fn index(mut self, i: usize) -> Self {
        self.0.push((None, i));
        self
    }

    pub fn segs(&self) -> Vec<Seg<'_>> {
        self.0
            .iter()
            .map(|(k, n)| match k {
                Some(name) => Seg::Key { name, nth: *n },
                None => Seg::Index(*n),
            })
            .collect()
    }

    /// As shown to users (see [`display_path`]).
    pub fn display(&self) -> String {
        display_path(&self.segs())
    }
}

/// A JSON path as shown to users (`metrics.vllm:x.series[2].stats.total`), from segments.
pub fn display_path(path: &[Seg<'_>]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Key { name, .. } => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(name);
            }
            Seg::Index(i) => {
                out.push('[');
                out.push_str(&i.to_string());
                out.push(']');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn word_counts_match_byte_counts() {
        let text = "a\né😀\n\n\u{7f}\u{80}ü\nxyz\n\u{10FFFF}é".repeat(7);
        // Past the 255 words after which the counters are added up, every byte a newline or
        // a continuation byte (the most one counter takes).
        let long = text.repeat(30) + &"\n".repeat(6000) + &"é".repeat(3000);
        let steps = [(text.as_bytes(), 5), (long.as_bytes(), 97)];
        for (bytes, step) in steps {
            for start in 0..9 {
                for end in (start..bytes.len()).step_by(step) {
                    let b = &bytes[start..end];
                    assert_eq!(
                        super::count_newlines(b),
                        b.iter().filter(|&&x| x == b'\n').count()
                    );
                    assert_eq!(
                        super::count_chars(b),
                        b.iter().filter(|&&x| x & 0xC0 != 0x80).count()
                    );
                }
            }
        }
    }

    use super::*;

    fn at(line: u32, column: u32) -> LineCol {
        LineCol { line, column }
    }

    fn value(text: &str, path: &[Seg<'_>]) -> Option<LineCol> {
        locate(text, path).map(|l| l.value)
    }

    #[test]
    fn finds_values_and_keys() {
        let t = "{\n  \"a\": {\"b\": [10, {\"c\": 7}]},\n  \"d\": true\n}";
        assert_eq!(value(t, &[]), Some(at(1, 1)));
        let l = locate(
            t,
            &[Seg::key("a"), Seg::key("b"), Seg::Index(1), Seg::key("c")],
        );
        assert_eq!(l.map(|l| l.value), Some(at(2, 25)));
        assert_eq!(l.and_then(|l| l.key), Some(at(2, 20)));
        assert_eq!(value(t, &[Seg::key("d")]), Some(at(3, 8)));
        assert_eq!(
            value(t, &[Seg::key("a"), Seg::key("b"), Seg::Index(0)]),
            Some(at(2, 15))
        );
        // Absent keys and indices, or a path through a scalar.
        assert_eq!(value(t, &[Seg::key("x")]), None);
        assert_eq!(
            value(t, &[Seg::key("a"), Seg::key("b"), Seg::Index(2)]),
            None
        );
        assert_eq!(value(t, &[Seg::key("d"), Seg::key("e")]), None);
        assert_eq!(value(t, &[Seg::Index(0)]), None);
    }

    #[test]
    fn repeated_keys_by_occurrence() {
        let t = r#"{"k": 1, "j": {"k": 5}, "k": 2, "k": 3}"#;
        assert_eq!(value(t, &[Seg::key("k")]), Some(at(1, 7)));
        assert_eq!(value(t, &[Seg::Key { name: "k", nth: 1 }]), Some(at(1, 30)));
        assert_eq!(value(t, &[Seg::Key { name: "k", nth: 2 }]), Some(at(1, 38)));
        assert_eq!(value(t, &[Seg::Key { name: "k", nth: 3 }]), None);
    }

    #[test]
    fn strings_and_escapes_are_skipped_and_compared_unescaped() {
        let t = r#"{"x": "a\"b}]{[", "q\"": 1, "a\u0062": 2, "\ud83d\ude00": 3, "\/\n": 4}"#;
        assert_eq!(value(t, &[Seg::key("q\"")]), Some(at(1, 26)));
        assert_eq!(value(t, &[Seg::key("ab")]), Some(at(1, 40)));
        assert_eq!(value(t, &[Seg::key("😀")]), Some(at(1, 59)));
        assert_eq!(value(t, &[Seg::key("/\n")]), Some(at(1, 70)));
        // A lone surrogate or a bad escape never equals a key (and does not derail the scan).
        let t = r#"{"\ud800": 1, "\q": 2, "\u12": 3, "z": 4}"#;
        assert_eq!(value(t, &[Seg::key("z")]), Some(at(1, 40)));
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        let t = "{\"é😀\": \"ü\", \"k\": 5}";
        assert_eq!(value(t, &[Seg::key("k")]), Some(at(1, 18)));
        assert_eq!(value(t, &[Seg::key("é😀")]), Some(at(1, 8)));
        assert_eq!(
            position_of_byte(t.as_bytes(), t.find('k').unwrap_or(0)),
            at(1, 14)
        );
        // A byte inside a character is that character's column.
        assert_eq!(position_of_byte("é".as_bytes(), 1), at(1, 1));
        assert_eq!(position_of_byte(b"ab\ncd", 5), at(2, 3));
    }

    #[test]
    fn serde_positions_become_character_positions() {
        // serde_json: line 2, column 9 = the 9th byte of line 2 (`x`, after two 2-byte chars).
        let t = "{\n\"éé\": x}";
        assert_eq!(from_serde(t.as_bytes(), 2, 9), Some(at(2, 7)));
        // Column 0: the newline that ends line 1.
        assert_eq!(from_serde(b"{\"a\": 1\n}", 2, 0), Some(at(1, 8)));
        assert_eq!(from_serde(b"x", 0, 0), None);
        assert_eq!(from_serde(b"x", 5, 1), None);
    }

    #[test]
    fn values_are_found_behind_serde_points() {
        let start = |t: &str, point: usize| {
            let b = t.as_bytes();
            value_start(|o| b.get(o as usize).copied(), point as u64)
        };
        // After a number serde_json stops on the delimiter, past whitespace.
        assert_eq!(start("{\"a\": -12.5e3 ,", 14), Some(6));
        assert_eq!(start("[9007199254740992]", 17), Some(1));
        assert_eq!(start("[1.5", 3), Some(1));
        // At a string's closing quote, escapes included.
        assert_eq!(start(r#"{"a": "x\"y\\"}"#, 13), Some(6));
        assert_eq!(start("[true,", 5), Some(1));
        assert_eq!(start("{\"a\": {", 6), Some(6));
        // Not a value, or a value whose start is not at hand.
        assert_eq!(start("[:", 1), None);
        assert_eq!(start("\"abc", 4), None);
        let b = b"123456";
        assert_eq!(value_start(|o| (o >= 2).then(|| b[o as usize]), 5), None);
    }

    #[test]
    fn hostile_inputs_never_panic() {
        let deep = "[".repeat(100_000);
        assert_eq!(value(&deep, &[Seg::Index(0), Seg::Index(1)]), None);
        let deep_obj = format!("{{\"a\": {}, \"b\": 1}}", "[".repeat(100_000));
        assert_eq!(value(&deep_obj, &[Seg::key("b")]), None);
        let closed = format!(
            "{{\"a\": {}{}, \"b\": 1}}",
            "[".repeat(50_000),
            "]".repeat(50_000)
        );
        assert_eq!(value(&closed, &[Seg::key("b")]), Some(at(1, 100_014)));
        for t in [
            "",
            "{",
            "{\"",
            "{\"a",
            "{\"a\"",
            "{\"a\":",
            "{\"a\\",
            "{\"a\\u",
            "{\"a\\ud800\\u",
            "[1,",
            "[\"x",
            "{\"a\": \"unterminated",
            "}",
            "]",
            "\u{feff}{}",
            "{\"a\" 1}",
            "[,,,]",
            "{,}",
            "\"\\",
        ] {
            for path in [
                &[Seg::key("a")][..],
                &[Seg::Index(2)][..],
                &[Seg::key("a"), Seg::Index(0)][..],
            ] {
                let _ = locate(t, path);
            }
        }
        assert_eq!(value("[,,,]", &[Seg::Index(2)]), Some(at(1, 4)));
        // Invalid UTF-8 through the byte interface.
        let bytes = [b'{', b'"', 0xff, 0xfe, b'"', b':', 1, b'}'];
        assert_eq!(locate_bytes(bytes, &[Seg::key("a")]), None);
    }

    #[test]
    fn shows_paths() {
        let p = [
            Seg::key("metrics"),
            Seg::key("vllm:x"),
            Seg::key("series"),
            Seg::Index(2),
        ];
        assert_eq!(display_path(&p), "metrics.vllm:x.series[2]");
        assert_eq!(display_path(&[Seg::Index(0), Seg::key("a")]), "[0].a");
        assert_eq!(display_path(&[]), "");
    }
}
