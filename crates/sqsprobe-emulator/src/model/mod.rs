//! The emulator's state: the store (a read-write lock over the map of queues, a mutex per
//! queue) and what it holds.
//!
//! Nothing here knows about HTTP, protocols or operation names; the operations in `ops` read
//! and change the model under the store's locks (`store.rs` states the rule).

pub(crate) mod attributes;
pub(crate) mod dedup;
pub(crate) mod deleted;
pub(crate) mod groups;
pub(crate) mod message;
pub(crate) mod number;
pub(crate) mod queue;
pub(crate) mod ready;
pub(crate) mod receipt;
pub(crate) mod redrive;
pub(crate) mod retention;
pub(crate) mod senders;
pub(crate) mod slab;
pub(crate) mod store;
pub(crate) mod task;
pub(crate) mod usage;
pub(crate) mod wakeup;
