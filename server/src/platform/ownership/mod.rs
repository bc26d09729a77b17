//! The one place that answers "who owns this, and why" for the runtime:
//! it gathers the facts (claims, the streams a thing reads or writes and
//! their catalog owners) and asks the pure rule
//! (`streamkeeper::access::ownership`). Flag routing, claims, drafts,
//! schema records, "notify owners", owner columns and metric labels all
//! call it, so they agree. A leaf: features of every layer use it.

mod store;

pub use store::{GROUP_OWNER, STREAM_OWNER};

use sqlx::{PgConnection, PgPool};
use std::collections::HashMap;
use streamkeeper::access::ownership::{
    self as rule, Claim, FacetFact, NodeFacts, Owner, Sender, SetOwner, StreamFact, Team,
};
use streamkeeper::lineage::graph::NodeKey;

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

/// Every team, by name: what an admin may give a thing to.
pub async fn teams(pool: &PgPool) -> Result<Vec<Team>, Db> {
    Ok(store::teams(pool)
        .await?
        .into_iter()
        .map(|(id, name)| Team { id, name })
        .collect())
}

/// The owners of the named streams of a cluster: each stream in the
/// catalog, with its owner (`None`: unowned).
pub async fn streams(
    pool: &PgPool,
    cluster_id: i64,
    topics: &[String],
) -> Result<HashMap<String, Option<Owner>>, Db> {
    Ok(store::streams(pool, cluster_id, topics)
        .await?
        .into_iter()
        .map(|r| (r.topic, rule::of_stream(team(r.team_id, r.team))))
        .collect())
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

/// What the rule needs of lineage nodes `ids`, by node id (a node that
/// does not exist is absent): a Kafka dataset's stream, a derived job's
/// group or connector with its owner (a job that names one that does not
/// exist is like any other node), else the team set on it and its
/// `ownership` facet with its sender's standing.
pub async fn lineage_facts(pool: &PgPool, ids: &[i64]) -> Result<HashMap<i64, NodeFacts>, Db> {
    let rows = store::lineage_nodes(pool, ids).await?;
    let mut groups_of: HashMap<i64, Vec<String>> = HashMap::new();
    let mut connectors_of: HashMap<i64, Vec<String>> = HashMap::new();
    for r in &rows {
        if let Some(c) = r.group_cluster {
            groups_of.entry(c).or_default().push(r.name.clone());
        }
        if let Some(c) = r.connector_connect {
            connectors_of.entry(c).or_default().push(r.name.clone());
        }
    }
    let mut group_owners = HashMap::new();
    for (cluster, names) in groups_of {
        group_owners.insert(cluster, groups(pool, cluster, &names).await?);
    }
    let mut connector_owners = HashMap::new();
    for (connect, names) in connectors_of {
        connector_owners.insert(connect, connectors(pool, connect, &names).await?);
    }
    let mut out = HashMap::new();
    for r in rows {
        let derived = r
            .group_cluster
            .and_then(|c| group_owners.get(&c)?.get(&r.name))
            .or_else(|| {
                r.connector_connect
                    .and_then(|c| connector_owners.get(&c)?.get(&r.name))
            })
            .cloned();
        let facts = if r.dataset_cluster.is_some() {
            NodeFacts::KafkaDataset {
                stream: StreamFact {
                    owner: team(r.stream_team_id, r.stream_team),
                    topic: r.name,
                },
            }
        } else if let Some(owner) = derived {
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
            let set = team(r.set_team_id, r.set_team).and_then(|team| {
                Some(SetOwner {
                    team,
                    by: r.set_by?,
                    at: r.set_at?,
                })
            });
            NodeFacts::Other {
                set,
                facet: Some(FacetFact {
                    team: team(r.facet_team_id, r.facet_team),
                    sender,
                }),
            }
        };
        out.insert(r.id, facts);
    }
    Ok(out)
}

/// The owners of lineage nodes `ids` (by node id; absent: unowned), by
/// the rule over [`lineage_facts`].
pub async fn lineage_nodes(pool: &PgPool, ids: &[i64]) -> Result<HashMap<i64, Owner>, Db> {
    Ok(lineage_facts(pool, ids)
        .await?
        .into_iter()
        .filter_map(|(id, facts)| Some((id, rule::of_node(facts)?)))
        .collect())
}

/// The team an `ownership` facet names first (OpenLineage's
/// `owners[0].name`), as the store reads it too.
pub fn facet_team(value: &serde_json::Value) -> Option<&str> {
    value.get("owners")?.get(0)?.get("name")?.as_str()
}

/// An `ownership` facet a fold brings for a node: what it names first
/// (`None`: nothing, or a deletion) and who sent it.
pub struct NewFacet<'a> {
    pub node: &'a NodeKey,
    pub team: Option<&'a str>,
    pub sender: &'a str,
}

/// Which of the `ownership` facets a fold's batch brings are taken
/// ([`rule::facets_taken`]), one flag each: `batch` in the order the
/// graph merges them (by time, a later event on a tie), several per node
/// allowed; each node's are checked one after another from the facet it
/// has, read in the fold's transaction. The last taken of a node is the
/// one to keep; none taken keeps the stored one.
pub async fn facets_taken(
    conn: &mut PgConnection,
    batch: &[NewFacet<'_>],
) -> Result<Vec<bool>, Db> {
    if batch.is_empty() {
        return Ok(Vec::new());
    }
    let keys: Vec<NodeRef> = batch.iter().map(|f| node_ref(f.node)).collect();
    let stored = stored_facets(&mut *conn, &keys).await?;
    let facts = new_facts(conn, batch).await?;
    // Each node's facets, in the batch's order, by their place in it.
    let mut by_node: HashMap<&NodeRef, Vec<usize>> = HashMap::new();
    for (i, key) in keys.iter().enumerate() {
        by_node.entry(key).or_default().push(i);
    }
    let mut taken = vec![false; batch.len()];
    for (key, places) in by_node {
        let mine: Vec<FacetFact> = places.iter().map(|&i| facts[i].clone()).collect();
        for (&i, t) in places
            .iter()
            .zip(rule::facets_taken(stored.get(key), &mine))
        {
            taken[i] = t;
        }
    }
    Ok(taken)
}

/// A lineage node as its stored rows name it: (kind, namespace, name).
type NodeRef = (String, String, String);

fn node_ref(node: &NodeKey) -> NodeRef {
    let kind = match node {
        NodeKey::Dataset(_) => "dataset",
        NodeKey::Job(_) => "job",
    };
    (
        kind.to_string(),
        node.namespace().to_string(),
        node.name().to_string(),
    )
}

/// The `ownership` facet each of `keys` has, with its sender's standing.
async fn stored_facets(
    conn: &mut PgConnection,
    keys: &[NodeRef],
) -> Result<HashMap<NodeRef, FacetFact>, Db> {
    let kinds: Vec<&str> = keys.iter().map(|k| k.0.as_str()).collect();
    let namespaces: Vec<&str> = keys.iter().map(|k| k.1.as_str()).collect();
    let names: Vec<&str> = keys.iter().map(|k| k.2.as_str()).collect();
    Ok(store::stored_facets(conn, &kinds, &namespaces, &names)
        .await?
        .into_iter()
        .map(|r| {
            let sender = r.sender.map(|username| Sender {
                username,
                admin: r.sender_admin.unwrap_or(false),
                teams: r.sender_teams,
            });
            let fact = FacetFact {
                team: team(r.team_id, r.team),
                sender,
            };
            ((r.kind, r.namespace, r.name), fact)
        })
        .collect())
}

/// What the rule needs of each facet of `batch`: the team it names (when
/// that is a team) and its sender's standing.
async fn new_facts(conn: &mut PgConnection, batch: &[NewFacet<'_>]) -> Result<Vec<FacetFact>, Db> {
    let usernames: Vec<&str> = batch.iter().map(|f| f.sender).collect();
    let senders: HashMap<String, Sender> = store::senders(&mut *conn, &usernames)
        .await?
        .into_iter()
        .map(|r| {
            let s = Sender {
                username: r.username.clone(),
                admin: r.admin,
                teams: r.teams,
            };
            (r.username, s)
        })
        .collect();
    let team_names: Vec<&str> = batch.iter().filter_map(|f| f.team).collect();
    let teams: HashMap<String, i64> = store::teams_named(conn, &team_names)
        .await?
        .into_iter()
        .map(|(id, name)| (name, id))
        .collect();
    Ok(batch
        .iter()
        .map(|f| FacetFact {
            team: f.team.and_then(|name| {
                Some(Team {
                    id: *teams.get(name)?,
                    name: name.to_string(),
                })
            }),
            sender: senders.get(f.sender).cloned(),
        })
        .collect())
}
