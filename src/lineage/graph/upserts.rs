//! The fold: one event (with who sent it and the registered clusters) in,
//! the keyed [`Upserts`] it makes out, pure and total.

use super::{DatasetKey, JobKey, JobKind, NodeKey, Provenance};
use crate::lineage::columns;
use crate::lineage::event::{Dataset, Event, EventType, Facets, Job};
use crate::lineage::naming::{self, Clusters, NameIssue};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One facet as an event set it; `value: None` deletes it (`_deleted`).
#[derive(Clone, Debug, PartialEq)]
pub struct FacetChange {
    pub key: String,
    pub value: Option<Value>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DatasetUpsert {
    pub key: DatasetKey,
    pub raw_namespace: String,
    pub cluster: Option<String>,
    pub issues: Vec<NameIssue>,
    /// Dataset facets (`schema`, `columnLineage`, `symlinks`, … and
    /// unknown ones), raw.
    pub facets: Vec<FacetChange>,
    pub at: DateTime<Utc>,
    pub provenance: Provenance,
}

#[derive(Clone, Debug, PartialEq)]
pub struct JobUpsert {
    pub key: JobKey,
    /// `None` when this event has no `jobType` facet: keep what is known.
    pub kind: Option<JobKind>,
    pub integration: Option<String>,
    pub facets: Vec<FacetChange>,
    pub at: DateTime<Utc>,
    pub provenance: Provenance,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParentRun {
    pub run_id: String,
    pub job: JobKey,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RunUpsert {
    pub run_id: String,
    pub job: JobKey,
    /// `None` when the event did not say (read as RUNNING).
    pub event_type: Option<EventType>,
    pub parent: Option<ParentRun>,
    pub facets: Vec<FacetChange>,
    pub at: DateTime<Utc>,
}

/// `from → to`: dataset → job (an input), job → dataset (an output), or
/// job → job when a `lineage` facet says a job feeds another.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EdgeUpsert {
    pub from: NodeKey,
    pub to: NodeKey,
    pub at: DateTime<Utc>,
    pub provenance: Provenance,
}

/// Where an alias comes from.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "snake_case")]
pub enum AliasSource {
    /// The producer's namespace differed from the canonical one.
    Namespace,
    /// A `symlinks` facet identifier (`type` as sent, e.g. TABLE).
    Symlink { kind: String },
    /// Debezium's `schema.table` completed with the connector's
    /// `database.dbname` into the spec's `db.schema.table`.
    DatabasePrefix,
}

/// `dataset` claims to also be known as `alias`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AliasClaim {
    pub alias: DatasetKey,
    pub dataset: DatasetKey,
    pub source: AliasSource,
    pub at: DateTime<Utc>,
    pub provenance: Provenance,
}

/// What one event changes. Apply in any order; see the module docs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Upserts {
    pub datasets: Vec<DatasetUpsert>,
    pub jobs: Vec<JobUpsert>,
    pub run: Option<RunUpsert>,
    pub edges: Vec<EdgeUpsert>,
    pub aliases: Vec<AliasClaim>,
}

/// What a fold needs besides the event.
#[derive(Clone, Copy, Debug)]
pub struct FoldContext<'a> {
    pub provenance: Provenance,
    pub clusters: &'a Clusters,
}

/// The upserts of one event. Pure and total: every parsed event folds
/// (bad names become marked datasets, see [`naming::dataset`]).
///
/// Edges: when the job carries a `lineage` facet with `entries`, those
/// explicit per-target edges are used and the inputs × outputs lists are
/// not (they would add every input to every output's path); otherwise
/// each input feeds the job and the job feeds each output. Both from any
/// event type, START and RUNNING included.
pub fn fold(event: &Event, cx: &FoldContext) -> Upserts {
    let mut up = Upserts::default();
    let at = event.header().event_time;
    match event {
        Event::Dataset(e) => {
            folder(&mut up, cx, at, None).dataset(&e.dataset);
        }
        Event::Job(e) => {
            folder(&mut up, cx, at, None).job_lineage(&e.job, &e.inputs, &e.outputs);
        }
        Event::Run(e) => {
            let database = debezium_database(&e.run.facets);
            folder(&mut up, cx, at, database).job_lineage(&e.job, &e.inputs, &e.outputs);
            up.run = Some(RunUpsert {
                run_id: e.run.run_id.clone(),
                job: job_key(&e.job),
                event_type: e.event_type,
                parent: parent(&e.run.facets),
                facets: facet_changes(&e.run.facets),
                at,
            });
        }
    }
    up
}

fn folder<'u, 'c>(
    up: &'u mut Upserts,
    cx: &'u FoldContext<'c>,
    at: DateTime<Utc>,
    database: Option<String>,
) -> Folder<'u, 'c> {
    Folder {
        up,
        cx,
        at,
        database,
    }
}

/// The state of one fold: where upserts go and what every one shares.
struct Folder<'u, 'c> {
    up: &'u mut Upserts,
    cx: &'u FoldContext<'c>,
    at: DateTime<Utc>,
    /// Debezium's database name, to complete its two-part table names.
    database: Option<String>,
}

impl Folder<'_, '_> {
    fn job_lineage(&mut self, job: &Job, inputs: &[Dataset], outputs: &[Dataset]) {
        let key = job_key(job);
        let (kind, integration) = job_type(&job.facets);
        self.up.jobs.push(JobUpsert {
            key: key.clone(),
            kind,
            integration,
            facets: facet_changes(&job.facets),
            at: self.at,
            provenance: self.cx.provenance,
        });
        let inputs: Vec<DatasetKey> = inputs.iter().map(|d| self.dataset(d)).collect();
        let outputs: Vec<DatasetKey> = outputs.iter().map(|d| self.dataset(d)).collect();
        let job_node = NodeKey::Job(key.clone());
        if let Some(entries) = lineage_entries(&job.facets) {
            for entry in entries {
                self.entry(entry, &key);
            }
            return;
        }
        for d in inputs {
            self.edge(NodeKey::Dataset(d), job_node.clone());
        }
        for d in outputs {
            self.edge(job_node.clone(), NodeKey::Dataset(d));
        }
    }

    /// One `lineage` facet entry: a target dataset fed by this job (and
    /// through it by its dataset inputs, or directly by named jobs), or a
    /// target job fed by datasets or jobs.
    fn entry(&mut self, entry: &Value, own: &JobKey) {
        let own_node = NodeKey::Job(own.clone());
        let Some(target) = self.entity(entry, own) else {
            return;
        };
        let inputs = entry.get("inputs").and_then(Value::as_array);
        if let NodeKey::Dataset(_) = &target {
            self.edge(own_node.clone(), target.clone());
        }
        for input in inputs.into_iter().flatten() {
            let Some(source) = self.entity(input, own) else {
                continue;
            };
            match (&source, &target) {
                // A dataset read by this job to produce a dataset.
                (NodeKey::Dataset(_), NodeKey::Dataset(_)) => self.edge(source, own_node.clone()),
                (_, _) if source == target => {}
                _ => self.edge(source, target.clone()),
            }
        }
    }

    /// The node an entry or input names. A JOB without a name is this
    /// event's own job; a dataset is named by the usual rules.
    fn entity(&mut self, v: &Value, own: &JobKey) -> Option<NodeKey> {
        let ns = v.get("namespace").and_then(Value::as_str);
        let name = v.get("name").and_then(Value::as_str);
        match (v.get("type").and_then(Value::as_str)?, ns, name) {
            ("DATASET", Some(ns), Some(name)) => Some(NodeKey::Dataset(self.dataset(&Dataset {
                namespace: ns.into(),
                name: name.into(),
                facets: Facets::new(),
                io_facets: Facets::new(),
            }))),
            ("JOB", Some(ns), Some(name)) => Some(NodeKey::job(ns, name)),
            ("JOB", None, None) => Some(NodeKey::Job(own.clone())),
            _ => None,
        }
    }

    /// Upserts a dataset (and its aliases) and returns its key.
    fn dataset(&mut self, d: &Dataset) -> DatasetKey {
        let named = naming::dataset(&d.namespace, &d.name, self.cx.clusters);
        let mut key = DatasetKey {
            namespace: named.namespace.clone(),
            name: named.name.clone(),
        };
        if named.raw_namespace != named.namespace {
            self.alias(
                DatasetKey {
                    namespace: named.raw_namespace.clone(),
                    name: named.name.clone(),
                },
                &key,
                AliasSource::Namespace,
            );
        }
        if let Some(db) = &self.database
            && key.namespace.starts_with("postgres://")
            && key.name.matches('.').count() == 1
        {
            let short = key.clone();
            key.name = format!("{db}.{}", key.name);
            self.alias(short, &key, AliasSource::DatabasePrefix);
        }
        for (alias, kind) in symlinks(&d.facets, self.cx.clusters) {
            if alias != key {
                self.alias(alias, &key, AliasSource::Symlink { kind });
            }
        }
        let mut issues = named.issues;
        let mut facets = facet_changes(&d.facets);
        refuse_bad_column_lineage(&mut facets, &mut issues);
        self.up.datasets.push(DatasetUpsert {
            key: key.clone(),
            raw_namespace: named.raw_namespace,
            cluster: named.cluster,
            issues,
            facets,
            at: self.at,
            provenance: self.cx.provenance,
        });
        key
    }

    fn alias(&mut self, alias: DatasetKey, dataset: &DatasetKey, source: AliasSource) {
        self.up.aliases.push(AliasClaim {
            alias,
            dataset: dataset.clone(),
            source,
            at: self.at,
            provenance: self.cx.provenance,
        });
    }

    fn edge(&mut self, from: NodeKey, to: NodeKey) {
        let e = EdgeUpsert {
            from,
            to,
            at: self.at,
            provenance: self.cx.provenance,
        };
        if !self.up.edges.contains(&e) {
            self.up.edges.push(e);
        }
    }
}

fn job_key(job: &Job) -> JobKey {
    JobKey {
        namespace: job.namespace.clone(),
        name: job.name.clone(),
    }
}

/// `jobType.processingType` and `.integration`, when the facet is there.
fn job_type(facets: &Facets) -> (Option<JobKind>, Option<String>) {
    let Some(f) = facets.get("jobType") else {
        return (None, None);
    };
    let kind = match f.get("processingType").and_then(Value::as_str) {
        Some(s) if s.eq_ignore_ascii_case("STREAMING") => Some(JobKind::Streaming),
        Some(s) if s.eq_ignore_ascii_case("SERVICE") => Some(JobKind::Service),
        Some(s) if s.eq_ignore_ascii_case("BATCH") => Some(JobKind::Batch),
        _ => None,
    };
    let integration = f
        .get("integration")
        .and_then(Value::as_str)
        .map(str::to_string);
    (kind, integration)
}

/// `job.facets.lineage.entries`, unless the facet is being deleted.
fn lineage_entries(facets: &Facets) -> Option<&Vec<Value>> {
    let f = facets.get("lineage")?;
    if deleted(f) {
        return None;
    }
    f.get("entries")?.as_array()
}

/// `parent` or its legacy key `parentRun` (Marquez accepts both).
fn parent(facets: &Facets) -> Option<ParentRun> {
    let f = facets.get("parent").or_else(|| facets.get("parentRun"))?;
    Some(ParentRun {
        run_id: f.get("run")?.get("runId")?.as_str()?.to_string(),
        job: JobKey {
            namespace: f.get("job")?.get("namespace")?.as_str()?.to_string(),
            name: f.get("job")?.get("name")?.as_str()?.to_string(),
        },
    })
}

/// `database.dbname` from Debezium's `debezium_config` run facet.
fn debezium_database(facets: &Facets) -> Option<String> {
    facets
        .get("debezium_config")?
        .get("configs")?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .find_map(|c| c.strip_prefix("database.dbname="))
        .filter(|db| !db.is_empty())
        .map(str::to_string)
}

/// The `symlinks` facet's identifiers, named by the same rules as the
/// dataset itself (a Flink table's symlink carries a Kafka namespace).
fn symlinks(facets: &Facets, clusters: &Clusters) -> Vec<(DatasetKey, String)> {
    let Some(ids) = facets
        .get("symlinks")
        .filter(|f| !deleted(f))
        .and_then(|f| f.get("identifiers"))
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    ids.iter()
        .filter_map(|id| {
            let ns = id.get("namespace")?.as_str()?;
            let name = id.get("name")?.as_str()?;
            let kind = id.get("type").and_then(Value::as_str).unwrap_or("");
            let named = naming::dataset(ns, name, clusters);
            Some((
                DatasetKey {
                    namespace: named.namespace,
                    name: named.name,
                },
                kind.to_string(),
            ))
        })
        .collect()
}

fn deleted(facet: &Value) -> bool {
    facet.get("_deleted").and_then(Value::as_bool) == Some(true)
}

/// A `columnLineage` facet that does not parse is left out (the stored
/// one stays as it was) and the dataset marked with why; the rest of the
/// event folds as ever.
fn refuse_bad_column_lineage(facets: &mut Vec<FacetChange>, issues: &mut Vec<NameIssue>) {
    let refused = facets.iter().find_map(|f| {
        let v = f.value.as_ref().filter(|_| f.key == columns::FACET)?;
        columns::parse(v).err()
    });
    if let Some(reason) = refused {
        facets.retain(|f| f.key != columns::FACET);
        issues.push(NameIssue::ColumnLineageRefused {
            reason: reason.to_string(),
        });
    }
}

fn facet_changes(facets: &Facets) -> Vec<FacetChange> {
    facets
        .iter()
        .map(|(k, v)| FacetChange {
            key: k.clone(),
            value: (!deleted(v)).then(|| v.clone()),
        })
        .collect()
}
