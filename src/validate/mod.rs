//! Upload validation (CONTRACT section 9): a result upload, the point's result JSON alone or
//! bundled with the run's raw artifacts, checked stage by stage, each in its own module:
//!
//! 1. `limits`: what one validation may cost, checked before work and while streaming;
//! 2. `gzip`, `tar`, `bundle`: the upload's framing (gzip or not), its body (a result JSON or
//!    a tar bundle), the raw artifacts streamed into the run reader;
//! 3. `scan`: nesting depth, string lengths, series, timeslices and label keys counted on the
//!    raw bytes before any parser sees them;
//! 4. `result`: the result JSON's cache fields, type and range;
//! 5. `claims`: the claims against the accounting of the raw artifacts;
//! 6. `verdict`: the one answer, `UploadVerdict`.
//!
//! [`UploadValidator`] takes the upload in chunks split anywhere; [`validate_upload`] takes
//! it whole. Neither panics nor keeps more than the limits allow, and every upload gets a
//! verdict: too large, malformed and refused uploads are data, not errors.

pub mod bundle;
pub mod claims;
pub mod codes;
pub mod gzip;
pub mod limits;
pub mod result;
pub mod scan;
pub mod tar;
pub mod verdict;

pub use bundle::MemoryProbe;
pub use codes::{Claim, ClaimStatus, Issue, Outcome, UploadCode, UploadVerdict};
pub use limits::{LimitHit, UploadLimits, LIMIT_NAMES};

use crate::account::Policy;
use crate::admission::HeapLimit;
use bundle::Body;
use gzip::GzipDecoder;

/// Limits that cannot be honoured: the limit's name and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitsError {
    pub name: &'static str,
    pub message: String,
}

/// Whether the upload is gzip'd: decided by its first two bytes.
enum Framing {
    Sniff(Vec<u8>),
    Plain,
    Gzip(Box<GzipDecoder>),
}

/// An upload validated as its bytes arrive: [`UploadValidator::push`] each chunk (split
/// anywhere) while it returns `true`, then [`UploadValidator::finish`].
pub struct UploadValidator {
    limits: UploadLimits,
    policy: Policy,
    /// `limits.memory_budget` and its memory ceiling, when the heap is counted.
    memory: Option<HeapLimit>,
    /// Bytes as sent, and after decompression.
    bytes: u64,
    decompressed: u64,
    framing: Framing,
    body: Body,
    /// The error that stopped reading (a limit, a malformed container).
    stopped: Option<Issue>,
}

impl UploadValidator {
    /// A validator under `limits` (refused when a limit cannot be honoured).
    pub fn new(limits: UploadLimits) -> Result<Self, LimitsError> {
        if let Some((name, message)) = limits.invalid() {
            return Err(LimitsError { name, message });
        }
        Ok(UploadValidator {
            limits,
            policy: Policy::default(),
            memory: None,
            bytes: 0,
            decompressed: 0,
            framing: Framing::Sniff(Vec::new()),
            body: Body::new(),
            stopped: None,
        })
    }

    /// Count the heap with `probe` against `limits.memory_budget` while reading and accounting
    /// the raw artifacts (the WASM build passes its counting allocator's live bytes), with the
    /// memory holding it kept within `crate::admission::HeapLimit::within_memory`'s ceiling.
    pub fn with_memory_probe(mut self, probe: MemoryProbe) -> Self {
        self.memory = Some(HeapLimit::within_memory(
            self.limits.memory_budget,
            probe.in_use,
            probe.memory,
        ));
        self
    }

    /// The upload's total size, when known before reading (a file's length, a buffer's, a
    /// `Content-Length`): past the `bytes` limit the verdict is decided at once, nothing read.
    /// Returns whether bytes are still wanted.
    pub fn expect_size(&mut self, total: u64) -> bool {
        if self.stopped.is_none() && self.bytes == 0 && total > self.limits.bytes {
            self.stopped = Some(Issue::limit(
                self.limits.hit("bytes", Some(total)),
                format!(
                    "the upload is {total} bytes, larger than {} (refused before reading)",
                    self.limits.bytes
                ),
            ));
        }
        self.stopped.is_none()
    }

    /// Bytes pushed so far, as sent.
    pub fn bytes_read(&self) -> u64 {
        self.bytes
    }

    /// The next bytes of the upload. `false` once the verdict is decided (a limit reached, a
    /// malformed container): the rest need not be sent.
    pub fn push(&mut self, chunk: &[u8]) -> bool {
        if self.stopped.is_some() {
            return false;
        }
        if let Err(issue) = self.take(chunk) {
            self.stopped = Some(issue);
        }
        self.stopped.is_none()
    }

    fn take(&mut self, chunk: &[u8]) -> Result<(), Issue> {
        // The bytes within the limit are read first, so that an error in them wins over the
        // limit whatever the chunking (the verdict does not depend on where chunks split).
        let room = self.limits.bytes.saturating_sub(self.bytes);
        self.bytes += chunk.len() as u64;
        if chunk.len() as u64 > room {
            self.frame(&chunk[..room as usize])?;
            return Err(Issue::limit(
                self.limits.hit("bytes", None),
                format!("the upload is larger than {} bytes", self.limits.bytes),
            )
            .at_byte(self.limits.bytes));
        }
        self.frame(chunk)
    }

    /// Decide the framing from the first two bytes, then decode.
    fn frame(&mut self, chunk: &[u8]) -> Result<(), Issue> {
        if let Framing::Sniff(head) = &mut self.framing {
            head.extend_from_slice(chunk);
            if head.len() < 2 {
                return Ok(());
            }
            let head = std::mem::take(head);
            self.framing = if head[..2] == [0x1f, 0x8b] {
                Framing::Gzip(Box::default())
            } else {
                Framing::Plain
            };
            return self.decode(&head);
        }
        self.decode(chunk)
    }

    /// Pass bytes as sent through the framing to the body.
    fn decode(&mut self, bytes: &[u8]) -> Result<(), Issue> {
        let UploadValidator {
            limits,
            memory,
            decompressed,
            framing,
            body,
            ..
        } = self;
        let mut feed = |piece: &[u8]| -> Result<(), Issue> {
            let room = limits.decompressed_bytes.saturating_sub(*decompressed);
            *decompressed += piece.len() as u64;
            if piece.len() as u64 > room {
                // The bytes within the limit first, as in `take`.
                body.push(&piece[..room as usize], limits, *memory)?;
                return Err(Issue::limit(
                    limits.hit("decompressed_bytes", None),
                    format!(
                        "the upload decompresses to more than {} bytes",
                        limits.decompressed_bytes
                    ),
                ));
            }
            body.push(piece, limits, *memory)
        };
        match framing {
            Framing::Gzip(gz) => gz.push(bytes, &mut feed),
            _ => feed(bytes),
        }
    }

    /// The upload has ended: the verdict.
    pub fn finish(mut self) -> UploadVerdict {
        if let Some(issue) = self.stopped.take() {
            return verdict::refused(issue, &self.limits);
        }
        if let Framing::Sniff(head) = &mut self.framing {
            // Shorter than the gzip magic: plain.
            let head = std::mem::take(head);
            self.framing = Framing::Plain;
            if let Err(issue) = self.decode(&head) {
                return verdict::refused(issue, &self.limits);
            }
        }
        if let Framing::Gzip(gz) = &self.framing {
            if let Err(issue) = gz.finish() {
                return verdict::refused(issue, &self.limits);
            }
        }
        let UploadValidator {
            limits,
            policy,
            memory,
            body,
            ..
        } = self;
        match body.finish(&limits, memory) {
            Ok(parts) => verdict::assemble(parts, &limits, &policy, memory),
            Err(issue) => verdict::refused(issue, &limits),
        }
    }
}

/// Validate a whole upload (`UploadValidator` pushed once).
pub fn validate_upload(bytes: &[u8], limits: UploadLimits) -> Result<UploadVerdict, LimitsError> {
    let mut v = UploadValidator::new(limits)?;
    v.push(bytes);
    Ok(v.finish())
}
