//! The command line: commands and their help, and how each outcome ends (exit code, stderr,
//! and under `--json` an error envelope on stdout).

use crate::out::{self, envelope, read_error, ErrorPayload};
use crate::{account, inspect, price, synth, validate};
use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand};
use kvledger::error::ErrorReport;
use kvledger::ReadError;
use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

const EXIT_CODES: &str = "\
Exit codes:
  0  success (whatever the verdicts: a verdict is data)
  1  an input could not be read (the stable error code is printed, e.g. JSON_SYNTAX); with
     several runs, any run could not be read (every run is printed first)
  2  the command line is wrong: an unknown option, a bad value (named), a combination that
     cannot be honoured, or an option file (--policy, --card) that cannot be read or is invalid

Under --json every result and every error is one envelope line on stdout:
  {\"kvledger\":\"1\",\"command\":\"account\",\"run\":\"...\",\"result\":{...}}
  {\"kvledger\":\"1\",\"command\":\"account\",\"error\":{\"code\":\"JSON_SYNTAX\",\"message\":...,
   \"file\":...,\"line\":...,\"column\":...,\"json_path\":...}}
See docs/cli.md. `-` reads stdin where a file is expected.";

#[derive(Parser)]
#[command(
    name = "kvledger",
    about = "Cache accounting for LLM-inference benchmark results (AIPerf runs)",
    after_help = EXIT_CODES,
    arg_required_else_help = true,
    term_width = 100
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    #[command(about = inspect::ABOUT, after_help = inspect::AFTER_HELP)]
    Inspect(inspect::Args),
    #[command(about = account::ABOUT)]
    Account(account::Args),
    #[command(about = price::ABOUT)]
    Price(price::Args),
    #[command(about = synth::ABOUT)]
    Synth(synth::Args),
    #[command(about = validate::ABOUT)]
    Validate(validate::Args),
    /// Print the JSON Schema (draft 2020-12) of every result, input and --json envelope
    /// (the package ships it as kvledger/schema.json)
    #[command(
        after_help = "Validate a value against {\"$ref\": \"kvledger.schema.json#/$defs/<Type>\"}: \
                      Accounting, RunInspection, PriceReport, CliEnvelope, ErrorReport, Policy, RateCard, ...\n\n\
                      Exit codes: 0 success; 2 the command line is wrong."
    )]
    Schema,
}

/// How a command fails.
#[derive(Debug)]
pub enum Failure {
    /// The command line is wrong (exit 2); the message names the option and its value.
    Usage(String),
    /// An option's own input (a `--policy` or `--card` file) cannot be read or is invalid
    /// (exit 2), with the file's code and position.
    OptionInput(ReadError),
    /// An input could not be read (exit 1).
    Read(ReadError),
    /// Errors already printed in their place (several runs); the summary line (exit 1).
    Reported(String),
    /// The reader of stdout went away: stop quietly (exit 0).
    ClosedPipe,
}

impl From<ReadError> for Failure {
    fn from(e: ReadError) -> Self {
        Failure::Read(e)
    }
}

/// The whole command tree, with the help texts built from the crate's own lists (faults,
/// rate cards, policy defaults) and the version with the contract version.
fn command() -> clap::Command {
    Cli::command()
        .version(format!(
            "{} ({})",
            env!("CARGO_PKG_VERSION"),
            kvledger::inspect::CONTRACT_VERSION
        ))
        .mut_subcommand("account", |c| c.after_help(account::after_help()))
        .mut_subcommand("price", |c| c.after_help(price::after_help()))
        .mut_subcommand("synth", |c| c.after_help(synth::after_help()))
        .mut_subcommand("validate", |c| c.after_help(validate::after_help()))
}

const COMMANDS: [&str; 6] = ["inspect", "account", "price", "synth", "validate", "schema"];

/// What the raw arguments say before parsing, so a parse error can be reported in the form
/// asked for: the command named (if any) and whether `--json` was given.
struct Context {
    command: Option<&'static str>,
    json: bool,
}

impl Context {
    fn of(args: &[OsString]) -> Context {
        let first = args.get(1).and_then(|a| a.to_str());
        Context {
            command: COMMANDS.iter().copied().find(|c| Some(*c) == first),
            json: args.iter().skip(1).any(|a| a == "--json"),
        }
    }
}

pub fn run(args: Vec<OsString>) -> ExitCode {
    let ctx = Context::of(&args);
    let matches = match command().try_get_matches_from(args) {
        Ok(m) => m,
        Err(e) => return clap_exit(&e, &ctx),
    };
    match dispatch(&matches) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => fail(f, &ctx),
    }
}

fn dispatch(matches: &ArgMatches) -> Result<(), Failure> {
    let cli = Cli::from_arg_matches(matches).map_err(|e| Failure::Usage(clap_message(&e)))?;
    match cli.command {
        Command::Inspect(a) => inspect::main(a),
        Command::Account(a) => account::main(a),
        Command::Price(a) => price::main(a),
        Command::Synth(a) => {
            let sub = matches.subcommand_matches("synth");
            synth::main(a, sub.unwrap_or(matches))
        }
        Command::Validate(a) => validate::main(a),
        Command::Schema => out::print(&kvledger::schema::json_schema_text()),
    }
}

/// clap's first line without its `error: ` prefix: the message naming the value.
fn clap_message(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let first = text.lines().next().unwrap_or("");
    first.strip_prefix("error: ").unwrap_or(first).to_string()
}

/// Help and version go to stdout (exit 0); a parse error to stderr (exit 2), and under
/// `--json` also as an envelope on stdout.
fn clap_exit(e: &clap::Error, ctx: &Context) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = out::print(&e.render().to_string());
            ExitCode::SUCCESS
        }
        _ => {
            if ctx.json {
                usage_envelope(ctx, &clap_message(e));
            }
            stderr(&e.render().to_string());
            ExitCode::from(2)
        }
    }
}

fn usage_envelope(ctx: &Context, message: &str) {
    let payload = ErrorPayload {
        error: ErrorReport::usage(message),
    };
    if let Ok(line) = envelope(ctx.command, payload) {
        let _ = out::print(&line);
    }
}

fn read_envelope(ctx: &Context, e: &ReadError) {
    if let Ok(line) = envelope(ctx.command, read_error(e)) {
        let _ = out::print(&line);
    }
}

/// Write to stderr; a closed stderr is ignored (nothing else can report it).
fn stderr(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// Report a failure and give its exit code.
fn fail(f: Failure, ctx: &Context) -> ExitCode {
    let cmd = ctx.command.map(|c| format!(" {c}")).unwrap_or_default();
    match f {
        Failure::ClosedPipe => ExitCode::SUCCESS,
        Failure::Usage(msg) => {
            if ctx.json {
                usage_envelope(ctx, &msg);
            }
            stderr(&format!(
                "error: {msg}\n\nFor more information, try 'kvledger{cmd} --help'.\n"
            ));
            ExitCode::from(2)
        }
        Failure::OptionInput(e) => {
            if ctx.json {
                read_envelope(ctx, &e);
            }
            stderr(&format!("kvledger: error {e}\n"));
            ExitCode::from(2)
        }
        Failure::Read(e) => {
            if ctx.json {
                read_envelope(ctx, &e);
            }
            stderr(&format!("kvledger: error {e}\n"));
            ExitCode::from(1)
        }
        Failure::Reported(summary) => {
            stderr(&format!("kvledger: {summary}\n"));
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_tree_is_consistent() {
        // clap's own checks: every id named in a conflict or requirement exists, no clashes.
        command().debug_assert();
    }

    #[test]
    fn parse_errors_are_told_apart_from_help() {
        let ctx = |args: &[&str]| Context::of(&args.iter().map(OsString::from).collect::<Vec<_>>());
        let c = ctx(&["kvledger", "account", "--json", "x"]);
        assert_eq!((c.command, c.json), (Some("account"), true));
        let c = ctx(&["kvledger", "acount", "x"]);
        assert_eq!((c.command, c.json), (None, false));
    }
}
