//! The run-level push builder (`RunReader`) gives what `read_run` gives, byte for byte, for
//! every run of tests/fixtures and examples/ and for every recognised file of them alone
//! (the broken fixtures included): files pushed in chunks of 1 byte (small runs), 7 bytes,
//! 64 KiB and whole, in name order and in reverse; and read from a `ByteSource` (as the WASM
//! build reads JavaScript arrays) in reads of 7 bytes, folded (`read_run_folded`) or not.
//! Compared: the JSON of the `account` result, or of the error.

use kvledger::account::{account_run, account_run_folded, families_read, Policy};
use kvledger::read::run::{ByteSource, InputData, MemoryBudget, RunReader};
use kvledger::read::run_dir::discover_runs;
use kvledger::read::{
    read_run, read_run_folded, recognise_name, InputFile, Recognition, RunOptions,
};
use kvledger::{ErrorCode, ReadError};
use std::path::{Path, PathBuf};

/// Runs of at most this many bytes are also pushed one byte at a time.
const ONE_BYTE_MAX: u64 = 256 * 1024;

struct Case {
    label: String,
    /// (name, path), the name relative to the tree's root.
    files: Vec<(String, PathBuf)>,
}

fn cases(tree: &str) -> Vec<Case> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(tree);
    let d = discover_runs(&root).expect("walk");
    let mut out = Vec::new();
    for run in &d.runs {
        let files: Vec<(String, PathBuf)> = run
            .files
            .iter()
            .map(|f| (format!("{tree}/{f}"), root.join(f)))
            .collect();
        for (name, path) in &files {
            if matches!(
                recognise_name(name),
                Recognition::Read(_) | Recognition::Unknown
            ) {
                out.push(Case {
                    label: format!("{name} alone"),
                    files: vec![(name.clone(), path.clone())],
                });
            }
        }
        out.push(Case {
            label: format!("{tree}/{}", run.root),
            files,
        });
    }
    out
}

fn options() -> RunOptions {
    RunOptions {
        families: families_read(),
        ..RunOptions::default()
    }
}

fn outcome(run: Result<kvledger::read::Run, ReadError>) -> Result<String, ReadError> {
    run.map(|r| serde_json::to_string(&account_run(&r, &Policy::default())).expect("json"))
}

fn pushed(contents: &[(String, Vec<u8>)], chunk: Option<usize>) -> Result<String, ReadError> {
    let mut reader = RunReader::new(&options());
    for (name, bytes) in contents {
        match chunk {
            None => reader.file(name, bytes),
            Some(n) => {
                reader.begin_file(name);
                for piece in bytes.chunks(n) {
                    if !reader.push(piece) {
                        break;
                    }
                }
                reader.end_file();
            }
        }
    }
    outcome(reader.finish())
}

/// Bytes given to the reader at most `step` at a time.
struct Trickle {
    bytes: Vec<u8>,
    step: usize,
}

struct TrickleReader<'a> {
    rest: &'a [u8],
    step: usize,
}

impl std::io::Read for TrickleReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.rest.len().min(buf.len()).min(self.step);
        buf[..n].copy_from_slice(&self.rest[..n]);
        self.rest = &self.rest[n..];
        Ok(n)
    }
}

impl ByteSource for Trickle {
    fn size(&self) -> Option<u64> {
        Some(self.bytes.len() as u64)
    }

    fn reader(&self) -> Box<dyn std::io::Read + '_> {
        Box::new(TrickleReader {
            rest: &self.bytes,
            step: self.step,
        })
    }
}

/// The run read from sources, then accounted as read (`read_run`) and folded
/// (`read_run_folded`): both outcomes.
fn sourced(contents: &[(String, Vec<u8>)]) -> [Result<String, ReadError>; 2] {
    let sources: Vec<(String, Trickle)> = contents
        .iter()
        .map(|(name, b)| {
            let source = Trickle {
                bytes: b.clone(),
                step: 7,
            };
            (name.clone(), source)
        })
        .collect();
    let inputs: Vec<InputFile<'_>> = sources
        .iter()
        .map(|(name, s)| InputFile {
            name: name.clone(),
            data: InputData::Source(s),
        })
        .collect();
    let folded = read_run_folded(&inputs, &options()).map(|(run, fold)| {
        serde_json::to_string(&account_run_folded(run, fold, &Policy::default())).expect("json")
    });
    [outcome(read_run(&inputs, &options())), folded]
}

/// A pushed stream cannot re-read a file: a refusal the server-metrics JSON reader decides
/// after its value streamed by keeps its JSON path, without line and column.
fn same_but_unplaced(baseline: &ReadError, got: &ReadError) -> bool {
    let mut unplaced = baseline.clone();
    unplaced.position.line = None;
    unplaced.position.column = None;
    baseline.code == ErrorCode::CountTooLarge && *got == unplaced
}

#[test]
fn pushed_runs_equal_read_run_whatever_the_chunks_and_the_order() {
    let mut checked = 0;
    for tree in ["tests/fixtures", "examples"] {
        for case in cases(tree) {
            let inputs: Vec<InputFile<'_>> = case
                .files
                .iter()
                .map(|(name, path)| InputFile::path(name.clone(), path.clone()))
                .collect();
            let baseline = outcome(read_run(&inputs, &options()));
            let mut contents: Vec<(String, Vec<u8>)> = case
                .files
                .iter()
                .map(|(name, path)| (name.clone(), std::fs::read(path).expect("read")))
                .collect();
            let bytes_in: Vec<InputFile<'_>> = contents
                .iter()
                .map(|(name, b)| InputFile::bytes(name.clone(), b))
                .collect();
            assert_eq!(
                outcome(read_run(&bytes_in, &options())),
                baseline,
                "{}: whole buffers",
                case.label
            );
            for (got, how) in sourced(&contents).into_iter().zip(["read", "folded"]) {
                assert_eq!(got, baseline, "{}: from sources, {how}", case.label);
            }
            let total: u64 = contents.iter().map(|(_, b)| b.len() as u64).sum();
            let mut chunks = vec![Some(7), Some(64 * 1024), None];
            if total <= ONE_BYTE_MAX {
                chunks.push(Some(1));
            }
            for reversed in [false, true] {
                if reversed {
                    contents.reverse();
                }
                for &chunk in &chunks {
                    let got = pushed(&contents, chunk);
                    let same = match (&baseline, &got) {
                        (Err(b), Err(g)) if chunk.is_some() => b == g || same_but_unplaced(b, g),
                        _ => got == baseline,
                    };
                    assert!(
                        same,
                        "{}: chunks of {chunk:?}, reversed {reversed}:\n got {got:?}\nwant {baseline:?}",
                        case.label
                    );
                }
            }
            checked += 1;
        }
    }
    assert!(checked > 100, "only {checked} runs and files checked");
}

#[test]
fn files_after_a_failed_one_are_not_read_and_do_not_change_the_error() {
    let good = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples/vllm-mi355x-conc1/aiperf_artifacts/profile_export.jsonl"),
    )
    .expect("fixture");
    let bad_json = b"{ \"metrics\": nope".to_vec();
    let files = [
        ("a/server_metrics_export.json".to_string(), bad_json),
        ("b/profile_export.jsonl".to_string(), good),
    ];
    for order in [[0, 1], [1, 0]] {
        let mut reader = RunReader::new(&options());
        let mut wanted = Vec::new();
        for &i in &order {
            let (name, bytes) = &files[i];
            reader.begin_file(name);
            wanted.push(reader.push(bytes));
            reader.end_file();
        }
        let e = reader.finish().expect_err("broken JSON");
        assert_eq!(e.code, ErrorCode::JsonSyntax);
        assert_eq!(e.file, "a/server_metrics_export.json");
        // The later-named file is not read once the earlier one has failed; before, it is.
        let b_wanted = wanted[order.iter().position(|&i| i == 1).unwrap()];
        assert_eq!(b_wanted, order == [1, 0], "order {order:?}");
    }
}

#[test]
fn past_the_memory_budget_a_file_is_input_too_large_and_the_rest_is_dropped() {
    use std::sync::atomic::{AtomicU64, Ordering};
    static IN_USE: AtomicU64 = AtomicU64::new(0);
    let budget = MemoryBudget {
        limit: 1000,
        in_use: || IN_USE.load(Ordering::Relaxed),
    };
    let csv = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples/vllm-mi355x-conc1/aiperf_artifacts/server_metrics_export.csv"),
    )
    .expect("fixture");
    let mut reader = RunReader::new(&options()).with_memory_budget(budget);
    reader.begin_file("server_metrics_export.csv");
    assert!(reader.push(&csv[..100]));
    IN_USE.store(2000, Ordering::Relaxed);
    assert!(
        !reader.push(&csv[100..200]),
        "over budget: no more bytes wanted"
    );
    reader.end_file();
    assert_eq!(reader.bytes_read(), 200);
    let e = reader.finish().expect_err("too large");
    assert_eq!(e.code, ErrorCode::InputTooLarge);
    assert_eq!(e.file, "server_metrics_export.csv");
    assert_eq!(e.position.byte_offset, Some(200));
    assert!(e.message.contains("1000 bytes"), "{e}");
}
