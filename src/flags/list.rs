//! What a list of flags is asked for: whose, in which states, in which
//! order.

use crate::platform::page::Choice;
use crate::platform::sort::{Column, Sorted};

/// Whose flags.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FlagScope {
    /// Routed to the caller's teams.
    #[default]
    Mine,
    All,
}

impl Choice for FlagScope {
    const NAME: &'static str = "scope";
    fn all() -> &'static [Self] {
        &[FlagScope::Mine, FlagScope::All]
    }
    fn as_str(self) -> &'static str {
        match self {
            FlagScope::Mine => "mine",
            FlagScope::All => "all",
        }
    }
}

/// Which states.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FlagState {
    /// Open and acknowledged: the trouble is still there.
    #[default]
    Live,
    /// Dismissed and resolved too.
    Any,
}

impl Choice for FlagState {
    const NAME: &'static str = "state";
    fn all() -> &'static [Self] {
        &[FlagState::Live, FlagState::Any]
    }
    fn as_str(self) -> &'static str {
        match self {
            FlagState::Live => "live",
            FlagState::Any => "any",
        }
    }
}

/// The columns a list of flags sorts by; the latest raised first unless
/// asked. `since` is when the trouble began (the onset).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlagColumn {
    Kind,
    Subject,
    Cluster,
    Team,
    State,
    Since,
    Raised,
}

impl Column for FlagColumn {
    fn all() -> &'static [Self] {
        use FlagColumn::*;
        &[Kind, Subject, Cluster, Team, State, Since, Raised]
    }
    fn as_str(self) -> &'static str {
        match self {
            FlagColumn::Kind => "kind",
            FlagColumn::Subject => "subject",
            FlagColumn::Cluster => "cluster",
            FlagColumn::Team => "team",
            FlagColumn::State => "state",
            FlagColumn::Since => "since",
            FlagColumn::Raised => "raised",
        }
    }
    fn descending_first(self) -> bool {
        matches!(self, FlagColumn::Since | FlagColumn::Raised)
    }
    fn default_order() -> Sorted<Self> {
        Sorted {
            column: FlagColumn::Raised,
            descending: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::page::choice;

    #[test]
    fn flags_lists_default_to_mine_and_live_and_refuse_anything_else() {
        assert_eq!(
            choice::<FlagScope>(None).map(Option::unwrap_or_default),
            Ok(FlagScope::Mine)
        );
        assert_eq!(choice::<FlagScope>(Some("ALL")), Ok(Some(FlagScope::All)));
        assert_eq!(
            choice::<FlagState>(Some("")).map(Option::unwrap_or_default),
            Ok(FlagState::Live)
        );
        assert_eq!(choice::<FlagState>(Some("any")), Ok(Some(FlagState::Any)));
        assert_eq!(
            choice::<FlagScope>(Some("bogus")).map_err(|e| e.to_string()),
            Err("unknown scope 'bogus' (one of: mine, all)".into())
        );
        assert_eq!(
            choice::<FlagState>(Some("open")).map_err(|e| e.to_string()),
            Err("unknown state 'open' (one of: live, any)".into())
        );
    }
}
