//! What a list of flags is asked for: whose, and in which states.

use crate::platform::page::Choice;

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
