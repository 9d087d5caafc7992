//! Leaves of the emulator: nothing here imports another layer.
//!
//! Chaos and configuration live here because they are plain settings and seeded dice that the
//! store holds and the operations consult; neither knows about queues or requests.

pub(crate) mod audit;
pub(crate) mod chaos;
pub(crate) mod clock;
pub(crate) mod config;
pub(crate) mod errors;
pub(crate) mod hex;
pub(crate) mod ids;
pub(crate) mod input;
pub(crate) mod md5;
pub(crate) mod sigv4;
