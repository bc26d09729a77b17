//! What every island shares: the scripts that load the wasm and hydrate the
//! page's islands, sent only with a page that has one, and the mark the
//! end-to-end tests wait on.

use leptos::prelude::*;

/// Per request: whether the island scripts are already on the page (the
/// shell provides it on the server).
#[derive(Clone, Debug, Default)]
pub struct IslandScriptsSent(pub std::sync::Arc<std::sync::atomic::AtomicBool>);

/// The scripts that load the wasm and hydrate the page's islands (Leptos's
/// `HydrationScripts` in islands mode). Drawn beside every island, outside
/// it; only the first on a page sends them, so a page with islands loads
/// the wasm once and a page without any loads none.
#[component]
pub fn IslandScripts() -> impl IntoView {
    #[cfg(feature = "ssr")]
    let scripts = {
        use std::sync::atomic::Ordering;
        let first = use_context::<IslandScriptsSent>()
            .is_some_and(|sent| !sent.0.swap(true, Ordering::Relaxed));
        use_context::<LeptosOptions>()
            .filter(|_| first)
            .map(|options| view! { <HydrationScripts options islands=true /> })
    };
    // Never drawn in the browser: it stands outside every island.
    #[cfg(not(feature = "ssr"))]
    let scripts: Option<()> = None;
    scripts
}

/// Marks the body once an island has hydrated, so end-to-end tests wait
/// on a fact instead of a fixed sleep. Every island calls it.
pub fn mark_hydrated() {
    #[cfg(feature = "hydrate")]
    Effect::new(move |_| {
        if let Some(body) = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.body())
        {
            // Failing to set a test marker must not break the page.
            let _ = body.set_attribute("data-hydrated", "true");
        }
    });
}
