//! The inputs of the npm package's calls (`inspectRun`, `accountRun`, the pricing calls) as
//! plain serde types. The package's JS wrapper sends every argument but file contents as JSON,
//! and the bindings read it with plain serde_json, naming the path of an error from its position
//! ([`crate::json_path`]): a field kvledger does not know is refused by its path at any depth (`options.policy.maxRateWidth`), as the CLI refuses one in
//! a policy file. The same types feed the JSON Schema and, on wasm32, the d.ts.

use crate::account::Policy;
use crate::error::ReadError;
use crate::json_path::{self, PathError, Seg};
use crate::pricing::point::PointInput;
use crate::pricing::rate_card::RateCard;
use crate::pricing::{LegacySurface, PricingPolicy};
use crate::read::launch::{launch_from_env, read_launch_json};
use crate::read::{CaptureMeta, FamilyFilter, RunOptions};
use crate::wire::EpochNs;
use schemars::JsonSchema;
use std::collections::BTreeMap;
use std::fmt;

/// One artifact of a run: its file name (the format is recognised by name and extension;
/// in a sweep, its path relative to the folder) and its content as `text` or as `bytes`
/// (exactly one; in JS a `Uint8Array`, any other typed array or `DataView`, or an `ArrayBuffer`).
#[derive(Debug, Clone, PartialEq, Eq, Default, JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(deny_unknown_fields)]
pub struct RunFileInput {
    pub name: String,
    #[serde(default)]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub text: Option<String>,
    #[serde(default)]
    #[cfg_attr(
        target_arch = "wasm32",
        tsify(optional, type = "ArrayBuffer | ArrayBufferView")
    )]
    pub bytes: Option<Vec<u8>>,
}

crate::fields!(RunFileInput, deny_unknown: true, empty: RunFileInput::default(), required: [name], [name, text, bytes]);

impl RunFileInput {
    /// The content, given exactly once; `at` names the file in the call (`files[3]`).
    pub fn into_content(self, at: &str) -> Result<(String, Vec<u8>), OptionsError> {
        let content = one_content(
            &self.name,
            self.text.map(String::into_bytes),
            self.bytes,
            at,
        )?;
        Ok((self.name, content))
    }
}

/// The content of file `name` of a call, which gives exactly one of `text` or `bytes` (in
/// whatever form the caller holds them); `at` names the file in the call (`files[3]`).
pub fn one_content<T>(
    name: &str,
    text: Option<T>,
    bytes: Option<T>,
    at: &str,
) -> Result<T, OptionsError> {
    match (text, bytes) {
        (Some(t), None) => Ok(t),
        (None, Some(b)) => Ok(b),
        (text, _) => Err(OptionsError::new(
            at,
            format!(
                "`{name}`: give exactly one of `text` or `bytes` ({})",
                if text.is_some() {
                    "both were given"
                } else {
                    "neither was given"
                }
            ),
        )),
    }
}

/// Where and when a Prometheus text capture was taken.
#[derive(Debug, Clone, PartialEq, Eq, Default, JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(deny_unknown_fields)]
pub struct CaptureInput {
    /// The scrape URL, e.g. `http://10.0.0.5:8000/metrics`.
    #[serde(default)]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub endpoint_url: Option<String>,
    /// When the capture was taken: epoch ns as a decimal string (JS: a `bigint` is accepted too).
    #[serde(default)]
    #[cfg_attr(target_arch = "wasm32", tsify(optional, type = "EpochNs | bigint"))]
    pub timestamp_ns: Option<EpochNs>,
}

crate::fields!(CaptureInput, deny_unknown: true, empty: CaptureInput::default(), required: [], [endpoint_url, timestamp_ns]);

/// Capture metadata by file name: a JSON object read as a map is (in name order, a repeated
/// name keeping its last value), into pairs rather than a `BTreeMap` of its own type (one
/// copy of the map's code less in the .wasm, issue 11).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Captures(pub Vec<(String, CaptureInput)>);

impl Captures {
    /// The metadata of capture `name`.
    pub fn get(&self, name: &str) -> Option<&CaptureInput> {
        let i = self
            .0
            .binary_search_by(|(n, _)| n.as_str().cmp(name))
            .ok()?;
        Some(&self.0[i].1)
    }
}

impl<'de> serde::Deserialize<'de> for Captures {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(CapturesVisitor)
    }
}

struct CapturesVisitor;

impl<'de> serde::de::Visitor<'de> for CapturesVisitor {
    type Value = Captures;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Captures, A::Error> {
        let mut pairs: Vec<(String, CaptureInput)> = Vec::new();
        while let Some((name, c)) = map.next_entry::<String, CaptureInput>()? {
            match pairs.binary_search_by(|(n, _)| n.cmp(&name)) {
                Ok(i) => pairs[i].1 = c,
                Err(i) => pairs.insert(i, (name, c)),
            }
        }
        Ok(Captures(pairs))
    }
}

/// The schema of the map it is read from.
impl JsonSchema for Captures {
    fn inline_schema() -> bool {
        <BTreeMap<String, CaptureInput>>::inline_schema()
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        <BTreeMap<String, CaptureInput>>::schema_name()
    }

    fn schema_id() -> std::borrow::Cow<'static, str> {
        <BTreeMap<String, CaptureInput>>::schema_id()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        <BTreeMap<String, CaptureInput>>::json_schema(generator)
    }
}

/// Options of `inspectRun` / `inspectRuns`. Every field is optional.
#[derive(Debug, Clone, PartialEq, Eq, Default, JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(deny_unknown_fields)]
pub struct InspectOptions {
    /// Keep only these metric families (any alias spelling); default: all.
    #[serde(default)]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub families: Option<Vec<String>>,
    /// Also keep families whose name starts with one of these prefixes (e.g. `"vllm:"`).
    #[serde(default)]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub family_prefixes: Option<Vec<String>>,
    /// Capture metadata by file name, for Prometheus text captures.
    #[serde(default)]
    #[cfg_attr(
        target_arch = "wasm32",
        tsify(optional, type = "Record<string, CaptureInput>")
    )]
    pub captures: Option<Captures>,
    /// Launch facts as JSON text (the format of a `launch.json` file).
    #[serde(default)]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub launch_json: Option<String>,
    /// Launch facts as the launcher's environment variables (`FRAMEWORK`, `DISAGG`, ...).
    #[serde(default)]
    #[cfg_attr(
        target_arch = "wasm32",
        tsify(optional, type = "Record<string, string>")
    )]
    pub launch_env: Option<BTreeMap<String, String>>,
}

crate::fields!(InspectOptions, deny_unknown: true, empty: InspectOptions::default(), required: [], [families, family_prefixes, captures, launch_json, launch_env]);

/// Options of `accountRun` / `accountRuns`: those of `inspectRun` plus the accounting policy.
/// (The fields of `InspectOptions` are repeated, not `#[serde(flatten)]`ed: serde cannot refuse
/// unknown fields through a flatten, and an unknown option must be refused by name.)
#[derive(Debug, Clone, PartialEq, Default, JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(deny_unknown_fields)]
pub struct AccountOptions {
    #[serde(default)]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub families: Option<Vec<String>>,
    #[serde(default)]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub family_prefixes: Option<Vec<String>>,
    #[serde(default)]
    #[cfg_attr(
        target_arch = "wasm32",
        tsify(optional, type = "Record<string, CaptureInput>")
    )]
    pub captures: Option<Captures>,
    #[serde(default)]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub launch_json: Option<String>,
    #[serde(default)]
    #[cfg_attr(
        target_arch = "wasm32",
        tsify(optional, type = "Record<string, string>")
    )]
    pub launch_env: Option<BTreeMap<String, String>>,
    /// Tolerances (CONTRACT section 10); absent fields take their defaults.
    #[serde(default)]
    #[cfg_attr(target_arch = "wasm32", tsify(optional, type = "Partial<Policy>"))]
    pub policy: Option<Policy>,
}

crate::fields!(AccountOptions, deny_unknown: true, empty: AccountOptions::default(), required: [], [families, family_prefixes, captures, launch_json, launch_env, policy]);

impl AccountOptions {
    /// The run options (families as accounting reads them unless named) and the checked policy.
    pub fn split(self) -> Result<(InspectOptions, Policy), OptionsError> {
        let policy = self.policy.unwrap_or_default();
        policy.validate("options.policy").map_err(|e| {
            let message = e.message.trim_start_matches("policy: ").to_string();
            OptionsError::new("options.policy", message)
        })?;
        let run = InspectOptions {
            families: self.families,
            family_prefixes: self.family_prefixes,
            captures: self.captures,
            launch_json: self.launch_json,
            launch_env: self.launch_env,
        };
        Ok((run, policy))
    }
}

impl InspectOptions {
    /// The readers' options. `default_families` applies when `families` is not given.
    pub fn into_run_options(self, default_families: FamilyFilter) -> Result<RunOptions, CallError> {
        let mut families = match &self.families {
            // Accounting's leanness holds whichever families are kept.
            Some(names) if default_families.is_lean() => FamilyFilter::only(names).lean(),
            Some(names) => FamilyFilter::only(names),
            None => default_families,
        };
        if let Some(prefixes) = &self.family_prefixes {
            families = families.with_prefixes(prefixes);
        }
        let captures = crate::sort::map_of(self.captures.unwrap_or_default().0.into_iter().map(
            |(name, c)| {
                let meta = CaptureMeta {
                    endpoint_url: c.endpoint_url,
                    timestamp_ns: c.timestamp_ns.map(|t| t.0),
                };
                (name, meta)
            },
        ));
        let launch = match (self.launch_json, self.launch_env) {
            (Some(_), Some(_)) => {
                return Err(OptionsError::new(
                    "options.launch_json",
                    "give launch_json or launch_env, not both",
                )
                .into());
            }
            (Some(text), None) => Some(read_launch_json("options.launch_json", &text)?),
            (None, Some(env)) => Some(launch_from_env(
                env.iter().map(|(k, v)| (k.as_str(), v.as_str())),
            )?),
            (None, None) => None,
        };
        Ok(RunOptions {
            families,
            captures,
            launch,
            progress: None,
            memory_budget: None,
        })
    }
}

/// Options of every pricing call. Every field is optional.
#[derive(Debug, Clone, PartialEq, Default, JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(deny_unknown_fields)]
pub struct PriceOptions {
    /// Default `"strict"`.
    #[serde(default)]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub policy: Option<PricingPolicy>,
    /// A shipped card's name (default `"normalized"`); see `rateCards()`.
    #[serde(default)]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub card: Option<String>,
    /// A card given inline (instead of `card`).
    #[serde(default)]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub rate_card: Option<RateCard>,
    /// `legacy` only: the dashboard surface reproduced, `"chart"`, `"calculator"` (default) or
    /// `"trend"`. Given with another policy it is refused (`BAD_OPTIONS`): `strict` and
    /// `theoretical` do not depend on it. `trendSeries` is the trend surface and accepts only
    /// `"trend"`.
    #[serde(default)]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub surface: Option<LegacySurface>,
    /// Frontier calls on rows: the metric key used as x (default `p90_intvty` for agentic
    /// rows, `median_intvty` otherwise).
    #[serde(default)]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub x_metric: Option<String>,
}

crate::fields!(PriceOptions, deny_unknown: true, empty: PriceOptions::default(), required: [], [policy, card, rate_card, surface, x_metric]);

/// One date's points of a trend line (`trendSeries`).
#[derive(Debug, Clone, PartialEq, JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(deny_unknown_fields)]
pub struct TrendGroupInput {
    pub date: String,
    pub points: Vec<PointInput>,
}

crate::fields!(TrendGroupInput, deny_unknown: true, empty: TrendGroupInput { date: String::new(), points: Vec::new() }, required: [date, points], [date, points]);

/// A malformed call: where in the call's arguments (`options.policy.max_rate_width`,
/// `files[2]`) and what is wrong. Code `BAD_OPTIONS`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionsError {
    pub path: String,
    pub message: String,
}

impl OptionsError {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        OptionsError {
            path: path.into(),
            message: message.into(),
        }
    }

    /// A serde error met while reading argument `arg` of a call, at the path serde reached.
    pub fn from_serde(arg: &str, err: PathError) -> Self {
        let path = join_path(arg, &err.path);
        let mut message = err.error.to_string();
        // serde_json appends " at line L column C" of the JSON the wrapper made: not the caller's.
        if let Some(i) = message.rfind(" at line ") {
            message.truncate(i);
        }
        OptionsError { path, message }
    }
}

impl fmt::Display for OptionsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

/// Why a call failed: the call itself, or an input that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallError {
    Options(OptionsError),
    Read(ReadError),
}

impl From<OptionsError> for CallError {
    fn from(e: OptionsError) -> Self {
        CallError::Options(e)
    }
}

impl From<ReadError> for CallError {
    fn from(e: ReadError) -> Self {
        CallError::Read(e)
    }
}

/// `arg` followed by serde's path, map keys that are not plain identifiers quoted:
/// `options.captures["a.prom"].endpointUrl`; with `arg` empty, the path alone (`points[2].row`).
pub fn join_path(arg: &str, path: &[Seg]) -> String {
    let mut out = arg.to_string();
    for seg in path {
        match seg {
            Seg::Index(index) => out.push_str(&format!("[{index}]")),
            Seg::Key(key) if is_identifier(key) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Seg::Key(key) => out.push_str(&format!("[{}]", quote(key))),
            Seg::Unknown => out.push_str(".?"),
        }
    }
    out
}

fn is_identifier(key: &str) -> bool {
    let mut chars = key.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

fn quote(key: &str) -> String {
    // Through the results' writer: serde_json's writing code is compiled once, for it.
    crate::chunked::json_between(b"", key, b"")
        .ok()
        .and_then(|json| String::from_utf8(json).ok())
        .unwrap_or_else(|| format!("\"{key}\""))
}

/// Read argument `arg` of a call from its JSON text, refusing unknown fields by path.
pub fn from_json<T: serde::de::DeserializeOwned>(arg: &str, json: &str) -> Result<T, OptionsError> {
    let mut de = serde_json::Deserializer::from_slice(json.as_bytes());
    let value = T::deserialize(&mut de);
    let value = value.map_err(|e| parse_error(arg, json, e))?;
    end_of_json(arg, &mut de)?;
    Ok(value)
}

/// The error of a failed parse, at its path. Not generic: one copy for every argument type.
#[inline(never)]
fn parse_error(arg: &str, json: &str, error: serde_json::Error) -> OptionsError {
    let path = json_path::path_of_error(json.as_bytes(), &error);
    OptionsError::from_serde(arg, json_path::PathError { error, path })
}

/// Refuse text after the one value.
#[inline(never)]
fn end_of_json(
    arg: &str,
    de: &mut serde_json::Deserializer<serde_json::de::SliceRead<'_>>,
) -> Result<(), OptionsError> {
    de.end()
        .map_err(|e| OptionsError::new(arg, format!("not one JSON value: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_fields_are_refused_by_path_at_every_depth() {
        let e = from_json::<AccountOptions>("options", r#"{"policy": {"maxRateWidth": 0.01}}"#)
            .unwrap_err();
        assert_eq!(e.path, "options.policy.maxRateWidth");
        assert!(e.message.contains("unknown field `maxRateWidth`"), "{e}");
        let e = from_json::<InspectOptions>(
            "options",
            r#"{"captures": {"a.prom": {"endpointUrl": "http://h/metrics"}}}"#,
        )
        .unwrap_err();
        assert_eq!(e.path, r#"options.captures["a.prom"].endpointUrl"#);
        let e =
            from_json::<InspectOptions>("options", r#"{"familyPrefixes": ["vllm:"]}"#).unwrap_err();
        assert_eq!(e.path, "options.familyPrefixes");
        let e = from_json::<InspectOptions>("options", r#"{"families": ["a", 3]}"#).unwrap_err();
        assert_eq!(e.path, "options.families[1]");
        assert!(!e.message.contains(" at line "), "{e}");
    }

    #[test]
    fn captures_read_as_a_map_reads_them() {
        let o: InspectOptions = from_json(
            "options",
            r#"{"captures": {"b.prom": {"endpoint_url": "u1"}, "a.prom": {}, "b.prom": {"endpoint_url": "u2"}}}"#,
        )
        .unwrap();
        let c = o.captures.unwrap();
        let names: Vec<&str> = c.0.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["a.prom", "b.prom"]);
        assert_eq!(c.get("b.prom").unwrap().endpoint_url.as_deref(), Some("u2"));
        assert!(c.get("c.prom").is_none());
        let e = from_json::<InspectOptions>("options", r#"{"captures": [1]}"#).unwrap_err();
        assert_eq!(e.path, "options.captures");
        assert_eq!(e.message, "invalid type: sequence, expected a map");
    }

    #[test]
    fn timestamps_are_exact_from_strings_and_integers() {
        let o: InspectOptions = from_json(
            "options",
            r#"{"captures": {"a.prom": {"timestamp_ns": "1781000000000000001"}},
                "family_prefixes": ["sglang:"]}"#,
        )
        .unwrap();
        let c = o.captures.as_ref().unwrap().get("a.prom").unwrap();
        assert_eq!(c.timestamp_ns, Some(EpochNs(1_781_000_000_000_000_001)));
        let e = from_json::<InspectOptions>(
            "options",
            r#"{"captures": {"a.prom": {"timestamp_ns": "-1"}}}"#,
        )
        .unwrap_err();
        assert_eq!(e.path, r#"options.captures["a.prom"].timestamp_ns"#);
    }

    #[test]
    fn policy_is_checked_and_launch_is_read() {
        let o: AccountOptions =
            from_json("options", r#"{"policy": {"max_rate_width": -1}}"#).expect("shape is fine");
        let e = o.split().unwrap_err();
        assert_eq!(e.path, "options.policy");
        assert!(e.message.contains("max_rate_width"), "{e}");

        let both: InspectOptions = from_json(
            "options",
            r#"{"launch_json": "{}", "launch_env": {"FRAMEWORK": "vllm"}}"#,
        )
        .unwrap();
        let Err(CallError::Options(e)) = both.into_run_options(FamilyFilter::all()) else {
            panic!("both launch forms must be refused");
        };
        assert!(e.message.contains("not both"));

        let bad: InspectOptions =
            from_json("options", r#"{"launch_env": {"DISAGG": "maybe"}}"#).unwrap();
        let Err(CallError::Read(e)) = bad.into_run_options(FamilyFilter::all()) else {
            panic!("a bad launch value is a read error");
        };
        assert_eq!(e.code, crate::ErrorCode::LaunchValue);
    }

    #[test]
    fn a_file_gives_its_content_exactly_once() {
        let f = |text: Option<&str>, bytes: Option<&[u8]>| RunFileInput {
            name: "x.json".into(),
            text: text.map(str::to_string),
            bytes: bytes.map(<[u8]>::to_vec),
        };
        assert_eq!(
            f(Some("{}"), None).into_content("files[0]").unwrap(),
            ("x.json".to_string(), b"{}".to_vec())
        );
        assert_eq!(
            f(None, Some(b"ab")).into_content("files[0]").unwrap().1,
            b"ab"
        );
        let e = f(Some("{}"), Some(b"{}"))
            .into_content("files[1]")
            .unwrap_err();
        assert_eq!(e.path, "files[1]");
        assert!(e.message.contains("both were given"), "{e}");
        assert!(f(None, None)
            .into_content("files[0]")
            .unwrap_err()
            .message
            .contains("neither was given"));
    }

    #[test]
    fn trailing_text_is_refused() {
        assert!(from_json::<InspectOptions>("options", "{} {}").is_err());
    }
}
