//! "Notify owners": who may send an impact to the teams it reaches, which
//! team gets which nodes, and what their inbox says.

use super::impact::Impact;
use crate::access::stewardship::{Steward, Stewardship, may_steward};
use std::collections::BTreeMap;

/// Whether `who` may send the impact of a node owned by `owner_team`
/// (`None`: unowned) to its owners: an admin, or an owner (the role) of
/// the team that owns it. Unowned, only admins: nobody's team speaks for it.
pub fn may_notify(who: Steward<'_>, owner_team: Option<i64>) -> bool {
    who.admin || (who.owner && may_steward(who, owner_team, Stewardship::Act))
}

/// Each owner team the impact reaches (by name), with the indexes of its
/// nodes in [`Impact::nodes`], nearer first. Nodes without an owner are
/// nobody's to tell.
pub fn by_owner(i: &Impact) -> BTreeMap<&str, Vec<usize>> {
    let mut out: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (n, r) in i.nodes.iter().enumerate() {
        if let Some(team) = r.owner.as_deref() {
            out.entry(team).or_default().push(n);
        }
    }
    out
}

/// The inbox line a team's members get.
pub fn message(start: &str, team: &str, nodes: usize, partial: bool) -> String {
    format!(
        "What breaks if {start} changes: {nodes} {} owned by {team}{}",
        if nodes == 1 { "node" } else { "nodes" },
        if partial {
            " (partial: the walk was cut; ask again with a larger depth or budget)"
        } else {
            ""
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lineage::graph::{Known, NodeKey};
    use crate::lineage::impact::{Cut, Direction, Reached};

    fn steward(admin: bool, owner: bool, teams: &[i64]) -> Steward<'_> {
        Steward {
            admin,
            owner,
            teams,
        }
    }

    #[test]
    fn owners_of_the_topics_team_and_admins_may_notify_nobody_else() {
        assert!(may_notify(steward(true, false, &[]), Some(1)));
        assert!(may_notify(steward(true, false, &[]), None));
        assert!(may_notify(steward(false, true, &[1]), Some(1)));
        // An owner of another team, a viewer of the team, anyone on an unowned topic.
        assert!(!may_notify(steward(false, true, &[2]), Some(1)));
        assert!(!may_notify(steward(false, false, &[1]), Some(1)));
        assert!(!may_notify(steward(false, true, &[1]), None));
    }

    fn reached(name: &str, owner: Option<&str>) -> Reached {
        Reached {
            key: NodeKey::dataset("n", name),
            depth: 1,
            parent: None,
            via: Known::default(),
            known: Known::default(),
            owner: owner.map(str::to_string),
            breaks: Vec::new(),
        }
    }

    #[test]
    fn each_team_gets_its_own_nodes_and_the_unowned_go_to_nobody() {
        let i = Impact {
            start: NodeKey::dataset("n", "t"),
            direction: Direction::Downstream,
            nodes: vec![
                reached("a", Some("payments")),
                reached("b", None),
                reached("c", Some("risk")),
                reached("d", Some("payments")),
            ],
            partial: false,
            cut: Cut::default(),
        };
        let got = by_owner(&i);
        assert_eq!(got.len(), 2);
        assert_eq!(got["payments"], vec![0, 3]);
        assert_eq!(got["risk"], vec![2]);
    }

    #[test]
    fn the_message_says_how_many_and_whether_it_was_cut() {
        assert_eq!(
            message("dataset:k:t", "risk", 1, false),
            "What breaks if dataset:k:t changes: 1 node owned by risk"
        );
        assert!(message("dataset:k:t", "risk", 3, true).contains("3 nodes owned by risk (partial"));
    }
}
