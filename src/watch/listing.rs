//! A consumer group the cluster no longer lists (deleted, or expired with
//! its offsets). Its last judgement and lags are from before it went: a
//! page that showed them would read "OK, lag 0" for a group that reads
//! nothing. Every page and API answer that shows a group's status or lag
//! asks [`Listing`] what to show instead, so they all say the same.

use chrono::{DateTime, Utc};

/// The status shown for a group the cluster no longer lists.
pub const NOT_LISTED: &str = "NOT_LISTED";

/// Whether the cluster still lists a group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Listing {
    Listed,
    /// Not listed by any pass since then.
    NotListedSince(DateTime<Utc>),
}

impl Listing {
    /// From the store's `gone_since` (set by the first pass that did not
    /// list the group, cleared when one lists it again).
    pub fn of(gone_since: Option<DateTime<Utc>>) -> Self {
        gone_since.map_or(Listing::Listed, Listing::NotListedSince)
    }

    /// The status to show: the judged one while listed, [`NOT_LISTED`]
    /// after (never the judgement from before it went).
    pub fn status(self, judged: &str) -> String {
        match self {
            Listing::Listed => judged.to_string(),
            Listing::NotListedSince(_) => NOT_LISTED.to_string(),
        }
    }

    /// A current figure (a lag, a time lag) to show: none once not listed,
    /// as the last one is not current.
    pub fn figure<T>(self, value: Option<T>) -> Option<T> {
        match self {
            Listing::Listed => value,
            Listing::NotListedSince(_) => None,
        }
    }

    /// "not listed since …", the time in the reader's format (`stamp`);
    /// `None` while listed.
    pub fn words(self, stamp: impl FnOnce(DateTime<Utc>) -> String) -> Option<String> {
        match self {
            Listing::Listed => None,
            Listing::NotListedSince(t) => Some(format!("not listed since {}", stamp(t))),
        }
    }

    /// The group's state as shown: the broker's (`Stable`, `Empty`, …)
    /// while listed, else [`Listing::words`].
    pub fn state(self, broker_state: &str, stamp: impl FnOnce(DateTime<Utc>) -> String) -> String {
        self.words(stamp)
            .unwrap_or_else(|| broker_state.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn a_group_not_listed_shows_no_judgement_nor_lag_from_before() {
        let since = Utc.with_ymd_and_hms(2026, 12, 7, 8, 0, 0).single();
        let gone = Listing::of(since);
        assert_eq!(gone.status("OK"), NOT_LISTED);
        assert_eq!(gone.figure(Some(0_u64)), None);
        assert_eq!(
            gone.words(|t| t.to_rfc3339()).as_deref(),
            Some("not listed since 2026-12-07T08:00:00+00:00")
        );
        assert_eq!(
            gone.state("Empty", |_| "then".into()),
            "not listed since then"
        );
    }

    #[test]
    fn a_listed_group_shows_its_judgement_and_lag() {
        let listed = Listing::of(None);
        assert_eq!(listed, Listing::Listed);
        assert_eq!(listed.status("WARN"), "WARN");
        assert_eq!(listed.figure(Some(12_u64)), Some(12));
        assert_eq!(listed.words(|t| t.to_rfc3339()), None);
        assert_eq!(listed.state("Stable", |_| "then".into()), "Stable");
    }
}
