//! The run exports: `inspectRun(s)` and `accountRun(s)` over whole buffers (the streaming
//! API is [`super::stream`]). Built with the `accounting` feature only.

use super::{files, options_arg, reply};
use crate::account::{account_run_folded, families_read};
use crate::error::ReadError;
use crate::error::RunOutcome;
use crate::inspect::{inspect_run, RunInspection};
use crate::options::{AccountOptions, CallError, InspectOptions};
use crate::read::discover::{add_ignored, read_runs_with};
use crate::read::{read_run, read_run_folded, FamilyFilter, IgnoredFile, InputFile, RunOptions};
use wasm_bindgen::prelude::*;

/// The read options of a whole-buffer call: the caller's, within the call's memory budget.
fn whole_call(options: RunOptions) -> RunOptions {
    RunOptions {
        memory_budget: Some(files::WHOLE_CALL_BUDGET),
        ..options
    }
}

fn inspect_options(json: Option<String>) -> Result<RunOptions, CallError> {
    let opts: InspectOptions = options_arg("options", json)?;
    Ok(whole_call(opts.into_run_options(FamilyFilter::all())?))
}

fn account_options(
    json: Option<String>,
) -> Result<(RunOptions, crate::account::Policy), CallError> {
    let opts: AccountOptions = options_arg("options", json)?;
    let (run, policy) = opts.split()?;
    Ok((whole_call(run.into_run_options(families_read())?), policy))
}

/// One run: its files read by `read`, as [`many_runs`] reads each run of a sweep.
fn one_run<T>(
    files: &JsValue,
    options: &RunOptions,
    read: impl FnOnce(&[InputFile<'_>], &RunOptions, Vec<IgnoredFile>) -> Result<T, ReadError>,
) -> Result<T, CallError> {
    let held = files::hold(files::files_arg(files)?);
    Ok(read(&files::inputs_of(&held), options, Vec::new())?)
}

/// Every run among `files`, each `{run, result}` or `{run, error}`: each run read by `read`
/// (its files, the files of its folders not read) and its result made before the next is
/// read, within the call's one memory budget: the call holds one run's evidence at a time.
/// Read first and accounted after, 16 runs of the 19 MB bench JSONL and records grew linear
/// memory to 99.4 MiB, 6 MiB a run.
fn many_runs<T>(
    files: &JsValue,
    options: &RunOptions,
    read: impl FnMut(&[InputFile<'_>], &RunOptions, Vec<IgnoredFile>) -> Result<T, ReadError>,
) -> Result<Vec<RunOutcome<T>>, CallError> {
    let held = files::hold(files::sweep_files_arg(files)?);
    let (runs, _) = read_runs_with(&files::inputs_of(&held), options, read);
    Ok(runs
        .into_iter()
        .map(|r| match r.result {
            Ok(result) => RunOutcome::new(r.run, Ok(result)),
            Err(e) => RunOutcome::new(r.run, Err(&e)),
        })
        .collect())
}

/// `inspectRun`'s and `inspectRuns`' reading of one run.
fn inspect_read(
    files: &[InputFile<'_>],
    options: &RunOptions,
    ignored: Vec<IgnoredFile>,
) -> Result<RunInspection, ReadError> {
    let mut run = read_run(files, options)?;
    add_ignored(&mut run, ignored);
    Ok(inspect_run(&run))
}

/// `accountRun`'s and `accountRuns`' reading of one run: its scrapes and records folded as
/// they stream by (a few bytes per sample in memory, not the samples), then accounted: the
/// same result as accounting the run read whole.
fn account_read(
    files: &[InputFile<'_>],
    options: &RunOptions,
    ignored: Vec<IgnoredFile>,
    policy: &crate::account::Policy,
) -> Result<crate::account::Accounting, ReadError> {
    let (mut run, fold) = read_run_folded(files, options)?;
    add_ignored(&mut run, ignored);
    Ok(account_run_folded(run, fold, policy))
}

#[wasm_bindgen(js_name = inspectRun, skip_typescript)]
pub fn inspect_run_raw(files: JsValue, options: Option<String>) -> String {
    reply(inspect_options(options).and_then(|o| one_run(&files, &o, inspect_read)))
}

#[wasm_bindgen(js_name = inspectRuns, skip_typescript)]
pub fn inspect_runs_raw(files: JsValue, options: Option<String>) -> String {
    reply(inspect_options(options).and_then(|o| many_runs(&files, &o, inspect_read)))
}

#[wasm_bindgen(js_name = accountRun, skip_typescript)]
pub fn account_run_raw(files: JsValue, options: Option<String>) -> String {
    reply(account_options(options).and_then(|(o, policy)| {
        one_run(&files, &o, |files, options, ignored| {
            account_read(files, options, ignored, &policy)
        })
    }))
}

#[wasm_bindgen(js_name = accountRuns, skip_typescript)]
pub fn account_runs_raw(files: JsValue, options: Option<String>) -> String {
    reply(account_options(options).and_then(|(o, policy)| {
        many_runs(&files, &o, |files, options, ignored| {
            account_read(files, options, ignored, &policy)
        })
    }))
}
