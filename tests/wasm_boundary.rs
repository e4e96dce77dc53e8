//! The JS boundary of the npm package, exercised through `JsValue`s exactly as JS sees it:
//! bigints, `undefined` (never `null`) for absent fields, error `name`/`code`, and a module
//! that keeps working after many failed calls.
//!
//! Runs in Node (`cargo test --target wasm32-unknown-unknown --test wasm_boundary`) and in
//! headless Chromium (the same with `WASM_BINDGEN_USE_BROWSER=1`); see `scripts/wasm-tests`.
#![cfg(target_arch = "wasm32")]

use js_sys::{Array, BigInt, Object, Reflect, Uint8Array};
use kvledger::wasm::{
    account_runs_js, contract_version, error_codes, inspect_run_js, inspect_runs_js,
    is_kvledger_error, package_version, AccountOptions, InspectOptions, RunFileInput,
};
use tsify::Ts;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

/// AIPerf server-metrics JSON export, one vLLM endpoint, timeslices; `*_ns` values > 2^53.
const TIMESLICES: &str =
    include_str!("../test-js/fixtures/vllm-1-endpoint-timeslices.server_metrics_export.json");
const TIMESLICES_NAME: &str = "server_metrics_export.json";

fn obj(pairs: &[(&str, JsValue)]) -> JsValue {
    let o = Object::new();
    for (k, v) in pairs {
        Reflect::set(&o, &JsValue::from_str(k), v).unwrap();
    }
    o.into()
}

fn text_file(name: &str, text: &str) -> JsValue {
    obj(&[("name", name.into()), ("text", text.into())])
}

fn get(v: &JsValue, key: &str) -> JsValue {
    Reflect::get(v, &JsValue::from_str(key)).unwrap()
}

fn has(v: &JsValue, key: &str) -> bool {
    Reflect::has(v, &JsValue::from_str(key)).unwrap()
}

fn inspect(files: Vec<JsValue>, options: Option<JsValue>) -> Result<JsValue, JsValue> {
    let files: Vec<Ts<RunFileInput>> = files.into_iter().map(Ts::new_unchecked).collect();
    let options: Option<Ts<InspectOptions>> = options.map(Ts::new_unchecked);
    inspect_run_js(files, options).map(JsValue::from)
}

/// The digits after `"key": ` in the fixture text, as an exact JS bigint (never via f64).
fn literal_bigint(text: &str, key: &str) -> JsValue {
    let needle = format!("\"{key}\": ");
    let start = text.find(&needle).expect("key in fixture") + needle.len();
    let digits: String = text[start..]
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    assert!(digits.len() >= 16, "{key} literal: {digits}");
    BigInt::new(&JsValue::from_str(&digits)).unwrap().into()
}

fn expect_error(result: Result<JsValue, JsValue>, name: &str, code: &str) -> JsValue {
    let err = match result {
        Ok(v) => panic!("expected {name}/{code}, got a result: {v:?}"),
        Err(e) => e,
    };
    assert!(
        err.is_instance_of::<js_sys::Error>(),
        "not an Error: {err:?}"
    );
    assert_eq!(
        get(&err, "name").as_string().as_deref(),
        Some(name),
        "{err:?}"
    );
    assert_eq!(
        get(&err, "code").as_string().as_deref(),
        Some(code),
        "{err:?}"
    );
    let message = get(&err, "message").as_string().unwrap_or_default();
    assert!(!message.is_empty(), "empty message");
    assert!(is_kvledger_error(&err));
    err
}

/// No `null` anywhere in a result: absent optional values are omitted.
fn assert_no_null(v: &JsValue, path: &str) {
    assert!(!v.is_null(), "null at {path}");
    if Array::is_array(v) {
        for (i, item) in Array::from(v).iter().enumerate() {
            assert_no_null(&item, &format!("{path}[{i}]"));
        }
    } else if v.is_object() {
        let o: &Object = v.unchecked_ref();
        for key in Object::keys(o).iter() {
            let k = key.as_string().unwrap();
            assert_no_null(&get(v, &k), &format!("{path}.{k}"));
        }
    }
}

#[wasm_bindgen_test]
fn versions_and_codes() {
    assert_eq!(contract_version(), "kvledger/1");
    assert_eq!(package_version(), env!("CARGO_PKG_VERSION"));
    let codes: Vec<String> = error_codes()
        .iter()
        .map(|c| c.js_value().as_string().unwrap())
        .collect();
    for code in ["JSON_SYNTAX", "NO_ARTIFACTS", "BAD_OPTIONS", "LAUNCH_VALUE"] {
        assert!(
            codes.iter().any(|c| c == code),
            "{code} missing from {codes:?}"
        );
    }
}

#[wasm_bindgen_test]
fn bigint_ns_round_trips_exactly() {
    let result = inspect(vec![text_file(TIMESLICES_NAME, TIMESLICES)], None).unwrap();
    let endpoints = Array::from(&get(&result, "endpoints"));
    assert_eq!(endpoints.length(), 1);
    let ep = endpoints.get(0);
    assert_eq!(
        get(&ep, "endpointUrl").as_string().as_deref(),
        Some("http://localhost:8000/metrics")
    );
    for (field, key) in [
        ("firstFetchNs", "first_fetch_ns"),
        ("lastFetchNs", "last_fetch_ns"),
    ] {
        let got = get(&ep, field);
        assert!(got.is_bigint(), "{field} is not a bigint: {got:?}");
        let want = literal_bigint(TIMESLICES, key);
        // 1765793114960054143 (last_fetch_ns) is odd: an f64 on the way would change it.
        assert!(Object::is(&got, &want), "{field}: {got:?} != {want:?}");
    }
}

#[wasm_bindgen_test]
fn bytes_input_equals_text_input() {
    let bytes = Uint8Array::from(TIMESLICES.as_bytes());
    let by_bytes = inspect(
        vec![obj(&[
            ("name", TIMESLICES_NAME.into()),
            ("bytes", bytes.into()),
        ])],
        None,
    )
    .unwrap();
    let by_text = inspect(vec![text_file(TIMESLICES_NAME, TIMESLICES)], None).unwrap();
    let ep_b = Array::from(&get(&by_bytes, "endpoints")).get(0);
    let ep_t = Array::from(&get(&by_text, "endpoints")).get(0);
    assert!(Object::is(
        &get(&ep_b, "lastFetchNs"),
        &get(&ep_t, "lastFetchNs")
    ));
    assert_eq!(
        Array::from(&get(&by_bytes, "families")).length(),
        Array::from(&get(&by_text, "families")).length()
    );
}

#[wasm_bindgen_test]
fn absent_optionals_are_undefined_not_null() {
    let result = inspect(vec![text_file(TIMESLICES_NAME, TIMESLICES)], None).unwrap();
    assert_no_null(&result, "result");
    // No per-request records, run summary or launch facts were given.
    for key in ["requests", "runSummary", "launch"] {
        assert!(!has(&result, key), "{key} present");
        assert!(get(&result, key).is_undefined());
    }
    let ep = Array::from(&get(&result, "endpoints")).get(0);
    // `/metrics` names no role.
    assert!(!has(&ep, "pathRole"));
    assert!(get(&ep, "pathRole").is_undefined());
}

#[wasm_bindgen_test]
fn malformed_json_is_json_syntax_with_line() {
    let text = "{\n  \"schema_version\": \"1.0\",\n  \"summary\": {\n";
    let err = expect_error(
        inspect(vec![text_file(TIMESLICES_NAME, text)], None),
        "ReadError",
        "JSON_SYNTAX",
    );
    assert_eq!(
        get(&err, "file").as_string().as_deref(),
        Some(TIMESLICES_NAME)
    );
    let position = get(&err, "position");
    let line = get(&position, "line")
        .as_f64()
        .expect("position.line is a number");
    assert!(line >= 3.0, "line {line}");
    assert_no_null(&position, "position");
}

#[wasm_bindgen_test]
fn unknown_file_is_no_artifacts() {
    let err = expect_error(
        inspect(vec![text_file("notes.txt", "nothing to see here\n")], None),
        "ReadError",
        "NO_ARTIFACTS",
    );
    assert_no_null(&get(&err, "position"), "position");
}

#[wasm_bindgen_test]
fn bad_options_are_options_errors() {
    let good = || text_file(TIMESLICES_NAME, TIMESLICES);
    // Both `text` and `bytes`.
    let both = obj(&[
        ("name", TIMESLICES_NAME.into()),
        ("text", TIMESLICES.into()),
        ("bytes", Uint8Array::from(TIMESLICES.as_bytes()).into()),
    ]);
    expect_error(inspect(vec![both], None), "OptionsError", "BAD_OPTIONS");
    // Neither.
    let neither = obj(&[("name", TIMESLICES_NAME.into())]);
    expect_error(inspect(vec![neither], None), "OptionsError", "BAD_OPTIONS");
    // launchJson and launchEnv together.
    let env = obj(&[("FRAMEWORK", "vllm".into())]);
    expect_error(
        inspect(
            vec![good()],
            Some(obj(&[("launchJson", "{}".into()), ("launchEnv", env)])),
        ),
        "OptionsError",
        "BAD_OPTIONS",
    );
    // Plain errors are not kvledger errors.
    assert!(!is_kvledger_error(&js_sys::Error::new("x").into()));
    assert!(!is_kvledger_error(&JsValue::from_str("ReadError")));
}

/// serde's `deny_unknown_fields` is not enough here: serde-wasm-bindgen reads only the
/// fields it knows from a JS object, so unknown keys must be checked at the boundary.
#[wasm_bindgen_test]
fn unknown_keys_are_options_errors() {
    let good = || text_file(TIMESLICES_NAME, TIMESLICES);
    // Unknown option key.
    expect_error(
        inspect(vec![good()], Some(obj(&[("bogus", JsValue::TRUE)]))),
        "OptionsError",
        "BAD_OPTIONS",
    );
    // Unknown key in a file entry.
    let extra = obj(&[
        ("name", TIMESLICES_NAME.into()),
        ("text", TIMESLICES.into()),
        ("path", "x".into()),
    ]);
    expect_error(inspect(vec![extra], None), "OptionsError", "BAD_OPTIONS");
}

#[wasm_bindgen_test]
fn bad_launch_env_is_launch_value() {
    let env = obj(&[("DISAGG", "maybe".into())]);
    expect_error(
        inspect(
            vec![text_file(TIMESLICES_NAME, TIMESLICES)],
            Some(obj(&[("launchEnv", env)])),
        ),
        "ReadError",
        "LAUNCH_VALUE",
    );
}

#[wasm_bindgen_test]
fn many_bad_calls_do_not_poison_the_module() {
    for i in 0..200 {
        let result = match i % 4 {
            0 => inspect(vec![text_file(TIMESLICES_NAME, "{ not json")], None),
            1 => inspect(vec![text_file("junk.bin", "\u{1}\u{2}")], None),
            2 => inspect(vec![obj(&[("name", TIMESLICES_NAME.into())])], None),
            _ => inspect(vec![JsValue::from_f64(42.0)], None),
        };
        assert!(result.is_err(), "bad call {i} succeeded");
    }
    let result = inspect(vec![text_file(TIMESLICES_NAME, TIMESLICES)], None).unwrap();
    let ep = Array::from(&get(&result, "endpoints")).get(0);
    assert!(Object::is(
        &get(&ep, "lastFetchNs"),
        &literal_bigint(TIMESLICES, "last_fetch_ns")
    ));
    assert_eq!(contract_version(), "kvledger/1");
}

/// A dropped sweep folder: names are relative paths (`tests/fixtures/sweep`, one run broken).
fn sweep_files() -> Vec<(&'static str, JsValue)> {
    let text = |name: &'static str, t: &'static str| (name, text_file(name, t));
    let png =
        Uint8Array::from(&include_bytes!("fixtures/aiperf-folder/plots/ttft_over_time.png")[..]);
    vec![
        text("launch.json", include_str!("fixtures/sweep/launch.json")),
        text("NOTES.md", include_str!("fixtures/sweep/NOTES.md")),
        text(
            "conc8/launch.json",
            include_str!("fixtures/sweep/conc8/launch.json"),
        ),
        text(
            "conc8/server_metrics_export.csv",
            include_str!("fixtures/sweep/conc8/server_metrics_export.csv"),
        ),
        text(
            "conc8/profile_export_aiperf.json",
            include_str!("fixtures/sweep/conc8/profile_export_aiperf.json"),
        ),
        text(
            "conc8/profile_export_aiperf.csv",
            include_str!("fixtures/aiperf-folder/profile_export_aiperf.csv"),
        ),
        (
            "conc8/plots/ttft.png",
            obj(&[
                ("name", "conc8/plots/ttft.png".into()),
                ("bytes", png.into()),
            ]),
        ),
        text(
            "profile_runs/launch.json",
            include_str!("fixtures/sweep/profile_runs/launch.json"),
        ),
        text(
            "profile_runs/run_0001/profile_export.jsonl",
            include_str!("fixtures/sweep/profile_runs/run_0001/profile_export.jsonl"),
        ),
        text(
            "profile_runs/run_0001/profile_export_aiperf.json",
            include_str!("fixtures/sweep/profile_runs/run_0001/profile_export_aiperf.json"),
        ),
        text(
            "profile_runs/run_0002/server_metrics_export.json",
            include_str!("fixtures/sweep/profile_runs/run_0002/server_metrics_export.json"),
        ),
        text(
            "profile_runs/run_0002/profile_export_aiperf.json",
            include_str!("fixtures/sweep/profile_runs/run_0002/profile_export_aiperf.json"),
        ),
    ]
}

fn account_runs(files: Vec<JsValue>, options: Option<JsValue>) -> Result<JsValue, JsValue> {
    let files: Vec<Ts<RunFileInput>> = files.into_iter().map(Ts::new_unchecked).collect();
    let options: Option<Ts<AccountOptions>> = options.map(Ts::new_unchecked);
    account_runs_js(files, options).map(JsValue::from)
}

fn inspect_runs(files: Vec<JsValue>) -> Result<JsValue, JsValue> {
    let files: Vec<Ts<RunFileInput>> = files.into_iter().map(Ts::new_unchecked).collect();
    inspect_runs_js(files, None).map(JsValue::from)
}

fn stringify(v: &JsValue) -> String {
    // Plain JSON.stringify refuses bigints: spell them as decimal strings for the comparison.
    let replacer =
        js_sys::Function::new_with_args("k, v", "return typeof v === 'bigint' ? v.toString() : v");
    js_sys::JSON::stringify_with_replacer(v, &replacer)
        .unwrap()
        .as_string()
        .unwrap()
}

#[wasm_bindgen_test]
fn account_runs_groups_a_dropped_sweep_and_reports_the_broken_run_in_place() {
    let files: Vec<JsValue> = sweep_files().into_iter().map(|(_, f)| f).collect();
    let out = account_runs(files.clone(), None).expect("a sweep is never thrown");
    let runs = Array::from(&out);
    let names: Vec<String> = runs
        .iter()
        .map(|r| get(&r, "run").as_string().unwrap())
        .collect();
    assert_eq!(
        names,
        ["conc8", "profile_runs/run_0001", "profile_runs/run_0002"]
    );
    let conc8 = get(&runs.get(0), "result");
    let validity = get(&conc8, "cache_validity");
    assert!(validity.is_object(), "conc8 accounted");
    // conc8's own launch.json (nearest) names its endpoint.
    let unified = Array::from(&get(&get(&validity, "roles"), "unified"));
    assert_eq!(
        unified.get(0).as_string().as_deref(),
        Some("http://localhost:8894/metrics")
    );
    assert!(!has(&runs.get(0), "error"));
    assert!(get(&get(&runs.get(1), "result"), "cache_validity").is_object());
    let broken = runs.get(2);
    assert!(!has(&broken, "result"));
    let err = get(&broken, "error");
    assert_eq!(
        get(&err, "code").as_string().as_deref(),
        Some("JSON_SYNTAX")
    );
    assert_eq!(
        get(&err, "file").as_string().as_deref(),
        Some("profile_runs/run_0002/server_metrics_export.json")
    );
    assert!(get(&err, "line").as_f64().is_some());
    assert!(!get(&err, "message")
        .as_string()
        .unwrap_or_default()
        .is_empty());

    // Whatever order the files are dropped in, the same result.
    let mut reversed = files.clone();
    reversed.reverse();
    let again = account_runs(reversed, None).unwrap();
    assert_eq!(stringify(&again), stringify(&out));

    // The same path twice is a malformed call.
    let mut twice = files;
    twice.push(text_file("./conc8//launch.json", "{}"));
    expect_error(account_runs(twice, None), "OptionsError", "BAD_OPTIONS");
}

#[wasm_bindgen_test]
fn inspect_runs_lists_ignored_files_in_their_run() {
    let files: Vec<JsValue> = sweep_files().into_iter().map(|(_, f)| f).collect();
    let runs = Array::from(&inspect_runs(files).unwrap());
    assert_eq!(runs.length(), 3);
    let conc8 = get(&runs.get(0), "result");
    let ignored: Vec<(String, String)> = Array::from(&get(&conc8, "ignored"))
        .iter()
        .map(|i| {
            (
                get(&i, "name").as_string().unwrap(),
                get(&i, "reason").as_string().unwrap(),
            )
        })
        .collect();
    let names: Vec<&str> = ignored.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["conc8/plots/ttft.png", "conc8/profile_export_aiperf.csv"]
    );
    assert_eq!(ignored[1].1, "run summary as CSV: the JSON one is read");
    let ids = get(&conc8, "benchmarkIds");
    assert_eq!(
        get(&ids, "conc8/profile_export_aiperf.json")
            .as_string()
            .as_deref(),
        Some("882d2371-6690-41d8-94d6-8e3ccc626557")
    );
}
