//! Lineage's server functions: the graph view, search, the impact, the
//! impacts sent, notify owners, and a node's owner.

use crate::error::AppError;
use crate::lineage::model::{
    DatasetColumnsView, FieldImpactView, GraphView, ImpactView, NodeHit, NoticeView, SentView,
};
use leptos::prelude::*;

#[server(prefix = "/fn", endpoint = "lineage_graph")]
pub async fn lineage_graph(
    node: Option<String>,
    topic: Option<String>,
    cluster_id: Option<i64>,
    depth: Option<u32>,
    budget: Option<usize>,
) -> Result<GraphView, AppError> {
    use crate::lineage::model::NodeAsk;
    use crate::port::{backend, principal};
    let who = principal().await?;
    let ask = NodeAsk {
        node,
        topic,
        cluster_id,
        depth,
        budget,
        ..NodeAsk::default()
    };
    backend()?.lineage.graph(&who, &ask).await
}

#[server(prefix = "/fn", endpoint = "lineage_search")]
pub async fn lineage_search(q: String) -> Result<Vec<NodeHit>, AppError> {
    use crate::port::{backend, principal};
    let who = principal().await?;
    backend()?.lineage.search(&who, &q).await
}

#[server(prefix = "/fn", endpoint = "lineage_impact")]
pub async fn lineage_impact(
    node: Option<String>,
    topic: Option<String>,
    cluster_id: Option<i64>,
    direction: Option<String>,
    depth: Option<u32>,
) -> Result<ImpactView, AppError> {
    use crate::lineage::model::NodeAsk;
    use crate::port::{backend, principal};
    let who = principal().await?;
    let ask = NodeAsk {
        node,
        topic,
        cluster_id,
        direction,
        depth,
        ..NodeAsk::default()
    };
    backend()?.lineage.what_breaks(&who, &ask).await
}

/// What one field reaches along column lineage (the impact page's
/// column paths).
#[server(prefix = "/fn", endpoint = "lineage_field_paths")]
pub async fn lineage_field_paths(
    node: Option<String>,
    topic: Option<String>,
    cluster_id: Option<i64>,
    direction: Option<String>,
    depth: Option<u32>,
    field: String,
) -> Result<FieldImpactView, AppError> {
    use crate::lineage::model::NodeAsk;
    use crate::port::{backend, principal};
    let who = principal().await?;
    let ask = NodeAsk {
        node,
        topic,
        cluster_id,
        direction,
        depth,
        ..NodeAsk::default()
    };
    backend()?.lineage.field_paths(&who, &ask, &field).await
}

/// A dataset's columns and where each comes from (the graph page's
/// columns, the impact page's field picker).
#[server(prefix = "/fn", endpoint = "lineage_columns")]
pub async fn lineage_columns(
    node: Option<String>,
    topic: Option<String>,
    cluster_id: Option<i64>,
) -> Result<DatasetColumnsView, AppError> {
    use crate::lineage::model::NodeAsk;
    use crate::port::{backend, principal};
    let who = principal().await?;
    let ask = NodeAsk {
        node,
        topic,
        cluster_id,
        ..NodeAsk::default()
    };
    backend()?.lineage.dataset_columns(&who, &ask).await
}

#[server(prefix = "/fn", endpoint = "lineage_sent")]
pub async fn lineage_sent(node: String, direction: String) -> Result<Vec<SentView>, AppError> {
    use crate::port::{backend, principal};
    let who = principal().await?;
    backend()?.lineage.sent(&who, &node, &direction).await
}

/// Sends the impact of `node` to its owner teams (the impact page's
/// button), as `POST /api/v1/lineage/impact/notify` does.
#[server(prefix = "/fn", endpoint = "notify_lineage_owners")]
pub async fn notify_lineage_owners(
    node: String,
    direction: String,
    depth: Option<u32>,
) -> Result<NoticeView, AppError> {
    use crate::lineage::model::NodeAsk;
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    let ask = NodeAsk {
        node: Some(node),
        direction: Some(direction),
        depth,
        ..NodeAsk::default()
    };
    crate::ui::flash::noted(
        backend()?
            .lineage
            .send_to_owners(&who, &client_addr().await, &ask)
            .await,
        sent_note,
    )
    .await
}

/// Gives the lineage node `node` (a nodeId) to `team` (empty: clears the
/// owner set on it), as `PUT /api/v1/lineage/owner` does: the graph
/// page's owner form. Answers the owner as the ownership rule now says.
#[server(prefix = "/fn", endpoint = "set_lineage_owner")]
pub async fn set_lineage_owner(node: String, team: String) -> Result<Option<String>, AppError> {
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    let team = Some(team.trim()).filter(|t| !t.is_empty());
    crate::ui::flash::noted(
        backend()?
            .lineage
            .set_node_owner(&who, &client_addr().await, &node, team)
            .await,
        |owner| match owner {
            Some(o) => format!("Its owner is now {o}."),
            None => "It has no owner now.".to_string(),
        },
    )
    .await
}

#[cfg(feature = "ssr")]
fn sent_note(n: &NoticeView) -> String {
    if n.teams.is_empty() {
        return "Recorded; no owner team in the catalog to tell.".to_string();
    }
    let teams: Vec<String> = n
        .teams
        .iter()
        .map(|t| {
            format!(
                "{} ({} node{}, {} member{}{})",
                t.team,
                t.nodes,
                if t.nodes == 1 { "" } else { "s" },
                t.members,
                if t.members == 1 { "" } else { "s" },
                if t.webhook { ", webhook" } else { "" }
            )
        })
        .collect();
    format!("Sent to {}.", teams.join(", "))
}
