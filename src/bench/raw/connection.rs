//! One keep-alive HTTP/1.1 connection on hyper's connection-level client: no pool, no
//! retries, no redirects, no signing. A server that closes the connection (moto closes it
//! after every answer) is reconnected before the next request, and the reconnect is counted
//! and timed as part of that request.

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::client::conn::http1::{self, SendRequest};
use hyper::header::HeaderValue;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use super::protocol::Prepared;

/// How long one request (connect included) may take before it counts as an error.
pub(crate) const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);

/// A complete HTTP answer.
#[derive(Debug)]
pub(crate) struct Answer {
    pub status: u16,
    pub body: Bytes,
}

/// Why a request produced no answer.
#[derive(Debug)]
pub(crate) enum Failure {
    Connect(std::io::Error),
    Http(hyper::Error),
    Timeout,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Connect(e) => write!(f, "connect: {e}"),
            Failure::Http(e) => write!(f, "http: {e}"),
            Failure::Timeout => write!(f, "no answer within {REQUEST_TIMEOUT:?}"),
        }
    }
}

/// A connection to one server address, re-established when the server closes it.
pub(crate) struct Connection {
    addrs: Vec<SocketAddr>,
    authority: HeaderValue,
    sender: Option<SendRequest<http_body_util::Full<Bytes>>>,
    /// Connections opened after the first.
    pub reconnects: u64,
    opened: bool,
}

impl Connection {
    /// A connection (opened lazily) to the first of `addrs` that accepts, sending `authority`
    /// as the `Host` header.
    pub(crate) fn new(addrs: Vec<SocketAddr>, authority: HeaderValue) -> Self {
        Self {
            addrs,
            authority,
            sender: None,
            reconnects: 0,
            opened: false,
        }
    }

    async fn connect(&mut self) -> Result<(), Failure> {
        let mut last = None;
        for addr in &self.addrs {
            match TcpStream::connect(addr).await {
                Ok(stream) => {
                    let _ = stream.set_nodelay(true);
                    let (sender, conn) = http1::handshake(TokioIo::new(stream))
                        .await
                        .map_err(Failure::Http)?;
                    // The connection task ends when the server closes or the sender is dropped.
                    tokio::spawn(conn);
                    if self.opened {
                        self.reconnects += 1;
                    }
                    self.opened = true;
                    self.sender = Some(sender);
                    return Ok(());
                }
                Err(e) => last = Some(e),
            }
        }
        Err(Failure::Connect(last.unwrap_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::NotFound, "no address")
        })))
    }

    async fn exchange(&mut self, request: &Prepared) -> Result<Answer, Failure> {
        match self.exchange_once(request).await {
            // A request hyper cancelled before writing it (the server closed the idle connection
            // as it was picked) never reached the server: send it once more on a new connection.
            Err(Failure::Http(e)) if e.is_canceled() => self.exchange_once(request).await,
            other => other,
        }
    }

    async fn exchange_once(&mut self, request: &Prepared) -> Result<Answer, Failure> {
        let ready = match self.sender.as_mut() {
            Some(s) => s.ready().await.is_ok(),
            None => false,
        };
        if !ready {
            self.sender = None;
            self.connect().await?;
        }
        let Some(sender) = self.sender.as_mut() else {
            return Err(Failure::Timeout);
        };
        let sent = sender
            .send_request(request.to_request(&self.authority))
            .await;
        let response = match sent {
            Ok(r) => r,
            Err(e) => {
                self.sender = None;
                return Err(Failure::Http(e));
            }
        };
        let status = response.status().as_u16();
        match response.into_body().collect().await {
            Ok(body) => Ok(Answer {
                status,
                body: body.to_bytes(),
            }),
            Err(e) => {
                self.sender = None;
                Err(Failure::Http(e))
            }
        }
    }

    /// Sends `request` and reads the whole answer, within [`REQUEST_TIMEOUT`].
    pub(crate) async fn send(&mut self, request: &Prepared) -> Result<Answer, Failure> {
        match tokio::time::timeout(REQUEST_TIMEOUT, self.exchange(request)).await {
            Ok(result) => result,
            Err(_) => {
                self.sender = None;
                Err(Failure::Timeout)
            }
        }
    }
}
