//! Wire protocols: AWS JSON 1.0 and the query protocol, both decoded to one parameter shape.

pub(crate) mod json;
pub(crate) mod query;
