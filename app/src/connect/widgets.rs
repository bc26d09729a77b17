//! What other pages draw of Connect: a Kafka cluster's Connect clusters, and
//! the badge of a connector's state.

use crate::connect::fns::list_connect_clusters;
use crate::ui::notes::ErrorNote;
use crate::ui::params::href_with;
use crate::ui::time::stamp_ago;
use leptos::prelude::*;

/// The Connect clusters of Kafka cluster `id`, each linking to its
/// connectors; nothing at all when the cluster has none.
#[component]
pub fn ConnectClusters(id: i64) -> impl IntoView {
    let list = Resource::new(move || id, list_connect_clusters);
    view! {
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                match list.await {
                    Ok(l) if l.is_empty() => ().into_any(),
                    Ok(l) => view! {
                        <h2>"Kafka Connect"</h2>
                        <table class="list" data-testid="connect-clusters">
                            <thead><tr><th>"Connect cluster"</th><th>"Connectors"</th><th>"Failing"</th><th>"Last read"</th></tr></thead>
                            <tbody>
                                {l.into_iter().map(|c| {
                                    let href = href_with(&format!("/clusters/{id}/connect"), &[("name", Some(c.name.clone()))]);
                                    let read = match (&c.last_error, c.read_at) {
                                        (Some(e), _) if c.failed_passes > 0 => format!("could not be read: {e}"),
                                        (_, Some(at)) => stamp_ago(at),
                                        _ => "not read yet".into(),
                                    };
                                    let failing = if c.failing > 0 { "badge state-bad" } else { "badge state-ok" };
                                    view! {
                                        <tr>
                                            <td><a href=href>{c.name}</a>{c.cloud.then_some(" (Confluent Cloud)")}</td>
                                            <td>{c.connectors}</td>
                                            <td><span class=failing>{c.failing}</span></td>
                                            <td>{read}</td>
                                        </tr>
                                    }
                                }).collect_view()}
                            </tbody>
                        </table>
                    }.into_any(),
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

/// The badge class of a connector's or task's state.
pub fn state_class(state: &str) -> &'static str {
    match state {
        "RUNNING" => "badge state-ok",
        "FAILED" => "badge state-bad",
        "UNASSIGNED" | "RESTARTING" | "PAUSED" | "STOPPED" => "badge state-warn",
        _ => "badge",
    }
}

/// A connector draft against the running config it was made on: each
/// property added, removed or changed; a secret's values are never shown,
/// only that it changed.
#[component]
pub fn ConnectorDiff(d: streamkeeper::connect::canonical::Diff) -> impl IntoView {
    use streamkeeper::connect::canonical::ChangeKind;
    let lead = if d.base_exists {
        "Against the connector's running config as it was read when this revision was made:"
    } else {
        "The connector does not exist yet: this creates it with every property below."
    };
    let empty = d.changes.is_empty();
    view! {
        <p class="note" data-testid="connector-diff-base">{lead}</p>
        {empty.then(|| view! { <p class="note">"No property differs from the running config."</p> })}
        <table class="list" data-testid="connector-diff">
            <thead><tr><th>"Property"</th><th>"Change"</th><th>"Running"</th><th>"Proposed"</th></tr></thead>
            <tbody>
                {d.changes.into_iter().map(|c| {
                    let kind = match c.kind {
                        ChangeKind::Added => "added",
                        ChangeKind::Removed => "removed",
                        ChangeKind::Changed => "changed",
                    };
                    let shown = move |v: Option<String>, present: bool| match v {
                        Some(v) => view! { <code>{v}</code> }.into_any(),
                        None if c.secret && present => view! { <em>"(secret, not shown)"</em> }.into_any(),
                        None => ().into_any(),
                    };
                    let before = shown(c.before, c.kind != ChangeKind::Added);
                    let after = shown(c.after, c.kind != ChangeKind::Removed);
                    view! {
                        <tr class=format!("diff-{kind}") data-key=c.key.clone()>
                            <td><code>{c.key.clone()}</code></td>
                            <td>{kind}</td>
                            <td>{before}</td>
                            <td>{after}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
}

/// An applied connector item: the connector's state from the first
/// status pass after the apply, or when that pass is due.
#[component]
pub fn RunAfterApply(r: crate::connect::model::RunAfterApply) -> impl IntoView {
    let text = match (&r.state, r.read_at) {
        (Some(s), Some(at)) => format!(
            "Status pass of {}: the connector is {s}{}.",
            stamp_ago(at),
            match r.tasks_failed {
                0 => String::new(),
                n => format!(", {n} of its tasks FAILED"),
            }
        ),
        (None, Some(at)) => format!(
            "The status pass of {} did not list the connector.",
            stamp_ago(at)
        ),
        _ => format!(
            "Whether it runs: the next status pass says (every {} s).",
            r.interval_s
        ),
    };
    let class = r.state.as_deref().map_or("badge", state_class);
    view! {
        <p data-testid="connector-run">
            {text} " "
            {r.state.clone().map(|s| view! { <span class=class data-testid="connector-run-state">{s}</span> })}
            {r.failure.clone().map(|f| view! { <br /><code class="detail" data-testid="connector-run-failure">{f}</code> })}
        </p>
    }
}
