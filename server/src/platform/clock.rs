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
    Utc::now() + Duration::milliseconds(offset_ms())
}

/// The offset in milliseconds (zero but in the history player).
pub fn offset_ms() -> i64 {
    OFFSET_MS.load(Ordering::Relaxed)
}

/// Moves the clock so that [`now`] reads `at` (the history player only).
pub fn set_to(at: DateTime<Utc>) {
    OFFSET_MS.store((at - Utc::now()).num_milliseconds(), Ordering::Relaxed);
}

/// Puts the clock back on the machine's time.
pub fn reset() {
    OFFSET_MS.store(0, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_reads_the_time_it_was_set_to_and_goes_back() {
        let at = Utc::now() - Duration::days(10);
        set_to(at);
        let read = now();
        assert!(
            (read - at).num_milliseconds().abs() < 1_000,
            "{read} vs {at}"
        );
        reset();
        assert_eq!(offset_ms(), 0);
        assert!((now() - Utc::now()).num_milliseconds().abs() < 1_000);
    }
}
