//! One way to show a moment on every page: the absolute time with the year
//! and the zone the reader chose (UTC until they choose one on their
//! account page), and how long ago it was beside it.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use leptos::prelude::use_context;
use streamkeeper::platform::durations::human;

/// The zone the signed-in reader chose. The server puts it into each
/// page's context; where it is absent (signed out, an island drawing in
/// the browser) times read in UTC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReaderZone(pub Tz);

/// The reader's zone, or UTC.
pub fn zone() -> Tz {
    use_context::<ReaderZone>().map_or(streamkeeper::accounts::time_zone::DEFAULT, |z| z.0)
}

/// A moment in the reader's zone, for the few places that format it their
/// own way (chart ticks, day columns).
pub fn local(at: DateTime<Utc>) -> DateTime<Tz> {
    at.with_timezone(&zone())
}

/// `2026-12-02 00:41:07 UTC`, or `2026-12-02 01:41:07 CET` for a reader in
/// Berlin.
pub fn stamp(at: DateTime<Utc>) -> String {
    stamp_in(at, zone())
}

fn stamp_in(at: DateTime<Utc>, zone: Tz) -> String {
    at.with_timezone(&zone)
        .format("%Y-%m-%d %H:%M:%S %Z")
        .to_string()
}

/// A moment kept as text (an RFC 3339 string in a flag's evidence or an
/// audit entry's details) read as every other moment is; text that is
/// not a moment is shown as it is.
pub fn stamp_text(text: &str) -> String {
    match DateTime::parse_from_rfc3339(text) {
        Ok(at) => stamp(at.with_timezone(&Utc)),
        Err(_) => text.to_owned(),
    }
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

/// [`stamp_ago`] of a time that may not have come yet: "–" until it has.
pub fn stamp_ago_or_dash(at: Option<DateTime<Utc>>) -> String {
    at.map_or("–".to_string(), stamp_ago)
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
        assert_eq!(stamp_in(at, Tz::Europe__Berlin), "2026-12-02 01:41:07 CET");
        assert_eq!(stamp_in(at, Tz::Asia__Kolkata), "2026-12-02 06:11:07 IST");
        // A zone without a letter abbreviation shows its offset.
        assert_eq!(
            stamp_in(at, Tz::America__Sao_Paulo),
            "2026-12-01 21:41:07 -03"
        );
        let later = |s| at + chrono::Duration::seconds(s);
        assert_eq!(ago(at, later(0)), "just now");
        assert_eq!(ago(at, later(200)), "3 min 20 s ago");
        assert_eq!(ago(at, later(-120)), "in 2 min");
        assert_eq!(ago(at, later(3 * 86_400 + 7200)), "3 d 2 h ago");
        // Kept as text, a moment reads the same; other text is left alone.
        assert_eq!(
            stamp_text("2026-12-02T00:41:07.123456Z"),
            "2026-12-02 00:41:07 UTC"
        );
        assert_eq!(
            stamp_text("2026-12-02T01:41:07+01:00"),
            "2026-12-02 00:41:07 UTC"
        );
        assert_eq!(stamp_text("orders"), "orders");
    }
}
