//! Schemas: a stream's schema and its consumers' reader schemas in the
//! catalog, with history; and the check of a proposed producer schema
//! against every consumer group that reads the topic and against the
//! subject's history, with the registry's own check as a second opinion.
//! The rules are in `streamkeeper::schemas`; this gathers the facts.

pub mod api;
mod check;
pub mod cli;
pub mod downstream;
mod drift;
mod history;
mod registry;
pub mod routine;
pub mod store;

pub use registry::client;

use serde_json::json;
use sqlx::PgPool;
use std::collections::{BTreeMap, HashMap};
use streamkeeper::access::stewardship::{Stewardship, may_steward};
use streamkeeper::accounts::account::Principal;
use streamkeeper::accounts::role::{Action, Role};
use streamkeeper::platform::page::{Page, PageRequest};
use streamkeeper::platform::sort::Sorted;
use streamkeeper::schemas::Verdict;
use streamkeeper::schemas::list::SubjectColumn;
use streamkeeper::schemas::{Mode, ResolvedReference, SchemaText, SchemaType};
use streamkeeper_app::error::AppError;
use streamkeeper_app::schemas::model::{
    CatalogSchema, CheckSummary, CompatibilityReport, DiffLine, NewCatalogSchema, ProposedSchema,
    ReaderView, RegistryStatus, RegistrySubjects, StreamSchemas, SubjectDiff, SubjectSummary,
};

use crate::accounts::require;
use crate::audit::audited;
use crate::clients::egress::Outbound;
use crate::clients::registry::{Scope, VersionRef};
use crate::platform::authz::Facts;
use crate::platform::db::{begin, commit};
use crate::platform::errors;
use crate::platform::limits::SchemaLimits;
use check::reader_of;
use store::{NewSchemaRow, SchemaRow};

/// A schema pinned from the registry: type, text, references by name,
/// and the subject and version it came from.
type Pinned = (
    SchemaType,
    String,
    BTreeMap<String, String>,
    Option<(String, i32)>,
);

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
    /// Lineage's answer to "what does this field reach?", wired at
    /// startup (`None`: checks say nothing downstream of consumers).
    downstream: Option<downstream::Downstream>,
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
            downstream: None,
        }
    }

    /// With lineage's field-level answers for the checks' downstream
    /// breakage, and the console's address for the notices' links.
    pub fn with_downstream(mut self, downstream: downstream::Downstream) -> Self {
        self.downstream = Some(downstream);
        self
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

    /// A registry version to pin in the catalog: its type, text and
    /// references' text (copied, so the catalog keeps them if the registry
    /// loses them), and the subject and version it was.
    async fn pinned(
        &self,
        who: &Principal,
        cluster_id: i64,
        subject: String,
        version: Option<i32>,
    ) -> Result<Pinned, AppError> {
        let r = store::registry(&self.pool, cluster_id)
            .await?
            .ok_or_else(|| {
                AppError::Invalid(
                    "This cluster has no Schema Registry to pin a version from.".into(),
                )
            })?;
        let wanted = match version {
            Some(n) => VersionRef::Number(
                u32::try_from(n)
                    .map_err(|_| AppError::Invalid("Registry versions start at 1.".into()))?,
            ),
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
        Ok((v.schema_type, v.schema, refs, Some((subject, number))))
    }

    /// The owner team of each group in `groups`, by name, as the ownership
    /// rule says (claimed, else by the streams it reads).
    async fn consumer_owners(
        &self,
        cluster_id: i64,
        groups: &[store::ConsumerRow],
    ) -> Result<HashMap<String, String>, AppError> {
        let names: Vec<String> = groups.iter().map(|g| g.name.clone()).collect();
        Ok(
            crate::platform::ownership::groups(&self.pool, cluster_id, &names)
                .await?
                .into_iter()
                .filter_map(|(name, owner)| Some((name, owner?.team.name)))
                .collect(),
        )
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
        let owners = self.consumer_owners(cluster_id, &consumers).await?;
        let readers = consumers
            .iter()
            .map(|g| {
                let d = declared
                    .iter()
                    .find(|r| r.group_name.as_deref() == Some(&g.name));
                let r = reader_of(g, d, &history);
                ReaderView {
                    group: g.name.clone(),
                    owner: owners.get(&g.name).cloned(),
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
                self.pinned(who, cluster_id, subject, version).await?
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
        let names: Vec<String> = rows.iter().map(|r| r.subject.clone()).collect();
        let mut writes = store::producers_write(&self.pool, cluster_id, &names).await?;
        let items = rows
            .into_iter()
            .map(|r| SubjectSummary {
                producers_write: writes.remove(&r.subject),
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
            return Err(self.unreadable_check(who, from, id).await);
        }
        self.with_notices(parsed_report(id, report)?).await
    }

    async fn notify_owners(
        &self,
        who: &Principal,
        from: &str,
        id: i64,
    ) -> Result<streamkeeper_app::schemas::model::OwnersNotice, AppError> {
        self.notify_breakage_owners(who, from, id).await
    }
}
