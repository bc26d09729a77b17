//! The one place that answers "who owns this, and why" for the runtime:
//! it gathers the facts (claims, the streams a thing reads or writes and
//! their catalog owners) and asks the pure rule
//! (`streamkeeper::access::ownership`). Flag routing, claims, drafts,
//! schema records, "notify owners", owner columns and metric labels all
//! call it, so they agree. A leaf: features of every layer use it.

mod store;

use sqlx::PgPool;
use std::collections::HashMap;
use streamkeeper::access::ownership::{
    self as rule, Claim, FacetFact, NodeFacts, Owner, Sender, StreamFact, Team,
};

use crate::platform::errors::Db;

fn team(id: Option<i64>, name: Option<String>) -> Option<Team> {
    Some(Team {
        id: id?,
        name: name?,
    })
}

/// A stream's owner (`None`: unowned, or no catalog entry).
pub async fn stream(pool: &PgPool, cluster_id: i64, topic: &str) -> Result<Option<Owner>, Db> {
    let rows = store::streams(pool, cluster_id, &[topic.to_string()]).await?;
    Ok(rows
        .into_iter()
        .next()
        .and_then(|r| rule::of_stream(team(r.team_id, r.team))))
}

/// The claim and owned streams of each named thing, from its rows.
fn facts(rows: Vec<store::ClaimRow>) -> HashMap<String, (Option<Claim>, Vec<StreamFact>)> {
    let mut out: HashMap<String, (Option<Claim>, Vec<StreamFact>)> = HashMap::new();
    for r in rows {
        let entry = out.entry(r.name).or_default();
        if let Some(t) = team(r.claim_team_id, r.claim_team) {
            entry.0 = Some(Claim {
                team: t,
                at: r.claimed_at,
            });
        }
        if let (Some(topic), Some(t)) = (r.topic, team(r.stream_team_id, r.stream_team)) {
            entry.1.push(StreamFact {
                topic,
                owner: Some(t),
            });
        }
    }
    out
}

/// The owners of the named consumer groups of a cluster: each group that
/// exists, with its owner (`None`: unowned).
pub async fn groups(
    pool: &PgPool,
    cluster_id: i64,
    names: &[String],
) -> Result<HashMap<String, Option<Owner>>, Db> {
    let rows = store::groups(pool, cluster_id, names).await?;
    Ok(facts(rows)
        .into_iter()
        .map(|(name, (claim, reads))| (name, rule::of_group(claim, &reads)))
        .collect())
}

/// A consumer group's owner: `None` when there is no such group,
/// `Some(None)` when it is unowned.
pub async fn group(
    pool: &PgPool,
    cluster_id: i64,
    name: &str,
) -> Result<Option<Option<Owner>>, Db> {
    Ok(groups(pool, cluster_id, &[name.to_string()])
        .await?
        .remove(name))
}

/// The owners of the named connectors of a Connect cluster: each that
/// exists, with its owner (`None`: unowned).
pub async fn connectors(
    pool: &PgPool,
    connect_id: i64,
    names: &[String],
) -> Result<HashMap<String, Option<Owner>>, Db> {
    let rows = store::connectors(pool, connect_id, names).await?;
    Ok(facts(rows)
        .into_iter()
        .map(|(name, (claim, touches))| (name, rule::of_connector(claim, &touches)))
        .collect())
}

/// The owner a connector reading or writing `topics` has: a draft's,
/// with the running connector's topics among them when it exists. Its
/// claim (if it exists and is claimed), else by those streams.
pub async fn connector_with(
    pool: &PgPool,
    cluster_id: i64,
    connect_id: i64,
    name: &str,
    topics: &[String],
) -> Result<Option<Owner>, Db> {
    let claim = facts(store::connectors(pool, connect_id, &[name.to_string()]).await?)
        .remove(name)
        .and_then(|(claim, _)| claim);
    let streams: Vec<StreamFact> = store::streams(pool, cluster_id, topics)
        .await?
        .into_iter()
        .map(|r| StreamFact {
            owner: team(r.team_id, r.team),
            topic: r.topic,
        })
        .collect();
    Ok(rule::of_connector(claim, &streams))
}

/// A connector's owner: `None` when there is no such connector,
/// `Some(None)` when it is unowned.
pub async fn connector(
    pool: &PgPool,
    connect_id: i64,
    name: &str,
) -> Result<Option<Option<Owner>>, Db> {
    Ok(connectors(pool, connect_id, &[name.to_string()])
        .await?
        .remove(name))
}

/// The owners of lineage nodes `ids` (by node id; absent: unowned): a
/// Kafka dataset's stream's, a derived consumer-group job's group's, else
/// an `ownership` facet's team when its sender may speak for it.
pub async fn lineage_nodes(pool: &PgPool, ids: &[i64]) -> Result<HashMap<i64, Owner>, Db> {
    let rows = store::lineage_nodes(pool, ids).await?;
    let mut groups_of: HashMap<i64, Vec<String>> = HashMap::new();
    for r in &rows {
        if let Some(c) = r.group_cluster {
            groups_of.entry(c).or_default().push(r.name.clone());
        }
    }
    let mut group_owners = HashMap::new();
    for (cluster, names) in groups_of {
        group_owners.insert(cluster, groups(pool, cluster, &names).await?);
    }
    let mut out = HashMap::new();
    for r in rows {
        let facts = if r.dataset_cluster.is_some() {
            NodeFacts::KafkaDataset {
                stream: StreamFact {
                    owner: team(r.stream_team_id, r.stream_team),
                    topic: r.name,
                },
            }
        } else if let Some(c) = r.group_cluster {
            let owner = group_owners
                .get(&c)
                .and_then(|g| g.get(&r.name))
                .cloned()
                .flatten();
            NodeFacts::Derived {
                name: r.name,
                owner,
            }
        } else {
            let sender = r.facet_sender.map(|username| Sender {
                username,
                admin: r.sender_admin.unwrap_or(false),
                teams: r.sender_teams,
            });
            NodeFacts::Other {
                set: None,
                facet: Some(FacetFact {
                    team: team(r.facet_team_id, r.facet_team),
                    sender,
                }),
            }
        };
        if let Some(owner) = rule::of_node(facts) {
            out.insert(r.id, owner);
        }
    }
    Ok(out)
}
