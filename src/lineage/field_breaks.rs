//! A field-level impact said as a producer change's downstream breakage
//! (issue 43, item 3): the columns and dashboards a touched field of a
//! topic reaches, in the shape the schema check keeps
//! ([`crate::schemas::downstream`]).
//!
//! A dashboard is named once however many of its fields are reached (its
//! owner reads "the dashboard `Finance daily`", not each chart). A
//! consumer group reading the topic itself is a cold trail of the walk,
//! but the check already judges it with its reader schema: only cold
//! trails further down are kept.

use super::column_walk::FieldImpact;
use super::columns::Transform;
use super::graph::DatasetKey;
use super::kinds::NodeKind;
use super::marquez::NodeId;
use crate::schemas::downstream::{ColdReader, DownstreamColumn, FieldBreakage};
use crate::schemas::fields::TouchedField;

/// `impact` (downstream of the touched field) as the check keeps it;
/// `kind` says what each reached dataset is.
pub fn breakage(
    touched: &TouchedField,
    impact: &FieldImpact,
    kind: impl Fn(&DatasetKey) -> NodeKind,
) -> FieldBreakage {
    let mut columns: Vec<DownstreamColumn> = Vec::new();
    for f in &impact.fields {
        let k = kind(&f.field.dataset);
        let node = NodeId(super::graph::NodeKey::Dataset(f.field.dataset.clone())).to_string();
        if k == NodeKind::Dashboard && columns.iter().any(|c| c.node == node) {
            continue;
        }
        columns.push(DownstreamColumn {
            node,
            dataset: f.field.dataset.name.clone(),
            field: f.field.field.clone(),
            kind: k.as_str().to_owned(),
            owner: f.owner.clone(),
            direct: f.kind == Transform::Direct,
        });
    }
    let cold = impact
        .cold
        .iter()
        .filter(|c| c.dataset != impact.start.dataset)
        .map(|c| ColdReader {
            job: c.job.name.clone(),
            owner: c.owner.clone(),
            message: c.message.clone(),
        })
        .collect();
    FieldBreakage {
        touched: touched.clone(),
        columns,
        cold,
        partial: impact.partial,
        unknown: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lineage::column_walk::{ColdTrail, ReachedField};
    use crate::lineage::columns::FieldRef;
    use crate::lineage::graph::JobKey;
    use crate::lineage::impact::{Cut, Direction};
    use crate::schemas::fields::FieldChange;

    const PG: &str = "postgres://db:5432";

    fn reached(ns: &str, name: &str, field: &str, owner: &str, kind: Transform) -> ReachedField {
        let f = FieldRef::new(ns, name, field);
        ReachedField {
            path: vec![f.clone()],
            field: f,
            depth: 1,
            kind,
            known: true,
            owner: Some(owner.into()),
        }
    }

    fn cold(on: &FieldRef, job: &str) -> ColdTrail {
        ColdTrail {
            job: JobKey {
                namespace: "kafka://b:9092".into(),
                name: job.into(),
            },
            dataset: on.dataset.clone(),
            via: vec![on.clone()],
            outputs: Vec::new(),
            message: format!("reads {}; which fields is unknown", on.dataset.name),
            owner: None,
        }
    }

    #[test]
    fn columns_with_kinds_and_owners_dashboards_once_and_downstream_cold_trails() {
        let start = FieldRef::new("kafka://b:9092", "orders", "amount");
        let model = FieldRef::new(PG, "analytics.orders_daily", "revenue");
        let impact = FieldImpact {
            start: start.clone(),
            direction: Direction::Downstream,
            fields: vec![
                reached(
                    PG,
                    "analytics.orders_daily",
                    "revenue",
                    "analytics",
                    Transform::Direct,
                ),
                reached(
                    "superset://bi",
                    "Finance daily",
                    "revenue",
                    "finance",
                    Transform::Direct,
                ),
                reached(
                    "superset://bi",
                    "Finance daily",
                    "total",
                    "finance",
                    Transform::Indirect,
                ),
            ],
            cold: vec![cold(&start, "billing"), cold(&model, "exporter")],
            partial: false,
            cut: Cut::default(),
        };
        let touched = TouchedField {
            field: "amount".into(),
            change: FieldChange::Removed,
        };
        let b = breakage(&touched, &impact, |d| {
            if d.namespace.starts_with("superset") {
                NodeKind::Dashboard
            } else {
                NodeKind::Table
            }
        });
        assert_eq!(b.columns.len(), 2, "the dashboard once");
        assert_eq!(
            b.columns[0].node,
            format!("dataset:{PG}:analytics.orders_daily")
        );
        assert_eq!(
            b.sentence(),
            "removing `amount` breaks `analytics.orders_daily.revenue` (table, team analytics) and the dashboard `Finance daily` (team finance); the trail goes cold at `exporter` reads analytics.orders_daily; which fields is unknown"
        );
    }
}
