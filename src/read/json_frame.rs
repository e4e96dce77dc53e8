//! A resumable JSON framer: the outer structure of a large JSON document, pushed in chunks.
//!
//! The server-metrics export is one JSON object of up to several GB, read in chunks (a file,
//! a `ReadableStream`) with memory bounded by the largest value taken whole, and parsed from
//! slices (serde_json is several times faster on a slice than on a reader). The framer walks
//! the containers its [`Sink`] chooses to *open* (the top level, `metrics`, each family, each
//! `series` array; in accounting reads each series and its `timeslices` too), checking their
//! syntax itself, and hands every other value to the sink *whole*: the bytes of one complete
//! value, which the sink parses with serde_json. Only the value being gathered is kept
//! between pushes.
//!
//! Syntax errors of the opened containers carry serde_json's own messages (`expected `,` or
//! `}``, `trailing comma`, `EOF while parsing an object`, …) at the offending byte; errors
//! inside a whole value are serde_json's, which the sink places with [`Whole::origin`]. A
//! container the sink calls [`Sink::exact`] (one that a whole parse used to read) is read
//! exactly as serde_json reads it inside a value, so that opening it changes no error.

use crate::error::{ErrorCode, ReadError};
use crate::read::locate::{count_chars, count_newlines, LineCol};

/// Line and characters at one byte of the document (the framer's running count).
#[derive(Debug, Clone, Copy)]
struct Anchor {
    /// 1-based line.
    line: u64,
    /// Characters before the byte on its line.
    chars: u64,
}

impl Anchor {
    fn advance(&mut self, bytes: &[u8]) {
        match bytes.iter().rposition(|&b| b == b'\n') {
            Some(i) => {
                self.line += count_newlines(&bytes[..=i]) as u64;
                self.chars = count_chars(&bytes[i + 1..]) as u64;
            }
            None => self.chars += count_chars(bytes) as u64,
        }
    }

    fn line_col(self) -> LineCol {
        LineCol {
            line: u32::try_from(self.line).unwrap_or(u32::MAX),
            column: u32::try_from(self.chars + 1).unwrap_or(u32::MAX),
        }
    }
}

/// A value handed to the sink: the bytes from its first byte on. The sink parses the value at
/// their start and says how many bytes it took; when the bytes end before the value does (and
/// they are not `last`), it asks for more ([`Stop::More`]) and gets the value again, whole,
/// once the framer has gathered it. So a value is parsed in place, in one pass, unless it
/// straddles two chunks.
pub(crate) struct Whole<'a> {
    pub(crate) bytes: &'a [u8],
    /// No byte will follow `bytes`: a value cut short is an error, not a wait.
    pub(crate) last: bool,
    /// Set by the sink: the length of the value it parsed.
    pub(crate) took: usize,
    /// Line and column of its first byte (`false`) or of the byte before it (`true`).
    origin: &'a mut dyn FnMut(bool) -> LineCol,
}

/// Why the sink stopped short of taking a value.
pub(crate) enum Stop {
    /// The value runs past the bytes at hand: hand it over again once complete.
    More,
    Error(ReadError),
}

impl From<ReadError> for Stop {
    fn from(e: ReadError) -> Self {
        Stop::Error(e)
    }
}

impl Whole<'_> {
    /// Line and column of the value's first byte (computed on demand: errors, repeated keys).
    pub(crate) fn origin(&mut self) -> LineCol {
        (self.origin)(false)
    }

    /// Line and column of the byte before the value (whitespace, `:`, `,` or `[`): where
    /// serde_json places an error raised before it read any byte of the value.
    pub(crate) fn before(&mut self) -> LineCol {
        (self.origin)(true)
    }
}

/// What the framer reports to: the sink decides which containers to open and parses the rest.
pub(crate) trait Sink {
    /// A value starts with `first` (`{` or `[`): open it (`true`: its members are reported
    /// one by one) or take it whole (`false`).
    fn open(&mut self, first: u8) -> bool;
    /// Where the container just opened starts.
    fn opened_at(&mut self, _at: LineCol) {}
    /// A key of an opened object, decoded, at `at`; `after` is the last byte before the
    /// next token (where serde_json places an error raised on reading the key: `duplicate
    /// field`).
    fn key(&mut self, key: String, at: LineCol, after: LineCol) -> Result<(), ReadError>;
    /// A value taken whole (under the last key, or the next element of an opened array).
    fn whole(&mut self, value: &mut Whole<'_>) -> Result<(), Stop>;
    /// An opened container ended (at its closing bracket).
    fn close(&mut self, at: LineCol) -> Result<(), ReadError>;
    /// The JSON path of the innermost opened container, for a syntax error in it.
    fn path(&self) -> Option<String>;
    /// Whether the innermost opened container is read exactly as serde_json reads it inside
    /// a value it parses: the document ending after a `,` or `:` is `EOF while parsing a
    /// value` (not an unclosed object or list), and a number or literal is handed over with
    /// the bytes after it (`nul,` is `expected ident` at the `,`, not a value cut short).
    fn exact(&self) -> bool {
        false
    }
    /// The `:` after a key was read: the member's value comes next.
    fn colon(&mut self) {}
    /// The innermost opened container is an array serde_json would skip (`IgnoredAny`),
    /// which words a missing element differently: `[1,]` is `expected value`, not a trailing
    /// comma; `Some` with the path of its next element.
    fn skipped_array(&self) -> Option<String> {
        None
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// The top-level value (nothing but whitespace seen).
    Root,
    /// An array element or `]` (just after `[`).
    ElementOrEnd,
    /// An array element (after `,`).
    Element,
    /// A key or `}` (just after `{`).
    KeyOrEnd,
    /// A key (after `,`).
    Key,
    Colon,
    /// A member's value (after `:`).
    Value,
    CommaOrEnd,
    /// The top-level value has ended: whitespace only.
    Done,
}

/// A value being gathered whole: where it started and how far the scan got.
#[derive(Debug, Clone, Copy)]
struct Gathering {
    /// Index in the current data of its first byte.
    start: usize,
    /// A key of an opened object, not a value.
    is_key: bool,
    /// Open brackets (0 for a string or a scalar).
    depth: u32,
    in_string: bool,
    /// The previous byte was a backslash inside a string.
    escaped: bool,
    /// A number or literal: ends at the first delimiter.
    scalar: bool,
    /// Index in the current data where scanning resumes.
    next: usize,
    /// Delivered once the next token is seen: a key (its error `duplicate field` is placed
    /// before that token), a value of an exact container (serde_json names the path of an
    /// error at its end by what follows it).
    wait_next: bool,
    /// A key or value waiting for the next token has ended at this index: the whitespace
    /// after it is being skipped.
    key_end: Option<usize>,
    /// Line and column of the byte before it.
    before: LineCol,
}

/// Opened containers: `true` for an object.
type Stack = Vec<bool>;

/// See the module docs.
pub(crate) struct Framer {
    file: String,
    /// Bytes not yet consumed (a value or key still being gathered).
    pending: Vec<u8>,
    /// Line and characters at the first byte of the current data.
    anchor: Anchor,
    stack: Stack,
    expect: Expect,
    gathering: Option<Gathering>,
    /// Any non-whitespace byte seen (an empty file is its own error).
    seen_content: bool,
    /// The last byte of the document seen (for the position of an EOF error).
    last: LineCol,
    /// The byte before the current data's first one.
    prior: LineCol,
    /// The most bytes one value may take before the document is refused.
    max_value: usize,
    /// `expected value` at a `]` after `,` in a skipped array, its path decided by the next
    /// token (see [`Sink::skipped_array`]): the position, and the path of the element.
    missing: Option<(LineCol, String)>,
}

/// The fewest bytes of a chunk taken to complete a value the last one left unfinished.
const MIN_HEAD: usize = 16 << 10;

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

impl Framer {
    pub(crate) fn new(file: &str, max_value: usize) -> Self {
        Framer {
            file: file.to_string(),
            pending: Vec::new(),
            anchor: Anchor { line: 1, chars: 0 },
            stack: Vec::new(),
            expect: Expect::Root,
            gathering: None,
            seen_content: false,
            last: LineCol { line: 1, column: 1 },
            prior: LineCol { line: 1, column: 1 },
            max_value,
            missing: None,
        }
    }

    /// Take the next chunk of the document.
    pub(crate) fn push(&mut self, chunk: &[u8], sink: &mut impl Sink) -> Result<(), ReadError> {
        let mut rest = chunk;
        // A value left unfinished by the last chunk is completed from this one's first bytes,
        // as few as will do (doubling), and the rest is scanned in place: the whole chunk
        // copied after it was a sixteenth of reading an export (callgrind). Pushing a chunk in
        // two parts is pushing it whole.
        while !self.pending.is_empty() && !rest.is_empty() {
            let head = rest.len().min(self.pending.len().max(MIN_HEAD));
            let (first, after) = rest.split_at(head);
            let mut data = std::mem::take(&mut self.pending);
            data.extend_from_slice(first);
            let used = self.scan(&data, false, sink)?;
            data.drain(..used);
            self.pending = data;
            rest = after;
        }
        if self.pending.is_empty() && (!rest.is_empty() || chunk.is_empty()) {
            // Scan a chunk in place (a whole buffer is never copied); keep its unfinished tail.
            let used = self.scan(rest, false, sink)?;
            self.pending.extend_from_slice(&rest[used..]);
        }
        if self.pending.len() > self.max_value {
            return Err(ReadError::new(
                ErrorCode::InputTooLarge,
                &self.file,
                self.anchor.line_col().position(),
                format!(
                    "one JSON value here is larger than {} bytes, the most one value may take",
                    self.max_value
                ),
            ));
        }
        Ok(())
    }

    /// The document has ended.
    pub(crate) fn finish(mut self, sink: &mut impl Sink) -> Result<(), ReadError> {
        let data = std::mem::take(&mut self.pending);
        self.scan(&data, true, sink)?;
        if let Some((at, _)) = self.missing.take() {
            return Err(self.syntax_at(at, "expected value", sink));
        }
        match self.expect {
            Expect::Done => Ok(()),
            Expect::Root if !self.seen_content => Err(ReadError::whole(
                ErrorCode::EmptyInput,
                &self.file,
                "the file is empty",
            )),
            _ => {
                let after_separator =
                    matches!(self.expect, Expect::Key | Expect::Element | Expect::Value);
                let what = match self.stack.last() {
                    _ if after_separator && sink.exact() => "EOF while parsing a value",
                    Some(true) => "EOF while parsing an object",
                    Some(false) => "EOF while parsing a list",
                    None => "EOF while parsing a value",
                };
                Err(self.syntax_at(self.last, what, sink))
            }
        }
    }

    fn syntax_at(&self, at: LineCol, message: &str, sink: &impl Sink) -> ReadError {
        let mut pos = at.position();
        pos.json_path = sink.path();
        ReadError::new(ErrorCode::JsonSyntax, &self.file, pos, message)
    }

    /// Scan `data` from where the last scan stopped (a gathered value's start is kept);
    /// returns how many leading bytes are consumed. At `end`, a gathered value runs to the end
    /// of the data.
    fn scan(&mut self, data: &[u8], end: bool, sink: &mut impl Sink) -> Result<usize, ReadError> {
        // `at`: line/col of `data[at_i]`, advanced lazily (only positions asked for cost).
        let mut cursor = Cursor::new(self.anchor);
        let mut i = match self.gathering {
            Some(g) => self.gather(g, data, end, &mut cursor, sink)?,
            None => 0,
        };
        while i < data.len() {
            let b = data[i];
            if is_ws(b) {
                i += 1;
                continue;
            }
            self.seen_content = true;
            i = self.step(data, i, end, &mut cursor, sink)?;
            if self.gathering.is_some() {
                break;
            }
        }
        let used = self.gathering.map_or(data.len(), |g| g.start);
        if let Some(g) = &mut self.gathering {
            g.start -= used;
            g.next -= used;
            g.key_end = g.key_end.map(|k| k - used);
        }
        if used == data.len() && !data.is_empty() {
            // The last byte seen (an EOF error is placed there); with a value still being
            // gathered, the next scan sees it again.
            self.last = cursor.line_col(data, data.len() - 1);
        }
        if used > 0 {
            self.prior = cursor.line_col(data, used - 1);
        }
        self.anchor = cursor.advanced(data, used);
        Ok(used)
    }

    /// One token of the opened structure at `data[i]` (not whitespace); the next index.
    fn step(
        &mut self,
        data: &[u8],
        i: usize,
        end: bool,
        cursor: &mut Cursor,
        sink: &mut impl Sink,
    ) -> Result<usize, ReadError> {
        let b = data[i];
        let err = |this: &Self, cursor: &mut Cursor, msg: &str| {
            Err(this.syntax_at(cursor.line_col(data, i), msg, sink))
        };
        if let Some((at, element)) = self.missing.take() {
            // serde_json names the element when a container follows, else the array.
            let mut e = self.syntax_at(at, "expected value", sink);
            if matches!(b, b'{' | b'[') {
                e.position.json_path = Some(element);
            }
            return Err(e);
        }
        match self.expect {
            Expect::Done => err(self, cursor, "trailing characters"),
            Expect::Colon if b == b':' => {
                self.expect = Expect::Value;
                sink.colon();
                Ok(i + 1)
            }
            Expect::Colon => err(self, cursor, "expected `:`"),
            Expect::CommaOrEnd => match (b, self.stack.last()) {
                (b',', Some(true)) => {
                    self.expect = Expect::Key;
                    Ok(i + 1)
                }
                (b',', Some(false)) => {
                    self.expect = Expect::Element;
                    Ok(i + 1)
                }
                (b'}', Some(true)) | (b']', Some(false)) => self.close(data, i, cursor, sink),
                (_, Some(true)) => err(self, cursor, "expected `,` or `}`"),
                _ => err(self, cursor, "expected `,` or `]`"),
            },
            Expect::KeyOrEnd if b == b'}' => self.close(data, i, cursor, sink),
            Expect::ElementOrEnd if b == b']' => self.close(data, i, cursor, sink),
            Expect::Key if b == b'}' => err(self, cursor, "trailing comma"),
            Expect::Element if b == b']' => match sink.skipped_array() {
                Some(element) => {
                    self.missing = Some((cursor.line_col(data, i), element));
                    Ok(i + 1)
                }
                None => err(self, cursor, "trailing comma"),
            },
            Expect::KeyOrEnd | Expect::Key if b != b'"' => {
                err(self, cursor, "key must be a string")
            }
            Expect::KeyOrEnd | Expect::Key => self.begin(data, i, true, end, cursor, sink),
            Expect::Root | Expect::Element | Expect::ElementOrEnd | Expect::Value => {
                if matches!(b, b'{' | b'[') && sink.open(b) {
                    sink.opened_at(cursor.line_col(data, i));
                    self.stack.push(b == b'{');
                    self.expect = if b == b'{' {
                        Expect::KeyOrEnd
                    } else {
                        Expect::ElementOrEnd
                    };
                    return Ok(i + 1);
                }
                self.begin(data, i, false, end, cursor, sink)
            }
        }
    }

    /// The opened container ends at `data[i]`.
    fn close(
        &mut self,
        data: &[u8],
        i: usize,
        cursor: &mut Cursor,
        sink: &mut impl Sink,
    ) -> Result<usize, ReadError> {
        self.stack.pop();
        self.expect = self.after_value();
        sink.close(cursor.line_col(data, i))?;
        Ok(i + 1)
    }

    fn after_value(&self) -> Expect {
        if self.stack.is_empty() {
            Expect::Done
        } else {
            Expect::CommaOrEnd
        }
    }

    /// Start gathering a key or whole value at `data[i]`.
    fn begin(
        &mut self,
        data: &[u8],
        i: usize,
        is_key: bool,
        end: bool,
        cursor: &mut Cursor,
        sink: &mut impl Sink,
    ) -> Result<usize, ReadError> {
        let b = data[i];
        if !is_key && matches!(b, b'{' | b'[' | b'"') {
            // Parse in place; gather only a value that runs past the data.
            let prior = self.prior;
            let mut origin = |before: bool| match (before, i.checked_sub(1)) {
                (false, _) => cursor.line_col(data, i),
                (true, Some(p)) => cursor.line_col(data, p),
                (true, None) => prior,
            };
            let mut value = Whole {
                bytes: &data[i..],
                last: end,
                took: 0,
                origin: &mut origin,
            };
            match sink.whole(&mut value) {
                Ok(()) => {
                    let took = value.took.max(1);
                    self.expect = self.after_value();
                    return Ok(i + took);
                }
                Err(Stop::Error(e)) => return Err(e),
                Err(Stop::More) => {}
            }
        }
        let g = Gathering {
            start: i,
            is_key,
            depth: u32::from(matches!(b, b'{' | b'[')),
            in_string: b == b'"',
            escaped: false,
            scalar: !matches!(b, b'{' | b'[' | b'"'),
            next: i + 1,
            wait_next: is_key || (matches!(b, b'{' | b'[' | b'"') && sink.exact()),
            key_end: None,
            before: match i.checked_sub(1) {
                _ if is_key => self.prior,
                Some(p) => cursor.line_col(data, p),
                None => self.prior,
            },
        };
        if !is_key
            && !matches!(
                b,
                b'{' | b'[' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n'
            )
        {
            // No JSON value starts so: its error now (serde_json stops at this byte), not once
            // a "value" of such bytes has been gathered up to the value limit (a file of zeros).
            self.deliver(g, &data[i..=i], data, cursor, sink)?;
            return Ok(i + 1);
        }
        self.gather(g, data, end, cursor, sink)
    }

    /// Scan `g` from `data[from]`; when it completes, hand it over and return the next index,
    /// else remember it and return `data.len()`.
    fn gather(
        &mut self,
        mut g: Gathering,
        data: &[u8],
        end: bool,
        cursor: &mut Cursor,
        sink: &mut impl Sink,
    ) -> Result<usize, ReadError> {
        match scan_value(&mut g, data) {
            Some(_) if !g.is_key && (g.wait_next || g.scalar && sink.exact()) => {
                self.gathering = None;
                self.deliver_exact(g, data, cursor, sink)
            }
            None if end && !g.is_key && (g.wait_next || g.scalar && sink.exact()) => {
                self.gathering = None;
                self.deliver_exact(g, data, cursor, sink)
            }
            Some(stop) => {
                self.gathering = None;
                self.deliver(g, &data[g.start..stop], data, cursor, sink)?;
                Ok(stop)
            }
            None if end => {
                // The document ended inside it: serde_json will say what is missing.
                self.gathering = None;
                self.deliver(g, &data[g.start..], data, cursor, sink)?;
                Ok(data.len())
            }
            None => {
                g.next = data.len();
                self.gathering = Some(g);
                Ok(data.len())
            }
        }
    }

    /// A value of an exact container whose end is in `data` (or the document's): parsed from
    /// the bytes from its start on (the token after it included), as serde_json parses it
    /// inside a value; the index after it.
    fn deliver_exact(
        &mut self,
        g: Gathering,
        data: &[u8],
        cursor: &mut Cursor,
        sink: &mut impl Sink,
    ) -> Result<usize, ReadError> {
        self.expect = self.after_value();
        let start = g.start;
        let mut origin = |before: bool| match before {
            false => cursor.line_col(data, start),
            true => g.before,
        };
        let mut value = Whole {
            bytes: &data[start..],
            last: true,
            took: 0,
            origin: &mut origin,
        };
        match sink.whole(&mut value) {
            Ok(()) => Ok(start + value.took.max(1)),
            Err(Stop::Error(e)) => Err(e),
            Err(Stop::More) => Err(ReadError::new(
                ErrorCode::JsonSyntax,
                &self.file,
                cursor.line_col(data, start).position(),
                "EOF while parsing a value",
            )),
        }
    }

    fn deliver(
        &mut self,
        g: Gathering,
        bytes: &[u8],
        data: &[u8],
        cursor: &mut Cursor,
        sink: &mut impl Sink,
    ) -> Result<(), ReadError> {
        if g.is_key {
            let at = cursor.line_col(data, g.start);
            let stop = g.start + bytes.len();
            let bytes = g.key_end.map_or(bytes, |k| &data[g.start..k]);
            let key: String = serde_json::from_slice(bytes).map_err(|e| {
                let mut pos = crate::read::locate::serde_error_position(bytes, &e)
                    .map(|p| p.offset_by(at))
                    .unwrap_or(at)
                    .position();
                pos.json_path = sink.path();
                ReadError::new(
                    crate::error::json_code(&e),
                    &self.file,
                    pos,
                    crate::error::json_message(&e),
                )
            })?;
            self.expect = Expect::Colon;
            let after = cursor.line_col(data, stop.saturating_sub(1).max(g.start));
            return sink.key(key, at, after);
        }
        self.expect = self.after_value();
        let start = g.start;
        let mut origin = |before: bool| match before {
            false => cursor.line_col(data, start),
            true => g.before,
        };
        let mut value = Whole {
            bytes,
            last: true,
            took: 0,
            origin: &mut origin,
        };
        match sink.whole(&mut value) {
            Ok(()) => Ok(()),
            Err(Stop::Error(e)) => Err(e),
            // Not asked of the last bytes; were it asked, the value is cut short.
            Err(Stop::More) => Err(ReadError::new(
                ErrorCode::JsonSyntax,
                &self.file,
                cursor.line_col(data, start).position(),
                "EOF while parsing a value",
            )),
        }
    }
}

/// Lazy line/column over the current data: `anchor` is at `data[at]`; asking for a later byte
/// advances it (positions are asked in increasing order, so the data is counted once).
struct Cursor {
    /// At `data[0]`.
    base: Anchor,
    anchor: Anchor,
    at: usize,
}

impl Cursor {
    fn new(base: Anchor) -> Self {
        Cursor {
            base,
            anchor: base,
            at: 0,
        }
    }

    fn line_col(&mut self, data: &[u8], i: usize) -> LineCol {
        self.advanced(data, i).line_col()
    }

    /// The anchor at `data[i]`.
    fn advanced(&mut self, data: &[u8], i: usize) -> Anchor {
        if i < self.at {
            // An earlier byte: count again from the start of the data.
            self.anchor = self.base;
            self.at = 0;
        }
        self.anchor.advance(&data[self.at..i]);
        self.at = i;
        self.anchor
    }
}

/// Scan a gathered value from `data[g.next]`: the index after its last byte, or `None` if the
/// data ends first.
fn scan_value(g: &mut Gathering, data: &[u8]) -> Option<usize> {
    if g.key_end.is_some() {
        return skip_ws(g, data);
    }
    let mut i = g.next;
    if g.scalar {
        // A number or literal ends at the first byte that cannot continue it.
        while i < data.len() {
            if is_ws(data[i]) || matches!(data[i], b',' | b'}' | b']' | b':' | b'"' | b'{' | b'[') {
                return Some(i);
            }
            i += 1;
        }
        return None;
    }
    while i < data.len() {
        if g.in_string {
            if g.escaped {
                g.escaped = false;
                i += 1;
                continue;
            }
            match data[i..].iter().position(|&b| b == b'"' || b == b'\\') {
                None => return None,
                Some(k) => i += k,
            }
            if data[i] == b'\\' {
                // The escaped byte may be in the next chunk.
                g.escaped = true;
                i += 1;
                continue;
            }
            g.in_string = false;
            i += 1;
            if g.depth == 0 && g.wait_next {
                g.key_end = Some(i);
                g.next = i;
                return skip_ws(g, data);
            }
            if g.depth == 0 {
                return Some(i);
            }
            continue;
        }
        match data[i] {
            b'"' => g.in_string = true,
            b'{' | b'[' => g.depth += 1,
            b'}' | b']' => {
                g.depth -= 1;
                if g.depth == 0 && g.wait_next {
                    g.key_end = Some(i + 1);
                    g.next = i + 1;
                    return skip_ws(g, data);
                }
                if g.depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Past the whitespace after a key's string: the index of the next token, or `None` (the
/// scan resumes there) if the data ends first.
fn skip_ws(g: &mut Gathering, data: &[u8]) -> Option<usize> {
    let i = g.next + data[g.next..].iter().take_while(|&&b| is_ws(b)).count();
    if i < data.len() {
        return Some(i);
    }
    g.next = i;
    None
}
