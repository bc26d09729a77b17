//! Freshness SLOs: a stream with a freshness budget is *fresh* in a pass
//! when every reader whose time lag is known is within the budget, *stale*
//! when one is above it, and *not known* when no reader's time lag is
//! known — and every stretch of the month no pass judged (an unreachable
//! cluster, a stopped sampler) is not known either, never fresh. From the
//! month's tally: the attainment against the tier's target, the error
//! budget used and left and, at this month's rate, the day it runs out.
//!
//! Budgets are over the average month (365.25 / 12 days), so a tier's
//! budget is the same every month: 43.8 min (Tier 1, 99.9 %), 3.65 h
//! (Tier 2, 99.5 %), 7.3 h (Tier 3, 99.0 %).
//!
//! Fast burns raise a flag, as the Google SRE workbook's multi-window,
//! multi-burn-rate alerts do: a long window says the burn is significant, a
//! short one that it is still going on (so the flag resolves soon after it
//! stops).

use super::observe::key;
use crate::flags::{FlagKey, Observation};
use chrono::{DateTime, Datelike, Duration, NaiveDate, TimeZone, Utc};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// Minutes in the average month.
pub const MONTH_MIN: f64 = 365.25 * 24.0 * 60.0 / 12.0;

/// An SLA tier's target: the share of the month a stream is fresh.
pub fn target(tier: i16) -> Option<f64> {
    match tier {
        1 => Some(0.999),
        2 => Some(0.995),
        3 => Some(0.99),
        _ => None,
    }
}

/// A stream's freshness in one pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Freshness {
    Fresh,
    Stale,
    NotKnown,
}

/// A pass's verdict on a stream from its readers' time lags (seconds;
/// `None` where a reader's time lag is not known).
pub fn pass_freshness(
    budget_s: i32,
    time_lags: impl IntoIterator<Item = Option<f64>>,
) -> Freshness {
    let mut known = false;
    for lag in time_lags.into_iter().flatten() {
        if lag > f64::from(budget_s) {
            return Freshness::Stale;
        }
        known = true;
    }
    if known {
        Freshness::Fresh
    } else {
        Freshness::NotKnown
    }
}

/// Seconds judged fresh and stale over some time; the rest is not known.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    pub fresh_s: i64,
    pub stale_s: i64,
}

impl Tally {
    /// Adds `seconds` of a pass's verdict.
    pub fn add(&mut self, f: Freshness, seconds: i64) {
        match f {
            Freshness::Fresh => self.fresh_s += seconds,
            Freshness::Stale => self.stale_s += seconds,
            Freshness::NotKnown => {}
        }
    }

    fn judged_s(&self) -> i64 {
        self.fresh_s + self.stale_s
    }

    /// The share of the judged time that was stale; `None` when nothing was judged.
    pub fn error_rate(&self) -> Option<f64> {
        (self.judged_s() > 0).then(|| self.stale_s as f64 / self.judged_s() as f64)
    }
}

/// When the month's error budget runs out at this month's rate.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "kind", content = "date", rename_all = "snake_case")]
pub enum RunOut {
    /// Used up already.
    Exhausted,
    /// On this day of the month.
    On(NaiveDate),
    /// Not before the month ends.
    NotThisMonth,
    /// Nothing was stale this month.
    NotAtThisRate,
}

/// A stream's freshness SLO this month.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StreamSlo {
    /// The SLA tier (1 to 3); without one there is no target nor budget.
    pub tier: Option<i16>,
    /// The tier's target, e.g. 99.9.
    pub target_pct: Option<f64>,
    /// The stream's freshness budget: the time lag a reader may have.
    pub freshness_budget_s: i32,
    /// The month, e.g. `2026-12`.
    pub month: String,
    pub fresh_min: f64,
    pub stale_min: f64,
    /// Minutes of the month so far no pass judged (gaps, unknown time lags).
    pub not_known_min: f64,
    /// fresh / (fresh + stale), in percent; `None` before any judged pass.
    pub attainment_pct: Option<f64>,
    /// Whether the stream is within its tier this month: its error budget
    /// is not spent (the month can still meet the target); `None` without
    /// a tier or before any judged pass.
    pub within_tier: Option<bool>,
    /// The month's error budget, and how much is used and left, in minutes.
    pub budget_min: Option<f64>,
    pub budget_used_min: Option<f64>,
    pub budget_left_min: Option<f64>,
    pub runs_out: Option<RunOut>,
    /// "checked every 60 s: too slow for a 90 s budget", when it is.
    pub interval_warning: Option<String>,
}

/// The first instant of `now`'s month and of the next (UTC).
pub fn month_bounds(now: DateTime<Utc>) -> (DateTime<Utc>, DateTime<Utc>) {
    let first = |y: i32, m: u32| {
        Utc.with_ymd_and_hms(y, m, 1, 0, 0, 0)
            .single()
            .unwrap_or(now)
    };
    let (y, m) = (now.year(), now.month());
    let next = if m == 12 {
        first(y + 1, 1)
    } else {
        first(y, m + 1)
    };
    (first(y, m), next)
}

/// The seconds a pass at `at_ms` stands for: the time since the cluster's
/// previous pass (read or failed) at `prev_ms`, at most twice its interval
/// (a longer stretch had no look, so its rest is not known); one interval
/// for the first pass. Not the interval alone: a routine scheduled faster
/// or slower, or a run asked for now, would count time that did not pass.
pub fn stands_for(prev_ms: Option<i64>, at_ms: i64, interval_s: i32) -> i32 {
    let interval = i64::from(interval_s.max(1));
    let elapsed = prev_ms.map_or(interval, |p| (at_ms - p).max(0) / 1000);
    i32::try_from(elapsed.min(2 * interval)).unwrap_or(interval_s)
}

/// The warning when a cluster sampled every `interval_s` cannot check a
/// `budget_s` budget at least twice within it.
pub fn interval_warning(interval_s: i32, budget_s: i32) -> Option<String> {
    (i64::from(budget_s) < 2 * i64::from(interval_s))
        .then(|| format!("checked every {interval_s} s: too slow for a {budget_s} s budget"))
}

/// The SLO of a stream (its `tier` and `budget_s`) from this month's
/// `tally`, at `now`, on a cluster sampled every `interval_s`.
pub fn month_slo(
    tier: Option<i16>,
    budget_s: i32,
    tally: Tally,
    interval_s: i32,
    now: DateTime<Utc>,
) -> StreamSlo {
    let (start, end) = month_bounds(now);
    let elapsed_min = (now - start).num_seconds().max(0) as f64 / 60.0;
    let fresh_min = tally.fresh_s as f64 / 60.0;
    let stale_min = tally.stale_s as f64 / 60.0;
    let target = tier.and_then(target);
    let attainment = tally.error_rate().map(|e| 1.0 - e);
    let budget_min = target.map(|t| (1.0 - t) * MONTH_MIN);
    StreamSlo {
        tier,
        target_pct: target.map(|t| t * 100.0),
        freshness_budget_s: budget_s,
        month: start.format("%Y-%m").to_string(),
        fresh_min,
        stale_min,
        not_known_min: (elapsed_min - fresh_min - stale_min).max(0.0),
        attainment_pct: attainment.map(|a| a * 100.0),
        within_tier: attainment.and(budget_min).map(|b| stale_min < b),
        budget_min,
        budget_used_min: budget_min.map(|_| stale_min),
        budget_left_min: budget_min.map(|b| (b - stale_min).max(0.0)),
        runs_out: budget_min.map(|b| run_out(b, stale_min, elapsed_min, now, end)),
        interval_warning: interval_warning(interval_s, budget_s),
    }
}

/// When `budget` runs out with `used` of it spent over `elapsed` minutes.
fn run_out(budget: f64, used: f64, elapsed: f64, now: DateTime<Utc>, end: DateTime<Utc>) -> RunOut {
    if used >= budget {
        return RunOut::Exhausted;
    }
    if used <= 0.0 || elapsed <= 0.0 {
        return RunOut::NotAtThisRate;
    }
    let left_min = (budget - used) / (used / elapsed);
    let at = now + Duration::seconds((left_min * 60.0).min(1e9) as i64);
    if at >= end {
        RunOut::NotThisMonth
    } else {
        RunOut::On(at.date_naive())
    }
}

/// "31 of 43.8 min used; at this month's rate it runs out on the 24th".
pub fn budget_sentence(s: &StreamSlo) -> String {
    let (Some(budget), Some(used)) = (s.budget_min, s.budget_used_min) else {
        return "no SLA tier: no error budget".into();
    };
    let used = format!("{} of {} used", minutes(used), minutes(budget));
    match s.runs_out {
        Some(RunOut::Exhausted) => format!("{used}: the budget is spent"),
        Some(RunOut::On(d)) => {
            format!(
                "{used}; at this month's rate it runs out on the {}",
                ordinal(d.day())
            )
        }
        Some(RunOut::NotThisMonth) => {
            format!("{used}; at this month's rate it lasts the month")
        }
        Some(RunOut::NotAtThisRate) | None => format!("{used}; nothing stale this month"),
    }
}

/// `31 min`, `3.6 h` (`43.8 min` keeps its tenth).
fn minutes(m: f64) -> String {
    if m >= 120.0 {
        format!("{:.1} h", m / 60.0)
    } else if m.fract() == 0.0 || m >= 100.0 {
        format!("{m:.0} min")
    } else {
        format!("{m:.1} min")
    }
}

fn ordinal(day: u32) -> String {
    let suffix = match (day % 10, day % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{day}{suffix}")
}

/// Of the streams' SLOs, how many are within their tier, of those judged
/// against one: the "14 of 15" of a domain and of the pilot page.
pub fn within_tier<'a>(slos: impl IntoIterator<Item = &'a StreamSlo>) -> (usize, usize) {
    slos.into_iter()
        .filter_map(|s| s.within_tier)
        .fold((0, 0), |(w, n), within| (w + usize::from(within), n + 1))
}

/// A stream's burn-rate flag.
pub fn burn_key(topic: &str) -> FlagKey {
    key("topic", topic, "slo_burn")
}

/// The flag kinds: a fast burn pages, a slow one is a ticket.
pub const FAST: &str = "SLO_BURN_FAST";
pub const SLOW: &str = "SLO_BURN_SLOW";

/// The SRE workbook's pairs: (long window, short window, burn rate).
const PAGE: (&str, &str, f64) = ("1 h", "5 min", 14.4);
const TICKET: (&str, &str, f64) = ("6 h", "30 min", 6.0);

/// A stream's tallies over the burn-rate windows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BurnWindows {
    pub m5: Tally,
    pub m30: Tally,
    pub h1: Tally,
    pub h6: Tally,
}

/// What a pass says of a stream's burn-rate flag.
#[derive(Clone, Debug, PartialEq)]
pub enum BurnCall {
    Flag(Observation),
    /// Judged and not burning fast: an open flag resolves.
    Clear,
    /// A window with nothing judged: the flag stays as it stands.
    Held,
}

/// How many times faster than the budget allows `t` burns it.
fn burn_rate(t: &Tally, target: f64) -> Option<f64> {
    t.error_rate().map(|e| e / (1.0 - target))
}

/// The burn-rate call on `topic` of `tier` over its windows.
pub fn observe_burn(topic: &str, tier: i16, w: &BurnWindows, now_ms: i64) -> BurnCall {
    let Some(target) = target(tier) else {
        return BurnCall::Held;
    };
    let rates = [&w.h1, &w.m5, &w.h6, &w.m30].map(|t| burn_rate(t, target));
    let [Some(h1), Some(m5), Some(h6), Some(m30)] = rates else {
        return BurnCall::Held;
    };
    let (kind, (long, short, threshold), (l, s)) = if h1 >= PAGE.2 && m5 >= PAGE.2 {
        (FAST, PAGE, (h1, m5))
    } else if h6 >= TICKET.2 && m30 >= TICKET.2 {
        (SLOW, TICKET, (h6, m30))
    } else {
        return BurnCall::Clear;
    };
    BurnCall::Flag(Observation {
        key: burn_key(topic),
        kind: kind.into(),
        reason: format!(
            "{topic} burns its Tier {tier} freshness budget {l:.1}× as fast as the month allows over {long} ({s:.1}× over {short})"
        ),
        onset_ms: now_ms,
        evidence: json!({
            "rule": format!("burn rate over {long} and over {short} both at least {threshold}"),
            "target_pct": target * 100.0,
            "burn_rates": { "5m": m5, "30m": m30, "1h": h1, "6h": h6 },
        }),
    })
}

/// A fast burn is worse than a slow one.
pub fn worse(before: &str, now: &str) -> bool {
    before == SLOW && now == FAST
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Timelike;

    fn at(day: u32, h: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, day, h, 0, 0)
            .single()
            .expect("date")
    }

    #[test]
    fn a_pass_is_stale_when_any_reader_is_over_and_not_known_without_any() {
        assert_eq!(pass_freshness(60, [Some(10.0), None]), Freshness::Fresh);
        assert_eq!(
            pass_freshness(60, [Some(10.0), Some(61.0)]),
            Freshness::Stale
        );
        assert_eq!(pass_freshness(60, [None, None]), Freshness::NotKnown);
        assert_eq!(pass_freshness(60, []), Freshness::NotKnown);
    }

    /// A month of passes every 60 s with the cluster unreachable on the
    /// 3rd, a sampler stopped for a day on the 7th (no samples), and
    /// stale for 10 minutes each day.
    fn scripted(until: DateTime<Utc>) -> Tally {
        let mut t = Tally::default();
        let mut now = at(1, 0);
        while now < until {
            let f = if now.day() == 3 {
                // Unreachable: a failed pass judges nothing.
                Freshness::NotKnown
            } else if now.hour() == 0 && now.minute() < 10 {
                Freshness::Stale
            } else {
                Freshness::Fresh
            };
            if now.day() != 7 {
                t.add(f, 60);
            }
            now += Duration::seconds(60);
        }
        t
    }

    #[test]
    fn a_scripted_month_with_gaps_counts_them_not_known_never_fresh() {
        let now = at(11, 0);
        let s = month_slo(Some(1), 90, scripted(now), 15, now);
        // 10 days, 2 of them gaps: 8 days judged, 10 stale minutes each.
        assert_eq!(s.stale_min, 80.0);
        assert_eq!(s.fresh_min, 8.0 * 1440.0 - 80.0);
        assert_eq!(s.not_known_min, 2.0 * 1440.0);
        let a = s.attainment_pct.expect("judged");
        assert!((a - (100.0 - 80.0 / 11520.0 * 100.0)).abs() < 1e-9, "{a}");
        assert_eq!(s.within_tier, Some(false));
        assert_eq!(s.runs_out, Some(RunOut::Exhausted));
        assert_eq!(s.budget_left_min, Some(0.0));
        assert_eq!(s.month, "2026-12");
    }

    #[test]
    fn the_budget_left_and_the_day_it_runs_out_at_this_months_rate() {
        // 31 stale minutes in 10 days: 3.1 a day; 12.8 left → 4.1 days.
        let now = at(11, 0);
        let tally = Tally {
            fresh_s: 10 * 86_400 - 31 * 60,
            stale_s: 31 * 60,
        };
        let s = month_slo(Some(1), 300, tally, 15, now);
        assert!((s.budget_min.expect("tier") - 43.83).abs() < 0.01);
        assert_eq!(s.runs_out, Some(RunOut::On(at(15, 0).date_naive())));
        assert_eq!(
            budget_sentence(&s),
            "31 min of 43.8 min used; at this month's rate it runs out on the 15th"
        );
        assert_eq!(s.within_tier, Some(true));
        // Tier 3 lasts the month at that rate.
        let t3 = month_slo(Some(3), 300, tally, 15, now);
        assert_eq!(t3.runs_out, Some(RunOut::NotThisMonth));
        assert!(budget_sentence(&t3).starts_with("31 min of 7.3 h used; "));
    }

    #[test]
    fn nothing_judged_has_no_attainment_and_no_tier_no_budget() {
        let now = at(2, 0);
        let s = month_slo(None, 300, Tally::default(), 15, now);
        assert_eq!(s.attainment_pct, None);
        assert_eq!(s.within_tier, None);
        assert_eq!(s.budget_min, None);
        assert_eq!(s.not_known_min, 1440.0);
        assert_eq!(budget_sentence(&s), "no SLA tier: no error budget");
        let quiet = month_slo(Some(2), 300, Tally::default(), 15, now);
        assert_eq!(quiet.runs_out, Some(RunOut::NotAtThisRate));
    }

    #[test]
    fn a_budget_under_twice_the_interval_is_warned_about() {
        assert_eq!(
            interval_warning(60, 90).as_deref(),
            Some("checked every 60 s: too slow for a 90 s budget")
        );
        assert_eq!(interval_warning(60, 120), None);
        let s = month_slo(Some(1), 90, Tally::default(), 60, at(2, 0));
        assert!(s.interval_warning.is_some());
    }

    #[test]
    fn months_begin_and_end_in_utc_across_the_year() {
        let (start, end) = month_bounds(at(31, 23));
        assert_eq!(start, at(1, 0));
        assert_eq!(end.format("%Y-%m-%d").to_string(), "2027-01-01");
    }

    fn tally(fresh_s: i64, stale_s: i64) -> Tally {
        Tally { fresh_s, stale_s }
    }

    #[test]
    fn a_fast_burn_pages_a_slow_one_tickets_and_a_stopped_one_clears() {
        // Tier 1 allows 0.1 %: 2 % stale is a 20× burn.
        let fast = BurnWindows {
            m5: tally(0, 300),
            m30: tally(1500, 300),
            h1: tally(3528, 72),
            h6: tally(21_528, 72),
        };
        let BurnCall::Flag(o) = observe_burn("orders", 1, &fast, 7) else {
            panic!("a fast burn pages");
        };
        assert_eq!(o.kind, FAST);
        assert_eq!(o.key, burn_key("orders"));
        assert!(o.reason.contains("20.0× as fast"), "{}", o.reason);
        // Over: but the last 5 minutes were fresh → not paging any more;
        // 6 h at 0.7 % is a 7× burn and 30 min still above 6×.
        let slow = BurnWindows {
            m5: tally(300, 0),
            m30: tally(1780, 20),
            h1: tally(3528, 72),
            h6: tally(21_450, 150),
        };
        let BurnCall::Flag(o) = observe_burn("orders", 1, &slow, 7) else {
            panic!("a slow burn tickets");
        };
        assert_eq!(o.kind, SLOW);
        assert!(worse(SLOW, FAST) && !worse(FAST, SLOW));
        let over = BurnWindows {
            m30: tally(1800, 0),
            ..slow
        };
        assert_eq!(observe_burn("orders", 1, &over, 7), BurnCall::Clear);
        // A window with nothing judged (a gap) holds the flag as it is.
        let gap = BurnWindows {
            m5: Tally::default(),
            ..fast
        };
        assert_eq!(observe_burn("orders", 1, &gap, 7), BurnCall::Held);
    }

    #[test]
    fn domains_count_the_streams_within_their_tier() {
        let now = at(11, 0);
        let good = month_slo(Some(1), 300, tally(864_000, 0), 15, now);
        let bad = month_slo(Some(1), 300, tally(800_000, 64_000), 15, now);
        let untiered = month_slo(None, 300, tally(864_000, 0), 15, now);
        assert_eq!(within_tier([&good, &bad, &untiered, &good]), (2, 3));
        assert_eq!(ordinal(1), "1st");
        assert_eq!(ordinal(12), "12th");
        assert_eq!(ordinal(23), "23rd");
    }

    #[test]
    fn a_pass_stands_for_the_time_since_the_last_within_twice_the_interval() {
        // The first pass: one interval.
        assert_eq!(stands_for(None, 60_000, 15), 15);
        // A routine run every 5 s on a 15 s cluster: 5 s, not 15.
        assert_eq!(stands_for(Some(55_000), 60_000, 15), 5);
        // A pass after a 5-minute pause: 30 s at most; the rest not known.
        assert_eq!(stands_for(Some(0), 300_000, 15), 30);
        // A clock step back counts nothing.
        assert_eq!(stands_for(Some(70_000), 60_000, 15), 0);
    }
}
