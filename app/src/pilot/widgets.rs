//! The pilot's chart: one metric's p50 and p90 per pilot week against its
//! baseline, as server-rendered SVG (readable with JavaScript off). Every
//! week has its point, its figure in a `<title>` for hovering; a week on
//! fewer than 5 events draws hollow points and says so.

use leptos::prelude::*;
use streamkeeper::pilot::Metric;
use streamkeeper::pilot::stats::{Figure, Week, human};

const W: f64 = 720.0;
const H: f64 = 200.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 28.0;

/// A figure in words: `p50 9 min (0.08 × baseline), p90 …, rests on 2 events (fewer than 5)`.
pub fn figure_text(f: &Figure) -> String {
    let part = |name: &str, v: Option<i64>, r: Option<f64>| match (v, r) {
        (Some(v), Some(r)) => format!("{name} {} ({r:.2} × baseline)", human(v)),
        (Some(v), None) => format!("{name} {}", human(v)),
        _ => String::new(),
    };
    match f.p50_ms {
        None => f.note.clone(),
        Some(_) => format!(
            "{}, {}; {}",
            part("p50", f.p50_ms, f.ratio_p50),
            part("p90", f.p90_ms, f.ratio_p90),
            f.note
        ),
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
    let top = figures
        .iter()
        .filter_map(|(_, f)| f.p90_ms)
        .chain([baseline_ms])
        .max()
        .unwrap_or(1)
        .max(1) as f64;
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
                figure_text(f)
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
                <text class="tick" x=LEFT - 6.0 y=TOP + 4.0 text-anchor="end">{human(top as i64)}</text>
                <text class="tick" x=LEFT - 6.0 y=H - BOTTOM text-anchor="end">"0"</text>
                <line class="baseline" x1=LEFT y1=base_y.clone() x2=W - RIGHT y2=base_y.clone()>
                    <title>{format!("Baseline: {}", human(baseline_ms))}</title>
                </line>
                <text class="tick" x=W - RIGHT y=format!("{:.1}", y(baseline_ms) - 4.0) text-anchor="end">{format!("baseline {}", human(baseline_ms))}</text>
                <path class="line p90" d=p90_line />
                <path class="line p50" d=p50_line />
                {points}
            </svg>
            <figcaption class="note">{summary}" Filled: p50 (dark) and p90 (light); hollow points rest on fewer than 5 events; a dash is a week without events."</figcaption>
        </figure>
    }
}
