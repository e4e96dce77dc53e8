//! The refusals of `synth`: an explicitly given option the generator would change (for a
//! fault or the engine), faults whose needs contradict each other, and a `--target-bytes`
//! below the shortest run the calibration can choose.

use super::{synth_failure, Failure};
use clap::parser::ValueSource;
use clap::ArgMatches;
use kvledger::synth::out::Sink;
use kvledger::synth::{planner, scrape, write_run, Fault, Schema, SynthSpec};
use std::path::Path;

/// The shortest duration the generator's `--target-bytes` calibration chooses.
const SHORTEST_CALIBRATED_S: f64 = 5.0;

pub fn tiers_text(s: &SynthSpec) -> String {
    let mut t = vec!["gpu"];
    if s.tier_cpu {
        t.push("cpu");
    }
    if s.tier_external {
        t.push("external");
    }
    t.join(",")
}

pub fn schema_text(s: &SynthSpec) -> String {
    match s.schema {
        Schema::V1_0 => "1.0",
        Schema::V1_1 => "1.1",
    }
    .to_string()
}

/// A setting the generator may adjust: the options that set it, its name, its value.
struct Setting {
    options: &'static [&'static str],
    name: &'static str,
    show: fn(&SynthSpec) -> String,
}

fn settings() -> [Setting; 8] {
    [
        Setting {
            options: &["topology"],
            name: "topology",
            show: |s| s.topology.to_string(),
        },
        Setting {
            options: &["tiers"],
            name: "tiers",
            show: tiers_text,
        },
        Setting {
            options: &["schema"],
            name: "schema",
            show: schema_text,
        },
        Setting {
            options: &["exports", "no_jsonl"],
            name: "exports",
            show: |s| s.exports(),
        },
        Setting {
            options: &["tp"],
            name: "tp",
            show: |s| s.tp.to_string(),
        },
        Setting {
            options: &["dp"],
            name: "dp",
            show: |s| s.dp.to_string(),
        },
        Setting {
            options: &["concurrency"],
            name: "concurrency",
            show: |s| s.concurrency.to_string(),
        },
        Setting {
            options: &["frontend"],
            name: "frontend",
            show: |s| yes_no(s.frontend),
        },
    ]
}

pub fn yes_no(b: bool) -> String {
    if b { "yes" } else { "no" }.to_string()
}

/// `--exports` for `exports`, `--no-jsonl` for `no_jsonl`.
fn flag(id: &str) -> String {
    format!("--{}", id.replace('_', "-"))
}

fn explicit(m: &ArgMatches, id: &str) -> bool {
    m.value_source(id) == Some(ValueSource::CommandLine)
}

fn with_faults(spec: &SynthSpec, faults: &[Fault]) -> SynthSpec {
    SynthSpec {
        faults: faults.to_vec(),
        ..spec.clone()
    }
    .resolved()
}

/// What changes a setting from `value`: the engine alone, or faults one by one.
fn culprits(spec: &SynthSpec, show: fn(&SynthSpec) -> String, value: &str) -> Vec<String> {
    let mut found = Vec::new();
    let engine_only = show(&with_faults(spec, &[]));
    if engine_only != value {
        found.push(format!("engine {}", spec.engine.as_str()));
    }
    for f in &spec.faults {
        if show(&with_faults(spec, &[*f])) != engine_only {
            found.push(format!("fault {f}"));
        }
    }
    found
}

/// Refuse an explicitly given option whose value the generator would change.
pub fn check_explicit(
    spec: &SynthSpec,
    resolved: &SynthSpec,
    m: &ArgMatches,
) -> Result<(), Failure> {
    for s in settings() {
        let Some(id) = s.options.iter().find(|id| explicit(m, id)) else {
            continue;
        };
        let (asked, got) = ((s.show)(spec), (s.show)(resolved));
        if asked != got {
            let given = m
                .get_raw(id)
                .map(|v| v.map(|x| x.to_string_lossy()).collect::<Vec<_>>().join(","))
                .unwrap_or_default();
            let why = culprits(spec, s.show, &asked).join(" and ");
            let why = if why.is_empty() {
                "the other options".to_string()
            } else {
                why
            };
            return Err(Failure::Usage(format!(
                "{} cannot be honoured: with {why} the run has {} {got} (docs/synth.md); \
                 give {} {got} or leave the option out",
                option_text(id, &given),
                s.name,
                flag(s.options[0])
            )));
        }
    }
    Ok(())
}

/// How an option was given, for messages: `--tiers gpu,cpu`, `--no-jsonl`.
fn option_text(id: &str, value: &str) -> String {
    match id {
        "no_jsonl" | "frontend" => flag(id),
        _ => format!("{} {value}", flag(id)),
    }
}

/// Refuse faults whose needs contradict each other (one needs schema 1.0, another 1.1).
pub fn check_fault_needs(spec: &SynthSpec, resolved: &SynthSpec) -> Result<(), Failure> {
    let none = with_faults(spec, &[]);
    // What a fault alone makes of the setting, when it changes it.
    let need_of = |show: fn(&SynthSpec) -> String, f: Fault| {
        let v = show(&with_faults(spec, &[f]));
        (v != show(&none)).then_some(v)
    };
    for s in settings()
        .iter()
        .filter(|s| matches!(s.name, "schema" | "exports" | "tiers"))
    {
        for f in &spec.faults {
            let got = (s.show)(resolved);
            let Some(needs) = need_of(s.show, *f).filter(|n| *n != got) else {
                continue;
            };
            let others: Vec<String> = spec
                .faults
                .iter()
                .filter(|g| *g != f && (s.show)(&with_faults(spec, &[*f, **g])) != needs)
                .map(|g| g.to_string())
                .collect();
            let others = if others.is_empty() {
                "the other options".to_string()
            } else {
                others.join(", ")
            };
            return Err(Failure::Usage(format!(
                "--fault {f} cannot be honoured: it needs {name} {needs}, and with {others} the \
                 run has {name} {got} (docs/synth.md)",
                name = s.name
            )));
        }
    }
    Ok(())
}

/// Bytes of the shortest run `--target-bytes` can choose, counted without writing.
fn shortest_run_bytes(resolved: &SynthSpec) -> Result<u64, Failure> {
    let spec = SynthSpec {
        duration_s: SHORTEST_CALIBRATED_S,
        target_bytes: None,
        ..resolved.clone()
    };
    let mut plan = planner::build(&spec);
    scrape::settle_unseen_restart(&mut plan);
    write_run(&plan, &Sink::Count)
        .map(|s| s.total_bytes)
        .map_err(|e| synth_failure(e, Path::new("-")))
}

pub fn check_target(resolved: &SynthSpec) -> Result<(), Failure> {
    let Some(target) = resolved.target_bytes else {
        return Ok(());
    };
    let floor = shortest_run_bytes(resolved)?;
    if target < floor {
        return Err(Failure::Usage(format!(
            "--target-bytes {target}: the shortest run of these options ({SHORTEST_CALIBRATED_S} s) \
             already has {floor} bytes; give at least {floor}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::spec_of;
    use crate::synth::tests::parse;

    #[test]
    fn explicit_settings_the_generator_would_change_are_refused() {
        for argv in [
            &["--engine", "vllm", "--tiers", "gpu,cpu,external"][..],
            &["--fault", "straddle_no_proof", "--schema", "1.1"],
            &["--fault", "decode_recount", "--topology", "agg"],
            &["--fault", "tp_disagree", "--tp", "1"],
            &["--fault", "straddle_proof", "--exports", "json,csv,jsonl"],
            &["--fault", "conflicting_exports", "--no-jsonl"],
        ] {
            let (a, m) = parse(&[argv, &["--out", "x"]].concat());
            let spec = spec_of(&a).expect("spec");
            let r = check_explicit(&spec, &spec.resolved(), &m);
            assert!(matches!(r, Err(Failure::Usage(_))), "{argv:?}");
        }
        // The same faults with the settings left at their defaults are accepted.
        let (a, m) = parse(&[
            "--fault",
            "straddle_no_proof,decode_recount,tp_disagree",
            "--out",
            "x",
        ]);
        let spec = spec_of(&a).expect("spec");
        assert!(check_explicit(&spec, &spec.resolved(), &m).is_ok());
    }

    #[test]
    fn faults_with_contradicting_needs_are_refused() {
        let (a, _) = parse(&["--fault", "straddle_no_proof,zero_traffic", "--out", "x"]);
        let spec = spec_of(&a).expect("spec");
        assert!(check_fault_needs(&spec, &spec.resolved()).is_err());
        let (a, _) = parse(&["--fault", "counter_reset,errors_profiling", "--out", "x"]);
        let spec = spec_of(&a).expect("spec");
        assert!(check_fault_needs(&spec, &spec.resolved()).is_ok());
    }

    #[test]
    fn every_fault_alone_with_default_settings_is_accepted() {
        for f in Fault::ALL {
            let (a, m) = parse(&["--fault", f.as_str(), "--out", "x"]);
            let spec = spec_of(&a).expect("spec");
            let resolved = spec.resolved();
            assert!(check_explicit(&spec, &resolved, &m).is_ok(), "{f}");
            assert!(check_fault_needs(&spec, &resolved).is_ok(), "{f}");
        }
    }
}
