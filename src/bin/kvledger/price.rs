//! `kvledger price`: price every row of a rows file (a JSON array of dashboard
//! `BenchmarkRow`s, or an object whose values are such arrays).

use crate::Failure;
use kvledger::pricing::{
    point::BenchmarkRow, policy::price_point_on, CardChoice, LegacySurface, PriceOutcome,
    PricingPolicy, RateCard,
};
use kvledger::{ErrorCode, ReadError};
use serde::Serialize;
use std::path::PathBuf;

struct Args {
    rows: PathBuf,
    policy: PricingPolicy,
    surface: LegacySurface,
    card: Option<String>,
    json: bool,
}

fn parse_args(mut argv: impl Iterator<Item = String>) -> Result<Args, Failure> {
    let mut rows = None;
    let mut policy = PricingPolicy::Strict;
    let mut surface = None;
    let mut card = None;
    let mut json = false;
    while let Some(a) = argv.next() {
        let mut value = |name: &str| {
            argv.next()
                .ok_or_else(|| Failure::Usage(format!("{name} needs a value")))
        };
        match a.as_str() {
            "--rows" => rows = Some(PathBuf::from(value("--rows")?)),
            "--policy" => {
                let v = value("--policy")?;
                policy = PricingPolicy::parse(&v).ok_or_else(|| {
                    Failure::Usage(format!(
                        "--policy {v}: expected strict, theoretical or legacy"
                    ))
                })?;
            }
            "--surface" => {
                let v = value("--surface")?;
                surface = Some(LegacySurface::parse(&v).ok_or_else(|| {
                    Failure::Usage(format!(
                        "--surface {v}: expected chart, calculator or trend"
                    ))
                })?);
            }
            "--card" => card = Some(value("--card")?),
            "--json" => json = true,
            s => return Err(Failure::Usage(format!("unknown argument {s}"))),
        }
    }
    if surface.is_some() && policy != PricingPolicy::Legacy {
        return Err(Failure::Usage(format!(
            "--surface applies to --policy legacy only; {} does not depend on it",
            policy.as_str()
        )));
    }
    Ok(Args {
        rows: rows.ok_or_else(|| Failure::Usage("give --rows FILE".to_string()))?,
        policy,
        surface: surface.unwrap_or_default(),
        card,
        json,
    })
}

fn read_text(path: &std::path::Path) -> Result<String, Failure> {
    let name = path.display().to_string();
    std::fs::read_to_string(path).map_err(|e| {
        Failure::Read(ReadError::whole(
            ErrorCode::Io,
            &name,
            format!("cannot read: {e}"),
        ))
    })
}

fn shape_error(name: &str, e: impl std::fmt::Display) -> Failure {
    Failure::Read(ReadError::whole(ErrorCode::JsonShape, name, e.to_string()))
}

fn load_card(spec: Option<&str>) -> Result<RateCard, Failure> {
    let choice = match spec {
        None => CardChoice::default(),
        Some(s) if std::path::Path::new(s).is_file() => {
            let text = read_text(std::path::Path::new(s))?;
            CardChoice::Card(serde_json::from_str(&text).map_err(|e| shape_error(s, e))?)
        }
        Some(s) => CardChoice::Name(s.to_string()),
    };
    choice
        .resolve()
        .map_err(|e| Failure::Usage(format!("--card: {e}")))
}

fn load_rows(path: &std::path::Path) -> Result<Vec<BenchmarkRow>, Failure> {
    let name = path.display().to_string();
    let text = read_text(path)?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        Failure::Read(ReadError::whole(
            ErrorCode::JsonSyntax,
            &name,
            e.to_string(),
        ))
    })?;
    let arrays: Vec<serde_json::Value> = match value {
        serde_json::Value::Array(_) => vec![value],
        serde_json::Value::Object(map) => map.into_iter().map(|(_, v)| v).collect(),
        _ => return Err(shape_error(&name, "expected an array of rows")),
    };
    let mut rows = Vec::new();
    for a in arrays {
        let part: Vec<BenchmarkRow> =
            serde_json::from_value(a).map_err(|e| shape_error(&name, e))?;
        rows.extend(part);
    }
    Ok(rows)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Report<'a> {
    rows_file: String,
    card: &'a RateCard,
    policy: PricingPolicy,
    #[serde(skip_serializing_if = "Option::is_none")]
    surface: Option<LegacySurface>,
    priced: usize,
    not_priced: usize,
    outcomes: &'a [PriceOutcome],
}

fn fmt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x:.digits$}"))
}

pub fn main(argv: impl Iterator<Item = String>) -> Result<(), Failure> {
    let args = parse_args(argv)?;
    let card = load_card(args.card.as_deref())?;
    let rows = load_rows(&args.rows)?;
    let outcomes: Vec<PriceOutcome> = rows
        .iter()
        .map(|r| price_point_on(&r.facts(), &card, args.policy, args.surface))
        .collect();
    let priced = outcomes.iter().filter(|o| o.priced).count();
    if args.json {
        let report = Report {
            rows_file: args.rows.display().to_string(),
            card: &card,
            policy: args.policy,
            surface: (args.policy == PricingPolicy::Legacy).then_some(args.surface),
            priced,
            not_priced: outcomes.len() - priced,
            outcomes: &outcomes,
        };
        let text = serde_json::to_string_pretty(&report)
            .map_err(|e| Failure::Usage(format!("cannot serialise: {e}")))?;
        println!("{text}");
        return Ok(());
    }
    let p = card.prices();
    let surface = if args.policy == PricingPolicy::Legacy {
        format!(" (surface {})", args.surface)
    } else {
        String::new()
    };
    println!(
        "card {} (as of {}): input {} / cached {} / output {} $/M; policy {}{}",
        card.name,
        card.as_of,
        p.input,
        p.cached,
        p.output,
        args.policy.as_str(),
        surface
    );
    println!(
        "{:>5}  {:<8} {:<10} {:>6} {:>10} {:>6} {:>6} {:>10}  status / reasons",
        "row", "hardware", "framework", "conc", "tok/s/GPU", "share", "hit", "$/GPU-hr",
    );
    for (i, (r, o)) in rows.iter().zip(&outcomes).enumerate() {
        let codes: Vec<&str> = o.reasons.iter().map(|r| r.code.as_str()).collect();
        let status = if o.priced { "priced" } else { "NOT PRICED" };
        println!(
            "{:>5}  {:<8} {:<10} {:>6} {:>10} {:>6} {:>6} {:>10}  {}{}{}",
            i,
            r.hardware.as_deref().unwrap_or("-"),
            r.framework.as_deref().unwrap_or("-"),
            fmt(r.conc, 0),
            fmt(o.throughput_per_gpu, 1),
            fmt(o.input_share, 3),
            fmt(o.hit_rate, 3),
            fmt(o.revenue_per_gpu_hour, 4),
            status,
            if codes.is_empty() { "" } else { ": " },
            codes.join(", ")
        );
    }
    println!(
        "{} rows: {} priced, {} not priced",
        outcomes.len(),
        priced,
        outcomes.len() - priced
    );
    Ok(())
}
