//! Restarting failed tasks on their own (at a domain's *autonomous*
//! level): after each restart the next waits twice as long as the one
//! before (1, 2, 4 … minutes, at most 60), and a connector is restarted at
//! most five times in a day; then a person must look at it.

/// The first wait, after the first restart.
pub const FIRST_WAIT_MIN: i64 = 1;
/// The longest wait between two restarts.
pub const MAX_WAIT_MIN: i64 = 60;
/// Restarts of one connector in any 24 hours.
pub const MAX_PER_DAY: usize = 5;
const DAY_MS: i64 = 24 * 60 * 60 * 1000;
const MINUTE_MS: i64 = 60 * 1000;

/// The wait after the `n`th restart in a row (`n` ≥ 1): 1, 2, 4 … 60 minutes.
pub fn wait_minutes(n: usize) -> i64 {
    let doublings = u32::try_from(n.saturating_sub(1))
        .unwrap_or(u32::MAX)
        .min(6);
    (FIRST_WAIT_MIN << doublings).min(MAX_WAIT_MIN)
}

/// What to do about a connector with failed tasks now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Restart,
    /// The backoff has not run out: wait until this instant (ms).
    WaitUntil(i64),
    /// Five restarts in the last 24 hours: leave it to a person.
    DailyCapReached,
}

/// `earlier`: the instants (ms) of this connector's earlier automatic
/// restarts, any order. The run of restarts that counts for the backoff
/// is the ones of the last 24 hours.
pub fn decide(earlier: &[i64], now_ms: i64) -> Decision {
    let mut today: Vec<i64> = earlier
        .iter()
        .copied()
        .filter(|t| now_ms - *t < DAY_MS)
        .collect();
    today.sort_unstable();
    if today.len() >= MAX_PER_DAY {
        return Decision::DailyCapReached;
    }
    match today.last() {
        None => Decision::Restart,
        Some(last) => {
            let until = last + wait_minutes(today.len()) * MINUTE_MS;
            if now_ms >= until {
                Decision::Restart
            } else {
                Decision::WaitUntil(until)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: i64 = MINUTE_MS;

    #[test]
    fn waits_double_up_to_an_hour() {
        let waits: Vec<i64> = (1..=9).map(wait_minutes).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 32, 60, 60, 60]);
        assert_eq!(wait_minutes(usize::MAX), 60);
    }

    #[test]
    fn the_first_failure_is_restarted_at_once() {
        assert_eq!(decide(&[], 0), Decision::Restart);
    }

    #[test]
    fn a_second_failure_waits_for_the_backoff() {
        let now = 100 * M;
        assert_eq!(
            decide(&[now - 30_000], now),
            Decision::WaitUntil(now + 30_000)
        );
        assert_eq!(decide(&[now - M], now), Decision::Restart);
        // After two restarts, two minutes since the last.
        assert_eq!(
            decide(&[now - 10 * M, now - M], now),
            Decision::WaitUntil(now + M)
        );
        assert_eq!(decide(&[now - 10 * M, now - 2 * M], now), Decision::Restart);
    }

    #[test]
    fn at_most_five_a_day() {
        let now = 10_000 * M;
        let five: Vec<i64> = (1..=5).map(|i| now - i * 100 * M).collect();
        assert_eq!(decide(&five, now), Decision::DailyCapReached);
        // A restart older than a day no longer counts.
        let mut old = five.clone();
        old[4] = now - 25 * 60 * M;
        assert_eq!(decide(&old, now), Decision::Restart);
    }
}
