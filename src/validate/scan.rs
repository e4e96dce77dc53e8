//! A push scanner over the raw bytes of JSON (one value, or JSON Lines): nesting depth, string
//! lengths, and the series, timeslices and label keys of server-metrics exports, counted as
//! the bytes stream by and before any parser sees them. It does not check the syntax (the
//! parser after it does); it follows only strings and brackets, so it needs no recursion and
//! keeps one small frame per open array or object (at most `nesting_depth` of them).

use super::limits::UploadLimits;
use std::collections::BTreeSet;

/// What the scanner stopped at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScanStop {
    /// A limit (`name`) reached, with the count observed.
    Limit {
        name: &'static str,
        observed: u64,
        at: ScanPos,
    },
    /// A key repeated in one object (only when duplicates are tracked).
    DuplicateKey { key: String, at: ScanPos },
}

/// Where the scanner was: byte offset, 1-based line and character column, and the JSON path.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ScanPos {
    pub byte_offset: u64,
    pub line: u64,
    pub column: u64,
    pub json_path: String,
}

/// What a container is, for counting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Other,
    /// The array under a `series` key: each object in it is a series.
    Series,
    /// The array under a `timeslices` key.
    Timeslices,
    /// The object under a `labels` key: each key is a label key.
    Labels,
}

/// Keys longer than this are kept only in part for paths (the whole key counts toward
/// `string_length`); duplicates are tracked on whole keys.
const PATH_KEY_BYTES: usize = 256;

#[derive(Debug)]
struct Frame {
    object: bool,
    expect_key: bool,
    role: Role,
    /// Members (object) or elements (array) begun so far.
    members: u64,
    /// The last key (object), for paths and for the role of a container under it.
    key: Vec<u8>,
    /// Keys seen (objects, when duplicates are tracked).
    keys: Option<BTreeSet<Vec<u8>>>,
}

/// The bytes that end a run skipped outside strings ([`JsonScanner::plain_run`]): quotes,
/// brackets, separators and newlines.
const SPECIAL_OUTSIDE: &[u8] = b"\"{}[]:,\n";
const PLAIN_OUTSIDE: [bool; 256] = plain_except(SPECIAL_OUTSIDE);

/// The bytes that end a run skipped inside a string: the quote, the backslash and the newline
/// (which the position counts).
const SPECIAL_IN_STRING: &[u8] = b"\"\\\n";
const PLAIN_IN_STRING: [bool; 256] = plain_except(SPECIAL_IN_STRING);

/// Where the first byte `plain` does not hold is in `bytes`. (Sixteen bytes at a time, as the
/// line scan does, was no faster: a run here is 4 to 7 bytes on average.)
fn first_special(bytes: &[u8], plain: &[bool; 256]) -> usize {
    bytes
        .iter()
        .position(|&b| !plain[usize::from(b)])
        .unwrap_or(bytes.len())
}

/// Whether `b` begins a character: the column counts characters, and a UTF-8 continuation
/// byte does not begin one.
fn starts_char(b: u8) -> bool {
    b & 0xC0 != 0x80
}

const fn plain_except(special: &[u8]) -> [bool; 256] {
    let mut table = [true; 256];
    let mut i = 0;
    while i < special.len() {
        table[special[i] as usize] = false;
        i += 1;
    }
    table
}

/// Series and timeslices counted so far (they add up over every file of an upload).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub series: u64,
    pub timeslices: u64,
}

#[derive(Debug)]
pub struct JsonScanner {
    limits: UploadLimits,
    track_duplicates: bool,
    stack: Vec<Frame>,
    in_string: bool,
    escape: bool,
    /// The string being read is a key (its bytes are kept, up to the bound).
    is_key: bool,
    key_buf: Vec<u8>,
    /// The key buffers of closed containers, for the next ones (a key read into a new buffer
    /// was an allocation per key).
    spare_keys: Vec<Vec<u8>>,
    /// Where the key being read starts (its opening quote).
    key_at: (u64, u64, u64),
    string_len: u64,
    /// A value has begun in the current container since its last separator.
    offset: u64,
    line: u64,
    column: u64,
}

impl JsonScanner {
    /// `track_duplicates`: refuse a key repeated in one object (keeps every key of the open
    /// objects: for the result JSON, whose size is bounded).
    pub fn new(limits: &UploadLimits, track_duplicates: bool) -> Self {
        JsonScanner {
            limits: *limits,
            track_duplicates,
            stack: Vec::new(),
            in_string: false,
            escape: false,
            is_key: false,
            key_buf: Vec::new(),
            spare_keys: Vec::new(),
            key_at: (0, 1, 1),
            string_len: 0,
            offset: 0,
            line: 1,
            column: 1,
        }
    }

    /// Scan the next bytes; `counts` is the upload's running total.
    pub fn push(&mut self, bytes: &[u8], counts: &mut Counts) -> Result<(), ScanStop> {
        let mut at = 0;
        while let Some(&b) = bytes.get(at) {
            let run = self.plain_run(&bytes[at..]);
            if run > 0 {
                self.skip(&bytes[at..at + run]);
                at += run;
                continue;
            }
            self.step(b, counts)?;
            at += 1;
        }
        Ok(())
    }

    /// One byte scanned, and the position moved past it.
    fn step(&mut self, b: u8, counts: &mut Counts) -> Result<(), ScanStop> {
        self.byte(b, counts)?;
        self.offset += 1;
        if b == b'\n' {
            self.line += 1;
            self.column = 1;
        } else if starts_char(b) {
            self.column += 1;
        }
        Ok(())
    }

    /// How many of the first bytes of `bytes` change nothing but the position, a string's
    /// length and the key being read: no bracket, separator, quote, backslash or newline, and
    /// within the string length limit (the byte that passes it is scanned alone, so that the
    /// limit is placed at it). Skipped whole, they spared a call per byte: the scan was a third
    /// of validating a 96 MB bundle natively.
    fn plain_run(&self, bytes: &[u8]) -> usize {
        if self.escape {
            return 0;
        }
        let run = if self.in_string {
            first_special(bytes, &PLAIN_IN_STRING)
        } else {
            first_special(bytes, &PLAIN_OUTSIDE)
        };
        if !self.in_string {
            return run;
        }
        let room = self.limits.string_length.saturating_sub(self.string_len);
        run.min(usize::try_from(room).unwrap_or(usize::MAX))
    }

    /// Bytes [`Self::plain_run`] found, taken at once as [`Self::byte`] takes them one by one.
    fn skip(&mut self, run: &[u8]) {
        if self.in_string {
            self.string_len += run.len() as u64;
            if self.is_key {
                let keep = if self.track_duplicates {
                    run.len()
                } else {
                    run.len()
                        .min(PATH_KEY_BYTES.saturating_sub(self.key_buf.len()))
                };
                self.key_buf.extend_from_slice(&run[..keep]);
            }
        }
        self.offset += run.len() as u64;
        // No newline in a run.
        self.column += run.iter().filter(|&&b| starts_char(b)).count() as u64;
    }

    fn byte(&mut self, b: u8, counts: &mut Counts) -> Result<(), ScanStop> {
        if self.in_string {
            return self.string_byte(b);
        }
        match b {
            b'"' => self.open_string(),
            b'{' | b'[' => self.open(b == b'{', counts),
            b'}' | b']' => {
                if let Some(mut f) = self.stack.pop() {
                    f.key.clear();
                    self.spare_keys.push(f.key);
                }
                Ok(())
            }
            b':' => {
                if let Some(f) = self.stack.last_mut() {
                    f.expect_key = false;
                }
                Ok(())
            }
            b',' => {
                if let Some(f) = self.stack.last_mut() {
                    f.expect_key = f.object;
                    if !f.object {
                        f.members += 1;
                    }
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn string_byte(&mut self, b: u8) -> Result<(), ScanStop> {
        if self.escape {
            self.escape = false;
        } else if b == b'\\' {
            self.escape = true;
        } else if b == b'"' {
            self.in_string = false;
            return self.close_string();
        }
        self.string_len += 1;
        if self.string_len > self.limits.string_length {
            return Err(self.limit("string_length", self.string_len));
        }
        if self.is_key && (self.track_duplicates || self.key_buf.len() < PATH_KEY_BYTES) {
            self.key_buf.push(b);
        }
        Ok(())
    }

    fn open_string(&mut self) -> Result<(), ScanStop> {
        self.in_string = true;
        self.string_len = 0;
        self.is_key = self.stack.last().is_some_and(|f| f.object && f.expect_key);
        self.key_buf.clear();
        if !self.is_key {
            return Ok(());
        }
        self.key_at = (self.offset, self.line, self.column);
        let label_keys = self.limits.label_keys;
        let Some(f) = self.stack.last_mut() else {
            return Ok(());
        };
        f.members += 1;
        if f.role == Role::Labels && f.members > label_keys {
            let n = f.members;
            // The key is not read yet: the path is the labels object's.
            let mut at = self.pos();
            at.json_path = self.path_of(self.stack.len() - 1);
            return Err(ScanStop::Limit {
                name: "label_keys",
                observed: n,
                at,
            });
        }
        Ok(())
    }

    fn close_string(&mut self) -> Result<(), ScanStop> {
        if !self.is_key {
            return Ok(());
        }
        let Some(f) = self.stack.last_mut() else {
            return Ok(());
        };
        // The key read becomes the container's; its last key's buffer takes the next one.
        std::mem::swap(&mut f.key, &mut self.key_buf);
        self.key_buf.clear();
        if let Some(keys) = &mut f.keys {
            if !keys.insert(f.key.clone()) {
                let key = String::from_utf8_lossy(&f.key).into_owned();
                let (byte_offset, line, column) = self.key_at;
                let at = ScanPos {
                    byte_offset,
                    line,
                    column,
                    json_path: self.path(),
                };
                return Err(ScanStop::DuplicateKey { key, at });
            }
        }
        Ok(())
    }

    fn open(&mut self, object: bool, counts: &mut Counts) -> Result<(), ScanStop> {
        let depth = self.stack.len() as u64 + 1;
        if depth > self.limits.nesting_depth {
            return Err(self.limit("nesting_depth", depth));
        }
        let role = match self.stack.last() {
            Some(p) if p.object && !object && p.key == b"series" => Role::Series,
            Some(p) if p.object && !object && p.key == b"timeslices" => Role::Timeslices,
            Some(p) if p.object && object && p.key == b"labels" => Role::Labels,
            _ => Role::Other,
        };
        match self.stack.last().map(|p| p.role) {
            Some(Role::Series) if object => {
                counts.series += 1;
                if counts.series > self.limits.series {
                    return Err(self.limit("series", counts.series));
                }
            }
            Some(Role::Timeslices) if object => {
                counts.timeslices += 1;
                if counts.timeslices > self.limits.timeslices {
                    return Err(self.limit("timeslices", counts.timeslices));
                }
            }
            _ => {}
        }
        let keys = (object && self.track_duplicates).then(BTreeSet::new);
        self.stack.push(Frame {
            object,
            expect_key: object,
            role,
            members: 0,
            key: self.spare_keys.pop().unwrap_or_default(),
            keys,
        });
        Ok(())
    }

    fn limit(&self, name: &'static str, observed: u64) -> ScanStop {
        ScanStop::Limit {
            name,
            observed,
            at: self.pos(),
        }
    }

    fn pos(&self) -> ScanPos {
        ScanPos {
            byte_offset: self.offset,
            line: self.line,
            column: self.column,
            json_path: self.path(),
        }
    }

    /// The JSON path of the innermost open container's current member.
    fn path(&self) -> String {
        self.path_of(self.stack.len())
    }

    /// The JSON path through the first `frames` open containers.
    fn path_of(&self, frames: usize) -> String {
        let mut out = String::new();
        for f in &self.stack[..frames] {
            if f.object {
                if f.members == 0 {
                    break;
                }
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&String::from_utf8_lossy(&f.key));
            } else {
                out.push_str(&format!("[{}]", f.members));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(text: &str, limits: UploadLimits, dup: bool) -> Result<Counts, ScanStop> {
        let mut s = JsonScanner::new(&limits, dup);
        let mut c = Counts::default();
        // Byte by byte: the result must not depend on the chunking.
        for b in text.as_bytes() {
            s.push(std::slice::from_ref(b), &mut c)?;
        }
        Ok(c)
    }

    /// The scan as it was before runs were skipped: every byte through `step`.
    fn push_bytewise(
        s: &mut JsonScanner,
        bytes: &[u8],
        counts: &mut Counts,
    ) -> Result<(), ScanStop> {
        for &b in bytes {
            s.step(b, counts)?;
        }
        Ok(())
    }

    /// What a scan ends with: the counts or the stop, and where it is.
    fn outcome(s: &JsonScanner, r: Result<(), ScanStop>, c: Counts) -> String {
        format!(
            "{r:?} {c:?} at {} {}:{} key {:?} len {} depth {}",
            s.offset,
            s.line,
            s.column,
            s.key_buf,
            s.string_len,
            s.stack.len()
        )
    }

    #[test]
    fn skipped_runs_scan_as_every_byte_did_whatever_the_chunks() {
        const TOKENS: &[&str] = &[
            "{",
            "}",
            "[",
            "]",
            ":",
            ",",
            "\"",
            "\\",
            "\\\"",
            "\n",
            " ",
            "7",
            "1.5e3",
            "true",
            "\"series\"",
            "\"timeslices\"",
            "\"labels\"",
            "\"k\"",
            "é",
            "日本",
            "abcdefghij",
        ];
        let mut rng = crate::synth::rng::Rng::new(11, 0);
        for case in 0..3000 {
            let text: String = (0..rng.range(1, 80))
                .map(|_| TOKENS[rng.range(0, TOKENS.len() as u64 - 1) as usize])
                .collect();
            let limits = UploadLimits {
                nesting_depth: rng.range(1, 8),
                string_length: rng.range(1, 40),
                series: rng.range(0, 4),
                timeslices: rng.range(0, 4),
                label_keys: rng.range(1, 4),
                ..UploadLimits::default()
            };
            let dup = rng.range(0, 1) == 1;
            let mut s = JsonScanner::new(&limits, dup);
            let mut c = Counts::default();
            let r = push_bytewise(&mut s, text.as_bytes(), &mut c);
            let want = outcome(&s, r, c);
            for chunk in [usize::MAX, 1, 2, 5] {
                let mut s = JsonScanner::new(&limits, dup);
                let mut c = Counts::default();
                let mut r = Ok(());
                for piece in text.as_bytes().chunks(chunk.min(text.len()).max(1)) {
                    r = s.push(piece, &mut c);
                    if r.is_err() {
                        break;
                    }
                }
                assert_eq!(
                    outcome(&s, r, c),
                    want,
                    "case {case}, chunks of {chunk}: {text:?}"
                );
            }
        }
        // Keys longer than what a path keeps.
        let long = format!("{{\"{}\": 1, \"{}\": [", "a".repeat(300), "b".repeat(300));
        for dup in [false, true] {
            let mut a = JsonScanner::new(&UploadLimits::default(), dup);
            let mut b = JsonScanner::new(&UploadLimits::default(), dup);
            let (mut ca, mut cb) = (Counts::default(), Counts::default());
            let ra = push_bytewise(&mut a, long.as_bytes(), &mut ca);
            let rb = b.push(long.as_bytes(), &mut cb);
            assert_eq!(outcome(&b, rb, cb), outcome(&a, ra, ca));
            assert_eq!(b.path(), a.path());
        }
    }

    #[test]
    fn counts_series_and_timeslices_of_an_export() {
        let text = r#"{"metrics": {"a": {"series": [{"labels": {"x": "1"}, "timeslices": [{"total": 1}, {"total": 2}]}, {"labels": {}}]}}}"#;
        let c = scan(text, UploadLimits::default(), false).expect("within limits");
        assert_eq!(
            c,
            Counts {
                series: 2,
                timeslices: 2
            }
        );
    }

    #[test]
    fn depth_is_refused_at_the_first_byte_past_it() {
        let limits = UploadLimits {
            nesting_depth: 3,
            ..UploadLimits::default()
        };
        let e = scan(r#"{"a": [[{"b": 1}]]}"#, limits, false).expect_err("too deep");
        match e {
            ScanStop::Limit { name, observed, at } => {
                assert_eq!((name, observed, at.byte_offset), ("nesting_depth", 4, 8));
                assert_eq!(at.json_path, "a[0][0]");
            }
            other => panic!("unexpected {other:?}"),
        }
        // Brackets inside strings are not structure.
        assert!(scan(r#"{"a": "[[[[[[["}"#, limits, false).is_ok());
    }

    #[test]
    fn label_keys_strings_and_duplicates() {
        let limits = UploadLimits {
            label_keys: 2,
            string_length: 8,
            ..UploadLimits::default()
        };
        let e = scan(r#"{"labels": {"a": 1, "b": 2, "c": 3}}"#, limits, false).unwrap_err();
        assert!(matches!(
            e,
            ScanStop::Limit {
                name: "label_keys",
                observed: 3,
                ..
            }
        ));
        let e = scan(r#"{"k": "0123456789"}"#, limits, false).unwrap_err();
        assert!(matches!(
            e,
            ScanStop::Limit {
                name: "string_length",
                observed: 9,
                ..
            }
        ));
        let e = scan(r#"{"a": {"b": 1, "b\"": 2, "b": 3}}"#, limits, true).unwrap_err();
        match e {
            ScanStop::DuplicateKey { key, at } => {
                assert_eq!(key, "b");
                assert_eq!(at.json_path, "a.b");
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(scan(r#"{"a": {"b": 1}, "c": {"b": 1}}"#, limits, true).is_ok());
    }
}
