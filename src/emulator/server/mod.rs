//! The HTTP server: connections ([`listen`] accepts and shuts down, `conn` bounds each one's
//! time) and requests (`request` turns a request's head and body into an AWS-shaped answer).

mod conn;
mod listen;
#[cfg(test)]
mod proptests;
mod request;

pub use listen::{InProcess, RunningEmulator, serve, spawn};
