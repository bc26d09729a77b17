//! Schemas: a stream's schema and its consumers' reader schemas in the
//! catalog, with history; and the check of a proposed producer schema
//! against every consumer group that reads the topic and against the
//! subject's history, with the registry's own check as a second opinion.
//! The rules are in `streamkeeper::schemas`; this gathers the facts.

pub mod api;
pub mod cli;
pub mod routine;
pub mod store;

use serde_json::json;
use sqlx::PgPool;
use std::sync::Arc;
use std::time::Instant;
use streamkeeper::access::stewardship::{Stewardship, may_steward};
use streamkeeper::accounts::account::Principal;
use streamkeeper::accounts::role::{Action, Role};
use streamkeeper::platform::page::{Page, PageRequest};
use streamkeeper::platform::sort::Sorted;
use streamkeeper::schemas::Verdict;
use streamkeeper::schemas::check::{Direction, ParsedSchema, can_read, check, check_under};
use streamkeeper::schemas::json::Policy;
use streamkeeper::schemas::list::SubjectColumn;
use streamkeeper::schemas::reader::{ReaderChoice, choose};
use streamkeeper::schemas::report::{ConsumerAnswer, HistoryAnswer, summary};
use streamkeeper::schemas::{Mode, ResolvedReference, SchemaText, SchemaType};
use streamkeeper_app::error::AppError;
use streamkeeper_app::schemas::model::{
    CatalogSchema, CheckSummary, CompatibilityReport, ConsumerVerdict, DiffLine, HistoryFinding,
    HistoryVerdict, NewCatalogSchema, ProposedSchema, ReaderSource, ReaderView, RegistryFinding,
    RegistryOpinion, RegistrySpec, RegistryStatus, RegistrySubjects, StreamSchemas, SubjectDiff,
    SubjectSeen, SubjectSummary,
};

use crate::accounts::{audited, record_refusal, require};
use crate::clients::egress::Outbound;
use crate::clients::kafka::settings::SecretRef;
use crate::clients::registry::{
    Auth, CheckOptions, CompatibilityPolicy, NewSchema, RegistryClient, RegistryError,
    RegistrySettings, SchemaReference, Scope, Secret, VersionRef,
};
use crate::platform::authz::Facts;
use crate::platform::db::{begin, commit};
use crate::platform::errors::{self};
use crate::platform::limits::SchemaLimits;
use store::{ConsumerRow, NewSchemaRow, RegistryRow, SchemaRow};
use streamkeeper::platform::credential::http_transport;
use streamkeeper::platform::egress::EgressPolicy;

/// Checks shown on a stream's page.
const RECENT_CHECKS: i64 = 10;

#[derive(Clone)]
pub struct SchemaService {
    pool: PgPool,
    /// Where registry requests may go, which credentials they may carry.
    outbound: Outbound,
    /// Every schema a user sends, and every one a check compares, is
    /// parsed through this (size cap, then the blocking pool).
    limits: SchemaLimits,
}

use streamkeeper::schemas::subject::value_subject;

fn schema_type(s: &str) -> SchemaType {
    SchemaType::parse(s).unwrap_or(SchemaType::Avro)
}

fn text_of(row: &SchemaRow) -> SchemaText {
    SchemaText {
        schema_type: schema_type(&row.schema_type),
        text: row.schema.clone(),
        references: row
            .refs
            .iter()
            .map(|(name, text)| ResolvedReference {
                name: name.clone(),
                text: text.clone(),
            })
            .collect(),
    }
}

fn view(row: SchemaRow) -> CatalogSchema {
    CatalogSchema {
        id: row.id,
        topic: row.topic,
        group: row.group_name,
        schema_type: schema_type(&row.schema_type),
        schema: row.schema,
        source: row.source,
        subject: row.subject,
        version: row.version,
        recorded_by: row.recorded_by,
        recorded_at: row.recorded_at,
    }
}

/// A client for a cluster's registry, credentials resolved now: the
/// references checked against the policy again, sent only over https
/// unless the cluster is marked insecure, to addresses the egress rule
/// allows.
pub fn client(r: &RegistryRow, outbound: &Outbound) -> Result<RegistryClient, String> {
    let resolve = |v: &Option<String>| -> Result<Option<String>, String> {
        v.as_deref()
            .map(|s| {
                SecretRef::checked(s, &outbound.credentials)
                    .and_then(|r| r.resolve())
                    .map_err(|e| e.to_string())
            })
            .transpose()
    };
    let scheme = url::Url::parse(r.url.trim())
        .map(|u| u.scheme().to_owned())
        .unwrap_or_default();
    let has_credentials = r.username_ref.is_some() || r.password_ref.is_some();
    http_transport(&scheme, has_credentials, r.insecure_credentials).map_err(|e| e.to_string())?;
    let auth = match (resolve(&r.username_ref)?, resolve(&r.password_ref)?) {
        (Some(user), Some(secret)) => Auth::Basic {
            user,
            secret: Secret::new(secret),
        },
        (None, None) => Auth::None,
        _ => return Err("the registry needs both a username and a password reference".into()),
    };
    RegistryClient::new(RegistrySettings {
        auth,
        egress: outbound.egress,
        ..RegistrySettings::new(&r.url)
    })
    .map_err(|e| e.to_string())
}

/// A registry URL as saved: a URL the client accepts, whose host the egress
/// rule allows, and with nothing a shell would read as syntax (it is
/// pasted into the suggested request for applying a change by hand).
fn check_registry_url(url: &str, egress: EgressPolicy) -> Result<(), String> {
    if let Some(c) = streamkeeper::platform::shell::first_unsafe(url) {
        return Err(format!(
            "The registry URL must not contain {c:?}: whitespace, control characters and shell syntax ($ ` ' \" \\ ; & | < > ( ) {{ }} * ? ! # ^) are refused."
        ));
    }
    RegistryClient::new(RegistrySettings {
        egress,
        ..RegistrySettings::new(url)
    })
    .map_err(|e| e.to_string())?;
    let host = url::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_default();
    egress
        .check_saved(&host)
        .map_err(|e| format!("The registry URL cannot be used: {e}."))
}

/// The reader schema a consumer is checked with, and how it was chosen.
struct Reader {
    source: ReaderSource,
    note: String,
    row: Option<SchemaRow>,
}

fn reader_of(group: &ConsumerRow, declared: Option<&SchemaRow>, history: &[SchemaRow]) -> Reader {
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

/// A history verdict from a mode check; `version` maps the check's 1-based
/// positions to the version numbers shown.
fn judged(
    subject: &str,
    source: &str,
    mode: Mode,
    versions: usize,
    v: streamkeeper::schemas::check::Verdict,
    version: impl Fn(usize) -> usize,
    note: String,
) -> HistoryVerdict {
    HistoryVerdict {
        subject: subject.to_owned(),
        source: source.to_owned(),
        mode,
        versions,
        verdict: if v.compatible {
            Verdict::Compatible
        } else {
            Verdict::Incompatible
        },
        findings: v
            .findings
            .into_iter()
            .map(|f| HistoryFinding {
                version: version(f.version),
                direction: direction(f.direction),
                incompatibility: f.incompatibility,
            })
            .collect(),
        note,
    }
}

fn direction(d: Direction) -> String {
    match d {
        Direction::NewReadsOld => "new_reads_old".into(),
        Direction::OldReadsNew => "old_reads_new".into(),
    }
}

fn parsed_report(id: i64, report: serde_json::Value) -> Result<CompatibilityReport, AppError> {
    let mut report: CompatibilityReport =
        serde_json::from_value(report).map_err(|e| errors::internal("a stored check report", e))?;
    report.id = id;
    Ok(report)
}

/// The caller as the checks' read rule sees them.
fn reader(who: &Principal) -> store::Reader<'_> {
    store::Reader {
        user_id: who.user_id,
        username: &who.username,
        admin: who.has(Role::Admin),
    }
}

impl SchemaService {
    /// With the default limits (1 MiB, one parse per core at a time).
    pub fn new(pool: PgPool, outbound: Outbound) -> Self {
        Self::with_limits(pool, outbound, SchemaLimits::default())
    }

    pub fn with_limits(pool: PgPool, outbound: Outbound, limits: SchemaLimits) -> Self {
        Self {
            pool,
            outbound,
            limits,
        }
    }

    async fn cluster_name(&self, cluster_id: i64) -> Result<String, AppError> {
        crate::watch::store::by_id(&self.pool, cluster_id)
            .await?
            .map(|c| c.name)
            .ok_or_else(|| AppError::NotFound("That cluster".into()))
    }

    /// The topic must be one the watcher has seen: a check of a misspelt
    /// topic must not come back "compatible" for want of consumers.
    async fn known_topic(&self, cluster_id: i64, topic: &str) -> Result<(), AppError> {
        let known = crate::watch::store::topics(&self.pool, cluster_id)
            .await?
            .iter()
            .any(|t| t.name == topic);
        if known {
            Ok(())
        } else {
            Err(AppError::NotFound(format!(
                "Topic {topic} (the cluster's last pass did not list it)"
            )))
        }
    }

    /// Sets a cluster's registry (admins).
    #[tracing::instrument(skip_all, fields(user = %who.username, cluster_id = cluster_id))]
    pub async fn set_registry(
        &self,
        who: &Principal,
        from: &str,
        cluster_id: i64,
        spec: RegistrySpec,
    ) -> Result<RegistrySpec, AppError> {
        require(
            who,
            Action::ManageClusters,
            "set a cluster's Schema Registry",
        )?;
        let cluster = crate::watch::store::by_id(&self.pool, cluster_id)
            .await?
            .ok_or_else(|| AppError::NotFound("That cluster".into()))?;
        let name = cluster.name;
        let blank = |v: Option<String>| v.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty());
        let row = RegistryRow {
            url: spec.url.trim().to_owned(),
            username_ref: blank(spec.username_ref),
            password_ref: blank(spec.password_ref),
            insecure_credentials: cluster.insecure_credentials,
        };
        if let Err(why) = self.check_registry(&row) {
            let target = format!("cluster:{name}");
            record_refusal(
                &self.pool,
                who,
                from,
                "registry.set.refused",
                target,
                json!({ "refused": why }),
            )
            .await;
            return Err(AppError::Invalid(why));
        }
        let before = store::registry(&self.pool, cluster_id).await?;
        let mut tx = begin(&self.pool).await?;
        store::set_registry(&mut tx, cluster_id, &row).await?;
        // Which references changed, by name and reference (never a value).
        let refs = |r: &RegistryRow| json!({ "username_ref": r.username_ref, "password_ref": r.password_ref });
        let changed: Vec<&str> = ["username_ref", "password_ref"]
            .into_iter()
            .filter(|k| {
                before
                    .as_ref()
                    .map_or(!refs(&row)[k].is_null(), |b| refs(b)[k] != refs(&row)[k])
            })
            .collect();
        audited(
            &mut tx,
            who,
            from,
            "registry.set",
            format!("cluster:{name}"),
            json!({
                "url": row.url,
                "credentials": row.username_ref.is_some(),
                "username_ref": row.username_ref,
                "password_ref": row.password_ref,
                "credentials_changed": changed,
                "credentials_were": before.as_ref().filter(|_| !changed.is_empty()).map(refs),
            }),
        )
        .await?;
        commit(tx).await?;
        Ok(RegistrySpec {
            url: row.url,
            username_ref: row.username_ref,
            password_ref: row.password_ref,
        })
    }

    /// A registry's settings as they would be saved: references the policy
    /// allows, both or neither, sent only over https unless the cluster is
    /// marked insecure, and a URL that may be used (its values are not
    /// resolved: they may exist only where the server runs).
    fn check_registry(&self, row: &RegistryRow) -> Result<(), String> {
        for r in [&row.username_ref, &row.password_ref].into_iter().flatten() {
            self.outbound
                .credentials
                .check(r)
                .map_err(|e| format!("Registry credentials: {e}."))?;
        }
        if row.username_ref.is_some() != row.password_ref.is_some() {
            return Err(
                "Give both the registry's username and password references, or neither.".into(),
            );
        }
        check_registry_url(&row.url, self.outbound.egress)?;
        let scheme = url::Url::parse(&row.url)
            .map(|u| u.scheme().to_owned())
            .unwrap_or_default();
        http_transport(
            &scheme,
            row.username_ref.is_some(),
            row.insecure_credentials,
        )
        .map_err(|e| format!("Registry credentials: {e}."))
    }

    /// Who may record a schema: admins; owners for an unowned stream or
    /// group, or their own team's.
    async fn may_record(
        &self,
        who: &Principal,
        cluster_id: i64,
        topic: &str,
        group: Option<&str>,
    ) -> Result<(), AppError> {
        require(who, Action::Read, "record schemas")?;
        // Admins steer everything, a group not seen yet included: nothing
        // to look up.
        if who.has(Role::Admin) {
            return Ok(());
        }
        let owner = match group {
            Some(g) => crate::platform::ownership::group(&self.pool, cluster_id, g)
                .await?
                .ok_or_else(|| AppError::NotFound(format!("Consumer group {g}")))?,
            None => crate::platform::ownership::stream(&self.pool, cluster_id, topic).await?,
        };
        let owner = owner.map(|o| o.team_id());
        let mine = Facts::load(&self.pool, who).await?;
        if may_steward(mine.steward(who), owner, Stewardship::Steer) {
            Ok(())
        } else {
            Err(AppError::Forbidden(
                "record this schema (owners record schemas of unowned streams and groups, and of their teams')".into(),
            ))
        }
    }

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
        let mut references: Vec<ResolvedReference> = proposed
            .references
            .iter()
            .map(|(n, t)| ResolvedReference {
                name: n.clone(),
                text: t.clone(),
            })
            .collect();
        if !proposed.subject_references.is_empty() {
            let r = registry.as_ref().ok_or_else(|| {
                AppError::Invalid(
                    "References to subject versions need the cluster's Schema Registry, and it has none: give their text instead.".into(),
                )
            })?;
            let found = client(r, &self.outbound)
                .map_err(AppError::Unavailable)?
                .resolve_references(&registry_references(&proposed))
                .await
                .map_err(|e| errors::registry(who, &e))?;
            references.extend(found);
        }
        let text = SchemaText {
            schema_type: proposed.schema_type,
            text: proposed.schema.clone(),
            references,
        };
        let new = Arc::new(self.limits.parse(text).await?);
        let history = store::stream_history(&self.pool, cluster_id, topic).await?;
        let declared = store::readers(&self.pool, cluster_id, topic).await?;
        let groups = store::consumers(&self.pool, cluster_id, topic).await?;

        let groups: Vec<&ConsumerRow> = groups.iter().filter(|_| of_values).collect();
        let readers: Vec<Reader> = groups
            .iter()
            .map(|g| {
                let d = declared
                    .iter()
                    .find(|r| r.group_name.as_deref() == Some(&g.name));
                reader_of(g, d, &history)
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
                            limits
                                .parse_here(&t)
                                .map(|reader| can_read(&reader, &writer))
                        })
                    })
                    .collect::<Vec<_>>()
            })
            .await?;
        let consumers: Vec<ConsumerVerdict> = groups
            .iter()
            .zip(readers)
            .zip(judged)
            .map(|((g, r), judged)| {
                let (verdict, reasons, note) = match judged {
                    None => (Verdict::Undecided, Vec::new(), r.note.clone()),
                    Some(Ok(reasons)) => {
                        let v = if reasons.is_empty() {
                            Verdict::Compatible
                        } else {
                            Verdict::Incompatible
                        };
                        (v, reasons, r.note.clone())
                    }
                    Some(Err(e)) => (
                        Verdict::Undecided,
                        Vec::new(),
                        format!("{}; but that schema does not parse: {e}", r.note),
                    ),
                };
                ConsumerVerdict {
                    group: g.name.clone(),
                    owner: g.owner.clone(),
                    reader: r.source,
                    reader_note: note,
                    verdict,
                    reasons,
                }
            })
            .collect();

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
        };
        let stored =
            serde_json::to_value(&report).map_err(|e| errors::internal("a check report", e))?;
        report.id = store::insert_check(
            &self.pool,
            cluster_id,
            &store::NewCheck {
                topic,
                schema_type: proposed.schema_type.as_str(),
                schema: &proposed.schema,
                verdict: verdict.as_str(),
                report: stored,
                subject_references: serde_json::to_value(&proposed.subject_references)
                    .map_err(|e| errors::internal("a check's references", e))?,
                pasted_references: proposed.references.keys().cloned().collect(),
                submitted_by: &who.username,
                submitted_at,
                decided_at,
            },
        )
        .await?;
        Ok(report)
    }

    /// The subject's history as the catalog recorded it (oldest first),
    /// under the stream's declared level (BACKWARD if none).
    async fn against_catalog(
        &self,
        subject: &str,
        new: &Arc<ParsedSchema>,
        history: &[SchemaRow],
        cluster_id: i64,
        topic: &str,
        why: Option<String>,
    ) -> Result<HistoryVerdict, AppError> {
        let mode = store::declared_compatibility(&self.pool, cluster_id, topic)
            .await?
            .and_then(|m| Mode::parse(&m))
            .unwrap_or(Mode::Backward);
        if subject != value_subject(topic) {
            // The catalog records value schemas: another subject's history
            // is unknown here, never an empty one to be compatible with.
            let why =
                why.unwrap_or_else(|| "no Schema Registry is configured for this cluster".into());
            return Ok(HistoryVerdict {
                subject: subject.to_owned(),
                source: "catalog".into(),
                mode,
                versions: 0,
                verdict: Verdict::Undecided,
                findings: Vec::new(),
                note: format!(
                    "{why}, and the catalog records {topic}'s value schemas only: {subject}'s history is unknown"
                ),
            });
        }
        // Oldest first, parsed and checked in one job.
        let texts: Vec<SchemaText> = history.iter().rev().map(text_of).collect();
        let (limits, writer) = (self.limits.clone(), new.clone());
        let outcome = self
            .limits
            .run(move || {
                let parsed = texts
                    .iter()
                    .enumerate()
                    .map(|(i, t)| limits.parse_here(t).map_err(|e| (i, e)))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(check(mode, &parsed, &writer))
            })
            .await?;
        let verdict = match outcome {
            Ok(v) => v,
            Err((i, e)) => {
                let recorded = history.iter().rev().nth(i).map(|r| r.recorded_at);
                return Ok(HistoryVerdict {
                    subject: subject.to_owned(),
                    source: "catalog".into(),
                    mode,
                    versions: history.len(),
                    verdict: Verdict::Undecided,
                    findings: Vec::new(),
                    note: format!(
                        "the stream's schema recorded {} does not parse: {e}",
                        recorded.map(|t| t.to_string()).unwrap_or_default()
                    ),
                });
            }
        };
        let note = match why {
            Some(w) => format!("{w}; checked against the stream's schemas recorded in the catalog instead"),
            None => "checked against the stream's schemas recorded in the catalog (no Schema Registry is configured for this cluster)".into(),
        };
        Ok(judged(
            subject,
            "catalog",
            mode,
            history.len(),
            verdict,
            |v| v,
            note,
        ))
    }

    /// The subject's versions and level from the registry, and the
    /// registry's own check. A registry that cannot be read falls back to
    /// the catalog, and says so.
    #[allow(clippy::too_many_arguments)]
    async fn against_registry(
        &self,
        r: &RegistryRow,
        subject: &str,
        new: &Arc<ParsedSchema>,
        proposed: &ProposedSchema,
        history: &[SchemaRow],
        cluster_id: i64,
        topic: &str,
    ) -> Result<(HistoryVerdict, Option<RegistryOpinion>), AppError> {
        let registry = match client(r, &self.outbound) {
            Ok(c) => c,
            Err(e) => {
                let why = format!("the registry cannot be used: {e}");
                let h = self
                    .against_catalog(subject, new, history, cluster_id, topic, Some(why.clone()))
                    .await?;
                return Ok((
                    h,
                    Some(RegistryOpinion {
                        subject: subject.into(),
                        is_compatible: None,
                        messages: vec![],
                        error: Some(why),
                    }),
                ));
            }
        };
        let versions = match registry
            .versions(subject, crate::clients::registry::Deleted::Hide)
            .await
        {
            Ok(v) => Ok(v),
            Err(RegistryError::SubjectNotFound { .. }) => Ok(Vec::new()),
            Err(e) => Err(e),
        };
        // Each version with its references' text, which its parse needs.
        let fetched = match versions {
            Ok(numbers) => {
                let mut texts = Vec::new();
                let mut failed = None;
                for n in numbers {
                    let got = match registry
                        .version(subject, VersionRef::Number(n), false)
                        .await
                    {
                        Ok(v) => registry
                            .resolve_references(&v.references)
                            .await
                            .map(|refs| (v, refs)),
                        Err(e) => Err(e),
                    };
                    match got {
                        Ok((v, refs)) => texts.push((n, v, refs)),
                        Err(e) => {
                            failed = Some(e);
                            break;
                        }
                    }
                }
                match failed {
                    Some(e) => Err(e),
                    None => Ok(texts),
                }
            }
            Err(e) => Err(e),
        };
        // A registry with no level set anywhere uses BACKWARD.
        let config = registry.config(Scope::Subject(subject), true).await;
        let history_verdict = match (fetched, config) {
            (Ok(versions), Ok(config)) => {
                let mode = config.compatibility_level.unwrap_or(Mode::Backward);
                let (policy, policy_note) =
                    json_policy(new.schema_type(), config.compatibility_policy);
                // Oldest first, parsed and checked in one job.
                let texts: Vec<(u32, SchemaText)> = versions
                    .iter()
                    .map(|(n, v, refs)| {
                        let text = SchemaText {
                            schema_type: v.schema_type,
                            text: v.schema.clone(),
                            references: refs.clone(),
                        };
                        (*n, text)
                    })
                    .collect();
                let (limits, writer) = (self.limits.clone(), new.clone());
                let outcome = self
                    .limits
                    .run(move || {
                        let parsed = texts
                            .iter()
                            .map(|(n, t)| limits.parse_here(t).map_err(|e| (*n, e)))
                            .collect::<Result<Vec<_>, _>>()?;
                        Ok(check_under(mode, policy, &parsed, &writer))
                    })
                    .await?;
                match outcome {
                    Err((n, e)) => HistoryVerdict {
                        subject: subject.into(),
                        source: "registry".into(),
                        mode,
                        versions: versions.len(),
                        verdict: Verdict::Undecided,
                        findings: vec![],
                        note: format!("{subject} version {n} does not parse here: {e}"),
                    },
                    Ok(verdict) => {
                        let note = if versions.is_empty() {
                            format!(
                                "{subject} is not registered yet: nothing to be compatible with"
                            )
                        } else {
                            format!(
                                "checked against {subject}'s {} version(s) in the registry under its level {}{policy_note}",
                                versions.len(),
                                mode.as_str()
                            )
                        };
                        // Findings name the registry's version numbers.
                        let number = |i: usize| {
                            versions
                                .get(i - 1)
                                .and_then(|(n, _, _)| usize::try_from(*n).ok())
                                .unwrap_or(i)
                        };
                        judged(
                            subject,
                            "registry",
                            mode,
                            versions.len(),
                            verdict,
                            number,
                            note,
                        )
                    }
                }
            }
            (Err(e), _) | (_, Err(e)) => {
                let why = format!("the registry could not be read ({e})");
                self.against_catalog(subject, new, history, cluster_id, topic, Some(why))
                    .await?
            }
        };
        let opinion = match unregistered_references(proposed) {
            // Asked without them, the registry would judge another schema
            // (or refuse it as unparseable): no answer beats a wrong one.
            Some(why) => RegistryOpinion {
                subject: subject.into(),
                is_compatible: None,
                messages: vec![],
                error: Some(why),
            },
            None => {
                let schema = NewSchema {
                    references: registry_references(proposed),
                    ..NewSchema::new(proposed.schema_type, proposed.schema.clone())
                };
                match registry
                    .check_compatibility(
                        subject,
                        VersionRef::Latest,
                        &schema,
                        CheckOptions {
                            verbose: true,
                            normalize: false,
                        },
                    )
                    .await
                {
                    Ok(c) => RegistryOpinion {
                        subject: subject.into(),
                        is_compatible: Some(c.is_compatible),
                        messages: c.messages,
                        error: None,
                    },
                    Err(e) => RegistryOpinion {
                        subject: subject.into(),
                        is_compatible: None,
                        messages: vec![],
                        error: Some(e.to_string()),
                    },
                }
            }
        };
        Ok((history_verdict, Some(opinion)))
    }

    /// A cluster's registry with its hygiene findings; `None` without one.
    #[tracing::instrument(skip_all, fields(user = %who.username, cluster_id = cluster_id))]
    pub async fn registry_status(
        &self,
        who: &Principal,
        cluster_id: i64,
    ) -> Result<Option<RegistryStatus>, AppError> {
        require(who, Action::Read, "see registries")?;
        let cluster = self.cluster_name(cluster_id).await?;
        Ok(store::registry_status(&self.pool, cluster_id).await?.map(
            |(url, checked_at, last_error, findings)| RegistryStatus {
                cluster_id,
                cluster,
                url,
                checked_at,
                last_error,
                findings: findings
                    .into_iter()
                    .map(|o| RegistryFinding {
                        kind: o.finding.kind,
                        subject: o.finding.subject,
                        topic: o.finding.topic,
                        owner: o.owner,
                        detail: o.finding.detail,
                        found_at: o.finding.found_at,
                    })
                    .collect(),
            },
        ))
    }

    async fn registry_client(&self, cluster_id: i64) -> Result<RegistryClient, AppError> {
        let r = store::registry(&self.pool, cluster_id)
            .await?
            .ok_or_else(|| AppError::NotFound("This cluster's Schema Registry".into()))?;
        client(&r, &self.outbound).map_err(AppError::Unavailable)
    }

    /// The cluster's registry client; `None` when it has no registry.
    #[tracing::instrument(skip_all, fields(cluster_id = cluster_id))]
    pub async fn registry_client_of(
        &self,
        cluster_id: i64,
    ) -> Result<Option<RegistryClient>, AppError> {
        match store::registry(&self.pool, cluster_id).await? {
            Some(r) => client(&r, &self.outbound)
                .map(Some)
                .map_err(AppError::Unavailable),
            None => Ok(None),
        }
    }

    /// The registry's base URL, for the request to apply a change by hand.
    pub async fn registry_url(&self, cluster_id: i64) -> Result<Option<String>, AppError> {
        Ok(store::registry(&self.pool, cluster_id)
            .await?
            .map(|r| r.url))
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
            return Err(missing());
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

    /// The subject's latest version as the registry was last read, if it
    /// has been read.
    pub(crate) async fn subject_latest(
        &self,
        cluster_id: i64,
        subject: &str,
    ) -> Result<Option<SubjectSeen>, AppError> {
        Ok(store::subject_latest(&self.pool, cluster_id, subject)
            .await?
            .map(|(read_at, latest)| SubjectSeen {
                latest: latest.and_then(|v| u32::try_from(v).ok()),
                read_at,
            }))
    }

    /// The check a review item was made of, for a caller already allowed to
    /// read the item (who may read an item may read its check).
    pub(crate) async fn item_check(
        &self,
        id: i64,
    ) -> Result<Option<CompatibilityReport>, AppError> {
        match store::check_of_item(&self.pool, id).await? {
            Some(report) => parsed_report(id, report).map(Some),
            None => Ok(None),
        }
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

/// JSON schemas indented one key a line, so a diff shows what changed;
/// Protobuf text as it is.
pub(crate) fn pretty(schema: &str) -> String {
    serde_json::from_str::<serde_json::Value>(schema)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| schema.to_owned())
}

/// A line diff laid out in two columns (the `similar` crate's Myers diff).
pub(crate) fn side_by_side(left: &str, right: &str) -> Vec<DiffLine> {
    use similar::{ChangeTag, TextDiff};
    TextDiff::from_lines(left, right)
        .iter_all_changes()
        .map(|c| {
            let line = Some(c.value().trim_end_matches('\n').to_owned());
            match c.tag() {
                ChangeTag::Equal => DiffLine {
                    left: line.clone(),
                    right: line,
                },
                ChangeTag::Delete => DiffLine {
                    left: line,
                    right: None,
                },
                ChangeTag::Insert => DiffLine {
                    left: None,
                    right: line,
                },
            }
        })
        .collect()
}

/// The proposed schema's references to subject versions, as the registry
/// takes them.
fn registry_references(proposed: &ProposedSchema) -> Vec<SchemaReference> {
    proposed
        .subject_references
        .iter()
        .map(|r| SchemaReference {
            name: r.name.clone(),
            subject: r.subject.clone(),
            version: r.version,
        })
        .collect()
}

/// Why the registry cannot be asked about the proposed schema: references
/// given only as text have no subject version to send it.
fn unregistered_references(proposed: &ProposedSchema) -> Option<String> {
    if proposed.references.is_empty() {
        return None;
    }
    let names: Vec<&str> = proposed.references.keys().map(String::as_str).collect();
    Some(format!(
        "not asked: the schema's reference(s) {} were given as text, and the registry takes references only as subject versions it holds (register them, or give them as subject references)",
        names.join(", ")
    ))
}

/// The JSON Schema rules a subject's `compatibilityPolicy` asks for, and
/// what the history's note should say about it. Only JSON Schema has a
/// policy; LOGICAL is named by the registry's contract without saying what
/// it relaxes, so it (like a value newer than the contract) is judged as
/// STRICT, and the note says so.
fn json_policy(schema_type: SchemaType, policy: Option<CompatibilityPolicy>) -> (Policy, String) {
    match (schema_type, policy) {
        (SchemaType::Json, Some(CompatibilityPolicy::Lenient)) => {
            (Policy::Lenient, " and its policy LENIENT".into())
        }
        (SchemaType::Json, Some(CompatibilityPolicy::Logical)) => (
            Policy::Strict,
            "; its policy LOGICAL is not modelled here, so the STRICT rules were used".into(),
        ),
        (SchemaType::Json, Some(CompatibilityPolicy::Other)) => (
            Policy::Strict,
            "; its policy is one this console does not know, so the STRICT rules were used".into(),
        ),
        _ => (Policy::Strict, String::new()),
    }
}

/// A registry failure as the person asking should see it: what the
/// registry sent outside its contract only for admins.
#[async_trait::async_trait]
impl streamkeeper_app::port::Schemas for SchemaService {
    #[tracing::instrument(skip_all, fields(user = %who.username, cluster_id = cluster_id))]
    async fn stream_schemas(
        &self,
        who: &Principal,
        cluster_id: i64,
        topic: &str,
    ) -> Result<StreamSchemas, AppError> {
        require(who, Action::Read, "see schemas")?;
        self.cluster_name(cluster_id).await?;
        let history = store::stream_history(&self.pool, cluster_id, topic).await?;
        let declared = store::readers(&self.pool, cluster_id, topic).await?;
        let consumers = store::consumers(&self.pool, cluster_id, topic).await?;
        let readers = consumers
            .iter()
            .map(|g| {
                let d = declared
                    .iter()
                    .find(|r| r.group_name.as_deref() == Some(&g.name));
                let r = reader_of(g, d, &history);
                ReaderView {
                    group: g.name.clone(),
                    owner: g.owner.clone(),
                    reader: r.source,
                    note: r.note,
                    schema: r.row.map(view),
                }
            })
            .collect();
        let checks =
            store::recent_checks(&self.pool, cluster_id, topic, RECENT_CHECKS, reader(who))
                .await?
                .into_iter()
                .map(|(id, verdict, summary, by, at)| CheckSummary {
                    id,
                    verdict: match verdict.as_str() {
                        "COMPATIBLE" => Verdict::Compatible,
                        "INCOMPATIBLE" => Verdict::Incompatible,
                        _ => Verdict::Undecided,
                    },
                    summary: summary.as_str().unwrap_or_default().to_owned(),
                    submitted_by: by,
                    submitted_at: at,
                })
                .collect();
        Ok(StreamSchemas {
            cluster_id,
            topic: topic.to_owned(),
            history: history.into_iter().map(view).collect(),
            readers,
            checks,
        })
    }

    #[tracing::instrument(skip_all, fields(user = %who.username, cluster_id = cluster_id))]
    async fn record_schema(
        &self,
        who: &Principal,
        from: &str,
        cluster_id: i64,
        topic: &str,
        group: Option<&str>,
        new: NewCatalogSchema,
    ) -> Result<CatalogSchema, AppError> {
        let cluster = self.cluster_name(cluster_id).await?;
        self.known_topic(cluster_id, topic).await?;
        self.may_record(who, cluster_id, topic, group).await?;
        // Text, or a registry version to pin (its text is copied, so the
        // catalog keeps it if the registry loses it).
        let (ty, text, refs, pinned) = match (
            new.schema.filter(|s| !s.trim().is_empty()),
            new.subject,
            new.version,
        ) {
            (Some(text), None, None) => {
                let ty = new.schema_type.unwrap_or(SchemaType::Avro);
                (ty, text, new.references, None)
            }
            (None, Some(subject), version) => {
                let r = store::registry(&self.pool, cluster_id)
                    .await?
                    .ok_or_else(|| {
                        AppError::Invalid(
                            "This cluster has no Schema Registry to pin a version from.".into(),
                        )
                    })?;
                let wanted =
                    match version {
                        Some(n) => VersionRef::Number(u32::try_from(n).map_err(|_| {
                            AppError::Invalid("Registry versions start at 1.".into())
                        })?),
                        None => VersionRef::Latest,
                    };
                let registry = client(&r, &self.outbound).map_err(AppError::Invalid)?;
                let v = registry
                    .version(&subject, wanted, false)
                    .await
                    .map_err(|e| errors::registry(who, &e))?;
                let refs = registry
                    .resolve_references(&v.references)
                    .await
                    .map_err(|e| errors::registry(who, &e))?
                    .into_iter()
                    .map(|r| (r.name, r.text))
                    .collect();
                let number = i32::try_from(v.version).map_err(|_| {
                    AppError::Invalid(format!("{subject} version {} is out of range.", v.version))
                })?;
                (v.schema_type, v.schema, refs, Some((subject, number)))
            }
            _ => {
                return Err(AppError::Invalid(
                    "Give the schema's text, or a registry subject and version to pin — one of the two.".into(),
                ));
            }
        };
        let text_schema = SchemaText {
            schema_type: ty,
            text: text.clone(),
            references: refs
                .iter()
                .map(|(n, t)| ResolvedReference {
                    name: n.clone(),
                    text: t.clone(),
                })
                .collect(),
        };
        self.limits.parse(text_schema).await?;
        let mut tx = begin(&self.pool).await?;
        let row = store::insert_schema(
            &mut tx,
            cluster_id,
            &NewSchemaRow {
                topic,
                group,
                schema_type: ty.as_str(),
                schema: &text,
                refs: &refs,
                pinned: pinned.as_ref().map(|(s, v)| (s.as_str(), *v)),
                recorded_by: &who.username,
            },
        )
        .await?;
        let target = match group {
            Some(g) => format!("cluster:{cluster}/group:{g}/topic:{topic}"),
            None => format!("cluster:{cluster}/stream:{topic}"),
        };
        audited(
            &mut tx,
            who,
            from,
            "schema.record",
            target,
            json!({ "schema_type": ty.as_str(), "source": row.source, "id": row.id }),
        )
        .await?;
        commit(tx).await?;
        Ok(view(row))
    }

    /// Checks a proposed producer schema; see the module comment.
    async fn check(
        &self,
        who: &Principal,
        cluster_id: i64,
        topic: &str,
        proposed: ProposedSchema,
    ) -> Result<CompatibilityReport, AppError> {
        self.check_subject(who, cluster_id, topic, &value_subject(topic), proposed)
            .await
    }

    #[tracing::instrument(skip_all, fields(user = %who.username))]
    async fn registries(&self, who: &Principal) -> Result<Vec<RegistryStatus>, AppError> {
        require(who, Action::Read, "see registries")?;
        let mut out = Vec::new();
        for id in store::registries(&self.pool).await? {
            if let Some(s) = self.registry_status(who, id).await? {
                out.push(s);
            }
        }
        Ok(out)
    }

    /// A page of a registry's subjects as the hygiene routine last read
    /// them: no request to the registry, however many subjects it has.
    #[tracing::instrument(skip_all, fields(user = %who.username, cluster_id = cluster_id))]
    async fn registry_subjects(
        &self,
        who: &Principal,
        cluster_id: i64,
        search: Option<String>,
        sort: Option<String>,
        page: PageRequest,
    ) -> Result<RegistrySubjects, AppError> {
        require(who, Action::Read, "see registries")?;
        let order = Sorted::<SubjectColumn>::parse(sort.as_deref())?;
        let cluster = self.cluster_name(cluster_id).await?;
        let reading = store::subjects_reading(&self.pool, cluster_id)
            .await?
            .ok_or_else(|| AppError::NotFound("This cluster's Schema Registry".into()))?;
        let search = search
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty());
        let (rows, total) =
            store::subjects_page(&self.pool, cluster_id, search.as_deref(), order, page).await?;
        let number = |n: i32| u32::try_from(n).unwrap_or_default();
        let items = rows
            .into_iter()
            .map(|r| SubjectSummary {
                name: r.subject,
                versions: r.versions.into_iter().map(number).collect(),
                latest_id: number(r.latest_id),
                schema_type: schema_type(&r.schema_type),
                level: r.level.as_deref().and_then(Mode::parse),
            })
            .collect();
        Ok(RegistrySubjects {
            cluster_id,
            cluster,
            url: reading.url,
            read_at: reading.subjects_read_at,
            last_error: reading.last_error,
            global: reading.global_level.as_deref().and_then(Mode::parse),
            search,
            subjects: Page::new(items, page, total),
        })
    }

    /// Two versions of a subject side by side.
    #[tracing::instrument(skip_all, fields(user = %who.username, cluster_id = cluster_id))]
    async fn subject_diff(
        &self,
        who: &Principal,
        cluster_id: i64,
        subject: &str,
        left: Option<u32>,
        right: Option<u32>,
    ) -> Result<SubjectDiff, AppError> {
        require(who, Action::Read, "see registries")?;
        self.cluster_name(cluster_id).await?;
        let registry = self.registry_client(cluster_id).await?;
        let versions = registry
            .versions(subject, crate::clients::registry::Deleted::Hide)
            .await
            .map_err(|e| errors::registry(who, &e))?;
        let right = right
            .or_else(|| versions.last().copied())
            .ok_or_else(|| AppError::NotFound(format!("A version of {subject}")))?;
        let left = left.unwrap_or_else(|| {
            versions
                .iter()
                .copied()
                .filter(|v| *v < right)
                .max()
                .unwrap_or(right)
        });
        let fetch = |v: u32| {
            let registry = registry.clone();
            async move {
                registry
                    .version(subject, VersionRef::Number(v), false)
                    .await
                    .map_err(|e| errors::registry(who, &e))
            }
        };
        let (l, r) = (fetch(left).await?, fetch(right).await?);
        let level = registry
            .config(Scope::Subject(subject), true)
            .await
            .map_err(|e| errors::registry(who, &e))?
            .compatibility_level
            .unwrap_or(Mode::Backward);
        Ok(SubjectDiff {
            cluster_id,
            subject: subject.to_owned(),
            versions,
            left,
            right,
            schema_type: r.schema_type,
            level,
            lines: side_by_side(&pretty(&l.schema), &pretty(&r.schema)),
        })
    }

    /// A recorded check, if the caller may read it (the review items' read
    /// rule, `store::check`). Another domain's check is "not
    /// found", so ids cannot be probed, and the attempt is recorded.
    #[tracing::instrument(skip_all, fields(user = %who.username, id = id))]
    async fn check_report(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
    ) -> Result<CompatibilityReport, AppError> {
        require(who, Action::Read, "see schema checks")?;
        let missing = || AppError::NotFound("That check".into());
        let (readable, report) = store::check(&self.pool, id, reader(who))
            .await?
            .ok_or_else(missing)?;
        if !readable {
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
            return Err(missing());
        }
        parsed_report(id, report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_json_schema_has_a_policy_and_only_lenient_relaxes_it() {
        let lenient = Some(CompatibilityPolicy::Lenient);
        assert_eq!(json_policy(SchemaType::Json, lenient).0, Policy::Lenient);
        assert_eq!(json_policy(SchemaType::Avro, lenient).0, Policy::Strict);
        assert_eq!(
            json_policy(SchemaType::Json, None),
            (Policy::Strict, String::new())
        );
        let (policy, note) = json_policy(SchemaType::Json, Some(CompatibilityPolicy::Logical));
        assert_eq!(policy, Policy::Strict);
        assert!(note.contains("LOGICAL"), "{note}");
    }

    #[test]
    fn text_references_keep_the_registry_from_being_asked() {
        let mut proposed = ProposedSchema {
            schema_type: SchemaType::Json,
            schema: "{}".into(),
            references: Default::default(),
            subject_references: vec![streamkeeper::schemas::SubjectReference {
                name: "common.json".into(),
                subject: "common".into(),
                version: 2,
            }],
        };
        assert_eq!(unregistered_references(&proposed), None);
        assert_eq!(
            registry_references(&proposed),
            [SchemaReference {
                name: "common.json".into(),
                subject: "common".into(),
                version: 2
            }]
        );
        proposed.references.insert("money.json".into(), "{}".into());
        let why = unregistered_references(&proposed).expect("a reason");
        assert!(why.contains("money.json"), "{why}");
    }
}
