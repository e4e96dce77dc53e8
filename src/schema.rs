//! The JSON Schema (draft 2020-12) of every result and input type kvledger defines, generated
//! from the Rust types so it cannot drift from what the CLI prints and the package returns.
//! Shipped as `schema/kvledger.schema.json`; consumers validate against `#/$defs/<Type>`.

use crate::account::{Accounting, Policy};
use crate::error::{ErrorReport, RunOutcome};
use crate::inspect::{RunInspection, CONTRACT_VERSION};
use crate::options::{
    AccountOptions, CaptureInput, InspectOptions, PriceOptions, RunFileInput, TrendGroupInput,
};
use crate::pricing::{
    frontier::{FrontierInterpolation, FrontierPricing},
    point::{BenchmarkRow, PointInput},
    rate_card::RateCard,
    revenue::{MoneyMetrics, PowerCost, ProfitEstimate, ProfitInput},
    trend::TrendPoint,
    PriceOutcome, PriceReport,
};
use crate::wire::MAX_SAFE_INTEGER;
use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::{json, Value};

/// Version of the CLI's `--json` envelope (`"kvledger": "1"`); bumped only on a breaking
/// change of the envelope itself.
pub const ENVELOPE_VERSION: &str = "1";

/// Where the schema lives in the repository and in the npm package.
pub const SCHEMA_PATH: &str = "schema/kvledger.schema.json";

/// Register `T` under `$defs` (with everything it refers to).
fn add<T: JsonSchema>(gen: &mut schemars::SchemaGenerator) {
    gen.subschema_for::<T>();
}

/// The whole schema document: one `$defs` entry per type, results and inputs alike.
pub fn json_schema() -> Value {
    let mut gen = SchemaSettings::draft2020_12().into_generator();
    // Results.
    add::<Accounting>(&mut gen);
    add::<RunInspection>(&mut gen);
    add::<RunOutcome<Accounting>>(&mut gen);
    add::<RunOutcome<RunInspection>>(&mut gen);
    add::<ErrorReport>(&mut gen);
    add::<PriceOutcome>(&mut gen);
    add::<PriceReport>(&mut gen);
    add::<FrontierPricing>(&mut gen);
    add::<FrontierInterpolation>(&mut gen);
    add::<TrendPoint>(&mut gen);
    add::<MoneyMetrics>(&mut gen);
    add::<ProfitEstimate>(&mut gen);
    // Inputs.
    add::<Policy>(&mut gen);
    add::<RateCard>(&mut gen);
    add::<BenchmarkRow>(&mut gen);
    add::<PointInput>(&mut gen);
    add::<PowerCost>(&mut gen);
    add::<ProfitInput>(&mut gen);
    add::<RunFileInput>(&mut gen);
    add::<CaptureInput>(&mut gen);
    add::<InspectOptions>(&mut gen);
    add::<AccountOptions>(&mut gen);
    add::<PriceOptions>(&mut gen);
    add::<TrendGroupInput>(&mut gen);
    add::<crate::validate::UploadVerdict>(&mut gen);
    add::<crate::validate::UploadLimits>(&mut gen);
    let mut defs = Value::Object(gen.take_definitions(true).into_iter().collect());
    cap_unsigned(&mut defs);
    defs["CliEnvelope"] = cli_envelope();
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": format!("{CONTRACT_VERSION} results and inputs"),
        "description": "Every result and input type of kvledger, one entry of $defs each. Validate a value against {\"$ref\": \"<this file>#/$defs/<Type>\"}. Epoch-ns timestamps are decimal strings (EpochNs); counts are numbers at most 2^53-1.",
        "$defs": defs,
    })
}

/// The schema as the file ships it: pretty, keys sorted, one trailing newline.
pub fn json_schema_text() -> String {
    let mut text = serde_json::to_string_pretty(&json_schema()).expect("a JSON value serialises");
    text.push('\n');
    text
}

/// Every unsigned integer kvledger emits is a count, and counts travel as JSON numbers only up
/// to 2^53 − 1 (the readers refuse more): say so, so validators catch a lossy producer.
fn cap_unsigned(v: &mut Value) {
    match v {
        Value::Object(map) => {
            if map.get("format") == Some(&json!("uint64")) {
                map.insert("maximum".into(), json!(MAX_SAFE_INTEGER));
            }
            map.values_mut().for_each(cap_unsigned);
        }
        Value::Array(items) => items.iter_mut().for_each(cap_unsigned),
        _ => {}
    }
}

/// One line of `kvledger <command> --json` (docs/cli.md): the envelope version, the command,
/// and either the command's result or an error.
fn cli_envelope() -> Value {
    let result = |command: &str, key: &str, def: Value| {
        json!({
            "required": ["result", key],
            "not": {"required": ["error"]},
            "properties": {
                "command": {"const": command},
                key: {"type": "string"},
                "result": def,
            }
        })
    };
    let def = |name: &str| json!({"$ref": format!("#/$defs/{name}")});
    json!({
        "description": "One line of `kvledger <command> --json`: {kvledger, command} and the command's payload, a result or an error (docs/cli.md).",
        "type": "object",
        "required": ["kvledger", "command"],
        "properties": {
            "kvledger": {"const": ENVELOPE_VERSION},
            "command": {"enum": ["inspect", "account", "price", "synth", "validate", null]},
        },
        "oneOf": [
            {
                "required": ["error"],
                "not": {"required": ["result"]},
                "properties": {"run": {"type": "string"}, "error": def("ErrorReport")},
            },
            result("account", "run", def("Accounting")),
            result("inspect", "run", def("RunInspection")),
            result("price", "rows", def("PriceReport")),
            result("synth", "out", json!({"type": "object"})),
            {
                "required": ["result"],
                "not": {"required": ["error"]},
                "properties": {"command": {"const": "validate"}, "result": def("UploadVerdict")},
            },
        ],
    })
}
