//! What every island shares: which pages carry one (only they load the
//! wasm), and the mark the end-to-end tests wait on.

#[cfg(feature = "hydrate")]
use leptos::prelude::*;

/// Whether the page at `path` carries an island (`#[island]`): the
/// stream page (its schema forms' file loader), the connector draft (its
/// check as it is typed) and the lineage graph (zoom and pan). Only these
/// pages get the scripts that load the wasm; every other page is plain
/// HTML and forms.
///
/// Decided by the address, before the page is drawn: a `Suspense` may
/// draw its content more than once on the server, so an island cannot
/// reliably say "I am here" to the head, which is written first.
pub fn has_islands(path: &str) -> bool {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    matches!(
        segments.as_slice(),
        ["clusters", _, "stream"] | ["clusters", _, "connect", "draft"] | ["lineage", "graph"]
    )
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

#[cfg(test)]
mod tests {
    use super::has_islands;

    #[test]
    fn only_the_pages_with_an_island_load_the_wasm() {
        for path in [
            "/clusters/3/stream",
            "/clusters/3/connect/draft",
            "/lineage/graph",
        ] {
            assert!(has_islands(path), "{path}");
        }
        for path in [
            "/",
            "/review/7",
            "/clusters/3",
            "/clusters/3/stream/check",
            "/clusters/3/connect",
            "/lineage",
            "/lineage/impact",
            "/settings/users",
        ] {
            assert!(!has_islands(path), "{path}");
        }
    }
}
