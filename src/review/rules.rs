//! Who may do what to a review item, and when. The server gathers the
//! facts under a row lock and asks these functions; nothing else decides.

use super::{Autonomy, State};
use crate::accounts::role::Role;
use crate::schemas::Verdict;

/// What the rules need to know about an item, as of its current revision.
#[derive(Clone, Copy, Debug)]
pub struct ItemFacts<'a> {
    pub domain: &'a str,
    pub state: State,
    pub revision: i32,
    pub content_hash: &'a str,
    pub author_id: i64,
    /// Everyone who edited any revision (the author is not listed).
    pub editor_ids: &'a [i64],
    /// The named approvers, frozen when this revision was made.
    pub approver_ids: &'a [i64],
    /// Who approved this revision.
    pub approved_by: &'a [i64],
    /// Approvals this revision needs, frozen with the approvers.
    pub required: i16,
}

impl ItemFacts<'_> {
    fn took_part(&self, user_id: i64) -> Option<Refusal> {
        if user_id == self.author_id {
            Some(Refusal::SelfApproval)
        } else if self.editor_ids.contains(&user_id) {
            Some(Refusal::EditorApproval)
        } else {
            None
        }
    }

    /// Distinct approvals of this revision that count: by named approvers
    /// who neither wrote nor edited it. Recounted rather than trusted, so
    /// a row that slipped past the checks still cannot tip an apply.
    pub fn counted_approvals(&self) -> usize {
        let mut counted: Vec<i64> = self
            .approved_by
            .iter()
            .copied()
            .filter(|id| self.approver_ids.contains(id) && self.took_part(*id).is_none())
            .collect();
        counted.sort_unstable();
        counted.dedup();
        counted.len()
    }

    /// Named approvers who could still approve: not the author, not an
    /// editor. Fewer than `required` means the item cannot be approved as
    /// the domain's approvers stand.
    pub fn eligible_approvers(&self) -> usize {
        self.approver_ids
            .iter()
            .filter(|id| self.took_part(**id).is_none())
            .count()
    }

    fn enough_approvals(&self) -> bool {
        self.counted_approvals() >= usize::try_from(self.required.max(1)).unwrap_or(1)
    }
}

/// The person acting on an item.
#[derive(Clone, Copy, Debug)]
pub struct Approver<'a> {
    pub user_id: i64,
    pub roles: &'a [Role],
}

/// Why an action on an item is refused, in words for the person refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("This item is {}; it takes no more changes.", .0.describe())]
    Closed(State),
    #[error("Only items in review can be approved or rejected; this one is {}.", .0.describe())]
    NotInReview(State),
    #[error("You proposed this change; someone else must approve it.")]
    SelfApproval,
    #[error("You edited this change; someone who did not edit it must approve it.")]
    EditorApproval,
    #[error("Approving and rejecting need the approver role.")]
    NotApprover,
    #[error("You are not a named approver of domain {0}.")]
    NotNamed(String),
    #[error(
        "The change is now at revision {current}: it was edited or its base moved since you loaded it, so the content hash you approved is not the current one. Reload it and review it again."
    )]
    StaleHash { current: i32 },
    #[error("You already approved revision {0}; an approval counts once per person.")]
    AlreadyApproved(i32),
    #[error("Say why you reject it: the author needs the reason.")]
    ReasonRequired,
    #[error("Only the author and owners of the stream's team may edit or withdraw this change.")]
    NotEditor,
    #[error(
        "Someone changed this item since you loaded it (it is now at revision {current}); reload it and edit again."
    )]
    StaleEdit { current: i32 },
    #[error("Only approved items can be applied; this one is {}.", .0.describe())]
    NotApproved(State),
    #[error("It has {have} of the {need} approval(s) domain {domain} requires.")]
    NotEnoughApprovals {
        domain: String,
        have: usize,
        need: i16,
    },
    #[error(
        "Domain {domain} is at {}: Streamkeeper does not write there. Apply it by hand with the request on the item's page, or ask an admin to raise the level.",
        .level.as_str()
    )]
    LevelDoesNotApply { domain: String, level: Autonomy },
    #[error("Domain {0} is at watch: it takes no proposals. An admin can raise it to suggest.")]
    Watching(String),
}

impl Refusal {
    /// Refusals that mean "someone else acted first": the caller should
    /// reload, not fix their request.
    pub fn is_conflict(&self) -> bool {
        matches!(
            self,
            Refusal::StaleHash { .. }
                | Refusal::StaleEdit { .. }
                | Refusal::Closed(_)
                | Refusal::NotInReview(_)
                | Refusal::NotApproved(_)
                | Refusal::AlreadyApproved(_)
        )
    }
}

/// Whether `who` may approve the item at `offered_hash`.
pub fn check_approval(
    item: &ItemFacts<'_>,
    who: Approver<'_>,
    offered_hash: &str,
) -> Result<(), Refusal> {
    if item.state != State::InReview {
        return Err(Refusal::NotInReview(item.state));
    }
    decider(item, who)?;
    if !offered_hash.trim().eq_ignore_ascii_case(item.content_hash) {
        return Err(Refusal::StaleHash {
            current: item.revision,
        });
    }
    if item.approved_by.contains(&who.user_id) {
        return Err(Refusal::AlreadyApproved(item.revision));
    }
    Ok(())
}

/// Whether `who` may reject the item, with `reason`.
pub fn check_reject(item: &ItemFacts<'_>, who: Approver<'_>, reason: &str) -> Result<(), Refusal> {
    if !matches!(item.state, State::InReview | State::Approved) {
        return Err(Refusal::NotInReview(item.state));
    }
    decider(item, who)?;
    if reason.trim().is_empty() {
        return Err(Refusal::ReasonRequired);
    }
    Ok(())
}

/// Approvers and rejecters: a named approver holding the role who neither
/// wrote nor edited the item.
fn decider(item: &ItemFacts<'_>, who: Approver<'_>) -> Result<(), Refusal> {
    if let Some(r) = item.took_part(who.user_id) {
        return Err(r);
    }
    if !who.roles.contains(&Role::Approver) {
        return Err(Refusal::NotApprover);
    }
    if !item.approver_ids.contains(&who.user_id) {
        return Err(Refusal::NotNamed(item.domain.to_owned()));
    }
    Ok(())
}

/// Whether someone may edit the item they loaded at `loaded_revision`:
/// the author or an owner of the stream's team (`owns_stream`), while it
/// is open. An edit makes a new revision and voids every approval.
pub fn check_edit(
    item: &ItemFacts<'_>,
    user_id: i64,
    owns_stream: bool,
    loaded_revision: i32,
) -> Result<(), Refusal> {
    if item.state.is_closed() {
        return Err(Refusal::Closed(item.state));
    }
    if user_id != item.author_id && !owns_stream {
        return Err(Refusal::NotEditor);
    }
    if loaded_revision != item.revision {
        return Err(Refusal::StaleEdit {
            current: item.revision,
        });
    }
    Ok(())
}

/// Whether someone may withdraw the item: whoever may edit it, while it
/// is open.
pub fn check_withdraw(
    item: &ItemFacts<'_>,
    user_id: i64,
    owns_stream: bool,
) -> Result<(), Refusal> {
    if item.state.is_closed() {
        return Err(Refusal::Closed(item.state));
    }
    if user_id != item.author_id && !item.editor_ids.contains(&user_id) && !owns_stream {
        return Err(Refusal::NotEditor);
    }
    Ok(())
}

/// Whether Streamkeeper may apply the item now: approved (or a failed
/// apply being retried) with enough approvals of this revision, in a
/// domain whose level applies. The base is re-checked by the caller.
pub fn check_apply(item: &ItemFacts<'_>, level: Autonomy) -> Result<(), Refusal> {
    if !matches!(item.state, State::Approved | State::ApplyFailed) {
        return Err(Refusal::NotApproved(item.state));
    }
    if !level.applies() {
        return Err(Refusal::LevelDoesNotApply {
            domain: item.domain.to_owned(),
            level,
        });
    }
    if !item.enough_approvals() {
        return Err(Refusal::NotEnoughApprovals {
            domain: item.domain.to_owned(),
            have: item.counted_approvals(),
            need: item.required,
        });
    }
    Ok(())
}

/// Whether this approval completes the item: after it, the revision has
/// the approvals it needs.
pub fn completes(item: &ItemFacts<'_>, approver_id: i64) -> bool {
    let mut with: Vec<i64> = item.approved_by.to_vec();
    with.push(approver_id);
    ItemFacts {
        approved_by: &with,
        ..*item
    }
    .enough_approvals()
}

/// A change Streamkeeper may apply without approval in an autonomous
/// domain: every check says compatible, so every consumer group reads it
/// and the subject's history accepts it, and it is undone by deleting the
/// version it adds. Anything else waits for approvers.
pub fn is_routine(level: Autonomy, verdict: Verdict) -> bool {
    level == Autonomy::Autonomous && verdict == Verdict::Compatible
}

#[cfg(test)]
mod tests {
    use super::*;

    const AUTHOR: i64 = 1;
    const EDITOR: i64 = 2;
    const ANN: i64 = 3;
    const BOB: i64 = 4;
    const OUTSIDER: i64 = 5;
    const APPROVER: &[Role] = &[Role::Approver];

    fn item<'a>(approved_by: &'a [i64]) -> ItemFacts<'a> {
        ItemFacts {
            domain: "payments",
            state: State::InReview,
            revision: 2,
            content_hash: "abc123",
            author_id: AUTHOR,
            editor_ids: &[EDITOR],
            approver_ids: &[AUTHOR, EDITOR, ANN, BOB],
            approved_by,
            required: 2,
        }
    }

    fn who(user_id: i64) -> Approver<'static> {
        Approver {
            user_id,
            roles: APPROVER,
        }
    }

    #[test]
    fn a_named_approver_approves_the_current_hash() {
        assert_eq!(check_approval(&item(&[]), who(ANN), "abc123"), Ok(()));
        assert_eq!(check_approval(&item(&[]), who(ANN), " ABC123 "), Ok(()));
    }

    #[test]
    fn authors_and_editors_never_approve_even_when_named() {
        assert_eq!(
            check_approval(&item(&[]), who(AUTHOR), "abc123"),
            Err(Refusal::SelfApproval)
        );
        assert_eq!(
            check_approval(&item(&[]), who(EDITOR), "abc123"),
            Err(Refusal::EditorApproval)
        );
        assert_eq!(
            check_reject(&item(&[]), who(AUTHOR), "no"),
            Err(Refusal::SelfApproval)
        );
    }

    #[test]
    fn the_role_and_the_naming_are_both_required() {
        let owner = Approver {
            user_id: ANN,
            roles: &[Role::Owner, Role::Admin],
        };
        assert_eq!(
            check_approval(&item(&[]), owner, "abc123"),
            Err(Refusal::NotApprover)
        );
        assert_eq!(
            check_approval(&item(&[]), who(OUTSIDER), "abc123"),
            Err(Refusal::NotNamed("payments".into()))
        );
    }

    #[test]
    fn a_stale_hash_or_a_second_approval_is_refused() {
        assert_eq!(
            check_approval(&item(&[]), who(ANN), "old"),
            Err(Refusal::StaleHash { current: 2 })
        );
        assert_eq!(
            check_approval(&item(&[ANN]), who(ANN), "abc123"),
            Err(Refusal::AlreadyApproved(2))
        );
    }

    #[test]
    fn only_items_in_review_are_approved() {
        for state in State::ALL.into_iter().filter(|s| *s != State::InReview) {
            let i = ItemFacts { state, ..item(&[]) };
            assert_eq!(
                check_approval(&i, who(ANN), "abc123"),
                Err(Refusal::NotInReview(state))
            );
        }
    }

    #[test]
    fn rejecting_needs_a_reason() {
        assert_eq!(
            check_reject(&item(&[]), who(ANN), "  "),
            Err(Refusal::ReasonRequired)
        );
        assert_eq!(
            check_reject(&item(&[]), who(ANN), "drops a field analytics reads"),
            Ok(())
        );
    }

    #[test]
    fn approvals_count_once_per_eligible_person() {
        // The author's, an editor's and an outsider's rows never count; a
        // duplicate counts once.
        let i = item(&[AUTHOR, EDITOR, OUTSIDER, ANN, ANN]);
        assert_eq!(i.counted_approvals(), 1);
        assert_eq!(i.eligible_approvers(), 2);
        assert!(!completes(&item(&[]), ANN));
        assert!(completes(&item(&[ANN]), BOB));
        assert!(!completes(&item(&[ANN]), ANN));
    }

    #[test]
    fn apply_needs_approval_enough_approvals_and_a_level_that_applies() {
        let approved = |by| ItemFacts {
            state: State::Approved,
            ..item(by)
        };
        assert_eq!(
            check_apply(&item(&[ANN, BOB]), Autonomy::ActAfterApproval),
            Err(Refusal::NotApproved(State::InReview))
        );
        assert_eq!(
            check_apply(&approved(&[ANN]), Autonomy::ActAfterApproval),
            Err(Refusal::NotEnoughApprovals {
                domain: "payments".into(),
                have: 1,
                need: 2
            })
        );
        assert_eq!(
            check_apply(&approved(&[ANN, BOB]), Autonomy::Suggest),
            Err(Refusal::LevelDoesNotApply {
                domain: "payments".into(),
                level: Autonomy::Suggest
            })
        );
        assert_eq!(
            check_apply(&approved(&[ANN, BOB]), Autonomy::ActAfterApproval),
            Ok(())
        );
        let failed = ItemFacts {
            state: State::ApplyFailed,
            ..item(&[ANN, BOB])
        };
        assert_eq!(check_apply(&failed, Autonomy::Autonomous), Ok(()));
    }

    #[test]
    fn edits_by_author_or_stream_owner_at_the_loaded_revision() {
        assert_eq!(check_edit(&item(&[]), AUTHOR, false, 2), Ok(()));
        assert_eq!(check_edit(&item(&[]), OUTSIDER, true, 2), Ok(()));
        assert_eq!(
            check_edit(&item(&[]), OUTSIDER, false, 2),
            Err(Refusal::NotEditor)
        );
        assert_eq!(
            check_edit(&item(&[]), AUTHOR, false, 1),
            Err(Refusal::StaleEdit { current: 2 })
        );
        let applied = ItemFacts {
            state: State::Applied,
            ..item(&[])
        };
        assert_eq!(
            check_edit(&applied, AUTHOR, false, 2),
            Err(Refusal::Closed(State::Applied))
        );
        assert_eq!(check_withdraw(&item(&[]), EDITOR, false), Ok(()));
        assert_eq!(
            check_withdraw(&item(&[]), ANN, false),
            Err(Refusal::NotEditor)
        );
    }

    #[test]
    fn only_compatible_changes_in_autonomous_domains_are_routine() {
        assert!(is_routine(Autonomy::Autonomous, Verdict::Compatible));
        assert!(!is_routine(Autonomy::Autonomous, Verdict::Undecided));
        assert!(!is_routine(Autonomy::Autonomous, Verdict::Incompatible));
        assert!(!is_routine(Autonomy::ActAfterApproval, Verdict::Compatible));
    }
}
