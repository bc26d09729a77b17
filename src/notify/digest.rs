//! An email channel's digest: when more than [`DIGEST_OVER`] flag
//! messages are due to one email channel in one delivery round (a burst:
//! a broker gone, a deploy that stopped forty consumers), they are one
//! message listing them — "Streamkeeper: 37 flags raised, 2 resolved on
//! cluster prod" — each with its line and its link, as PagerDuty and
//! Alertmanager group a burst, rather than a mail per flag. The digest is
//! one delivery listing every flag it tells, so each flag's delivery log
//! names it ("in digest <Message-ID>"); the flags and their transitions
//! are kept in the body for that, and for when a raise was notified.

use super::email::{FlagMail, host_of};
use super::{Notice, Transition};
use crate::review::mail::escape;
use serde::{Deserialize, Serialize};

/// More flag messages than this to one email channel in one round are
/// sent as one digest; this many or fewer go one per flag, threaded.
pub const DIGEST_OVER: usize = 5;

/// The transition a digest's delivery is recorded under.
pub const DIGEST: &str = "digest";

/// One flag a digest tells, and which of its transitions.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Told {
    pub id: i64,
    pub transition: Transition,
}

/// A digest as queued: a mail like a flag's (the sender reads only
/// that), and the flags it tells.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Digest {
    #[serde(flatten)]
    pub mail: FlagMail,
    pub flags: Vec<Told>,
}

/// Whether these notices, due to one email channel in one round, are a
/// burst to send as one digest.
pub fn is_burst(notices: &[Notice]) -> bool {
    notices.iter().map(|n| n.flags.len()).sum::<usize>() > DIGEST_OVER
}

/// How a count of flags reads in a digest's subject: "raised",
/// "resolved" (a headline's "worse" or "news" would not read after a number).
fn words(t: Transition) -> &'static str {
    match t {
        Transition::Raise => "raised",
        Transition::Worsen => "worsened",
        Transition::Restart => "with news",
        Transition::Acknowledge => "acknowledged",
        Transition::Resolve => "resolved",
        Transition::Repeat => "still unacknowledged",
    }
}

/// "37 flags raised, 2 resolved": the counts per transition, in the order
/// the transitions first appear.
fn counts(notices: &[Notice]) -> String {
    let mut per: Vec<(Transition, usize)> = Vec::new();
    for n in notices {
        match per.iter_mut().find(|(t, _)| *t == n.transition) {
            Some((_, c)) => *c += n.flags.len(),
            None => per.push((n.transition, n.flags.len())),
        }
    }
    per.iter()
        .enumerate()
        .map(|(i, (t, c))| match (i, c) {
            (0, 1) => format!("1 flag {}", words(*t)),
            (0, _) => format!("{c} flags {}", words(*t)),
            _ => format!("{c} {}", words(*t)),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// "cluster prod" or "clusters prod, dev".
fn clusters(notices: &[Notice]) -> String {
    let mut names: Vec<&str> = Vec::new();
    for n in notices {
        if !names.contains(&n.cluster.as_str()) {
            names.push(&n.cluster);
        }
    }
    match names[..] {
        [one] => format!("cluster {one}"),
        _ => format!("clusters {}", names.join(", ")),
    }
}

/// The digest of a round's notices to channel `channel_id` (never empty).
/// Its `Message-ID` names the channel, the round and its first flag: one
/// of its own, kept with the delivery so a retry sends the same.
pub fn digest(channel_id: i64, notices: &[Notice], now_ms: i64) -> Digest {
    let first = notices.iter().flat_map(|n| n.flags.first()).next();
    let host = first.map_or_else(|| "streamkeeper.invalid".to_owned(), host_of);
    let first_id = first.map_or(0, |f| f.id);
    let subject = format!("Streamkeeper: {} on {}", counts(notices), clusters(notices));
    let mut text = format!("{subject}\n");
    let mut html = format!(
        "<!DOCTYPE html><html><body><p><strong>{}</strong></p>",
        escape(&subject)
    );
    let mut flags = Vec::new();
    for n in notices {
        let head = format!(
            "{} on cluster {} ({})",
            capitalized(words(n.transition)),
            n.cluster,
            n.flags.len()
        );
        text.push_str(&format!("\n{head}:\n"));
        html.push_str(&format!("\n<h3>{}</h3><ul>\n", escape(&head)));
        for f in &n.flags {
            let line = f.line(n.transition);
            text.push_str(&format!("- {line}\n  {}\n", f.url));
            html.push_str(&format!(
                "<li><a href=\"{}\">{}</a></li>\n",
                escape(&f.url),
                escape(&line)
            ));
            flags.push(Told {
                id: f.id,
                transition: n.transition,
            });
        }
        html.push_str("</ul>");
    }
    text.push_str(&format!(
        "\nOne message for {} flags, sent as a digest: more than {DIGEST_OVER} were due at once.\n",
        flags.len()
    ));
    html.push_str("</body></html>");
    Digest {
        mail: FlagMail {
            // A subject is one line: a cluster's name cannot break it.
            subject: subject.replace(['\r', '\n'], " "),
            text,
            html,
            message_id: format!("<streamkeeper.digest-{channel_id}.{now_ms}.{first_id}@{host}>"),
            in_reply_to: None,
        },
        flags,
    }
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|h| h.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// The flags a queued digest told raised (when it is delivered, they
/// were notified); none for a body that is not a digest.
pub fn raised(body: &serde_json::Value) -> Vec<i64> {
    serde_json::from_value::<Digest>(body.clone())
        .map(|d| {
            d.flags
                .iter()
                .filter(|t| t.transition == Transition::Raise)
                .map(|t| t.id)
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::FlagNotice;
    use crate::notify::notice::tests::flag;

    fn notice(t: Transition, cluster: &str, ids: std::ops::Range<i64>) -> Notice {
        Notice {
            transition: t,
            cluster: cluster.into(),
            flags: ids
                .map(|i| FlagNotice {
                    cluster: cluster.into(),
                    ..flag(i, &format!("g{i}"), "STOP")
                })
                .collect(),
            by: None,
        }
    }

    #[test]
    fn more_than_five_flags_in_a_round_are_a_burst() {
        assert!(!is_burst(&[notice(Transition::Raise, "prod", 1..6)]));
        assert!(is_burst(&[notice(Transition::Raise, "prod", 1..7)]));
        assert!(is_burst(&[
            notice(Transition::Raise, "prod", 1..4),
            notice(Transition::Resolve, "prod", 4..7),
        ]));
    }

    #[test]
    fn the_subject_counts_each_transition_and_names_the_cluster() {
        let d = digest(
            3,
            &[
                notice(Transition::Raise, "prod", 1..38),
                notice(Transition::Resolve, "prod", 40..42),
            ],
            1_765_000_000_000,
        );
        assert_eq!(
            d.mail.subject,
            "Streamkeeper: 37 flags raised, 2 resolved on cluster prod"
        );
        let two = digest(
            3,
            &[
                notice(Transition::Resolve, "prod", 1..2),
                notice(Transition::Raise, "dev", 2..8),
            ],
            0,
        );
        assert_eq!(
            two.mail.subject,
            "Streamkeeper: 1 flag resolved, 6 raised on clusters prod, dev"
        );
    }

    #[test]
    fn every_flag_is_listed_with_its_link_in_both_parts() {
        let mut burst = notice(Transition::Raise, "prod", 1..7);
        burst.flags[0].subject = "billing<x>".into();
        let d = digest(3, &[burst], 1_765_000_000_000);
        for i in 1..7 {
            let url = format!("https://sk.example/flags/{i}");
            assert!(d.mail.text.contains(&url), "{}", d.mail.text);
            assert!(d.mail.html.contains(&format!("href=\"{url}\"")));
        }
        assert!(d.mail.html.contains("billing&lt;x&gt;") && !d.mail.html.contains("billing<x>"));
        assert_eq!(
            d.mail.message_id,
            "<streamkeeper.digest-3.1765000000000.1@sk.example>"
        );
        assert_eq!(d.mail.in_reply_to, None, "a thread of its own");
        assert_eq!(d.flags.len(), 6);
    }

    #[test]
    fn a_queued_digest_reads_back_its_raised_flags_and_as_a_mail() {
        let d = digest(
            3,
            &[
                notice(Transition::Raise, "prod", 1..5),
                notice(Transition::Resolve, "prod", 5..8),
            ],
            0,
        );
        let body = serde_json::to_value(&d).expect("json");
        assert_eq!(raised(&body), [1, 2, 3, 4]);
        let mail: FlagMail = serde_json::from_value(body).expect("a mail");
        assert_eq!(mail, d.mail, "the sender reads it as any message");
        assert!(raised(&serde_json::json!({"subject": "x"})).is_empty());
    }
}
