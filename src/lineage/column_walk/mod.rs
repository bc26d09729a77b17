//! Field-level impact (issue 43, item 2): from one field of a dataset,
//! along column edges, every field it reaches with the path, whether the
//! path is DIRECT all the way, and where the trail goes cold.
//!
//! A trail goes cold at a job that reads a reached dataset while an
//! output of it carries no column lineage (a consumer group, a job whose
//! producer sends no `columnLineage`, one output of several that lacks
//! it): the field may flow on into that output, but which fields is
//! unknown, so the answer names the job and those outputs instead of
//! guessing. An output that does carry column lineage and does not name
//! the field does not use it, and is not reached.
//!
//! The walk is breadth first: each field once (a cycle of column edges is
//! walked once), with the shortest path to it, a DIRECT one when one of
//! that length is; `depth` counts column hops, the budget counts reached
//! fields. The server loads the part of
//! the column graph within the limits ([`ColumnGraph`]) and walks here.

use super::columns::{ColumnEdge, FieldRef, Transform};
use super::graph::{DatasetKey, JobKey, NodeKey};
use super::impact::{Cut, Direction, Limits};
use serde::Serialize;
use std::collections::{HashMap, HashSet, VecDeque};

/// One column hop from a field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hop {
    pub field: FieldRef,
    pub kind: Transform,
    pub subtypes: Vec<String>,
}

/// A job that reads a dataset, with its outputs and whether each carries
/// column lineage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reader {
    pub job: JobKey,
    pub outputs: Vec<(DatasetKey, bool)>,
    /// A Kafka Connect connector: it copies each field of what it reads
    /// to the field (column) of the same name in what it writes.
    pub by_name: bool,
}

impl Reader {
    /// A reader of `dataset`: a connector (by its job namespace, as
    /// [`super::derived::connector`] names them) copies by name.
    pub fn new(job: JobKey, outputs: Vec<(DatasetKey, bool)>) -> Self {
        let by_name = job.namespace.starts_with("kafka-connect://");
        Reader {
            job,
            outputs,
            by_name,
        }
    }

    /// The outputs that say not which fields they take (a connector's
    /// rule says: none), or `None` when every one does. A job with no
    /// output at all (a consumer group) is cold with none named.
    fn cold_outputs(&self) -> Option<Vec<DatasetKey>> {
        if self.by_name {
            return None;
        }
        let cold: Vec<DatasetKey> = self
            .outputs
            .iter()
            .filter(|(_, has_columns)| !has_columns)
            .map(|(d, _)| d.clone())
            .collect();
        (self.outputs.is_empty() || !cold.is_empty()).then_some(cold)
    }
}

/// The by-name copy of a connector: the field of the same name.
fn by_name(field: &FieldRef, into: &DatasetKey) -> Hop {
    Hop {
        field: FieldRef {
            dataset: into.clone(),
            field: field.field.clone(),
        },
        kind: Transform::Direct,
        subtypes: vec!["IDENTITY".into()],
    }
}

/// The part of the column graph a question needs, as a store loaded it.
#[derive(Clone, Debug, Default)]
pub struct ColumnGraph {
    down: HashMap<FieldRef, Vec<Hop>>,
    up: HashMap<FieldRef, Vec<Hop>>,
    readers: HashMap<DatasetKey, Vec<Reader>>,
    /// Output → the datasets a connector copies into it by name.
    copied_from: HashMap<DatasetKey, Vec<DatasetKey>>,
    known: HashSet<DatasetKey>,
}

impl ColumnGraph {
    pub fn new() -> Self {
        ColumnGraph::default()
    }

    /// The edge `e` of the column lineage of `dataset`; once however
    /// often it is added.
    pub fn add_edge(&mut self, dataset: &DatasetKey, e: &ColumnEdge) {
        let to = FieldRef {
            dataset: dataset.clone(),
            field: e.to.clone(),
        };
        let down = self.down.entry(e.from.clone()).or_default();
        if down.iter().any(|h| h.field == to) {
            return;
        }
        down.push(Hop {
            field: to.clone(),
            kind: e.kind,
            subtypes: e.subtypes.clone(),
        });
        self.up.entry(to).or_default().push(Hop {
            field: e.from.clone(),
            kind: e.kind,
            subtypes: e.subtypes.clone(),
        });
    }

    /// `reader` reads `dataset` (dataset-level lineage).
    pub fn add_reader(&mut self, dataset: DatasetKey, reader: Reader) {
        if reader.by_name {
            for (out, _) in &reader.outputs {
                let from = self.copied_from.entry(out.clone()).or_default();
                if !from.contains(&dataset) {
                    from.push(dataset.clone());
                }
            }
        }
        // A job met again (an upstream walk knows one output of a
        // connector, the downstream walk all of them) gains outputs.
        let rs = self.readers.entry(dataset).or_default();
        match rs.iter_mut().find(|r| r.job == reader.job) {
            None => rs.push(reader),
            Some(r) => {
                for o in reader.outputs {
                    if !r.outputs.contains(&o) {
                        r.outputs.push(o);
                    }
                }
            }
        }
    }

    /// `dataset` is a node of the graph (column lineage may name datasets
    /// no event did: those are kept and marked `known: false`).
    pub fn know(&mut self, dataset: DatasetKey) {
        self.known.insert(dataset);
    }

    pub fn is_known(&self, dataset: &DatasetKey) -> bool {
        self.known.contains(dataset)
    }

    /// The hops out of `field` in `direction`, column edges and the
    /// by-name copies of connectors, each field once, in a stable order.
    pub fn hops(&self, field: &FieldRef, direction: Direction) -> Vec<Hop> {
        let (side, copies): (_, Vec<Hop>) = match direction {
            Direction::Downstream => (
                &self.down,
                self.readers(&field.dataset)
                    .into_iter()
                    .filter(|r| r.by_name)
                    .flat_map(|r| r.outputs.iter().map(|(o, _)| by_name(field, o)))
                    .collect(),
            ),
            Direction::Upstream => (
                &self.up,
                self.copied_from
                    .get(&field.dataset)
                    .into_iter()
                    .flatten()
                    .map(|d| by_name(field, d))
                    .collect(),
            ),
        };
        let mut hops: Vec<Hop> = side.get(field).into_iter().flatten().cloned().collect();
        for c in copies {
            if !hops.iter().any(|h| h.field == c.field) {
                hops.push(c);
            }
        }
        hops.sort_by(|a, b| a.field.cmp(&b.field));
        hops
    }

    fn readers(&self, dataset: &DatasetKey) -> Vec<&Reader> {
        let mut rs: Vec<&Reader> = self.readers.get(dataset).into_iter().flatten().collect();
        rs.sort_by(|a, b| a.job.cmp(&b.job));
        rs
    }
}

/// A field the walk reached.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ReachedField {
    pub field: FieldRef,
    /// Column hops from the start.
    pub depth: u32,
    /// DIRECT when every hop of the path is, else INDIRECT.
    pub kind: Transform,
    /// The start, each field between, and this one.
    pub path: Vec<FieldRef>,
    /// Whether the graph has the dataset as a node.
    pub known: bool,
    pub owner: Option<String>,
}

/// Where the trail goes cold: `job` reads `dataset` (reached through
/// `via`), but which fields is unknown.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ColdTrail {
    pub job: JobKey,
    pub dataset: DatasetKey,
    /// The path to the reached field of `dataset` the job reads.
    pub via: Vec<FieldRef>,
    /// The job's outputs whose fields are unknown (none for a consumer).
    pub outputs: Vec<DatasetKey>,
    pub message: String,
    pub owner: Option<String>,
}

/// The answer to "what does this field reach?".
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FieldImpact {
    pub start: FieldRef,
    pub direction: Direction,
    /// In the order reached (by depth).
    pub fields: Vec<ReachedField>,
    pub cold: Vec<ColdTrail>,
    pub partial: bool,
    pub cut: Cut,
}

impl FieldImpact {
    /// Owner teams of reached datasets and cold jobs, by node.
    pub fn attach_owners(&mut self, owner: impl Fn(&NodeKey) -> Option<String>) {
        for f in &mut self.fields {
            f.owner = owner(&NodeKey::Dataset(f.field.dataset.clone()));
        }
        for c in &mut self.cold {
            c.owner = owner(&NodeKey::Job(c.job.clone()));
        }
    }

    /// Every node the answer names (for owners).
    pub fn nodes(&self) -> Vec<NodeKey> {
        let datasets = self
            .fields
            .iter()
            .map(|f| NodeKey::Dataset(f.field.dataset.clone()));
        let jobs = self.cold.iter().map(|c| NodeKey::Job(c.job.clone()));
        let mut all: Vec<NodeKey> = datasets.chain(jobs).collect();
        all.sort();
        all.dedup();
        all
    }
}

struct Seen {
    parent: Option<FieldRef>,
    depth: u32,
    kind: Transform,
}

/// Walks from `start` within `limits` (clamped by the caller).
pub fn walk(
    g: &ColumnGraph,
    start: &FieldRef,
    direction: Direction,
    limits: Limits,
) -> FieldImpact {
    let mut seen: HashMap<FieldRef, Seen> = HashMap::new();
    seen.insert(
        start.clone(),
        Seen {
            parent: None,
            depth: 0,
            kind: Transform::Direct,
        },
    );
    let mut order = Vec::new();
    let mut queue = VecDeque::from([start.clone()]);
    let mut cut = Cut::default();
    let mut cold = Vec::new();
    let mut cold_seen: HashSet<(JobKey, DatasetKey)> = HashSet::new();
    while let Some(at) = queue.pop_front() {
        let (depth, kind) = seen
            .get(&at)
            .map_or((0, Transform::Direct), |s| (s.depth, s.kind));
        if direction == Direction::Downstream {
            for r in g.readers(&at.dataset) {
                let Some(outputs) = r.cold_outputs() else {
                    continue;
                };
                if cold_seen.insert((r.job.clone(), at.dataset.clone())) {
                    cold.push(cold_trail(r, outputs, &at, &seen));
                }
            }
        }
        for hop in g.hops(&at, direction) {
            let reach = kind.max(hop.kind);
            if let Some(s) = seen.get_mut(&hop.field) {
                // Breadth first, a field at `depth + 1` is still queued,
                // not yet walked: a more direct path of the same length
                // found now reaches all it leads to, whatever the order
                // the edges came in.
                if s.depth == depth + 1 && reach < s.kind {
                    s.kind = reach;
                    s.parent = Some(at.clone());
                }
                continue;
            }
            if depth >= limits.depth {
                cut.depth = true;
                break;
            }
            if order.len() >= limits.budget {
                cut.budget = true;
                break;
            }
            seen.insert(
                hop.field.clone(),
                Seen {
                    parent: Some(at.clone()),
                    depth: depth + 1,
                    kind: reach,
                },
            );
            order.push(hop.field.clone());
            queue.push_back(hop.field.clone());
        }
    }
    let fields = order
        .into_iter()
        .map(|f| {
            let (depth, kind) = seen
                .get(&f)
                .map_or((0, Transform::Direct), |s| (s.depth, s.kind));
            ReachedField {
                path: path_to(&f, &seen),
                known: g.is_known(&f.dataset),
                field: f,
                depth,
                kind,
                owner: None,
            }
        })
        .collect();
    FieldImpact {
        start: start.clone(),
        direction,
        fields,
        cold,
        partial: cut.any(),
        cut,
    }
}

fn cold_trail(
    r: &Reader,
    outputs: Vec<DatasetKey>,
    at: &FieldRef,
    seen: &HashMap<FieldRef, Seen>,
) -> ColdTrail {
    ColdTrail {
        job: r.job.clone(),
        dataset: at.dataset.clone(),
        via: path_to(at, seen),
        outputs,
        message: format!("reads {}; which fields is unknown", at.dataset.name),
        owner: None,
    }
}

/// The start, …, `f`, by the parents the walk kept.
fn path_to(f: &FieldRef, seen: &HashMap<FieldRef, Seen>) -> Vec<FieldRef> {
    let mut path = vec![f.clone()];
    let mut at = f;
    while let Some(p) = seen.get(at).and_then(|s| s.parent.as_ref()) {
        path.push(p.clone());
        at = p;
    }
    path.reverse();
    path
}

#[cfg(test)]
mod tests;
