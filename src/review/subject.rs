//! Which subject a proposal may write to. The topic's domain decides who
//! approves, so a proposal made for one topic must never reach another
//! topic's subject.

use super::Kind;
use crate::schemas::subject::{TopicSubject, of_topic, value_subject};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubjectError {
    #[error(
        "A producer change is to the topic's value subject, {value}; propose a schema registration for {given}."
    )]
    NotTheValues { value: String, given: String },
    #[error(
        "{given} is not one of {topic}'s subjects: give {topic}-value, {topic}-key or {topic}-<full.record.Name>. Subjects named after a record alone (RecordNameStrategy) name no topic, so no domain's approvers."
    )]
    NotTheTopics { topic: String, given: String },
    #[error(
        "A {} changes a connector, not a schema: propose it with POST /api/v1/review/connectors.",
        .0.describe()
    )]
    NotASchema(Kind),
}

/// The subject a proposal for `topic` writes to: a producer change to the
/// topic's value subject; a registration to the value subject by default,
/// or to the topic's key or TopicRecordNameStrategy subject it names.
pub fn proposal_subject(
    kind: Kind,
    topic: &str,
    given: Option<&str>,
) -> Result<String, SubjectError> {
    if kind.is_connector() {
        return Err(SubjectError::NotASchema(kind));
    }
    let value = value_subject(topic);
    let Some(given) = given.map(str::trim).filter(|s| !s.is_empty()) else {
        return Ok(value);
    };
    match (kind, of_topic(topic, given)) {
        (Kind::ProducerChange, Some(TopicSubject::Value)) => Ok(value),
        (Kind::ProducerChange, _) => Err(SubjectError::NotTheValues {
            value,
            given: given.to_owned(),
        }),
        (Kind::SchemaRegistration, Some(_)) => Ok(given.to_owned()),
        (Kind::SchemaRegistration | Kind::ConnectorDraft | Kind::ConnectorRestart, None) => {
            Err(SubjectError::NotTheTopics {
                topic: topic.to_owned(),
                given: given.to_owned(),
            })
        }
        (Kind::ConnectorDraft | Kind::ConnectorRestart, Some(_)) => {
            Err(SubjectError::NotASchema(kind))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn producer_changes_write_the_values() {
        let p = |given| proposal_subject(Kind::ProducerChange, "orders", given);
        assert_eq!(p(None), Ok("orders-value".into()));
        assert_eq!(p(Some(" orders-value ")), Ok("orders-value".into()));
        assert!(matches!(
            p(Some("orders-key")),
            Err(SubjectError::NotTheValues { .. })
        ));
    }

    #[test]
    fn connector_items_write_no_subject() {
        for kind in [Kind::ConnectorDraft, Kind::ConnectorRestart] {
            assert_eq!(
                proposal_subject(kind, "orders", None),
                Err(SubjectError::NotASchema(kind))
            );
        }
    }

    #[test]
    fn registrations_write_the_topics_own_subjects_only() {
        let r = |given| proposal_subject(Kind::SchemaRegistration, "orders", given);
        assert_eq!(r(Some("")), Ok("orders-value".into()));
        assert_eq!(r(Some("orders-key")), Ok("orders-key".into()));
        assert_eq!(r(Some("orders-shop.Order")), Ok("orders-shop.Order".into()));
        for other in ["orders-eu-value", "shop.Order", "payments-value"] {
            assert!(
                matches!(r(Some(other)), Err(SubjectError::NotTheTopics { .. })),
                "{other}"
            );
        }
    }
}
