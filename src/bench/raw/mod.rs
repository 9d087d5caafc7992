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

pub(crate) mod compare;
pub(crate) mod connection;
pub(crate) mod cpu;
pub(crate) mod delete;
pub(crate) mod embedded;
pub(crate) mod endpoint;
pub(crate) mod pin;
pub(crate) mod protocol;
pub(crate) mod reference;
pub(crate) mod report;
pub(crate) mod server_thread;
pub(crate) mod spread;
pub(crate) mod table;
pub(crate) mod target;
pub(crate) mod workload;

pub(crate) use compare::{compare, comparison_markdown};
pub(crate) use cpu::{CpuProbe, ServerPlace};
pub(crate) use embedded::EmbeddedServer;
pub(crate) use endpoint::parse_endpoint;
pub(crate) use pin::Pinning;
pub(crate) use protocol::Protocol;
pub(crate) use reference::ReferenceServer;
pub(crate) use report::{
    Machine, RAW_REPORT_PREVIOUS_VERSION, RAW_REPORT_VERSION, REFERENCE, REFERENCE_END, RawReport,
    RawTargetInfo, RawWorkload, apply_ceilings, build_profile, is_reference, load_average,
};
pub(crate) use spread::{spread_markdown, spreads};
pub(crate) use table::{cpu_notes, raw_markdown_table};
pub(crate) use target::{RawOptions, RawTarget, run_target};
