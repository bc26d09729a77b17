//! A flag's receipts, drawn by its kind: a group's window of samples, a
//! connector's trace with the request that restarts it and a link to it,
//! a topic's last message; anything else as the facts its rule kept.

use crate::flags::model::FlagView;
use crate::ui::params::href_with;
use crate::ui::time::{stamp_ago, stamp_text};
use chrono::{DateTime, Utc};
use leptos::prelude::*;
use serde_json::Value;
use streamkeeper::flags::receipts::REFRESH_EVALUATIONS;

/// The receipts card of a flag.
#[component]
pub fn Receipts(f: FlagView) -> impl IntoView {
    let ev = f.evidence.clone();
    let body = if f.subject_kind == "connector" {
        view! { <ConnectorReceipts cluster_id=f.cluster_id ev /> }.into_any()
    } else if ev["window_passes"].is_number() {
        view! { <WindowReceipts ev /> }.into_any()
    } else if ev.get("last_message_at").is_some() || ev.get("last_message").is_some() {
        let stream = href_with(
            &format!("/clusters/{}/stream", f.cluster_id),
            &[("name", Some(f.subject.clone()))],
        );
        view! { <LastMessageReceipts ev stream /> }.into_any()
    } else {
        view! { <Facts ev /> }.into_any()
    };
    view! {
        <section class="card" data-testid="receipts">
            <h2>"Receipts"</h2>
            {body}
        </section>
    }
}

fn text(v: &Value) -> String {
    match v {
        // Times in the evidence are RFC 3339 text: read as every page does.
        Value::String(s) => stamp_text(s),
        Value::Null => "–".into(),
        other => other.to_string(),
    }
}

/// A count kept in the evidence, as people say it (`1 member`, `2
/// passes`); a count the evidence lacks reads as a dash.
fn count(v: &Value, one: &str, many: &str) -> String {
    match v.as_u64() {
        Some(1) => format!("1 {one}"),
        Some(n) => format!("{n} {many}"),
        None => format!("– {many}"),
    }
}

/// A group's lag flag: the window and each troubled partition's samples.
#[component]
fn WindowReceipts(ev: Value) -> impl IntoView {
    let thresholds = format!(
        "window of {}, at least {}, allowed lag {}; the group had {}",
        count(&ev["window_passes"], "pass", "passes"),
        count(&ev["min_samples"], "sample", "samples"),
        ev["allowed_lag"],
        count(&ev["group_members"], "member", "members")
    );
    let partitions = ev["partitions"].as_array().cloned().unwrap_or_default();
    // Receipts are rewritten when the trouble changes, not every pass
    // (`streamkeeper::flags::receipts`): say which pass they are of.
    let as_of = partitions
        .iter()
        .flat_map(|p| p["samples"].as_array().cloned().unwrap_or_default())
        .filter_map(|s| {
            s["at"]
                .as_str()
                .and_then(|t| t.parse::<DateTime<Utc>>().ok())
        })
        .max();
    view! {
        <p>{format!("Rule: {}; {thresholds}.", text(&ev["rule"]))}</p>
        {as_of.map(|at| view! {
            <p class="note" data-testid="receipts-as-of">{format!(
                "Receipts of the pass at {}: written again when the trouble changes (its kind, partitions, their statuses) and at least every {} passes. The group's page shows its lag now.",
                stamp_ago(at),
                REFRESH_EVALUATIONS
            )}</p>
        })}
        {partitions.into_iter().map(|p| {
            let samples = p["samples"].as_array().cloned().unwrap_or_default();
            view! {
                <h3>{format!("{} [{}] — {}: {}", p["topic"].as_str().unwrap_or(""), p["partition"], p["status"].as_str().unwrap_or(""), p["reason"].as_str().unwrap_or(""))}</h3>
                <table class="list">
                    <thead><tr><th>"Sampled at"</th><th>"Committed"</th><th>"Log start"</th><th>"Log end"</th></tr></thead>
                    <tbody>
                        {samples.into_iter().map(|s| view! {
                            <tr>
                                <td>{stamp_text(s["at"].as_str().unwrap_or(""))}</td>
                                <td>{s["committed"].to_string()}</td>
                                <td>{s["log_start"].to_string()}</td>
                                <td>{s["log_end"].to_string()}</td>
                            </tr>
                        }).collect_view()}
                    </tbody>
                </table>
            }
        }).collect_view()}
    }
}

/// A connector's flag: each failed or stuck instance with its trace (as
/// the worker gave it, scrubbed of secrets), the request that restarts
/// what failed, and a link to the connector.
#[component]
fn ConnectorReceipts(cluster_id: i64, ev: Value) -> impl IntoView {
    let connector = href_with(
        &format!("/clusters/{cluster_id}/connector"),
        &[
            ("connect", ev["connect"].as_str().map(str::to_owned)),
            ("name", ev["connector"].as_str().map(str::to_owned)),
        ],
    );
    let instances = ev["instances"].as_array().cloned().unwrap_or_default();
    let restart = format!(
        "{} {}",
        ev["restart"]["method"].as_str().unwrap_or("POST"),
        ev["restart"]["url"].as_str().unwrap_or("")
    );
    view! {
        <p>{format!(
            "Connector {} on Connect cluster {}: the connector itself is {}.",
            text(&ev["connector"]), text(&ev["connect"]), text(&ev["state"])
        )} " " <a href=connector data-testid="receipts-connector">"Open the connector"</a></p>
        {instances.into_iter().map(|i| {
            let who = match i["task"].as_u64() {
                Some(t) => format!("Task {t}"),
                None => "The connector".into(),
            };
            view! {
                <h3>{format!("{who}: {}", text(&i["state"]))}</h3>
                {i["trace"].as_str().map(|t| view! {
                    <pre class="trace" data-testid="receipts-trace">{t.to_string()}</pre>
                })}
            }
        }).collect_view()}
        <p>"Restart what failed (Kafka Connect REST):"</p>
        <pre data-testid="receipts-restart">{restart}</pre>
    }
}

/// A quiet topic's flag: its last message and the interval expected.
#[component]
fn LastMessageReceipts(ev: Value, stream: String) -> impl IntoView {
    view! {
        <p>{format!("Rule: {}.", text(&ev["rule"]))}</p>
        <dl>
            <dt>"Last message"</dt><dd data-testid="receipts-last-message">{text(&ev["last_message_at"])}</dd>
            <dt>"Expected every"</dt><dd>{format!("{} s", text(&ev["expected_interval_s"]))}</dd>
            <dt>"Messages in the log"</dt><dd>{text(&ev["log_end_total"])}</dd>
        </dl>
        <p><a href=stream>"Open the stream"</a></p>
    }
}

/// Any other flag: its rule and the facts it kept.
#[component]
fn Facts(ev: Value) -> impl IntoView {
    let facts: Vec<(String, String)> = ev
        .as_object()
        .map(|o| {
            o.iter()
                .filter(|(k, _)| k.as_str() != "rule")
                .map(|(k, v)| (k.replace('_', " "), text(v)))
                .collect()
        })
        .unwrap_or_default();
    view! {
        {ev["rule"].as_str().map(|r| view! { <p>{format!("Rule: {r}.")}</p> })}
        <dl>
            {facts.into_iter().map(|(k, v)| view! { <dt>{k}</dt><dd>{v}</dd> }).collect_view()}
        </dl>
    }
}
