//! The time zone a user reads times in. Pages show every moment in it; the
//! REST API and the CLI keep UTC (RFC 3339), which scripts expect.

use chrono_tz::Tz;
use thiserror::Error;

/// Where every user starts: the zone the console showed before users
/// could choose, and the one operators share across regions.
pub const DEFAULT: Tz = Tz::UTC;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum ZoneError {
    #[error("a time zone is needed, as an IANA name such as Europe/Berlin or UTC")]
    Empty,
    #[error(
        "`{0}` is not a time zone this server knows; use an IANA name such as Europe/Berlin or UTC"
    )]
    Unknown(String),
}

/// Reads an IANA zone name as a user or the API gives it (surrounding space
/// ignored, the name's case as the database spells it or any other).
pub fn parse(name: &str) -> Result<Tz, ZoneError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(ZoneError::Empty);
    }
    name.parse::<Tz>()
        .or_else(|_| Tz::from_str_insensitive(name))
        .map_err(|_| ZoneError::Unknown(name.chars().take(64).collect()))
}

/// A stored zone name, as pages use it: a name the database no longer
/// knows (tzdata renames zones rarely, but does) falls back to UTC rather
/// than failing the page.
pub fn stored(name: &str) -> Tz {
    parse(name).unwrap_or(DEFAULT)
}

/// Every zone a user may choose, by name, for the settings form.
pub fn names() -> impl Iterator<Item = &'static str> {
    chrono_tz::TZ_VARIANTS.iter().map(|tz| tz.name())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iana_names_are_read_in_any_case_and_others_refused() {
        assert_eq!(parse("Europe/Berlin"), Ok(Tz::Europe__Berlin));
        assert_eq!(parse(" america/new_york "), Ok(Tz::America__New_York));
        assert_eq!(parse("UTC"), Ok(Tz::UTC));
        assert_eq!(parse(""), Err(ZoneError::Empty));
        assert_eq!(
            parse("Mars/Olympus"),
            Err(ZoneError::Unknown("Mars/Olympus".into()))
        );
        assert_eq!(stored("Mars/Olympus"), DEFAULT);
        assert!(names().any(|n| n == "Asia/Kolkata"));
    }
}
