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
            key_at: (0, 1, 1),
            string_len: 0,
            offset: 0,
            line: 1,
            column: 1,
        }
    }

    /// Scan the next bytes; `counts` is the upload's running total.
    pub fn push(&mut self, bytes: &[u8], counts: &mut Counts) -> Result<(), ScanStop> {
        for &b in bytes {
            self.byte(b, counts)?;
            self.offset += 1;
            if b == b'\n' {
                self.line += 1;
                self.column = 1;
            } else if b & 0xC0 != 0x80 {
                self.column += 1;
            }
        }
        Ok(())
    }

    fn byte(&mut self, b: u8, counts: &mut Counts) -> Result<(), ScanStop> {
        if self.in_string {
            return self.string_byte(b);
        }
        match b {
            b'"' => self.open_string(),
            b'{' | b'[' => self.open(b == b'{', counts),
            b'}' | b']' => {
                self.stack.pop();
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
        let key = std::mem::take(&mut self.key_buf);
        let Some(f) = self.stack.last_mut() else {
            return Ok(());
        };
        if let Some(keys) = &mut f.keys {
            if !keys.insert(key.clone()) {
                f.key = key;
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
        f.key = key;
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
            key: Vec::new(),
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
