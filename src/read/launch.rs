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
//! unknown JSON key.

use crate::error::{ErrorCode, Position, ReadError};
use crate::model::{LaunchFacts, Role};
use serde_json::Value;
use std::collections::BTreeMap;

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

fn bad(file: &str, name: &str, msg: impl Into<String>) -> ReadError {
    let mut pos = Position::default();
    if file != "env" {
        pos.json_path = Some(name.to_string());
    }
    ReadError::new(ErrorCode::LaunchValue, file, pos, msg)
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

/// Normalise one endpoint to `host:port`.
fn normalise_endpoint(file: &str, name: &str, raw: &str) -> Result<String, ReadError> {
    let refuse = |why: &str| bad(file, name, format!("{name}: endpoint `{raw}` {why}"));
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

fn split_list(file: &str, name: &str, s: &str) -> Result<Vec<String>, ReadError> {
    let mut out = Vec::new();
    for item in s.split(',') {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        let ep = normalise_endpoint(file, name, item)?;
        if !out.contains(&ep) {
            out.push(ep);
        }
    }
    Ok(out)
}

/// Accumulates facts from either source, then checks them as a whole.
struct Builder<'a> {
    file: &'a str,
    facts: LaunchFacts,
    /// Which name set each key (to refuse two spellings of one key).
    seen: Vec<(Key, String)>,
}

impl<'a> Builder<'a> {
    fn new(file: &'a str) -> Self {
        Builder {
            file,
            facts: LaunchFacts::default(),
            seen: Vec::new(),
        }
    }

    fn mark(&mut self, key: Key, name: &str) -> Result<(), ReadError> {
        if let Some((_, first)) = self.seen.iter().find(|(k, _)| *k == key) {
            return Err(bad(
                self.file,
                name,
                format!("{name} repeats `{first}` (give one spelling of a key once)"),
            ));
        }
        self.seen.push((key, name.to_string()));
        Ok(())
    }

    /// Set a key from a string value (env, or a JSON string).
    fn set_str(&mut self, key: Key, name: &str, v: &str) -> Result<(), ReadError> {
        let file = self.file;
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
                    bad(
                        file,
                        name,
                        format!("{name}=`{v}` is not a boolean (true/false/1/0/yes/no/on/off)"),
                    )
                })?;
                if key == Key::Disagg {
                    self.facts.disaggregated = Some(b);
                } else {
                    self.facts.enable_prefix_caching = Some(b);
                }
            }
            Key::Prefill => self.facts.prefill_endpoints = split_list(file, name, v)?,
            Key::Decode => self.facts.decode_endpoints = split_list(file, name, v)?,
            Key::Agg => self.facts.agg_endpoints = split_list(file, name, v)?,
            Key::KvOffloading => {
                let t = v.trim().to_ascii_lowercase();
                if t.is_empty() {
                    return Ok(());
                }
                if !OFFLOAD_TIERS.contains(&t.as_str()) {
                    return Err(bad(
                        file,
                        name,
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
                return Err(bad(
                    file,
                    name,
                    format!("{name} must be an object (endpoint → role)"),
                ))
            }
        }
        Ok(())
    }

    fn set_json(&mut self, key: Key, name: &str, v: &Value) -> Result<(), ReadError> {
        let file = self.file;
        match (key, v) {
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
                Some(Value::String(n)) => self.set_str(key, name, n),
                _ => Err(bad(
                    file,
                    name,
                    format!("{name}: `{v}` has no string `name` (the backend)"),
                )),
            },
            (Key::Prefill | Key::Decode | Key::Agg, Value::Array(items)) => {
                let mut list = Vec::new();
                for item in items {
                    let Value::String(s) = item else {
                        return Err(bad(
                            file,
                            name,
                            format!("{name}: `{item}` is not an endpoint string"),
                        ));
                    };
                    for ep in split_list(file, name, s)? {
                        if !list.contains(&ep) {
                            list.push(ep);
                        }
                    }
                }
                match key {
                    Key::Prefill => self.facts.prefill_endpoints = list,
                    Key::Decode => self.facts.decode_endpoints = list,
                    _ => self.facts.agg_endpoints = list,
                }
                Ok(())
            }
            (Key::Roles, Value::Object(map)) => {
                for (ep, role) in map {
                    let path = format!("{name}.{ep}");
                    let norm = normalise_endpoint(file, &path, ep)?;
                    let Some(r) = role.as_str().and_then(Role::parse) else {
                        return Err(bad(
                            file,
                            &path,
                            format!("{path}: `{role}` is not a role (prefill, decode, unified, frontend, excluded)"),
                        ));
                    };
                    if let Some(prev) = self.facts.endpoint_roles.insert(norm.clone(), r) {
                        if prev != r {
                            return Err(bad(
                                file,
                                &path,
                                format!("{name}: endpoint `{norm}` is given two roles"),
                            ));
                        }
                    }
                }
                Ok(())
            }
            (Key::Roles, _) => Err(bad(
                file,
                name,
                format!("{name} must be an object (endpoint → role), got `{v}`"),
            )),
            (_, Value::String(s)) => self.set_str(key, name, s),
            _ => Err(bad(file, name, format!("{name}: `{v}` has the wrong type"))),
        }
    }

    fn finish(self) -> Result<LaunchFacts, ReadError> {
        let f = self.facts;
        let mut assigned: BTreeMap<&str, (Role, &str)> = BTreeMap::new();
        let lists = [
            (&f.prefill_endpoints, Role::Prefill, "SRT_PREFILL_ENDPOINTS"),
            (&f.decode_endpoints, Role::Decode, "SRT_DECODE_ENDPOINTS"),
            (&f.agg_endpoints, Role::Unified, "SRT_AGG_ENDPOINTS"),
        ];
        for (list, role, name) in lists {
            for ep in list {
                if let Some((_, other)) = assigned.insert(ep.as_str(), (role, name)) {
                    return Err(bad(
                        self.file,
                        name,
                        format!("endpoint `{ep}` is listed in both {other} and {name}"),
                    ));
                }
            }
        }
        for (ep, role) in &f.endpoint_roles {
            if let Some((listed, name)) = assigned.get(ep.as_str()) {
                if listed != role {
                    return Err(bad(
                        self.file,
                        "endpoint_roles",
                        format!(
                            "endpoint `{ep}` is {} in endpoint_roles but listed in {name}",
                            role.as_str()
                        ),
                    ));
                }
            }
        }
        Ok(f)
    }
}

/// Read launch facts from a JSON object.
pub fn read_launch_json(file: &str, text: &str) -> Result<LaunchFacts, ReadError> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| ReadError::from_json(file, &e, None))?;
    let Value::Object(map) = value else {
        return Err(ReadError::whole(
            ErrorCode::JsonShape,
            file,
            "launch facts must be a JSON object",
        ));
    };
    let mut b = Builder::new(file);
    for (k, v) in &map {
        if PRODUCER_KEYS.contains(&k.as_str()) {
            continue;
        }
        let Some(key) = key_of_json(k) else {
            return Err(bad(
                file,
                k,
                format!("unknown key `{k}` (framework, disaggregated, enable_prefix_caching, prefill_endpoints, decode_endpoints, agg_endpoints, endpoint_roles, kv_offloading, kv_offload_backend, their env names, or the producer's launch keys)"),
            ));
        };
        b.mark(key, k)?;
        b.set_json(key, k, v)?;
    }
    b.finish()
}

/// Read launch facts from environment variables (name, value); unknown names are ignored.
pub fn launch_from_env<'a, I>(vars: I) -> Result<LaunchFacts, ReadError>
where
    I: IntoIterator<Item = (&'a str, &'a str)>,
{
    let mut b = Builder::new("env");
    for (k, v) in vars {
        let Some(key) = key_of_env(k) else {
            continue;
        };
        // The last setting of a variable wins, as in a shell.
        b.seen.retain(|(sk, _)| *sk != key);
        b.mark(key, k)?;
        b.set_str(key, k, v)?;
    }
    b.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints() {
        let n = |s| normalise_endpoint("f", "X", s);
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
