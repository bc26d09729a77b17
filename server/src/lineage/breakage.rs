//! Lineage's side of a producer change's check (issue 43, item 3): what
//! a touched field of a topic reaches downstream, for the schemas
//! feature below, through its port ([`FieldLineage`]).

use super::{LineageService, store};
use streamkeeper::accounts::account::Principal;
use streamkeeper::lineage::field_breaks::breakage;
use streamkeeper::lineage::graph::{DatasetKey, NodeKey};
use streamkeeper::lineage::kinds::{NodeKind, kind_of};
use streamkeeper::schemas::downstream::FieldBreakage;
use streamkeeper::schemas::fields::TouchedField;
use streamkeeper_app::error::AppError;
use streamkeeper_app::lineage::model::NodeAsk;

use crate::schemas::downstream::FieldLineage;

#[async_trait::async_trait]
impl FieldLineage for LineageService {
    #[tracing::instrument(skip_all, fields(user = %who.username, cluster_id, topic))]
    async fn field_reach(
        &self,
        who: &Principal,
        cluster_id: i64,
        topic: &str,
        touched: &TouchedField,
    ) -> Result<FieldBreakage, AppError> {
        let ask = NodeAsk {
            topic: Some(topic.to_owned()),
            cluster_id: Some(cluster_id),
            ..NodeAsk::default()
        };
        let impact = self.field_impact(who, &ask, &touched.field).await?;
        // What each reached dataset is (a dashboard, a table, a topic)
        // needs its `datasetType` facet, read for these nodes alone.
        let keys: Vec<NodeKey> = impact
            .fields
            .iter()
            .map(|f| NodeKey::Dataset(f.field.dataset.clone()))
            .collect();
        let ids = store::node_ids(&self.pool, &keys).await?;
        let id_list: Vec<i64> = ids.values().copied().collect();
        let (rows, facets) = tokio::try_join!(
            store::nodes(&self.pool, &id_list),
            store::facets(&self.pool, &id_list, Some(&["datasetType"])),
        )?;
        let graph = store::graph_of(&rows, facets, &[]);
        let kind = |d: &DatasetKey| {
            graph
                .node(&NodeKey::Dataset(d.clone()))
                .map_or(NodeKind::Table, kind_of)
        };
        Ok(breakage(touched, &impact, kind))
    }
}
