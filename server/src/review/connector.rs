//! Connector drafts and restarts as review items. A draft's content is the
//! canonical config (secrets masked, keys sorted, `${…}` references as
//! written), bound by its hash to the base it changes: the running config
//! as the worker answered it (hashed, masked), or "does not exist". Its
//! check is the validation (the rules beside the worker's validate); a
//! draft with errors is not taken. Named approvers of the connector's
//! domain sign off as for schemas; applying re-reads the running config
//! and sends a moved one back to review, like a moved schema base.

mod apply;
mod view;

use super::store::{self as items, ItemRow, Revision};
use super::{ReviewService, facts, item_after, refusal, target};
use crate::clients::connect::{ConnectClient, ConnectError};
use crate::connect::ValidateRequest;
use crate::platform::db::{acquire, begin, commit};
use crate::platform::errors;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use streamkeeper::access::stewardship::{Stewardship, may_steward};
use streamkeeper::accounts::account::Principal;
use streamkeeper::connect::canonical::{Base, Diff, canonical_json};
use streamkeeper::connect::draft::{DraftContent, draft_hash, governing_domain};
use streamkeeper::connect::{Config, Severity};
use streamkeeper::platform::shell::quote;
use streamkeeper::review::{Autonomy, Kind, check_edit};
use streamkeeper::schemas::Verdict;
use streamkeeper_app::connect::model::{DraftCheck, RunAfterApply};
use streamkeeper_app::error::AppError;
use streamkeeper_app::review::model::{ApprovalView, ItemActions, ReviewSummary};
use utoipa::ToSchema;

/// A connector config proposed for review: it creates the connector its
/// `name` names, or replaces the running one's config.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct NewConnectorDraft {
    /// The Kafka cluster of the Connect cluster.
    pub cluster_id: i64,
    /// The Connect cluster's name.
    pub connect: String,
    /// An object of string properties with `name`, or `{"name", "config"}`.
    #[schema(value_type = Object)]
    pub config: Value,
    /// A line for the inbox; generated when blank.
    #[serde(default)]
    pub title: Option<String>,
}

/// A new config for a draft, at the revision the editor loaded.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct ConnectorDraftEdit {
    pub loaded_revision: i32,
    #[schema(value_type = Object)]
    pub config: Value,
}

/// A restart of a connector's failed instances, for approvers to review.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct NewConnectorRestart {
    pub cluster_id: i64,
    pub connect: String,
    pub connector: String,
    #[serde(default)]
    pub title: Option<String>,
}

/// A connector item with everything its page shows. Secrets are masked in
/// the content and never in the diff.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ConnectorItem {
    #[serde(flatten)]
    pub summary: ReviewSummary,
    pub content: DraftContent,
    /// SHA-256 of the kind, the content and the base; approvals are bound to it.
    pub content_hash: String,
    pub base: Base,
    /// The draft against the running config it was made on.
    pub diff: Diff,
    /// The validation: `findings`, the worker's answer, `rows` side by side.
    #[schema(value_type = Object)]
    pub check: Value,
    pub approvers: Vec<String>,
    pub eligible_approvers: usize,
    pub approvals: Vec<ApprovalView>,
    pub state_reason: String,
    pub autonomy: Autonomy,
    /// Below *act after approval*: the exact request to run by hand.
    pub manual_apply: Option<String>,
    pub actions: ItemActions,
}

/// A connector item as the inbox's item page shows it.
pub(super) struct AsSchemaItem {
    pub content: streamkeeper::review::Content,
    /// Below *act after approval*: the exact request to run by hand.
    pub manual: Option<String>,
    /// A draft's change (a restart has none).
    pub diff: Option<Diff>,
    /// Applied: the connector's state from the first pass since.
    pub run: Option<RunAfterApply>,
    /// A draft's validation of this revision (a restart has none).
    pub check: Option<DraftCheck>,
}

/// What a connector item changes.
struct Change<'a> {
    kind: Kind,
    cluster_id: i64,
    connect: &'a str,
    name: &'a str,
    config: &'a Config,
}

fn content_of(item: &ItemRow) -> Result<DraftContent, AppError> {
    serde_json::from_value(item.content.clone())
        .map_err(|e| errors::internal("stored connector item content", e))
}

fn kind_of(item: &ItemRow) -> Result<Kind, AppError> {
    item.kind
        .parse()
        .map_err(|e: streamkeeper::review::UnknownKind| errors::internal("a review item's kind", e))
}

/// The base a revision was made on: its running config (kept masked) or none.
fn stored_base(item: &ItemRow) -> Option<Config> {
    item.base_schema
        .as_deref()
        .and_then(|b| Config::from_json(b).ok())
}

fn plain(config: &Config) -> BTreeMap<String, String> {
    config
        .iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

/// The running config as the worker answers it now; `None`: no such connector.
async fn running(client: &ConnectClient, name: &str) -> Result<Option<Config>, ConnectError> {
    match client.config(name).await {
        Ok(c) => Ok(Some(c.0.iter().collect())),
        Err(ConnectError::NotFound { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The request that applies the item by hand: every value quoted for
/// POSIX `sh` and the name one percent-encoded path segment, so pasting it
/// runs this request and nothing else. `None` if the URL is not one.
pub fn manual_request(base: &str, kind: Kind, c: &DraftContent) -> Option<String> {
    let mut url = url::Url::parse(base.trim()).ok()?;
    if kind == Kind::ConnectorRestart {
        url.path_segments_mut().ok()?.pop_if_empty().extend([
            "connectors",
            c.name.as_str(),
            "restart",
        ]);
        url.set_query(Some("includeTasks=true&onlyFailed=true"));
        return Some(format!("curl -X POST {}", quote(url.as_str())));
    }
    url.path_segments_mut()
        .ok()?
        .pop_if_empty()
        .extend(["connectors", c.name.as_str(), "config"]);
    let body = serde_json::to_string_pretty(&c.config).ok()?;
    Some(format!(
        "curl -X PUT -H {}\\\n  {}\\\n  --data {}",
        quote("Content-Type: application/json"),
        quote(url.as_str()),
        quote(&body)
    ))
}

impl ReviewService {
    /// The domain whose approvers decide a change to connector `name`, the
    /// stream it comes from and the owner team who may propose it: the
    /// connector's owner by the ownership rule (its claim, else a stream
    /// the draft or the running connector reads or writes).
    async fn connector_domain(
        &self,
        cluster_id: i64,
        connect_id: i64,
        name: &str,
        config: &Config,
    ) -> Result<(String, String, Option<i64>), AppError> {
        let (bootstrap, known) = self.connect.facts_of(cluster_id, connect_id, name).await?;
        let mut topics: BTreeSet<String> = crate::connect::routine::topics_of(config, &bootstrap)
            .into_iter()
            .collect();
        if let Some(k) = &known {
            topics.extend(k.topics.iter().cloned());
        }
        let mut streams = Vec::new();
        for t in &topics {
            if let Some((domain, _)) = items::stream_domain(&self.pool, cluster_id, t).await? {
                streams.push((t.clone(), domain));
            }
        }
        let (topic, domain) =
            governing_domain(name, &streams).map_err(|e| AppError::Invalid(e.to_string()))?;
        let topics: Vec<String> = topics.into_iter().collect();
        let owner = crate::platform::ownership::connector_with(
            &self.pool, cluster_id, connect_id, name, &topics,
        )
        .await?;
        Ok((domain, topic, owner.map(|o| o.team_id())))
    }

    /// A revision of a connector item: the validation (a draft with errors
    /// is refused when `proposing`), the running config read now as its
    /// base, the frozen approvers, and the hash binding them.
    async fn prepare_connector(
        &self,
        c: &Change<'_>,
        domain: &str,
        proposing: bool,
    ) -> Result<Revision, AppError> {
        let Change {
            kind,
            cluster_id,
            connect,
            name,
            config,
        } = *c;
        let (row, client) = self.connect.client_of(cluster_id, connect).await?;
        let (check, verdict, marked) = if kind == Kind::ConnectorDraft {
            self.draft_check(cluster_id, connect, config, proposing)
                .await?
        } else {
            (
                json!({ "restart": { "include_tasks": true, "only_failed": true } }),
                Verdict::Compatible,
                BTreeSet::new(),
            )
        };
        let now = running(&client, name).await.map_err(|e| {
            AppError::Unavailable(format!(
                "Kafka Connect could not say what connector {name} runs now ({}); nothing was saved",
                e.for_viewer(false)
            ))
        })?;
        if kind == Kind::ConnectorRestart && now.is_none() {
            return Err(AppError::NotFound(format!("Connector {name} on {connect}")));
        }
        let content = if kind == Kind::ConnectorDraft {
            DraftContent::new(row.id, &row.name, name, config, &marked)
        } else {
            DraftContent::new(row.id, &row.name, name, &Config::new(), &marked)
        };
        let base = Base::of(now.as_ref(), &marked);
        let settings = items::domain(&self.pool, domain).await?;
        let mut conn = acquire(&self.pool).await?;
        let approver_ids = items::effective_approvers(&mut conn, domain).await?;
        Ok(Revision {
            content: serde_json::to_value(&content)
                .map_err(|e| errors::internal("a connector item's content", e))?,
            content_hash: draft_hash(kind.as_str(), &content, &base),
            base_version: None,
            base_schema_id: None,
            base_schema: now.as_ref().map(|c| canonical_json(c, &marked)),
            check_id: None,
            verdict: verdict.as_str().to_owned(),
            required_approvals: settings.map_or(1, |s| s.required_approvals),
            approver_ids,
            connector_check: Some(check),
        })
    }

    /// A draft's validation as kept with its revision (without its config,
    /// which is the content), its verdict and the keys the worker marks as
    /// passwords; a draft with errors is refused when `proposing`.
    async fn draft_check(
        &self,
        cluster_id: i64,
        connect: &str,
        config: &Config,
        proposing: bool,
    ) -> Result<(Value, Verdict, BTreeSet<String>), AppError> {
        let report = self
            .connect
            .validate_for(
                false,
                ValidateRequest {
                    config: config.to_json(),
                    cluster_id: Some(cluster_id),
                    connect: Some(connect.to_owned()),
                },
            )
            .await?;
        if proposing && !report.may_propose {
            let errors: Vec<String> = report
                .findings
                .iter()
                .filter(|f| f.severity == Severity::Error)
                .map(|f| format!("{}: {}", f.property, f.sentence))
                .chain(
                    report
                        .worker
                        .iter()
                        .flat_map(|w| w.errors())
                        .map(|(k, v)| format!("{k}: {} (the worker)", v.join(" "))),
                )
                .collect();
            return Err(AppError::Invalid(format!(
                "The draft has {} error(s), so it cannot be proposed: {}. Apply the suggested fixes (POST /api/v1/connect/validate shows them) and propose it again.",
                errors.len(),
                errors.join("; ")
            )));
        }
        let verdict = if report.worker_error.is_some() {
            Verdict::Undecided
        } else if report.may_propose {
            Verdict::Compatible
        } else {
            Verdict::Incompatible
        };
        let marked = report
            .worker
            .as_ref()
            .map(streamkeeper::connect::worker::WorkerAnswer::password_keys)
            .unwrap_or_default();
        let mut check =
            serde_json::to_value(&report).map_err(|e| errors::internal("a connector check", e))?;
        // The config is the content; the check keeps only what was found.
        if let Some(o) = check.as_object_mut() {
            o.remove("config");
        }
        Ok((check, verdict, marked))
    }

    /// Admins and owners of the connector's team (of an unowned one's
    /// stream, any owner) may propose changes to it.
    async fn may_propose_connector(
        &self,
        who: &Principal,
        owner: Option<i64>,
    ) -> Result<(), AppError> {
        let mine = self.my_teams(who).await?;
        if may_steward(mine.steward(who), owner, Stewardship::Steer) {
            return Ok(());
        }
        Err(AppError::Forbidden(
            "propose changes to this connector (admins, and owners of the connector's team)".into(),
        ))
    }

    async fn insert_connector_item(
        &self,
        who: &Principal,
        from: &str,
        c: &Change<'_>,
        title: Option<String>,
    ) -> Result<i64, AppError> {
        let Change {
            kind,
            cluster_id,
            connect,
            name,
            config,
        } = *c;
        let (row, _) = self.connect.client_of(cluster_id, connect).await?;
        let (domain, topic, owner) = self
            .connector_domain(cluster_id, row.id, name, config)
            .await?;
        self.may_propose_connector(who, owner).await?;
        let level = self.level(&domain).await?;
        if !level.takes_proposals() {
            return Err(refusal(&streamkeeper::review::Refusal::Watching(domain)));
        }
        let revision = self.prepare_connector(c, &domain, true).await?;
        let creates = revision.base_schema.is_none();
        let title = title
            .map(|t| t.trim().to_owned())
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| match (kind, creates) {
                (Kind::ConnectorRestart, _) => format!("Restart connector {name} on {connect}"),
                (_, true) => format!("Create connector {name} on {connect}"),
                (_, false) => format!("Change connector {name} on {connect}"),
            });
        let subject = format!("{connect}/{name}");
        let mut tx = begin(&self.pool).await?;
        let domain_now = items::stream_domain_locked(&mut tx, cluster_id, &topic).await?;
        if domain_now.as_deref() != Some(domain.as_str()) {
            return Err(AppError::Conflict(format!(
                "Stream {topic} moved to another domain while the change was being proposed: propose it again."
            )));
        }
        let id = items::insert_item(
            &mut tx,
            &items::NewItem {
                kind: kind.as_str(),
                cluster_id,
                topic: &topic,
                subject: &subject,
                domain: &domain,
                owner_team_id: owner,
                title: &title,
                author_id: who.user_id,
                revision: &revision,
            },
        )
        .await?;
        crate::audit::audited(
            &mut tx,
            who,
            from,
            "review.propose",
            target(id),
            json!({ "kind": kind.as_str(), "connector": subject, "domain": domain,
                    "content_hash": revision.content_hash, "creates": creates,
                    "verdict": revision.verdict }),
        )
        .await?;
        self.tell_approvers(&mut tx, id, &title, &revision, &who.username)
            .await?;
        commit(tx).await?;
        Ok(id)
    }

    /// Proposes a connector config for review (create or update). Never
    /// applied without approval, whatever the domain's level: a connector
    /// change is not undone by deleting what it adds.
    #[tracing::instrument(skip_all, fields(user = %who.username))]
    pub async fn propose_connector(
        &self,
        who: &Principal,
        from: &str,
        new: NewConnectorDraft,
    ) -> Result<ConnectorItem, AppError> {
        let config = crate::connect::sent_config(&new.config)?;
        config
            .plugin()
            .map_err(|e| AppError::Invalid(e.to_string()))?;
        let name = config
            .name()
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| {
                AppError::Invalid("The config names no connector: set \"name\".".into())
            })?;
        let change = Change {
            kind: Kind::ConnectorDraft,
            cluster_id: new.cluster_id,
            connect: new.connect.trim(),
            name: &name,
            config: &config,
        };
        let id = self
            .insert_connector_item(who, from, &change, new.title)
            .await?;
        self.connector_item_view(who, item_after(&self.pool, id).await?)
            .await
    }

    /// Proposes restarting a connector's failed instances, for approvers
    /// (below the *autonomous* level the routine does not restart).
    #[tracing::instrument(skip_all, fields(user = %who.username))]
    pub async fn propose_restart(
        &self,
        who: &Principal,
        from: &str,
        new: NewConnectorRestart,
    ) -> Result<ConnectorItem, AppError> {
        let empty = Config::new();
        let change = Change {
            kind: Kind::ConnectorRestart,
            cluster_id: new.cluster_id,
            connect: new.connect.trim(),
            name: new.connector.trim(),
            config: &empty,
        };
        let id = self
            .insert_connector_item(who, from, &change, new.title)
            .await?;
        self.connector_item_view(who, item_after(&self.pool, id).await?)
            .await
    }

    /// Edits a draft at the revision the editor loaded: a new revision,
    /// validated again (errors refused) on the running config read now,
    /// every approval voided.
    #[tracing::instrument(skip_all, fields(user = %who.username, id = id))]
    pub async fn edit_connector(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
        edit: ConnectorDraftEdit,
    ) -> Result<ConnectorItem, AppError> {
        let item = self.readable(who, from, id).await?;
        if kind_of(&item)? != Kind::ConnectorDraft {
            return Err(AppError::Invalid(format!(
                "Review item {id} is not a connector draft."
            )));
        }
        let owns = self.owns_stream(who, &item).await?;
        if let Err(r) = check_edit(&facts(&item), who.user_id, owns, edit.loaded_revision) {
            self.refused(who, from, id, "review.edit.refused", &r.to_string())
                .await;
            return Err(refusal(&r));
        }
        let was = content_of(&item)?;
        let mut config = crate::connect::sent_config(&edit.config)?;
        match config.name() {
            Some(n) if n.trim() != was.name => {
                return Err(AppError::Invalid(format!(
                    "This draft is for connector {}; propose a new draft for {n}.",
                    was.name
                )));
            }
            _ => config.set("name", was.name.clone()),
        }
        let change = Change {
            kind: Kind::ConnectorDraft,
            cluster_id: item.cluster_id,
            connect: &was.connect,
            name: &was.name,
            config: &config,
        };
        let p = self.prepare_connector(&change, &item.domain, true).await?;
        self.store_edit(who, from, id, owns, edit.loaded_revision, &p)
            .await?;
        self.connector_item_view(who, item_after(&self.pool, id).await?)
            .await
    }

    /// A connector item's page for the caller.
    #[tracing::instrument(skip_all, fields(user = %who.username, id = id))]
    pub async fn connector_item(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
    ) -> Result<ConnectorItem, AppError> {
        let item = self.readable(who, from, id).await?;
        if !kind_of(&item)?.is_connector() {
            return Err(AppError::NotFound(format!(
                "Connector review item {id} (it is a schema item: GET /api/v1/review-items/{id})"
            )));
        }
        self.connector_item_view(who, item).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn content() -> DraftContent {
        let config: Config = [
            ("connector.class", "io.confluent.connect.s3.S3SinkConnector"),
            ("topics", "it's $(touch /tmp/x)"),
        ]
        .into_iter()
        .collect();
        DraftContent::new(1, "main", "s3 'sink'", &config, &BTreeSet::new())
    }

    #[test]
    fn the_manual_put_means_its_values_and_nothing_else() {
        let c = content();
        let command =
            manual_request("http://connect:8083/", Kind::ConnectorDraft, &c).expect("a URL");
        let words = shlex::split(&command).expect("words");
        assert_eq!(
            words[..6],
            [
                "curl",
                "-X",
                "PUT",
                "-H",
                "Content-Type: application/json",
                "http://connect:8083/connectors/s3%20'sink'/config"
            ]
        );
        let body: Value = serde_json::from_str(&words[7]).expect("json body");
        assert_eq!(body["topics"], "it's $(touch /tmp/x)");
        assert_eq!(body["name"], "s3 'sink'");
    }

    #[test]
    fn the_manual_restart_restarts_only_failed_instances() {
        let command = manual_request("http://connect:8083", Kind::ConnectorRestart, &content())
            .expect("a URL");
        assert_eq!(
            shlex::split(&command).expect("words"),
            [
                "curl",
                "-X",
                "POST",
                "http://connect:8083/connectors/s3%20'sink'/restart?includeTasks=true&onlyFailed=true"
            ]
        );
        assert_eq!(
            manual_request("not a url", Kind::ConnectorDraft, &content()),
            None
        );
    }
}
