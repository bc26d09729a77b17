//! The header every page shares: brand, the navigation this user may use, who is
//! signed in, sign-out, and the review badge. It owns its server functions, so no
//! page's module is needed to draw it.

// The edit and propose forms' server functions take one argument per
// field, as ActionForm sends them; the generated client function cannot
// carry an allow of its own.
#![allow(clippy::too_many_arguments)]

use crate::accounts::model::Me;
use crate::error::AppError;
use crate::review::model::InboxCounts;
use leptos::prelude::*;
use streamkeeper::accounts::role::Action;

/// The header: brand, the navigation this user may use, who is signed in
/// and the sign-out button. Shows only the brand to someone not signed in.
#[component]
pub fn SignedInHeader() -> impl IntoView {
    let me = Resource::new(|| (), |_| current_user());
    // Drawn by the server on each page: every form is a page load, so the
    // badge is as fresh as the page.
    let counts = Resource::new(|| (), |_| get_inbox_counts());
    // The navigation marks the page it is on (a section's own pages too).
    let pathname = leptos_router::hooks::use_location().pathname;
    let here = move |href: &'static str| {
        let path = pathname.get();
        let on = match href {
            "/" => path == "/",
            _ => path == href || path.starts_with(&format!("{href}/")),
        };
        on.then_some("page")
    };
    view! {
        <header class="top">
            <a class="brand" href="/">"Streamkeeper"</a>
            // The badge's numbers are awaited with the user: one header,
            // drawn whole.
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    match me.await {
                        Ok(Some(me)) => {
                            let counts = counts.await.ok().flatten();
                            let admin = me.principal.may(Action::ManageUsers);
                            let audit = me.principal.may(Action::ReadAudit);
                            let pilot = me.principal.may(Action::ReadPilot);
                            view! {
                                // A checkbox and its label fold the navigation at phone
                                // width without a script (style/main.css).
                                <input type="checkbox" id="nav-toggle" class="nav-toggle" />
                                <label for="nav-toggle" class="nav-toggle-label">"Menu"</label>
                                <nav aria-label="Main">
                                    <a href="/" aria-current=move || here("/")>"Home"</a>
                                    <a href="/streams" aria-current=move || here("/streams")>"Streams"</a>
                                    <a href="/flags" aria-current=move || here("/flags")>"Flags"</a>
                                    <a href="/schemas" aria-current=move || here("/schemas")>"Schemas"</a>
                                    <a href="/lineage" aria-current=move || here("/lineage")>"Lineage"</a>
                                    <a href="/clusters" aria-current=move || here("/clusters")>"Clusters"</a>
                                    <InboxLink counts />
                                    // Admins' pages in one menu: a details element opens
                                    // it with or without a script.
                                    <Show when=move || admin || audit>
                                        <details class="menu">
                                            <summary aria-current=move || here("/settings")>"Settings"</summary>
                                            <div class="menu-items">
                                                <Show when=move || admin>
                                                    <a href="/settings/users" aria-current=move || here("/settings/users")>"Users"</a>
                                                    <a href="/settings/teams" aria-current=move || here("/settings/teams")>"Teams"</a>
                                                    <a href="/settings/clusters" aria-current=move || here("/settings/clusters")>"Add cluster"</a>
                                                    <a href="/settings/review" aria-current=move || here("/settings/review")>"Approvers"</a>
                                                    <a href="/settings/routines" aria-current=move || here("/settings/routines")>"Routines"</a>
                                                </Show>
                                                <Show when=move || audit>
                                                    <a href="/settings/audit" aria-current=move || here("/settings/audit")>"Audit log"</a>
                                                </Show>
                                            </div>
                                        </details>
                                    </Show>
                                    <Show when=move || pilot>
                                        <a href="/pilot" aria-current=move || here("/pilot")>"Pilot"</a>
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
            </Suspense>
        </header>
    }
}

/// The signed-in user, or `None` when nobody is signed in (the login page
/// renders the same header).
#[server(prefix = "/fn", endpoint = "current_user")]
pub async fn current_user() -> Result<Option<Me>, AppError> {
    use crate::port::{backend, principal};
    match principal().await {
        Ok(who) => backend()?.accounts.me(&who).await.map(Some),
        Err(AppError::Unauthenticated) => Ok(None),
        Err(e) => Err(e),
    }
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

/// The header's "Review" link: a badge counts the items waiting for the
/// caller's decision, and a dot says there are unread notifications (a
/// decision or a comment on their own items), each with its number as
/// its title. Counted apart: a waiting item is also a notification until
/// it is acted on, and adding them would count it twice.
#[component]
pub fn InboxLink(counts: Option<InboxCounts>) -> impl IntoView {
    let c = counts.unwrap_or_default();
    let waiting = (c.waiting > 0).then(|| {
        let title = format!("{} waiting for your decision", c.waiting);
        view! { <span class="badge count" title=title data-testid="inbox-badge">{c.waiting}</span> }
    });
    let unread = (c.unread > 0).then(|| {
        let title = format!("{} unread notification(s)", c.unread);
        view! { <span class="badge dot" title=title.clone() aria-label=title data-testid="inbox-unread"></span> }
    });
    view! {
        <a href="/review">"Review" {waiting} {unread}</a>
    }
}
