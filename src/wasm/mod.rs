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

#[doc(hidden)]
pub mod mem;
pub mod pricing;
pub mod stream;
pub mod validate;

use crate::account::{account_run, families_read};
use crate::error::{ErrorCode, Position, ReadError, RunOutcome};
use crate::inspect::{inspect_run, CONTRACT_VERSION};
use crate::options::{
    from_json, AccountOptions, CallError, InspectOptions, OptionsError, RunFileInput,
};
use crate::read::discover::{normalise_path, read_runs};
use crate::read::{read_run, FamilyFilter, InputFile, Run, RunOptions};
use js_sys::{Array, ArrayBuffer, Object, Reflect, Uint8Array};
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

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
    serde_json::to_string(e)
        .map(|json| format!("{{\"error\":{json}}}"))
        .unwrap_or_else(|_| {
            r#"{"error":{"code":"INTERNAL","message":"an error could not be serialised"}}"#.into()
        })
}

/// The envelope of a call's outcome. Only the serialisation is per result type: the
/// envelope is one shared function (a copy of it in every export was bytes of the .wasm).
pub(crate) fn reply<T: Serialize>(outcome: Result<T, CallError>) -> String {
    envelope(outcome.map(|value| serde_json::to_string(&value)))
}

#[inline(never)]
fn envelope(outcome: Result<serde_json::Result<String>, CallError>) -> String {
    match outcome {
        Ok(serialised) => match serialised {
            Ok(json) => format!("{{\"ok\":{json}}}"),
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
pub(crate) fn options_arg<T>(arg: &str, json: Option<String>) -> Result<T, OptionsError>
where
    T: serde::de::DeserializeOwned + Default,
{
    match json.as_deref() {
        None | Some("null") => Ok(T::default()),
        Some(text) => from_json(arg, text),
    }
}

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

/// Bytes of a `Uint8Array`, any other typed-array view or an `ArrayBuffer` (one copy, into
/// wasm memory); `None` for anything else.
fn bytes_of(v: &JsValue) -> Option<Vec<u8>> {
    if let Some(u8s) = v.dyn_ref::<Uint8Array>() {
        return Some(u8s.to_vec());
    }
    if let Some(buf) = v.dyn_ref::<ArrayBuffer>() {
        return Some(Uint8Array::new(buf).to_vec());
    }
    if ArrayBuffer::is_view(v) {
        let buffer = Reflect::get(v, &"buffer".into()).ok()?;
        let offset = Reflect::get(v, &"byteOffset".into()).ok()?.as_f64()?;
        let length = Reflect::get(v, &"byteLength".into()).ok()?.as_f64()?;
        let view =
            Uint8Array::new_with_byte_offset_and_length(&buffer, offset as u32, length as u32);
        return Some(view.to_vec());
    }
    None
}

/// One element of the files array, checked as serde would check `RunFileInput` (unknown
/// fields by name, types), read field by field so the contents never go through JSON.
fn file_input(file: &JsValue, at: &str) -> Result<RunFileInput, OptionsError> {
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
    let text = match text.as_string() {
        Some(t) => Some(t),
        None if text.is_undefined() => None,
        None => {
            return Err(OptionsError::new(
                format!("{at}.text"),
                format!("expected a string, got {}", describe(&text)),
            ))
        }
    };
    let bytes = field(file, "bytes", at)?;
    let bytes = match bytes_of(&bytes) {
        Some(b) => Some(b),
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
    Ok(RunFileInput { name, text, bytes })
}

/// A file's name and content.
pub(crate) struct OwnedFile {
    name: String,
    content: Vec<u8>,
}

/// The `files` argument: an array of `{name, text | bytes}`.
fn files_arg(files: &JsValue) -> Result<Vec<OwnedFile>, OptionsError> {
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
        let at = format!("files[{i}]");
        let (name, content) = file_input(&file, &at)?.into_content(&at)?;
        out.push(OwnedFile { name, content });
    }
    Ok(out)
}

/// Files of a dropped folder: names are relative paths, each path once.
fn sweep_files_arg(files: &JsValue) -> Result<Vec<OwnedFile>, OptionsError> {
    let owned = files_arg(files)?;
    let mut seen = std::collections::BTreeSet::new();
    for (i, f) in owned.iter().enumerate() {
        if !seen.insert(normalise_path(&f.name)) {
            return Err(OptionsError::new(
                format!("files[{i}].name"),
                format!("`{}` is given twice (names are relative paths)", f.name),
            ));
        }
    }
    Ok(owned)
}

fn inputs_of(owned: &[OwnedFile]) -> Vec<InputFile<'_>> {
    owned
        .iter()
        .map(|f| InputFile::bytes(f.name.clone(), &f.content))
        .collect()
}

fn inspect_options(json: Option<String>) -> Result<RunOptions, CallError> {
    let opts: InspectOptions = options_arg("options", json)?;
    opts.into_run_options(FamilyFilter::all())
}

fn account_options(
    json: Option<String>,
) -> Result<(RunOptions, crate::account::Policy), CallError> {
    let opts: AccountOptions = options_arg("options", json)?;
    let (run, policy) = opts.split()?;
    Ok((run.into_run_options(families_read())?, policy))
}

/// One run: read it and compute `result` of it.
fn one_run<T>(
    files: &JsValue,
    options: &RunOptions,
    result: impl Fn(&Run) -> T,
) -> Result<T, CallError> {
    stream::check_fits(files)?;
    let owned = files_arg(files)?;
    let run = read_run(&inputs_of(&owned), options)?;
    Ok(result(&run))
}

/// Every run among `files`, each `{run, result}` or `{run, error}`.
fn many_runs<T>(
    files: &JsValue,
    options: &RunOptions,
    result: impl Fn(&Run) -> T,
) -> Result<Vec<RunOutcome<T>>, CallError> {
    stream::check_fits(files)?;
    let owned = sweep_files_arg(files)?;
    let (runs, _) = read_runs(&inputs_of(&owned), options);
    Ok(runs
        .into_iter()
        .map(|r| RunOutcome::new(r.run, r.result.as_ref().map(&result)))
        .collect())
}

#[wasm_bindgen(js_name = inspectRun, skip_typescript)]
pub fn inspect_run_raw(files: JsValue, options: Option<String>) -> String {
    reply(inspect_options(options).and_then(|o| one_run(&files, &o, inspect_run)))
}

#[wasm_bindgen(js_name = inspectRuns, skip_typescript)]
pub fn inspect_runs_raw(files: JsValue, options: Option<String>) -> String {
    reply(inspect_options(options).and_then(|o| many_runs(&files, &o, inspect_run)))
}

#[wasm_bindgen(js_name = accountRun, skip_typescript)]
pub fn account_run_raw(files: JsValue, options: Option<String>) -> String {
    reply(
        account_options(options)
            .and_then(|(o, policy)| one_run(&files, &o, |run| account_run(run, &policy))),
    )
}

#[wasm_bindgen(js_name = accountRuns, skip_typescript)]
pub fn account_runs_raw(files: JsValue, options: Option<String>) -> String {
    reply(
        account_options(options)
            .and_then(|(o, policy)| many_runs(&files, &o, |run| account_run(run, &policy))),
    )
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
