//! `launch.json`: the launch facts a benchmark launcher records (`src/read/launch.rs` keys):
//! framework, disaggregation, role endpoint lists, the offload tier and its backend.

use super::faults::Fault;
use super::out::{Out, Sink};
use super::plan::Plan;
use super::spec::Engine;
use crate::model::Role;
use serde_json::{json, Map, Value};
use std::io::{self, Write};

pub fn offload_facts(plan: &Plan) -> (&'static str, Option<&'static str>) {
    let e = plan.spec.engine;
    if plan.tiers_cpu {
        let b = match e {
            Engine::Vllm | Engine::Dynamo => "native",
            Engine::Sglang => "hicache",
            Engine::Trtllm => "host",
            Engine::Atom => "lmcache",
        };
        ("cpu", Some(b))
    } else if plan.tiers_ext {
        let b = match e {
            Engine::Trtllm => "disk",
            _ => "mooncake",
        };
        ("storage", Some(b))
    } else {
        ("none", None)
    }
}

pub fn write_launch(plan: &Plan, sink: &Sink) -> io::Result<(String, u64)> {
    let mut m = Map::new();
    m.insert("framework".into(), json!(plan.spec.engine.as_str()));
    m.insert(
        "disaggregated".into(),
        json!(plan.spec.topology.is_disagg()),
    );
    let list = |r: Role| -> Vec<String> {
        plan.endpoints
            .iter()
            .filter(|e| e.role == r)
            .map(|e| e.host_port.clone())
            .collect()
    };
    if plan.spec.topology.is_disagg() {
        let (p, d) = (list(Role::Prefill), list(Role::Decode));
        // The swapped-launch fault: the launcher wrote each list under the other role.
        let (p, d) = if plan.spec.has(Fault::SwappedLaunch) {
            (d, p)
        } else {
            (p, d)
        };
        m.insert("prefill_endpoints".into(), json!(p));
        m.insert("decode_endpoints".into(), json!(d));
    } else {
        m.insert("agg_endpoints".into(), json!(list(Role::Unified)));
    }
    if let Some(fe) = plan.frontend {
        let mut r = Map::new();
        r.insert(plan.endpoints[fe].host_port.clone(), json!("frontend"));
        m.insert("endpoint_roles".into(), Value::Object(r));
    }
    if plan.spec.has(Fault::PrefixCachingDisabled) {
        // A string, as launchers write their flags.
        m.insert("enable_prefix_caching".into(), json!("False"));
    }
    let (off, backend) = offload_facts(plan);
    m.insert("kv_offloading".into(), json!(off));
    if let Some(b) = backend {
        m.insert("kv_offload_backend".into(), json!(b));
    }
    let mut out = Out::open(sink, "launch.json")?;
    serde_json::to_writer_pretty(&mut out, &Value::Object(m))?;
    out.write_all(b"\n")?;
    out.finish()
}
