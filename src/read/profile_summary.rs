//! PLACEHOLDER: replaced by the profile_export_aiperf.json reader.
use crate::error::{ErrorCode, ReadError};
use crate::model::RunSummary;

pub fn read_run_summary<R: std::io::Read>(file: &str, _reader: R) -> Result<RunSummary, ReadError> {
    Err(ReadError::whole(
        ErrorCode::UnknownFormat,
        file,
        "unwritten",
    ))
}
