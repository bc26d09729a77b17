//! A stream's schemas as a section of the stream page (drawn by watch's stream
//! page), with the forms that record or pin its schema.

use crate::schemas::fns::{NotifyCheckOwners, PinSchema, RecordSchema, get_stream_schemas};
use crate::schemas::model::{CompatibilityReport, ReaderSource, StreamSchemas};
use crate::ui::file_text::FileIntoTextarea;
use crate::ui::notes::{ActionNote, ErrorNote};
use crate::ui::params::href_with;
use crate::ui::schema::{TypeSelect, reader_label, verdict_class};
use crate::ui::time::stamp_ago;
use leptos::prelude::*;
use streamkeeper::schemas::downstream::by_owner;

/// Avro and JSON Schema documents indented for reading (registries keep
/// them on one line); anything else as it is.
fn pretty(schema: &str) -> String {
    serde_json::from_str::<serde_json::Value>(schema)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| schema.to_owned())
}

/// Reference slots on the record form: enough for most schemas, and a
/// form without JavaScript cannot add more (the API takes any number).
const REFERENCE_SLOTS: usize = 3;

/// The two ways to record a schema: its text (pasted, or loaded from a
/// file once hydrated) with the schemas it references, or a registry
/// subject's version to pin. `group` is empty for the stream's own schema.
#[component]
fn RecordForms(
    cluster_id: i64,
    topic: String,
    group: String,
    record: ServerAction<RecordSchema>,
    pin: ServerAction<PinSchema>,
    label: &'static str,
    testid: &'static str,
) -> impl IntoView {
    let subject = format!("{topic}-value");
    let hidden = move || {
        view! {
            <input type="hidden" name="cluster_id" value=cluster_id.to_string() />
            <input type="hidden" name="topic" value=topic.clone() />
            <input type="hidden" name="group" value=group.clone() />
        }
    };
    let hidden_too = hidden.clone();
    view! {
        <ActionForm action=record attr:class="stack" attr:data-testid=testid>
            {hidden_too()}
            <TypeSelect />
            <FileIntoTextarea />
            <label>{label} " " <textarea name="schema" rows="8" required></textarea></label>
            <details data-testid="references">
                <summary>"References (other schemas this one uses)"</summary>
                <p class="note">"Each under the name the schema uses for it: a Protobuf import path, a JSON Schema $ref, an Avro full name. Leave spare slots blank."</p>
                {(0..REFERENCE_SLOTS).map(|i| view! {
                    <label>{format!("Reference {} name ", i + 1)} <input name=format!("ref_names[{i}]") /></label>
                    <label>"Its text " <textarea name=format!("ref_texts[{i}]") rows="3"></textarea></label>
                }).collect_view()}
            </details>
            <button type="submit">"Record"</button>
        </ActionForm>
        <p class="note">"Or pin a version the Schema Registry holds (its text and references are copied, so the catalog keeps them):"</p>
        <ActionForm action=pin attr:class="filters" attr:data-testid=format!("{testid}-pin")>
            {hidden()}
            <label>"Subject " <input name="subject" value=subject required /></label>
            <label>"Version " <input name="version" value="latest" size="6" /></label>
            <button type="submit">"Pin"</button>
        </ActionForm>
    }
}

/// The stream page's schema section.
#[component]
pub fn StreamSchemasSection(cluster_id: i64, topic: String) -> impl IntoView {
    let record = ServerAction::<RecordSchema>::new();
    let pin = ServerAction::<PinSchema>::new();
    let t = topic.clone();
    let schemas = Resource::new(
        move || (record.version().get(), pin.version().get()),
        move |_| get_stream_schemas(cluster_id, t.clone()),
    );
    let check_href = href_with(
        &format!("/clusters/{cluster_id}/stream/check"),
        &[("name", Some(topic.clone()))],
    );
    view! {
        <h2>"Schema"</h2>
        <p><a href=check_href data-testid="check-change">"Check a producer change against its consumers →"</a></p>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || {
                let topic = topic.clone();
                Suspend::new(async move {
                    match schemas.await {
                        Ok(s) => view! { <SchemasView s topic record pin /> }.into_any(),
                        Err(err) => view! { <ErrorNote err /> }.into_any(),
                    }
                })
            }}
        </Suspense>
    }
}

#[component]
fn SchemasView(
    s: StreamSchemas,
    topic: String,
    record: ServerAction<RecordSchema>,
    pin: ServerAction<PinSchema>,
) -> impl IntoView {
    let cluster_id = s.cluster_id;
    let current = s.history.first().cloned();
    let older = s.history.len().saturating_sub(1);
    let readers_topic = topic.clone();
    view! {
        <section class="card" data-testid="stream-schema">
            {match current {
                Some(c) => view! {
                    <p class="note">{format!(
                        "{} · recorded {} by {}{}{}",
                        c.schema_type.as_str(),
                        stamp_ago(c.recorded_at),
                        c.recorded_by,
                        c.subject.as_ref().map(|s| format!(" · pinned to {s} v{}", c.version.unwrap_or_default())).unwrap_or_default(),
                        if older > 0 { format!(" · {older} earlier version(s)") } else { String::new() },
                    )}</p>
                    <pre class="schema" tabindex="0">{pretty(&c.schema)}</pre>
                }.into_any(),
                None => view! { <p class="note">"No schema recorded for this stream yet."</p> }.into_any(),
            }}
            <details>
                <summary>"Record the stream's schema"</summary>
                <RecordForms cluster_id topic=topic.clone() group=String::new() record pin label="Schema" testid="record-stream-schema" />
            </details>
            <ActionNote value=record.value() />
            <ActionNote value=pin.value() />
        </section>
        <h3>"Consumers' reader schemas"</h3>
        {if s.readers.is_empty() {
            view! { <p class="note">"No consumer group reads this stream."</p> }.into_any()
        } else {
            view! {
                <table class="list" data-testid="readers">
                    <thead><tr><th>"Group"</th><th>"Owner"</th><th>"Reader schema"</th><th>"Which"</th></tr></thead>
                    <tbody>
                        {s.readers.into_iter().map(|r| {
                            let topic = readers_topic.clone();
                            view! {
                            <tr>
                                <td>{r.group.clone()}</td>
                                <td>{r.owner.unwrap_or_else(|| "unowned".into())}</td>
                                <td><span class=if r.reader == ReaderSource::Missing { "badge state-warn" } else { "badge" }>{reader_label(r.reader)}</span></td>
                                <td>
                                    {r.note}
                                    <details>
                                        <summary>"Declare its reader schema"</summary>
                                        <RecordForms cluster_id topic group=r.group.clone() record pin label="Reader schema" testid="record-reader-schema" />
                                    </details>
                                </td>
                            </tr>
                            }
                        }).collect_view()}
                    </tbody>
                </table>
            }.into_any()
        }}
        {(!s.checks.is_empty()).then(|| view! {
            <h3>"Recent checks"</h3>
            <ul data-testid="recent-checks">
                {s.checks.into_iter().map(|c| view! {
                    <li>
                        <span class=verdict_class(c.verdict)>{c.verdict.as_str()}</span> " "
                        <a href=format!("/schema-checks/{}", c.id)>{format!("{} by {}", stamp_ago(c.submitted_at), c.submitted_by)}</a>
                        " — " {c.summary}
                    </li>
                }).collect_view()}
            </ul>
        })}
    }
}

/// "Notify owners": the owner teams the change's downstream breakage
/// reaches, told through their channels before anyone approves; the
/// notices sent so far.
#[component]
pub fn NotifyOwners(r: CompatibilityReport) -> impl IntoView {
    let notify = ServerAction::<NotifyCheckOwners>::new();
    let (id, notices) = (r.id, r.notices);
    let teams: Vec<String> = by_owner(&r.downstream).into_keys().collect();
    if teams.is_empty() && notices.is_empty() {
        return ().into_any();
    }
    view! {
        <section class="card" data-testid="notify-owners">
            <ActionNote value=notify.value() />
            {(!teams.is_empty()).then(|| view! {
                <ActionForm action=notify attr:class="stack" attr:data-testid="notify-owners-form">
                    <input type="hidden" name="check_id" value=id.to_string() />
                    <p>{format!("What this change breaks downstream is owned by {}.", teams.join(", "))}</p>
                    <button type="submit">"Notify owners"</button>
                    <small class="note">"Sends each team the lines below that concern it, through its notification channels (Slack, Teams, webhook, email), before anyone approves."</small>
                </ActionForm>
            })}
            <ul data-testid="owner-notices">
                {notices.into_iter().map(|n| view! {
                    <li>{format!("Sent by {} {} to {} ({} channel message(s))", n.sent_by, stamp_ago(n.sent_at), n.teams.join(", "), n.messages)}</li>
                }).collect_view()}
            </ul>
        </section>
    }
    .into_any()
}
