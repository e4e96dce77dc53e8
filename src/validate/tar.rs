//! A push reader of tar archives (POSIX ustar and pax, GNU tar's default format with its
//! long-name members), written for hostile input: every header's checksum is verified, sizes
//! are parsed strictly (octal or GNU base-256) and checked against the limits before any of
//! their bytes are read, member names are normalised and refused when absolute, climbing out
//! (`..`) or repeated, links and devices are refused, pax records are parsed strictly, and an
//! archive cut short is an error. It never touches a file system: members are handed to a
//! [`TarSink`] as (name, size) and data pieces.

use super::codes::{Issue, UploadCode};
use super::limits::UploadLimits;
use std::collections::BTreeSet;

const BLOCK: usize = 512;

/// Where the members of a bundle go.
pub trait TarSink {
    /// A regular file begins: its normalised relative path and size in bytes.
    fn begin(&mut self, name: &str, size: u64) -> Result<(), Issue>;
    /// The next bytes of the file begun.
    fn data(&mut self, bytes: &[u8]) -> Result<(), Issue>;
    /// The file begun has ended.
    fn end(&mut self) -> Result<(), Issue>;
}

/// What the bytes of the current member are.
enum Body {
    /// A regular file's bytes, handed to the sink.
    File,
    /// Bytes read and dropped (a directory's, which should have none).
    Skip,
    /// A pax extended header for the next member (`x`) or for all (`g`).
    Pax { global: bool, buf: Vec<u8> },
    /// A GNU long name (`L`) or long link name (`K`) for the next member.
    LongName { link: bool, buf: Vec<u8> },
}

enum State {
    Header,
    Data {
        body: Body,
        left: u64,
        pad: u64,
    },
    /// Zero blocks seen: the end-of-archive marker (the rest must be zeros too).
    End,
}

/// Names and sizes the next member takes from preceding pax or GNU headers.
#[derive(Default)]
struct Pending {
    path: Option<String>,
    size: Option<u64>,
}

pub struct TarReader {
    limits: UploadLimits,
    state: State,
    block: Vec<u8>,
    pending: Pending,
    names: BTreeSet<String>,
    members: u64,
    /// Bytes of the archive taken so far.
    offset: u64,
    /// Offset of the current member's header, for errors.
    header_at: u64,
}

fn bad(message: impl Into<String>, at: u64) -> Issue {
    Issue::new(UploadCode::BadBundle, message).at_byte(at)
}

impl TarReader {
    pub fn new(limits: &UploadLimits) -> Self {
        TarReader {
            limits: *limits,
            state: State::Header,
            block: Vec::with_capacity(BLOCK),
            pending: Pending::default(),
            names: BTreeSet::new(),
            members: 0,
            offset: 0,
            header_at: 0,
        }
    }

    pub fn push(&mut self, mut input: &[u8], sink: &mut dyn TarSink) -> Result<(), Issue> {
        while !input.is_empty() {
            let used = match &mut self.state {
                State::Data { .. } => self.data(input, sink)?,
                State::Header | State::End => {
                    let n = (BLOCK - self.block.len()).min(input.len());
                    self.block.extend_from_slice(&input[..n]);
                    n
                }
            };
            self.offset += used as u64;
            input = &input[used..];
            if self.block.len() == BLOCK {
                let block = std::mem::replace(&mut self.block, Vec::with_capacity(BLOCK));
                self.header_at = self.offset - BLOCK as u64;
                self.block_done(&block, sink)?;
            }
        }
        Ok(())
    }

    /// The archive has ended: it must have ended with its end-of-archive marker.
    pub fn finish(&self) -> Result<(), Issue> {
        match &self.state {
            State::End if self.block.iter().all(|&b| b == 0) => Ok(()),
            State::End => Err(bad("the archive ends inside a block", self.offset)),
            State::Header if self.block.is_empty() => Err(bad(
                "the archive is cut short: no end-of-archive marker",
                self.offset,
            )),
            State::Header => Err(bad(
                "the archive is cut short inside a member header",
                self.offset,
            )),
            State::Data { .. } => Err(bad(
                "the archive is cut short inside a member's data",
                self.offset,
            )),
        }
    }

    fn block_done(&mut self, block: &[u8], sink: &mut dyn TarSink) -> Result<(), Issue> {
        let zero = block.iter().all(|&b| b == 0);
        match self.state {
            State::End if zero => Ok(()),
            State::End => Err(bad("data after the end-of-archive marker", self.header_at)),
            _ if zero => {
                if self.pending.path.is_some() || self.pending.size.is_some() {
                    return Err(bad(
                        "the archive ends after a pax or long-name header, without its member",
                        self.header_at,
                    ));
                }
                self.state = State::End;
                Ok(())
            }
            _ => self.header(block, sink),
        }
    }

    /// Take member data from `input`; returns the bytes taken.
    fn data(&mut self, input: &[u8], sink: &mut dyn TarSink) -> Result<usize, Issue> {
        let State::Data { body, left, pad } = &mut self.state else {
            return Ok(0);
        };
        let n = usize::try_from(*left)
            .unwrap_or(usize::MAX)
            .min(input.len());
        let piece = &input[..n];
        match body {
            Body::File => sink.data(piece)?,
            Body::Skip => {}
            Body::Pax { buf, .. } | Body::LongName { buf, .. } => buf.extend_from_slice(piece),
        }
        *left -= n as u64;
        let p = usize::try_from(*pad)
            .unwrap_or(usize::MAX)
            .min(input.len() - n);
        *pad -= p as u64;
        if *left == 0 && *pad == 0 {
            let State::Data { body, .. } = std::mem::replace(&mut self.state, State::Header) else {
                return Ok(n + p);
            };
            self.member_done(body, sink)?;
        }
        Ok(n + p)
    }

    fn member_done(&mut self, body: Body, sink: &mut dyn TarSink) -> Result<(), Issue> {
        match body {
            Body::File => sink.end(),
            Body::Skip => Ok(()),
            Body::Pax { global, buf } => {
                let records = pax_records(&buf).map_err(|why| bad(why, self.header_at))?;
                if !global {
                    self.apply_pax(records)?;
                }
                Ok(())
            }
            Body::LongName { link, buf } => {
                if !link {
                    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
                    let name = std::str::from_utf8(&buf[..end])
                        .map_err(|_| bad("a GNU long name is not UTF-8", self.header_at))?;
                    self.pending.path = Some(name.to_string());
                }
                Ok(())
            }
        }
    }

    fn apply_pax(&mut self, records: Vec<(String, String)>) -> Result<(), Issue> {
        for (key, value) in records {
            match key.as_str() {
                "path" => self.pending.path = Some(value),
                "size" => {
                    let size = value
                        .parse::<u64>()
                        .ok()
                        .filter(|_| value.bytes().all(|b| b.is_ascii_digit()))
                        .ok_or_else(|| bad("a pax `size` is not a number", self.header_at))?;
                    self.pending.size = Some(size);
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn header(&mut self, block: &[u8], sink: &mut dyn TarSink) -> Result<(), Issue> {
        let at = self.header_at;
        self.members += 1;
        if self.members > self.limits.files {
            return Err(Issue::limit(
                self.limits.hit("files", Some(self.members)),
                format!(
                    "the bundle has more than {} members (files, directories and their headers)",
                    self.limits.files
                ),
            )
            .at_byte(at));
        }
        check_sum(block).map_err(|why| bad(why, at))?;
        let gnu = match &block[257..265] {
            b"ustar\x0000" => false,
            b"ustar  \x00" => true,
            _ => return Err(bad("not a ustar header (bad magic)", at)),
        };
        let stated =
            numeric(&block[124..136]).ok_or_else(|| bad("a member size is not a number", at))?;
        let kind = block[156];
        let pending = std::mem::take(&mut self.pending);
        let size = match kind {
            b'x' | b'g' | b'L' | b'K' => stated,
            _ => pending.size.unwrap_or(stated),
        };
        let pad = (BLOCK as u64 - size % BLOCK as u64) % BLOCK as u64;
        let body = match kind {
            b'0' | 0 | b'7' => {
                let name = self.member_name(block, gnu, pending.path, at)?;
                self.begin_file(&name, size, sink)?;
                Body::File
            }
            b'5' => Body::Skip,
            b'x' | b'g' | b'L' | b'K' => {
                if size > self.limits.string_length {
                    return Err(Issue::limit(
                        self.limits.hit("string_length", Some(size)),
                        format!(
                            "a pax or long-name header of {size} bytes (string_length limit {})",
                            self.limits.string_length
                        ),
                    )
                    .at_byte(at));
                }
                self.pending = pending;
                match kind {
                    b'x' | b'g' => Body::Pax {
                        global: kind == b'g',
                        buf: Vec::new(),
                    },
                    _ => Body::LongName {
                        link: kind == b'K',
                        buf: Vec::new(),
                    },
                }
            }
            b'1' | b'2' => return Err(bad("links are not allowed in a bundle", at)),
            b'3' | b'4' | b'6' => {
                return Err(bad(
                    "device and FIFO members are not allowed in a bundle",
                    at,
                ))
            }
            other => {
                return Err(bad(
                    format!(
                        "unsupported member type `{}`",
                        char::from(other).escape_default()
                    ),
                    at,
                ))
            }
        };
        self.state = State::Data {
            body,
            left: size,
            pad,
        };
        if size == 0 {
            let State::Data { body, .. } = std::mem::replace(&mut self.state, State::Header) else {
                return Ok(());
            };
            self.member_done(body, sink)?;
        }
        Ok(())
    }

    fn begin_file(&mut self, name: &str, size: u64, sink: &mut dyn TarSink) -> Result<(), Issue> {
        if size > self.limits.decompressed_bytes {
            return Err(Issue::limit(
                self.limits.hit("decompressed_bytes", Some(size)),
                format!(
                    "member `{name}` states {size} bytes (decompressed_bytes limit {})",
                    self.limits.decompressed_bytes
                ),
            )
            .in_file(name)
            .at_byte(self.header_at));
        }
        if !self.names.insert(name.to_string()) {
            return Err(bad(
                format!("member `{name}` appears twice"),
                self.header_at,
            ));
        }
        sink.begin(name, size)
    }

    /// The member's path: pax `path`, else a GNU long name, else (ustar) prefix and name.
    fn member_name(
        &self,
        block: &[u8],
        gnu: bool,
        long: Option<String>,
        at: u64,
    ) -> Result<String, Issue> {
        let raw = match long {
            Some(name) => name,
            None => {
                let name = cstr(&block[..100]);
                let prefix = if gnu { &[][..] } else { cstr(&block[345..500]) };
                let joined = if prefix.is_empty() {
                    name.to_vec()
                } else {
                    [prefix, b"/", name].concat()
                };
                String::from_utf8(joined).map_err(|_| bad("a member name is not UTF-8", at))?
            }
        };
        if raw.len() as u64 > self.limits.string_length {
            return Err(Issue::limit(
                self.limits.hit("string_length", Some(raw.len() as u64)),
                format!(
                    "a member name of {} bytes (string_length limit {})",
                    raw.len(),
                    self.limits.string_length
                ),
            )
            .at_byte(at));
        }
        normalise(&raw).map_err(|why| bad(format!("member `{}`: {why}", raw.escape_debug()), at))
    }
}

/// The bytes before the first NUL.
fn cstr(field: &[u8]) -> &[u8] {
    let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
    &field[..end]
}

/// A member path made relative and clean: `./a//b/` is `a/b`; absolute paths, `..`, empty
/// names, backslashes and control characters are refused.
pub fn normalise(raw: &str) -> Result<String, &'static str> {
    if raw.starts_with('/') {
        return Err("absolute paths are not allowed");
    }
    if raw.contains('\\') {
        return Err("backslashes are not allowed in member names");
    }
    if raw.chars().any(char::is_control) {
        return Err("control characters are not allowed in member names");
    }
    let mut parts = Vec::new();
    for part in raw.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err("`..` climbs out of the bundle"),
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        return Err("the name is empty");
    }
    Ok(parts.join("/"))
}

/// The header checksum: the sum of the header's bytes with the checksum field as spaces,
/// written in octal; historic writers summed signed bytes, which is accepted too.
fn check_sum(block: &[u8]) -> Result<(), &'static str> {
    let stated = numeric(&block[148..156]).ok_or("the header checksum is not a number")?;
    let (mut unsigned, mut signed) = (0u64, 0i64);
    for (i, &b) in block.iter().enumerate() {
        let b = if (148..156).contains(&i) { b' ' } else { b };
        unsigned += u64::from(b);
        signed += i64::from(b as i8);
    }
    if stated == unsigned || i64::try_from(stated).is_ok_and(|s| s == signed) {
        Ok(())
    } else {
        Err("the header checksum does not match")
    }
}

/// A numeric header field: octal digits (spaces and NULs around them), or GNU's base-256
/// (high bit of the first byte set; a negative value is refused). `None` when malformed or
/// beyond 64 bits.
fn numeric(field: &[u8]) -> Option<u64> {
    if field.first().is_some_and(|&b| b & 0x80 != 0) {
        if field[0] & 0x40 != 0 {
            return None;
        }
        let mut v: u64 = u64::from(field[0] & 0x3F);
        for &b in &field[1..] {
            v = v.checked_mul(256)?.checked_add(u64::from(b))?;
        }
        return Some(v);
    }
    let start = field.iter().position(|&b| b != b' ').unwrap_or(field.len());
    let len = field[start..]
        .iter()
        .position(|&b| b == 0 || b == b' ')
        .unwrap_or(field.len() - start);
    let (text, rest) = field[start..].split_at(len);
    if rest.iter().any(|&b| b != 0 && b != b' ') {
        return None;
    }
    let mut v: u64 = 0;
    for &b in text {
        if !(b'0'..=b'7').contains(&b) {
            return None;
        }
        v = v.checked_mul(8)?.checked_add(u64::from(b - b'0'))?;
    }
    Some(v)
}

/// The records of a pax extended header: `"<len> <key>=<value>\n"`, `len` counting the whole
/// record in bytes. Keys and values must be UTF-8.
fn pax_records(mut buf: &[u8]) -> Result<Vec<(String, String)>, &'static str> {
    let mut out = Vec::new();
    while !buf.is_empty() {
        let space = buf
            .iter()
            .position(|&b| b == b' ')
            .ok_or("a pax record has no length")?;
        let len_text = std::str::from_utf8(&buf[..space])
            .map_err(|_| "a pax record length is not a number")?;
        if len_text.is_empty() || !len_text.bytes().all(|b| b.is_ascii_digit()) {
            return Err("a pax record length is not a number");
        }
        let len: usize = len_text
            .parse()
            .map_err(|_| "a pax record length is too large")?;
        if len <= space + 1 || len > buf.len() || buf[len - 1] != b'\n' {
            return Err("a pax record length does not match its record");
        }
        let record = &buf[space + 1..len - 1];
        let eq = record
            .iter()
            .position(|&b| b == b'=')
            .ok_or("a pax record has no `=`")?;
        let key = std::str::from_utf8(&record[..eq]).map_err(|_| "a pax key is not UTF-8")?;
        let value =
            std::str::from_utf8(&record[eq + 1..]).map_err(|_| "a pax value is not UTF-8")?;
        out.push((key.to_string(), value.to_string()));
        buf = &buf[len..];
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_fields() {
        assert_eq!(numeric(b"00000000017\0"), Some(15));
        assert_eq!(numeric(b"     17 \0\0\0\0"), Some(15));
        assert_eq!(numeric(b"\0\0\0\0\0\0\0\0\0\0\0\0"), Some(0));
        assert_eq!(numeric(b"0000000008\0\0"), None);
        assert_eq!(numeric(b"17 x\0\0\0\0\0\0\0\0"), None);
        assert_eq!(numeric(&[0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0]), Some(256));
        assert_eq!(numeric(&[0xFF; 12]), None);
        assert_eq!(
            numeric(&[0x80, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),
            None
        );
    }

    #[test]
    fn names() {
        assert_eq!(normalise("./a//b/").as_deref(), Ok("a/b"));
        assert!(normalise("/etc/passwd").is_err());
        assert!(normalise("a/../../b").is_err());
        assert!(normalise("./").is_err());
        assert!(normalise("a\\b").is_err());
        assert!(normalise("a\nb").is_err());
    }

    #[test]
    fn pax() {
        let r = pax_records(b"17 path=a/b.json\n11 size=42\n").expect("valid");
        assert_eq!(
            r,
            vec![
                ("path".into(), "a/b.json".into()),
                ("size".into(), "42".into())
            ]
        );
        assert!(pax_records(b"99 path=x\n").is_err());
        assert!(pax_records(b"5 a=b\n").is_err());
        assert!(pax_records(b"x path=a\n").is_err());
    }
}
