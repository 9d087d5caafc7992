//! Small text utilities shared by every output: escaping what came from a suite or a server
//! for the place it is shown.

pub mod escape;
