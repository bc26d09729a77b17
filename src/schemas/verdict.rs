//! One answer from many: each consumer group's verdict, the subject
//! history's, and the registry's own check.

use serde::{Deserialize, Serialize};

/// A check's answer. Never "compatible" when something needed is unknown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Verdict {
    Compatible,
    Incompatible,
    /// Something needed for an answer is missing (a reader schema, the
    /// subject's history).
    Undecided,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Compatible => "COMPATIBLE",
            Verdict::Incompatible => "INCOMPATIBLE",
            Verdict::Undecided => "UNDECIDED",
        }
    }

    /// The name [`Verdict::as_str`] gives, back as a verdict.
    pub fn parse(s: &str) -> Option<Verdict> {
        [
            Verdict::Compatible,
            Verdict::Incompatible,
            Verdict::Undecided,
        ]
        .into_iter()
        .find(|v| v.as_str() == s)
    }
}

/// A producer change is incompatible when any consumer group cannot read
/// it, when it breaks the subject's history, or when the registry refuses
/// it (it could not be registered); otherwise undecided when any of those
/// is unknown; compatible only when every one of them says so.
pub fn combine(consumers: &[Verdict], history: Verdict, registry_refuses: bool) -> Verdict {
    if registry_refuses
        || history == Verdict::Incompatible
        || consumers.contains(&Verdict::Incompatible)
    {
        Verdict::Incompatible
    } else if history == Verdict::Undecided || consumers.contains(&Verdict::Undecided) {
        Verdict::Undecided
    } else {
        Verdict::Compatible
    }
}

#[cfg(test)]
mod tests {
    use super::Verdict::{Compatible, Incompatible, Undecided};
    use super::*;

    #[test]
    fn one_breaking_reader_makes_it_incompatible() {
        assert_eq!(
            combine(&[Compatible, Incompatible, Undecided], Compatible, false),
            Incompatible
        );
    }

    #[test]
    fn an_unknown_reader_or_history_is_never_compatible() {
        assert_eq!(
            combine(&[Compatible, Undecided], Compatible, false),
            Undecided
        );
        assert_eq!(combine(&[Compatible], Undecided, false), Undecided);
    }

    #[test]
    fn the_registry_refusing_or_the_history_breaking_wins() {
        assert_eq!(combine(&[Compatible], Compatible, true), Incompatible);
        assert_eq!(combine(&[], Incompatible, false), Incompatible);
    }

    #[test]
    fn compatible_only_when_everything_says_so() {
        assert_eq!(
            combine(&[Compatible, Compatible], Compatible, false),
            Compatible
        );
        assert_eq!(combine(&[], Compatible, false), Compatible);
    }
}
