//! The shell, the router and the layout every page shares.

use crate::accounts::{account, login, teams, users};
use crate::review::{inbox, item};
use crate::schemas::{check, registry};
use crate::ui::flash::Flash;
use crate::ui::header::SignedInHeader;
use crate::watch::{clusters, streams};
use crate::{audit, flags, home};
use leptos::prelude::*;
use leptos_meta::{MetaTags, Stylesheet, Title, provide_meta_context};
use leptos_router::components::{Route, Router, Routes};
use leptos_router::{SsrMode, path};

/// The HTML document around the app. On the server it also hands the
/// request's CSP nonce to Leptos, so the island scripts carry it. Only a
/// page with an island gets those scripts (`ui::island::has_islands`): a
/// page without one loads no wasm.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    #[cfg(feature = "ssr")]
    let islands = {
        provide_csp_nonce();
        provide_context(crate::ui::flash::TakenFlash::default());
        provide_context(crate::ui::flash::TakenForm::default());
        // Islands mode: outside an island nothing is hydrated, so no page
        // carries what hydrating it would need (`HydrationScripts` says so
        // too, on the pages that draw it).
        if let Some(sc) = Owner::current_shared_context() {
            sc.set_is_hydrating(false);
        }
        use_context::<axum::http::request::Parts>()
            .is_some_and(|parts| crate::ui::island::has_islands(parts.uri.path()))
    };
    // The shell is drawn by the server only.
    #[cfg(not(feature = "ssr"))]
    let islands = false;
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8" />
                <meta name="viewport" content="width=device-width, initial-scale=1" />
                {islands.then(|| view! { <HydrationScripts options islands=true /> })}
                <MetaTags />
            </head>
            <body>
                <App />
            </body>
        </html>
    }
}

/// The nonce the server's security-header middleware put on this request.
#[derive(Clone, Debug)]
pub struct CspNonce(pub String);

#[cfg(feature = "ssr")]
fn provide_csp_nonce() {
    if let Some(parts) = use_context::<axum::http::request::Parts>()
        && let Some(nonce) = parts.extensions.get::<CspNonce>()
    {
        provide_context(leptos::nonce::Nonce::from_value(nonce.0.clone()));
    }
}

#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    view! {
        <Stylesheet id="streamkeeper" href="/pkg/streamkeeper.css" />
        <Title formatter=|page: String| {
            if page.is_empty() { "Streamkeeper".to_string() } else { format!("{page} · Streamkeeper") }
        } />
        <Router>
            <a class="skip" href="#main">"Skip to content"</a>
            <SignedInHeader />
            <main class="page" id="main" tabindex="-1">
                <Flash />
                <Routes fallback=NotFound>
                    <Route path=path!("/") view=home::page::HomePage ssr=SsrMode::Async />
                    <Route path=path!("/login") view=login::LoginPage ssr=SsrMode::Async />
                    <Route path=path!("/login/code") view=login::LoginCodePage ssr=SsrMode::Async />
                    <Route path=path!("/account") view=account::AccountPage ssr=SsrMode::Async />
                    <Route path=path!("/settings/users") view=users::UsersPage ssr=SsrMode::Async />
                    <Route path=path!("/settings/users/:id") view=users::UserPage ssr=SsrMode::Async />
                    <Route path=path!("/settings/teams") view=teams::TeamsPage ssr=SsrMode::Async />
                    <Route path=path!("/settings/teams/:id") view=teams::TeamPage ssr=SsrMode::Async />
                    <Route path=path!("/settings/teams/:id/notifications") view=crate::notify::pages::TeamNotifyPage ssr=SsrMode::Async />
                    <Route path=path!("/settings/silences") view=crate::notify::pages::SilencesPage ssr=SsrMode::Async />
                    <Route path=path!("/settings/audit") view=audit::pages::AuditPage ssr=SsrMode::Async />
                    <Route path=path!("/settings/clusters") view=crate::watch::settings::ClusterSettingsPage ssr=SsrMode::Async />
                    <Route path=path!("/flags") view=flags::pages::FlagsPage ssr=SsrMode::Async />
                    <Route path=path!("/flags/:id") view=flags::pages::FlagPage ssr=SsrMode::Async />
                    <Route path=path!("/streams") view=streams::StreamsPage ssr=SsrMode::Async />
                    <Route path=path!("/clusters/:id/stream") view=streams::StreamPage ssr=SsrMode::Async />
                    <Route path=path!("/domain") view=crate::watch::domains::DomainPage ssr=SsrMode::Async />
                    <Route path=path!("/clusters/:id/stream/check") view=check::CheckPage ssr=SsrMode::Async />
                    <Route path=path!("/schema-checks/:id") view=check::CheckReportPage ssr=SsrMode::Async />
                    <Route path=path!("/schemas") view=registry::SchemasPage ssr=SsrMode::Async />
                    <Route path=path!("/schemas/:id") view=registry::SubjectsPage ssr=SsrMode::Async />
                    <Route path=path!("/schemas/:id/subject") view=registry::SubjectPage ssr=SsrMode::Async />
                    <Route path=path!("/review") view=inbox::ReviewPage ssr=SsrMode::Async />
                    <Route path=path!("/review/:id") view=item::ReviewItemPage ssr=SsrMode::Async />
                    <Route path=path!("/settings/review") view=crate::review::settings::ReviewSettingsPage ssr=SsrMode::Async />
                    <Route path=path!("/pilot") view=crate::pilot::page::PilotPage ssr=SsrMode::Async />
                    <Route path=path!("/settings/routines") view=crate::platform::routines::RoutinesPage ssr=SsrMode::Async />
                    <Route path=path!("/settings/pilot") view=crate::pilot::settings::PilotSettingsPage ssr=SsrMode::Async />
                    <Route path=path!("/clusters") view=clusters::ClustersPage ssr=SsrMode::Async />
                    <Route path=path!("/clusters/:id") view=clusters::ClusterPage ssr=SsrMode::Async />
                    <Route path=path!("/clusters/:id/group") view=clusters::GroupPage ssr=SsrMode::Async />
                    <Route path=path!("/clusters/:id/connect") view=crate::connect::connectors::ConnectorsPage ssr=SsrMode::Async />
                    <Route path=path!("/clusters/:id/connector") view=crate::connect::connectors::ConnectorPage ssr=SsrMode::Async />
                    <Route path=path!("/clusters/:id/connect/draft") view=crate::connect::draft::DraftPage ssr=SsrMode::Async />
                    <Route path=path!("/lineage") view=crate::lineage::search::LineageSearchPage ssr=SsrMode::Async />
                    <Route path=path!("/lineage/graph") view=crate::lineage::graph::LineageGraphPage ssr=SsrMode::Async />
                    <Route path=path!("/lineage/impact") view=crate::lineage::impact::LineageImpactPage ssr=SsrMode::Async />
                </Routes>
            </main>
        </Router>
    }
}

#[component]
fn NotFound() -> impl IntoView {
    #[cfg(feature = "ssr")]
    crate::port::set_status(&crate::error::AppError::NotFound(String::new()));
    view! {
        <Title text="Not found" />
        <h1>"Page not found"</h1>
        <p>"There is nothing at this address. " <a href="/">"Go to the start page"</a> "."</p>
    }
}
