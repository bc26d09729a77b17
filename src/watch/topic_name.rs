//! Kafka's own rule for topic names (`Topic.validate`): what a watched
//! cluster could hold, for the catalog's forms and lineage's datasets.

use serde::{Deserialize, Serialize};

/// Kafka's topic name limit (`Topic.MAX_NAME_LENGTH`).
const MAX_TOPIC: usize = 249;

/// What Kafka itself would refuse in a topic name (`Topic.validate`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(rename_all = "snake_case")]
pub enum TopicIssue {
    #[error("empty")]
    Empty,
    #[error("\".\" and \"..\" are not allowed")]
    Dots,
    #[error("longer than {MAX_TOPIC} characters")]
    TooLong,
    #[error("only ASCII letters, digits, '.', '_' and '-' are allowed")]
    Character,
}

/// Kafka's own rule for topic names, so a topic the broker could never
/// have (`1x:y`) is marked rather than shown as real.
pub fn topic_issue(name: &str) -> Option<TopicIssue> {
    if name.is_empty() {
        Some(TopicIssue::Empty)
    } else if name == "." || name == ".." {
        Some(TopicIssue::Dots)
    } else if name.len() > MAX_TOPIC {
        Some(TopicIssue::TooLong)
    } else if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    {
        Some(TopicIssue::Character)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kafkas_rule() {
        assert_eq!(topic_issue("orders.v1_x-2"), None);
        assert_eq!(topic_issue(""), Some(TopicIssue::Empty));
        assert_eq!(topic_issue(".."), Some(TopicIssue::Dots));
        assert_eq!(topic_issue(&"t".repeat(250)), Some(TopicIssue::TooLong));
        assert_eq!(topic_issue("ünï"), Some(TopicIssue::Character));
        assert_eq!(topic_issue("1x:y"), Some(TopicIssue::Character));
    }
}
