//! The producer-change page that checks a proposed schema against every consumer
//! group, and a check's report with each group's verdict and reasons.

use crate::error::AppError;
use crate::schemas::fns::{
    CHECK_FORM, CheckSchema, ProposeChecked, get_schema_check, get_stream_schemas,
};
use crate::schemas::model::{CatalogSchema, CompatibilityReport};
use crate::schemas::widgets::NotifyOwners;
use crate::ui::flash::{KeptForm, take_kept};
use crate::ui::notes::{ActionNote, ErrorNote};
use crate::ui::params::{href_with, id_param, query_param};
use crate::ui::schema::{CheckFindings, TypeSelect, editable, verdict_class};
use crate::ui::time::stamp_ago;
use crate::ui::title::page_title;
use leptos::prelude::*;
use leptos_meta::Title;
use streamkeeper::review::MAX_TITLE_CHARS;
use streamkeeper::schemas::SchemaType;

/// `/clusters/:id/stream/check?name=TOPIC`: paste a proposed producer
/// schema and see which consumer groups break. The editor starts from the
/// stream's current schema, shown beside it on wide screens; after a
/// failed post it holds what was sent (kept on the server, never in the
/// address).
#[component]
pub fn CheckPage() -> impl IntoView {
    let id = id_param();
    let name = query_param("name");
    let check = ServerAction::<CheckSchema>::new();
    let draft = Resource::new(
        move || (id.get(), name.get()),
        |(id, topic)| async move {
            match (id, topic) {
                (Some(id), Some(topic)) => {
                    let kept = take_kept(CHECK_FORM).await;
                    let schemas = get_stream_schemas(id, topic).await?;
                    Ok((schemas.history.into_iter().next(), kept))
                }
                _ => Err(AppError::NotFound("That stream".into())),
            }
        },
    );
    view! {
        <Title text=move || page_title(name.get().as_deref(), "Check a producer change") />
        {move || match (id.get(), name.get()) {
            (Some(id), Some(topic)) => {
                let back = href_with(&format!("/clusters/{id}/stream"), &[("name", Some(topic.clone()))]);
                view! {
                    <p><a href=back>"← " {topic.clone()}</a> " · " <a href=crate::lineage::widgets::topic_impact_href(id, &topic) data-testid="check-impact">"What breaks if it changes"</a></p>
                    <h1>"Check a producer change to " {topic.clone()}</h1>
                    <p class="note">"The proposed schema is checked against the reader schema of every consumer group that reads the topic (can it read what the producer would write?), against the subject's history under its compatibility level, and by the Schema Registry when one is configured. Nothing is registered."</p>
                    <ActionNote value=check.value() />
                    <Suspense fallback=|| view! { <p>"Loading…"</p> }>
                        {move || {
                            let topic = topic.clone();
                            Suspend::new(async move {
                                match draft.await {
                                    Ok((current, kept)) => view! { <CheckForm check id topic current kept /> }.into_any(),
                                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                                }
                            })
                        }}
                    </Suspense>
                }.into_any()
            }
            _ => view! { <ErrorNote err=AppError::NotFound("That stream".into()) /> }.into_any(),
        }}
    }
}

/// The check form: the editor (what failed to go through, else the
/// stream's current schema to edit), a title for proposing, and the
/// current schema beside it.
#[component]
fn CheckForm(
    check: ServerAction<CheckSchema>,
    id: i64,
    topic: String,
    current: Option<CatalogSchema>,
    kept: Option<KeptForm>,
) -> impl IntoView {
    let kept_type = kept
        .as_ref()
        .and_then(|k| k.field("schema_type"))
        .and_then(SchemaType::parse);
    let selected = kept_type.or(current.as_ref().map(|c| c.schema_type));
    let text = match (&kept, &current) {
        (Some(k), _) => k.field("schema").unwrap_or_default().to_string(),
        (None, Some(c)) => editable(&c.schema),
        (None, None) => String::new(),
    };
    let title = kept
        .as_ref()
        .and_then(|k| k.field("title"))
        .unwrap_or_default()
        .to_string();
    let beside = match current {
        Some(c) => {
            let when = match (&c.subject, c.version) {
                (Some(subject), Some(v)) => format!("{subject} v{v}, pinned {}", stamp_ago(c.recorded_at)),
                _ => format!("recorded by {} {}", c.recorded_by, stamp_ago(c.recorded_at)),
            };
            view! {
                <section data-testid="current-schema">
                    <h2>{format!("Current schema ({})", c.schema_type.as_str())}</h2>
                    <p class="note">{when}</p>
                    <pre class="schema" tabindex="0">{editable(&c.schema)}</pre>
                </section>
            }
            .into_any()
        }
        None => view! {
            <section data-testid="current-schema">
                <h2>"Current schema"</h2>
                <p class="note">"No schema is recorded for this stream yet: the check compares with its consumers' reader schemas and the registry's versions only. Record it on the stream's page."</p>
            </section>
        }
        .into_any(),
    };
    view! {
        <ActionForm action=check attr:class="stack wide" attr:data-testid="check-form">
            <input type="hidden" name="cluster_id" value=id.to_string() />
            <input type="hidden" name="topic" value=topic />
            {kept.is_some().then(|| view! {
                <p class="note" data-testid="kept-note">"Your text is as you sent it: fix it and send it again."</p>
            })}
            <div class="editor-pair">
                <section>
                    <TypeSelect selected=selected.unwrap_or(SchemaType::Avro) />
                    <label>"Proposed schema " <textarea name="schema" rows="24" required spellcheck="false">{text}</textarea></label>
                </section>
                {beside}
            </div>
            <label>
                "Title for review "
                <input name="title" value=title maxlength=MAX_TITLE_CHARS.to_string() placeholder="Producer change of the topic's value subject" />
                <small>"Used when you propose it; the inbox and the approvers' notifications show it."</small>
            </label>
            <div class="buttons">
                <button type="submit">"Check"</button>
                <button type="submit" name="propose" value="on" class="secondary" data-testid="propose-review">"Propose for review"</button>
            </div>
            <small class="note">"Propose for review checks it the same way and opens a review item for the domain's approvers; once approved it is registered where the domain's autonomy level allows. You can also propose it from the check's report."</small>
        </ActionForm>
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
                    Ok(r) => view! { <Title text=page_title(Some(&r.topic), "Schema checks") /> <ReportView r /> }.into_any(),
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
        <p><a href=back>"← " {r.topic.clone()}</a> " · " <a href=again>"Check another change"</a> " · " <a href=crate::lineage::widgets::topic_impact_href(r.cluster_id, &r.topic) data-testid="check-impact">"What breaks if it changes"</a></p>
        <h1>
            {format!("{} change to {} ", r.schema_type.as_str(), r.topic)}
            <span class=verdict_class(r.verdict) data-testid="verdict">{r.verdict.as_str()}</span>
        </h1>
        <p data-testid="summary">{r.summary.clone()}</p>
        <p class="note">{format!(
            "Checked by {} at {} in {} ms · cluster {}",
            r.submitted_by,
            stamp_ago(r.submitted_at),
            r.elapsed_ms,
            r.cluster
        )}</p>
        <NotifyOwners r=r.clone() />
        <ProposeChecked id=r.id />
        <CheckFindings r />
    }
}

/// Proposes the checked schema for review from its report, with a title,
/// without pasting it again; the review item checks it once more.
#[component]
fn ProposeChecked(id: i64) -> impl IntoView {
    let propose = ServerAction::<ProposeChecked>::new();
    view! {
        <section class="card" data-testid="propose-checked">
            <ActionNote value=propose.value() />
            <ActionForm action=propose attr:class="stack" attr:data-testid="propose-checked-form">
                <input type="hidden" name="check_id" value=id.to_string() />
                <label>
                    "Title for review "
                    <input name="title" maxlength=MAX_TITLE_CHARS.to_string() placeholder="Producer change of the topic's value subject" />
                </label>
                <button type="submit">"Propose this schema for review"</button>
                <small class="note">"Opens a review item with exactly the schema checked here, for the domain's approvers; it is checked again as it is proposed."</small>
            </ActionForm>
        </section>
    }
}
