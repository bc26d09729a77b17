//! The producer-change page that checks a proposed schema against every consumer
//! group, and a check's report with each group's verdict and reasons.

use crate::error::AppError;
use crate::schemas::fns::{CheckSchema, get_schema_check};
use crate::schemas::model::CompatibilityReport;
use crate::ui::notes::{ActionNote, ErrorNote};
use crate::ui::params::{href_with, id_param, query_param};
use crate::ui::schema::{CheckFindings, TypeSelect, verdict_class};
use crate::ui::time::stamp_ago;
use leptos::prelude::*;
use leptos_meta::Title;

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
                    <p><a href=back>"← " {topic.clone()}</a> " · " <a href=crate::lineage::widgets::topic_impact_href(id, &topic) data-testid="check-impact">"What breaks if it changes"</a></p>
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
                    <ActionNote value=check.value() />
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
        <p class="note">"To have a change reviewed and registered, use Propose for review on the check page."</p>
        <CheckFindings r />
    }
}
