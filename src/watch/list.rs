//! What the lists of streams and of a cluster's consumer groups are
//! filtered by.

use super::lag::status::Status;
use crate::platform::page::Choice;

/// Streams in trouble, or those without.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamStatus {
    Trouble,
    Ok,
}

impl Choice for StreamStatus {
    const NAME: &'static str = "status";
    fn all() -> &'static [Self] {
        &[StreamStatus::Trouble, StreamStatus::Ok]
    }
    fn as_str(self) -> &'static str {
        match self {
            StreamStatus::Trouble => "trouble",
            StreamStatus::Ok => "ok",
        }
    }
}

/// Groups in any trouble, groups the cluster no longer lists, or groups
/// judged with one status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupStatus {
    Trouble,
    Gone,
    Is(Status),
}

impl Choice for GroupStatus {
    const NAME: &'static str = "status";
    fn all() -> &'static [Self] {
        &[
            GroupStatus::Trouble,
            GroupStatus::Gone,
            GroupStatus::Is(Status::Incomplete),
            GroupStatus::Is(Status::NoCommit),
            GroupStatus::Is(Status::Ok),
            GroupStatus::Is(Status::Warn),
            GroupStatus::Is(Status::Rewind),
            GroupStatus::Is(Status::Stall),
            GroupStatus::Is(Status::Stop),
            GroupStatus::Is(Status::Lost),
        ]
    }
    /// As the store filters by it: `trouble`, `gone`, or the status's name.
    fn as_str(self) -> &'static str {
        match self {
            GroupStatus::Trouble => "trouble",
            GroupStatus::Gone => "gone",
            GroupStatus::Is(s) => s.as_str(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::page::choice;

    #[test]
    fn every_lag_status_is_a_group_filter() {
        for s in Status::ALL {
            assert!(GroupStatus::all().contains(&GroupStatus::Is(s)), "{s:?}");
        }
        assert_eq!(GroupStatus::all().len(), Status::ALL.len() + 2);
    }

    #[test]
    fn statuses_parse_in_any_case_and_unknown_ones_list_the_choices() {
        assert_eq!(
            choice::<GroupStatus>(Some("stall")),
            Ok(Some(GroupStatus::Is(Status::Stall)))
        );
        assert_eq!(
            choice::<GroupStatus>(Some("Trouble")),
            Ok(Some(GroupStatus::Trouble))
        );
        assert_eq!(
            choice::<GroupStatus>(Some("GONE")),
            Ok(Some(GroupStatus::Gone))
        );
        assert_eq!(
            choice::<StreamStatus>(Some("OK")),
            Ok(Some(StreamStatus::Ok))
        );
        assert_eq!(
            choice::<GroupStatus>(Some("sideways")).map_err(|e| e.to_string()),
            Err("unknown status 'sideways' (one of: trouble, gone, INCOMPLETE, NO_COMMIT, OK, WARN, REWIND, STALL, STOP, LOST)".into())
        );
        assert_eq!(
            choice::<StreamStatus>(Some("bad")).map_err(|e| e.to_string()),
            Err("unknown status 'bad' (one of: trouble, ok)".into())
        );
    }
}
