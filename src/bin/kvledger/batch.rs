//! Runs read and processed by `--jobs` workers, printed in the order of a sequential read (the
//! same bytes whatever the number of workers) as soon as the next run in that order is done.
//! Each worker reads, processes and renders its run, then drops it: memory holds the runs in
//! work and at most a window of rendered results waiting for an earlier, slower run.
//! On a terminal, stderr shows a progress bar; a batch ends with a summary line on stderr.

use crate::out::{self, envelope, say};
use crate::run_args::Runs;
use crate::Failure;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use kvledger::account::fold::Folded;
use kvledger::error::RunOutcome;
use kvledger::read::run::Progress;
use kvledger::read::Run;
use kvledger::ReadError;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

/// A single run at least this large shows a byte progress bar on a terminal.
const LARGE_RUN_BYTES: u64 = 64 << 20;

/// Results a worker may finish ahead of the next one to print, per worker: bounds what waits
/// in memory behind a slow run.
const AHEAD_PER_JOB: usize = 4;

/// How a command processes, renders and prints its runs.
pub struct Batch<'a, T> {
    pub command: &'static str,
    pub json: bool,
    /// Workers; 1 reads the runs one after the other.
    pub jobs: usize,
    /// No progress bar and no summary line (errors are still printed).
    pub quiet: bool,
    /// The command's result of one run and what was folded while reading it (see
    /// `Runs::folding`); both are dropped afterwards.
    pub process: &'a (dyn Fn(Run, Folded) -> T + Sync),
    /// A result as text.
    pub table: fn(&str, &T) -> String,
}

/// The number of workers when `--jobs` is not given: the cores this process may use.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// One run rendered by a worker: what to print, whether it failed, its input bytes.
struct Done {
    text: Result<String, Failure>,
    failed: bool,
    bytes: u64,
}

impl<T: Serialize> Batch<'_, T> {
    /// Print every run. One run prints as before batches existed (its error fails the command
    /// with that error); several runs print each in its place, errors included, and fail
    /// (exit 1) after the last if any could not be read.
    pub fn run(&self, runs: &Runs) -> Result<(), Failure> {
        if runs.len() == 1 {
            return self.single(runs);
        }
        let started = Instant::now();
        let totals = self.parallel(runs)?;
        if !self.json && !runs.stray().is_empty() {
            let mut text = String::from("\nnot in any run:\n");
            for s in runs.stray() {
                say!(text, "  ignored  {}  ({})", s.name, s.reason);
            }
            out::print(&text)?;
        }
        if !self.quiet {
            summary(self.command, runs.len(), &totals, started);
        }
        if totals.failed > 0 {
            return Err(Failure::Reported(format!(
                "{} of {} runs could not be read",
                totals.failed,
                runs.len()
            )));
        }
        Ok(())
    }

    /// The one run: a byte progress bar when it is large and stderr is a terminal.
    fn single(&self, runs: &Runs) -> Result<(), Failure> {
        let label = runs.label(0);
        let bar = (!self.quiet)
            .then(|| runs.bytes(0))
            .filter(|b| *b >= LARGE_RUN_BYTES && std::io::stderr().is_terminal())
            .map(byte_bar);
        let read = runs.read(0, bar.as_ref().map(progress_of));
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        let result = read.map(|(run, folded)| (self.process)(run, folded));
        match (&result, self.json) {
            (Err(e), true) => {
                out::print(&self.render(label, &result, 0)?)?;
                Err(Failure::Reported(format!("error {e}")))
            }
            (Err(e), false) => Err(Failure::Read(e.clone())),
            (Ok(_), true) => {
                out::print_envelope(Some(self.command), RunOutcome::new(label, result.as_ref()))
            }
            (Ok(_), false) => out::print(&self.render(label, &result, 0)?),
        }
    }

    /// Run `i`'s output: its envelope line, or its text block (a blank line before every
    /// block but the first).
    fn render(&self, label: &str, r: &Result<T, ReadError>, i: usize) -> Result<String, Failure> {
        if self.json {
            return envelope(Some(self.command), RunOutcome::new(label, r.as_ref()));
        }
        let block = match r {
            Ok(v) => (self.table)(label, v),
            Err(e) => format!("run: {label}\n  error {e}\n"),
        };
        Ok(if i > 0 { format!("\n{block}") } else { block })
    }

    /// Read, process and render run `i`; the run is dropped before returning.
    fn work(&self, runs: &Runs, i: usize) -> Done {
        let result = runs
            .read(i, None)
            .map(|(run, folded)| (self.process)(run, folded));
        Done {
            text: self.render(runs.label(i), &result, i),
            failed: result.is_err(),
            bytes: runs.bytes(i),
        }
    }
}

/// Which run the workers take next, and how far printing has got (a worker waits rather than
/// run more than the window ahead of it).
struct Claims {
    next: usize,
    printed: usize,
    stop: bool,
}

struct Queue {
    claims: Mutex<Claims>,
    moved: Condvar,
    len: usize,
    window: usize,
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, Claims> {
        // A worker never panics while holding the lock; were one to, the counters are intact.
        self.claims.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The next run to work on, or `None` when every run is taken or printing stopped.
    fn claim(&self) -> Option<usize> {
        let mut c = self.lock();
        loop {
            if c.stop || c.next >= self.len {
                return None;
            }
            if c.next < c.printed + self.window {
                c.next += 1;
                return Some(c.next - 1);
            }
            c = self.moved.wait(c).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn printed(&self, n: usize) {
        self.lock().printed = n;
        self.moved.notify_all();
    }

    fn stop(&self) {
        self.lock().stop = true;
        self.moved.notify_all();
    }
}

/// What a batch read: runs that failed and input bytes.
#[derive(Default)]
struct Totals {
    failed: usize,
    bytes: u64,
}

impl<T: Serialize> Batch<'_, T> {
    /// Every run by `jobs` workers, printed in order by this thread as results come in.
    fn parallel(&self, runs: &Runs) -> Result<Totals, Failure> {
        let jobs = self.jobs.clamp(1, runs.len());
        let queue = Queue {
            claims: Mutex::new(Claims {
                next: 0,
                printed: 0,
                stop: false,
            }),
            moved: Condvar::new(),
            len: runs.len(),
            window: jobs * AHEAD_PER_JOB,
        };
        let (tx, rx) = mpsc::channel::<(usize, Done)>();
        std::thread::scope(|s| {
            for _ in 0..jobs {
                let tx = tx.clone();
                let queue = &queue;
                s.spawn(move || {
                    while let Some(i) = queue.claim() {
                        if tx.send((i, self.work(runs, i))).is_err() {
                            return;
                        }
                    }
                });
            }
            drop(tx);
            let printed = self.print_in_order(rx, &queue, runs.len());
            queue.stop();
            printed
        })
    }

    /// Print results in run order as they arrive; stop at the first that cannot be printed.
    fn print_in_order(
        &self,
        rx: mpsc::Receiver<(usize, Done)>,
        queue: &Queue,
        len: usize,
    ) -> Result<Totals, Failure> {
        let bar = (!self.quiet && std::io::stderr().is_terminal()).then(|| run_bar(len));
        let stdout_tty = std::io::stdout().is_terminal();
        let started = Instant::now();
        let mut pending = BTreeMap::new();
        let mut next = 0;
        let mut totals = Totals::default();
        for (i, done) in rx {
            totals.bytes += done.bytes;
            if let Some(b) = &bar {
                b.inc(1);
                b.set_message(format!(
                    "{:.1} MB/s",
                    mb(totals.bytes) / started.elapsed().as_secs_f64().max(1e-9)
                ));
            }
            pending.insert(i, done);
            while let Some(d) = pending.remove(&next) {
                let text = d.text?;
                match (&bar, stdout_tty) {
                    (Some(b), true) => b.suspend(|| out::print(&text))?,
                    _ => out::print(&text)?,
                }
                totals.failed += usize::from(d.failed);
                next += 1;
                queue.printed(next);
            }
        }
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        Ok(totals)
    }
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

/// The bar of a batch: runs done of all, input MB/s, elapsed and estimated time left.
fn run_bar(len: usize) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(len as u64), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(
        "{bar:30} {pos}/{len} runs  {msg}  {elapsed_precise} (left ~{eta})",
    ) {
        bar.set_style(style);
    }
    bar
}

/// The bar of one large run: bytes of its files read of all, speed, time left (within 80
/// columns: a wider line wraps and redraws on two).
fn byte_bar(total: u64) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(
        "{bar:30} {bytes}/{total_bytes} read  {bytes_per_sec}  (left ~{eta})",
    ) {
        bar.set_style(style);
    }
    bar
}

/// A reader progress that moves `bar`, once per MiB read (the readers call it per chunk).
fn progress_of(bar: &ProgressBar) -> Progress {
    let bar = bar.clone();
    let shown = AtomicU64::new(0);
    Progress(Arc::new(move |read: u64| {
        if read >> 20 != shown.load(Ordering::Relaxed) {
            shown.store(read >> 20, Ordering::Relaxed);
            bar.set_position(read);
        }
    }))
}

/// `kvledger account: 1000 runs (2 failed), 512.3 MB in 9.81 s: 101.9 runs/s, 52.2 MB/s`.
fn summary(command: &str, runs: usize, totals: &Totals, started: Instant) {
    let secs = started.elapsed().as_secs_f64();
    let per_s = |x: f64| x / secs.max(1e-9);
    let line = format!(
        "kvledger {command}: {runs} runs ({} failed), {:.1} MB in {secs:.2} s: {:.1} runs/s, {:.1} MB/s\n",
        totals.failed,
        mb(totals.bytes),
        per_s(runs as f64),
        per_s(mb(totals.bytes)),
    );
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}
