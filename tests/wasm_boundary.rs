//! The raw exports of the npm package, exercised with JS values as the wrapper passes them:
//! files as JS objects (text, `Uint8Array`, `ArrayBuffer`, other views), options as JSON text,
//! answers as the JSON envelope `{"ok": ...}` / `{"error": ...}` (snake_case, epoch ns as
//! decimal strings), and a module that keeps working after many failed calls.
//!
//! Runs in Node (`cargo test --target wasm32-unknown-unknown --test wasm_boundary`) and in
//! headless Chromium (the same with `WASM_BINDGEN_USE_BROWSER=1`); see `scripts/wasm-tests`.
#![cfg(target_arch = "wasm32")]

use js_sys::{Array, DataView, Object, Reflect, Uint8Array};
use kvledger::wasm::pricing::{cache_observation_raw, price_point_raw};
use kvledger::wasm::{
    account_run_raw, account_runs_raw, contract_version_raw, error_codes_raw, inspect_run_raw,
    inspect_runs_raw, package_version_raw,
};
use serde_json::Value;
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

fn files(items: Vec<JsValue>) -> JsValue {
    items.into_iter().collect::<Array>().into()
}

/// A stream's reply, handed over in pieces of its UTF-8 text, as one text.
fn joined(pieces: Array) -> String {
    let mut bytes = Vec::new();
    for piece in pieces.iter() {
        bytes.extend(js_sys::Uint8Array::new(&piece).to_vec());
    }
    String::from_utf8(bytes).expect("the pieces are UTF-8 together")
}

/// The envelope's `ok` value; panics with the error when there is none.
fn ok(envelope: String) -> Value {
    let mut v: Value = serde_json::from_str(&envelope).expect("the envelope is JSON");
    match v.get_mut("ok") {
        Some(result) => result.take(),
        None => panic!("expected a result, got {envelope}"),
    }
}

/// The envelope's `error`, checked to carry `code` and a message.
fn error(envelope: String, code: &str) -> Value {
    let v: Value = serde_json::from_str(&envelope).expect("the envelope is JSON");
    let err = v
        .get("error")
        .unwrap_or_else(|| panic!("expected {code}, got {envelope}"));
    assert_eq!(err["code"], code, "{envelope}");
    assert!(
        !err["message"].as_str().unwrap_or_default().is_empty(),
        "{envelope}"
    );
    err.clone()
}

fn inspect(items: Vec<JsValue>, options: Option<&str>) -> String {
    inspect_run_raw(files(items), options.map(str::to_string))
}

/// The digits after `"key": ` in the fixture text (the exact epoch ns).
fn literal(text: &str, key: &str) -> String {
    let needle = format!("\"{key}\": ");
    let start = text.find(&needle).expect("key in fixture") + needle.len();
    text[start..]
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect()
}

#[wasm_bindgen_test]
fn versions_and_codes() {
    assert_eq!(ok(contract_version_raw()), "kvledger/1");
    assert_eq!(ok(package_version_raw()), env!("CARGO_PKG_VERSION"));
    let codes = ok(error_codes_raw());
    for code in ["JSON_SYNTAX", "NO_ARTIFACTS", "BAD_OPTIONS", "LAUNCH_VALUE"] {
        assert!(
            codes.as_array().unwrap().iter().any(|c| c == code),
            "{code} missing from {codes}"
        );
    }
}

#[wasm_bindgen_test]
fn epoch_ns_are_exact_decimal_strings_in_snake_case() {
    let r = ok(inspect(vec![text_file(TIMESLICES_NAME, TIMESLICES)], None));
    let ep = &r["endpoints"][0];
    assert_eq!(ep["endpoint_url"], "http://localhost:8000/metrics");
    for key in ["first_fetch_ns", "last_fetch_ns"] {
        // 1765793114960054143 (last_fetch_ns) is odd: an f64 on the way would change it.
        assert_eq!(ep[key], Value::String(literal(TIMESLICES, key)), "{key}");
    }
    assert!(r.get("window_candidates").is_some());
    assert!(r.get("windowCandidates").is_none());
}

#[wasm_bindgen_test]
fn bytes_buffers_and_views_equal_text() {
    let by_text = inspect(vec![text_file(TIMESLICES_NAME, TIMESLICES)], None);
    let u8s = Uint8Array::from(TIMESLICES.as_bytes());
    // A view on the middle of a larger buffer: only the view's bytes are the file.
    let padded = Uint8Array::new_with_length(TIMESLICES.len() as u32 + 8);
    padded.set(&u8s, 4);
    let view = DataView::new(&padded.buffer(), 4, TIMESLICES.len());
    for content in [u8s.clone().into(), u8s.buffer().into(), JsValue::from(view)] {
        let by_bytes = inspect(
            vec![obj(&[("name", TIMESLICES_NAME.into()), ("bytes", content)])],
            None,
        );
        assert_eq!(by_bytes, by_text);
    }
}

#[wasm_bindgen_test]
fn absent_optionals_are_omitted() {
    let r = ok(inspect(vec![text_file(TIMESLICES_NAME, TIMESLICES)], None));
    for key in ["requests", "run_summary", "launch"] {
        assert!(r.get(key).is_none(), "{key} present");
    }
    assert!(r["endpoints"][0].get("path_role").is_none());
}

#[wasm_bindgen_test]
fn malformed_json_is_json_syntax_with_file_and_line() {
    let text = "{\n  \"schema_version\": \"1.0\",\n  \"summary\": {\n";
    let err = error(
        inspect(vec![text_file(TIMESLICES_NAME, text)], None),
        "JSON_SYNTAX",
    );
    assert_eq!(err["file"], TIMESLICES_NAME);
    assert!(err["line"].as_u64().expect("line") >= 3, "{err}");
    assert!(
        err.get("position").is_none(),
        "position fields are top-level"
    );
}

#[wasm_bindgen_test]
fn malformed_calls_are_bad_options_with_the_path() {
    let good = || text_file(TIMESLICES_NAME, TIMESLICES);
    let cases: Vec<(JsValue, Option<&str>, &str)> = vec![
        (JsValue::NULL, None, "files"),
        (Object::new().into(), None, "files"),
        (files(vec![JsValue::from_f64(42.0)]), None, "files[0]"),
        (files(vec![obj(&[("text", "{}".into())])]), None, "files[0]"),
        (
            files(vec![obj(&[
                ("name", JsValue::from_f64(1.0)),
                ("text", "x".into()),
            ])]),
            None,
            "files[0].name",
        ),
        (
            files(vec![obj(&[
                ("name", TIMESLICES_NAME.into()),
                ("text", TIMESLICES.into()),
                ("bytes", Uint8Array::from(&b"{}"[..]).into()),
            ])]),
            None,
            "files[0]",
        ),
        (
            files(vec![obj(&[("name", TIMESLICES_NAME.into())])]),
            None,
            "files[0]",
        ),
        (
            files(vec![
                good(),
                obj(&[
                    ("name", "x".into()),
                    ("text", "{}".into()),
                    ("path", "x".into()),
                ]),
            ]),
            None,
            "files[1].path",
        ),
        (
            files(vec![obj(&[("name", "x".into()), ("bytes", "text".into())])]),
            None,
            "files[0].bytes",
        ),
        (
            files(vec![good()]),
            Some(r#"{"bogus": true}"#),
            "options.bogus",
        ),
        (
            files(vec![good()]),
            Some(r#"{"familyPrefixes": ["vllm:"]}"#),
            "options.familyPrefixes",
        ),
        (
            files(vec![good()]),
            Some(r#"{"families": "vllm:"}"#),
            "options.families",
        ),
        (
            files(vec![good()]),
            Some(r#"{"launch_json": "{}", "launch_env": {"FRAMEWORK": "vllm"}}"#),
            "options.launch_json",
        ),
    ];
    for (i, (files, options, path)) in cases.into_iter().enumerate() {
        let err = error(
            inspect_run_raw(files, options.map(str::to_string)),
            "BAD_OPTIONS",
        );
        assert_eq!(err["json_path"], path, "case {i}: {err}");
        assert!(err.get("file").is_none(), "case {i}: {err}");
    }
}

#[wasm_bindgen_test]
fn unknown_policy_fields_are_refused_by_path() {
    let err = error(
        account_run_raw(
            files(vec![text_file(TIMESLICES_NAME, TIMESLICES)]),
            Some(r#"{"policy": {"maxRateWidth": 0.01}}"#.into()),
        ),
        "BAD_OPTIONS",
    );
    assert_eq!(err["json_path"], "options.policy.maxRateWidth");
    let message = err["message"].as_str().unwrap();
    assert!(message.contains("max_rate_width"), "{message}");
}

#[wasm_bindgen_test]
fn bad_launch_env_is_launch_value() {
    error(
        inspect(
            vec![text_file(TIMESLICES_NAME, TIMESLICES)],
            Some(r#"{"launch_env": {"DISAGG": "maybe"}}"#),
        ),
        "LAUNCH_VALUE",
    );
}

#[wasm_bindgen_test]
fn many_bad_calls_do_not_poison_the_module() {
    for i in 0..200 {
        let envelope = match i % 4 {
            0 => inspect(vec![text_file(TIMESLICES_NAME, "{ not json")], None),
            1 => inspect(vec![text_file("junk.bin", "\u{1}\u{2}")], None),
            2 => inspect(vec![obj(&[("name", TIMESLICES_NAME.into())])], None),
            _ => inspect(vec![JsValue::from_f64(42.0)], None),
        };
        assert!(
            envelope.starts_with("{\"error\":"),
            "bad call {i}: {envelope}"
        );
    }
    let r = ok(inspect(vec![text_file(TIMESLICES_NAME, TIMESLICES)], None));
    assert_eq!(
        r["endpoints"][0]["last_fetch_ns"],
        Value::String(literal(TIMESLICES, "last_fetch_ns"))
    );
}

#[wasm_bindgen_test]
fn pricing_takes_named_arguments_and_an_accounting_result() {
    let priced = ok(price_point_raw(
        r#"{"point": {"row": {"isl": 1024, "osl": 1024, "metrics": {"tput_per_gpu": 2000, "input_tput_per_gpu": 1600, "output_tput_per_gpu": 400}}}}"#,
    ));
    assert!((priced["revenue_per_gpu_hour"].as_f64().unwrap() - 7.2).abs() < 1e-9);
    let err = error(
        price_point_raw(r#"{"point": {"row": {}}, "options": {"rateCard": {}}}"#),
        "BAD_OPTIONS",
    );
    assert_eq!(err["json_path"], "options.rateCard");
    let err = error(price_point_raw(r#"{"options": {}}"#), "BAD_OPTIONS");
    assert!(
        err["message"].as_str().unwrap().contains("`point`"),
        "{err}"
    );

    let accounting = ok(account_run_raw(
        files(vec![text_file(TIMESLICES_NAME, TIMESLICES)]),
        None,
    ));
    let observation = ok(cache_observation_raw(
        &serde_json::json!({ "accounting": accounting }).to_string(),
    ));
    assert_eq!(
        observation["status"],
        accounting["cache_validity"]["status"]
    );
}

/// A dropped sweep folder: names are relative paths (`tests/fixtures/sweep`, one run broken).
fn sweep_files() -> Vec<JsValue> {
    let text = |name: &str, t: &str| text_file(name, t);
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
        obj(&[
            ("name", "conc8/plots/ttft.png".into()),
            ("bytes", png.into()),
        ]),
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

#[wasm_bindgen_test]
fn account_runs_groups_a_dropped_sweep_and_reports_the_broken_run_in_place() {
    let out = account_runs_raw(files(sweep_files()), None);
    let runs = ok(out.clone());
    let names: Vec<&str> = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["conc8", "profile_runs/run_0001", "profile_runs/run_0002"]
    );
    // conc8's own launch.json (nearest) names its endpoint.
    assert_eq!(
        runs[0]["result"]["cache_validity"]["roles"]["unified"][0],
        "http://localhost:8894/metrics"
    );
    assert!(runs[0].get("error").is_none());
    assert!(runs[1]["result"]["cache_validity"].is_object());
    let err = &runs[2]["error"];
    assert!(runs[2].get("result").is_none());
    assert_eq!(err["code"], "JSON_SYNTAX");
    assert_eq!(
        err["file"],
        "profile_runs/run_0002/server_metrics_export.json"
    );
    assert!(err["line"].as_u64().is_some());

    // Whatever order the files are dropped in, the same bytes.
    let mut reversed = sweep_files();
    reversed.reverse();
    assert_eq!(account_runs_raw(files(reversed), None), out);

    // The same path twice is a malformed call.
    let mut twice = sweep_files();
    twice.push(text_file("./conc8//launch.json", "{}"));
    let err = error(account_runs_raw(files(twice), None), "BAD_OPTIONS");
    assert_eq!(err["json_path"], "files[12].name");
}

#[wasm_bindgen_test]
fn inspect_runs_lists_ignored_files_in_their_run() {
    let runs = ok(inspect_runs_raw(files(sweep_files()), None));
    let conc8 = &runs[0]["result"];
    let ignored: Vec<(&str, &str)> = conc8["ignored"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["name"].as_str().unwrap(), i["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(
        ignored,
        [
            ("conc8/plots/ttft.png", ignored[0].1),
            (
                "conc8/profile_export_aiperf.csv",
                "run summary as CSV: the JSON one is read"
            )
        ]
    );
    assert_eq!(
        conc8["benchmark_ids"]["conc8/profile_export_aiperf.json"],
        "882d2371-6690-41d8-94d6-8e3ccc626557"
    );
}

#[wasm_bindgen_test]
fn a_stream_pushed_in_chunks_equals_account_run() {
    use kvledger::wasm::stream::AccountStream;
    let whole = ok(account_run_raw(
        files(vec![text_file(TIMESLICES_NAME, TIMESLICES)]),
        None,
    ));
    for size in [1usize, 7, 4096, TIMESLICES.len()] {
        let mut s = AccountStream::new(None, None);
        ok(s.start());
        ok(s.begin_file(TIMESLICES_NAME.to_string()));
        for piece in TIMESLICES.as_bytes().chunks(size) {
            assert_eq!(ok(s.push(piece))["wants_more"], true);
        }
        ok(s.end_file());
        assert_eq!(ok(joined(s.finish())), whole, "chunks of {size}");
        error(joined(s.finish()), "BAD_OPTIONS");
    }
}

#[wasm_bindgen_test]
fn a_stream_past_its_budget_is_input_too_large_and_the_module_goes_on() {
    use kvledger::wasm::stream::AccountStream;
    let mut s = AccountStream::new(None, Some(1024.0));
    ok(s.start());
    ok(s.begin_file(TIMESLICES_NAME.to_string()));
    let pushed = ok(s.push(TIMESLICES.as_bytes()));
    assert_eq!(pushed["wants_more"], false, "{pushed}");
    ok(s.end_file());
    let e = error(joined(s.finish()), "INPUT_TOO_LARGE");
    assert_eq!(e["file"], TIMESLICES_NAME);
    error(AccountStream::new(None, Some(-3.0)).start(), "BAD_OPTIONS");
    ok(account_run_raw(
        files(vec![text_file(TIMESLICES_NAME, TIMESLICES)]),
        None,
    ));
}

/// Past 64 MiB, linear memory grows by an eighth at a time (`src/wasm/stream.rs`, `grow_ahead`):
/// every grow hands JavaScript a new `ArrayBuffer`, and growing by the allocator's 64 KiB
/// requests set off hundreds of full collections in V8 during one large call.
#[wasm_bindgen_test]
fn linear_memory_grows_in_few_steps_past_64_mib() {
    let pages = || core::arch::wasm32::memory_size(0);
    const BLOCK: usize = 16 << 10;
    let mut blocks: Vec<Vec<u8>> = Vec::new();
    while pages() < 1024 + 16 {
        blocks.push(vec![1; BLOCK]);
    }
    let (start, mut last, mut grows) = (pages(), pages(), 0);
    // 100 MiB more in 16 KiB blocks: 1,600 grows of 64 KiB without growing ahead.
    for _ in 0..(100 << 20) / BLOCK {
        blocks.push(vec![1; BLOCK]);
        if pages() != last {
            grows += 1;
            last = pages();
        }
    }
    let filled = blocks.iter().all(|b| b[BLOCK - 1] == 1);
    // Freed before asserting: a failed assertion traps without unwinding, and the heap it
    // left in use would push later streams past their budget.
    drop(blocks);
    assert!(filled);
    assert!(
        (1..=16).contains(&grows),
        "{grows} grows from {start} to {last} pages"
    );
}

/// The wasm build's own `memcmp`/`bcmp` (`src/wasm/mem.rs`, eight bytes at a time) order bytes
/// as unsigned, at every length and every place of the first difference.
#[wasm_bindgen_test]
fn memcmp_orders_bytes_as_unsigned_at_every_length_and_offset() {
    use kvledger::wasm::mem::{bcmp, memcmp};
    for len in 0..40usize {
        let base: Vec<u8> = (0..len).map(|i| (i * 37 % 251) as u8).collect();
        // SAFETY: both slices hold `len` bytes.
        assert_eq!(
            unsafe { memcmp(base.as_ptr(), base.clone().as_ptr(), len) },
            0
        );
        assert_eq!(
            unsafe { bcmp(base.as_ptr(), base.clone().as_ptr(), len) },
            0
        );
        for at in 0..len {
            for (x, y) in [(0u8, 0xffu8), (0x7f, 0x80), (0x80, 0x7f), (0xff, 0), (1, 2)] {
                let (mut a, mut b) = (base.clone(), base.clone());
                a[at] = x;
                b[at] = y;
                // Bytes after the first difference must not matter.
                if at + 1 < len {
                    a[at + 1..].fill(0);
                    b[at + 1..].fill(0xff);
                }
                // SAFETY: both slices hold `len` bytes.
                let got = unsafe { memcmp(a.as_ptr(), b.as_ptr(), len) };
                assert_eq!(
                    got.signum(),
                    i32::from(x).cmp(&i32::from(y)) as i32,
                    "{len} {at} {x} {y}"
                );
                assert_eq!(unsafe { bcmp(a.as_ptr(), b.as_ptr(), len) } != 0, x != y);
            }
        }
    }
    assert!("http://10.0.0.1:8000/metrics" < "http://10.0.0.1:8001/metrics");
}

#[wasm_bindgen_test]
fn hash_keys_come_from_the_host() {
    // std's fallback on wasm32 is the same keys in every instance; the host's are not.
    let a = kvledger::wasm::host_keys().unwrap();
    let b = kvledger::wasm::host_keys().unwrap();
    assert_ne!(a, b);
    assert_ne!(a, [0, 0]);
}
