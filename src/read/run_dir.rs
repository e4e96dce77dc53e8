//! PLACEHOLDER: replaced by run-directory discovery.
use crate::error::ReadError;

pub fn discover(dir: &std::path::Path) -> Result<Vec<std::path::PathBuf>, ReadError> {
    Ok(vec![dir.to_path_buf()])
}
