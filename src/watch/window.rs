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

/// Every group's window moved on by one pass, so a sampler that keeps the
/// windows need not split its passes into them again each time: the
/// samples `left` picks (the pass that left the window) go, with the
/// partitions and groups they leave without samples; the samples that
/// `came` are added, each after those of its series not later than it.
/// Windows so moved are those [`by_group`] splits the kept passes' rows
/// into (samples in time order, passes of the same time in the order they
/// came).
pub fn slide<S: WindowSample>(
    windows: &mut BTreeMap<String, Windows<S>>,
    left: impl Fn(&S) -> bool,
    came: impl IntoIterator<Item = S>,
) {
    // In the windows' order, so that each series and its new sample are met
    // together in one walk: at 50,000 partitions a look-up each (and a key
    // built for it) cost more than the rest of the move.
    let mut came: Vec<S> = came.into_iter().collect();
    came.sort_by(|a, b| {
        (a.group(), a.topic(), a.partition()).cmp(&(b.group(), b.topic(), b.partition()))
    });
    let mut came = came.into_iter().peekable();
    // Samples of series not in the windows yet.
    let mut new = Vec::new();
    for (group, series) in windows.iter_mut() {
        while let Some(s) = came.next_if(|s| s.group() < group.as_str()) {
            new.push(s);
        }
        for ((topic, partition), samples) in series.iter_mut() {
            samples.retain(|s| !left(s));
            let here = (group.as_str(), topic.as_str(), *partition);
            while let Some(s) = came.next_if(|s| (s.group(), s.topic(), s.partition()) < here) {
                new.push(s);
            }
            if let Some(s) = came.next_if(|s| (s.group(), s.topic(), s.partition()) == here) {
                insert_in_time(samples, s);
            }
        }
        while let Some(s) = came.next_if(|s| s.group() == group.as_str()) {
            new.push(s);
        }
    }
    new.extend(came);
    windows.retain(|_, series| {
        series.retain(|_, samples| !samples.is_empty());
        !series.is_empty()
    });
    for s in new {
        let samples = windows
            .entry(s.group().to_owned())
            .or_default()
            .entry((s.topic().to_owned(), s.partition()))
            .or_default();
        insert_in_time(samples, s);
    }
}

/// Adds `s` to a series in time order, after the samples not later than it.
fn insert_in_time<S: WindowSample>(samples: &mut Vec<S>, s: S) {
    let at = samples.partition_point(|x| x.at_ms() <= s.at_ms());
    samples.insert(at, s);
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

    /// The rows of passes (oldest first, `None` for a pass that read
    /// nothing) as a store would return them for a window of `len` passes.
    fn rows_of(passes: &[Option<Vec<Row>>], len: usize) -> Vec<Row> {
        let mut rows: Vec<Row> = passes[passes.len().saturating_sub(len)..]
            .iter()
            .flatten()
            .flatten()
            .cloned()
            .collect();
        // Stable: samples of the same time stay in the order their passes came.
        rows.sort_by(|a, b| {
            (a.group, a.topic, a.partition, a.at_ms).cmp(&(b.group, b.topic, b.partition, b.at_ms))
        });
        rows
    }

    #[test]
    fn a_window_slid_pass_by_pass_is_the_window_split_from_the_kept_passes() {
        // Pass n's samples: "steady" reads orders[0..2] every pass; "late"
        // appears at pass 3 and reads payments[0] until pass 6, then goes;
        // "moves" reads orders[0] up to pass 8, then orders[1]; from pass
        // 10 "steady" reads audit[0] too and "zeta" appears; passes 5
        // and 6 read nothing; pass 9's clock went back behind pass 8's.
        let pass = |n: i64| -> Option<Vec<Row>> {
            if n == 5 || n == 6 {
                return None;
            }
            let at = if n == 9 { 8 * 15_000 - 1 } else { n * 15_000 };
            let log = Some((0, 100 + n));
            let mut rows = vec![
                row("steady", "orders", 0, at, Some(n), log),
                row("steady", "orders", 1, at, Some(2 * n), log),
            ];
            if (3..7).contains(&n) {
                rows.push(row("late", "payments", 0, at, None, log));
            }
            rows.push(row("moves", "orders", i32::from(n > 8), at, Some(n), None));
            // A series before those it has, and a group after all others.
            if n >= 10 {
                rows.push(row("steady", "audit", 0, at, Some(n), log));
                rows.push(row("zeta", "orders", 0, at, Some(n), log));
            }
            Some(rows)
        };
        let len = 4;
        let (mut kept, mut windows): (Vec<Option<Vec<Row>>>, _) = (Vec::new(), BTreeMap::new());
        for n in 0..16 {
            let came = pass(n);
            kept.push(came.clone());
            // Which pass left: rows carry their pass's time, unique here.
            let left_at: Vec<i64> = if kept.len() > len {
                kept.remove(0)
                    .into_iter()
                    .flatten()
                    .map(|r| r.at_ms)
                    .collect()
            } else {
                Vec::new()
            };
            slide(
                &mut windows,
                |s: &Row| left_at.contains(&s.at_ms),
                came.into_iter().flatten(),
            );
            assert_eq!(windows, by_group(rows_of(&kept, len)), "after pass {n}");
            if n == 7 {
                assert!(windows.contains_key("late"), "still in the window");
            }
        }
        assert!(!windows.contains_key("late"), "gone with its last pass");
        assert!(!windows["moves"].contains_key(&("orders".into(), 0)));
        // Everything leaving and nothing coming leaves nothing.
        slide(&mut windows, |_| true, Vec::new());
        assert!(windows.is_empty());
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
