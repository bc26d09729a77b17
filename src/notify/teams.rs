//! A Microsoft Teams message for a Workflows (or incoming-webhook) URL: a
//! `message` whose one attachment is an Adaptive Card (schema version 1.4,
//! which Teams renders), within Teams' 28 KB message limit: a burst lists
//! its first flags, then how many more.

use super::{FlagNotice, Notice, Transition};
use serde_json::{Value, json};

pub const CARD_CONTENT_TYPE: &str = "application/vnd.microsoft.card.adaptive";
pub const CARD_SCHEMA: &str = "http://adaptivecards.io/schemas/adaptive-card.json";
pub const CARD_VERSION: &str = "1.4";
/// Teams refuses a message over 28 KB.
pub const MAX_BYTES: usize = 28 * 1024;
/// Flags listed in one card; each takes well under 1 KB with its reason cut.
pub const MAX_LISTED: usize = 20;
const MAX_REASON: usize = 500;

fn flag_block(f: &FlagNotice, t: Transition) -> Value {
    let status = match t {
        Transition::Resolve => "resolved".to_owned(),
        Transition::Acknowledge => format!("{} (acknowledged)", f.kind),
        _ => f.kind.clone(),
    };
    let owner = f
        .team
        .as_deref()
        .map_or("unowned (platform team)".to_owned(), |t| {
            format!("team {t}")
        });
    json!({
        "type": "Container",
        "separator": true,
        "items": [
            { "type": "TextBlock", "wrap": true, "weight": "Bolder",
              "text": format!("{status}: {} {}", f.subject_kind, plain(&f.subject)) },
            { "type": "TextBlock", "wrap": true,
              "text": super::slack::cut(&plain(&f.reason), MAX_REASON) },
            { "type": "FactSet", "facts": [
                { "title": "Cluster", "value": f.cluster },
                { "title": "Owner", "value": owner },
                { "title": "Severity", "value": super::Choice::as_str(f.severity()) },
            ]},
        ],
        "selectAction": { "type": "Action.OpenUrl", "url": f.url },
    })
}

/// Text from Kafka (a group's name, a reason) as an Adaptive Card's
/// TextBlock shows it: its markdown subset makes `[text](url)` a link and
/// has no escape Teams honours everywhere, so a zero-width space splits the
/// link's `](` — a group named `[login](https://evil)` reads as itself and
/// links nowhere. Emphasis marks are left: `orders_v2` must read as named,
/// and bold text misleads no one into a click.
pub fn plain(s: &str) -> String {
    s.replace("](", "]\u{200B}(")
}

/// The message for a notice.
pub fn message(n: &Notice) -> Value {
    let mut body = vec![json!({
        "type": "TextBlock", "size": "Large", "weight": "Bolder", "wrap": true,
        "text": super::slack::cut(&plain(&n.subject()), 300),
    })];
    if let Some(by) = &n.by {
        body.push(json!({ "type": "TextBlock", "wrap": true, "isSubtle": true,
                          "text": format!("Acknowledged by {}", plain(by)) }));
    }
    for f in n.flags.iter().take(MAX_LISTED) {
        body.push(flag_block(f, n.transition));
    }
    if n.flags.len() > MAX_LISTED {
        body.push(json!({ "type": "TextBlock", "wrap": true, "isSubtle": true,
            "text": format!("…and {} more on this cluster; see the flags in Streamkeeper.",
                            n.flags.len() - MAX_LISTED) }));
    }
    let actions: Vec<Value> = match &n.flags[..] {
        [one] => {
            vec![json!({ "type": "Action.OpenUrl", "title": "Open the flag", "url": one.url })]
        }
        _ => Vec::new(),
    };
    json!({
        "type": "message",
        "attachments": [{
            "contentType": CARD_CONTENT_TYPE,
            "contentUrl": null,
            "content": {
                "$schema": CARD_SCHEMA,
                "type": "AdaptiveCard",
                "version": CARD_VERSION,
                "body": body,
                "actions": actions,
            },
        }],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::notice::tests::{flag, one};

    #[test]
    fn names_from_kafka_are_not_links_in_a_card() {
        let mut f = flag(3, "[login](https://evil.example)", "STOP");
        f.reason = "see [here](https://evil.example)".into();
        let m = message(&one(Transition::Raise, f)).to_string();
        assert!(!m.contains("](https://evil"), "{m}");
        assert!(m.contains("[login]"), "the name still reads as itself: {m}");
    }

    #[test]
    fn a_card_names_the_flag_and_opens_it() {
        let m = message(&one(Transition::Raise, flag(3, "billing", "STOP")));
        assert_eq!(m["type"], "message");
        let a = &m["attachments"][0];
        assert_eq!(a["contentType"], CARD_CONTENT_TYPE);
        let card = &a["content"];
        assert_eq!(card["type"], "AdaptiveCard");
        assert_eq!(card["version"], CARD_VERSION);
        assert_eq!(card["actions"][0]["url"], "https://sk.example/flags/3");
        let facts = &card["body"][1]["items"][2]["facts"];
        assert_eq!(facts[2]["value"], "critical");
    }

    #[test]
    fn a_burst_fits_in_28_kb() {
        let flags = (0..1000)
            .map(|i| {
                let mut f = flag(i, &format!("group-{i}"), "STOP");
                f.reason = "r".repeat(2000);
                f
            })
            .collect();
        let n = Notice {
            transition: Transition::Raise,
            cluster: "prod".into(),
            flags,
            by: None,
        };
        let m = message(&n);
        assert!(m.to_string().len() <= MAX_BYTES, "{}", m.to_string().len());
        let body = m["attachments"][0]["content"]["body"]
            .as_array()
            .expect("body");
        assert_eq!(body.len(), 1 + MAX_LISTED + 1);
    }
}
