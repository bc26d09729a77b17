//! Registry hygiene: topics with no subject, subjects with no topic, and
//! subjects whose compatibility level is not the one their stream declares.
//!
//! Subjects are read with Confluent's naming strategies: TopicNameStrategy
//! (`<topic>-key`, `<topic>-value`), TopicRecordNameStrategy
//! (`<topic>-<full.record.Name>`) and RecordNameStrategy (`<full.record.Name>`,
//! which names no topic and so is never an orphan).

use super::Mode;
use super::subject::{TopicSubject, of_topic};
use serde::{Deserialize, Serialize};

/// What the catalog knows of a topic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopicFacts {
    pub name: String,
    pub tier: Option<i16>,
    /// The level the stream's value subject should have.
    pub declared: Option<Mode>,
}

/// A subject and its own level (`None`: it follows the global level).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubjectFacts {
    pub name: String,
    pub level: Option<Mode>,
}

/// One hygiene problem.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "kind", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Finding {
    /// A topic with no value subject; `flag` when its stream is Tier 1 or 2.
    UnregisteredTopic { topic: String, flag: bool },
    /// A topic-named subject whose topic the cluster does not have.
    OrphanSubject { subject: String, topic: String },
    /// The subject's effective level differs from the stream's declared one.
    LevelDrift {
        subject: String,
        topic: String,
        declared: Mode,
        actual: Mode,
    },
}

impl Finding {
    /// A sentence for the screens and flags.
    pub fn describe(&self) -> String {
        match self {
            Finding::UnregisteredTopic { topic, .. } => format!(
                "topic {topic} has no schema registered (no {topic}-value subject, nor a {topic}-<record> one)"
            ),
            Finding::OrphanSubject { subject, topic } => {
                format!("subject {subject} names topic {topic}, which the cluster does not have")
            }
            Finding::LevelDrift {
                subject,
                declared,
                actual,
                ..
            } => format!(
                "subject {subject} is at {} but its stream declares {}",
                actual.as_str(),
                declared.as_str()
            ),
        }
    }
}

/// Internal topics (`__consumer_offsets`, `_schemas`, Connect's and
/// Confluent's own) carry no producer schemas.
fn internal(topic: &str) -> bool {
    topic.starts_with('_') || topic.starts_with("connect-") || topic.starts_with("confluent")
}

/// The topic a subject names, if it follows a topic-based strategy.
fn topic_of(subject: &str, topics: &[TopicFacts]) -> Option<String> {
    if let Some(t) = subject
        .strip_suffix("-value")
        .or_else(|| subject.strip_suffix("-key"))
    {
        return Some(t.to_owned());
    }
    // `<topic>-<full.record.Name>`: the longest known topic that prefixes it.
    topics
        .iter()
        .filter(|t| {
            // A namespaced record, so `<topic>-key`-like names of other
            // topics are not taken for records.
            matches!(of_topic(&t.name, subject), Some(TopicSubject::Record(r)) if r.contains('.'))
        })
        .map(|t| t.name.clone())
        .max_by_key(String::len)
}

/// The findings for a cluster's topics against its registry's subjects.
pub fn findings(topics: &[TopicFacts], subjects: &[SubjectFacts], global: Mode) -> Vec<Finding> {
    let mut out = Vec::new();
    let named: Vec<(Option<String>, &SubjectFacts)> = subjects
        .iter()
        .map(|s| (topic_of(&s.name, topics), s))
        .collect();
    for t in topics.iter().filter(|t| !internal(&t.name)) {
        let registered = named.iter().any(|(topic, s)| {
            topic.as_deref() == Some(t.name.as_str()) && !s.name.ends_with("-key")
        });
        if !registered {
            out.push(Finding::UnregisteredTopic {
                topic: t.name.clone(),
                flag: t.tier.is_some_and(|tier| tier <= 2),
            });
        }
        if let Some(declared) = t.declared
            && let Some(s) = subjects
                .iter()
                .find(|s| s.name == format!("{}-value", t.name))
        {
            let actual = s.level.unwrap_or(global);
            if actual != declared {
                out.push(Finding::LevelDrift {
                    subject: s.name.clone(),
                    topic: t.name.clone(),
                    declared,
                    actual,
                });
            }
        }
    }
    for (topic, s) in &named {
        if let Some(topic) = topic
            && !topics.iter().any(|t| &t.name == topic)
        {
            out.push(Finding::OrphanSubject {
                subject: s.name.clone(),
                topic: topic.clone(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topic(name: &str, tier: Option<i16>, declared: Option<Mode>) -> TopicFacts {
        TopicFacts {
            name: name.into(),
            tier,
            declared,
        }
    }

    fn subject(name: &str, level: Option<Mode>) -> SubjectFacts {
        SubjectFacts {
            name: name.into(),
            level,
        }
    }

    #[test]
    fn unregistered_topics_flag_only_tiers_one_and_two() {
        let topics = [
            topic("orders", Some(1), None),
            topic("clicks", Some(3), None),
            topic("payments", None, None),
            topic("__consumer_offsets", None, None),
        ];
        let f = findings(&topics, &[subject("payments-value", None)], Mode::Backward);
        assert_eq!(
            f,
            vec![
                Finding::UnregisteredTopic {
                    topic: "orders".into(),
                    flag: true
                },
                Finding::UnregisteredTopic {
                    topic: "clicks".into(),
                    flag: false
                },
            ]
        );
    }

    #[test]
    fn a_key_subject_alone_does_not_register_the_values() {
        let f = findings(
            &[topic("orders", None, None)],
            &[subject("orders-key", None)],
            Mode::Backward,
        );
        assert!(matches!(f[0], Finding::UnregisteredTopic { .. }));
    }

    #[test]
    fn topic_record_name_subjects_register_their_topic() {
        let topics = [topic("orders", None, None), topic("orders-eu", None, None)];
        let subjects = [
            subject("orders-shop.Order", None),
            subject("orders-eu-shop.Order", None),
        ];
        assert_eq!(findings(&topics, &subjects, Mode::Backward), vec![]);
    }

    #[test]
    fn record_name_subjects_are_not_orphans_and_topic_ones_are() {
        let f = findings(
            &[topic("orders", None, None)],
            &[
                subject("orders-value", None),
                subject("shop.Order", None),
                subject("gone-value", None),
            ],
            Mode::Backward,
        );
        assert_eq!(
            f,
            vec![Finding::OrphanSubject {
                subject: "gone-value".into(),
                topic: "gone".into()
            }]
        );
    }

    #[test]
    fn level_drift_uses_the_global_level_when_the_subject_has_none() {
        let topics = [topic("orders", None, Some(Mode::Full))];
        let f = findings(&topics, &[subject("orders-value", None)], Mode::Backward);
        assert_eq!(
            f,
            vec![Finding::LevelDrift {
                subject: "orders-value".into(),
                topic: "orders".into(),
                declared: Mode::Full,
                actual: Mode::Backward,
            }]
        );
        assert!(
            findings(
                &topics,
                &[subject("orders-value", Some(Mode::Full))],
                Mode::Backward
            )
            .is_empty()
        );
        assert!(f[0].describe().contains("declares FULL"));
    }
}
