//! Errors of JSON parsed from a slice (a run summary, one value of the server-metrics export):
//! serde_json reports a line and a byte column at the last byte it read, possibly after
//! closing the objects around the fault; an error about a value (a count a visitor refused, a
//! value of the wrong type) is moved back to the value's first byte, and columns count
//! characters.

use crate::error::{json_code, json_message, ErrorCode, Position, ReadError};
use crate::read::count;
use crate::read::locate::{
    position_of_byte, serde_error_position, serde_offset, value_start, LineCol,
};

/// The error of JSON `text` that failed with `err` at `path`: empty input, a count refused by
/// a visitor (at its number; `what` names it from its path), or serde_json's own error.
pub(crate) fn slice_error(
    file: &str,
    text: &[u8],
    err: &serde_json::Error,
    path: Option<String>,
    what: impl FnOnce(&str) -> String,
) -> ReadError {
    if text
        .iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
    {
        // Whitespace only counts as empty, though serde_json reports it as a syntax EOF.
        return ReadError::whole(ErrorCode::EmptyInput, file, "the file is empty");
    }
    if let Some(shown) = count::refused_in_visitor(err) {
        let what = what(path.as_deref().unwrap_or(""));
        return count::refuse(
            file,
            at(refused_number_position(text, err), path),
            &what,
            &shown,
        );
    }
    let pos = serde_error_position(text, err);
    ReadError::new(json_code(err), file, at(pos, path), json_message(err))
}

/// The position of the number a visitor refused (serde_json reports it after the value).
pub(crate) fn refused_number_position(bytes: &[u8], err: &serde_json::Error) -> Option<LineCol> {
    let point = serde_offset(bytes, err.line(), err.column())?;
    let byte_at = |o: u64| usize::try_from(o).ok().and_then(|i| bytes.get(i).copied());
    let start = value_start(byte_at, point as u64)?;
    Some(position_of_byte(bytes, start as usize))
}

/// A position from an optional line/column and an optional JSON path.
pub(crate) fn at(pos: Option<LineCol>, json_path: Option<String>) -> Position {
    Position {
        json_path,
        ..pos.map(LineCol::position).unwrap_or_default()
    }
}
