//! Pagination shared by ListQueues and ListDeadLetterSourceQueues.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

use crate::support::errors::{SqsError, SqsResult};
use crate::support::input::Input;

/// Pagination shared by ListQueues and ListDeadLetterSourceQueues: sorted names, an opaque
/// token naming the last name returned. Tokens are only issued when MaxResults is given (LQ3).
pub(crate) fn paginate(
    mut names: Vec<String>,
    input: &Input<'_>,
) -> SqsResult<(Vec<String>, Option<String>)> {
    names.sort();
    let max_results = match input.integer("MaxResults")? {
        None => None,
        Some(n) if sqsprobe_facts::sqs::limits::LIST_QUEUES_MAX_RESULTS.contains(n) => {
            Some(n as usize)
        }
        Some(n) => {
            return Err(SqsError::invalid_value(
                n,
                "MaxResults",
                "MaxResults must be an integer between 1 and 1000.",
            ));
        }
    };
    if let Some(token) = input.string("NextToken")? {
        let after = BASE64
            .decode(token.as_bytes())
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .ok_or_else(|| SqsError::invalid_parameter_value("Invalid NextToken value."))?;
        names.retain(|n| *n > after);
    }
    let limit = max_results.unwrap_or(1000);
    let more = names.len() > limit;
    names.truncate(limit);
    let token = match (more, max_results, names.last()) {
        (true, Some(_), Some(last)) => Some(BASE64.encode(last.as_bytes())),
        _ => None,
    };
    Ok((names, token))
}
