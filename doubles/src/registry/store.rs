//! The registry's state and rules, without HTTP: what Confluent's
//! `KafkaSchemaRegistry` and `AbstractSchemaRegistry` do, kept in memory.
//!
//! IDs are global: a schema (type, canonical text, references) keeps its
//! ID in every subject and for the life of the double. Versions count from
//! 1 per subject and never go back while a higher one exists, even
//! soft-deleted. Soft-deleted versions stay readable with `deleted=true`
//! and out of every compatibility check.

use super::canonical::canonical;
use super::errors::ApiError;
use super::messages;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::sync::Arc;
use streamkeeper::schemas::check::{self, Direction, ParsedSchema};
use streamkeeper::schemas::json;
use streamkeeper::schemas::{Mode, ResolvedReference, SchemaText, SchemaType};

/// Another subject's version that a schema uses, under `name`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Reference {
    pub name: String,
    pub subject: String,
    pub version: u32,
}

impl fmt::Display for Reference {
    // As Java prints a `SchemaReference`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{{name='{}', subject='{}', version={}}}",
            self.name, self.subject, self.version
        )
    }
}

/// A schema as stored: what its ID stands for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Schema {
    pub schema_type: SchemaType,
    /// The canonical text (see [`canonical`]).
    pub text: String,
    pub references: Vec<Reference>,
}

/// A schema as a request gives it.
#[derive(Clone, Debug)]
pub struct Submission {
    pub schema_type: SchemaType,
    pub text: String,
    pub references: Vec<Reference>,
}

/// A version in a request path: `latest` (or -1), or 1..2^31-1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VersionSpec {
    Latest,
    Number(u32),
}

impl VersionSpec {
    /// As Confluent's `VersionId`: anything else is 42202.
    pub fn parse(text: &str) -> Result<VersionSpec, ApiError> {
        let trimmed = text.trim();
        if trimmed.eq_ignore_ascii_case("latest") {
            return Ok(VersionSpec::Latest);
        }
        match trimmed.parse::<i32>() {
            Ok(-1) => Ok(VersionSpec::Latest),
            Ok(n) => u32::try_from(n)
                .ok()
                .filter(|n| *n > 0)
                .map(VersionSpec::Number)
                .ok_or_else(|| ApiError::invalid_version(&n.to_string())),
            Err(_) => Err(ApiError::invalid_version(text)),
        }
    }

    /// The number Java's messages print: -1 for `latest`.
    fn java(self) -> i32 {
        match self {
            VersionSpec::Latest => -1,
            VersionSpec::Number(n) => i32::try_from(n).unwrap_or(i32::MAX),
        }
    }
}

/// Whether a subject or registry accepts writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegistryMode {
    ReadWrite,
    ReadOnly,
    ReadOnlyOverride,
    Import,
    Forward,
}

impl RegistryMode {
    const ALL: [RegistryMode; 5] = [
        RegistryMode::ReadWrite,
        RegistryMode::ReadOnly,
        RegistryMode::ReadOnlyOverride,
        RegistryMode::Import,
        RegistryMode::Forward,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RegistryMode::ReadWrite => "READWRITE",
            RegistryMode::ReadOnly => "READONLY",
            RegistryMode::ReadOnlyOverride => "READONLY_OVERRIDE",
            RegistryMode::Import => "IMPORT",
            RegistryMode::Forward => "FORWARD",
        }
    }

    /// Case-insensitive, as Java's `Enum.valueOf(mode.toUpperCase())`.
    pub fn parse(text: &str) -> Option<RegistryMode> {
        let upper = text.to_uppercase();
        Self::ALL.into_iter().find(|m| m.as_str() == upper)
    }

    fn read_only(self) -> bool {
        matches!(
            self,
            RegistryMode::ReadOnly | RegistryMode::ReadOnlyOverride
        )
    }
}

/// A compatibility level by Java's `CompatibilityLevel.forName`: the name
/// in any case, nothing else.
pub fn parse_level(text: &str) -> Option<Mode> {
    let upper = text.to_uppercase();
    Mode::ALL.into_iter().find(|m| m.as_str() == upper)
}

/// A subject's `compatibilityPolicy`: which JSON Schema changes count as
/// compatible (the other formats ignore it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    Strict,
    Lenient,
    /// Accepted and echoed as the registry does; judged as STRICT, since
    /// the contract says nothing of what it relaxes.
    Logical,
}

impl Policy {
    const ALL: [Policy; 3] = [Policy::Strict, Policy::Lenient, Policy::Logical];

    pub fn as_str(self) -> &'static str {
        match self {
            Policy::Strict => "STRICT",
            Policy::Lenient => "LENIENT",
            Policy::Logical => "LOGICAL",
        }
    }

    /// In any case, as levels are.
    pub fn parse(text: &str) -> Option<Policy> {
        let upper = text.to_uppercase();
        Self::ALL.into_iter().find(|p| p.as_str() == upper)
    }

    fn engine(self) -> json::Policy {
        match self {
            Policy::Lenient => json::Policy::Lenient,
            Policy::Strict | Policy::Logical => json::Policy::Strict,
        }
    }
}

/// Which versions or subjects a listing shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Listing {
    Live,
    All,
    DeletedOnly,
}

impl Listing {
    /// `deletedOnly` wins over `deleted`, as in the resources.
    pub fn from_flags(deleted: bool, deleted_only: bool) -> Listing {
        if deleted_only {
            Listing::DeletedOnly
        } else if deleted {
            Listing::All
        } else {
            Listing::Live
        }
    }

    fn shows(self, deleted: bool) -> bool {
        match self {
            Listing::Live => !deleted,
            Listing::All => true,
            Listing::DeletedOnly => deleted,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Version {
    pub number: u32,
    pub id: u32,
    pub deleted: bool,
    pub schema: Arc<Schema>,
}

/// A parsed request schema, ready to store.
struct Prepared {
    schema: Schema,
    parsed: ParsedSchema,
}

#[derive(Debug, Default)]
pub struct Store {
    subjects: BTreeMap<String, Vec<Version>>,
    ids: HashMap<Schema, u32>,
    last_id: u32,
    global_level: Option<Mode>,
    subject_levels: HashMap<String, Mode>,
    global_policy: Option<Policy>,
    subject_policies: HashMap<String, Policy>,
    global_mode: Option<RegistryMode>,
    subject_modes: HashMap<String, RegistryMode>,
}

impl Store {
    fn versions_of(&self, subject: &str) -> &[Version] {
        self.subjects.get(subject).map(Vec::as_slice).unwrap_or(&[])
    }

    fn live(&self, subject: &str) -> impl Iterator<Item = &Version> {
        self.versions_of(subject).iter().filter(|v| !v.deleted)
    }

    /// Java's `hasSubjects(subject, lookupDeleted)`.
    fn has_subject(&self, subject: &str, include_deleted: bool) -> bool {
        self.versions_of(subject)
            .iter()
            .any(|v| include_deleted || !v.deleted)
    }

    /// `latest` is the newest live version whatever `include_deleted` says.
    fn get(&self, subject: &str, spec: VersionSpec, include_deleted: bool) -> Option<&Version> {
        match spec {
            VersionSpec::Latest => self.live(subject).last(),
            VersionSpec::Number(n) => self
                .versions_of(subject)
                .iter()
                .find(|v| v.number == n && (include_deleted || !v.deleted)),
        }
    }

    fn not_found(&self, subject: &str, spec: VersionSpec, include_deleted: bool) -> ApiError {
        if self.has_subject(subject, include_deleted) {
            ApiError::version_not_found(spec.java())
        } else {
            ApiError::subject_not_found(subject)
        }
    }

    // Reading.

    pub fn subjects(&self, prefix: Option<&str>, listing: Listing) -> Vec<String> {
        self.subjects
            .iter()
            .filter(|(name, _)| prefix.is_none_or(|p| name.starts_with(p)))
            // A subject is deleted when every version of it is.
            .filter(|(_, versions)| listing.shows(versions.iter().all(|v| v.deleted)))
            .map(|(name, _)| name.clone())
            .collect()
    }

    pub fn versions(&self, subject: &str, listing: Listing) -> Result<Vec<u32>, ApiError> {
        if !self.has_subject(subject, listing != Listing::Live) {
            return Err(ApiError::subject_not_found(subject));
        }
        Ok(self
            .versions_of(subject)
            .iter()
            .filter(|v| listing.shows(v.deleted))
            .map(|v| v.number)
            .collect())
    }

    pub fn version(
        &self,
        subject: &str,
        spec: VersionSpec,
        include_deleted: bool,
    ) -> Result<&Version, ApiError> {
        self.get(subject, spec, include_deleted)
            .ok_or_else(|| self.not_found(subject, spec, include_deleted))
    }

    /// The IDs of schemas that use `subject` version `version`.
    fn referrers(&self, subject: &str, version: u32, include_deleted: bool) -> Vec<(&str, u32)> {
        let mut found: Vec<(&str, u32)> = self
            .subjects
            .iter()
            .flat_map(|(name, versions)| versions.iter().map(move |v| (name.as_str(), v)))
            .filter(|(_, v)| include_deleted || !v.deleted)
            .filter(|(_, v)| {
                v.schema
                    .references
                    .iter()
                    .any(|r| r.subject == subject && r.version == version)
            })
            .map(|(name, v)| (name, v.id))
            .collect();
        found.sort_unstable_by_key(|(_, id)| *id);
        found
    }

    pub fn referenced_by(
        &self,
        subject: &str,
        spec: VersionSpec,
        include_deleted: bool,
    ) -> Result<Vec<u32>, ApiError> {
        let number = self.version(subject, spec, true)?.number;
        let mut ids: Vec<u32> = self
            .referrers(subject, number, include_deleted)
            .into_iter()
            .map(|(_, id)| id)
            .collect();
        ids.dedup();
        Ok(ids)
    }

    /// The schema an ID stands for while any version, even soft-deleted,
    /// uses it.
    pub fn schema_by_id(&self, id: u32) -> Option<Arc<Schema>> {
        self.subjects
            .values()
            .flatten()
            .find(|v| v.id == id)
            .map(|v| Arc::clone(&v.schema))
    }

    pub fn versions_by_id(&self, id: u32, include_deleted: bool) -> Option<Vec<(String, u32)>> {
        self.schema_by_id(id)?;
        Some(
            self.subjects
                .iter()
                .flat_map(|(name, versions)| versions.iter().map(move |v| (name, v)))
                .filter(|(_, v)| v.id == id && (include_deleted || !v.deleted))
                .map(|(name, v)| (name.clone(), v.number))
                .collect(),
        )
    }

    // Parsing and checking.

    /// The texts of every schema `references` reaches, each once.
    fn resolve(
        &self,
        references: &[Reference],
        out: &mut Vec<ResolvedReference>,
        seen: &mut HashSet<(String, u32)>,
    ) -> Result<(), String> {
        for r in references {
            if !seen.insert((r.subject.clone(), r.version)) {
                continue;
            }
            let target = self
                .versions_of(&r.subject)
                .iter()
                .find(|v| v.number == r.version)
                .ok_or_else(|| format!("Invalid reference {r}: no such subject version"))?;
            self.resolve(&target.schema.references, out, seen)?;
            out.push(ResolvedReference {
                name: r.name.clone(),
                text: target.schema.text.clone(),
            });
        }
        Ok(())
    }

    fn parse(&self, schema: &Schema) -> Result<ParsedSchema, String> {
        let mut references = Vec::new();
        self.resolve(&schema.references, &mut references, &mut HashSet::new())?;
        ParsedSchema::parse(&SchemaText {
            schema_type: schema.schema_type,
            text: schema.text.clone(),
            references,
        })
        .map_err(|e| e.to_string())
    }

    /// A request's schema, canonical and parsed; 42201 as Confluent words
    /// it when it is not a schema.
    fn prepare(&self, subject: &str, submission: &Submission) -> Result<Prepared, ApiError> {
        let invalid = |detail: String| {
            let t = submission.schema_type.as_str();
            let refs = format!(
                "[{}]",
                submission
                    .references
                    .iter()
                    .map(Reference::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            ApiError::invalid_schema(format!(
                "Invalid schema {{subject={subject},version=0,id=-1,schemaType={t},references={refs},schema={}}} with refs {refs} of type {t}, details: {detail}",
                submission.text
            ))
        };
        let text = canonical(submission.schema_type, &submission.text).map_err(invalid)?;
        let schema = Schema {
            schema_type: submission.schema_type,
            text,
            references: submission.references.clone(),
        };
        let parsed = self.parse(&schema).map_err(invalid)?;
        Ok(Prepared { schema, parsed })
    }

    /// Confluent's verdict on `new` against `history` (oldest first) under
    /// `level`: empty when compatible, else its messages.
    fn verdict(
        &self,
        level: Mode,
        policy: Policy,
        history: &[Version],
        new: &Prepared,
    ) -> Result<Vec<String>, ApiError> {
        if level == Mode::None || history.is_empty() {
            return Ok(Vec::new());
        }
        let parsed = history
            .iter()
            .map(|v| self.parse(&v.schema))
            .collect::<Result<Vec<_>, _>>()
            .map_err(ApiError::invalid_schema)?;
        let verdict = check::check_under(level, policy.engine(), &parsed, &new.parsed);
        // Every finding is about one version: the newest that failed.
        let Some(old) = verdict
            .findings
            .first()
            .and_then(|f| history.get(f.version.wrapping_sub(1)))
        else {
            return Ok(Vec::new());
        };
        let mut messages = Vec::new();
        if old.schema.schema_type != new.schema.schema_type {
            messages.push(messages::DIFFERENT_SCHEMA_TYPE.to_string());
        } else {
            // FULL lists the old schema's complaints first, then the new
            // one's, and shows the old schema only after the latter.
            let mut backward = 0;
            for direction in [Direction::OldReadsNew, Direction::NewReadsOld] {
                let reader_text = match direction {
                    Direction::OldReadsNew => &old.schema.text,
                    Direction::NewReadsOld => &new.schema.text,
                };
                for f in verdict.findings.iter().filter(|f| f.direction == direction) {
                    messages.push(messages::entry(
                        new.schema.schema_type,
                        &f.incompatibility,
                        messages::roles(direction),
                        reader_text,
                    ));
                    if direction == Direction::NewReadsOld {
                        backward += 1;
                    }
                }
            }
            let show_old = !(level.backward() && level.forward()) || backward > 0;
            if show_old {
                messages.push(messages::old_schema_version(old.number));
                messages.push(messages::old_schema(&old.schema.text));
            }
        }
        messages.push(messages::level_used(level.as_str()));
        Ok(messages)
    }

    /// `POST /compatibility/subjects/{s}/versions[/{v}]`: against one
    /// version, or every live one; with `verbose`, an invalid schema is an
    /// incompatible answer rather than 42201.
    pub fn check(
        &self,
        subject: &str,
        spec: Option<VersionSpec>,
        submission: &Submission,
        verbose: bool,
    ) -> Result<Vec<String>, ApiError> {
        let history: Vec<Version> = match spec {
            // Soft-deleted versions are never checked against, and the
            // latest of a missing subject is nothing to be incompatible with.
            Some(spec) => match self.get(subject, spec, false) {
                Some(v) => vec![v.clone()],
                None if spec == VersionSpec::Latest => Vec::new(),
                None => return Err(ApiError::version_not_found(spec.java())),
            },
            None => self.live(subject).cloned().collect(),
        };
        let prepared = if submission.text.trim().is_empty() {
            Err(ApiError::invalid_schema("Empty schema"))
        } else {
            self.prepare(subject, submission)
        };
        match prepared {
            Ok(new) => self.verdict(
                self.level_in_scope(subject),
                self.policy_in_scope(subject),
                &history,
                &new,
            ),
            Err(e) if verbose && e.error_code == 42201 => Ok(vec![e.message]),
            Err(e) => Err(e),
        }
    }

    // Writing.

    fn mode_in_scope(&self, subject: &str) -> RegistryMode {
        match self.global_mode {
            Some(RegistryMode::ReadOnlyOverride) => RegistryMode::ReadOnlyOverride,
            global => self
                .subject_modes
                .get(subject)
                .copied()
                .or(global)
                .unwrap_or(RegistryMode::ReadWrite),
        }
    }

    /// The default context prints as an empty string: hence Confluent's
    /// two spaces in "in context  is".
    fn check_not_read_only(&self, subject: &str) -> Result<(), ApiError> {
        if self.mode_in_scope(subject).read_only() {
            return Err(ApiError::not_permitted(format!(
                "Subject {subject} in context  is in read-only mode"
            )));
        }
        Ok(())
    }

    /// `POST /subjects/{s}/versions`: the schema's ID, registered now or
    /// before.
    pub fn register(
        &mut self,
        subject: &str,
        submission: &Submission,
        incompatible_code: u32,
    ) -> Result<u32, ApiError> {
        let blank = submission.text.trim().is_empty();
        // Confluent looks the schema up before it checks the mode: a
        // schema the subject has already is its ID even when read-only.
        let prepared = if blank {
            None
        } else {
            let prepared = self.prepare(subject, submission)?;
            if let Some(v) = self.live(subject).find(|v| *v.schema == prepared.schema) {
                return Ok(v.id);
            }
            Some(prepared)
        };
        self.check_not_read_only(subject)?;
        if self.mode_in_scope(subject) != RegistryMode::ReadWrite {
            return Err(ApiError::not_permitted(format!(
                "Subject {subject} in context  is not in read-write mode"
            )));
        }
        let Some(new) = prepared else {
            // An empty schema re-registers the latest one.
            return self
                .live(subject)
                .last()
                .map(|v| v.id)
                .ok_or_else(|| ApiError::invalid_schema("Empty schema"));
        };
        let history: Vec<Version> = self.live(subject).cloned().collect();
        let messages = self.verdict(
            self.level_in_scope(subject),
            self.policy_in_scope(subject),
            &history,
            &new,
        )?;
        if !messages.is_empty() {
            return Err(ApiError::incompatible(
                incompatible_code,
                subject,
                &messages,
            ));
        }
        let id = match self.ids.get(&new.schema) {
            Some(id) => *id,
            None => {
                self.last_id += 1;
                self.ids.insert(new.schema.clone(), self.last_id);
                self.last_id
            }
        };
        let number = self
            .versions_of(subject)
            .iter()
            .map(|v| v.number)
            .max()
            .unwrap_or(0)
            + 1;
        // A soft-deleted earlier version with the same ID is dropped for
        // good, unless something still references it.
        let dropped: Vec<u32> = self
            .versions_of(subject)
            .iter()
            .filter(|v| v.deleted && v.id == id)
            .filter(|v| self.referrers(subject, v.number, true).is_empty())
            .map(|v| v.number)
            .collect();
        let versions = self.subjects.entry(subject.to_string()).or_default();
        versions.retain(|v| !dropped.contains(&v.number));
        versions.push(Version {
            number,
            id,
            deleted: false,
            schema: Arc::new(new.schema),
        });
        Ok(id)
    }

    /// `POST /subjects/{s}`: the newest version holding this schema.
    pub fn lookup(
        &self,
        subject: &str,
        submission: &Submission,
        include_deleted: bool,
    ) -> Result<&Version, ApiError> {
        if !submission.text.trim().is_empty() {
            let prepared = self.prepare(subject, submission)?;
            if let Some(v) = self
                .versions_of(subject)
                .iter()
                .rev()
                .find(|v| (include_deleted || !v.deleted) && *v.schema == prepared.schema)
            {
                return Ok(v);
            }
        }
        if self.has_subject(subject, include_deleted) {
            Err(ApiError::schema_not_found())
        } else {
            Err(ApiError::subject_not_found(subject))
        }
    }

    /// Forgets a subject that has no versions left, with its settings.
    fn forget_if_empty(&mut self, subject: &str) {
        if self.versions_of(subject).is_empty() {
            self.subjects.remove(subject);
            self.subject_levels.remove(subject);
            self.subject_policies.remove(subject);
            self.subject_modes.remove(subject);
        }
    }

    /// `DELETE /subjects/{s}/versions/{v}`.
    pub fn delete_version(
        &mut self,
        subject: &str,
        spec: VersionSpec,
        permanent: bool,
    ) -> Result<u32, ApiError> {
        let version = match spec {
            VersionSpec::Latest => self.get(subject, spec, false),
            VersionSpec::Number(n) => self.get(subject, VersionSpec::Number(n), true),
        }
        .ok_or_else(|| self.not_found(subject, spec, true))?;
        let (number, deleted) = (version.number, version.deleted);
        if deleted && !permanent {
            return Err(ApiError::version_soft_deleted(subject, number));
        }
        self.check_not_read_only(subject)?;
        if !self.referrers(subject, number, permanent).is_empty() {
            return Err(ApiError::reference_exists(subject, number));
        }
        if permanent && !deleted {
            return Err(ApiError::version_not_soft_deleted(subject, number));
        }
        if let Some(versions) = self.subjects.get_mut(subject) {
            if permanent {
                versions.retain(|v| v.number != number);
            } else {
                versions
                    .iter_mut()
                    .filter(|v| v.number == number)
                    .for_each(|v| v.deleted = true);
            }
        }
        self.forget_if_empty(subject);
        Ok(number)
    }

    /// `DELETE /subjects/{s}`: the versions deleted.
    pub fn delete_subject(&mut self, subject: &str, permanent: bool) -> Result<Vec<u32>, ApiError> {
        if !self.has_subject(subject, true) {
            return Err(ApiError::subject_not_found(subject));
        }
        if !permanent && !self.has_subject(subject, false) {
            return Err(ApiError::subject_soft_deleted(subject));
        }
        self.check_not_read_only(subject)?;
        let targets: Vec<(u32, bool)> = self
            .versions_of(subject)
            .iter()
            .filter(|v| permanent || !v.deleted)
            .map(|v| (v.number, v.deleted))
            .collect();
        for (number, deleted) in &targets {
            let from_elsewhere = self
                .referrers(subject, *number, permanent)
                .iter()
                .any(|(s, _)| *s != subject);
            if from_elsewhere {
                return Err(ApiError::reference_exists(subject, *number));
            }
            if permanent && !deleted {
                return Err(ApiError::subject_not_soft_deleted(subject));
            }
        }
        if let Some(versions) = self.subjects.get_mut(subject) {
            if permanent {
                versions.clear();
            } else {
                versions.iter_mut().for_each(|v| v.deleted = true);
            }
        }
        self.forget_if_empty(subject);
        Ok(targets.into_iter().map(|(n, _)| n).collect())
    }

    // Compatibility levels.

    pub fn global_level(&self) -> Mode {
        self.global_level.unwrap_or(Mode::Backward)
    }

    /// The subject's own level, else the global one, else BACKWARD.
    pub fn level_in_scope(&self, subject: &str) -> Mode {
        self.subject_levels
            .get(subject)
            .copied()
            .unwrap_or_else(|| self.global_level())
    }

    /// The subject's `compatibilityPolicy`, else the global one, else STRICT.
    pub fn policy_in_scope(&self, subject: &str) -> Policy {
        self.subject_policies
            .get(subject)
            .copied()
            .or(self.global_policy)
            .unwrap_or(Policy::Strict)
    }

    /// The global level and policy (the level always has a value).
    pub fn global_config(&self) -> (Option<Mode>, Option<Policy>) {
        (Some(self.global_level()), self.global_policy)
    }

    /// A subject's own level and policy; 40408 when it has neither, unless
    /// `default_to_global`, which fills what it lacks from the global ones.
    pub fn subject_config(
        &self,
        subject: &str,
        default_to_global: bool,
    ) -> Result<(Option<Mode>, Option<Policy>), ApiError> {
        let own = (
            self.subject_levels.get(subject).copied(),
            self.subject_policies.get(subject).copied(),
        );
        match own {
            (level, policy) if default_to_global => Ok((
                Some(level.unwrap_or_else(|| self.global_level())),
                policy.or(self.global_policy),
            )),
            (None, None) => Err(ApiError::no_subject_config(subject)),
            own => Ok(own),
        }
    }

    /// Sets what the request gives and leaves the rest as it was.
    pub fn set_config(
        &mut self,
        subject: Option<&str>,
        level: Option<Mode>,
        policy: Option<Policy>,
    ) {
        match subject {
            None => {
                self.global_level = level.or(self.global_level);
                self.global_policy = policy.or(self.global_policy);
            }
            Some(s) => {
                if let Some(level) = level {
                    self.subject_levels.insert(s.to_string(), level);
                }
                if let Some(policy) = policy {
                    self.subject_policies.insert(s.to_string(), policy);
                }
            }
        }
    }

    /// The configuration removed; the global level falls back to BACKWARD.
    pub fn delete_config(
        &mut self,
        subject: Option<&str>,
    ) -> Result<(Option<Mode>, Option<Policy>), ApiError> {
        match subject {
            None => {
                let old = self.global_config();
                self.global_level = None;
                self.global_policy = None;
                Ok(old)
            }
            Some(s) => match (
                self.subject_levels.remove(s),
                self.subject_policies.remove(s),
            ) {
                (None, None) => Err(ApiError::subject_not_found(s)),
                old => Ok(old),
            },
        }
    }

    // Modes.

    pub fn global_mode(&self) -> RegistryMode {
        self.global_mode.unwrap_or(RegistryMode::ReadWrite)
    }

    pub fn subject_mode(
        &self,
        subject: &str,
        default_to_global: bool,
    ) -> Result<RegistryMode, ApiError> {
        if default_to_global {
            return Ok(self.mode_in_scope(subject));
        }
        self.subject_modes
            .get(subject)
            .copied()
            .ok_or_else(|| ApiError::no_subject_mode(subject))
    }

    /// `PUT /mode[/{s}]`. IMPORT needs an empty scope unless forced, and
    /// clears what soft-deleted versions remain there.
    pub fn set_mode(
        &mut self,
        subject: Option<&str>,
        mode: RegistryMode,
        force: bool,
    ) -> Result<(), ApiError> {
        let in_scope = match subject {
            Some(s) => self.mode_in_scope(s),
            None => self.global_mode(),
        };
        if mode == RegistryMode::Import && in_scope != RegistryMode::Import && !force {
            let scope: Vec<String> = match subject {
                Some(s) => vec![s.to_string()],
                None => self.subjects.keys().cloned().collect(),
            };
            if scope.iter().any(|s| self.has_subject(s, false)) {
                return Err(ApiError::not_permitted(
                    "Cannot import since found existing subjects",
                ));
            }
            for s in &scope {
                self.subjects.remove(s);
            }
        }
        match subject {
            None => self.global_mode = Some(mode),
            Some(s) => {
                self.subject_modes.insert(s.to_string(), mode);
            }
        }
        Ok(())
    }

    /// The mode removed; the global one falls back to READWRITE.
    pub fn delete_mode(&mut self, subject: Option<&str>) -> Result<RegistryMode, ApiError> {
        match subject {
            None => {
                let old = self.global_mode();
                self.global_mode = None;
                Ok(old)
            }
            Some(s) => self
                .subject_modes
                .remove(s)
                .ok_or_else(|| ApiError::subject_not_found(s)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn avro(text: &str) -> Submission {
        Submission {
            schema_type: SchemaType::Avro,
            text: text.into(),
            references: Vec::new(),
        }
    }

    #[test]
    fn a_lenient_subject_takes_a_property_added_to_an_open_json_model() {
        let json = |text: &str| Submission {
            schema_type: SchemaType::Json,
            text: text.into(),
            references: Vec::new(),
        };
        let v1 = json(r#"{"type":"object","properties":{"a":{"type":"string"}}}"#);
        let v2 = json(
            r#"{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}}}"#,
        );
        let mut s = Store::default();
        s.register("j", &v1, 409).expect("v1");
        let check = |s: &Store| s.check("j", Some(VersionSpec::Latest), &v2, true);
        assert!(!check(&s).expect("strict").is_empty(), "STRICT refuses it");
        s.set_config(Some("j"), None, Some(Policy::Lenient));
        assert_eq!(check(&s), Ok(Vec::new()), "LENIENT takes it");
        assert_eq!(
            s.subject_config("j", false),
            Ok((None, Some(Policy::Lenient))),
            "a policy alone is the subject's own config"
        );
        assert_eq!(
            s.subject_config("j", true).map(|c| c.0),
            Ok(Some(Mode::Backward))
        );
        s.delete_config(Some("j")).expect("delete");
        assert!(!check(&s).expect("strict again").is_empty());
    }

    #[test]
    fn versions_parse_as_confluent_does() {
        assert_eq!(VersionSpec::parse(" LATEST "), Ok(VersionSpec::Latest));
        assert_eq!(VersionSpec::parse("-1"), Ok(VersionSpec::Latest));
        assert_eq!(VersionSpec::parse("7"), Ok(VersionSpec::Number(7)));
        for bad in ["0", "-2", "earliest", "2147483648"] {
            let e = VersionSpec::parse(bad).expect_err(bad);
            assert_eq!(e.error_code, 42202, "{bad}");
        }
        assert!(
            VersionSpec::parse("0")
                .expect_err("0")
                .message
                .starts_with("The specified version '0' is not a valid version id.")
        );
    }

    #[test]
    fn ids_are_global_and_versions_per_subject() {
        let mut s = Store::default();
        let a = s.register("a", &avro("\"int\""), 409).expect("a");
        let b = s.register("b", &avro("  \"int\" "), 409).expect("b");
        assert_eq!(a, b);
        let again = s.register("a", &avro("\"int\""), 409).expect("again");
        assert_eq!(again, a);
        assert_eq!(s.versions("a", Listing::Live), Ok(vec![1]));
        let c = s.register("a", &avro("\"long\""), 409).expect("c");
        assert_ne!(c, a);
        assert_eq!(s.versions("a", Listing::Live), Ok(vec![1, 2]));
    }

    #[test]
    fn soft_deleted_versions_keep_their_numbers_taken() {
        let mut s = Store::default();
        s.register("a", &avro("\"int\""), 409).expect("v1");
        s.register("a", &avro("\"long\""), 409).expect("v2");
        assert_eq!(s.delete_subject("a", false), Ok(vec![1, 2]));
        s.register("a", &avro("\"int\""), 409).expect("v3");
        s.register("a", &avro("\"long\""), 409).expect("v4");
        assert_eq!(s.versions("a", Listing::Live), Ok(vec![3, 4]));
    }

    const ID: &str = r#"{"type":"record","name":"R","fields":[{"name":"id","type":"string"}]}"#;
    const ID_AMOUNT: &str = r#"{"type":"record","name":"R","fields":[{"name":"id","type":"string"},{"name":"amount","type":"int"}]}"#;
    const ID_INT: &str = r#"{"type":"record","name":"R","fields":[{"name":"id","type":"int"}]}"#;

    #[test]
    fn full_shows_the_old_schema_only_after_the_new_ones_complaints() {
        let mut s = Store::default();
        s.set_config(Some("a"), Some(Mode::Full), None);
        s.register("a", &avro(ID_AMOUNT), 409).expect("v1");
        // The new schema reads the old one; the old one cannot read the
        // new: only a FORWARD complaint, and no old schema shown.
        let only_forward = s.check("a", None, &avro(ID), true).expect("checked");
        assert_eq!(
            only_forward,
            vec![
                "{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'amount' at path '/fields/1' in the old schema has no default value and is missing in the new schema', additionalInfo:'amount'}".to_string(),
                "{validateFields: 'false', compatibility: 'FULL'}".to_string(),
            ]
        );
        let both = s.check("a", None, &avro(ID_INT), true).expect("checked");
        assert!(both[0].contains("in the old schema"), "{both:?}");
        assert!(
            both.iter().any(|m| m == "{oldSchemaVersion: 1}"),
            "{both:?}"
        );
        assert_eq!(
            both.last().map(String::as_str),
            Some("{validateFields: 'false', compatibility: 'FULL'}")
        );
    }

    #[test]
    fn transitive_levels_report_the_newest_version_that_fails() {
        let mut s = Store::default();
        s.register("a", &avro(ID_INT), 409).expect("v1");
        s.set_config(Some("a"), Some(Mode::None), None);
        s.register("a", &avro(ID), 409).expect("v2");
        s.set_config(Some("a"), Some(Mode::Backward), None);
        assert!(
            s.check("a", None, &avro(ID), false)
                .expect("latest only")
                .is_empty()
        );
        s.set_config(Some("a"), Some(Mode::BackwardTransitive), None);
        let messages = s.check("a", None, &avro(ID), false).expect("all");
        assert!(
            messages.contains(&"{oldSchemaVersion: 1}".to_string()),
            "{messages:?}"
        );
        assert!(
            messages[0].contains(
                "additionalInfo:'reader type: STRING not compatible with writer type: INT'"
            ),
            "{messages:?}"
        );
        // A soft-deleted version is no longer checked against.
        s.delete_version("a", VersionSpec::Number(1), false)
            .expect("soft delete");
        assert!(
            s.check("a", None, &avro(ID), false)
                .expect("all")
                .is_empty()
        );
    }

    #[test]
    fn modes_and_levels_parse_in_any_case_and_nothing_else() {
        assert_eq!(parse_level("full_transitive"), Some(Mode::FullTransitive));
        assert_eq!(parse_level("full-transitive"), None);
        assert_eq!(
            RegistryMode::parse("readonly_override"),
            Some(RegistryMode::ReadOnlyOverride)
        );
        assert_eq!(RegistryMode::parse("sideways"), None);
    }
}
