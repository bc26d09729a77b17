//! The compatibility report's one-sentence answer: the verdict of every
//! consumer group, of the subject's history and of the registry's own
//! check, combined, and said in words that name who breaks and why.

use super::subject::value_subject;
use super::verdict::combine;
use super::{Mode, Verdict};

/// One consumer group's answer, as the sentence needs it.
#[derive(Clone, Copy, Debug)]
pub struct ConsumerAnswer<'a> {
    pub group: &'a str,
    /// The owning team's name.
    pub owner: Option<&'a str>,
    pub verdict: Verdict,
    /// Which reader schema was used, or why there was none.
    pub note: &'a str,
}

/// The subject's history's answer.
#[derive(Clone, Copy, Debug)]
pub struct HistoryAnswer<'a> {
    pub subject: &'a str,
    pub mode: Mode,
    pub versions: usize,
    pub verdict: Verdict,
    /// Why there is no verdict, when there is none.
    pub note: &'a str,
}

/// The combined verdict and its sentence. Consumer groups read a topic's
/// values, so a check `of_values == false` (a key or a record subject)
/// answers for the history alone and says so, naming `topic`'s value
/// subject.
pub fn summary(
    consumers: &[ConsumerAnswer<'_>],
    history: &HistoryAnswer<'_>,
    registry_refuses: bool,
    of_values: bool,
    topic: &str,
) -> (Verdict, String) {
    let answers: Vec<Verdict> = consumers.iter().map(|c| c.verdict).collect();
    let verdict = combine(&answers, history.verdict, registry_refuses);
    let sentence = match verdict {
        Verdict::Incompatible => {
            let broken: Vec<String> = consumers
                .iter()
                .filter(|c| c.verdict == Verdict::Incompatible)
                .map(|c| format!("{} ({})", c.group, c.owner.unwrap_or("unowned")))
                .collect();
            let mut parts = Vec::new();
            if !broken.is_empty() {
                parts.push(format!(
                    "{} of {} consumer group(s) cannot read it: {}",
                    broken.len(),
                    consumers.len(),
                    broken.join(", ")
                ));
            }
            if history.verdict == Verdict::Incompatible {
                parts.push(format!(
                    "it breaks {} compatibility with {}",
                    history.mode.as_str(),
                    history.subject
                ));
            }
            if registry_refuses {
                parts.push("the registry's own check refuses it".into());
            }
            format!("Incompatible: {}.", parts.join("; "))
        }
        Verdict::Undecided => {
            let mut parts: Vec<String> = consumers
                .iter()
                .filter(|c| c.verdict == Verdict::Undecided)
                .map(|c| format!("{}: {}", c.group, c.note))
                .collect();
            if history.verdict == Verdict::Undecided {
                parts.push(history.note.to_owned());
            }
            format!("No verdict: {}.", parts.join("; "))
        }
        Verdict::Compatible if !of_values => format!(
            "Compatible: it is {} compatible with {} ({} version(s)); consumer groups are checked for {} only.",
            history.mode.as_str(),
            history.subject,
            history.versions,
            value_subject(topic)
        ),
        Verdict::Compatible => format!(
            "Compatible: every consumer group ({}) can read it, and it is {} compatible with {} ({} version(s)).",
            consumers.len(),
            history.mode.as_str(),
            history.subject,
            history.versions
        ),
    };
    (verdict, sentence)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn consumer<'a>(
        group: &'a str,
        owner: Option<&'a str>,
        verdict: Verdict,
    ) -> ConsumerAnswer<'a> {
        ConsumerAnswer {
            group,
            owner,
            verdict,
            note: "its declared reader schema",
        }
    }

    fn history(verdict: Verdict) -> HistoryAnswer<'static> {
        HistoryAnswer {
            subject: "orders-value",
            mode: Mode::Backward,
            versions: 3,
            verdict,
            note: "the subject has no versions yet",
        }
    }

    #[test]
    fn compatible_counts_the_groups_and_names_the_level_and_history() {
        let groups = [
            consumer("billing", Some("payments"), Verdict::Compatible),
            consumer("ledger", None, Verdict::Compatible),
        ];
        assert_eq!(
            summary(&groups, &history(Verdict::Compatible), false, true, "orders"),
            (
                Verdict::Compatible,
                "Compatible: every consumer group (2) can read it, and it is BACKWARD compatible with orders-value (3 version(s)).".into()
            )
        );
    }

    #[test]
    fn a_key_check_answers_for_the_history_and_points_to_the_value_subject() {
        let h = HistoryAnswer {
            subject: "orders-key",
            ..history(Verdict::Compatible)
        };
        assert_eq!(
            summary(&[], &h, false, false, "orders").1,
            "Compatible: it is BACKWARD compatible with orders-key (3 version(s)); consumer groups are checked for orders-value only."
        );
    }

    #[test]
    fn incompatible_names_each_broken_group_with_its_owner_then_the_history_and_registry() {
        let groups = [
            consumer("billing", Some("payments"), Verdict::Incompatible),
            consumer("audit", None, Verdict::Incompatible),
            consumer("ledger", Some("finance"), Verdict::Compatible),
        ];
        let (verdict, sentence) = summary(
            &groups,
            &history(Verdict::Incompatible),
            true,
            true,
            "orders",
        );
        assert_eq!(verdict, Verdict::Incompatible);
        assert_eq!(
            sentence,
            "Incompatible: 2 of 3 consumer group(s) cannot read it: billing (payments), audit (unowned); it breaks BACKWARD compatibility with orders-value; the registry's own check refuses it."
        );
        // The registry alone refusing is enough, and is all it says.
        assert_eq!(
            summary(
                &groups[2..],
                &history(Verdict::Compatible),
                true,
                true,
                "orders"
            ),
            (
                Verdict::Incompatible,
                "Incompatible: the registry's own check refuses it.".into()
            )
        );
    }

    #[test]
    fn undecided_says_what_is_missing_for_each_group_and_the_history() {
        let groups = [
            ConsumerAnswer {
                note: "no reader schema is known",
                ..consumer("billing", Some("payments"), Verdict::Undecided)
            },
            consumer("ledger", None, Verdict::Compatible),
        ];
        assert_eq!(
            summary(&groups, &history(Verdict::Undecided), false, true, "orders"),
            (
                Verdict::Undecided,
                "No verdict: billing: no reader schema is known; the subject has no versions yet."
                    .into()
            )
        );
        // An incompatible answer anywhere outweighs a missing one.
        let (verdict, sentence) = summary(
            &groups,
            &history(Verdict::Incompatible),
            false,
            true,
            "orders",
        );
        assert_eq!(verdict, Verdict::Incompatible);
        assert_eq!(
            sentence,
            "Incompatible: it breaks BACKWARD compatibility with orders-value."
        );
    }
}
