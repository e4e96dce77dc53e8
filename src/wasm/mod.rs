//! The npm package's raw exports. They are not the public API: `js/api.js` wraps each one,
//! and the public signatures are hand-written in `js/api.d.ts` (the types of results and
//! inputs come from the tsify derives of the core types).
//!
//! The boundary has one shape: every argument but the files' contents arrives as JSON (the
//! wrapper turns bigints into decimal strings), and every result leaves as the JSON text of
//! an envelope, `{"ok": <result>}` or `{"error": {code, message, file?, line?, column?,
//! byte_offset?, json_path?}}`, made by `serde_json` from the core types. So the JS objects
//! are exactly the CLI's `--json` payload, and nothing here throws: a failure is data the
//! wrapper turns into a `KvledgerError`.

// The run exports: without the `accounting` feature the build is the pricing module
// (`pkg/pricing`), which pages that only price points load instead (a quarter of the size).
#[cfg(feature = "accounting")]
mod files;
#[doc(hidden)]
pub mod mem;
pub mod pricing;
#[cfg(feature = "accounting")]
mod runs;
#[cfg(feature = "accounting")]
pub use runs::{account_run_raw, account_runs_raw, inspect_run_raw, inspect_runs_raw};
#[cfg(feature = "accounting")]
pub mod stream;
#[cfg(feature = "accounting")]
pub mod validate;

use crate::error::{ErrorCode, Position, ReadError};
use crate::inspect::CONTRACT_VERSION;
use crate::options::{CallError, OptionsError};
use serde::Serialize;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TS_WIRE: &'static str = r#"
/** Epoch nanoseconds (UTC) as a decimal string: exact, unlike a number above 2^53.
 * Compare or subtract them as `BigInt(value)`. */
export type EpochNs = string;
"#;

/// The error half of the envelope. `code` is a string: besides `ErrorCode`, the envelope
/// can say `INTERNAL` (a result that could not be serialised).
#[derive(Serialize)]
struct ErrorOut<'a> {
    code: &'a str,
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<&'a str>,
    #[serde(flatten)]
    position: Position,
}

impl<'a> ErrorOut<'a> {
    fn read(e: &'a ReadError) -> Self {
        ErrorOut {
            code: e.code.as_str(),
            message: e.to_string(),
            file: Some(&e.file),
            position: e.position.clone(),
        }
    }

    fn options(e: &'a OptionsError) -> Self {
        ErrorOut {
            code: ErrorCode::BadOptions.as_str(),
            message: e.to_string(),
            file: None,
            position: Position {
                json_path: Some(e.path.clone()).filter(|p| !p.is_empty()),
                ..Position::default()
            },
        }
    }
}

/// `{"error": ...}`. Serialising these plain fields cannot fail; the fallback keeps the
/// promise that nothing here panics.
fn error_envelope(e: &ErrorOut<'_>) -> String {
    match crate::chunked::json_between(b"{\"error\":", e, b"}") {
        // SAFETY: ASCII around serde_json's UTF-8.
        Ok(json) => unsafe { String::from_utf8_unchecked(json) },
        Err(_) => {
            r#"{"error":{"code":"INTERNAL","message":"an error could not be serialised"}}"#.into()
        }
    }
}

/// The envelope of a call's outcome. Only the serialisation is per result type: the
/// envelope is one shared function (a copy of it in every export was bytes of the .wasm).
pub(crate) fn reply<T: Serialize>(outcome: Result<T, CallError>) -> String {
    envelope(outcome.map(|value| {
        // Written inside its envelope: a many-endpoint run's result is megabytes, and
        // wrapping it afterwards was a second copy. In pieces, joined at its exact length
        // (see `crate::chunked`).
        crate::chunked::json_between(b"{\"ok\":", &value, b"}")
    }))
}

#[inline(never)]
fn envelope(outcome: Result<serde_json::Result<Vec<u8>>, CallError>) -> String {
    match outcome {
        Ok(serialised) => match serialised {
            // SAFETY: the envelope's bytes are ASCII and serde_json writes UTF-8 (its own
            // `to_string` makes this same unchecked step).
            Ok(json) => unsafe { String::from_utf8_unchecked(json) },
            Err(e) => error_envelope(&ErrorOut {
                code: "INTERNAL",
                message: format!("the result could not be serialised: {e}"),
                file: None,
                position: Position::default(),
            }),
        },
        Err(CallError::Read(e)) => error_envelope(&ErrorOut::read(&e)),
        Err(CallError::Options(e)) => error_envelope(&ErrorOut::options(&e)),
    }
}

/// Options argument `arg` of a call: absent (`undefined` / `null`) takes the defaults.
#[cfg(feature = "accounting")]
pub(crate) fn options_arg<T>(arg: &str, json: Option<String>) -> Result<T, OptionsError>
where
    T: serde::de::DeserializeOwned + Default,
{
    match json.as_deref() {
        None | Some("null") => Ok(T::default()),
        Some(text) => crate::options::from_json(arg, text),
    }
}

#[wasm_bindgen(js_name = contractVersion, skip_typescript)]
pub fn contract_version_raw() -> String {
    reply(Ok(CONTRACT_VERSION))
}

#[wasm_bindgen(js_name = packageVersion, skip_typescript)]
pub fn package_version_raw() -> String {
    reply(Ok(env!("CARGO_PKG_VERSION")))
}

#[wasm_bindgen(js_name = errorCodes, skip_typescript)]
pub fn error_codes_raw() -> String {
    reply(Ok(ErrorCode::ALL.map(ErrorCode::as_str)))
}

/// At instantiation: the hash tables' keys are to come from the host (see `crate::hash`).
/// Only the source is given here; it is asked at the first table, inside a call.
#[wasm_bindgen(start, skip_typescript)]
fn start() {
    crate::hash::set_host_source(host_keys);
}

#[wasm_bindgen]
extern "C" {
    /// `crypto.getRandomValues` (browsers, workers, workerd, Node 19 and later).
    #[wasm_bindgen(js_namespace = crypto, js_name = getRandomValues, catch)]
    fn get_random_values(buf: &mut [u8]) -> Result<(), JsValue>;
}

/// Sixteen random bytes from the host: `crypto.getRandomValues`, else (no `crypto`, or it
/// refused) `Math.random`, which no upload can predict either.
#[doc(hidden)]
pub fn host_keys() -> Option<[u64; 2]> {
    let mut b = [0u8; 16];
    if get_random_values(&mut b).is_err() {
        for chunk in b.chunks_mut(4) {
            let r = (js_sys::Math::random() * 4_294_967_296.0) as u32;
            chunk.copy_from_slice(&r.to_le_bytes());
        }
    }
    let (lo, hi) = b.split_at(8);
    Some([
        u64::from_le_bytes(lo.try_into().ok()?),
        u64::from_le_bytes(hi.try_into().ok()?),
    ])
}
