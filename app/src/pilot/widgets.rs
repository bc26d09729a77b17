//! The pilot's chart: one metric's p50 and p90 per pilot week against its
//! baseline, as server-rendered SVG (readable with JavaScript off). Every
//! week has its point, its figure in a `<title>` for hovering; a week on
//! fewer than 5 events draws hollow points and says so.

use leptos::prelude::*;
use streamkeeper::pilot::Metric;
use streamkeeper::pilot::ratio::{Change, change};
use streamkeeper::pilot::stats::{Figure, Week, human};
use streamkeeper::platform::durations::fine;

// Small multiples: three to a row on a laptop, so the page stays short.
const W: f64 = 400.0;
const H: f64 = 180.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 28.0;

/// A figure in words: `p50 9 min (10× faster than the baseline), p90 …,
/// rests on 2 events (fewer than 5)`.
pub fn figure_text(f: &Figure, baseline_ms: i64) -> String {
    let part = |name: &str, v: Option<i64>| match v {
        Some(v) => format!("{name} {} ({})", fine(v), against_baseline(baseline_ms, v)),
        None => String::new(),
    };
    match f.p50_ms {
        None => f.note.clone(),
        Some(_) => format!(
            "{}, {}; {}",
            part("p50", f.p50_ms),
            part("p90", f.p90_ms),
            f.note
        ),
    }
}

/// `10× faster than the baseline`, `about the same as the baseline`.
fn against_baseline(baseline_ms: i64, ms: i64) -> String {
    match change(baseline_ms, ms) {
        Change::Same => "about the same as the baseline".to_string(),
        c @ (Change::AtOnce | Change::NoBaseline | Change::UnderASecond) => c.to_string(),
        faster_or_slower => format!("{faster_or_slower} than the baseline"),
    }
}

/// The top of a chart's axis: its own figures' highest, so they fill it.
/// The baseline joins the scale when it is at most twice that; higher, it
/// would squash the figures into the bottom of the chart, so it is named
/// above the chart instead of drawn (`false`).
fn scale(highest: Option<i64>, baseline_ms: i64) -> (i64, bool) {
    match highest {
        Some(h) if baseline_ms > h.saturating_mul(2) => (h.max(1), false),
        Some(h) => (h.max(baseline_ms).max(1), true),
        None => (baseline_ms.max(1), true),
    }
}

#[component]
pub fn MetricChart(metric: Metric, weeks: Vec<Week>, baseline_ms: i64) -> impl IntoView {
    let figures: Vec<(&Week, Figure)> = weeks
        .iter()
        .map(|w| {
            (
                w,
                w.figures
                    .get(&metric)
                    .cloned()
                    .unwrap_or_else(|| streamkeeper::pilot::stats::figure(Vec::new(), baseline_ms)),
            )
        })
        .collect();
    let (top, baseline_drawn) = scale(
        figures
            .iter()
            .filter_map(|(_, f)| f.p90_ms.or(f.p50_ms))
            .max(),
        baseline_ms,
    );
    let top = top as f64;
    let n = weeks.len().max(1) as f64;
    let x = |i: usize| LEFT + (i as f64 + 0.5) / n * (W - LEFT - RIGHT);
    let y = |v: i64| TOP + (1.0 - v as f64 / top) * (H - TOP - BOTTOM);
    let line = |pick: fn(&Figure) -> Option<i64>| {
        let mut d = String::new();
        for (i, (_, f)) in figures.iter().enumerate() {
            if let Some(v) = pick(f) {
                let op = if d.is_empty() { 'M' } else { 'L' };
                d.push_str(&format!("{op}{:.1},{:.1} ", x(i), y(v)));
            }
        }
        d
    };
    let p50_line = line(|f| f.p50_ms);
    let p90_line = line(|f| f.p90_ms);
    let summary = format!(
        "{}: p50 and p90 per pilot week against the baseline of {}.",
        metric.describe(),
        human(baseline_ms)
    );
    let points = figures
        .iter()
        .enumerate()
        .map(|(i, (w, f))| {
            let label = format!(
                "Week {} ({} – {}): {}",
                w.week,
                w.from.format("%m-%d"),
                w.to.format("%m-%d"),
                figure_text(f, baseline_ms)
            );
            let class = if f.few { "point few" } else { "point" };
            let cx = format!("{:.1}", x(i));
            let tick = view! {
                <text class="tick" x=cx.clone() y=H - 8.0 text-anchor="middle">{format!("w{}", w.week)}</text>
            };
            let marks = match (f.p50_ms, f.p90_ms) {
                (Some(p50), Some(p90)) => view! {
                    <circle class=format!("{class} p90") cx=cx.clone() cy=format!("{:.1}", y(p90)) r="4"><title>{label.clone()}</title></circle>
                    <circle class=format!("{class} p50") cx=cx.clone() cy=format!("{:.1}", y(p50)) r="4"><title>{label.clone()}</title></circle>
                }
                .into_any(),
                _ => view! {
                    <text class="empty" x=cx.clone() y=H - BOTTOM - 4.0 text-anchor="middle">"–"<title>{label.clone()}</title></text>
                }
                .into_any(),
            };
            view! {
                <g class="week" data-week=w.week data-events=f.events data-p50-ms=f.p50_ms data-p90-ms=f.p90_ms>
                    <title>{label}</title>
                    {marks}
                    {tick}
                </g>
            }
        })
        .collect_view();
    let base_y = format!("{:.1}", y(baseline_ms));
    view! {
        <figure class="chart pilot-chart" data-metric=metric.as_str()>
            <svg viewBox=format!("0 0 {W} {H}") role="img" aria-label=summary.clone() xmlns="http://www.w3.org/2000/svg">
                <title>{summary.clone()}</title>
                <line class="axis" x1=LEFT y1=H - BOTTOM x2=W - RIGHT y2=H - BOTTOM />
                <line class="axis" x1=LEFT y1=TOP x2=LEFT y2=H - BOTTOM />
                <text class="tick" x=LEFT - 6.0 y=TOP + 4.0 text-anchor="end">{fine(top as i64)}</text>
                <text class="tick" x=LEFT - 6.0 y=H - BOTTOM text-anchor="end">"0"</text>
                {if baseline_drawn {
                    view! {
                        <line class="baseline" x1=LEFT y1=base_y.clone() x2=W - RIGHT y2=base_y.clone()>
                            <title>{format!("Baseline: {}", human(baseline_ms))}</title>
                        </line>
                        <text class="tick" x=W - RIGHT y=format!("{:.1}", y(baseline_ms) - 4.0) text-anchor="end">{format!("baseline {}", human(baseline_ms))}</text>
                    }.into_any()
                } else {
                    view! {
                        <text class="tick" x=W - RIGHT y=TOP + 4.0 text-anchor="end" data-testid="baseline-above">{format!("baseline {} ↑ (above)", human(baseline_ms))}</text>
                    }.into_any()
                }}
                <path class="line p90" d=p90_line />
                <path class="line p50" d=p50_line />
                {points}
            </svg>
            <figcaption class="note">{summary}</figcaption>
        </figure>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chart_is_scaled_to_its_figures_and_a_far_baseline_is_named_above() {
        const MIN: i64 = 60_000;
        // 2 h before, about 11 min now: the baseline would squash them.
        assert_eq!(scale(Some(11 * MIN), 120 * MIN), (11 * MIN, false));
        // Near the figures, the baseline is drawn within the scale.
        assert_eq!(scale(Some(11 * MIN), 20 * MIN), (20 * MIN, true));
        assert_eq!(scale(Some(30 * MIN), 20 * MIN), (30 * MIN, true));
        // No figures yet: the baseline alone.
        assert_eq!(scale(None, 20 * MIN), (20 * MIN, true));
        assert_eq!(
            against_baseline(90 * MIN, 9 * MIN),
            "10× faster than the baseline"
        );
        assert_eq!(
            against_baseline(60 * MIN, 62 * MIN),
            "about the same as the baseline"
        );
    }
}
