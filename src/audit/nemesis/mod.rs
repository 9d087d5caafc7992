//! `sqsprobe audit --nemesis`: the consumer killed and started again, or paused past its
//! lease, at points of its history drawn from the audit's seed.
//!
//! - [`spec`]: the grammar, the points, the acts and their line (pure);
//! - [`live`]: the strikes, from inside the audit's observer, and what the runner does next.

pub(crate) mod live;
pub(crate) mod spec;

pub(crate) use live::{Event, Live};
pub(crate) use spec::{Act, ActKind, Nemesis, On, Record};
