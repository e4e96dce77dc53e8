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
    /// A count above 2^53 − 1 (9007199254740991, `Number.MAX_SAFE_INTEGER`): a counter's
    /// cumulative value (server-metrics JSON or CSV totals, raw scrape and Prometheus text
    /// samples), a histogram bucket or `count`, a per-request token count or a run-summary
    /// count. Counts travel as JSON numbers, which are exact only up to 2^53 − 1, so such a
    /// value cannot be reported exactly. The message names the value; position: line, column
    /// and JSON path (CSV: line and column) of the value.
    CountTooLarge,
    /// An input larger than kvledger may hold: one JSON value or line beyond the most a reader
    /// buffers (a series, a scrape, a record: position, where it starts); a file streamed to
    /// the WASM streaming API whose evidence goes past its memory budget (`memory_budget`,
    /// default 48 MiB: position, the byte of the file reached) or whose accounting would (a
    /// table of its series that would pass the budget, or take linear memory past the budget
    /// plus 16 MiB: file `accounting`); or inputs of a
    /// whole-buffer call that cannot fit in a WebAssembly instance's 4 GiB. A typed refusal
    /// before memory runs out: nothing is left allocated, the next call runs as usual.
    InputTooLarge,
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 18] = [
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
        ErrorCode::CountTooLarge,
        ErrorCode::InputTooLarge,
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
            ErrorCode::CountTooLarge => "COUNT_TOO_LARGE",
            ErrorCode::InputTooLarge => "INPUT_TOO_LARGE",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where in a file an error sits. Lines and columns are 1-based; a column counts UTF-8
/// characters (not bytes) from the start of its line, so `é` or `😀` is one column, as in an
/// editor. A part that is not known is omitted, never given as 0 or a placeholder: a JSON path
/// stops before the first step that cannot be named.
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

    /// Map a JSON error (optionally with its path, as `serde_path_to_error` shows it) into a
    /// reader error. Without the text, a column is serde_json's byte count; prefer
    /// [`ReadError::from_json_text`] when the text is at hand.
    pub fn from_json(file: &str, err: &serde_json::Error, path: Option<String>) -> Self {
        let mut position = match (err.line(), err.column()) {
            (0, _) => Position::default(),
            // Column 0: the last byte read was the newline ending the line before.
            (l, 0) if l > 1 => Position::line(l - 1),
            (_, 0) => Position::default(),
            (l, c) => Position::line_col(l, c),
        };
        position.json_path = path.as_deref().and_then(clean_path_text);
        ReadError::new(json_code(err), file, position, json_message(err))
    }

    /// [`ReadError::from_json`] for an error from parsing `text`: the column counts
    /// characters, and an error about a value (`invalid type: …`) is at the value's start.
    /// Native only (the CLI tracks paths; the wasm build does not carry the tracker).
    #[cfg(any(test, not(target_arch = "wasm32")))]
    pub fn from_json_text(
        file: &str,
        text: &str,
        err: &serde_json::Error,
        path: Option<&serde_path_to_error::Path>,
    ) -> Self {
        Self::from_json_text_at(file, text, err, path.and_then(json_path))
    }

    /// [`ReadError::from_json_text`] with the path already shown (`json_path::shown`).
    pub fn from_json_text_at(
        file: &str,
        text: &str,
        err: &serde_json::Error,
        json_path: Option<String>,
    ) -> Self {
        let mut position = crate::read::locate::serde_error_position(text.as_bytes(), err)
            .map(|p| p.position())
            .unwrap_or_default();
        position.json_path = json_path;
        ReadError::new(json_code(err), file, position, json_message(err))
    }
}

/// The error code of a serde_json error.
pub(crate) fn json_code(err: &serde_json::Error) -> ErrorCode {
    use serde_json::error::Category;
    match err.classify() {
        Category::Data => ErrorCode::JsonShape,
        Category::Eof if err.line() == 0 => ErrorCode::EmptyInput,
        Category::Syntax | Category::Eof => ErrorCode::JsonSyntax,
        Category::Io => ErrorCode::Io,
    }
}

/// serde_json's message without its " at line L column C" (the position is kept apart) and in
/// the words of JSON rather than of Rust types.
pub(crate) fn json_message(err: &serde_json::Error) -> String {
    user_words(strip_serde_position(&err.to_string()))
}

/// A JSON path from `serde_path_to_error`, cut before the first step it could not name (a `?`:
/// map keys that are not strings, untagged or flattened values): the part shown is true, the
/// error lies inside it. `None` when nothing can be named.
#[cfg(any(test, not(target_arch = "wasm32")))]
pub(crate) fn json_path(path: &serde_path_to_error::Path) -> Option<String> {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for seg in path.iter() {
        match seg {
            Segment::Seq { index } => {
                out.push('[');
                out.push_str(&index.to_string());
                out.push(']');
            }
            Segment::Map { key } | Segment::Enum { variant: key } => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Segment::Unknown => break,
        }
    }
    (!out.is_empty()).then_some(out)
}

/// A path already shown as text: cut at the first `?` step; `.` (the root) is no path.
fn clean_path_text(p: &str) -> Option<String> {
    let cut = p
        .split('.')
        .take_while(|s| *s != "?" && !s.starts_with("?["))
        .collect::<Vec<_>>()
        .join(".");
    (!cut.chars().all(|c| c == '.')).then_some(cut)
}

/// serde_json appends " at line L column C" to its messages; the position is kept separately.
fn strip_serde_position(msg: &str) -> &str {
    match msg.rfind(" at line ") {
        Some(i) => msg.get(..i).unwrap_or(msg),
        None => msg,
    }
}

/// Rewrite serde's wording of types (`expected f64`, `expected struct RawFamily`, `invalid
/// type: map`) in JSON's words (`expected a number`, `expected an object`, `invalid type:
/// object`). Messages written by kvledger pass through unchanged.
pub(crate) fn user_words(msg: &str) -> String {
    for lead in ["invalid type: ", "invalid value: "] {
        if let Some(rest) = msg.strip_prefix(lead) {
            let (found, expected) = match rest.rsplit_once(", expected ") {
                Some((f, e)) => (f, Some(e)),
                None => (rest, None),
            };
            let mut out = format!("{lead}{}", found_words(found));
            if let Some(e) = expected {
                out.push_str(", expected ");
                out.push_str(&expected_words(e));
            }
            return out;
        }
    }
    if let Some(rest) = msg.strip_prefix("invalid length ") {
        if let Some((n, e)) = rest.split_once(", expected ") {
            return format!("invalid length {n}, expected {}", expected_words(e));
        }
    }
    msg.to_string()
}

/// What serde found (its `Unexpected`), in JSON terms.
fn found_words(found: &str) -> String {
    match found {
        "unit value" | "unit" => "null".to_string(),
        "map" => "object".to_string(),
        "sequence" => "array".to_string(),
        "Option value" => "a value".to_string(),
        f => match f.strip_prefix("floating point ") {
            Some(v) => format!("number {v}"),
            None => f.to_string(),
        },
    }
}

/// What serde expected, in JSON terms: Rust type names never reach users.
fn expected_words(e: &str) -> String {
    let words = match e {
        "f64" | "f32" => "a number",
        "u64" | "u16" | "u8" | "usize" => "a non-negative integer",
        "u32" => "a non-negative integer of at most 4294967295",
        "i64" | "i32" | "i16" | "i8" | "isize" => "an integer",
        "a sequence" | "tuple" => "an array",
        "a map" => "an object",
        "unit" => "null",
        "a borrowed string" => "a string",
        "option" => "a value or null",
        other if other.starts_with("struct ") => "an object",
        other if other.starts_with("tuple struct ") || other.starts_with("tuple of ") => "an array",
        other if other.starts_with("enum ") => "one of the allowed values",
        other => return other.to_string(),
    };
    words.to_string()
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
    #[serde(flatten)]
    pub position: Position,
}

impl From<&ReadError> for ErrorReport {
    fn from(e: &ReadError) -> Self {
        ErrorReport {
            code: e.code,
            file: (!e.file.is_empty()).then(|| e.file.clone()),
            message: e.message.clone(),
            position: e.position.clone(),
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
            position: Position::default(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use std::collections::BTreeMap;

    #[test]
    fn codes_are_listed_once_and_serialise_as_shown() {
        let mut seen = std::collections::BTreeSet::new();
        for code in ErrorCode::ALL {
            assert!(seen.insert(code.as_str()), "{code} twice");
            let json = serde_json::to_string(&code).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", code.as_str()));
        }
        assert_eq!(ErrorCode::CountTooLarge.as_str(), "COUNT_TOO_LARGE");
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Inner {
        n: u32,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Flat {
        name: String,
        #[serde(flatten)]
        inner: Inner,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Outer {
        items: Vec<Flat>,
        by_id: Option<BTreeMap<u8, Inner>>,
    }

    fn error_of(text: &str) -> ReadError {
        let de = &mut serde_json::Deserializer::from_str(text);
        match serde_path_to_error::deserialize::<_, Outer>(de) {
            Ok(v) => panic!("{text} parsed: {v:?}"),
            Err(e) => ReadError::from_json_text("f.json", text, e.inner(), Some(e.path())),
        }
    }

    #[test]
    fn paths_stop_before_what_serde_cannot_name() {
        // Inside a flattened struct serde_path_to_error loses the step (`items[0].?`).
        let e = error_of("{\"items\": [{\"name\": \"a\", \"n\": \"x\"}]}");
        assert_eq!(e.code, ErrorCode::JsonShape);
        assert_eq!(e.position.json_path.as_deref(), Some("items[0]"), "{e}");
        assert!(!e.message.contains("u32"), "{e}");
        let e = error_of("{\"items\": [], \"by_id\": {\"1\": {\"n\": -1}}}");
        assert_eq!(e.position.json_path.as_deref(), Some("by_id.1.n"), "{e}");
        assert!(
            e.message
                .ends_with("expected a non-negative integer of at most 4294967295"),
            "{e}"
        );
        assert_eq!(clean_path_text("items[0].?").as_deref(), Some("items[0]"));
        assert_eq!(clean_path_text("?"), None);
        assert_eq!(clean_path_text("."), None);
    }

    #[test]
    fn serde_words_become_json_words() {
        for (serde, user) in [
            (
                "invalid type: string \"x\", expected f64",
                "invalid type: string \"x\", expected a number",
            ),
            (
                "invalid type: sequence, expected struct RawFamily",
                "invalid type: array, expected an object",
            ),
            (
                "invalid type: map, expected a sequence",
                "invalid type: object, expected an array",
            ),
            (
                "invalid type: unit value, expected a string",
                "invalid type: null, expected a string",
            ),
            (
                "invalid type: floating point `1.5`, expected u64",
                "invalid type: number `1.5`, expected a non-negative integer",
            ),
            (
                "invalid value: integer `-1`, expected enum Role",
                "invalid value: integer `-1`, expected one of the allowed values",
            ),
            (
                "invalid length 1, expected tuple struct Pair",
                "invalid length 1, expected an array",
            ),
            ("missing field `type`", "missing field `type`"),
            (
                "invalid type: string \"x\", expected a metric family object",
                "invalid type: string \"x\", expected a metric family object",
            ),
        ] {
            assert_eq!(user_words(serde), user);
        }
    }

    #[test]
    fn a_column_is_never_0() {
        // serde_json: line 2, column 0 (the newline ending line 1 was the last byte read).
        let text = "{\"a\": 1\n";
        let de = &mut serde_json::Deserializer::from_str(text);
        let err = match serde_path_to_error::deserialize::<_, serde_json::Value>(de) {
            Ok(_) => panic!("truncated"),
            Err(e) => e,
        };
        assert_eq!((err.inner().line(), err.inner().column()), (2, 0));
        let e = ReadError::from_json_text("f", text, err.inner(), Some(err.path()));
        assert_eq!((e.position.line, e.position.column), (Some(1), Some(8)));
        let e = ReadError::from_json("f", err.inner(), None);
        assert_eq!((e.position.line, e.position.column), (Some(1), None));
    }
}
