//! Notifications' screens: a team's channels and repeat interval
//! (`/settings/teams/:id/notifications`) and a cluster's silences
//! (`/clusters/:id/silences`). Plain forms answered by a redirect, so they
//! work without JavaScript; the port authorizes and audits.

use crate::error::AppError;
use crate::notify::fns::{
    AddNotifyChannel, AddSilence, CHANNEL_FORM, EndSilence, RemoveNotifyChannel, SILENCE_FORM,
    SetNotifyRepeat, TestNotifyChannel, list_silences, read_team_notify, repeat_words, until_words,
    what,
};
use crate::notify::model::{ChannelView, SilenceView, TeamNotify};
use crate::ui::flash::{KeptForm, take_kept};
use crate::ui::notes::{ActionNote, ErrorNote};
use crate::ui::params::{id_param, query_param};
use crate::ui::time::stamp_ago;
use crate::ui::title::page_title;
use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn TeamNotifyPage() -> impl IntoView {
    let id = id_param();
    let add = ServerAction::<AddNotifyChannel>::new();
    let remove = ServerAction::<RemoveNotifyChannel>::new();
    let test = ServerAction::<TestNotifyChannel>::new();
    let repeat = ServerAction::<SetNotifyRepeat>::new();
    let data = Resource::new(
        move || {
            let versions = (add.version().get(), remove.version().get());
            (
                id.get(),
                versions,
                test.version().get(),
                repeat.version().get(),
            )
        },
        |(id, ..)| async move {
            let Some(id) = id else {
                return Err(AppError::NotFound("That team".into()));
            };
            let kept = take_kept(CHANNEL_FORM).await;
            Ok((read_team_notify(id).await?, kept))
        },
    );
    view! {
        <Title text="Notifications" />
        {move || id.get().map(|id| view! { <p><a href="/">"← Home"</a> " · " <a href=format!("/settings/teams/{id}")>"Team settings"</a></p> })}
        <ActionNote value=add.value() />
        <ActionNote value=remove.value() />
        <ActionNote value=test.value() />
        <ActionNote value=repeat.value() />
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match data.await {
                    Ok((n, kept)) => view! { <TeamNotifyView n kept add remove test repeat /> }.into_any(),
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn TeamNotifyView(
    n: TeamNotify,
    kept: Option<KeptForm>,
    add: ServerAction<AddNotifyChannel>,
    remove: ServerAction<RemoveNotifyChannel>,
    test: ServerAction<TestNotifyChannel>,
    repeat: ServerAction<SetNotifyRepeat>,
) -> impl IntoView {
    let team_id = n.team_id;
    let title = page_title(Some(&format!("{} notifications", n.settings.team)), "Teams");
    let empty = n.channels.is_empty();
    let rows = n
        .channels
        .into_iter()
        .map(|c| view! { <ChannelRow c remove test /> })
        .collect_view();
    view! {
        <Title text=title />
        <h1>{format!("Notifications of {}", n.settings.team)}</h1>
        <p class="note">"Where this team's flags are sent. Secrets are given by reference (env:NAME or file:/path) and never shown back. "<a href="/settings/silences">"Silences"</a></p>
        <section class="card">
            <h2>"Channels"</h2>
            {if empty {
                view! { <p data-testid="no-channels">"No channels yet: this team hears of its flags in the console (and its webhook, if set)."</p> }.into_any()
            } else {
                view! {
                    <table class="list" data-testid="channels">
                        <thead><tr><th>"Channel"</th><th>"Kind"</th><th>"Sends to"</th><th>"Filter"</th><th>"State"</th><th></th></tr></thead>
                        <tbody>{rows}</tbody>
                    </table>
                }.into_any()
            }}
        </section>
        <section class="card">
            <h2>"Add a channel"</h2>
            <AddChannelForm team_id kept add />
        </section>
        <section class="card">
            <h2>"Repeat"</h2>
            <p data-testid="repeat-state">{format!("A flag left open and unacknowledged is told again every {}.", repeat_words(n.settings.repeat_s))}</p>
            <ActionForm action=repeat attr:class="inline-form" attr:data-testid="set-repeat">
                <input type="hidden" name="team_id" value=team_id.to_string() />
                <label>"Every (minutes) " <input name="repeat_minutes" type="number" min="5" max="10080" required value=(n.settings.repeat_s / 60).to_string() /></label>
                <button type="submit">"Save"</button>
            </ActionForm>
            <small class="note">"5 minutes to 7 days; 4 hours (240) unless set."</small>
        </section>
    }
}

#[component]
fn ChannelRow(
    c: ChannelView,
    remove: ServerAction<RemoveNotifyChannel>,
    test: ServerAction<TestNotifyChannel>,
) -> impl IntoView {
    let sends_to = match (&c.host, c.secret_set) {
        (Some(h), true) => format!("{h} · secret by reference"),
        (Some(h), false) => h.clone(),
        (None, true) => "by reference · secret by reference".to_string(),
        (None, false) => "URL by reference".to_string(),
    };
    let filter = format!(
        "{} · {} and worse · {}",
        if c.kinds.is_empty() {
            "every kind".to_string()
        } else {
            c.kinds.join(", ")
        },
        c.min_severity,
        if c.clusters.is_empty() {
            "every cluster".to_string()
        } else {
            c.clusters.join(", ")
        },
    );
    let state = match (c.broken_at, c.broken_answer.clone()) {
        (Some(at), answer) => view! {
            <span class="badge state-bad" data-testid="channel-broken">"broken"</span>
            <small>{format!(" since {}: the receiver answered {}", stamp_ago(at), answer.unwrap_or_default())}</small>
        }.into_any(),
        (None, _) => view! { <span class="badge state-ok" data-testid="channel-ok">"ok"</span> }.into_any(),
    };
    // The forms' children are drawn by closures: each gets its own copy.
    let (team, id) = (c.team_id.to_string(), c.id.to_string());
    let (team2, id2) = (team.clone(), id.clone());
    view! {
        <tr data-channel=c.name.clone()>
            <td>{c.name.clone()}</td>
            <td>{c.kind.clone()}</td>
            <td class="long">{sends_to}</td>
            <td class="long">{filter}</td>
            <td class="long">{state}</td>
            <td>
                <ActionForm action=test attr:data-testid="test-channel">
                    <input type="hidden" name="team_id" value=team />
                    <input type="hidden" name="id" value=id />
                    <button type="submit">"Send a test"</button>
                </ActionForm>
                <ActionForm action=remove attr:data-testid="remove-channel">
                    <input type="hidden" name="team_id" value=team2 />
                    <input type="hidden" name="id" value=id2 />
                    <button type="submit" class="link danger">"Remove"</button>
                </ActionForm>
            </td>
        </tr>
    }
}

#[component]
fn AddChannelForm(
    team_id: i64,
    kept: Option<KeptForm>,
    add: ServerAction<AddNotifyChannel>,
) -> impl IntoView {
    let field = move |name: &str| {
        kept.as_ref()
            .and_then(|k| k.field(name))
            .unwrap_or_default()
            .to_string()
    };
    let kind = field("kind");
    let severity = field("min_severity");
    let kinds = [
        ("slack", "Slack (incoming webhook)"),
        ("teams", "Microsoft Teams (Workflows webhook)"),
        ("pagerduty", "PagerDuty (Events API v2)"),
        ("alertmanager", "Alertmanager (/api/v2/alerts)"),
        ("webhook", "Webhook (signed JSON)"),
        ("email", "Email (the operator's mail server)"),
    ]
    .into_iter()
    .map(|(v, label)| view! { <option value=v selected=kind == v>{label}</option> })
    .collect_view();
    let severities = ["info", "warning", "error", "critical"]
        .into_iter()
        .map(|v| view! { <option value=v selected=severity == v>{v}</option> })
        .collect_view();
    view! {
        <ActionForm action=add attr:class="stack" attr:data-testid="add-channel">
            <input type="hidden" name="team_id" value=team_id.to_string() />
            <label>"Name " <input name="name" required maxlength="100" placeholder="on-call" value=field("name") /></label>
            <label>"Kind " <select name="kind">{kinds}</select></label>
            <label>"Endpoint " <input name="endpoint" autocomplete="off" value=field("endpoint") placeholder="env:STREAMKEEPER_CRED_SLACK or https://am.example/api/v2/alerts" />
                <small>"Slack and Teams: a reference to the webhook URL (it holds its token). Alertmanager and a webhook: the URL. PagerDuty: empty for its Events API. Email: the team's address (or up to 10, separated by commas)."</small>
            </label>
            <label>"Secret " <input name="secret" autocomplete="off" value=field("secret") placeholder="file:/run/secrets/pd-routing-key" />
                <small>"PagerDuty: the routing key by reference (required). A webhook: its signing key by reference (optional). Never a value."</small>
            </label>
            <label>"Flag kinds " <input name="kinds" value=field("kinds") placeholder="STOP, STALL (empty: every kind)" /></label>
            <label>"Least severity " <select name="min_severity">{severities}</select></label>
            <label>"Clusters " <input name="clusters" value=field("clusters") placeholder="prod (empty: every cluster)" /></label>
            <button type="submit">"Add channel"</button>
        </ActionForm>
    }
}

/// `/settings/silences?cluster=N`: a cluster's silences, muting one, and
/// ending one early.
#[component]
pub fn SilencesPage() -> impl IntoView {
    let cluster = query_param("cluster");
    let add = ServerAction::<AddSilence>::new();
    let end = ServerAction::<EndSilence>::new();
    let data = Resource::new(
        move || (cluster.get(), add.version().get(), end.version().get()),
        |(cluster, ..)| async move {
            let clusters = crate::watch::fns::list_clusters().await?;
            let chosen = cluster
                .and_then(|c| c.parse::<i64>().ok())
                .or_else(|| clusters.first().map(|c| c.id));
            let kept = take_kept(SILENCE_FORM).await;
            let silences = match chosen {
                Some(id) => list_silences(id).await?,
                None => Vec::new(),
            };
            Ok::<_, AppError>((clusters, chosen, silences, kept))
        },
    );
    view! {
        <Title text="Silences" />
        <h1>"Silences"</h1>
        <p class="note">"A cluster, a stream or a group muted until a time, with a reason. Its flags are still raised and recorded; their messages are held, and sent if the trouble outlives the silence."</p>
        <ActionNote value=add.value() />
        <ActionNote value=end.value() />
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match data.await {
                    Ok((clusters, chosen, silences, kept)) => {
                        let picker = clusters.iter().map(|c| {
                            let selected = Some(c.id) == chosen;
                            view! { <option value=c.id.to_string() selected=selected>{c.name.clone()}</option> }
                        }).collect_view();
                        view! {
                            <form method="get" action="/settings/silences" class="inline-form">
                                <label>"Cluster " <select name="cluster">{picker}</select></label>
                                <button type="submit">"Show"</button>
                            </form>
                            {chosen.map(|cid| view! { <SilenceList cid silences end /> <MuteForm cid kept add /> })}
                        }.into_any()
                    }
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn SilenceList(
    cid: i64,
    silences: Vec<SilenceView>,
    end: ServerAction<EndSilence>,
) -> impl IntoView {
    if silences.is_empty() {
        return view! { <p data-testid="no-silences">"Nothing is muted on this cluster."</p> }
            .into_any();
    }
    let rows = silences
        .into_iter()
        .map(|s| {
            view! {
                <tr>
                    <td>{what(&s)}</td>
                    <td>{until_words(&s)}</td>
                    <td class="long">{s.reason.clone()}</td>
                    <td>{format!("{}, {}", s.created_by, stamp_ago(s.created_at))}</td>
                    <td>
                        <ActionForm action=end attr:data-testid="end-silence">
                            <input type="hidden" name="cluster_id" value=cid.to_string() />
                            <input type="hidden" name="id" value=s.id.to_string() />
                            <button type="submit" class="link danger">"End now"</button>
                        </ActionForm>
                    </td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <table class="list" data-testid="silences">
            <thead><tr><th>"Muted"</th><th>"Until"</th><th>"Reason"</th><th>"By"</th><th></th></tr></thead>
            <tbody>{rows}</tbody>
        </table>
    }
    .into_any()
}

#[component]
fn MuteForm(cid: i64, kept: Option<KeptForm>, add: ServerAction<AddSilence>) -> impl IntoView {
    let field = move |name: &str| {
        kept.as_ref()
            .and_then(|k| k.field(name))
            .unwrap_or_default()
            .to_string()
    };
    let scope = field("scope");
    let scopes = [
        ("group", "a consumer group"),
        ("stream", "a stream (its topic)"),
        ("cluster", "the whole cluster"),
    ]
    .map(|(v, label)| view! { <option value=v selected=scope == v>{label}</option> })
    .collect_view();
    view! {
        <section class="card">
            <h2>"Mute"</h2>
            <ActionForm action=add attr:class="stack" attr:data-testid="add-silence">
                <input type="hidden" name="cluster_id" value=cid.to_string() />
                <label>"What " <select name="scope">{scopes}</select></label>
                <label>"Name " <input name="name" value=field("name") placeholder="billing (empty for the cluster)" /></label>
                <label>"Until (UTC) " <input name="until" type="datetime-local" required value=field("until") />
                    <small>"At most 30 days ahead."</small>
                </label>
                <label>"Reason " <input name="reason" required value=field("reason") placeholder="planned broker upgrade" /></label>
                <button type="submit">"Mute"</button>
            </ActionForm>
        </section>
    }
}
