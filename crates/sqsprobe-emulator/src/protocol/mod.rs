//! Wire protocols: AWS JSON 1.0 and the query protocol, both decoded to one parameter shape;
//! and STS's GetCallerIdentity, answered on the same port.

#[cfg(test)]
mod batch_tests;
mod flat_json;
pub(crate) mod json;
pub(crate) mod query;
pub(crate) mod sts;
