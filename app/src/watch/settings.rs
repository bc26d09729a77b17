//! Settings → Clusters: add a cluster to watch, and test a connection
//! first; change a watched cluster's connection or interval, or stop
//! watching it (its history kept for the retention period, and restorable
//! until then from the removed clusters' list). The test is a GET form, so its report renders with or
//! without wasm; credentials are references (env:NAME, file:/path), never
//! values.

use crate::error::AppError;
use crate::ui::notes::{ActionNote, ErrorNote};
use crate::ui::params::query_param;
use crate::watch::fns::{
    AddCluster, PauseCluster, RemoveCluster, RestoreCluster, UpdateCluster, list_clusters,
    list_removed_clusters, test_cluster,
};
use crate::watch::model::{ClusterView, ConnectionReport, RemovedCluster, kept_until};
use leptos::prelude::*;
use leptos_meta::Title;
use streamkeeper::platform::words::counted;
use streamkeeper::watch::reach::{TEST_TIMEOUT_S, trace};

/// The connection fields, shared by the test and the add forms.
#[component]
fn ConnectionFields(
    bootstrap: Option<String>,
    protocol: Option<String>,
    mechanism: Option<String>,
    user: Option<String>,
    pass: Option<String>,
    ca: Option<String>,
) -> impl IntoView {
    let protocol = protocol.unwrap_or_else(|| "PLAINTEXT".into());
    let mechanism = mechanism.unwrap_or_default();
    view! {
        <label>"Bootstrap servers" <input name="bootstrap" required placeholder="pkc-xxxx.europe-west1.gcp.confluent.cloud:9092" value=bootstrap /></label>
        <label>
            "Security protocol"
            <select name="security_protocol">
                {["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"].into_iter().map(|p| {
                    view! { <option value=p selected=protocol == p>{p}</option> }
                }).collect_view()}
            </select>
        </label>
        <label>
            "SASL mechanism"
            <select name="sasl_mechanism">
                {["", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"].into_iter().map(|m| {
                    view! { <option value=m selected=mechanism == m>{if m.is_empty() { "none" } else { m }}</option> }
                }).collect_view()}
            </select>
        </label>
        <label>"Username reference" <input name="username_ref" placeholder="env:KAFKA_API_KEY" value=user /></label>
        <label>"Password reference" <input name="password_ref" placeholder="file:/run/secrets/kafka" value=pass /></label>
        <label>"CA bundle reference (TLS)" <input name="ca_ref" placeholder="file:/run/secrets/kafka-ca.pem" value=ca /></label>
        <small>"Credentials and the CA bundle are read from the server's environment or files when it connects, at every pass; they are never stored or shown. Without a CA bundle the system's trust store is used."</small>
    }
}

/// Only admins see the forms; everyone else gets the page's 403.
#[component]
pub fn ClusterSettingsPage() -> impl IntoView {
    let me = Resource::new(|| (), |_| crate::ui::header::current_user());
    view! {
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match me.await {
                    Ok(Some(me)) if me.principal.may(streamkeeper::accounts::role::Action::ManageClusters) => {
                        view! { <ClusterForms /> }.into_any()
                    }
                    Ok(_) => {
                        let err = AppError::Forbidden("add clusters".into());
                        view! { <ErrorNote err /> }.into_any()
                    }
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn ClusterForms() -> impl IntoView {
    let add = ServerAction::<AddCluster>::new();
    let bootstrap = query_param("bootstrap");
    let protocol = query_param("security_protocol");
    let mechanism = query_param("sasl_mechanism");
    let user = query_param("username_ref");
    let pass = query_param("password_ref");
    let ca = query_param("ca_ref");
    let report = Resource::new(
        move || {
            (
                bootstrap.get(),
                protocol.get(),
                mechanism.get(),
                user.get(),
                pass.get(),
                ca.get(),
            )
        },
        |(b, p, m, u, w, ca)| async move {
            match b {
                Some(b) => test_cluster(b, p.unwrap_or_else(|| "PLAINTEXT".into()), m, u, w, ca)
                    .await
                    .map(Some),
                None => Ok(None),
            }
        },
    );
    view! {
        <Title text="Clusters · Settings" />
        <h1>"Watch a cluster"</h1>
        <p class="note">"Streamkeeper only reads: it never joins a group, commits or produces. "
            <a href="/clusters">"See the watched clusters"</a>"."</p>
        <section class="card">
            <h2>"Test a connection"</h2>
            <form method="get" action="/settings/clusters" class="stack" data-testid="test-connection">
                <ConnectionFields bootstrap=bootstrap.get_untracked() protocol=protocol.get_untracked()
                    mechanism=mechanism.get_untracked() user=user.get_untracked() pass=pass.get_untracked() ca=ca.get_untracked() />
                // Without JavaScript the browser waits for the answer: say
                // before it is sent what is tried, and for how long.
                <p class="note" data-testid="test-steps">{testing()}</p>
                <button type="submit">{format!("Test connection (up to {TEST_TIMEOUT_S} s a step)")}</button>
            </form>
            <Suspense fallback=|| view! { <p role="status">{testing()}</p> }>
                {move || Suspend::new(async move {
                    match report.await {
                        Ok(Some(r)) => {
                            let protocol = protocol.get_untracked().unwrap_or_else(|| "PLAINTEXT".into());
                            view! { <Report r protocol /> }.into_any()
                        }
                        Ok(None) => ().into_any(),
                        Err(err) => view! { <ErrorNote err /> }.into_any(),
                    }
                })}
            </Suspense>
        </section>
        <section class="card">
            <h2>"Add the cluster"</h2>
            <ActionForm action=add attr:class="stack" attr:data-testid="add-cluster">
                <label>"Name" <input name="name" required placeholder="prod-eu" /></label>
                <ConnectionFields bootstrap=bootstrap.get_untracked() protocol=protocol.get_untracked()
                    mechanism=mechanism.get_untracked() user=user.get_untracked() pass=pass.get_untracked() ca=ca.get_untracked() />
                <label>"Sample every (seconds)" <input name="interval_s" type="number" min="5" max="3600" value="15" /></label>
                <p class="note">"Adding tests the connection first (a few seconds) and stops if the cluster cannot be reached."</p>
                <label><input type="checkbox" name="add_anyway" value="yes" />" Add it even though the test fails"</label>
                <button type="submit">"Watch this cluster"</button>
            </ActionForm>
            <ActionNote value=add.value() />
        </section>
        <WatchedClusters added=add.version() />
    }
}

/// Each watched cluster's connection and interval, to change, and the way
/// to stop watching it (its name typed back); then the removed ones, to
/// restore.
#[component]
fn WatchedClusters(added: RwSignal<usize>) -> impl IntoView {
    let update = ServerAction::<UpdateCluster>::new();
    let remove = ServerAction::<RemoveCluster>::new();
    let pause = ServerAction::<PauseCluster>::new();
    let restore = ServerAction::<RestoreCluster>::new();
    let (updated, removed, paused) = (update.version(), remove.version(), pause.version());
    let restored = restore.version();
    let clusters = Resource::new(
        move || {
            (
                added.get(),
                updated.get(),
                removed.get(),
                paused.get(),
                restored.get(),
            )
        },
        |_| list_clusters(),
    );
    let gone = Resource::new(
        move || (removed.get(), restored.get()),
        |_| list_removed_clusters(),
    );
    view! {
        <section class="card" data-testid="watched-clusters">
            <h2>"Watched clusters"</h2>
            <ActionNote value=update.value() />
            <ActionNote value=remove.value() />
            <ActionNote value=pause.value() />
            <Suspense fallback=|| view! { <p>"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match clusters.await {
                        Ok(list) if list.is_empty() => view! {
                            <p class="note">"No cluster is watched yet: add one above."</p>
                        }.into_any(),
                        Ok(list) => list.into_iter().map(|c| view! {
                            <ClusterEdit c update remove pause />
                        }).collect_view().into_any(),
                        Err(err) => view! { <ErrorNote err /> }.into_any(),
                    }
                })}
            </Suspense>
        </section>
        <section class="card" data-testid="removed-clusters">
            <h2>"Removed clusters"</h2>
            <p class="note">"Not watched and gone from every page; their history is kept until the date shown, then deleted with them. Restoring one brings it back with its history."</p>
            <ActionNote value=restore.value() />
            <Suspense fallback=|| view! { <p>"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match gone.await {
                        Ok(list) if list.is_empty() => view! {
                            <p class="note">"No removed cluster is kept."</p>
                        }.into_any(),
                        Ok(list) => view! { <RemovedTable list restore /> }.into_any(),
                        Err(err) => view! { <ErrorNote err /> }.into_any(),
                    }
                })}
            </Suspense>
        </section>
    }
}

#[component]
fn RemovedTable(list: Vec<RemovedCluster>, restore: ServerAction<RestoreCluster>) -> impl IntoView {
    view! {
        <table class="list">
            <thead><tr><th>"Name"</th><th>"Bootstrap"</th><th>"Removed"</th><th>"By"</th><th>"Purged on"</th><th></th></tr></thead>
            <tbody>
                {list.into_iter().map(|c| {
                    let label = format!("Restore {}", c.name);
                    view! {
                        <tr data-testid="removed-cluster" data-cluster=c.name.clone()>
                            <td>{c.name.clone()}</td>
                            <td>{c.bootstrap}</td>
                            <td>{crate::ui::time::stamp_ago(c.removed_at)}</td>
                            <td>{c.removed_by}</td>
                            <td>{c.purged_on.format("%Y-%m-%d").to_string()}</td>
                            <td>
                                <ActionForm action=restore attr:data-testid="restore-cluster">
                                    <input type="hidden" name="id" value=c.id.to_string() />
                                    <button type="submit">{label}</button>
                                </ActionForm>
                            </td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
}

#[component]
fn ClusterEdit(
    c: ClusterView,
    update: ServerAction<UpdateCluster>,
    remove: ServerAction<RemoveCluster>,
    pause: ServerAction<PauseCluster>,
) -> impl IntoView {
    let id = c.id.to_string();
    let credentials = if c.credentials_set {
        "Credentials are set: leave both references blank to keep them."
    } else {
        "No credentials are set."
    };
    let summary = match &c.paused {
        Some(p) => format!("{} · {} · {}", c.name, c.bootstrap, p.text()),
        None => format!("{} · {} · every {} s", c.name, c.bootstrap, c.interval_s),
    };
    let (toggle, toggle_label) = match c.paused {
        Some(_) => ("no", format!("Resume {}", c.name)),
        None => ("yes", format!("Pause {}", c.name)),
    };
    let save = format!("Save {}", c.name);
    let warn = format!(
        "Stop watching: type {} to remove it. {}",
        c.name,
        kept_until(streamkeeper::watch::cluster::purged_on(chrono::Utc::now()))
    );
    let drop = format!("Remove {}", c.name);
    let (bootstrap, protocol, mechanism) = (c.bootstrap, c.security_protocol, c.sasl_mechanism);
    let (interval, has_credentials) = (c.interval_s.to_string(), c.credentials_set);
    let edit_id = id.clone();
    let pause_id = id.clone();
    view! {
        <details data-testid="cluster-edit" data-cluster=c.name>
            <summary>{summary}</summary>
            <ActionForm action=update attr:class="stack" attr:data-testid="update-cluster">
                <input type="hidden" name="id" value=edit_id.clone() />
                <ConnectionFields bootstrap=Some(bootstrap.clone()) protocol=Some(protocol.clone())
                    mechanism=mechanism.clone() user=None pass=None ca=None />
                <p class="note">{credentials}</p>
                {has_credentials.then(|| view! {
                    <label><input type="checkbox" name="drop_credentials" value="yes" />" Remove the credentials and the CA"</label>
                })}
                <label>"Sample every (seconds)" <input name="interval_s" type="number" min="5" max="3600" value=interval.clone() /></label>
                <button type="submit">{save.clone()}</button>
            </ActionForm>
            <ActionForm action=pause attr:class="stack" attr:data-testid="pause-cluster">
                <input type="hidden" name="id" value=pause_id.clone() />
                <input type="hidden" name="paused" value=toggle />
                <p class="note">"A paused cluster is not read: no passes, no flags raised or resolved, until it is resumed."</p>
                <button type="submit">{toggle_label}</button>
            </ActionForm>
            <ActionForm action=remove attr:class="stack" attr:data-testid="remove-cluster">
                <input type="hidden" name="id" value=id.clone() />
                <label>
                    {warn.clone()}
                    <input name="confirm" required autocomplete="off" />
                </label>
                <button type="submit" class="danger">{drop.clone()}</button>
            </ActionForm>
        </details>
    }
}

/// What the connection test tries, in order, and how long it waits.
fn testing() -> String {
    format!(
        "Testing: resolving the host, connecting, TLS, signing in, reading metadata — up to {TEST_TIMEOUT_S} s for an answer at each."
    )
}

#[component]
fn Report(r: ConnectionReport, protocol: String) -> impl IntoView {
    let steps = trace(&protocol, r.reachable, r.unreachable);
    let class = if !r.reachable {
        "error"
    } else if r.problems.is_empty() {
        "ok"
    } else {
        "note"
    };
    let summary = if r.reachable {
        format!(
            "Reached {} in {} ms: {}, {} ({} with log offsets), {} ({} with committed offsets).",
            counted(r.brokers, "broker"),
            r.took_ms,
            counted(r.topics, "topic"),
            counted(r.partitions, "partition"),
            r.partitions_with_offsets,
            counted(r.groups, "consumer group"),
            r.groups_with_offsets
        )
    } else {
        "Could not reach the cluster.".to_string()
    };
    view! {
        <div class=class role="status" data-testid="connection-report">
            <p>{summary}</p>
            <ol class="steps" data-testid="connection-steps">
                {steps.into_iter().map(|(step, outcome)| view! {
                    <li data-outcome=outcome.word()>{format!("{}: {}", step.label(), outcome.word())}</li>
                }).collect_view()}
            </ol>
            {(!r.problems.is_empty()).then(|| view! {
                <ul>{r.problems.into_iter().map(|p| view! { <li>{p}</li> }).collect_view()}</ul>
            })}
        </div>
    }
}
