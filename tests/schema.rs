//! The shipped JSON Schema is the one the Rust types generate, and it describes every type the
//! package and the CLI exchange. (Outputs are validated against it by a real draft 2020-12
//! validator in `test-js/schema.test.mjs`.)

use kvledger::schema::{json_schema, json_schema_text, SCHEMA_PATH};

#[test]
fn the_shipped_schema_is_the_generated_one() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(SCHEMA_PATH);
    let generated = json_schema_text();
    if std::env::var_os("KVLEDGER_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("write the schema");
    }
    let shipped = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        shipped == generated,
        "{SCHEMA_PATH} is stale: regenerate it with `KVLEDGER_BLESS=1 cargo test --test schema`"
    );
}

#[test]
fn every_reference_resolves_and_every_exchanged_type_is_defined() {
    let schema = json_schema();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    let defs = schema["$defs"].as_object().expect("$defs");
    for name in [
        "Accounting",
        "RunInspection",
        "ErrorReport",
        "PriceOutcome",
        "FrontierPricing",
        "Policy",
        "RateCard",
        "BenchmarkRow",
        "EpochNs",
    ] {
        assert!(defs.contains_key(name), "$defs lacks {name}");
    }
    let text = serde_json::to_string(&schema).unwrap();
    let mut rest = text.as_str();
    let mut refs = 0;
    while let Some(i) = rest.find("\"$ref\":\"#/$defs/") {
        rest = &rest[i + 16..];
        let end = rest.find('"').unwrap();
        let name = &rest[..end];
        assert!(defs.contains_key(name), "dangling $ref to {name}");
        refs += 1;
    }
    assert!(
        refs > 50,
        "only {refs} references: the schema is not the whole tree"
    );
}

#[test]
fn epoch_ns_is_a_string_and_counts_are_numbers() {
    let schema = json_schema();
    let defs = &schema["$defs"];
    assert_eq!(defs["EpochNs"]["type"], "string");
    let window = &defs["WindowInfo"]["properties"];
    assert_eq!(window["start_ns"]["anyOf"][0]["$ref"], "#/$defs/EpochNs");
    let records = &defs["RequestScope"]["properties"]["profiling_records"];
    assert_eq!(records["type"], "integer");
    assert_eq!(records["maximum"], 9007199254740991u64);
}
