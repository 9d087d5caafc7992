//! Leases reconstructed from a case's rows (pure), for the timeline: each message a receive
//! returned is leased from the receive's answer for its `lease_ms`; a later successful call
//! with that handle ends it (a delete, a visibility change to 0) or moves its expiry (a
//! visibility change, drawn as the extension); a newer receive of the same message supersedes
//! it; a call that used the handle after its lease lapsed or was superseded is stale.

use super::super::wording::format_ms;
use super::marks::{Mark, MarkKind, Part, Shape, bar, cap, lane_name, outcome};
use crate::evidence::format::{Call, Completion, Phase};
use crate::evidence::view::CaseView;

/// A lease to draw, in its lane and track among that lane's leases.
#[derive(Debug)]
pub(super) struct DrawnLease {
    pub(super) lane: String,
    pub(super) track: usize,
    pub(super) mark: Mark,
}

/// A call that used a handle whose lease had already ended.
#[derive(Debug)]
pub(super) struct Stale<'a> {
    pub(super) call: &'a Call,
    pub(super) attempt: String,
    pub(super) message: String,
    /// `lapsed` or `superseded`.
    pub(super) why: &'static str,
    pub(super) since: f64,
}

#[derive(Debug, Default)]
pub(super) struct Leases<'a> {
    pub(super) leases: Vec<DrawnLease>,
    pub(super) stale: Vec<Stale<'a>>,
}

/// How a lease ended.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Ending {
    Deleted(f64),
    Released(f64),
    Superseded(f64),
    Lapsed(f64),
    /// Still held when the axis ends.
    Held,
}

/// One use of a handle: the call, its answer time, and for a visibility change the new lease.
struct Use<'a> {
    call: &'a Call,
    sent: f64,
    answered: f64,
    delete: bool,
    new_lease: Option<u64>,
    took_effect: bool,
}

fn uses<'a>(case: &CaseView<'a>, handle: &str, rel: &impl Fn(&str) -> Option<f64>) -> Vec<Use<'a>> {
    let mut uses = Vec::new();
    for &call in &case.calls {
        let (Some(sent), Some(answered)) = (rel(&call.started_at), rel(&call.ended_at)) else {
            continue;
        };
        // A batch entry does what its single operation does (the table in sqs/operations.rs).
        let single = crate::sqs::operations::single(&call.action);
        let delete = single == "DeleteMessage";
        let change = single == "ChangeMessageVisibility";
        if !delete && !change {
            continue;
        }
        if call.handle_digest.as_deref() == Some(handle) {
            uses.push(Use {
                call,
                sent,
                answered,
                delete,
                new_lease: call.lease_ms,
                took_effect: call.completion == Completion::Ok,
            });
        }
        for e in &call.entries {
            if e.handle_digest.as_deref() == Some(handle) {
                uses.push(Use {
                    call,
                    sent,
                    answered,
                    delete,
                    new_lease: e.lease_ms,
                    took_effect: call.completion == Completion::Ok && e.result == "successful",
                });
            }
        }
    }
    uses.sort_by(|a, b| a.sent.total_cmp(&b.sent));
    uses
}

/// Every lease the case's receives took, how each ended, and the calls that used a handle
/// after its lease ended.
pub(super) fn leases<'a>(
    case: &CaseView<'a>,
    rel: &impl Fn(&str) -> Option<f64>,
    span: f64,
) -> Leases<'a> {
    let mut out = Leases::default();
    // Deliveries of each message, by receive answer time, to find supersessions.
    let mut deliveries: Vec<(&str, &str, f64)> = Vec::new();
    for call in &case.calls {
        if call.action != "ReceiveMessage" {
            continue;
        }
        let Some(at) = rel(&call.ended_at) else {
            continue;
        };
        for m in &call.messages {
            if let Some(h) = &m.handle_digest {
                deliveries.push((&m.message_id, h, at));
            }
        }
    }
    let mut tracks: Vec<(String, String)> = Vec::new();
    for &call in &case.calls {
        let Some(lease_ms) = call.lease_ms.filter(|_| call.action == "ReceiveMessage") else {
            continue;
        };
        let Some(start) = rel(&call.ended_at) else {
            continue;
        };
        let lane = lane_name(call);
        let holder = call.attempt.clone().unwrap_or_else(|| {
            if call.phase == Phase::Observe {
                "the observation".to_string()
            } else {
                "a receive".to_string()
            }
        });
        for m in &call.messages {
            let Some(handle) = m.handle_digest.as_deref() else {
                continue;
            };
            let label = m.message.as_deref().unwrap_or(&m.message_id).to_string();
            let track = match tracks.iter().position(|t| t.0 == lane && t.1 == label) {
                Some(t) => tracks[..t].iter().filter(|x| x.0 == lane).count(),
                None => {
                    tracks.push((lane.clone(), label.clone()));
                    tracks.iter().filter(|x| x.0 == lane).count() - 1
                }
            };
            let superseded = deliveries
                .iter()
                .filter(|(id, h, at)| *id == m.message_id && *h != handle && *at > start)
                .map(|d| d.2)
                .reduce(f64::min);
            let mut expiry = start + lease_ms as f64;
            let mut seg_start = start;
            let mut parts = Vec::new();
            let mut ending = None;
            let mut notes = Vec::new();
            let mut extended = false;
            for u in uses(case, handle, rel) {
                if u.answered < start {
                    continue;
                }
                let lapsed_at = superseded.map_or(expiry, |s| s.min(expiry));
                if ending.is_none() && u.sent >= lapsed_at {
                    ending = Some(if superseded.is_some_and(|s| s < expiry) {
                        Ending::Superseded(lapsed_at)
                    } else {
                        Ending::Lapsed(lapsed_at)
                    });
                    parts.push(bar(seg_start, lapsed_at, extended));
                    parts.push(cap(lapsed_at, "lapse"));
                }
                match ending {
                    Some(end @ (Ending::Lapsed(since) | Ending::Superseded(since))) => {
                        let why = if matches!(end, Ending::Superseded(_)) {
                            "superseded"
                        } else {
                            "lapsed"
                        };
                        out.stale.push(Stale {
                            call: u.call,
                            attempt: holder.clone(),
                            message: label.clone(),
                            why,
                            since,
                        });
                        parts.push(Part {
                            shape: Shape::Dashed,
                            track: 0,
                            start: since,
                            end: u.sent,
                            class: "kept",
                        });
                        continue;
                    }
                    Some(_) => continue,
                    None => {}
                }
                if !u.took_effect {
                    notes.push(format!(
                        "{} at +{}: {} ({}), the lease is drawn as if it did not take effect",
                        u.call.action,
                        format_ms(u.sent as u64),
                        outcome(u.call),
                        match u.call.completion {
                            Completion::Info => "outcome unknown",
                            _ => "refused",
                        }
                    ));
                    continue;
                }
                let at = u.answered;
                match (u.delete, u.new_lease) {
                    (true, _) | (false, Some(0)) => {
                        parts.push(bar(seg_start, at, extended));
                        parts.push(cap(at, "ended"));
                        ending = Some(if u.delete {
                            Ending::Deleted(at)
                        } else {
                            Ending::Released(at)
                        });
                    }
                    (false, Some(ms)) => {
                        parts.push(bar(seg_start, at, extended));
                        notes.push(format!(
                            "{} at +{}: lease moved from +{} to +{}",
                            u.call.action,
                            format_ms(at as u64),
                            format_ms(expiry as u64),
                            format_ms((at + ms as f64) as u64)
                        ));
                        // Where the lease would have lapsed without the change.
                        parts.push(cap(expiry, "was"));
                        seg_start = at;
                        expiry = at + ms as f64;
                        extended = true;
                    }
                    (false, None) => {}
                }
            }
            let ending = ending.unwrap_or(match superseded {
                Some(s) if s < expiry => Ending::Superseded(s),
                _ if expiry <= span => Ending::Lapsed(expiry),
                _ => Ending::Held,
            });
            let kind = if extended { "extended" } else { "held" };
            match ending {
                Ending::Lapsed(t) | Ending::Superseded(t)
                    if !parts
                        .iter()
                        .any(|p| p.shape == Shape::Cap && p.class == "lapse") =>
                {
                    parts.push(bar(seg_start, t, extended));
                    parts.push(cap(t, "lapse"));
                }
                Ending::Held => parts.push(bar(seg_start, span, extended)),
                _ => {}
            }
            let how = match ending {
                Ending::Deleted(t) => format!("deleted at +{}", format_ms(t as u64)),
                Ending::Released(t) => format!("released at +{}", format_ms(t as u64)),
                Ending::Superseded(t) => format!("superseded at +{}", format_ms(t as u64)),
                Ending::Lapsed(t) => format!("lapsed at +{}", format_ms(t as u64)),
                Ending::Held => format!("held to +{}", format_ms(expiry as u64)),
            };
            let short_how = match ending {
                Ending::Deleted(_) => "deleted".to_string(),
                Ending::Released(_) => "released".to_string(),
                Ending::Superseded(_) => "superseded".to_string(),
                Ending::Lapsed(_) => "lapsed".to_string(),
                Ending::Held => format!("to +{}", format_ms(expiry as u64)),
            };
            let who = match &call.attempt {
                Some(a) => format!("{a}'s lease"),
                None => "lease".to_string(),
            };
            let mut title = format!(
                "{who} on {label}: {} from the receive's answer at +{}, {how}{}\nhandle sha256 {handle}\nreceive request id {}",
                format_ms(lease_ms),
                format_ms(start as u64),
                if extended { " (extended)" } else { "" },
                call.request_id.as_deref().unwrap_or("none"),
            );
            for note in notes {
                title.push('\n');
                title.push_str(&note);
            }
            out.leases.push(DrawnLease {
                lane: lane.clone(),
                track,
                mark: Mark {
                    kind: MarkKind::Lease,
                    class: format!("lease {kind}"),
                    parts,
                    label: Some(format!(
                        "{who} on {label} · {}{} · {short_how}",
                        format_ms(lease_ms),
                        if extended { ", extended" } else { "" }
                    )),
                    priority: 1,
                    title,
                    data: vec![
                        ("message", label.clone()),
                        (
                            "ended",
                            short_how.split(' ').next().unwrap_or("").to_string(),
                        ),
                    ],
                },
            });
        }
    }
    out
}
