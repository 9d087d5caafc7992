//! A step's `wire:` form: how the query client sends one call when the suite asks for a
//! form no SDK operation sends (see `suite::parse::wire`).
//!
//! The runner attaches [`WireInterceptor`] to the step's call; it adds the form to the
//! request as the `x-sqsprobe-wire` header after signing, and the query connector takes the
//! header off again before anything is sent, then rewrites the translated request: `GET` puts
//! the form in the query string and sends no body, `to:` sends it to a queue URL's path on
//! the run's endpoint (the host the run already talks to, so a target that answers with URLs
//! of a host that does not resolve here is still reached), `accept:` adds `Accept`, and
//! `params: none` drops the form, `Action` included. The header never reaches a server.

use crate::suite::model::{ReplyFormat, WireMethod};
use aws_sdk_sqs::config::interceptors::BeforeTransmitInterceptorContextMut;
use aws_sdk_sqs::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::orchestrator::HttpRequest;
use aws_smithy_types::body::SdkBody;

/// The request header that carries the form from the runner to the query connector.
pub(crate) const WIRE_HEADER: &str = "x-sqsprobe-wire";

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
pub(super) enum WireError {
    #[error("wire: the header {WIRE_HEADER} is not a wire form: {0}")]
    Header(String),
    #[error("wire: cannot send to {0}: not a URL")]
    Url(String),
}

impl WireForm {
    /// The form as the header carries it: `method=GET;accept=json;params=none;to=<url>`, the
    /// URL last so that nothing in it is read as a separator.
    pub fn header_value(&self) -> String {
        let mut parts = vec![format!("method={}", self.method.as_str())];
        if let Some(a) = self.accept {
            parts.push(format!("accept={}", a.as_str()));
        }
        if self.no_params {
            parts.push("params=none".to_string());
        }
        if let Some(url) = &self.to_url {
            parts.push(format!("to={url}"));
        }
        parts.join(";")
    }

    /// Reads [`Self::header_value`] back.
    fn from_header(value: &str) -> Result<WireForm, WireError> {
        let bad = || WireError::Header(value.to_string());
        let mut form = WireForm::default();
        let mut rest = value;
        while !rest.is_empty() {
            if let Some(url) = rest.strip_prefix("to=") {
                form.to_url = Some(url.to_string());
                break;
            }
            let (part, tail) = rest.split_once(';').unwrap_or((rest, ""));
            match part {
                "method=GET" => form.method = WireMethod::Get,
                "method=POST" => form.method = WireMethod::Post,
                "accept=json" => form.accept = Some(ReplyFormat::Json),
                "accept=xml" => form.accept = Some(ReplyFormat::Xml),
                "params=none" => form.no_params = true,
                _ => return Err(bad()),
            }
            rest = tail;
        }
        Ok(form)
    }

    /// Takes the form off a request, if the runner put one there.
    pub(super) fn take(request: &mut HttpRequest) -> Result<Option<WireForm>, WireError> {
        let Some(value) = request.headers_mut().remove(WIRE_HEADER) else {
            return Ok(None);
        };
        WireForm::from_header(&value).map(Some)
    }

    /// Rewrites a translated query request (a form `POST` to the endpoint) into this form.
    pub(super) fn apply(&self, mut request: HttpRequest) -> Result<HttpRequest, WireError> {
        let form = if self.no_params {
            String::new()
        } else {
            String::from_utf8_lossy(request.body().bytes().unwrap_or_default()).into_owned()
        };
        let endpoint = request.uri().to_string();
        let path = match &self.to_url {
            Some(url) => path_of(url).ok_or_else(|| WireError::Url(url.clone()))?,
            None => path_of(&endpoint).unwrap_or("/"),
        };
        let origin = origin_of(&endpoint).ok_or_else(|| WireError::Url(endpoint.clone()))?;
        let headers = request.headers_mut();
        if let Some(accept) = self.accept {
            headers.insert(
                "accept",
                match accept {
                    ReplyFormat::Json => "application/json",
                    ReplyFormat::Xml => "text/xml",
                },
            );
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
            .map_err(|_| WireError::Url(uri.clone()))?;
        request
            .set_uri(uri.as_str())
            .map_err(|_| WireError::Url(uri.clone()))?;
        Ok(request)
    }
}

/// `scheme://authority` of a URL.
fn origin_of(url: &str) -> Option<&str> {
    let after = url.find("://")? + 3;
    let end = url[after..]
        .find(['/', '?'])
        .map_or(url.len(), |i| after + i);
    Some(&url[..end])
}

/// The path of a URL (`/` when it has none), without its query string.
fn path_of(url: &str) -> Option<&str> {
    let origin = origin_of(url)?;
    let rest = &url[origin.len()..];
    let path = rest.split('?').next().unwrap_or("");
    Some(if path.is_empty() { "/" } else { path })
}

/// Puts a call's [`WireForm`] on its request for the query connector (after signing: the
/// header is the harness's own, never sent).
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
        context
            .request_mut()
            .headers_mut()
            .try_insert(WIRE_HEADER, self.0.header_value())
            .map_err(|e| BoxError::from(format!("wire: {e}")))?;
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
    fn the_header_round_trips_with_the_url_last() {
        let form = WireForm {
            method: WireMethod::Get,
            to_url: Some("http://h:1/000000000000/q;x?y=1".into()),
            accept: Some(ReplyFormat::Json),
            no_params: true,
        };
        let value = form.header_value();
        assert_eq!(
            value,
            "method=GET;accept=json;params=none;to=http://h:1/000000000000/q;x?y=1"
        );
        assert_eq!(WireForm::from_header(&value).unwrap(), form);
        assert!(WireForm::from_header("method=PUT").is_err());
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
        let r = bare.apply(form_post("Action=GetQueueUrl")).unwrap();
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
