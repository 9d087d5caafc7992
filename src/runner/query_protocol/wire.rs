//! A step's `wire:` form: how the query client sends one call when the suite asks for a
//! form no SDK operation sends (see `suite::parse::wire`).
//!
//! The runner attaches [`WireInterceptor`] to the step's call; it puts the form on the request
//! as a request extension (in-process only: extensions are never serialised onto the wire),
//! and the query connector reads it there after translating the request: `GET` puts the form
//! in the query string and sends no body, `to:` sends it to a queue URL's path on the run's
//! endpoint (the host the run already talks to, so a target that answers with URLs of a host
//! that does not resolve here is still reached), `accept:` adds `Accept`, and `params: none`
//! drops the form, `Action` included.

use crate::suite::model::{ReplyFormat, WireMethod};
use aws_sdk_sqs::config::interceptors::BeforeTransmitInterceptorContextMut;
use aws_sdk_sqs::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::orchestrator::HttpRequest;
use aws_smithy_types::body::SdkBody;
use hyper::Uri;

/// One call's query-protocol request form.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WireForm {
    pub method: WireMethod,
    /// The queue URL whose path the request goes to; `None`: the endpoint's own path.
    pub to_url: Option<String>,
    pub accept: Option<ReplyFormat>,
    /// No parameters at all, not even `Action`.
    pub no_params: bool,
}

/// Why a form could not be applied.
#[derive(Debug, thiserror::Error)]
#[error("wire: cannot send to {0}: not a URL")]
pub(super) struct WireError(String);

impl WireForm {
    /// The form the runner put on a request, if any.
    pub(super) fn of(request: &HttpRequest) -> Option<WireForm> {
        request.extension::<WireForm>().cloned()
    }

    /// Rewrites a translated query request (a form `POST` to the endpoint) into this form.
    pub(super) fn apply(&self, mut request: HttpRequest) -> Result<HttpRequest, WireError> {
        let form = if self.no_params {
            String::new()
        } else {
            String::from_utf8_lossy(request.body().bytes().unwrap_or_default()).into_owned()
        };
        let endpoint = parse(request.uri())?;
        let path = match &self.to_url {
            Some(url) => parse(url)?.path().to_owned(),
            None => endpoint.path().to_owned(),
        };
        let (Some(scheme), Some(authority)) = (endpoint.scheme_str(), endpoint.authority()) else {
            return Err(WireError(request.uri().to_owned()));
        };
        let origin = format!("{scheme}://{authority}");
        let headers = request.headers_mut();
        if let Some(accept) = self.accept {
            headers.insert("accept", accept.media_type());
        }
        let uri = match self.method {
            WireMethod::Get => {
                headers.remove("content-type");
                headers.remove("content-length");
                *request.body_mut() = SdkBody::empty();
                if form.is_empty() {
                    format!("{origin}{path}")
                } else {
                    format!("{origin}{path}?{form}")
                }
            }
            WireMethod::Post => {
                headers.insert("content-length", form.len().to_string());
                *request.body_mut() = SdkBody::from(form);
                format!("{origin}{path}")
            }
        };
        request
            .set_method(self.method.as_str())
            .map_err(|_| WireError(uri.clone()))?;
        request
            .set_uri(uri.as_str())
            .map_err(|_| WireError(uri.clone()))?;
        Ok(request)
    }
}

/// A URL with a scheme and a host, as `to:` and the endpoint must be.
fn parse(url: &str) -> Result<Uri, WireError> {
    url.parse::<Uri>()
        .ok()
        .filter(|u| u.scheme().is_some() && u.authority().is_some())
        .ok_or_else(|| WireError(url.to_owned()))
}

/// Puts a call's [`WireForm`] on its request for the query connector.
#[derive(Debug, Clone)]
pub struct WireInterceptor(pub WireForm);

impl Intercept for WireInterceptor {
    fn name(&self) -> &'static str {
        "sqsprobe-wire"
    }

    fn modify_before_transmit(
        &self,
        context: &mut BeforeTransmitInterceptorContextMut<'_>,
        _rc: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        context.request_mut().add_extension(self.0.clone());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form_post(body: &str) -> HttpRequest {
        let mut r = HttpRequest::new(SdkBody::from(body.to_owned()));
        r.set_uri("http://127.0.0.1:9/").unwrap();
        r.set_method("POST").unwrap();
        r.headers_mut()
            .insert("content-type", "application/x-www-form-urlencoded");
        r.headers_mut()
            .insert("content-length", body.len().to_string());
        r
    }

    #[test]
    fn a_get_to_a_queue_url_carries_the_form_in_its_query_string() {
        let form = WireForm {
            method: WireMethod::Get,
            to_url: Some("http://elsewhere.invalid:4566/123/q".into()),
            accept: Some(ReplyFormat::Json),
            no_params: false,
        };
        let r = form
            .apply(form_post("Action=ListQueues&Version=2012-11-05"))
            .unwrap();
        assert_eq!(r.method(), "GET");
        // The run's endpoint, the queue URL's path.
        assert_eq!(
            r.uri(),
            "http://127.0.0.1:9/123/q?Action=ListQueues&Version=2012-11-05"
        );
        assert_eq!(r.body().bytes(), Some(&b""[..]));
        assert_eq!(r.headers().get("content-type"), None);
        assert_eq!(r.headers().get("accept"), Some("application/json"));
    }

    #[test]
    fn no_params_sends_a_bare_request_and_post_keeps_the_body() {
        let bare = WireForm {
            method: WireMethod::Get,
            to_url: Some("http://h/1/q".into()),
            no_params: true,
            ..WireForm::default()
        };
        let mut request = form_post("Action=GetQueueUrl");
        assert_eq!(WireForm::of(&request), None);
        request.add_extension(bare.clone());
        assert_eq!(WireForm::of(&request).as_ref(), Some(&bare));
        let r = bare.apply(request).unwrap();
        assert_eq!(r.uri(), "http://127.0.0.1:9/1/q");
        let post = WireForm {
            to_url: Some("http://h/1/q".into()),
            ..WireForm::default()
        };
        let r = post.apply(form_post("Action=CreateQueue")).unwrap();
        assert_eq!(r.method(), "POST");
        assert_eq!(r.uri(), "http://127.0.0.1:9/1/q");
        assert_eq!(r.body().bytes(), Some(&b"Action=CreateQueue"[..]));
        assert_eq!(r.headers().get("content-length"), Some("18"));
        assert!(
            WireForm {
                to_url: Some("not a url".into()),
                ..WireForm::default()
            }
            .apply(form_post("x"))
            .is_err()
        );
    }
}
