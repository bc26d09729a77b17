//! Pieces several pages share: the header, error notes, the pager and the
//! role checkboxes.

use crate::error::AppError;
use crate::pages::home::current_user;
use crate::pages::review::{InboxLink, inbox_counts};
use leptos::prelude::*;
use streamkeeper::page::Page;
use streamkeeper::role::{Action, Role};

/// The header: brand, the navigation this user may use, who is signed in
/// and the sign-out button. Shows only the brand to someone not signed in.
#[component]
pub fn SignedInHeader() -> impl IntoView {
    let me = Resource::new(|| (), |_| current_user());
    let counts = inbox_counts();
    view! {
        <header class="top">
            <a class="brand" href="/">"Streamkeeper"</a>
            // One Transition for both: the badge's numbers are awaited with
            // the user, so the server's HTML and the hydrating client agree,
            // and a refetch on navigation keeps the header in place.
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    match me.await {
                        Ok(Some(me)) => {
                            let counts = counts.await.ok().flatten();
                            let admin = me.principal.may(Action::ManageUsers);
                            let audit = me.principal.may(Action::ReadAudit);
                            view! {
                                <nav aria-label="Main">
                                    <a href="/">"Home"</a>
                                    <a href="/streams">"Streams"</a>
                                    <a href="/flags">"Flags"</a>
                                    <a href="/schemas">"Schemas"</a>
                                    <a href="/clusters">"Clusters"</a>
                                    <InboxLink counts />
                                    <Show when=move || admin>
                                        <a href="/settings/users">"Users"</a>
                                        <a href="/settings/teams">"Teams"</a>
                                        <a href="/settings/clusters">"Add cluster"</a>
                                        <a href="/settings/review">"Approvers"</a>
                                    </Show>
                                    <Show when=move || audit>
                                        <a href="/settings/audit">"Audit log"</a>
                                    </Show>
                                </nav>
                                <div class="who">
                                    <a class="user" href="/account" data-testid="signed-in-user">
                                        {me.principal.display_name.clone()}
                                    </a>
                                    // A plain form: signing out is a full page load, with or without wasm.
                                    <form method="post" action="/logout">
                                        <button type="submit" class="link">"Sign out"</button>
                                    </form>
                                </div>
                            }
                                .into_any()
                        }
                        _ => ().into_any(),
                    }
                })}
            </Transition>
        </header>
    }
}

/// Bumped by pages whose actions may change the inbox counts (an approval,
/// marking notifications read), so the header's badge fetches them again.
#[derive(Clone, Copy, Debug)]
pub struct InboxChanged(pub RwSignal<u32>);

/// An error shown in place of the content it stopped. On the server it also
/// sets the page's HTTP status.
#[component]
pub fn ErrorNote(err: AppError) -> impl IntoView {
    #[cfg(feature = "ssr")]
    crate::port::set_status(&err);
    let signin = matches!(err, AppError::Unauthenticated);
    view! {
        <div class="error" role="alert" data-code=err.code()>
            {err.to_string()}
            <Show when=move || signin>
                " " <a href="/login">"Sign in"</a>
            </Show>
        </div>
    }
}

/// The result of the last submission of a form: an error, or a success note.
#[component]
pub fn ActionNote<T: Clone + Send + Sync + 'static>(
    value: MappedSignal<Option<Result<T, AppError>>>,
    ok: fn(&T) -> String,
) -> impl IntoView {
    move || match value.get() {
        Some(Ok(v)) => view! { <p class="ok" role="status">{ok(&v)}</p> }.into_any(),
        Some(Err(e)) => {
            view! { <p class="error" role="alert" data-code=e.code()>{e.to_string()}</p> }
                .into_any()
        }
        None => ().into_any(),
    }
}

/// Previous / next links for a server-side page. `href` builds the link for
/// a page number, keeping the page's other query parameters.
#[component]
pub fn Pager<T: 'static>(page: Page<T>, href: impl Fn(u32) -> String + 'static) -> impl IntoView {
    let prev = page.has_prev().then(|| href(page.page - 1));
    let next = page.has_next().then(|| href(page.page + 1));
    view! {
        <nav class="pager" aria-label="Pages">
            {prev.map(|h| view! { <a rel="prev" href=h>"← Previous"</a> })}
            <span>{format!("Page {} of {} · {} in all", page.page, page.pages(), page.total)}</span>
            {next.map(|h| view! { <a rel="next" href=h>"Next →"</a> })}
        </nav>
    }
}

/// The roles as small labels.
#[component]
pub fn RoleBadges(roles: Vec<Role>) -> impl IntoView {
    view! {
        <span class="roles">
            {roles.into_iter().map(|r| view! { <span class="badge">{r.as_str()}</span> }).collect_view()}
        </span>
    }
}

/// One checkbox per role, named after the role, as the role server functions
/// take them.
#[component]
pub fn RoleChecks(checked: Vec<Role>) -> impl IntoView {
    view! {
        <fieldset class="roles-choice">
            <legend>"Roles"</legend>
            {Role::ALL
                .into_iter()
                .map(|r| {
                    let on = checked.contains(&r);
                    view! {
                        <label title=r.describe()>
                            <input type="checkbox" name=r.as_str() value="on" checked=on />
                            {r.as_str()}
                        </label>
                    }
                })
                .collect_view()}
        </fieldset>
    }
}

/// Roles from the checkboxes of [`RoleChecks`].
pub fn roles_from_checks(
    viewer: Option<String>,
    owner: Option<String>,
    approver: Option<String>,
    manager: Option<String>,
    admin: Option<String>,
) -> Vec<Role> {
    [
        (viewer, Role::Viewer),
        (owner, Role::Owner),
        (approver, Role::Approver),
        (manager, Role::Manager),
        (admin, Role::Admin),
    ]
    .into_iter()
    .filter_map(|(v, r)| v.is_some().then_some(r))
    .collect()
}

/// A query parameter of the current URL.
pub fn query_param(name: &'static str) -> Memo<Option<String>> {
    let q = leptos_router::hooks::use_query_map();
    Memo::new(move |_| q.with(|q| q.get(name)).filter(|v| !v.is_empty()))
}

/// The `:id` route parameter as a number (`None` when absent or garbled).
pub fn id_param() -> Memo<Option<i64>> {
    let params = leptos_router::hooks::use_params_map();
    Memo::new(move |_| {
        params
            .with(|p| p.get("id"))
            .and_then(|v| v.parse::<i64>().ok())
    })
}

/// The `page` query parameter as a number (1 when absent or garbled).
pub fn page_param() -> Memo<u32> {
    let p = query_param("page");
    Memo::new(move |_| p.get().and_then(|p| p.parse().ok()).unwrap_or(1))
}

/// A link to `path` with the given query parameters (empty ones left out).
pub fn href_with(path: &str, params: &[(&str, Option<String>)]) -> String {
    let mut q = form_urlencoded::Serializer::new(String::new());
    for (k, v) in params {
        if let Some(v) = v.as_deref().filter(|v| !v.is_empty()) {
            q.append_pair(k, v);
        }
    }
    let q = q.finish();
    if q.is_empty() {
        path.to_string()
    } else {
        format!("{path}?{q}")
    }
}
