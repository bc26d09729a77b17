//! What the lists of streams and of a cluster's consumer groups are
//! filtered and sorted by.

use super::lag::status::Status;
use crate::platform::page::Choice;
use crate::platform::sort::{Column, Sorted};

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
            GroupStatus::Is(Status::NotConsumed),
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

/// The columns a cluster's groups sort by. The default, `-status`, puts
/// the most troubled first (STOP, REWIND, LOST, STALL, WARN, then the
/// rest) and the groups no longer listed last.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupColumn {
    Name,
    Owner,
    Status,
    Members,
    Lag,
    TimeLag,
}

impl Column for GroupColumn {
    fn all() -> &'static [Self] {
        use GroupColumn::*;
        &[Name, Owner, Status, Members, Lag, TimeLag]
    }
    fn as_str(self) -> &'static str {
        match self {
            GroupColumn::Name => "name",
            GroupColumn::Owner => "owner",
            GroupColumn::Status => "status",
            GroupColumn::Members => "members",
            GroupColumn::Lag => "lag",
            GroupColumn::TimeLag => "time_lag",
        }
    }
    fn descending_first(self) -> bool {
        !matches!(self, GroupColumn::Name | GroupColumn::Owner)
    }
    fn default_order() -> Sorted<Self> {
        Sorted {
            column: GroupColumn::Status,
            descending: true,
        }
    }
}

/// The columns the streams list sorts by; by cluster, then topic, unless
/// asked. `status` descending puts the streams in trouble first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamColumn {
    Stream,
    Cluster,
    Owner,
    Tier,
    Partitions,
    Status,
    LastMessage,
}

impl Column for StreamColumn {
    fn all() -> &'static [Self] {
        use StreamColumn::*;
        &[
            Stream,
            Cluster,
            Owner,
            Tier,
            Partitions,
            Status,
            LastMessage,
        ]
    }
    fn as_str(self) -> &'static str {
        match self {
            StreamColumn::Stream => "stream",
            StreamColumn::Cluster => "cluster",
            StreamColumn::Owner => "owner",
            StreamColumn::Tier => "tier",
            StreamColumn::Partitions => "partitions",
            StreamColumn::Status => "status",
            StreamColumn::LastMessage => "last_message",
        }
    }
    /// Tier 1 is the most critical, so tiers read like names: 1 first.
    fn descending_first(self) -> bool {
        matches!(
            self,
            StreamColumn::Partitions | StreamColumn::Status | StreamColumn::LastMessage
        )
    }
    fn default_order() -> Sorted<Self> {
        Sorted {
            column: StreamColumn::Cluster,
            descending: false,
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
            Err("unknown status 'sideways' (one of: trouble, gone, INCOMPLETE, NO_COMMIT, NOT_CONSUMED, OK, WARN, REWIND, STALL, STOP, LOST)".into())
        );
        assert_eq!(
            choice::<StreamStatus>(Some("bad")).map_err(|e| e.to_string()),
            Err("unknown status 'bad' (one of: trouble, ok)".into())
        );
    }

    #[test]
    fn group_orders_read_as_the_links_write_them_and_toggle() {
        use GroupColumn::*;
        let s = |column, descending| Sorted { column, descending };
        assert_eq!(Sorted::parse(Some("-lag")), Ok(s(Lag, true)));
        assert_eq!(Sorted::parse(Some("Name")), Ok(s(Name, false)));
        assert_eq!(Sorted::<GroupColumn>::parse(None), Ok(s(Status, true)));
        assert!(Sorted::<GroupColumn>::parse(Some("colour")).is_err());
        // Figures first sort the largest on top, names A to Z.
        let shown = GroupColumn::default_order();
        assert_eq!(shown.toggled(Lag), s(Lag, true));
        assert_eq!(s(Lag, true).toggled(Lag), s(Lag, false));
        assert_eq!(shown.toggled(Name), s(Name, false));
        assert_eq!(shown.toggled(Status), s(Status, false));
        assert_eq!(s(Lag, true).aria_sort(Lag), Some("descending"));
        assert_eq!(s(Lag, true).aria_sort(Name), None);
    }

    #[test]
    fn streams_sort_by_cluster_unless_asked_and_tiers_one_first() {
        use StreamColumn::*;
        let shown = StreamColumn::default_order();
        assert_eq!(shown.param(), "cluster");
        assert_eq!(shown.toggled(Tier).param(), "tier");
        assert_eq!(shown.toggled(LastMessage).param(), "-last_message");
        assert_eq!(
            Sorted::<StreamColumn>::parse(Some("-partitions")).map(|s| s.column),
            Ok(Partitions)
        );
    }
}
