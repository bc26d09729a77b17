//! A routine's schedule as an admin sets it: its own interval (the
//! default), another interval, a cron expression, or paused; and when the
//! next run falls. The runner asks [`next_run`] after every run and
//! whenever a stored schedule changes, so a change takes effect at the
//! next run on every replica.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// The shortest interval an admin may set: shorter would turn a routine
/// into a busy loop against the database and the clusters.
pub const MIN_EVERY: Duration = Duration::from_secs(1);
/// The longest: a week (beyond that, pause it and run it by hand).
pub const MAX_EVERY: Duration = Duration::from_secs(7 * 24 * 3600);
/// A cron expression's longest accepted text.
pub const MAX_CRON_LEN: usize = 200;

/// When a routine runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Schedule {
    /// The routine's own interval (a cluster's sampling interval, say).
    Default,
    /// Every so many milliseconds, from the start of the last run.
    Every { every_ms: u64 },
    /// At the times a cron expression names, in UTC (five fields, or six
    /// with seconds first).
    Cron { expression: String },
    /// Not at all until resumed; "run now" still runs it once.
    Paused,
}

/// Why a schedule is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    #[error("an interval must be between 1 s and 7 days; {0} ms is not")]
    Interval(u64),
    #[error("a cron expression is at most {MAX_CRON_LEN} characters")]
    CronTooLong,
    #[error("'{expression}' is not a cron expression: {why}")]
    Cron { expression: String, why: String },
    #[error("the cron expression '{0}' never fires")]
    Never(String),
}

impl Schedule {
    /// Checks an interval or a cron expression as given.
    pub fn checked(self) -> Result<Schedule, ScheduleError> {
        match &self {
            Schedule::Every { every_ms } => {
                let d = Duration::from_millis(*every_ms);
                if d < MIN_EVERY || d > MAX_EVERY {
                    return Err(ScheduleError::Interval(*every_ms));
                }
            }
            Schedule::Cron { expression } => {
                cron(expression)?;
            }
            Schedule::Default | Schedule::Paused => {}
        }
        Ok(self)
    }

    /// The stored kind: `default`, `every`, `cron` or `paused`.
    pub fn kind(&self) -> &'static str {
        match self {
            Schedule::Default => "default",
            Schedule::Every { .. } => "every",
            Schedule::Cron { .. } => "cron",
            Schedule::Paused => "paused",
        }
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Schedule::Default => f.write_str("its own interval"),
            Schedule::Every { every_ms } => write!(f, "every {}", duration(*every_ms)),
            Schedule::Cron { expression } => write!(f, "cron {expression} (UTC)"),
            Schedule::Paused => f.write_str("paused"),
        }
    }
}

/// An interval as typed on the command line: `90s`, `5m`, `2h`, `1d` or
/// plain seconds.
pub fn parse_interval(text: &str) -> Result<Schedule, ScheduleError> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (n, unit) = t.split_at(split);
    let n: u64 = n.parse().map_err(|_| ScheduleError::Interval(0))?;
    let secs = match unit.trim() {
        "" | "s" => n,
        "m" => n.saturating_mul(60),
        "h" => n.saturating_mul(3600),
        "d" => n.saturating_mul(86_400),
        _ => return Err(ScheduleError::Interval(0)),
    };
    Schedule::Every {
        every_ms: secs.saturating_mul(1000),
    }
    .checked()
}

fn cron(expression: &str) -> Result<croner::Cron, ScheduleError> {
    if expression.len() > MAX_CRON_LEN {
        return Err(ScheduleError::CronTooLong);
    }
    let parsed = croner::parser::CronParser::builder()
        .seconds(croner::parser::Seconds::Optional)
        .build()
        .parse(expression)
        .map_err(|e| ScheduleError::Cron {
            expression: expression.to_string(),
            why: e.to_string(),
        })?;
    // A pattern that names no real day (30 February) parses but never
    // fires; say so now rather than pause the routine silently.
    let probe = DateTime::<Utc>::UNIX_EPOCH + chrono::Duration::days(20_000);
    parsed
        .find_next_occurrence(&probe, false)
        .map_err(|_| ScheduleError::Never(expression.to_string()))?;
    Ok(parsed)
}

/// When the next run falls, given the routine's own interval, the start
/// of its last run (none before the first) and now; `None` when paused.
/// An interval counts from the last start (a first run is due at once); a
/// cron expression names the first matching time after the last start
/// (after now before the first run), so a run missed while no replica ran
/// is made up once, not once per missed time.
pub fn next_run(
    schedule: &Schedule,
    own_every: Duration,
    last_start: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> Option<DateTime<Utc>> {
    let after = |every: Duration| {
        last_start.map_or(now, |s| {
            s + chrono::Duration::from_std(every).unwrap_or(chrono::Duration::MAX)
        })
    };
    match schedule {
        Schedule::Default => Some(after(own_every)),
        Schedule::Every { every_ms } => Some(after(Duration::from_millis(*every_ms))),
        Schedule::Cron { expression } => {
            let c = cron(expression).ok()?;
            let from = last_start.unwrap_or(now);
            c.find_next_occurrence(&from, false).ok()
        }
        Schedule::Paused => None,
    }
}

/// How long past its time a run may wait before it is overdue: the runner
/// looks for due runs every second or so, and a replica busy with a long
/// run takes a little while to come back.
pub const DUE_GRACE_S: i64 = 60;

/// Where a run's next time stands against now, so a listing never calls a
/// time already past "next".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Due {
    /// Still to come.
    At(DateTime<Utc>),
    /// Its time passed less than [`DUE_GRACE_S`] ago: a replica takes it
    /// at its next look.
    Now,
    /// Past by more than that: no replica has taken it since.
    OverdueSince(DateTime<Utc>),
}

/// Where `next` stands at `now`.
pub fn due(next: DateTime<Utc>, now: DateTime<Utc>) -> Due {
    if next > now {
        Due::At(next)
    } else if (now - next).num_seconds() < DUE_GRACE_S {
        Due::Now
    } else {
        Due::OverdueSince(next)
    }
}

/// Milliseconds as the listing shows them: `500 ms`, `15 s`, `5 min`, `2 h`, `1 d`.
pub fn duration(ms: u64) -> String {
    let s = ms / 1000;
    if !ms.is_multiple_of(1000) || s == 0 {
        format!("{ms} ms")
    } else if s.is_multiple_of(86_400) {
        format!("{} d", s / 86_400)
    } else if s.is_multiple_of(3600) {
        format!("{} h", s / 3600)
    } else if s.is_multiple_of(60) {
        format!("{} min", s / 60)
    } else {
        format!("{s} s")
    }
}

impl FromStr for Schedule {
    type Err = ScheduleError;

    /// `default`, `paused`, an interval (`30s`, `5m`) or a cron expression.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "default" => Ok(Schedule::Default),
            "paused" => Ok(Schedule::Paused),
            t if t.contains(' ') || t.starts_with('@') => Schedule::Cron {
                expression: t.to_string(),
            }
            .checked(),
            t => parse_interval(t),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        s.parse().expect("time")
    }

    #[test]
    fn an_interval_counts_from_the_last_start_and_a_first_run_is_due_now() {
        let now = at("2026-12-01T10:00:10Z");
        let s = Schedule::Every { every_ms: 30_000 };
        assert_eq!(
            next_run(
                &s,
                Duration::from_secs(5),
                Some(at("2026-12-01T10:00:00Z")),
                now
            ),
            Some(at("2026-12-01T10:00:30Z"))
        );
        assert_eq!(next_run(&s, Duration::from_secs(5), None, now), Some(now));
        assert_eq!(
            next_run(
                &Schedule::Default,
                Duration::from_secs(5),
                Some(at("2026-12-01T10:00:00Z")),
                now
            ),
            Some(at("2026-12-01T10:00:05Z"))
        );
    }

    #[test]
    fn a_cron_expression_fires_at_its_next_time_after_the_last_start() {
        let s: Schedule = "*/15 * * * *".parse().expect("cron");
        let now = at("2026-12-01T10:07:00Z");
        assert_eq!(
            next_run(&s, Duration::ZERO, Some(at("2026-12-01T10:00:00Z")), now),
            Some(at("2026-12-01T10:15:00Z"))
        );
        // Missed times (no replica ran) are made up once: the first after
        // the last start, even when it is past.
        assert_eq!(
            next_run(&s, Duration::ZERO, Some(at("2026-12-01T08:00:00Z")), now),
            Some(at("2026-12-01T08:15:00Z"))
        );
        assert_eq!(
            next_run(&s, Duration::ZERO, None, now),
            Some(at("2026-12-01T10:15:00Z"))
        );
        // Six fields: seconds first.
        let s: Schedule = "*/10 * * * * *".parse().expect("cron");
        assert_eq!(
            next_run(&s, Duration::ZERO, None, at("2026-12-01T10:07:03Z")),
            Some(at("2026-12-01T10:07:10Z"))
        );
    }

    #[test]
    fn paused_never_runs() {
        assert_eq!(
            next_run(
                &Schedule::Paused,
                Duration::from_secs(1),
                None,
                at("2026-12-01T10:00:00Z")
            ),
            None
        );
    }

    #[test]
    fn bad_schedules_are_refused_with_the_reason() {
        assert_eq!("0s".parse::<Schedule>(), Err(ScheduleError::Interval(0)));
        assert_eq!(
            "8d".parse::<Schedule>(),
            Err(ScheduleError::Interval(8 * 86_400_000))
        );
        assert!(matches!(
            "61 * * * *".parse::<Schedule>(),
            Err(ScheduleError::Cron { .. })
        ));
        assert!(matches!(
            "0 0 30 2 *".parse::<Schedule>(),
            Err(ScheduleError::Never(_))
        ));
        assert_eq!(
            Schedule::Cron {
                expression: "* ".repeat(150)
            }
            .checked(),
            Err(ScheduleError::CronTooLong)
        );
        assert!("every day".parse::<Schedule>().is_err());
    }

    #[test]
    fn a_next_run_in_the_past_is_due_or_overdue_never_next() {
        let now = at("2026-12-07T05:00:00Z");
        let later = at("2026-12-07T05:00:30Z");
        assert_eq!(due(later, now), Due::At(later));
        assert_eq!(due(now, now), Due::Now);
        assert_eq!(due(at("2026-12-07T04:59:01Z"), now), Due::Now);
        let past = at("2026-12-07T04:59:00Z");
        assert_eq!(due(past, now), Due::OverdueSince(past));
        let long_ago = at("2026-12-06T05:00:00Z");
        assert_eq!(due(long_ago, now), Due::OverdueSince(long_ago));
    }

    #[test]
    fn intervals_parse_with_their_units() {
        assert_eq!(
            "90s".parse::<Schedule>(),
            Ok(Schedule::Every { every_ms: 90_000 })
        );
        assert_eq!(
            "5m".parse::<Schedule>(),
            Ok(Schedule::Every { every_ms: 300_000 })
        );
        assert_eq!(
            "2h".parse::<Schedule>(),
            Ok(Schedule::Every {
                every_ms: 7_200_000
            })
        );
        assert_eq!("paused".parse::<Schedule>(), Ok(Schedule::Paused));
        assert_eq!("default".parse::<Schedule>(), Ok(Schedule::Default));
        assert_eq!(
            Schedule::Every { every_ms: 300_000 }.to_string(),
            "every 5 min"
        );
    }
}
