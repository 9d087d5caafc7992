//! Suites: the YAML format, parsed into a positioned model and validated (pure: no I/O).

pub mod model;
