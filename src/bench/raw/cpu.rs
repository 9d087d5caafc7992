//! Whose CPU a raw row spent: the bench's own client, the server, the whole machine, over the
//! measured part of each phase, and the rule that says when the client, not the server, set
//! the row's rate ([`client_bound`], pure).
//!
//! On two cores the load generator takes about as much CPU as the server it measures, so a
//! fast server (the reference above all) can be held back by the client: its rate is then not
//! the machine's HTTP limit, and every fraction taken against it leans towards 1. The figures
//! come from `/proc` (Linux): the process's own time, the server's threads by name when it
//! runs in this process ([`SERVER_THREAD_PREFIX`]), the server process's time when it is a
//! separate process on this machine, and `/proc/stat` for the machine. Elsewhere, none.

use std::time::Instant;

use serde::{Deserialize, Serialize};

/// The name every thread of a server the bench runs in its own process starts with
/// (`ServerThread`), so its CPU can be told from the client's. The kernel keeps 15 bytes of a
/// thread's name; the prefix fits.
pub(crate) const SERVER_THREAD_PREFIX: &str = "sqsprobe-srv-";

/// The share of its cores above which a CPU-bound party counts as saturated: a scheduler never
/// hands a busy party every tick (interrupts, the sampler, other processes' wake-ups), and
/// below 90 % there is CPU it did not use.
pub(crate) const SATURATED: f64 = 0.9;

/// CPU spent during a row's measured phases (the no-op row: both of its phases summed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RowCpu {
    /// Wall time over which the CPU was read, seconds.
    pub wall_s: f64,
    /// CPU seconds of the bench's client: the process, less the server's threads when the
    /// server runs in it.
    pub client_cpu_s: f64,
    /// CPU seconds of the server, when they could be read (in this process, or a process on
    /// this machine listening on the endpoint's port).
    pub server_cpu_s: Option<f64>,
    /// CPU seconds every process on the machine spent (`/proc/stat`), when it could be read.
    pub machine_busy_s: Option<f64>,
    /// With `--pin`: CPU seconds every process spent on the client's cores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cores_busy_s: Option<f64>,
    /// CPUs the run may use.
    pub cpus: usize,
    /// CPUs the client may use: its own cores with `--pin`, else all of them.
    pub client_cores: usize,
    /// Whether the client and the server were pinned to separate cores (`--pin`).
    pub pinned: bool,
    /// [`client_bound`] of the figures above; `None` when they cannot tell.
    pub client_bound: Option<bool>,
}

impl RowCpu {
    /// Cores' worth the client used (1.0: one core all the time).
    pub(crate) fn client_cores_used(&self) -> Option<f64> {
        (self.wall_s > 0.0).then(|| self.client_cpu_s / self.wall_s)
    }

    /// Cores' worth the server used.
    pub(crate) fn server_cores_used(&self) -> Option<f64> {
        let server = self.server_cpu_s?;
        (self.wall_s > 0.0).then(|| server / self.wall_s)
    }

    /// Two readings of the same row (the no-op's two phases) as one.
    pub(crate) fn combine(&self, other: &RowCpu) -> RowCpu {
        let sum = |a: Option<f64>, b: Option<f64>| Some(a? + b?);
        let mut both = RowCpu {
            wall_s: self.wall_s + other.wall_s,
            client_cpu_s: self.client_cpu_s + other.client_cpu_s,
            server_cpu_s: sum(self.server_cpu_s, other.server_cpu_s),
            machine_busy_s: sum(self.machine_busy_s, other.machine_busy_s),
            client_cores_busy_s: sum(self.client_cores_busy_s, other.client_cores_busy_s),
            cpus: self.cpus,
            client_cores: self.client_cores,
            pinned: self.pinned,
            client_bound: None,
        };
        both.client_bound = client_bound(&both);
        both
    }
}

/// Whether the client held the row's rate back. `None` when the figures cannot tell.
///
/// - The client's own cores full (≥ [`SATURATED`] of them): it could not have sent faster.
///   With `--pin` the server had cores of its own, so otherwise the client was not bound,
///   unless its cores were full all the same (other processes on them): the client was short
///   of CPU, but whether that set the rate cannot be told, so `None`.
/// - Not pinned, client and server share every core. Once the machine is full (≥
///   [`SATURATED`] of all CPUs busy, any process counted), a request costs the pair the
///   client's CPU plus the server's, so a target's fraction of the reference is
///   (client + target) ÷ (client + reference) per request rather than reference ÷ target:
///   when the client spends at least what the server does, that fraction is at least halfway
///   from the server's own ratio to 1. So: full machine and client ≥ server.
/// - Not pinned and the machine not full: no party was short of CPU, not client-bound.
///   Unknown server CPU on a full machine: `None` (inconclusive, never "not bound").
pub(crate) fn client_bound(cpu: &RowCpu) -> Option<bool> {
    let client = cpu.client_cores_used()?;
    if client >= SATURATED * cpu.client_cores as f64 {
        return Some(true);
    }
    if cpu.pinned {
        let cores_busy = cpu.client_cores_busy_s? / cpu.wall_s;
        return (cores_busy < SATURATED * cpu.client_cores as f64).then_some(false);
    }
    let busy = cpu.machine_busy_s? / cpu.wall_s;
    if busy < SATURATED * cpu.cpus as f64 {
        return Some(false);
    }
    Some(client >= cpu.server_cores_used()?)
}

/// Where the server of a target runs, for reading its CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ServerPlace {
    /// On threads of this process named with [`SERVER_THREAD_PREFIX`].
    InProcess,
    /// A process of this machine.
    Process(u32),
    /// Unknown: its CPU is not read.
    Unknown,
}

/// What a target's rows read their CPU from, and the cores the run gave the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CpuProbe {
    pub server: ServerPlace,
    pub cpus: usize,
    pub client_cores: usize,
    /// With `--pin`: the client's CPUs (empty otherwise).
    pub client_cpus: Vec<usize>,
    pub pinned: bool,
}

/// One reading, at one instant.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CpuSample {
    at: Instant,
    process_s: Option<f64>,
    server_s: Option<f64>,
    machine_busy_s: Option<f64>,
    client_cores_busy_s: Option<f64>,
}

impl CpuProbe {
    /// Reads the figures now.
    pub(crate) fn sample(&self) -> CpuSample {
        let at = Instant::now();
        let (process_s, server_s) = match self.server {
            ServerPlace::InProcess => (proc::process_cpu_s(None), proc::server_threads_cpu_s()),
            ServerPlace::Process(pid) => {
                (proc::process_cpu_s(None), proc::process_cpu_s(Some(pid)))
            }
            ServerPlace::Unknown => (proc::process_cpu_s(None), None),
        };
        CpuSample {
            at,
            process_s,
            server_s,
            machine_busy_s: proc::machine_busy_s(),
            client_cores_busy_s: if self.client_cpus.is_empty() {
                None
            } else {
                proc::cpus_busy_s(&self.client_cpus)
            },
        }
    }

    /// The row's CPU between two readings; `None` when the process's own time was not read.
    pub(crate) fn between(&self, start: &CpuSample, end: &CpuSample) -> Option<RowCpu> {
        let delta = |a: Option<f64>, b: Option<f64>| Some((b? - a?).max(0.0));
        let process = delta(start.process_s, end.process_s)?;
        let server = delta(start.server_s, end.server_s);
        let client = match self.server {
            ServerPlace::InProcess => (process - server?).max(0.0),
            _ => process,
        };
        let mut cpu = RowCpu {
            wall_s: end.at.saturating_duration_since(start.at).as_secs_f64(),
            client_cpu_s: client,
            server_cpu_s: server,
            machine_busy_s: delta(start.machine_busy_s, end.machine_busy_s),
            client_cores_busy_s: delta(start.client_cores_busy_s, end.client_cores_busy_s),
            cpus: self.cpus,
            client_cores: self.client_cores,
            pinned: self.pinned,
            client_bound: None,
        };
        cpu.client_bound = client_bound(&cpu);
        Some(cpu)
    }
}

#[cfg(target_os = "linux")]
pub(crate) mod proc {
    //! The `/proc` readings behind [`super::CpuProbe`] and the endpoint's process lookup.

    use super::SERVER_THREAD_PREFIX;

    fn ticks() -> f64 {
        rustix::param::clock_ticks_per_second() as f64
    }

    /// utime + stime of a `stat` line, in seconds (the fields after the parenthesised name,
    /// which may itself hold spaces and parentheses).
    fn stat_cpu_s(text: &str) -> Option<f64> {
        let rest = &text[text.rfind(')')? + 1..];
        let mut fields = rest.split_whitespace().skip(11);
        let utime: u64 = fields.next()?.parse().ok()?;
        let stime: u64 = fields.next()?.parse().ok()?;
        Some((utime + stime) as f64 / ticks())
    }

    /// CPU seconds of this process (`None`) or of `pid`, every thread, past and present.
    pub(crate) fn process_cpu_s(pid: Option<u32>) -> Option<f64> {
        let path = match pid {
            None => "/proc/self/stat".to_string(),
            Some(pid) => format!("/proc/{pid}/stat"),
        };
        stat_cpu_s(&std::fs::read_to_string(path).ok()?)
    }

    /// CPU seconds of this process's server threads (named with the prefix).
    pub(crate) fn server_threads_cpu_s() -> Option<f64> {
        let mut total = 0.0;
        for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
            let path = task.path();
            let Ok(name) = std::fs::read_to_string(path.join("comm")) else {
                continue;
            };
            if name.starts_with(SERVER_THREAD_PREFIX) {
                // A thread that ended between the listing and the read counts nothing.
                if let Ok(stat) = std::fs::read_to_string(path.join("stat")) {
                    total += stat_cpu_s(&stat).unwrap_or(0.0);
                }
            }
        }
        Some(total)
    }

    /// CPU seconds every CPU spent busy (not idle, not waiting on I/O) since boot.
    pub(crate) fn machine_busy_s() -> Option<f64> {
        let text = std::fs::read_to_string("/proc/stat").ok()?;
        busy_of(text.lines().find(|l| l.starts_with("cpu "))?)
    }

    /// CPU seconds the CPUs `cpus` spent busy since boot.
    pub(crate) fn cpus_busy_s(cpus: &[usize]) -> Option<f64> {
        let text = std::fs::read_to_string("/proc/stat").ok()?;
        let mut total = 0.0;
        for c in cpus {
            let name = format!("cpu{c} ");
            total += busy_of(text.lines().find(|l| l.starts_with(&name))?)?;
        }
        Some(total)
    }

    /// The busy seconds of one `cpu` line of /proc/stat.
    fn busy_of(line: &str) -> Option<f64> {
        let values: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .map(|v| v.parse().ok())
            .collect::<Option<_>>()?;
        // user nice system idle iowait irq softirq steal (guest time is inside user).
        let busy: u64 = values
            .iter()
            .take(8)
            .enumerate()
            .filter(|(i, _)| *i != 3 && *i != 4)
            .map(|(_, v)| v)
            .sum();
        Some(busy as f64 / ticks())
    }

    /// The process of this machine listening on TCP `port` (IPv4 or IPv6), other than this
    /// one, when its sockets can be seen (the same user's processes).
    pub(crate) fn listener_pid(port: u16) -> Option<u32> {
        let mut inodes = Vec::new();
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            let Ok(text) = std::fs::read_to_string(table) else {
                continue;
            };
            for line in text.lines().skip(1) {
                let f: Vec<&str> = line.split_whitespace().collect();
                let listening = f.get(3) == Some(&"0A");
                let on_port = f
                    .get(1)
                    .and_then(|a| a.rsplit(':').next())
                    .and_then(|p| u16::from_str_radix(p, 16).ok())
                    == Some(port);
                if listening
                    && on_port
                    && let Some(inode) = f.get(9)
                {
                    inodes.push(format!("socket:[{inode}]"));
                }
            }
        }
        if inodes.is_empty() {
            return None;
        }
        let own = std::process::id();
        for entry in std::fs::read_dir("/proc").ok()?.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            if pid == own {
                continue;
            }
            let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else {
                continue;
            };
            for fd in fds.flatten() {
                if let Ok(link) = std::fs::read_link(fd.path())
                    && inodes.iter().any(|i| link.as_os_str() == i.as_str())
                {
                    return Some(pid);
                }
            }
        }
        None
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn stat_fields_are_read_after_the_name_whatever_it_holds() {
            let line = "42 (a b) c) S 1 2 3 4 5 6 7 8 9 10 300 200 0 0";
            assert_eq!(stat_cpu_s(line), Some(500.0 / ticks()));
            assert_eq!(stat_cpu_s("42 (x) S 1"), None);
        }

        #[test]
        fn this_process_has_cpu_time_and_the_machine_busy_time() {
            assert!(process_cpu_s(None).is_some());
            assert!(machine_busy_s().is_some());
            assert!(cpus_busy_s(&[0]).is_some());
            assert_eq!(cpus_busy_s(&[usize::MAX]), None);
            assert!(server_threads_cpu_s().is_some());
        }
    }
}

#[cfg(not(target_os = "linux"))]
pub mod proc {
    //! No `/proc`: nothing is read.

    pub fn process_cpu_s(_pid: Option<u32>) -> Option<f64> {
        None
    }
    pub fn server_threads_cpu_s() -> Option<f64> {
        None
    }
    pub fn machine_busy_s() -> Option<f64> {
        None
    }
    pub fn cpus_busy_s(_cpus: &[usize]) -> Option<f64> {
        None
    }
    pub fn listener_pid(_port: u16) -> Option<u32> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(client: f64, server: Option<f64>, busy: Option<f64>, pinned: bool) -> RowCpu {
        RowCpu {
            wall_s: 2.0,
            client_cpu_s: client * 2.0,
            server_cpu_s: server.map(|s| s * 2.0),
            machine_busy_s: busy.map(|b| b * 2.0),
            client_cores_busy_s: pinned.then_some(client * 2.0),
            cpus: 2,
            client_cores: if pinned { 1 } else { 2 },
            pinned,
            client_bound: None,
        }
    }

    #[test]
    fn pinned_the_client_is_bound_when_its_own_core_is_full() {
        assert_eq!(
            client_bound(&cpu(0.95, Some(0.5), Some(1.5), true)),
            Some(true)
        );
        assert_eq!(client_bound(&cpu(0.90, None, None, true)), Some(true));
        assert_eq!(
            client_bound(&cpu(0.85, Some(1.0), Some(2.0), true)),
            Some(false)
        );
        // Its core full, but of other processes' work: short of CPU, bound or not unknown.
        let mut crowded = cpu(0.5, Some(0.5), Some(2.0), true);
        crowded.client_cores_busy_s = Some(1.96);
        assert_eq!(client_bound(&crowded), None);
        crowded.client_cores_busy_s = None;
        assert_eq!(client_bound(&crowded), None);
    }

    #[test]
    fn sharing_the_cores_the_client_is_bound_on_a_full_machine_when_it_spends_at_least_the_server()
    {
        // The reference on two shared cores: the client takes more than the server.
        assert_eq!(
            client_bound(&cpu(1.0, Some(0.9), Some(1.95), false)),
            Some(true)
        );
        assert_eq!(
            client_bound(&cpu(0.9, Some(0.9), Some(1.8), false)),
            Some(true)
        );
        // A slower server takes more than the client: the server sets the rate.
        assert_eq!(
            client_bound(&cpu(0.8, Some(1.1), Some(1.95), false)),
            Some(false)
        );
        // The machine had idle CPU: nobody was short of it.
        assert_eq!(
            client_bound(&cpu(1.0, Some(0.5), Some(1.7), false)),
            Some(false)
        );
        // The client alone filling both cores.
        assert_eq!(client_bound(&cpu(1.85, None, None, false)), Some(true));
    }

    #[test]
    fn what_cannot_be_read_is_inconclusive_not_unbound() {
        assert_eq!(client_bound(&cpu(1.0, None, Some(1.95), false)), None);
        assert_eq!(client_bound(&cpu(1.0, Some(0.5), None, false)), None);
        let mut none = cpu(1.0, Some(0.5), Some(2.0), false);
        none.wall_s = 0.0;
        assert_eq!(client_bound(&none), None);
    }

    #[test]
    fn two_phases_combine_into_one_reading() {
        let a = cpu(1.0, Some(0.9), Some(1.95), false);
        let b = cpu(0.5, Some(1.3), Some(1.95), false);
        let both = a.combine(&b);
        assert_eq!(both.wall_s, 4.0);
        assert_eq!(both.client_cores_used(), Some(0.75));
        assert_eq!(both.server_cores_used(), Some(1.1));
        assert_eq!(both.client_bound, Some(false));
        let unknown = a.combine(&cpu(0.5, None, Some(1.95), false));
        assert_eq!(unknown.server_cpu_s, None);
        assert_eq!(unknown.client_bound, None);
    }
}
