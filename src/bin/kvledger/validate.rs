//! `kvledger validate`: the verdict on a result upload (docs/validate.md), read chunk by chunk
//! from a file or stdin and stopped as soon as the verdict is decided.

use crate::input::{is_stdin, label};
use crate::out::{self, envelope, say};
use crate::Failure;
use kvledger::validate::{Claim, Issue, UploadLimits, UploadValidator, UploadVerdict, LIMIT_NAMES};
use kvledger::{ErrorCode, ReadError};
use serde::Serialize;
use std::io::Read;
use std::path::PathBuf;

pub const ABOUT: &str = "Validate a result upload: limits, the cache fields' schema and ranges, \
                         and the claims against the raw artifacts bundled with it";

/// Bytes read from the upload per push.
const CHUNK: usize = 64 << 10;

/// The help after the options: the upload format, the limits with their defaults (from the
/// built-in limits themselves), exit codes.
pub fn after_help() -> String {
    let d = UploadLimits::default();
    let mut text = String::from(
        "\
An upload is the point's result JSON as the producer writes it (legacy flat keys, the nested
server_metrics keys, a cache_validity block), alone or in a tar bundle with the run's raw
artifacts by relative path and the result JSON as result.json (at the top or in one folder);
either may be gzip'd (`tar -czf upload.tgz -C RUN_DIR .`). docs/validate.md has the details.

Limits (--limit NAME=VALUE, repeatable):
",
    );
    for name in LIMIT_NAMES {
        say!(text, "  {name:<20} default {}", d.get(name).unwrap_or(0));
    }
    text.push_str(
        "
Examples:
  kvledger validate result.json
  kvledger validate --json --limit bytes=1048576 upload.tgz
  curl -s https://host/upload.tgz | kvledger validate -

Exit codes: 0 the upload is accepted (warnings may remain); 1 it is refused (a limit, malformed,
claims refused) or cannot be read; 2 the command line is wrong (an unknown limit is named).",
    );
    text
}

#[derive(clap::Args)]
pub struct Args {
    /// The upload (a result JSON or a tar bundle, plain or gzip'd); `-` reads stdin
    #[arg(value_name = "FILE")]
    pub upload: PathBuf,

    /// Print the verdict as JSON, in the envelope of docs/cli.md
    #[arg(long)]
    pub json: bool,

    /// Override a limit (repeatable), e.g. `--limit bytes=1048576`
    #[arg(long = "limit", value_name = "NAME=VALUE", value_parser = parse_limit)]
    pub limits: Vec<(String, u64)>,
}

fn parse_limit(arg: &str) -> Result<(String, u64), String> {
    let (name, value) = arg
        .split_once('=')
        .ok_or_else(|| format!("`{arg}` is not NAME=VALUE"))?;
    if UploadLimits::default().get(name).is_none() {
        return Err(format!(
            "unknown limit `{name}`, expected one of {}",
            LIMIT_NAMES.join(", ")
        ));
    }
    let value = value
        .parse::<u64>()
        .map_err(|_| format!("the value of `{name}` is not a whole number: `{value}`"))?;
    Ok((name.to_string(), value))
}

pub fn main(args: Args) -> Result<(), Failure> {
    let mut limits = UploadLimits::default();
    for (name, value) in &args.limits {
        limits.set(name, *value).map_err(Failure::Usage)?;
    }
    let validator = UploadValidator::new(limits)
        .map_err(|e| Failure::Usage(format!("--limit {}: {}", e.name, e.message)))?;
    let name = label(&args.upload);
    let verdict = read_into(validator, &args.upload, &name)?;
    if args.json {
        #[derive(Serialize)]
        struct Payload<'a> {
            result: &'a UploadVerdict,
        }
        out::print(&envelope(Some("validate"), Payload { result: &verdict })?)?;
    } else {
        out::print(&summary(&name, &verdict))?;
    }
    if verdict.accepted {
        Ok(())
    } else {
        Err(Failure::Reported(format!(
            "the upload is refused ({})",
            outcome_word(&verdict)
        )))
    }
}

/// Push the upload in chunks until it ends or the verdict is decided.
fn read_into(mut v: UploadValidator, path: &PathBuf, name: &str) -> Result<UploadVerdict, Failure> {
    let io = |e: std::io::Error| ReadError::whole(ErrorCode::Io, name, format!("cannot read: {e}"));
    let mut input: Box<dyn Read> = if is_stdin(path) {
        Box::new(std::io::stdin().lock())
    } else {
        let file = std::fs::File::open(path).map_err(io)?;
        // A file past the `bytes` limit is refused from its length, unread.
        if let Ok(meta) = file.metadata() {
            if !v.expect_size(meta.len()) {
                return Ok(v.finish());
            }
        }
        Box::new(file)
    };
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io(e).into()),
        };
        if !v.push(&buf[..n]) {
            break;
        }
    }
    Ok(v.finish())
}

fn outcome_word(v: &UploadVerdict) -> &'static str {
    v.outcome.as_str()
}

fn place(i: &Issue) -> String {
    let mut parts = Vec::new();
    if let Some(f) = &i.file {
        parts.push(f.clone());
    }
    if let Some(p) = &i.json_path {
        parts.push(format!("at `{p}`"));
    }
    match (i.line, i.column) {
        (Some(l), Some(c)) => parts.push(format!("line {l}, column {c}")),
        (Some(l), None) => parts.push(format!("line {l}")),
        _ => {}
    }
    if let (Some(b), None) = (i.byte_offset, i.line) {
        parts.push(format!("byte {b}"));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    }
}

fn value_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Object(m) => match (m.get("lo"), m.get("hi")) {
            (Some(lo), Some(hi)) => format!("[{lo}, {hi}]"),
            _ => v.to_string(),
        },
        other => other.to_string(),
    }
}

fn claim_line(c: &Claim) -> String {
    let recomputed = c
        .recomputed
        .as_ref()
        .map(|r| format!("  recomputed {}", value_text(r)))
        .unwrap_or_default();
    format!(
        "  {:<13} {} = {}{recomputed}",
        c.status.as_str(),
        c.field,
        value_text(&c.claimed)
    )
}

/// The human summary: outcome, errors, warnings, claims, the recomputed verdict.
fn summary(name: &str, v: &UploadVerdict) -> String {
    let mut text = String::new();
    let word = if v.accepted { "ACCEPTED" } else { "REFUSED" };
    say!(text, "{name}: {word} ({})", outcome_word(v));
    for (title, list) in [("errors", &v.errors), ("warnings", &v.warnings)] {
        if list.is_empty() {
            continue;
        }
        say!(text, "{title}:");
        for i in list {
            say!(text, "  {} {}{}", i.code.as_str(), i.message, place(i));
        }
    }
    if !v.claims.is_empty() {
        say!(text, "claims:");
        for c in &v.claims {
            say!(text, "{}", claim_line(c));
        }
    }
    match &v.recomputed {
        Some(a) => say!(
            text,
            "recomputed from the raw artifacts: {} (pricing eligible: {})",
            a.cache_validity.status.as_str(),
            if a.cache_validity.pricing_eligible {
                "yes"
            } else {
                "no"
            }
        ),
        None if !v.claims.is_empty() => {
            say!(text, "no raw artifacts: the claims are unverified")
        }
        None => {}
    }
    text
}
