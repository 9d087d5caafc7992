//! What a handler knows about a request besides its parameters (set by the server).

/// What a handler needs to know about the request besides its parameters.
#[derive(Debug, Clone)]
pub(crate) struct RequestContext {
    /// Host (and port) the client addressed; queue URLs are built from it.
    pub host: String,
    /// Whether the request came over the query protocol.
    pub query: bool,
    /// `X-Amzn-Trace-Id` header, which becomes the AWSTraceHeader system attribute.
    pub trace_header: Option<String>,
}
