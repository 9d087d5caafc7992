//! The consumer under audit as a process group of its own: started with the emulator's
//! address and the audit's variables in its environment, its output appended to
//! `consumer.log`, and stopped as a whole group (SIGTERM, then SIGKILL after a grace period),
//! so a shell wrapper's children go with it.

use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use rustix::process::{Pid, Signal, kill_process_group};

/// How long a consumer has between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_secs(5);

/// How to start the consumer: the command, the variables it gets, where its output goes.
#[derive(Debug, Clone)]
pub(crate) struct Launch {
    pub program: String,
    pub args: Vec<String>,
    /// Set on top of the audit's own environment.
    pub env: Vec<(String, String)>,
    /// Removed from it (credentials that are not the audit's).
    pub env_remove: Vec<&'static str>,
    /// `consumer.log`: created by the first start, appended to by the next.
    pub log: PathBuf,
}

/// A started consumer.
#[derive(Debug)]
pub(crate) struct Consumer {
    child: tokio::process::Child,
    group: Option<Pid>,
}

impl Launch {
    /// Starts the command in a process group of its own, as its `start`-th start
    /// (`SQSPROBE_START`: 1, then one more for each start after a nemesis kill).
    pub(crate) fn start(&self, start: u32) -> std::io::Result<Consumer> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)?;
        let err = log.try_clone()?;
        let mut command = tokio::process::Command::new(&self.program);
        command
            .args(&self.args)
            .stdin(Stdio::null())
            .stdout(Stdio::from(log))
            .stderr(Stdio::from(err))
            .process_group(0)
            .kill_on_drop(true);
        for name in &self.env_remove {
            command.env_remove(name);
        }
        for (k, v) in &self.env {
            command.env(k, v);
        }
        command.env("SQSPROBE_START", start.to_string());
        let child = command.spawn()?;
        let group = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .and_then(Pid::from_raw);
        Ok(Consumer { child, group })
    }
}

impl Consumer {
    /// The process group's id (its leader's pid).
    pub(crate) fn group(&self) -> Option<i32> {
        self.group.map(Pid::as_raw_nonzero).map(|p| p.get())
    }

    /// Its exit status, once it has ended.
    pub(crate) fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// SIGTERM to the group (and SIGCONT, should it be stopped), SIGKILL after [`GRACE`].
    pub(crate) async fn stop(&mut self) {
        if self.exited().is_some() {
            return;
        }
        if let Some(group) = self.group {
            let _ = kill_process_group(group, Signal::TERM);
            let _ = kill_process_group(group, Signal::CONT);
        }
        if tokio::time::timeout(GRACE, self.child.wait())
            .await
            .is_err()
        {
            if let Some(group) = self.group {
                let _ = kill_process_group(group, Signal::KILL);
            }
            let _ = self.child.kill().await;
        }
    }
}

/// Sends `signal` to the process group `group`; whether it was sent.
pub(crate) fn signal_group(group: i32, signal: Signal) -> bool {
    Pid::from_raw(group).is_some_and(|pid| kill_process_group(pid, signal).is_ok())
}
