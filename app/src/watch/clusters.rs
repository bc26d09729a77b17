//! Watch: clusters with their state and data age, a cluster's consumer
//! groups, and a group's lag per partition with its chart.

use crate::connect::widgets::ConnectClusters;
use crate::error::AppError;
use crate::notify::widgets::MutedNote;
use crate::ui::chart::{LagChart, RangeLinks, range_hours, range_token};
use crate::ui::notes::ErrorNote;
use crate::ui::owner::owned;
use crate::ui::pager::Pager;
use crate::ui::params::{href_with, id_param, page_param, query_param};
use crate::ui::sort::{shown, sort_header};
use crate::ui::time::stamp_ago;
use crate::ui::title::page_title;
use crate::watch::fns::{get_cluster, get_group_lag, get_lag_series, list_clusters, list_groups};
use crate::watch::model::{PartitionRef, last_message_text};
use leptos::prelude::*;
use leptos_meta::Title;
use streamkeeper::platform::durations::human;
use streamkeeper::watch::cluster::ClusterState;
use streamkeeper::watch::list::GroupColumn;
use streamkeeper::watch::listing::{Listing, NOT_LISTED};

fn state_class(s: ClusterState) -> &'static str {
    match s {
        ClusterState::Up => "badge state-ok",
        ClusterState::Degraded => "badge state-warn",
        ClusterState::Unreachable => "badge state-bad",
        ClusterState::Unknown => "badge",
    }
}

fn status_class(s: &str) -> &'static str {
    match s {
        "OK" => "badge state-ok",
        "WARN" | "INCOMPLETE" => "badge state-warn",
        "NO_COMMIT" | "NOT_CONSUMED" | NOT_LISTED => "badge",
        _ => "badge state-bad",
    }
}

fn age(s: Option<i64>) -> String {
    match s {
        None => "never read".into(),
        Some(s) if s < 120 => format!("{s} s old"),
        Some(s) if s < 7200 => format!("{} min old", s / 60),
        Some(s) => format!("{} h old", s / 3600),
    }
}

/// "Sign-in refused since 2026-12-07 18:05:05 UTC (3 min ago). ", in the
/// reader's time zone, while the cluster's sign-in is refused.
fn refused_note(since: Option<chrono::DateTime<chrono::Utc>>) -> Option<impl IntoView> {
    since.map(|at| {
        view! {
            <strong data-testid="sign-in-refused">
                {format!("Sign-in refused since {}. ", stamp_ago(at))}
            </strong>
        }
    })
}

#[component]
pub fn ClustersPage() -> impl IntoView {
    let clusters = Resource::new(|| (), |_| list_clusters());
    view! {
        <Title text="Clusters" />
        <h1>"Clusters"</h1>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match clusters.await {
                    Ok(list) if list.is_empty() => view! {
                        <p class="note">"No clusters are watched yet. An admin adds one in "
                            <a href="/settings/clusters">"Settings → Add cluster"</a>" or with "
                            <code>"POST /api/v1/clusters"</code>"."</p>
                    }.into_any(),
                    Ok(list) => view! {
                        <table class="list" data-testid="clusters">
                            <thead><tr><th>"Cluster"</th><th>"State"</th><th>"Bootstrap"</th><th>"Security"</th><th>"Every"</th><th>"Data"</th><th>"Problems"</th></tr></thead>
                            <tbody>
                                {list.into_iter().map(|c| view! {
                                    <tr>
                                        <td><a href=format!("/clusters/{}", c.id)>{c.name}</a></td>
                                        <td>{match &c.paused {
                                            Some(p) => view! { <span class="badge" data-testid="paused">{p.text()}</span> }.into_any(),
                                            None => view! { <span class=state_class(c.state)>{c.state.as_str()}</span> }.into_any(),
                                        }}</td>
                                        <td><code>{c.bootstrap}</code></td>
                                        <td>{c.security_protocol}</td>
                                        <td>{format!("{} s", c.interval_s)}</td>
                                        <td>{age(c.data_age_s)}</td>
                                        <td>{refused_note(c.sign_in_refused_since)}{c.problems.join("; ")}</td>
                                    </tr>
                                }).collect_view()}
                            </tbody>
                        </table>
                    }.into_any(),
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
pub fn ClusterPage() -> impl IntoView {
    let id = id_param();
    let detail = Resource::new(
        move || id.get(),
        |id| async move {
            match id {
                Some(id) => get_cluster(id).await,
                None => Err(AppError::NotFound("That cluster".into())),
            }
        },
    );
    view! {
        <Title text="Cluster" />
        <p><a href="/clusters">"← Clusters"</a></p>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match detail.await {
                    Ok(d) => {
                        let c = d.cluster;
                        let id = c.id;
                        view! {
                            <Title text=page_title(Some(&c.name), "Clusters") />
                            {match &c.paused {
                                // Nothing is read while paused: the figures
                                // below are the last pass's, not current.
                                Some(p) => view! {
                                    <h1>{c.name.clone()} " " <span class="badge">"PAUSED"</span></h1>
                                    <p class="error" role="status" data-testid="paused">
                                        {format!("Not watched: {}. The figures below are from its last pass, {}, not current.", p.text(), age(c.data_age_s))}
                                    </p>
                                }.into_any(),
                                None => view! {
                                    <h1>{c.name.clone()} " " <span class=state_class(c.state)>{c.state.as_str()}</span></h1>
                                    <p class="note" data-testid="data-age">
                                        {format!("Data {}; sampled every {} s from {}.", age(c.data_age_s), c.interval_s, c.bootstrap)}
                                    </p>
                                }.into_any(),
                            }}
                            {(!c.problems.is_empty()).then(|| view! {
                                <div class="error" role="alert">{refused_note(c.sign_in_refused_since)}"Last pass: " {c.problems.join("; ")}</div>
                            })}
                            <MutedNote cluster_id=id subject_kind="cluster" subject=c.name.clone() />
                            <h2>"Consumer groups"</h2>
                            <GroupList id />
                            <ConnectClusters id />
                            <h2>"Topics"</h2>
                            <table class="list" data-testid="topics">
                                <thead><tr><th>"Stream"</th><th>"Owner"</th><th>"Tier"</th><th>"Freshness budget"</th><th>"Partitions"</th><th>"Health"</th><th>"Messages"</th><th>"Last message"</th></tr></thead>
                                <tbody>
                                    {d.topics.into_iter().map(|t| {
                                        let (class, health) = if !t.offline.is_empty() {
                                            ("badge state-bad", format!("OFFLINE partitions {:?}", t.offline))
                                        } else if !t.under_replicated.is_empty() {
                                            ("badge state-warn", format!("UNDER-REPLICATED partitions {:?}", t.under_replicated))
                                        } else {
                                            ("badge state-ok", "OK".to_string())
                                        };
                                        view! {
                                            <tr>
                                                <td title=t.description.clone().unwrap_or_default()>
                                                    <a href=href_with(&format!("/clusters/{id}/stream"), &[("name", Some(t.name.clone()))])>{t.name.clone()}</a>
                                                </td>
                                                <td>{t.owner.unwrap_or_else(|| "unowned".into())}</td>
                                                <td>{t.tier.map_or("–".to_string(), |t| format!("Tier {t}"))}</td>
                                                <td>{t.freshness_budget_s.map_or("–".to_string(), |b| format!("{b} s"))}</td>
                                                <td>{t.partitions}</td>
                                                <td><span class=class>{health}</span></td>
                                                <td>{t.log_end_total.map_or("?".to_string(), |n| n.to_string())}</td>
                                                <td>{last_message_text(t.last_message)}</td>
                                            </tr>
                                        }
                                    }).collect_view()}
                                </tbody>
                            </table>
                        }.into_any()
                    }
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

/// Statuses the group list filters on, most troubled first.
const GROUP_STATUSES: [(&str, &str); 11] = [
    ("trouble", "in trouble"),
    ("STOP", "STOP"),
    ("REWIND", "REWIND"),
    ("LOST", "LOST"),
    ("STALL", "STALL"),
    ("WARN", "WARN"),
    ("OK", "OK"),
    ("NO_COMMIT", "no commit"),
    ("NOT_CONSUMED", "not consumed"),
    ("INCOMPLETE", "incomplete"),
    ("gone", "no longer listed"),
];

/// A cluster's consumer groups: searchable, filtered by status, sorted by
/// any column (on the server), paginated, the most troubled first unless
/// a column header was chosen.
#[component]
fn GroupList(id: i64) -> impl IntoView {
    let q = query_param("q");
    let status = query_param("status");
    let sort = query_param("sort");
    let page = page_param();
    let groups = Resource::new(
        move || (q.get(), status.get(), sort.get(), page.get()),
        move |(q, status, sort, page)| list_groups(id, q, status, sort, page),
    );
    let path = format!("/clusters/{id}");
    view! {
        <form method="get" action=path.clone() class="filters" role="search">
            <label>"Group " <input name="q" type="search" value=move || q.get().unwrap_or_default() /></label>
            <label>
                "Status "
                <select name="status">
                    <option value="" selected=move || status.get().is_none()>"any"</option>
                    {GROUP_STATUSES.map(|(value, label)| view! {
                        <option value=value selected=move || status.get().as_deref() == Some(value)>{label}</option>
                    }).collect_view()}
                </select>
            </label>
            // The filter keeps the order chosen by a column header.
            {move || sort.get().map(|v| view! { <input type="hidden" name="sort" value=v /> })}
            <button type="submit">"Filter"</button>
        </form>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || {
                let path = path.clone();
                Suspend::new(async move {
                    match groups.await {
                        Ok(list) => {
                            let params = (q.get_untracked(), status.get_untracked(), sort.get_untracked());
                            let shown = shown::<GroupColumn>(params.2.as_deref());
                            let header = |label, column| sort_header(label, column, shown, |sort| href_with(&path, &[
                                ("q", params.0.clone()),
                                ("status", params.1.clone()),
                                ("sort", Some(sort)),
                            ]));
                            view! {
                                <table class="list" data-testid="groups">
                                    <thead><tr>
                                        {header("Group", GroupColumn::Name)}
                                        {header("Owner", GroupColumn::Owner)}
                                        {header("Status", GroupColumn::Status)}
                                        <th>"State"</th>
                                        {header("Members", GroupColumn::Members)}
                                        {header("Lag (msgs)", GroupColumn::Lag)}
                                        {header("Time lag", GroupColumn::TimeLag)}
                                    </tr></thead>
                                    <tbody>
                                        {list.items.clone().into_iter().map(|g| {
                                            let href = href_with(&format!("/clusters/{id}/group"), &[("name", Some(g.name.clone()))]);
                                            let state = Listing::of(g.gone_since).state(&g.state, stamp_ago);
                                            view! {
                                                <tr>
                                                    <td><a href=href>{g.name}</a></td>
                                                    <td>{owned(g.owner.as_deref(), g.owner_reason.as_deref(), "unowned")}</td>
                                                    <td><span class=status_class(&g.status)>{g.status.clone()}</span></td>
                                                    <td>{state}</td>
                                                    <td>{g.members}</td>
                                                    <td>{g.total_lag.map_or("–".to_string(), |l| l.to_string())}</td>
                                                    <td>{g.max_time_lag_s.map_or("–".to_string(), |s| format!("{s:.0} s"))}</td>
                                                </tr>
                                            }
                                        }).collect_view()}
                                    </tbody>
                                </table>
                                <Pager page=list href=move |n| href_with(&path, &[
                                    ("q", params.0.clone()),
                                    ("status", params.1.clone()),
                                    ("sort", params.2.clone()),
                                    ("page", Some(n.to_string())),
                                ]) />
                            }.into_any()
                        }
                        Err(err) => view! { <ErrorNote err /> }.into_any(),
                    }
                })
            }}
        </Suspense>
    }
}

#[component]
pub fn GroupPage() -> impl IntoView {
    let id = id_param();
    let name = query_param("name");
    let hours = range_hours();
    // `topic` and `partition` draw one partition's lag instead of the total.
    let topic = query_param("topic");
    let partition = query_param("partition");
    let lag = Resource::new(
        move || {
            (
                id.get(),
                name.get(),
                hours.get(),
                topic.get(),
                partition.get(),
            )
        },
        |(id, name, hours, topic, partition)| async move {
            let (Some(id), Some(name)) = (id, name) else {
                return Err(AppError::NotFound("That consumer group".into()));
            };
            let drawn = match (topic, partition) {
                (None, None) => None,
                (Some(topic), Some(p)) => Some(PartitionRef {
                    topic,
                    partition: p.parse().map_err(|_| {
                        AppError::Invalid(format!("{p:?} is not a partition number"))
                    })?,
                }),
                _ => {
                    return Err(AppError::Invalid(
                        "A partition's chart needs both its topic and its number.".into(),
                    ));
                }
            };
            let view = get_group_lag(id, name.clone()).await?;
            let series = get_lag_series(id, name, hours, drawn).await?;
            Ok((view, series))
        },
    );
    view! {
        <Title text=move || page_title(name.get().as_deref(), "Consumer groups") />
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match lag.await {
                    Ok((g, series)) => {
                        let cid = id.get_untracked().unwrap_or_default();
                        let base = format!("/clusters/{cid}/group");
                        let drawn = series.partition.clone();
                        let link = |r: &str| href_with(&base, &[
                            ("name", Some(g.group.clone())),
                            ("topic", drawn.as_ref().map(|p| p.topic.clone())),
                            ("partition", drawn.as_ref().map(|p| p.partition.to_string())),
                            ("range", Some(r.to_string())),
                        ]);
                        let range = range_token(series.hours).to_string();
                        let chart_of = |topic: &str, partition: i32| href_with(&base, &[
                            ("name", Some(g.group.clone())),
                            ("topic", Some(topic.to_string())),
                            ("partition", Some(partition.to_string())),
                            ("range", Some(range.clone())),
                        ]);
                        let total = href_with(&base, &[("name", Some(g.group.clone())), ("range", Some(range.clone()))]);
                        let drawn_here = |topic: &str, partition: i32| {
                            drawn.as_ref().is_some_and(|p| p.topic == topic && p.partition == partition)
                        };
                        let as_of = g.as_of.map_or("no samples yet".to_string(), stamp_ago);
                        let state = Listing::of(g.gone_since).state(&g.state, stamp_ago);
                        view! {
                            <p><a href=format!("/clusters/{cid}")>"← " {g.cluster.clone()}</a></p>
                            <h1>{g.group.clone()} " " <span class=status_class(&g.status) data-testid="group-status">{g.status.clone()}</span></h1>
                            <p class="note" data-testid="data-age">
                                {match &g.cluster_paused {
                                    Some(p) => format!("{state} · {} member(s) · data as of {as_of}, not current: the cluster is {}", g.members, p.text()),
                                    None => format!("{state} · {} member(s) · data as of {as_of} · cluster {}", g.members, g.cluster_state.as_str()),
                                }}
                            </p>
                            <p class="note" data-testid="group-trend">{g.trend.line()}</p>
                            <MutedNote cluster_id=cid subject_kind="group" subject=g.group.clone() />
                            {g.gone_since.map(|t| view! {
                                <div class="error" role="alert" data-testid="group-gone">
                                    {format!("The cluster has not listed this group since {}: it was deleted, or its offsets expired. The figures below are from before.", stamp_ago(t))}
                                </div>
                            })}
                            <h2 data-testid="chart-of">
                                {match &series.partition {
                                    Some(p) => format!("Lag of {} partition {}", p.topic, p.partition),
                                    None => "Total lag, all partitions".to_string(),
                                }}
                            </h2>
                            {series.partition.is_some().then(|| view! {
                                <p><a href=total data-testid="chart-total">"All partitions"</a></p>
                            })}
                            <RangeLinks href=link hours=series.hours />
                            <LagChart points=series.points to=series.to hours=series.hours />
                            <table class="list" data-testid="partitions">
                                <thead><tr><th>"Topic"</th><th>"Partition (its chart)"</th><th>"Committed"</th><th>"Log end"</th><th>"Lag (msgs)"</th><th>"Time lag"</th><th>"Catch-up"</th><th>"Retention"</th><th>"Status"</th><th>"Why"</th></tr></thead>
                                <tbody>
                                    {g.partitions.into_iter().map(|p| view! {
                                        <tr>
                                            <td>{p.topic.clone()}</td>
                                            <td>
                                                <a href=chart_of(&p.topic, p.partition)
                                                    aria-current=drawn_here(&p.topic, p.partition).then_some("page")>
                                                    {p.partition}
                                                </a>
                                            </td>
                                            <td>{p.committed.map_or("no commit".to_string(), |c| c.to_string())}</td>
                                            <td>{p.log_end.map_or("?".to_string(), |e| e.to_string())}</td>
                                            <td>{p.lag.map_or("–".to_string(), |l| l.to_string())}</td>
                                            <td>{p.time_lag_s.map_or("–".to_string(), |s| human((s * 1000.0) as i64))}</td>
                                            <td title=p.trend.velocity_words()>{p.trend.catch_up.clone()}</td>
                                            <td>{p.trend.retention.clone()}</td>
                                            <td><span class=status_class(&p.status)>{p.status.clone()}</span></td>
                                            <td>{p.reason}</td>
                                        </tr>
                                    }).collect_view()}
                                </tbody>
                            </table>
                        }.into_any()
                    }
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}
