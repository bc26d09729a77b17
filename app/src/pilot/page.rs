//! `/pilot`: the manager's page, read in two minutes. The day-30 table first
//! (metric, before → now as people say it, baseline, now, events), a small
//! chart per metric over the pilot's weeks, the counts beside each domain's
//! autonomy level, review record and the dismissed flags (as wrong or as
//! expected trouble), the first weeks' receipts folded, and the CSV
//! exports. Managers and
//! admins only: the port refuses everyone else, audited, and the page
//! shows that refusal.

use crate::error::AppError;
use crate::pilot::fns::read_pilot;
use crate::pilot::model::PilotView;
use crate::pilot::widgets::MetricChart;
use crate::ui::notes::ErrorNote;
use crate::ui::pager::Pager;
use crate::ui::params::{href_with, query_param};
use crate::ui::time::stamp_ago;
use crate::watch::widgets::WithinTierLine;
use leptos::prelude::*;
use leptos_meta::Title;
use streamkeeper::flags::lifecycle::dismissal_words;
use streamkeeper::pilot::ratio::said;
use streamkeeper::pilot::stats::{Count, human};
use streamkeeper::platform::durations::fine;
use streamkeeper::platform::words::counted;

#[component]
pub fn PilotPage() -> impl IntoView {
    let page = query_param("receipts");
    let view = Resource::new(
        move || page.get().and_then(|p| p.parse().ok()).unwrap_or(1),
        read_pilot,
    );
    view! {
        <Title text="Pilot" />
        <h1>"Pilot: day-30 review"</h1>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match view.await {
                    Ok(v) => view! { <Report v /> }.into_any(),
                    Err(AppError::NotFound(_)) => view! {
                        <p class="note" data-testid="no-pilot">"No pilot is set up yet. "<a href="/settings/pilot">"Set one up"</a>" (scope, start date and baselines)."</p>
                    }.into_any(),
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn Report(v: PilotView) -> impl IntoView {
    let PilotView { pilot, receipts } = v;
    let s = &pilot.settings;
    let scope = format!(
        "{}: {}",
        s.scope_kind.map(|k| k.as_str()).unwrap_or("-"),
        s.scope.join(", ")
    );
    let started = s.started_on.map(|d| d.to_string()).unwrap_or_default();
    let r = pilot.report;
    let rows = r.table.clone();
    let charts = r
        .table
        .iter()
        .map(|row| {
            view! {
                <section>
                    <h3>{row.description.clone()}</h3>
                    <MetricChart metric=row.metric weeks=r.weeks.clone() baseline_ms=row.baseline_ms />
                </section>
            }
        })
        .collect_view();
    let counts = Count::ALL
        .into_iter()
        .map(|c| {
            let n = r.counts.get(&c).copied().unwrap_or(0);
            view! { <tr data-count=c.as_str()><th scope="row">{c.as_str().replace('_', " ")}</th><td>{n}</td></tr> }
        })
        .collect_view();
    let pager = (receipts.total > u64::from(receipts.per_page)).then(|| {
        let p = receipts.clone();
        view! { <Pager page=p href=|n| href_with("/pilot", &[("receipts", Some(n.to_string()))]) /> }
    });
    view! {
        <p class="note" data-testid="pilot-summary">
            {format!("Day {} of the pilot (started {started}); scope {scope}. ", r.day)}
            <a href="/settings/pilot">"Change the pilot"</a>
        </p>
        <WithinTierLine />
        <section class="card">
            <h2>"Day-30 review"</h2>
            <table class="list" data-testid="pilot-table">
                <thead><tr>
                    <th>"Metric"</th><th>"Before → now (p50)"</th><th>"Baseline"</th><th>"Now (p50)"</th><th>"p90"</th>
                    <th>"Events"</th>
                </tr></thead>
                <tbody>
                    {rows.into_iter().map(|row| view! {
                        <tr data-metric=row.metric.as_str()>
                            <th scope="row">{row.description.clone()}</th>
                            <td class="ratio"><strong>{said(row.baseline_ms, row.now.p50_ms)}</strong></td>
                            <td class="baseline" data-ms=row.baseline_ms>{human(row.baseline_ms)}<br /><small>{row.baseline_note.clone()}</small></td>
                            <td class="p50" data-ms=row.now.p50_ms>{row.now.p50_ms.map(fine).unwrap_or_else(|| "–".into())}</td>
                            <td class="p90" data-ms=row.now.p90_ms>{row.now.p90_ms.map(fine).unwrap_or_else(|| "–".into())}</td>
                            <td class="events" data-events=row.now.events>
                                {row.now.events}
                                <br /><small class=if row.now.few { "few" } else { "" }>{row.now.note.clone()}</small>
                            </td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
            <p>
                "Download: " <a href="/api/v1/pilot/table.csv" download="pilot-table.csv" data-testid="table-csv">"this table (CSV)"</a>
                " · " <a href="/api/v1/pilot/events.csv" download="pilot-events.csv" data-testid="events-csv">"every event behind it (CSV)"</a>
            </p>
        </section>
        <section class="card">
            <h2>"Week by week"</h2>
            <p class="note">"p50 (dark) and p90 (light) per pilot week, each chart scaled to its own figures; the dashed line is the baseline; hollow points rest on fewer than 5 events; a dash is a week without events."</p>
            <div class="pilot-charts">{charts}</div>
        </section>
        <div class="pilot-pair">
        <section class="card">
            <h2>"Counts"</h2>
            <table class="list" data-testid="pilot-counts"><tbody>{counts}</tbody></table>
        </section>
        <section class="card">
            <h2>"Domains: autonomy and review record"</h2>
            <table class="list" data-testid="pilot-domains">
                <thead><tr><th>"Domain"</th><th>"Level"</th><th>"Approvals"</th><th>"Rejections"</th><th>"Flags dismissed as wrong"</th><th>"… as expected trouble"</th></tr></thead>
                <tbody>
                    {pilot.domains.into_iter().map(|d| view! {
                        <tr data-domain=d.domain.clone()>
                            <td>{d.domain.clone()}</td><td>{level_words(&d.autonomy)}</td><td>{d.approvals}</td>
                            <td>{d.rejections}</td><td>{d.dismissed}</td><td>{d.dismissed_expected}</td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
            <h3>"Dismissed flags"</h3>
            <ul data-testid="pilot-dismissed">
                {pilot.dismissed.into_iter().map(|d| view! {
                    <li data-dismissal=d.dismissal.clone()><a href=format!("/flags/{}", d.flag_id)>{format!("{} on {}/{}", d.kind, d.cluster, d.subject)}</a>
                        {format!(" {} ({}, {})", dismissal_words(d.dismissal.as_deref(), Some(&d.reason)), d.by, stamp_ago(d.at))}</li>
                }).collect_view()}
            </ul>
        </section>
        </div>
        // Receipts are evidence to look up, not part of the read: folded,
        // unless a later page of them was asked for.
        <details class="card" open=receipts.page > 1>
            <summary><h2 class="inline">{format!("What Streamkeeper would have done (domains at watch or suggest): {}", counted(receipts.total, "receipt"))}</h2></summary>
            {(receipts.total == 0).then(|| view! {
                <p class="note" data-testid="pilot-receipts-none">"None: no domain in the pilot's scope is at watch or suggest, or nothing happened there that it would have acted on."</p>
            })}
            {(receipts.total > 0).then(|| view! {
            <table class="list" data-testid="pilot-receipts">
                <thead><tr><th>"When"</th><th>"Would have"</th><th>"Domain"</th><th>"Where"</th><th>"What"</th><th>"Receipt"</th></tr></thead>
                <tbody>
                    {receipts.items.iter().map(|x| view! {
                        <tr data-reference=x.reference.clone()>
                            <td>{stamp_ago(x.at)}</td>
                            <td>{x.would.as_str()}</td>
                            <td>{format!("{} ({})", x.domain, level_words(&x.autonomy))}</td>
                            <td>{format!("{}/{}", x.cluster, x.subject)}</td>
                            <td>{x.what.clone()}</td>
                            <td><details><summary>{x.reference.clone()}</summary><pre tabindex="0">{serde_json::to_string_pretty(&x.evidence).unwrap_or_default()}</pre></details></td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
            {pager}
            })}
        </details>
    }
}

/// An autonomy level as people say it ("act after approval"); a value this
/// build does not know is shown as stored.
fn level_words(level: &str) -> String {
    level
        .parse::<streamkeeper::review::Autonomy>()
        .map_or_else(|_| level.to_owned(), |a| a.label().to_owned())
}
