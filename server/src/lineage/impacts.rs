//! An impact question: the part of the graph it needs loaded from the store,
//! walked in memory, answered with each node's owner and the pending
//! changes that would break it, and sent to the owners it reaches.

use streamkeeper::access::ownership::Owner;

use super::adjacency::Caught;
use super::{ImpactNode, ImpactView, LineageService, NoticeView, TeamNoticeView, store};
use crate::accounts::require;
use crate::audit::audited;
use crate::platform::authz::Facts;
use crate::platform::db::{begin, commit};
use crate::platform::errors::{Db, internal};
use crate::schemas;
use std::collections::{BTreeMap, HashMap};
use streamkeeper::accounts::account::Principal;
use streamkeeper::accounts::role::{Action, Role};
use streamkeeper::lineage::breaks::{BrokenReader, ItemRef, PendingChange};
use streamkeeper::lineage::graph::{Graph, Known, Node, NodeKey};
use streamkeeper::lineage::impact::{Direction, Impact, Limits, impact};
use streamkeeper::lineage::notify;
use streamkeeper_app::error::AppError;

impl LineageService {
    /// The part of the stored graph within `limits` of `start` in
    /// `directions`, found in the in-memory adjacency (brought up to date
    /// first), with every edge among its nodes and their times when
    /// `among`, else the edges the walk followed without times (an impact
    /// reads the times of the edges its answer shows), and the facets
    /// named in `facets` (all when `None`), and each node's owner by the
    /// ownership rule.
    pub(super) async fn load(
        &self,
        start: i64,
        directions: &[Direction],
        limits: Limits,
        among: bool,
        facets: Option<&[&str]>,
    ) -> Result<Loaded, Db> {
        let (limits, _) = limits.clamped();
        self.adjacency.refresh(&self.pool).await?;
        let (found, _) = self
            .adjacency
            .reach(start, directions, limits.depth, limits.budget)
            .await;
        let ids: Vec<i64> = found.members.into_iter().collect();
        let edges = if among {
            store::edges_among(&self.pool, &ids).await?
        } else {
            found
                .edges
                .iter()
                .map(|&(src, dst)| store::EdgeRow::untimed(src, dst))
                .collect()
        };
        // Independent reads at once: one round trip's wait, not three.
        let (nodes, facets, ruled) = tokio::try_join!(
            store::nodes(&self.pool, &ids),
            store::facets(&self.pool, &ids, facets),
            crate::platform::ownership::lineage_nodes(&self.pool, &ids),
        )?;
        let start_key = nodes
            .iter()
            .find(|n| n.id == start)
            .map(store::NodeRow::key)
            .ok_or(Db(sqlx::Error::RowNotFound))?;
        Ok(Loaded {
            ruled,
            ids: nodes.iter().map(|n| (n.key(), n.id)).collect(),
            graph: store::graph_of(&nodes, facets, &edges),
            start: start_key,
            beyond: found.beyond,
        })
    }

    /// Everything downstream (or upstream) of `key` within `limits`, each
    /// node with one shortest path and its owner team.
    pub async fn impact(
        &self,
        who: &Principal,
        key: &NodeKey,
        direction: Direction,
        limits: Limits,
    ) -> Result<Impact, AppError> {
        Ok(self.answer(who, key, direction, limits).await?.0)
    }

    /// The impact, and the owner team of the node asked about, in one
    /// round trip: the walk runs over the in-memory adjacency and keys as
    /// they stand, then one statement reads what was added since they were
    /// last caught up together with the times and owners of the nodes the
    /// answer shows and the times of the edges that reach them. When
    /// something added leaves a node the walk reached, the walk runs again
    /// on the memory that read brought up to date (so the answer holds
    /// every commit made before the question), with a second read.
    async fn answer(
        &self,
        who: &Principal,
        key: &NodeKey,
        direction: Direction,
        limits: Limits,
    ) -> Result<(Impact, Option<String>), AppError> {
        require(who, Action::Read, "read lineage")?;
        self.fold.catch_up().await?;
        let (walk, _) = limits.clamped();
        let mut grown = false;
        // A rebuild between the walk and its read changes every id; two in
        // a row during one question would be a rebuild loop, not traffic.
        for _ in 0..3 {
            let start = match self.adjacency.id_of(&self.pool, key).await? {
                Some(id) => id,
                // Not a node the memory knows: a new one, or a name the
                // store resolves (a raw namespace, an alias).
                None => {
                    self.adjacency.refresh(&self.pool).await?;
                    match self.adjacency.id_of(&self.pool, key).await? {
                        Some(id) => id,
                        None => self.resolve(key).await?,
                    }
                }
            };
            let (found, mark) = self
                .adjacency
                .reach(start, &[direction], walk.depth, walk.budget)
                .await;
            let keys = self.adjacency.keys(found.members.iter().copied()).await;
            let Some(start_key) = keys.get(&start).cloned() else {
                // Resolved by the store after the memory last looked.
                self.adjacency.refresh(&self.pool).await?;
                continue;
            };
            // The pure walk over the reached part, its times still unknown.
            let mut graph = Graph::new();
            graph.insert_node(Node::bare(start_key.clone()));
            for (src, dst) in &found.edges {
                if let (Some(a), Some(b)) = (keys.get(src), keys.get(dst)) {
                    graph.insert_edge(a.clone(), b.clone(), Known::default());
                }
            }
            let mut answer = impact(&graph, &start_key, direction, limits)
                .map_err(|e| AppError::NotFound(e.to_string()))?;
            answer.cut.depth |= found.beyond;
            answer.partial |= found.beyond;
            let ids: HashMap<&NodeKey, i64> = keys.iter().map(|(id, k)| (k, *id)).collect();
            let id = |k: &NodeKey| ids.get(k).copied().unwrap_or_default();
            let shown: Vec<i64> = answer.nodes.iter().map(|r| id(&r.key)).collect();
            let pairs: Vec<(i64, i64)> = answer
                .nodes
                .iter()
                .zip(&shown)
                .map(|(r, &node)| {
                    let parent = r.parent.map_or(start, |p| shown[p]);
                    match direction {
                        Direction::Downstream => (parent, node),
                        Direction::Upstream => (node, parent),
                    }
                })
                .collect();
            let asked: Vec<i64> = shown.iter().copied().chain([start]).collect();
            let read = store::impact_read(&self.pool, mark.xmax, &mark.xip, &asked, &pairs).await?;
            let caught = self
                .adjacency
                .catch_up(&self.pool, &mark, read.delta, direction, &found.members)
                .await?;
            match caught {
                Caught::Unchanged => {}
                // Once: the second walk ran on memory caught up after the
                // question was asked; what its read adds is the next one's.
                Caught::Grown if !grown => {
                    grown = true;
                    continue;
                }
                Caught::Grown => {}
                Caught::Rebuilt => continue,
            }
            let ruled = crate::platform::ownership::lineage_nodes(&self.pool, &asked).await?;
            let owner = |id: &i64| ruled.get(id).map(|o| o.team.name.clone());
            for ((r, node), pair) in answer.nodes.iter_mut().zip(&shown).zip(&pairs) {
                r.via = read.edges.get(pair).copied().unwrap_or_default();
                r.known = read.nodes.get(node).map(|f| f.known).unwrap_or_default();
            }
            answer.attach_owners(|k| owner(&id(k)));
            // The answer's topics of registered clusters, from the same read.
            let topics: Vec<(&NodeKey, i64)> = answer
                .datasets()
                .filter_map(|k| Some((k, read.nodes.get(&id(k))?.cluster?)))
                .collect();
            let pending = self.pending_changes(who, &topics).await?;
            answer.attach_breaks(&pending);
            return Ok((answer, owner(&start)));
        }
        Err(internal(
            "lineage impact",
            "the lineage graph was rebuilt three times during one question",
        ))
    }

    /// The pending producer changes on `topics` (an answer's datasets that
    /// are topics of a registered cluster, with its id), with the consumer
    /// groups their checks found cannot read them; what `who` may not read
    /// of a change (its item and reasons) is left out.
    async fn pending_changes(
        &self,
        who: &Principal,
        topics: &[(&NodeKey, i64)],
    ) -> Result<Vec<PendingChange>, AppError> {
        if topics.is_empty() {
            return Ok(Vec::new());
        }
        let namespace: HashMap<(i64, &str), &str> = topics
            .iter()
            .map(|(key, cluster)| ((*cluster, key.name()), key.namespace()))
            .collect();
        let pairs: Vec<(i64, String)> = topics
            .iter()
            .map(|(key, cluster)| (*cluster, key.name().to_string()))
            .collect();
        let reader = schemas::store::Reader {
            user_id: who.user_id,
            username: &who.username,
            admin: who.has(Role::Admin),
        };
        let rows = schemas::store::pending_breaks(&self.pool, &pairs, reader).await?;
        // One change per item (by id, whether or not `who` may see it),
        // its broken groups in the query's order.
        let mut changes: BTreeMap<i64, PendingChange> = BTreeMap::new();
        for row in rows {
            let Some(ns) = namespace.get(&(row.cluster_id, row.topic.as_str())) else {
                continue;
            };
            let change = changes.entry(row.item_id).or_insert_with(|| PendingChange {
                topic: NodeKey::dataset(ns, &row.topic),
                item: row.readable.then(|| ItemRef {
                    id: row.item_id,
                    title: row.title.clone(),
                }),
                broken: Vec::new(),
            });
            change.broken.push(BrokenReader {
                group: row.group_name,
                reasons: if row.readable {
                    reason_messages(&row.reasons)
                } else {
                    Vec::new()
                },
            });
        }
        Ok(changes.into_values().collect())
    }

    /// "Notify owners": answers the impact of `key` and sends it to every
    /// owner team it reaches, an inbox line to each member and the team's
    /// webhook (delivered with the flags' retries), recorded as a question
    /// asked and answered, audited. Only an admin or an owner of the
    /// node's own team may (`streamkeeper::lineage::notify::may_notify`).
    pub async fn notify_owners(
        &self,
        who: &Principal,
        from: &str,
        key: &NodeKey,
        direction: Direction,
        limits: Limits,
    ) -> Result<NoticeView, AppError> {
        let asked_at = crate::platform::clock::now();
        let (answer, start_owner) = self.answer(who, key, direction, limits).await?;
        let answered_at = crate::platform::clock::now();
        let view = ImpactView::of(&answer);
        let owner_team = match &start_owner {
            Some(name) => store::team_named(&self.pool, name).await?,
            None => None,
        };
        let facts = Facts::load(&self.pool, who).await?;
        if !notify::may_notify(facts.steward(who), owner_team) {
            // A 403, audited by the web layer like every refused write; the
            // CLI acts as an admin.
            return Err(AppError::Forbidden(format!(
                "send the impact of {} to its owners (owners of its team and admins may)",
                view.start
            )));
        }
        let groups = notify::by_owner(&answer);
        let names: Vec<&str> = groups.keys().copied().collect();
        let teams = store::teams_named(&self.pool, &names).await?;
        let unknown: Vec<String> = names
            .iter()
            .filter(|n| !teams.iter().any(|t| t.name == **n))
            .map(|n| n.to_string())
            .collect();
        let mut tx = begin(&self.pool).await?;
        let (question, notified_at) = store::insert_question(
            &mut tx,
            &store::NewQuestion {
                node: &view.start,
                direction: &view.direction,
                asked_by: &who.username,
                asked_at,
                answered_at,
                reached: i32::try_from(view.nodes.len()).unwrap_or(i32::MAX),
                partial: view.partial,
                teams: teams.iter().map(|t| t.name.as_str()).collect(),
                answer: serde_json::to_value(&view).unwrap_or_default(),
                by_webhook: teams.iter().any(|t| t.webhook_url.is_some()),
            },
        )
        .await?;
        let mut told = Vec::new();
        for team in &teams {
            let mine: Vec<&ImpactNode> = groups
                .get(team.name.as_str())
                .map(|ix| ix.iter().filter_map(|i| view.nodes.get(*i)).collect())
                .unwrap_or_default();
            let message = notify::message(&view.start, &team.name, mine.len(), view.partial);
            store::notify_users(&mut tx, &team.members, question, &message).await?;
            if let Some(url) = &team.webhook_url {
                let body = serde_json::json!({
                    "kind": "lineage.impact", "question": question, "start": view.start,
                    "direction": view.direction, "team": team.name, "message": message,
                    "partial": view.partial, "nodes": mine,
                });
                crate::flags::store::enqueue_question(&mut tx, question, url, &body).await?;
            }
            told.push(TeamNoticeView {
                team: team.name.clone(),
                nodes: mine.len(),
                members: team.members.len(),
                webhook: team.webhook_url.is_some(),
            });
        }
        audited(
            &mut tx,
            who,
            from,
            "lineage.impact.notify",
            format!("lineage:{}", view.start),
            serde_json::json!({"question": question, "direction": view.direction,
                "reached": view.nodes.len(), "partial": view.partial,
                "teams": told.iter().map(|t| &t.team).collect::<Vec<_>>(),
                "not_in_catalog": unknown}),
        )
        .await?;
        commit(tx).await?;
        Ok(NoticeView {
            question,
            asked_at,
            answered_at,
            notified_at,
            teams: told,
            not_in_catalog: unknown,
            impact: view,
        })
    }

    /// Owner teams by the ownership rule (`ruled`, by node id, as
    /// [`Self::load`] read it), and nothing else.
    pub(super) fn owners<'a>(
        keys: impl Iterator<Item = &'a NodeKey>,
        ids: &HashMap<NodeKey, i64>,
        ruled: &HashMap<i64, Owner>,
    ) -> HashMap<NodeKey, String> {
        keys.filter_map(|k| Some((k.clone(), ruled.get(ids.get(k)?)?.team.name.clone())))
            .collect()
    }
}

/// The sentences of a check's reasons for one consumer group, as its
/// stored report holds them (`Incompatibility`'s `message`).
fn reason_messages(reasons: &serde_json::Value) -> Vec<String> {
    reasons
        .as_array()
        .map(|list| {
            list.iter()
                .filter_map(|r| r.get("message").and_then(|m| m.as_str()))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// The part of the graph a question needs, as loaded from the store.
pub(super) struct Loaded {
    /// Each loaded node's owner by the ownership rule, by node id.
    pub(super) ruled: HashMap<i64, Owner>,
    /// Each loaded node's id.
    pub(super) ids: HashMap<NodeKey, i64>,
    pub(super) graph: Graph,
    pub(super) start: NodeKey,
    /// Nodes lie past the depth cap (not loaded: the walk cannot see them).
    pub(super) beyond: bool,
}
