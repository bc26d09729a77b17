//! Subjects named after topics, by Confluent's naming strategies:
//! TopicNameStrategy (`<topic>-key`, `<topic>-value`) and
//! TopicRecordNameStrategy (`<topic>-<full.record.Name>`). A
//! RecordNameStrategy subject (`<full.record.Name>`) names no topic.

/// The subject a topic's values are registered under (TopicNameStrategy).
pub fn value_subject(topic: &str) -> String {
    format!("{topic}-value")
}

/// Which of a topic's subjects this is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TopicSubject {
    Value,
    Key,
    /// TopicRecordNameStrategy, with the record's full name.
    Record(String),
}

/// What `subject` is to `topic`, if it is one of its subjects. A record's
/// full name has no `-`, so another topic's subjects (`<topic>-eu-value`
/// for `<topic>`) are never taken for this one's.
pub fn of_topic(topic: &str, subject: &str) -> Option<TopicSubject> {
    let rest = subject.strip_prefix(topic)?.strip_prefix('-')?;
    match rest {
        "value" => Some(TopicSubject::Value),
        "key" => Some(TopicSubject::Key),
        _ if is_full_name(rest) => Some(TopicSubject::Record(rest.to_owned())),
        _ => None,
    }
}

/// An Avro or Protobuf full name: dot-separated names of letters, digits
/// and `_`, none starting with a digit.
fn is_full_name(s: &str) -> bool {
    !s.is_empty()
        && s.split('.').all(|part| {
            part.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_topics_own_subjects() {
        assert_eq!(value_subject("orders"), "orders-value");
        assert_eq!(
            of_topic("orders", "orders-value"),
            Some(TopicSubject::Value)
        );
        assert_eq!(of_topic("orders", "orders-key"), Some(TopicSubject::Key));
        assert_eq!(
            of_topic("orders", "orders-shop.Order"),
            Some(TopicSubject::Record("shop.Order".into()))
        );
    }

    #[test]
    fn never_another_topics_subjects() {
        assert_eq!(of_topic("orders", "orders-eu-value"), None);
        assert_eq!(of_topic("orders", "ordersx-value"), None);
        assert_eq!(of_topic("orders", "shop.Order"), None);
        assert_eq!(of_topic("orders", "orders-"), None);
        assert_eq!(of_topic("orders", "orders-shop..Order"), None);
        assert_eq!(of_topic("orders", "orders-9lives"), None);
    }
}
