//! Settings → Routines' replicas: which replicas run, which version each
//! runs (two during a rolling upgrade), when each was last heard from, and
//! how many clusters of each per-cluster routine it holds against the fair
//! share, so a platform team sees the work spread (or not).

use crate::platform::fns::list_replicas;
use crate::platform::model::{ReplicaShare, ReplicaShares};
use crate::ui::notes::ErrorNote;
use crate::ui::time::stamp_ago;
use leptos::prelude::*;
use streamkeeper::platform::words::counted;

#[component]
pub fn Replicas() -> impl IntoView {
    let shares = Resource::new(|| (), |()| list_replicas());
    view! {
        <h2 id="replicas">"Replicas"</h2>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match shares.await {
                    Ok(s) => view! { <Shares s /> }.into_any(),
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn Shares(s: ReplicaShares) -> impl IntoView {
    let summary = format!(
        "{} alive; {}: each takes at most {} of a routine's clusters, and one holding more than the spread allows gives one up after its run.",
        counted(s.alive, "replica"),
        counted(s.clusters, "cluster"),
        s.fair_share
    );
    let mut versions: Vec<&str> = s
        .replicas
        .iter()
        .filter(|r| r.alive)
        .map(|r| r.version.as_str())
        .collect();
    versions.sort_unstable();
    versions.dedup();
    let mixed = (versions.len() > 1).then(|| {
        format!(
            "Live replicas run different versions ({}): a rolling upgrade under way?",
            versions.join(", ")
        )
    });
    let fair = s.fair_share;
    view! {
        <p class="note" data-testid="replica-summary">{summary}</p>
        {mixed.map(|m| view! { <p class="note warn" data-testid="replica-versions">{m}</p> })}
        <table class="list" data-testid="replicas">
            <thead><tr>
                <th>"Replica"</th><th>"Version"</th><th>"Started"</th><th>"Last heard"</th><th>"Clusters held"</th>
            </tr></thead>
            <tbody>
                {s.replicas.into_iter().map(|r| view! { <ReplicaRow r fair /> }).collect_view()}
            </tbody>
        </table>
    }
}

#[component]
fn ReplicaRow(r: ReplicaShare, fair: u64) -> impl IntoView {
    let held = if r.held.is_empty() {
        "none".to_string()
    } else {
        r.held
            .iter()
            .map(|h| {
                let over = if r.alive && h.clusters > fair {
                    " (over its share)"
                } else {
                    ""
                };
                format!("{}: {}{over}", h.routine, h.clusters)
            })
            .collect::<Vec<_>>()
            .join("; ")
    };
    let heard = if r.alive {
        stamp_ago(r.seen_at)
    } else {
        format!("{} — not counted", stamp_ago(r.seen_at))
    };
    view! {
        <tr class:trouble=!r.alive>
            <td><code>{r.replica}</code></td>
            <td>{r.version}</td>
            <td>{stamp_ago(r.started_at)}</td>
            <td>{heard}</td>
            <td>{held}</td>
        </tr>
    }
}
