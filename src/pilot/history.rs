//! The demo's pilot history (issue 15): ten days of a pilot as a script.
//! The history player (`server/src/pilot/history.rs`) plays it through the
//! real services, each step at the time given here (the console's clock
//! moved to it, `server/src/platform/clock.rs`); its test computes from it
//! the figures the pilot's page must show. Times are seconds since the
//! start (00:00 UTC) of the pilot's day 1.
//!
//! The story: team risk owns the topic `card-auth` (domain risk, changes
//! applied after one approval) and the two groups reading it. In the first
//! days the cluster is sampled every minute and the team's chat relay
//! refuses the first webhook attempts (they are retried with the
//! deliveries' backoff); the relay is fixed on day 4 and the cluster is
//! sampled every 15 s from day 5, so a stopped consumer reaches its owner
//! sooner. The approver answers reviews sooner as the inbox becomes a
//! habit. Compatibility checks and lineage questions take what the
//! services themselves take: the script says when they are asked, not how
//! long they last.

use crate::flags::backoff_s;
use chrono::{DateTime, Duration, NaiveDate, Utc};

/// Days of history: day 1 is ten days before the day the demo starts.
pub const DAYS: i64 = 10;
pub const TOPIC: &str = "card-auth";
pub const TEAM: &str = "risk";
pub const DOMAIN: &str = "risk";
/// The groups reading [`TOPIC`], both owned by [`TEAM`].
pub const GROUPS: [&str; 2] = ["fraud-scoring", "chargeback-features"];
/// The owner in [`TEAM`] who proposes changes and answers flags.
pub const OWNER: &str = "omar";
/// The domain's named approver.
pub const APPROVER: &str = "rita";
/// Who sets the pilot up.
pub const MANAGER: &str = "mona";
/// Messages produced to the topic between two passes.
pub const WRITTEN_PER_PASS: i64 = 120;
/// Caught-up passes before a consumer stops.
pub const LEAD_PASSES: i64 = 3;
/// The delivery routine runs every second: a flag's first webhook attempt
/// comes a second after it is raised.
pub const DELIVERY_TICK_S: i64 = 1;

const HOUR: i64 = 3_600;
const DAY: i64 = 24 * HOUR;

/// A time of a pilot day, in seconds since day 1's start.
pub const fn at(day: i64, hour: i64, minute: i64) -> i64 {
    (day - 1) * DAY + hour * HOUR + minute * 60
}

/// The pilot day (1, 2 …) of a time of the script.
pub fn day_of(t: i64) -> i64 {
    t.div_euclid(DAY) + 1
}

/// The instant of a time of the script, for a pilot whose day 1 is `day1`.
pub fn instant(day1: NaiveDate, t: i64) -> DateTime<Utc> {
    day1.and_time(chrono::NaiveTime::MIN).and_utc() + Duration::seconds(t)
}

/// What the owner does once told that a consumer stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// Restarts the consumer (outside the console).
    Restart,
    /// Acknowledges the flag in the console, then restarts it.
    Acknowledge,
    /// Dismisses the flag with this reason, then restarts it.
    Dismiss(&'static str),
}

/// A consumer group that stops (its members gone, its commits standing)
/// while the topic is written to, and recovers once its owner answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stop {
    /// The first of its passes.
    pub start: i64,
    pub group: &'static str,
    /// The cluster's sampling interval that day.
    pub pass_s: i64,
    /// Webhook attempts the team's relay refuses before it takes one.
    pub refused: i32,
    pub answer: Answer,
    /// How long after the webhook arrived the owner answers.
    pub answer_after_s: i64,
}

impl Stop {
    /// The time of pass `i` (0 is the first).
    pub fn pass_at(&self, i: i64) -> i64 {
        self.start + i * self.pass_s
    }

    /// The first pass whose reading shows the group behind: the flag's
    /// onset (the first sample at which its commit had stood still).
    pub fn onset(&self) -> i64 {
        self.pass_at(LEAD_PASSES)
    }

    /// The pass that raises the flag: the second sample behind without
    /// members or progress is a STOP (`watch::lag::status`).
    pub fn raised(&self) -> i64 {
        self.pass_at(LEAD_PASSES + 1)
    }

    /// The delivery attempts of the flag's webhook: one a tick after the
    /// flag, then after each refusal the deliveries' backoff; the last one
    /// is taken.
    pub fn attempts(&self) -> Vec<i64> {
        let mut t = self.raised() + DELIVERY_TICK_S;
        let mut all = vec![t];
        for a in 0..self.refused {
            t += backoff_s(a);
            all.push(t);
        }
        all
    }

    /// When the owner was told: the webhook the relay took.
    pub fn notified(&self) -> i64 {
        self.attempts()
            .last()
            .copied()
            .unwrap_or_else(|| self.raised())
    }

    /// When the owner answers.
    pub fn answered(&self) -> i64 {
        self.notified() + self.answer_after_s
    }

    /// The index of the first pass after the answer: the group is caught
    /// up again there (the flag resolves, or stays dismissed).
    pub fn recovery_pass(&self) -> i64 {
        (self.answered() - self.start).div_euclid(self.pass_s) + 1
    }

    /// The pilot's "lag flagged to its owner" of this stop, in ms.
    pub fn flagged_ms(&self) -> i64 {
        (self.notified() - self.onset()) * 1_000
    }
}

/// A producer change proposed by [`OWNER`] (one more optional field) and
/// approved by [`APPROVER`] `approve_after_s` later, which applies it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Review {
    pub proposed: i64,
    pub approve_after_s: i64,
}

impl Review {
    pub fn approved(&self) -> i64 {
        self.proposed + self.approve_after_s
    }
}

/// A producer schema checked against the topic's consumers, as a CI job
/// does; a breaking one drops a field `fraud-scoring` reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Check {
    pub at: i64,
    pub breaking: bool,
}

/// The history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Script {
    pub stops: Vec<Stop>,
    pub reviews: Vec<Review>,
    pub checks: Vec<Check>,
    /// "Notify owners" of what is downstream of [`TOPIC`].
    pub questions: Vec<i64>,
}

/// The demo's ten days.
pub fn script() -> Script {
    let [fraud, chargeback] = GROUPS;
    let stop = |start, group, pass_s, refused, answer, answer_after_s| Stop {
        start,
        group,
        pass_s,
        refused,
        answer,
        answer_after_s,
    };
    let moved = "planned: fraud-scoring was moved to the new cluster and stopped on purpose";
    let stops = vec![
        stop(at(1, 10, 12), fraud, 60, 4, Answer::Restart, 900),
        stop(at(2, 14, 40), chargeback, 60, 3, Answer::Acknowledge, 600),
        stop(at(3, 9, 5), fraud, 60, 2, Answer::Restart, 420),
        stop(at(4, 16, 20), fraud, 60, 0, Answer::Dismiss(moved), 300),
        stop(at(5, 11, 30), chargeback, 15, 0, Answer::Acknowledge, 120),
        stop(at(6, 13, 10), fraud, 15, 0, Answer::Restart, 180),
        stop(at(7, 10, 45), chargeback, 15, 0, Answer::Restart, 90),
        stop(at(8, 15, 0), fraud, 15, 0, Answer::Acknowledge, 60),
        stop(at(9, 9, 50), chargeback, 15, 0, Answer::Restart, 60),
        stop(at(10, 12, 30), fraud, 15, 0, Answer::Restart, 45),
    ];
    let reviews = [
        (1, 11, 6 * HOUR),
        (3, 10, 3 * HOUR),
        (5, 14, 90 * 60),
        (7, 9, 40 * 60),
        (9, 11, 20 * 60),
    ]
    .into_iter()
    .map(|(day, hour, after)| Review {
        proposed: at(day, hour, 0),
        approve_after_s: after,
    })
    .collect();
    let checks = (1..=DAYS)
        .flat_map(|day| {
            [
                Check {
                    at: at(day, 9, 30),
                    breaking: matches!(day, 1 | 2 | 3 | 6),
                },
                Check {
                    at: at(day, 16, 0),
                    breaking: false,
                },
            ]
        })
        .collect();
    let questions = [2, 4, 6, 8, 10].map(|day| at(day, 15, 0)).to_vec();
    Script {
        stops,
        reviews,
        checks,
        questions,
    }
}

/// The reading of one pass: the topic's log end and each group's commit
/// and members.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pass {
    pub at: i64,
    pub log_end: i64,
    /// (group, committed offset, members), one for each of [`GROUPS`].
    pub groups: Vec<(&'static str, i64, usize)>,
}

/// One step of the history, at its time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// A pass reads the cluster; its flags follow.
    Pass(Pass),
    /// The delivery routine runs; the team's relay takes what it is sent
    /// or refuses it.
    Deliver { relay_up: bool },
    /// The owner acknowledges the group's live flag.
    Acknowledge { group: &'static str },
    /// The owner dismisses the group's live flag.
    Dismiss {
        group: &'static str,
        reason: &'static str,
    },
    /// The `n`th compatibility check (from 0).
    Check { n: usize, breaking: bool },
    /// The `n`th review proposed.
    Propose { n: usize },
    /// The `n`th review approved.
    Approve { n: usize },
    /// Notify owners of what is downstream of the topic.
    Ask,
}

impl Script {
    /// Every step, in time order (steps at the same time in the order
    /// they were made: a pass before the deliveries it causes).
    pub fn steps(&self) -> Vec<(i64, Step)> {
        let mut steps = Vec::new();
        let mut log_end = 0;
        for s in &self.stops {
            // The stopped group's commit stands at the end of its last
            // caught-up pass.
            let stood = log_end + LEAD_PASSES * WRITTEN_PER_PASS;
            for i in 0..=s.recovery_pass() {
                log_end += WRITTEN_PER_PASS;
                let stopped = (LEAD_PASSES..s.recovery_pass()).contains(&i);
                let groups = GROUPS
                    .iter()
                    .map(|g| match *g == s.group && stopped {
                        true => (*g, stood, 0),
                        false => (*g, log_end, 1),
                    })
                    .collect();
                let t = s.pass_at(i);
                steps.push((
                    t,
                    Step::Pass(Pass {
                        at: t,
                        log_end,
                        groups,
                    }),
                ));
                if i == s.recovery_pass() {
                    // The resolution's webhook.
                    steps.push((t + DELIVERY_TICK_S, Step::Deliver { relay_up: true }));
                }
            }
            let attempts = s.attempts();
            let last = attempts.len() - 1;
            for (k, t) in attempts.into_iter().enumerate() {
                steps.push((
                    t,
                    Step::Deliver {
                        relay_up: k == last,
                    },
                ));
            }
            let group = s.group;
            match s.answer {
                Answer::Restart => {}
                Answer::Acknowledge => steps.push((s.answered(), Step::Acknowledge { group })),
                Answer::Dismiss(reason) => {
                    steps.push((s.answered(), Step::Dismiss { group, reason }));
                }
            }
        }
        for (n, c) in self.checks.iter().enumerate() {
            steps.push((
                c.at,
                Step::Check {
                    n,
                    breaking: c.breaking,
                },
            ));
        }
        for (n, r) in self.reviews.iter().enumerate() {
            steps.push((r.proposed, Step::Propose { n }));
            steps.push((r.approved(), Step::Approve { n }));
            // The approval applies it; nothing is sent.
        }
        for q in &self.questions {
            steps.push((*q, Step::Ask));
            // The owners' webhook.
            steps.push((q + DELIVERY_TICK_S, Step::Deliver { relay_up: true }));
        }
        steps.sort_by_key(|(t, _)| *t);
        steps
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::watch::lag::consumed::NotConsumed;
    use crate::watch::observe::{Standings, observe_group};
    use crate::watch::window::{WindowSample, Windows};
    use std::collections::{BTreeMap, HashMap};

    #[derive(Clone, Debug)]
    struct S {
        at_ms: i64,
        committed: i64,
        log_end: i64,
    }

    impl WindowSample for S {
        fn group(&self) -> &str {
            ""
        }
        fn topic(&self) -> &str {
            TOPIC
        }
        fn partition(&self) -> i32 {
            0
        }
        fn at_ms(&self) -> i64 {
            self.at_ms
        }
        fn committed(&self) -> Option<i64> {
            Some(self.committed)
        }
        fn log_start(&self) -> Option<i64> {
            Some(0)
        }
        fn log_end(&self) -> Option<i64> {
            Some(self.log_end)
        }
    }

    #[test]
    fn every_step_happens_within_its_ten_days_and_in_order() {
        let steps = script().steps();
        assert!(steps.windows(2).all(|w| w[0].0 <= w[1].0));
        assert!(steps.iter().all(|(t, _)| (1..=DAYS).contains(&day_of(*t))));
        let stops = script().stops;
        assert!(stops.windows(2).all(|w| w[0].answered() < w[1].start));
    }

    #[test]
    fn a_stop_is_told_after_its_pass_and_the_relays_refusals() {
        let s = script().stops[0];
        // Raised a pass after the onset; retried after 2, 4, 8 and 16 s.
        assert_eq!(s.raised() - s.onset(), 60);
        assert_eq!(s.notified() - s.raised(), 1 + 2 + 4 + 8 + 16);
        assert_eq!(s.flagged_ms(), 91_000);
        assert!(s.pass_at(s.recovery_pass()) > s.answered());
        assert!(s.pass_at(s.recovery_pass() - 1) <= s.answered());
    }

    #[test]
    fn the_stops_reach_their_owner_sooner_as_the_days_go() {
        let ms: Vec<i64> = script().stops.iter().map(Stop::flagged_ms).collect();
        assert!(ms.windows(2).all(|w| w[1] <= w[0]), "{ms:?}");
        assert!(ms[0] > 4 * ms[ms.len() - 1]);
        let r: Vec<i64> = script().reviews.iter().map(|r| r.approve_after_s).collect();
        assert!(r.windows(2).all(|w| w[1] < w[0]));
    }

    /// The judge itself, over each stop's readings as the player stores
    /// them: a STOP at the pass the script says raises it, dated to the
    /// onset it says, and nothing before.
    #[test]
    fn the_judge_raises_each_stop_where_the_script_says() {
        let script = script();
        let mut windows: BTreeMap<&str, Vec<S>> = BTreeMap::new();
        let mut raised: Vec<(i64, i64)> = Vec::new();
        for (_, step) in script.steps() {
            let Step::Pass(p) = step else { continue };
            for (g, committed, members) in &p.groups {
                let w = windows.entry(*g).or_default();
                w.push(S {
                    at_ms: p.at * 1_000,
                    committed: *committed,
                    log_end: p.log_end,
                });
                let keep = w.len().saturating_sub(10);
                w.drain(..keep);
                let mut one: Windows<S> = BTreeMap::new();
                one.insert((TOPIC.to_string(), 0), w.clone());
                let seen = observe_group(
                    g,
                    &one,
                    *members,
                    &HashMap::new(),
                    &Standings::new(),
                    &NotConsumed::new(),
                    p.at * 1_000,
                );
                let lag = seen.lag.map(|t| t.observation(g, t.evidence()));
                let found: Vec<_> = seen.freshness.into_iter().chain(lag).collect();
                if let Some(o) = found.iter().find(|o| o.kind == "STOP") {
                    raised.push((p.at, o.onset_ms / 1_000));
                }
                assert!(
                    found.iter().all(|o| o.kind == "STOP"),
                    "{g} at {}: {found:?}",
                    p.at
                );
            }
        }
        // The first STOP of each stop (later passes keep it open).
        let mut firsts: Vec<(i64, i64)> = Vec::new();
        for s in &script.stops {
            let first = raised
                .iter()
                .find(|(t, _)| *t >= s.start && *t <= s.answered())
                .copied();
            firsts.push(first.expect("a STOP"));
        }
        let expected: Vec<(i64, i64)> = script
            .stops
            .iter()
            .map(|s| (s.raised(), s.onset()))
            .collect();
        assert_eq!(firsts, expected);
    }
}
