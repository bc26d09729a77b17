//! Schemas → registries: each registry's hygiene, its subjects, and a subject's
//! versions side by side.

use crate::error::AppError;
use crate::review::fns::ProposeReview;
use crate::schemas::fns::{get_registry_subjects, get_subject_diff, list_registries};
use crate::ui::notes::{ActionNote, ErrorNote};
use crate::ui::pager::Pager;
use crate::ui::params::{href_with, id_param, page_param, query_param};
use crate::ui::schema::{DiffTable, TypeSelect};
use crate::ui::sort::{shown, sort_header};
use crate::ui::time::stamp_ago;
use crate::ui::title::page_title;
use leptos::prelude::*;
use leptos_meta::Title;
use streamkeeper::review::Kind;
use streamkeeper::schemas::list::SubjectColumn;

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
                            <p class="note">{r.checked_at.map_or("Not read yet.".to_string(), |t| format!("Read {}.", stamp_ago(t)))}</p>
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

/// `/schemas/:id?q=&sort=&page=`: a registry's subjects with their versions and
/// levels, as the hygiene routine last read them, and a form to propose a
/// schema registration for review.
#[component]
pub fn SubjectsPage() -> impl IntoView {
    let id = id_param();
    let q = query_param("q");
    let sort = query_param("sort");
    let page = page_param();
    let propose = ServerAction::<ProposeReview>::new();
    let subjects = Resource::new(
        move || (id.get(), q.get(), sort.get(), page.get()),
        |(id, q, sort, page)| async move {
            match id {
                Some(id) => get_registry_subjects(id, q, sort, page).await,
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
                        let sort = sort.get_untracked();
                        view! {
                            <Title text=page_title(Some(&r.cluster), "Schemas") />
                            <SubjectsView r sort />
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
            <ActionNote value=propose.value() />
        </section>
    }
}

#[component]
fn SubjectsView(r: crate::schemas::model::RegistrySubjects, sort: Option<String>) -> impl IntoView {
    let id = r.cluster_id;
    let base = format!("/schemas/{id}");
    let global = r.global.map_or("unknown", |m| m.as_str());
    let read = match r.read_at {
        Some(t) => format!(
            "{} · global level {global} · read {} (the registry is read every five minutes)",
            r.url,
            stamp_ago(t)
        ),
        None => format!(
            "{} · not read yet: the registry is read every five minutes, and its subjects show here after the first good reading",
            r.url
        ),
    };
    let search = r.search.clone();
    let link = {
        let base = base.clone();
        move |sort: Option<String>, page: Option<String>| {
            href_with(
                &base,
                &[("q", search.clone()), ("sort", sort), ("page", page)],
            )
        }
    };
    let shown = shown::<SubjectColumn>(sort.as_deref());
    let header = |label, column| sort_header(label, column, shown, |s| link(Some(s), None));
    let head = view! {
        <tr>
            {header("Subject", SubjectColumn::Subject)}
            {header("Versions", SubjectColumn::Versions)}
            {header("Latest", SubjectColumn::Latest)}
            {header("Level", SubjectColumn::Level)}
            <th scope="col">"Producers write"</th>
        </tr>
    };
    view! {
        <h1>{format!("{} · subjects", r.cluster)}</h1>
        <p class="note" data-testid="subjects-read">{read}</p>
        {r.last_error.map(|e| view! { <p class="error" role="alert">{format!("The last reading failed: {e}. The subjects below are from the last good one.")}</p> })}
        <form method="get" action=base class="filters" role="search">
            <label>"Search " <input name="q" type="search" value=r.search.unwrap_or_default() placeholder="subject" /></label>
            // The search keeps the order chosen by a column header.
            {sort.clone().map(|v| view! { <input type="hidden" name="sort" value=v /> })}
            <button type="submit">"Search"</button>
        </form>
        <table class="list" data-testid="subjects">
            <thead>{head}</thead>
            <tbody>
                {r.subjects.items.clone().into_iter().map(|s| {
                    let href = href_with(&format!("/schemas/{id}/subject"), &[("name", Some(s.name.clone()))]);
                    view! {
                        <tr>
                            <td><a href=href>{s.name.clone()}</a></td>
                            <td>{s.versions.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")}</td>
                            <td>{format!("{} · id {}", s.schema_type.as_str(), s.latest_id)}</td>
                            <td>{s.level.map_or(format!("{global} (global)"), |m| m.as_str().to_string())}</td>
                            <td data-testid="producers-write">{s.producers_write.clone().unwrap_or_default()}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
        <Pager page=r.subjects href=move |n| link(sort.clone(), Some(n.to_string())) />
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
        <Title text=move || page_title(name.get().as_deref(), "Schemas") />
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
