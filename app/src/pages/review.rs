//! The review inbox: the list (waiting for me, mine, all, with filters),
//! an item's page (its content hash, base, diff, checks, approvals,
//! comments and trail, and the forms the caller may use now) and the
//! header's badge. Every form works before the wasm loads: a successful
//! action redirects back to the item, a failed one shows its error there.

// The edit and propose forms' server functions take one argument per
// field, as ActionForm sends them; the generated client function cannot
// carry an allow of its own.
#![allow(clippy::too_many_arguments)]

use crate::components::{
    ActionNote, ErrorNote, InboxChanged, Pager, href_with, id_param, page_param, query_param,
};
use crate::error::AppError;
use crate::model::{
    ApprovalView, CommentView, InboxCounts, InboxScope, NotificationView, ReviewItem, ReviewSummary,
};
use crate::pages::schemas::{CheckFindings, DiffTable, TypeSelect, verdict_class};
use chrono::{DateTime, Utc};
use leptos::prelude::*;
use leptos_meta::Title;
use streamkeeper::page::{Page, choice};
use streamkeeper::review::{Autonomy, Base, Kind, State};

#[server(prefix = "/fn", endpoint = "list_reviews")]
pub async fn list_reviews(
    scope: Option<String>,
    state: Option<String>,
    kind: Option<String>,
    domain: Option<String>,
    page: u32,
) -> Result<Page<ReviewSummary>, AppError> {
    use crate::model::ReviewFilter;
    use crate::port::{backend, principal};
    use streamkeeper::page::PageRequest;
    let who = principal().await?;
    let filter = ReviewFilter {
        scope: choice(scope.as_deref())?.unwrap_or_default(),
        state: choice(state.as_deref())?,
        kind: choice(kind.as_deref())?,
        domain: domain
            .map(|d| d.trim().to_string())
            .filter(|d| !d.is_empty()),
    };
    backend()?
        .reviews
        .list(&who, filter, PageRequest::new(Some(page), None))
        .await
}

#[server(prefix = "/fn", endpoint = "get_review")]
pub async fn get_review(id: i64) -> Result<ReviewItem, AppError> {
    use crate::port::{backend, principal};
    let who = principal().await?;
    backend()?.reviews.get(&who, id).await
}

/// Proposes a change for review (the subjects page's registration form),
/// then shows the new item.
#[server(prefix = "/fn", endpoint = "propose_review")]
pub async fn propose_review(
    kind: String,
    cluster_id: i64,
    topic: String,
    subject: Option<String>,
    schema_type: String,
    schema: String,
    title: Option<String>,
) -> Result<i64, AppError> {
    use crate::model::NewReviewItem;
    use crate::port::{backend, client_addr, principal};
    use streamkeeper::schema::SchemaType;
    let who = principal().await?;
    let kind = choice::<Kind>(Some(&kind))?
        .ok_or_else(|| AppError::Invalid("Say what kind of change this is.".into()))?;
    let schema_type = SchemaType::parse(&schema_type)
        .ok_or_else(|| AppError::Invalid(format!("Unknown schema type {schema_type:?}.")))?;
    let blank = |v: Option<String>| v.map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
    let new = NewReviewItem {
        kind,
        cluster_id,
        topic: topic.trim().to_string(),
        subject: blank(subject),
        schema_type,
        schema,
        references: Vec::new(),
        title: blank(title),
    };
    let item = backend()?
        .reviews
        .propose(&who, &client_addr().await, new)
        .await?;
    let id = item.summary.id;
    leptos_axum::redirect(&format!("/review/{id}"));
    Ok(id)
}

/// Approves the revision whose content hash the page showed; the password
/// confirms it is the signed-in person at the keyboard.
#[server(prefix = "/fn", endpoint = "approve_review")]
pub async fn approve_review(
    item_id: i64,
    content_hash: String,
    password: String,
    #[server(default)] totp: Option<String>,
) -> Result<ReviewItem, AppError> {
    use crate::model::Approval;
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    let approval = Approval {
        content_hash,
        password: Some(password),
        totp: totp.filter(|t| !t.trim().is_empty()),
    };
    let item = backend()?
        .reviews
        .approve(&who, &client_addr().await, item_id, approval)
        .await?;
    leptos_axum::redirect(&format!("/review/{item_id}"));
    Ok(item)
}

#[server(prefix = "/fn", endpoint = "reject_review")]
pub async fn reject_review(item_id: i64, reason: String) -> Result<ReviewItem, AppError> {
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    let item = backend()?
        .reviews
        .reject(&who, &client_addr().await, item_id, reason.trim())
        .await?;
    leptos_axum::redirect(&format!("/review/{item_id}"));
    Ok(item)
}

#[server(prefix = "/fn", endpoint = "withdraw_review")]
pub async fn withdraw_review(item_id: i64) -> Result<ReviewItem, AppError> {
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    let item = backend()?
        .reviews
        .withdraw(&who, &client_addr().await, item_id)
        .await?;
    leptos_axum::redirect(&format!("/review/{item_id}"));
    Ok(item)
}

#[server(prefix = "/fn", endpoint = "apply_review")]
pub async fn apply_review(item_id: i64) -> Result<ReviewItem, AppError> {
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    let item = backend()?
        .reviews
        .apply(&who, &client_addr().await, item_id)
        .await?;
    leptos_axum::redirect(&format!("/review/{item_id}"));
    Ok(item)
}

/// A new revision of the item, from the revision the editor loaded.
#[server(prefix = "/fn", endpoint = "edit_review")]
pub async fn edit_review(
    item_id: i64,
    loaded_revision: i32,
    schema_type: String,
    schema: String,
) -> Result<ReviewItem, AppError> {
    use crate::model::ReviewEdit;
    use crate::port::{backend, client_addr, principal};
    use streamkeeper::schema::SchemaType;
    let who = principal().await?;
    let schema_type = SchemaType::parse(&schema_type)
        .ok_or_else(|| AppError::Invalid(format!("Unknown schema type {schema_type:?}.")))?;
    let edit = ReviewEdit {
        loaded_revision,
        schema_type,
        schema,
        references: Vec::new(),
    };
    let item = backend()?
        .reviews
        .edit(&who, &client_addr().await, item_id, edit)
        .await?;
    leptos_axum::redirect(&format!("/review/{item_id}"));
    Ok(item)
}

#[server(prefix = "/fn", endpoint = "comment_review")]
pub async fn comment_review(item_id: i64, body: String) -> Result<CommentView, AppError> {
    use crate::port::{backend, client_addr, principal};
    let who = principal().await?;
    let comment = backend()?
        .reviews
        .comment(&who, &client_addr().await, item_id, body.trim())
        .await?;
    leptos_axum::redirect(&format!("/review/{item_id}"));
    Ok(comment)
}

#[server(prefix = "/fn", endpoint = "list_review_notifications")]
pub async fn list_review_notifications(page: u32) -> Result<Page<NotificationView>, AppError> {
    use crate::port::{backend, principal};
    use streamkeeper::page::PageRequest;
    let who = principal().await?;
    backend()?
        .reviews
        .notifications(&who, PageRequest::new(Some(page), None))
        .await
}

#[server(prefix = "/fn", endpoint = "mark_review_notifications_read")]
pub async fn mark_review_notifications_read() -> Result<(), AppError> {
    use crate::port::{backend, principal};
    let who = principal().await?;
    backend()?.reviews.mark_read(&who).await
}

/// The header badge's numbers; `None` when nobody is signed in.
#[server(prefix = "/fn", endpoint = "inbox_counts")]
pub async fn get_inbox_counts() -> Result<Option<InboxCounts>, AppError> {
    use crate::port::{backend, principal};
    match principal().await {
        Ok(who) => backend()?.reviews.counts(&who).await.map(Some),
        Err(AppError::Unauthenticated) => Ok(None),
        Err(e) => Err(e),
    }
}

pub fn state_class(s: State) -> &'static str {
    match s {
        State::InReview => "badge state-warn",
        State::Approved | State::Applied => "badge state-ok",
        State::Rejected | State::ApplyFailed => "badge state-bad",
        State::Withdrawn => "badge",
    }
}

fn when(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M UTC").to_string()
}

fn base_text(b: &Base) -> String {
    match (b.version, b.schema_id) {
        (Some(v), Some(id)) => format!("version {v} (schema id {id})"),
        (Some(v), None) => format!("version {v}"),
        (None, _) => "subject not registered yet".to_string(),
    }
}

/// Tells the header's badge that the counts may have changed.
fn refresh_badge_after(version: impl Fn() -> usize + 'static) {
    if let Some(InboxChanged(tick)) = use_context::<InboxChanged>() {
        Effect::watch(version, move |_, _, _| tick.update(|n| *n += 1), false);
    }
}

/// `/review?scope=waiting|mine|all&state=&kind=&domain=`: the inbox.
#[component]
pub fn ReviewPage() -> impl IntoView {
    let scope = query_param("scope");
    let state = query_param("state");
    let kind = query_param("kind");
    let domain = query_param("domain");
    let page = page_param();
    let mark = ServerAction::<MarkReviewNotificationsRead>::new();
    refresh_badge_after(move || mark.version().get());
    // The tab to show as current; the list itself refuses an unknown scope.
    let current = Memo::new(move |_| {
        choice::<InboxScope>(scope.get().as_deref())
            .ok()
            .flatten()
            .unwrap_or_default()
    });
    let items = Resource::new(
        move || {
            (
                scope.get(),
                state.get(),
                kind.get(),
                domain.get(),
                page.get(),
            )
        },
        |(scope, state, kind, domain, page)| list_reviews(scope, state, kind, domain, page),
    );
    let notes = Resource::new(
        move || mark.version().get(),
        |_| list_review_notifications(1),
    );
    let tab = move |s: InboxScope, label: &'static str| {
        let href = href_with(
            "/review",
            &[
                ("scope", Some(s.as_str().to_string())),
                ("state", state.get()),
                ("kind", kind.get()),
                ("domain", domain.get()),
            ],
        );
        let here = move || (current.get() == s).then_some("page");
        view! { <a href=href aria-current=here data-testid=format!("tab-{}", s.as_str())>{label}</a> }
    };
    view! {
        <Title text="Review inbox" />
        <h1>"Review inbox"</h1>
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                match notes.await {
                    Ok(list) => view! { <Unread list mark /> }.into_any(),
                    Err(_) => ().into_any(),
                }
            })}
        </Suspense>
        <ActionNote value=mark.value() ok=|_: &()| "All notifications marked read.".to_string() />
        <nav class="tabs" aria-label="Which items">
            {tab(InboxScope::Waiting, "Waiting for me")}
            {tab(InboxScope::Mine, "Mine")}
            {tab(InboxScope::All, "All")}
        </nav>
        <form method="get" action="/review" class="filters" role="search">
            <input type="hidden" name="scope" value=move || current.get().as_str() />
            <label>
                "State "
                <select name="state">
                    <option value="" selected=move || state.get().is_none()>"any"</option>
                    {State::ALL.map(|s| view! {
                        <option value=s.as_str() selected=move || state.get().as_deref() == Some(s.as_str())>{s.describe()}</option>
                    }).collect_view()}
                </select>
            </label>
            <label>
                "Kind "
                <select name="kind">
                    <option value="" selected=move || kind.get().is_none()>"any"</option>
                    {Kind::ALL.map(|k| view! {
                        <option value=k.as_str() selected=move || kind.get().as_deref() == Some(k.as_str())>{k.describe()}</option>
                    }).collect_view()}
                </select>
            </label>
            <label>"Domain " <input name="domain" value=move || domain.get().unwrap_or_default() /></label>
            <button type="submit">"Filter"</button>
        </form>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match items.await {
                    Ok(list) if list.items.is_empty() => {
                        let filtered = state.get_untracked().is_some()
                            || kind.get_untracked().is_some()
                            || domain.get_untracked().is_some();
                        view! { <EmptyInbox scope=current.get_untracked() filtered /> }.into_any()
                    }
                    Ok(list) => {
                        let params = (
                            current.get_untracked(),
                            state.get_untracked(),
                            kind.get_untracked(),
                            domain.get_untracked(),
                        );
                        view! {
                            <ReviewTable items=list.items.clone() />
                            <Pager page=list href=move |n| href_with("/review", &[
                                ("scope", Some(params.0.as_str().to_string())),
                                ("state", params.1.clone()),
                                ("kind", params.2.clone()),
                                ("domain", params.3.clone()),
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

/// Unread notifications above the inbox, with "Mark all read".
#[component]
fn Unread(
    list: Page<NotificationView>,
    mark: ServerAction<MarkReviewNotificationsRead>,
) -> impl IntoView {
    let unread: Vec<NotificationView> = list.items.into_iter().filter(|n| !n.read).collect();
    (!unread.is_empty()).then(|| {
        view! {
            <section class="card" data-testid="notifications">
                <h2>"New for you"</h2>
                <ul>
                    {unread.into_iter().map(|n| view! {
                        <li>
                            {match n.item_id {
                                Some(id) => view! { <a href=format!("/review/{id}")>{n.message.clone()}</a> }.into_any(),
                                None => view! { <span>{n.message.clone()}</span> }.into_any(),
                            }}
                            <span class="note">{format!(" · {}", when(n.created_at))}</span>
                        </li>
                    }).collect_view()}
                </ul>
                <ActionForm action=mark attr:data-testid="mark-read">
                    <button type="submit" class="secondary">"Mark all read"</button>
                </ActionForm>
            </section>
        }
    })
}

/// What an empty inbox tab means, and what to do about it.
#[component]
fn EmptyInbox(scope: InboxScope, filtered: bool) -> impl IntoView {
    let text = if filtered {
        "No items match these filters. Clear them to see the whole tab."
    } else {
        match scope {
            InboxScope::Waiting => {
                "Nothing is waiting for you. Items appear here when you are a named approver of their domain and have not decided them yet; admins name approvers under Settings → Review."
            }
            InboxScope::Mine => {
                "You have not proposed or edited anything. Propose a producer change from a stream's \"Check a producer change\" page, or a schema registration from a registry's subjects page."
            }
            InboxScope::All => {
                "There are no review items yet. They are created when someone proposes a producer change or a schema registration."
            }
        }
    };
    let clear = filtered.then(|| {
        let href = href_with("/review", &[("scope", Some(scope.as_str().to_string()))]);
        view! { " " <a href=href>"Clear the filters"</a> }
    });
    view! { <p class="note" data-testid="inbox-empty">{text} {clear}</p> }
}

#[component]
fn ReviewTable(items: Vec<ReviewSummary>) -> impl IntoView {
    view! {
        <table class="list" data-testid="review-items">
            <thead><tr>
                <th>"#"</th><th>"Title"</th><th>"Kind"</th><th>"Domain"</th><th>"Cluster / topic"</th>
                <th>"Author"</th><th>"State"</th><th>"Verdict"</th><th>"Approvals"</th><th>"Updated"</th>
            </tr></thead>
            <tbody>
                {items.into_iter().map(|r| {
                    let stream = href_with(&format!("/clusters/{}/stream", r.cluster_id), &[("name", Some(r.topic.clone()))]);
                    view! {
                        <tr data-item=r.id.to_string() class:waiting=r.waiting_for_me>
                            <td>{r.id}</td>
                            <td><a href=format!("/review/{}", r.id)>{r.title.clone()}</a></td>
                            <td>{r.kind.describe()}</td>
                            <td>{if r.domain.is_empty() { "–".to_string() } else { r.domain.clone() }}</td>
                            <td>{r.cluster.clone()} " / " <a href=stream>{r.topic.clone()}</a></td>
                            <td>{r.author.clone()}</td>
                            <td><span class=state_class(r.state) data-testid="state">{r.state.describe()}</span></td>
                            <td><span class=verdict_class(r.verdict)>{r.verdict.as_str()}</span></td>
                            <td>{format!("{} of {}", r.approval_count, r.required)}</td>
                            <td>{when(r.updated_at)}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
}

/// The actions of an item's page; its data is fetched again after each.
#[derive(Clone, Copy)]
struct ItemForms {
    approve: ServerAction<ApproveReview>,
    reject: ServerAction<RejectReview>,
    withdraw: ServerAction<WithdrawReview>,
    apply: ServerAction<ApplyReview>,
    edit: ServerAction<EditReview>,
    comment: ServerAction<CommentReview>,
}

impl ItemForms {
    fn new() -> Self {
        ItemForms {
            approve: ServerAction::new(),
            reject: ServerAction::new(),
            withdraw: ServerAction::new(),
            apply: ServerAction::new(),
            edit: ServerAction::new(),
            comment: ServerAction::new(),
        }
    }

    /// Tracks every action's version: changes when any of them completes.
    fn version(&self) -> usize {
        self.approve.version().get()
            + self.reject.version().get()
            + self.withdraw.version().get()
            + self.apply.version().get()
            + self.edit.version().get()
            + self.comment.version().get()
    }
}

fn item_note(i: &ReviewItem) -> String {
    format!(
        "Done. The item is {} (revision {}, {} of {} approvals).",
        i.summary.state.describe(),
        i.summary.revision,
        i.summary.approval_count,
        i.summary.required
    )
}

/// `/review/:id`: one item, everything about it, and the forms the caller
/// may use now.
#[component]
pub fn ReviewItemPage() -> impl IntoView {
    let id = id_param();
    let forms = ItemForms::new();
    refresh_badge_after(move || forms.version());
    let item = Resource::new(
        move || (id.get(), forms.version()),
        |(id, _)| async move {
            match id {
                Some(id) => get_review(id).await,
                None => Err(AppError::NotFound("That review item".into())),
            }
        },
    );
    view! {
        <Title text="Review item" />
        <p><a href="/review">"← Review inbox"</a></p>
        <div data-testid="action-notes">
            <ActionNote value=forms.approve.value() ok=item_note />
            <ActionNote value=forms.reject.value() ok=item_note />
            <ActionNote value=forms.withdraw.value() ok=item_note />
            <ActionNote value=forms.apply.value() ok=item_note />
            <ActionNote value=forms.edit.value() ok=item_note />
            <ActionNote value=forms.comment.value() ok=|_: &CommentView| "Comment added.".to_string() />
        </div>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match item.await {
                    Ok(i) => view! { <ItemView i forms /> }.into_any(),
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn ItemView(i: ReviewItem, forms: ItemForms) -> impl IntoView {
    let s = i.summary.clone();
    let stream = href_with(
        &format!("/clusters/{}/stream", s.cluster_id),
        &[("name", Some(s.topic.clone()))],
    );
    let left = match i.base.version {
        Some(v) => format!("v{v} (base)"),
        None => "nothing registered".to_string(),
    };
    let right = format!("revision {}", s.revision);
    let domain = if s.domain.is_empty() {
        "no domain".to_string()
    } else {
        s.domain.clone()
    };
    let applied = (s.state == State::Applied).then(|| {
        let version = i
            .applied_version
            .map_or("?".to_string(), |v| v.to_string());
        let id = i
            .applied_schema_id
            .map(|id| format!(" (schema id {id})"))
            .unwrap_or_default();
        view! {
            <p class="ok" data-testid="applied">
                "Applied: registered as version " <strong data-testid="applied-version">{version}</strong>
                {format!(" of {}{id}.", s.subject)}
            </p>
        }
    });
    let manual = i.manual_apply.clone().map(|text| {
        view! {
            <section class="card" data-testid="manual-apply">
                <h2>"Apply by hand"</h2>
                <p>"This domain is at suggest: Streamkeeper does not write to the registry. Once the item is approved, run this request by hand against the cluster's Schema Registry:"</p>
                <pre class="schema">{text}</pre>
            </section>
        }
    });
    view! {
        <h1>
            {s.title.clone()} " "
            <span class=state_class(s.state) data-testid="item-state">{s.state.describe()}</span>
        </h1>
        {(!i.state_reason.is_empty()).then(|| view! {
            <p class="lead" data-testid="state-reason">{i.state_reason.clone()}</p>
        })}
        {applied}
        <section class="card">
            <dl>
                <dt>"Kind"</dt><dd>{s.kind.describe()}</dd>
                <dt>"Domain"</dt>
                <dd data-testid="domain">{domain} " · " <span title=i.autonomy.describe()>{i.autonomy.as_str()}</span>
                    <small class="note">{format!(" — {}", i.autonomy.describe())}</small>
                </dd>
                <dt>"Cluster"</dt><dd>{s.cluster.clone()}</dd>
                <dt>"Topic"</dt><dd><a href=stream>{s.topic.clone()}</a></dd>
                <dt>"Subject"</dt><dd>{s.subject.clone()}</dd>
                <dt>"Author"</dt><dd data-testid="author">{s.author.clone()}</dd>
                <dt>"Revision"</dt><dd data-testid="revision">{s.revision}</dd>
                <dt>"Content hash"</dt><dd><code class="hash" data-testid="content-hash">{i.content_hash.clone()}</code></dd>
                <dt>"Base"</dt><dd data-testid="base">{base_text(&i.base)}</dd>
                <dt>"Approvals"</dt><dd data-testid="approval-count">{format!("{} of {}", s.approval_count, s.required)}</dd>
                <dt>"Proposed"</dt><dd>{when(s.created_at)}</dd>
                <dt>"Updated"</dt><dd>{when(s.updated_at)}</dd>
            </dl>
        </section>
        {manual}
        <Decide i=i.clone() forms />
        <h2>"Change"</h2>
        <DiffTable left right lines=i.diff.clone() />
        <details>
            <summary>"The schema exactly as it will be registered"</summary>
            <pre class="schema" data-testid="proposed-schema">{i.content.schema.clone()}</pre>
        </details>
        <CheckSection i=i.clone() />
        <ApprovalsSection i=i.clone() />
        {i.actions.edit.then(|| view! { <EditForm i=i.clone() edit=forms.edit /> })}
        <Comments id=s.id comments=i.comments.clone() comment=forms.comment />
        <h2>"Trail"</h2>
        {i.trail.is_empty().then(|| view! { <p class="note">"Nothing recorded yet."</p> })}
        <table class="list" data-testid="trail">
            <thead><tr><th>"When"</th><th>"Who"</th><th>"What"</th><th>"Detail"</th></tr></thead>
            <tbody>
                {i.trail.into_iter().map(|a| view! {
                    <tr>
                        <td>{a.at.format("%Y-%m-%d %H:%M:%S UTC").to_string()}</td>
                        <td>{a.actor}</td>
                        <td><code>{a.action}</code></td>
                        <td><code class="detail">{a.detail}</code></td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
    }
}

/// The forms the caller may use now: apply, approve (or why not), reject,
/// withdraw.
#[component]
fn Decide(i: ReviewItem, forms: ItemForms) -> impl IntoView {
    let a = i.actions.clone();
    let item_id = i.summary.id;
    let id = move || item_id.to_string();
    let revision = i.summary.revision;
    let any = a.approve || a.reject || a.withdraw || a.apply || a.approve_refusal.is_some();
    let short: String = i.content_hash.chars().take(12).collect();
    any.then(|| {
        view! {
            <section class="card" data-testid="decide">
                <h2>"Decide"</h2>
                {a.apply.then(|| view! {
                    <ActionForm action=forms.apply attr:class="stack" attr:data-testid="apply-form">
                        <input type="hidden" name="item_id" value=id() />
                        <p class="note">"Registers this revision in the cluster's Schema Registry, after checking that the subject's latest version is still the base."</p>
                        <button type="submit">{format!("Apply revision {revision}")}</button>
                    </ActionForm>
                })}
                {if a.approve {
                    view! {
                        <ActionForm action=forms.approve attr:class="stack" attr:data-testid="approve-form">
                            <input type="hidden" name="item_id" value=id() />
                            <input type="hidden" name="content_hash" value=i.content_hash.clone() />
                            <p class="note">{format!(
                                "You approve exactly revision {revision} as shown on this page (content hash {short}…). If it changes before you submit, the approval is refused."
                            )}</p>
                            <label>
                                "Confirm with your password"
                                <input type="password" name="password" required autocomplete="current-password" />
                            </label>
                            <label>
                                "Code from your authenticator app (if you set up a second factor)"
                                <input name="totp" inputmode="numeric" autocomplete="one-time-code" />
                            </label>
                            <button type="submit">{format!("Approve revision {revision}")}</button>
                        </ActionForm>
                    }.into_any()
                } else {
                    a.approve_refusal.clone().map(|why| view! {
                        <p class="note" data-testid="approve-refusal">{why}</p>
                    }).into_any()
                }}
                {a.reject.then(|| view! {
                    <ActionForm action=forms.reject attr:class="stack" attr:data-testid="reject-form">
                        <input type="hidden" name="item_id" value=id() />
                        <label>"Reason for rejecting " <textarea name="reason" rows="3" required></textarea></label>
                        <button type="submit" class="danger">"Reject"</button>
                    </ActionForm>
                })}
                {a.withdraw.then(|| view! {
                    <ActionForm action=forms.withdraw attr:data-testid="withdraw-form">
                        <input type="hidden" name="item_id" value=id() />
                        <button type="submit" class="danger">"Withdraw this proposal"</button>
                    </ActionForm>
                })}
            </section>
        }
    })
}

#[component]
fn CheckSection(i: ReviewItem) -> impl IntoView {
    view! {
        <h2>"Checks"</h2>
        {match i.check {
            Some(r) => {
                let link = format!("/schema-checks/{}", r.id);
                view! {
                    <section class="card" data-testid="item-check">
                        <p>
                            <span class=verdict_class(r.verdict) data-testid="verdict">{r.verdict.as_str()}</span>
                            " " <span data-testid="summary">{r.summary.clone()}</span>
                        </p>
                        <p class="note">
                            {format!("Checked {} in {} ms · ", when(r.submitted_at), r.elapsed_ms)}
                            <a href=link>"The full report →"</a>
                        </p>
                        <CheckFindings r nested=true />
                    </section>
                }.into_any()
            }
            None => view! { <p class="note">"This revision has not been checked yet."</p> }.into_any(),
        }}
    }
}

#[component]
fn ApprovalsSection(i: ReviewItem) -> impl IntoView {
    let required = i.summary.required;
    let eligible = i.eligible_approvers;
    let short_of = eligible < usize::try_from(required).unwrap_or(0);
    let approvals: Vec<ApprovalView> = i.approvals;
    view! {
        <h2>"Approvals"</h2>
        <section class="card" data-testid="approvals">
            <p>{format!(
                "{} of {} required approvals of revision {}.",
                i.summary.approval_count, required, i.summary.revision
            )}</p>
            {if approvals.is_empty() {
                view! { <p class="note">"Nobody has approved it yet."</p> }.into_any()
            } else {
                view! {
                    <table class="list">
                        <thead><tr><th>"Approver"</th><th>"Revision"</th><th>"Content hash"</th><th>"When"</th><th>"Counts"</th></tr></thead>
                        <tbody>
                            {approvals.into_iter().map(|a| {
                                let short: String = a.content_hash.chars().take(12).collect();
                                view! {
                                    <tr class:voided=!a.current>
                                        <td>{a.approver}</td>
                                        <td>{a.revision}</td>
                                        <td><code class="hash" title=a.content_hash.clone()>{short} "…"</code></td>
                                        <td>{when(a.approved_at)}</td>
                                        <td>{if a.current {
                                            view! { <span class="badge state-ok">"counts"</span> }.into_any()
                                        } else {
                                            view! { <span class="badge" title="An edit or a moved base voided it">"voided"</span> }.into_any()
                                        }}</td>
                                    </tr>
                                }
                            }).collect_view()}
                        </tbody>
                    </table>
                }.into_any()
            }}
            <h3>"Approvers"</h3>
            <p data-testid="approvers">
                {if i.approvers.is_empty() {
                    "No approvers are named for this domain.".to_string()
                } else {
                    format!(
                        "Named: {}. {} of them may approve (not the author, not an editor).",
                        i.approvers.join(", "),
                        eligible
                    )
                }}
            </p>
            {short_of.then(|| view! {
                <p class="warning" role="alert" data-testid="approvers-warning">{format!(
                    "Only {eligible} approver(s) may approve this item, but its domain requires {required}: it cannot be approved until an admin names more approvers under Settings → Review."
                )}</p>
            })}
            {(!i.editors.is_empty()).then(|| view! {
                <p class="note" data-testid="editors">{format!("Edited by {}; they may no longer approve it.", i.editors.join(", "))}</p>
            })}
        </section>
    }
}

#[component]
fn EditForm(i: ReviewItem, edit: ServerAction<EditReview>) -> impl IntoView {
    view! {
        <details class="card">
            <summary>"Edit the proposal"</summary>
            <ActionForm action=edit attr:class="stack wide" attr:data-testid="edit-form">
                <input type="hidden" name="item_id" value=i.summary.id.to_string() />
                <input type="hidden" name="loaded_revision" value=i.summary.revision.to_string() />
                <p class="note">"Saving makes a new revision: it is checked again, every approval is voided, and you may no longer approve it yourself."</p>
                <TypeSelect selected=i.content.schema_type />
                <label>"Schema " <textarea name="schema" rows="14" required>{i.content.schema.clone()}</textarea></label>
                <button type="submit">"Save a new revision"</button>
            </ActionForm>
        </details>
    }
}

#[component]
fn Comments(
    id: i64,
    comments: Vec<CommentView>,
    comment: ServerAction<CommentReview>,
) -> impl IntoView {
    view! {
        <h2>"Comments"</h2>
        <section class="card" data-testid="comments">
            {if comments.is_empty() {
                view! { <p class="note">"No comments yet."</p> }.into_any()
            } else {
                view! {
                    <ol class="comments">
                        {comments.into_iter().map(|c| view! {
                            <li>
                                <p class="note">{format!("{} · {}", c.author, when(c.created_at))}</p>
                                <p class="body">{c.body}</p>
                            </li>
                        }).collect_view()}
                    </ol>
                }.into_any()
            }}
            <ActionForm action=comment attr:class="stack" attr:data-testid="comment-form">
                <input type="hidden" name="item_id" value=id.to_string() />
                <label>"Comment " <textarea name="body" rows="3" required></textarea></label>
                <button type="submit">"Add comment"</button>
            </ActionForm>
        </section>
    }
}

/// The header badge's numbers, fetched again on every navigation and
/// whenever a page says the inbox changed.
pub fn inbox_counts() -> Resource<Result<Option<InboxCounts>, AppError>> {
    let location = leptos_router::hooks::use_location();
    let changed = use_context::<InboxChanged>();
    Resource::new(
        move || {
            (
                location.pathname.get(),
                changed.map(|InboxChanged(t)| t.get()),
            )
        },
        |_| get_inbox_counts(),
    )
}

/// The header's "Review" link, with a badge of the items waiting for the
/// caller and their unread notifications.
#[component]
pub fn InboxLink(counts: Option<InboxCounts>) -> impl IntoView {
    let badge = counts.filter(|c| c.waiting + c.unread > 0).map(|c| {
        let title = format!("{} waiting for you, {} unread", c.waiting, c.unread);
        view! { <span class="badge count" title=title data-testid="inbox-badge">{c.waiting + c.unread}</span> }
    });
    view! {
        <a href="/review">"Review" {badge}</a>
    }
}

/// The autonomy levels as a select, with their descriptions.
#[component]
pub fn AutonomySelect(selected: Autonomy) -> impl IntoView {
    view! {
        <label>
            "Autonomy level "
            <select name="autonomy">
                {Autonomy::ALL.map(|a| view! {
                    <option value=a.as_str() selected=a == selected>{a.describe()}</option>
                }).collect_view()}
            </select>
        </label>
    }
}
