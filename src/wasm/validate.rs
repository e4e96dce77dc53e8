//! The raw class under `validateUpload` and the public `UploadValidator` (`js/api.js` wraps
//! it): an upload pushed chunk by chunk into the core's [`UploadValidator`], then its verdict.
//! Thin: it converts the limits from JSON and answers the usual JSON envelopes; the heap in
//! use (the module's counting allocator) is the validator's memory probe.

use super::stream::{heap_in_use, linear_memory};
use super::{options_arg, reply};
use crate::options::{CallError, OptionsError};
use crate::validate::{MemoryProbe, UploadLimits, UploadValidator as Core};
use serde::Serialize;
use wasm_bindgen::prelude::*;

/// What `push` answers.
#[derive(Serialize)]
struct Pushed {
    /// Whether more bytes are wanted (`false` once the verdict is decided).
    wants_more: bool,
    /// Bytes pushed so far, as sent.
    bytes_read: u64,
}

enum State {
    Ready(Box<Core>, UploadLimits),
    Refused(CallError),
    Finished,
}

/// An upload pushed in chunks, then its verdict.
#[wasm_bindgen(js_name = UploadValidator, skip_typescript)]
pub struct UploadValidatorRaw {
    state: State,
}

fn finished() -> CallError {
    OptionsError::new("", "the validator has finished: start a new one").into()
}

/// The limits argument (`null` for the defaults), refused by path: `limits.<name>`.
fn limits_arg(json: Option<String>) -> Result<(Core, UploadLimits), CallError> {
    let limits: UploadLimits = options_arg("limits", json)?;
    let core = Core::new(limits)
        .map_err(|e| OptionsError::new(format!("limits.{}", e.name), e.message))?;
    Ok((
        core.with_memory_probe(MemoryProbe {
            in_use: heap_in_use,
            memory: linear_memory,
        }),
        limits,
    ))
}

#[wasm_bindgen(js_class = UploadValidator)]
impl UploadValidatorRaw {
    /// `limits`: the JSON of the limits (absent: the defaults). Refusals are told by `start`.
    #[wasm_bindgen(constructor)]
    pub fn new(limits: Option<String>) -> UploadValidatorRaw {
        let state = match limits_arg(limits) {
            Ok((core, limits)) => State::Ready(Box::new(core), limits),
            Err(e) => State::Refused(e),
        };
        UploadValidatorRaw { state }
    }

    /// `{"ok": <the effective limits>}`, or why the limits were refused.
    pub fn start(&self) -> String {
        match &self.state {
            State::Ready(_, limits) => reply(Ok(limits)),
            State::Refused(e) => reply::<()>(Err(e.clone())),
            State::Finished => reply::<()>(Err(finished())),
        }
    }

    /// `{"ok": <whether bytes are wanted>}`: the total size when known before reading.
    #[wasm_bindgen(js_name = expectSize)]
    pub fn expect_size(&mut self, total: f64) -> String {
        match &mut self.state {
            State::Ready(core, _) if total.is_finite() && total >= 0.0 => {
                reply(Ok(core.expect_size(total as u64)))
            }
            State::Ready(..) => reply::<()>(Err(OptionsError::new(
                "size",
                format!("expected a number of bytes, got {total}"),
            )
            .into())),
            State::Refused(e) => reply::<()>(Err(e.clone())),
            State::Finished => reply::<()>(Err(finished())),
        }
    }

    /// `{"ok": {"wants_more", "bytes_read"}}`.
    pub fn push(&mut self, chunk: &[u8]) -> String {
        match &mut self.state {
            State::Ready(core, _) => {
                let wants_more = core.push(chunk);
                reply(Ok(Pushed {
                    wants_more,
                    bytes_read: core.bytes_read(),
                }))
            }
            State::Refused(e) => reply::<()>(Err(e.clone())),
            State::Finished => reply::<()>(Err(finished())),
        }
    }

    /// `{"ok": <the verdict>}`; the validator cannot be used after.
    pub fn finish(&mut self) -> String {
        match std::mem::replace(&mut self.state, State::Finished) {
            State::Ready(core, _) => reply(Ok(core.finish())),
            State::Refused(e) => reply::<()>(Err(e)),
            State::Finished => reply::<()>(Err(finished())),
        }
    }
}
