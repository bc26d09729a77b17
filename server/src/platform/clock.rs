//! The console's clock: the machine's time, plus an offset that is zero
//! except in the demo's history player (`pilot::history`), which plays ten
//! days of scripted events through the real services, each at the time its
//! script gives. Services that stamp a time the pilot reads take it from
//! [`now`]; the SQL that stamps them uses `streamkeeper_now()` (migration
//! `20261205000034_clock.sql`), which adds the session setting
//! `streamkeeper.clock_offset_ms` that only the player's own connections
//! set ([`OFFSET_SETTING`]).
//!
//! A process-wide atomic is safe here because only the player moves it,
//! and the player runs in a process of its own (the demo's example, or a
//! test binary of its own): the serving process never sets it, so for it
//! [`now`] is `Utc::now()`.

use chrono::{DateTime, Duration, Utc};
use std::sync::atomic::{AtomicI64, Ordering};

/// The Postgres session setting `streamkeeper_now()` adds, in milliseconds.
pub const OFFSET_SETTING: &str = "streamkeeper.clock_offset_ms";

static OFFSET_MS: AtomicI64 = AtomicI64::new(0);

/// The console's time now: the machine's, moved by the player's offset.
pub fn now() -> DateTime<Utc> {
    moved(Utc::now(), offset_ms())
}

fn moved(machine: DateTime<Utc>, offset_ms: i64) -> DateTime<Utc> {
    machine + Duration::milliseconds(offset_ms)
}

fn offset_to(at: DateTime<Utc>, machine: DateTime<Utc>) -> i64 {
    (at - machine).num_milliseconds()
}

/// The offset in milliseconds (zero but in the history player).
pub fn offset_ms() -> i64 {
    OFFSET_MS.load(Ordering::Relaxed)
}

/// Moves the clock so that [`now`] reads `at` (the history player only).
pub fn set_to(at: DateTime<Utc>) {
    OFFSET_MS.store(offset_to(at, Utc::now()), Ordering::Relaxed);
}

/// Puts the clock back on the machine's time.
pub fn reset() {
    OFFSET_MS.store(0, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    // The global itself is left alone: other tests of this binary may read
    // the clock at the same time.
    #[test]
    fn an_offset_moves_the_machines_time_to_the_time_asked_for() {
        let machine = Utc::now();
        let at = machine - Duration::days(10) + Duration::milliseconds(250);
        let offset = offset_to(at, machine);
        assert_eq!(offset, -10 * 86_400_000 + 250);
        assert_eq!(moved(machine, offset), at);
        assert_eq!(moved(machine, 0), machine);
    }

    #[test]
    fn the_serving_process_reads_the_machines_time() {
        assert_eq!(offset_ms(), 0);
        assert!((now() - Utc::now()).num_milliseconds().abs() < 1_000);
    }
}
