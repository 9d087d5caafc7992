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

use aws_sdk_sqs::config::interceptors::BeforeTransmitInterceptorContextMut;
use aws_sdk_sqs::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::orchestrator::HttpRequest;
use aws_smithy_types::body::SdkBody;
use hyper::Uri;
use sqsprobe_core::suite::model::{ReplyFormat, WireMethod};

/// One call's query-protocol request form.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct WireForm {
    pub method: WireMethod,
    /// The queue URL whose path the request goes to; `None`: the endpoint's own path.
    pub to_url: Option<String>,
    pub accept: Option<ReplyFormat>,
    /// No parameters at all, not even `Action`.
    pub no_params: bool,
    /// Each list or map of one item without its index (`AttributeName.1=All` →
    /// `AttributeName=All`): the early query API's form, which boto 2 still sends.
    pub unindexed: bool,
}

/// Why a form could not be applied.
#[derive(Debug, thiserror::Error)]
#[error("wire: {0}")]
pub(super) struct WireError(String);

impl WireError {
    fn not_a_url(url: &str) -> Self {
        WireError(format!("cannot send to {url}: not a URL"))
    }
}

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
        let form = if self.unindexed {
            unindex(&form)?
        } else {
            form
        };
        let endpoint = parse(request.uri())?;
        let path = match &self.to_url {
            Some(url) => parse(url)?.path().to_owned(),
            None => endpoint.path().to_owned(),
        };
        let (Some(scheme), Some(authority)) = (endpoint.scheme_str(), endpoint.authority()) else {
            return Err(WireError::not_a_url(request.uri()));
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
            .map_err(|_| WireError::not_a_url(&uri))?;
        request
            .set_uri(uri.as_str())
            .map_err(|_| WireError::not_a_url(&uri))?;
        Ok(request)
    }
}

/// The form with every `Name.1` (`Name.1.Key`) written `Name` (`Name.Key`): the unindexed
/// form of a list or map of one item. A name with a second item has no such form: an error.
fn unindex(form: &str) -> Result<String, WireError> {
    let pairs: Vec<(String, String)> = form_urlencoded::parse(form.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    let indexed = |key: &str| -> Option<(String, String)> {
        let mut parts = key.splitn(3, '.');
        let name = parts.next()?;
        let index = parts.next()?;
        index.parse::<u32>().ok()?;
        Some((name.to_owned(), index.to_owned()))
    };
    if let Some((name, _)) = pairs
        .iter()
        .filter_map(|(k, _)| indexed(k))
        .find(|(_, i)| i != "1")
    {
        return Err(WireError(format!(
            "`indexes: none` needs one item: `{name}` has more than one"
        )));
    }
    let mut out = form_urlencoded::Serializer::new(String::new());
    for (key, value) in &pairs {
        let key = match indexed(key) {
            Some((name, _)) => match key.splitn(3, '.').nth(2) {
                Some(rest) => format!("{name}.{rest}"),
                None => name,
            },
            None => key.clone(),
        };
        out.append_pair(&key, value);
    }
    Ok(out.finish())
}

/// A URL with a scheme and a host, as `to:` and the endpoint must be.
fn parse(url: &str) -> Result<Uri, WireError> {
    url.parse::<Uri>()
        .ok()
        .filter(|u| u.scheme().is_some() && u.authority().is_some())
        .ok_or_else(|| WireError::not_a_url(url))
}

/// Puts a call's [`WireForm`] on its request for the query connector.
#[derive(Debug, Clone)]
pub(crate) struct WireInterceptor(pub WireForm);

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
            unindexed: false,
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
    fn indexes_none_sends_one_item_lists_and_maps_unindexed() {
        let form = WireForm {
            unindexed: true,
            ..WireForm::default()
        };
        let r = form
            .apply(form_post(
                "Action=SetQueueAttributes&QueueUrl=http%3A%2F%2Fh%2F1%2Fq&Attribute.1.Name=VisibilityTimeout&Attribute.1.Value=9",
            ))
            .unwrap();
        assert_eq!(
            r.body().bytes(),
            Some(
                &b"Action=SetQueueAttributes&QueueUrl=http%3A%2F%2Fh%2F1%2Fq&Attribute.Name=VisibilityTimeout&Attribute.Value=9"[..]
            )
        );
        let r = form
            .apply(form_post("Action=GetQueueAttributes&AttributeName.1=All"))
            .unwrap();
        assert_eq!(
            r.body().bytes(),
            Some(&b"Action=GetQueueAttributes&AttributeName=All"[..])
        );
        assert!(
            form.apply(form_post("AttributeName.1=A&AttributeName.2=B"))
                .is_err()
        );
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
