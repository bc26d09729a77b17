//! What the lineage screens and the REST API show: the impact answer
//! (what breaks if this changes), an impact sent to its owners, the graph
//! around a node as laid out for drawing, and search hits.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use streamkeeper::lineage::graph::{Known, NodeKey};
use streamkeeper::lineage::impact::{Direction, Impact};
use streamkeeper::lineage::marquez::NodeId;

/// A question about one node: named by its nodeId, or as a topic (with
/// the cluster by name or id when the topic is on several), and how far
/// to look. What the impact page, the graph page and the REST API ask.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeAsk {
    pub node: Option<String>,
    pub topic: Option<String>,
    /// The cluster's name in the console.
    pub cluster: Option<String>,
    /// The cluster's id (what the stream pages know).
    pub cluster_id: Option<i64>,
    /// `downstream` (the default) or `upstream`; the graph shows both.
    pub direction: Option<String>,
    pub depth: Option<u32>,
    pub budget: Option<usize>,
}

/// How something is known, in words: `observed`, `derived` or both.
pub fn known_as(k: &Known) -> &'static str {
    match (k.observed.is_some(), k.derived.is_some()) {
        (true, true) => "observed+derived",
        (false, true) => "derived",
        _ => "observed",
    }
}

/// First and last report of one kind.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct SeenView {
    pub first: DateTime<Utc>,
    pub last: DateTime<Utc>,
}

/// How something is known, per provenance.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct KnownView {
    /// From events producers sent.
    pub observed: Option<SeenView>,
    /// From events Streamkeeper emitted itself.
    pub derived: Option<SeenView>,
}

impl KnownView {
    pub fn of(k: &Known) -> Self {
        let v = |s: Option<streamkeeper::lineage::graph::Seen>| {
            s.map(|s| SeenView {
                first: s.first,
                last: s.last,
            })
        };
        KnownView {
            observed: v(k.observed),
            derived: v(k.derived),
        }
    }
}

/// One node an impact reaches.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ImpactNode {
    /// Its nodeId (`dataset:<ns>:<name>`, `job:<ns>:<name>`).
    pub id: String,
    /// `dataset` or `job`.
    pub kind: String,
    pub namespace: String,
    pub name: String,
    /// Hops from the start.
    pub depth: u32,
    /// One shortest path from the start to here, as nodeIds, both ends included.
    pub path: Vec<String>,
    /// The owner team, by the ownership rule: a topic's stream's, a
    /// derived job's group's or connector's, else the team set on it or
    /// named by an `ownership` facet from someone who speaks for it.
    pub owner: Option<String>,
    /// How the edge that reaches it is known: observed, derived or observed+derived.
    pub known_as: String,
    /// When it was last reported, either way.
    pub last_seen: Option<DateTime<Utc>>,
    /// How the edge that reaches it is known, with times.
    pub via: KnownView,
    /// Pending producer changes that break it: a consumer group whose
    /// reader schema cannot read what a change in review would write.
    pub breaks: Vec<BreakView>,
}

/// A pending producer change that breaks a reached consumer group.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct BreakView {
    /// The topic the change is for, as a nodeId.
    pub topic: String,
    /// The review item, and its title: absent when the asker may not read
    /// it (the break is still said, for its owners to know).
    pub item: Option<i64>,
    pub title: Option<String>,
    /// Why the group cannot read it (absent with the item).
    pub reasons: Vec<String>,
}

/// One owner team an impact was sent to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct TeamNoticeView {
    pub team: String,
    /// Its nodes in the answer.
    pub nodes: usize,
    /// Members who got an inbox line.
    pub members: usize,
    /// Whether its webhook was queued (it has one).
    pub webhook: bool,
}

/// An impact sent to its owners, as recorded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct NoticeView {
    /// The recorded question's id.
    pub question: i64,
    pub asked_at: DateTime<Utc>,
    pub answered_at: DateTime<Utc>,
    /// When the last owner team had it: at once by inbox alone; `None`
    /// until the last webhook's 2xx.
    pub notified_at: Option<DateTime<Utc>>,
    /// The owner teams told, by name.
    pub teams: Vec<TeamNoticeView>,
    pub impact: ImpactView,
}

/// What the answer is missing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct CutView {
    /// Nodes lie beyond the depth cap.
    pub depth: bool,
    /// The node budget ran out.
    pub budget: bool,
    /// The depth or budget asked for was over the maximum and lowered.
    pub clamped: bool,
}

impl CutView {
    /// What was cut, in words ("" when nothing).
    pub fn describe(&self) -> String {
        let mut why = Vec::new();
        if self.depth {
            why.push("nodes lie beyond the depth asked for");
        }
        if self.budget {
            why.push("the node budget ran out");
        }
        if self.clamped {
            why.push("the depth or budget asked for was over the maximum and lowered");
        }
        why.join("; ")
    }
}

/// The impact answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ImpactView {
    /// The node asked about, as a nodeId.
    pub start: String,
    /// `downstream` or `upstream`.
    pub direction: String,
    /// Nearer first.
    pub nodes: Vec<ImpactNode>,
    /// True when `cut` says something was left out.
    pub partial: bool,
    pub cut: CutView,
}

fn node_id(k: &NodeKey) -> String {
    NodeId(k.clone()).to_string()
}

impl ImpactView {
    pub fn of(i: &Impact) -> Self {
        ImpactView {
            start: node_id(&i.start),
            direction: match i.direction {
                Direction::Downstream => "downstream",
                Direction::Upstream => "upstream",
            }
            .to_string(),
            nodes: i
                .nodes
                .iter()
                .enumerate()
                .map(|(n, r)| ImpactNode {
                    id: node_id(&r.key),
                    kind: match r.key {
                        NodeKey::Dataset(_) => "dataset",
                        NodeKey::Job(_) => "job",
                    }
                    .to_string(),
                    namespace: r.key.namespace().to_string(),
                    name: r.key.name().to_string(),
                    depth: r.depth,
                    path: i.path(n).into_iter().map(node_id).collect(),
                    owner: r.owner.clone(),
                    known_as: known_as(&r.via).to_string(),
                    last_seen: r.known.last_seen(),
                    via: KnownView::of(&r.via),
                    breaks: r
                        .breaks
                        .iter()
                        .map(|b| BreakView {
                            topic: node_id(&b.topic),
                            item: b.item.as_ref().map(|i| i.id),
                            title: b.item.as_ref().map(|i| i.title.clone()),
                            reasons: b.reasons.clone(),
                        })
                        .collect(),
                })
                .collect(),
            partial: i.partial,
            cut: CutView {
                depth: i.cut.depth,
                budget: i.cut.budget,
                clamped: i.cut.clamped,
            },
        }
    }
}

/// One node of the graph view, placed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct GraphNode {
    /// Its nodeId.
    pub id: String,
    /// `topic`, `consumer_group`, `connector`, `table`, `job` or `dashboard`.
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub owner: Option<String>,
    /// Open or acknowledged flags on it (a topic's or a consumer group's).
    pub flags: i64,
    /// observed, derived or observed+derived.
    pub known_as: String,
    pub last_seen: Option<DateTime<Utc>>,
    /// A topic whose watched cluster's last full pass did not list it: a
    /// connector or an event names it, but it does not exist there.
    #[serde(default)]
    pub not_in_cluster: bool,
    /// The centre of its box.
    pub x: f64,
    pub y: f64,
}

/// One edge, as a polyline through its bends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct GraphEdge {
    /// Indexes into the view's nodes.
    pub from: usize,
    pub to: usize,
    pub points: Vec<(f64, f64)>,
    /// Closes a cycle: drawn right to left.
    pub reversed: bool,
    pub known_as: String,
}

/// The owner of the node a graph is centred on, and what the asker may
/// do about it: the graph page's owner form.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct NodeOwnerView {
    /// Its owner and why, by the ownership rule ("payments (by stream
    /// orders)", "payments (set by pat on 2026-12-07)"); `None` when
    /// unowned.
    pub owner: Option<String>,
    /// Its owner team's name alone.
    pub team: Option<String>,
    /// Where its owner comes from when it is not set on the node (a
    /// topic's stream, a derived job's consumer group or connector): what
    /// setting it would be refused with (422).
    pub inherited: Option<String>,
    /// The teams the asker may give it to, by name (none when the
    /// owner is inherited, or another team's and the asker no admin).
    pub teams: Vec<String>,
    /// Whether the asker may clear the owner set on it.
    pub clearable: bool,
}

/// The graph around one node, laid out in layers (flows left to right).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct GraphView {
    /// The centre's nodeId; `nodes[0]` is the centre.
    pub center: String,
    /// The centre's owner, and whether the asker may set it.
    #[serde(default)]
    pub owner: NodeOwnerView,
    pub depth: u32,
    pub budget: usize,
    pub nodes: Vec<GraphNode>,
    pub edges: Vec<GraphEdge>,
    pub width: f64,
    pub height: f64,
    pub node_width: f64,
    pub node_height: f64,
    pub partial: bool,
    pub cut: CutView,
}

/// A dataset or job found by name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct NodeHit {
    pub id: String,
    /// `dataset` or `job`.
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub last_seen: Option<DateTime<Utc>>,
}

/// An impact sent to its owners, as the impact page lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct SentView {
    pub question: i64,
    pub asked_by: String,
    pub notified_at: Option<DateTime<Utc>>,
    pub teams: Vec<String>,
    pub reached: i32,
    pub partial: bool,
}

/// A field the field-level impact reaches, as the impact page draws it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FieldPathView {
    /// The reached dataset's nodeId.
    pub node: String,
    pub dataset: String,
    pub field: String,
    pub depth: u32,
    /// DIRECT all the way, else INDIRECT.
    pub kind: String,
    /// `dataset.field` from the start to it.
    pub path: Vec<String>,
    pub owner: Option<String>,
    /// The graph has the dataset as a node.
    pub known: bool,
}

/// Where the trail goes cold, as the impact page says it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ColdView {
    pub job: String,
    pub message: String,
    pub owner: Option<String>,
}

/// The field-level impact, for the impact page's column paths.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FieldImpactView {
    /// `dataset.field` asked about.
    pub start: String,
    pub fields: Vec<FieldPathView>,
    pub cold: Vec<ColdView>,
    pub partial: bool,
}

fn dotted(f: &streamkeeper::lineage::columns::FieldRef) -> String {
    format!("{}.{}", f.dataset.name, f.field)
}

impl FieldImpactView {
    pub fn of(i: &streamkeeper::lineage::column_walk::FieldImpact) -> Self {
        FieldImpactView {
            start: dotted(&i.start),
            fields: i
                .fields
                .iter()
                .map(|f| FieldPathView {
                    node: NodeId(NodeKey::Dataset(f.field.dataset.clone())).to_string(),
                    dataset: f.field.dataset.name.clone(),
                    field: f.field.field.clone(),
                    depth: f.depth,
                    kind: f.kind.as_str().to_owned(),
                    path: f.path.iter().map(dotted).collect(),
                    owner: f.owner.clone(),
                    known: f.known,
                })
                .collect(),
            cold: i
                .cold
                .iter()
                .map(|c| ColdView {
                    job: c.job.name.clone(),
                    message: c.message.clone(),
                    owner: c.owner.clone(),
                })
                .collect(),
            partial: i.partial,
        }
    }
}

/// One input of a column, as the dataset page lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SourceView {
    /// The input dataset's nodeId.
    pub node: String,
    /// `dataset.field`.
    pub from: String,
    pub kind: String,
    pub subtypes: Vec<String>,
}

/// A dataset's column and where it comes from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ColumnView {
    pub field: String,
    pub sources: Vec<SourceView>,
    pub read_downstream: bool,
}

/// A dataset's columns (the impact page picks a field among them).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DatasetColumnsView {
    /// The dataset's nodeId.
    pub node: String,
    pub columns: Vec<ColumnView>,
}

impl DatasetColumnsView {
    pub fn of(
        node: String,
        columns: &[streamkeeper::lineage::dataset_columns::DatasetColumn],
    ) -> Self {
        DatasetColumnsView {
            node,
            columns: columns
                .iter()
                .map(|c| ColumnView {
                    field: c.field.clone(),
                    sources: c
                        .sources
                        .iter()
                        .map(|s| SourceView {
                            node: NodeId(NodeKey::Dataset(s.from.dataset.clone())).to_string(),
                            from: dotted(&s.from),
                            kind: s.kind.as_str().to_owned(),
                            subtypes: s.subtypes.clone(),
                        })
                        .collect(),
                    read_downstream: c.read_downstream,
                })
                .collect(),
        }
    }
}
