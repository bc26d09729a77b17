//! A proposed schema against its subject's history: the registry's
//! versions under the registry's level and policy, with the registry's own
//! check as a second opinion; or the catalog's record when there is no
//! registry or it cannot be read.

use std::sync::Arc;
use streamkeeper::schemas::Verdict;
use streamkeeper::schemas::check::{Direction, ParsedSchema, check, check_under};
use streamkeeper::schemas::json::Policy;
use streamkeeper::schemas::subject::value_subject;
use streamkeeper::schemas::{Mode, ResolvedReference, SchemaText, SchemaType};
use streamkeeper_app::error::AppError;
use streamkeeper_app::schemas::model::{
    HistoryFinding, HistoryVerdict, ProposedSchema, RegistryOpinion,
};

use super::registry::client;
use super::store::{self, RegistryRow, SchemaRow};
use super::{SchemaService, text_of};
use crate::clients::registry::{
    CheckOptions, CompatibilityPolicy, Config, Deleted, NewSchema, RegistryClient, RegistryError,
    SchemaReference, SchemaVersion, Scope, VersionRef,
};

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

/// The proposed schema's references to subject versions, as the registry
/// takes them.
pub(super) fn registry_references(proposed: &ProposedSchema) -> Vec<SchemaReference> {
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

impl SchemaService {
    /// The subject's history as the catalog recorded it (oldest first),
    /// under the stream's declared level (BACKWARD if none).
    pub(super) async fn against_catalog(
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
    pub(super) async fn against_registry(
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
        let fetched = registered_versions(&registry, subject).await;
        // A registry with no level set anywhere uses BACKWARD.
        let config = registry.config(Scope::Subject(subject), true).await;
        let history_verdict = match (fetched, config) {
            (Ok(versions), Ok(config)) => {
                self.against_versions(subject, new, &versions, &config)
                    .await?
            }
            (Err(e), _) | (_, Err(e)) => {
                let why = format!("the registry could not be read ({e})");
                self.against_catalog(subject, new, history, cluster_id, topic, Some(why))
                    .await?
            }
        };
        let opinion = registry_opinion(&registry, subject, proposed).await;
        Ok((history_verdict, Some(opinion)))
    }

    /// The proposed schema against the registry's versions of the subject,
    /// under the subject's level and policy.
    async fn against_versions(
        &self,
        subject: &str,
        new: &Arc<ParsedSchema>,
        versions: &[(u32, SchemaVersion, Vec<ResolvedReference>)],
        config: &Config,
    ) -> Result<HistoryVerdict, AppError> {
        let mode = config.compatibility_level.unwrap_or(Mode::Backward);
        let (policy, policy_note) = json_policy(new.schema_type(), config.compatibility_policy);
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
        Ok(match outcome {
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
                    format!("{subject} is not registered yet: nothing to be compatible with")
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
        })
    }
}

/// Each of the subject's versions, oldest first, with its references'
/// text, which its parse needs; a subject not registered yet has none.
/// Fails on the first version it cannot read.
async fn registered_versions(
    registry: &RegistryClient,
    subject: &str,
) -> Result<Vec<(u32, SchemaVersion, Vec<ResolvedReference>)>, RegistryError> {
    let numbers = match registry.versions(subject, Deleted::Hide).await {
        Ok(v) => v,
        Err(RegistryError::SubjectNotFound { .. }) => Vec::new(),
        Err(e) => return Err(e),
    };
    let mut texts = Vec::new();
    for n in numbers {
        let v = registry
            .version(subject, VersionRef::Number(n), false)
            .await?;
        let refs = registry.resolve_references(&v.references).await?;
        texts.push((n, v, refs));
    }
    Ok(texts)
}

/// The registry's own check of the proposed schema against the subject's
/// latest version, as a second opinion.
async fn registry_opinion(
    registry: &RegistryClient,
    subject: &str,
    proposed: &ProposedSchema,
) -> RegistryOpinion {
    match unregistered_references(proposed) {
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
