//! An SDK error as one line, any account id in it masked: what every command prints of a
//! failed call (the runner's target checks, the sweep, the audit's own set-up).

use aws_sdk_sqs::error::ProvideErrorMetadata;

/// An SDK error as one short line, any account id in it masked: `Code: message` for an
/// answer, the innermost cause for a call that got none (`Connection refused (os error 111)`).
pub(crate) fn sdk_error_line<E>(err: &aws_sdk_sqs::error::SdkError<E>) -> String
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
{
    use aws_sdk_sqs::error::SdkError;
    let innermost = || {
        let mut cause: &dyn std::error::Error = err;
        while let Some(next) = cause.source() {
            cause = next;
        }
        cause.to_string()
    };
    let text = match err {
        SdkError::ServiceError(_) => match (err.code(), err.message()) {
            (Some(code), Some(msg)) if !msg.is_empty() => format!("{code}: {msg}"),
            (Some(code), _) => code.to_string(),
            _ => innermost(),
        },
        SdkError::TimeoutError(_) => "timed out".to_string(),
        SdkError::DispatchFailure(_) => format!("no connection: {}", innermost()),
        SdkError::ResponseError(_) => format!("unreadable response: {}", innermost()),
        _ => innermost(),
    };
    if let Some(line) = sqsprobe_facts::sqs::errors::missing_credentials(&text) {
        return line.to_string();
    }
    let words: Vec<&str> = text.split_whitespace().collect();
    sqsprobe_core::evidence::digest::mask_account_ids(&words.join(" "))
}
