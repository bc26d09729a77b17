//! A Slack incoming webhook's message: Block Kit within Slack's published
//! limits (a message holds at most 50 blocks; a header's text at most 150
//! characters; a section's text at most 3,000; a button's text 75 and its
//! URL 3,000), with `text` as the notification's fallback. Incoming
//! webhooks cannot edit a message already posted, so an acknowledgment or
//! a resolution is a message of its own that names the flag again.

use super::{Notice, Transition};
use serde_json::{Value, json};

pub const MAX_BLOCKS: usize = 50;
pub const MAX_HEADER: usize = 150;
pub const MAX_SECTION: usize = 3000;
pub const MAX_BUTTON_TEXT: usize = 75;
pub const MAX_URL: usize = 3000;
/// Slack shortens a message's `text` past 4,000 characters; keep it whole.
pub const MAX_TEXT: usize = 4000;

/// `s` cut to `max` characters, an ellipsis marking the cut.
pub fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Slack's mrkdwn treats `&`, `<` and `>` as control characters: a
/// subject named `a<b` must not become a link.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn section(f: &super::FlagNotice, t: Transition) -> Value {
    let url = if f.url.chars().count() <= MAX_URL {
        format!("<{}|{}>", f.url, escape(&f.subject))
    } else {
        escape(&f.subject)
    };
    let status = match t {
        Transition::Resolve => "resolved".to_owned(),
        Transition::Acknowledge => format!("{} · acknowledged", f.kind),
        _ => f.kind.clone(),
    };
    let owner = f
        .team
        .as_deref()
        .map_or("unowned (platform team)".to_owned(), |t| {
            format!("team {}", escape(t))
        });
    let text = format!(
        "*{status}* {} {url} on `{}`\n{}\nOwner: {owner}",
        f.subject_kind,
        escape(&f.cluster),
        escape(&f.reason)
    );
    json!({ "type": "section", "text": { "type": "mrkdwn", "text": cut(&text, MAX_SECTION) } })
}

/// The message for a notice: a header, one section per flag (as many as
/// the block limit allows, then a line saying how many more), and for a
/// single flag a button that opens it.
pub fn message(n: &Notice) -> Value {
    let mut blocks = vec![json!({
        "type": "header",
        "text": { "type": "plain_text", "text": cut(&n.subject(), MAX_HEADER) },
    })];
    if let Some(by) = &n.by {
        blocks.push(json!({ "type": "context", "elements": [
            { "type": "mrkdwn", "text": format!("Acknowledged by {}", escape(by)) }] }));
    }
    // Room for the sections: the header (and context) before, one block
    // after (the button, or the "more" line).
    let room = MAX_BLOCKS - blocks.len() - 1;
    let shown = n.flags.len().min(room);
    for f in &n.flags[..shown] {
        blocks.push(section(f, n.transition));
    }
    match &n.flags[..] {
        [one] if one.url.chars().count() <= MAX_URL => blocks.push(json!({
            "type": "actions",
            "elements": [{
                "type": "button",
                "text": { "type": "plain_text", "text": cut("Open the flag in Streamkeeper", MAX_BUTTON_TEXT) },
                "url": one.url,
            }],
        })),
        _ if n.flags.len() > shown => blocks.push(json!({
            "type": "context",
            "elements": [{ "type": "mrkdwn",
                           "text": format!("…and {} more on this cluster; see the flags in Streamkeeper.", n.flags.len() - shown) }],
        })),
        _ => {}
    }
    // The fallback is mrkdwn too (notifications and old clients show it):
    // a group named `<!channel>` must not ping the channel.
    json!({ "text": cut(&escape(&n.text()), MAX_TEXT), "blocks": blocks })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::notice::tests::{flag, one};

    #[test]
    fn names_from_kafka_cannot_mention_or_link() {
        let mut f = flag(7, "<!channel> <https://evil.example|click>", "STOP");
        f.reason = "lag <@U123>".into();
        let m = message(&one(Transition::Raise, f));
        // Everything read as mrkdwn (the header is plain text: shown as is).
        for text in [m["text"].to_string(), m["blocks"][1].to_string()] {
            assert!(!text.contains("<!channel>"), "{text}");
            assert!(
                !text.contains("<https://evil") && !text.contains("<@U123>"),
                "{text}"
            );
            assert!(text.contains("&lt;!channel&gt;"), "{text}");
        }
        assert_eq!(m["blocks"][0]["text"]["type"], "plain_text");
    }

    #[test]
    fn one_flag_has_a_header_its_section_and_a_button() {
        let m = message(&one(Transition::Raise, flag(7, "billing", "STOP")));
        let blocks = m["blocks"].as_array().expect("blocks");
        assert_eq!(blocks.len(), 3);
        assert_eq!(blocks[0]["type"], "header");
        let s = blocks[1]["text"]["text"].as_str().expect("text");
        assert!(s.contains("<https://sk.example/flags/7|billing>"), "{s}");
        assert!(s.contains("no progress for 5 min") && s.contains("team payments"));
        assert_eq!(
            blocks[2]["elements"][0]["url"],
            "https://sk.example/flags/7"
        );
        assert!(
            m["text"]
                .as_str()
                .expect("text")
                .starts_with("[STOP] group billing")
        );
    }

    #[test]
    fn a_burst_stays_within_the_block_limit_and_says_how_many_more() {
        let flags = (0..1000)
            .map(|i| flag(i, &format!("g{i}"), "STOP"))
            .collect();
        let n = Notice {
            transition: Transition::Raise,
            cluster: "prod".into(),
            flags,
            by: None,
        };
        let m = message(&n);
        let blocks = m["blocks"].as_array().expect("blocks");
        assert_eq!(blocks.len(), MAX_BLOCKS);
        let last = blocks[MAX_BLOCKS - 1]["elements"][0]["text"]
            .as_str()
            .expect("more");
        assert!(last.contains("and 952 more"), "{last}");
        assert!(m["text"].as_str().expect("text").chars().count() <= MAX_TEXT);
    }

    #[test]
    fn long_text_is_cut_and_mrkdwn_is_escaped() {
        let mut f = flag(1, "a<b>&c", "WARN");
        f.reason = "x".repeat(5000);
        let m = message(&one(Transition::Acknowledge, f));
        let header = m["blocks"][0]["text"]["text"].as_str().expect("header");
        assert!(header.chars().count() <= MAX_HEADER && header.ends_with('…'));
        let s = m["blocks"][1]["text"]["text"].as_str().expect("section");
        assert_eq!(s.chars().count(), MAX_SECTION);
        assert!(s.contains("a&lt;b&gt;&amp;c") && s.contains("acknowledged"));
    }
}
