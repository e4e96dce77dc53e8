//! The verdict's codes and its shape. Codes are stable strings consumers switch on (the edge
//! worker maps them to HTTP statuses through the verdict's `outcome`): add codes, never
//! rename or reuse one. docs/validate.md lists them (a test keeps the two in step).

use super::limits::{LimitHit, UploadLimits};
use crate::account::Accounting;
use crate::error::{ErrorCode, Position};
use serde::Serialize;

/// What an upload's verdict says, error or warning. Each code is one or the other, always.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum UploadCode {
    /// Error (`limit_exceeded`): a limit was reached; `limit` names it, its value and what was
    /// observed. Reading stopped there.
    LimitExceeded,
    /// Error (`malformed`): the upload has no bytes.
    EmptyUpload,
    /// Error (`malformed`): the upload is neither gzip, nor a tar bundle, nor a JSON object.
    UnknownFormat,
    /// Error (`malformed`): the gzip stream is broken: a bad header, corrupt deflate data, a
    /// CRC-32 or length that does not match, or a stream cut short.
    BadGzip,
    /// Error (`malformed`): the tar bundle is broken or unsafe: a header checksum that does
    /// not match, a size that is not a number, a member name that is absolute, climbs out
    /// (`..`) or repeats, a link or device member, a bad pax record, or an archive cut short.
    BadBundle,
    /// Error (`malformed`): a tar bundle without the result JSON (`result.json`).
    ResultMissing,
    /// Error (`malformed`): the result JSON is not JSON (syntax, not UTF-8, not one value).
    MalformedJson,
    /// Error (`malformed`): a key repeated in one object of the result JSON (parsers differ
    /// on which one wins, so a repeat could show one claim and price another).
    DuplicateKey,
    /// Error (`malformed`): valid JSON of the wrong shape: the result is not an object, a
    /// cache field has the wrong type, a status is not one of the contract's.
    Schema,
    /// Error (`claims_refused`): a cache field out of its range: a rate outside [0, 1], a
    /// token count negative, fractional or above 2^53 − 1.
    OutOfRange,
    /// Error (`claims_refused`): the upload contradicts itself: `pricing_eligible` true
    /// with a status other than `VALID_COMPLETE`, or the same claim given twice (flat and
    /// nested keys) with different values.
    ClaimInconsistent,
    /// Error (`claims_refused`): a claim the raw artifacts contradict: a status other than
    /// the recomputed one, a rate outside the recomputed interval widened by the policy's
    /// `max_rate_width`.
    ClaimContradicted,
    /// Error (`claims_refused`): the upload claims the rate may be priced and the evidence
    /// it carries does not support it (the recomputed verdict is not eligible).
    EligibilityUnsupported,
    /// Error (`malformed`): a raw artifact of the bundle cannot be read; `artifact_code` is
    /// the reader's own code (`JSON_SYNTAX`, `CSV_SYNTAX`, `COUNT_TOO_LARGE`, ...).
    ArtifactUnreadable,
    /// Warning: a claim nothing in the upload can check (no raw artifacts, or the evidence
    /// bounds the value only loosely): accepted as unverified, never as measured, so strict
    /// pricing will not use it.
    ClaimUnverified,
    /// Warning: an informational claim (token totals, KV pool, theoretical rate) differs
    /// from the recomputation; it does not decide pricing eligibility.
    ClaimMismatch,
    /// Warning: the result JSON carries no cache claim at all.
    NoClaims,
    /// Warning: a file of the bundle is not read (not a format kvledger reads).
    FileIgnored,
}

impl UploadCode {
    pub const ALL: [UploadCode; 18] = [
        UploadCode::LimitExceeded,
        UploadCode::EmptyUpload,
        UploadCode::UnknownFormat,
        UploadCode::BadGzip,
        UploadCode::BadBundle,
        UploadCode::ResultMissing,
        UploadCode::MalformedJson,
        UploadCode::DuplicateKey,
        UploadCode::Schema,
        UploadCode::OutOfRange,
        UploadCode::ClaimInconsistent,
        UploadCode::ClaimContradicted,
        UploadCode::EligibilityUnsupported,
        UploadCode::ArtifactUnreadable,
        UploadCode::ClaimUnverified,
        UploadCode::ClaimMismatch,
        UploadCode::NoClaims,
        UploadCode::FileIgnored,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            UploadCode::LimitExceeded => "LIMIT_EXCEEDED",
            UploadCode::EmptyUpload => "EMPTY_UPLOAD",
            UploadCode::UnknownFormat => "UNKNOWN_FORMAT",
            UploadCode::BadGzip => "BAD_GZIP",
            UploadCode::BadBundle => "BAD_BUNDLE",
            UploadCode::ResultMissing => "RESULT_MISSING",
            UploadCode::MalformedJson => "MALFORMED_JSON",
            UploadCode::DuplicateKey => "DUPLICATE_KEY",
            UploadCode::Schema => "SCHEMA",
            UploadCode::OutOfRange => "OUT_OF_RANGE",
            UploadCode::ClaimInconsistent => "CLAIM_INCONSISTENT",
            UploadCode::ClaimContradicted => "CLAIM_CONTRADICTED",
            UploadCode::EligibilityUnsupported => "ELIGIBILITY_UNSUPPORTED",
            UploadCode::ArtifactUnreadable => "ARTIFACT_UNREADABLE",
            UploadCode::ClaimUnverified => "CLAIM_UNVERIFIED",
            UploadCode::ClaimMismatch => "CLAIM_MISMATCH",
            UploadCode::NoClaims => "NO_CLAIMS",
            UploadCode::FileIgnored => "FILE_IGNORED",
        }
    }

    /// The outcome an error of this code gives; `None` for a warning.
    pub fn outcome(self) -> Option<Outcome> {
        use UploadCode::*;
        match self {
            LimitExceeded => Some(Outcome::LimitExceeded),
            EmptyUpload | UnknownFormat | BadGzip | BadBundle | ResultMissing | MalformedJson
            | DuplicateKey | Schema | ArtifactUnreadable => Some(Outcome::Malformed),
            OutOfRange | ClaimInconsistent | ClaimContradicted | EligibilityUnsupported => {
                Some(Outcome::ClaimsRefused)
            }
            ClaimUnverified | ClaimMismatch | NoClaims | FileIgnored => None,
        }
    }
}

/// The verdict in one word. The edge worker answers 200, 413, 400 and 422 for them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// No error (warnings may remain).
    Accepted,
    /// A limit was reached (checked first: nothing past it was read).
    LimitExceeded,
    /// The upload cannot be read: container, result JSON or raw artifacts.
    Malformed,
    /// Readable, but a claim is out of range, inconsistent or contradicted by the evidence.
    ClaimsRefused,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Accepted => "accepted",
            Outcome::LimitExceeded => "limit_exceeded",
            Outcome::Malformed => "malformed",
            Outcome::ClaimsRefused => "claims_refused",
        }
    }
}

/// One error or warning: its code, a message for people, and where it is.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct Issue {
    pub code: UploadCode,
    pub message: String,
    /// The limit reached (`LIMIT_EXCEEDED`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub limit: Option<Box<LimitHit>>,
    /// The reader's own code (`ARTIFACT_UNREADABLE`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub artifact_code: Option<ErrorCode>,
    /// The member of the bundle concerned (`result.json` for the result JSON).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub file: Option<String>,
    /// 1-based line in `file`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub line: Option<u32>,
    /// 1-based character column in `file`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub column: Option<u32>,
    /// Byte offset: in `file` when given, else in the upload as sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub byte_offset: Option<u64>,
    /// JSON path of the value in `file`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub json_path: Option<String>,
}

impl Issue {
    pub fn new(code: UploadCode, message: impl Into<String>) -> Self {
        Issue {
            code,
            message: message.into(),
            limit: None,
            artifact_code: None,
            file: None,
            line: None,
            column: None,
            byte_offset: None,
            json_path: None,
        }
    }

    pub fn limit(limit: LimitHit, message: impl Into<String>) -> Self {
        Issue {
            limit: Some(Box::new(limit)),
            ..Issue::new(UploadCode::LimitExceeded, message)
        }
    }

    pub fn in_file(mut self, file: &str) -> Self {
        self.file = Some(file.to_string());
        self
    }

    pub fn at_byte(mut self, offset: u64) -> Self {
        self.byte_offset = Some(offset);
        self
    }

    pub fn at_path(mut self, path: impl Into<String>) -> Self {
        let path = path.into();
        self.json_path = (!path.is_empty()).then_some(path);
        self
    }

    /// Line, column, byte offset and JSON path from a reader's position (what it knows).
    pub fn at(mut self, p: &Position) -> Self {
        self.line = p.line.or(self.line);
        self.column = p.column.or(self.column);
        self.byte_offset = p.byte_offset.map(u64::from).or(self.byte_offset);
        self.json_path = p.json_path.clone().or(self.json_path);
        self
    }
}

/// How a claim fared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub enum ClaimStatus {
    /// The recomputation from the upload's raw artifacts agrees (within `max_rate_width`
    /// for a rate, whose recomputed interval is itself that narrow).
    Verified,
    /// Nothing in the upload can check it (no raw artifacts, or only loose bounds).
    Unverified,
    /// The recomputation disagrees.
    Contradicted,
    /// Outside its range (a rate outside [0, 1], a negative or fractional count).
    OutOfRange,
    /// Of the wrong type, or inconsistent with another claim of the upload.
    Invalid,
}

impl ClaimStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ClaimStatus::Verified => "verified",
            ClaimStatus::Unverified => "unverified",
            ClaimStatus::Contradicted => "contradicted",
            ClaimStatus::OutOfRange => "out_of_range",
            ClaimStatus::Invalid => "invalid",
        }
    }
}

/// One cache field of the result JSON and what became of it.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct Claim {
    /// Its JSON path in the result JSON (`server_metrics.cache.gpu_cache_hit_rate`).
    pub field: String,
    /// The value as uploaded (a number, a boolean, a string or null).
    #[cfg_attr(
        target_arch = "wasm32",
        tsify(type = "number | boolean | string | null")
    )]
    pub claimed: serde_json::Value,
    /// What the recomputation gives for it: a value, or `{lo, hi}` for a rate's interval.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        target_arch = "wasm32",
        tsify(
            optional,
            type = "number | boolean | string | null | { lo: number, hi: number }"
        )
    )]
    pub recomputed: Option<serde_json::Value>,
    pub status: ClaimStatus,
}

/// The answer for one upload: data, whatever the upload (a refusal is a verdict, not an
/// error). One shape in Rust, the CLI's `--json` and JS.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct UploadVerdict {
    /// `outcome == "accepted"`.
    pub accepted: bool,
    pub outcome: Outcome,
    pub errors: Vec<Issue>,
    pub warnings: Vec<Issue>,
    /// Every cache field found in the result JSON, in document order of the checks.
    pub claims: Vec<Claim>,
    /// The accounting of the raw artifacts (`accountRun`'s result), when the upload has them.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub recomputed: Option<Box<Accounting>>,
    /// The limits this validation ran under.
    pub limits: UploadLimits,
}
