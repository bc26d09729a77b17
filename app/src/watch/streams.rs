//! Streams: every topic of every watched cluster with its owner and status
//! (searchable, filterable, paginated on the server), and a stream's page
//! with its health and its consumers' lag and charts.

// The catalog form's server function takes one argument per field, as
// ActionForm sends them; the generated client function cannot carry an
// allow of its own.
#![allow(clippy::too_many_arguments)]

use crate::error::AppError;
use crate::notify::widgets::MutedNote;
use crate::schemas::widgets::StreamSchemasSection;
use crate::ui::chart::{LagChart, RangeLinks, range_hours};
use crate::ui::notes::{ActionNote, ErrorNote};
use crate::ui::owner::owned;
use crate::ui::pager::Pager;
use crate::ui::params::{href_with, id_param, page_param, query_param};
use crate::ui::sort::{shown, sort_header};
use crate::ui::time::stamp_ago;
use crate::ui::title::page_title;
use crate::watch::fns::{DescribeStream, get_stream, list_streams};
use crate::watch::model::{StreamDetail, last_message_text};
use crate::watch::widgets::{StreamSloSection, domain_href};
use leptos::prelude::*;
use leptos_meta::Title;
use streamkeeper::platform::durations::human;
use streamkeeper::platform::words::counted;
use streamkeeper::watch::list::StreamColumn;
use streamkeeper::watch::listing::{Listing, NOT_LISTED};

fn status_class(s: &str) -> &'static str {
    match s {
        "OK" => "badge state-ok",
        "WARN" | "QUIET" | "UNDER_REPLICATED" => "badge state-warn",
        "INCOMPLETE" | "NO_COMMIT" | NOT_LISTED => "badge",
        _ => "badge state-bad",
    }
}

#[component]
pub fn StreamsPage() -> impl IntoView {
    let q = query_param("q");
    let owner = query_param("owner");
    let status = query_param("status");
    let sort = query_param("sort");
    let page = page_param();
    let streams = Resource::new(
        move || (q.get(), owner.get(), status.get(), sort.get(), page.get()),
        |(q, owner, status, sort, page)| list_streams(q, owner, status, sort, page),
    );
    view! {
        <Title text="Streams" />
        <h1>"Streams"</h1>
        <form method="get" action="/streams" class="filters" role="search">
            <label>"Topic " <input name="q" type="search" value=move || q.get().unwrap_or_default() /></label>
            <label>"Owner " <input name="owner" placeholder="team, or unowned" value=move || owner.get().unwrap_or_default() /></label>
            <label>
                "Status "
                <select name="status">
                    <option value="" selected=move || status.get().is_none()>"any"</option>
                    <option value="trouble" selected=move || status.get().as_deref() == Some("trouble")>"in trouble"</option>
                    <option value="ok" selected=move || status.get().as_deref() == Some("ok")>"OK"</option>
                </select>
            </label>
            // The filter keeps the order chosen by a column header.
            {move || sort.get().map(|v| view! { <input type="hidden" name="sort" value=v /> })}
            <button type="submit">"Filter"</button>
        </form>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match streams.await {
                    Ok(list) => {
                        let params = (q.get_untracked(), owner.get_untracked(), status.get_untracked(), sort.get_untracked());
                        let shown = shown::<StreamColumn>(params.3.as_deref());
                        let header = |label, column| sort_header(label, column, shown, |sort| href_with("/streams", &[
                            ("q", params.0.clone()),
                            ("owner", params.1.clone()),
                            ("status", params.2.clone()),
                            ("sort", Some(sort)),
                        ]));
                        view! {
                            <table class="list" data-testid="streams">
                                <thead><tr>
                                    {header("Stream", StreamColumn::Stream)}
                                    {header("Cluster", StreamColumn::Cluster)}
                                    {header("Owner", StreamColumn::Owner)}
                                    {header("Tier", StreamColumn::Tier)}
                                    {header("Partitions", StreamColumn::Partitions)}
                                    {header("Status", StreamColumn::Status)}
                                    {header("Last message", StreamColumn::LastMessage)}
                                </tr></thead>
                                <tbody>
                                    {list.items.clone().into_iter().map(|s| {
                                        let href = href_with(&format!("/clusters/{}/stream", s.cluster_id), &[("name", Some(s.topic.clone()))]);
                                        view! {
                                            <tr>
                                                <td><a href=href>{s.topic}</a></td>
                                                <td>{s.cluster}</td>
                                                <td>{s.owner.unwrap_or_else(|| "unowned".into())}</td>
                                                <td>{s.tier.map_or("–".to_string(), |t| format!("Tier {t}"))}</td>
                                                <td>{s.partitions}</td>
                                                <td><span class=status_class(&s.status)>{s.status.clone()}</span></td>
                                                <td>{last_message_text(s.last_message)}</td>
                                            </tr>
                                        }
                                    }).collect_view()}
                                </tbody>
                            </table>
                            <Pager page=list href=move |n| href_with("/streams", &[
                                ("q", params.0.clone()),
                                ("owner", params.1.clone()),
                                ("status", params.2.clone()),
                                ("sort", params.3.clone()),
                                ("page", Some(n.to_string())),
                            ]) />
                        }.into_any()
                    }
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
pub fn StreamPage() -> impl IntoView {
    let id = id_param();
    let name = query_param("name");
    let hours = range_hours();
    let describe = ServerAction::<DescribeStream>::new();
    let detail = Resource::new(
        move || (id.get(), name.get(), hours.get(), describe.version().get()),
        |(id, name, hours, _)| async move {
            match (id, name) {
                (Some(id), Some(name)) => get_stream(id, name, hours).await,
                _ => Err(AppError::NotFound("That stream".into())),
            }
        },
    );
    view! {
        <Title text=move || page_title(name.get().as_deref(), "Streams") />
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match detail.await {
                    Ok(d) => view! { <StreamView d describe /> }.into_any(),
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn StreamView(d: StreamDetail, describe: ServerAction<DescribeStream>) -> impl IntoView {
    let t = d.topic;
    let form = view! { <CatalogForm cluster_id=d.cluster_id t=t.clone() describe admin=d.may_set_domain /> };
    let base = format!("/clusters/{}/stream", d.cluster_id);
    let name = t.name.clone();
    let link = move |r: &str| {
        href_with(
            &base,
            &[("name", Some(name.clone())), ("range", Some(r.to_string()))],
        )
    };
    let health = if !t.offline.is_empty() {
        format!("OFFLINE partitions {:?}", t.offline)
    } else if !t.under_replicated.is_empty() {
        format!("UNDER-REPLICATED partitions {:?}", t.under_replicated)
    } else {
        "all partitions led and in sync".to_string()
    };
    let age = d
        .data_age_s
        .map_or("never read".to_string(), |s| format!("{s} s old"));
    view! {
        <p><a href="/streams">"← Streams"</a></p>
        <h1>{t.name.clone()}</h1>
        <p class="note" data-testid="stream-cluster">{match &d.cluster_paused {
            Some(p) => format!("Cluster {} {} · data {age}, not current", d.cluster, p.text()),
            None => format!("Cluster {} ({}) · data {age}", d.cluster, d.cluster_state.as_str()),
        }}</p>
        <MutedNote cluster_id=d.cluster_id subject_kind="topic" subject=t.name.clone() />
        <p><a href=crate::lineage::widgets::topic_graph_href(d.cluster_id, &t.name) data-testid="stream-lineage">"Lineage graph"</a> " · " <a href=crate::lineage::widgets::topic_impact_href(d.cluster_id, &t.name) data-testid="stream-impact">"What breaks if it changes"</a></p>
        <section class="card">
            <dl>
                <dt>"Owner"</dt><dd>{t.owner.clone().unwrap_or_else(|| "unowned — an owner can claim it".into())}</dd>
                <dt>"Domain"</dt><dd>{match t.domain.clone().filter(|d| !d.is_empty()) {
                    Some(d) => {
                        let href = domain_href(&d);
                        view! { <a href=href data-testid="stream-domain">{d}</a> }.into_any()
                    }
                    None => "–".into_any(),
                }}</dd>
                <dt>"SLA tier"</dt><dd>{t.tier.map_or("–".to_string(), |t| format!("Tier {t}"))}</dd>
                <dt>"Freshness budget"</dt><dd>{t.freshness_budget_s.map_or("–".to_string(), |b| format!("{b} s"))}</dd>
                <dt>"Expected interval"</dt><dd>{t.expected_interval_s.map_or("–".to_string(), |b| format!("a message every {b} s"))}</dd>
                <dt>"Health"</dt><dd>{format!("{}; {health}", counted(t.partitions, "partition"))}</dd>
                <dt>"Messages"</dt><dd>{t.log_end_total.map_or("?".to_string(), |n| n.to_string())}</dd>
                <dt>"Last message"</dt><dd>{last_message_text(t.last_message)}</dd>
                <dt>"Description"</dt><dd>{t.description.clone().unwrap_or_default()}</dd>
            </dl>
        </section>
        <StreamSloSection slo=t.slo.clone() />
        {form}
        <StreamSchemasSection cluster_id=d.cluster_id topic=t.name.clone() />
        <h2>"Consumer groups"</h2>
        <RangeLinks href=link hours=d.series_hours />
        {if d.consumers.is_empty() {
            view! { <p class="note">"No consumer group has been seen reading this stream."</p> }.into_any()
        } else {
            d.consumers.into_iter().map(|c| {
                let href = href_with(&format!("/clusters/{}/group", d.cluster_id), &[("name", Some(c.group.clone()))]);
                view! {
                    <section class="card" data-testid="consumer">
                        <h3>
                            <a href=href>{c.group.clone()}</a> " "
                            <span class=status_class(&c.status)>{c.status.clone()}</span>
                        </h3>
                        <p class="note">{format!(
                            "{}owner {} · lag {} · time lag {}",
                            Listing::of(c.gone_since).words(stamp_ago).map(|w| format!("{w} · ")).unwrap_or_default(),
                            owned(c.owner.as_deref(), c.owner_reason.as_deref(), "none"),
                            c.lag.map_or("–".to_string(), |l| counted(l, "message")),
                            c.max_time_lag_s.map_or("–".to_string(), |s| human((s * 1000.0) as i64)),
                        )}</p>
                        <p class="note" data-testid="consumer-trend">{c.trend.line()}</p>
                        <LagChart points=c.series to=d.series_to hours=d.series_hours />
                    </section>
                }
            }).collect_view().into_any()
        }}
    }
}

/// The stream's catalog entry as a form: admins edit any stream, owners
/// claim unowned streams and edit their teams' (the server decides). The
/// domain and the declared level are an admin's to set: others see them
/// and send them back unchanged.
#[component]
fn CatalogForm(
    cluster_id: i64,
    t: crate::watch::model::TopicView,
    describe: ServerAction<DescribeStream>,
    admin: bool,
) -> impl IntoView {
    let num = |v: Option<i32>| v.map(|v| v.to_string()).unwrap_or_default();
    let domain = t.domain.clone().unwrap_or_default();
    let level = t.compatibility.clone().unwrap_or_default();
    let admin_fields = if admin {
        view! {
            <label>"Domain" <input name="domain" value=domain /></label>
            <label>
                "Schema compatibility level"
                <select name="compatibility">
                    <option value="" selected=t.compatibility.is_none()>"not declared"</option>
                    {streamkeeper::schemas::Mode::ALL.map(|m| {
                        let selected = t.compatibility.as_deref() == Some(m.as_str());
                        view! { <option value=m.as_str() selected=selected>{m.as_str()}</option> }
                    }).collect_view()}
                </select>
            </label>
        }
        .into_any()
    } else {
        let shown = |v: &str, none: &str| {
            if v.is_empty() {
                none.to_string()
            } else {
                v.to_string()
            }
        };
        view! {
            <p class="muted" data-testid="admin-fields">
                {format!(
                    "Domain {} and compatibility level {}: set by an admin, since the domain decides who approves this stream's changes.",
                    shown(&domain, "none"),
                    shown(&level, "not declared"),
                )}
            </p>
            <input type="hidden" name="domain" value=domain.clone() />
            <input type="hidden" name="compatibility" value=level.clone() />
        }
        .into_any()
    };
    view! {
        <details class="card">
            <summary>"Describe or claim this stream"</summary>
            <ActionForm action=describe attr:class="stack" attr:data-testid="describe-stream">
                <input type="hidden" name="cluster_id" value=cluster_id.to_string() />
                <input type="hidden" name="topic" value=t.name.clone() />
                <label>"Owner team" <input name="owner_team" value=t.owner.clone().unwrap_or_default() placeholder="payments" /></label>
                <label>
                    "SLA tier"
                    <select name="tier">
                        <option value="" selected=t.tier.is_none()>"none"</option>
                        <option value="1" selected=t.tier == Some(1)>"Tier 1 (99.9 %)"</option>
                        <option value="2" selected=t.tier == Some(2)>"Tier 2 (99.5 %)"</option>
                        <option value="3" selected=t.tier == Some(3)>"Tier 3 (99.0 %)"</option>
                    </select>
                </label>
                <label>"Freshness budget (seconds of time lag)" <input name="freshness_budget_s" type="number" min="1" value=num(t.freshness_budget_s) /></label>
                <label>"Expected message interval (seconds)" <input name="expected_interval_s" type="number" min="1" value=num(t.expected_interval_s) /></label>
                <label>"Description" <input name="description" value=t.description.clone().unwrap_or_default() /></label>
                {admin_fields}
                <button type="submit">"Save"</button>
            </ActionForm>
            <ActionNote value=describe.value() />
        </details>
    }
}
