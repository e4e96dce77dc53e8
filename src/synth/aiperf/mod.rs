//! The files AIPerf would write from the generated scrapes and requests (`research/aiperf.md`
//! sections 1-2 and 6). Each file is streamed through `super::out`.

pub mod csv;
pub mod json;
pub mod jsonl;
pub mod profile;

/// Which fault effects the written files really show (a fault on a series without data
/// shows nothing), for the truth's expectations.
#[derive(Debug, Clone, Copy, Default)]
pub struct Shown {
    /// The JSON export holds one family key twice.
    pub duplicate_family: bool,
    /// Some CSV priced total differs from the JSON's.
    pub csv_disagrees: bool,
    /// The JSONL holds two samples of one priced series at one timestamp.
    pub duplicate_timestamp: bool,
}
