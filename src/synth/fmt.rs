//! Output formatting as AIPerf's Python writers produce it: float `repr`, orjson's 2-space
//! indented JSON (streamed, no trailing newline), Python `csv` quoting with CRLF rows.

use std::io::{self, Write};

/// Python `repr(float)`: shortest round-trip digits, `.0` on integral values, scientific
/// notation outside 1e-4 <= |x| < 1e16 (`1e-05`, `1.5e+16`). Non-finite values are the
/// caller's business (JSON has no NaN); here they print as Python does.
pub fn py_float(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    // An integer below 2^53 is exact, and Python prints it with its digits and `.0`
    // (counts and bucket counts: most of the numbers a long run writes).
    if x.fract() == 0.0 && x.abs() < 9_007_199_254_740_992.0 {
        return format!("{}.0", x as i64);
    }
    py_float_digits(x)
}

/// Python `repr` of a finite non-zero float from its shortest round-trip digits.
fn py_float_digits(x: f64) -> String {
    let e = format!("{:e}", x);
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let neg = mant.starts_with('-');
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    if (-4..16).contains(&exp) {
        if exp >= 0 {
            let int_len = exp as usize + 1;
            if digits.len() <= int_len {
                out.push_str(&digits);
                out.extend(std::iter::repeat_n('0', int_len - digits.len()));
                out.push_str(".0");
            } else {
                out.push_str(&digits[..int_len]);
                out.push('.');
                out.push_str(&digits[int_len..]);
            }
        } else {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-exp - 1) as usize));
            out.push_str(&digits);
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        out.push_str(&format!("{:02}", exp.abs()));
    }
    out
}

/// A JSON string literal (serde_json escaping = orjson's for these inputs).
pub fn jstr(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// Python `str()` of a label dict, used as AIPerf's series sort key.
pub fn py_dict_str(labels: &[(String, String)]) -> String {
    let q = |s: &str| {
        if s.contains('\'') && !s.contains('"') {
            format!("\"{s}\"")
        } else {
            format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
        }
    };
    let parts: Vec<String> = labels
        .iter()
        .map(|(k, v)| format!("{}: {}", q(k), q(v)))
        .collect();
    format!("{{{}}}", parts.join(", "))
}

/// Streaming writer of orjson `OPT_INDENT_2` JSON.
pub struct Pretty<W: Write> {
    pub w: W,
    /// One entry per open container: whether it has an item yet.
    stack: Vec<bool>,
    after_key: bool,
}

impl<W: Write> Pretty<W> {
    pub fn new(w: W) -> Self {
        Pretty {
            w,
            stack: Vec::new(),
            after_key: false,
        }
    }

    /// A writer of a fragment that sits `depth` containers deep (for splicing).
    pub fn nested(w: W, depth: usize) -> Self {
        Pretty {
            w,
            stack: vec![true; depth],
            after_key: false,
        }
    }

    /// Whether the innermost open container has an item.
    pub fn has_items(&self) -> bool {
        self.stack.last().copied().unwrap_or(false)
    }

    /// Mark the innermost container as having items (after splicing raw items into it).
    pub fn mark_items(&mut self) {
        if let Some(l) = self.stack.last_mut() {
            *l = true;
        }
    }

    fn newline_indent(&mut self, depth: usize) -> io::Result<()> {
        self.w.write_all(b"\n")?;
        for _ in 0..depth {
            self.w.write_all(b"  ")?;
        }
        Ok(())
    }

    /// Position for a new array item or top-level value.
    fn pre_value(&mut self) -> io::Result<()> {
        if self.after_key {
            self.after_key = false;
            return Ok(());
        }
        if let Some(has) = self.stack.last().copied() {
            if has {
                self.w.write_all(b",")?;
            }
            if let Some(l) = self.stack.last_mut() {
                *l = true;
            }
            let d = self.stack.len();
            self.newline_indent(d)?;
        }
        Ok(())
    }

    pub fn key(&mut self, k: &str) -> io::Result<()> {
        self.pre_value()?;
        self.w.write_all(jstr(k).as_bytes())?;
        self.w.write_all(b": ")?;
        self.after_key = true;
        Ok(())
    }

    pub fn raw(&mut self, v: &str) -> io::Result<()> {
        self.pre_value()?;
        self.w.write_all(v.as_bytes())
    }

    pub fn kv_raw(&mut self, k: &str, v: &str) -> io::Result<()> {
        self.key(k)?;
        self.raw(v)
    }

    pub fn kv_str(&mut self, k: &str, v: &str) -> io::Result<()> {
        self.key(k)?;
        self.raw(&jstr(v))
    }

    pub fn kv_f(&mut self, k: &str, v: f64) -> io::Result<()> {
        self.key(k)?;
        self.raw(&py_float(v))
    }

    /// A float field, omitted when non-finite (native writers) .
    pub fn kv_f_opt(&mut self, k: &str, v: Option<f64>) -> io::Result<()> {
        match v {
            Some(x) if x.is_finite() => self.kv_f(k, x),
            _ => Ok(()),
        }
    }

    pub fn begin(&mut self, open: u8) -> io::Result<()> {
        self.pre_value()?;
        self.w.write_all(&[open])?;
        self.stack.push(false);
        Ok(())
    }

    pub fn end(&mut self, close: u8) -> io::Result<()> {
        let had = self.stack.pop().unwrap_or(false);
        if had {
            let d = self.stack.len();
            self.newline_indent(d)?;
        }
        self.w.write_all(&[close])
    }

    pub fn obj(&mut self) -> io::Result<()> {
        self.begin(b'{')
    }
    pub fn arr(&mut self) -> io::Result<()> {
        self.begin(b'[')
    }
    pub fn end_obj(&mut self) -> io::Result<()> {
        self.end(b'}')
    }
    pub fn end_arr(&mut self) -> io::Result<()> {
        self.end(b']')
    }
}

/// One CSV cell as Python's `csv` module (QUOTE_MINIMAL) writes it.
pub fn csv_cell(s: &str) -> String {
    if s.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Python `%.4f`.
pub fn f4(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    format!("{:.4}", x)
}

/// Naive local ISO time as Python `datetime.fromtimestamp(ns/1e9).isoformat()` prints it;
/// the generator fixes the local zone to UTC (documented simplification).
pub fn iso_local(ns: u64) -> String {
    let secs = (ns / 1_000_000_000) as i64;
    let micros = (ns % 1_000_000_000) / 1000;
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let base = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        y,
        m,
        d,
        sod / 3600,
        (sod / 60) % 60,
        sod % 60
    );
    if micros == 0 {
        base
    } else {
        format!("{base}.{micros:06}")
    }
}

fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integral_floats_print_as_their_digits_would() {
        let mut x: u64 = 1;
        let mut cases = vec![1.0, 9.0, 10.0, 100.0, 1e15, 9_007_199_254_740_991.0];
        for _ in 0..2000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let v = (x >> (11 + (x % 50))) as f64;
            cases.push(v);
            cases.push(-v);
        }
        for v in cases.into_iter().filter(|v| *v != 0.0) {
            assert_eq!(py_float(v), py_float_digits(v), "{v}");
        }
    }

    #[test]
    fn python_float_repr() {
        assert_eq!(py_float(81920.0), "81920.0");
        assert_eq!(py_float(9637.64705882353), "9637.64705882353");
        assert_eq!(py_float(0.0001), "0.0001");
        assert_eq!(py_float(0.00001), "1e-05");
        assert_eq!(py_float(1.5e16), "1.5e+16");
        assert_eq!(py_float(1e16), "1e+16");
        assert_eq!(py_float(-2.5), "-2.5");
        assert_eq!(py_float(0.1), "0.1");
        assert_eq!(py_float(123456789012345.0), "123456789012345.0");
    }
    #[test]
    fn pretty_layout() {
        let mut p = Pretty::new(Vec::new());
        p.obj().unwrap();
        p.kv_str("a", "x").unwrap();
        p.key("b").unwrap();
        p.arr().unwrap();
        p.raw("1").unwrap();
        p.obj().unwrap();
        p.end_obj().unwrap();
        p.end_arr().unwrap();
        p.key("c").unwrap();
        p.obj().unwrap();
        p.end_obj().unwrap();
        p.end_obj().unwrap();
        let s = String::from_utf8(p.w).unwrap();
        assert_eq!(
            s,
            "{\n  \"a\": \"x\",\n  \"b\": [\n    1,\n    {}\n  ],\n  \"c\": {}\n}"
        );
    }
    #[test]
    fn iso() {
        assert_eq!(
            iso_local(1_765_529_006_843_416_914),
            "2025-12-12T08:43:26.843416"
        );
        assert_eq!(iso_local(1_765_529_006_000_000_000), "2025-12-12T08:43:26");
    }
}
