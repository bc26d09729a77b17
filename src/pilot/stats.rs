//! The pilot's figures: p50 and p90 of each metric per pilot week and over
//! the whole pilot, each against its baseline as a ratio (now ÷ before, so
//! 0.08 reads "8 % of the time it took"), with the number of events it
//! rests on, and the counts behind them. Percentiles are nearest-rank: a
//! figure is always a duration that really happened.

use super::{Baseline, Metric};
/// Durations as the pilot's table shows them (every feature words them so).
pub use crate::platform::durations::human;
use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Below this many events a figure says it rests on too few.
pub const FEW: usize = 5;

/// One timed event: what it measures, when it started and how long it took.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Timed {
    pub metric: Metric,
    /// The record it comes from: `flag:12`, `check:7`, `review-item:3`.
    pub reference: String,
    /// What it is about: a group, a topic.
    pub subject: String,
    pub started_at: DateTime<Utc>,
    pub ended_at: DateTime<Utc>,
}

impl Timed {
    pub fn ms(&self) -> i64 {
        (self.ended_at - self.started_at).num_milliseconds().max(0)
    }
}

/// A counted event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Count {
    FlagsRaised,
    FlagsAcknowledged,
    /// Dismissed as wrong, each with its reason (listed beside the counts).
    FlagsDismissed,
    /// Checks whose verdict was INCOMPATIBLE: a breaking change found before it shipped.
    ChecksBreaking,
    /// Review items Streamkeeper applied.
    ChangesApplied,
    /// Connector restarts Streamkeeper made.
    ConnectorRestarts,
    /// Lineage questions sent with "notify owners" that reached no owner
    /// team: no owners notified, so not in `lineage_notified`.
    QuestionsReachedNoOwner,
}

impl Count {
    pub const ALL: [Count; 7] = [
        Count::FlagsRaised,
        Count::FlagsAcknowledged,
        Count::FlagsDismissed,
        Count::ChecksBreaking,
        Count::ChangesApplied,
        Count::ConnectorRestarts,
        Count::QuestionsReachedNoOwner,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Count::FlagsRaised => "flags_raised",
            Count::FlagsAcknowledged => "flags_acknowledged",
            Count::FlagsDismissed => "flags_dismissed",
            Count::ChecksBreaking => "checks_breaking",
            Count::ChangesApplied => "changes_applied",
            Count::ConnectorRestarts => "connector_restarts",
            Count::QuestionsReachedNoOwner => "questions_reached_no_owner",
        }
    }
}

/// A metric's figure over some events.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Figure {
    pub events: usize,
    pub p50_ms: Option<i64>,
    pub p90_ms: Option<i64>,
    /// p50 ÷ baseline (below 1: faster than before).
    pub ratio_p50: Option<f64>,
    pub ratio_p90: Option<f64>,
    /// Fewer than [`FEW`] events: read it as an anecdote, not a figure.
    pub few: bool,
    /// What the figure rests on, in words.
    pub note: String,
}

/// The nearest-rank percentile `p` (1–100) of sorted durations.
pub fn percentile(sorted: &[i64], p: u32) -> Option<i64> {
    if sorted.is_empty() {
        return None;
    }
    let n = sorted.len();
    // ceil(p/100 · n), at least 1.
    let rank = (usize::try_from(p).unwrap_or(100) * n).div_ceil(100).max(1);
    sorted.get(rank.min(n) - 1).copied()
}

/// The figure of `durations` against a baseline of `baseline_ms`.
pub fn figure(mut durations: Vec<i64>, baseline_ms: i64) -> Figure {
    durations.sort_unstable();
    let events = durations.len();
    let p50 = percentile(&durations, 50);
    let p90 = percentile(&durations, 90);
    let ratio = |v: Option<i64>| {
        v.filter(|_| baseline_ms > 0)
            .map(|v| v as f64 / baseline_ms as f64)
    };
    let note = match events {
        0 => "no events".to_string(),
        1 => "rests on 1 event (fewer than 5)".to_string(),
        n if n < FEW => format!("rests on {n} events (fewer than 5)"),
        n => format!("rests on {n} events"),
    };
    Figure {
        events,
        p50_ms: p50,
        p90_ms: p90,
        ratio_p50: ratio(p50),
        ratio_p90: ratio(p90),
        few: events < FEW,
        note,
    }
}

/// The pilot week (1, 2 …) an instant falls in: week 1 is the start day
/// and the six after it (UTC). Before the start: none.
pub fn week_of(start: NaiveDate, at: DateTime<Utc>) -> Option<u32> {
    week_of_day(start, at.date_naive())
}

/// The pilot week a UTC day falls in (see [`week_of`]).
pub fn week_of_day(start: NaiveDate, day: NaiveDate) -> Option<u32> {
    let days = (day - start).num_days();
    (days >= 0).then(|| u32::try_from(days / 7 + 1).unwrap_or(u32::MAX))
}

/// The day of the pilot (day 1 is the start day), for "day 30".
pub fn day_of(start: NaiveDate, now: DateTime<Utc>) -> i64 {
    (now.date_naive() - start).num_days() + 1
}

/// One metric's row of the day-30 table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Row {
    pub metric: Metric,
    pub description: String,
    pub baseline_ms: i64,
    pub baseline_note: String,
    /// Over the whole pilot so far.
    pub now: Figure,
}

/// One pilot week's figures and counts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Week {
    pub week: u32,
    pub from: NaiveDate,
    /// The last day of the week (inclusive).
    pub to: NaiveDate,
    pub figures: BTreeMap<Metric, Figure>,
    pub counts: BTreeMap<Count, u64>,
}

/// The pilot's figures: the day-30 table, the weeks, the counts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Report {
    /// The pilot's day today (day 1 is its start).
    pub day: i64,
    pub table: Vec<Row>,
    pub weeks: Vec<Week>,
    pub counts: BTreeMap<Count, u64>,
}

/// The pilot's events as the store sums them, per UTC day: each metric's
/// durations (in any order) and each count. By day, not by event: a year
/// of records reaches the report as a few hundred rows, and a day is the
/// finest grain a week needs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub durations: BTreeMap<(NaiveDate, Metric), Vec<i64>>,
    pub counts: BTreeMap<(NaiveDate, Count), u64>,
}

/// Turns the pilot's tally into its report. Days before the start or
/// after `now` are left out (the store leaves out events after `now`
/// itself); every week from the first to the one `now` falls in is listed,
/// empty ones too (a quiet week is a fact). Metrics in `unrecorded` are
/// ones the product keeps no record of yet: their figures say so rather
/// than "no events".
pub fn report(
    start: NaiveDate,
    now: DateTime<Utc>,
    baselines: &[Baseline],
    tally: Tally,
    unrecorded: &[Metric],
) -> Report {
    let figure = |m: Metric, d: Vec<i64>, baseline_ms: i64| {
        let mut f = figure(d, baseline_ms);
        if unrecorded.contains(&m) {
            f.note = "no records yet".into();
        }
        f
    };
    let baseline = |m: Metric| {
        baselines
            .iter()
            .find(|b| b.metric == m)
            .cloned()
            .unwrap_or_else(|| Baseline::default_for(m))
    };
    let last_week = week_of(start, now).unwrap_or(0);
    let week = |day: NaiveDate| {
        (day <= now.date_naive())
            .then(|| week_of_day(start, day))
            .flatten()
    };
    let mut weekly: BTreeMap<(u32, Metric), Vec<i64>> = BTreeMap::new();
    let mut all: BTreeMap<Metric, Vec<i64>> = BTreeMap::new();
    for ((day, metric), ms) in tally.durations {
        let Some(w) = week(day) else { continue };
        all.entry(metric).or_default().extend_from_slice(&ms);
        weekly.entry((w, metric)).or_default().extend(ms);
    }
    let mut counts: BTreeMap<Count, u64> = Count::ALL.into_iter().map(|c| (c, 0)).collect();
    let mut weekly_counts: BTreeMap<(u32, Count), u64> = BTreeMap::new();
    for ((day, c), n) in tally.counts {
        let Some(w) = week(day) else { continue };
        *counts.entry(c).or_default() += n;
        *weekly_counts.entry((w, c)).or_default() += n;
    }
    let weeks = (1..=last_week)
        .map(|w| {
            let from = start + chrono::Duration::days(i64::from(w - 1) * 7);
            Week {
                week: w,
                from,
                to: from + chrono::Duration::days(6),
                figures: Metric::ALL
                    .into_iter()
                    .map(|m| {
                        let d = weekly.get(&(w, m)).cloned().unwrap_or_default();
                        (m, figure(m, d, baseline(m).ms))
                    })
                    .collect(),
                counts: Count::ALL
                    .into_iter()
                    .map(|c| (c, weekly_counts.get(&(w, c)).copied().unwrap_or(0)))
                    .collect(),
            }
        })
        .collect();
    let table = Metric::ALL
        .into_iter()
        .map(|m| {
            let b = baseline(m);
            Row {
                metric: m,
                description: m.describe().to_string(),
                baseline_ms: b.ms,
                baseline_note: b.note,
                now: figure(m, all.get(&m).cloned().unwrap_or_default(), b.ms),
            }
        })
        .collect();
    Report {
        day: day_of(start, now),
        table,
        weeks,
        counts,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        s.parse().expect("time")
    }

    fn lag(start: &str, minutes: i64) -> Timed {
        let s = at(start);
        Timed {
            metric: Metric::LagFlagged,
            reference: "flag:1".into(),
            subject: "g".into(),
            started_at: s,
            ended_at: s + chrono::Duration::minutes(minutes),
        }
    }

    /// Events summed by day, as the store does.
    fn tally(timed: &[Timed], counted: &[(Count, DateTime<Utc>)]) -> Tally {
        let mut t = Tally::default();
        for e in timed {
            t.durations
                .entry((e.started_at.date_naive(), e.metric))
                .or_default()
                .push(e.ms());
        }
        for (c, at) in counted {
            *t.counts.entry((at.date_naive(), *c)).or_default() += 1;
        }
        t
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let v: Vec<i64> = (1..=10).collect();
        assert_eq!(percentile(&v, 50), Some(5));
        assert_eq!(percentile(&v, 90), Some(9));
        assert_eq!(percentile(&[7], 90), Some(7));
        assert_eq!(percentile(&[1, 2], 50), Some(1));
        assert_eq!(percentile(&[1, 2, 3], 50), Some(2));
        assert_eq!(percentile(&[], 50), None);
    }

    #[test]
    fn a_figure_is_a_ratio_of_the_baseline_and_says_when_it_rests_on_few_events() {
        let f = figure(vec![9 * 60_000, 3 * 60_000, 12 * 60_000], 7_200_000);
        assert_eq!(f.p50_ms, Some(9 * 60_000));
        assert_eq!(f.p90_ms, Some(12 * 60_000));
        assert_eq!(f.ratio_p50, Some(0.075));
        assert!(f.few);
        assert_eq!(f.note, "rests on 3 events (fewer than 5)");
        let f = figure(vec![1000; 5], 1000);
        assert!(!f.few);
        assert_eq!(f.note, "rests on 5 events");
        let f = figure(vec![], 1000);
        assert_eq!((f.p50_ms, f.ratio_p50, f.events), (None, None, 0));
        assert_eq!(f.note, "no events");
    }

    #[test]
    fn weeks_start_on_the_pilot_start_day() {
        let start = NaiveDate::from_ymd_opt(2026, 11, 1).expect("date");
        assert_eq!(week_of(start, at("2026-10-31T23:59:59Z")), None);
        assert_eq!(week_of(start, at("2026-11-01T00:00:00Z")), Some(1));
        assert_eq!(week_of(start, at("2026-11-07T23:59:59Z")), Some(1));
        assert_eq!(week_of(start, at("2026-11-08T00:00:00Z")), Some(2));
        assert_eq!(day_of(start, at("2026-11-30T12:00:00Z")), 30);
    }

    #[test]
    fn the_report_puts_each_event_in_its_week_and_the_table_over_the_pilot() {
        let start = NaiveDate::from_ymd_opt(2026, 11, 1).expect("date");
        let timed = vec![
            lag("2026-11-02T10:00:00Z", 120),
            lag("2026-11-03T10:00:00Z", 60),
            lag("2026-11-09T10:00:00Z", 9),
            // Before the start and after now: not the pilot's.
            lag("2026-10-20T10:00:00Z", 600),
            lag("2026-11-20T10:00:00Z", 1),
        ];
        let counted = vec![
            (Count::FlagsRaised, at("2026-11-02T10:00:00Z")),
            (Count::FlagsRaised, at("2026-11-09T10:00:00Z")),
            (Count::FlagsDismissed, at("2026-11-09T11:00:00Z")),
            (Count::ChecksBreaking, at("2026-10-01T00:00:00Z")),
        ];
        let r = report(
            start,
            at("2026-11-10T00:00:00Z"),
            &[],
            tally(&timed, &counted),
            &[Metric::LineageNotified],
        );
        assert_eq!(r.day, 10);
        assert_eq!(r.weeks.len(), 2);
        let w1 = &r.weeks[0].figures[&Metric::LagFlagged];
        assert_eq!(
            (w1.events, w1.p50_ms, w1.p90_ms),
            (2, Some(3_600_000), Some(7_200_000))
        );
        assert_eq!(w1.ratio_p90, Some(1.0));
        let w2 = &r.weeks[1].figures[&Metric::LagFlagged];
        assert_eq!((w2.events, w2.p50_ms), (1, Some(540_000)));
        assert_eq!(
            r.weeks[1].from,
            NaiveDate::from_ymd_opt(2026, 11, 8).expect("d")
        );
        assert_eq!(
            r.weeks[1].to,
            NaiveDate::from_ymd_opt(2026, 11, 14).expect("d")
        );
        let row = &r.table[0];
        assert_eq!(row.metric, Metric::LagFlagged);
        assert_eq!((row.now.events, row.now.p50_ms), (3, Some(3_600_000)));
        assert_eq!(row.baseline_ms, 7_200_000);
        assert_eq!(r.counts[&Count::FlagsRaised], 2);
        assert_eq!(r.counts[&Count::FlagsDismissed], 1);
        assert_eq!(r.counts[&Count::ChecksBreaking], 0);
        assert_eq!(r.weeks[1].counts[&Count::FlagsRaised], 1);
        // Every metric has its row, with no events where nothing happened.
        assert_eq!(r.table.len(), Metric::ALL.len());
        assert_eq!(r.table[3].now.note, "no events");
        assert_eq!(r.table[4].now.note, "no records yet");
        assert_eq!(
            r.weeks[0].figures[&Metric::LineageNotified].note,
            "no records yet"
        );
    }
}
