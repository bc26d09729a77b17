//! Field-level questions (issue 43, item 2): the part of the column
//! graph within a question's limits read from the store a level at a
//! time (one statement per column hop, each over the whole frontier, so
//! depth 6 is seven reads whatever the fan-out), walked by
//! [`streamkeeper::lineage::column_walk`], with each node's owner.

use super::{LineageService, store};
use crate::accounts::require;
use crate::platform::errors::Db;
use std::collections::HashSet;
use streamkeeper::accounts::account::Principal;
use streamkeeper::accounts::role::Action;
use streamkeeper::lineage::column_marquez::{self, ColumnLineageAnswer, FieldId};
use streamkeeper::lineage::column_walk::{ColumnGraph, FieldImpact, walk};
use streamkeeper::lineage::columns::FieldRef;
use streamkeeper::lineage::dataset_columns;
use streamkeeper::lineage::graph::{DatasetKey, NodeKey};
use streamkeeper::lineage::impact::{Direction, Limits};
use streamkeeper::lineage::marquez::{DEFAULT_DEPTH, NodeId};
use streamkeeper_app::error::AppError;
use streamkeeper_app::lineage::model::{DatasetColumnsView, NodeAsk};

impl LineageService {
    /// `GET /lineage/impact?…&field=`: what the field of the dataset the
    /// question names reaches, downstream (or upstream), with owners.
    pub async fn field_impact(
        &self,
        who: &Principal,
        ask: &NodeAsk,
        field: &str,
    ) -> Result<FieldImpact, AppError> {
        require(who, Action::Read, "read lineage")?;
        if field.is_empty() {
            return Err(AppError::Invalid("field: give the name of a field".into()));
        }
        self.fold.catch_up().await?;
        let (key, direction, limits) = self.question(ask, Limits::default()).await?;
        let (limits, clamped) = limits.clamped();
        let dataset = self.dataset_of(&key).await?;
        let start = FieldRef {
            dataset,
            field: field.to_string(),
        };
        let mut g = ColumnGraph::new();
        let truncated = load(&self.pool, &mut g, &start, direction, limits).await?;
        let mut answer = walk(&g, &start, direction, limits);
        answer.cut.clamped = clamped;
        answer.cut.budget |= truncated;
        answer.partial |= clamped || truncated;
        self.field_named(&answer).await?;
        let ids = store::node_ids(&self.pool, &answer.nodes()).await?;
        let id_list: Vec<i64> = ids.values().copied().collect();
        let ruled = crate::platform::ownership::lineage_nodes(&self.pool, &id_list).await?;
        answer.attach_owners(|k| {
            let id = ids.get(k)?;
            ruled.get(id).map(|o| o.team.name.clone())
        });
        Ok(answer)
    }

    /// 404 when neither a column edge nor a `schema` facet names the
    /// start or a field it reaches (a connector's by-name copy reaches a
    /// named column from a topic with no schema): an empty answer for a
    /// misspelled field would read as "safe to remove".
    async fn field_named(&self, answer: &FieldImpact) -> Result<(), AppError> {
        let mut fields = vec![answer.start.clone()];
        fields.extend(answer.fields.iter().map(|f| f.field.clone()));
        if store::any_field_named(&self.pool, &fields).await? {
            return Ok(());
        }
        let s = &answer.start;
        Err(AppError::NotFound(format!(
            "Field `{}` of {} (no column lineage or schema names it)",
            s.field,
            NodeId(NodeKey::Dataset(s.dataset.clone()))
        )))
    }

    /// A dataset's columns and where each comes from (its schema facet's
    /// fields, the column edges into it, its fields read downstream).
    pub async fn columns_of(
        &self,
        who: &Principal,
        ask: &NodeAsk,
    ) -> Result<DatasetColumnsView, AppError> {
        require(who, Action::Read, "read lineage")?;
        self.fold.catch_up().await?;
        let (key, _, _) = self.question(ask, Limits::default()).await?;
        let dataset = self.dataset_of(&key).await?;
        let (schema, into, read) = store::dataset_columns(&self.pool, &dataset).await?;
        let node = NodeId(NodeKey::Dataset(dataset)).to_string();
        Ok(DatasetColumnsView::of(
            node,
            &dataset_columns::columns(&schema, &into, &read),
        ))
    }

    /// Marquez's `GET /api/v1/column-lineage`: the field's upstream (and
    /// downstream with `with_downstream`) in Marquez's shape.
    pub async fn column_lineage(
        &self,
        who: &Principal,
        node_id: &str,
        depth: Option<u32>,
        with_downstream: bool,
    ) -> Result<ColumnLineageAnswer, AppError> {
        require(who, Action::Read, "read lineage")?;
        self.fold.catch_up().await?;
        let id = FieldId::parse(node_id).map_err(|e| AppError::Request(e.to_string()))?;
        let dataset = self.dataset_of(&NodeKey::Dataset(id.0.dataset)).await?;
        let start = FieldRef {
            dataset,
            field: id.0.field,
        };
        let (limits, clamped) = Limits {
            depth: depth.unwrap_or(DEFAULT_DEPTH),
            ..Limits::default()
        }
        .clamped();
        let mut directions = vec![Direction::Upstream];
        if with_downstream {
            directions.push(Direction::Downstream);
        }
        let mut g = ColumnGraph::new();
        let mut walks = Vec::new();
        let mut truncated = false;
        for d in directions {
            truncated |= load(&self.pool, &mut g, &start, d, limits).await?;
            walks.push(walk(&g, &start, d, limits));
        }
        let mut answer = column_marquez::answer(&g, &walks);
        answer.partial |= clamped || truncated;
        Ok(answer)
    }

    /// The stored dataset a key names (its raw namespace or an alias
    /// resolved), 404 when none, 400 for a job.
    async fn dataset_of(&self, key: &NodeKey) -> Result<DatasetKey, AppError> {
        if let NodeKey::Job(_) = key {
            return Err(AppError::Request(
                "a field belongs to a dataset or topic, not a job".into(),
            ));
        }
        let id = self.resolve(key).await?;
        let rows = store::nodes(&self.pool, &[id]).await?;
        match rows.first().map(store::NodeRow::key) {
            Some(NodeKey::Dataset(d)) => Ok(d),
            _ => Err(AppError::NotFound(format!(
                "The lineage dataset {}",
                NodeId(key.clone())
            ))),
        }
    }
}

/// Reads into `g` the column edges within `limits` of `start` in
/// `direction`, level by level, and for each dataset reached whether the
/// graph has it and which jobs read it (for cold trails). Each level
/// reads the edges of the fields at that depth, so the last read tells
/// the walk whether anything lies beyond the cap. A level reads at most
/// the budget + 1 edges (more cannot be walked, and a dataset-wide
/// INDIRECT fan-out must not load unbounded rows); true when a level was
/// cut so, as the edges kept may then name fewer fields than the walk
/// would have reached.
pub async fn load(
    pool: &sqlx::PgPool,
    g: &mut ColumnGraph,
    start: &FieldRef,
    direction: Direction,
    limits: Limits,
) -> Result<bool, Db> {
    let cap = limits.budget.saturating_add(1);
    let row_limit = i64::try_from(cap).unwrap_or(i64::MAX);
    let mut truncated = false;
    let mut seen: HashSet<FieldRef> = HashSet::from([start.clone()]);
    let mut datasets: HashSet<DatasetKey> = HashSet::new();
    let mut frontier = vec![start.clone()];
    for _ in 0..=limits.depth {
        if frontier.is_empty() || seen.len() > limits.budget.saturating_add(1) {
            break;
        }
        let fresh: Vec<DatasetKey> = frontier
            .iter()
            .map(|f| f.dataset.clone())
            .filter(|d| datasets.insert(d.clone()))
            .collect();
        let copied_into: &[DatasetKey] = match direction {
            Direction::Upstream => &fresh,
            Direction::Downstream => &[],
        };
        let (edges, (known, readers), copiers) = tokio::try_join!(
            store::column_edges(pool, &frontier, direction, row_limit),
            store::readers(pool, &fresh),
            store::copiers_into(pool, copied_into),
        )?;
        truncated |= edges.len() >= cap;
        known.into_iter().for_each(|d| g.know(d));
        let readers = readers.into_iter().chain(copiers);
        readers.for_each(|(d, r)| g.add_reader(d, r));
        edges.iter().for_each(|(dst, e)| g.add_edge(dst, e));
        // The walk's own hops (column edges and connectors' by-name
        // copies) make the next level.
        frontier = frontier
            .iter()
            .flat_map(|f| g.hops(f, direction))
            .map(|h| h.field)
            .filter(|f| seen.insert(f.clone()))
            .collect();
    }
    Ok(truncated)
}
