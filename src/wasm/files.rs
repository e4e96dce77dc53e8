//! The `files` argument of the whole-buffer calls (`accountRun`, `inspectRun`, and their
//! sweeps): checked field by field, then read from JavaScript as the run's reader needs it. A
//! typed array or a string is streamed into wasm memory a chunk at a time, so a call's linear
//! memory grows with what is kept of its files, not with their size. (The server-metrics JSON
//! export was copied in whole while it parsed faster so; since its skipped values are passed
//! over by the JSON cursor it streams faster, in a tenth of the memory.)

use super::stream::heap_in_use;
use crate::options::{one_content, OptionsError};
use crate::read::discover::normalise_path;
use crate::read::run::{ByteSource, InputData, MemoryBudget};
use crate::read::InputFile;
use js_sys::{Array, ArrayBuffer, JsString, Object, Reflect, Uint8Array};
use std::io::Read;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// The heap a whole-buffer call may use while it reads (a wasm32 instance has at most 4 GiB):
/// past it the file being read fails with `INPUT_TOO_LARGE` instead of the instance trapping
/// when it cannot grow, and the instance stays usable.
pub(crate) const WHOLE_CALL_BUDGET: MemoryBudget = MemoryBudget {
    limit: 3 << 30,
    in_use: heap_in_use,
    ceiling: None,
};

/// A file's content as the caller gave it, still in JavaScript.
pub(crate) enum Content {
    /// A `Uint8Array` over the bytes of any typed array, `DataView` or `ArrayBuffer` given.
    Bytes(Uint8Array),
    Text(JsString),
}

/// One file of a call: its name and content, not yet read.
pub(crate) struct FileArg {
    name: String,
    content: Content,
}

/// A file as the run's reader takes it: read from JavaScript as it streams.
pub(crate) struct Held(String, Content);

/// What a JS value is, for messages ("got null").
fn describe(v: &JsValue) -> &'static str {
    if v.is_null() {
        "null"
    } else if v.is_undefined() {
        "undefined"
    } else if Array::is_array(v) {
        "an array"
    } else if v.is_string() {
        "a string"
    } else if v.as_f64().is_some() {
        "a number"
    } else if v.is_bigint() {
        "a bigint"
    } else if v.is_function() {
        "a function"
    } else if v.as_bool().is_some() {
        "a boolean"
    } else if v.is_object() {
        "an object"
    } else {
        "a symbol"
    }
}

const FILE_FIELDS: [&str; 3] = ["name", "text", "bytes"];

/// Field `key` of a file object; a getter that throws is a malformed call, not a crash.
fn field(file: &JsValue, key: &str, at: &str) -> Result<JsValue, OptionsError> {
    Reflect::get(file, &JsValue::from_str(key))
        .map_err(|_| OptionsError::new(format!("{at}.{key}"), "reading the field threw"))
}

/// A `Uint8Array` over the bytes of a `Uint8Array`, any other typed-array view or an
/// `ArrayBuffer` (nothing copied); `None` for anything else.
fn byte_view(v: &JsValue) -> Option<Uint8Array> {
    if let Some(u8s) = v.dyn_ref::<Uint8Array>() {
        return Some(u8s.clone());
    }
    if let Some(buf) = v.dyn_ref::<ArrayBuffer>() {
        return Some(Uint8Array::new(buf));
    }
    if ArrayBuffer::is_view(v) {
        let buffer = Reflect::get(v, &"buffer".into()).ok()?;
        let offset = Reflect::get(v, &"byteOffset".into()).ok()?.as_f64()?;
        let length = Reflect::get(v, &"byteLength".into()).ok()?.as_f64()?;
        return Some(Uint8Array::new_with_byte_offset_and_length(
            &buffer,
            offset as u32,
            length as u32,
        ));
    }
    None
}

/// One element of the files array, checked as serde would check `RunFileInput` (unknown
/// fields by name, types), read field by field so the contents never go through JSON.
fn file_arg(file: &JsValue, at: &str) -> Result<FileArg, OptionsError> {
    if !file.is_object() || Array::is_array(file) || file.is_function() {
        return Err(OptionsError::new(
            at,
            format!(
                "expected a file {{name, text | bytes}}, got {}",
                describe(file)
            ),
        ));
    }
    for key in Object::keys(file.unchecked_ref::<Object>()).iter() {
        let key = key.as_string().unwrap_or_default();
        if !FILE_FIELDS.contains(&key.as_str()) {
            return Err(OptionsError::new(
                format!("{at}.{key}"),
                format!("unknown field `{key}`, expected one of `name`, `text`, `bytes`"),
            ));
        }
    }
    let name = field(file, "name", at)?;
    let name = match name.as_string() {
        Some(n) => n,
        None if name.is_undefined() => {
            return Err(OptionsError::new(at, "missing field `name`"));
        }
        None => {
            return Err(OptionsError::new(
                format!("{at}.name"),
                format!("expected a string, got {}", describe(&name)),
            ))
        }
    };
    let text = field(file, "text", at)?;
    let text = if text.is_string() {
        Some(Content::Text(text.unchecked_into()))
    } else if text.is_undefined() {
        None
    } else {
        return Err(OptionsError::new(
            format!("{at}.text"),
            format!("expected a string, got {}", describe(&text)),
        ));
    };
    let bytes = field(file, "bytes", at)?;
    let bytes = match byte_view(&bytes) {
        Some(b) => Some(Content::Bytes(b)),
        None if bytes.is_undefined() => None,
        None => {
            return Err(OptionsError::new(
                format!("{at}.bytes"),
                format!(
                    "expected a Uint8Array or an ArrayBuffer, got {}",
                    describe(&bytes)
                ),
            ))
        }
    };
    let content = one_content(&name, text, bytes, at)?;
    Ok(FileArg { name, content })
}

/// The `files` argument: an array of `{name, text | bytes}`.
pub(crate) fn files_arg(files: &JsValue) -> Result<Vec<FileArg>, OptionsError> {
    let Some(array) = files.dyn_ref::<Array>() else {
        return Err(OptionsError::new(
            "files",
            format!(
                "expected an array of files {{name, text | bytes}}, got {}",
                describe(files)
            ),
        ));
    };
    let mut out = Vec::with_capacity(array.length() as usize);
    for (i, file) in array.iter().enumerate() {
        out.push(file_arg(&file, &format!("files[{i}]"))?);
    }
    Ok(out)
}

/// Files of a dropped folder: names are relative paths, each path once.
pub(crate) fn sweep_files_arg(files: &JsValue) -> Result<Vec<FileArg>, OptionsError> {
    let args = files_arg(files)?;
    let mut seen = std::collections::BTreeSet::new();
    for (i, f) in args.iter().enumerate() {
        if !seen.insert(normalise_path(&f.name)) {
            return Err(OptionsError::new(
                format!("files[{i}].name"),
                format!("`{}` is given twice (names are relative paths)", f.name),
            ));
        }
    }
    Ok(args)
}

/// The files as the run's reader takes them: left in JavaScript, streamed as it reads.
pub(crate) fn hold(files: Vec<FileArg>) -> Vec<Held> {
    files.into_iter().map(|f| Held(f.name, f.content)).collect()
}

pub(crate) fn inputs_of(held: &[Held]) -> Vec<InputFile<'_>> {
    held.iter()
        .map(|Held(name, content)| InputFile {
            name: name.clone(),
            data: InputData::Source(content),
        })
        .collect()
}

impl ByteSource for Content {
    fn size(&self) -> Option<u64> {
        match self {
            Content::Bytes(b) => Some(u64::from(b.length())),
            // Its UTF-8 length is only known once encoded.
            Content::Text(_) => None,
        }
    }

    fn reader(&self) -> Box<dyn Read + '_> {
        match self {
            Content::Bytes(array) => Box::new(ArrayReader { array, at: 0 }),
            Content::Text(text) => Box::new(TextReader {
                text,
                at: 0,
                piece: Vec::new(),
                taken: 0,
            }),
        }
    }
}

/// A typed array's bytes, copied into the reader's buffer as it asks.
struct ArrayReader<'a> {
    array: &'a Uint8Array,
    at: u32,
}

impl Read for ArrayReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self.array.length().saturating_sub(self.at);
        let n = left.min(u32::try_from(buf.len()).unwrap_or(u32::MAX));
        if n == 0 {
            return Ok(0);
        }
        let piece = self.array.subarray(self.at, self.at + n);
        // Only a buffer resized by another thread could make the piece shorter.
        if piece.length() != n {
            return Err(std::io::Error::other("the array changed while it was read"));
        }
        piece.copy_to(&mut buf[..n as usize]);
        self.at += n;
        Ok(n as usize)
    }
}

/// UTF-16 code units of a string encoded at a time.
const TEXT_PIECE: u32 = 1 << 20;

/// A string's UTF-8, encoded a piece at a time. A piece never ends between the two halves of
/// a surrogate pair, so the bytes are those of the string encoded whole (a lone surrogate
/// becomes U+FFFD either way).
struct TextReader<'a> {
    text: &'a JsString,
    /// UTF-16 code units encoded so far.
    at: u32,
    piece: Vec<u8>,
    /// Bytes of `piece` read.
    taken: usize,
}

impl TextReader<'_> {
    /// Encode the next piece; `false` at the end of the string.
    fn next_piece(&mut self) -> bool {
        let len = self.text.length();
        if self.at >= len {
            return false;
        }
        let mut end = self.at.saturating_add(TEXT_PIECE).min(len);
        if end < len && is_high_surrogate(self.text.char_code_at(end - 1)) {
            end -= 1;
        }
        self.piece = self
            .text
            .slice(self.at, end)
            .as_string()
            .unwrap_or_default()
            .into_bytes();
        self.taken = 0;
        self.at = end;
        true
    }
}

fn is_high_surrogate(unit: f64) -> bool {
    (f64::from(0xD800u16)..=f64::from(0xDBFFu16)).contains(&unit)
}

impl Read for TextReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.taken == self.piece.len() {
            if !self.next_piece() {
                return Ok(0);
            }
        }
        let n = (self.piece.len() - self.taken).min(buf.len());
        buf[..n].copy_from_slice(&self.piece[self.taken..self.taken + n]);
        self.taken += n;
        Ok(n)
    }
}
