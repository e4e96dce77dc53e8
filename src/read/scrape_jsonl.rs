//! PLACEHOLDER: replaced by the JSONL raw-scrape reader.
use crate::error::{ErrorCode, ReadError};
use crate::model::ScrapeSet;
use crate::read::FamilyFilter;

pub fn read_scrapes_jsonl<R: std::io::BufRead>(
    file: &str,
    _reader: R,
    _filter: &FamilyFilter,
) -> Result<ScrapeSet, ReadError> {
    Err(ReadError::whole(
        ErrorCode::UnknownFormat,
        file,
        "unwritten",
    ))
}
