//! `kvledger price`: price every row of a rows file (a JSON array of dashboard
//! `BenchmarkRow`s, or an object whose values are such arrays).

use crate::input::{self, is_stdin, stdin_once};
use crate::out::{self, envelope, say};
use crate::Failure;
use kvledger::pricing::rate_card::shipped_cards;
use kvledger::pricing::{
    point::BenchmarkRow, policy::price_point_on, CardChoice, LegacySurface, PriceOutcome,
    PriceReport, PricingPolicy, RateCard,
};
use kvledger::{ErrorCode, ReadError};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub const ABOUT: &str = "Price every row of a dashboard rows file under a pricing policy and \
                         a rate card ($ per GPU-hour)";

/// The detailed help after the options: the shipped cards (from the cards themselves),
/// examples, exit codes.
pub fn after_help() -> String {
    let cards: Vec<String> = shipped_cards().into_iter().map(|c| c.name).collect();
    format!(
        "\
Policies (docs/pricing.md): strict prices a prefix-reuse point only with an eligible measured
hit rate (fixed-sequence points without cache telemetry are priced with no discount);
theoretical uses the theoretical hit rate for every hardware; legacy reproduces the dashboard's
current rule on one of its surfaces: chart (the chart point), calculator (the calculator),
trend (historical trends).

Shipped rate cards: {}.
A card JSON file (or `-`) has the shape of the shipped ones (examples/rate-cards/*.json):
dated $-per-million-token prices and a usage convention; the cached-input price defaults to
10 % of the input price. An unknown field or an invalid value is named in the error.

Examples:
  kvledger price --rows tests/fixtures/app/cypress-api-benchmarks.json --policy strict
  kvledger price --rows rows.json --policy legacy --surface chart --card kimi-k3-moonshot
  kvledger price --rows - --card my-card.json --json < rows.json

Exit codes: 0 success, whatever is priced (a refusal is data); 1 the rows cannot be read (its
stable error code is printed); 2 the command line is wrong, or the --card is unknown, cannot be
read or is invalid.",
        cards.join(", ")
    )
}

fn parse_policy(v: &str) -> Result<PricingPolicy, String> {
    PricingPolicy::parse(v).ok_or_else(|| "expected strict, theoretical or legacy".to_string())
}

fn parse_surface(v: &str) -> Result<LegacySurface, String> {
    LegacySurface::parse(v).ok_or_else(|| "expected chart, calculator or trend".to_string())
}

#[derive(clap::Args)]
pub struct Args {
    /// Dashboard rows: a JSON array of BenchmarkRows, or an object whose values are such
    /// arrays (priced in key order); `-` reads stdin
    #[arg(long, value_name = "FILE")]
    rows: PathBuf,

    /// Pricing policy: strict, theoretical or legacy (below)
    #[arg(long, value_name = "POLICY", default_value = "strict", value_parser = parse_policy)]
    policy: PricingPolicy,

    /// With --policy legacy only: the dashboard surface reproduced, chart, calculator or trend
    /// [default: calculator]
    #[arg(long, value_name = "SURFACE", value_parser = parse_surface)]
    surface: Option<LegacySurface>,

    /// A shipped rate card by name (below), or a card JSON file; `-` reads the card from stdin
    /// [default: normalized]
    #[arg(long, value_name = "NAME|FILE")]
    card: Option<String>,

    /// Print the priced rows as one JSON envelope: {"kvledger":"1","command":"price",
    /// "rows":FILE,"result":{card, policy, surface, priced, not_priced, outcomes}}
    #[arg(long)]
    json: bool,
}

/// A card value names a file when it is one, or looks like a path (`.json`, a `/`).
fn card_is_file(spec: &str) -> bool {
    let p = Path::new(spec);
    p.is_file() || spec.ends_with(".json") || spec.contains('/')
}

/// The rate card of `--card`: its errors are the command line's (exit 2) and name the value.
fn load_card(spec: Option<&str>) -> Result<RateCard, Failure> {
    let choice = match spec {
        None => CardChoice::default(),
        Some(s) if s == "-" || card_is_file(s) => {
            let (name, text) = input::read_text(Path::new(s)).map_err(Failure::OptionInput)?;
            let de = &mut serde_json::Deserializer::from_str(&text);
            let card: RateCard = serde_path_to_error::deserialize(de).map_err(|e| {
                Failure::OptionInput(ReadError::from_json(
                    &name,
                    e.inner(),
                    Some(e.path().to_string()),
                ))
            })?;
            let checked = CardChoice::Card(card).resolve();
            return checked.map_err(|e| {
                Failure::OptionInput(ReadError::whole(
                    ErrorCode::BadOptions,
                    &name,
                    format!("--card: {e}"),
                ))
            });
        }
        Some(s) => CardChoice::Name(s.to_string()),
    };
    choice
        .resolve()
        .map_err(|e| Failure::Usage(format!("--card {}: {e}", spec.unwrap_or("normalized"))))
}

/// The rows file: an array of rows, or an object of arrays (in key order). Syntax and shape
/// errors carry their line, column and JSON path.
fn load_rows(path: &Path) -> Result<(String, Vec<BenchmarkRow>), Failure> {
    let (name, text) = input::read_text(path)?;
    let de = &mut serde_json::Deserializer::from_str(&text);
    let json_error = |e: serde_path_to_error::Error<serde_json::Error>| {
        Failure::Read(ReadError::from_json(
            &name,
            e.inner(),
            Some(e.path().to_string()),
        ))
    };
    let rows = match text
        .trim_start_matches('\u{feff}')
        .trim_start()
        .chars()
        .next()
    {
        Some('[') => serde_path_to_error::deserialize(de).map_err(json_error)?,
        Some('{') => {
            let groups: BTreeMap<String, Vec<BenchmarkRow>> =
                serde_path_to_error::deserialize(de).map_err(json_error)?;
            groups.into_values().flatten().collect()
        }
        _ => {
            return Err(Failure::Read(ReadError::whole(
                ErrorCode::JsonShape,
                &name,
                "expected an array of rows, or an object whose values are arrays of rows",
            )))
        }
    };
    Ok((name, rows))
}

/// The `result` of `price --json`.
/// `{"rows": FILE, "result": Report}`: the payload of the envelope.
#[derive(Serialize)]
struct Payload<'a> {
    rows: &'a str,
    result: PriceReport<'a>,
}

fn fmt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x:.digits$}"))
}

fn render(
    card: &RateCard,
    policy: PricingPolicy,
    surface: Option<LegacySurface>,
    rows: &[BenchmarkRow],
    outcomes: &[PriceOutcome],
) -> String {
    let mut text = String::new();
    let p = card.prices();
    let surface = surface
        .map(|s| format!(" (surface {s})"))
        .unwrap_or_default();
    say!(
        text,
        "card {} (as of {}): input {} / cached {} / output {} $/M; policy {}{}",
        card.name,
        card.as_of,
        p.input,
        p.cached,
        p.output,
        policy.as_str(),
        surface
    );
    say!(
        text,
        "{:>5}  {:<8} {:<10} {:>6} {:>10} {:>6} {:>6} {:>10}  status / reasons",
        "row",
        "hardware",
        "framework",
        "conc",
        "tok/s/GPU",
        "share",
        "hit",
        "$/GPU-hr",
    );
    for (i, (r, o)) in rows.iter().zip(outcomes).enumerate() {
        let codes: Vec<&str> = o.reasons.iter().map(|r| r.code.as_str()).collect();
        let status = if o.priced { "priced" } else { "NOT PRICED" };
        say!(
            text,
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
    let priced = outcomes.iter().filter(|o| o.priced).count();
    say!(
        text,
        "{} rows: {} priced, {} not priced",
        outcomes.len(),
        priced,
        outcomes.len() - priced
    );
    text
}

pub fn main(args: Args) -> Result<(), Failure> {
    stdin_once(&[
        ("--rows", is_stdin(&args.rows)),
        ("--card", args.card.as_deref() == Some("-")),
    ])?;
    if args.surface.is_some() && args.policy != PricingPolicy::Legacy {
        return Err(Failure::Usage(format!(
            "--surface applies to --policy legacy only; {} does not depend on it",
            args.policy.as_str()
        )));
    }
    let surface = (args.policy == PricingPolicy::Legacy).then(|| args.surface.unwrap_or_default());
    let card = load_card(args.card.as_deref())?;
    let (rows_name, rows) = load_rows(&args.rows)?;
    let outcomes: Vec<PriceOutcome> = rows
        .iter()
        .map(|r| price_point_on(&r.facts(), &card, args.policy, surface.unwrap_or_default()))
        .collect();
    if !args.json {
        return out::print(&render(&card, args.policy, surface, &rows, &outcomes));
    }
    let payload = Payload {
        rows: &rows_name,
        result: PriceReport::new(&card, args.policy, surface, &outcomes),
    };
    out::print(&envelope(Some("price"), payload)?)
}
