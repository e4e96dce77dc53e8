//! The input share `s` of the token mix (consumer.md b.2): the first rule that applies.

use super::point::PointFacts;
use serde::{Deserialize, Serialize};

/// Where the input share came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub enum ShareSource {
    /// Given with the point.
    Explicit,
    /// `input_tput_per_gpu / (input + output)`, when input + output matches the total within 1 %.
    Throughput,
    /// `isl / (isl + osl)`.
    SequenceLengths,
    /// `total_prompt_tokens / (prompt + generation)`.
    TokenTotals,
    /// `legacy` calculator: rule 1 with a missing `output_tput_per_gpu` read as the total
    /// throughput (consumer.md c.3b), so a row without it bills every token as output.
    OutputDefaultedToTotal,
    /// Interpolated along a frontier.
    Interpolated,
    /// No rule applies: the mix is unknown (never invented).
    Unknown,
}

/// Relative tolerance of rule 1: aggregated rows are self-consistent; disaggregated rows
/// report input per prefill GPU and output per decode GPU and do not add up.
pub const THROUGHPUT_CONSISTENCY: f64 = 0.01;

/// The input share and its source; `None` when the mix is unknown. The value is not clamped
/// (the policies decide what an out-of-range explicit share means).
pub fn input_token_share(p: &PointFacts) -> (Option<f64>, ShareSource) {
    share_with(p, false)
}

/// The `legacy` calculator's share (consumer.md c.3b): rule 1 reads a missing
/// `output_tput_per_gpu` as `tput_per_gpu` (`GPUDataPoint.outputThroughput`), then b.2 as usual.
pub fn calculator_input_token_share(p: &PointFacts) -> (Option<f64>, ShareSource) {
    share_with(p, true)
}

fn share_with(p: &PointFacts, output_defaults_to_total: bool) -> (Option<f64>, ShareSource) {
    if let Some(s) = p.explicit_share {
        return (Some(s), ShareSource::Explicit);
    }
    let t = p.throughput.unwrap_or(0.0);
    let i = p.input_tput.unwrap_or(0.0);
    let defaulted = output_defaults_to_total && p.output_tput.is_none();
    let o = if defaulted {
        t
    } else {
        p.output_tput.unwrap_or(0.0)
    };
    if t > 0.0 && i + o > 0.0 && ((i + o) / t - 1.0).abs() <= THROUGHPUT_CONSISTENCY {
        let source = if defaulted {
            ShareSource::OutputDefaultedToTotal
        } else {
            ShareSource::Throughput
        };
        return (Some(i / (i + o)), source);
    }
    if let (Some(isl), Some(osl)) = (p.isl, p.osl) {
        if isl + osl > 0.0 {
            return (Some(isl / (isl + osl)), ShareSource::SequenceLengths);
        }
    }
    if let (Some(pr), Some(g)) = (p.prompt_tokens, p.generation_tokens) {
        if pr + g > 0.0 {
            return (Some(pr / (pr + g)), ShareSource::TokenTotals);
        }
    }
    (None, ShareSource::Unknown)
}
