//! Readers: bytes in, typed models (`crate::model`) out. One module per format; `artifact`
//! recognises a file's format, `run` assembles one benchmark point from its files.
//!
//! Every reader takes the file's display name (for errors), a `std::io` reader (so the CLI
//! streams multi-GB files and WASM reads from a slice), and, where a file carries metrics, a
//! `FamilyFilter` so unwanted families are skipped without being built.

pub mod artifact;
mod block16;
pub mod count;
pub mod discover;
pub mod filter;
pub(crate) mod json_cursor;
pub(crate) mod json_frame;
pub(crate) mod json_stream;
pub mod launch;
pub mod locate;
pub mod names;
pub mod profile_jsonl;
pub mod profile_summary;
pub mod prometheus_text;
pub mod push;
pub mod run;
pub mod run_dir;
pub mod scrape_jsonl;
pub mod server_csv;
pub mod server_json;

pub use artifact::{classify, recognise, recognise_name, ArtifactKind, Recognition};
pub use discover::{group_runs, group_runs_by, Discovery, RunGroup};
pub use filter::FamilyFilter;
pub use names::canonical_family;
pub use run::{read_run, read_run_folded, CaptureMeta, IgnoredFile, InputFile, Run, RunOptions};

/// Where a Prometheus text capture was scraped from and when.
pub use prometheus_text::read_prometheus_text;
