//! `sqsprobe serve` as a child process of the bench (I/O): started from the bench's own
//! executable (or `--serve-binary`) on `127.0.0.1:0`, its address read from the line it
//! prints, its RSS read from `/proc/<pid>/status`, and killed on every way out.
//!
//! The ways out: dropping the [`ServeProcess`] kills and reaps it (a measurement's end, an
//! error, a first signal, a panic that unwinds); the second signal, which exits without
//! unwinding, kills every child the run's [`Stop`] adopted; and on Linux the child is started
//! with `PR_SET_PDEATHSIG` = SIGKILL, so even a SIGKILLed bench takes it along. It runs in a
//! process group of its own, so a terminal's Ctrl-C reaches the bench, which stops cleanly,
//! and not the server in the middle of a measurement.
//!
//! A server whose memory is measured can be started with transparent huge pages off
//! ([`Pages::Small`]): the allocator asks for huge pages for its arena, and RSS then grows in
//! 2 MiB steps, too coarse to resolve a few bytes a message.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use crate::bench::Stop;

/// How long `serve` may take to print its address.
pub(crate) const START_TIMEOUT: Duration = Duration::from_secs(10);

/// The line `serve` prints once it listens: `... listening on http://ADDR (Ctrl-C to stop)`.
const LISTENING: &str = "listening on http://";

/// The pages a started server's memory comes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pages {
    /// As the system gives them (transparent huge pages where the allocator asks for them).
    Default,
    /// 4 KiB pages only: `PR_SET_THP_DISABLE` in the child (Linux; elsewhere as `Default`).
    Small,
}

/// A running `sqsprobe serve`.
pub(crate) struct ServeProcess {
    child: Child,
    pub addr: SocketAddr,
    stop: Stop,
    /// What the server printed on stderr (after the address line: its errors, if any).
    stderr: Arc<Mutex<Vec<String>>>,
}

/// The address in `serve`'s listening line.
pub(crate) fn listening_address(line: &str) -> Option<SocketAddr> {
    let rest = &line[line.find(LISTENING)? + LISTENING.len()..];
    rest.split_whitespace().next()?.parse().ok()
}

/// A command for `binary` that dies with this process and keeps out of its process group.
pub(crate) fn child_command(binary: &Path) -> Command {
    let mut command = Command::new(binary);
    command.stdin(Stdio::null());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
    die_with_parent(&mut command);
    command
}

/// On Linux the kernel SIGKILLs the child when the thread that spawned it ends: a bench that
/// is itself SIGKILLed leaves no server behind.
#[cfg(target_os = "linux")]
fn die_with_parent(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the child between fork and exec and makes one prctl system
    // call, which is async-signal-safe; it allocates nothing and takes no lock. The death
    // signal follows the thread that spawns: callers spawn from the runtime's long-lived
    // threads, never from a short-lived blocking-pool thread.
    unsafe {
        command.pre_exec(|| {
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))
                .map_err(std::io::Error::from)
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_command: &mut Command) {}

/// `THP_enabled:   0` in `/proc/<pid>/status` → `Some(false)` (Linux 5.0 and later).
fn thp_enabled(status: &str) -> Option<bool> {
    let value = status
        .lines()
        .find_map(|l| l.strip_prefix("THP_enabled:"))?
        .trim();
    match value {
        "0" => Some(false),
        "1" => Some(true),
        _ => None,
    }
}

/// Turns transparent huge pages off for the child (inherited across exec). A kernel that
/// refuses (before 3.15, or a filter) leaves them as they are: the server still starts, and
/// [`ServeProcess::small_pages`] reads the truth from its `/proc` status.
#[cfg(target_os = "linux")]
fn small_pages(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: as in `die_with_parent`: one prctl system call between fork and exec, which is
    // async-signal-safe and allocates nothing.
    unsafe {
        command.pre_exec(|| {
            let _ = rustix::thread::disable_transparent_huge_pages(true);
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn small_pages(_command: &mut Command) {}

impl ServeProcess {
    /// Spawns `binary serve --listen 127.0.0.1:0 EXTRA...`; the receiver gets its address.
    fn spawn(
        binary: &Path,
        extra: &[String],
        stop: &Stop,
        pages: Pages,
    ) -> Result<(ServeProcess, mpsc::Receiver<SocketAddr>), String> {
        let mut command = child_command(binary);
        if pages == Pages::Small {
            small_pages(&mut command);
        }
        let mut child = command
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("failed to start {} serve: {e}", binary.display()))?;
        stop.adopt(child.id());
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let (found, address) = mpsc::channel();
        if let Some(pipe) = child.stderr.take() {
            let lines = Arc::clone(&stderr);
            // Reads until the server exits, so it never blocks on a full pipe; the channel
            // closes then, which tells a waiting caller the server is gone.
            let _ = std::thread::Builder::new()
                .name("sqsprobe-bench-serve-stderr".into())
                .spawn(move || {
                    for line in BufReader::new(pipe).lines() {
                        let Ok(line) = line else { break };
                        match listening_address(&line) {
                            Some(addr) => {
                                let _ = found.send(addr);
                            }
                            None => {
                                if let Ok(mut l) = lines.lock()
                                    && l.len() < 20
                                {
                                    l.push(line);
                                }
                            }
                        }
                    }
                });
        }
        let serve = ServeProcess {
            child,
            addr: ([127, 0, 0, 1], 0).into(),
            stop: stop.clone(),
            stderr,
        };
        Ok((serve, address))
    }

    fn no_address(&self) -> String {
        format!(
            "sqsprobe serve printed no address within {START_TIMEOUT:?}{}",
            self.said()
        )
    }

    /// Starts the server and waits, at most [`START_TIMEOUT`], for its address (async: for the
    /// servers that live through a measurement, spawned from a runtime worker thread).
    pub(crate) async fn start(
        binary: &Path,
        extra: &[String],
        stop: &Stop,
    ) -> Result<ServeProcess, String> {
        Self::start_with(binary, extra, stop, Pages::Default).await
    }

    /// [`ServeProcess::start`] in the pages `pages` says.
    pub(crate) async fn start_with(
        binary: &Path,
        extra: &[String],
        stop: &Stop,
        pages: Pages,
    ) -> Result<ServeProcess, String> {
        let (mut serve, address) = Self::spawn(binary, extra, stop, pages)?;
        let deadline = std::time::Instant::now() + START_TIMEOUT;
        loop {
            match address.try_recv() {
                Ok(addr) => {
                    serve.addr = addr;
                    return Ok(serve);
                }
                Err(mpsc::TryRecvError::Empty) if std::time::Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                Err(_) => return Err(serve.no_address()),
            }
        }
    }

    /// The same, blocking the calling thread (for start-up samples timed on their own thread;
    /// the server must not outlive that thread, whose end the kernel tells it with SIGKILL).
    pub(crate) fn start_blocking(
        binary: &Path,
        extra: &[String],
        stop: &Stop,
    ) -> Result<ServeProcess, String> {
        let (mut serve, address) = Self::spawn(binary, extra, stop, Pages::Default)?;
        match address.recv_timeout(START_TIMEOUT) {
            Ok(addr) => {
                serve.addr = addr;
                Ok(serve)
            }
            Err(_) => Err(serve.no_address()),
        }
    }

    /// The process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the server is still running, and if not, what it said.
    pub(crate) fn check_alive(&mut self) -> Result<(), String> {
        match self.child.try_wait() {
            Ok(None) => Ok(()),
            Ok(Some(status)) => Err(format!("sqsprobe serve exited ({status}){}", self.said())),
            Err(e) => Err(format!("sqsprobe serve: {e}")),
        }
    }

    /// `: LINE | LINE` of what the server printed besides its address, or nothing.
    fn said(&self) -> String {
        let lines = self
            .stderr
            .lock()
            .map(|l| l.join(" | "))
            .unwrap_or_default();
        if lines.is_empty() {
            String::new()
        } else {
            format!(": {lines}")
        }
    }

    /// Its `/proc/<pid>/status` (Linux), and the file's path.
    fn status(&self) -> (String, Result<String, std::io::Error>) {
        let path = format!("/proc/{}/status", self.pid());
        let status = std::fs::read_to_string(&path);
        (path, status)
    }

    /// Whether it runs with transparent huge pages off, as the kernel says of it (not what
    /// was asked for: [`Pages::Small`] where the kernel refused, or before Linux 5.0, which
    /// does not say, is `false`).
    pub(crate) fn small_pages(&self) -> bool {
        self.status().1.ok().and_then(|s| thp_enabled(&s)) == Some(false)
    }

    /// Resident set size, bytes, from `/proc/<pid>/status` (Linux).
    pub(crate) fn rss_bytes(&self) -> Result<u64, String> {
        let (path, status) = self.status();
        let status = status.map_err(|e| format!("memory needs {path} (Linux): {e}"))?;
        vm_rss_bytes(&status).ok_or_else(|| format!("{path} has no VmRSS line"))
    }
}

/// `VmRSS:   1234 kB` → bytes.
pub(crate) fn vm_rss_bytes(status: &str) -> Option<u64> {
    let kb = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .strip_suffix("kB")?
        .trim()
        .parse::<u64>()
        .ok()?;
    kb.checked_mul(1024)
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        // Forgotten first: once reaped, its id may belong to another process.
        self.stop.release(self.child.id());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_address_serve_prints() {
        assert_eq!(
            listening_address(
                "sqsprobe: SQS emulator listening on http://127.0.0.1:40123 (Ctrl-C to stop)"
            ),
            Some(([127, 0, 0, 1], 40123).into())
        );
        assert_eq!(listening_address("sqsprobe: chaos on: seed=1"), None);
        assert_eq!(listening_address("listening on http://nonsense"), None);
    }

    #[test]
    fn reads_rss_in_bytes() {
        let status = "Name:\tsqsprobe\nVmPeak:\t  9000 kB\nVmRSS:\t    1234 kB\nThreads:\t3\n";
        assert_eq!(vm_rss_bytes(status), Some(1234 * 1024));
        assert_eq!(vm_rss_bytes("Name:\tx\n"), None);
        assert_eq!(vm_rss_bytes("VmRSS:\tlots\n"), None);
    }

    #[test]
    fn reads_whether_transparent_huge_pages_are_on() {
        let status = |v: &str| format!("Name:\tsqsprobe\nTHP_enabled:\t{v}\nThreads:\t3\n");
        assert_eq!(thp_enabled(&status("0")), Some(false));
        assert_eq!(thp_enabled(&status("1")), Some(true));
        assert_eq!(thp_enabled(&status("maybe")), None);
        assert_eq!(thp_enabled("Name:\tx\n"), None);
    }
}
