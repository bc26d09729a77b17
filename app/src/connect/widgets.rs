//! What other pages draw of Connect: a Kafka cluster's Connect clusters, and
//! the badge of a connector's state.

use crate::connect::fns::list_connect_clusters;
use crate::ui::notes::ErrorNote;
use crate::ui::params::href_with;
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
                                        (_, Some(at)) => at.format("%Y-%m-%d %H:%M:%S UTC").to_string(),
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
