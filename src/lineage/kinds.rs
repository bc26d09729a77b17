//! What a lineage node is, for drawing it (issue 14, item 5): OpenLineage
//! knows only datasets and jobs, but a reader tells a topic from a table
//! and a consumer group from a batch job at a glance. Decided from what
//! the events said: the dataset's namespace scheme and `datasetType`
//! facet, the job's `jobType` facet (Streamkeeper's derived events say
//! `CONSUMER_GROUP` and `CONNECTOR`, see [`super::derived`]) and namespace.

use super::graph::{Node, NodeKey};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    Topic,
    ConsumerGroup,
    Connector,
    Table,
    Job,
    Dashboard,
}

impl NodeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::Topic => "topic",
            NodeKind::ConsumerGroup => "consumer_group",
            NodeKind::Connector => "connector",
            NodeKind::Table => "table",
            NodeKind::Job => "job",
            NodeKind::Dashboard => "dashboard",
        }
    }

    /// In words, for a legend or a tooltip.
    pub fn describe(self) -> &'static str {
        match self {
            NodeKind::Topic => "topic",
            NodeKind::ConsumerGroup => "consumer group",
            NodeKind::Connector => "connector",
            NodeKind::Table => "table",
            NodeKind::Job => "job",
            NodeKind::Dashboard => "dashboard",
        }
    }
}

/// BI tools whose OpenLineage namespaces name dashboards, not tables.
const DASHBOARD_SCHEMES: [&str; 7] = [
    "superset", "looker", "metabase", "tableau", "powerbi", "grafana", "mode",
];

fn scheme(namespace: &str) -> &str {
    namespace.split_once("://").map_or("", |(s, _)| s)
}

fn facet_str<'a>(node: &'a Node, facet: &str, field: &str) -> Option<&'a str> {
    node.facet(facet)?.get(field)?.as_str()
}

/// The kind of `node`.
pub fn kind_of(node: &Node) -> NodeKind {
    match &node.key {
        NodeKey::Dataset(d) => {
            let said = facet_str(node, "datasetType", "datasetType").map(str::to_ascii_uppercase);
            let scheme = scheme(&d.namespace).to_ascii_lowercase();
            if said.as_deref() == Some("DASHBOARD") || DASHBOARD_SCHEMES.contains(&scheme.as_str())
            {
                NodeKind::Dashboard
            } else if scheme == "kafka" || matches!(said.as_deref(), Some("TOPIC" | "STREAM")) {
                NodeKind::Topic
            } else {
                NodeKind::Table
            }
        }
        NodeKey::Job(j) => match facet_str(node, "jobType", "jobType") {
            Some("CONSUMER_GROUP") => NodeKind::ConsumerGroup,
            Some("CONNECTOR") => NodeKind::Connector,
            _ if scheme(&j.namespace) == "kafka-connect" => NodeKind::Connector,
            Some("DASHBOARD") => NodeKind::Dashboard,
            _ => NodeKind::Job,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lineage::event::Event;
    use crate::lineage::graph::{FoldContext, Graph, Provenance};
    use crate::lineage::naming::Clusters;
    use serde_json::json;

    fn graph(events: &[serde_json::Value]) -> Graph {
        let c = Clusters::default();
        let cx = FoldContext {
            provenance: Provenance::Observed,
            clusters: &c,
        };
        let mut g = Graph::new();
        for e in events {
            g.fold(&Event::from_value(e).expect("event"), &cx);
        }
        g
    }

    fn kind(g: &Graph, key: &NodeKey) -> NodeKind {
        kind_of(g.node(key).expect("node"))
    }

    #[test]
    fn each_kind_is_told_from_what_the_events_said() {
        let at = chrono::Utc::now();
        let group =
            super::super::derived::group("kafka://b:9092", "billing", &["orders".into()], at);
        let g = graph(&[
            group,
            json!({"eventTime": "2026-01-01T00:00:00Z", "producer": "p",
                "job": {"namespace": "kafka-connect://c", "name": "sink"},
                "inputs": [{"namespace": "kafka://b:9092", "name": "orders"}],
                "outputs": [{"namespace": "postgres://db:5432", "name": "shop.public.orders"}]}),
            json!({"eventTime": "2026-01-01T00:00:00Z", "producer": "p",
                "job": {"namespace": "dbt", "name": "orders_daily"},
                "inputs": [{"namespace": "postgres://db:5432", "name": "shop.public.orders"}],
                "outputs": [{"namespace": "superset://bi", "name": "Orders"},
                    {"namespace": "s3://lake", "name": "report",
                     "facets": {"datasetType": {"_producer": "p", "_schemaURL": "s", "datasetType": "dashboard"}}}]}),
        ]);
        assert_eq!(
            kind(&g, &NodeKey::dataset("kafka://b:9092", "orders")),
            NodeKind::Topic
        );
        assert_eq!(
            kind(&g, &NodeKey::job("kafka://b:9092", "billing")),
            NodeKind::ConsumerGroup
        );
        assert_eq!(
            kind(&g, &NodeKey::job("kafka-connect://c", "sink")),
            NodeKind::Connector
        );
        assert_eq!(
            kind(
                &g,
                &NodeKey::dataset("postgres://db:5432", "shop.public.orders")
            ),
            NodeKind::Table
        );
        assert_eq!(
            kind(&g, &NodeKey::job("dbt", "orders_daily")),
            NodeKind::Job
        );
        assert_eq!(
            kind(&g, &NodeKey::dataset("superset://bi", "Orders")),
            NodeKind::Dashboard
        );
        assert_eq!(
            kind(&g, &NodeKey::dataset("s3://lake", "report")),
            NodeKind::Dashboard
        );
        assert_eq!(NodeKind::ConsumerGroup.as_str(), "consumer_group");
    }
}
