//! Where an input comes from: a file, or stdin when the path is `-`. Stdin can be read once,
//! so at most one `-` is accepted per command line.

use crate::Failure;
use kvledger::error::Position;
use kvledger::{ErrorCode, ReadError};
use std::io::Read;
use std::path::Path;

/// How a stdin input is named in errors and results (there is no file name).
pub const STDIN_LABEL: &str = "<stdin>";

pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// The name a file is shown under: its path as given, or `<stdin>`.
pub fn label(path: &Path) -> String {
    if is_stdin(path) {
        STDIN_LABEL.to_string()
    } else {
        path.display().to_string()
    }
}

/// Every byte of stdin.
pub fn stdin_bytes() -> Result<Vec<u8>, ReadError> {
    let mut buf = Vec::new();
    std::io::stdin()
        .lock()
        .read_to_end(&mut buf)
        .map_err(|e| ReadError::whole(ErrorCode::Io, STDIN_LABEL, format!("cannot read: {e}")))?;
    Ok(buf)
}

/// The text of a file, or of stdin for `-`: (label, text). Not UTF-8 is `NOT_UTF8` at the
/// first bad byte.
pub fn read_text(path: &Path) -> Result<(String, String), ReadError> {
    let name = label(path);
    let bytes = if is_stdin(path) {
        stdin_bytes()?
    } else {
        std::fs::read(path)
            .map_err(|e| ReadError::whole(ErrorCode::Io, &name, format!("cannot read: {e}")))?
    };
    let text = String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let position = Position {
            byte_offset: Some(u32::try_from(at).unwrap_or(u32::MAX)),
            ..Position::default()
        };
        ReadError::new(
            ErrorCode::NotUtf8,
            &name,
            position,
            "the file is not UTF-8 text",
        )
    })?;
    Ok((name, text))
}

/// Refuse a command line that gives `-` (stdin) to more than one input: `uses` names each
/// input (`--policy`, `the run's files`) with whether it is `-`.
pub fn stdin_once(uses: &[(&str, bool)]) -> Result<(), Failure> {
    let named: Vec<&str> = uses.iter().filter(|(_, s)| *s).map(|(n, _)| *n).collect();
    match named.as_slice() {
        [first, second, ..] => Err(Failure::Usage(format!(
            "`-` (stdin) given for {first} and for {second}: stdin can be read once"
        ))),
        _ => Ok(()),
    }
}
