//! The check of a proposed producer schema: every consumer group that
//! reads the topic judged with the reader schema it is taken to use, the
//! subject's history (`history.rs`), and the report kept for review.

use serde_json::json;
use std::sync::Arc;
use std::time::Instant;
use streamkeeper::accounts::account::Principal;
use streamkeeper::accounts::role::Action;
use streamkeeper::schemas::Verdict;
use streamkeeper::schemas::check::{ParsedSchema, can_read};
use streamkeeper::schemas::fields::touched;
use streamkeeper::schemas::reader::{ReaderChoice, choose};
use streamkeeper::schemas::report::{ConsumerAnswer, HistoryAnswer, summary};
use streamkeeper::schemas::subject::value_subject;
use streamkeeper::schemas::{ResolvedReference, SchemaText, SchemaType};
use streamkeeper_app::error::AppError;
use streamkeeper_app::schemas::model::{
    CompatibilityReport, ConsumerVerdict, ProposedSchema, ReaderSource,
};

use super::history::registry_references;
use super::registry::client;
use super::store::{self, ConsumerRow, RegistryRow, SchemaRow};
use super::{SchemaService, parsed_report, reader, schema_type, text_of};
use crate::accounts::require;
use crate::audit::record_refusal;
use crate::platform::errors;

/// The reader schema a consumer is checked with, and how it was chosen.
pub(super) struct Reader {
    pub(super) source: ReaderSource,
    pub(super) note: String,
    pub(super) row: Option<SchemaRow>,
}

pub(super) fn reader_of(
    group: &ConsumerRow,
    declared: Option<&SchemaRow>,
    history: &[SchemaRow],
) -> Reader {
    // `history` is newest first; the rule wants oldest first.
    let oldest_first: Vec<&SchemaRow> = history.iter().rev().collect();
    let times: Vec<i64> = oldest_first
        .iter()
        .map(|s| s.recorded_at.timestamp_millis())
        .collect();
    let when = |r: &SchemaRow| r.recorded_at.format("%Y-%m-%d %H:%M UTC").to_string();
    match choose(
        declared.is_some(),
        group.first_seen.timestamp_millis(),
        &times,
    ) {
        ReaderChoice::Declared => {
            let row = declared.cloned();
            Reader {
                source: ReaderSource::Declared,
                note: row
                    .as_ref()
                    .map(|r| format!("its declared reader schema (recorded {})", when(r)))
                    .unwrap_or_default(),
                row,
            }
        }
        ReaderChoice::CurrentAtFirstSeen { index } => {
            let row = oldest_first.get(index).map(|r| (*r).clone());
            Reader {
                source: ReaderSource::Assumed,
                note: row
                    .as_ref()
                    .map(|r| {
                        format!(
                            "no reader schema declared: assumed to read the stream's schema recorded {}, the latest when the group was first seen ({})",
                            when(r),
                            group.first_seen.format("%Y-%m-%d %H:%M UTC")
                        )
                    })
                    .unwrap_or_default(),
                row,
            }
        }
        ReaderChoice::OldestRecorded => {
            let row = oldest_first.first().map(|r| (*r).clone());
            Reader {
                source: ReaderSource::Assumed,
                note: row
                    .as_ref()
                    .map(|r| {
                        format!(
                            "no reader schema declared, and the group was seen before any stream schema was recorded: assumed to read the oldest one (recorded {})",
                            when(r)
                        )
                    })
                    .unwrap_or_default(),
                row,
            }
        }
        ReaderChoice::Missing => Reader {
            source: ReaderSource::Missing,
            note:
                "no reader schema declared and no stream schema recorded: cannot tell what it reads"
                    .into(),
            row: None,
        },
    }
}

/// The schema a recorded check was made of, and where.
pub(crate) struct CheckedSchema {
    pub cluster_id: i64,
    pub topic: String,
    /// The subject it was checked under.
    pub subject: String,
    pub schema_type: SchemaType,
    pub schema: String,
    /// The registered schemas it referenced.
    pub references: Vec<streamkeeper::schemas::SubjectReference>,
    /// The names of the references pasted as text with it.
    pub pasted_references: Vec<String>,
}

impl SchemaService {
    /// [`SchemaService::check`] for one of the topic's subjects: its value
    /// subject's schema is checked against every consumer group and its
    /// history; a key or record subject's against its history only (the
    /// catalog knows the groups' reader schemas of values alone).
    #[tracing::instrument(skip_all, fields(user = %who.username, cluster_id = cluster_id))]
    pub async fn check_subject(
        &self,
        who: &Principal,
        cluster_id: i64,
        topic: &str,
        subject: &str,
        proposed: ProposedSchema,
    ) -> Result<CompatibilityReport, AppError> {
        require(who, Action::Read, "check schema changes")?;
        let of_values = subject == value_subject(topic);
        let submitted_at = crate::platform::clock::now();
        let started = Instant::now();
        let cluster = self.cluster_name(cluster_id).await?;
        self.known_topic(cluster_id, topic).await?;
        let registry = store::registry(&self.pool, cluster_id).await?;
        let text = self
            .proposed_text(who, registry.as_ref(), &proposed)
            .await?;
        let new = Arc::new(self.limits.parse(text).await?);
        let history = store::stream_history(&self.pool, cluster_id, topic).await?;
        let consumers = self
            .consumer_verdicts(cluster_id, topic, of_values, &new, &history)
            .await?;
        let downstream = if of_values {
            let fields = self.touched_fields(&consumers, &new, &history).await?;
            self.downstream_of(who, cluster_id, topic, &fields).await
        } else {
            Vec::new()
        };

        let (history_verdict, opinion) = match registry {
            Some(r) => {
                self.against_registry(&r, subject, &new, &proposed, &history, cluster_id, topic)
                    .await?
            }
            None => (
                self.against_catalog(subject, &new, &history, cluster_id, topic, None)
                    .await?,
                None,
            ),
        };

        let registry_refuses = opinion
            .as_ref()
            .is_some_and(|o| o.is_compatible == Some(false));
        let answers: Vec<ConsumerAnswer> = consumers
            .iter()
            .map(|c| ConsumerAnswer {
                group: &c.group,
                owner: c.owner.as_deref(),
                verdict: c.verdict,
                note: &c.reader_note,
            })
            .collect();
        let history = HistoryAnswer {
            subject: &history_verdict.subject,
            mode: history_verdict.mode,
            versions: history_verdict.versions,
            verdict: history_verdict.verdict,
            note: &history_verdict.note,
        };
        let (verdict, summary) = summary(&answers, &history, registry_refuses, of_values, topic);
        let decided_at = crate::platform::clock::now();
        let mut report = CompatibilityReport {
            id: 0,
            cluster_id,
            cluster,
            topic: topic.to_owned(),
            schema_type: proposed.schema_type,
            verdict,
            summary,
            consumers,
            history: history_verdict,
            registry: opinion,
            submitted_by: who.username.clone(),
            submitted_at,
            elapsed_ms: i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX),
            downstream,
            notices: Vec::new(),
        };
        report.id = self
            .keep(who, cluster_id, &proposed, &report, decided_at)
            .await?;
        Ok(report)
    }

    /// The proposed schema with its references' text: pasted ones as
    /// given, subject versions read from the cluster's registry.
    async fn proposed_text(
        &self,
        who: &Principal,
        registry: Option<&RegistryRow>,
        proposed: &ProposedSchema,
    ) -> Result<SchemaText, AppError> {
        let mut references: Vec<ResolvedReference> = proposed
            .references
            .iter()
            .map(|(n, t)| ResolvedReference {
                name: n.clone(),
                text: t.clone(),
            })
            .collect();
        if !proposed.subject_references.is_empty() {
            let r = registry.ok_or_else(|| {
                AppError::Invalid(
                    "References to subject versions need the cluster's Schema Registry, and it has none: give their text instead.".into(),
                )
            })?;
            let found = client(r, &self.outbound)
                .map_err(AppError::Unavailable)?
                .resolve_references(&registry_references(proposed))
                .await
                .map_err(|e| errors::registry(who, &e))?;
            references.extend(found);
        }
        Ok(SchemaText {
            schema_type: proposed.schema_type,
            text: proposed.schema.clone(),
            references,
        })
    }

    /// Each consumer group of the topic judged with the reader schema it
    /// is taken to use (none when a key or record subject is checked).
    async fn consumer_verdicts(
        &self,
        cluster_id: i64,
        topic: &str,
        of_values: bool,
        new: &Arc<ParsedSchema>,
        history: &[SchemaRow],
    ) -> Result<Vec<ConsumerVerdict>, AppError> {
        let declared = store::readers(&self.pool, cluster_id, topic).await?;
        let groups = store::consumers(&self.pool, cluster_id, topic).await?;
        let owners = self.consumer_owners(cluster_id, &groups).await?;

        let groups: Vec<&ConsumerRow> = groups.iter().filter(|_| of_values).collect();
        let readers: Vec<Reader> = groups
            .iter()
            .map(|g| {
                let d = declared
                    .iter()
                    .find(|r| r.group_name.as_deref() == Some(&g.name));
                reader_of(g, d, history)
            })
            .collect();
        // Every reader schema parsed and compared in one job.
        let texts: Vec<Option<SchemaText>> = readers
            .iter()
            .map(|r| r.row.as_ref().map(text_of))
            .collect();
        let (limits, writer) = (self.limits.clone(), new.clone());
        let judged = self
            .limits
            .run(move || {
                texts
                    .into_iter()
                    .map(|t| {
                        t.map(|t| {
                            limits.parse_here(&t).map(|reader| {
                                (can_read(&reader, &writer), touched(&reader, &writer))
                            })
                        })
                    })
                    .collect::<Vec<_>>()
            })
            .await?;
        Ok(groups
            .iter()
            .zip(readers)
            .zip(judged)
            .map(|((g, r), judged)| {
                let (verdict, (reasons, fields), note) = match judged {
                    None => (Verdict::Undecided, Default::default(), r.note.clone()),
                    Some(Ok(judged)) => {
                        let v = if judged.0.is_empty() {
                            Verdict::Compatible
                        } else {
                            Verdict::Incompatible
                        };
                        (v, judged, r.note.clone())
                    }
                    Some(Err(e)) => (
                        Verdict::Undecided,
                        Default::default(),
                        format!("{}; but that schema does not parse: {e}", r.note),
                    ),
                };
                ConsumerVerdict {
                    group: g.name.clone(),
                    owner: owners.get(&g.name).cloned(),
                    reader: r.source,
                    reader_note: note,
                    verdict,
                    reasons,
                    fields,
                }
            })
            .collect())
    }

    /// Stores a check's report, for the stream's page and for review.
    async fn keep(
        &self,
        who: &Principal,
        cluster_id: i64,
        proposed: &ProposedSchema,
        report: &CompatibilityReport,
        decided_at: chrono::DateTime<chrono::Utc>,
    ) -> Result<i64, AppError> {
        let stored =
            serde_json::to_value(report).map_err(|e| errors::internal("a check report", e))?;
        let id = store::insert_check(
            &self.pool,
            cluster_id,
            &store::NewCheck {
                topic: &report.topic,
                schema_type: proposed.schema_type.as_str(),
                schema: &proposed.schema,
                verdict: report.verdict.as_str(),
                report: stored,
                subject_references: serde_json::to_value(&proposed.subject_references)
                    .map_err(|e| errors::internal("a check's references", e))?,
                pasted_references: proposed.references.keys().cloned().collect(),
                submitted_by: &who.username,
                submitted_at: report.submitted_at,
                decided_at,
            },
        )
        .await?;
        Ok(id)
    }

    /// What a recorded check was made of, for a caller who may read it: its
    /// stream, the subject it was checked under and the schema. Anyone else
    /// is told "not found", so ids cannot be probed, and the attempt is
    /// recorded, as for the report.
    pub(crate) async fn checked_schema(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
    ) -> Result<CheckedSchema, AppError> {
        require(who, Action::Read, "see schema checks")?;
        let missing = || AppError::NotFound("That check".into());
        let row = store::checked(&self.pool, id, reader(who))
            .await?
            .ok_or_else(missing)?;
        if !row.readable {
            return Err(self.unreadable_check(who, from, id).await);
        }
        let report = parsed_report(id, row.report)?;
        let references = serde_json::from_value(row.subject_references)
            .map_err(|e| errors::internal("a check's references", e))?;
        Ok(CheckedSchema {
            cluster_id: row.cluster_id,
            subject: report.history.subject,
            schema_type: schema_type(&row.schema_type),
            schema: row.schema,
            topic: row.topic,
            references,
            pasted_references: row.pasted_references,
        })
    }

    /// A check the caller may not read: "not found", so ids cannot be
    /// probed, and the attempt recorded.
    pub(super) async fn unreadable_check(&self, who: &Principal, from: &str, id: i64) -> AppError {
        let detail = json!({ "refused": "not the check's submitter, team or domain" });
        record_refusal(
            &self.pool,
            who,
            from,
            "schema.check.read.refused",
            format!("check:{id}"),
            detail,
        )
        .await;
        AppError::NotFound("That check".into())
    }

    /// The check a review item was made of, for a caller already allowed to
    /// read the item (who may read an item may read its check).
    pub(crate) async fn item_check(
        &self,
        id: i64,
    ) -> Result<Option<CompatibilityReport>, AppError> {
        match store::check_of_item(&self.pool, id).await? {
            Some(report) => Ok(Some(self.with_notices(parsed_report(id, report)?).await?)),
            None => Ok(None),
        }
    }
}
