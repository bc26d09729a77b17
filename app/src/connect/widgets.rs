//! What other pages draw of Connect: a Kafka cluster's Connect clusters, the
//! badge of a connector's state, and a draft's findings (the draft page, and
//! its check as it is typed, drawn by the server; a review item's
//! validation).

use crate::connect::fns::list_connect_clusters;
use crate::connect::model::DraftCheck;
#[cfg(feature = "ssr")]
use crate::error::AppError;
use crate::ui::notes::ErrorNote;
#[cfg(feature = "ssr")]
use crate::ui::notes::ErrorText;
use crate::ui::params::href_with;
use crate::ui::time::stamp_ago;
use leptos::prelude::*;
use streamkeeper::connect::{Fix, Severity};
use streamkeeper::platform::words::counted;

/// The Connect clusters of Kafka cluster `id`, each linking to its
/// connectors; nothing at all when the cluster has none.
#[component]
pub fn ConnectClusters(id: i64) -> impl IntoView {
    let list = Resource::new(move || id, list_connect_clusters);
    view! {
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                match list.await {
                    Ok(l) if l.is_empty() => ().into_any(),
                    Ok(l) => view! {
                        <h2>"Kafka Connect"</h2>
                        <table class="list" data-testid="connect-clusters">
                            <thead><tr><th>"Connect cluster"</th><th>"Connectors"</th><th>"Failing"</th><th>"Last read"</th></tr></thead>
                            <tbody>
                                {l.into_iter().map(|c| {
                                    let href = href_with(&format!("/clusters/{id}/connect"), &[("name", Some(c.name.clone()))]);
                                    let read = match (&c.last_error, c.read_at) {
                                        (Some(e), _) if c.failed_passes > 0 => format!("could not be read: {e}"),
                                        (_, Some(at)) => stamp_ago(at),
                                        _ => "not read yet".into(),
                                    };
                                    let failing = if c.failing > 0 { "badge state-bad" } else { "badge state-ok" };
                                    view! {
                                        <tr>
                                            <td><a href=href>{c.name}</a>{c.cloud.then_some(" (Confluent Cloud)")}</td>
                                            <td>{c.connectors}</td>
                                            <td><span class=failing>{c.failing}</span></td>
                                            <td>{read}</td>
                                        </tr>
                                    }
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

/// The badge class of a connector's or task's state.
pub fn state_class(state: &str) -> &'static str {
    match state {
        "RUNNING" => "badge state-ok",
        "FAILED" => "badge state-bad",
        "UNASSIGNED" | "RESTARTING" | "PAUSED" | "STOPPED" => "badge state-warn",
        _ => "badge",
    }
}

/// A connector draft against the running config it was made on: each
/// property added, removed or changed; a secret's values are never shown,
/// only that it changed.
#[component]
pub fn ConnectorDiff(d: streamkeeper::connect::canonical::Diff) -> impl IntoView {
    use streamkeeper::connect::canonical::ChangeKind;
    let lead = if d.base_exists {
        "Against the connector's running config as it was read when this revision was made:"
    } else {
        "The connector does not exist yet: this creates it with every property below."
    };
    let empty = d.changes.is_empty();
    view! {
        <p class="note" data-testid="connector-diff-base">{lead}</p>
        {empty.then(|| view! { <p class="note">"No property differs from the running config."</p> })}
        <table class="list" data-testid="connector-diff">
            <thead><tr><th>"Property"</th><th>"Change"</th><th>"Running"</th><th>"Proposed"</th></tr></thead>
            <tbody>
                {d.changes.into_iter().map(|c| {
                    let kind = match c.kind {
                        ChangeKind::Added => "added",
                        ChangeKind::Removed => "removed",
                        ChangeKind::Changed => "changed",
                    };
                    let shown = move |v: Option<String>, present: bool| match v {
                        Some(v) => view! { <code>{v}</code> }.into_any(),
                        None if c.secret && present => view! { <em>"(secret, not shown)"</em> }.into_any(),
                        None => ().into_any(),
                    };
                    let before = shown(c.before, c.kind != ChangeKind::Added);
                    let after = shown(c.after, c.kind != ChangeKind::Removed);
                    view! {
                        <tr class=format!("diff-{kind}") data-key=c.key.clone()>
                            <td><code>{c.key.clone()}</code></td>
                            <td>{kind}</td>
                            <td>{before}</td>
                            <td>{after}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
}

/// An applied connector item: the connector's state from the first
/// status pass after the apply, or when that pass is due.
#[component]
pub fn RunAfterApply(r: crate::connect::model::RunAfterApply) -> impl IntoView {
    let text = match (&r.state, r.read_at) {
        (Some(s), Some(at)) => format!(
            "Status pass of {}: the connector is {s}{}.",
            stamp_ago(at),
            match r.tasks_failed {
                0 => String::new(),
                n => format!(", {n} of its tasks FAILED"),
            }
        ),
        (None, Some(at)) => format!(
            "The status pass of {} did not list the connector.",
            stamp_ago(at)
        ),
        _ => format!(
            "Whether it runs: the next status pass says (every {} s).",
            r.interval_s
        ),
    };
    let class = r.state.as_deref().map_or("badge", state_class);
    view! {
        <p data-testid="connector-run">
            {text} " "
            {r.state.clone().map(|s| view! { <span class=class data-testid="connector-run-state">{s}</span> })}
            {r.failure.clone().map(|f| view! { <br /><code class="detail" data-testid="connector-run-failure">{f}</code> })}
        </p>
    }
}

/// What a fix does, in words (fixes carry no secret values).
fn describe(fix: &Fix) -> String {
    let set = fix.set.iter().map(|(k, v)| format!("set {k} to {v}"));
    let remove = fix.remove.iter().map(|k| format!("remove {k}"));
    let mut words: Vec<String> = set.chain(remove).collect();
    if let Some(first) = words.first_mut() {
        *first = format!("Fix: {first}");
    }
    words.join("; ")
}

fn severity_class(s: Severity) -> &'static str {
    match s {
        Severity::Error => "badge state-bad",
        Severity::Warning => "badge state-warn",
        Severity::Info => "badge",
    }
}

fn severity_word(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "info",
    }
}

/// A draft's check as the draft form shows it: the findings, then the
/// config as it would be kept.
#[component]
pub fn DraftChecked(c: DraftCheck) -> impl IntoView {
    let json = serde_json::to_string_pretty(&c.config).unwrap_or_default();
    view! {
        <Findings c />
        <details class="card" open>
            <summary>"The complete config (secrets masked)"</summary>
            <pre class="schema" tabindex="0" data-testid="draft-json">{json}</pre>
        </details>
    }
}

/// The draft form checked as it is typed: whether it may be proposed, and
/// the check drawn as the form shows it.
#[cfg(feature = "ssr")]
pub fn live_check(c: DraftCheck) -> crate::connect::model::LiveCheck {
    crate::connect::model::LiveCheck {
        may_propose: c.may_propose,
        html: view! { <DraftChecked c /> }.to_html(),
    }
}

/// What stopped a check as it is typed, drawn in the check's place; such
/// a draft cannot be proposed.
#[cfg(feature = "ssr")]
pub fn live_error(err: AppError) -> crate::connect::model::LiveCheck {
    crate::connect::model::LiveCheck {
        may_propose: false,
        html: view! {
            <section class="card" data-testid="draft-check">
                <h2>"Validation"</h2>
                <ErrorText err />
            </section>
        }
        .to_html(),
    }
}

/// The rules and the worker per property, side by side, each fix a submit
/// of the form it sits in (so what was typed is kept).
#[component]
pub fn Findings(c: DraftCheck) -> impl IntoView {
    let (rules, worker) = who_found(&c);
    view! {
        <section class="card" data-testid="draft-check">
            <h2>"Validation"</h2>
            <p data-testid="draft-verdict" class=if c.may_propose { "ok" } else { "error" }>
                {if c.may_propose { "No errors: it may be proposed." } else { "It has errors." }}
                {format!(" {rules} {worker}")}
            </p>
            {c.rows.is_empty().then(|| view! { <p class="note">"Nothing to remark on."</p> })}
            <table class="list" data-testid="draft-findings">
                <thead><tr><th>"Property"</th><th>"Streamkeeper's rules"</th><th>"The worker's validate"</th></tr></thead>
                <tbody>
                    {c.rows.into_iter().map(|r| row(r, true)).collect_view()}
                </tbody>
            </table>
        </section>
    }
    .into_any()
}

/// A connector item's validation on its review page: what the rules and
/// the worker's validate said of the revision when it was proposed or
/// edited, in the words of the draft form, without its fix buttons (a fix
/// is an edit, which makes a new revision).
#[component]
pub fn Validated(c: DraftCheck) -> impl IntoView {
    let (rules, worker) = who_found(&c);
    let (verdict, class) = match (c.may_propose, &c.worker_error) {
        (false, _) => ("has errors", "badge state-bad"),
        (true, Some(_)) => ("validated by the rules only", "badge state-warn"),
        (true, None) => ("validated", "badge state-ok"),
    };
    view! {
        <section class="card" data-testid="connector-check">
            <p>
                <span class=class data-testid="verdict">{verdict}</span>
                " " <span data-testid="summary">{format!("{rules} {worker}")}</span>
            </p>
            {if c.rows.is_empty() {
                view! { <p class="note">"Neither found anything to remark on."</p> }.into_any()
            } else {
                view! {
                    <table class="list" data-testid="connector-findings">
                        <thead><tr><th>"Property"</th><th>"Streamkeeper's rules"</th><th>"The worker's validate"</th></tr></thead>
                        <tbody>
                            {c.rows.into_iter().map(|r| row(r, false)).collect_view()}
                        </tbody>
                    </table>
                }.into_any()
            }}
        </section>
    }
}

/// What the rules and the worker found, as two sentences.
fn who_found(c: &DraftCheck) -> (String, String) {
    let worker = match (&c.worker_error, c.worker_errors) {
        (Some(e), _) => format!("The worker could not validate it: {e}"),
        (None, Some(0)) => "The worker's validate found no error.".to_owned(),
        (None, Some(n)) => format!("The worker's validate found {}.", counted(n, "error")),
        (None, None) => "The worker was not asked.".to_owned(),
    };
    let rules = c
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    (
        format!("The rules found {}.", counted(rules, "error")),
        worker,
    )
}

/// One property's row: the rules' findings, each with its fix button when
/// `fixes` (in the draft form), and the worker's errors.
fn row(r: streamkeeper::connect::worker::Row, fixes: bool) -> AnyView {
    let rules = r
        .rules
        .into_iter()
        .map(|f| finding(f, fixes))
        .collect_view()
        .into_any();
    let worker = r
        .worker
        .into_iter()
        .map(|e| view! { <p data-testid="worker-error">{e}</p> })
        .collect_view()
        .into_any();
    view! {
        <tr data-property=r.property.clone()>
            <td><code>{r.property.clone()}</code></td>
            <td>{rules}</td>
            <td>{worker}</td>
        </tr>
    }
    .into_any()
}

fn finding(f: streamkeeper::connect::Finding, fixes: bool) -> AnyView {
    let fix = f.fix.as_ref().filter(|_| fixes).map(|x| {
        let value = serde_json::to_string(x).unwrap_or_default();
        let words = describe(x);
        view! {
            <button type="submit" name="fix" value=value class="secondary" data-testid="fix" data-rule=format!("{:?}", f.rule)>{words}</button>
        }
        .into_any()
    });
    view! {
        <p data-testid="finding">
            <span class=severity_class(f.severity)>{severity_word(f.severity)}</span>
            " " {f.sentence.clone()} " " {fix}
        </p>
    }
    .into_any()
}
