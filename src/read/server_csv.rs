//! PLACEHOLDER: replaced by the CSV reader.
use crate::error::{ErrorCode, ReadError};
use crate::model::ServerMetricsExport;
use crate::read::FamilyFilter;

pub fn read_server_metrics_csv<R: std::io::BufRead>(
    file: &str,
    _reader: R,
    _filter: &FamilyFilter,
) -> Result<ServerMetricsExport, ReadError> {
    Err(ReadError::whole(
        ErrorCode::UnknownFormat,
        file,
        "unwritten",
    ))
}
