//! The autonomy ladder: how far Streamkeeper may act in a domain.

use serde::{Deserialize, Serialize};
use std::str::FromStr;

/// A domain's autonomy level, lowest first. Only admins change it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Autonomy {
    /// Flags only: no proposals are taken for review.
    Watch,
    /// Drafts and checks are reviewed; nothing is applied — the item's page
    /// gives the exact request to apply by hand.
    Suggest,
    /// Approved items are applied by Streamkeeper.
    ActAfterApproval,
    /// Routine, reversible items (every check compatible) are applied
    /// without approval and reported; everything else as
    /// [`Autonomy::ActAfterApproval`].
    Autonomous,
}

impl Autonomy {
    pub const ALL: [Autonomy; 4] = [
        Autonomy::Watch,
        Autonomy::Suggest,
        Autonomy::ActAfterApproval,
        Autonomy::Autonomous,
    ];

    /// The level of a domain nobody has configured: reviews happen, nothing
    /// is applied.
    pub const DEFAULT: Autonomy = Autonomy::Suggest;

    pub fn as_str(self) -> &'static str {
        match self {
            Autonomy::Watch => "watch",
            Autonomy::Suggest => "suggest",
            Autonomy::ActAfterApproval => "act_after_approval",
            Autonomy::Autonomous => "autonomous",
        }
    }

    /// The level as people say it ("act after approval").
    pub fn label(self) -> &'static str {
        match self {
            Autonomy::Watch => "watch",
            Autonomy::Suggest => "suggest",
            Autonomy::ActAfterApproval => "act after approval",
            Autonomy::Autonomous => "autonomous",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Autonomy::Watch => "watch: flags only, no proposals",
            Autonomy::Suggest => "suggest: reviewed, applied by hand",
            Autonomy::ActAfterApproval => "act after approval: approved items are applied",
            Autonomy::Autonomous => {
                "autonomous: routine compatible changes applied without approval and reported"
            }
        }
    }

    /// Whether proposals are taken for review at all.
    pub fn takes_proposals(self) -> bool {
        self >= Autonomy::Suggest
    }

    /// Whether Streamkeeper itself writes approved items to the registry.
    pub fn applies(self) -> bool {
        self >= Autonomy::ActAfterApproval
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown autonomy level '{0}' (expected watch, suggest, act_after_approval or autonomous)")]
pub struct UnknownAutonomy(pub String);

impl FromStr for Autonomy {
    type Err = UnknownAutonomy;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Autonomy::ALL
            .into_iter()
            .find(|a| a.as_str() == s.trim())
            .ok_or_else(|| UnknownAutonomy(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_read_as_people_say_them() {
        assert_eq!(Autonomy::ActAfterApproval.label(), "act after approval");
        for a in Autonomy::ALL {
            assert!(!a.label().contains('_'), "{a:?}");
        }
    }

    #[test]
    fn the_ladder_climbs() {
        assert!(!Autonomy::Watch.takes_proposals());
        assert!(Autonomy::Suggest.takes_proposals() && !Autonomy::Suggest.applies());
        assert!(Autonomy::ActAfterApproval.applies());
        assert!(Autonomy::Autonomous.applies());
        for a in Autonomy::ALL {
            assert_eq!(a.as_str().parse::<Autonomy>(), Ok(a));
        }
        assert!("yolo".parse::<Autonomy>().is_err());
    }
}
