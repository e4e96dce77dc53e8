//! The kvledger command line (docs/cli.md). Exit codes: 0 success; 1 an input could not be
//! read (its stable error code is printed); 2 the command line is wrong.

#[cfg(not(target_arch = "wasm32"))]
mod account;
#[cfg(not(target_arch = "wasm32"))]
mod batch;
#[cfg(not(target_arch = "wasm32"))]
mod cli;
#[cfg(not(target_arch = "wasm32"))]
mod input;
#[cfg(not(target_arch = "wasm32"))]
mod inspect;
#[cfg(not(target_arch = "wasm32"))]
mod out;
#[cfg(not(target_arch = "wasm32"))]
mod price;
#[cfg(not(target_arch = "wasm32"))]
mod run_args;
#[cfg(not(target_arch = "wasm32"))]
mod synth;
#[cfg(not(target_arch = "wasm32"))]
mod validate;

#[cfg(not(target_arch = "wasm32"))]
use cli::Failure;

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    cli::run(std::env::args_os().collect())
}

/// The CLI reads files and writes to a terminal; on wasm32 the crate is the npm package
/// (src/wasm), so this binary is an empty shell there.
#[cfg(target_arch = "wasm32")]
fn main() {}
