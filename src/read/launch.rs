//! Launch facts: how the deployment was started, from a small JSON object or from the
//! launcher's environment variables.
//!
//! JSON keys (each also accepted under its env-style uppercase name, given in brackets; giving
//! both spellings of one key is refused):
//! - `framework` (`FRAMEWORK`): string, stored trimmed and lowercase;
//! - `disaggregated` (`disagg`, as the producer's result writes it; `DISAGG`): a boolean, or
//!   a string as launchers spell booleans (`true|false|1|0|yes|no|on|off`, any case, e.g.
//!   `"True"`, `"False"`);
//! - `enable_prefix_caching` (`ENABLE_PREFIX_CACHING`): a boolean in the same spellings;
//! - `prefill_endpoints` (`SRT_PREFILL_ENDPOINTS`), `decode_endpoints`
//!   (`SRT_DECODE_ENDPOINTS`), `agg_endpoints` (`SRT_AGG_ENDPOINTS`): an array of strings or
//!   one comma-separated string;
//! - `endpoint_roles`: object endpoint → role (`prefill`, `decode`, `unified`/`agg`/
//!   `aggregated`, `frontend`/`router`, `excluded`);
//! - `kv_offloading` (`KV_OFFLOADING`): `none|cpu|dram|ssd|disk|storage|remote`
//!   (case-insensitive, stored lowercase);
//! - `kv_offload_backend` (`KV_OFFLOAD_BACKEND`): string, stored trimmed, or the producer's
//!   metadata object `{"name", "version"?}` (its `name` is the backend).
//!
//! `null` means absent. The upstream producer's other launch keys (its result's `hw`, `conc`,
//! `tp`, `is_multinode`, ... and the env names it reads: `IS_MULTINODE`, `TP`, `CONC`,
//! `RUNNER_TYPE`, ...; see [`PRODUCER_KEYS`]) are accepted and not used, so its env or result
//! can be given as is. Any other key is refused (`LAUNCH_VALUE`): a typo must not be ignored.
//!
//! Env: the same uppercase names; every other variable is ignored; an empty value counts as
//! unset. Endpoint lists are comma-separated, items trimmed, empty items ignored.
//!
//! Endpoints are normalised to `host:port`: an `http://` / `https://` scheme, user info, and
//! any path, query or fragment (e.g. `/metrics`) are stripped and the host is lowercased
//! (IPv6 stays bracketed: `[::1]:8000`). Refused by name with `LAUNCH_VALUE` (the message names
//! the key or variable and the value): a non-boolean `DISAGG`, an endpoint without a port or
//! with a non-numeric / out-of-range port, an unknown role, one endpoint under two roles
//! (two lists, or a list and `endpoint_roles` disagreeing), an unknown `KV_OFFLOADING`, an
//! unknown JSON key, a key given twice (in one spelling or two).
//!
//! A JSON refusal carries the line, the character column and the JSON path of what is refused:
//! the key for an unknown or repeated key, else the value (a list's item, an `endpoint_roles`
//! entry's role). Env refusals name the variable in the message.

use crate::error::{ErrorCode, Position, ReadError};
use crate::json_value::{Json, JsonVisitor};
use crate::model::{LaunchFacts, Role};
use crate::read::locate::{display_path, locate, Seg};
use crate::strmap::StrMap;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;

const OFFLOAD_TIERS: [&str; 7] = ["none", "cpu", "dram", "ssd", "disk", "storage", "remote"];

/// Keys the upstream producer writes or reads (`research/producer.md` sections 1.5 and 6)
/// that say nothing kvledger uses: accepted in a launch file, not read.
pub const PRODUCER_KEYS: [&str; 62] = [
    // Its result's top-level keys.
    "hw",
    "image",
    "recipe_fingerprint",
    "model",
    "infmax_model_prefix",
    "precision",
    "spec_decoding",
    "conc",
    "is_multinode",
    "scenario_type",
    "tp",
    "ep",
    "pp",
    "dcp_size",
    "pcp_size",
    "dp_attention",
    "allocated_cpu_dram_gb",
    "num_gpus",
    "router",
    "kv_p2p_transfer",
    "dataset",
    "prefill_num_workers",
    "prefill_tp",
    "prefill_pp",
    "prefill_dcp_size",
    "prefill_pcp_size",
    "prefill_ep",
    "prefill_dp_attention",
    "prefill_hw",
    "decode_num_workers",
    "decode_tp",
    "decode_pp",
    "decode_dcp_size",
    "decode_pcp_size",
    "decode_ep",
    "decode_dp_attention",
    "decode_hw",
    // The env it reads.
    "IS_MULTINODE",
    "TP",
    "EP_SIZE",
    "DP_ATTENTION",
    "PP_SIZE",
    "DCP_SIZE",
    "PCP_SIZE",
    "PREFILL_NUM_WORKERS",
    "PREFILL_TP",
    "PREFILL_EP",
    "DECODE_NUM_WORKERS",
    "DECODE_TP",
    "DECODE_EP",
    "RUNNER_TYPE",
    "CONC",
    "IMAGE",
    "RECIPE_FINGERPRINT",
    "MODEL",
    "MODEL_PREFIX",
    "PRECISION",
    "SPEC_DECODING",
    "TOTAL_CPU_DRAM_GB",
    "ROUTER_METADATA",
    "KV_P2P_TRANSFER",
    "KV_OFFLOAD_BACKEND_METADATA",
];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Key {
    Framework,
    Disagg,
    PrefixCaching,
    Prefill,
    Decode,
    Agg,
    Roles,
    KvOffloading,
    KvBackend,
}

fn key_of_json(k: &str) -> Option<Key> {
    Some(match k {
        "framework" | "FRAMEWORK" => Key::Framework,
        "disaggregated" | "disagg" | "DISAGG" => Key::Disagg,
        "enable_prefix_caching" | "ENABLE_PREFIX_CACHING" => Key::PrefixCaching,
        "prefill_endpoints" | "SRT_PREFILL_ENDPOINTS" => Key::Prefill,
        "decode_endpoints" | "SRT_DECODE_ENDPOINTS" => Key::Decode,
        "agg_endpoints" | "SRT_AGG_ENDPOINTS" => Key::Agg,
        "endpoint_roles" => Key::Roles,
        "kv_offloading" | "KV_OFFLOADING" => Key::KvOffloading,
        "kv_offload_backend" | "KV_OFFLOAD_BACKEND" => Key::KvBackend,
        _ => return None,
    })
}

fn key_of_env(k: &str) -> Option<Key> {
    Some(match k {
        "FRAMEWORK" => Key::Framework,
        "DISAGG" => Key::Disagg,
        "ENABLE_PREFIX_CACHING" => Key::PrefixCaching,
        "SRT_PREFILL_ENDPOINTS" => Key::Prefill,
        "SRT_DECODE_ENDPOINTS" => Key::Decode,
        "SRT_AGG_ENDPOINTS" => Key::Agg,
        "KV_OFFLOADING" => Key::KvOffloading,
        "KV_OFFLOAD_BACKEND" => Key::KvBackend,
        _ => return None,
    })
}

/// Where a launch value came from, for the position of a refusal: the key as written and which
/// occurrence of it, and what under it is refused. Env variables have no position.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Origin {
    key: String,
    nth: usize,
    at: Part,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    /// The key itself (unknown, repeated).
    Key,
    /// The key's value.
    Value,
    /// Item `i` of the key's array.
    Item(usize),
    /// The role of an `endpoint_roles` entry (its key as written, which occurrence).
    Role(String, usize),
}

impl Origin {
    fn of(key: &str, nth: usize) -> Self {
        Origin {
            key: key.to_string(),
            nth,
            at: Part::Value,
        }
    }

    fn with(&self, at: Part) -> Self {
        Origin { at, ..self.clone() }
    }
}

/// Parse a boolean as launchers write it (the producer accepts `1,true,yes,on`; Python
/// writes `True`/`False`).
fn parse_bool(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Some(true),
        "false" | "0" | "no" | "off" => Some(false),
        _ => None,
    }
}

/// Normalise one endpoint to `host:port`; the error says why it is refused.
fn normalise_endpoint(raw: &str) -> Result<String, String> {
    let refuse = |why: &str| format!("endpoint `{raw}` {why}");
    let mut s = raw.trim();
    for scheme in ["http://", "https://"] {
        if s.len() >= scheme.len()
            && s.get(..scheme.len())
                .is_some_and(|p| p.eq_ignore_ascii_case(scheme))
        {
            s = s.get(scheme.len()..).unwrap_or("");
            break;
        }
    }
    if s.contains("://") {
        return Err(refuse("has an unsupported scheme (http or https expected)"));
    }
    // Authority ends at the first `/`, `?` or `#`.
    let end = s.find(['/', '?', '#']).unwrap_or(s.len());
    let mut authority = s.get(..end).unwrap_or("");
    if let Some((_, after)) = authority.rsplit_once('@') {
        authority = after;
    }
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let Some((h, after)) = rest.split_once(']') else {
            return Err(refuse("has an unterminated IPv6 bracket"));
        };
        let Some(p) = after.strip_prefix(':') else {
            return Err(refuse("has no port (host:port expected)"));
        };
        (format!("[{}]", h.to_ascii_lowercase()), p)
    } else {
        let Some((h, p)) = authority.rsplit_once(':') else {
            return Err(refuse("has no port (host:port expected)"));
        };
        if h.contains(':') {
            return Err(refuse("is not host:port (bracket IPv6 addresses)"));
        }
        (h.to_ascii_lowercase(), p)
    };
    if host.is_empty() || host == "[]" {
        return Err(refuse("has no host"));
    }
    if host.contains(char::is_whitespace) {
        return Err(refuse("has whitespace in the host"));
    }
    if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) {
        return Err(refuse("has a non-numeric port"));
    }
    match port.parse::<u32>() {
        Ok(p) if (1..=65535).contains(&p) => Ok(format!("{host}:{p}")),
        _ => Err(refuse("has a port out of range (1-65535)")),
    }
}

/// A comma-separated endpoint list, normalised; items trimmed, empty items ignored, repeats
/// dropped (the first kept).
fn split_list(s: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for item in s.split(',') {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        out.push(normalise_endpoint(item)?);
    }
    Ok(first_of_each(out, String::as_str))
}

/// `items` without repeats of their key, the first of each kept, in order. One sort, not a
/// scan of the kept items per item: a launch file may list ten thousand endpoints, and the
/// scans made reading it quadratic (an eighth of accounting a 10,000-endpoint run).
fn first_of_each<T>(items: Vec<T>, key: impl Fn(&T) -> &str) -> Vec<T> {
    let first = first_of_key(&items, &key);
    items
        .into_iter()
        .zip(first)
        .filter_map(|(item, first)| first.then_some(item))
        .collect()
}

/// For each item, whether no earlier item has its key.
fn first_of_key<T>(items: &[T], key: &impl Fn(&T) -> &str) -> Vec<bool> {
    let mut first = vec![false; items.len()];
    for run in runs_by_key(items, key) {
        if let Some(slot) = run.first().and_then(|&i| first.get_mut(i)) {
            *slot = true;
        }
    }
    first
}

/// The indices of `items` grouped by key, the groups in key order and each group's indices in
/// item order (a stable sort).
fn runs_by_key<T>(items: &[T], key: &impl Fn(&T) -> &str) -> Vec<Vec<usize>> {
    let key_of = |i: usize| items.get(i).map_or("", key);
    let mut order: Vec<usize> = (0..items.len()).collect();
    crate::sort::sort_by(&mut order, |&a, &b| key_of(a).cmp(key_of(b)));
    order
        .chunk_by(|&a, &b| key_of(a) == key_of(b))
        .map(<[usize]>::to_vec)
        .collect()
}

/// A launch JSON value: `endpoint_roles` keeps its entries in order with repeats (a JSON map
/// would keep only the last of two roles given to one endpoint); any other value as parsed.
enum LaunchValue {
    Entries(Vec<(String, Value)>),
    Plain(Value),
}

impl<'de> Deserialize<'de> for LaunchValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LaunchValueVisitor)
    }
}

struct LaunchValueVisitor;

impl<'de> Visitor<'de> for LaunchValueVisitor {
    type Value = LaunchValue;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<LaunchValue, A::Error> {
        let mut out = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Json>()? {
            out.push((k, v.0));
        }
        Ok(LaunchValue::Entries(out))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<LaunchValue, A::Error> {
        JsonVisitor.visit_seq(seq).map(LaunchValue::Plain)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<LaunchValue, E> {
        Ok(LaunchValue::Plain(Value::Bool(v)))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<LaunchValue, E> {
        Ok(LaunchValue::Plain(Value::from(v)))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<LaunchValue, E> {
        Ok(LaunchValue::Plain(Value::from(v)))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<LaunchValue, E> {
        Ok(LaunchValue::Plain(Value::from(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<LaunchValue, E> {
        Ok(LaunchValue::Plain(Value::from(v)))
    }
    fn visit_unit<E: de::Error>(self) -> Result<LaunchValue, E> {
        Ok(LaunchValue::Plain(Value::Null))
    }
    fn visit_none<E: de::Error>(self) -> Result<LaunchValue, E> {
        Ok(LaunchValue::Plain(Value::Null))
    }
}

impl LaunchValue {
    /// As a plain JSON value (for messages and the other keys).
    fn to_value(&self) -> Value {
        match self {
            LaunchValue::Plain(v) => v.clone(),
            // By insertion, as `crate::sort::map_of` (no per-type sort in the `.wasm`).
            LaunchValue::Entries(e) => {
                let mut object = serde_json::Map::new();
                for (k, v) in e {
                    object.insert(k.clone(), v.clone());
                }
                Value::Object(object)
            }
        }
    }
}

/// The launch JSON's top level: its entries in file order, repeats kept.
struct TopLevel(Vec<(String, LaunchValue)>);

impl<'de> Deserialize<'de> for TopLevel {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TopLevel;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a launch facts object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TopLevel, A::Error> {
                let mut out = Vec::new();
                while let Some(entry) = map.next_entry::<String, LaunchValue>()? {
                    out.push(entry);
                }
                Ok(TopLevel(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// Accumulates facts from either source, then checks them as a whole.
struct Builder<'a> {
    file: &'a str,
    /// The JSON text (positions of refusals); `None` for env.
    text: Option<&'a str>,
    facts: LaunchFacts,
    /// Which name set each key (to refuse two spellings of one key).
    seen: Vec<(Key, Origin)>,
    /// Where each endpoint of the prefill, decode and agg lists came from.
    list_origins: [Vec<(String, Origin)>; 3],
    /// Where each `endpoint_roles` entry came from, by normalised endpoint.
    role_origins: BTreeMap<String, Origin>,
}

impl<'a> Builder<'a> {
    fn new(file: &'a str, text: Option<&'a str>) -> Self {
        Builder {
            file,
            text,
            facts: LaunchFacts::default(),
            seen: Vec::new(),
            list_origins: Default::default(),
            role_origins: BTreeMap::new(),
        }
    }

    /// A `LAUNCH_VALUE` refusal at `origin` (line, column and path in a JSON file).
    fn bad(&self, origin: &Origin, msg: impl Into<String>) -> ReadError {
        let Some(text) = self.text else {
            return ReadError::new(ErrorCode::LaunchValue, self.file, Position::default(), msg);
        };
        let mut path = vec![Seg::Key {
            name: &origin.key,
            nth: origin.nth,
        }];
        match &origin.at {
            Part::Key | Part::Value => {}
            Part::Item(i) => path.push(Seg::Index(*i)),
            Part::Role(name, nth) => path.push(Seg::Key { name, nth: *nth }),
        }
        let mut pos = match locate(text, &path) {
            Some(found) => {
                let at = match origin.at {
                    Part::Key => found.key.unwrap_or(found.value),
                    _ => found.value,
                };
                at.position()
            }
            None => Position::default(),
        };
        pos.json_path = Some(display_path(&path));
        ReadError::new(ErrorCode::LaunchValue, self.file, pos, msg)
    }

    fn mark(&mut self, key: Key, origin: &Origin) -> Result<(), ReadError> {
        if let Some((_, first)) = self.seen.iter().find(|(k, _)| *k == key) {
            let name = &origin.key;
            let msg = if first.key == *name {
                format!("`{name}` is given twice (give each key once)")
            } else {
                format!(
                    "{name} repeats `{}` (give one spelling of a key once)",
                    first.key
                )
            };
            return Err(self.bad(&origin.with(Part::Key), msg));
        }
        self.seen.push((key, origin.clone()));
        Ok(())
    }

    /// Set an endpoint list (0 prefill, 1 decode, 2 agg) with the origin of each endpoint.
    fn set_list(&mut self, list: usize, items: Vec<(String, Origin)>) {
        let endpoints = items.iter().map(|(e, _)| e.clone()).collect();
        match list {
            0 => self.facts.prefill_endpoints = endpoints,
            1 => self.facts.decode_endpoints = endpoints,
            _ => self.facts.agg_endpoints = endpoints,
        }
        if let Some(slot) = self.list_origins.get_mut(list) {
            *slot = items;
        }
    }

    /// Set a key from a string value (env, or a JSON string).
    fn set_str(&mut self, key: Key, origin: &Origin, v: &str) -> Result<(), ReadError> {
        let name = origin.key.as_str();
        match key {
            Key::Framework => {
                let t = v.trim();
                self.facts.framework = (!t.is_empty()).then(|| t.to_ascii_lowercase());
            }
            Key::Disagg | Key::PrefixCaching => {
                if v.trim().is_empty() {
                    return Ok(());
                }
                let b = parse_bool(v).ok_or_else(|| {
                    self.bad(
                        origin,
                        format!("{name}=`{v}` is not a boolean (true/false/1/0/yes/no/on/off)"),
                    )
                })?;
                if key == Key::Disagg {
                    self.facts.disaggregated = Some(b);
                } else {
                    self.facts.enable_prefix_caching = Some(b);
                }
            }
            Key::Prefill | Key::Decode | Key::Agg => {
                let list =
                    split_list(v).map_err(|why| self.bad(origin, format!("{name}: {why}")))?;
                let items = list.into_iter().map(|e| (e, origin.clone())).collect();
                self.set_list(list_index(key), items);
            }
            Key::KvOffloading => {
                let t = v.trim().to_ascii_lowercase();
                if t.is_empty() {
                    return Ok(());
                }
                if !OFFLOAD_TIERS.contains(&t.as_str()) {
                    return Err(self.bad(
                        origin,
                        format!("{name}=`{v}` is not one of {}", OFFLOAD_TIERS.join("|")),
                    ));
                }
                self.facts.kv_offloading = Some(t);
            }
            Key::KvBackend => {
                let t = v.trim();
                self.facts.kv_offload_backend = (!t.is_empty()).then(|| t.to_string());
            }
            Key::Roles => {
                return Err(self.bad(
                    origin,
                    format!("{name} must be an object (endpoint → role)"),
                ))
            }
        }
        Ok(())
    }

    fn set_json(&mut self, key: Key, origin: &Origin, v: &LaunchValue) -> Result<(), ReadError> {
        let name = origin.key.as_str();
        let plain = match v {
            LaunchValue::Entries(entries) if key == Key::Roles => {
                return self.set_roles(origin, entries)
            }
            LaunchValue::Entries(_) => v.to_value(),
            LaunchValue::Plain(p) => p.clone(),
        };
        match (key, &plain) {
            (_, Value::Null) => Ok(()),
            (Key::Disagg, Value::Bool(b)) => {
                self.facts.disaggregated = Some(*b);
                Ok(())
            }
            (Key::PrefixCaching, Value::Bool(b)) => {
                self.facts.enable_prefix_caching = Some(*b);
                Ok(())
            }
            // The producer writes the backend as metadata: `{"name": "lmcache", "version": ...}`.
            (Key::KvBackend, Value::Object(meta)) => match meta.get("name") {
                Some(Value::String(n)) => self.set_str(key, origin, n),
                _ => Err(self.bad(
                    origin,
                    format!("{name}: `{plain}` has no string `name` (the backend)"),
                )),
            },
            (Key::Prefill | Key::Decode | Key::Agg, Value::Array(items)) => {
                let mut list: Vec<(String, Origin)> = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    let at = origin.with(Part::Item(i));
                    let Value::String(s) = item else {
                        return Err(
                            self.bad(&at, format!("{name}: `{item}` is not an endpoint string"))
                        );
                    };
                    let eps =
                        split_list(s).map_err(|why| self.bad(&at, format!("{name}: {why}")))?;
                    list.extend(eps.into_iter().map(|ep| (ep, at.clone())));
                }
                let list = first_of_each(list, |(ep, _)| ep.as_str());
                self.set_list(list_index(key), list);
                Ok(())
            }
            (Key::Roles, _) => Err(self.bad(
                origin,
                format!("{name} must be an object (endpoint → role), got `{plain}`"),
            )),
            (_, Value::String(s)) => self.set_str(key, origin, s),
            _ => Err(self.bad(origin, format!("{name}: `{plain}` has the wrong type"))),
        }
    }

    /// `endpoint_roles`: each entry in file order; one endpoint (after normalisation) given two
    /// roles is refused at the second.
    fn set_roles(&mut self, origin: &Origin, entries: &[(String, Value)]) -> Result<(), ReadError> {
        let name = origin.key.as_str();
        for (i, (ep, role)) in entries.iter().enumerate() {
            let nth = entries.iter().take(i).filter(|(k, _)| k == ep).count();
            let at = origin.with(Part::Role(ep.clone(), nth));
            let path = format!("{name}.{ep}");
            let norm =
                normalise_endpoint(ep).map_err(|why| self.bad(&at, format!("{path}: {why}")))?;
            let Some(r) = role.as_str().and_then(Role::parse) else {
                return Err(self.bad(
                    &at,
                    format!("{path}: `{role}` is not a role (prefill, decode, unified, frontend, excluded)"),
                ));
            };
            if let Some(prev) = self.facts.endpoint_roles.insert(norm.clone(), r) {
                if prev != r {
                    return Err(
                        self.bad(&at, format!("{name}: endpoint `{norm}` is given two roles"))
                    );
                }
            }
            self.role_origins.entry(norm).or_insert(at);
        }
        Ok(())
    }

    fn finish(self) -> Result<LaunchFacts, ReadError> {
        let f = &self.facts;
        // Every listed endpoint in list order (prefill, decode, agg), with its role and where
        // it was listed (`list_origins` holds each list's endpoints, in the list's order).
        let roles = [Role::Prefill, Role::Decode, Role::Unified];
        let listed: Vec<(&str, Role, &Origin)> = roles
            .into_iter()
            .zip(&self.list_origins)
            .flat_map(|(role, origins)| origins.iter().map(move |(ep, o)| (ep.as_str(), role, o)))
            .collect();
        // An endpoint in two lists is refused at its first repeat in list order, against its
        // first listing; the lists are sorted once for it (a search per endpoint was quadratic).
        let mut repeat: Option<(usize, usize)> = None;
        let mut assigned: StrMap<(Role, &Origin)> = StrMap::with_capacity(listed.len());
        for run in runs_by_key(&listed, &|l: &(&str, Role, &Origin)| l.0) {
            if let [first, second, ..] = *run {
                if repeat.is_none_or(|(s, _)| second < s) {
                    repeat = Some((second, first));
                }
            }
            if let Some(&(ep, role, origin)) = run.first().and_then(|&i| listed.get(i)) {
                assigned.push_sorted(ep.to_string(), (role, origin));
            }
        }
        if let Some((Some(&(ep, _, origin)), Some(&(_, _, other)))) =
            repeat.map(|(second, first)| (listed.get(second), listed.get(first)))
        {
            return Err(self.bad(
                origin,
                format!(
                    "endpoint `{ep}` is listed in both {} and {}",
                    other.key, origin.key
                ),
            ));
        }
        for (ep, role) in &f.endpoint_roles {
            if let Some((listed, list_origin)) = assigned.get(ep.as_str()) {
                if listed != role {
                    let at = self.role_origins.get(ep).unwrap_or(list_origin);
                    return Err(self.bad(
                        at,
                        format!(
                            "endpoint `{ep}` is {} in endpoint_roles but listed in {}",
                            role.as_str(),
                            list_origin.key
                        ),
                    ));
                }
            }
        }
        Ok(self.facts)
    }
}

/// The index of an endpoint list key (prefill, decode, agg).
fn list_index(key: Key) -> usize {
    match key {
        Key::Prefill => 0,
        Key::Decode => 1,
        _ => 2,
    }
}

/// Read launch facts from a JSON object.
pub fn read_launch_json(file: &str, text: &str) -> Result<LaunchFacts, ReadError> {
    let de = &mut serde_json::Deserializer::from_slice(text.as_bytes());
    let top: TopLevel = match crate::json_path::deserialize(text, de) {
        Ok(t) => t,
        Err(e) if e.error.classify() == serde_json::error::Category::Data && e.path.is_empty() => {
            return Err(ReadError::new(
                ErrorCode::JsonShape,
                file,
                crate::read::locate::locate(text, &[])
                    .map(|l| l.value.position())
                    .unwrap_or_default(),
                "launch facts must be a JSON object",
            ));
        }
        Err(e) => {
            let path = crate::json_path::shown(&e.path);
            return Err(ReadError::from_json_text_at(file, text, &e.error, path));
        }
    };
    let mut b = Builder::new(file, Some(text));
    for (i, (k, v)) in top.0.iter().enumerate() {
        let nth = top.0.iter().take(i).filter(|(o, _)| o == k).count();
        let origin = Origin::of(k, nth);
        if PRODUCER_KEYS.contains(&k.as_str()) {
            continue;
        }
        let Some(key) = key_of_json(k) else {
            return Err(b.bad(
                &origin.with(Part::Key),
                format!("unknown key `{k}` (framework, disaggregated, enable_prefix_caching, prefill_endpoints, decode_endpoints, agg_endpoints, endpoint_roles, kv_offloading, kv_offload_backend, their env names, or the producer's launch keys)"),
            ));
        };
        b.mark(key, &origin)?;
        b.set_json(key, &origin, v)?;
    }
    b.finish()
}

/// Read launch facts from environment variables (name, value); unknown names are ignored.
pub fn launch_from_env<'a, I>(vars: I) -> Result<LaunchFacts, ReadError>
where
    I: IntoIterator<Item = (&'a str, &'a str)>,
{
    let mut b = Builder::new("env", None);
    for (k, v) in vars {
        let Some(key) = key_of_env(k) else {
            continue;
        };
        // The last setting of a variable wins, as in a shell.
        b.seen.retain(|(sk, _)| *sk != key);
        let origin = Origin::of(k, 0);
        b.mark(key, &origin)?;
        b.set_str(key, &origin, v)?;
    }
    b.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_paths_match_serde_path_to_error() {
        let n = crate::json_path::testing::compare::<TopLevel>(
            r#"{"framework": "vllm", "disaggregated": true, "prefill_endpoints": ["http://p:8000"],
                "endpoint_roles": {"http://p:8000": "prefill"}, "kv_offloading": null, "n": 2.5}"#,
            true,
        );
        assert!(n > 1000, "only {n} broken launch files were compared");
    }

    #[test]
    fn endpoints() {
        let n = normalise_endpoint;
        assert_eq!(n("HTTP://Host.A:8000/metrics").unwrap(), "host.a:8000");
        assert_eq!(n("10.0.0.1:30000").unwrap(), "10.0.0.1:30000");
        assert_eq!(n("[::1]:80/x").unwrap(), "[::1]:80");
        assert!(n("host").is_err());
        assert!(n("host:abc").is_err());
        assert!(n("host:70000").is_err());
        assert!(n("host:0").is_err());
        assert!(n(":80").is_err());
    }
}
