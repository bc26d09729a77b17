//! A flag's lifecycle as a state machine: what an evaluation's observations
//! do to the flags that stand. A flag is raised once, updated while its
//! trouble lasts (a worsening is news for the owner), resolved when the
//! trouble is gone. A dismissed flag holds its trouble back: while it
//! lasts nothing is raised and nobody is paged; it returns only after the
//! trouble clears and comes back, or when the dismissal's snooze ends.

use super::{FlagKey, Observation};
use crate::platform::page::Choice;
use std::collections::{BTreeMap, BTreeSet};

/// Where the flag of a key stands, as far as the lifecycle cares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Standing {
    /// Open or acknowledged, of this kind.
    Live { kind: String },
    /// Dismissed while its trouble lasts; until `snoozed_until_ms` when
    /// the dismissal set one.
    Dismissed { snoozed_until_ms: Option<i64> },
}

/// Why a dismissal stops holding its trouble back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Release {
    /// The trouble cleared: when it comes back it is raised again.
    Cleared,
    /// The snooze ended with the trouble still there: raised again now.
    SnoozeEnded,
}

/// What to do with a flag.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    Raise(Observation),
    /// Still there; `worsened` when its kind is worse than before (the
    /// owner hears of it), else it is written silently.
    Update {
        observation: Observation,
        worsened: bool,
    },
    Resolve(FlagKey),
    /// The dismissal of this key holds no longer.
    Release(FlagKey, Release),
}

/// Compares the flags that stand with what was observed at `now_ms`.
/// Resolution (and a dismissal's release on a cleared trouble) needs
/// `evaluated` to cover the flag's key: a subject that was not looked at
/// this time keeps its flag rather than being declared healthy. `worse`
/// says whether, for a key, the second kind is worse than the first.
pub fn reconcile(
    standing: &BTreeMap<FlagKey, Standing>,
    observed: Vec<Observation>,
    evaluated: &dyn Fn(&FlagKey) -> bool,
    now_ms: i64,
    worse: &dyn Fn(&FlagKey, &str, &str) -> bool,
) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut seen = BTreeSet::new();
    for o in observed {
        seen.insert(o.key.clone());
        match standing.get(&o.key) {
            None => steps.push(Step::Raise(o)),
            Some(Standing::Live { kind }) => {
                let worsened = worse(&o.key, kind, &o.kind);
                steps.push(Step::Update {
                    observation: o,
                    worsened,
                });
            }
            Some(Standing::Dismissed { snoozed_until_ms }) => {
                if snoozed_until_ms.is_some_and(|until| now_ms >= until) {
                    steps.push(Step::Release(o.key.clone(), Release::SnoozeEnded));
                    steps.push(Step::Raise(o));
                }
                // Otherwise the dismissal holds: no flag, no page.
            }
        }
    }
    for (key, s) in standing {
        if seen.contains(key) || !evaluated(key) {
            continue;
        }
        steps.push(match s {
            Standing::Live { .. } => Step::Resolve(key.clone()),
            Standing::Dismissed { .. } => Step::Release(key.clone(), Release::Cleared),
        });
    }
    steps
}

/// Why a flag was dismissed: the pilot counts the flags that were wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DismissalKind {
    /// The flag was wrong: there was no trouble.
    #[default]
    Wrong,
    /// The trouble is real but expected (a paused backfill, say).
    Expected,
}

impl Choice for DismissalKind {
    const NAME: &'static str = "dismissal";
    fn all() -> &'static [Self] {
        &[DismissalKind::Wrong, DismissalKind::Expected]
    }
    fn as_str(self) -> &'static str {
        match self {
            DismissalKind::Wrong => "wrong",
            DismissalKind::Expected => "expected",
        }
    }
}

/// The longest snooze: a longer quiet is a dismissal without one.
pub const MAX_SNOOZE_DAYS: i64 = 90;

/// A snooze the dismissal may not carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SnoozeError {
    #[error("A snooze ends in the future; that time has passed.")]
    Past,
    #[error("A snooze lasts at most {MAX_SNOOZE_DAYS} days; dismiss without one instead.")]
    TooLong,
}

/// Checks a snooze's end (ms since the epoch) against `now_ms`.
pub fn check_snooze(until_ms: i64, now_ms: i64) -> Result<i64, SnoozeError> {
    if until_ms <= now_ms {
        Err(SnoozeError::Past)
    } else if until_ms - now_ms > MAX_SNOOZE_DAYS * 86_400_000 {
        Err(SnoozeError::TooLong)
    } else {
        Ok(until_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key(s: &str) -> FlagKey {
        FlagKey {
            subject_kind: "group".into(),
            subject: s.into(),
            rule: "lag".into(),
        }
    }

    fn obs(s: &str, kind: &str) -> Observation {
        Observation {
            key: key(s),
            kind: kind.into(),
            reason: "r".into(),
            onset_ms: 0,
            evidence: json!({}),
        }
    }

    const ORDER: [&str; 3] = ["WARN", "STALL", "STOP"];

    fn worse(_: &FlagKey, before: &str, now: &str) -> bool {
        let rank = |k: &str| ORDER.iter().position(|o| *o == k);
        rank(now) > rank(before)
    }

    fn run(standing: &BTreeMap<FlagKey, Standing>, observed: Vec<Observation>) -> Vec<Step> {
        reconcile(standing, observed, &|_| true, 1_000, &worse)
    }

    fn live(kind: &str) -> Standing {
        Standing::Live { kind: kind.into() }
    }

    #[test]
    fn raised_once_then_updated_then_resolved() {
        let mut s = BTreeMap::new();
        assert!(
            matches!(&run(&s, vec![obs("a", "WARN")])[..], [Step::Raise(o)] if o.kind == "WARN")
        );
        s.insert(key("a"), live("WARN"));
        assert!(matches!(
            &run(&s, vec![obs("a", "WARN")])[..],
            [Step::Update {
                worsened: false,
                ..
            }]
        ));
        assert_eq!(run(&s, vec![]), vec![Step::Resolve(key("a"))]);
    }

    #[test]
    fn a_worsening_is_a_transition_and_an_easing_is_not() {
        let s = BTreeMap::from([(key("a"), live("WARN"))]);
        assert!(matches!(
            &run(&s, vec![obs("a", "STOP")])[..],
            [Step::Update { worsened: true, .. }]
        ));
        let s = BTreeMap::from([(key("a"), live("STOP"))]);
        assert!(matches!(
            &run(&s, vec![obs("a", "WARN")])[..],
            [Step::Update {
                worsened: false,
                ..
            }]
        ));
    }

    #[test]
    fn a_dismissal_holds_while_the_trouble_lasts() {
        let s = BTreeMap::from([(
            key("a"),
            Standing::Dismissed {
                snoozed_until_ms: None,
            },
        )]);
        for _ in 0..3 {
            assert!(
                run(&s, vec![obs("a", "STOP")]).is_empty(),
                "no flag, no page"
            );
        }
    }

    #[test]
    fn a_dismissal_is_released_when_the_trouble_clears_and_the_return_is_raised() {
        let mut s = BTreeMap::from([(
            key("a"),
            Standing::Dismissed {
                snoozed_until_ms: None,
            },
        )]);
        assert_eq!(
            run(&s, vec![]),
            vec![Step::Release(key("a"), Release::Cleared)]
        );
        s.remove(&key("a"));
        assert!(matches!(
            &run(&s, vec![obs("a", "WARN")])[..],
            [Step::Raise(_)]
        ));
    }

    #[test]
    fn a_snooze_that_ends_with_the_trouble_there_raises_it_again() {
        let snoozed = |until| {
            BTreeMap::from([(
                key("a"),
                Standing::Dismissed {
                    snoozed_until_ms: Some(until),
                },
            )])
        };
        assert!(run(&snoozed(2_000), vec![obs("a", "STOP")]).is_empty());
        let steps = run(&snoozed(1_000), vec![obs("a", "STOP")]);
        assert!(
            matches!(
                &steps[..],
                [Step::Release(k, Release::SnoozeEnded), Step::Raise(o)] if *k == key("a") && o.kind == "STOP"
            ),
            "{steps:?}"
        );
    }

    #[test]
    fn unevaluated_subjects_keep_their_flags_and_dismissals() {
        let s = BTreeMap::from([
            (key("a"), live("STOP")),
            (
                key("b"),
                Standing::Dismissed {
                    snoozed_until_ms: None,
                },
            ),
        ]);
        assert!(reconcile(&s, vec![], &|_| false, 0, &worse).is_empty());
    }

    #[test]
    fn snoozes_end_in_the_future_within_the_limit() {
        assert_eq!(check_snooze(10, 20), Err(SnoozeError::Past));
        assert_eq!(check_snooze(20, 20), Err(SnoozeError::Past));
        assert_eq!(check_snooze(3_600_000, 0), Ok(3_600_000));
        assert_eq!(
            check_snooze(MAX_SNOOZE_DAYS * 86_400_000 + 1, 0),
            Err(SnoozeError::TooLong)
        );
    }
}
