use kvledger::model::Role;
use kvledger::read::launch::{launch_from_env, read_launch_json};
use kvledger::{ErrorCode, ReadError};

fn json(t: &str) -> Result<kvledger::model::LaunchFacts, ReadError> {
    read_launch_json("launch.json", t)
}

fn refused(r: Result<kvledger::model::LaunchFacts, ReadError>, needles: &[&str]) {
    let e = r.expect_err("must be refused");
    assert_eq!(e.code, ErrorCode::LaunchValue, "{e}");
    for n in needles {
        assert!(e.message.contains(n), "message `{}` lacks `{n}`", e.message);
    }
}

#[test]
fn json_form() {
    let f = json(
        r#"{"framework": " SGLang ", "disaggregated": true,
            "prefill_endpoints": ["http://10.0.0.1:8000/metrics", "10.0.0.2:8000"],
            "decode_endpoints": "HTTPS://Node-D1:8001/, node-d2:8001 ,,",
            "agg_endpoints": [],
            "endpoint_roles": {"http://router:30000/metrics": "router", "10.0.0.1:8000": "prefill"},
            "kv_offloading": "DRAM", "kv_offload_backend": "lmcache"}"#,
    )
    .unwrap();
    assert_eq!(f.framework.as_deref(), Some("sglang"));
    assert_eq!(f.disaggregated, Some(true));
    assert_eq!(f.prefill_endpoints, ["10.0.0.1:8000", "10.0.0.2:8000"]);
    assert_eq!(f.decode_endpoints, ["node-d1:8001", "node-d2:8001"]);
    assert!(f.agg_endpoints.is_empty());
    assert_eq!(f.endpoint_roles["router:30000"], Role::Frontend);
    assert_eq!(f.endpoint_roles["10.0.0.1:8000"], Role::Prefill);
    assert_eq!(f.kv_offloading.as_deref(), Some("dram"));
    assert_eq!(f.kv_offload_backend.as_deref(), Some("lmcache"));
}

#[test]
fn json_env_style_keys() {
    let f = json(
        r#"{"FRAMEWORK": "vllm", "DISAGG": "no", "SRT_AGG_ENDPOINTS": "localhost:8000",
            "KV_OFFLOADING": "none", "KV_OFFLOAD_BACKEND": null}"#,
    )
    .unwrap();
    assert_eq!(f.framework.as_deref(), Some("vllm"));
    assert_eq!(f.disaggregated, Some(false));
    assert_eq!(f.agg_endpoints, ["localhost:8000"]);
    assert_eq!(f.kv_offloading.as_deref(), Some("none"));
    assert_eq!(f.kv_offload_backend, None);
    assert_eq!(json("{}").unwrap(), Default::default());
}

#[test]
fn env_form() {
    let vars = [
        ("PATH", "/usr/bin"),
        ("FRAMEWORK", "vllm"),
        ("DISAGG", "TRUE"),
        ("SRT_PREFILL_ENDPOINTS", " p1:8000 , p2:8000,"),
        ("SRT_DECODE_ENDPOINTS", "http://d1:9000/metrics"),
        ("SRT_AGG_ENDPOINTS", ""),
        ("KV_OFFLOADING", "SSD"),
        ("KV_OFFLOAD_BACKEND", "mooncake"),
        ("disagg", "not-a-bool-but-ignored"),
    ];
    let f = launch_from_env(vars).unwrap();
    assert_eq!(f.framework.as_deref(), Some("vllm"));
    assert_eq!(f.disaggregated, Some(true));
    assert_eq!(f.prefill_endpoints, ["p1:8000", "p2:8000"]);
    assert_eq!(f.decode_endpoints, ["d1:9000"]);
    assert!(f.agg_endpoints.is_empty());
    assert_eq!(f.kv_offloading.as_deref(), Some("ssd"));
    assert_eq!(f.kv_offload_backend.as_deref(), Some("mooncake"));
    for (v, b) in [
        ("1", true),
        ("0", false),
        ("Yes", true),
        ("NO", false),
        ("false", false),
    ] {
        assert_eq!(
            launch_from_env([("DISAGG", v)]).unwrap().disaggregated,
            Some(b)
        );
    }
    assert_eq!(
        launch_from_env([("DISAGG", "")]).unwrap().disaggregated,
        None
    );
}

#[test]
fn env_refusals_by_name() {
    refused(launch_from_env([("DISAGG", "maybe")]), &["DISAGG", "maybe"]);
    refused(
        launch_from_env([("SRT_PREFILL_ENDPOINTS", "host")]),
        &["SRT_PREFILL_ENDPOINTS", "host", "port"],
    );
    refused(
        launch_from_env([("SRT_DECODE_ENDPOINTS", "h:abc")]),
        &["SRT_DECODE_ENDPOINTS", "h:abc"],
    );
    refused(
        launch_from_env([("SRT_AGG_ENDPOINTS", "h:70000")]),
        &["SRT_AGG_ENDPOINTS", "h:70000", "range"],
    );
    refused(launch_from_env([("SRT_AGG_ENDPOINTS", "h:0")]), &["h:0"]);
    refused(
        launch_from_env([
            ("SRT_PREFILL_ENDPOINTS", "a:1"),
            ("SRT_DECODE_ENDPOINTS", "http://A:1/metrics"),
        ]),
        &["a:1", "SRT_PREFILL_ENDPOINTS", "SRT_DECODE_ENDPOINTS"],
    );
    refused(
        launch_from_env([("KV_OFFLOADING", "gpu")]),
        &["KV_OFFLOADING", "gpu"],
    );
    let e = launch_from_env([("DISAGG", "x")]).unwrap_err();
    assert_eq!(e.file, "env");
}

#[test]
fn json_refusals_by_name() {
    refused(json(r#"{"disagregated": true}"#), &["disagregated"]);
    refused(
        json(r#"{"disaggregated": "perhaps"}"#),
        &["disaggregated", "perhaps"],
    );
    refused(json(r#"{"disaggregated": 1}"#), &["disaggregated"]);
    refused(
        json(r#"{"prefill_endpoints": ["x"]}"#),
        &["prefill_endpoints", "`x`"],
    );
    refused(
        json(r#"{"prefill_endpoints": [5]}"#),
        &["prefill_endpoints"],
    );
    refused(
        json(r#"{"endpoint_roles": {"a:1": "boss"}}"#),
        &["endpoint_roles", "boss"],
    );
    refused(json(r#"{"endpoint_roles": ["a:1"]}"#), &["endpoint_roles"]);
    refused(
        json(r#"{"endpoint_roles": {"a:1": "prefill"}, "decode_endpoints": ["a:1"]}"#),
        &["a:1"],
    );
    refused(
        json(r#"{"endpoint_roles": {"a:1": "prefill", "http://A:1/m": "decode"}}"#),
        &["a:1"],
    );
    refused(
        json(r#"{"agg_endpoints": ["a:1"], "prefill_endpoints": "a:1"}"#),
        &["a:1"],
    );
    refused(
        json(r#"{"kv_offloading": "tape"}"#),
        &["kv_offloading", "tape"],
    );
    refused(
        json(r#"{"framework": "vllm", "FRAMEWORK": "sglang"}"#),
        &["FRAMEWORK"],
    );
    let e = json("[1]").unwrap_err();
    assert_eq!(e.code, ErrorCode::JsonShape);
    let e = json("{").unwrap_err();
    assert_eq!(e.code, ErrorCode::JsonSyntax);
    let e = json(r#"{"kv_offloading": "tape"}"#).unwrap_err();
    assert_eq!(e.position.json_path.as_deref(), Some("kv_offloading"));
    assert_eq!(e.file, "launch.json");
}

#[test]
fn normalisation() {
    let f = json(
        r#"{"prefill_endpoints": ["http://User:pw@Host.Example:8000/metrics?x=1",
                                  "[FE80::1]:9000/metrics", "HOST.example:8000"]}"#,
    )
    .unwrap();
    // Duplicates after normalisation collapse.
    assert_eq!(f.prefill_endpoints, ["host.example:8000", "[fe80::1]:9000"]);
    let f = launch_from_env([("SRT_DECODE_ENDPOINTS", "https://D:08080/")]).unwrap();
    assert_eq!(f.decode_endpoints, ["d:8080"]);
    refused(
        launch_from_env([("SRT_DECODE_ENDPOINTS", "ftp://d:1")]),
        &["ftp://d:1"],
    );
    refused(
        launch_from_env([("SRT_DECODE_ENDPOINTS", "::1:80")]),
        &["::1:80"],
    );
}

/// The producer's own spellings: `disagg` as its result writes it, env names inside a JSON
/// file, booleans as Python and shells write them, the backend as its metadata object, and its
/// other launch keys accepted unused.
#[test]
fn producer_aliases_and_boolean_spellings() {
    let f = json(
        r#"{"framework": "vllm", "disagg": false, "conc": 8, "hw": "mi355x", "tp": 4,
            "is_multinode": false, "dp_attention": "false", "kv_offloading": "dram",
            "kv_offload_backend": {"name": "lmcache", "version": "0.5.1"},
            "SRT_AGG_ENDPOINTS": "localhost:8888", "ENABLE_PREFIX_CACHING": "False",
            "RUNNER_TYPE": "mi355x-amds", "CONC": "8"}"#,
    )
    .unwrap();
    assert_eq!(f.disaggregated, Some(false));
    assert_eq!(f.enable_prefix_caching, Some(false));
    assert_eq!(f.kv_offload_backend.as_deref(), Some("lmcache"));
    assert_eq!(f.agg_endpoints, ["localhost:8888"]);
    for (v, want) in [
        ("true", true),
        ("True", true),
        ("1", true),
        ("yes", true),
        ("on", true),
        ("False", false),
        ("false", false),
        ("0", false),
        ("no", false),
        ("OFF", false),
    ] {
        let text = format!(r#"{{"enable_prefix_caching": "{v}", "disagg": "{v}"}}"#);
        let f = json(&text).unwrap();
        assert_eq!(f.enable_prefix_caching, Some(want), "{v}");
        assert_eq!(f.disaggregated, Some(want), "{v}");
        let env = launch_from_env([("ENABLE_PREFIX_CACHING", v), ("DISAGG", v)]).unwrap();
        assert_eq!(env.enable_prefix_caching, Some(want), "{v}");
    }
    let f = json(r#"{"enable_prefix_caching": true}"#).unwrap();
    assert_eq!(f.enable_prefix_caching, Some(true));
    assert_eq!(json("{}").unwrap().enable_prefix_caching, None);
    // Two spellings of one key, a bad boolean, a typo: still refused by name.
    refused(
        json(r#"{"disagg": true, "disaggregated": true}"#),
        &["disaggregated", "disagg"],
    );
    refused(
        json(r#"{"enable_prefix_caching": "maybe"}"#),
        &["enable_prefix_caching", "maybe"],
    );
    refused(
        json(r#"{"enable_prefix_cache": true}"#),
        &["enable_prefix_cache"],
    );
    refused(
        json(r#"{"kv_offload_backend": {"version": "1"}}"#),
        &["kv_offload_backend"],
    );
}

/// An endpoint in two lists is refused at its first repeat in list order (prefill, decode,
/// agg), against its first listing, with the path of the repeat.
#[test]
fn an_endpoint_in_two_lists_is_refused_at_its_first_repeat() {
    let e = json(
        r#"{"prefill_endpoints": ["x:1", "y:1"], "decode_endpoints": ["z:1", "y:1"],
            "agg_endpoints": ["x:1"]}"#,
    )
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::LaunchValue);
    assert!(
        e.message
            .contains("endpoint `y:1` is listed in both prefill_endpoints and decode_endpoints"),
        "{}",
        e.message
    );
    assert_eq!(e.position.json_path.as_deref(), Some("decode_endpoints[1]"));
}

/// Lists of thousands of endpoints: repeats dropped with the first listing kept in order, and
/// a repeat across lists found, as in a short list.
#[test]
fn long_lists_keep_their_first_listings_in_order() {
    let eps: Vec<String> = (0..20_000)
        .map(|i| format!("h{}:{}", (i * 7919) % 20_000, 8000))
        .collect();
    let mut items: Vec<String> = eps.iter().map(|e| format!("\"{e}\"")).collect();
    // Each endpoint again, later, inside a comma-separated item.
    items.push(format!("\"{}\"", eps.join(", ")));
    let f = json(&format!(r#"{{"agg_endpoints": [{}]}}"#, items.join(","))).unwrap();
    assert_eq!(f.agg_endpoints, eps);
    let decode: Vec<String> = (0..10_000).map(|i| format!("\"d{i}:1\"")).collect();
    let e = json(&format!(
        r#"{{"agg_endpoints": [{}], "decode_endpoints": [{}, "h5:8000"]}}"#,
        items.join(","),
        decode.join(",")
    ))
    .unwrap_err();
    assert!(
        e.message
            .contains("endpoint `h5:8000` is listed in both decode_endpoints and agg_endpoints"),
        "{}",
        e.message
    );
    // Decode is listed before agg: the repeat is agg's listing of it.
    let at = eps.iter().position(|e| e == "h5:8000").unwrap();
    let path = format!("agg_endpoints[{at}]");
    assert_eq!(e.position.json_path.as_deref(), Some(path.as_str()));
}
