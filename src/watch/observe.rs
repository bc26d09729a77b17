//! What a pass observed, as flags: a group's windowed lag status and
//! freshness, a topic's replication, leadership and silence. The server
//! reads the facts and reconciles the observations with the open flags
//! ([`crate::flags::reconcile`]).

use super::health::{LastMessage, PartitionMeta, TopicHealth, topic_health};
use super::lag::consumed::{self, NotConsumed};
use super::lag::onset::trouble_onset_ms;
use super::lag::status::{
    Rules, Standing, Status, Verdict, group_status, partition_status, window_time_lag_s,
};
use super::lag::trend::{Trend, group_trend, partition_trend};
use super::retention::{PartitionTrend, RetentionCall, observe_retention};
use super::window::{WINDOW_PASSES, WindowSample, Windows, judgeable};
use crate::flags::{FlagKey, Observation};
use crate::platform::durations::human;
use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{DefaultHasher, Hash, Hasher};

pub fn key(subject_kind: &str, subject: &str, rule: &str) -> FlagKey {
    FlagKey {
        subject_kind: subject_kind.into(),
        subject: subject.into(),
        rule: rule.into(),
    }
}

/// A group's windowed lag status.
pub fn group_key(group: &str) -> FlagKey {
    key("group", group, "lag")
}

/// A group's time lag against its streams' freshness budgets.
pub fn freshness_key(group: &str) -> FlagKey {
    key("group", group, "freshness")
}

/// A cluster that a pass could not read.
pub fn cluster_key(name: &str) -> FlagKey {
    key("cluster", name, "reachability")
}

/// A group's state for the lists, from the same window as its flags.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupJudgement {
    pub status: Status,
    /// Messages behind over all partitions, at the newest samples.
    pub total_lag: Option<i64>,
    /// The largest time lag of any partition.
    pub max_time_lag_s: Option<f64>,
    /// Where its lag is heading: velocities summed, its slowest partition's
    /// catch-up, its soonest retention risk.
    pub trend: Trend,
}

/// What the open flag of a group knew of its partitions standing still,
/// by (topic, partition): kept in the flag's receipts, so each pass can say
/// how long a partition has not moved, however long ago its window began.
pub type Standings = HashMap<(String, i32), Standing>;

/// The standings in a group flag's evidence (its receipts' `standing`);
/// receipts without one, or evidence of another shape, give none.
pub fn standings(evidence: &Value) -> Standings {
    evidence["partitions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| {
            let topic = r["topic"].as_str()?.to_owned();
            let partition = i32::try_from(r["partition"].as_i64()?).ok()?;
            let standing = serde_json::from_value(r.get("standing")?.clone()).ok()?;
            Some(((topic, partition), standing))
        })
        .collect()
}

/// A troubled partition, as its group's lag flag names it.
#[derive(Clone, Debug, PartialEq)]
pub struct TroubledPartition {
    pub topic: String,
    pub partition: i32,
    pub verdict: Verdict,
}

/// A group's lag trouble, typed: its flag's receipts are made from it only
/// when they are written ([`LagTrouble::evidence`], most passes write
/// none; see `crate::flags::receipts`), while what decides whether they are
/// ([`LagTrouble::gist`]) and what the flag keeps of partitions standing
/// still ([`LagTrouble::standings`]) are read from it as it is. Building
/// every troubled group's receipts as JSON each pass, to hash them, was a
/// third of the evaluation at a thousand groups (BENCHMARKS.md).
#[derive(Clone, Debug, PartialEq)]
pub struct LagTrouble {
    /// The group's status (a trouble), its flag's kind.
    pub status: Status,
    /// The worst partition's sentence, and how many more are in trouble.
    pub reason: String,
    pub onset_ms: i64,
    pub members: usize,
    pub rules: Rules,
    /// In (topic, partition) order.
    pub partitions: Vec<TroubledPartition>,
}

impl LagTrouble {
    /// The group's lag flag as observed, with `evidence` for its receipts.
    pub fn observation(&self, group: &str, evidence: Value) -> Observation {
        Observation {
            key: group_key(group),
            kind: self.status.as_str().into(),
            reason: self.reason.clone(),
            onset_ms: self.onset_ms,
            evidence,
        }
    }

    /// The receipts: the rule and its thresholds, and each troubled
    /// partition without its samples ([`with_samples`] adds them).
    pub fn evidence(&self) -> Value {
        let receipts: Vec<Value> = self
            .partitions
            .iter()
            .map(|p| {
                json!({
                    "topic": p.topic,
                    "partition": p.partition,
                    "status": p.verdict.status.as_str(),
                    "reason": p.verdict.reason,
                    "standing": p.verdict.standing,
                })
            })
            .collect();
        json!({
            "rule": "windowed lag status (Burrow-style, evaluated at the newest sample)",
            "window_passes": WINDOW_PASSES,
            "min_samples": self.rules.min_samples,
            "stop_samples": self.rules.stop_samples,
            "allowed_lag": self.rules.allowed_lag,
            "group_members": self.members,
            "group_status": self.status.as_str(),
            "partitions": receipts,
        })
    }

    /// What makes the receipts different, as `crate::flags::receipts::gist`
    /// of [`LagTrouble::evidence`] says it (everything but each
    /// partition's sentence and samples): it changes exactly when that one
    /// does. Comparable only within one process, and only with gists made
    /// here.
    pub fn gist(&self) -> u64 {
        let mut hasher = DefaultHasher::new();
        (
            WINDOW_PASSES,
            self.rules.min_samples,
            self.rules.stop_samples,
            self.rules.allowed_lag,
            self.members,
            self.status,
            self.partitions.len(),
        )
            .hash(&mut hasher);
        for p in &self.partitions {
            (&p.topic, p.partition, p.verdict.status, p.verdict.standing).hash(&mut hasher);
        }
        hasher.finish()
    }

    /// What the flag keeps of its partitions standing still: [`standings`]
    /// of its receipts.
    pub fn standings(&self) -> Standings {
        self.partitions
            .iter()
            .filter_map(|p| Some(((p.topic.clone(), p.partition), p.verdict.standing?)))
            .collect()
    }
}

/// A group as one pass saw it: its flags' troubles and its judgement.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupObservation {
    /// Time lag above the freshness budget of a stream it reads.
    pub freshness: Option<Observation>,
    /// Its windowed lag status, when that is a trouble.
    pub lag: Option<LagTrouble>,
    /// The log start about to pass (or past) a committed offset; or held,
    /// when the pass cannot tell.
    pub retention: RetentionCall,
    pub judgement: GroupJudgement,
    /// What the next pass must know of its partitions standing still: a
    /// trouble's ([`LagTrouble::standings`]), and those of partitions whose
    /// members came back to a stop and have not committed yet.
    pub standings: Standings,
    /// Each topic's largest time lag (seconds), `None` where no
    /// partition's is known: what the freshness SLOs judge a pass by
    /// (`watch::slo::pass_freshness`).
    pub time_lags: BTreeMap<String, Option<f64>>,
}

/// A group's troubles: its windowed lag status, and its time lag against
/// the freshness budgets (seconds, by topic) of the streams it reads. Also
/// its judgement for the lists. `known` is what the group's open flag knew
/// of partitions standing still; `now_ms` dates trouble whose onset the
/// window cannot tell. Topics `not_consumed` are left out of all of it (a
/// group with nothing else is [`Status::NotConsumed`]).
pub fn observe_group<S: WindowSample>(
    group: &str,
    windows: &Windows<S>,
    members: usize,
    budgets: &HashMap<String, i32>,
    known: &Standings,
    not_consumed: &NotConsumed,
    now_ms: i64,
) -> GroupObservation {
    let rules = Rules::default();
    let mut total_lag: Option<i64> = None;
    let mut max_time_lag: Option<f64> = None;
    // Verdicts of the partitions not in trouble, and those in trouble.
    let mut verdicts = Vec::new();
    let mut troubled = Vec::new();
    let mut stale = Vec::new();
    let mut onset: Option<i64> = None;
    let mut standings = Standings::new();
    let mut trends = Vec::with_capacity(windows.len());
    let mut left_out = false;
    let mut time_lags: BTreeMap<String, Option<f64>> = BTreeMap::new();
    for ((topic, partition), samples) in windows {
        // Most groups consume all they have offsets on: no look-up then.
        if !not_consumed.is_empty() && not_consumed.contains_key(topic) {
            left_out = true;
            continue;
        }
        let partition = *partition;
        let window = judgeable(samples);
        trends.push(PartitionTrend {
            topic: topic.clone(),
            partition,
            trend: partition_trend(&window, rules.allowed_lag),
        });
        if let Some(lag) = window.last().and_then(|s| s.lag().messages()) {
            let lag = i64::try_from(lag).unwrap_or(i64::MAX);
            total_lag = Some(total_lag.unwrap_or(0).saturating_add(lag));
        }
        let time_lag = window_time_lag_s(&window);
        let topic_lag = time_lags.entry(topic.clone()).or_insert(None);
        *topic_lag = match (*topic_lag, time_lag) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        if let Some(t) = time_lag {
            max_time_lag = Some(max_time_lag.map_or(t, |m| m.max(t)));
        }
        if let Some(budget) = budgets.get(topic)
            && let Some(secs) = time_lag.filter(|s| *s > f64::from(*budget))
        {
            stale.push(json!({
                "topic": topic, "partition": partition,
                "time_lag_s": secs.round(), "budget_s": budget,
            }));
        }
        // Most groups' flags keep no standing (only STOP and STALL do):
        // no key to build for them.
        let standing = if known.is_empty() {
            None
        } else {
            known.get(&(topic.clone(), partition)).copied()
        };
        let v = partition_status(&window, members > 0, &rules, standing);
        if let Some(s) = v.standing {
            standings.insert((topic.clone(), partition), s);
        }
        if v.status.is_trouble() {
            if let Some(o) = trouble_onset_ms(&window, &v, rules.allowed_lag) {
                onset = Some(onset.map_or(o, |x| x.min(o)));
            }
            troubled.push(TroubledPartition {
                topic: topic.clone(),
                partition,
                verdict: v,
            });
        } else {
            verdicts.push(v);
        }
    }
    let freshness = stale.first().map(|first| {
        let more = match stale.len() {
            1 => String::new(),
            2 => " (and 1 more partition)".to_owned(),
            n => format!(" (and {} more partitions)", n - 1),
        };
        Observation {
            key: freshness_key(group),
            kind: "FRESHNESS".into(),
            reason: format!(
                "time lag {} s on {}[{}] is above the stream's freshness budget of {} s{more}",
                first["time_lag_s"],
                first["topic"].as_str().unwrap_or(""),
                first["partition"],
                first["budget_s"]
            ),
            onset_ms: now_ms,
            evidence: json!({
                "rule": "time lag (interpolated from the log-end history) above the stream's freshness budget",
                "partitions": stale,
            }),
        }
    });
    let judged = group_status(verdicts.iter().chain(troubled.iter().map(|t| &t.verdict)));
    let any = !verdicts.is_empty() || !troubled.is_empty();
    let status = consumed::status_of(judged, any, left_out);
    let lag = status.is_trouble().then(|| {
        // The group's status is its worst partition's: a troubled one.
        let worst = troubled
            .iter()
            .find(|t| t.verdict.status == status)
            .map(|t| t.verdict.reason.clone())
            .unwrap_or_default();
        let reason = match troubled.len().saturating_sub(1) {
            0 => worst,
            1 => format!("{worst} (and 1 more partition in trouble)"),
            n => format!("{worst} (and {n} more partitions in trouble)"),
        };
        LagTrouble {
            status,
            reason,
            onset_ms: onset.unwrap_or(now_ms),
            members,
            rules,
            partitions: troubled,
        }
    });
    GroupObservation {
        freshness,
        lag,
        retention: observe_retention(group, &trends, now_ms),
        judgement: GroupJudgement {
            status,
            total_lag,
            max_time_lag_s: max_time_lag,
            trend: group_trend(trends.iter().map(|p| &p.trend)),
        },
        standings,
        time_lags,
    }
}

/// Adds to a group lag flag's receipts each troubled partition's samples,
/// from the window the flag was observed over: the receipts a reader sees.
pub fn with_samples<S: WindowSample>(evidence: &mut Value, windows: &Windows<S>) {
    let Some(parts) = evidence["partitions"].as_array_mut() else {
        return;
    };
    for part in parts {
        let key = match (part["topic"].as_str(), part["partition"].as_i64()) {
            (Some(topic), Some(p)) => match i32::try_from(p) {
                Ok(p) => (topic.to_owned(), p),
                Err(_) => continue,
            },
            _ => continue,
        };
        let samples: Vec<Value> = windows
            .get(&key)
            .map(|series| judgeable(series))
            .unwrap_or_default()
            .iter()
            .map(|s| {
                json!({
                    "at": DateTime::from_timestamp_millis(s.at_ms),
                    "committed": s.committed,
                    "log_start": s.log_start,
                    "log_end": s.log_end,
                })
            })
            .collect();
        part["samples"] = Value::Array(samples);
    }
}

/// Replication and leadership of a topic from its metadata alone. (Quiet
/// topics need the stream's expected interval: see [`observe_topic`].)
pub fn metadata_health(partitions: &[PartitionMeta]) -> TopicHealth {
    topic_health(partitions, None, 0, None)
}

/// What the catalog knows of a topic that decides whether it is quiet.
#[derive(Clone, Debug, PartialEq)]
pub struct TopicCatalog {
    /// Its last message, as far as the watcher knows.
    pub last_message: LastMessage,
    /// When watching first saw it.
    pub first_seen_ms: i64,
    /// How often its stream expects a message.
    pub expected_interval_s: Option<i32>,
    pub log_end_total: Option<i64>,
}

/// A topic's troubles: replication and leadership from its metadata, and
/// silence beyond 1.5 × the interval its stream expects, as of `at_ms`
/// (the end of the pass). The keys judged go into `evaluated`: only those
/// may resolve.
pub fn observe_topic(
    topic: &str,
    partitions: &[PartitionMeta],
    catalog: Option<&TopicCatalog>,
    at_ms: i64,
    evaluated: &mut BTreeSet<FlagKey>,
) -> Vec<Observation> {
    let mut found = Vec::new();
    let health = metadata_health(partitions);
    let rules = [
        (
            "replication",
            "UNDER_REPLICATED",
            &health.under_replicated,
            "fewer in-sync replicas than replicas",
        ),
        (
            "leadership",
            "OFFLINE",
            &health.offline,
            "no leader: nobody can read or write them",
        ),
    ];
    for (rule, kind, parts, what) in rules {
        let k = key("topic", topic, rule);
        evaluated.insert(k.clone());
        if !parts.is_empty() {
            found.push(Observation {
                key: k,
                kind: kind.into(),
                reason: format!("partitions {parts:?} have {what}"),
                onset_ms: at_ms,
                evidence: json!({
                    "rule": format!("{kind} partitions in topic metadata"),
                    "partitions": partitions.iter().map(|p| json!({
                        "partition": p.partition, "leader": p.leader,
                        "replicas": p.replicas, "isr": p.isr,
                    })).collect::<Vec<_>>(),
                }),
            });
        }
    }
    if let Some(c) = catalog {
        let k = key("topic", topic, "quiet");
        evaluated.insert(k.clone());
        let since = c.last_message.silent_since_ms(c.first_seen_ms);
        let quiet = topic_health(
            &[],
            Some(since),
            at_ms,
            c.expected_interval_s.map(i64::from),
        );
        if let (Some(quiet_ms), Some(expected)) = (quiet.quiet_for_ms, c.expected_interval_s) {
            let silence = match c.last_message {
                LastMessage::At { .. } => format!("no new message for {}", human(quiet_ms)),
                LastMessage::None | LastMessage::Unknown { .. } => {
                    format!("no message in the {} since watching began", human(quiet_ms))
                }
            };
            found.push(Observation {
                key: k,
                kind: "QUIET".into(),
                reason: format!(
                    "{silence}; one is expected every {}",
                    human(i64::from(expected) * 1000)
                ),
                onset_ms: since,
                evidence: json!({
                    "rule": "time since the last message (its record's own time when read) above 1.5 × the expected interval",
                    "last_message": c.last_message,
                    "last_message_at": DateTime::<Utc>::from_timestamp_millis(since),
                    "expected_interval_s": expected,
                    "log_end_total": c.log_end_total,
                }),
            });
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::watch::window::by_group;
    use crate::watch::window::tests::{Row, row};

    const NOW: i64 = 1_000_000_000;

    fn windows(rows: Vec<Row>) -> Windows<Row> {
        by_group(rows).remove("billing").unwrap_or_default()
    }

    /// [`observe_group`], with the flags it raises made in full (receipts
    /// without samples), freshness first.
    fn observe(
        group: &str,
        windows: &Windows<Row>,
        members: usize,
        budgets: &HashMap<String, i32>,
        known: &Standings,
        now_ms: i64,
    ) -> (Vec<Observation>, GroupJudgement) {
        let seen = observe_group(
            group,
            windows,
            members,
            budgets,
            known,
            &NotConsumed::new(),
            now_ms,
        );
        let lag = seen.lag.map(|t| t.observation(group, t.evidence()));
        (
            seen.freshness.into_iter().chain(lag).collect(),
            seen.judgement,
        )
    }

    /// A partition whose commit stays at `committed` while the log end is
    /// at 100, over `passes` passes 15 s apart.
    fn stuck(partition: i32, committed: i64, passes: i64) -> Vec<Row> {
        (0..passes)
            .map(|i| {
                row(
                    "billing",
                    "orders",
                    partition,
                    NOW - (passes - i) * 15_000,
                    Some(committed),
                    Some((0, 100)),
                )
            })
            .collect()
    }

    #[test]
    fn a_stopped_group_is_one_flag_dated_from_when_its_offsets_last_moved() {
        let mut rows = stuck(0, 40, 5);
        rows.extend(stuck(1, 90, 5));
        let (found, judgement) = observe(
            "billing",
            &windows(rows),
            0,
            &HashMap::new(),
            &Standings::new(),
            NOW,
        );
        assert_eq!(judgement.status, Status::Stop);
        assert_eq!(judgement.total_lag, Some(60 + 10));
        assert_eq!(found.len(), 1, "{found:?}");
        let flag = &found[0];
        assert_eq!(flag.key, group_key("billing"));
        assert_eq!(flag.kind, "STOP");
        assert!(
            flag.reason.ends_with("(and 1 more partition in trouble)"),
            "{}",
            flag.reason
        );
        // Five equal commits: the offsets stood still since the first (the
        // window shows no earlier move).
        assert_eq!(flag.onset_ms, NOW - 5 * 15_000);
        assert_eq!(flag.evidence["window_passes"], WINDOW_PASSES);
        assert_eq!(flag.evidence["group_members"], 0);
        assert_eq!(
            flag.evidence["partitions"].as_array().map(Vec::len),
            Some(2)
        );
    }

    #[test]
    fn receipts_get_each_troubled_partitions_samples_when_written() {
        let mut rows = stuck(0, 40, 5);
        rows.extend(stuck(1, 90, 5));
        let w = windows(rows);
        let (found, _) = observe("billing", &w, 0, &HashMap::new(), &Standings::new(), NOW);
        let mut evidence = found[0].evidence.clone();
        assert!(evidence["partitions"][0].get("samples").is_none());
        with_samples(&mut evidence, &w);
        for (i, committed) in [(0, 40), (1, 90)] {
            let samples = evidence["partitions"][i]["samples"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            assert_eq!(samples.len(), 5, "partition {i}");
            assert_eq!(samples[4]["committed"], committed);
            assert_eq!(samples[4]["log_end"], 100);
            assert_eq!(
                samples[4]["at"],
                json!(DateTime::from_timestamp_millis(NOW - 15_000))
            );
        }
        // The same receipts whatever the samples: what decides a rewrite.
        assert_eq!(
            crate::flags::receipts::gist(&evidence),
            crate::flags::receipts::gist(&found[0].evidence)
        );
    }

    /// A group's lag trouble over `passes` passes ending at `now`: partition
    /// 0 stopped at 40, partition 1 (when `both`) lagging more each pass,
    /// with `members` members.
    fn trouble(passes: i64, now: i64, members: usize, both: bool, known: &Standings) -> LagTrouble {
        let mut rows: Vec<Row> = (0..passes)
            .map(|i| {
                let at = now - (passes - i) * 15_000;
                row("billing", "orders", 0, at, Some(40), Some((0, 100)))
            })
            .collect();
        if both {
            rows.extend((0..passes).map(|i| {
                let at = now - (passes - i) * 15_000;
                row(
                    "billing",
                    "orders",
                    1,
                    at,
                    Some(10 * i),
                    Some((0, 20 * i + 5)),
                )
            }));
        }
        let seen = observe_group(
            "billing",
            &windows(rows),
            members,
            &HashMap::new(),
            known,
            &NotConsumed::new(),
            now,
        );
        seen.lag
            .unwrap_or_else(|| panic!("no trouble: {:?}", seen.judgement))
    }

    #[test]
    fn the_typed_gist_and_standings_say_what_the_receipts_say() {
        use crate::flags::receipts;
        let first = trouble(5, NOW, 0, true, &Standings::new());
        let kept = first.standings();
        let troubles = [
            first.clone(),
            // A pass later: the sentences and samples moved, nothing else.
            trouble(5, NOW + 15_000, 0, true, &kept),
            // Standing still since earlier.
            trouble(7, NOW + 15_000, 0, true, &Standings::new()),
            // Members came back (STALL), a partition fewer, more members.
            trouble(6, NOW + 15_000, 1, true, &kept),
            trouble(6, NOW + 15_000, 2, true, &kept),
            trouble(5, NOW, 0, false, &Standings::new()),
        ];
        for a in &troubles {
            assert_eq!(a.standings(), standings(&a.evidence()));
            for b in &troubles {
                assert_eq!(
                    a.gist() == b.gist(),
                    receipts::gist(&a.evidence()) == receipts::gist(&b.evidence()),
                    "{a:?}\n{b:?}"
                );
            }
        }
        // The cases differ where they should (else the above proves little).
        let distinct: BTreeSet<u64> = troubles.iter().map(LagTrouble::gist).collect();
        assert_eq!(distinct.len(), troubles.len() - 1, "all but the pass later");
        assert_ne!(troubles[0].reason, troubles[1].reason);
        assert_eq!(troubles[0].gist(), troubles[1].gist());
    }

    #[test]
    fn a_stop_counts_its_standing_still_from_what_the_open_flag_kept() {
        // Pass after pass the window slides over the same commit: the flag
        // kept when the stand began, so the sentence grows with the time.
        let (first, _) = observe(
            "billing",
            &windows(stuck(0, 40, 5)),
            0,
            &HashMap::new(),
            &Standings::new(),
            NOW,
        );
        let kept = standings(&first[0].evidence);
        let began = NOW - 5 * 15_000;
        assert_eq!(
            kept.get(&("orders".to_owned(), 0)),
            Some(&Standing {
                committed: 40,
                since_ms: began,
                members_since_ms: None,
            })
        );
        let later = NOW + 20 * 60_000;
        let rows = (0..5)
            .map(|i| {
                let at = later - (5 - i) * 15_000;
                row("billing", "orders", 0, at, Some(40), Some((0, 100)))
            })
            .collect();
        let (again, _) = observe("billing", &windows(rows), 0, &HashMap::new(), &kept, later);
        assert!(
            again[0]
                .reason
                .contains("no progress for 21 min while 60 behind"),
            "{}",
            again[0].reason
        );
        assert_eq!(standings(&again[0].evidence), kept);
        // Evidence of another shape knows nothing.
        assert!(standings(&json!({"rule": "x"})).is_empty());
    }

    #[test]
    fn a_caught_up_group_raises_nothing_and_is_judged_ok() {
        let rows = (0..4)
            .map(|i| {
                let at = NOW - (4 - i) * 15_000;
                row("billing", "orders", 0, at, Some(10 * i), Some((0, 10 * i)))
            })
            .collect();
        let (found, judgement) = observe(
            "billing",
            &windows(rows),
            2,
            &HashMap::new(),
            &Standings::new(),
            NOW,
        );
        assert!(found.is_empty(), "{found:?}");
        assert_eq!(judgement.status, Status::Ok);
        assert_eq!(judgement.total_lag, Some(0));
    }

    #[test]
    fn a_group_without_samples_is_incomplete_and_lagless() {
        let (found, judgement) = observe(
            "billing",
            &Windows::<Row>::new(),
            1,
            &HashMap::new(),
            &Standings::new(),
            NOW,
        );
        assert!(found.is_empty());
        assert_eq!(
            judgement,
            GroupJudgement {
                status: group_status(&[]),
                total_lag: None,
                max_time_lag_s: None,
                trend: group_trend([]),
            }
        );
    }

    #[test]
    fn a_topic_no_member_is_assigned_is_left_out_not_a_stall() {
        // "refunds" stands 90 behind while its members read "orders":
        // judged, it would STALL; not consumed, it is left out.
        let mut rows = Vec::new();
        for i in 0..10 {
            let at = NOW - (10 - i) * 15_000;
            rows.push(row(
                "billing",
                "orders",
                0,
                at,
                Some(100 + i),
                Some((0, 100 + i)),
            ));
            rows.push(row(
                "billing",
                "refunds",
                0,
                at,
                Some(10),
                Some((0, 100 + i)),
            ));
        }
        let w = windows(rows);
        let none = (HashMap::new(), Standings::new());
        let judged = observe_group("billing", &w, 2, &none.0, &none.1, &NotConsumed::new(), NOW);
        assert_eq!(judged.judgement.status, Status::Stall);
        let refunds = NotConsumed::from([("refunds".to_owned(), NOW - 3_600_000)]);
        let seen = observe_group("billing", &w, 2, &none.0, &none.1, &refunds, NOW);
        assert_eq!(seen.judgement.status, Status::Ok);
        assert_eq!(seen.judgement.total_lag, Some(0), "its lag is not counted");
        assert!(seen.lag.is_none());
        let both = NotConsumed::from([("orders".to_owned(), NOW), ("refunds".to_owned(), NOW)]);
        let seen = observe_group("billing", &w, 2, &none.0, &none.1, &both, NOW);
        assert_eq!(seen.judgement.status, Status::NotConsumed);
        assert_eq!(seen.judgement.total_lag, None);
    }

    #[test]
    fn a_log_start_closing_on_a_stopped_group_is_a_retention_flag_before_the_loss() {
        // Stopped at 2,000 while retention deletes 120 a pass (8/s) from 500.
        let rows = |passes: i64| -> Vec<Row> {
            (0..passes)
                .map(|i| {
                    let log = Some((500 + i * 120, 5_000 + i * 50));
                    row(
                        "billing",
                        "orders",
                        0,
                        NOW - (passes - i) * 15_000,
                        Some(2_000),
                        log,
                    )
                })
                .collect()
        };
        let none = (HashMap::new(), Standings::new(), NotConsumed::new());
        let seen = observe_group(
            "billing",
            &windows(rows(10)),
            0,
            &none.0,
            &none.1,
            &none.2,
            NOW,
        );
        let RetentionCall::Flag(risk) = seen.retention else {
            panic!("a retention flag");
        };
        assert_eq!(risk.key, crate::watch::retention::retention_key("billing"));
        assert_eq!(
            risk.reason,
            "billing will lose data on orders[0] in ~52 s at this rate"
        );
        assert_eq!(seen.judgement.trend.retention.seconds(), Some(52.5));
        assert_eq!(seen.lag.map(|l| l.status), Some(Status::Stop));
        // Two passes on, the log start (1,700… 1,820 … 2,060) has passed it.
        let seen = observe_group(
            "billing",
            &windows(rows(14)),
            0,
            &none.0,
            &none.1,
            &none.2,
            NOW,
        );
        assert!(
            seen.retention
                .flag()
                .is_some_and(|o| o.reason.contains("lost 60 unread"))
        );
        assert_eq!(seen.lag.map(|l| l.status), Some(Status::Lost));
    }

    #[test]
    fn time_lag_above_a_streams_budget_is_a_freshness_flag_dated_now() {
        // The log end grows 10 a pass; the group stays 20 messages (two
        // passes, 30 s) behind but keeps pace, so its status is OK.
        let rows = (0..6)
            .map(|i| {
                let at = NOW - (6 - i) * 15_000;
                row(
                    "billing",
                    "orders",
                    0,
                    at,
                    Some(10 * i),
                    Some((0, 10 * i + 20)),
                )
            })
            .collect::<Vec<_>>();
        let budgets = HashMap::from([("orders".to_string(), 10)]);
        let (found, judgement) = observe(
            "billing",
            &windows(rows.clone()),
            1,
            &budgets,
            &Standings::new(),
            NOW,
        );
        assert_eq!(judgement.status, Status::Ok);
        let time_lag = judgement.max_time_lag_s.unwrap_or_default();
        assert!(time_lag > 10.0, "{time_lag}");
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].key, freshness_key("billing"));
        assert_eq!(found[0].kind, "FRESHNESS");
        assert_eq!(found[0].onset_ms, NOW);
        assert!(
            found[0].reason.contains("on orders[0]"),
            "{}",
            found[0].reason
        );
        assert!(
            found[0].reason.ends_with("budget of 10 s"),
            "{}",
            found[0].reason
        );
        // Within a looser budget, or for a stream without one: no flag.
        let loose = HashMap::from([("orders".to_string(), 3600)]);
        assert!(
            observe(
                "billing",
                &windows(rows.clone()),
                1,
                &loose,
                &Standings::new(),
                NOW
            )
            .0
            .is_empty()
        );
        let other = HashMap::from([("payments".to_string(), 10)]);
        assert!(
            observe("billing", &windows(rows), 1, &other, &Standings::new(), NOW)
                .0
                .is_empty()
        );
    }

    fn part(partition: i32, leader: Option<i32>, replicas: &[i32], isr: &[i32]) -> PartitionMeta {
        PartitionMeta {
            partition,
            leader,
            replicas: replicas.to_vec(),
            isr: isr.to_vec(),
        }
    }

    #[test]
    fn metadata_health_names_under_replicated_and_offline_partitions() {
        let health = metadata_health(&[
            part(0, Some(1), &[1, 2], &[1, 2]),
            part(1, Some(1), &[1, 2], &[1]),
            part(2, None, &[1, 2], &[]),
            part(3, Some(-1), &[1], &[1]),
        ]);
        assert_eq!(health.under_replicated, vec![1, 2]);
        assert_eq!(health.offline, vec![2, 3]);
        assert_eq!(health.quiet_for_ms, None);
    }

    #[test]
    fn a_topic_is_judged_on_replication_and_leadership_and_with_a_catalog_on_silence() {
        let partitions = [
            part(0, Some(1), &[1, 2], &[1]),
            part(1, None, &[1, 2], &[1, 2]),
        ];
        let mut evaluated = BTreeSet::new();
        let found = observe_topic("orders", &partitions, None, NOW, &mut evaluated);
        let kinds: Vec<&str> = found.iter().map(|o| o.kind.as_str()).collect();
        assert_eq!(kinds, ["UNDER_REPLICATED", "OFFLINE"]);
        assert!(found.iter().all(|o| o.onset_ms == NOW));
        assert_eq!(
            found[1].reason,
            "partitions [1] have no leader: nobody can read or write them"
        );
        assert_eq!(
            found[0].evidence["partitions"][1]["leader"],
            serde_json::Value::Null
        );
        assert_eq!(
            evaluated,
            BTreeSet::from([
                key("topic", "orders", "leadership"),
                key("topic", "orders", "replication")
            ])
        );

        // Quiet for 100 s where a message is expected every 60 s.
        let catalog = TopicCatalog {
            last_message: LastMessage::At {
                at_ms: NOW - 100_000,
                exact: true,
            },
            first_seen_ms: NOW - 900_000,
            expected_interval_s: Some(60),
            log_end_total: Some(7),
        };
        let healthy = [part(0, Some(1), &[1], &[1])];
        let mut evaluated = BTreeSet::new();
        let found = observe_topic("orders", &healthy, Some(&catalog), NOW, &mut evaluated);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].key, key("topic", "orders", "quiet"));
        assert_eq!(
            found[0].reason,
            "no new message for 1 min 40 s; one is expected every 1 min"
        );
        assert_eq!(found[0].onset_ms, NOW - 100_000);
        assert_eq!(found[0].evidence["log_end_total"], 7);
        assert!(evaluated.contains(&key("topic", "orders", "quiet")));

        // Never seen to move since watching began 100 s ago: the silence
        // is at least that long, and said so.
        let unknown = TopicCatalog {
            last_message: LastMessage::Unknown {
                first_seen_ms: NOW - 100_000,
            },
            first_seen_ms: NOW - 100_000,
            ..catalog.clone()
        };
        let found = observe_topic(
            "orders",
            &healthy,
            Some(&unknown),
            NOW,
            &mut BTreeSet::new(),
        );
        assert_eq!(
            found[0].reason,
            "no message in the 1 min 40 s since watching began; one is expected every 1 min"
        );

        // Within 1.5 × the interval, or with no interval: judged, not raised.
        for expected in [Some(90), None] {
            let c = TopicCatalog {
                expected_interval_s: expected,
                ..catalog.clone()
            };
            let mut evaluated = BTreeSet::new();
            assert!(observe_topic("orders", &healthy, Some(&c), NOW, &mut evaluated).is_empty());
            assert_eq!(evaluated.len(), 3);
        }
    }

    #[test]
    fn the_keys_name_their_subject_and_rule() {
        assert_eq!(group_key("billing"), key("group", "billing", "lag"));
        assert_eq!(
            freshness_key("billing"),
            key("group", "billing", "freshness")
        );
        assert_eq!(cluster_key("prod").subject_kind, "cluster");
        assert_eq!(cluster_key("prod").rule, "reachability");
    }
}
