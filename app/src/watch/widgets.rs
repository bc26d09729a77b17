//! Watch's widgets: the freshness SLOs' stream page section, a domain's
//! table and the "streams within their tier" line (issue 42; the rules
//! are `streamkeeper::watch::slo`).

use crate::ui::notes::ErrorNote;
use crate::ui::params::href_with;
use crate::watch::model::{DomainSlo, within_line};
use leptos::prelude::*;
use streamkeeper::watch::slo::{StreamSlo, budget_sentence};

/// Where a domain's SLO page is.
pub fn domain_href(domain: &str) -> String {
    href_with("/domain", &[("name", Some(domain.to_string()))])
}

fn pct(p: Option<f64>) -> String {
    p.map_or("not known".into(), |p| format!("{p:.2} %"))
}

fn mins(m: f64) -> String {
    streamkeeper::platform::durations::human((m * 60_000.0) as i64)
}

/// A stream page's SLO section; a stream without a freshness budget has
/// none and says how to get one.
#[component]
pub fn StreamSloSection(slo: Option<StreamSlo>) -> impl IntoView {
    let Some(s) = slo else {
        return view! {
            <section class="card" data-testid="stream-slo">
                <h2>"Freshness SLO"</h2>
                <p class="note">"No freshness budget: describe the stream with one (and an SLA tier) to track its SLO."</p>
            </section>
        }
        .into_any();
    };
    let target = s
        .target_pct
        .map_or("no SLA tier".to_string(), |t| format!("target {t:.1} %"));
    let within = match s.within_tier {
        Some(true) => "within its tier",
        Some(false) => "outside its tier",
        None => "not known",
    };
    view! {
        <section class="card" data-testid="stream-slo">
            <h2>"Freshness SLO"</h2>
            {s.interval_warning.clone().map(|w| view! { <p class="flash error" role="alert" data-testid="slo-interval-warning">{w}</p> })}
            <dl>
                <dt>{format!("Attainment ({})", s.month)}</dt>
                <dd data-testid="slo-attainment">{format!("{} ({target}) · {within}", pct(s.attainment_pct))}</dd>
                <dt>"Error budget"</dt><dd data-testid="slo-budget">{budget_sentence(&s)}</dd>
                <dt>"This month"</dt>
                <dd>{format!("fresh {} · stale {} · not known {}", mins(s.fresh_min), mins(s.stale_min), mins(s.not_known_min))}</dd>
            </dl>
            <p class="note">"Stale: a reader's time lag above the freshness budget. Not known: time no pass judged (the cluster unreachable, no reader's time lag known)."</p>
        </section>
    }
    .into_any()
}

/// A domain's streams and their SLOs as a table.
#[component]
pub fn DomainSloView(d: DomainSlo) -> impl IntoView {
    view! {
        <p data-testid="domain-within">{d.line()}</p>
        <p><a href=href_with("/api/v1/slo.csv", &[("domain", Some(d.domain.clone()))]) download="slo.csv" data-testid="slo-csv">"These SLOs (CSV)"</a></p>
        <table class="list" data-testid="domain-slo">
            <thead><tr>
                <th>"Stream"</th><th>"Cluster"</th><th>"Tier"</th><th>"Attainment"</th><th>"Error budget"</th><th>"Within tier"</th>
            </tr></thead>
            <tbody>
                {d.streams.into_iter().map(|r| {
                    let href = href_with(&format!("/clusters/{}/stream", r.cluster_id), &[("name", Some(r.topic.clone()))]);
                    view! {
                        <tr>
                            <td><a href=href>{r.topic}</a></td>
                            <td>{r.cluster}</td>
                            <td>{r.slo.tier.map_or("–".to_string(), |t| format!("Tier {t}"))}</td>
                            <td>{pct(r.slo.attainment_pct)}</td>
                            <td>{budget_sentence(&r.slo)}</td>
                            <td>{match r.slo.within_tier { Some(true) => "yes", Some(false) => "no", None => "not known" }}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
}

/// The pilot page's line: every stream judged against its tier.
#[component]
pub fn WithinTierLine() -> impl IntoView {
    let all = Resource::new(|| (), |_| crate::watch::fns::get_slos());
    view! {
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match all.await {
                    Ok(rows) => {
                        let (w, n) = streamkeeper::watch::slo::within_tier(rows.iter().map(|r| &r.slo));
                        view! { <p data-testid="pilot-within-tier">{capitalised(&within_line(w, n))}</p> }.into_any()
                    }
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}
