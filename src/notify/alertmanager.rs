//! Alertmanager's v2 API (`POST /api/v2/alerts`): one alert per flag,
//! labelled so teams keep their own routing, silences and inhibitions
//! (`alertname`, `cluster`, `group`, `topic` — a group's flag carries the
//! topics it reads —, `team`, `severity`, and the flag's `kind`). An open flag's alert carries an `endsAt` a while ahead
//! and is posted again before then ([`REPOST_S`]); a resolution posts it
//! with `endsAt` now, which resolves it.

use super::{Choice, FlagNotice, Notice, Transition};
use serde_json::{Map, Value, json};

pub const ALERTNAME: &str = "StreamkeeperFlag";
/// How often an open flag's alert is posted again.
pub const REPOST_S: i64 = 5 * 60;
/// How far ahead an open flag's alert ends unless posted again: three
/// reposts, so two lost posts never resolve it.
pub const ENDS_AFTER_S: i64 = 3 * REPOST_S;

fn at(ms: i64) -> Value {
    chrono::DateTime::from_timestamp_millis(ms).map_or(Value::Null, |t| {
        Value::String(t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
    })
}

fn alert(f: &FlagNotice, t: Transition, now_ms: i64) -> Value {
    let mut labels = Map::new();
    let mut label = |k: &str, v: &str| {
        // Alertmanager reads an empty label as an absent one; leave it out.
        if !v.is_empty() {
            labels.insert(k.into(), Value::String(v.to_owned()));
        }
    };
    label("alertname", ALERTNAME);
    label("cluster", &f.cluster);
    label("group", f.subject_of("group").unwrap_or(""));
    label("topic", &f.topic_label());
    label("team", f.team.as_deref().unwrap_or("platform"));
    label("severity", f.severity().as_str());
    label("kind", &f.kind);
    let ends = match t {
        Transition::Resolve => now_ms,
        _ => now_ms + ENDS_AFTER_S * 1000,
    };
    json!({
        "labels": labels,
        "annotations": {
            "summary": f.line(t),
            "reason": f.reason,
            "flag_id": f.id.to_string(),
        },
        "startsAt": at(f.onset_ms),
        "endsAt": at(ends),
        "generatorURL": f.url,
    })
}

/// The alerts of a notice, as one post's array. A worsening changes the
/// flag's `kind` and `severity` labels, and Alertmanager knows an alert
/// by its labels: the worse flag is a new alert, so the one under the old
/// labels is ended in the same post, never left as a second alert of the
/// flag until its `endsAt`.
pub fn alerts(n: &Notice, now_ms: i64) -> Value {
    let mut out = Vec::with_capacity(n.flags.len());
    for f in &n.flags {
        if n.transition == Transition::Worsen
            && let Some(was) = f.was.as_ref().filter(|w| **w != f.kind)
        {
            let before = FlagNotice {
                kind: was.clone(),
                ..f.clone()
            };
            out.push(alert(&before, Transition::Resolve, now_ms));
        }
        out.push(alert(f, n.transition, now_ms));
    }
    Value::Array(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::notice::tests::{flag, one};

    #[test]
    fn an_open_flag_is_an_alert_with_its_labels_ending_ahead() {
        let now = 1_765_000_100_000;
        let a = alerts(&one(Transition::Raise, flag(4, "billing", "STOP")), now);
        let a = &a[0];
        assert_eq!(
            a["labels"],
            json!({ "alertname": ALERTNAME, "cluster": "prod", "group": "billing",
                    "topic": "orders", "team": "payments", "severity": "critical",
                    "kind": "STOP" })
        );
        assert_eq!(a["generatorURL"], "https://sk.example/flags/4");
        assert_eq!(a["annotations"]["reason"], "no progress for 5 min");
        assert_eq!(a["startsAt"], "2025-12-06T05:46:40.000Z");
        assert_eq!(a["endsAt"], "2025-12-06T06:03:20.000Z");
    }

    #[test]
    fn a_worsening_ends_the_alert_under_the_old_labels_and_posts_the_new() {
        let now = 1_765_000_100_000;
        let mut f = flag(4, "billing", "STOP");
        f.was = Some("WARN".into());
        let a = alerts(&one(Transition::Worsen, f.clone()), now);
        let a = a.as_array().expect("array");
        assert_eq!(a.len(), 2);
        assert_eq!(a[0]["labels"]["kind"], "WARN");
        assert_eq!(a[0]["labels"]["severity"], "warning");
        assert_eq!(a[0]["endsAt"], "2025-12-06T05:48:20.000Z", "ended now");
        assert_eq!(a[1]["labels"]["kind"], "STOP");
        assert_eq!(a[1]["labels"]["severity"], "critical");
        assert_eq!(a[1]["endsAt"], "2025-12-06T06:03:20.000Z");
        // The same kind again (news, not a worsening) is the same alert.
        f.was = Some("STOP".into());
        let same = alerts(&one(Transition::Worsen, f.clone()), now);
        assert_eq!(same.as_array().map(Vec::len), Some(1));
        let raise = alerts(&one(Transition::Raise, f), now);
        assert_eq!(raise.as_array().map(Vec::len), Some(1));
    }

    #[test]
    fn a_resolution_ends_the_alert_now_and_a_topic_flag_labels_its_topic() {
        let mut f = flag(4, "orders", "UNDER_REPLICATED");
        f.subject_kind = "topic".into();
        f.topics = vec![];
        let a = alerts(&one(Transition::Resolve, f), 1_765_000_100_000);
        assert_eq!(a[0]["endsAt"], "2025-12-06T05:48:20.000Z");
        assert_eq!(a[0]["labels"]["topic"], "orders");
        assert!(a[0]["labels"].get("group").is_none());
    }

    #[test]
    fn a_group_reading_several_topics_labels_them_all_and_one_reading_none_leaves_it_out() {
        let mut f = flag(4, "billing", "STOP");
        f.topics = vec!["orders".into(), "refunds".into()];
        let a = alerts(&one(Transition::Raise, f.clone()), 0);
        assert_eq!(a[0]["labels"]["topic"], "orders,refunds");
        f.topics = vec![];
        let a = alerts(&one(Transition::Raise, f), 0);
        assert!(a[0]["labels"].get("topic").is_none());
    }

    #[test]
    fn a_group_labels_the_topics_kept_at_its_raise_else_those_it_reads() {
        let mut f = flag(4, "billing", "STOP");
        f.topics = vec!["refunds".into()];
        f.label_topics = Some(vec!["orders".into()]);
        let a = alerts(&one(Transition::Raise, f.clone()), 0);
        assert_eq!(a[0]["labels"]["topic"], "orders");
        f.label_topics = None;
        let a = alerts(&one(Transition::Raise, f), 0);
        assert_eq!(a[0]["labels"]["topic"], "refunds");
    }
}
