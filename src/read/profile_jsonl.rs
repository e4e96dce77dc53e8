//! PLACEHOLDER: replaced by the profile_export.jsonl reader.
use crate::error::{ErrorCode, ReadError};
use crate::model::ProfileExport;

pub fn read_profile_jsonl<R: std::io::BufRead>(
    file: &str,
    _reader: R,
) -> Result<ProfileExport, ReadError> {
    Err(ReadError::whole(
        ErrorCode::UnknownFormat,
        file,
        "unwritten",
    ))
}
