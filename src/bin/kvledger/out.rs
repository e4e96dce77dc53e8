//! Everything the CLI prints on stdout goes through [`print`]: a reader that closes the pipe
//! early (`kvledger account ... | head -1`) ends the command quietly instead of a panic. Also
//! the `--json` envelope every command prints (docs/cli.md).

use crate::Failure;
use kvledger::error::ErrorReport;
use kvledger::schema::ENVELOPE_VERSION;
use kvledger::{ErrorCode, ReadError};
use serde::Serialize;
use std::io::{ErrorKind, Write};

/// Append one formatted line to a `String` (writing to a `String` cannot fail).
macro_rules! say {
    ($buf:expr, $($arg:tt)*) => {{
        use std::fmt::Write as _;
        let _ = writeln!($buf, $($arg)*);
    }};
}
pub(crate) use say;

/// Write `text` to stdout. A closed pipe is [`Failure::ClosedPipe`] (a quiet exit); any other
/// write error is an `IO` error.
pub fn print(text: &str) -> Result<(), Failure> {
    let mut so = std::io::stdout().lock();
    so.write_all(text.as_bytes())
        .and_then(|()| so.flush())
        .map_err(|e| write_failure(e.kind(), &e))
}

fn write_failure(kind: ErrorKind, e: &dyn std::fmt::Display) -> Failure {
    match kind {
        ErrorKind::BrokenPipe => Failure::ClosedPipe,
        _ => Failure::Read(ReadError::whole(
            ErrorCode::Io,
            "<stdout>",
            format!("cannot write: {e}"),
        )),
    }
}

/// `{"kvledger": "1", "command": ..., <payload fields>}`: the payload's fields follow the two
/// envelope fields in the payload's own order.
#[derive(Serialize)]
struct Envelope<'a, P: Serialize> {
    kvledger: &'static str,
    command: Option<&'a str>,
    #[serde(flatten)]
    payload: P,
}

/// [`envelope`] written to stdout as it is made: the result of a run of many endpoints is
/// megabytes of JSON (10 MB for 20,000), and made whole first it stood beside the result at
/// the CLI's peak memory. (Serialising our results does not fail; a write error is reported
/// as [`print`] reports it.)
pub fn print_envelope<P: Serialize>(command: Option<&str>, payload: P) -> Result<(), Failure> {
    let env = Envelope {
        kvledger: ENVELOPE_VERSION,
        command,
        payload,
    };
    let mut so = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    serde_json::to_writer(&mut so, &env).map_err(|e| match e.io_error_kind() {
        Some(kind) => write_failure(kind, &e),
        None => serialise_failure(&e),
    })?;
    so.write_all(b"\n")
        .and_then(|()| so.flush())
        .map_err(|e| write_failure(e.kind(), &e))
}

fn serialise_failure(e: &serde_json::Error) -> Failure {
    Failure::Read(ReadError::whole(
        ErrorCode::Io,
        "<stdout>",
        format!("cannot serialise the result: {e}"),
    ))
}

/// One envelope as one line of JSON (JSON Lines: several results give several lines).
pub fn envelope<P: Serialize>(command: Option<&str>, payload: P) -> Result<String, Failure> {
    let env = Envelope {
        kvledger: ENVELOPE_VERSION,
        command,
        payload,
    };
    let mut line = serde_json::to_string(&env).map_err(|e| serialise_failure(&e))?;
    line.push('\n');
    Ok(line)
}

/// `{"error": ...}`: the payload of an error envelope.
#[derive(Serialize)]
pub struct ErrorPayload<E: Serialize> {
    pub error: E,
}

/// The error payload of a reader error (code, file, message, position parts).
pub fn read_error(e: &ReadError) -> ErrorPayload<ErrorReport> {
    ErrorPayload {
        error: ErrorReport::from(e),
    }
}
