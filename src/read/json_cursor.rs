//! A cursor over one JSON text for the readers' fast paths ([`super::scrape_jsonl`]'s and
//! [`super::profile_jsonl`]'s): each reads the common shape of its lines by hand and leaves
//! every other line to serde_json. So the cursor accepts only what serde_json accepts: every
//! token is checked against the JSON grammar, strings with an escape are refused (the caller
//! gives the line to serde_json), and so is nesting deeper than [`MAX_DEPTH`]. Every method
//! gives `None` where the text leaves what it reads.

use std::ops::Range;

mod words;
use words::{leading_digits, past_spaces, value_of, word_at, TEN};

/// Nesting the cursor follows (serde_json refuses beyond 128).
const MAX_DEPTH: u32 = 64;

/// Digits read one by one before eight at a time: a word's test and value cost more than a
/// few bytes' (the scrape JSONL's values are mostly short; measured with cachegrind).
const SHORT_RUN: usize = 8;

/// A position in a JSON text. `INDENTED`: the text is pretty-printed (the server-metrics
/// export), and the indentation after each line break is passed eight spaces at a time; a
/// compact line (the JSONL readers') keeps the plain whitespace loop, which is faster there.
pub(crate) struct Cursor<'a, const INDENTED: bool = false> {
    pub(crate) b: &'a [u8],
    pub(crate) i: usize,
    /// A `null` token has been read (any `null` outside strings: the profile's era).
    pub(crate) saw_null: bool,
}

// The small steps are inlined by hand: the `.wasm` is built for size ("z"), which calls each
// of them out of line, a call per byte of whitespace or token (a third of reading a profile
// JSONL in WebAssembly went to the calls).
impl<'a> Cursor<'a> {
    pub(crate) fn new(b: &'a [u8]) -> Self {
        Cursor {
            b,
            i: 0,
            saw_null: false,
        }
    }
}

impl<'a> Cursor<'a, true> {
    /// A cursor over pretty-printed JSON (see [`Cursor`]).
    pub(crate) fn indented(b: &'a [u8]) -> Self {
        Cursor {
            b,
            i: 0,
            saw_null: false,
        }
    }
}

impl<const INDENTED: bool> Cursor<'_, INDENTED> {
    /// Only whitespace is left.
    pub(crate) fn at_end(&mut self) -> bool {
        self.ws();
        self.i == self.b.len()
    }

    #[inline(always)]
    pub(crate) fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    /// The next byte is `c` (an `Option` comparison is a call in the size-built `.wasm`).
    #[inline(always)]
    fn is(&self, c: u8) -> bool {
        matches!(self.peek(), Some(x) if x == c)
    }

    /// JSON's whitespace.
    #[inline(always)]
    pub(crate) fn ws(&mut self) {
        if INDENTED {
            loop {
                match self.peek() {
                    Some(b'\n') => self.indentation(),
                    Some(b' ' | b'\t' | b'\r') => self.i += 1,
                    _ => return,
                }
            }
        }
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    /// Past a line break and the spaces after it, eight at a time (a third of a
    /// pretty-printed export is indentation).
    fn indentation(&mut self) {
        self.i = past_spaces(self.b, self.i + 1);
    }

    #[inline(always)]
    pub(crate) fn eat(&mut self, c: u8) -> Option<()> {
        self.ws();
        self.is(c).then(|| self.i += 1)
    }

    #[inline(always)]
    pub(crate) fn open(&mut self, c: u8) -> Option<()> {
        self.eat(c)
    }

    /// The container ends here (an empty one, right after its opening).
    #[inline(always)]
    pub(crate) fn close(&mut self, c: u8) -> bool {
        self.eat(c).is_some()
    }

    /// After a member: `true` at a `,` (another follows), `false` at the closing `end`.
    #[inline(always)]
    pub(crate) fn next(&mut self, end: u8) -> Option<bool> {
        self.ws();
        match self.peek()? {
            b',' => {
                self.i += 1;
                Some(true)
            }
            c if c == end => {
                self.i += 1;
                Some(false)
            }
            _ => None,
        }
    }

    /// An object key and its colon: the key's range.
    #[inline(always)]
    pub(crate) fn key(&mut self) -> Option<Range<usize>> {
        let key = self.string()?;
        self.eat(b':')?;
        Some(key)
    }

    #[inline(always)]
    fn literal(&mut self, word: &[u8]) -> bool {
        self.ws();
        let hit = self
            .b
            .get(self.i..self.i + word.len())
            .is_some_and(|w| w == word);
        if hit {
            self.i += word.len();
        }
        hit
    }

    /// A string without escapes or control characters: the range of its contents.
    #[inline(always)]
    pub(crate) fn string(&mut self) -> Option<Range<usize>> {
        self.eat(b'"')?;
        let start = self.i;
        // Eight bytes at a time: the lowest byte flagged as a quote, a backslash or a control
        // character is one (a borrow may flag bytes above it, never below).
        while let Some(word) = self.b.get(self.i..self.i + 8) {
            let w = u64::from_le_bytes(word.try_into().ok()?);
            const ONES: u64 = u64::MAX / 255;
            let ctrl = w.wrapping_sub(ONES * 0x20) & !w;
            let q = w ^ (ONES * u64::from(b'"'));
            let quote = q.wrapping_sub(ONES) & !q;
            let s = w ^ (ONES * u64::from(b'\\'));
            let slash = s.wrapping_sub(ONES) & !s;
            let flagged = (ctrl | quote | slash) & (ONES << 7);
            if flagged == 0 {
                self.i += 8;
                continue;
            }
            self.i += (flagged.trailing_zeros() / 8) as usize;
            return self.string_end(start);
        }
        while let Some(c) = self.peek() {
            if c == b'"' || c == b'\\' || c < 0x20 {
                return self.string_end(start);
            }
            self.i += 1;
        }
        None
    }

    /// At the first byte of a string that is not plain text: its end, or `None` at an
    /// escape or a control character.
    #[inline(always)]
    fn string_end(&mut self, start: usize) -> Option<Range<usize>> {
        (self.peek()? == b'"').then(|| {
            self.i += 1;
            start..self.i - 1
        })
    }

    /// A number in JSON's grammar: its text's range.
    pub(crate) fn number(&mut self) -> Option<Range<usize>> {
        self.ws();
        self.number_here()
    }

    /// [`Self::number`] at the cursor (no whitespace before it).
    #[inline(always)]
    fn number_here(&mut self) -> Option<Range<usize>> {
        let start = self.i;
        if self.is(b'-') {
            self.i += 1;
        }
        match self.peek()? {
            b'0' => self.i += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.is(b'.') {
            self.i += 1;
            self.some_digits()?;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            self.some_digits()?;
        }
        Some(start..self.i)
    }

    #[inline(always)]
    fn digits(&mut self) {
        // A short run (most sample values, a bucket's count) a byte at a time, a long one
        // (timestamps, long fractions) then eight at a time.
        for _ in 0..SHORT_RUN {
            match self.peek() {
                Some(b'0'..=b'9') => self.i += 1,
                _ => return,
            }
        }
        while let Some(w) = word_at(self.b, self.i) {
            let k = leading_digits(w);
            self.i += k;
            if k < 8 {
                return;
            }
        }
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
    }

    fn some_digits(&mut self) -> Option<()> {
        let start = self.i;
        self.digits();
        (self.i > start).then_some(())
    }

    /// `null`, noted in [`Cursor::saw_null`].
    #[inline(always)]
    pub(crate) fn null(&mut self) -> bool {
        let hit = self.literal(b"null");
        self.saw_null |= hit;
        hit
    }

    /// `true` or `false`.
    pub(crate) fn bool(&mut self) -> Option<bool> {
        if self.literal(b"true") {
            Some(true)
        } else if self.literal(b"false") {
            Some(false)
        } else {
            None
        }
    }

    /// A non-negative integer written as digits only, that fits `u64` (what serde_json reads
    /// as one); `None` for any other number, the cursor then somewhere inside it.
    pub(crate) fn u64(&mut self) -> Option<u64> {
        self.ws();
        let mut v = 0u64;
        match self.peek()? {
            b'0' => self.i += 1,
            b'1'..=b'9' => {
                let start = self.i;
                // Eight digits at a time while nineteen (which cannot overflow) are not passed.
                while let Some(w) = word_at(self.b, self.i) {
                    let k = leading_digits(w);
                    if k == 0 || self.i - start + k > 19 {
                        break;
                    }
                    v = v * TEN[k] + value_of(w, k);
                    self.i += k;
                    if k < 8 {
                        break;
                    }
                }
                while let Some(c @ b'0'..=b'9') = self.peek() {
                    // Nineteen digits cannot overflow; beyond, checked (a checked multiply
                    // is a 128-bit one in wasm32).
                    v = if self.i - start < 19 {
                        v * 10 + u64::from(c - b'0')
                    } else {
                        v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?
                    };
                    self.i += 1;
                }
            }
            _ => return None,
        }
        match self.peek() {
            Some(b'.' | b'e' | b'E') => None,
            _ => Some(v),
        }
    }

    /// A sample's `value`: a number as `f64` (NaN for `null`); `None` when no finite `f64`
    /// holds it (serde_json refuses it).
    pub(crate) fn value(&mut self) -> Option<f64> {
        self.ws();
        if self.peek()? == b'n' {
            return self.null().then_some(f64::NAN);
        }
        let start = self.i;
        let negative = self.is(b'-');
        if negative {
            self.i += 1;
        }
        // The common decimal is read as it is checked (see [`to_f64`]).
        let mut mantissa = 0u64;
        let mut digits = 0u32;
        match self.peek()? {
            b'0' => {
                self.i += 1;
                digits = 1;
            }
            b'1'..=b'9' => self.accumulate(&mut mantissa, &mut digits),
            _ => return None,
        }
        let mut scale = 0u32;
        if self.is(b'.') {
            self.i += 1;
            let before = digits;
            self.accumulate(&mut mantissa, &mut digits);
            scale = digits - before;
            if scale == 0 {
                return None;
            }
        }
        let v = if let Some(b'e' | b'E') = self.peek() {
            self.i = start;
            let r = self.number()?;
            to_f64(self.b.get(r)?)?
        } else {
            let power = POW10
                .get(scale as usize)
                .filter(|_| digits <= 19 && mantissa <= 1 << 53);
            match power {
                // Both operands are exact, so the quotient is the correctly rounded value.
                Some(p) => {
                    let v = mantissa as f64 / p;
                    if negative {
                        -v
                    } else {
                        v
                    }
                }
                None => std::str::from_utf8(self.b.get(start..self.i)?)
                    .ok()?
                    .parse()
                    .ok()?,
            }
        };
        v.is_finite().then_some(v)
    }

    /// A member that is `null` or a number: `None` for `null`, else as [`Cursor::value`].
    #[inline(always)]
    pub(crate) fn optional_value(&mut self) -> Option<Option<f64>> {
        if self.null() {
            return Some(None);
        }
        self.value().map(Some)
    }

    /// Digits, into `mantissa` while it cannot overflow (`digits` counts them all).
    #[inline(always)]
    fn accumulate(&mut self, mantissa: &mut u64, digits: &mut u32) {
        // As in [`Self::digits`]: the first few a byte at a time.
        for _ in 0..SHORT_RUN {
            match self.peek() {
                Some(c @ b'0'..=b'9') => {
                    if *digits < 19 {
                        *mantissa = *mantissa * 10 + u64::from(c - b'0');
                    }
                    *digits += 1;
                    self.i += 1;
                }
                _ => return,
            }
        }
        while let Some(w) = word_at(self.b, self.i) {
            let k = leading_digits(w);
            if k == 0 || *digits as usize + k > 19 {
                break;
            }
            *mantissa = *mantissa * TEN[k] + value_of(w, k);
            *digits += k as u32;
            self.i += k;
            if k < 8 {
                return;
            }
        }
        while let Some(c @ b'0'..=b'9') = self.peek() {
            if *digits < 19 {
                *mantissa = *mantissa * 10 + u64::from(c - b'0');
            }
            *digits += 1;
            self.i += 1;
        }
    }

    /// Any JSON value, checked and passed over; `depth`: the containers it is inside.
    pub(crate) fn skip_value(&mut self, depth: u32) -> Option<()> {
        self.ws();
        match self.peek()? {
            b'"' => {
                self.string()?;
            }
            b'{' => {
                self.nest(depth)?;
                self.i += 1;
                if !self.close(b'}') {
                    loop {
                        self.key()?;
                        // A number or string member (most are: a timeslice's, a label's)
                        // without a call.
                        self.ws();
                        match self.peek()? {
                            b'0'..=b'9' | b'-' => {
                                self.number_here()?;
                            }
                            b'"' => {
                                self.string()?;
                            }
                            _ => self.skip_value(depth + 1)?,
                        }
                        if !self.next(b'}')? {
                            break;
                        }
                    }
                }
            }
            b'[' => {
                self.nest(depth)?;
                self.i += 1;
                if !self.close(b']') {
                    loop {
                        self.skip_value(depth + 1)?;
                        if !self.next(b']')? {
                            break;
                        }
                    }
                }
            }
            b't' => self.literal(b"true").then_some(())?,
            b'f' => self.literal(b"false").then_some(())?,
            b'n' => self.null().then_some(())?,
            _ => {
                self.number()?;
            }
        }
        Some(())
    }

    fn nest(&self, depth: u32) -> Option<()> {
        (depth < MAX_DEPTH).then_some(())
    }
}

/// The powers of ten an `f64` holds exactly.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// A number's text as the nearest `f64`: a JSON number's as serde_json gives it with
/// `float_roundtrip`, and any other text as `f64::from_str` does (the CSV's cells; `None`
/// where it refuses). A decimal of at most 2^53 in digits and at most 22 after the point is
/// one exact division; the rest go through the standard library's parse (correctly rounded
/// too).
pub(crate) fn to_f64(text: &[u8]) -> Option<f64> {
    let (negative, unsigned) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    let mut mantissa = 0u64;
    let mut after_point: Option<i32> = None;
    // No digit (`-`, `.`, ``) is no number: the standard library's parse refuses it.
    let mut simple = unsigned.len() <= 19 && unsigned.iter().any(u8::is_ascii_digit);
    for &c in unsigned {
        match c {
            b'0'..=b'9' if simple => {
                mantissa = mantissa * 10 + u64::from(c - b'0');
                if let Some(n) = after_point.as_mut() {
                    *n += 1;
                }
            }
            b'.' if after_point.is_none() => after_point = Some(0),
            _ => simple = false,
        }
    }
    let power = usize::try_from(after_point.unwrap_or(0))
        .ok()
        .and_then(|p| POW10.get(p));
    if let Some(power) = power.filter(|_| simple && mantissa <= 1 << 53) {
        // Both operands are exact, so the quotient is the correctly rounded value.
        let v = mantissa as f64 / power;
        return Some(if negative { -v } else { v });
    }
    std::str::from_utf8(text).ok()?.parse().ok()
}

/// A number's text as both readings of a number here give it (they must agree).
#[cfg(test)]
fn to_f64_for_tests(text: &[u8]) -> Option<f64> {
    let mut c = Cursor::new(text);
    let read = c.value().filter(|_| c.i == text.len());
    let whole = to_f64(text);
    assert_eq!(read.map(f64::to_bits), whole.map(f64::to_bits));
    whole
}

#[cfg(test)]
mod tests {
    use super::*;

    fn string(text: &str) -> Option<Range<usize>> {
        let mut c = Cursor::new(text.as_bytes());
        c.string()
    }

    /// `skip_value` accepts what serde_json does (but escapes, refused) and ends where the
    /// value does; nesting is refused past `MAX_DEPTH` containers counting `depth`.
    /// Whitespace ends at the first other byte, whatever mix and length of runs precede it.
    #[test]
    fn whitespace_ends_at_the_first_other_byte() {
        let mut texts = vec![String::new()];
        for _ in 0..6 {
            let longer: Vec<String> = texts
                .iter()
                .filter(|t| t.len() == texts.last().map_or(0, String::len))
                .flat_map(|t| [" ", "\n", "\t", "\r"].map(|c| format!("{t}{c}")))
                .collect();
            texts.extend(longer);
        }
        for n in 0..40 {
            for lead in ["", "\n", " \n", "\t"] {
                texts.push(format!("{lead}{}", " ".repeat(n)));
                texts.push(format!("{lead}{}\n{}", " ".repeat(n), " ".repeat(n / 3)));
            }
        }
        for ws in &texts {
            for tail in ["", "x", "\"", " x", "x "] {
                let text = format!("{ws}{tail}");
                let want = text
                    .bytes()
                    .position(|b| !matches!(b, b' ' | b'\n' | b'\t' | b'\r'))
                    .unwrap_or(text.len());
                let mut c = Cursor::new(text.as_bytes());
                c.ws();
                assert_eq!(c.i, want, "{text:?}");
                let mut c = Cursor::indented(text.as_bytes());
                c.ws();
                assert_eq!(c.i, want, "{text:?} indented");
            }
        }
    }

    #[test]
    fn a_skipped_value_is_a_json_value() {
        let deep = |n: usize, open: &str, close: &str| open.repeat(n) + &close.repeat(n);
        let mut texts: Vec<String> = [
            "0",
            "-1.5e3",
            "\"a\"",
            "true",
            "false",
            "null",
            "[]",
            "{}",
            "[1,[2,[3]],{}]",
            "{\"a\":{\"b\":[1,{\"c\":null}]},\"d\":\"e\"}",
            "[{\"a\":1},{\"b\":[2,3]},[],{}]",
            "{\"a\":[{\"b\":{\"c\":[1]}}],\"d\":[[],{}],\"e\":{}}",
            "[{\"a\":1]]",
            "{\"a\":-1.5e3,\"b\":\"x\",\"c\":0}",
            "{\"a\":-}",
            "{\"a\":01}",
            "{\"a\":1.}",
            "{\"a\":\"x\\n\"}",
            "{\"a\":\"x}",
            "{\"a\":1e}",
            "{\"a\":[1}}",
            "[[1],{\"a\":2},]",
            "{\"a\":{},,\"b\":1}",
            " [ 1 , 2 ] ",
            "{ \"a\" : [ ] }",
            "[1,]",
            "[,1]",
            "{\"a\"}",
            "{\"a\":1,}",
            "{1:2}",
            "[1 2]",
            "[",
            "{\"a\":",
            "tru",
            "nul",
            "01",
            "-",
            "1.",
            "[\"a\\n\"]",
            "{\"a\":1]",
            "[1}",
            "]",
            "}",
            "\"\u{1}\"",
        ]
        .iter()
        .map(|t| t.to_string())
        .collect();
        // Pretty-printed, as an export is.
        let pretty = "{\n  \"a\": [\n    {\n      \"b\": 1,\n      \"c\": null\n    }\n  ],\n          \"d\": \"e\"\n}";
        texts.push(pretty.to_string());
        texts.push(
            pretty
                .replace("\"b\"", "\n         \"b\"")
                .replace('1', "1 "),
        );
        texts.push(pretty.replace(",\n", "\n"));
        for n in [1, 2, 62, 63, 64, 65] {
            texts.push(deep(n, "[", "]"));
            texts.push(deep(n, "{\"k\":", "}").replace(":}", ":1}"));
            texts.push(format!("{}0{}", "[".repeat(n), "]".repeat(n)));
        }
        for text in &texts {
            for depth in [0, 1, 3] {
                let mut c = Cursor::new(text.as_bytes());
                let ours = c.skip_value(depth).is_some() && c.at_end();
                let mut c = Cursor::indented(text.as_bytes());
                let indented = c.skip_value(depth).is_some() && c.at_end();
                assert_eq!(ours, indented, "{text:?} indented");
                let theirs = serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok();
                let nesting = text
                    .chars()
                    .scan(0i32, |d, ch| {
                        *d += match ch {
                            '[' | '{' => 1,
                            ']' | '}' => -1,
                            _ => 0,
                        };
                        Some(*d)
                    })
                    .max()
                    .unwrap_or(0);
                let within = nesting.max(0) as u32 + depth <= MAX_DEPTH;
                let escaped = text.contains('\\');
                assert_eq!(
                    ours,
                    theirs && within && !escaped,
                    "{text:?} at depth {depth}"
                );
            }
        }
    }

    #[test]
    fn a_string_ends_at_its_first_quote_and_is_refused_at_an_escape_or_control() {
        for n in 0..24 {
            let plain = "é".repeat(n % 3) + &"a".repeat(n);
            let tail = "bcdefghijklmnop\u{7f}";
            assert_eq!(
                string(&format!("\"{plain}\"{tail}\"")),
                Some(1..1 + plain.len()),
                "{n}"
            );
            for special in ['\\', '\u{1}', '\u{1f}', '\n', '\t'] {
                let text = format!("\"{plain}{special}{tail}\"");
                assert_eq!(string(&text), None, "{text:?}");
            }
            assert_eq!(string(&format!("\"{plain}{tail}")), None, "unterminated");
        }
    }

    #[test]
    fn numbers_are_serde_json_numbers() {
        let texts = [
            "0",
            "-0",
            "0.0",
            "-0.0",
            "1",
            "0.1",
            "0.3",
            "123456789.123456789",
            "9007199254740993",
            "9007199254740992",
            "18446744073709551615",
            "18446744073709551616",
            "1e3",
            "1E-3",
            "2.5e+2",
            "1.7976931348623157e308",
            "5e-324",
            "0.000000000000000000001",
            "123.4567890123456789012",
            "-12.5e-3",
            "4.35",
            "2.675",
            "1234567.0000001",
        ];
        for t in texts {
            let ours = to_f64_for_tests(t.as_bytes()).unwrap();
            let theirs: f64 = serde_json::from_str(t).unwrap();
            assert_eq!(ours.to_bits(), theirs.to_bits(), "{t}");
        }
        // Every decimal with up to 17 digits and any point, against serde_json.
        let mut x: u64 = 0x9e3779b97f4a7c15;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let digits = (x % 10u64.pow((x >> 40) as u32 % 17 + 1)).to_string();
            let point = (x >> 20) as usize % (digits.len() + 1);
            let t = if point == digits.len() {
                digits.clone()
            } else {
                format!("{}.{}", &digits[..point.max(1)], &digits[point.max(1)..])
            };
            let t = t.trim_end_matches('.').to_string();
            let theirs: f64 = serde_json::from_str(&t).unwrap();
            let ours = to_f64_for_tests(t.as_bytes()).unwrap();
            assert_eq!(ours.to_bits(), theirs.to_bits(), "{t}");
        }
    }

    /// Digit runs of every length, cut by every kind of byte and by the end of the text, read
    /// eight at a time as serde_json reads them one by one.
    #[test]
    fn long_digit_runs_are_read_as_serde_json_reads_them() {
        let mut x: u64 = 0x853c_49e6_748f_ea9b;
        for len in 1..=42 {
            for _ in 0..40 {
                let digits: String = (0..len)
                    .map(|i| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        let d = (x % 10) as u8;
                        // Mostly 9s for runs near u64::MAX, and no leading 0.
                        char::from(b'0' + if i == 0 { d.max(1) } else { d })
                    })
                    .collect();
                for tail in ["", ",", " ", "x", "/", ":", ".5", ".", "e7", "E-2", "0"] {
                    for prefix in [digits.clone(), format!("-{digits}.{digits}")] {
                        let text = format!("{prefix}{tail}");
                        // The tail is part of the number, or what ends it.
                        let joins = tail.starts_with(['e', 'E', '0'])
                            || (tail.starts_with('.') && !prefix.contains('.'));
                        let number_text = if joins { &text } else { &prefix };
                        let theirs = serde_json::from_str::<serde_json::Number>(number_text).ok();
                        let end = number_text.len();
                        let mut c = Cursor::new(text.as_bytes());
                        let ours = c.u64();
                        let want = theirs.as_ref().and_then(serde_json::Number::as_u64);
                        if !text.starts_with('-') && !tail.starts_with(['.', 'e', 'E']) {
                            assert_eq!(ours, want, "{text}");
                        } else {
                            assert_eq!(ours, None, "{text}");
                        }
                        let mut c = Cursor::new(text.as_bytes());
                        let ours = c.number();
                        if theirs.is_some() {
                            assert_eq!(ours, Some(0..end), "{text}");
                        }
                        let mut c = Cursor::new(text.as_bytes());
                        let ours = c.value();
                        let want = theirs
                            .and_then(|_| serde_json::from_str::<f64>(&text[..end]).ok())
                            .filter(|v| v.is_finite());
                        assert_eq!(ours.map(f64::to_bits), want.map(f64::to_bits), "{text}");
                        if want.is_some() {
                            assert_eq!(c.i, end, "{text}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn an_integer_is_read_as_serde_json_reads_a_u64() {
        for t in [
            "0",
            "7",
            "10",
            "1781635312710161427",
            "18446744073709551615",
            "18446744073709551616",
            "1.0",
            "1e3",
            "12E2",
            "-1",
            "-0",
            "01",
            "1.",
            "",
            "x",
            " 42",
        ] {
            let mut c = Cursor::new(t.as_bytes());
            let ours = c.u64().filter(|_| c.at_end());
            let theirs = serde_json::from_str::<serde_json::Number>(t)
                .ok()
                .filter(serde_json::Number::is_u64)
                .and_then(|n| n.as_u64());
            assert_eq!(ours, theirs, "{t:?}");
        }
    }
}
