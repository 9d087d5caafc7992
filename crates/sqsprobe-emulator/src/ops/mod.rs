//! SQS operations, one module per family. Handlers take and return the JSON protocol's shapes
//! (the protocol modules translate at the edges; ReceiveMessage answers plain data they write
//! straight to bytes, `answer.rs`) and change the model under the store's locks
//! (`model/store.rs`: the read lock and their queue's mutex, or the write lock).

pub mod access;
pub(crate) mod answer;
pub(crate) mod batch;
pub(crate) mod context;
pub(crate) mod dlq;
pub(crate) mod lease;
pub(crate) mod move_task;
pub(crate) mod paging;
pub(crate) mod permission;
pub(crate) mod queue;
pub(crate) mod receive;
pub(crate) mod send;

#[cfg(test)]
mod chaos_tests;
#[cfg(test)]
mod concurrency_tests;
#[cfg(test)]
mod write_honesty_tests;
