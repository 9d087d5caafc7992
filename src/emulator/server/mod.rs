//! The HTTP server: connections ([`listen`] accepts and shuts down) and requests (`request`
//! turns a request into an AWS-shaped answer).

mod listen;
mod request;

pub use listen::{RunningEmulator, serve, spawn};
