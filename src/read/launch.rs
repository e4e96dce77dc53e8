//! PLACEHOLDER: replaced by the launch-facts reader.
use crate::error::{ErrorCode, ReadError};
use crate::model::LaunchFacts;

pub fn read_launch_json(file: &str, _text: &str) -> Result<LaunchFacts, ReadError> {
    Err(ReadError::whole(
        ErrorCode::UnknownFormat,
        file,
        "unwritten",
    ))
}

pub fn launch_from_env<'a, I>(_vars: I) -> Result<LaunchFacts, ReadError>
where
    I: IntoIterator<Item = (&'a str, &'a str)>,
{
    Err(ReadError::whole(
        ErrorCode::UnknownFormat,
        "env",
        "unwritten",
    ))
}
