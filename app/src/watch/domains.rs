//! A domain's page: its streams' freshness SLOs this month and the share
//! within their tier (`/domain?name=payments`).

use crate::error::AppError;
use crate::ui::notes::ErrorNote;
use crate::ui::params::query_param;
use crate::ui::title::page_title;
use crate::watch::fns::get_domain_slo;
use crate::watch::widgets::DomainSloView;
use leptos::prelude::*;
use leptos_meta::Title;

#[component]
pub fn DomainPage() -> impl IntoView {
    let name = query_param("name");
    let slo = Resource::new(
        move || name.get(),
        |name| async move {
            match name {
                Some(name) => get_domain_slo(name).await,
                None => Err(AppError::NotFound("That domain".into())),
            }
        },
    );
    view! {
        <Title text=move || page_title(name.get().as_deref(), "Domains") />
        <p><a href="/streams">"← Streams"</a></p>
        <h1>{move || format!("Domain {}", name.get().unwrap_or_default())}</h1>
        <h2>"Freshness SLOs this month"</h2>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match slo.await {
                    Ok(d) => view! { <DomainSloView d /> }.into_any(),
                    Err(err) => view! { <ErrorNote err /> }.into_any(),
                }
            })}
        </Suspense>
    }
}
