//! What a pass's pending transitions become: for each, send, hold (a
//! silence covers it) or drop (its silence ended with the trouble gone);
//! then, for each channel whose filter admits them, one message per
//! cluster and transition listing its flags.

use super::{Filter, FlagNotice, Notice, Silence, Transition, flag_held_until, group};

/// A transition waiting to be told.
#[derive(Clone, Debug, PartialEq)]
pub struct Pending {
    pub id: i64,
    pub transition: Transition,
    pub flag: FlagNotice,
    pub team_id: Option<i64>,
    pub by: Option<String>,
    /// The flag is open or acknowledged now.
    pub live: bool,
    /// A transition of the flag was told before (became deliveries).
    pub told_before: bool,
    /// A silence held it at an earlier pass.
    pub was_held: bool,
}

/// What becomes of a pending transition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    Send,
    /// Kept pending until the silence ends (ms since the epoch).
    Hold(i64),
    /// Never sent: held by a silence the trouble did not outlive.
    Drop,
}

/// The fate of one pending transition at `now_ms`. A resolution or an
/// acknowledgment of a flag already told is always sent, silence or not:
/// a receiver is never left with an incident nobody closes.
pub fn fate(p: &Pending, silences: &[Silence], now_ms: i64) -> Fate {
    let held = flag_held_until(silences, &p.flag, now_ms);
    let closing = matches!(p.transition, Transition::Resolve | Transition::Acknowledge);
    match (closing, held) {
        (true, _) if p.told_before => Fate::Send,
        (_, Some(until)) => Fate::Hold(until),
        (true, None) if p.was_held => Fate::Drop,
        (false, None) if p.was_held && !p.live => Fate::Drop,
        _ => Fate::Send,
    }
}

/// A channel as the plan reads it.
#[derive(Clone, Debug, PartialEq)]
pub struct Route {
    pub channel_id: i64,
    pub team_id: i64,
    pub filter: Filter,
}

/// The messages for the transitions to send: per channel, its notices.
pub fn messages(sending: &[Pending], channels: &[Route]) -> Vec<(i64, Vec<Notice>)> {
    channels
        .iter()
        .filter_map(|c| {
            let told: Vec<(Transition, FlagNotice)> = sending
                .iter()
                .filter(|p| p.team_id == Some(c.team_id))
                .filter(|p| c.filter.admits(&p.flag.cluster, &p.flag.kind))
                .map(|p| (p.transition, p.flag.clone()))
                .collect();
            if told.is_empty() {
                return None;
            }
            let mut notices = group(told);
            // An acknowledgment says who acknowledged: the first's, for a burst.
            for n in &mut notices {
                if n.transition == Transition::Acknowledge {
                    n.by = sending
                        .iter()
                        .find(|p| {
                            p.transition == Transition::Acknowledge && p.flag.id == n.flags[0].id
                        })
                        .and_then(|p| p.by.clone());
                }
            }
            Some((c.channel_id, notices))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notify::notice::tests::flag;
    use crate::notify::{Severity, SilenceScope};

    fn pending(id: i64, t: Transition) -> Pending {
        Pending {
            id,
            transition: t,
            flag: flag(id, &format!("g{id}"), "STOP"),
            team_id: Some(1),
            by: None,
            live: true,
            told_before: false,
            was_held: false,
        }
    }

    fn muted(until_ms: i64) -> Vec<Silence> {
        vec![Silence {
            cluster: "prod".into(),
            scope: SilenceScope::Group("g1".into()),
            until_ms,
            owner: None,
        }]
    }

    #[test]
    fn a_silence_holds_then_sends_if_the_trouble_outlives_it() {
        let p = pending(1, Transition::Raise);
        assert_eq!(fate(&p, &muted(100), 10), Fate::Hold(100));
        let later = Pending {
            was_held: true,
            ..p.clone()
        };
        assert_eq!(fate(&later, &muted(100), 100), Fate::Send);
        let gone = Pending {
            live: false,
            ..later
        };
        assert_eq!(fate(&gone, &muted(100), 100), Fate::Drop);
        assert_eq!(
            fate(&pending(2, Transition::Raise), &muted(100), 10),
            Fate::Send,
            "not covered"
        );
    }

    #[test]
    fn a_resolution_of_a_told_flag_is_sent_through_a_silence() {
        let told = Pending {
            told_before: true,
            live: false,
            ..pending(1, Transition::Resolve)
        };
        assert_eq!(fate(&told, &muted(100), 10), Fate::Send);
        let untold = Pending {
            told_before: false,
            live: false,
            ..pending(1, Transition::Resolve)
        };
        assert_eq!(fate(&untold, &muted(100), 10), Fate::Hold(100));
        let after = Pending {
            was_held: true,
            ..untold
        };
        assert_eq!(
            fate(&after, &muted(100), 200),
            Fate::Drop,
            "the team never heard of it"
        );
    }

    #[test]
    fn each_channel_gets_one_grouped_message_of_what_its_filter_admits() {
        let mut sending: Vec<Pending> = (1..=100).map(|i| pending(i, Transition::Raise)).collect();
        sending[0].flag.kind = "WARN".into();
        sending[1].team_id = Some(2);
        let all = Route {
            channel_id: 10,
            team_id: 1,
            filter: Filter::default(),
        };
        let critical = Route {
            channel_id: 11,
            team_id: 1,
            filter: Filter {
                min_severity: Severity::Critical,
                ..Filter::default()
            },
        };
        let other = Route {
            channel_id: 12,
            team_id: 3,
            filter: Filter::default(),
        };
        let m = messages(&sending, &[all, critical, other]);
        assert_eq!(m.len(), 2, "no message for a team without transitions");
        assert_eq!(m[0].1.len(), 1);
        assert_eq!(m[0].1[0].flags.len(), 99);
        assert_eq!(m[1].1[0].flags.len(), 98, "the WARN left out");
    }
}
