//! `/lineage/graph`: the graph around one node (by `node`, a nodeId, or
//! `topic` and `cluster_id`), up- and downstream within `depth` hops and a
//! node budget, drawn in layers (flows left to right). Each node is a link
//! that re-centres the graph on it; the depth form and links change how
//! far it reaches. A table lists the same nodes, for reading and search
//! in the page. The centre's owner card says who owns it and why, and
//! sets it where it is set on the node.

use crate::lineage::fns::{SetLineageOwner, lineage_columns, lineage_graph};
use crate::lineage::model::{DatasetColumnsView, GraphView};
use crate::lineage::widgets::columns::DatasetColumns;
use crate::lineage::widgets::{
    GraphCanvas, OwnerCard, absent_words, graph_href, graph_svg, impact_href, kind_words, number,
};
use crate::ui::notes::ErrorNote;
use crate::ui::params::query_param;
use crate::ui::time::stamp_ago;
use crate::ui::title::page_title;
use leptos::prelude::*;
use leptos_meta::Title;
use streamkeeper::platform::words::counted;

#[component]
pub fn LineageGraphPage() -> impl IntoView {
    let node = query_param("node");
    let topic = query_param("topic");
    let cluster_id = query_param("cluster_id");
    let depth = query_param("depth");
    let budget = query_param("budget");
    let give = ServerAction::<SetLineageOwner>::new();
    let graph = Resource::new(
        move || {
            (
                node.get(),
                topic.get(),
                cluster_id.get(),
                depth.get(),
                budget.get(),
                give.version().get(),
            )
        },
        |(node, topic, cluster_id, depth, budget, _)| async move {
            let cluster_id = number(cluster_id, "cluster_id")?;
            let depth = number(depth, "depth")?;
            let budget = number(budget, "budget")?;
            let g = lineage_graph(node, topic, cluster_id, depth, budget).await?;
            // A dataset's page lists its columns; a job has none.
            let columns = if g.center.starts_with("dataset:") {
                Some(lineage_columns(Some(g.center.clone()), None, None).await?)
            } else {
                None
            };
            Ok::<_, crate::error::AppError>((g, columns))
        },
    );
    view! {
        <Title text=move || page_title(topic.get().or(node.get()).as_deref(), "Lineage") />
        <p><a href="/lineage">"← Lineage"</a></p>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match graph.await {
                    Ok((g, columns)) => view! { <Graph g give columns /> }.into_any(),
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn Graph(
    g: GraphView,
    give: ServerAction<SetLineageOwner>,
    columns: Option<DatasetColumnsView>,
) -> impl IntoView {
    let center = g.nodes.first().cloned();
    let name = center.as_ref().map(|c| c.name.clone()).unwrap_or_default();
    let kind = center
        .as_ref()
        .map(|c| kind_words(&c.kind).to_string())
        .unwrap_or_default();
    let id = g.center.clone();
    let depth = g.depth;
    let budget = g.budget;
    let svg = graph_svg(&g);
    let steps: Vec<u32> = (1..=6).collect();
    let summary = format!(
        "{}, {}, {} each way (at most {}).",
        counted(g.nodes.len(), "node"),
        counted(g.edges.len(), "edge"),
        counted(depth, "hop"),
        counted(budget, "node")
    );
    let owner = g.owner.clone();
    let partial = g.partial.then(|| {
        view! {
            <p class="note partial" data-testid="partial">
                {format!("Partial: {}. Raise the depth or the node budget to see more.", g.cut.describe())}
            </p>
        }
    });
    view! {
        <h1>"Lineage of " {kind} " " <span data-testid="graph-center">{name}</span></h1>
        <p class="note"><code>{id.clone()}</code></p>
        <p>
            <a href=impact_href(&id, "downstream") data-testid="what-breaks">"What breaks if it changes"</a>
            " · "
            <a href=impact_href(&id, "upstream")>"Where it comes from"</a>
        </p>
        <OwnerCard node=id.clone() o=owner give />
        <form method="get" action="/lineage/graph" class="filters" data-testid="depth-form">
            <input type="hidden" name="node" value=id.clone() />
            <label>"Depth " <input name="depth" type="number" min="1" max="12" value=depth.to_string() /></label>
            <label>"Node budget " <input name="budget" type="number" min="1" max="500" value=budget.to_string() /></label>
            <button type="submit">"Show"</button>
        </form>
        <p class="note" data-testid="depth-links">
            "Depth: "
            {steps.into_iter().map(|d| {
                let label = d.to_string();
                if d == depth {
                    view! { <strong>{label}</strong> " " }.into_any()
                } else {
                    view! { <a href=graph_href(&id, Some(d))>{label}</a> " " }.into_any()
                }
            }).collect_view()}
        </p>
        <p class="note" data-testid="graph-summary">{summary}</p>
        {partial}
        <GraphCanvas svg />
        <p class="note lineage-legend">
            "Shapes: topic (pill), consumer group (hexagon), connector (slanted), table (ruled box), job (rounded box), dashboard (folded corner). Dashed edges are derived by Streamkeeper; solid ones were observed in events. A topic with a dotted outline and no fill is named by a connector or an event but is not in the cluster. ⚑ counts open flags."
        </p>
        {columns.map(|v| view! {
            <h2>"Columns"</h2>
            <p class="note">"Each column with the fields its column lineage says it comes from."</p>
            <DatasetColumns v />
        })}
        <h2>"Nodes"</h2>
        <table class="list" data-testid="graph-nodes">
            <thead><tr><th>"Node"</th><th>"Kind"</th><th>"Namespace"</th><th>"Owner"</th><th>"Open flags"</th><th>"Known"</th><th>"Last seen"</th></tr></thead>
            <tbody>
                {g.nodes.into_iter().map(|n| view! {
                    <tr class:trouble={n.flags > 0}>
                        <td>
                            <a href=graph_href(&n.id, Some(depth))>{n.name.clone()}</a>
                            {absent_words(&n).map(|why| view! { " " <span class="badge state-warn" data-testid="not-in-cluster">{why}</span> })}
                        </td>
                        <td>{kind_words(&n.kind).to_string()}</td>
                        <td><code>{n.namespace.clone()}</code></td>
                        <td>{n.owner.clone().unwrap_or_else(|| "no owner".into())}</td>
                        <td>{n.flags}</td>
                        <td>{n.known_as.clone()}</td>
                        <td>{n.last_seen.map(stamp_ago).unwrap_or_default()}</td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
    }
}
