//! The raw run as Markdown: one row per target × workload × connection count (pure).

use std::fmt::Write;

use super::pin::Pinning;
use super::report::{RawRow, RawWorkload, is_reference};
use sqsprobe_facts::text::escape::markdown_text;

/// Microseconds with enough digits for loopback latencies (tens of µs) and slow peers alike.
fn us(v: Option<f64>) -> String {
    match v {
        None => "–".to_string(),
        Some(v) if v < 100.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.0}"),
    }
}

fn ratio(r: Option<f64>) -> String {
    r.map_or_else(|| "–".to_string(), |r| format!("{r:.2}"))
}

fn rate(r: f64) -> String {
    if r < 100.0 {
        format!("{r:.1}")
    } else {
        format!("{r:.0}")
    }
}

/// A target's name for a table cell, with its protocol when it is not the default JSON.
pub(crate) fn target_cell(target: &str, protocol: &str) -> String {
    if protocol == "json" {
        markdown_text(target)
    } else {
        format!("{} ({protocol})", markdown_text(target))
    }
}

/// The results table, rows in the order given, and a legend. With a reference server in the
/// run, each row's fraction of it is a column of its own.
pub(crate) fn raw_markdown_table(rows: &[RawRow]) -> String {
    let referenced = rows.iter().any(|r| r.reference_ratio.is_some());
    let with_cpu = rows.iter().any(|r| r.cpu.is_some());
    // With --repeat, each row says which run measured it.
    let repeated = rows.iter().any(|r| r.repeat > 0);
    let mut out = String::new();
    out.push_str(if repeated { "| run " } else { "" });
    out.push_str("| target | workload | conns | req/s | msgs/s | ceiling |");
    out.push_str(if referenced { " vs reference |" } else { "" });
    out.push_str(" vs best no-op | p50 µs | p99 µs | p999 µs | errors | reconnects |");
    out.push_str(if with_cpu {
        " client CPU | server CPU |\n"
    } else {
        "\n"
    });
    out.push_str(if repeated { "|--:" } else { "" });
    out.push_str("|---|---|--:|--:|--:|--:|");
    out.push_str(if referenced { "--:|" } else { "" });
    out.push_str("--:|--:|--:|--:|--:|--:|");
    out.push_str(if with_cpu { "--:|--:|\n" } else { "\n" });
    for r in rows {
        let target = target_cell(&r.target, &r.protocol);
        if repeated {
            let _ = write!(out, "| {} ", r.repeat + 1);
        }
        let _ = write!(
            out,
            "| {target} | {} | {} | {} | {} | {} |",
            r.workload.as_str(),
            r.connections,
            rate(r.requests_per_second),
            rate(r.messages_per_second),
            match r.ceiling_drift {
                Some(d) if r.workload == RawWorkload::Noop => format!("drift {d:.2}"),
                _ => ratio(r.ceiling_ratio),
            },
        );
        if referenced {
            let _ = write!(out, " {} |", ratio(r.reference_ratio));
        }
        let _ = write!(
            out,
            " {} | {} | {} | {} | {} | {} |",
            ratio(r.run_ceiling_ratio),
            us(r.latency.p50_us),
            us(r.latency.p99_us),
            us(r.latency.p999_us),
            r.errors,
            r.reconnects,
        );
        if with_cpu {
            let _ = write!(out, " {} |", cpu_cells(r));
        }
        out.push('\n');
    }
    out.push_str(
        "\nceiling = req/s ÷ the same target's no-op req/s at the same connection count (1.00: the \
         SQS work costs nothing beyond HTTP); the no-op runs before and after the workloads, and \
         its drift is the second phase's rate ÷ the first's; vs best no-op = req/s ÷ the fastest no-op of the \
         run at that count. Latency per request, nearest rank.\n",
    );
    if referenced {
        out.push_str(
            "vs reference = req/s ÷ the reference server's req/s at that count: a bare hyper server \
             in the same run, on the emulator's runtime settings, reading each request and \
             answering a fixed 200 the size of a SendMessage reply (this machine's HTTP limit \
             for this driver), measured before every target and again after them (`reference \
             (end)`); its req/s is the mean of the two.\n",
        );
    }
    if with_cpu {
        out.push_str(
            "client CPU, server CPU = cores' worth each used over the measured phases (1.00: \
             one core all the time; – where it could not be read); `bound`: the client held the \
             row's rate back (its own cores ≥ 90 % busy; or, sharing the cores with the server, \
             the machine ≥ 90 % busy and the client using at least what the server did); `?`: \
             the figures cannot tell (with --pin: the client's cores were full of other \
             processes' work).\n",
        );
    }
    out
}

/// The two CPU cells of a row: the client's cores used (marked when it held the rate back,
/// or when that cannot be told) and the server's.
fn cpu_cells(r: &RawRow) -> String {
    let Some(cpu) = &r.cpu else {
        return "– | –".to_string();
    };
    let mark = match cpu.client_bound {
        Some(true) => " bound",
        Some(false) => "",
        None => " ?",
    };
    format!(
        "{}{mark} | {}",
        ratio(cpu.client_cores_used()),
        ratio(cpu.server_cores_used())
    )
}

/// What the CPU readings say about the run, printed under the table: the pinning, and a
/// warning for every reference measurement the client held back (its rate is then not the
/// machine's limit, and every fraction against it leans towards 1), or that could not tell.
pub(crate) fn cpu_notes(rows: &[RawRow], pinning: Option<&Pinning>) -> String {
    let mut out = String::new();
    if let Some(p) = pinning {
        let _ = writeln!(out, "\n{}.", p.describe());
    }
    let repeated = rows.iter().any(|r| r.repeat > 0);
    for r in rows.iter().filter(|r| is_reference(&r.target)) {
        let Some(cpu) = &r.cpu else { continue };
        let used = ratio(cpu.client_cores_used());
        let run = if repeated {
            format!("run {}, ", r.repeat + 1)
        } else {
            String::new()
        };
        match cpu.client_bound {
            Some(true) => {
                let _ = writeln!(
                    out,
                    "\nwarning: {run}{} × {}: the reference is client-bound (the client used {used} \
                     of {} core(s){}): its rate is the bench client's limit, not the machine's, \
                     and the fractions against it lean towards 1. Run with --pin, or cross-check \
                     with another load generator (scripts/bench-crosscheck).",
                    markdown_text(&r.target),
                    r.connections,
                    cpu.client_cores,
                    if cpu.pinned {
                        ", its own"
                    } else {
                        ", shared with the server"
                    },
                );
            }
            Some(false) => {}
            None => {
                let _ = writeln!(
                    out,
                    "\nnote: {run}{} × {}: whether the client held the reference back cannot be told \
                     (a CPU figure could not be read, or, pinned, the client's cores were full \
                     of other processes' work).",
                    markdown_text(&r.target),
                    r.connections
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::raw::cpu::RowCpu;
    use crate::bench::raw::report::apply_ceilings;
    use crate::bench::raw::report::tests::row;
    use crate::bench::raw::{REFERENCE, REFERENCE_END};

    #[test]
    fn a_reference_in_the_run_adds_its_column() {
        let mut rows = vec![
            row(REFERENCE, RawWorkload::Noop, 4, 100_000.0),
            row("embedded", RawWorkload::Noop, 4, 80_000.0),
            row("embedded", RawWorkload::Send, 4, 60_000.0),
        ];
        apply_ceilings(&mut rows);
        let table = raw_markdown_table(&rows);
        let lines: Vec<&str> = table.lines().collect();
        assert!(lines[0].contains("| ceiling | vs reference | vs best no-op |"));
        assert_eq!(
            lines[2],
            "| reference | noop | 4 | 100000 | 100000 | 1.00 | 1.00 | – | 30.0 | 1000 | 1000 | 0 | 0 |"
        );
        assert_eq!(
            lines[4],
            "| embedded | send | 4 | 60000 | 60000 | 0.75 | 0.60 | 0.75 | 30.0 | 1000 | 1000 | 0 | 0 |"
        );
        assert!(table.contains("vs reference = req/s"));
    }

    #[test]
    fn fractions_are_of_the_reference_at_both_ends_of_the_run() {
        let mut rows = vec![
            row(REFERENCE, RawWorkload::Noop, 4, 110_000.0),
            row("embedded", RawWorkload::Noop, 4, 80_000.0),
            row("embedded", RawWorkload::Send, 4, 60_000.0),
            row(REFERENCE, RawWorkload::Noop, 16, 100_000.0),
            row(REFERENCE_END, RawWorkload::Noop, 4, 90_000.0),
        ];
        apply_ceilings(&mut rows);
        let fraction = |i: usize| rows[i].reference_ratio.unwrap();
        // At 4 connections the reference ran at 110k first and 90k last: the mean, 100k.
        assert!((fraction(0) - 1.1).abs() < 1e-9 && (fraction(4) - 0.9).abs() < 1e-9);
        assert!((fraction(2) - 0.6).abs() < 1e-9);
        // Measured at one end only (16 connections): that measurement.
        assert!((fraction(3) - 1.0).abs() < 1e-9);
        // Neither end of the reference is the fastest SQS server of the run.
        assert!((rows[2].run_ceiling_ratio.unwrap() - 0.75).abs() < 1e-9);
        assert_eq!(rows[4].run_ceiling_ratio, None);
        let table = raw_markdown_table(&rows);
        assert!(
            table.contains("| reference (end) | noop | 4 | 90000 |"),
            "{table}"
        );
    }

    fn cpu(client: f64, server: Option<f64>, pinned: bool, bound: Option<bool>) -> RowCpu {
        RowCpu {
            wall_s: 2.0,
            client_cpu_s: client * 2.0,
            server_cpu_s: server.map(|s| s * 2.0),
            machine_busy_s: Some(3.9),
            client_cores_busy_s: None,
            cpus: 2,
            client_cores: if pinned { 1 } else { 2 },
            pinned,
            client_bound: bound,
        }
    }

    #[test]
    fn cpu_columns_mark_the_client_bound_rows_and_the_notes_warn_of_the_reference() {
        let mut rows = vec![
            row(REFERENCE, RawWorkload::Noop, 4, 100_000.0),
            row("embedded", RawWorkload::Send, 4, 60_000.0),
            row("embedded", RawWorkload::Delete, 4, 50_000.0),
            row(REFERENCE_END, RawWorkload::Noop, 4, 100_000.0),
        ];
        rows[0].cpu = Some(cpu(1.02, Some(0.93), false, Some(true)));
        rows[1].cpu = Some(cpu(0.7, Some(1.25), false, Some(false)));
        rows[3].cpu = Some(cpu(1.0, None, false, None));
        apply_ceilings(&mut rows);
        let table = raw_markdown_table(&rows);
        let lines: Vec<&str> = table.lines().collect();
        assert!(
            lines[0].ends_with("| reconnects | client CPU | server CPU |"),
            "{table}"
        );
        assert!(
            lines[2].ends_with("| 0 | 0 | 1.02 bound | 0.93 |"),
            "{table}"
        );
        assert!(lines[3].ends_with("| 0 | 0 | 0.70 | 1.25 |"), "{table}");
        assert!(lines[4].ends_with("| 0 | 0 | – | – |"), "{table}");
        assert!(lines[5].ends_with("| 0 | 0 | 1.00 ? | – |"), "{table}");
        assert!(table.contains("`bound`: the client held"), "{table}");
        let notes = cpu_notes(&rows, None);
        assert!(
            notes.contains(
                "warning: reference × 4: the reference is client-bound (the client used 1.02 of \
                 2 core(s), shared with the server)"
            ),
            "{notes}"
        );
        assert!(notes.contains("lean towards 1"), "{notes}");
        assert!(
            notes.contains("note: reference (end) × 4: whether the client held"),
            "{notes}"
        );
        assert!(!notes.contains("embedded"), "{notes}");
        assert!(!notes.contains("pinned: the server"), "{notes}");
    }

    #[test]
    fn pinned_runs_say_so_and_a_free_client_gives_no_warning() {
        let mut rows = vec![row(REFERENCE, RawWorkload::Noop, 16, 100_000.0)];
        rows[0].cpu = Some(cpu(0.6, Some(0.99), true, Some(false)));
        let pinning = Pinning {
            server: vec![0],
            client: vec![1],
        };
        let notes = cpu_notes(&rows, Some(&pinning));
        assert_eq!(
            notes,
            "\npinned: the server on CPU 0, the client on CPU 1.\n"
        );
        rows[0].cpu = Some(cpu(0.97, Some(0.99), true, Some(true)));
        let notes = cpu_notes(&rows, Some(&pinning));
        assert!(notes.contains("1 core(s), its own)"), "{notes}");
    }

    #[test]
    fn repeated_runs_number_their_rows() {
        let mut rows = vec![
            row("embedded", RawWorkload::Noop, 4, 50_000.0),
            row("embedded", RawWorkload::Noop, 4, 40_000.0),
        ];
        rows[1].repeat = 1;
        rows[1].target = REFERENCE.into();
        rows[1].cpu = Some(cpu(0.97, Some(0.99), true, Some(true)));
        assert!(cpu_notes(&rows, None).contains("warning: run 2, reference × 4:"));
        let table = raw_markdown_table(&rows);
        let lines: Vec<&str> = table.lines().collect();
        assert!(lines[0].starts_with("| run | target |"), "{table}");
        assert!(lines[2].starts_with("| 1 | embedded | noop |"), "{table}");
        assert!(lines[3].starts_with("| 2 | reference | noop |"), "{table}");
    }

    #[test]
    fn renders_ratios_latencies_and_protocol() {
        let mut rows = vec![
            row("embedded", RawWorkload::Noop, 4, 50_000.0),
            row("embedded", RawWorkload::Cycle, 4, 40_000.0),
            row("sq|lite", RawWorkload::Send, 4, 55.5),
        ];
        rows[2].protocol = "query".into();
        rows[0].ceiling_drift = Some(0.9);
        apply_ceilings(&mut rows);
        let table = raw_markdown_table(&rows);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(
            lines[2],
            "| embedded | noop | 4 | 50000 | 50000 | drift 0.90 | 1.00 | 30.0 | 1000 | 1000 | 0 | 0 |"
        );
        assert_eq!(
            lines[3],
            "| embedded | cycle | 4 | 40000 | 40000 | 0.80 | 0.80 | 30.0 | 1000 | 1000 | 0 | 0 |"
        );
        assert_eq!(
            lines[4],
            "| sq\\|lite (query) | send | 4 | 55.5 | 55.5 | – | 0.00 | 30.0 | 1000 | 1000 | 0 | 0 |"
        );
    }
}
