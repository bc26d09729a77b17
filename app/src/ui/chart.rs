//! Server-rendered SVG charts: readable without JavaScript, with axes,
//! units and gaps drawn as gaps (shaded), never as zero.

use crate::watch::model::LagPoint;
use leptos::prelude::*;

const W: f64 = 720.0;
const H: f64 = 220.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 28.0;

/// A round upper bound for the y axis (1, 2 or 5 × 10ⁿ).
fn nice_max(v: i64) -> i64 {
    let v = v.max(1);
    let mut step = 1_i64;
    loop {
        for m in [1, 2, 5] {
            if step.saturating_mul(m) >= v {
                return step * m;
            }
        }
        step = step.saturating_mul(10);
    }
}

struct Plot {
    /// Path data of the line, one `M` per run between gaps.
    line: String,
    /// Lone points between two gaps, drawn as dots.
    dots: Vec<(f64, f64)>,
    /// x ranges without data.
    gaps: Vec<(f64, f64)>,
    y_max: i64,
}

fn plot(points: &[LagPoint]) -> Option<Plot> {
    let (first, last) = (points.first()?, points.last()?);
    let t0 = first.at.timestamp_millis() as f64;
    let span = (last.at.timestamp_millis() as f64 - t0).max(1.0);
    let y_max = nice_max(points.iter().filter_map(|p| p.lag).max().unwrap_or(0));
    let x = |p: &LagPoint| LEFT + (p.at.timestamp_millis() as f64 - t0) / span * (W - LEFT - RIGHT);
    let y = |v: i64| TOP + (1.0 - v as f64 / y_max as f64) * (H - TOP - BOTTOM);
    let mut line = String::new();
    let mut dots = Vec::new();
    let mut gaps = Vec::new();
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
    for p in points {
        match p.lag {
            Some(v) => {
                if let Some(g) = gap_start.take() {
                    gaps.push((g, x(p)));
                }
                run.push((x(p), y(v)));
            }
            None => {
                flush(&mut run, &mut line);
                gap_start.get_or_insert(x(p));
            }
        }
    }
    flush(&mut run, &mut line);
    if let Some(g) = gap_start {
        gaps.push((g, W - RIGHT));
    }
    Some(Plot {
        line,
        dots,
        gaps,
        y_max,
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

/// Links to the same page over 1 h, 24 h and 7 d; `href` builds the link
/// for a `range` value.
#[component]
pub fn RangeLinks(href: impl Fn(&str) -> String) -> impl IntoView {
    view! {
        <nav class="ranges" aria-label="Range">
            <a href=href("1h")>"1 h"</a>
            <a href=href("24h")>"24 h"</a>
            <a href=href("7d")>"7 d"</a>
        </nav>
    }
}

/// A lag chart: messages behind per pass over the chosen range.
#[component]
pub fn LagChart(points: Vec<LagPoint>) -> impl IntoView {
    let Some(p) = plot(&points) else {
        return view! { <p class="note">"No samples in this range yet."</p> }.into_any();
    };
    let fmt = |t: chrono::DateTime<chrono::Utc>| t.format("%m-%d %H:%M UTC").to_string();
    let start = points.first().map(|p| fmt(p.at)).unwrap_or_default();
    let end = points.last().map(|p| fmt(p.at)).unwrap_or_default();
    let summary = format!(
        "Lag in messages from {start} to {end}; highest {}; {} gap(s) without data.",
        points.iter().filter_map(|p| p.lag).max().unwrap_or(0),
        p.gaps.len()
    );
    view! {
        <figure class="chart">
            <svg viewBox=format!("0 0 {W} {H}") role="img" aria-label=summary.clone() xmlns="http://www.w3.org/2000/svg">
                <title>{summary.clone()}</title>
                {p.gaps.iter().map(|(a, b)| view! {
                    <rect class="gap" x=format!("{a:.1}") y=TOP width=format!("{:.1}", (b - a).max(2.0)) height=H - TOP - BOTTOM>
                        <title>"No data: the cluster could not be read"</title>
                    </rect>
                }).collect_view()}
                <line class="axis" x1=LEFT y1=H - BOTTOM x2=W - RIGHT y2=H - BOTTOM />
                <line class="axis" x1=LEFT y1=TOP x2=LEFT y2=H - BOTTOM />
                <line class="grid" x1=LEFT y1=TOP x2=W - RIGHT y2=TOP />
                <text class="tick" x=LEFT - 6.0 y=TOP + 4.0 text-anchor="end">{p.y_max.to_string()}</text>
                <text class="tick" x=LEFT - 6.0 y=H - BOTTOM text-anchor="end">"0"</text>
                <text class="unit" x="4" y=TOP + 14.0>"msgs"</text>
                <text class="tick" x=LEFT y=H - 8.0>{start}</text>
                <text class="tick" x=W - RIGHT y=H - 8.0 text-anchor="end">{end}</text>
                <path class="line" d=p.line.clone() />
                {p.dots.iter().map(|(x, y)| view! { <circle class="dot" cx=format!("{x:.1}") cy=format!("{y:.1}") r="2.5" /> }).collect_view()}
            </svg>
            <figcaption class="note">{summary}</figcaption>
        </figure>
    }
    .into_any()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};

    fn pt(s: i64, lag: Option<i64>) -> LagPoint {
        LagPoint {
            at: Utc.timestamp_opt(s, 0).single().unwrap_or_default(),
            lag,
        }
    }

    #[test]
    fn gaps_break_the_line_and_are_shaded() {
        let p = plot(&[
            pt(0, Some(5)),
            pt(15, Some(10)),
            pt(30, None),
            pt(45, Some(7)),
            pt(60, Some(8)),
        ])
        .expect("plot");
        assert_eq!(p.line.matches('M').count(), 2, "{}", p.line);
        assert_eq!(p.gaps.len(), 1);
        assert_eq!(p.y_max, 10);
        assert!(p.dots.is_empty());
    }

    #[test]
    fn lone_points_are_dots_and_axis_is_round() {
        let p = plot(&[pt(0, None), pt(15, Some(1234)), pt(30, None)]).expect("plot");
        assert_eq!(p.dots.len(), 1);
        assert!(p.line.is_empty());
        assert_eq!(p.y_max, 2000);
        assert_eq!(nice_max(0), 1);
        assert_eq!(nice_max(50), 50);
        assert_eq!(nice_max(51), 100);
    }
}
