//! Errors of the readers: one type with a stable code, the file and the position.
//!
//! Codes are part of the public contract (the CLI prints them, the npm package sets them as
//! `error.code`, consumers switch on them). Add codes; never rename or reuse one.

use serde::Serialize;
use std::fmt;

/// Stable error codes. The string form (`as_str`) is what consumers see.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema,
)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    /// A file could not be read from disk (CLI only).
    Io,
    /// The bytes are not valid UTF-8.
    NotUtf8,
    /// The input is empty where content is required.
    EmptyInput,
    /// JSON syntax error (position: line and column).
    JsonSyntax,
    /// Valid JSON of the wrong shape (position: line, column and JSON path).
    JsonShape,
    /// A CSV export whose header, section or row cannot be read.
    CsvSyntax,
    /// A line of the raw-scrape JSONL that is not a scrape record.
    JsonlRecord,
    /// A line of Prometheus text exposition that cannot be parsed.
    PromSyntax,
    /// A per-request record (`profile_export.jsonl`) that cannot be read.
    ProfileRecord,
    /// A launch-facts value that is not allowed (named in the message).
    LaunchValue,
    /// A timestamp that is missing, negative or not an integer where epoch-ns is required.
    BadTimestamp,
    /// The file's format could not be recognised from its name or content.
    UnknownFormat,
    /// A run directory or file list with no AIPerf artifact in it.
    NoArtifacts,
    /// Two inputs claim the same role (e.g. two server-metrics JSON exports for one run).
    DuplicateInput,
    /// The caller's options are not valid.
    BadOptions,
    /// A key or series repeated with different content (e.g. a metric family twice in a
    /// server-metrics JSON export): position of the second occurrence, key named.
    DuplicateKey,
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 16] = [
        ErrorCode::Io,
        ErrorCode::NotUtf8,
        ErrorCode::EmptyInput,
        ErrorCode::JsonSyntax,
        ErrorCode::JsonShape,
        ErrorCode::CsvSyntax,
        ErrorCode::JsonlRecord,
        ErrorCode::PromSyntax,
        ErrorCode::ProfileRecord,
        ErrorCode::LaunchValue,
        ErrorCode::BadTimestamp,
        ErrorCode::UnknownFormat,
        ErrorCode::NoArtifacts,
        ErrorCode::DuplicateInput,
        ErrorCode::BadOptions,
        ErrorCode::DuplicateKey,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::Io => "IO",
            ErrorCode::NotUtf8 => "NOT_UTF8",
            ErrorCode::EmptyInput => "EMPTY_INPUT",
            ErrorCode::JsonSyntax => "JSON_SYNTAX",
            ErrorCode::JsonShape => "JSON_SHAPE",
            ErrorCode::CsvSyntax => "CSV_SYNTAX",
            ErrorCode::JsonlRecord => "JSONL_RECORD",
            ErrorCode::PromSyntax => "PROM_SYNTAX",
            ErrorCode::ProfileRecord => "PROFILE_RECORD",
            ErrorCode::LaunchValue => "LAUNCH_VALUE",
            ErrorCode::BadTimestamp => "BAD_TIMESTAMP",
            ErrorCode::UnknownFormat => "UNKNOWN_FORMAT",
            ErrorCode::NoArtifacts => "NO_ARTIFACTS",
            ErrorCode::DuplicateInput => "DUPLICATE_INPUT",
            ErrorCode::BadOptions => "BAD_OPTIONS",
            ErrorCode::DuplicateKey => "DUPLICATE_KEY",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where in a file an error sits. Lines and columns are 1-based.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub struct Position {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub column: Option<u32>,
    /// Byte offset from the start of the file, where known.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub byte_offset: Option<u32>,
    /// JSON path of the offending value, e.g. `metrics.vllm:prompt_tokens.series[2].stats.total`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub json_path: Option<String>,
}

impl Position {
    pub fn line(line: usize) -> Self {
        Position {
            line: Some(clamp_u32(line)),
            ..Default::default()
        }
    }

    pub fn line_col(line: usize, column: usize) -> Self {
        Position {
            line: Some(clamp_u32(line)),
            column: Some(clamp_u32(column)),
            ..Default::default()
        }
    }

    pub fn is_empty(&self) -> bool {
        self.line.is_none()
            && self.column.is_none()
            && self.byte_offset.is_none()
            && self.json_path.is_none()
    }
}

pub(crate) fn clamp_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(l) = self.line {
            parts.push(format!("line {l}"));
        }
        if let Some(c) = self.column {
            parts.push(format!("column {c}"));
        }
        if let Some(b) = self.byte_offset {
            parts.push(format!("byte {b}"));
        }
        if let Some(p) = &self.json_path {
            parts.push(format!("at `{p}`"));
        }
        f.write_str(&parts.join(", "))
    }
}

/// A reader error: stable code, the file it concerns, where in it, and a human message.
/// (In JS it is thrown as an `Error` named `ReadError`: see `KvledgerError` in the d.ts.)
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub struct ReadError {
    pub code: ErrorCode,
    pub file: String,
    pub position: Position,
    pub message: String,
}

impl ReadError {
    pub fn new(
        code: ErrorCode,
        file: &str,
        position: Position,
        message: impl Into<String>,
    ) -> Self {
        ReadError {
            code,
            file: file.to_string(),
            position,
            message: message.into(),
        }
    }

    /// An error about the file as a whole (no position).
    pub fn whole(code: ErrorCode, file: &str, message: impl Into<String>) -> Self {
        Self::new(code, file, Position::default(), message)
    }

    /// Map a JSON error (optionally with its path) into a reader error.
    pub fn from_json(file: &str, err: &serde_json::Error, path: Option<String>) -> Self {
        use serde_json::error::Category;
        let code = match err.classify() {
            Category::Data => ErrorCode::JsonShape,
            Category::Eof if err.line() == 0 => ErrorCode::EmptyInput,
            Category::Syntax | Category::Eof | Category::Io => ErrorCode::JsonSyntax,
        };
        let mut position = if err.line() > 0 {
            Position::line_col(err.line(), err.column())
        } else {
            Position::default()
        };
        position.json_path = path.filter(|p| !p.is_empty() && p != ".");
        ReadError::new(code, file, position, strip_serde_position(&err.to_string()))
    }
}

/// serde_json appends " at line L column C" to its messages; the position is kept separately.
fn strip_serde_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} in {}", self.code, self.file)?;
        if !self.position.is_empty() {
            write!(f, " ({})", self.position)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ReadError {}

/// A run's error as sweep outputs carry it in the run's place (CLI `--json` lines, the WASM
/// `accountRuns` / `inspectRuns` arrays): snake_case like every result kvledger defines, the
/// position's parts flattened and omitted when unknown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct ErrorReport {
    pub code: ErrorCode,
    /// The input file concerned; absent for an error of the call or command line itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub file: Option<String>,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub column: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub byte_offset: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub json_path: Option<String>,
}

impl From<&ReadError> for ErrorReport {
    fn from(e: &ReadError) -> Self {
        ErrorReport {
            code: e.code,
            file: (!e.file.is_empty()).then(|| e.file.clone()),
            message: e.message.clone(),
            line: e.position.line,
            column: e.position.column,
            byte_offset: e.position.byte_offset,
            json_path: e.position.json_path.clone(),
        }
    }
}

impl ErrorReport {
    /// An error of the call itself (a bad option or argument): no file, no position.
    pub fn usage(message: impl Into<String>) -> Self {
        ErrorReport {
            code: ErrorCode::BadOptions,
            file: None,
            message: message.into(),
            line: None,
            column: None,
            byte_offset: None,
            json_path: None,
        }
    }
}

/// One run of a sweep: its root relative to the folder given, and its result or its error.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[schemars(rename = "RunOutcome_{T}")]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct RunOutcome<T> {
    pub run: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub result: Option<T>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub error: Option<ErrorReport>,
}

impl<T> RunOutcome<T> {
    pub fn new(run: impl Into<String>, result: Result<T, &ReadError>) -> Self {
        let (result, error) = match result {
            Ok(v) => (Some(v), None),
            Err(e) => (None, Some(ErrorReport::from(e))),
        };
        RunOutcome {
            run: run.into(),
            result,
            error,
        }
    }
}
