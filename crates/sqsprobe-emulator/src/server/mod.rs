//! The HTTP server: connections ([`listen`] accepts and shuts down, `pool` decides who is
//! served at the connection cap, `conn` bounds each one's time) and requests (`request` turns a
//! request's head and body into an AWS-shaped answer).

mod conn;
mod listen;
mod pool;
#[cfg(test)]
mod proptests;
mod request;
#[cfg(test)]
mod socket_tests;

pub use listen::{InProcess, RunningEmulator, serve, spawn};
