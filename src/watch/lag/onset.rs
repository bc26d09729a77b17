//! When a consumer's trouble began: the start of the pilot's "lag flagged"
//! figure, so it measures from the trouble, not from when a pass first
//! judged it. Each estimate is the first sample that shows the trouble,
//! never a time before the samples show it.

use super::status::{Sample, Status, Verdict};

/// When the current trouble began: the time of the first sample of the
/// newest unbroken run of samples that were behind (lag above `allowed`).
/// `None` when the newest sample is not behind.
pub fn onset_ms(window: &[Sample], allowed_lag: u64) -> Option<i64> {
    let start = behind_run_start(window, allowed_lag)?;
    window.get(start).map(|s| s.at_ms)
}

/// Index of the first sample of the newest run of samples behind.
fn behind_run_start(window: &[Sample], allowed_lag: u64) -> Option<usize> {
    let behind = |s: &Sample| s.lag().messages().is_some_and(|l| l > allowed_lag);
    if !window.last().is_some_and(behind) {
        return None;
    }
    Some(window.iter().rposition(|s| !behind(s)).map_or(0, |i| i + 1))
}

/// When the trouble `verdict` names began, over the partition's `window`:
///
/// - STOP and STALL: when the committed offset last moved (the first
///   sample showing the offset it stands at, or what an earlier pass knew:
///   the verdict's standing), but not before the samples show it behind: a
///   consumer of an idle topic that stopped while caught up is in trouble
///   from the first unread message, not from its last commit. A consumer
///   always a few messages behind (commits trail writes) is behind all
///   along, so its stop dates from its last move;
/// - WARN: when its lag began to grow (the first sample above the one
///   before, in the window where it only grew);
/// - the others: the start of the run of samples behind ([`onset_ms`]).
pub fn trouble_onset_ms(window: &[Sample], verdict: &Verdict, allowed_lag: u64) -> Option<i64> {
    let behind_from = behind_run_start(window, allowed_lag)?;
    let behind_at = window.get(behind_from)?.at_ms;
    match verdict.status {
        Status::Stop | Status::Stall => {
            let moved = verdict
                .standing
                .map(|s| s.since_ms)
                .or_else(|| last_move_ms(window))?;
            // Behind since the window's first sample: maybe long before,
            // so it bounds nothing.
            Some(if behind_from == 0 {
                moved
            } else {
                moved.max(behind_at)
            })
        }
        Status::Warn => Some(growth_start_ms(window).unwrap_or(behind_at).max(behind_at)),
        _ => Some(behind_at),
    }
}

/// The first sample showing the committed offset the newest one has.
fn last_move_ms(window: &[Sample]) -> Option<i64> {
    let newest = window.last()?;
    let run_start = window
        .iter()
        .rposition(|s| s.committed != newest.committed)
        .map_or(0, |i| i + 1);
    window.get(run_start).map(|s| s.at_ms)
}

/// The first sample whose lag is above the previous sample's, in the
/// newest stretch where lag never fell.
fn growth_start_ms(window: &[Sample]) -> Option<i64> {
    let lags: Vec<(i64, u64)> = window
        .iter()
        .filter_map(|s| Some((s.at_ms, s.lag().messages()?)))
        .collect();
    let from = lags
        .windows(2)
        .rposition(|w| w[1].1 < w[0].1)
        .map_or(0, |i| i + 1);
    lags[from..]
        .windows(2)
        .find(|w| w[1].1 > w[0].1)
        .map(|w| w[1].0)
}

#[cfg(test)]
mod tests {
    use super::super::status::{Rules, Standing, partition_status};
    use super::*;

    /// A window from (committed, log_end) pairs, one sample every 15 s.
    fn window(points: &[(Option<i64>, i64)]) -> Vec<Sample> {
        points
            .iter()
            .enumerate()
            .map(|(i, &(committed, log_end))| Sample {
                at_ms: i as i64 * 15_000,
                committed,
                log_start: 0,
                log_end,
            })
            .collect()
    }

    fn onset(w: &[Sample], members: bool, known: Option<Standing>) -> (Status, Option<i64>) {
        let v = partition_status(w, members, &Rules::default(), known);
        (v.status, trouble_onset_ms(w, &v, 0))
    }

    #[test]
    fn onset_is_the_start_of_the_current_bad_run() {
        let w = window(&[
            (Some(5), 5),
            (Some(5), 9),
            (Some(9), 9),
            (Some(9), 12),
            (Some(9), 15),
        ]);
        assert_eq!(onset_ms(&w, 0), Some(45_000));
        let w = window(&[(Some(5), 9), (Some(5), 12)]);
        assert_eq!(onset_ms(&w, 0), Some(0));
        let w = window(&[(Some(5), 9), (Some(12), 12)]);
        assert_eq!(onset_ms(&w, 0), None);
    }

    #[test]
    fn a_stop_dates_from_the_sample_that_shows_the_last_move() {
        // Always a few behind while consuming; the offset last moved to 14
        // by t=30 s and has stood there since: the stop began then, not at
        // t=45 s when a pass first saw it stand.
        let w = window(&[(Some(5), 8), (Some(9), 12), (Some(14), 17), (Some(14), 21)]);
        assert_eq!(onset(&w, false, None), (Status::Stop, Some(30_000)));
        assert_eq!(onset_ms(&w, 0), Some(0), "behind all along");
    }

    #[test]
    fn a_stand_longer_than_the_window_dates_from_what_was_known() {
        let w = window(&[(Some(40), 50); 6]);
        assert_eq!(onset(&w, false, None), (Status::Stop, Some(0)));
        let known = Standing {
            committed: 40,
            since_ms: -600_000,
            members_since_ms: Some(-600_000),
        };
        assert_eq!(
            onset(&w, false, Some(known)),
            (Status::Stop, Some(-600_000))
        );
        assert_eq!(
            onset(&w, true, Some(known)),
            (Status::Stall, Some(-600_000))
        );
    }

    #[test]
    fn a_consumer_stopped_while_caught_up_is_in_trouble_from_the_first_unread_message() {
        // Caught up at 40 and idle; messages arrive from t=45 s.
        let w = window(&[
            (Some(30), 30),
            (Some(40), 40),
            (Some(40), 40),
            (Some(40), 40),
            (Some(40), 45),
            (Some(40), 50),
        ]);
        assert_eq!(onset(&w, false, None), (Status::Stop, Some(60_000)));
    }

    #[test]
    fn a_warn_dates_from_when_lag_began_to_grow() {
        // Steadily 2 behind, then it falls behind from t=30 s.
        let w = window(&[
            (Some(10), 12),
            (Some(20), 22),
            (Some(28), 40),
            (Some(30), 60),
            (Some(32), 80),
        ]);
        let (status, at) = onset(&w, true, None);
        assert_eq!(status, Status::Warn);
        assert_eq!(at, Some(30_000));
    }

    /// A consumer reading a topic written `rate` messages a second,
    /// committing what it read every second, stopped at `stop_ms`;
    /// sampled every `every_ms` from `phase_ms`, committed offsets read
    /// first and log ends 50 ms later (as the sampler does).
    fn sampled(stop_ms: i64, every_ms: i64, phase_ms: i64, n: i64) -> Vec<Sample> {
        let rate = 10;
        let end = |t: i64| t * rate / 1_000;
        let committed = |t: i64| end((t.min(stop_ms) / 1_000) * 1_000);
        (0..n)
            .map(|i| {
                let t = phase_ms + i * every_ms;
                Sample {
                    at_ms: t,
                    committed: Some(committed(t)),
                    log_start: 0,
                    log_end: end(t + 50),
                }
            })
            .collect()
    }

    #[test]
    fn a_stop_is_dated_within_one_interval_of_when_it_happened() {
        // Whatever the sampler's phase, the first pass that says STOP dates
        // it within one interval of the stop: the pilot's "lag flagged"
        // then differs from an outside clock's by less than an interval.
        let every = 5_000;
        let stop = 61_300;
        for phase in (0..every).step_by(250) {
            let all = sampled(stop, every, phase, 30);
            let first_stop = (2..=all.len())
                .map(|n| &all[n.saturating_sub(10)..n])
                .find_map(|w| {
                    let (status, at) = onset(w, false, None);
                    (status == Status::Stop).then_some(at)
                });
            let at = first_stop.flatten().expect("judged STOP");
            assert!(
                (at - stop).abs() < every,
                "phase {phase}: onset {at} for a stop at {stop}"
            );
        }
    }
}
