//! A case's leases drawn for the timeline (pure), from the one reading of its calls that the
//! judge makes (`classify::leases` over `classify::ack_history`): each delivery's lease from
//! the receive's answer, moved by the visibility changes that took, capped where it ended
//! (deleted, released, lapsed, superseded) or running on past the axis (held); and every use
//! of a handle the reading did not place in its lease (`late`, `superseded`, `other_attempt`,
//! `unsure`), marked with that class. The report draws what the checker decided; it does not
//! read the calls a second way.

use super::super::wording::format_ms;
use super::marks::{Mark, MarkKind, Part, Shape, bar, cap, lane_name, outcome};
use sqsprobe_core::classify::ack_history::CallHistory;
use sqsprobe_core::classify::leases::{AckClass, LeaseEnd, UseAnswer};
use sqsprobe_core::evidence::format::{Call, Completion, Phase};
use sqsprobe_core::evidence::view::CaseView;

/// A lease to draw, in its lane and track among that lane's leases.
#[derive(Debug)]
pub(super) struct DrawnLease {
    pub(super) lane: String,
    pub(super) track: usize,
    pub(super) mark: Mark,
}

/// A call that used a handle outside its attempt's lease, as the reading classed it.
#[derive(Debug)]
pub(super) struct OutsideUse<'a> {
    pub(super) call: &'a Call,
    pub(super) attempt: String,
    pub(super) message: String,
    pub(super) class: AckClass,
    /// When the attempt's lease had ended (or, when the reading cannot say, when the newer
    /// attempt came).
    pub(super) since: Option<f64>,
}

#[derive(Debug, Default)]
pub(super) struct Leases<'a> {
    pub(super) leases: Vec<DrawnLease>,
    pub(super) outside: Vec<OutsideUse<'a>>,
}

/// Every lease the case's receives took, how each ended, and the calls that used a handle
/// outside its lease.
pub(super) fn leases<'a>(
    case: &CaseView<'a>,
    rel: &impl Fn(&str) -> Option<f64>,
    span: f64,
) -> Leases<'a> {
    let mut out = Leases::default();
    let history = CallHistory::of(&case.calls, rel);
    let reading = history.read(span);
    let mut tracks: Vec<(String, String)> = Vec::new();
    for lease in &reading.leases {
        let (call, index) = history.delivery_rows[lease.delivery];
        let m = &call.messages[index];
        let handle = history.deliveries[lease.delivery].handle;
        let lane = lane_name(call);
        let holder = call.attempt.clone().unwrap_or_else(|| {
            if call.phase == Phase::Observe {
                "the observation".to_string()
            } else {
                "a receive".to_string()
            }
        });
        let label = m.message.as_deref().unwrap_or(&m.message_id).to_string();
        let track = match tracks.iter().position(|t| t.0 == lane && t.1 == label) {
            Some(t) => tracks[..t].iter().filter(|x| x.0 == lane).count(),
            None => {
                tracks.push((lane.clone(), label.clone()));
                tracks.iter().filter(|x| x.0 == lane).count() - 1
            }
        };

        let mut parts = Vec::new();
        let mut notes = Vec::new();
        let mut seg_start = lease.start;
        let mut extended = false;
        for ext in &lease.extensions {
            parts.push(bar(seg_start, ext.at, extended));
            // Where the lease would have lapsed without the change.
            parts.push(cap(ext.from, "was"));
            notes.push(format!(
                "{} at +{}: lease moved from +{} to +{}",
                history.use_rows[ext.by].0.action,
                format_ms(ext.at as u64),
                format_ms(ext.from as u64),
                format_ms(ext.to as u64)
            ));
            seg_start = ext.at;
            extended = true;
        }
        match lease.end {
            LeaseEnd::Deleted(t) | LeaseEnd::Released(t) => {
                parts.push(bar(seg_start, t, extended));
                parts.push(cap(t, "ended"));
            }
            LeaseEnd::Lapsed(t) | LeaseEnd::Superseded(t) => {
                parts.push(bar(seg_start, t, extended));
                parts.push(cap(t, "lapse"));
            }
            LeaseEnd::Held => parts.push(bar(seg_start, span, extended)),
        }

        for (u, judged) in reading.uses.iter().enumerate() {
            if judged.delivery != Some(lease.delivery) {
                continue;
            }
            let (use_call, _, _) = history.use_rows[u];
            let sent = history.uses[u].at.from;
            if history.uses[u].answer != UseAnswer::Took {
                notes.push(format!(
                    "{} at +{}: {} ({}), the lease is drawn as if it did not take effect",
                    use_call.action,
                    format_ms(sent.max(0.0) as u64),
                    outcome(use_call),
                    match use_call.completion {
                        Completion::Info => "outcome unknown",
                        _ => "refused",
                    }
                ));
            }
            if !matches!(
                judged.class,
                AckClass::Late | AckClass::Superseded | AckClass::OtherAttempt | AckClass::Unsure
            ) {
                continue;
            }
            // The handle is drawn kept from where its lease ended (or, when the reading can
            // say no more, from where the newer attempt or the lapse put it).
            let ended_at = match lease.end {
                LeaseEnd::Held => None,
                LeaseEnd::Deleted(t)
                | LeaseEnd::Released(t)
                | LeaseEnd::Superseded(t)
                | LeaseEnd::Lapsed(t) => Some(t),
            };
            if let Some(since) = ended_at.or(judged.since) {
                parts.push(Part {
                    shape: Shape::Dashed,
                    track: 0,
                    start: since,
                    end: sent.max(since),
                    class: "kept",
                });
            }
            out.outside.push(OutsideUse {
                call: use_call,
                attempt: holder.clone(),
                message: label.clone(),
                class: judged.class,
                since: ended_at.or(judged.since),
            });
        }

        let expiry = lease.expiry.unwrap_or(span);
        let how = match lease.end {
            LeaseEnd::Held => format!("held to +{}", format_ms(expiry as u64)),
            end @ (LeaseEnd::Deleted(t)
            | LeaseEnd::Released(t)
            | LeaseEnd::Superseded(t)
            | LeaseEnd::Lapsed(t)) => format!("{} at +{}", end.as_str(), format_ms(t as u64)),
        };
        let short_how = match lease.end {
            LeaseEnd::Held => format!("to +{}", format_ms(expiry as u64)),
            end => end.as_str().to_string(),
        };
        let lease_ms = history.deliveries[lease.delivery].lease_ms;
        let length = lease_ms.map_or_else(|| "unknown".to_string(), format_ms);
        let who = match &call.attempt {
            Some(a) => format!("{a}'s lease"),
            None => "lease".to_string(),
        };
        let mut title = format!(
            "{who} on {label}: {length} from the receive's answer at +{}, {how}{}\nhandle sha256 {handle}\nreceive request id {}",
            format_ms(lease.start as u64),
            if extended { " (extended)" } else { "" },
            call.request_id.as_deref().unwrap_or("none"),
        );
        for note in notes {
            title.push('\n');
            title.push_str(&note);
        }
        let kind = if extended { "extended" } else { "held" };
        out.leases.push(DrawnLease {
            lane,
            track,
            mark: Mark {
                kind: MarkKind::Lease,
                class: format!("lease {kind}"),
                parts,
                label: Some(format!(
                    "{who} on {label} · {length}{} · {short_how}",
                    if extended { ", extended" } else { "" }
                )),
                priority: 1,
                title,
                data: vec![
                    ("message", label),
                    ("ended", lease.end.as_str().to_string()),
                ],
            },
        });
    }
    out
}
