//! `bench --pin`: the server and the bench's client on separate cores (Linux,
//! `sched_setaffinity`), so neither takes CPU from the other and a saturated client shows as
//! its own cores full. [`split`] is the pure rule; the rest sets affinities.

use serde::{Deserialize, Serialize};

/// Which CPUs the server and the client were given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Pinning {
    pub server: Vec<usize>,
    pub client: Vec<usize>,
}

impl Pinning {
    /// For the table: which CPUs went where.
    pub(crate) fn describe(&self) -> String {
        let list = |c: &[usize]| c.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
        format!(
            "pinned: the server on CPU {}, the client on CPU {}",
            list(&self.server),
            list(&self.client)
        )
    }
}

/// Splits the CPUs the run may use: the first half (rounded up) to the server, the rest to
/// the client. The server gets the odd one: it is the party measured. Refused below two.
pub(crate) fn split(allowed: &[usize]) -> Result<Pinning, String> {
    if allowed.len() < 2 {
        return Err(format!(
            "--pin needs at least 2 CPUs to give the server and the client one each; this run \
             may use {}",
            allowed.len()
        ));
    }
    let mut cpus = allowed.to_vec();
    cpus.sort_unstable();
    let client = cpus.split_off(cpus.len().div_ceil(2));
    Ok(Pinning {
        server: cpus,
        client,
    })
}

#[cfg(target_os = "linux")]
mod os {
    use rustix::process::Pid;
    use rustix::thread::{CpuSet, sched_getaffinity, sched_setaffinity};

    /// The CPUs this process may run on.
    pub(crate) fn allowed() -> Result<Vec<usize>, String> {
        let set = sched_getaffinity(None).map_err(|e| format!("sched_getaffinity: {e}"))?;
        Ok((0..CpuSet::MAX_CPU).filter(|&c| set.is_set(c)).collect())
    }

    fn set_of(cpus: &[usize]) -> CpuSet {
        let mut set = CpuSet::new();
        for &c in cpus {
            set.set(c);
        }
        set
    }

    /// Pins the calling thread (threads it starts inherit it).
    pub(crate) fn this_thread(cpus: &[usize]) -> Result<(), String> {
        sched_setaffinity(None, &set_of(cpus)).map_err(|e| format!("sched_setaffinity: {e}"))
    }

    /// Pins every thread of `pid` (`None`: this process) that exists now.
    pub(crate) fn process(pid: Option<u32>, cpus: &[usize]) -> Result<(), String> {
        let dir = match pid {
            None => "/proc/self/task".to_string(),
            Some(p) => format!("/proc/{p}/task"),
        };
        let tasks = std::fs::read_dir(&dir).map_err(|e| format!("{dir}: {e}"))?;
        let set = set_of(cpus);
        for task in tasks.flatten() {
            let Some(tid) = task
                .file_name()
                .to_str()
                .and_then(|t| t.parse::<i32>().ok())
                .and_then(Pid::from_raw)
            else {
                continue;
            };
            sched_setaffinity(Some(tid), &set)
                .map_err(|e| format!("sched_setaffinity of thread {tid:?} in {dir}: {e}"))?;
        }
        Ok(())
    }
}

#[cfg(not(target_os = "linux"))]
mod os {
    const NOT_HERE: &str = "--pin sets CPU affinities with sched_setaffinity, which only Linux has";

    pub fn allowed() -> Result<Vec<usize>, String> {
        Err(NOT_HERE.into())
    }
    pub fn this_thread(_cpus: &[usize]) -> Result<(), String> {
        Err(NOT_HERE.into())
    }
    pub fn process(_pid: Option<u32>, _cpus: &[usize]) -> Result<(), String> {
        Err(NOT_HERE.into())
    }
}

pub(crate) use os::{allowed, process as pin_process, this_thread as pin_this_thread};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_cpus_give_one_each_and_the_server_the_odd_one() {
        assert_eq!(
            split(&[1, 0]),
            Ok(Pinning {
                server: vec![0],
                client: vec![1]
            })
        );
        assert_eq!(
            split(&[2, 3, 5]),
            Ok(Pinning {
                server: vec![2, 3],
                client: vec![5]
            })
        );
        let err = split(&[0]).unwrap_err();
        assert!(
            err.contains("at least 2 CPUs") && err.contains("may use 1"),
            "{err}"
        );
        assert_eq!(
            split(&[0, 1]).unwrap().describe(),
            "pinned: the server on CPU 0, the client on CPU 1"
        );
    }
}
