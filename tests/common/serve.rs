//! `sqsprobe serve` as a real process on loopback, for tests that need the binary (signals,
//! limits, clients in other languages). It binds `127.0.0.1:0` and the test reads the port the
//! kernel gave it from serve's own "listening on" line: no port is picked and then raced for.

use std::io::BufRead;
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{Finished, bin, wait_bounded};

/// A running `sqsprobe serve`; killed on drop if a test did not stop it.
pub struct Serve {
    pub child: Option<Child>,
    pub url: String,
    pub addr: SocketAddr,
    /// What it wrote to stderr so far (read on a thread of its own, from the start).
    stderr: Arc<Mutex<String>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Serve {
    /// `serve` with default settings.
    pub fn start() -> Serve {
        Serve::start_with(&[])
    }

    /// `serve` with extra arguments (e.g. `--chaos SPEC`, `--max-queues 2`).
    pub fn start_with(extra: &[&str]) -> Serve {
        let mut child = Command::new(bin())
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start sqsprobe serve");
        let stderr = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let pipe = child.stderr.take().expect("piped stderr");
        let kept = stderr.clone();
        let reader = std::thread::spawn(move || {
            let mut tx = Some(tx);
            for line in std::io::BufReader::new(pipe).lines() {
                let Ok(line) = line else { break };
                if let Some(rest) = line.split("listening on http://").nth(1)
                    && let Some(addr) = rest.split_whitespace().next()
                    && let Some(tx) = tx.take()
                {
                    let _ = tx.send(addr.parse::<SocketAddr>());
                }
                let mut all = kept.lock().unwrap();
                all.push_str(&line);
                all.push('\n');
            }
        });
        let addr = match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(Ok(addr)) => addr,
            other => {
                let _ = child.kill();
                let _ = child.wait();
                let _ = reader.join();
                panic!(
                    "sqsprobe serve did not say where it listens ({other:?}); stderr:\n{}",
                    stderr.lock().unwrap()
                );
            }
        };
        Serve {
            child: Some(child),
            url: format!("http://{addr}"),
            addr,
            stderr,
            reader: Some(reader),
        }
    }

    /// Whether the process is still running.
    pub fn running(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|c| matches!(c.try_wait(), Ok(None)))
    }

    /// Sends `signal` (e.g. `TERM`) and waits at most `limit` for the process to exit.
    pub fn signal(&mut self, signal: &str, limit: Duration) -> Finished {
        let child = self.child.take().expect("serve is running");
        let status = Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -{signal} failed");
        let mut done = wait_bounded(child, limit);
        // Its stderr was read from the start: the whole of it, once the pipe has closed.
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
        done.stderr = self.stderr.lock().unwrap().clone();
        done
    }

    /// Kills the process (no-op if it already stopped).
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        self.kill();
    }
}

/// One raw HTTP/1.1 POST on a fresh connection (`Connection: close`), read for at most 30 s;
/// returns (status, head and body). Panics if no HTTP response came (the server died).
pub async fn post(addr: SocketAddr, headers: &str, body: &[u8]) -> (u16, String) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let head = format!(
        "POST / HTTP/1.1\r\nHost: {addr}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.expect("write head");
    // A server may answer (413) and close before reading an oversize body; that is fine.
    let _ = stream.write_all(body).await;
    let mut out = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut out)).await;
    let text = String::from_utf8_lossy(&out).to_string();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no HTTP response (did the server panic?): {text:?}"));
    (status, text)
}
