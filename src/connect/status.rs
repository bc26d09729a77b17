//! Watching running connectors: what a status pass makes of the states it
//! reads. A FAILED connector or task is trouble with its trace as the
//! receipt; UNASSIGNED for more than [`UNASSIGNED_PASSES`] passes in a row
//! is trouble too (a rebalance leaves tasks unassigned for a moment, a lost
//! worker for good). Traces are scrubbed of the connector's inline secrets
//! before anything keeps them: a JDBC driver's exception can quote its URL.

use super::config::Config;
use super::secret::{MASK, embeds_credentials, is_inline_secret, scrub_credentials};
use crate::flags::{FlagKey, Observation};
use serde_json::json;
use std::collections::BTreeSet;

/// Passes in a row a connector or task may stay UNASSIGNED unflagged.
pub const UNASSIGNED_PASSES: u32 = 2;

/// The flag subject kind of connectors.
pub const SUBJECT_KIND: &str = "connector";

/// Consecutive passes in `state` UNASSIGNED, counting this one.
pub fn unassigned_passes(before: u32, state: &str) -> u32 {
    if state == "UNASSIGNED" {
        before.saturating_add(1)
    } else {
        0
    }
}

/// The first line of a trace: the exception and its message.
pub fn first_line(trace: &str) -> &str {
    trace
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

/// The parts of a secret value a trace may quote: the whole value, the
/// password of a `scheme://user:password@host` URL, a `password=` or
/// `pwd=` parameter.
fn fragments(value: &str) -> Vec<String> {
    let mut out = vec![value.to_owned()];
    if embeds_credentials(value) {
        for after in value.split("://").skip(1) {
            let authority = after.split(['/', '?', '#']).next().unwrap_or("");
            if let Some((userinfo, _)) = authority.rsplit_once('@')
                && let Some((_, password)) = userinfo.split_once(':')
            {
                out.push(password.to_owned());
            }
        }
        let lower = value.to_ascii_lowercase();
        for param in ["password=", "pwd="] {
            let mut from = 0;
            while let Some(at) = lower[from..].find(param) {
                let start = from + at + param.len();
                let end = value[start..]
                    .find(['&', ';', ' '])
                    .map_or(value.len(), |e| start + e);
                out.push(value[start..end].to_owned());
                from = end;
            }
        }
    }
    // Very short fragments would mask half the trace and protect nothing.
    out.retain(|f| f.chars().count() >= 3);
    out
}

/// The trace with every inline secret of `config` (in clear, as the worker
/// holds it) replaced by the mask, ConfigException's quoted values
/// ("Invalid value <v> for configuration <k>") cut out, and whatever looks
/// like a credential masked by its shape (a resolved `${…}` secret the
/// console never saw).
pub fn scrub_trace(trace: &str, config: &Config, marked: &BTreeSet<String>) -> String {
    let mut secrets: Vec<String> = config
        .iter()
        .filter(|(k, v)| is_inline_secret(k, v, marked))
        .flat_map(|(_, v)| fragments(v))
        .collect();
    // Longest first, so a password inside a URL is not masked before the URL.
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    let mut out = trace.to_owned();
    for s in &secrets {
        out = out.replace(s.as_str(), MASK);
    }
    const START: &str = "Invalid value ";
    const END: &str = " for configuration";
    let mut scrubbed = String::with_capacity(out.len());
    let mut rest = out.as_str();
    while let Some(start) = rest.find(START) {
        let after = &rest[start + START.len()..];
        let Some(end) = after.find(END).filter(|e| !after[..*e].contains('\n')) else {
            scrubbed.push_str(&rest[..start + START.len()]);
            rest = after;
            continue;
        };
        scrubbed.push_str(&rest[..start]);
        scrubbed.push_str("Invalid value (hidden)");
        rest = &after[end..];
    }
    scrubbed.push_str(rest);
    scrub_credentials(&scrubbed)
}

/// A connector or one of its tasks as a pass saw it (trace scrubbed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstanceSeen {
    /// `None` for the connector itself.
    pub task: Option<u32>,
    pub state: String,
    pub trace: Option<String>,
    /// Counting this pass ([`unassigned_passes`]).
    pub unassigned_passes: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectorSeen {
    /// The Connect cluster's name.
    pub connect: String,
    pub name: String,
    pub connector: InstanceSeen,
    pub tasks: Vec<InstanceSeen>,
}

/// One flag per connector: a task failing after the connector was
/// unassigned is the same trouble, escalated.
pub fn flag_key(connect: &str, name: &str) -> FlagKey {
    FlagKey {
        subject_kind: SUBJECT_KIND.into(),
        subject: format!("{connect}/{name}"),
        rule: "state".into(),
    }
}

/// The state a connector shows in every list: Kafka Connect says RUNNING
/// for a connector whose tasks all failed (the connector instance itself
/// runs, its work does not), so such a connector shows FAILED.
pub fn shown_state(connector: &str, tasks_total: i64, tasks_failed: i64) -> &str {
    if connector == "RUNNING" && tasks_total > 0 && tasks_failed >= tasks_total {
        "FAILED"
    } else {
        connector
    }
}

/// Whether a connector's flag got worse: a task failing where one was
/// only unassigned.
pub fn worse(before: &str, now: &str) -> bool {
    before == "UNASSIGNED" && now == "FAILED"
}

fn label(i: &InstanceSeen, name: &str) -> String {
    match i.task {
        None => format!("connector {name}"),
        Some(t) => format!("task {t} of connector {name}"),
    }
}

/// The trouble a pass saw on a connector, if any. `restart_url` is the
/// exact request that restarts what failed (`POST`), for the flag page.
pub fn observe(seen: &ConnectorSeen, now_ms: i64, restart_url: &str) -> Option<Observation> {
    let all: Vec<&InstanceSeen> = std::iter::once(&seen.connector)
        .chain(seen.tasks.iter())
        .collect();
    let failed: Vec<&&InstanceSeen> = all.iter().filter(|i| i.state == "FAILED").collect();
    let stuck: Vec<&&InstanceSeen> = all
        .iter()
        .filter(|i| i.unassigned_passes > UNASSIGNED_PASSES)
        .collect();
    let instances = |list: &[&&InstanceSeen]| {
        list.iter()
            .map(|i| {
                json!({
                    "task": i.task,
                    "state": i.state,
                    "first_line": i.trace.as_deref().map(first_line),
                    "trace": i.trace,
                    "unassigned_passes": i.unassigned_passes,
                })
            })
            .collect::<Vec<_>>()
    };
    let (kind, reason, list) = if let Some(first) = failed.first() {
        let line = first.trace.as_deref().map(first_line).unwrap_or("no trace");
        let more = match failed.len() {
            1 => String::new(),
            n => format!(" (and {} more failed)", n - 1),
        };
        (
            "FAILED",
            format!("{} FAILED: {line}{more}", label(first, &seen.name)),
            instances(&failed),
        )
    } else {
        let first = stuck.first()?;
        (
            "UNASSIGNED",
            format!(
                "{} UNASSIGNED for {} passes: no worker runs it",
                label(first, &seen.name),
                first.unassigned_passes
            ),
            instances(&stuck),
        )
    };
    Some(Observation {
        key: flag_key(&seen.connect, &seen.name),
        kind: kind.into(),
        reason,
        onset_ms: now_ms,
        evidence: json!({
            "connect": seen.connect,
            "connector": seen.name,
            "state": seen.connector.state,
            "instances": list,
            "restart": {"method": "POST", "url": restart_url},
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inst(task: Option<u32>, state: &str, trace: Option<&str>, passes: u32) -> InstanceSeen {
        InstanceSeen {
            task,
            state: state.into(),
            trace: trace.map(str::to_owned),
            unassigned_passes: passes,
        }
    }

    fn seen(connector: InstanceSeen, tasks: Vec<InstanceSeen>) -> ConnectorSeen {
        ConnectorSeen {
            connect: "main".into(),
            name: "s3".into(),
            connector,
            tasks,
        }
    }

    #[test]
    fn a_running_connector_whose_tasks_all_failed_shows_failed() {
        assert_eq!(shown_state("RUNNING", 1, 1), "FAILED");
        assert_eq!(shown_state("RUNNING", 3, 3), "FAILED");
        assert_eq!(shown_state("RUNNING", 2, 1), "RUNNING");
        assert_eq!(shown_state("RUNNING", 0, 0), "RUNNING");
        assert_eq!(shown_state("PAUSED", 1, 1), "PAUSED");
        assert!(worse("UNASSIGNED", "FAILED"));
        assert!(!worse("FAILED", "UNASSIGNED"));
    }

    #[test]
    fn a_failed_task_is_trouble_with_its_first_line_and_whole_trace() {
        let trace = "org.apache.kafka.connect.errors.ConnectException: boom\n\tat A.b(A.java:1)";
        let s = seen(
            inst(None, "RUNNING", None, 0),
            vec![
                inst(Some(0), "RUNNING", None, 0),
                inst(Some(1), "FAILED", Some(trace), 0),
            ],
        );
        let o = observe(&s, 5, "http://c/connectors/s3/restart").expect("trouble");
        assert_eq!(o.kind, "FAILED");
        assert_eq!(o.key, flag_key("main", "s3"));
        assert_eq!(
            o.reason,
            "task 1 of connector s3 FAILED: org.apache.kafka.connect.errors.ConnectException: boom"
        );
        assert_eq!(o.evidence["instances"][0]["trace"], trace);
        assert_eq!(o.evidence["restart"]["method"], "POST");
    }

    #[test]
    fn a_trace_quoting_a_resolved_reference_loses_the_secret() {
        // The console keeps the reference; the worker resolved it and its
        // driver quoted the result.
        let config: Config = [("connection.password", "${file:/s/pg.properties:password}")]
            .into_iter()
            .collect();
        let trace = "ConnectException: java.sql.SQLException: login failed (user=etl, password=Resolved-9f2)";
        let out = scrub_trace(trace, &config, &BTreeSet::new());
        assert!(
            !out.contains("Resolved-9f2") && out.contains("user=etl"),
            "{out}"
        );
    }

    #[test]
    fn unassigned_is_trouble_only_after_two_passes() {
        assert_eq!(unassigned_passes(0, "UNASSIGNED"), 1);
        assert_eq!(unassigned_passes(2, "UNASSIGNED"), 3);
        assert_eq!(unassigned_passes(5, "RUNNING"), 0);
        let at = |n| {
            seen(
                inst(None, "RUNNING", None, 0),
                vec![inst(Some(0), "UNASSIGNED", None, n)],
            )
        };
        assert!(observe(&at(2), 0, "u").is_none());
        let o = observe(&at(3), 0, "u").expect("stuck");
        assert_eq!(o.kind, "UNASSIGNED");
        assert!(o.reason.contains("3 passes"), "{}", o.reason);
        assert!(observe(&seen(inst(None, "PAUSED", None, 0), vec![]), 0, "u").is_none());
    }

    #[test]
    fn traces_lose_inline_secrets_and_quoted_values_but_keep_references() {
        let config: Config = [
            ("connection.password", "hunter2-pw"),
            (
                "connection.url",
                "jdbc:postgresql://dw:5432/dw?user=u&password=s3cr3t-url",
            ),
            ("database.password", "${file:/s/pg.properties:password}"),
            ("topics", "orders"),
        ]
        .into_iter()
        .collect();
        let trace = "SQLException: FATAL auth for hunter2-pw at jdbc:postgresql://dw:5432/dw?user=u&password=s3cr3t-url\nInvalid value abc for configuration tasks.max: bad\n${file:/s/pg.properties:password} orders";
        let out = scrub_trace(trace, &config, &BTreeSet::new());
        assert!(
            !out.contains("hunter2-pw") && !out.contains("s3cr3t-url"),
            "{out}"
        );
        assert!(
            out.contains("Invalid value (hidden) for configuration tasks.max"),
            "{out}"
        );
        assert!(
            out.contains("${file:/s/pg.properties:password}") && out.contains("orders"),
            "{out}"
        );
        let only_param = "password=s3cr3t-url rejected";
        assert!(!scrub_trace(only_param, &config, &BTreeSet::new()).contains("s3cr3t-url"));
    }
}
