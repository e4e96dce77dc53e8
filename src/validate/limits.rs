//! The upload limits: what one validation may cost. Each is checked before the work it bounds
//! (a tar member's stated size before its bytes, the body's bytes as they arrive) and while
//! streaming; the first one exceeded stops the validation with `LIMIT_EXCEEDED` naming it.
//!
//! The defaults keep one validation inside an edge isolate's 128 MB with room to spare: the
//! heap is held under `memory_budget` (48 MiB, where the heap is counted: the WASM build), and
//! the work under `decompressed_bytes` (every byte is looked at a bounded number of times).
//! docs/validate.md gives the measured time and memory at these defaults.

use serde::Serialize;

/// The limits of one validation; every field has a default and may be overridden.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(default, deny_unknown_fields)]
pub struct UploadLimits {
    /// Bytes of the upload as sent (the compressed body when gzip'd).
    pub bytes: u64,
    /// Bytes after gzip decompression (the plain body otherwise): refuses a gzip bomb early.
    pub decompressed_bytes: u64,
    /// Bytes of the result JSON (it is parsed whole, so it is held whole).
    pub result_json_bytes: u64,
    /// Members of a tar bundle (files, directories, and the pax and GNU headers of each).
    pub files: u64,
    /// Nesting depth of arrays and objects in any JSON the upload carries (checked on the raw
    /// bytes, before any parser recurses into them).
    pub nesting_depth: u64,
    /// Bytes of one JSON string (a key or a value), of a tar member's name, of a pax record.
    pub string_length: u64,
    /// Series of the raw artifacts: elements of a `series` array in a JSON export, data rows
    /// of a CSV export or a Prometheus text capture, per the whole upload.
    pub series: u64,
    /// Timeslices of the raw artifacts (elements of `timeslices` arrays), per the whole upload.
    pub timeslices: u64,
    /// Label keys of one series (members of one `labels` object).
    pub label_keys: u64,
    /// Bytes of heap the raw artifacts' reading and accounting may have in use (counted where
    /// the heap is counted: the WASM build, whose linear memory is held within this plus
    /// 16 MiB; natively the other limits bound memory).
    pub memory_budget: u64,
}

crate::fields!(UploadLimits, deny_unknown: true, empty: UploadLimits::default(), required: [], [bytes, decompressed_bytes, result_json_bytes, files, nesting_depth, string_length, series, timeslices, label_keys, memory_budget]);

/// The limits' names, as they appear in JSON, in errors and as CLI `--limit NAME=VALUE`.
pub const LIMIT_NAMES: [&str; 10] = [
    "bytes",
    "decompressed_bytes",
    "result_json_bytes",
    "files",
    "nesting_depth",
    "string_length",
    "series",
    "timeslices",
    "label_keys",
    "memory_budget",
];

impl Default for UploadLimits {
    fn default() -> Self {
        UploadLimits {
            bytes: 32 << 20,
            decompressed_bytes: 128 << 20,
            result_json_bytes: 1 << 20,
            files: 256,
            nesting_depth: 64,
            string_length: 64 << 10,
            series: 50_000,
            timeslices: 1_000_000,
            label_keys: 64,
            memory_budget: 48 << 20,
        }
    }
}

/// A limit reached: its name, its value and what was observed (when known).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct LimitHit {
    pub name: String,
    pub value: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub observed: Option<u64>,
}

/// serde_json refuses deeper JSON (its recursion limit), so no larger depth can be honoured.
const MAX_NESTING_DEPTH: u64 = 128;

/// Beyond what any supported runtime can hold: a limit above it is a mistake, not a choice.
const MAX_LIMIT: u64 = 1 << 53;

impl UploadLimits {
    /// The value of limit `name`.
    pub fn get(&self, name: &str) -> Option<u64> {
        Some(match name {
            "bytes" => self.bytes,
            "decompressed_bytes" => self.decompressed_bytes,
            "result_json_bytes" => self.result_json_bytes,
            "files" => self.files,
            "nesting_depth" => self.nesting_depth,
            "string_length" => self.string_length,
            "series" => self.series,
            "timeslices" => self.timeslices,
            "label_keys" => self.label_keys,
            "memory_budget" => self.memory_budget,
            _ => return None,
        })
    }

    /// Set limit `name`; an unknown name is refused with the names that exist.
    pub fn set(&mut self, name: &str, value: u64) -> Result<(), String> {
        let slot = match name {
            "bytes" => &mut self.bytes,
            "decompressed_bytes" => &mut self.decompressed_bytes,
            "result_json_bytes" => &mut self.result_json_bytes,
            "files" => &mut self.files,
            "nesting_depth" => &mut self.nesting_depth,
            "string_length" => &mut self.string_length,
            "series" => &mut self.series,
            "timeslices" => &mut self.timeslices,
            "label_keys" => &mut self.label_keys,
            "memory_budget" => &mut self.memory_budget,
            _ => {
                return Err(format!(
                    "unknown limit `{name}`, expected one of {}",
                    LIMIT_NAMES.join(", ")
                ))
            }
        };
        *slot = value;
        Ok(())
    }

    /// The first limit whose value cannot be honoured, as (name, why): 0 for a limit that
    /// must let something through, above 2^53 for any, a nesting depth above 128.
    pub fn invalid(&self) -> Option<(&'static str, String)> {
        for name in LIMIT_NAMES {
            let v = self.get(name).unwrap_or(0);
            if v > MAX_LIMIT {
                return Some((name, format!("{v} is above the largest limit, 2^53")));
            }
            if v == 0 && name != "series" && name != "timeslices" {
                return Some((name, "0 would refuse every upload".to_string()));
            }
        }
        if self.nesting_depth > MAX_NESTING_DEPTH {
            let why = format!(
                "{} is above {MAX_NESTING_DEPTH}, the depth the JSON parser stops at",
                self.nesting_depth
            );
            return Some(("nesting_depth", why));
        }
        None
    }

    /// The limit named `name` as hit with `observed`.
    pub fn hit(&self, name: &'static str, observed: Option<u64>) -> LimitHit {
        LimitHit {
            name: name.to_string(),
            value: self.get(name).unwrap_or(0),
            observed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_reads_and_writes_its_own_field() {
        for (i, name) in LIMIT_NAMES.iter().enumerate() {
            let mut l = UploadLimits::default();
            l.set(name, 1000 + i as u64).expect("known name");
            assert_eq!(l.get(name), Some(1000 + i as u64));
            let json = serde_json::to_value(l).expect("serialise");
            assert_eq!(json[name], 1000 + i as u64, "{name}");
        }
        assert!(UploadLimits::default().set("byte", 1).is_err());
    }

    #[test]
    fn zero_and_huge_values_are_refused() {
        let mut l = UploadLimits::default();
        assert!(l.invalid().is_none());
        l.bytes = 0;
        assert_eq!(l.invalid().map(|(n, _)| n), Some("bytes"));
        let l = UploadLimits {
            files: u64::MAX,
            ..UploadLimits::default()
        };
        assert_eq!(l.invalid().map(|(n, _)| n), Some("files"));
    }
}
