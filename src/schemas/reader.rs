//! Which schema a consumer group reads a topic with. A group that declared
//! none is assumed to read the stream's schema that was current when the
//! group was first seen: it was built against that one.

/// The reader schema to check a producer change against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReaderChoice {
    /// The group declared its reader schema.
    Declared,
    /// The stream schema at `index` (oldest first) was current when the
    /// group was first seen.
    CurrentAtFirstSeen { index: usize },
    /// The group was seen before the stream's first recorded schema: the
    /// oldest recorded one (`index` 0) is the best guess, and a guess.
    OldestRecorded,
    /// No schema for the group and none for the stream: no verdict.
    Missing,
}

/// Chooses for a group first seen at `first_seen_ms`, given whether it
/// declared a schema and when each of the stream's schemas was recorded
/// (oldest first).
pub fn choose(declared: bool, first_seen_ms: i64, stream_recorded_ms: &[i64]) -> ReaderChoice {
    if declared {
        return ReaderChoice::Declared;
    }
    if stream_recorded_ms.is_empty() {
        return ReaderChoice::Missing;
    }
    match stream_recorded_ms
        .iter()
        .rposition(|at| *at <= first_seen_ms)
    {
        Some(index) => ReaderChoice::CurrentAtFirstSeen { index },
        None => ReaderChoice::OldestRecorded,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_wins() {
        assert_eq!(choose(true, 0, &[]), ReaderChoice::Declared);
    }

    #[test]
    fn the_schema_current_when_the_group_appeared() {
        let recorded = [100, 200, 300];
        assert_eq!(
            choose(false, 250, &recorded),
            ReaderChoice::CurrentAtFirstSeen { index: 1 }
        );
        assert_eq!(
            choose(false, 300, &recorded),
            ReaderChoice::CurrentAtFirstSeen { index: 2 }
        );
        assert_eq!(choose(false, 50, &recorded), ReaderChoice::OldestRecorded);
    }

    #[test]
    fn nothing_recorded_is_missing_not_compatible() {
        assert_eq!(choose(false, 50, &[]), ReaderChoice::Missing);
    }
}
