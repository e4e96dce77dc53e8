//! The files AIPerf would write from the generated scrapes and requests (`research/aiperf.md`
//! sections 1-2 and 6). Each file is streamed through `super::out`.

pub mod csv;
pub mod json;
pub mod jsonl;
pub mod profile;
