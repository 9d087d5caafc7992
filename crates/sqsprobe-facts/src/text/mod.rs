//! Small text utilities shared by every output: escaping what came from a suite or a server
//! for the place it is shown, and did-you-mean suggestions for misspelt words.

pub mod escape;
pub mod suggest;
