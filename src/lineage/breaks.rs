//! Which reached consumers a pending producer change breaks (issue 14,
//! item 4): "what breaks if this topic changes?" answers with the change
//! already proposed, not only with who reads the topic.
//!
//! A pending change is a review item on a topic that is not applied,
//! rejected or withdrawn; its compatibility check names each consumer
//! group that cannot read what the new schema would write. A consumer
//! group is the streaming job `<group>` in its cluster's Kafka namespace
//! (the name [`super::derived::group`] gives it), so the rule is a join by
//! key: a group the impact reaches is marked when a pending change on a
//! topic the answer holds (its start or a reached node) breaks it. The
//! server reads the changes, deciding what the asker may see of each.

use super::graph::NodeKey;
use super::impact::Impact;
use serde::Serialize;

/// A review item, as the asker may know it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ItemRef {
    pub id: i64,
    pub title: String,
}

/// One consumer group a pending change's check found cannot read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrokenReader {
    pub group: String,
    /// Why, in sentences (empty when the asker may not read the check).
    pub reasons: Vec<String>,
}

/// A pending producer change on a topic, as the server read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingChange {
    /// The topic's dataset.
    pub topic: NodeKey,
    /// `None` when the asker may not read the item: the break is still
    /// shown (its owners must know), without what only its readers see.
    pub item: Option<ItemRef>,
    pub broken: Vec<BrokenReader>,
}

/// A reached consumer group that a pending change breaks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Break {
    /// The topic the change is for.
    pub topic: NodeKey,
    pub item: Option<ItemRef>,
    pub reasons: Vec<String>,
}

impl Impact {
    /// Marks each reached consumer group that one of `pending` breaks,
    /// when the change's topic is in this answer (its start or a reached
    /// node): a change on a topic the question never reached is another
    /// question's answer.
    pub fn attach_breaks(&mut self, pending: &[PendingChange]) {
        for change in pending {
            let in_answer =
                change.topic == self.start || self.nodes.iter().any(|r| r.key == change.topic);
            if !in_answer {
                continue;
            }
            for reader in &change.broken {
                let job = NodeKey::job(change.topic.namespace(), &reader.group);
                if let Some(r) = self.nodes.iter_mut().find(|r| r.key == job) {
                    r.breaks.push(Break {
                        topic: change.topic.clone(),
                        item: change.item.clone(),
                        reasons: reader.reasons.clone(),
                    });
                }
            }
        }
    }

    /// The dataset keys of this answer (its start and the reached ones):
    /// the topics whose pending changes the server reads.
    pub fn datasets(&self) -> impl Iterator<Item = &NodeKey> {
        std::iter::once(&self.start)
            .chain(self.keys())
            .filter(|k| matches!(k, NodeKey::Dataset(_)))
    }

    /// How many reached nodes a pending change breaks.
    pub fn broken(&self) -> usize {
        self.nodes.iter().filter(|r| !r.breaks.is_empty()).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lineage::fixtures::graph_in;
    use crate::lineage::impact::{Direction, Limits, impact};

    const NS: &str = "kafka://broker:9092";

    fn change(topic: &str, item: Option<i64>, groups: &[&str]) -> PendingChange {
        PendingChange {
            topic: NodeKey::dataset(NS, topic),
            item: item.map(|id| ItemRef {
                id,
                title: "drop amount".into(),
            }),
            broken: groups
                .iter()
                .map(|g| BrokenReader {
                    group: g.to_string(),
                    reasons: item
                        .map(|_| vec!["billing reads amount without a default".to_string()])
                        .unwrap_or_default(),
                })
                .collect(),
        }
    }

    #[test]
    fn a_pending_change_marks_the_reached_groups_it_breaks() {
        // orders is read by billing and analytics; enriched (written by the
        // enricher from orders) by audit.
        let g = graph_in(
            NS,
            &[
                ("billing", &["orders"], &[]),
                ("analytics", &["orders"], &[]),
                ("enricher", &["orders"], &["enriched"]),
                ("audit", &["enriched"], &[]),
            ],
        );
        let start = NodeKey::dataset(NS, "orders");
        let mut i = impact(&g, &start, Direction::Downstream, Limits::default()).expect("known");
        let datasets: Vec<&NodeKey> = i.datasets().collect();
        assert_eq!(
            datasets,
            vec![&start, &NodeKey::dataset(NS, "enriched")],
            "the start and the reached datasets"
        );
        i.attach_breaks(&[
            change("orders", Some(12), &["billing"]),
            // Hidden from the asker: shown, without item or reasons.
            change("enriched", None, &["audit"]),
            // A topic the answer does not hold breaks nothing here.
            change("payments", Some(13), &["analytics"]),
            // A group the check names but the answer does not reach.
            change("orders", Some(14), &["gone"]),
        ]);
        let at = |name: &str| {
            i.nodes
                .iter()
                .find(|r| r.key == NodeKey::job(NS, name))
                .expect("reached")
        };
        assert_eq!(
            at("billing").breaks,
            vec![Break {
                topic: start.clone(),
                item: Some(ItemRef {
                    id: 12,
                    title: "drop amount".into()
                }),
                reasons: vec!["billing reads amount without a default".into()],
            }]
        );
        assert_eq!(at("audit").breaks.len(), 1);
        assert_eq!(at("audit").breaks[0].item, None);
        assert!(at("audit").breaks[0].reasons.is_empty());
        assert!(at("analytics").breaks.is_empty());
        assert_eq!(i.broken(), 2);
    }

    #[test]
    fn a_group_in_another_namespace_is_another_group() {
        let g = graph_in(NS, &[("billing", &["orders"], &[])]);
        let start = NodeKey::dataset(NS, "orders");
        let mut i = impact(&g, &start, Direction::Downstream, Limits::default()).expect("known");
        i.attach_breaks(&[PendingChange {
            topic: NodeKey::dataset("kafka://other:9092", "orders"),
            item: None,
            broken: vec![BrokenReader {
                group: "billing".into(),
                reasons: vec![],
            }],
        }]);
        assert_eq!(i.broken(), 0);
    }
}
