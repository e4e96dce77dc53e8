//! The accounting core (CONTRACT sections 2–7): engine-agnostic. Engines map names to
//! canonical counters (`crate::engines`); this module decides roles, pools, window bounds,
//! rates, request scope and the verdict.

pub mod verdict;

pub use verdict::{status_of, CpuComponent, Reason, ReasonCode, Status};
