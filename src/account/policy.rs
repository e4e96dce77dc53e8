//! The accounting policy (CONTRACT section 10): every tolerance is here, documented, and
//! echoed in the output. Never a hidden constant.

use crate::error::{ErrorCode, ReadError};
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(default, deny_unknown_fields)]
pub struct Policy {
    /// A rate whose interval is wider than this is `WINDOW_UNRESOLVED` (`rate_too_wide`).
    pub max_rate_width: f64,
    /// Tokens by which the client's prompt sum may fall outside the server's prompt interval.
    pub conservation_tolerance: f64,
    /// Treat schema 1.1 phase totals as the exact window increase (real exports have been seen
    /// whose profiling total included the straddling warmup slice).
    pub trust_phase_totals: bool,
    /// Cached-input price as a fraction of the input price when a rate card gives none.
    pub cached_price_ratio: f64,
}

crate::fields!(Policy, deny_unknown: true, empty: Policy::default(), required: [], [max_rate_width, conservation_tolerance, trust_phase_totals, cached_price_ratio]);

impl Default for Policy {
    fn default() -> Self {
        Policy {
            max_rate_width: 0.005,
            conservation_tolerance: 0.0,
            trust_phase_totals: false,
            cached_price_ratio: 0.1,
        }
    }
}

impl Policy {
    /// Read a policy JSON object; absent fields take their defaults, unknown fields are refused.
    pub fn from_json(file: &str, text: &str) -> Result<Policy, ReadError> {
        let de = &mut serde_json::Deserializer::from_slice(text.as_bytes());
        let p: Policy = crate::json_path::deserialize(text, de).map_err(|e| {
            let path = crate::json_path::display(&e.path);
            ReadError::from_json(file, &e.error, Some(path))
        })?;
        p.validate(file)?;
        Ok(p)
    }

    pub fn validate(&self, file: &str) -> Result<(), ReadError> {
        let bad = |what: &str| {
            Err(ReadError::whole(
                ErrorCode::BadOptions,
                file,
                format!("policy: {what}"),
            ))
        };
        if !(self.max_rate_width.is_finite() && self.max_rate_width >= 0.0) {
            return bad("max_rate_width must be a finite number >= 0");
        }
        if !(self.conservation_tolerance.is_finite() && self.conservation_tolerance >= 0.0) {
            return bad("conservation_tolerance must be a finite number >= 0");
        }
        if !(self.cached_price_ratio.is_finite() && (0.0..=1.0).contains(&self.cached_price_ratio))
        {
            return bad("cached_price_ratio must be within [0, 1]");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_overrides() {
        let p = Policy::from_json("p.json", "{}").expect("defaults");
        assert_eq!(p, Policy::default());
        let p = Policy::from_json("p.json", r#"{"max_rate_width": 0.01}"#).expect("override");
        assert_eq!(p.max_rate_width, 0.01);
        assert!(!p.trust_phase_totals);
    }

    #[test]
    fn refusals() {
        let e = Policy::from_json("p.json", r#"{"max_rate_widht": 0.01}"#).expect_err("typo");
        assert_eq!(e.code, ErrorCode::JsonShape);
        let e = Policy::from_json("p.json", r#"{"max_rate_width": -1}"#).expect_err("negative");
        assert_eq!(e.code, ErrorCode::BadOptions);
    }
}
