//! What a person is told by email about a review item, and to whom it may
//! go: the rules, with no IO. A message names the item, says what happened
//! and links to the item's page, where everything (approving included)
//! needs a signed-in session: a link carries no token, nothing in a
//! message acts on its own. Messages about one item share one thread: the
//! first has the thread's `Message-ID`, every later one answers it.

/// Why a person is written to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MailEvent<'a> {
    /// The item waits for this approver (proposed, edited, or back in
    /// review on a moved base).
    Waiting {
        verdict: &'a str,
        /// Consumer groups that could not read what the change writes;
        /// `None` when no check says (a connector, a check not found):
        /// then the message says nothing rather than "none".
        breaking: Option<&'a [String]>,
        by: &'a str,
    },
    /// An approval; `done` when it was the last one needed.
    Approved {
        by: &'a str,
        done: bool,
    },
    Rejected {
        by: &'a str,
        reason: &'a str,
    },
    Applied,
    ApplyFailed {
        why: &'a str,
    },
}

/// Which of a person's choices an event falls under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interest {
    /// "Items that wait for me".
    Waiting,
    /// "What becomes of my items".
    Outcomes,
}

impl MailEvent<'_> {
    pub fn interest(&self) -> Interest {
        match self {
            MailEvent::Waiting { .. } => Interest::Waiting,
            _ => Interest::Outcomes,
        }
    }

    /// A short name, for the delivery's transition.
    pub fn name(&self) -> &'static str {
        match self {
            MailEvent::Waiting { .. } => "waiting",
            MailEvent::Approved { .. } => "approved",
            MailEvent::Rejected { .. } => "rejected",
            MailEvent::Applied => "applied",
            MailEvent::ApplyFailed { .. } => "apply-failed",
        }
    }
}

/// The item a message is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ItemRef<'a> {
    pub id: i64,
    pub title: &'a str,
    pub revision: i32,
}

/// A message, ready for the mail server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mail {
    pub subject: String,
    pub text: String,
    pub html: String,
    pub message_id: String,
    /// The thread's first message, for `In-Reply-To` and `References`.
    pub in_reply_to: Option<String>,
}

/// The `Message-ID` of an item's thread: its first message's.
pub fn thread_id(item: i64, host: &str) -> String {
    format!("<review-{item}@{host}>")
}

/// The link that opens an item: the console's address and the item's
/// page, nothing else (no token, no query).
pub fn item_link(public_url: &str, item: i64) -> String {
    format!("{}/review/{item}", public_url.trim_end_matches('/'))
}

/// The message for `event`. `nonce` makes each message's id unique
/// (random, from the caller); the first waiting message of revision 1
/// opens the thread with the thread's own id.
pub fn render(
    item: ItemRef<'_>,
    event: &MailEvent<'_>,
    public_url: &str,
    host: &str,
    nonce: u64,
) -> Mail {
    let link = item_link(public_url, item.id);
    let (subject, lines) = words(item, event);
    let opens = item.revision == 1 && matches!(event, MailEvent::Waiting { .. });
    let thread = thread_id(item.id, host);
    let (message_id, in_reply_to) = if opens {
        (thread, None)
    } else {
        (
            format!("<review-{}.{}.{nonce:016x}@{host}>", item.id, event.name()),
            Some(thread),
        )
    };
    let mut text = lines.join("\n");
    text.push_str(&format!(
        "\n\nOpen the item (sign in to act on it): {link}\n\nYou get this because of your choices on your account page in Streamkeeper.\n"
    ));
    let paragraphs: String = lines
        .iter()
        .map(|l| format!("<p>{}</p>", escape(l)))
        .collect();
    let html = format!(
        "<!DOCTYPE html><html><body>{paragraphs}<p><a href=\"{href}\">Open #{id} in Streamkeeper</a> (sign in to act on it).</p><p style=\"color:#666\">You get this because of your choices on your account page in Streamkeeper.</p></body></html>",
        href = escape(&link),
        id = item.id
    );
    Mail {
        subject,
        text,
        html,
        message_id,
        in_reply_to,
    }
}

fn words(item: ItemRef<'_>, event: &MailEvent<'_>) -> (String, Vec<String>) {
    let name = format!("#{} {}", item.id, item.title);
    match event {
        MailEvent::Waiting {
            verdict,
            breaking,
            by,
        } => {
            let mut lines = vec![
                format!(
                    "{name} waits for your review (revision {}, from {by}).",
                    item.revision
                ),
                format!("Check: {verdict}."),
            ];
            match breaking {
                Some([]) => lines.push("Breaking consumers: none.".into()),
                Some(groups) => lines.push(format!("Breaking consumers: {}.", groups.join(", "))),
                None => {}
            }
            (format!("Review needed: {name}"), lines)
        }
        MailEvent::Approved { by, done: true } => (
            format!("Approved: {name}"),
            vec![format!(
                "{name} is approved ({by} gave the last approval needed)."
            )],
        ),
        MailEvent::Approved { by, done: false } => (
            format!("Approval: {name}"),
            vec![format!("{by} approved {name}; more approvals are needed.")],
        ),
        MailEvent::Rejected { by, reason } => (
            format!("Rejected: {name}"),
            vec![
                format!("{by} rejected {name}."),
                format!("Reason: {reason}"),
            ],
        ),
        MailEvent::Applied => (
            format!("Applied: {name}"),
            vec![format!("{name} is applied.")],
        ),
        MailEvent::ApplyFailed { why } => (
            format!("Not applied: {name}"),
            vec![format!("{name} could not be applied."), (*why).to_string()],
        ),
    }
}

/// Text as HTML: the five characters that could open markup, escaped.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The longest address accepted (RFC 5321's path limit).
pub const MAX_EMAIL_CHARS: usize = 254;

/// An address a person gave for themself, refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BadEmail {
    #[error("'{0}' is not an email address like ada@example.com")]
    NotAnAddress(String),
    #[error("An email address has at most 254 characters.")]
    TooLong,
}

/// A person's own address, trimmed; `None` for an empty one (no mail).
/// A bare address only: no display name, nothing a header could carry
/// besides it.
pub fn parse_email(s: &str) -> Result<Option<String>, BadEmail> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(None);
    }
    if s.chars().count() > MAX_EMAIL_CHARS {
        return Err(BadEmail::TooLong);
    }
    let plain = s.chars().all(|c| c.is_ascii_graphic()) && !s.contains(['<', '>', ',', '"']);
    let (local, domain) = s.rsplit_once('@').unwrap_or(("", ""));
    let domain_ok = domain.contains('.')
        && domain
            .split('.')
            .all(|l| !l.is_empty() && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'));
    // The sender's parser (lettre's, by `email_address`) must take it too:
    // a saved address it refuses would fail every message, found only then.
    let sendable = email_address::EmailAddress::is_valid_local_part(local)
        && email_address::EmailAddress::is_valid_domain(domain);
    if plain && !local.is_empty() && !local.contains('@') && domain_ok && sendable {
        Ok(Some(s.to_string()))
    } else {
        Err(BadEmail::NotAnAddress(s.into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &str = "https://streamkeeper.example.com/";
    const HOST: &str = "streamkeeper.example.com";

    fn item(revision: i32) -> ItemRef<'static> {
        ItemRef {
            id: 42,
            title: "orders-value <v2> & more",
            revision,
        }
    }

    #[test]
    fn a_waiting_item_names_title_verdict_breaking_consumers_and_links_without_a_token() {
        let breaking = vec!["billing".to_string(), "fraud".to_string()];
        let m = render(
            item(1),
            &MailEvent::Waiting {
                verdict: "INCOMPATIBLE",
                breaking: Some(&breaking),
                by: "ada",
            },
            URL,
            HOST,
            7,
        );
        assert_eq!(m.subject, "Review needed: #42 orders-value <v2> & more");
        assert!(m.text.contains("Check: INCOMPATIBLE."), "{}", m.text);
        assert!(m.text.contains("Breaking consumers: billing, fraud."));
        assert!(
            m.text
                .contains("https://streamkeeper.example.com/review/42\n")
        );
        assert!(
            m.html
                .contains("href=\"https://streamkeeper.example.com/review/42\"")
        );
        assert!(
            m.html.contains("orders-value &lt;v2&gt; &amp; more"),
            "{}",
            m.html
        );
        assert!(!m.html.contains("<v2>"));
        for body in [&m.text, &m.html] {
            assert!(!body.contains("token") && !body.contains('?'), "{body}");
        }
    }

    #[test]
    fn the_first_message_opens_the_thread_and_later_ones_answer_it() {
        let waiting = MailEvent::Waiting {
            verdict: "COMPATIBLE",
            breaking: None,
            by: "ada",
        };
        let first = render(item(1), &waiting, URL, HOST, 1);
        assert!(
            !first.text.contains("Breaking consumers"),
            "no check, no claim of none: {}",
            first.text
        );
        assert_eq!(first.message_id, "<review-42@streamkeeper.example.com>");
        assert_eq!(first.in_reply_to, None);
        let edited = render(item(2), &waiting, URL, HOST, 2);
        let applied = render(item(2), &MailEvent::Applied, URL, HOST, 3);
        for later in [&edited, &applied] {
            assert_eq!(
                later.in_reply_to.as_deref(),
                Some(first.message_id.as_str())
            );
            assert_ne!(later.message_id, first.message_id);
        }
        assert_ne!(edited.message_id, applied.message_id);
    }

    #[test]
    fn authors_hear_outcomes_and_approvers_what_waits() {
        let approved = MailEvent::Approved {
            by: "bo",
            done: true,
        };
        assert_eq!(approved.interest(), Interest::Outcomes);
        let m = render(item(1), &approved, URL, HOST, 4);
        assert_eq!(m.subject, "Approved: #42 orders-value <v2> & more");
        let r = MailEvent::Rejected {
            by: "bo",
            reason: "not now",
        };
        assert!(
            render(item(1), &r, URL, HOST, 5)
                .text
                .contains("Reason: not now")
        );
        let f = MailEvent::ApplyFailed {
            why: "the registry answered 409",
        };
        assert!(render(item(1), &f, URL, HOST, 6).text.contains("409"));
    }

    #[test]
    fn a_person_gives_a_bare_address_or_none() {
        assert_eq!(parse_email("  "), Ok(None));
        assert_eq!(
            parse_email(" ada@example.com "),
            Ok(Some("ada@example.com".into()))
        );
        for bad in [
            "ada",
            "ada@localhost",
            "Ada <ada@example.com>",
            "a@b.com, c@d.com",
            "ada@exa mple.com",
            "ada@example.com\r\nBcc: x@y.com",
            "@example.com",
        ] {
            assert!(parse_email(bad).is_err(), "{bad}");
        }
        let long = format!("{}@example.com", "a".repeat(250));
        assert_eq!(parse_email(&long), Err(BadEmail::TooLong));
    }

    #[test]
    fn an_address_the_mail_servers_client_would_refuse_is_refused_when_given() {
        let long_local = format!("{}@example.com", "a".repeat(65));
        for bad in [
            ".ada@example.com",
            "ada.@example.com",
            "ada..x@example.com",
            "ada(x)@example.com",
            "a;b@example.com",
            "a[b]@example.com",
            "ada@-example.com",
            long_local.as_str(),
        ] {
            assert!(parse_email(bad).is_err(), "{bad}");
        }
        for good in [
            "ada.lovelace+flags@example.com",
            "o'brien@mail.example.co.uk",
        ] {
            assert_eq!(parse_email(good), Ok(Some(good.to_owned())), "{good}");
        }
    }
}
