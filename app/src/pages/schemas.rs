//! Schemas on the screens: a stream's schema with its history and its
//! consumers' reader schemas (on the stream page), the producer-change
//! page that checks a proposed schema against every consumer group, and a
//! check's report with each group's verdict and reasons.

use crate::components::{
    ActionNote, ErrorNote, Pager, href_with, id_param, page_param, query_param,
};
use crate::error::AppError;
use crate::file_text::FileIntoTextarea;
use crate::model::{CompatibilityReport, ReaderSource, StreamSchemas, Verdict};
use crate::pages::review::ProposeReview;
use leptos::prelude::*;
use leptos_meta::Title;
use streamkeeper::review::Kind;
use streamkeeper::schema::SchemaType;

#[server(prefix = "/fn", endpoint = "get_stream_schemas")]
pub async fn get_stream_schemas(id: i64, topic: String) -> Result<StreamSchemas, AppError> {
    use crate::port::{backend, principal};
    let who = principal().await?;
    backend()?.schemas.stream_schemas(&who, id, &topic).await
}

/// Records the stream's schema (`group` empty) or a group's reader schema
/// from text, pasted or loaded from a file, with its references as
/// name/text pairs (`ref_names[i]`, `ref_texts[i]`).
#[server(prefix = "/fn", endpoint = "record_schema")]
pub async fn record_schema(
    cluster_id: i64,
    topic: String,
    group: Option<String>,
    schema_type: String,
    schema: String,
    #[server(default)] ref_names: Vec<String>,
    #[server(default)] ref_texts: Vec<String>,
) -> Result<crate::model::CatalogSchema, AppError> {
    use crate::model::NewCatalogSchema;
    let new = NewCatalogSchema::from_text_form(&schema_type, schema, ref_names, ref_texts)?;
    record(cluster_id, topic, group, new).await
}

/// Pins the stream's schema (`group` empty) or a group's reader schema to
/// a registry subject's version (`latest` or blank for the newest).
#[server(prefix = "/fn", endpoint = "pin_schema")]
pub async fn pin_schema(
    cluster_id: i64,
    topic: String,
    group: Option<String>,
    subject: String,
    version: String,
) -> Result<crate::model::CatalogSchema, AppError> {
    use crate::model::NewCatalogSchema;
    let new = NewCatalogSchema::from_pin_form(&subject, &version)?;
    record(cluster_id, topic, group, new).await
}

#[cfg(feature = "ssr")]
async fn record(
    cluster_id: i64,
    topic: String,
    group: Option<String>,
    new: crate::model::NewCatalogSchema,
) -> Result<crate::model::CatalogSchema, AppError> {
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    let group = group.filter(|g| !g.trim().is_empty());
    backend()?
        .schemas
        .record_schema(
            &who,
            &client_addr().await,
            cluster_id,
            &topic,
            group.as_deref(),
            new,
        )
        .await
}

/// Checks a proposed producer schema, then shows its report; or, when the
/// form's "Propose for review" button sent `propose`, puts the change in
/// review (checked there too) and shows the review item. Either way a
/// redirect, so the form works without JavaScript too. Answers with where
/// it went.
#[server(prefix = "/fn", endpoint = "check_schema")]
pub async fn check_schema(
    cluster_id: i64,
    topic: String,
    schema_type: String,
    schema: String,
    propose: Option<String>,
) -> Result<String, AppError> {
    use crate::model::ProposedSchema;
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    let t = SchemaType::parse(&schema_type)
        .ok_or_else(|| AppError::Invalid(format!("Unknown schema type {schema_type:?}.")))?;
    let to = if propose.is_some() {
        let new = crate::model::NewReviewItem {
            kind: streamkeeper::review::Kind::ProducerChange,
            cluster_id,
            topic,
            subject: None,
            schema_type: t,
            schema,
            references: Vec::new(),
            title: None,
        };
        let item = backend()?
            .reviews
            .propose(&who, &client_addr().await, new)
            .await?;
        format!("/review/{}", item.summary.id)
    } else {
        let proposed = ProposedSchema {
            schema_type: t,
            schema,
            references: Default::default(),
            subject_references: Vec::new(),
        };
        let report = backend()?
            .schemas
            .check(&who, cluster_id, &topic, proposed)
            .await?;
        format!("/schema-checks/{}", report.id)
    };
    leptos_axum::redirect(&to);
    Ok(to)
}

#[server(prefix = "/fn", endpoint = "get_schema_check")]
pub async fn get_schema_check(id: i64) -> Result<CompatibilityReport, AppError> {
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    backend()?
        .schemas
        .check_report(&who, &client_addr().await, id)
        .await
}

pub fn verdict_class(v: Verdict) -> &'static str {
    match v {
        Verdict::Compatible => "badge state-ok",
        Verdict::Incompatible => "badge state-bad",
        Verdict::Undecided => "badge state-warn",
    }
}

/// Avro and JSON Schema documents indented for reading (registries keep
/// them on one line); anything else as it is.
fn pretty(schema: &str) -> String {
    serde_json::from_str::<serde_json::Value>(schema)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| schema.to_owned())
}

fn reader_label(r: ReaderSource) -> &'static str {
    match r {
        ReaderSource::Declared => "declared",
        ReaderSource::Assumed => "assumed",
        ReaderSource::Missing => "unknown",
    }
}

/// The schema format as a `schema_type` select (AVRO first unless
/// `selected` says otherwise).
#[component]
pub fn TypeSelect(#[prop(optional)] selected: Option<SchemaType>) -> impl IntoView {
    view! {
        <label>
            "Format "
            <select name="schema_type">
                {SchemaType::ALL.map(|t| view! { <option value=t.as_str() selected=selected == Some(t)>{t.as_str()}</option> }).collect_view()}
            </select>
        </label>
    }
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
    let area = NodeRef::<leptos::html::Textarea>::new();
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
            <FileIntoTextarea target=area />
            <label>{label} " " <textarea node_ref=area name="schema" rows="8" required></textarea></label>
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

fn recorded(s: &crate::model::CatalogSchema) -> String {
    let whose = s
        .group
        .as_deref()
        .map_or("stream's".to_string(), |g| format!("{g} reader"));
    match (&s.subject, s.version) {
        (Some(subject), Some(v)) => format!("Pinned the {whose} schema to {subject} v{v}."),
        _ => format!("Recorded the {whose} schema."),
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
                        c.recorded_at.format("%Y-%m-%d %H:%M UTC"),
                        c.recorded_by,
                        c.subject.as_ref().map(|s| format!(" · pinned to {s} v{}", c.version.unwrap_or_default())).unwrap_or_default(),
                        if older > 0 { format!(" · {older} earlier version(s)") } else { String::new() },
                    )}</p>
                    <pre class="schema">{pretty(&c.schema)}</pre>
                }.into_any(),
                None => view! { <p class="note">"No schema recorded for this stream yet."</p> }.into_any(),
            }}
            <details>
                <summary>"Record the stream's schema"</summary>
                <RecordForms cluster_id topic=topic.clone() group=String::new() record pin label="Schema" testid="record-stream-schema" />
            </details>
            <ActionNote value=record.value() ok=recorded />
            <ActionNote value=pin.value() ok=recorded />
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
                        <a href=format!("/schema-checks/{}", c.id)>{format!("{} by {}", c.submitted_at.format("%Y-%m-%d %H:%M UTC"), c.submitted_by)}</a>
                        " — " {c.summary}
                    </li>
                }).collect_view()}
            </ul>
        })}
    }
}

/// `/clusters/:id/stream/check?name=TOPIC`: paste a proposed producer
/// schema and see which consumer groups break.
#[component]
pub fn CheckPage() -> impl IntoView {
    let id = id_param();
    let name = query_param("name");
    let check = ServerAction::<CheckSchema>::new();
    view! {
        <Title text="Check a producer change" />
        {move || match (id.get(), name.get()) {
            (Some(id), Some(topic)) => {
                let back = href_with(&format!("/clusters/{id}/stream"), &[("name", Some(topic.clone()))]);
                view! {
                    <p><a href=back>"← " {topic.clone()}</a></p>
                    <h1>"Check a producer change to " {topic.clone()}</h1>
                    <p class="note">"The proposed schema is checked against the reader schema of every consumer group that reads the topic (can it read what the producer would write?), against the subject's history under its compatibility level, and by the Schema Registry when one is configured. Nothing is registered."</p>
                    <ActionForm action=check attr:class="stack" attr:data-testid="check-form">
                        <input type="hidden" name="cluster_id" value=id.to_string() />
                        <input type="hidden" name="topic" value=topic />
                        <TypeSelect />
                        <label>"Proposed schema " <textarea name="schema" rows="14" required></textarea></label>
                        <div class="buttons">
                            <button type="submit">"Check"</button>
                            <button type="submit" name="propose" value="on" class="secondary" data-testid="propose-review">"Propose for review"</button>
                        </div>
                        <small class="note">"Propose for review checks it the same way and opens a review item for the domain's approvers; once approved it is registered where the domain's autonomy level allows."</small>
                    </ActionForm>
                    <ActionNote value=check.value() ok=|to: &String| format!("Opening {to}…") />
                }.into_any()
            }
            _ => view! { <ErrorNote err=AppError::NotFound("That stream".into()) /> }.into_any(),
        }}
    }
}

/// `/schema-checks/:id`: a check's verdict, each consumer group's verdict
/// and reasons, the subject's history and the registry's opinion.
#[component]
pub fn CheckReportPage() -> impl IntoView {
    let id = id_param();
    let report = Resource::new(
        move || id.get(),
        |id| async move {
            match id {
                Some(id) => get_schema_check(id).await,
                None => Err(AppError::NotFound("That check".into())),
            }
        },
    );
    view! {
        <Title text="Schema check" />
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match report.await {
                    Ok(r) => view! { <ReportView r /> }.into_any(),
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn ReportView(r: CompatibilityReport) -> impl IntoView {
    let back = href_with(
        &format!("/clusters/{}/stream", r.cluster_id),
        &[("name", Some(r.topic.clone()))],
    );
    let again = href_with(
        &format!("/clusters/{}/stream/check", r.cluster_id),
        &[("name", Some(r.topic.clone()))],
    );
    view! {
        <p><a href=back>"← " {r.topic.clone()}</a> " · " <a href=again>"Check another change"</a></p>
        <h1>
            {format!("{} change to {} ", r.schema_type.as_str(), r.topic)}
            <span class=verdict_class(r.verdict) data-testid="verdict">{r.verdict.as_str()}</span>
        </h1>
        <p data-testid="summary">{r.summary.clone()}</p>
        <p class="note">{format!(
            "Checked by {} at {} in {} ms · cluster {}",
            r.submitted_by,
            r.submitted_at.format("%Y-%m-%d %H:%M:%S UTC"),
            r.elapsed_ms,
            r.cluster
        )}</p>
        <p class="note">"To have a change reviewed and registered, use Propose for review on the check page."</p>
        <CheckFindings r />
    }
}

/// A check's findings: each consumer group's verdict and reasons, the
/// subject's history and the registry's opinion. Shared by the report page
/// and the review item page (`nested` puts its headings one level down).
#[component]
pub fn CheckFindings(r: CompatibilityReport, #[prop(optional)] nested: bool) -> impl IntoView {
    let heading = move |text: &'static str| {
        if nested {
            view! { <h3>{text}</h3> }.into_any()
        } else {
            view! { <h2>{text}</h2> }.into_any()
        }
    };
    let h = r.history;
    view! {
        {heading("Consumer groups")}
        {if r.consumers.is_empty() {
            view! { <p class="note">"No consumer group reads this topic."</p> }.into_any()
        } else {
            view! {
                <table class="list" data-testid="consumer-verdicts">
                    <thead><tr><th>"Group"</th><th>"Owner"</th><th>"Verdict"</th><th>"Why"</th></tr></thead>
                    <tbody>
                        {r.consumers.into_iter().map(|c| view! {
                            <tr data-group=c.group.clone()>
                                <td>{c.group.clone()}</td>
                                <td>{c.owner.unwrap_or_else(|| "unowned".into())}</td>
                                <td><span class=verdict_class(c.verdict)>{c.verdict.as_str()}</span></td>
                                <td>
                                    <p class="note">{format!("Reader schema: {}", c.reader_note)}</p>
                                    <ul>
                                        {c.reasons.into_iter().map(|i| view! {
                                            <li><code>{i.kind}</code> " at " <code>{i.location}</code> ": " {i.message}</li>
                                        }).collect_view()}
                                    </ul>
                                </td>
                            </tr>
                        }).collect_view()}
                    </tbody>
                </table>
            }.into_any()
        }}
        {heading("Subject history")}
        <p data-testid="history-verdict">
            <span class=verdict_class(h.verdict)>{h.verdict.as_str()}</span>
            {format!(" {} under {} ({} version(s), from the {}) — {}", h.subject, h.mode.as_str(), h.versions, h.source, h.note)}
        </p>
        <ul>
            {h.findings.into_iter().map(|f| view! {
                <li>{format!("version {} ({}): ", f.version, f.direction.replace('_', " "))} <code>{f.incompatibility.kind}</code> " at " <code>{f.incompatibility.location}</code> ": " {f.incompatibility.message}</li>
            }).collect_view()}
        </ul>
        {r.registry.map(|o| view! {
            {heading("The registry's own check")}
            {match (o.is_compatible, o.error) {
                (_, Some(e)) => view! { <p class="error">{format!("No answer from the registry: {e}")}</p> }.into_any(),
                (Some(ok), None) => view! {
                    <p>{format!("{}: {}", o.subject, if ok { "compatible" } else { "incompatible" })}</p>
                    <ul>{o.messages.into_iter().map(|m| view! { <li><code>{m}</code></li> }).collect_view()}</ul>
                }.into_any(),
                (None, None) => ().into_any(),
            }}
        })}
    }
}

/// Two texts side by side, line by line: removed lines marked on the
/// left, added ones on the right.
#[component]
pub fn DiffTable(left: String, right: String, lines: Vec<crate::model::DiffLine>) -> impl IntoView {
    view! {
        <table class="diff" data-testid="diff">
            <thead><tr><th>{left}</th><th>{right}</th></tr></thead>
            <tbody>
                {lines.into_iter().map(|l| {
                    let class = match (&l.left, &l.right) {
                        (Some(_), None) => "removed",
                        (None, Some(_)) => "added",
                        _ => "same",
                    };
                    view! {
                        <tr class=class>
                            <td><code>{l.left.unwrap_or_default()}</code></td>
                            <td><code>{l.right.unwrap_or_default()}</code></td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
}

#[server(prefix = "/fn", endpoint = "list_registries")]
pub async fn list_registries() -> Result<Vec<crate::model::RegistryStatus>, AppError> {
    use crate::port::{backend, principal};
    let who = principal().await?;
    backend()?.schemas.registries(&who).await
}

/// `/schemas`: each cluster's Schema Registry and its hygiene findings.
#[component]
pub fn SchemasPage() -> impl IntoView {
    let registries = Resource::new(|| (), |_| list_registries());
    view! {
        <Title text="Schemas" />
        <h1>"Schemas"</h1>
        <p class="note">"Each cluster's Schema Registry, read every five minutes: topics with no schema registered (flagged for Tier 1 and Tier 2 streams), subjects whose topic is gone, and subjects whose compatibility level differs from the one their stream declares, listed by the owner of the stream. Check a producer change from its stream's page."</p>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match registries.await {
                    Ok(list) if list.is_empty() => view! {
                        <p class="note">"No cluster has a Schema Registry yet (an admin sets one with PUT /api/v1/clusters/{id}/registry)."</p>
                    }.into_any(),
                    Ok(list) => list.into_iter().map(|r| view! {
                        <section class="card" data-testid="registry">
                            <h2>{format!("{} · {}", r.cluster, r.url)}</h2>
                            <p><a href=format!("/schemas/{}", r.cluster_id)>"Subjects, versions and levels →"</a></p>
                            <p class="note">{r.checked_at.map_or("Not read yet.".to_string(), |t| format!("Read {}.", t.format("%Y-%m-%d %H:%M:%S UTC")))}</p>
                            {r.last_error.map(|e| view! { <p class="error" role="alert">{format!("The last reading failed: {e}. The findings below are from the last good one.")}</p> })}
                            {if r.findings.is_empty() {
                                view! { <p>"No findings."</p> }.into_any()
                            } else {
                                view! {
                                    <table class="list">
                                        <thead><tr><th>"Owner"</th><th>"Finding"</th><th>"Topic"</th><th>"Subject"</th><th>"Detail"</th></tr></thead>
                                        <tbody>
                                            {r.findings.into_iter().map(|f| {
                                                let topic = f.topic.clone().unwrap_or_default();
                                                let href = href_with(&format!("/clusters/{}/stream", r.cluster_id), &[("name", f.topic.clone())]);
                                                view! {
                                                    <tr>
                                                        <td>{f.owner.unwrap_or_else(|| "unowned".into())}</td>
                                                        <td><span class="badge state-warn">{f.kind}</span></td>
                                                        <td><a href=href>{topic}</a></td>
                                                        <td>{f.subject.unwrap_or_default()}</td>
                                                        <td>{f.detail}</td>
                                                    </tr>
                                                }
                                            }).collect_view()}
                                        </tbody>
                                    </table>
                                }.into_any()
                            }}
                        </section>
                    }).collect_view().into_any(),
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[server(prefix = "/fn", endpoint = "get_registry_subjects")]
pub async fn get_registry_subjects(
    id: i64,
    q: Option<String>,
    page: u32,
) -> Result<crate::model::RegistrySubjects, AppError> {
    use crate::port::{backend, principal};
    use streamkeeper::page::PageRequest;
    let who = principal().await?;
    backend()?
        .schemas
        .registry_subjects(&who, id, q, PageRequest::new(Some(page), None))
        .await
}

#[server(prefix = "/fn", endpoint = "get_subject_diff")]
pub async fn get_subject_diff(
    id: i64,
    subject: String,
    left: Option<u32>,
    right: Option<u32>,
) -> Result<crate::model::SubjectDiff, AppError> {
    use crate::port::{backend, principal};
    let who = principal().await?;
    backend()?
        .schemas
        .subject_diff(&who, id, &subject, left, right)
        .await
}

/// `/schemas/:id?q=&page=`: a registry's subjects with their versions and
/// levels, as the hygiene routine last read them, and a form to propose a
/// schema registration for review.
#[component]
pub fn SubjectsPage() -> impl IntoView {
    let id = id_param();
    let q = query_param("q");
    let page = page_param();
    let propose = ServerAction::<ProposeReview>::new();
    let subjects = Resource::new(
        move || (id.get(), q.get(), page.get()),
        |(id, q, page)| async move {
            match id {
                Some(id) => get_registry_subjects(id, q, page).await,
                None => Err(AppError::NotFound("That registry".into())),
            }
        },
    );
    view! {
        <Title text="Subjects" />
        <p><a href="/schemas">"← Schemas"</a></p>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match subjects.await {
                    Ok(r) => {
                        let cluster_id = r.cluster_id;
                        view! {
                            <SubjectsView r />
                            <ProposeRegistration cluster_id propose />
                        }
                        .into_any()
                    }
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

/// Proposes a schema to register under a subject; it goes to the review
/// inbox of the topic's domain.
#[component]
fn ProposeRegistration(cluster_id: i64, propose: ServerAction<ProposeReview>) -> impl IntoView {
    view! {
        <section class="card">
            <h2>"Propose a schema registration"</h2>
            <p class="note">"The schema is checked against the subject's history and the topic's consumers, then waits in the review inbox for the approvers of the topic's domain. Nothing is registered until it is approved."</p>
            <ActionForm action=propose attr:class="stack" attr:data-testid="propose-registration">
                <input type="hidden" name="kind" value=Kind::SchemaRegistration.as_str() />
                <input type="hidden" name="cluster_id" value=cluster_id.to_string() />
                <label>"Topic " <input name="topic" required /></label>
                <label>"Subject " <input name="subject" placeholder="topic-value" /> <small>"Leave empty for the topic's value subject."</small></label>
                <label>"Title " <input name="title" placeholder="generated when empty" /></label>
                <TypeSelect />
                <label>"Schema " <textarea name="schema" rows="10" required></textarea></label>
                <button type="submit">"Propose for review"</button>
            </ActionForm>
            <ActionNote value=propose.value() ok=|id: &i64| format!("Proposed (review item {id}).") />
        </section>
    }
}

#[component]
fn SubjectsView(r: crate::model::RegistrySubjects) -> impl IntoView {
    let id = r.cluster_id;
    let base = format!("/schemas/{id}");
    let global = r.global.map_or("unknown", |m| m.as_str());
    let read = match r.read_at {
        Some(t) => format!(
            "{} · global level {global} · read {} (the registry is read every five minutes)",
            r.url,
            t.format("%Y-%m-%d %H:%M:%S UTC")
        ),
        None => format!(
            "{} · not read yet: the registry is read every five minutes, and its subjects show here after the first good reading",
            r.url
        ),
    };
    let search = r.search.clone();
    let pager_base = base.clone();
    view! {
        <h1>{format!("{} · subjects", r.cluster)}</h1>
        <p class="note" data-testid="subjects-read">{read}</p>
        {r.last_error.map(|e| view! { <p class="error" role="alert">{format!("The last reading failed: {e}. The subjects below are from the last good one.")}</p> })}
        <form method="get" action=base class="filters" role="search">
            <label>"Search " <input name="q" type="search" value=r.search.unwrap_or_default() placeholder="subject" /></label>
            <button type="submit">"Search"</button>
        </form>
        <table class="list" data-testid="subjects">
            <thead><tr><th>"Subject"</th><th>"Versions"</th><th>"Latest"</th><th>"Level"</th></tr></thead>
            <tbody>
                {r.subjects.items.clone().into_iter().map(|s| {
                    let href = href_with(&format!("/schemas/{id}/subject"), &[("name", Some(s.name.clone()))]);
                    view! {
                        <tr>
                            <td><a href=href>{s.name.clone()}</a></td>
                            <td>{s.versions.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")}</td>
                            <td>{format!("{} · id {}", s.schema_type.as_str(), s.latest_id)}</td>
                            <td>{s.level.map_or(format!("{global} (global)"), |m| m.as_str().to_string())}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
        <Pager page=r.subjects href=move |n| href_with(&pager_base, &[("q", search.clone()), ("page", Some(n.to_string()))]) />
    }
}

/// `/schemas/:id/subject?name=S&left=A&right=B`: two versions side by side.
#[component]
pub fn SubjectPage() -> impl IntoView {
    let id = id_param();
    let name = query_param("name");
    let left = query_param("left");
    let right = query_param("right");
    let diff = Resource::new(
        move || (id.get(), name.get(), left.get(), right.get()),
        |(id, name, left, right)| async move {
            let (Some(id), Some(name)) = (id, name) else {
                return Err(AppError::NotFound("That subject".into()));
            };
            let num = |v: Option<String>| v.and_then(|v| v.parse::<u32>().ok());
            get_subject_diff(id, name, num(left), num(right)).await
        },
    );
    view! {
        <Title text="Subject" />
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match diff.await {
                    Ok(d) => {
                        let base = format!("/schemas/{}/subject", d.cluster_id);
                        let options = |selected: u32| d.versions.iter().map(|v| {
                            let v = *v;
                            view! { <option value=v.to_string() selected=v == selected>{format!("v{v}")}</option> }
                        }).collect_view();
                        view! {
                            <p><a href=format!("/schemas/{}", d.cluster_id)>"← Subjects"</a></p>
                            <h1>{d.subject.clone()}</h1>
                            <p class="note">{format!("{} · level {} · versions {}", d.schema_type.as_str(), d.level.as_str(), d.versions.iter().map(u32::to_string).collect::<Vec<_>>().join(", "))}</p>
                            <form method="get" action=base class="filters">
                                <input type="hidden" name="name" value=d.subject.clone() />
                                <label>"From " <select name="left">{options(d.left)}</select></label>
                                <label>"to " <select name="right">{options(d.right)}</select></label>
                                <button type="submit">"Compare"</button>
                            </form>
                            <DiffTable left=format!("v{}", d.left) right=format!("v{}", d.right) lines=d.lines />
                        }.into_any()
                    }
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}
