//! What the lists of streams and of a cluster's consumer groups are
//! filtered and sorted by.

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

/// The order of a cluster's groups: the most troubled first (the default),
/// or by a column either way. A `-` before a column sorts it descending,
/// as the column headers' links ask.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum GroupOrder {
    #[default]
    Trouble,
    Name,
    NameDesc,
    Owner,
    OwnerDesc,
    Members,
    MembersDesc,
    Lag,
    LagDesc,
    TimeLag,
    TimeLagDesc,
}

impl Choice for GroupOrder {
    const NAME: &'static str = "sort";
    fn all() -> &'static [Self] {
        use GroupOrder::*;
        &[
            Trouble,
            Name,
            NameDesc,
            Owner,
            OwnerDesc,
            Members,
            MembersDesc,
            Lag,
            LagDesc,
            TimeLag,
            TimeLagDesc,
        ]
    }
    fn as_str(self) -> &'static str {
        use GroupOrder::*;
        match self {
            Trouble => "trouble",
            Name => "name",
            NameDesc => "-name",
            Owner => "owner",
            OwnerDesc => "-owner",
            Members => "members",
            MembersDesc => "-members",
            Lag => "lag",
            LagDesc => "-lag",
            TimeLag => "time_lag",
            TimeLagDesc => "-time_lag",
        }
    }
}

impl GroupOrder {
    /// What a column header links to: the column's first click (names up,
    /// figures down, as people look for the largest), the other way once
    /// it is the order shown.
    pub fn toggled(column: GroupOrder, shown: GroupOrder) -> GroupOrder {
        use GroupOrder::*;
        let (up, down) = match column {
            Name | NameDesc => (Name, NameDesc),
            Owner | OwnerDesc => (Owner, OwnerDesc),
            Members | MembersDesc => (Members, MembersDesc),
            Lag | LagDesc => (Lag, LagDesc),
            TimeLag | TimeLagDesc => (TimeLag, TimeLagDesc),
            Trouble => return Trouble,
        };
        let first = if matches!(up, Name | Owner) { up } else { down };
        match shown {
            s if s == first => {
                if first == up {
                    down
                } else {
                    up
                }
            }
            _ => first,
        }
    }

    /// Whether the list is sorted by `column` (either way), and which way:
    /// `ascending` / `descending` as `aria-sort` says it.
    pub fn aria_sort(self, column: GroupOrder) -> Option<&'static str> {
        use GroupOrder::*;
        match (column, self) {
            (Name | NameDesc, Name)
            | (Owner | OwnerDesc, Owner)
            | (Members | MembersDesc, Members)
            | (Lag | LagDesc, Lag)
            | (TimeLag | TimeLagDesc, TimeLag) => Some("ascending"),
            (Name | NameDesc, NameDesc)
            | (Owner | OwnerDesc, OwnerDesc)
            | (Members | MembersDesc, MembersDesc)
            | (Lag | LagDesc, LagDesc)
            | (TimeLag | TimeLagDesc, TimeLagDesc) => Some("descending"),
            _ => None,
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

    #[test]
    fn group_orders_read_as_the_links_write_them_and_toggle() {
        assert_eq!(
            choice::<GroupOrder>(Some("-lag")),
            Ok(Some(GroupOrder::LagDesc))
        );
        assert_eq!(
            choice::<GroupOrder>(Some("Name")),
            Ok(Some(GroupOrder::Name))
        );
        assert!(choice::<GroupOrder>(Some("colour")).is_err());
        use GroupOrder::*;
        // Figures first sort the largest on top, names A to Z.
        assert_eq!(GroupOrder::toggled(Lag, Trouble), LagDesc);
        assert_eq!(GroupOrder::toggled(Lag, LagDesc), Lag);
        assert_eq!(GroupOrder::toggled(Lag, Lag), LagDesc);
        assert_eq!(GroupOrder::toggled(Name, Trouble), Name);
        assert_eq!(GroupOrder::toggled(Name, Name), NameDesc);
        assert_eq!(LagDesc.aria_sort(Lag), Some("descending"));
        assert_eq!(LagDesc.aria_sort(Name), None);
    }
}
