//! A metric against its baseline as people say it: `2 h → 11 min, 11×
//! faster`, not `0.09`. A factor under 10 keeps one decimal (`1.5×`), a
//! larger one is whole; within a tenth of the baseline it is "about the
//! same" (a few per cent is noise at pilot sizes).

use crate::platform::durations::human;
use std::fmt;

/// Below this factor either way a change is "about the same".
const SAME: f64 = 1.1;

/// How a figure compares with its baseline.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Change {
    /// Shorter by this factor.
    Faster(f64),
    /// Longer by this factor.
    Slower(f64),
    /// Within a tenth of the baseline.
    Same,
    /// Nothing was waited at all.
    AtOnce,
    /// Under a second against a baseline of more: a factor here would
    /// measure the clock's grain (`8 h → 0.02 s` is not "1,440,000×").
    UnderASecond,
    /// The baseline is zero: nothing to divide by.
    NoBaseline,
}

/// How `now_ms` compares with `baseline_ms`.
pub fn change(baseline_ms: i64, now_ms: i64) -> Change {
    if now_ms <= 0 {
        return Change::AtOnce;
    }
    if baseline_ms <= 0 {
        return Change::NoBaseline;
    }
    if now_ms < 1000 && baseline_ms >= 1000 {
        return Change::UnderASecond;
    }
    let (b, n) = (baseline_ms as f64, now_ms as f64);
    match (b / n, n / b) {
        (f, _) if f >= SAME => Change::Faster(f),
        (_, f) if f >= SAME => Change::Slower(f),
        _ => Change::Same,
    }
}

/// `11× faster`, `1.5× slower`, `about the same`, `at once`.
impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Change::Faster(x) => write!(f, "{}× faster", times(*x)),
            Change::Slower(x) => write!(f, "{}× slower", times(*x)),
            Change::Same => f.write_str("about the same"),
            Change::AtOnce => f.write_str("at once"),
            Change::UnderASecond => f.write_str("within a second"),
            Change::NoBaseline => f.write_str("no baseline to compare with"),
        }
    }
}

/// The baseline, now, and the change: `2 h → 11 min, 11× faster`; a dash
/// without a figure now.
pub fn said(baseline_ms: i64, now_ms: Option<i64>) -> String {
    match now_ms {
        None => "–".to_string(),
        Some(now) if change(baseline_ms, now) == Change::UnderASecond => {
            format!("{} → under a second", human(baseline_ms))
        }
        Some(now) => format!(
            "{} → {}, {}",
            human(baseline_ms),
            human(now),
            change(baseline_ms, now)
        ),
    }
}

/// `11`, `1.5`, `2`: whole from 10 up (where `9.96` would show as `10.0`),
/// else to a tenth without a trailing `.0`.
fn times(factor: f64) -> String {
    if factor >= 9.95 {
        format!("{factor:.0}")
    } else {
        let s = format!("{factor:.1}");
        s.strip_suffix(".0").map(str::to_owned).unwrap_or(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: i64 = 60_000;

    #[test]
    fn ratios_read_as_people_say_them() {
        assert_eq!(said(120 * MIN, Some(11 * MIN)), "2 h → 11 min, 11× faster");
        // No factor of millions for a figure under the clock's grain.
        assert_eq!(said(480 * MIN, Some(20)), "8 h → under a second");
        assert_eq!(change(480 * MIN, 999), Change::UnderASecond);
        assert_eq!(change(900, 300).to_string(), "3× faster");
        assert_eq!(
            said(90 * MIN, Some(9 * MIN)),
            "1 h 30 min → 9 min, 10× faster"
        );
        assert_eq!(said(10 * MIN, Some(4 * MIN)), "10 min → 4 min, 2.5× faster");
        assert_eq!(said(10 * MIN, Some(5 * MIN)), "10 min → 5 min, 2× faster");
        assert_eq!(said(9 * MIN, Some(120 * MIN)), "9 min → 2 h, 13× slower");
        assert_eq!(
            said(60 * MIN, Some(63 * MIN)),
            "1 h → 1 h 3 min, about the same"
        );
        assert_eq!(said(60 * MIN, Some(0)), "1 h → 0 s, at once");
        assert_eq!(said(60 * MIN, None), "–");
        assert_eq!(change(0, MIN), Change::NoBaseline);
        assert_eq!(change(996, 100).to_string(), "10× faster");
        assert_eq!(change(990, 100).to_string(), "9.9× faster");
    }
}
