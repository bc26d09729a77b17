//! Folding events into the lineage graph: datasets, jobs, runs, edges and
//! aliases, each with first-seen/last-seen times and how it is known.
//!
//! **The contract.** [`fold`] is pure: an event (plus who sent it and the
//! registered clusters) in, [`Upserts`] out. Every upsert is keyed and
//! merges the same way whatever the order of arrival, so a replay of the
//! raw events (`streamkeeper lineage rebuild`) in any order gives the same
//! graph:
//! - a node or edge row keyed by its key (edges and aliases also by
//!   provenance) keeps `first_seen = LEAST(old, at)` and
//!   `last_seen = GREATEST(old, at)`;
//! - a facet keeps the value of the newest `at` (a `None` value is the
//!   spec's `_deleted: true`, kept as a tombstone of that time);
//! - a job's kind and integration, and a run's state, likewise keep the
//!   newest said;
//! - an alias claim is its own row (alias, dataset): several datasets may
//!   claim one alias, and [`Graph::alias_conflicts`] shows them, instead
//!   of the first writer winning silently as in Marquez.
//!
//! [`Graph`] applies upserts in memory with exactly those rules: the
//! model of the store, what the tests and benchmarks fold into, and what
//! [`crate::lineage::impact`] and the layout walk.
//!
//! Unlike Marquez, edges come from every event of a run (START and
//! RUNNING included) and from JobEvents, and are never dropped when a job
//! changes version: an edge that stops being reported keeps its
//! `last_seen`, which is how the UI tells a current flow from an old one.

use super::event::{Dataset, Event, EventType, Facets, Job};
use super::naming::{self, Clusters, NameIssue};
use chrono::{DateTime, Utc};
use petgraph::graph::{DiGraph, NodeIndex};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// How a fact is known: from an event a producer sent, or from an event
/// Streamkeeper emitted itself (consumer groups, connectors). The store
/// keeps it beside each raw event, so a rebuild folds with the same one;
/// it is never read from the event body, which any producer could forge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Provenance {
    Observed,
    Derived,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct DatasetKey {
    pub namespace: String,
    pub name: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct JobKey {
    pub namespace: String,
    pub name: String,
}

/// A node of the graph.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum NodeKey {
    Dataset(DatasetKey),
    Job(JobKey),
}

impl NodeKey {
    pub fn dataset(namespace: &str, name: &str) -> Self {
        NodeKey::Dataset(DatasetKey {
            namespace: namespace.into(),
            name: name.into(),
        })
    }

    pub fn job(namespace: &str, name: &str) -> Self {
        NodeKey::Job(JobKey {
            namespace: namespace.into(),
            name: name.into(),
        })
    }

    pub fn namespace(&self) -> &str {
        match self {
            NodeKey::Dataset(d) => &d.namespace,
            NodeKey::Job(j) => &j.namespace,
        }
    }

    pub fn name(&self) -> &str {
        match self {
            NodeKey::Dataset(d) => &d.name,
            NodeKey::Job(j) => &j.name,
        }
    }
}

/// The `jobType` facet's `processingType`. A job that never said is
/// BATCH (the spec's default), which [`JobInfo::kind`] applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum JobKind {
    Batch,
    Streaming,
    Service,
}

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
        self.up.datasets.push(DatasetUpsert {
            key: key.clone(),
            raw_namespace: named.raw_namespace,
            cluster: named.cluster,
            issues: named.issues,
            facets: facet_changes(&d.facets),
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

fn facet_changes(facets: &Facets) -> Vec<FacetChange> {
    facets
        .iter()
        .map(|(k, v)| FacetChange {
            key: k.clone(),
            value: (!deleted(v)).then(|| v.clone()),
        })
        .collect()
}

/// First and last time something was reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seen {
    pub first: DateTime<Utc>,
    pub last: DateTime<Utc>,
}

/// How a node or edge is known, per provenance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Known {
    pub observed: Option<Seen>,
    pub derived: Option<Seen>,
}

impl Known {
    fn see(&mut self, p: Provenance, at: DateTime<Utc>) {
        let slot = match p {
            Provenance::Observed => &mut self.observed,
            Provenance::Derived => &mut self.derived,
        };
        *slot = Some(match *slot {
            None => Seen {
                first: at,
                last: at,
            },
            Some(s) => Seen {
                first: s.first.min(at),
                last: s.last.max(at),
            },
        });
    }

    /// The latest report of either kind.
    pub fn last_seen(&self) -> Option<DateTime<Utc>> {
        self.observed
            .map(|s| s.last)
            .max(self.derived.map(|s| s.last))
    }
}

/// A facet with the time of the event that set (or deleted) it.
#[derive(Clone, Debug, PartialEq)]
pub struct FacetSlot {
    pub at: DateTime<Utc>,
    pub value: Option<Value>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct DatasetInfo {
    /// Every namespace producers used for it.
    pub raw_namespaces: BTreeSet<String>,
    pub cluster: Option<String>,
    pub issues: Vec<NameIssue>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct JobInfo {
    said: Option<(DateTime<Utc>, JobKind)>,
    pub integration: Option<String>,
}

impl JobInfo {
    /// The newest `processingType` said, BATCH when none was.
    pub fn kind(&self) -> JobKind {
        self.said.map_or(JobKind::Batch, |(_, k)| k)
    }

    /// A job as a store keeps it: the newest kind said, with its time.
    pub fn stored(said: Option<(DateTime<Utc>, JobKind)>, integration: Option<String>) -> Self {
        JobInfo { said, integration }
    }

    /// The newest `processingType` said, with the time it was said: what
    /// a store keeps so that a later write merges by the same rule.
    pub fn said(&self) -> Option<(DateTime<Utc>, JobKind)> {
        self.said
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Detail {
    Dataset(DatasetInfo),
    Job(JobInfo),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub key: NodeKey,
    pub known: Known,
    pub facets: BTreeMap<String, FacetSlot>,
    pub detail: Detail,
}

impl Node {
    /// A node known by its key alone: no times, facets or details yet.
    pub fn bare(key: NodeKey) -> Self {
        let detail = match &key {
            NodeKey::Dataset(_) => Detail::Dataset(DatasetInfo::default()),
            NodeKey::Job(_) => Detail::Job(JobInfo::default()),
        };
        Node {
            key,
            known: Known::default(),
            facets: BTreeMap::new(),
            detail,
        }
    }

    /// A live facet's value (not deleted).
    pub fn facet(&self, key: &str) -> Option<&Value> {
        self.facets.get(key)?.value.as_ref()
    }
}

/// A run as the graph keeps it.
#[derive(Clone, Debug, PartialEq)]
pub struct RunInfo {
    pub job: JobKey,
    /// The newest state said, with its time.
    pub state: Option<(DateTime<Utc>, EventType)>,
    pub first_seen: DateTime<Utc>,
    pub last_seen: DateTime<Utc>,
    pub parent: Option<ParentRun>,
}

/// An alias claimed by more than one dataset, or naming a dataset of its
/// own while another claims it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AliasConflict {
    pub alias: DatasetKey,
    /// Every dataset that claims the alias, sorted.
    pub claimants: Vec<DatasetKey>,
    /// Whether the alias is also a dataset in its own right.
    pub is_dataset: bool,
}

/// What a dataset name refers to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resolved {
    Dataset(DatasetKey),
    /// Known only as an alias of this one dataset.
    Alias(DatasetKey),
    /// Claimed by several datasets: shown as a conflict, not guessed.
    Conflict(Vec<DatasetKey>),
    Unknown,
}

/// The graph in memory: the store's model (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct Graph {
    g: DiGraph<Node, Known>,
    index: HashMap<NodeKey, NodeIndex>,
    /// alias → claimant → where the claim comes from.
    aliases: BTreeMap<DatasetKey, BTreeMap<DatasetKey, AliasSource>>,
    runs: HashMap<String, RunInfo>,
}

impl Graph {
    pub fn new() -> Self {
        Graph::default()
    }

    /// Folds `event` and applies its upserts.
    pub fn fold(&mut self, event: &Event, cx: &FoldContext) {
        let up = fold(event, cx);
        self.apply(&up);
    }

    /// Applies upserts with the store's merge rules.
    pub fn apply(&mut self, up: &Upserts) {
        for d in &up.datasets {
            let i = self.node_mut(NodeKey::Dataset(d.key.clone()));
            let n = &mut self.g[i];
            n.known.see(d.provenance, d.at);
            merge_facets(&mut n.facets, &d.facets, d.at);
            if let Detail::Dataset(info) = &mut n.detail {
                info.raw_namespaces.insert(d.raw_namespace.clone());
                if d.cluster.is_some() {
                    info.cluster.clone_from(&d.cluster);
                }
                for issue in &d.issues {
                    if !info.issues.contains(issue) {
                        info.issues.push(issue.clone());
                    }
                }
            }
        }
        for j in &up.jobs {
            let i = self.node_mut(NodeKey::Job(j.key.clone()));
            let n = &mut self.g[i];
            n.known.see(j.provenance, j.at);
            merge_facets(&mut n.facets, &j.facets, j.at);
            if let (Detail::Job(info), Some(kind)) = (&mut n.detail, j.kind)
                && info.said.is_none_or(|(t, _)| t <= j.at)
            {
                info.said = Some((j.at, kind));
                info.integration.clone_from(&j.integration);
            }
        }
        for e in &up.edges {
            let a = self.node_mut(e.from.clone());
            let b = self.node_mut(e.to.clone());
            let edge = match self.g.find_edge(a, b) {
                Some(x) => x,
                None => self.g.add_edge(a, b, Known::default()),
            };
            self.g[edge].see(e.provenance, e.at);
        }
        for a in &up.aliases {
            self.aliases
                .entry(a.alias.clone())
                .or_default()
                .entry(a.dataset.clone())
                .or_insert_with(|| a.source.clone());
        }
        if let Some(r) = &up.run {
            let info = self
                .runs
                .entry(r.run_id.clone())
                .or_insert_with(|| RunInfo {
                    job: r.job.clone(),
                    state: None,
                    first_seen: r.at,
                    last_seen: r.at,
                    parent: None,
                });
            info.first_seen = info.first_seen.min(r.at);
            info.last_seen = info.last_seen.max(r.at);
            let said = r.event_type.unwrap_or(EventType::Running);
            if info.state.is_none_or(|(t, _)| t <= r.at) {
                info.state = Some((r.at, said));
            }
            if r.parent.is_some() {
                info.parent.clone_from(&r.parent);
            }
        }
    }

    /// The node's index, created bare when an edge names it first.
    fn node_mut(&mut self, key: NodeKey) -> NodeIndex {
        if let Some(i) = self.index.get(&key) {
            return *i;
        }
        let i = self.g.add_node(Node::bare(key.clone()));
        self.index.insert(key, i);
        i
    }

    pub fn node(&self, key: &NodeKey) -> Option<&Node> {
        self.index.get(key).map(|i| &self.g[*i])
    }

    /// How the edge `from → to` is known, if it exists.
    pub fn edge(&self, from: &NodeKey, to: &NodeKey) -> Option<&Known> {
        let e = self
            .g
            .find_edge(*self.index.get(from)?, *self.index.get(to)?)?;
        Some(&self.g[e])
    }

    pub fn node_count(&self) -> usize {
        self.g.node_count()
    }

    pub fn edge_count(&self) -> usize {
        self.g.edge_count()
    }

    pub fn run(&self, run_id: &str) -> Option<&RunInfo> {
        self.runs.get(run_id)
    }

    /// What a dataset name refers to: the dataset itself, or the one
    /// dataset that claims it as an alias, or the conflict.
    pub fn resolve(&self, key: &DatasetKey) -> Resolved {
        if self.index.contains_key(&NodeKey::Dataset(key.clone())) {
            return Resolved::Dataset(key.clone());
        }
        match self.aliases.get(key) {
            None => Resolved::Unknown,
            Some(c) if c.len() == 1 => c
                .keys()
                .next()
                .map_or(Resolved::Unknown, |k| Resolved::Alias(k.clone())),
            Some(c) => Resolved::Conflict(c.keys().cloned().collect()),
        }
    }

    /// Aliases claimed by more than one dataset, or by one while being a
    /// dataset of their own, sorted by alias.
    pub fn alias_conflicts(&self) -> Vec<AliasConflict> {
        self.aliases
            .iter()
            .filter_map(|(alias, claims)| {
                let is_dataset = self.index.contains_key(&NodeKey::Dataset(alias.clone()));
                (claims.len() > 1 || is_dataset).then(|| AliasConflict {
                    alias: alias.clone(),
                    claimants: claims.keys().cloned().collect(),
                    is_dataset,
                })
            })
            .collect()
    }

    /// Every alias of a dataset, with where it comes from.
    pub fn aliases_of(&self, key: &DatasetKey) -> Vec<(DatasetKey, AliasSource)> {
        self.aliases
            .iter()
            .filter_map(|(alias, claims)| claims.get(key).map(|s| (alias.clone(), s.clone())))
            .collect()
    }

    /// Puts `node` in as a store kept it, replacing a node of its key: how
    /// a store loads the part of the graph a question needs.
    pub fn insert_node(&mut self, node: Node) {
        let i = self.node_mut(node.key.clone());
        self.g[i] = node;
    }

    /// Puts the edge `from → to` in as a store kept it (its nodes created
    /// bare when missing), replacing how it was known.
    pub fn insert_edge(&mut self, from: NodeKey, to: NodeKey, known: Known) {
        let a = self.node_mut(from);
        let b = self.node_mut(to);
        match self.g.find_edge(a, b) {
            Some(e) => self.g[e] = known,
            None => {
                self.g.add_edge(a, b, known);
            }
        }
    }

    /// Every node, in the order they were first named: with [`edges`],
    /// [`alias_claims`] and [`runs`], what a store writes after folding a
    /// batch here (so a batch reaches it merged by the same rules).
    ///
    /// [`edges`]: Graph::edges
    /// [`alias_claims`]: Graph::alias_claims
    /// [`runs`]: Graph::runs
    pub fn nodes(&self) -> impl Iterator<Item = &Node> {
        self.g.node_weights()
    }

    /// Every edge: `(from, to, how known)`.
    pub fn edges(&self) -> impl Iterator<Item = (&NodeKey, &NodeKey, &Known)> {
        use petgraph::visit::EdgeRef;
        self.g
            .edge_references()
            .map(|e| (&self.g[e.source()].key, &self.g[e.target()].key, e.weight()))
    }

    /// Every alias claim: `(alias, claimant, where the claim comes from)`.
    pub fn alias_claims(&self) -> impl Iterator<Item = (&DatasetKey, &DatasetKey, &AliasSource)> {
        self.aliases
            .iter()
            .flat_map(|(alias, claims)| claims.iter().map(move |(d, s)| (alias, d, s)))
    }

    /// Every run, by run id.
    pub fn runs(&self) -> impl Iterator<Item = (&str, &RunInfo)> {
        self.runs.iter().map(|(k, v)| (k.as_str(), v))
    }

    pub(crate) fn petgraph(&self) -> &DiGraph<Node, Known> {
        &self.g
    }

    pub(crate) fn index_of(&self, key: &NodeKey) -> Option<NodeIndex> {
        self.index.get(key).copied()
    }
}

fn merge_facets(
    slots: &mut BTreeMap<String, FacetSlot>,
    changes: &[FacetChange],
    at: DateTime<Utc>,
) {
    for c in changes {
        match slots.get_mut(&c.key) {
            Some(slot) if slot.at > at => {}
            Some(slot) => {
                slot.at = at;
                slot.value.clone_from(&c.value);
            }
            None => {
                slots.insert(
                    c.key.clone(),
                    FacetSlot {
                        at,
                        value: c.value.clone(),
                    },
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lineage::event::Event;
    use crate::lineage::fixtures;
    use crate::lineage::naming::RegisteredCluster;
    use serde_json::json;

    fn ev(text: &str) -> Event {
        Event::from_value(&serde_json::from_str(text).expect("json")).expect("event")
    }

    fn clusters() -> Clusters {
        Clusters::new(&[RegisteredCluster {
            id: "local".into(),
            brokers: vec!["127.0.0.1:9092".into()],
        }])
    }

    fn observed(c: &Clusters) -> FoldContext<'_> {
        FoldContext {
            provenance: Provenance::Observed,
            clusters: c,
        }
    }

    fn orders() -> NodeKey {
        NodeKey::dataset("kafka://127.0.0.1:9092", "orders")
    }

    fn enricher() -> NodeKey {
        NodeKey::job("sk-test", "orders_enricher")
    }

    #[test]
    fn a_folded_batch_lists_what_a_store_writes() {
        let c = clusters();
        let mut g = Graph::new();
        for e in [
            fixtures::STREAMING_START,
            fixtures::STREAMING_RUNNING,
            fixtures::DEBEZIUM_RUNNING,
        ] {
            g.fold(&ev(e), &observed(&c));
        }
        assert_eq!(g.nodes().count(), g.node_count());
        let edges: Vec<_> = g.edges().collect();
        assert_eq!(edges.len(), g.edge_count());
        let (_, _, known) = edges
            .iter()
            .find(|(a, b, _)| **a == orders() && **b == enricher())
            .expect("orders feeds the enricher");
        let seen = known.observed.expect("observed");
        assert_eq!(seen.last - seen.first, chrono::Duration::minutes(1));
        assert_eq!(g.runs().count(), 2);
        let enricher_node = g.node(&enricher()).expect("job");
        let Detail::Job(info) = &enricher_node.detail else {
            panic!("a job");
        };
        assert_eq!(info.said().map(|(_, k)| k), Some(JobKind::Streaming));
        // Debezium's two-part table name and its namespace alias.
        assert!(g.alias_claims().count() >= 2);
        assert!(g.alias_claims().all(|(a, d, _)| a != d));

        // What a store loads back is the same graph.
        let mut back = Graph::new();
        for n in g.nodes() {
            back.insert_node(n.clone());
        }
        for (a, b, k) in g.edges() {
            back.insert_edge(a.clone(), b.clone(), *k);
        }
        assert_eq!(back.node_count(), g.node_count());
        assert_eq!(
            back.edge(&orders(), &enricher()),
            g.edge(&orders(), &enricher())
        );
        assert_eq!(back.node(&enricher()), g.node(&enricher()));
        let rebuilt = JobInfo::stored(info.said(), info.integration.clone());
        assert_eq!(&rebuilt, info);
    }

    #[test]
    fn a_streaming_jobs_edges_exist_from_its_start_event() {
        let c = clusters();
        let mut g = Graph::new();
        g.fold(&ev(fixtures::STREAMING_START), &observed(&c));
        let out = NodeKey::dataset("postgres://127.0.0.1:5432", "shop.public.orders_enriched");
        assert!(g.edge(&orders(), &enricher()).is_some());
        assert!(g.edge(&enricher(), &out).is_some());
        let Some(Detail::Job(job)) = g.node(&enricher()).map(|n| &n.detail) else {
            panic!("no job")
        };
        assert_eq!(job.kind(), JobKind::Streaming);
        assert_eq!(job.integration.as_deref(), Some("FLINK"));
        // The schema facet is kept on the input.
        assert!(g.node(&orders()).and_then(|n| n.facet("schema")).is_some());

        g.fold(&ev(fixtures::STREAMING_RUNNING), &observed(&c));
        g.fold(&ev(fixtures::STREAMING_COMPLETE), &observed(&c));
        let seen = g
            .edge(&orders(), &enricher())
            .and_then(|k| k.observed)
            .expect("seen");
        assert_eq!(seen.first.to_rfc3339(), "2026-01-01T00:00:00+00:00");
        assert_eq!(seen.last.to_rfc3339(), "2026-01-01T00:01:00+00:00");
        // The RUNNING event had no jobType: the job stays streaming.
        let Some(Detail::Job(job)) = g.node(&enricher()).map(|n| &n.detail) else {
            panic!("no job")
        };
        assert_eq!(job.kind(), JobKind::Streaming);
        let run = g.run("0194b3a2-7c1e-7000-8000-000000000001").expect("run");
        assert_eq!(run.state.map(|s| s.1), Some(EventType::Complete));
    }

    #[test]
    fn replay_in_any_order_gives_the_same_graph() {
        let c = clusters();
        let events = [
            fixtures::STREAMING_START,
            fixtures::STREAMING_RUNNING,
            fixtures::STREAMING_COMPLETE,
            fixtures::DBT_COMPLETE,
            fixtures::DEBEZIUM_RUNNING,
        ];
        let mut a = Graph::new();
        for e in events {
            a.fold(&ev(e), &observed(&c));
        }
        let mut b = Graph::new();
        for e in events.iter().rev() {
            b.fold(&ev(e), &observed(&c));
        }
        for n in a.petgraph().node_weights() {
            let other = b.node(&n.key).expect("same nodes");
            assert_eq!(n.known, other.known);
            assert_eq!(n.facets, other.facets);
        }
        assert_eq!(a.edge_count(), b.edge_count());
        assert_eq!(
            a.run("0194b3a2-7c1e-7000-8000-000000000001")
                .map(|r| r.state),
            b.run("0194b3a2-7c1e-7000-8000-000000000001")
                .map(|r| r.state)
        );
    }

    #[test]
    fn debezium_and_dbt_join_on_the_spec_name() {
        let c = Clusters::new(&[RegisteredCluster {
            id: "prod".into(),
            brokers: vec!["b1:9093".into(), "b2:9093".into()],
        }]);
        let mut g = Graph::new();
        g.fold(&ev(fixtures::DEBEZIUM_RUNNING), &observed(&c));
        g.fold(&ev(fixtures::DBT_COMPLETE), &observed(&c));
        let customers = NodeKey::dataset("postgres://127.0.0.1:5432", "shop.public.customers");
        let cdc = NodeKey::job("inventory", "inventory.0");
        let dbt = NodeKey::job("dbt", "shop.analytics.customer_orders");
        assert!(
            g.edge(&customers, &cdc).is_some(),
            "Debezium reads the table"
        );
        assert!(
            g.edge(&customers, &dbt).is_some(),
            "dbt reads the same table"
        );
        let topic = NodeKey::dataset("kafka://b1:9093", "inventory.public.customers");
        assert!(
            g.edge(&cdc, &topic).is_some(),
            "the SASL_SSL comma list resolved"
        );
        let Some(Detail::Dataset(d)) = g.node(&topic).map(|n| &n.detail) else {
            panic!("no topic")
        };
        assert_eq!(d.cluster.as_deref(), Some("prod"));
        assert_eq!(
            g.resolve(&DatasetKey {
                namespace: "postgres://127.0.0.1:5432".into(),
                name: "public.customers".into()
            }),
            Resolved::Alias(DatasetKey {
                namespace: "postgres://127.0.0.1:5432".into(),
                name: "shop.public.customers".into()
            })
        );
        // Column lineage of the dbt model is kept.
        let model = NodeKey::dataset(
            "postgres://127.0.0.1:5432",
            "shop.analytics.customer_orders",
        );
        assert!(
            g.node(&model)
                .and_then(|n| n.facet("columnLineage"))
                .is_some()
        );
        assert_eq!(
            g.run("0194b3a2-7c1e-7000-8000-0000000000ab")
                .and_then(|r| r.parent.clone()),
            Some(ParentRun {
                run_id: "0194b3a2-7c1e-7000-8000-0000000000aa".into(),
                job: JobKey {
                    namespace: "dbt".into(),
                    name: "dbt-run-shop".into()
                }
            })
        );
    }

    #[test]
    fn dataset_and_job_events_and_the_legacy_parent_fold() {
        let c = clusters();
        let mut g = Graph::new();
        g.fold(&ev(fixtures::DATASET_EVENT), &observed(&c));
        g.fold(&ev(fixtures::JOB_EVENT), &observed(&c));
        g.fold(&ev(fixtures::SPEC_1_EVENT), &observed(&c));
        let topic = NodeKey::dataset("kafka://broker-1:9092", "orders");
        assert!(g.edge(&topic, &NodeKey::job("ns", "j")).is_some());
        let run = g
            .run("d6d8b0b6-0b32-4c1c-9c0b-5d1f8c0f0a02")
            .expect("legacy run");
        assert_eq!(
            run.parent.as_ref().map(|p| p.job.name.as_str()),
            Some("legacy")
        );
        assert_eq!(run.state.map(|s| s.1), Some(EventType::Running));
    }

    fn job_event(job: &str, facets: Value, inputs: Value, outputs: Value) -> Event {
        Event::from_value(&json!({
            "eventTime": "2026-01-01T00:00:00Z", "producer": "p",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent",
            "job": {"namespace": "flink", "name": job, "facets": facets},
            "inputs": inputs, "outputs": outputs
        }))
        .expect("job event")
    }

    #[test]
    fn explicit_lineage_entries_replace_the_cartesian_product() {
        let c = clusters();
        let ds = |n: &str| json!({"namespace": "kafka://127.0.0.1:9092", "name": n});
        let e = job_event(
            "router",
            json!({"lineage": {"_producer": "p", "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/LineageFacet.json#/$defs/LineageJobFacet",
            "entries": [
                {"type": "DATASET", "namespace": "kafka://127.0.0.1:9092", "name": "eu",
                 "inputs": [{"type": "DATASET", "namespace": "kafka://127.0.0.1:9092", "name": "in_eu"}]},
                {"type": "JOB", "namespace": "sink", "name": "archiver",
                 "inputs": [{"type": "DATASET", "namespace": "kafka://127.0.0.1:9092", "name": "eu"}]}
            ]}}),
            json!([ds("in_eu"), ds("in_us")]),
            json!([ds("eu"), ds("us")]),
        );
        let up = fold(&e, &observed(&c));
        let router = NodeKey::job("flink", "router");
        let k = |n: &str| NodeKey::dataset("kafka://127.0.0.1:9092", n);
        let edges: Vec<(NodeKey, NodeKey)> = up
            .edges
            .iter()
            .map(|e| (e.from.clone(), e.to.clone()))
            .collect();
        assert_eq!(
            edges,
            vec![
                (router.clone(), k("eu")),
                (k("in_eu"), router.clone()),
                (k("eu"), NodeKey::job("sink", "archiver")),
            ]
        );
        // The listed datasets are still known, just not wired up blindly.
        assert!(up.datasets.iter().any(|d| d.key.name == "in_us"));
    }

    #[test]
    fn symlink_conflicts_are_shown_not_first_writer_wins() {
        let c = clusters();
        let with_symlink = |topic: &str| {
            json!([{"namespace": "kafka://127.0.0.1:9092", "name": topic, "facets": {"symlinks": {
                "_producer": "p", "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/SymlinksDatasetFacet.json#/$defs/SymlinksDatasetFacet",
                "identifiers": [{"namespace": "kafka://127.0.0.1:9092", "name": "catalog.db.orders", "type": "TABLE"}]}}}])
        };
        let mut g = Graph::new();
        g.fold(
            &job_event("a", json!({}), json!([]), with_symlink("orders_v1")),
            &observed(&c),
        );
        assert_eq!(g.alias_conflicts(), vec![]);
        g.fold(
            &job_event("b", json!({}), json!([]), with_symlink("orders_v2")),
            &observed(&c),
        );
        let alias = DatasetKey {
            namespace: "kafka://127.0.0.1:9092".into(),
            name: "catalog.db.orders".into(),
        };
        let conflicts = g.alias_conflicts();
        assert_eq!(conflicts.len(), 1);
        assert_eq!(conflicts[0].alias, alias);
        assert_eq!(conflicts[0].claimants.len(), 2);
        assert!(matches!(g.resolve(&alias), Resolved::Conflict(c) if c.len() == 2));
    }

    #[test]
    fn derived_and_observed_are_kept_apart_and_facets_can_be_deleted() {
        let c = clusters();
        let mut g = Graph::new();
        let e = job_event(
            "group-x",
            json!({"documentation": {"_producer": "p", "_schemaURL": "s", "description": "reads orders"}}),
            json!([{"namespace": "kafka://127.0.0.1:9092", "name": "orders"}]),
            json!([]),
        );
        g.fold(
            &e,
            &FoldContext {
                provenance: Provenance::Derived,
                clusters: &c,
            },
        );
        let job = NodeKey::job("flink", "group-x");
        let known = g.edge(&orders(), &job).copied().expect("edge");
        assert!(known.derived.is_some() && known.observed.is_none());
        assert!(
            g.node(&job)
                .and_then(|n| n.facet("documentation"))
                .is_some()
        );
        let mut later = job_event(
            "group-x",
            json!({"documentation": {"_producer": "p", "_schemaURL": "s", "_deleted": true}}),
            json!([]),
            json!([]),
        );
        if let Event::Job(j) = &mut later {
            j.header.event_time += chrono::Duration::seconds(1);
        }
        g.fold(&later, &observed(&c));
        assert!(
            g.node(&job)
                .and_then(|n| n.facet("documentation"))
                .is_none()
        );
    }

    #[test]
    fn marked_names_stay_in_the_graph() {
        let c = clusters();
        let mut g = Graph::new();
        let e = job_event(
            "spark",
            json!({}),
            json!([{"namespace": "kafka://null:-1", "name": "1x:y"}]),
            json!([{"namespace": "jdbc ns?x", "name": "t"}]),
        );
        g.fold(&e, &observed(&c));
        let Some(Detail::Dataset(d)) = g
            .node(&NodeKey::dataset("kafka://null:-1", "1x:y"))
            .map(|n| &n.detail)
        else {
            panic!("kept")
        };
        assert_eq!(d.issues.len(), 2, "{:?}", d.issues);
        let Some(Detail::Dataset(d)) = g
            .node(&NodeKey::dataset("jdbc ns?x", "t"))
            .map(|n| &n.detail)
        else {
            panic!("kept")
        };
        assert_eq!(d.issues, vec![NameIssue::NamespaceCharacter { found: ' ' }]);
    }
}
