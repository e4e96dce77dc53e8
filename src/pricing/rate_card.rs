//! Rate cards: dated $-per-million-token prices with a usage convention. The shipped cards
//! (`examples/rate-cards/*.json`) are embedded so the WASM package has them too.

use super::PricingError;
use serde::{Deserialize, Serialize};

/// Contract section 10: the cached-input price defaults to this share of the input price.
pub const DEFAULT_CACHED_PRICE_RATIO: f64 = 0.1;

/// How a provider's usage record counts prompt tokens. Point pricing (throughput, share,
/// hit rate) does not depend on it: it splits the prompt into `h` cached and `1 - h`
/// uncached tokens whatever the convention. It matters when billing usage records
/// ([`RateCard::bill_usage`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub enum UsageConvention {
    /// `input` counts every prompt token; cached reads and cache writes are subsets of it
    /// (OpenAI-style `prompt_tokens` with `cached_tokens` inside).
    Subset,
    /// `input`, cached reads and cache writes are disjoint and add up to the prompt
    /// (Anthropic-style `input_tokens` + `cache_read_input_tokens` + `cache_creation_input_tokens`).
    Additive,
    /// The prompt is partitioned into cache hits and cache misses (`input` = misses); cache
    /// writes are a subset of the misses (DeepSeek-style hit/miss counts).
    Partition,
}

/// A rate card. Prices are $ per million tokens. Give at most one of
/// `cached_input_per_million` (absolute) and `cached_input_ratio` (share of the input price);
/// with neither, the cached price is 10 % of the input price.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub struct RateCard {
    /// Stable name (`normalized`, `kimi-k3-moonshot`, ...).
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub label: Option<String>,
    /// The model the prices are for (dashboard model key), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub model: Option<String>,
    /// The date (YYYY-MM-DD) the prices were recorded as current.
    pub as_of: String,
    /// Where the prices come from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub source: Option<String>,
    pub input_per_million: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub cached_input_per_million: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub cached_input_ratio: Option<f64>,
    pub output_per_million: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub cache_write_per_million: Option<f64>,
    pub usage_convention: UsageConvention,
    /// Profit estimator: the model lab's license share of revenue, percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub lab_share_pct: Option<f64>,
}

crate::fields!(RateCard, deny_unknown: true, empty: RateCard { name: String::new(), label: None, model: None, as_of: String::new(), source: None, input_per_million: 0.0, cached_input_per_million: None, cached_input_ratio: None, output_per_million: 0.0, cache_write_per_million: None, usage_convention: UsageConvention::Subset, lab_share_pct: None }, required: [name, as_of, input_per_million, output_per_million, usage_convention], [name, label, model, as_of, source, input_per_million, cached_input_per_million, cached_input_ratio, output_per_million, cache_write_per_million, usage_convention, lab_share_pct]);

/// The resolved prices of a card ($ per million tokens).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub struct Prices {
    pub input: f64,
    pub cached: f64,
    pub output: f64,
}

/// One usage record's token counts, read per the card's convention.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub struct Usage {
    pub input: f64,
    #[serde(default)]
    pub cached: f64,
    #[serde(default)]
    pub cache_write: f64,
    pub output: f64,
}

/// Which card to use: a shipped card by name, or a card given inline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub enum CardChoice {
    Name(String),
    Card(RateCard),
}

impl Default for CardChoice {
    fn default() -> Self {
        CardChoice::Name("normalized".to_string())
    }
}

impl CardChoice {
    pub fn resolve(&self) -> Result<RateCard, PricingError> {
        let card = match self {
            CardChoice::Name(n) => shipped_card(n).ok_or_else(|| PricingError {
                message: format!(
                    "unknown rate card `{n}` (shipped: {})",
                    shipped_cards()
                        .iter()
                        .map(|c| c.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            })?,
            CardChoice::Card(c) => c.clone(),
        };
        card.validate()?;
        Ok(card)
    }
}

fn bad(card: &str, msg: impl std::fmt::Display) -> PricingError {
    PricingError {
        message: format!("rate card `{card}`: {msg}"),
    }
}

impl RateCard {
    /// Prices must be finite and >= 0, the cached price at most the input price, the date
    /// `YYYY-MM-DD`, and at most one cached-price form given.
    pub fn validate(&self) -> Result<(), PricingError> {
        let n = &self.name;
        if n.is_empty() {
            return Err(bad(n, "empty name"));
        }
        let date_ok = self.as_of.len() == 10
            && self.as_of.bytes().enumerate().all(|(i, b)| {
                if i == 4 || i == 7 {
                    b == b'-'
                } else {
                    b.is_ascii_digit()
                }
            });
        if !date_ok {
            return Err(bad(n, format!("as_of `{}` is not YYYY-MM-DD", self.as_of)));
        }
        let price = |label: &str, v: f64| {
            if v.is_finite() && v >= 0.0 {
                Ok(())
            } else {
                Err(bad(n, format!("{label} {v} is not a finite price >= 0")))
            }
        };
        price("input_per_million", self.input_per_million)?;
        price("output_per_million", self.output_per_million)?;
        if let Some(w) = self.cache_write_per_million {
            price("cache_write_per_million", w)?;
        }
        match (self.cached_input_per_million, self.cached_input_ratio) {
            (Some(_), Some(_)) => {
                return Err(bad(
                    n,
                    "give cached_input_per_million or cached_input_ratio, not both",
                ))
            }
            (Some(c), None) => price("cached_input_per_million", c)?,
            (None, Some(r)) => {
                if !(r.is_finite() && (0.0..=1.0).contains(&r)) {
                    return Err(bad(n, format!("cached_input_ratio {r} is not in [0, 1]")));
                }
            }
            (None, None) => {}
        }
        if let Some(s) = self.lab_share_pct {
            if !(s.is_finite() && (0.0..=100.0).contains(&s)) {
                return Err(bad(n, format!("lab_share_pct {s} is not in [0, 100]")));
            }
        }
        let p = self.prices();
        if p.cached > p.input {
            return Err(bad(
                n,
                format!(
                    "cached price {} exceeds the input price {}",
                    p.cached, p.input
                ),
            ));
        }
        Ok(())
    }

    /// The resolved prices: the cached price is the absolute one, else ratio x input
    /// (ratio default 0.1).
    pub fn prices(&self) -> Prices {
        let cached = match (self.cached_input_per_million, self.cached_input_ratio) {
            (Some(c), _) if c.is_finite() && c >= 0.0 => c,
            (_, Some(r)) if r.is_finite() && r >= 0.0 => r * self.input_per_million,
            _ => DEFAULT_CACHED_PRICE_RATIO * self.input_per_million,
        };
        Prices {
            input: self.input_per_million,
            cached,
            output: self.output_per_million,
        }
    }

    /// The prompt tokens of a usage record under this card's convention.
    pub fn prompt_tokens(&self, u: &Usage) -> f64 {
        match self.usage_convention {
            UsageConvention::Subset => u.input,
            UsageConvention::Additive => u.input + u.cached + u.cache_write,
            UsageConvention::Partition => u.input + u.cached,
        }
    }

    /// The $ amount of a usage record. Cache writes are billed at `cache_write_per_million`
    /// when the card has one, else at the input price.
    pub fn bill_usage(&self, u: &Usage) -> f64 {
        let p = self.prices();
        let write = self.cache_write_per_million.unwrap_or(p.input);
        let fresh = match self.usage_convention {
            UsageConvention::Subset => (u.input - u.cached - u.cache_write).max(0.0),
            UsageConvention::Additive => u.input,
            UsageConvention::Partition => (u.input - u.cache_write).max(0.0),
        };
        (fresh * p.input + u.cached * p.cached + u.cache_write * write + u.output * p.output) / 1e6
    }
}

const SHIPPED: [&str; 6] = [
    include_str!("../../examples/rate-cards/normalized.json"),
    include_str!("../../examples/rate-cards/kimi-k3-moonshot.json"),
    include_str!("../../examples/rate-cards/glm-5.2-zai.json"),
    include_str!("../../examples/rate-cards/minimax-m3.json"),
    include_str!("../../examples/rate-cards/deepseek-v4-pro.json"),
    include_str!("../../examples/rate-cards/deepseek-v4.1-flash.json"),
];

/// The shipped rate cards (normalized first), as in `examples/rate-cards/`. Every one
/// parses (a test pins it); none can make this panic.
pub fn shipped_cards() -> Vec<RateCard> {
    SHIPPED
        .iter()
        .filter_map(|text| serde_json::from_slice(text.as_bytes()).ok())
        .collect()
}

/// A shipped card by name.
pub fn shipped_card(name: &str) -> Option<RateCard> {
    shipped_cards().into_iter().find(|c| c.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_cards_validate() {
        let cards = shipped_cards();
        assert_eq!(cards.len(), SHIPPED.len(), "every shipped card parses");
        assert_eq!(cards[0].name, "normalized");
        for c in &cards {
            c.validate().unwrap();
        }
    }

    #[test]
    fn conventions_agree_on_the_same_traffic() {
        let mut card = shipped_card("kimi-k3-moonshot").unwrap();
        // 1M prompt of which 0.6M cached, 0.1M written; 0.2M output
        let subset = Usage {
            input: 1e6,
            cached: 6e5,
            cache_write: 1e5,
            output: 2e5,
        };
        let bill = card.bill_usage(&subset);
        card.usage_convention = UsageConvention::Additive;
        let add = Usage {
            input: 3e5,
            cached: 6e5,
            cache_write: 1e5,
            output: 2e5,
        };
        assert!((card.bill_usage(&add) - bill).abs() < 1e-12);
        assert_eq!(card.prompt_tokens(&add), 1e6);
        card.usage_convention = UsageConvention::Partition;
        let part = Usage {
            input: 4e5,
            cached: 6e5,
            cache_write: 1e5,
            output: 2e5,
        };
        assert!((card.bill_usage(&part) - bill).abs() < 1e-12);
        assert_eq!(card.prompt_tokens(&part), 1e6);
    }
}
