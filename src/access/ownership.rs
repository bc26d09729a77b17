//! Ownership: who owns a thing, and why. One rule for every kind of thing
//! a team may own, so flag routing, "notify owners", claims, drafts, check
//! readability, owner columns and metric labels all give the same answer.
//!
//! - A **stream** is owned by the team its catalog entry names.
//! - A **consumer group** by the team it was claimed for, else by the owner
//!   of a stream it reads (the first by topic, so the answer is stable).
//! - A **connector** by the team it was claimed for, else by the owner of a
//!   stream it reads or writes (first by topic).
//! - A **lineage node**: a Kafka dataset of a watched cluster is its
//!   stream, and a job Streamkeeper derived from a consumer group or a
//!   connector is that group or connector; anything else by the team an
//!   admin or that team set ([`may_set_node_owner`]), else by its
//!   `ownership` facet from a sender allowed to speak for the team it
//!   names ([`may_speak_for`]). A newer facet replaces an owning one only
//!   from someone who may speak for both teams ([`facet_replaces`]):
//!   otherwise one event from another team re-routes the owner's notices
//!   to itself, or leaves them with nobody.
//!
//! The server gathers the facts (one place, `platform::ownership`) and
//! calls these; nothing else decides an owner.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::fmt;

/// A team, by id and name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Team {
    pub id: i64,
    pub name: String,
}

/// Why a team owns a thing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum OwnerReason {
    /// The stream's catalog entry names the team.
    Catalog,
    /// The group or connector was claimed for the team;
    /// `at` is when, if it was recorded.
    Claimed { at: Option<DateTime<Utc>> },
    /// The team owns `topic`, which the thing reads or writes (or is).
    ByStream { topic: String },
    /// The thing is the consumer group or connector `name` Streamkeeper
    /// derived the lineage job from, owned for `because`.
    ByDerived {
        name: String,
        because: Box<OwnerReason>,
    },
    /// The latest `ownership` facet named the team, sent by `sender`, who
    /// may speak for it.
    ByFacet { sender: String },
    /// A lineage node's owner was set to the team by `by` (an admin or a
    /// member of that team) at `at`.
    SetBy { by: String, at: DateTime<Utc> },
}

/// A thing's owner team, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    pub team: Team,
    pub reason: OwnerReason,
}

impl Owner {
    pub fn team_id(&self) -> i64 {
        self.team.id
    }

    /// Whether the team holds it by a claim of its own (rather than
    /// inheriting it from a stream, a catalog entry or a facet).
    pub fn is_claimed(&self) -> bool {
        matches!(self.reason, OwnerReason::Claimed { .. })
    }
}

/// The owner's team id, `None` when unowned: what the stewardship rules
/// take.
pub fn team_id(owner: Option<&Owner>) -> Option<i64> {
    owner.map(Owner::team_id)
}

/// "payments's (by stream orders)", or "unowned": for a refusal.
pub fn describe(owner: Option<&Owner>) -> String {
    owner.map_or_else(
        || "unowned".to_string(),
        |o| format!("{}'s ({})", o.team.name, o.reason),
    )
}

impl fmt::Display for OwnerReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OwnerReason::Catalog => write!(f, "in the catalog"),
            OwnerReason::Claimed { at: Some(at) } => write!(f, "claimed on {}", at.date_naive()),
            OwnerReason::Claimed { at: None } => write!(f, "claimed"),
            OwnerReason::ByStream { topic } => write!(f, "by stream {topic}"),
            OwnerReason::ByDerived { name, because } => write!(f, "as {name}, {because}"),
            OwnerReason::ByFacet { sender } => write!(f, "by ownership facet from {sender}"),
            OwnerReason::SetBy { by, at } => write!(f, "set by {by} on {}", at.date_naive()),
        }
    }
}

impl fmt::Display for Owner {
    /// "payments (by stream orders)", "payments (claimed on 2026-12-01)".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.team.name, self.reason)
    }
}

/// A stream a thing reads or writes, with its catalog owner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamFact {
    pub topic: String,
    pub owner: Option<Team>,
}

/// A claim recorded on a group or connector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claim {
    pub team: Team,
    pub at: Option<DateTime<Utc>>,
}

/// An owner set on a lineage node: the team, who set it and when.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetOwner {
    pub team: Team,
    pub by: String,
    pub at: DateTime<Utc>,
}

/// A stream's owner: its catalog entry's team.
pub fn of_stream(catalog: Option<Team>) -> Option<Owner> {
    catalog.map(|team| Owner {
        team,
        reason: OwnerReason::Catalog,
    })
}

/// The claim, else the owner of the first owned stream by topic.
fn claimed_else_by_stream(claim: Option<Claim>, streams: &[StreamFact]) -> Option<Owner> {
    if let Some(c) = claim {
        return Some(Owner {
            team: c.team,
            reason: OwnerReason::Claimed { at: c.at },
        });
    }
    streams
        .iter()
        .filter_map(|s| s.owner.as_ref().map(|t| (s.topic.as_str(), t)))
        .min_by(|a, b| a.0.cmp(b.0))
        .map(|(topic, team)| Owner {
            team: team.clone(),
            reason: OwnerReason::ByStream {
                topic: topic.to_string(),
            },
        })
}

/// A consumer group's owner: claimed, else by the streams it reads.
pub fn of_group(claim: Option<Claim>, reads: &[StreamFact]) -> Option<Owner> {
    claimed_else_by_stream(claim, reads)
}

/// A connector's owner: claimed, else by the streams it reads or writes.
pub fn of_connector(claim: Option<Claim>, touches: &[StreamFact]) -> Option<Owner> {
    claimed_else_by_stream(claim, touches)
}

/// The sender of an `ownership` facet, as the rule needs them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sender {
    pub username: String,
    pub admin: bool,
    /// The teams they belong to.
    pub teams: Vec<i64>,
}

/// Whether `sender` may say who owns a thing for `team`: an admin, or a
/// member of that team.
pub fn may_speak_for(sender: &Sender, team: i64) -> bool {
    sender.admin || sender.teams.contains(&team)
}

/// An `ownership` facet a lineage node received.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FacetFact {
    /// The team its first owner names, when that is a known team.
    pub team: Option<Team>,
    /// Who sent it; `None` when not recorded (folded before senders were
    /// kept), which speaks for nobody.
    pub sender: Option<Sender>,
}

impl FacetFact {
    /// The team it names, when its sender may speak for that team.
    fn counted(&self) -> Option<&Team> {
        let team = self.team.as_ref()?;
        self.sender
            .as_ref()
            .filter(|s| may_speak_for(s, team.id))
            .map(|_| team)
    }
}

/// Whether a newer `ownership` facet replaces the one a node has: always
/// when the one it has names no owner ([`of_node`]); else only when the
/// new one counts and names the same team, or its sender may also speak
/// for the team the old one names. So no team takes another's node, nor
/// leaves it unowned, by sending a facet: the latest facet is not simply
/// the owner.
pub fn facet_replaces(stored: Option<&FacetFact>, new: &FacetFact) -> bool {
    let Some(old) = stored.and_then(FacetFact::counted) else {
        return true;
    };
    match (new.counted(), &new.sender) {
        (Some(team), Some(sender)) => team.id == old.id || may_speak_for(sender, old.id),
        _ => false,
    }
}

/// Which of the `ownership` facets one batch brings for a node (in the
/// order the graph merges them: by time, a later event on a tie) are
/// taken: each must replace the one before it ([`facet_replaces`]), the
/// stored one or the last taken, so no facet of the batch is kept
/// unchecked because a later one was allowed, nor one allowed lost
/// because a later one was not. The last taken is the one to keep; none
/// taken keeps the stored one.
pub fn facets_taken(stored: Option<&FacetFact>, batch: &[FacetFact]) -> Vec<bool> {
    let mut current = stored;
    batch
        .iter()
        .map(|f| {
            let taken = facet_replaces(current, f);
            if taken {
                current = Some(f);
            }
            taken
        })
        .collect()
}

/// What is known of a lineage node for its owner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeFacts {
    /// A topic of a watched cluster: its stream (`None`: no catalog entry).
    KafkaDataset { stream: StreamFact },
    /// A job Streamkeeper derived from the consumer group or connector
    /// `name`, whose owner is `owner` (by [`of_group`] / [`of_connector`]).
    Derived { name: String, owner: Option<Owner> },
    /// Anything else: the owner set on it, and its latest ownership facet.
    Other {
        set: Option<SetOwner>,
        facet: Option<FacetFact>,
    },
}

/// A lineage dataset's or job's owner.
pub fn of_node(facts: NodeFacts) -> Option<Owner> {
    match facts {
        NodeFacts::KafkaDataset { stream } => stream.owner.map(|team| Owner {
            team,
            reason: OwnerReason::ByStream {
                topic: stream.topic,
            },
        }),
        NodeFacts::Derived { name, owner } => owner.map(|o| Owner {
            team: o.team,
            reason: OwnerReason::ByDerived {
                name,
                because: Box::new(o.reason),
            },
        }),
        NodeFacts::Other { set: Some(s), .. } => Some(Owner {
            team: s.team,
            reason: OwnerReason::SetBy { by: s.by, at: s.at },
        }),
        NodeFacts::Other { set: None, facet } => {
            let f = facet?;
            let team = f.team?;
            let sender = f.sender.filter(|s| may_speak_for(s, team.id))?;
            Some(Owner {
                team,
                reason: OwnerReason::ByFacet {
                    sender: sender.username,
                },
            })
        }
    }
}

/// Why a lineage node's owner may not be set as asked.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SetRefusal {
    /// Another team owns it (the description says whose and why).
    #[error("it is {0}: only an admin may give another team's node away")]
    Others(String),
    /// Only an admin or a member of a team gives a node to that team.
    #[error("only an admin or a member of that team may give a node to it")]
    NotMember,
    /// A Kafka dataset is its stream's and a derived job its group's or
    /// connector's: an owner set on the node would change nothing. The
    /// words say where it comes from ([`NodeFacts::inherited`]).
    #[error("{0}")]
    Inherited(String),
}

impl NodeFacts {
    /// Whether an owner set on the node counts ([`of_node`]).
    pub fn settable(&self) -> bool {
        matches!(self, NodeFacts::Other { .. })
    }

    /// Where the owner of a node that is not set on it comes from, in
    /// words ("its owner comes from the stream orders (payments): …");
    /// `None` for a node whose owner is set on it.
    pub fn inherited(&self) -> Option<String> {
        let whose = |o: Option<&Owner>| o.map_or_else(|| "unowned".to_string(), |o| o.to_string());
        match self {
            NodeFacts::KafkaDataset { stream } => Some(format!(
                "its owner comes from the stream {} ({}): describe the stream to change it",
                stream.topic,
                stream.owner.as_ref().map_or("unowned", |t| t.name.as_str())
            )),
            NodeFacts::Derived { name, owner } => Some(format!(
                "its owner comes from the consumer group or connector {name} ({}): claim that to change it",
                whose(owner.as_ref())
            )),
            NodeFacts::Other { .. } => None,
        }
    }
}

/// Whether `who` may give the lineage node of `facts` to `for_team`
/// (`None`: clear the owner set on it): an admin may; anyone else only
/// for a team they belong to, and only a node that is unowned or their
/// own team's, so no team takes what another owns.
pub fn may_set_node_owner(
    who: &Sender,
    facts: &NodeFacts,
    for_team: Option<i64>,
) -> Result<(), SetRefusal> {
    let current = of_node(facts.clone());
    let mine = |t: i64| who.teams.contains(&t);
    if !who.admin {
        if let Some(o) = current.as_ref().filter(|o| !mine(o.team.id)) {
            return Err(SetRefusal::Others(describe(Some(o))));
        }
        // Clearing takes a team of one's own to be clearing it from.
        let team = for_team.or(current.as_ref().map(Owner::team_id));
        if !team.is_some_and(mine) {
            return Err(SetRefusal::NotMember);
        }
    }
    match facts.inherited() {
        Some(words) => Err(SetRefusal::Inherited(words)),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn team(id: i64, name: &str) -> Team {
        Team {
            id,
            name: name.to_string(),
        }
    }

    fn payments() -> Team {
        team(1, "payments")
    }

    fn fraud() -> Team {
        team(2, "fraud")
    }

    fn stream(topic: &str, owner: Option<Team>) -> StreamFact {
        StreamFact {
            topic: topic.to_string(),
            owner,
        }
    }

    fn at(s: &str) -> DateTime<Utc> {
        s.parse().expect("time")
    }

    fn sender(name: &str, admin: bool, teams: &[i64]) -> Option<Sender> {
        Some(Sender {
            username: name.to_string(),
            admin,
            teams: teams.to_vec(),
        })
    }

    #[test]
    fn a_stream_is_its_catalog_entrys() {
        let o = of_stream(Some(payments())).expect("owned");
        assert_eq!(o.reason, OwnerReason::Catalog);
        assert_eq!(o.to_string(), "payments (in the catalog)");
        assert_eq!(of_stream(None), None);
    }

    #[test]
    fn groups_and_connectors_are_claimed_else_by_stream() {
        let reads = [
            stream("shipments", Some(fraud())),
            stream("clicks", None),
            stream("orders", Some(payments())),
        ];
        for rule in [of_group, of_connector] {
            // Unclaimed: the first owned stream by topic.
            let o = rule(None, &reads).expect("inherited");
            assert_eq!(o.team, payments());
            assert_eq!(o.to_string(), "payments (by stream orders)");
            assert!(!o.is_claimed());
            // A claim wins over every stream.
            let claim = Claim {
                team: fraud(),
                at: Some(at("2026-12-01T10:00:00Z")),
            };
            let o = rule(Some(claim), &reads).expect("claimed");
            assert_eq!(o.to_string(), "fraud (claimed on 2026-12-01)");
            assert!(o.is_claimed());
            // Nothing owned, nothing claimed: unowned.
            assert_eq!(rule(None, &[stream("clicks", None)]), None);
            assert_eq!(rule(None, &[]), None);
        }
    }

    #[test]
    fn a_kafka_dataset_is_its_streams_whatever_facets_say() {
        let o = of_node(NodeFacts::KafkaDataset {
            stream: stream("orders", Some(payments())),
        });
        assert_eq!(
            o.map(|o| o.to_string()).as_deref(),
            Some("payments (by stream orders)")
        );
        assert_eq!(
            of_node(NodeFacts::KafkaDataset {
                stream: stream("clicks", None)
            }),
            None
        );
    }

    #[test]
    fn a_derived_job_is_its_group_or_connector() {
        let group = of_group(None, &[stream("orders", Some(payments()))]);
        let o = of_node(NodeFacts::Derived {
            name: "billing".into(),
            owner: group,
        })
        .expect("owned");
        assert_eq!(o.team, payments());
        assert_eq!(o.to_string(), "payments (as billing, by stream orders)");
        assert_eq!(
            of_node(NodeFacts::Derived {
                name: "x".into(),
                owner: None
            }),
            None
        );
    }

    #[test]
    fn other_nodes_are_the_set_team_else_a_facet_from_someone_allowed() {
        let facet = |team: Option<Team>, sender| Some(FacetFact { team, sender });
        // Set by an admin or the team: wins over any facet, and says who set it.
        let set = SetOwner {
            team: payments(),
            by: "pat".into(),
            at: at("2026-12-07T09:00:00Z"),
        };
        let o = of_node(NodeFacts::Other {
            set: Some(set),
            facet: facet(Some(fraud()), sender("root", true, &[])),
        })
        .expect("owned");
        assert_eq!(o.team, payments());
        assert_eq!(o.to_string(), "payments (set by pat on 2026-12-07)");
        // A member of the named team speaks for it; an admin too.
        for s in [sender("pat", false, &[1]), sender("root", true, &[])] {
            let o = of_node(NodeFacts::Other {
                set: None,
                facet: facet(Some(payments()), s),
            })
            .expect("owned");
            assert!(matches!(o.reason, OwnerReason::ByFacet { .. }));
            assert_eq!(o.team, payments());
        }
        // Another team's member does not: the facet owns nothing.
        assert_eq!(
            of_node(NodeFacts::Other {
                set: None,
                facet: facet(Some(payments()), sender("mallory", false, &[2])),
            }),
            None
        );
        // No sender recorded, an unknown team, no facet: unowned.
        for f in [
            facet(Some(payments()), None),
            facet(None, sender("root", true, &[])),
            None,
        ] {
            assert_eq!(
                of_node(NodeFacts::Other {
                    set: None,
                    facet: f
                }),
                None
            );
        }
    }

    #[test]
    fn team_id_is_none_when_unowned() {
        assert_eq!(team_id(None), None);
        assert_eq!(team_id(of_stream(Some(fraud())).as_ref()), Some(2));
    }

    #[test]
    fn a_node_is_given_by_an_admin_or_a_member_never_taken_from_another_team() {
        let pat = sender("pat", false, &[1]).expect("pat");
        let mallory = sender("mallory", false, &[2]).expect("mallory");
        let root = sender("root", true, &[]).expect("root");
        let free = NodeFacts::Other {
            set: None,
            facet: None,
        };
        let payments_set = NodeFacts::Other {
            set: Some(SetOwner {
                team: payments(),
                by: "pat".into(),
                at: at("2026-12-07T09:00:00Z"),
            }),
            facet: None,
        };
        // Unowned: a member gives it to their own team, not to another.
        assert_eq!(may_set_node_owner(&pat, &free, Some(1)), Ok(()));
        assert_eq!(
            may_set_node_owner(&pat, &free, Some(2)),
            Err(SetRefusal::NotMember)
        );
        assert_eq!(
            may_set_node_owner(&pat, &free, None),
            Err(SetRefusal::NotMember)
        );
        // payments': fraud may not take it; payments may clear it.
        assert!(matches!(
            may_set_node_owner(&mallory, &payments_set, Some(2)),
            Err(SetRefusal::Others(w)) if w == "payments's (set by pat on 2026-12-07)"
        ));
        assert_eq!(may_set_node_owner(&pat, &payments_set, None), Ok(()));
        assert_eq!(may_set_node_owner(&root, &payments_set, Some(2)), Ok(()));
        // A facet from someone allowed owns it as much as a set owner.
        let by_facet = NodeFacts::Other {
            set: None,
            facet: Some(FacetFact {
                team: Some(payments()),
                sender: sender("pat", false, &[1]),
            }),
        };
        assert!(matches!(
            may_set_node_owner(&mallory, &by_facet, Some(2)),
            Err(SetRefusal::Others(_))
        ));
        // A topic is its stream's: nobody sets it on the node.
        let topic = NodeFacts::KafkaDataset {
            stream: stream("orders", Some(payments())),
        };
        assert!(matches!(
            may_set_node_owner(&mallory, &topic, Some(2)),
            Err(SetRefusal::Others(_))
        ));
        assert_eq!(
            may_set_node_owner(&root, &topic, Some(2)).map_err(|e| e.to_string()),
            Err("its owner comes from the stream orders (payments): describe the stream to change it".to_string())
        );
        // A derived job is its group's or connector's, owned or not.
        let job = NodeFacts::Derived {
            name: "billing".into(),
            owner: of_group(None, &[stream("orders", Some(payments()))]),
        };
        assert_eq!(
            may_set_node_owner(&pat, &job, Some(1)).map_err(|e| e.to_string()),
            Err("its owner comes from the consumer group or connector billing (payments (by stream orders)): claim that to change it".to_string())
        );
        let unowned = NodeFacts::Derived {
            name: "audit".into(),
            owner: None,
        };
        assert!(matches!(
            may_set_node_owner(&pat, &unowned, Some(1)),
            Err(SetRefusal::Inherited(w)) if w.contains("audit (unowned)")
        ));
        assert_eq!(free.inherited(), None);
    }

    #[test]
    fn every_facet_of_a_batch_is_checked_in_order() {
        let facet = |team: Option<Team>, s: Option<Sender>| FacetFact { team, sender: s };
        let by_pat = facet(Some(payments()), sender("pat", false, &[1]));
        let by_mallory = facet(Some(fraud()), sender("mallory", false, &[2]));
        // Nothing stored: the first goes in; fraud's then owns it, and
        // payments' member may not take it from fraud.
        assert_eq!(
            facets_taken(None, &[by_mallory.clone(), by_pat.clone()]),
            [true, false]
        );
        // payments' first: fraud's later one is checked against it, not
        // against the nothing stored.
        assert_eq!(
            facets_taken(None, &[by_pat.clone(), by_mallory.clone()]),
            [true, false]
        );
        // A spoof (names payments, sent by fraud) owns nothing: the
        // allowed one after it is taken.
        let spoof = facet(Some(payments()), sender("mallory", false, &[2]));
        assert_eq!(
            facets_taken(None, &[spoof.clone(), by_pat.clone()]),
            [true, true]
        );
        // Stored payments': fraud's is refused, payments' restatement taken.
        assert_eq!(
            facets_taken(Some(&by_pat), &[by_mallory, spoof, by_pat.clone()]),
            [false, false, true]
        );
        assert!(facets_taken(Some(&by_pat), &[]).is_empty());
    }

    #[test]
    fn a_facet_replaces_an_owning_one_only_from_someone_who_speaks_for_both() {
        let facet = |team: Option<Team>, s: Option<Sender>| FacetFact { team, sender: s };
        let by_pat = facet(Some(payments()), sender("pat", false, &[1]));
        // Nothing counted yet: any facet goes in (it may own nothing).
        assert!(facet_replaces(None, &by_pat));
        let spoof = facet(Some(payments()), sender("mallory", false, &[2]));
        assert!(facet_replaces(Some(&spoof), &by_pat));
        // payments' by pat: fraud neither takes it nor unsets it.
        let takeover = facet(Some(fraud()), sender("mallory", false, &[2]));
        assert!(!facet_replaces(Some(&by_pat), &takeover));
        assert!(!facet_replaces(Some(&by_pat), &spoof));
        assert!(!facet_replaces(
            Some(&by_pat),
            &facet(None, sender("root", true, &[]))
        ));
        // payments restates it; a member of both hands it over; an admin may.
        assert!(facet_replaces(
            Some(&by_pat),
            &facet(Some(payments()), sender("pia", false, &[1]))
        ));
        assert!(facet_replaces(
            Some(&by_pat),
            &facet(Some(fraud()), sender("both", false, &[1, 2]))
        ));
        assert!(facet_replaces(
            Some(&by_pat),
            &facet(Some(fraud()), sender("root", true, &[]))
        ));
    }
}
