//! How values travel in JSON (CONTRACT section 7, r2): one shape for the CLI's `--json` and the
//! npm package. Epoch-nanosecond timestamps exceed 2^53, so they travel as decimal strings and
//! survive `JSON.parse`; counts travel as numbers and must stay at or below 2^53 − 1.

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::borrow::Cow;
use std::fmt;

/// The largest integer a JSON number carries exactly through an IEEE double
/// (`Number.MAX_SAFE_INTEGER`). Readers refuse counts above it.
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// An epoch-nanosecond timestamp. JSON: a decimal string (`"1781000000000000000"`); read from a
/// string or an integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct EpochNs(pub u64);

impl From<u64> for EpochNs {
    fn from(ns: u64) -> Self {
        EpochNs(ns)
    }
}

impl fmt::Display for EpochNs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl Serialize for EpochNs {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for EpochNs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = EpochNs;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("epoch nanoseconds as a decimal string or a non-negative integer")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<EpochNs, E> {
                Ok(EpochNs(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<EpochNs, E> {
                u64::try_from(v)
                    .map(EpochNs)
                    .map_err(|_| E::custom(format!("epoch ns {v} is negative")))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<EpochNs, E> {
                parse_decimal(v).map(EpochNs).ok_or_else(|| {
                    E::custom(format!(
                        "epoch ns `{v}` is not a decimal integer string (0 to 18446744073709551615)"
                    ))
                })
            }
        }
        d.deserialize_any(V)
    }
}

/// Digits only, no sign, no leading zeros (except "0"), within u64.
fn parse_decimal(s: &str) -> Option<u64> {
    let ok =
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'));
    ok.then(|| s.parse().ok()).flatten()
}

impl JsonSchema for EpochNs {
    fn schema_name() -> Cow<'static, str> {
        "EpochNs".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "pattern": "^(0|[1-9][0-9]{0,19})$",
            "description": "Epoch nanoseconds (UTC) as a decimal string: exact, unlike a JSON number above 2^53."
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn travels_as_a_decimal_string_and_back() {
        let ns = EpochNs(1_781_000_000_123_456_789);
        let text = serde_json::to_string(&ns).unwrap();
        assert_eq!(text, "\"1781000000123456789\"");
        assert_eq!(serde_json::from_str::<EpochNs>(&text).unwrap(), ns);
        assert_eq!(
            serde_json::from_str::<EpochNs>("1781000000123456789").unwrap(),
            ns
        );
    }

    #[test]
    fn refuses_what_is_not_an_exact_decimal() {
        for bad in [
            "\"\"",
            "\"-1\"",
            "\"01\"",
            "\"1e18\"",
            "\"18446744073709551616\"",
            "-5",
            "1.5",
        ] {
            assert!(serde_json::from_str::<EpochNs>(bad).is_err(), "{bad}");
        }
    }
}
