//! An email channel's messages: one per flag and transition, so each
//! flag is one thread in the team's mailbox — the raise opens it with a
//! `Message-ID` derived from the flag and the console's host alone (so
//! every replica, and every retry, names it the same), and every later
//! transition answers it (`In-Reply-To`, `References`). A plain-text and
//! an HTML part. The recipients are the channel's endpoint: one address
//! or a short comma-separated list, each checked as a person's own
//! address is (`review::mail::parse_email`).

use super::{FlagNotice, Notice, Transition};
use crate::review::mail::{BadEmail, escape, parse_email};
use serde::{Deserialize, Serialize};

/// At most this many recipients: a channel is a team's list or alias,
/// not a mailing.
pub const MAX_RECIPIENTS: usize = 10;

/// A channel's recipients, refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RecipientsError {
    #[error("Give the team's email address (or up to 10, separated by commas).")]
    Empty,
    #[error("At most 10 addresses, separated by commas.")]
    TooMany,
    #[error("{0}")]
    Bad(#[from] BadEmail),
}

/// The recipients of an endpoint as stored: trimmed, joined by `, `.
/// Control characters are refused with everything not a plain address,
/// so nothing a header could carry besides them gets through.
pub fn recipients(raw: &str) -> Result<String, RecipientsError> {
    let mut out = Vec::new();
    for part in raw.split(',') {
        if let Some(a) = parse_email(part)? {
            out.push(a);
        }
    }
    match out.len() {
        0 => Err(RecipientsError::Empty),
        n if n > MAX_RECIPIENTS => Err(RecipientsError::TooMany),
        _ => Ok(out.join(", ")),
    }
}

/// One message, as queued (the recipients are the channel's, added when
/// sent: an edited channel's next message goes to its new address).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlagMail {
    pub subject: String,
    pub text: String,
    pub html: String,
    pub message_id: String,
    pub in_reply_to: Option<String>,
}

/// The host a flag's message ids carry: its page's, or a name of our own
/// for a flag with none (a test message).
pub(super) fn host_of(f: &FlagNotice) -> String {
    url::Url::parse(&f.url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_else(|| "streamkeeper.invalid".to_owned())
}

/// The `Message-ID` of a flag's thread: its raise's. The flag's onset
/// (stored with it: the same on every replica and retry) is part of it,
/// as a flag's id alone repeats once a database is made anew under the
/// same address, and a mailbox drops a message whose id it has seen.
pub fn thread_id(f: &FlagNotice) -> String {
    format!("<streamkeeper.flag-{}.{}@{}>", f.id, f.onset_ms, host_of(f))
}

/// A flag's message for one transition; `now_ms` makes a later
/// message's own id unique (it is stored with the delivery, so a retry
/// sends the same).
pub fn message(f: &FlagNotice, t: Transition, now_ms: i64) -> FlagMail {
    let thread = thread_id(f);
    let (message_id, in_reply_to) = match t {
        Transition::Raise => (thread, None),
        _ => (
            format!(
                "<streamkeeper.flag-{}.{}.{}.{now_ms}@{}>",
                f.id,
                f.onset_ms,
                t.as_str(),
                host_of(f)
            ),
            Some(thread),
        ),
    };
    let line = f.line(t);
    let owner = f.team.as_deref().unwrap_or("unowned (platform team)");
    let text = format!(
        "{line}\n\nCluster: {}\n{}: {}\nKind: {}\nOwner: {owner}\n\nThe flag in Streamkeeper: {}\n",
        f.cluster, f.subject_kind, f.subject, f.kind, f.url
    );
    let html = format!(
        "<!DOCTYPE html><html><body><p><strong>{}</strong></p><p>{}</p><ul><li>Cluster: {}</li><li>{}: {}</li><li>Kind: {}</li><li>Owner: {}</li></ul><p><a href=\"{}\">The flag in Streamkeeper</a></p></body></html>",
        escape(&line),
        escape(&f.reason),
        escape(&f.cluster),
        escape(&f.subject_kind),
        escape(&f.subject),
        escape(&f.kind),
        escape(owner),
        escape(&f.url),
    );
    FlagMail {
        // A subject is one line: a reason's line breaks would end it.
        subject: line.replace(['\r', '\n'], " "),
        text,
        html,
        message_id,
        in_reply_to,
    }
}

/// The messages of a notice, one per flag.
pub fn messages(n: &Notice, now_ms: i64) -> Vec<FlagMail> {
    n.flags
        .iter()
        .map(|f| message(f, n.transition, now_ms))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flag(id: i64) -> FlagNotice {
        FlagNotice {
            id,
            cluster: "prod".into(),
            subject_kind: "group".into(),
            subject: "billing<x>".into(),
            kind: "STOP".into(),
            was: None,
            reason: "no commits\r\nBcc: evil@example.com".into(),
            team: Some("payments".into()),
            url: format!("https://sk.example.com:8443/flags/{id}"),
            onset_ms: 0,
            topics: vec!["orders".into()],
            label_topics: None,
        }
    }

    #[test]
    fn a_flag_is_one_thread_its_raise_opening_it() {
        let raise = message(&flag(7), Transition::Raise, 1);
        let again = message(&flag(7), Transition::Raise, 2);
        assert_eq!(raise.message_id, "<streamkeeper.flag-7.0@sk.example.com>");
        assert_eq!(raise, again, "the same on every replica and retry");
        assert_eq!(raise.in_reply_to, None);
        let resolve = message(&flag(7), Transition::Resolve, 5);
        assert_eq!(
            resolve.in_reply_to.as_deref(),
            Some(raise.message_id.as_str())
        );
        assert_ne!(resolve.message_id, raise.message_id);
        assert_ne!(
            message(&flag(8), Transition::Raise, 1).message_id,
            raise.message_id
        );
    }

    #[test]
    fn the_same_flag_id_in_a_database_made_anew_is_another_thread() {
        let before = flag(7);
        let anew = FlagNotice {
            onset_ms: 1_765_000_000_000,
            ..flag(7)
        };
        for t in [Transition::Raise, Transition::Resolve] {
            assert_ne!(
                message(&before, t, 1).message_id,
                message(&anew, t, 1).message_id,
                "{t:?}"
            );
        }
        assert_eq!(
            message(&anew, Transition::Raise, 1).message_id,
            "<streamkeeper.flag-7.1765000000000@sk.example.com>"
        );
    }

    #[test]
    fn both_parts_tell_the_flag_and_markup_is_escaped() {
        let m = message(&flag(7), Transition::Raise, 1);
        assert!(m.text.contains("https://sk.example.com:8443/flags/7"));
        assert!(m.html.contains("billing&lt;x&gt;") && !m.html.contains("billing<x>"));
        assert!(!m.subject.contains('\n') && !m.subject.contains('\r'));
        let n = Notice {
            transition: Transition::Raise,
            cluster: "prod".into(),
            flags: vec![flag(1), flag(2)],
            by: None,
        };
        assert_eq!(messages(&n, 1).len(), 2, "one per flag: one thread each");
    }

    #[test]
    fn recipients_are_plain_addresses_few_and_without_control_characters() {
        assert_eq!(
            recipients(" oncall@example.com , ops@example.com").as_deref(),
            Ok("oncall@example.com, ops@example.com")
        );
        assert_eq!(recipients(" , "), Err(RecipientsError::Empty));
        assert!(matches!(
            recipients("a@example.com\r\nBcc: b@example.com"),
            Err(RecipientsError::Bad(_))
        ));
        assert!(matches!(
            recipients("Ada <a@example.com>"),
            Err(RecipientsError::Bad(_))
        ));
        let many = ["a@example.com"; 11].join(",");
        assert_eq!(recipients(&many), Err(RecipientsError::TooMany));
    }
}
