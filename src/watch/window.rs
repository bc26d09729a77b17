//! A group's window: the samples of its recent passes, per partition, that
//! its lag status is judged over.

use super::lag::status::Sample;
use std::collections::BTreeMap;

/// Passes a group's status is judged over.
pub const WINDOW_PASSES: i64 = 10;

/// One stored sample of a group's partition, as the window needs it. The
/// store's row implements this, so the rules never name its type.
pub trait WindowSample {
    fn group(&self) -> &str;
    fn topic(&self) -> &str;
    fn partition(&self) -> i32;
    fn at_ms(&self) -> i64;
    /// `None`: the group has no committed offset here.
    fn committed(&self) -> Option<i64>;
    /// `None` when the pass could not read the partition's offsets.
    fn log_start(&self) -> Option<i64>;
    fn log_end(&self) -> Option<i64>;
}

/// A group's samples per (topic, partition) over its window of passes.
pub type Windows<S> = BTreeMap<(String, i32), Vec<S>>;

/// Samples (ordered by group, topic, partition, time) split into each
/// group's windows.
pub fn by_group<S: WindowSample>(rows: Vec<S>) -> BTreeMap<String, Windows<S>> {
    let mut groups: BTreeMap<String, Windows<S>> = BTreeMap::new();
    for r in rows {
        let (group, series) = (r.group().to_owned(), (r.topic().to_owned(), r.partition()));
        groups
            .entry(group)
            .or_default()
            .entry(series)
            .or_default()
            .push(r);
    }
    groups
}

/// Samples that can be judged: those with log offsets (the others are gaps).
pub fn judgeable<S: WindowSample>(samples: &[S]) -> Vec<Sample> {
    samples
        .iter()
        .filter_map(|s| {
            Some(Sample {
                at_ms: s.at_ms(),
                committed: s.committed(),
                log_start: s.log_start()?,
                log_end: s.log_end()?,
            })
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A sample as a test writes it: (group, topic, partition, at_ms,
    /// committed, log offsets).
    #[derive(Clone, Debug, PartialEq)]
    pub(crate) struct Row {
        pub group: &'static str,
        pub topic: &'static str,
        pub partition: i32,
        pub at_ms: i64,
        pub committed: Option<i64>,
        pub log: Option<(i64, i64)>,
    }

    impl WindowSample for Row {
        fn group(&self) -> &str {
            self.group
        }
        fn topic(&self) -> &str {
            self.topic
        }
        fn partition(&self) -> i32 {
            self.partition
        }
        fn at_ms(&self) -> i64 {
            self.at_ms
        }
        fn committed(&self) -> Option<i64> {
            self.committed
        }
        fn log_start(&self) -> Option<i64> {
            self.log.map(|l| l.0)
        }
        fn log_end(&self) -> Option<i64> {
            self.log.map(|l| l.1)
        }
    }

    pub(crate) fn row(
        group: &'static str,
        topic: &'static str,
        partition: i32,
        at_ms: i64,
        committed: Option<i64>,
        log: Option<(i64, i64)>,
    ) -> Row {
        Row {
            group,
            topic,
            partition,
            at_ms,
            committed,
            log,
        }
    }

    #[test]
    fn rows_split_into_each_groups_partitions_in_order() {
        let rows = vec![
            row("billing", "orders", 0, 1_000, Some(1), Some((0, 5))),
            row("billing", "orders", 0, 2_000, Some(2), Some((0, 6))),
            row("billing", "orders", 1, 1_000, Some(3), Some((0, 7))),
            row("ledger", "orders", 0, 1_000, None, Some((0, 5))),
        ];
        let groups = by_group(rows.clone());
        assert_eq!(groups.len(), 2);
        let billing = &groups["billing"];
        assert_eq!(billing.len(), 2);
        assert_eq!(billing[&("orders".into(), 0)], rows[0..2].to_vec());
        assert_eq!(billing[&("orders".into(), 1)], vec![rows[2].clone()]);
        assert_eq!(
            groups["ledger"][&("orders".into(), 0)],
            vec![rows[3].clone()]
        );
        assert!(by_group(Vec::<Row>::new()).is_empty());
    }

    #[test]
    fn samples_without_log_offsets_are_gaps_not_judged() {
        let window = [
            row("g", "t", 0, 1_000, Some(1), Some((0, 5))),
            row("g", "t", 0, 2_000, Some(2), None),
            row("g", "t", 0, 3_000, None, Some((1, 9))),
        ];
        assert_eq!(
            judgeable(&window),
            vec![
                Sample {
                    at_ms: 1_000,
                    committed: Some(1),
                    log_start: 0,
                    log_end: 5,
                },
                Sample {
                    at_ms: 3_000,
                    committed: None,
                    log_start: 1,
                    log_end: 9,
                },
            ]
        );
    }
}
