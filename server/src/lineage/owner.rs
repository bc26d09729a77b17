//! Setting a lineage node's owner (issue 45, item 1): what an admin or
//! that team says owns a node that is neither a topic nor a job derived
//! from a group or connector (those are their stream's, group's or
//! connector's). The rule is `streamkeeper::access::ownership`'s
//! `may_set_node_owner`; refusals are audited and change nothing.

use serde_json::json;
use streamkeeper::access::ownership::{self as rule, NodeFacts, Owner, Sender, SetRefusal};
use streamkeeper::accounts::account::Principal;
use streamkeeper::accounts::role::{Action, Role};
use streamkeeper::lineage::marquez::NodeId;
use streamkeeper_app::error::AppError;
use streamkeeper_app::lineage::model::NodeOwnerView;

use super::{LineageService, store};
use crate::accounts::require;
use crate::audit::{audited, record_refusal};
use crate::platform::authz::Facts;
use crate::platform::db::{begin, commit};
use crate::platform::ownership;

impl LineageService {
    /// Gives the lineage node `node` (a nodeId) to `team` (`None`: clears
    /// the owner set on it) and answers its owner by the rule after. A
    /// refusal (403), an unknown node (404) or team, a topic or derived job
    /// (422) is audited and changes nothing.
    #[tracing::instrument(skip_all, fields(user = %who.username))]
    pub async fn give_node(
        &self,
        who: &Principal,
        from: &str,
        node: &str,
        team: Option<&str>,
    ) -> Result<Option<Owner>, AppError> {
        require(who, Action::Read, "set lineage owners")?;
        match self.may_set(who, node, team).await {
            Ok((key, team_id)) => {
                let mut tx = begin(&self.pool).await?;
                store::set_node_owner(&mut tx, &key, team_id, &who.username).await?;
                audited(
                    &mut tx,
                    who,
                    from,
                    "lineage.owner",
                    format!("lineage:{}", NodeId(key.clone())),
                    json!({ "team": team }),
                )
                .await?;
                commit(tx).await?;
                let id = self.resolve(&key).await?;
                Ok(ownership::lineage_nodes(&self.pool, &[id])
                    .await?
                    .remove(&id))
            }
            // A 403 the web layer audits with its reason; an unknown node
            // or team is recorded here.
            Err(e @ AppError::Forbidden(_)) => Err(e),
            Err(e) => {
                let detail = json!({ "team": team, "refused": e.to_string() });
                let target = format!("lineage:{node}");
                record_refusal(
                    &self.pool,
                    who,
                    from,
                    "lineage.owner.refused",
                    target,
                    detail,
                )
                .await;
                Err(e)
            }
        }
    }

    /// The node's key and the team's id, when `who` may give it to them.
    async fn may_set(
        &self,
        who: &Principal,
        node: &str,
        team: Option<&str>,
    ) -> Result<(streamkeeper::lineage::graph::NodeKey, Option<i64>), AppError> {
        let key = NodeId::parse(node)
            .map_err(|e| AppError::Invalid(format!("node {node:?}: {e}")))?
            .0;
        self.fold.catch_up().await?;
        let id = self.resolve(&key).await?;
        let row = store::nodes(&self.pool, &[id]).await?;
        let key = row
            .first()
            .map(store::NodeRow::key)
            .ok_or_else(|| AppError::NotFound(format!("The lineage node {node}")))?;
        let team_id = match team {
            Some(name) => Some(
                store::team_named(&self.pool, name)
                    .await?
                    .ok_or_else(|| AppError::Invalid(format!("there is no team named {name:?}")))?,
            ),
            None => None,
        };
        let facts = ownership::lineage_facts(&self.pool, &[id])
            .await?
            .remove(&id)
            .ok_or_else(|| AppError::NotFound(format!("The lineage node {node}")))?;
        let sender = self.sender(who).await?;
        rule::may_set_node_owner(&sender, &facts, team_id).map_err(|e| match e {
            SetRefusal::Inherited(_) => AppError::Invalid(format!("set this node's owner: {e}")),
            SetRefusal::Others(_) | SetRefusal::NotMember => {
                AppError::Forbidden(format!("set this node's owner: {e}"))
            }
        })?;
        Ok((key, team_id))
    }

    /// The lineage node `id`'s owner as the graph page shows it, with the
    /// teams `who` may give it to and whether they may clear it: each by
    /// the rule (`may_set_node_owner`), so the form offers only what the
    /// service would do.
    pub(super) async fn owner_view(
        &self,
        who: &Principal,
        id: i64,
    ) -> Result<NodeOwnerView, AppError> {
        let Some(facts) = ownership::lineage_facts(&self.pool, &[id])
            .await?
            .remove(&id)
        else {
            return Ok(NodeOwnerView::default());
        };
        let owner = rule::of_node(facts.clone());
        let sender = self.sender(who).await?;
        let may = |team: Option<i64>| rule::may_set_node_owner(&sender, &facts, team).is_ok();
        let teams = ownership::teams(&self.pool)
            .await?
            .into_iter()
            .filter(|t| may(Some(t.id)))
            .map(|t| t.name)
            .collect();
        let set = matches!(&facts, NodeFacts::Other { set: Some(_), .. });
        Ok(NodeOwnerView {
            owner: owner.as_ref().map(Owner::to_string),
            team: owner.map(|o| o.team.name),
            inherited: facts.inherited(),
            teams,
            clearable: set && may(None),
        })
    }

    /// `who` as the ownership rule weighs them.
    async fn sender(&self, who: &Principal) -> Result<Sender, AppError> {
        Ok(Sender {
            username: who.username.clone(),
            admin: who.has(Role::Admin),
            teams: Facts::load(&self.pool, who).await?.teams().to_vec(),
        })
    }
}
