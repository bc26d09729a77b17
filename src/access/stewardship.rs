//! Describing a stream: what its owners may change and what only admins
//! may. A stream's domain decides who approves changes to it and at which
//! autonomy level, so whoever could move a stream between domains could
//! pick the approvers of their own change; its declared compatibility level
//! decides what the schema checks accept. Both are therefore an admin's to
//! set, and never while changes to the stream are open for review (their
//! approvers and level were frozen under the old ones).

use thiserror::Error;

/// The person describing the stream, as these rules see them.
#[derive(Clone, Copy, Debug)]
pub struct Steward<'a> {
    pub admin: bool,
    pub owner: bool,
    /// The teams they belong to.
    pub teams: &'a [i64],
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
        let steers_now = now.owner_team.is_none_or(|t| who.teams.contains(&t));
        let gives_to_own = wanted.owner_team.is_some_and(|t| who.teams.contains(&t));
        if !(who.owner && steers_now && gives_to_own) {
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
