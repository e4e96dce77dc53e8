//! The npm package's API. Bindings only: convert JS values to core types and back, map core
//! errors to JS `Error`s with a stable `name` and `code`. No logic lives here.
//!
//! Conventions at the boundary:
//! - epoch-ns and other 64-bit integers are `bigint` both ways (they exceed 2^53);
//! - absent optional outputs are omitted (`undefined`); the `legacy` block of `accountRun`
//!   alone uses `null`, as the dashboard's stored keys do;
//! - errors are thrown as `Error` with `name` (`"ReadError"` for input that cannot be read,
//!   `"OptionsError"` for a bad call) and `code` (see `ErrorCode` in the d.ts).

pub mod pricing;

use crate::account::{account_run, Accounting, Policy};
use crate::error::{ErrorCode, ErrorReport, ReadError};
use crate::inspect::{inspect_run, RunInspection, CONTRACT_VERSION};
use crate::read::{
    discover::{read_runs, RunRead},
    launch::{launch_from_env, read_launch_json},
    read_run, CaptureMeta, FamilyFilter, InputFile, RunOptions,
};
use serde::de::{Deserializer, Visitor};
use serde::Deserialize;
use std::collections::BTreeMap;
use tsify::{Ts, Tsify};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

#[wasm_bindgen(typescript_custom_section)]
const TS_ERRORS: &'static str = r#"
/** The `name` of every error kvledger throws. */
export type KvledgerErrorName = "ReadError" | "OptionsError";

/** An error thrown by kvledger. Switch on `code`; `message` is for people. */
export interface KvledgerError extends Error {
    name: KvledgerErrorName;
    code: ErrorCode;
    /** The input file concerned (ReadError). */
    file?: string;
    /** Where in the file (ReadError). */
    position?: Position;
}

/** True when `value` is an error thrown by kvledger. */
export function isKvledgerError(value: unknown): value is KvledgerError;
"#;

/// Bytes given as a `Uint8Array` (or `ArrayBuffer` / number array).
#[derive(Debug, Default)]
struct Bytes(Vec<u8>);

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Bytes;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a Uint8Array")
            }
            fn visit_byte_buf<E>(self, v: Vec<u8>) -> Result<Bytes, E> {
                Ok(Bytes(v))
            }
            fn visit_bytes<E>(self, v: &[u8]) -> Result<Bytes, E> {
                Ok(Bytes(v.to_vec()))
            }
        }
        d.deserialize_byte_buf(V)
    }
}

/// One artifact of a run: its file name (used to recognise the format) and its content,
/// as `text` or as `bytes` (exactly one).
#[derive(Tsify, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RunFileInput {
    pub name: String,
    #[tsify(optional)]
    #[serde(default)]
    pub text: Option<String>,
    #[tsify(optional, type = "Uint8Array")]
    #[serde(default)]
    bytes: Option<Bytes>,
}

/// Where and when a Prometheus text capture was taken.
#[derive(Tsify, Deserialize)]
#[tsify(large_number_types_as_bigints)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CaptureInput {
    #[tsify(optional)]
    #[serde(default)]
    pub endpoint_url: Option<String>,
    #[tsify(optional)]
    #[serde(default)]
    pub timestamp_ns: Option<u64>,
}

/// Options of `accountRun`: those of `inspectRun` plus the accounting policy.
#[derive(Tsify, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct AccountOptions {
    #[serde(flatten)]
    pub run: InspectOptions,
    /// Tolerances (CONTRACT section 10); absent fields take their defaults.
    #[tsify(optional)]
    #[serde(default)]
    pub policy: Option<Policy>,
}

/// Options of `inspectRun`. Every field is optional.
#[derive(Tsify, Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InspectOptions {
    /// Keep only these metric families (any alias spelling); default: all.
    #[tsify(optional)]
    #[serde(default)]
    pub families: Option<Vec<String>>,
    /// Also keep families whose name starts with one of these prefixes (e.g. `"vllm:"`).
    #[tsify(optional)]
    #[serde(default)]
    pub family_prefixes: Option<Vec<String>>,
    /// Capture metadata by file name, for Prometheus text captures.
    #[tsify(optional, type = "Record<string, CaptureInput>")]
    #[serde(default)]
    pub captures: Option<BTreeMap<String, CaptureInput>>,
    /// Launch facts as JSON text (the same format as a `launch.json` file).
    #[tsify(optional)]
    #[serde(default)]
    pub launch_json: Option<String>,
    /// Launch facts as the launcher's environment variables (`FRAMEWORK`, `DISAGG`, ...).
    #[tsify(optional, type = "Record<string, string>")]
    #[serde(default)]
    pub launch_env: Option<BTreeMap<String, String>>,
}

fn set(obj: &JsValue, key: &str, value: &JsValue) {
    // Reflect::set only fails on frozen objects or proxies; a fresh Error is neither.
    let _ = js_sys::Reflect::set(obj, &JsValue::from_str(key), value);
}

fn js_error(name: &str, code: ErrorCode, message: &str) -> js_sys::Error {
    let err = js_sys::Error::new(message);
    err.set_name(name);
    set(&err, "code", &JsValue::from_str(code.as_str()));
    err
}

fn read_error(e: &ReadError) -> JsValue {
    let err = js_error("ReadError", e.code, &e.to_string());
    set(&err, "file", &JsValue::from_str(&e.file));
    let position = serde_wasm_bindgen::to_value(&e.position).unwrap_or(JsValue::UNDEFINED);
    set(&err, "position", &position);
    err.into()
}

fn options_error(message: impl AsRef<str>) -> JsValue {
    js_error("OptionsError", ErrorCode::BadOptions, message.as_ref()).into()
}

fn output_error(e: impl std::fmt::Display) -> JsValue {
    js_error(
        "OptionsError",
        ErrorCode::BadOptions,
        &format!("result could not be converted: {e}"),
    )
    .into()
}

/// serde-wasm-bindgen reads only the fields it knows, so `deny_unknown_fields` cannot see a
/// misspelt option: compare the object's own keys with the allowed ones first.
pub(crate) fn reject_unknown_keys(
    value: &JsValue,
    allowed: &[&str],
    what: &str,
) -> Result<(), JsValue> {
    if !value.is_object() {
        return Ok(());
    }
    let keys = js_sys::Object::keys(value.unchecked_ref::<js_sys::Object>());
    for k in keys.iter() {
        let key = k.as_string().unwrap_or_default();
        if !allowed.contains(&key.as_str()) {
            return Err(options_error(format!(
                "{what}: unknown field `{key}` (expected one of: {})",
                allowed.join(", ")
            )));
        }
    }
    Ok(())
}

const INSPECT_OPTION_KEYS: [&str; 5] = [
    "families",
    "familyPrefixes",
    "captures",
    "launchJson",
    "launchEnv",
];
const FILE_KEYS: [&str; 3] = ["name", "text", "bytes"];
const CAPTURE_KEYS: [&str; 2] = ["endpointUrl", "timestampNs"];

/// Check an options object's keys (and its captures' keys) before deserialising it.
fn check_option_keys(v: &JsValue, allowed: &[&str]) -> Result<(), JsValue> {
    reject_unknown_keys(v, allowed, "options")?;
    if let Ok(caps) = js_sys::Reflect::get(v, &JsValue::from_str("captures")) {
        if caps.is_object() {
            let entries = js_sys::Object::values(caps.unchecked_ref::<js_sys::Object>());
            for c in entries.iter() {
                reject_unknown_keys(&c, &CAPTURE_KEYS, "options.captures")?;
            }
        }
    }
    Ok(())
}

fn run_options(
    opts: InspectOptions,
    default_families: FamilyFilter,
) -> Result<RunOptions, JsValue> {
    let mut families = match &opts.families {
        Some(names) => FamilyFilter::only(names),
        None => default_families,
    };
    if let Some(prefixes) = &opts.family_prefixes {
        families = families.with_prefixes(prefixes);
    }
    let captures = opts
        .captures
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| {
            (
                k,
                CaptureMeta {
                    endpoint_url: v.endpoint_url,
                    timestamp_ns: v.timestamp_ns,
                },
            )
        })
        .collect();
    let launch = match (&opts.launch_json, &opts.launch_env) {
        (Some(_), Some(_)) => {
            return Err(options_error("give launchJson or launchEnv, not both"));
        }
        (Some(text), None) => {
            Some(read_launch_json("launchJson", text).map_err(|e| read_error(&e))?)
        }
        (None, Some(env)) => Some(
            launch_from_env(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
                .map_err(|e| read_error(&e))?,
        ),
        (None, None) => None,
    };
    Ok(RunOptions {
        families,
        captures,
        launch,
    })
}

struct OwnedFile {
    name: String,
    content: Vec<u8>,
}

fn owned_files(files: Vec<Ts<RunFileInput>>) -> Result<Vec<OwnedFile>, JsValue> {
    let mut out = Vec::with_capacity(files.len());
    for (i, f) in files.into_iter().enumerate() {
        reject_unknown_keys(&f.js_value(), &FILE_KEYS, &format!("files[{i}]"))?;
        let f = f
            .to_rust()
            .map_err(|e| options_error(format!("files[{i}]: {e}")))?;
        let content = match (f.text, f.bytes) {
            (Some(t), None) => t.into_bytes(),
            (None, Some(b)) => b.0,
            _ => {
                return Err(options_error(format!(
                    "files[{i}] ({}): give exactly one of `text` or `bytes`",
                    f.name
                )))
            }
        };
        out.push(OwnedFile {
            name: f.name,
            content,
        });
    }
    Ok(out)
}

/// The owned files as reader inputs.
fn inputs_of(owned: &[OwnedFile]) -> Vec<InputFile<'_>> {
    owned
        .iter()
        .map(|f| InputFile::bytes(f.name.clone(), &f.content))
        .collect()
}

/// Options of `inspectRun` / `inspectRuns`, checked and converted.
fn inspect_options(options: Option<Ts<InspectOptions>>) -> Result<RunOptions, JsValue> {
    let opts = match options {
        Some(o) => {
            check_option_keys(&o.js_value(), &INSPECT_OPTION_KEYS)?;
            o.to_rust()
                .map_err(|e| options_error(format!("bad options: {e}")))?
        }
        None => InspectOptions::default(),
    };
    run_options(opts, FamilyFilter::all())
}

/// Read one run's artifacts and describe what they contain: endpoints (families and series
/// per endpoint), phases and window candidates, schema versions, and which evidence exists.
///
/// Throws a `ReadError` (with `code`, `file`, `position`) when a file cannot be read and an
/// `OptionsError` (code `BAD_OPTIONS`) when the call itself is malformed.
#[wasm_bindgen(js_name = inspectRun)]
pub fn inspect_run_js(
    files: Vec<Ts<RunFileInput>>,
    options: Option<Ts<InspectOptions>>,
) -> Result<Ts<RunInspection>, JsValue> {
    let options = inspect_options(options)?;
    let owned = owned_files(files)?;
    let inputs = inputs_of(&owned);
    let run = read_run(&inputs, &options).map_err(|e| read_error(&e))?;
    inspect_run(&run).into_ts().map_err(output_error)
}

/// Account one run (CONTRACT sections 2–7): the verdict (`cacheValidity`), tier rates with
/// bounds, per-role counters, per-endpoint sources, token totals, KV cache, offload, the
/// theoretical hit rate and the dashboard's `legacy` keys. A verdict is data: an ineligible
/// run is returned, not thrown. Throws only for input that cannot be read (`ReadError`) or a
/// malformed call (`OptionsError`).
#[wasm_bindgen(js_name = accountRun)]
pub fn account_run_js(
    files: Vec<Ts<RunFileInput>>,
    options: Option<Ts<AccountOptions>>,
) -> Result<Ts<Accounting>, JsValue> {
    let (options, policy) = account_options(options)?;
    let owned = owned_files(files)?;
    let inputs = inputs_of(&owned);
    let run = read_run(&inputs, &options).map_err(|e| read_error(&e))?;
    account_run(&run, &policy).into_ts().map_err(output_error)
}

/// Options of `accountRun` / `accountRuns`, checked and converted.
fn account_options(options: Option<Ts<AccountOptions>>) -> Result<(RunOptions, Policy), JsValue> {
    let opts = match options {
        Some(o) => {
            let mut allowed = INSPECT_OPTION_KEYS.to_vec();
            allowed.push("policy");
            check_option_keys(&o.js_value(), &allowed)?;
            o.to_rust()
                .map_err(|e| options_error(format!("bad options: {e}")))?
        }
        None => AccountOptions::default(),
    };
    let policy = opts.policy.unwrap_or_default();
    policy
        .validate("options.policy")
        .map_err(|e| options_error(e.message))?;
    let options = run_options(opts.run, crate::account::families_read())?;
    Ok((options, policy))
}

/// Files whose names are relative paths, each name once.
fn sweep_files(files: Vec<Ts<RunFileInput>>) -> Result<Vec<OwnedFile>, JsValue> {
    let owned = owned_files(files)?;
    let mut seen = std::collections::BTreeSet::new();
    for f in &owned {
        if !seen.insert(crate::read::discover::normalise_path(&f.name)) {
            return Err(options_error(format!(
                "files: `{}` is given twice (names are relative paths)",
                f.name
            )));
        }
    }
    Ok(owned)
}

/// `{run, result}` or `{run, error}` for each run, in the runs' order.
fn outcomes(
    runs: Vec<RunRead>,
    result: impl Fn(&crate::read::Run) -> Result<JsValue, JsValue>,
) -> Result<js_sys::Array, JsValue> {
    let out = js_sys::Array::new();
    for r in runs {
        let entry = js_sys::Object::new();
        set(&entry, "run", &JsValue::from_str(&r.run));
        match &r.result {
            Ok(run) => set(&entry, "result", &result(run)?),
            Err(e) => {
                let report =
                    serde_wasm_bindgen::to_value(&ErrorReport::from(e)).map_err(output_error)?;
                set(&entry, "error", &report);
            }
        }
        out.push(&entry);
    }
    Ok(out)
}

/// Account every run among `files` (a dropped folder: each `name` is the file's relative path,
/// e.g. `conc4/aiperf_artifacts/profile_export.jsonl`). Files are grouped into runs as the CLI
/// groups a directory (a sweep gives one run per folder; files kvledger does not read are
/// listed as ignored in their run) and each run is accounted on its own. Returns one
/// `{run, result}` or `{run, error}` per run, sorted by the run's folder (`"."` for the top):
/// an unreadable run is reported in its place and never stops the others. Throws only for a
/// malformed call (`OptionsError`). Options are those of `accountRun`, applied to every run.
#[wasm_bindgen(
    js_name = accountRuns,
    unchecked_return_type = "RunOutcome<Accounting>[]"
)]
pub fn account_runs_js(
    files: Vec<Ts<RunFileInput>>,
    options: Option<Ts<AccountOptions>>,
) -> Result<js_sys::Array, JsValue> {
    let (options, policy) = account_options(options)?;
    let owned = sweep_files(files)?;
    let inputs = inputs_of(&owned);
    let (runs, _) = read_runs(&inputs, &options);
    outcomes(runs, |run| {
        account_run(run, &policy)
            .into_ts()
            .map(JsValue::from)
            .map_err(output_error)
    })
}

/// `inspectRun` for every run among `files` (grouped as `accountRuns` groups them): one
/// `{run, result}` or `{run, error}` per run, sorted by the run's folder.
#[wasm_bindgen(
    js_name = inspectRuns,
    unchecked_return_type = "RunOutcome<RunInspection>[]"
)]
pub fn inspect_runs_js(
    files: Vec<Ts<RunFileInput>>,
    options: Option<Ts<InspectOptions>>,
) -> Result<js_sys::Array, JsValue> {
    let options = inspect_options(options)?;
    let owned = sweep_files(files)?;
    let inputs = inputs_of(&owned);
    let (runs, _) = read_runs(&inputs, &options);
    outcomes(runs, |run| {
        inspect_run(run)
            .into_ts()
            .map(JsValue::from)
            .map_err(output_error)
    })
}

/// The accounting contract this build implements (`"kvledger/1"`).
#[wasm_bindgen(js_name = contractVersion)]
pub fn contract_version() -> String {
    CONTRACT_VERSION.to_string()
}

/// The package version (the crate's version).
#[wasm_bindgen(js_name = packageVersion)]
pub fn package_version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

/// Every error code kvledger can throw, in a stable order.
#[wasm_bindgen(js_name = errorCodes)]
pub fn error_codes() -> Vec<Ts<ErrorCode>> {
    ErrorCode::ALL
        .iter()
        .filter_map(|c| c.into_ts().ok())
        .collect()
}

#[wasm_bindgen(js_name = isKvledgerError, skip_typescript)]
pub fn is_kvledger_error(value: &JsValue) -> bool {
    if !value.is_instance_of::<js_sys::Error>() {
        return false;
    }
    let name = js_sys::Reflect::get(value, &JsValue::from_str("name"))
        .ok()
        .and_then(|v| v.as_string());
    let code = js_sys::Reflect::get(value, &JsValue::from_str("code"))
        .ok()
        .and_then(|v| v.as_string());
    matches!(name.as_deref(), Some("ReadError" | "OptionsError"))
        && code.is_some_and(|c| ErrorCode::ALL.iter().any(|k| k.as_str() == c))
}
