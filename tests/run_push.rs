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
use std::sync::atomic::{AtomicU64, Ordering};

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

/// A budget of `limit` bytes with the heap in use read by `in_use` (each test keeps its own
/// counter: tests run in parallel, and a budget's probe is a function, not a closure).
fn counted(limit: u64, in_use: fn() -> u64) -> MemoryBudget {
    MemoryBudget {
        limit,
        in_use,
        ceiling: None,
    }
}

#[test]
fn past_the_memory_budget_a_file_is_input_too_large_and_the_rest_is_dropped() {
    static IN_USE: AtomicU64 = AtomicU64::new(0);
    let budget = counted(1000, || IN_USE.load(Ordering::Relaxed));
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

#[test]
fn the_scrapes_gathered_after_the_last_byte_are_held_to_the_budget() {
    static IN_USE: AtomicU64 = AtomicU64::new(0);
    let budget = counted(100_000, || IN_USE.load(Ordering::Relaxed));
    let read = |in_use_after: u64| {
        IN_USE.store(0, Ordering::Relaxed);
        let mut reader = RunReader::new(&options()).with_memory_budget(budget);
        for i in 0..50 {
            let text = format!(
                "# TYPE vllm:prefix_cache_queries counter\nvllm:prefix_cache_queries_total{{engine=\"0\"}} {i}.0 {}\n",
                1_781_634_703_000u64 + i
            );
            reader.file(&format!("cap{i:02}.prom"), text.as_bytes());
        }
        // The files were read within the budget; what is in use now is what gathering the
        // 50 scrapes into one list is measured against.
        IN_USE.store(in_use_after, Ordering::Relaxed);
        reader.finish()
    };
    let run = read(0).expect("within the budget");
    assert_eq!(run.scrapes.len(), 50);
    assert_eq!(
        run.scrape_files.first().map(String::as_str),
        Some("cap00.prom")
    );
    let e = read(99_000).expect_err("the list would pass the budget");
    assert_eq!(
        (e.code, e.file.as_str()),
        (ErrorCode::InputTooLarge, "accounting")
    );
    assert!(e.message.contains("100000 bytes"), "{e}");
}

/// xorshift64: the mutations are the same on every run, so a failure names a reproducible case.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

/// One to three edits of `bytes`, each also described: a byte set to a separator, quote, digit
/// or sign of the formats, or to a byte that breaks UTF-8; a range deleted or copied elsewhere;
/// the end cut; a run of digits, spaces or quotes inserted.
fn mutate(rng: &mut Rng, bytes: &[u8]) -> (Vec<u8>, Vec<String>) {
    const SYNTAX: &[u8] = b"\",\n\r{}[]:-.e09 \\#=;+Ex\t";
    const RAW: [u8; 5] = [0, 0xff, 0xc3, 0x80, 0xe2];
    let mut v = bytes.to_vec();
    let mut said = Vec::new();
    for _ in 0..1 + rng.below(3) {
        if v.is_empty() {
            break;
        }
        let at = rng.below(v.len());
        match rng.below(6) {
            0 => v[at] = SYNTAX[rng.below(SYNTAX.len())],
            1 => v[at] = RAW[rng.below(RAW.len())],
            2 => {
                let end = (at + 1 + rng.below(64)).min(v.len());
                v.drain(at..end);
            }
            3 => {
                let end = (at + 1 + rng.below(200)).min(v.len());
                let piece = v[at..end].to_vec();
                let to = rng.below(v.len());
                v.splice(to..to, piece);
            }
            4 => v.truncate(at),
            _ => {
                let b = b"9 0\""[rng.below(4)];
                v.splice(at..at, std::iter::repeat_n(b, 1 + rng.below(30)));
            }
        }
        said.push(format!("{at}:{:?}", v.get(at)));
    }
    (v, said)
}

/// Hostile edits of every recognised file (to 2 MB) read alike whole, pushed in chunks of 1
/// (small files), 7, 4,093 and 65,549 bytes, and from a source (read and folded): the same
/// result or the same error, and never a panic (in WASM one would kill the module).
/// `KVLEDGER_MUTATIONS=N` edits each file N times (default 2; 40 per file, 6,240 cases,
/// passed when this test was written).
#[test]
fn edited_files_read_alike_whatever_the_chunks() {
    let per_file: usize = std::env::var("KVLEDGER_MUTATIONS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2);
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    for tree in ["tests/fixtures", "examples"] {
        for case in cases(tree) {
            if let [(name, path)] = case.files.as_slice() {
                let bytes = std::fs::read(path).expect("read");
                if matches!(recognise_name(name), Recognition::Read(_)) && bytes.len() <= 2 << 20 {
                    files.push((name.clone(), bytes));
                }
            }
        }
    }
    files.sort();
    files.dedup_by(|a, b| a.1 == b.1);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut checked = 0;
    for (name, bytes) in &files {
        for k in 0..per_file {
            let (edited, said) = mutate(&mut rng, bytes);
            let contents = [(name.clone(), edited)];
            let whole = pushed(&contents, None);
            let mut chunks = vec![Some(7), Some(4093), Some(65549)];
            if contents[0].1.len() <= 40_000 {
                chunks.push(Some(1));
            }
            let mut got: Vec<(String, Result<String, ReadError>)> = chunks
                .into_iter()
                .map(|c| (format!("chunks of {c:?}"), pushed(&contents, c)))
                .collect();
            let [read, folded] = sourced(&contents);
            got.push(("a source, read".into(), read));
            got.push(("a source, folded".into(), folded));
            for (how, g) in got {
                let same = match (&whole, &g) {
                    (Err(w), Err(e)) => w == e || same_but_unplaced(w, e),
                    _ => g == whole,
                };
                assert!(
                    same,
                    "{name}, edit {k} ({}): {how}:\n got {g:?}\nwhole {whole:?}",
                    said.join(", ")
                );
            }
            checked += 1;
        }
    }
    assert!(files.len() > 100, "only {} files", files.len());
    assert_eq!(checked, files.len() * per_file);
}
