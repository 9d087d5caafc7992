//! The raw driver of `sqsprobe bench`: pre-built, unsigned SQS requests over N keep-alive
//! HTTP/1.1 connections (hyper's connection-level client), so the figure is the server's and
//! not the client's.
//!
//! Emulators ignore signatures; AWS is never a raw target ([`endpoint`] refuses its hosts).
//! Every target is measured against its own no-op ceiling — an unknown-operation request on
//! the same server, in the same run — and against the [`reference`] server, a bare hyper
//! server answering a fixed 200 in the same run: the first says what a target's SQS work
//! costs beyond its own request path, the second how near the machine's HTTP limit it is.
//! Each row also reads whose CPU it spent ([`cpu`]), to say when the client held it back.
//! [`protocol`], [`report`], [`table`] and [`compare`] are pure (and [`cpu`]'s rule); [`connection`],
//! [`workload`], [`delete`], [`target`], [`embedded`], [`reference`] and [`server_thread`] do
//! the I/O.

pub mod compare;
pub mod connection;
pub mod cpu;
pub mod delete;
pub mod embedded;
pub mod endpoint;
pub mod pin;
pub mod protocol;
pub mod reference;
pub mod report;
pub mod server_thread;
pub mod spread;
pub mod table;
pub mod target;
pub mod workload;

pub use compare::{compare, comparison_markdown};
pub use cpu::{CpuProbe, ServerPlace};
pub use embedded::EmbeddedServer;
pub use endpoint::parse_endpoint;
pub use pin::Pinning;
pub use protocol::Protocol;
pub use reference::ReferenceServer;
pub use report::{
    Machine, RAW_REPORT_PREVIOUS_VERSION, RAW_REPORT_VERSION, REFERENCE, REFERENCE_END, RawReport,
    RawTargetInfo, RawWorkload, apply_ceilings, build_profile, is_reference, load_average,
};
pub use spread::{spread_markdown, spreads};
pub use table::{cpu_notes, raw_markdown_table};
pub use target::{RawOptions, RawTarget, run_target};
