//! The run exports: `inspectRun(s)` and `accountRun(s)` over whole buffers (the streaming
//! API is [`super::stream`]). Built with the `accounting` feature only.

use super::{files, options_arg, reply};
use crate::account::{account_run, account_run_folded, families_read};
use crate::error::RunOutcome;
use crate::inspect::inspect_run;
use crate::options::{AccountOptions, CallError, InspectOptions};
use crate::read::discover::read_runs;
use crate::read::{read_run, read_run_folded, FamilyFilter, Run, RunOptions};
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

/// One run: read it and compute `result` of it.
fn one_run<T>(
    files: &JsValue,
    options: &RunOptions,
    result: impl Fn(&Run) -> T,
) -> Result<T, CallError> {
    let held = files::hold(files::files_arg(files)?);
    let run = read_run(&files::inputs_of(&held), options)?;
    Ok(result(&run))
}

/// `accountRun`: the run read with its scrapes and records folded as they stream by (a few
/// bytes per sample in memory, not the samples), then accounted: the same result as accounting
/// the run read whole.
fn account_one_run(
    files: &JsValue,
    options: &RunOptions,
    policy: &crate::account::Policy,
) -> Result<crate::account::Accounting, CallError> {
    let held = files::hold(files::files_arg(files)?);
    let (run, fold) = read_run_folded(&files::inputs_of(&held), options)?;
    Ok(account_run_folded(run, fold, policy))
}

/// Every run among `files`, each `{run, result}` or `{run, error}`: the runs read one after
/// the other within the call's one memory budget.
fn many_runs<T>(
    files: &JsValue,
    options: &RunOptions,
    result: impl Fn(&Run) -> T,
) -> Result<Vec<RunOutcome<T>>, CallError> {
    let held = files::hold(files::sweep_files_arg(files)?);
    let (runs, _) = read_runs(&files::inputs_of(&held), options);
    Ok(runs
        .into_iter()
        .map(|r| RunOutcome::new(r.run, r.result.as_ref().map(&result)))
        .collect())
}

#[wasm_bindgen(js_name = inspectRun, skip_typescript)]
pub fn inspect_run_raw(files: JsValue, options: Option<String>) -> String {
    reply(inspect_options(options).and_then(|o| one_run(&files, &o, inspect_run)))
}

#[wasm_bindgen(js_name = inspectRuns, skip_typescript)]
pub fn inspect_runs_raw(files: JsValue, options: Option<String>) -> String {
    reply(inspect_options(options).and_then(|o| many_runs(&files, &o, inspect_run)))
}

#[wasm_bindgen(js_name = accountRun, skip_typescript)]
pub fn account_run_raw(files: JsValue, options: Option<String>) -> String {
    reply(account_options(options).and_then(|(o, policy)| account_one_run(&files, &o, &policy)))
}

#[wasm_bindgen(js_name = accountRuns, skip_typescript)]
pub fn account_runs_raw(files: JsValue, options: Option<String>) -> String {
    reply(
        account_options(options)
            .and_then(|(o, policy)| many_runs(&files, &o, |run| account_run(run, &policy))),
    )
}
