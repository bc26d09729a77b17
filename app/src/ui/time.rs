//! One way to show a moment on every page: the absolute time with the year
//! and the zone (UTC), and how long ago it was beside it.

use chrono::{DateTime, Utc};
use streamkeeper::platform::durations::human;

/// `2026-12-02 00:41:07 UTC`.
pub fn stamp(at: DateTime<Utc>) -> String {
    at.format("%Y-%m-%d %H:%M:%S UTC").to_string()
}

/// How long before `now` it was, as people say it: `3 min ago`, `just
/// now`, or `in 2 min` for a time still to come.
pub fn ago(at: DateTime<Utc>, now: DateTime<Utc>) -> String {
    match (now - at).num_milliseconds() {
        -999..=999 => "just now".to_string(),
        ms if ms > 0 => format!("{} ago", human(ms)),
        ms => format!("in {}", human(-ms)),
    }
}

/// Both, as every page shows a moment: `2026-12-02 00:41:07 UTC (3 min
/// ago)`. The age is as of the page's drawing: a hydrated page keeps the
/// server's words, a page fetched in the browser counts from its clock.
pub fn stamp_ago(at: DateTime<Utc>) -> String {
    format!("{} ({})", stamp(at), ago(at, Utc::now()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn a_moment_reads_with_its_year_zone_and_age() {
        let at = Utc
            .with_ymd_and_hms(2026, 12, 2, 0, 41, 7)
            .single()
            .unwrap_or_default();
        assert_eq!(stamp(at), "2026-12-02 00:41:07 UTC");
        let later = |s| at + chrono::Duration::seconds(s);
        assert_eq!(ago(at, later(0)), "just now");
        assert_eq!(ago(at, later(200)), "3 min 20 s ago");
        assert_eq!(ago(at, later(-120)), "in 2 min");
        assert_eq!(ago(at, later(3 * 86_400 + 7200)), "3 d 2 h ago");
    }
}
