//! What a producer change breaks past its consumers (issue 43, item 3):
//! the fields the change touches (`streamkeeper::schemas::fields`), each
//! walked downstream along column lineage, kept with the check; and
//! "Notify owners", which sends each owner team the lines that concern
//! it through its notification channels.
//!
//! Lineage sits above schemas (it reads checks to mark pending breaks),
//! so schemas asks it through [`FieldLineage`], which the lineage service
//! implements and the server wires in at startup.

use std::sync::Arc;
use streamkeeper::accounts::account::Principal;
use streamkeeper::accounts::role::Action;
use streamkeeper::schemas::check::ParsedSchema;
use streamkeeper::schemas::downstream::{self, FieldBreakage};
use streamkeeper::schemas::fields::{TouchedField, touched, union};
use streamkeeper_app::error::AppError;
use streamkeeper_app::schemas::model::{CompatibilityReport, ConsumerVerdict, OwnersNotice};

use super::store::{self, SchemaRow};
use super::{SchemaService, parsed_report, reader, text_of};
use crate::accounts::require;
use crate::audit::audited;
use crate::notify::tell::{TeamMessage, tell_teams};
use crate::platform::authz::Facts;
use crate::platform::db::{begin, commit};

/// Fields walked per check at most: a change that rewrites a whole
/// record still answers quickly; the rest are named without a walk.
const MAX_WALKED_FIELDS: usize = 20;

/// The kind a channel's filter sees for a breakage notice.
pub const NOTICE_KIND: &str = "BREAKING_CHANGE";

/// The port schemas asks lineage through: what a topic's field reaches
/// downstream along column lineage, with owners.
#[async_trait::async_trait]
pub trait FieldLineage: Send + Sync {
    /// What `touched.field` of `topic` in cluster `cluster_id` reaches,
    /// as `who` may see it. A field no column lineage names is an error
    /// (`NotFound`), which the check keeps as "unknown".
    async fn field_reach(
        &self,
        who: &Principal,
        cluster_id: i64,
        topic: &str,
        touched: &TouchedField,
    ) -> Result<FieldBreakage, AppError>;
}

/// The lineage port and where the console is, for the links notices carry.
#[derive(Clone)]
pub struct Downstream {
    pub lineage: Arc<dyn FieldLineage>,
    pub public_url: String,
}

impl SchemaService {
    /// The fields the change touches for any consumer group, or against
    /// the stream's current schema (a change is seen by what selects the
    /// topic's fields downstream even when no group is catalogued).
    pub(super) async fn touched_fields(
        &self,
        consumers: &[ConsumerVerdict],
        new: &Arc<ParsedSchema>,
        history: &[SchemaRow],
    ) -> Result<Vec<TouchedField>, AppError> {
        let mut all: Vec<Vec<TouchedField>> = consumers.iter().map(|c| c.fields.clone()).collect();
        // `history` is newest first: the stream's current schema.
        if let Some(current) = history.first().map(text_of) {
            let (limits, writer) = (self.limits.clone(), new.clone());
            let of_stream = self
                .limits
                .run(move || {
                    limits
                        .parse_here(&current)
                        .map(|reader| touched(&reader, &writer))
                })
                .await?;
            // A current schema that no longer parses says nothing here;
            // the check's history verdict already says it.
            all.push(of_stream.unwrap_or_default());
        }
        Ok(union(&all))
    }

    /// Each touched field walked downstream (the first
    /// [`MAX_WALKED_FIELDS`]); an unknown answer is kept as such, never
    /// as "breaks nothing", and never fails the check.
    pub(super) async fn downstream_of(
        &self,
        who: &Principal,
        cluster_id: i64,
        topic: &str,
        fields: &[TouchedField],
    ) -> Vec<FieldBreakage> {
        let Some(d) = &self.downstream else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (i, t) in fields.iter().enumerate() {
            let answer = if i >= MAX_WALKED_FIELDS {
                Err(AppError::Invalid(format!(
                    "only the first {MAX_WALKED_FIELDS} fields a change touches are walked"
                )))
            } else {
                d.lineage.field_reach(who, cluster_id, topic, t).await
            };
            out.push(answer.unwrap_or_else(|e| unknown(t, &e)));
        }
        out
    }

    /// "Notify owners": sends each owner team the breakage lines that
    /// concern it through its channels, records the notice and audits it.
    /// The check's submitter, an admin or a member of the stream's team
    /// may; anyone else gets a 403 (audited by the web layer).
    #[tracing::instrument(skip_all, fields(user = %who.username, check_id = id))]
    pub async fn notify_breakage_owners(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
    ) -> Result<OwnersNotice, AppError> {
        require(who, Action::Read, "see schema checks")?;
        let row = store::checked(&self.pool, id, reader(who))
            .await?
            .ok_or_else(|| AppError::NotFound("That check".into()))?;
        if !row.readable {
            return Err(self.unreadable_check(who, from, id).await);
        }
        let report = parsed_report(id, row.report)?;
        let facts = Facts::load(&self.pool, who).await?;
        let submitter = report.submitted_by == who.username;
        if !downstream::may_notify(submitter, facts.steward(who), row.owner_team_id) {
            return Err(AppError::Forbidden(format!(
                "send check {id}'s downstream breakage to its owners (its submitter, members of the stream's team and admins may)"
            )));
        }
        let lines = downstream::by_owner(&report.downstream);
        if lines.is_empty() {
            return Err(AppError::Invalid(
                "No owned downstream column or dashboard is reached: there is nobody to notify."
                    .into(),
            ));
        }
        let names: Vec<&str> = lines.keys().map(String::as_str).collect();
        let teams = store::teams_named(&self.pool, &names).await?;
        if teams.is_empty() {
            return Err(AppError::Invalid(format!(
                "The owners named downstream ({}) are no team here: there is nobody to notify.",
                names.join(", ")
            )));
        }
        let url = format!(
            "{}/schema-checks/{id}",
            self.downstream
                .as_ref()
                .map_or("", |d| d.public_url.trim_end_matches('/'))
        );
        let messages: Vec<TeamMessage> = teams
            .iter()
            .map(|(team_id, team)| TeamMessage {
                team_id: *team_id,
                team: team.clone(),
                cluster: report.cluster.clone(),
                subject_kind: "topic".into(),
                subject: report.topic.clone(),
                kind: NOTICE_KIND.into(),
                reason: downstream::message(
                    &report.topic,
                    id,
                    lines.get(team).map(Vec::as_slice).unwrap_or_default(),
                ),
                url: url.clone(),
                // Never a flag's id: the channels' keys stay apart.
                key: -id,
            })
            .collect();
        let now = crate::platform::clock::now();
        let mut tx = begin(&self.pool).await?;
        let told = tell_teams(&mut tx, &messages, now.timestamp_millis()).await?;
        let queued: usize = told.values().sum();
        let team_names: Vec<String> = teams.iter().map(|(_, n)| n.clone()).collect();
        let notice = OwnersNotice {
            sent_by: who.username.clone(),
            sent_at: now,
            teams: team_names.clone(),
            messages: i32::try_from(queued).unwrap_or(i32::MAX),
        };
        store::insert_owners_notice(&mut tx, id, &notice).await?;
        audited(
            &mut tx,
            who,
            from,
            "schema.check.notify",
            format!("check:{id}"),
            serde_json::json!({ "topic": report.topic, "teams": team_names, "messages": queued }),
        )
        .await?;
        commit(tx).await?;
        Ok(notice)
    }
}

/// A field whose reach could not be walked, said as unknown.
fn unknown(t: &TouchedField, e: &AppError) -> FieldBreakage {
    let why = match e {
        AppError::NotFound(_) => "no column lineage names it".to_owned(),
        AppError::Invalid(why) => why.clone(),
        _ => "the lineage graph could not be read".to_owned(),
    };
    FieldBreakage {
        touched: t.clone(),
        columns: Vec::new(),
        cold: Vec::new(),
        partial: false,
        unknown: Some(why),
    }
}

impl SchemaService {
    /// `r` with the notices sent of it (kept beside the stored report,
    /// which is the verdict as it was decided).
    pub(super) async fn with_notices(
        &self,
        mut r: CompatibilityReport,
    ) -> Result<CompatibilityReport, AppError> {
        r.notices = store::owners_notices(&self.pool, r.id).await?;
        Ok(r)
    }
}
