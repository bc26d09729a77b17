//! One scrape of `/metrics`: each feature adds the gauges it knows from
//! its own store (what the console shows, read at scrape time, so the
//! numbers are the API's), and the scrape is encoded as OpenMetrics text,
//! which Prometheus reads. The encoding is `prometheus-client`'s.
//!
//! Everything is a gauge of the latest reading: the console already keeps
//! the history, and a value it does not know (a partition a pass could not
//! read, a cluster that did not answer) has no series at all, never a 0.

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use std::sync::atomic::AtomicU64;

/// A metric's labels, in the order they were given.
pub type Labels = Vec<(&'static str, String)>;
type FloatGauge = Gauge<f64, AtomicU64>;

/// `STREAMKEEPER_METRICS_MAX_SERIES`' default: per-partition series stop
/// here (kminion's `granularity: topic` advice for big clusters), so one
/// scrape of a cluster with 100,000 partitions cannot swamp Prometheus.
pub const DEFAULT_MAX_SERIES: usize = 20_000;

/// The metrics of one scrape, being filled.
pub struct Scrape {
    registry: Registry,
    /// Series left for the per-partition families.
    budget: usize,
    /// Families that were cut by the budget.
    cut: Vec<&'static str>,
}

/// One gauge family being filled.
pub struct Gauges {
    family: Family<Labels, FloatGauge>,
}

impl Gauges {
    pub fn set(&self, labels: Labels, value: f64) {
        self.family.get_or_create(&labels).set(value);
    }
}

impl Scrape {
    pub fn new(max_series: usize) -> Self {
        Scrape {
            registry: Registry::default(),
            budget: max_series,
            cut: Vec::new(),
        }
    }

    /// A gauge family, registered under `name` with its help text.
    pub fn gauges(&mut self, name: &'static str, help: &'static str) -> Gauges {
        let family = Family::<Labels, FloatGauge>::default();
        self.registry.register(name, help, family.clone());
        Gauges { family }
    }

    /// Takes `n` series of the per-partition budget for `family`; false
    /// (and the family named in `streamkeeper_metrics_cut`) when they do
    /// not fit, so a dashboard sees it was cut rather than a quiet hole.
    pub fn take(&mut self, family: &'static str, n: usize) -> bool {
        if n <= self.budget {
            self.budget -= n;
            true
        } else {
            self.cut.push(family);
            false
        }
    }

    /// The OpenMetrics text of the scrape.
    pub fn encode(mut self) -> Result<String, std::fmt::Error> {
        let cut = self.gauges(
            "streamkeeper_metrics_cut",
            "1 for each per-partition family left out of this scrape by STREAMKEEPER_METRICS_MAX_SERIES",
        );
        for family in std::mem::take(&mut self.cut) {
            cut.set(vec![("family", family.to_string())], 1.0);
        }
        let mut out = String::new();
        encode(&mut out, &self.registry)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_family_over_the_budget_is_left_out_and_named() {
        let mut s = Scrape::new(3);
        assert!(s.take("kafka_consumergroup_group_lag", 2));
        assert!(!s.take("kafka_partition_latest_offset", 2));
        assert!(s.take("kafka_partition_earliest_offset", 1));
        let text = s.encode().expect("encodes");
        assert!(
            text.contains("streamkeeper_metrics_cut{family=\"kafka_partition_latest_offset\"} 1")
        );
        assert!(!text.contains("family=\"kafka_consumergroup_group_lag\""));
        assert!(text.ends_with("# EOF\n"));
    }

    #[test]
    fn labels_are_escaped_by_the_encoder() {
        let mut s = Scrape::new(1);
        s.gauges("g", "help")
            .set(vec![("group", "a\"b\\c\nd".into())], 2.5);
        let text = s.encode().expect("encodes");
        assert!(text.contains(r#"g{group="a\"b\\c\nd"} 2.5"#), "{text}");
    }
}
