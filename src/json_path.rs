//! The JSON path of a serde_json error, found from the error's position in the text after a
//! plain parse failed, instead of tracking the path during every parse.
//!
//! `serde_path_to_error` wraps every `Deserialize` impl it meets in its own tracking seed: in
//! the wasm build those copies of every options type were a large share of the `.wasm`
//! (issue 11). Here a value is parsed with plain `serde_json` and, only on error, one small
//! non-generic scan of the text up to the error's position names the path serde reached: the
//! same segments `serde_path_to_error` reports (the tests compare both on many broken inputs).

use serde::de::DeserializeOwned;

/// One step of a JSON path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    /// An object member by key.
    Key(String),
    /// An array element by index.
    Index(usize),
    /// A step that cannot be named (an unfinished key, the key expected after `{` or `,`).
    Unknown,
}

/// A serde_json error and the path of the value it is about.
#[derive(Debug)]
pub struct PathError {
    pub error: serde_json::Error,
    pub path: Vec<Seg>,
}

/// Deserialize one `T` from the start of `de` (trailing text is the caller's business, as
/// with `serde_path_to_error::deserialize`); on error, locate the path in `text`.
pub fn deserialize<T: DeserializeOwned>(
    text: &str,
    de: &mut serde_json::Deserializer<serde_json::de::SliceRead<'_>>,
) -> Result<T, PathError> {
    T::deserialize(de).map_err(|error| PathError {
        path: path_of_error(text.as_bytes(), &error),
        error,
    })
}

/// The path as `serde_path_to_error::Path` displays it: `a.b[2].c`, `?` for an unknown step,
/// `.` for the root.
pub fn display(path: &[Seg]) -> String {
    if path.is_empty() {
        return ".".to_string();
    }
    let mut out = String::new();
    for (i, seg) in path.iter().enumerate() {
        if i > 0 && !matches!(seg, Seg::Index(_)) {
            out.push('.');
        }
        match seg {
            Seg::Key(k) => out.push_str(k),
            Seg::Index(n) => {
                out.push('[');
                out.push_str(&n.to_string());
                out.push(']');
            }
            Seg::Unknown => out.push('?'),
        }
    }
    out
}

/// The path as the readers show it (`error::json_path` of a `serde_path_to_error` path): cut
/// before the first step that cannot be named; `None` when nothing can be named.
pub fn shown(path: &[Seg]) -> Option<String> {
    let known = path
        .iter()
        .position(|s| *s == Seg::Unknown)
        .unwrap_or(path.len());
    (known > 0).then(|| display(&path[..known]))
}

/// What kind of error is being placed: where serde raises it decides which step it names.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Malformed JSON: raised while looking for the next key or element.
    Syntax,
    /// About a value (its type, its content, a missing field once its `}` is read): the
    /// value's own step.
    Value,
    /// About an object's key as such (`duplicate field`, an enum's `unknown variant` given as
    /// an object key): the object's step.
    Key,
}

fn kind_of(err: &serde_json::Error) -> Kind {
    use serde_json::error::Category;
    let msg = err.to_string();
    match err.classify() {
        // serde_json calls a value it cannot take where an enum is expected "expected value".
        Category::Syntax if msg.starts_with("expected value") => Kind::Value,
        Category::Syntax | Category::Eof | Category::Io => Kind::Syntax,
        Category::Data if msg.starts_with("duplicate field ") => Kind::Key,
        Category::Data if msg.starts_with("unknown variant ") => Kind::Key,
        Category::Data => Kind::Value,
    }
}

/// The path of the value `err` is about, from the bytes serde_json had read when it failed.
pub fn path_of_error(text: &[u8], err: &serde_json::Error) -> Vec<Seg> {
    locate(text, err, false)
}

/// [`path_of_error`] for an error a `Deserialize` impl raised after its value was read (a
/// count refused once parsed): serde_json places such an error after the object or array
/// holding the value when the value was its last member, so the path goes on to that member.
pub fn path_of_member_error(text: &[u8], err: &serde_json::Error) -> Vec<Seg> {
    locate(text, err, true)
}

fn locate(text: &[u8], err: &serde_json::Error, member: bool) -> Vec<Seg> {
    let Some(fault) = crate::read::locate::serde_offset(text, err.line(), err.column()) else {
        return Vec::new();
    };
    let mut read = text.get(..fault + 1).unwrap_or(text);
    // Elements left over by a struct read from an array: serde_json points at the first one,
    // and the error is the array's (as serde_path_to_error has it), not that element's.
    let msg = err.to_string();
    if msg.starts_with("trailing characters") {
        read = read.get(..fault).unwrap_or(read);
    }
    // A struct read member by member (`crate::fields`) refuses an array once its `[` (and the
    // blanks serde_json skips looking for its `]`) is read: the error is that value's. (An
    // element refused before it is read is an array only when a `[` comes next; a struct's
    // refusal is the array's whatever comes next.)
    if let Some(expected) = msg.strip_prefix("invalid type: sequence, expected ") {
        let end = read.iter().rposition(|b| !b.is_ascii_whitespace());
        let after = text.get(read.len()..).unwrap_or_default();
        let next = after.iter().find(|b| !b.is_ascii_whitespace());
        if let Some(open) = end.filter(|&i| read[i] == b'[') {
            if expected.starts_with("struct ") || next != Some(&b'[') {
                read = &read[..open];
            }
        }
    }
    // serde_json reports a container it refuses before reading it, but one a visitor refuses
    // after reading its `[` or `{`: what comes next tells which.
    let next = text.get(read.len()..).unwrap_or_default();
    let container_next = next
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|b| matches!(b, b'[' | b'{'));
    let (mut path, closed) = path_at(read, kind_of(err), container_next);
    if member {
        path.extend(closed);
    }
    // A unit variant's name given where the variant carries data: serde_path_to_error has
    // entered the variant (the string just read).
    if err.to_string().starts_with("invalid type: unit variant") {
        if let Some(name) = last_string(read) {
            path.push(Seg::Key(name));
        }
    }
    path
}

/// The string that ends `read` (its closing quote is the last byte).
fn last_string(read: &[u8]) -> Option<String> {
    let body = read.strip_suffix(b"\"")?;
    let open = body.iter().rposition(|&b| b == b'"')?;
    match string(read, open + 1) {
        (s, Some(end)) if end == read.len() => Some(s),
        _ => None,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum At {
    /// After `{` or `[`: a key, an element or the close is expected.
    Expect,
    /// After `,`: a key or an element is expected.
    Next,
    /// Inside an object key.
    InKey,
    /// After a key, before its colon.
    AfterKey,
    /// After a key's colon, before its value.
    Colon,
    /// Inside a member's value or an element.
    InValue,
    /// After a member's value or an element.
    AfterValue,
}

struct Frame {
    obj: bool,
    /// An object's current key (`None` before it is read).
    key: Option<String>,
    /// Elements started so far in an array (the current one is `count - 1`).
    count: usize,
    at: At,
}

/// Scan `read` (the bytes serde_json had read) and name the step of each open container.
fn path_at(read: &[u8], kind: Kind, container_next: bool) -> (Vec<Seg>, Option<Seg>) {
    let Scan {
        stack,
        fault,
        closed,
    } = scan(read);
    let mut path = Vec::with_capacity(stack.len());
    let last = stack.len().saturating_sub(1);
    for (i, f) in stack.into_iter().enumerate() {
        let inner = i == last;
        let seg = match (f.obj, f.at) {
            // An enclosing container is always inside the value of its current step.
            (true, _) if !inner => f.key.map(Seg::Key),
            (false, _) if !inner => Some(Seg::Index(f.count.saturating_sub(1))),
            // Objects: serde_path_to_error names the key once read, but a malformed separator
            // (`:`) fails before the value's step begins, and the next key's failure is `?`.
            (true, At::Expect | At::Next | At::InKey) => {
                (kind == Kind::Syntax).then_some(Seg::Unknown)
            }
            (true, At::AfterKey) if kind != Kind::Value => None,
            (true, At::Colon) => f.key.map(Seg::Key),
            (true, At::AfterValue) if kind == Kind::Syntax => Some(Seg::Unknown),
            (true, _) => f.key.map(Seg::Key),
            // Arrays: an element's step exists only while the element is read.
            // A malformed element fails inside its step; a missing one (`]` after `,`, the end
            // of the text) before it.
            (false, At::Expect | At::Next) if fault.is_some_and(|b| b != b']') => {
                Some(Seg::Index(f.count))
            }
            (false, At::Expect | At::Next) if kind == Kind::Value && container_next => {
                Some(Seg::Index(f.count))
            }
            (false, At::Expect | At::Next) => None,
            (false, At::AfterValue) if kind == Kind::Syntax => None,
            (false, _) => Some(Seg::Index(f.count.saturating_sub(1))),
        };
        path.extend(seg);
    }
    (path, closed)
}

/// The open containers after reading `read`, innermost last. Stops at the first byte that is
/// not JSON where it stands (the fault of a syntax error).
fn scan(read: &[u8]) -> Scan {
    let mut stack: Vec<Frame> = Vec::new();
    let mut closed = None;
    let mut i = 0;
    while i < read.len() {
        let b = read[i];
        if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            i += 1;
            continue;
        }
        let top = stack.last().map(|f| (f.obj, f.at));
        closed = None;
        let wants_value = matches!(
            top,
            None | Some((true, At::Colon)) | Some((false, At::Expect | At::Next))
        );
        match (top, b) {
            (Some((true, At::Expect | At::Next)), b'"') => {
                let (key, end) = string(read, i + 1);
                // `top` is an open object: the stack is not empty.
                let Some(f) = stack.last_mut() else { break };
                let Some(end) = end else {
                    f.at = At::InKey;
                    return Scan::stopped(stack, None);
                };
                f.key = Some(key);
                f.at = At::AfterKey;
                i = end;
            }
            (Some((true, At::AfterKey)), b':') => {
                if let Some(f) = stack.last_mut() {
                    f.at = At::Colon;
                }
                i += 1;
            }
            (Some((_, At::AfterValue)), b',') => {
                if let Some(f) = stack.last_mut() {
                    f.at = At::Next;
                    f.key = None;
                }
                i += 1;
            }
            (Some((true, At::Expect | At::AfterValue)), b'}')
            | (Some((false, At::Expect | At::AfterValue)), b']') => {
                closed = stack.pop().and_then(|f| match f.obj {
                    true => f.key.map(Seg::Key),
                    false => f.count.checked_sub(1).map(Seg::Index),
                });
                done(&mut stack);
                i += 1;
            }
            (_, b'{' | b'[') if wants_value => {
                start_value(&mut stack);
                stack.push(Frame {
                    obj: b == b'{',
                    key: None,
                    count: 0,
                    at: At::Expect,
                });
                i += 1;
            }
            (_, b'"') if wants_value => {
                start_value(&mut stack);
                let Some(end) = string(read, i + 1).1 else {
                    return Scan::stopped(stack, None);
                };
                done(&mut stack);
                i = end;
            }
            (_, b',' | b':' | b'}' | b']') => return Scan::stopped(stack, Some(b)),
            _ if wants_value => {
                start_value(&mut stack);
                let (end, complete) = scalar_end(read, i);
                if !complete {
                    return Scan::stopped(stack, read.get(end).copied());
                }
                done(&mut stack);
                i = end;
            }
            _ => return Scan::stopped(stack, Some(b)),
        }
    }
    Scan {
        stack,
        fault: None,
        closed,
    }
}

/// What [`scan`] found.
struct Scan {
    /// The open containers, innermost last.
    stack: Vec<Frame>,
    /// The byte that is not JSON where it stands, if the scan stopped at one.
    fault: Option<u8>,
    /// When the last byte read closed a container: the step of its last member.
    closed: Option<Seg>,
}

impl Scan {
    fn stopped(stack: Vec<Frame>, fault: Option<u8>) -> Scan {
        Scan {
            stack,
            fault,
            closed: None,
        }
    }
}

/// A value begins inside the top container.
fn start_value(stack: &mut [Frame]) {
    if let Some(f) = stack.last_mut() {
        f.count += 1;
        f.at = At::InValue;
    }
}

/// A value just ended inside the top container.
fn done(stack: &mut [Frame]) {
    if let Some(f) = stack.last_mut() {
        f.at = At::AfterValue;
    }
}

/// The string starting after its opening quote at `from`, unescaped well enough to name a key
/// (`\uXXXX` included), and the index after its closing quote (`None` if unfinished).
fn string(read: &[u8], from: usize) -> (String, Option<usize>) {
    let mut out = Vec::new();
    let mut i = from;
    while i < read.len() {
        match read[i] {
            b'"' => return (String::from_utf8_lossy(&out).into_owned(), Some(i + 1)),
            b'\\' => {
                let Some(&e) = read.get(i + 1) else { break };
                match e {
                    b'u' => {
                        let Some(c) = read
                            .get(i + 2..i + 6)
                            .and_then(|h| std::str::from_utf8(h).ok())
                            .and_then(|h| u32::from_str_radix(h, 16).ok())
                        else {
                            break;
                        };
                        let (c, used) = surrogate_pair(read, i + 6, c);
                        let ch = char::from_u32(c).unwrap_or('\u{fffd}');
                        out.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes());
                        i += 6 + used;
                        continue;
                    }
                    b'n' => out.push(b'\n'),
                    b't' => out.push(b'\t'),
                    b'r' => out.push(b'\r'),
                    b'b' => out.push(8),
                    b'f' => out.push(12),
                    other => out.push(other),
                }
                i += 2;
            }
            other => {
                out.push(other);
                i += 1;
            }
        }
    }
    (String::from_utf8_lossy(&out).into_owned(), None)
}

/// A high surrogate `hi` followed at `at` by `\uDC00`..`\uDFFF`: the code point and the bytes
/// of the low half consumed.
fn surrogate_pair(read: &[u8], at: usize, hi: u32) -> (u32, usize) {
    if !(0xD800..0xDC00).contains(&hi) || read.get(at..at + 2) != Some(b"\\u") {
        return (hi, 0);
    }
    let lo = read
        .get(at + 2..at + 6)
        .and_then(|h| std::str::from_utf8(h).ok())
        .and_then(|h| u32::from_str_radix(h, 16).ok());
    match lo {
        Some(lo) if (0xDC00..0xE000).contains(&lo) => {
            (0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00), 6)
        }
        _ => (hi, 0),
    }
}

/// The end of the number or literal (`true`, `null`, …) starting at `from`, as serde_json
/// reads it, and whether it is complete there (`-`, `1.`, `nu` are not).
fn scalar_end(read: &[u8], from: usize) -> (usize, bool) {
    let at = |i: usize| read.get(i).copied();
    let digits = |mut i: usize| {
        while at(i).is_some_and(|b| b.is_ascii_digit()) {
            i += 1;
        }
        i
    };
    if let Some(word) = [&b"true"[..], b"false", b"null"]
        .into_iter()
        .find(|w| at(from) == Some(w[0]))
    {
        let n = word
            .iter()
            .zip(&read[from..])
            .take_while(|(w, r)| w == r)
            .count();
        return (from + n, n == word.len());
    }
    let mut i = from + usize::from(at(from) == Some(b'-'));
    match at(i) {
        // serde_json refuses a leading zero inside the number.
        Some(b'0') if at(i + 1).is_some_and(|b| b.is_ascii_digit()) => return (i + 1, false),
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i = digits(i),
        _ => return (i, false),
    }
    if at(i) == Some(b'.') {
        let d = digits(i + 1);
        if d == i + 1 {
            return (d, false);
        }
        i = d;
    }
    if matches!(at(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(at(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let d = digits(i);
        if d == i {
            return (d, false);
        }
        i = d;
    }
    (i, true)
}

/// The differential check of [`path_of_error`] against `serde_path_to_error`, for the tests
/// of every type read through it.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// The path `serde_path_to_error` reports and the one found here, for a text `T` refuses.
    fn both<T: DeserializeOwned>(text: &str, locate: Locate) -> Option<(String, String, String)> {
        let tracked = {
            let de = &mut serde_json::Deserializer::from_str(text);
            match serde_path_to_error::deserialize::<_, T>(de) {
                Ok(_) => return None,
                Err(e) => (e.path().to_string(), e.into_inner().to_string()),
            }
        };
        let de = &mut serde_json::Deserializer::from_slice(text.as_bytes());
        let Err(e) = deserialize::<T>(text, de) else {
            panic!("{text:?}: plain parse succeeded where the tracked one failed");
        };
        assert_eq!(
            e.error.to_string(),
            tracked.1,
            "{text:?}: a different error"
        );
        Some((
            tracked.0,
            display(&locate(text.as_bytes(), &e.error)),
            tracked.1,
        ))
    }

    /// Every text made from `valid` by cutting it, dropping a byte, or inserting a token.
    pub(crate) fn mutations(valid: &str) -> Vec<String> {
        let inserts = [
            "}",
            "]",
            ",",
            ":",
            "\"x\"",
            "1",
            "-1",
            "[",
            "{",
            "null",
            "true",
            "\"zz\": 1,",
            "{}",
            "[]",
            "\"k\"",
            "\"\\u00e9\"",
            "1.5",
            "\"a\\",
        ];
        let mut out = Vec::new();
        let bounds: Vec<usize> = (0..=valid.len())
            .filter(|&i| valid.is_char_boundary(i))
            .collect();
        for &i in &bounds {
            out.push(valid[..i].to_string());
            if let Some(&j) = bounds.iter().find(|&&j| j > i) {
                out.push(format!("{}{}", &valid[..i], &valid[j..]));
            }
            for ins in inserts {
                out.push(format!("{}{ins}{}", &valid[..i], &valid[i..]));
            }
        }
        out
    }

    /// Compare on every mutation of `valid`; with `syntax` false, only on well-formed JSON.
    /// How a caller finds the path of an error.
    pub(crate) type Locate = fn(&[u8], &serde_json::Error) -> Vec<Seg>;

    /// [`compare_located`] with [`path_of_error`].
    pub(crate) fn compare<T: DeserializeOwned>(valid: &str, syntax: bool) -> usize {
        compare_located::<T>(valid, syntax, path_of_error)
    }

    /// Compare the paths on every mutation of `valid` (with `syntax` false, only on well-formed
    /// JSON); the number of broken texts compared.
    pub(crate) fn compare_located<T: DeserializeOwned>(
        valid: &str,
        syntax: bool,
        locate: Locate,
    ) -> usize {
        let mut failures = Vec::new();
        let mut n = 0;
        for text in mutations(valid) {
            if !syntax && serde_json::from_str::<serde_json::Value>(&text).is_err() {
                continue;
            }
            if let Some((tracked, found, msg)) = both::<T>(&text, locate) {
                n += 1;
                if tracked != found {
                    failures.push(format!(
                        "tracked {tracked} / found {found} / {msg} / {text:?}"
                    ));
                }
            }
        }
        assert!(
            failures.is_empty(),
            "{} of {n} differ:\n{}",
            failures.len(),
            failures.join("\n")
        );
        n
    }
}

#[cfg(test)]
mod tests {
    use super::testing::compare;
    use super::*;
    use crate::account::Policy;
    use crate::options::{AccountOptions, InspectOptions, PriceOptions, TrendGroupInput};
    use crate::pricing::point::PointInput;

    #[test]
    fn paths_match_serde_path_to_error_on_broken_options() {
        let n = compare::<InspectOptions>(
            r#"{"captures": {"a.prom": {"endpoint_url": "http://h/metrics", "timestamp_ns": "1781000000000000001"}, "b \"q\".prom": {"timestamp_ns": 17}}, "family_prefixes": ["vllm:", "sglang:"], "families": [], "launch_env": {"FRAMEWORK": "vllm"}}"#,
            true,
        ) + compare::<AccountOptions>(
            r#"{"policy": {"max_rate_width": 0.01, "trust_phase_totals": true}, "family_prefixes": ["vllm:"], "launch_json": "{}"}"#,
            true,
        ) + compare::<Policy>(
            r#"{ "max_rate_width": 0.01,
                 "conservation_tolerance": 2, "cached_price_ratio": 0.25 }"#,
            true,
        ) + compare::<Vec<TrendGroupInput>>(
            r#"[{"date": "2026-01-02", "points": [{"observed": {"throughput_per_gpu": 2000, "input_share": 0.9}}]}, {"date": "d", "points": []}]"#,
            false,
        ) + compare::<PointInput>(
            r#"{"observed": {"throughput_per_gpu": 2000, "input_share": 0.9, "cache": {"status": "VALID_COMPLETE", "pricing_eligible": true, "reasons": ["A", "B"], "rates": {"overall": 0.5}}}}"#,
            false,
        ) + compare::<PriceOptions>(r#"{"policy": "strict", "surface": "chart"}"#, true);
        assert!(n > 3000, "only {n} broken inputs were compared");
    }

    #[test]
    fn paths_are_displayed_as_serde_path_to_error_displays_them() {
        assert_eq!(display(&[]), ".");
        let p = [
            Seg::Key("a".into()),
            Seg::Index(2),
            Seg::Key("b".into()),
            Seg::Unknown,
        ];
        assert_eq!(display(&p), "a[2].b.?");
        assert_eq!(display(&[Seg::Index(0), Seg::Key("x".into())]), "[0].x");
        assert_eq!(shown(&p).as_deref(), Some("a[2].b"));
        assert_eq!(shown(&[Seg::Unknown, Seg::Index(1)]), None);
        assert_eq!(shown(&[]), None);
    }
}
