//! PagerDuty Events API v2: one event per flag, its `dedup_key` the flag,
//! so PagerDuty keeps one incident per flag — `trigger` when raised (again
//! when worse: the same key updates the incident), `acknowledge` when
//! acknowledged in Streamkeeper, `resolve` when resolved. A repeat is
//! PagerDuty's own escalation's job, so none is sent. The routing key is a
//! secret: it is added when sent ([`with_routing_key`]), never stored.

use super::{Choice, FlagNotice, Notice, Transition};
use serde_json::{Value, json};

/// PagerDuty's limits: a summary of at most 1,024 characters, a dedup key
/// of at most 255.
pub const MAX_SUMMARY: usize = 1024;

pub fn dedup_key(flag_id: i64) -> String {
    format!("streamkeeper-flag-{flag_id}")
}

fn trigger(f: &FlagNotice, t: Transition) -> Value {
    json!({
        "event_action": "trigger",
        "dedup_key": dedup_key(f.id),
        "payload": {
            "summary": super::slack::cut(&f.line(t), MAX_SUMMARY),
            "source": format!("kafka cluster {}", f.cluster),
            "severity": f.severity().as_str(),
            "component": f.subject,
            "group": f.team.as_deref().unwrap_or("platform"),
            "class": f.kind,
            "custom_details": {
                "cluster": f.cluster, "subject_kind": f.subject_kind, "subject": f.subject,
                "kind": f.kind, "was": f.was, "reason": f.reason,
                "team": f.team, "flag_id": f.id,
            },
        },
        "client": "Streamkeeper",
        "client_url": f.url,
        "links": [{ "href": f.url, "text": "The flag in Streamkeeper" }],
    })
}

/// The events of a notice, one per flag.
pub fn events(n: &Notice) -> Vec<Value> {
    n.flags
        .iter()
        .filter_map(|f| match n.transition {
            Transition::Raise | Transition::Worsen | Transition::Restart => {
                Some(trigger(f, n.transition))
            }
            Transition::Acknowledge => {
                Some(json!({ "event_action": "acknowledge", "dedup_key": dedup_key(f.id) }))
            }
            Transition::Resolve => {
                Some(json!({ "event_action": "resolve", "dedup_key": dedup_key(f.id) }))
            }
            Transition::Repeat => None,
        })
        .collect()
}

/// The event as sent: with the routing key, first as PagerDuty lists it.
pub fn with_routing_key(event: &Value, routing_key: &str) -> Value {
    let mut out = serde_json::Map::new();
    out.insert("routing_key".into(), Value::String(routing_key.to_owned()));
    if let Value::Object(fields) = event {
        for (k, v) in fields {
            out.insert(k.clone(), v.clone());
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::notice::tests::{flag, one};

    #[test]
    fn raise_triggers_with_the_flag_as_dedup_key_and_mapped_severity() {
        let e = events(&one(Transition::Raise, flag(5, "billing", "STALL")));
        assert_eq!(e.len(), 1);
        assert_eq!(e[0]["event_action"], "trigger");
        assert_eq!(e[0]["dedup_key"], "streamkeeper-flag-5");
        assert_eq!(e[0]["payload"]["severity"], "error");
        assert_eq!(e[0]["payload"]["source"], "kafka cluster prod");
        assert!(
            e[0].get("routing_key").is_none(),
            "never stored with the secret"
        );
        let sent = with_routing_key(&e[0], "R0UT1NG");
        assert_eq!(sent["routing_key"], "R0UT1NG");
        assert_eq!(sent["dedup_key"], "streamkeeper-flag-5");
    }

    #[test]
    fn acknowledge_and_resolve_carry_only_the_key() {
        let a = events(&one(Transition::Acknowledge, flag(5, "b", "STOP")));
        assert_eq!(
            a[0],
            json!({ "event_action": "acknowledge", "dedup_key": "streamkeeper-flag-5" })
        );
        let r = events(&one(Transition::Resolve, flag(5, "b", "STOP")));
        assert_eq!(r[0]["event_action"], "resolve");
        assert!(events(&one(Transition::Repeat, flag(5, "b", "STOP"))).is_empty());
    }

    #[test]
    fn a_long_summary_is_cut_to_pagerdutys_limit() {
        let mut f = flag(1, "b", "STOP");
        f.reason = "y".repeat(3000);
        let e = events(&one(Transition::Raise, f));
        let s = e[0]["payload"]["summary"].as_str().expect("summary");
        assert_eq!(s.chars().count(), MAX_SUMMARY);
    }
}
