//! kvledger: cache accounting for LLM-inference benchmark results.
//!
//! The core (everything but `wasm`) is plain Rust with no wasm types: readers turn AIPerf
//! artifacts into typed models, `inspect` summarises what evidence a run carries. The `wasm`
//! module only converts types and maps errors for the npm package.

pub mod account;
pub mod admission;
pub mod chunked;
pub mod engines;
pub mod error;
pub mod fields;
pub mod hash;
pub mod inspect;
pub mod json_path;
pub mod json_value;
pub mod model;
pub mod options;
pub mod pricing;
pub mod read;
pub mod schema;
pub mod sort;
pub mod strmap;
pub mod synth;
pub mod utc;
pub mod validate;
pub mod wire;

#[cfg(target_arch = "wasm32")]
pub mod wasm;

pub use error::{ErrorCode, Position, ReadError};
