//! Who is involved in an item: those who may apply it on request and see
//! the apply button.

use super::ItemFacts;

/// Its author, anyone who edited it, its named approvers, and admins.
pub fn involved(user_id: i64, admin: bool, item: &ItemFacts<'_>) -> bool {
    admin
        || item.author_id == user_id
        || item.editor_ids.contains(&user_id)
        || item.approver_ids.contains(&user_id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::State;

    const AUTHOR: i64 = 1;
    const EDITOR: i64 = 2;
    const APPROVER: i64 = 3;
    const STRANGER: i64 = 4;

    fn item() -> ItemFacts<'static> {
        ItemFacts {
            domain: "payments",
            state: State::Approved,
            revision: 2,
            content_hash: "abc",
            author_id: AUTHOR,
            editor_ids: &[EDITOR],
            approver_ids: &[APPROVER],
            approved_by: &[APPROVER],
            required: 1,
        }
    }

    #[test]
    fn author_editors_approvers_and_admins_are_involved_nobody_else() {
        for who in [AUTHOR, EDITOR, APPROVER] {
            assert!(involved(who, false, &item()), "{who}");
        }
        assert!(!involved(STRANGER, false, &item()));
        assert!(involved(STRANGER, true, &item()));
    }
}
