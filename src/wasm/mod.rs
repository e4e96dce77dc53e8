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

mod files;
#[doc(hidden)]
pub mod mem;
pub mod pricing;
pub mod stream;
pub mod validate;

use crate::account::account_run;
use crate::account::{account_run_folded, families_read};
use crate::error::{ErrorCode, Position, ReadError, RunOutcome};
use crate::inspect::{inspect_run, CONTRACT_VERSION};
use crate::options::{from_json, AccountOptions, CallError, InspectOptions, OptionsError};
use crate::read::discover::read_runs;
use crate::read::{read_run, read_run_folded, FamilyFilter, Run, RunOptions};
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

/// The read options of a whole-buffer call: the caller's, within the call's memory budget.
fn whole_call(options: RunOptions) -> RunOptions {
    RunOptions {
        memory_budget: Some(files::WHOLE_CALL_BUDGET),
        ..options
    }
}

fn inspect_options(json: Option<String>) -> Result<RunOptions, CallError> {
    let opts: InspectOptions = options_arg("options", json)?;
    Ok(whole_call(opts.into_run_options(FamilyFilter::all())?))
}

fn account_options(
    json: Option<String>,
) -> Result<(RunOptions, crate::account::Policy), CallError> {
    let opts: AccountOptions = options_arg("options", json)?;
    let (run, policy) = opts.split()?;
    Ok((whole_call(run.into_run_options(families_read())?), policy))
}

/// One run: read it and compute `result` of it.
fn one_run<T>(
    files: &JsValue,
    options: &RunOptions,
    result: impl Fn(&Run) -> T,
) -> Result<T, CallError> {
    let held = files::hold(files::files_arg(files)?);
    let run = read_run(&files::inputs_of(&held), options)?;
    Ok(result(&run))
}

/// `accountRun`: the run read with its scrapes and records folded as they stream by (a few
/// bytes per sample in memory, not the samples), then accounted: the same result as accounting
/// the run read whole.
fn account_one_run(
    files: &JsValue,
    options: &RunOptions,
    policy: &crate::account::Policy,
) -> Result<crate::account::Accounting, CallError> {
    let held = files::hold(files::files_arg(files)?);
    let (run, fold) = read_run_folded(&files::inputs_of(&held), options)?;
    Ok(account_run_folded(run, fold, policy))
}

/// Every run among `files`, each `{run, result}` or `{run, error}`: the runs read one after
/// the other within the call's one memory budget.
fn many_runs<T>(
    files: &JsValue,
    options: &RunOptions,
    result: impl Fn(&Run) -> T,
) -> Result<Vec<RunOutcome<T>>, CallError> {
    let held = files::hold(files::sweep_files_arg(files)?);
    let (runs, _) = read_runs(&files::inputs_of(&held), options);
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
    reply(account_options(options).and_then(|(o, policy)| account_one_run(&files, &o, &policy)))
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
