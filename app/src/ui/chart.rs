//! Server-rendered SVG charts, readable without JavaScript. The window
//! asked for is the window drawn; a pass that could not read the cluster
//! (or no pass at all) is a shaded gap, never zero; the time before the
//! first sample is marked "not watched yet"; the axes carry round ticks in
//! units people read; each point says its value on hover (a `<title>`).

use crate::watch::model::LagPoint;
use chrono::{DateTime, Offset, Utc};
use chrono_tz::Tz;
use leptos::prelude::*;
use streamkeeper::platform::words::counted;

const W: f64 = 720.0;
const H: f64 = 220.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 28.0;

/// The y axis never tops out below this many messages: a group 0–2
/// behind draws as the flat line it is, not as a wall of spikes.
const LAG_FLOOR: i64 = 10;

/// The most ticks an axis carries; the fewest is four.
const MAX_TICKS: i64 = 5;

/// Ticks from 0 to at least `max` (and `floor`): 4 to 6 of them, a step of
/// 1, 2 or 5 × 10ⁿ apart.
pub fn y_ticks(max: i64, floor: i64) -> Vec<i64> {
    let top = max.max(floor).max(3);
    let mut magnitude = 1_i64;
    loop {
        for m in [1, 2, 5] {
            let step = magnitude.saturating_mul(m);
            let n = (top + step - 1) / step;
            if n <= MAX_TICKS {
                return (0..=n).map(|i| i * step).collect();
            }
        }
        magnitude = magnitude.saturating_mul(10);
    }
}

/// A count as people read it on an axis: `950`, `1.5k`, `12k`, `3.2M`.
pub fn count_label(v: i64) -> String {
    let short = |x: f64, unit: &str| {
        let s = format!("{x:.1}");
        format!("{}{unit}", s.strip_suffix(".0").unwrap_or(&s))
    };
    match v.abs() {
        0..1_000 => v.to_string(),
        1_000..1_000_000 => short(v as f64 / 1e3, "k"),
        1_000_000..1_000_000_000 => short(v as f64 / 1e6, "M"),
        _ => short(v as f64 / 1e9, "G"),
    }
}

/// Time ticks at round times in the reader's zone: the smallest step of 1,
/// 5, 10, 15, 30 minutes, 1, 2, 3, 6, 12 hours or 1, 2 days that leaves at
/// most seven ticks; labelled with the time, or the date at midnight and
/// for day steps. Rounding uses the zone's offset at the window's start (a
/// daylight-saving change inside the window shifts later ticks by its hour).
pub fn x_ticks(from: DateTime<Utc>, to: DateTime<Utc>, zone: Tz) -> Vec<(DateTime<Utc>, String)> {
    const MIN: i64 = 60_000;
    const STEPS: [i64; 13] = [
        MIN,
        5 * MIN,
        10 * MIN,
        15 * MIN,
        30 * MIN,
        60 * MIN,
        120 * MIN,
        180 * MIN,
        360 * MIN,
        720 * MIN,
        1440 * MIN,
        2880 * MIN,
        10080 * MIN,
    ];
    let offset = i64::from(from.with_timezone(&zone).offset().fix().local_minus_utc()) * 1000;
    // Round in local milliseconds, then back to UTC.
    let (a, b) = (
        from.timestamp_millis() + offset,
        to.timestamp_millis() + offset,
    );
    let span = (b - a).max(1);
    let step = STEPS
        .into_iter()
        .find(|s| span / s <= 7)
        .unwrap_or(10080 * MIN);
    let first = a.div_euclid(step) * step + if a.rem_euclid(step) == 0 { 0 } else { step };
    (0..)
        .map(|i| first + i * step)
        .take_while(|t| *t <= b)
        .filter_map(|local| {
            let t = DateTime::from_timestamp_millis(local - offset)?;
            let midnight = local.rem_euclid(1440 * MIN) == 0;
            let shown = t.with_timezone(&zone);
            let label = if step >= 1440 * MIN || midnight {
                shown.format("%m-%d").to_string()
            } else {
                shown.format("%H:%M").to_string()
            };
            Some((t, label))
        })
        .collect()
}

/// A shaded stretch of the window: `(from x, to x, why)`.
type Band = (f64, f64, &'static str);

struct Plot {
    /// Path data of the line, one `M` per run between gaps.
    line: String,
    /// Each sample with its place and its hover text.
    points: Vec<(f64, f64, String)>,
    /// Lone samples between two gaps, drawn as dots.
    dots: Vec<(f64, f64)>,
    /// Stretches without data, and the one before the first sample.
    bands: Vec<Band>,
    gaps: usize,
    ticks: Vec<i64>,
}

const UNREAD: &str = "No data: the cluster could not be read, or no pass ran";
const UNWATCHED: &str = "Not watched yet";

fn plot(points: &[LagPoint], from: DateTime<Utc>, to: DateTime<Utc>) -> Option<Plot> {
    let points: Vec<&LagPoint> = points
        .iter()
        .filter(|p| p.at >= from && p.at <= to)
        .collect();
    let first = *points.first()?;
    let t0 = from.timestamp_millis() as f64;
    let span = (to.timestamp_millis() as f64 - t0).max(1.0);
    let ticks = y_ticks(
        points.iter().filter_map(|p| p.lag).max().unwrap_or(0),
        LAG_FLOOR,
    );
    let y_max = ticks.last().copied().unwrap_or(1).max(1) as f64;
    let x =
        |at: DateTime<Utc>| LEFT + (at.timestamp_millis() as f64 - t0) / span * (W - LEFT - RIGHT);
    let y = |v: i64| TOP + (1.0 - v as f64 / y_max) * (H - TOP - BOTTOM);
    // A hole longer than three usual steps is a stretch no pass covered.
    let mut steps: Vec<i64> = points
        .windows(2)
        .map(|w| (w[1].at - w[0].at).num_milliseconds())
        .collect();
    steps.sort_unstable();
    let usual = steps.get(steps.len() / 2).copied().unwrap_or(i64::MAX / 4);
    let hole =
        |a: DateTime<Utc>, b: DateTime<Utc>| (b - a).num_milliseconds() > usual.saturating_mul(3);

    let mut bands: Vec<Band> = Vec::new();
    if first.at > from {
        bands.push((LEFT, x(first.at), UNWATCHED));
    }
    let mut line = String::new();
    let mut dots = Vec::new();
    let mut marks = Vec::new();
    let mut run: Vec<(f64, f64)> = Vec::new();
    let mut gap_start: Option<f64> = None;
    let mut flush = |run: &mut Vec<(f64, f64)>, line: &mut String| {
        match run.as_slice() {
            [] => {}
            [only] => dots.push(*only),
            [head, rest @ ..] => {
                line.push_str(&format!("M{:.1},{:.1}", head.0, head.1));
                for (px, py) in rest {
                    line.push_str(&format!(" L{px:.1},{py:.1}"));
                }
            }
        }
        run.clear();
    };
    let mut prev: Option<DateTime<Utc>> = None;
    for p in &points {
        if let Some(before) = prev
            && hole(before, p.at)
            && gap_start.is_none()
        {
            flush(&mut run, &mut line);
            bands.push((x(before), x(p.at), UNREAD));
        }
        prev = Some(p.at);
        match p.lag {
            Some(v) => {
                if let Some(g) = gap_start.take() {
                    bands.push((g, x(p.at), UNREAD));
                }
                run.push((x(p.at), y(v)));
                let behind = if v == 1 { "message" } else { "messages" };
                marks.push((
                    x(p.at),
                    y(v),
                    format!("{}: {v} {behind} behind", crate::ui::time::stamp(p.at)),
                ));
            }
            None => {
                flush(&mut run, &mut line);
                gap_start.get_or_insert(x(p.at));
            }
        }
    }
    flush(&mut run, &mut line);
    let last = prev.unwrap_or(to);
    match gap_start {
        Some(g) => bands.push((g, W - RIGHT, UNREAD)),
        None if hole(last, to) => bands.push((x(last), W - RIGHT, UNREAD)),
        None => {}
    }
    let gaps = bands.iter().filter(|b| b.2 == UNREAD).count();
    Some(Plot {
        line,
        points: marks,
        dots,
        bands,
        gaps,
        ticks,
    })
}

/// The chart range from the `range` query parameter, in hours: 1 h
/// (default), 24 h or 7 d.
pub fn range_hours() -> Memo<i64> {
    let range = crate::ui::params::query_param("range");
    Memo::new(move |_| match range.get().as_deref() {
        Some("24h") => 24,
        Some("7d") => 24 * 7,
        _ => 1,
    })
}

/// The `range` value that asks for `hours` (the inverse of [`range_hours`]).
pub fn range_token(hours: i64) -> &'static str {
    match hours {
        24 => "24h",
        168 => "7d",
        _ => "1h",
    }
}

/// Links to the same page over 1 h, 24 h and 7 d, the one shown marked;
/// `href` builds the link for a `range` value.
#[component]
pub fn RangeLinks(href: impl Fn(&str) -> String, hours: i64) -> impl IntoView {
    let link = |range: &'static str, h: i64, label: &'static str| {
        let current = (hours == h).then_some("page");
        view! { <a href=href(range) aria-current=current>{label}</a> }
    };
    view! {
        <nav class="ranges" aria-label="Range">
            {link("1h", 1, "1 h")}
            {link("24h", 24, "24 h")}
            {link("7d", 24 * 7, "7 d")}
        </nav>
    }
}

/// A lag chart: messages behind per pass over the `hours` up to `to`.
#[component]
pub fn LagChart(points: Vec<LagPoint>, to: DateTime<Utc>, hours: i64) -> impl IntoView {
    let from = to - chrono::Duration::hours(hours);
    let Some(p) = plot(&points, from, to) else {
        return view! { <p class="note">"No samples in this range yet."</p> }.into_any();
    };

    let range = match hours {
        1 => "hour".to_string(),
        24 => "24 hours".to_string(),
        h if h % 24 == 0 => format!("{} days", h / 24),
        h => format!("{h} hours"),
    };
    // Passes without one figure among them (all failed, or none read
    // this) have no highest value: never summarised as 0.
    let highest = points
        .iter()
        .filter_map(|p| p.lag)
        .max()
        .map_or_else(|| "no figures".to_string(), |h| format!("highest {h}"));
    let summary = format!(
        "Lag in messages over the last {range}, to {}; {highest}; {} without data.",
        crate::ui::time::stamp(to),
        counted(p.gaps, "gap")
    );
    let unwatched = p.bands.iter().any(|b| b.2 == UNWATCHED);
    let gaps = p.gaps > 0;
    let y_max = p.ticks.last().copied().unwrap_or(1).max(1) as f64;
    let y = move |v: i64| TOP + (1.0 - v as f64 / y_max) * (H - TOP - BOTTOM);
    let span = (to - from).num_milliseconds().max(1) as f64;
    let x = move |at: DateTime<Utc>| {
        LEFT + (at - from).num_milliseconds() as f64 / span * (W - LEFT - RIGHT)
    };
    view! {
        <figure class="chart" data-hours=hours>
            <svg viewBox=format!("0 0 {W} {H}") role="img" aria-label=summary.clone() xmlns="http://www.w3.org/2000/svg">
                <title>{summary.clone()}</title>
                {p.bands.iter().map(|(a, b, why)| view! {
                    <rect class=if *why == UNWATCHED { "unwatched" } else { "gap" } x=format!("{a:.1}") y=TOP width=format!("{:.1}", (b - a).max(2.0)) height=H - TOP - BOTTOM>
                        <title>{*why}</title>
                    </rect>
                }).collect_view()}
                {p.ticks.iter().map(|v| view! {
                    <line class="grid" x1=LEFT y1=format!("{:.1}", y(*v)) x2=W - RIGHT y2=format!("{:.1}", y(*v)) />
                    <text class="tick" x=LEFT - 6.0 y=format!("{:.1}", y(*v) + 4.0) text-anchor="end">{count_label(*v)}</text>
                }).collect_view()}
                {x_ticks(from, to, crate::ui::time::zone()).into_iter().map(|(at, label)| view! {
                    <line class="axis" x1=format!("{:.1}", x(at)) y1=H - BOTTOM x2=format!("{:.1}", x(at)) y2=H - BOTTOM + 4.0 />
                    <text class="tick" x=format!("{:.1}", x(at)) y=H - 8.0 text-anchor="middle">{label}</text>
                }).collect_view()}
                <line class="axis" x1=LEFT y1=H - BOTTOM x2=W - RIGHT y2=H - BOTTOM />
                <line class="axis" x1=LEFT y1=TOP x2=LEFT y2=H - BOTTOM />
                <text class="unit" x="4" y=TOP + 14.0>"msgs"</text>
                <path class="line" d=p.line.clone() />
                {p.dots.iter().map(|(x, y)| view! { <circle class="dot" cx=format!("{x:.1}") cy=format!("{y:.1}") r="2.5" /> }).collect_view()}
                {p.points.into_iter().map(|(x, y, text)| view! {
                    <circle class="hit" cx=format!("{x:.1}") cy=format!("{y:.1}") r="5"><title>{text}</title></circle>
                }).collect_view()}
            </svg>
            // The shades' meaning, for the ones drawn: the time before a
            // series began is not an outage and must not read as one.
            <ul class="legend">
                <li><span class="swatch line" aria-hidden="true"></span>"messages behind"</li>
                {unwatched.then(|| view! { <li data-testid="legend-unwatched"><span class="swatch unwatched" aria-hidden="true"></span>{UNWATCHED}": before its first sample"</li> })}
                {gaps.then(|| view! { <li><span class="swatch gap" aria-hidden="true"></span>{UNREAD}</li> })}
            </ul>
            <figcaption class="note">{summary}</figcaption>
        </figure>
    }
    .into_any()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(s: i64) -> DateTime<Utc> {
        Utc.timestamp_opt(s, 0).single().unwrap_or_default()
    }

    fn pt(s: i64, lag: Option<i64>) -> LagPoint {
        LagPoint { at: at(s), lag }
    }

    #[test]
    fn gaps_break_the_line_and_are_shaded() {
        let p = plot(
            &[
                pt(0, Some(5)),
                pt(15, Some(10)),
                pt(30, None),
                pt(45, Some(7)),
                pt(60, Some(8)),
            ],
            at(0),
            at(60),
        )
        .expect("plot");
        assert_eq!(p.line.matches('M').count(), 2, "{}", p.line);
        assert_eq!(p.gaps, 1);
        assert_eq!(
            p.bands.len(),
            1,
            "watched from the start: no unwatched band"
        );
        assert_eq!(p.ticks, [0, 2, 4, 6, 8, 10]);
        assert!(p.dots.is_empty());
        assert_eq!(p.points.len(), 4);
        assert!(
            p.points[1].2.ends_with(": 10 messages behind"),
            "{}",
            p.points[1].2
        );
    }

    #[test]
    fn the_window_asked_is_drawn_with_the_time_before_watching_marked() {
        // An hour asked; samples only in its last 15 minutes.
        let to = at(3600);
        let series: Vec<LagPoint> = (2700..=3600).step_by(15).map(|s| pt(s, Some(1))).collect();
        let p = plot(&series, to - chrono::Duration::hours(1), to).expect("plot");
        let (a, b, why) = p.bands[0];
        assert_eq!(why, UNWATCHED);
        assert!((a - LEFT).abs() < 0.1, "{a}");
        let three_quarters = LEFT + 0.75 * (W - LEFT - RIGHT);
        assert!((b - three_quarters).abs() < 0.1, "{b} vs {three_quarters}");
        assert_eq!(p.gaps, 0, "before watching is not a failure");
        assert_eq!(p.ticks.last(), Some(&10), "jitter stays low on the axis");
    }

    #[test]
    fn a_stretch_no_pass_covered_is_a_gap_and_so_is_silence_up_to_now() {
        let mut series: Vec<LagPoint> = (0..=600).step_by(15).map(|s| pt(s, Some(3))).collect();
        series.extend((1200..=1800).step_by(15).map(|s| pt(s, Some(3))));
        let p = plot(&series, at(0), at(2400)).expect("plot");
        assert_eq!(p.gaps, 2, "{:?}", p.bands);
        assert_eq!(p.line.matches('M').count(), 2);
    }

    #[test]
    fn lone_points_are_dots_and_axes_are_round() {
        let p = plot(
            &[pt(0, None), pt(15, Some(1234)), pt(30, None)],
            at(0),
            at(30),
        )
        .expect("plot");
        assert_eq!(p.dots.len(), 1);
        assert!(p.line.is_empty());
        assert_eq!(p.ticks, [0, 500, 1000, 1500]);
        assert_eq!(y_ticks(0, 10), [0, 2, 4, 6, 8, 10]);
        assert_eq!(y_ticks(51, 10), [0, 20, 40, 60]);
        for max in [1, 7, 99, 12_345, 9_999_999] {
            let t = y_ticks(max, 10);
            assert!(
                (4..=6).contains(&t.len()) && *t.last().unwrap_or(&0) >= max,
                "{max}: {t:?}"
            );
        }
    }

    #[test]
    fn counts_and_times_read_as_people_say_them() {
        assert_eq!(count_label(950), "950");
        assert_eq!(count_label(1500), "1.5k");
        assert_eq!(count_label(12_000), "12k");
        assert_eq!(count_label(3_200_000), "3.2M");
        let hour = x_ticks(at(3600 * 10 + 120), at(3600 * 11 + 120), Tz::UTC);
        assert_eq!(hour.len(), 6, "{hour:?}");
        assert_eq!(hour[0].1, "10:10");
        let day = x_ticks(at(0), at(86_400), Tz::UTC);
        assert!(day.len() >= 4 && day[0].1 == "01-01", "{day:?}");
        // In Kolkata (UTC+5:30) the ticks fall on the reader's round hours
        // and midnight, not UTC's.
        let kolkata = x_ticks(at(0), at(86_400), Tz::Asia__Kolkata);
        assert!(
            kolkata
                .iter()
                .all(|(_, l)| l.ends_with(":00") || l.contains('-')),
            "{kolkata:?}"
        );
        assert!(kolkata.iter().any(|(_, l)| l == "01-02"), "{kolkata:?}");
        let week = x_ticks(at(0), at(7 * 86_400), Tz::UTC);
        assert!((4..=8).contains(&week.len()), "{week:?}");
    }
}
