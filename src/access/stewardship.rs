//! Stewardship: who looks after a team's things (its streams, consumer
//! groups and flags), and describing a stream: what its owners may change
//! and what only admins may.
//!
//! One rule, in three shapes and [`may_claim`], decides who steers a thing: an admin, or an
//! owner of a thing that is unowned or their own team's ([`may_steward`]).
//!
//! A stream's domain decides who approves changes to it and at which
//! autonomy level, so whoever could move a stream between domains could
//! pick the approvers of their own change; its declared compatibility level
//! decides what the schema checks accept. Both are therefore an admin's to
//! set, and never while changes to the stream are open for review (their
//! approvers and level were frozen under the old ones).

use crate::access::ownership::Owner;
use crate::accounts::account::Principal;
use crate::accounts::role::Role;
use thiserror::Error;

/// The person asking, as these rules see them.
#[derive(Clone, Copy, Debug)]
pub struct Steward<'a> {
    pub admin: bool,
    pub owner: bool,
    /// The teams they belong to.
    pub teams: &'a [i64],
}

impl<'a> Steward<'a> {
    /// `who`, a member of `teams`.
    pub fn of(who: &Principal, teams: &'a [i64]) -> Self {
        Steward {
            admin: who.has(Role::Admin),
            owner: who.has(Role::Owner),
            teams,
        }
    }
}

/// What someone asks to do with a thing a team may own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stewardship {
    /// Change it (record its schemas, propose changes, describe it): an
    /// admin, or an owner when it is unowned or their team's.
    Steer,
    /// Edit and withdraw its review items as its owner: an owner when it is
    /// unowned or their team's. Admins get no pass: they are not its owners.
    Own,
    /// Act on it (acknowledge, dismiss a flag): an admin, or any member of
    /// the team it belongs to, whatever their role. Unowned, only admins.
    Act,
}

/// Whether `who` may do `what` to a thing owned by `owner_team` (`None`:
/// unowned).
pub fn may_steward(who: Steward<'_>, owner_team: Option<i64>, what: Stewardship) -> bool {
    let mine = |t: i64| who.teams.contains(&t);
    let unowned_or_mine = owner_team.is_none_or(mine);
    match what {
        Stewardship::Steer => who.admin || (who.owner && unowned_or_mine),
        Stewardship::Own => who.owner && unowned_or_mine,
        Stewardship::Act => who.admin || owner_team.is_some_and(mine),
    }
}

/// Whether `who` may give a group or connector owned by `owner` (the
/// ownership rule's answer, `None`: unowned) to `for_team` (`None`: leave
/// it unowned): an admin anything; an owner claims it for a team they
/// belong to when it is unowned, or when their own team holds it only by
/// inheritance (a stream it reads), which the claim makes explicit. What
/// another team owns, by claim or by stream, is never theirs to take.
pub fn may_claim(who: Steward<'_>, owner: Option<&Owner>, for_team: Option<i64>) -> bool {
    let mine = |t: i64| who.teams.contains(&t);
    let free = match owner {
        None => true,
        Some(o) => !o.is_claimed() && mine(o.team_id()),
    };
    who.admin || (who.owner && free && for_team.is_some_and(mine))
}

/// A stream's entry: as it stands, or as someone wants it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamEntry<'a> {
    pub owner_team: Option<i64>,
    /// Empty when the stream has none.
    pub domain: &'a str,
    pub compatibility: Option<&'a str>,
}

#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum DescribeRefusal {
    #[error(
        "describe this stream (owners describe unowned streams and their teams' streams, for one of their teams)"
    )]
    NotSteward,
    #[error(
        "Only an admin sets a stream's domain: it decides who approves changes to the stream ({from:?} → {to:?} was asked)."
    )]
    DomainIsAdmins { from: String, to: String },
    #[error(
        "Only an admin sets a stream's declared compatibility level ({from} → {to} was asked)."
    )]
    LevelIsAdmins { from: String, to: String },
    #[error(
        "The stream has {open} open review item(s), whose approvers and level were fixed by its current domain and level: close them before changing either."
    )]
    OpenItems { open: u64 },
}

impl DescribeRefusal {
    /// Refusals the caller can clear by waiting for something to change
    /// (the open items to close) rather than by being someone else.
    pub fn is_conflict(&self) -> bool {
        matches!(self, DescribeRefusal::OpenItems { .. })
    }
}

fn level(l: Option<&str>) -> String {
    l.unwrap_or("not declared").to_string()
}

/// Whether `who` may change the stream's entry from `now` to `wanted`,
/// while `open_items` review items of the stream are open.
///
/// Admins describe any stream. Owners describe a stream that is unowned or
/// their team's, giving it to one of their teams, and leave its domain and
/// declared level as they are.
pub fn may_describe(
    who: Steward<'_>,
    now: StreamEntry<'_>,
    wanted: StreamEntry<'_>,
    open_items: u64,
) -> Result<(), DescribeRefusal> {
    let domain_moves = now.domain.trim() != wanted.domain.trim();
    let level_moves = now.compatibility != wanted.compatibility;
    if !who.admin {
        let gives_to_own = wanted.owner_team.is_some_and(|t| who.teams.contains(&t));
        if !(may_steward(who, now.owner_team, Stewardship::Steer) && gives_to_own) {
            return Err(DescribeRefusal::NotSteward);
        }
        if domain_moves {
            return Err(DescribeRefusal::DomainIsAdmins {
                from: now.domain.trim().to_string(),
                to: wanted.domain.trim().to_string(),
            });
        }
        if level_moves {
            return Err(DescribeRefusal::LevelIsAdmins {
                from: level(now.compatibility),
                to: level(wanted.compatibility),
            });
        }
    }
    if (domain_moves || level_moves) && open_items > 0 {
        return Err(DescribeRefusal::OpenItems { open: open_items });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::ownership::{OwnerReason, Team};

    const PAYMENTS: i64 = 1;
    const OTHER: i64 = 2;

    fn owner(teams: &[i64]) -> Steward<'_> {
        Steward {
            admin: false,
            owner: true,
            teams,
        }
    }

    fn admin() -> Steward<'static> {
        Steward {
            admin: true,
            owner: false,
            teams: &[],
        }
    }

    fn entry(team: Option<i64>, domain: &str) -> StreamEntry<'_> {
        StreamEntry {
            owner_team: team,
            domain,
            compatibility: Some("BACKWARD"),
        }
    }

    /// A member of `teams` with neither the owner's nor the admin's role.
    fn viewer(teams: &[i64]) -> Steward<'_> {
        Steward {
            admin: false,
            owner: false,
            teams,
        }
    }

    #[test]
    fn steer_is_admins_or_owners_of_the_unowned_and_their_teams() {
        let steer = Stewardship::Steer;
        assert!(may_steward(admin(), Some(OTHER), steer));
        assert!(may_steward(admin(), None, steer));
        assert!(may_steward(owner(&[PAYMENTS]), Some(PAYMENTS), steer));
        assert!(!may_steward(owner(&[PAYMENTS]), Some(OTHER), steer));
        assert!(may_steward(owner(&[PAYMENTS]), None, steer));
        assert!(may_steward(owner(&[]), None, steer));
        assert!(!may_steward(viewer(&[PAYMENTS]), Some(PAYMENTS), steer));
        assert!(!may_steward(viewer(&[PAYMENTS]), None, steer));
    }

    #[test]
    fn own_is_steer_without_the_admins_pass() {
        let own = Stewardship::Own;
        assert!(!may_steward(admin(), Some(OTHER), own));
        assert!(!may_steward(admin(), None, own));
        assert!(may_steward(owner(&[PAYMENTS]), Some(PAYMENTS), own));
        assert!(!may_steward(owner(&[PAYMENTS]), Some(OTHER), own));
        assert!(may_steward(owner(&[PAYMENTS]), None, own));
        assert!(!may_steward(viewer(&[PAYMENTS]), Some(PAYMENTS), own));
        assert!(!may_steward(viewer(&[PAYMENTS]), None, own));
        // An admin who is also an owner of the team owns like any owner.
        let both = Steward {
            admin: true,
            owner: true,
            teams: &[PAYMENTS],
        };
        assert!(may_steward(both, Some(PAYMENTS), own));
        assert!(!may_steward(both, Some(OTHER), own));
    }

    fn owned(team: i64, reason: OwnerReason) -> Owner {
        Owner {
            team: Team {
                id: team,
                name: format!("team{team}"),
            },
            reason,
        }
    }

    #[test]
    fn claim_is_admins_or_an_owner_taking_the_unowned_or_their_own_inherited_for_their_team() {
        let by_stream = |t| {
            owned(
                t,
                OwnerReason::ByStream {
                    topic: "orders".into(),
                },
            )
        };
        let claimed = |t| owned(t, OwnerReason::Claimed { at: None });
        // Admins give anything to anyone, or leave it unowned.
        for (now, to) in [
            (Some(claimed(OTHER)), Some(PAYMENTS)),
            (Some(by_stream(OTHER)), Some(PAYMENTS)),
            (None, Some(OTHER)),
            (Some(claimed(PAYMENTS)), None),
        ] {
            assert!(may_claim(admin(), now.as_ref(), to), "{now:?} -> {to:?}");
        }
        let me = owner(&[PAYMENTS]);
        assert!(may_claim(me, None, Some(PAYMENTS)));
        // Another team's, by claim or by stream: never.
        assert!(!may_claim(me, Some(&claimed(OTHER)), Some(PAYMENTS)));
        assert!(!may_claim(me, Some(&by_stream(OTHER)), Some(PAYMENTS)));
        // Their own team's by stream: made explicit, for their team only.
        assert!(may_claim(me, Some(&by_stream(PAYMENTS)), Some(PAYMENTS)));
        assert!(!may_claim(me, Some(&by_stream(PAYMENTS)), Some(OTHER)));
        assert!(!may_claim(me, Some(&by_stream(PAYMENTS)), None));
        // Claimed already, even by their own team: an admin's to move.
        assert!(!may_claim(me, Some(&claimed(PAYMENTS)), Some(PAYMENTS)));
        // For a team they are not in, or for no team.
        assert!(!may_claim(me, None, Some(OTHER)));
        assert!(!may_claim(me, None, None));
        assert!(!may_claim(viewer(&[PAYMENTS]), None, Some(PAYMENTS)));
    }

    #[test]
    fn act_is_admins_or_any_member_of_the_owning_team() {
        let act = Stewardship::Act;
        assert!(may_steward(admin(), Some(OTHER), act));
        assert!(may_steward(admin(), None, act));
        assert!(may_steward(owner(&[PAYMENTS]), Some(PAYMENTS), act));
        assert!(!may_steward(owner(&[PAYMENTS]), Some(OTHER), act));
        // Unowned: nobody's team, so only admins.
        assert!(!may_steward(owner(&[PAYMENTS]), None, act));
        // No role needed: membership is enough.
        assert!(may_steward(viewer(&[PAYMENTS]), Some(PAYMENTS), act));
        assert!(!may_steward(viewer(&[PAYMENTS]), Some(OTHER), act));
        assert!(!may_steward(viewer(&[PAYMENTS]), None, act));
    }

    #[test]
    fn owners_describe_their_teams_and_unowned_streams_for_their_team() {
        let me = owner(&[PAYMENTS]);
        let wanted = entry(Some(PAYMENTS), "payments");
        assert_eq!(
            may_describe(me, entry(Some(PAYMENTS), "payments"), wanted, 0),
            Ok(())
        );
        assert_eq!(may_describe(me, entry(None, "payments"), wanted, 0), Ok(()));
        assert_eq!(
            may_describe(me, entry(Some(OTHER), "payments"), wanted, 0),
            Err(DescribeRefusal::NotSteward)
        );
        // Giving a stream away, or leaving it unowned, is an admin's.
        for to in [Some(OTHER), None] {
            assert_eq!(
                may_describe(
                    me,
                    entry(Some(PAYMENTS), "payments"),
                    entry(to, "payments"),
                    0
                ),
                Err(DescribeRefusal::NotSteward)
            );
        }
        let viewer = Steward {
            admin: false,
            owner: false,
            teams: &[PAYMENTS],
        };
        assert_eq!(
            may_describe(viewer, entry(Some(PAYMENTS), "payments"), wanted, 0),
            Err(DescribeRefusal::NotSteward)
        );
    }

    #[test]
    fn owners_never_move_a_stream_to_another_domain() {
        let me = owner(&[PAYMENTS]);
        let refused = may_describe(
            me,
            entry(Some(PAYMENTS), "payments"),
            entry(Some(PAYMENTS), "lenient"),
            0,
        );
        assert!(
            matches!(refused, Err(DescribeRefusal::DomainIsAdmins { ref from, ref to })
                if from == "payments" && to == "lenient"),
            "{refused:?}"
        );
        // Not even into a domain when the stream has none yet, nor out of one.
        assert!(may_describe(me, entry(None, ""), entry(Some(PAYMENTS), "payments"), 0).is_err());
        assert!(
            may_describe(
                me,
                entry(Some(PAYMENTS), "payments"),
                entry(Some(PAYMENTS), ""),
                0
            )
            .is_err()
        );
        // White space around the same name is no move.
        assert_eq!(
            may_describe(
                me,
                entry(Some(PAYMENTS), "payments"),
                entry(Some(PAYMENTS), " payments "),
                0
            ),
            Ok(())
        );
    }

    #[test]
    fn owners_never_change_the_declared_level() {
        let me = owner(&[PAYMENTS]);
        let now = entry(Some(PAYMENTS), "payments");
        for to in [None, Some("NONE")] {
            let wanted = StreamEntry {
                compatibility: to,
                ..now
            };
            assert!(
                matches!(
                    may_describe(me, now, wanted, 0),
                    Err(DescribeRefusal::LevelIsAdmins { .. })
                ),
                "{to:?}"
            );
        }
    }

    #[test]
    fn admins_move_domains_and_levels_only_without_open_items() {
        let now = entry(Some(PAYMENTS), "payments");
        let moved = entry(Some(PAYMENTS), "ledger");
        assert_eq!(may_describe(admin(), now, moved, 0), Ok(()));
        let refused = may_describe(admin(), now, moved, 2);
        assert_eq!(refused, Err(DescribeRefusal::OpenItems { open: 2 }));
        assert!(refused.is_err_and(|r| r.is_conflict()));
        let relevelled = StreamEntry {
            compatibility: Some("FULL"),
            ..now
        };
        assert_eq!(
            may_describe(admin(), now, relevelled, 1),
            Err(DescribeRefusal::OpenItems { open: 1 })
        );
        // Other fields change whatever is open.
        assert_eq!(
            may_describe(admin(), now, entry(Some(OTHER), "payments"), 3),
            Ok(())
        );
        assert_eq!(may_describe(owner(&[PAYMENTS]), now, now, 3), Ok(()));
    }
}
