//! PLACEHOLDER: replaced by run-directory discovery.
