//! PLACEHOLDER: replaced by the Prometheus text reader.
use crate::error::{ErrorCode, ReadError};
use crate::model::Scrape;
use crate::read::{CaptureMeta, FamilyFilter};

pub fn read_prometheus_text<R: std::io::BufRead>(
    file: &str,
    _reader: R,
    _capture: &CaptureMeta,
    _filter: &FamilyFilter,
) -> Result<Scrape, ReadError> {
    Err(ReadError::whole(
        ErrorCode::UnknownFormat,
        file,
        "unwritten",
    ))
}

pub fn parse_prom_float(s: &str) -> Option<f64> {
    s.parse().ok()
}
