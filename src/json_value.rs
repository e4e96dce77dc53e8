//! Any JSON value read into a `serde_json::Value`, as `Value::deserialize` reads it, without
//! that impl's raw-value branch.
//!
//! With serde_json's `raw_value` feature (the scrape reader interns labels by their text),
//! `Value::deserialize` checks every object's first key for the raw-value token and, on it,
//! parses a string with a second, `&str`-reading copy of the whole JSON parser: about 9 KB of
//! the `.wasm` that no JSON text reaches (issue 11). Every `Value` the crate reads from JSON
//! comes through [`Json`] instead: the same values (numbers as serde_json's own `Number`, a
//! repeated key keeps the last value, `null` for a non-finite float) and the same errors,
//! which all come from the parser.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;

/// A JSON value as read; `.0` is the `Value`.
pub struct Json(pub Value);

/// `Option<Value>` read through [`Json`] (`null` is `None`), for the member loop's `as`.
pub struct OptionalJson(pub Option<Value>);

/// `BTreeMap<String, Value>` read through [`Json`], for the member loop's `as`.
pub struct JsonMap(pub std::collections::BTreeMap<String, Value>);

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(JsonVisitor).map(Json)
    }
}

impl<'de> Deserialize<'de> for OptionalJson {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Option::<Json>::deserialize(d).map(|v| OptionalJson(v.map(|j| j.0)))
    }
}

impl<'de> Deserialize<'de> for JsonMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Entries;
        impl<'de> Visitor<'de> for Entries {
            type Value = JsonMap;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<JsonMap, A::Error> {
                let mut out = std::collections::BTreeMap::new();
                while let Some((k, v)) = map.next_entry::<String, Json>()? {
                    out.insert(k, v.0);
                }
                Ok(JsonMap(out))
            }
        }
        d.deserialize_map(Entries)
    }
}

impl From<OptionalJson> for Option<Value> {
    fn from(v: OptionalJson) -> Self {
        v.0
    }
}

impl From<JsonMap> for std::collections::BTreeMap<String, Value> {
    fn from(v: JsonMap) -> Self {
        v.0
    }
}

/// `Option<Value>` for `#[serde(deserialize_with)]`.
pub fn optional<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    OptionalJson::deserialize(d).map(|v| v.0)
}

/// What `Value`'s own visitor builds from each JSON form.
pub struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        // `Value::from` is `null` for a non-finite float, as `Value`'s visitor.
        Ok(Value::from(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Json::deserialize(d).map(|j| j.0)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element::<Json>()? {
            out.push(v.0);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some((k, v)) = map.next_entry::<String, Json>()? {
            out.insert(k, v.0);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_value_reads() {
        let texts = [
            "null",
            "true",
            "-12",
            "18446744073709551615",
            "-9223372036854775808",
            "1.5e300",
            "0.1",
            "1e400",
            "\"a\\u00e9\\n\"",
            "[]",
            "{}",
            r#"{"b": [1, {"c": null}], "a": 2, "b": "again"}"#,
            r#"[[[[1]]], {"x": {"y": [true, false]}}]"#,
        ];
        for text in texts {
            let ours = serde_json::from_slice::<Json>(text.as_bytes()).map(|j| j.0);
            let theirs = serde_json::from_slice::<Value>(text.as_bytes());
            match (ours, theirs) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{text}"),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{text}"),
                (a, b) => panic!("{text}: {:?} vs {:?}", a.is_ok(), b.is_ok()),
            }
        }
    }

    #[test]
    fn fails_where_value_fails() {
        let deep = "[".repeat(200) + &"]".repeat(200);
        for text in ["", "[1,", "{\"a\" 1}", "{1: 2}", "[1] x", "nul", &deep] {
            let ours = serde_json::from_slice::<Json>(text.as_bytes()).err();
            let theirs = serde_json::from_slice::<Value>(text.as_bytes()).err();
            assert_eq!(
                ours.map(|e| e.to_string()),
                theirs.map(|e| e.to_string()),
                "{text}"
            );
        }
    }

    #[test]
    fn optional_and_map_forms() {
        let v: OptionalJson = serde_json::from_str("null").unwrap();
        assert_eq!(v.0, None);
        let v: OptionalJson = serde_json::from_str("[1]").unwrap();
        assert_eq!(v.0, Some(serde_json::json!([1])));
        let m: JsonMap = serde_json::from_str(r#"{"b": 1, "a": {"c": 2}, "b": 3}"#).unwrap();
        let expected: std::collections::BTreeMap<String, Value> =
            serde_json::from_str(r#"{"b": 1, "a": {"c": 2}, "b": 3}"#).unwrap();
        assert_eq!(m.0, expected);
        let e = serde_json::from_str::<JsonMap>("[1]")
            .err()
            .map(|e| e.to_string());
        let expected = serde_json::from_str::<std::collections::BTreeMap<String, Value>>("[1]")
            .err()
            .map(|e| e.to_string());
        assert_eq!(e, expected);
    }
}
