//! `/lineage/impact`: what breaks if a topic, dataset or job changes (or,
//! `direction=upstream`, where it comes from): every node reached with its
//! owner team, the path that reaches it, how it is known (observed in
//! events or derived by Streamkeeper) and when last seen; `partial` with
//! what the depth or budget cut. "Notify owners" sends it to every owner
//! team's inbox and webhook (owners of the node's team and admins), and
//! the impacts sent so far are listed.

use crate::error::AppError;
use crate::lineage::fns::{
    NotifyLineageOwners, lineage_columns, lineage_field_paths, lineage_impact, lineage_sent,
};
use crate::lineage::model::{BreakView, FieldImpactView, ImpactNode, ImpactView, SentView};
use crate::lineage::widgets::columns::{ColumnPaths, FieldPicker};
use crate::lineage::widgets::{graph_href, impact_href, number};
use crate::ui::notes::{ActionNote, ErrorNote};
use crate::ui::params::query_param;
use crate::ui::time::stamp_ago;
use crate::ui::title::page_title;
use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn LineageImpactPage() -> impl IntoView {
    let node = query_param("node");
    let topic = query_param("topic");
    let cluster_id = query_param("cluster_id");
    let direction = query_param("direction");
    let depth = query_param("depth");
    let field = query_param("field");
    let notify = ServerAction::<NotifyLineageOwners>::new();
    let answer = Resource::new(
        move || {
            (
                node.get(),
                topic.get(),
                cluster_id.get(),
                direction.get(),
                depth.get(),
                field.get(),
                notify.version().get(),
            )
        },
        |(node, topic, cluster_id, direction, depth, field, _)| async move {
            let cluster_id = number(cluster_id, "cluster_id")?;
            let depth = number(depth, "depth")?;
            let i = lineage_impact(node, topic, cluster_id, direction, depth).await?;
            let sent = lineage_sent(i.start.clone(), i.direction.clone()).await?;
            let columns = columns_of(&i, depth, field).await;
            Ok::<_, AppError>((i, sent, depth, columns))
        },
    );
    view! {
        <Title text=move || page_title(topic.get().or(node.get()).as_deref(), "What breaks") />
        <p><a href="/lineage">"← Lineage"</a></p>
        <div data-testid="notify-notes">
            <ActionNote value=notify.value() />
        </div>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match answer.await {
                    Ok((i, sent, depth, columns)) => view! { <Impact i sent depth notify columns /> }.into_any(),
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn Impact(
    i: ImpactView,
    sent: Vec<SentView>,
    depth: Option<u32>,
    notify: ServerAction<NotifyLineageOwners>,
    columns: Columns,
) -> impl IntoView {
    let down = i.direction == "downstream";
    let (heading, other, other_label) = if down {
        (
            "What breaks if this changes",
            "upstream",
            "Where it comes from instead",
        )
    } else {
        ("Where this comes from", "downstream", "What breaks instead")
    };
    let start = i.start.clone();
    let owners: std::collections::BTreeSet<String> =
        i.nodes.iter().filter_map(|n| n.owner.clone()).collect();
    let summary = format!(
        "{} node{} {}, {} owner team{}{}.",
        i.nodes.len(),
        if i.nodes.len() == 1 { "" } else { "s" },
        if down { "downstream" } else { "upstream" },
        owners.len(),
        if owners.len() == 1 { "" } else { "s" },
        if owners.is_empty() {
            String::new()
        } else {
            format!(": {}", owners.into_iter().collect::<Vec<_>>().join(", "))
        }
    );
    let partial = i.partial.then(|| {
        view! {
            <p class="note partial" data-testid="partial">
                {format!("Partial: {}.", i.cut.describe())}
            </p>
        }
    });
    view! {
        <h1>{heading}</h1>
        <p><code data-testid="impact-start">{start.clone()}</code></p>
        <p>
            <a href=graph_href(&start, None) data-testid="impact-graph">"Graph"</a>
            " · "
            <a href=impact_href(&start, other)>{other_label}</a>
        </p>
        <FieldPicker node=start.clone() direction=i.direction.clone() depth fields=columns.fields chosen=columns.chosen />
        {columns.paths.map(|v| view! { <ColumnPaths v /> })}
        <p class="note" data-testid="impact-summary">{summary}</p>
        {partial}
        <p class="note" data-testid="impact-breaks">{breaks_summary(&i.nodes)}</p>
        {if i.nodes.is_empty() {
            view! { <p class="note" data-testid="impact-empty">"Nothing is known to read it (or feed it, upstream)."</p> }.into_any()
        } else {
            view! {
                <table class="list" data-testid="impact-nodes">
                    <thead><tr><th>"Hops"</th><th>"Node"</th><th>"Kind"</th><th>"Owner"</th><th>"Path"</th><th>"Known"</th><th>"Last seen"</th><th>"Pending change"</th></tr></thead>
                    <tbody>
                        {i.nodes.into_iter().map(|n| {
                            let path: Vec<String> = n.path.iter().map(|p| short(p)).collect();
                            let broken = !n.breaks.is_empty();
                            let breaks = n.breaks.clone();
                            view! {
                                <tr class:broken=broken>
                                    <td>{n.depth}</td>
                                    <td><a href=graph_href(&n.id, None)>{n.name.clone()}</a><br /><code class="note">{n.namespace.clone()}</code></td>
                                    <td>{n.kind.clone()}</td>
                                    <td>{n.owner.clone().unwrap_or_else(|| "no owner".into())}</td>
                                    <td class="path">{path.join(" → ")}</td>
                                    <td>{n.known_as.clone()}</td>
                                    <td>{n.last_seen.map(stamp_ago).unwrap_or_default()}</td>
                                    <td data-testid="node-breaks"><Breaks breaks /></td>
                                </tr>
                            }
                        }).collect_view()}
                    </tbody>
                </table>
            }.into_any()
        }}
        <section class="card" data-testid="notify">
            <h2>"Notify owners"</h2>
            <p class="note">"Sends this answer to every owner team it reaches: an inbox line to each member and the team's webhook. Owners of this node's team and admins may. Recorded as a question answered and audited."</p>
            <ActionForm action=notify attr:data-testid="notify-form">
                <input type="hidden" name="node" value=start.clone() />
                <input type="hidden" name="direction" value=i.direction.clone() />
                {depth.map(|d| view! { <input type="hidden" name="depth" value=d.to_string() /> })}
                <button type="submit">"Notify owners"</button>
            </ActionForm>
            {if sent.is_empty() {
                view! { <p class="note" data-testid="sent-none">"Not sent to its owners yet."</p> }.into_any()
            } else {
                view! {
                    <table class="list" data-testid="sent">
                        <thead><tr><th>"Sent"</th><th>"By"</th><th>"Teams"</th><th>"Nodes"</th></tr></thead>
                        <tbody>
                            {sent.into_iter().map(|s| view! {
                                <tr>
                                    <td>{s.notified_at.map(stamp_ago).unwrap_or_default()}</td>
                                    <td>{s.asked_by.clone()}</td>
                                    <td>{if s.teams.is_empty() { "none in the catalog".to_string() } else { s.teams.join(", ") }}</td>
                                    <td>{format!("{}{}", s.reached, if s.partial { " (partial)" } else { "" })}</td>
                                </tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                }.into_any()
            }}
        </section>
    }
}

/// The start's fields to pick from and, for the field picked, its
/// column paths.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
struct Columns {
    fields: Vec<String>,
    chosen: Option<String>,
    paths: Option<Result<FieldImpactView, AppError>>,
}

/// The columns of the impact's start (a dataset; a job has none) and the
/// paths of the `field` asked for (a field the graph does not know is
/// said on the page, not a failed page).
async fn columns_of(i: &ImpactView, depth: Option<u32>, field: Option<String>) -> Columns {
    if !i.start.starts_with("dataset:") {
        return Columns::default();
    }
    let fields = lineage_columns(Some(i.start.clone()), None, None)
        .await
        .map(|c| c.columns.into_iter().map(|c| c.field).collect())
        .unwrap_or_default();
    let chosen = field.filter(|f| !f.is_empty());
    let paths = match &chosen {
        Some(f) => Some(
            lineage_field_paths(
                Some(i.start.clone()),
                None,
                None,
                Some(i.direction.clone()),
                depth,
                f.clone(),
            )
            .await,
        ),
        None => None,
    };
    Columns {
        fields,
        chosen,
        paths,
    }
}

/// What the pending producer changes break among the reached nodes, in
/// one sentence.
fn breaks_summary(nodes: &[ImpactNode]) -> String {
    let broken: Vec<&str> = nodes
        .iter()
        .filter(|n| !n.breaks.is_empty())
        .map(|n| n.name.as_str())
        .collect();
    if broken.is_empty() {
        return "No pending producer change breaks a reader here.".to_string();
    }
    let items: std::collections::BTreeSet<Option<i64>> = nodes
        .iter()
        .flat_map(|n| n.breaks.iter().map(|b| b.item))
        .collect();
    format!(
        "Pending producer change{} break{} {} consumer{} here: {}.",
        if items.len() == 1 { "" } else { "s" },
        if items.len() == 1 { "s" } else { "" },
        broken.len(),
        if broken.len() == 1 { "" } else { "s" },
        broken.join(", ")
    )
}

/// A node's breaks: each change's review item (when the asker may read
/// it) and why its reader schema cannot read the change.
#[component]
fn Breaks(breaks: Vec<BreakView>) -> impl IntoView {
    breaks
        .into_iter()
        .map(|b| {
            let item = match (b.item, b.title) {
                (Some(id), Some(title)) => view! {
                    <a href=format!("/review/{id}")>{format!("#{id} {title}")}</a>
                }
                .into_any(),
                _ => view! { <span>"a change in review you may not read"</span> }.into_any(),
            };
            view! {
                <p class="break">
                    <strong>"Breaks"</strong>
                    " (" {short(&b.topic)} "): " {item}
                    {b.reasons.into_iter().map(|r| view! { <br /><span class="note">{r}</span> }).collect_view()}
                </p>
            }
        })
        .collect_view()
}

/// A nodeId without its kind, for a compact path.
fn short(id: &str) -> String {
    id.split_once(':').map_or(id, |(_, rest)| rest).to_string()
}
